// A partition lost mid-sync, for real rather than through the signal: one
// of two topics is deleted while the sync reads it, so its fetches fail and so does the group
// commit that names it, the way both fail when the broker goes away. The sync must not fail:
// what was read lands (all of the other topic, a prefix of the lost one, each ending at the
// offsets its snapshot records), the report says partial with the read error and the group
// error, and the next sync reads nothing twice.
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { bootstrapServers, createTopic, deleteTopic } from "../../dev/kafka.ts";
import { type Readers, startReaders } from "../../dev/readers.ts";
import { parseJob } from "../../src/config/load-job.ts";
import { openSqlCatalog } from "../../src/iceberg/catalog/sql-catalog.ts";
import { Table } from "../../src/iceberg/table.ts";
import { committedOffsets } from "../../src/sync/snapshot-offsets.ts";
import { syncJob } from "../helpers/sync-job.ts";
import { AppendModel, modelColumns, OffsetCounter, produceExactly, syncWorkspace } from "../helpers/sync-model.ts";

const { run, name, namespace, dir, warehouse, catalogRef } = syncWorkspace("topicloss");
const prefix = `topicloss${run}_`;
const topics = { kept: `${prefix}kept`, lost: `${prefix}lost` } as const;
type TableName = keyof typeof topics;

const job = parseJob(
  `
name: ${name}
source:
  kafka:
    bootstrap_servers: [${bootstrapServers}]
    consumer_group: floe_${name}
    topic_pattern: ^${prefix}(kept|lost)$
    security: {protocol: PLAINTEXT}
    max_threads: 2
destination:
  iceberg:
    catalog: {type: sql, warehouse: ${warehouse}}
streams:
  ${topics.kept}: {mode: append, table: kept}
  ${topics.lost}: {mode: append, table: lost}
`,
  join(dir, "job.yaml"),
);

let readers: Readers;
before(async () => {
  readers = await startReaders({ engines: ["duckdb"] });
  for (const topic of Object.values(topics)) await createTopic(topic, 1);
});
after(async () => {
  await readers?.close();
  for (const topic of Object.values(topics)) await deleteTopic(topic);
});

async function tableOffset(t: TableName): Promise<bigint> {
  const catalog = await openSqlCatalog({ warehouse, name: "floe" });
  try {
    const table = await Table.load(catalog, { namespace: [namespace], name: t });
    return committedOffsets(table.metadata, t).get(topics[t])?.get(0) ?? 0n;
  } finally {
    await catalog.close();
  }
}

test("a topic deleted mid-read: what was read lands, the sync reports partial, nothing is read twice", async () => {
  const pad = "x".repeat(2000);
  const messages = {} as Record<TableName, ReturnType<OffsetCounter["assign"]>>;
  for (const t of ["kept", "lost"] as const) {
    const counter = new OffsetCounter();
    messages[t] = counter.assign(
      Array.from({ length: 3000 }, (_, i) => ({ partition: 0, key: null, value: { i, pad } })),
    );
    await produceExactly(topics[t], messages[t], counter);
  }

  let deleting: Promise<void> | undefined;
  const report = await syncJob(job, {
    stateDir: dir,
    onEvent: (event) => {
      // At the first batch: each partition takes several fetches of ~1 MiB.
      if (event.type === "partition-progress" && !deleting) deleting = deleteTopic(topics.lost);
    },
  });
  await deleting;
  assert.equal(report.status, "partial");
  assert.equal(report.readStatus, "failed");
  assert.match(report.readError ?? "", new RegExp(`${topics.lost} partition 0`));
  assert.match(report.groupCommitError ?? "", /consumer group/);

  for (const t of ["kept", "lost"] as const) {
    const offset = await tableOffset(t);
    const landed = messages[t].filter((m) => m.offset < offset);
    if (t === "kept") assert.equal(landed.length, 3000, "the other topic was read to the end");
    else assert.ok(landed.length < 3000, "the lost topic was read in part");
    const tableReport = report.tables.find((r) => r.table === `${namespace}.${t}`);
    assert.equal(tableReport?.recordsAdded, landed.length, `${t}: records added`);
    const model = new AppendModel();
    model.apply(landed);
    const rows = await readers.rows(
      "duckdb",
      { catalog: catalogRef, namespace, table: t },
      { columns: modelColumns(["i"]), orderBy: ["_kafka_partition", "_kafka_offset"] },
    );
    assert.deepStrictEqual(rows, model.rows(["i"]), `${t}: exactly the messages below the table's offset`);
    console.log(`${t}: ${landed.length} of 3000 messages landed`);
  }
  assert.equal(
    report.messagesRead,
    report.tables.reduce((sum, r) => sum + r.messagesRead, 0),
  );

  const next = await syncJob(job, { stateDir: dir });
  assert.equal(next.status, "complete");
  assert.equal(next.messagesRead, 0, "the kept topic's table offsets win over the group the failed commit left behind");
});
