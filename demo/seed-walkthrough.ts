// The seed walkthrough (demo/seed-walkthrough/README.md): two single-partition topics of JSON
// values keyed by entity id, produced in two phases. Shared by `npm run demo` and its
// integration test, so the demo shows exactly what the test proves.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createTopic, type DevBroker, deleteTopic, plainBroker, produce } from "../dev/kafka.ts";

const dataDir = join(import.meta.dirname, "seed-walkthrough");

export const topics = ["customers", "orders"] as const;

export interface Expected {
  after_phase1: { records_read: number; customers: { rows: number }; orders: OrderFigures };
  after_phase2: {
    records_read: number;
    customers: { rows: number; added_records: number; deleted_positions: number; rows_by_id: CustomerRow[] };
    orders: OrderFigures & { added_records: number; deleted_positions: number };
  };
}

export interface CustomerRow {
  id: number;
  name: string;
  city: string;
  tier: string;
}

interface OrderFigures {
  rows: number;
  total: number;
  by_status: { status: string; n: number; total: number }[];
}

export const expected = JSON.parse(readFileSync(join(dataDir, "expected.json"), "utf8")) as Expected;

/** Fresh topics (1 partition each), under a prefix so that tests do not collide. */
export async function createTopics(prefix = "", broker: DevBroker = plainBroker): Promise<void> {
  for (const topic of topics) {
    await deleteTopic(`${prefix}${topic}`, broker);
    await createTopic(`${prefix}${topic}`, 1, broker);
  }
}

export async function producePhase(phase: 1 | 2, prefix = "", broker: DevBroker = plainBroker): Promise<number> {
  let count = 0;
  for (const topic of topics) {
    const lines = readFileSync(join(dataDir, `${topic}.phase${phase}.tsv`), "utf8")
      .split("\n")
      .filter(Boolean);
    await produce(
      `${prefix}${topic}`,
      lines.map((line) => {
        const tab = line.indexOf("\t");
        return { key: line.slice(0, tab), value: line.slice(tab + 1) };
      }),
      broker,
    );
    count += lines.length;
  }
  return count;
}
