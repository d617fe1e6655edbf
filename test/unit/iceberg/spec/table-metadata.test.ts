// Table metadata JSON read through its schema: what the spec requires must be there and of its
// type, or the document is a corrupt IcebergError naming the file and the JSON path; what floe
// does not support (a newer format version, a v3 type it does not write) is unsupported.
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { readMetadataFile } from "#src/iceberg/catalog/metadata-file.ts";
import { errorKind, type IcebergErrorKind } from "#src/iceberg/errors.ts";
import { LocalFileIO } from "#src/iceberg/io/local-file-io.ts";
import { tableMetadataFromJson, tableMetadataToJson } from "#src/iceberg/spec/table-metadata.ts";
import { applyUpdates, newTableMetadata } from "#src/iceberg/spec/table-update.ts";
import { parseJson, stringifyJson } from "#src/lib/int64-json.ts";

type Json = Record<string, unknown>;

/** A v3 table with one snapshot, as JSON text parses it (small int64s are numbers). */
function validJson(): Json {
  const created = newTableMetadata(
    {
      location: "/wh/ns/t",
      schema: {
        schemaId: 0,
        fields: [
          { id: 1, name: "id", required: true, type: "long" },
          {
            id: 2,
            name: "tags",
            required: false,
            type: { kind: "list", elementId: 3, element: "string", elementRequired: false },
          },
        ],
      },
      spec: { specId: 0, fields: [] },
      properties: { "write.parquet.compression-codec": "zstd" },
    },
    1_700_000_000_000n,
  );
  const snapshot = {
    snapshotId: 9_007_199_254_740_993n,
    sequenceNumber: 1n,
    timestampMs: 1_700_000_000_001n,
    manifestList: "/wh/ns/t/metadata/snap-1.avro",
    summary: { operation: "append" as const, "added-records": "2" },
    schemaId: 0,
    firstRowId: 0n,
    addedRows: 2n,
  };
  const metadata = applyUpdates(
    created,
    [
      { action: "add-snapshot", snapshot },
      { action: "set-snapshot-ref", refName: "main", snapshotId: snapshot.snapshotId, type: "branch" },
    ],
    1_700_000_000_002n,
  );
  return parseJson(stringifyJson(tableMetadataToJson(metadata))) as Json;
}

function refused(json: unknown, kind: IcebergErrorKind, message: string) {
  assert.throws(
    () => tableMetadataFromJson(json, "/wh/ns/t/metadata/00001.metadata.json"),
    (e: unknown) => {
      assert.equal(errorKind(e), kind, String(e));
      assert.equal((e as Error).message, `/wh/ns/t/metadata/00001.metadata.json: ${message}`);
      return true;
    },
  );
}

function without(json: Json, key: string): Json {
  const copy = { ...json };
  delete copy[key];
  return copy;
}

test("valid metadata reads, int64s as bigints", () => {
  const m = tableMetadataFromJson(validJson());
  assert.equal(m.snapshots[0]?.snapshotId, 9_007_199_254_740_993n);
  assert.equal(m.currentSnapshotId, 9_007_199_254_740_993n);
  assert.equal(m.lastSequenceNumber, 1n);
  assert.equal(m.nextRowId, 2n);
  assert.equal(m.lastColumnId, 3);
  assert.deepEqual(m.refs, { main: { snapshotId: 9_007_199_254_740_993n, type: "branch" } });
});

test("a missing table-uuid or last-column-id is corrupt, not the string 'undefined' or NaN", () => {
  refused(without(validJson(), "table-uuid"), "corrupt", "table-uuid: expected a string, got nothing");
  refused(
    { ...validJson(), "table-uuid": "not-a-uuid" },
    "corrupt",
    'table-uuid: expected a UUID, got the string "not-a-uuid"',
  );
  refused(without(validJson(), "last-column-id"), "corrupt", "last-column-id: expected a 32-bit integer, got nothing");
  refused(without(validJson(), "location"), "corrupt", "location: expected a string, got nothing");
  refused(without(validJson(), "schemas"), "corrupt", "schemas: expected an array, got nothing");
  refused(
    without(validJson(), "last-updated-ms"),
    "corrupt",
    "last-updated-ms: expected a 64-bit integer, got nothing",
  );
});

test("fields of the wrong type name their JSON path", () => {
  refused(
    { ...validJson(), "last-column-id": "3" },
    "corrupt",
    'last-column-id: expected a 32-bit integer, got the string "3"',
  );
  refused(
    { ...validJson(), properties: { "write.target-file-size-bytes": 1024 } },
    "corrupt",
    'properties["write.target-file-size-bytes"]: expected a string, got 1024',
  );
  const json = validJson();
  const schema = (json.schemas as Json[])[0]!;
  const fields = schema.fields as Json[];
  refused(
    { ...json, schemas: [{ ...schema, fields: [{ ...fields[0], required: "yes" }, fields[1]] }] },
    "corrupt",
    'schemas[0].fields[0].required: expected true or false, got the string "yes"',
  );
  refused(
    {
      ...json,
      schemas: [{ ...schema, fields: [fields[0], { ...fields[1], type: { type: "list", element: "string" } }] }],
    },
    "corrupt",
    "schemas[0].fields[1].type.element-id: expected a 32-bit integer, got nothing; " +
      "schemas[0].fields[1].type.element-required: expected true or false, got nothing",
  );
  refused(
    { ...json, schemas: [{ ...schema, fields: [{ ...fields[0], type: "lng" }, fields[1]] }] },
    "corrupt",
    'schemas[0].fields[0].type: "lng" is not an Iceberg type',
  );
});

test("a bad snapshot id is corrupt: not an integer, not 64 bits, or no snapshot of the table", () => {
  const json = validJson();
  const snapshot = (json.snapshots as Json[])[0]!;
  refused(
    { ...json, snapshots: [{ ...snapshot, "snapshot-id": "9007199254740993" }] },
    "corrupt",
    'snapshots[0].snapshot-id: expected a 64-bit integer, got the string "9007199254740993"',
  );
  refused(
    { ...json, snapshots: [{ ...snapshot, "snapshot-id": 1.5 }] },
    "corrupt",
    "snapshots[0].snapshot-id: expected a 64-bit integer, got 1.5",
  );
  refused(
    { ...json, "current-snapshot-id": 2n ** 63n, refs: {} },
    "corrupt",
    "current-snapshot-id: expected a 64-bit integer, got 9223372036854775808",
  );
  refused(
    { ...json, refs: { main: { "snapshot-id": 42, type: "branch" } } },
    "corrupt",
    "refs.main.snapshot-id: no snapshot has id 42",
  );
  refused(
    { ...json, snapshots: [{ ...snapshot, summary: { operation: "merge" } }] },
    "corrupt",
    'snapshots[0].summary.operation: expected one of append, replace, overwrite, delete, got the string "merge"',
  );
  refused(
    without(json, "snapshots"),
    "corrupt",
    "current-snapshot-id: no snapshot has id 9007199254740993; refs.main.snapshot-id: no snapshot has id 9007199254740993",
  );
});

test("ids the metadata refers to must be in it", () => {
  refused({ ...validJson(), "current-schema-id": 7 }, "corrupt", "current-schema-id: no schema has id 7");
  refused({ ...validJson(), "default-spec-id": 7 }, "corrupt", "default-spec-id: no partition spec has id 7");
});

test("what each format version requires", () => {
  refused(without(validJson(), "next-row-id"), "corrupt", "next-row-id: expected a 64-bit integer, got nothing");
  const v2 = tableMetadataFromJson({ ...without(validJson(), "next-row-id"), "format-version": 2 });
  assert.equal(v2.nextRowId, 0n);
  refused(
    { ...without(validJson(), "last-sequence-number"), "format-version": 2 },
    "corrupt",
    "last-sequence-number: expected a 64-bit integer, got nothing",
  );
  refused(
    { ...validJson(), "format-version": "3" },
    "corrupt",
    'format-version: expected 1, 2 or 3, got the string "3"',
  );
  refused(
    { ...validJson(), "format-version": 4 },
    "unsupported",
    "format-version: format version 4 is newer than floe reads (1 to 3)",
  );
  refused([], "corrupt", "(the document): expected an object, got an array");
});

test("a v1 table's single schema and partition spec are read as the lists v2 has", () => {
  const json = validJson();
  const schema = (json.schemas as Json[])[0]!;
  const v1 = tableMetadataFromJson({
    "format-version": 1,
    "table-uuid": json["table-uuid"],
    location: "/wh/ns/t",
    "last-updated-ms": 1,
    "last-column-id": 3,
    schema: without(schema, "schema-id"),
    "partition-spec": [{ name: "id_bucket", transform: "bucket[16]", "source-id": 1 }],
  });
  assert.equal(v1.lastSequenceNumber, 0n);
  assert.equal(v1.schemas.length, 1);
  assert.equal(v1.currentSchemaId, 0);
  assert.deepEqual(v1.partitionSpecs, [
    {
      specId: 0,
      fields: [{ sourceId: 1, fieldId: 1000, name: "id_bucket", transform: { kind: "bucket", buckets: 16 } }],
    },
  ]);
  assert.equal(v1.lastPartitionId, 1000);
});

test("a valid type or transform that floe does not handle is unsupported, not corrupt", () => {
  const json = validJson();
  const schema = (json.schemas as Json[])[0]!;
  const fields = schema.fields as Json[];
  refused(
    { ...json, schemas: [{ ...schema, fields: [...fields, { id: 4, name: "v", required: false, type: "variant" }] }] },
    "unsupported",
    "schemas[0].fields[2].type: type variant is not supported by floe yet",
  );
  refused(
    {
      ...json,
      "partition-specs": [
        { "spec-id": 0, fields: [{ "source-id": 1, "field-id": 1000, name: "z", transform: "zorder" }] },
      ],
    },
    "unsupported",
    "partition-specs[0].fields[0].transform: partition transform zorder is not supported by floe",
  );
});

test("keys floe does not model are carried through", () => {
  const statistics = [{ "snapshot-id": 1, "statistics-path": "/s.puffin" }];
  const m = tableMetadataFromJson({ ...validJson(), statistics });
  assert.deepEqual(m.extra, { statistics });
  assert.deepEqual((tableMetadataToJson(m) as Json).statistics, statistics);
});

test("a metadata file that is not table metadata is refused naming the file", async () => {
  const dir = await mkdtemp(join(tmpdir(), "floe-table-metadata-"));
  try {
    const io = new LocalFileIO();
    const broken = join(dir, "00001-a.metadata.json");
    await writeFile(broken, stringifyJson(without(validJson(), "table-uuid")));
    await assert.rejects(readMetadataFile(io, broken), (e: unknown) => {
      assert.equal(errorKind(e), "corrupt");
      assert.equal((e as Error).message, `${broken}: table-uuid: expected a string, got nothing`);
      return true;
    });
    const truncated = join(dir, "00002-b.metadata.json");
    await writeFile(truncated, stringifyJson(validJson()).slice(0, 100));
    await assert.rejects(readMetadataFile(io, truncated), (e: unknown) => {
      assert.equal(errorKind(e), "corrupt");
      assert.match((e as Error).message, new RegExp(`^${truncated}: not JSON \\(`));
      return true;
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
