// The last step of the package check: the installed floe (its bundle, under node_modules) syncs
// for real. It produces messages into a fresh topic of the development broker, runs the
// installed `floe sync` on a job file that `floe init` wrote, twice (the second has nothing to
// read), and reads the table back with DuckDB and PyIceberg.
//
//   node scripts/pack-check-sync.ts <installed floe> <empty dir>
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { createTopic, deleteTopic, produce } from "../dev/kafka.ts";
import { startReaders } from "../dev/readers.ts";
import { brokerPort } from "../dev/services/kafka/config.ts";

const [floe, dir] = process.argv.slice(2);
if (!floe || !dir) throw new Error("usage: node scripts/pack-check-sync.ts <installed floe> <empty dir>");

const topic = `packcheck_${process.pid}_${Date.now()}`;
const count = 500;
execFileSync(floe, ["init", dir], { stdio: "ignore" });
const jobFile = join(dir, "job.yaml");
const job = readFileSync(jobFile, "utf8")
  .replace(/127\.0\.0\.1:9092/, `127.0.0.1:${brokerPort()}`)
  .replace(/topic_pattern: ".*"/, `topic_pattern: "^${topic}$"`);
assert.ok(job.includes(topic), "the job file that floe init writes has a topic_pattern to narrow");
writeFileSync(jobFile, job);

await createTopic(topic, 2);
try {
  await produce(
    topic,
    Array.from({ length: count }, (_, i) => ({ partition: i % 2, key: `k${i}`, value: JSON.stringify({ i }) })),
  );
  const sync = () => JSON.parse(execFileSync(floe, ["sync", "-c", jobFile, "--json"], { encoding: "utf8" }));
  const first = sync();
  assert.equal(first.status, "complete");
  assert.equal(first.messagesRead, count);
  const second = sync();
  assert.equal(second.messagesRead, 0);

  // floe init names the job after its folder; the job's namespace is <name>_topics.
  const namespace = `${basename(dir)}_topics`;
  const warehouse = join(dir, "warehouse");
  const readers = await startReaders({ engines: ["duckdb", "pyiceberg"] });
  try {
    const table = {
      catalog: { type: "sql" as const, uri: join(warehouse, "catalog.db"), warehouse, name: "floe" },
      namespace,
      table: topic,
    };
    for (const engine of readers.engines) {
      const rows = await readers.rows(engine, table, { columns: ["i"], orderBy: ["i"] });
      assert.deepStrictEqual(
        rows.map((r) => r.i),
        Array.from({ length: count }, (_, i) => BigInt(i)),
        `${engine} reads the ${count} messages once each`,
      );
    }
  } finally {
    await readers.close();
  }
  console.log(`pack-check: the installed floe synced ${count} messages, then 0; DuckDB and PyIceberg read them`);
} finally {
  await deleteTopic(topic);
}
