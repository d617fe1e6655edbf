import assert from "node:assert/strict";
import { test } from "node:test";
import { unpartitioned } from "#src/iceberg/spec/partition-spec.ts";
import type { Snapshot } from "#src/iceberg/spec/snapshot.ts";
import { tableMetadataFromJson, tableMetadataToJson } from "#src/iceberg/spec/table-metadata.ts";
import {
  applyUpdates,
  CommitConflictError,
  checkRequirements,
  LAST_ADDED_SCHEMA,
  LAST_ADDED_SPEC,
  newTableMetadata,
  tableRequirementToJson,
  tableUpdateToJson,
} from "#src/iceberg/spec/table-update.ts";
import { parseJson, stringifyJson } from "#src/lib/int64-json.ts";

const schema = { schemaId: 0, fields: [{ id: 1, name: "id", required: true, type: "long" as const }] };
const fresh = () => newTableMetadata({ location: "/w/ns/t/", schema, spec: unpartitioned }, 1000n);

const snapshot = (id: bigint, seq: bigint, firstRowId: bigint, addedRows: bigint, parent?: bigint): Snapshot => ({
  snapshotId: id,
  ...(parent === undefined ? {} : { parentSnapshotId: parent }),
  sequenceNumber: seq,
  timestampMs: 2000n,
  manifestList: `/w/ns/t/metadata/snap-${id}.avro`,
  summary: { operation: "append" },
  firstRowId,
  addedRows,
});

test("a new table is format v3 with no snapshot and next-row-id 0", () => {
  const m = fresh();
  assert.equal(m.formatVersion, 3);
  assert.equal(m.location, "/w/ns/t");
  assert.equal(m.lastColumnId, 1);
  assert.equal(m.nextRowId, 0n);
  assert.equal(m.currentSnapshotId, undefined);
});

test("add-snapshot advances next-row-id by added-rows and set-snapshot-ref moves main", () => {
  const m = applyUpdates(
    fresh(),
    [
      { action: "add-snapshot", snapshot: snapshot(11n, 1n, 0n, 5n) },
      { action: "set-snapshot-ref", refName: "main", snapshotId: 11n, type: "branch" },
    ],
    3000n,
  );
  assert.equal(m.nextRowId, 5n);
  assert.equal(m.lastSequenceNumber, 1n);
  assert.equal(m.currentSnapshotId, 11n);
  assert.deepEqual(m.refs.main, { snapshotId: 11n, type: "branch" });
  assert.equal(m.snapshotLog.length, 1);
});

test("a snapshot whose first-row-id is behind the table's next-row-id is refused", () => {
  const m = applyUpdates(fresh(), [{ action: "add-snapshot", snapshot: snapshot(11n, 1n, 0n, 5n) }], 3000n);
  assert.throws(
    () => applyUpdates(m, [{ action: "add-snapshot", snapshot: snapshot(12n, 2n, 3n, 1n, 11n) }], 4000n),
    CommitConflictError,
  );
});

test("sequence numbers must increase", () => {
  const m = applyUpdates(fresh(), [{ action: "add-snapshot", snapshot: snapshot(11n, 1n, 0n, 5n) }], 3000n);
  assert.throws(
    () => applyUpdates(m, [{ action: "add-snapshot", snapshot: snapshot(12n, 1n, 5n, 1n, 11n) }], 4000n),
    /sequence number 1 is not above/,
  );
});

test("assert-ref-snapshot-id fails when main moved", () => {
  const m = applyUpdates(
    fresh(),
    [
      { action: "add-snapshot", snapshot: snapshot(11n, 1n, 0n, 5n) },
      { action: "set-snapshot-ref", refName: "main", snapshotId: 11n, type: "branch" },
    ],
    3000n,
  );
  assert.throws(
    () => checkRequirements(m, [{ type: "assert-ref-snapshot-id", ref: "main", snapshotId: null }]),
    /branch main is at 11, expected no snapshot/,
  );
  checkRequirements(m, [{ type: "assert-ref-snapshot-id", ref: "main", snapshotId: 11n }]);
});

test("add-schema then set-current-schema -1 selects the added schema", () => {
  const wider = {
    schemaId: 0,
    fields: [...schema.fields, { id: 2, name: "name", required: false, type: "string" as const }],
  };
  const m = applyUpdates(
    fresh(),
    [
      { action: "add-schema", schema: wider },
      { action: "set-current-schema", schemaId: LAST_ADDED_SCHEMA },
    ],
    3000n,
  );
  assert.equal(m.currentSchemaId, 1);
  assert.equal(m.lastColumnId, 2);
});

test("table metadata JSON round-trips, int64 ids included", () => {
  const m = applyUpdates(
    fresh(),
    [
      { action: "add-snapshot", snapshot: snapshot(9223372036854775000n, 1n, 0n, 5n) },
      { action: "set-snapshot-ref", refName: "main", snapshotId: 9223372036854775000n, type: "branch" },
      { action: "set-properties", updates: { "floe.job": "demo" } },
    ],
    3000n,
  );
  const text = stringifyJson(tableMetadataToJson(m));
  assert.match(text, /"current-snapshot-id":9223372036854775000/);
  assert.deepEqual(tableMetadataFromJson(parseJson(text)), m);
});

test("add-spec then set-default-spec -1: the REST JSON, the new default, an equivalent spec reused, a missing source refused", () => {
  const spec = {
    specId: 1,
    fields: [{ sourceId: 1, fieldId: 1000, name: "id_bucket_4", transform: { kind: "bucket", buckets: 4 } as const }],
  };
  assert.deepEqual(tableUpdateToJson({ action: "add-spec", spec }), {
    action: "add-spec",
    spec: { "spec-id": 1, fields: [{ "source-id": 1, "field-id": 1000, name: "id_bucket_4", transform: "bucket[4]" }] },
  });
  assert.deepEqual(tableUpdateToJson({ action: "set-default-spec", specId: LAST_ADDED_SPEC }), {
    action: "set-default-spec",
    "spec-id": -1,
  });
  assert.deepEqual(tableRequirementToJson({ type: "assert-default-spec-id", defaultSpecId: 0 }), {
    type: "assert-default-spec-id",
    "default-spec-id": 0,
  });
  assert.deepEqual(
    tableRequirementToJson({ type: "assert-last-assigned-partition-id", lastAssignedPartitionId: 999 }),
    { type: "assert-last-assigned-partition-id", "last-assigned-partition-id": 999 },
  );
  const m = applyUpdates(
    fresh(),
    [
      { action: "add-spec", spec },
      { action: "set-default-spec", specId: LAST_ADDED_SPEC },
    ],
    2000n,
  );
  assert.equal(m.defaultSpecId, 1);
  assert.equal(m.lastPartitionId, 1000);
  // The same spec again (any id) is the one the table has: no third spec.
  const again = applyUpdates(
    m,
    [
      { action: "add-spec", spec: { ...spec, specId: 7 } },
      { action: "set-default-spec", specId: -1 },
    ],
    3000n,
  );
  assert.equal(again.partitionSpecs.length, 2);
  assert.equal(again.defaultSpecId, 1);
  assert.throws(
    () =>
      applyUpdates(
        m,
        [{ action: "add-spec", spec: { specId: 2, fields: [{ ...spec.fields[0]!, sourceId: 99 }] } }],
        3000n,
      ),
    /no field 99 in the current schema/,
  );
  assert.throws(
    () => applyUpdates(m, [{ action: "set-default-spec", specId: 5 }], 3000n),
    /no partition spec with id 5/,
  );
  assert.throws(
    () => checkRequirements(m, [{ type: "assert-last-assigned-partition-id", lastAssignedPartitionId: 999 }]),
    CommitConflictError,
  );
  // Metadata JSON keeps the specs, the default and last-partition-id.
  const back = tableMetadataFromJson(parseJson(stringifyJson(tableMetadataToJson(m))));
  assert.deepEqual([back.defaultSpecId, back.lastPartitionId, back.partitionSpecs.length], [1, 1000, 2]);
});
