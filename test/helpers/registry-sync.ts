// What the schema registry sync tests (test/integration/sync-schema-registry-*.test.ts) share:
// topics and a state folder of their own, the readers started before and closed after the file,
// a job over the REST catalog whose source has a schema registry, and a look at what landed.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before } from "node:test";
import { connectRestCatalog } from "#src/iceberg/catalog/rest-catalog.ts";
import { currentSchema } from "#src/iceberg/spec/table-metadata.ts";
import type { Job } from "#src/job/job.ts";
import type { SyncReport } from "#src/pipeline/sync.ts";
import { TestTopics } from "../../dev/kafka.ts";
import { type Readers, startReaders } from "../../dev/readers.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";
import { schemaRegistry } from "../../dev/services/schema-registry.ts";
import { buildJob, type JobFileData, type KafkaSection } from "./job-file.ts";

export interface RegistrySuite {
  readonly run: string;
  readonly topics: TestTopics;
  readonly stateDir: string;
  /** DuckDB, PyIceberg and Spark, started by the file's before(); none when the suite reads no table. */
  readonly readers: Readers;
  /** A job named `name` (namespace <name>_topics) over `streams`, with `registry` as source.kafka.schema_registry. */
  jobFor(name: string, streams: JobFileData["streams"], registry?: KafkaSection["schema_registry"]): Job;
}

/** Registers the file's before() and after(): readers (unless `readers: false`), and the topics deleted at the end. */
export function registrySuite(options: { readers?: boolean } = {}): RegistrySuite {
  const run = `reg${process.pid}_${Date.now()}`;
  const topics = new TestTopics(run);
  const stateDir = mkdtempSync(join(tmpdir(), "floe-registry-"));
  let readers: Readers | undefined;
  before(async () => {
    if (options.readers !== false) readers = await startReaders();
  });
  after(async () => {
    await readers?.close();
    await topics.deleteAll();
  });
  return {
    run,
    topics,
    stateDir,
    get readers(): Readers {
      assert.ok(readers, "this suite started no readers");
      return readers;
    },
    jobFor(name, streams, registry = { url: schemaRegistry.url }) {
      return buildJob(
        {
          name,
          kafka: { consumer_group: `floe_${name}`, schema_registry: registry },
          iceberg: { catalog: { type: "rest", uri: restCatalog.uri } },
          streams,
        },
        join(stateDir, `${name}.yaml`),
      );
    },
  };
}

/** The current schema of a table in the REST catalog. */
export async function tableSchema(namespace: string, table: string) {
  const catalog = await connectRestCatalog({ uri: restCatalog.uri, warehouse: restCatalog.warehouse });
  return currentSchema((await catalog.loadTable({ namespace: [namespace], name: table })).metadata);
}

/** The report of one table of a sync. */
export function report(r: SyncReport, table: string) {
  const t = r.tables.find((x) => x.table.endsWith(`.${table}`));
  assert.ok(t, `no report for ${table}`);
  return t;
}

/** Two's-complement big-endian bytes of an unscaled decimal. */
export function decimalBytes(unscaled: bigint): Buffer {
  let hex = (unscaled < 0n ? (1n << 64n) + unscaled : unscaled).toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  const bytes = Buffer.from(hex, "hex");
  return unscaled < 0n
    ? Buffer.concat([Buffer.alloc(8 - bytes.length, 0xff), bytes])
    : Buffer.concat([Buffer.from([0]), bytes]);
}
