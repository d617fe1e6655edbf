// `_floe_id` in whole syncs, in process against the embedded catalog: a table floe creates holds
// it as fixed[16], the key hash's 16 bytes; a table created with it as a string (floe's form
// before) keeps getting the 32 hex digits of the same bytes. Both compared with SHA-256 computed
// here over the key's canonical text.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, test } from "node:test";
import { FLOE_ID, SYSTEM_COLUMNS } from "#src/decode/system-columns.ts";
import { unpartitioned } from "#src/iceberg/spec/partition-spec.ts";
import { currentSchema } from "#src/iceberg/spec/table-metadata.ts";
import { Table } from "#src/iceberg/table.ts";
import { type SyncFixture, sortBy, syncFixture } from "./fixture.ts";

let f: SyncFixture;

before(async () => {
  f = await syncFixture({
    streams: {
      events: { mode: "append", dedup_keys: ["id"] },
      legacy: { mode: "append", dedup_keys: ["id"] },
    },
  });
  f.source.createTopic("events").createTopic("legacy");
});

after(() => f.close());

/** The first 16 bytes of SHA-256 over `["<id>"]`'s canonical text: what `_floe_id` holds for key id. */
const digest = (id: number) => createHash("sha256").update(`[${id}]`).digest().subarray(0, 16);

const load = (name: string) => Table.load(f.catalog, { namespace: [f.job.namespace], name });

test("a table floe creates holds _floe_id as fixed[16]: the digest's 16 bytes", async () => {
  f.source.produce(
    "events",
    [1, 2, 1].map((id) => ({ key: String(id), value: { id, v: `e${id}` } })),
  );
  await f.sync();
  const field = currentSchema((await load("events")).metadata).fields.find((x) => x.name === FLOE_ID);
  assert.deepEqual(field?.type, { kind: "fixed", length: 16 });
  const rows = sortBy(await f.rows("events"), "_kafka_offset");
  assert.deepEqual(
    rows.map((r) => [Number(r.id), Buffer.from(r._floe_id as Uint8Array).toString("hex")]),
    [1, 2, 1].map((id) => [id, digest(id).toString("hex")]),
  );
});

test("a table created with a string _floe_id keeps getting the hex of the same digest", async () => {
  await f.catalog.createNamespace([f.job.namespace]).catch(() => undefined);
  const fields = SYSTEM_COLUMNS.map((c) => (c.name === FLOE_ID ? { ...c, type: "string" as const } : c));
  await f.catalog.createTable(
    { namespace: [f.job.namespace], name: "legacy" },
    { schema: { schemaId: 0, fields }, spec: unpartitioned },
  );
  f.source.produce(
    "legacy",
    [3, 4].map((id) => ({ key: String(id), value: { id, v: `l${id}` } })),
  );
  await f.sync();
  const field = currentSchema((await load("legacy")).metadata).fields.find((x) => x.name === FLOE_ID);
  assert.equal(field?.type, "string", "the table's form stays");
  const rows = sortBy(await f.rows("legacy"), "_kafka_offset");
  assert.deepEqual(
    rows.map((r) => [Number(r.id), r._floe_id]),
    [3, 4].map((id) => [id, digest(id).toString("hex")]),
  );
});
