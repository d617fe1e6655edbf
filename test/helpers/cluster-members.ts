// What the tests of a job's replicas share: `floe run` members of one job file, each with its own
// state root, whose logs say which partitions the group assigned them, stopped together; what their
// commits must show (one member per partition and generation); and an append landing of one topic
// into the REST fixture with the model of what its table must hold (every message once).
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Catalog } from "#src/iceberg/catalog/catalog.ts";
import type { Snapshot } from "#src/iceberg/spec/snapshot.ts";
import { Table } from "#src/iceberg/table.ts";
import { GENERATION_SUMMARY_KEY, MEMBER_SUMMARY_KEY } from "#src/pipeline/offset-claim.ts";
import { OFFSETS_SUMMARY_KEY, offsetsFromSummary } from "#src/pipeline/snapshot-offsets.ts";
import { type Readers, restTable } from "../../dev/readers.ts";
import { OffsetCounter, produceExactly } from "./sync-model.ts";

const repo = join(import.meta.dirname, "..", "..");

export interface Member {
  name: string;
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output: () => string;
  /** The partitions of `topic` in the member's last assignment, from its log. */
  assigned: () => number[] | undefined;
}

export const alive = (m: Member) => m.child.exitCode === null && m.child.signalCode === null;

/** The `floe run` members a test started, killed and their logs kept in `dir` when it ends. */
export class Members {
  readonly #dir: string;
  readonly all: Member[] = [];

  constructor(dir: string) {
    this.#dir = dir;
  }

  /** `floe run` of the job file with JSON logs, as member `name` (its own state root). */
  run(file: string, topic: string, name: string, env: Record<string, string> = {}): Member {
    const stateRoot = join(this.#dir, `state-${name}`);
    mkdirSync(stateRoot, { recursive: true });
    const child = spawn(
      process.execPath,
      ["src/cli/main.ts", "run", "--config", file, "--state-dir", stateRoot, "--log-format", "json"],
      { cwd: repo, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } },
    );
    let output = "";
    child.stdout.on("data", (d) => {
      output += d;
    });
    child.stderr.on("data", (d) => {
      output += d;
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on("close", (code, signal) => resolve({ code, signal })),
    );
    const assigned = () => {
      let last: number[] | undefined;
      for (const line of output.split("\n")) {
        if (!line.includes('"cluster: member of')) continue;
        const { partitions } = JSON.parse(line) as { partitions: string };
        const match = new RegExp(`${topic}\\[([\\d,]*)\\]`).exec(partitions);
        last = match ? match[1]!.split(",").map(Number) : [];
      }
      return last;
    };
    const member = { name, child, exited, output: () => output, assigned };
    this.all.push(member);
    return member;
  }

  /** SIGKILLs the members still running, and writes each member's log to the test's folder. */
  close(): void {
    for (const m of this.all) if (m.child.exitCode === null) m.child.kill("SIGKILL");
    for (const m of this.all) writeFileSync(join(this.#dir, `member-${m.name}.log`), m.output());
    if (this.all.length > 0) console.log(`members' logs: ${this.#dir}/member-*.log`);
  }
}

/** One job's topic, its append table and the model of what the table must hold: every message produced. */
export class Landing {
  readonly job: string;
  readonly topic: string;
  readonly namespace: string;
  readonly partitions: number;
  readonly counter = new OffsetCounter();
  /** Every message produced: partition, offset and the id in its value. */
  readonly produced: { partition: number; offset: bigint; id: number }[] = [];
  readonly #catalog: Catalog;

  constructor(catalog: Catalog, job: string, partitions: number) {
    this.#catalog = catalog;
    this.job = job;
    this.topic = `${job}_t`;
    this.namespace = `${job}_topics`;
    this.partitions = partitions;
  }

  get table() {
    return restTable(this.namespace, "t");
  }

  async produce(count: number): Promise<void> {
    const start = this.produced.length;
    const messages = this.counter.assign(
      Array.from({ length: count }, (_, i) => {
        const id = start + i;
        return { partition: id % this.partitions, key: `k${id}`, value: { id, pad: "x".repeat(40) } };
      }),
    );
    await produceExactly(this.topic, messages, this.counter);
    for (const m of messages) {
      this.produced.push({ partition: m.partition, offset: m.offset, id: (m.value as { id: number }).id });
    }
  }

  /** The table's row count as its current snapshot says (an append table: one row per message). */
  async landed(): Promise<number> {
    try {
      const { metadata } = await Table.load(this.#catalog, { namespace: [this.namespace], name: "t" });
      const current = metadata.snapshots.find((s) => s.snapshotId === metadata.currentSnapshotId);
      return Number(current?.summary["total-records"] ?? 0);
    } catch {
      return 0;
    }
  }

  /** The table's snapshots, oldest first. */
  async snapshots() {
    const { metadata } = await Table.load(this.#catalog, { namespace: [this.namespace], name: "t" });
    return [...metadata.snapshots].sort((a, b) => Number(a.sequenceNumber - b.sequenceNumber));
  }

  /** What every reader must read, in (partition, offset) order: each message produced, once. */
  async assertReaders(readers: Readers): Promise<void> {
    const expected = [...this.produced]
      .sort((a, b) => a.partition - b.partition || Number(a.offset - b.offset))
      .map((m) => ({ id: BigInt(m.id), _kafka_partition: m.partition, _kafka_offset: m.offset }));
    await readers.assertRows(this.table, expected, {
      columns: ["id", "_kafka_partition", "_kafka_offset"],
      orderBy: ["_kafka_partition", "_kafka_offset"],
    });
  }
}

/** SIGTERMs the members, each still running, and waits for each to commit, leave and exit 0. */
export async function stopMembers(running: readonly Member[]): Promise<void> {
  for (const m of running) {
    assert.ok(alive(m), `${m.name} still runs: ${m.output().slice(-2000)}`);
    m.child.kill("SIGTERM");
  }
  for (const m of running) assert.equal((await m.exited).code, 0, `${m.name}: ${m.output().slice(-3000)}`);
}

/**
 * What the members' commits (snapshots oldest first, each naming its member and generation) did
 * to `topic`: every partition was advanced by one member per generation, no partition's offset
 * went back, and each ends at `end(partition)`. Returns the generations that committed.
 */
export function assertOneMemberPerPartition(
  commits: readonly Snapshot[],
  topic: string,
  partitions: number,
  end: (partition: number) => bigint,
): Set<string> {
  const writers = new Map<string, Set<string>>();
  const last = new Map<number, bigint>();
  const generations = new Set<string>();
  for (const s of commits) {
    const member = s.summary[MEMBER_SUMMARY_KEY];
    const generation = s.summary[GENERATION_SUMMARY_KEY];
    assert.ok(member && generation, `snapshot ${s.snapshotId} names its member and generation`);
    generations.add(generation);
    const offsets = offsetsFromSummary(s.summary[OFFSETS_SUMMARY_KEY]!, "test").get(topic)!;
    for (const [partition, offset] of offsets) {
      const before = last.get(partition) ?? 0n;
      assert.ok(offset >= before, `partition ${partition} went back from ${before} to ${offset}`);
      if (offset > before) {
        const key = `${generation}/${partition}`;
        writers.set(key, (writers.get(key) ?? new Set()).add(member));
      }
      last.set(partition, offset);
    }
  }
  for (const [key, set] of writers) assert.equal(set.size, 1, `generation/partition ${key} written by ${[...set]}`);
  for (let p = 0; p < partitions; p++) assert.equal(last.get(p), end(p), `partition ${p} ends at its log end`);
  return generations;
}
