// The spec check: the tables below are the field ids of spec "Manifests" / "Manifest Lists"
// (and Java's V3Metadata). Each written file's `avro.schema` header is walked and every field,
// list element and map key/value must be there with exactly that id and optionality.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { readAvroFile } from "#src/iceberg/avro/container.ts";
import { writeManifestList } from "#src/iceberg/avro/manifest-list.ts";
import { readManifest } from "#src/iceberg/avro/manifest-reader.ts";
import { ManifestWriter } from "#src/iceberg/avro/manifest-writer.ts";
import { ManifestContent } from "#src/iceberg/spec/manifest.ts";
import type { PartitionSpec } from "#src/iceberg/spec/partition-spec.ts";
import { dataFile, schema, spec } from "./fixtures.ts";

type Row = [path: string, id: number, required: boolean];

const MANIFEST_ENTRY: Row[] = [
  ["status", 0, true],
  ["snapshot_id", 1, false],
  ["sequence_number", 3, false],
  ["file_sequence_number", 4, false],
  ["data_file", 2, true],
  ["data_file.content", 134, true],
  ["data_file.file_path", 100, true],
  ["data_file.file_format", 101, true],
  ["data_file.partition", 102, true],
  ["data_file.partition.ts_day", 1000, false],
  ["data_file.partition.region", 1001, false],
  ["data_file.partition.id_bucket", 1002, false],
  ["data_file.partition.id", 1003, false],
  ["data_file.partition.amount", 1004, false],
  ["data_file.partition.uid", 1005, false],
  ["data_file.partition.score", 1006, false],
  ["data_file.record_count", 103, true],
  ["data_file.file_size_in_bytes", 104, true],
  ["data_file.column_sizes", 108, false],
  ["data_file.column_sizes.key", 117, true],
  ["data_file.column_sizes.value", 118, true],
  ["data_file.value_counts", 109, false],
  ["data_file.value_counts.key", 119, true],
  ["data_file.value_counts.value", 120, true],
  ["data_file.null_value_counts", 110, false],
  ["data_file.null_value_counts.key", 121, true],
  ["data_file.null_value_counts.value", 122, true],
  ["data_file.nan_value_counts", 137, false],
  ["data_file.nan_value_counts.key", 138, true],
  ["data_file.nan_value_counts.value", 139, true],
  ["data_file.lower_bounds", 125, false],
  ["data_file.lower_bounds.key", 126, true],
  ["data_file.lower_bounds.value", 127, true],
  ["data_file.upper_bounds", 128, false],
  ["data_file.upper_bounds.key", 129, true],
  ["data_file.upper_bounds.value", 130, true],
  ["data_file.key_metadata", 131, false],
  ["data_file.split_offsets", 132, false],
  ["data_file.split_offsets.element", 133, true],
  ["data_file.equality_ids", 135, false],
  ["data_file.equality_ids.element", 136, true],
  ["data_file.sort_order_id", 140, false],
  ["data_file.first_row_id", 142, false],
  ["data_file.referenced_data_file", 143, false],
  ["data_file.content_offset", 144, false],
  ["data_file.content_size_in_bytes", 145, false],
];

const MANIFEST_FILE: Row[] = [
  ["manifest_path", 500, true],
  ["manifest_length", 501, true],
  ["partition_spec_id", 502, true],
  ["content", 517, true],
  ["sequence_number", 515, true],
  ["min_sequence_number", 516, true],
  ["added_snapshot_id", 503, true],
  ["added_files_count", 504, true],
  ["existing_files_count", 505, true],
  ["deleted_files_count", 506, true],
  ["added_rows_count", 512, true],
  ["existing_rows_count", 513, true],
  ["deleted_rows_count", 514, true],
  ["partitions", 507, false],
  ["partitions.element", 508, true],
  ["partitions.element.contains_null", 509, true],
  ["partitions.element.contains_nan", 518, false],
  ["partitions.element.lower_bound", 510, false],
  ["partitions.element.upper_bound", 511, false],
  ["key_metadata", 519, false],
  ["first_row_id", 520, false],
];

type Json = Record<string, unknown>;

/** Every field of an Avro schema as [path, id, required], failing on any field without an id. */
function walk(schema: unknown, path: string, rows: Row[]): void {
  if (Array.isArray(schema)) {
    const branches = schema.filter((b) => b !== "null");
    assert.equal(branches.length, 1, `${path}: only ["null", T] unions`);
    walk(branches[0], path, rows);
    return;
  }
  if (typeof schema !== "object" || schema === null) return;
  const s = schema as Json;
  if (s.type === "record") {
    for (const field of s.fields as Json[]) {
      const fieldPath = path ? `${path}.${field.name}` : String(field.name);
      assert.equal(typeof field["field-id"], "number", `${fieldPath} has a field-id`);
      const optional = Array.isArray(field.type) && field.type.includes("null");
      if (optional) assert.equal(field.default, null, `${fieldPath}: optional fields default to null`);
      rows.push([fieldPath, field["field-id"] as number, !optional]);
      walk(field.type, fieldPath, rows);
    }
  } else if (s.type === "array" && s.logicalType === "map") {
    const entry = s.items as Json;
    const [key, value] = entry.fields as Json[];
    assert.equal(entry.name, `k${key!["field-id"]}_v${value!["field-id"]}`, `${path}: map entries are k<id>_v<id>`);
    assert.deepEqual([key!.name, value!.name], ["key", "value"]);
    for (const f of [key!, value!]) {
      rows.push([`${path}.${f.name}`, f["field-id"] as number, !Array.isArray(f.type)]);
      walk(f.type, `${path}.${f.name}`, rows);
    }
  } else if (s.type === "array") {
    assert.equal(typeof s["element-id"], "number", `${path} has an element-id`);
    rows.push([`${path}.element`, s["element-id"] as number, !Array.isArray(s.items)]);
    walk(s.items, `${path}.element`, rows);
  }
}

function headerRows(bytes: Uint8Array): Row[] {
  const rows: Row[] = [];
  walk(readAvroFile(bytes).schema, "", rows);
  return rows;
}

describe("field ids in the written avro.schema", () => {
  test("manifest_entry and data_file carry the spec's ids, the partition struct its spec's", () => {
    const writer = new ManifestWriter({ schema, spec, content: ManifestContent.DATA, snapshotId: 1n });
    writer.add(dataFile("s3://b/t/data/a.parquet", 10n, "eu", 19000));
    const { bytes } = writer.finish("s3://b/t/metadata/m.avro");
    assert.deepEqual(headerRows(bytes), MANIFEST_ENTRY);
  });

  test("manifest_file carries the spec's ids", () => {
    const { bytes } = writeManifestList({ snapshotId: 1n, sequenceNumber: 1n, firstRowId: 0n, manifests: [] });
    assert.deepEqual(headerRows(bytes), MANIFEST_FILE);
  });

  test("records are named as Java names them; partition types follow Appendix A", () => {
    const writer = new ManifestWriter({ schema, spec, content: ManifestContent.DATA, snapshotId: 1n });
    const root = readAvroFile(writer.finish("m.avro").bytes).schema as Json;
    assert.equal(root.name, "manifest_entry");
    const dataFileType = (root.fields as Json[]).find((f) => f.name === "data_file")!.type as Json;
    assert.equal(dataFileType.name, "r2");
    const partition = (dataFileType.fields as Json[]).find((f) => f.name === "partition")!.type as Json;
    assert.equal(partition.name, "r102");
    const types = Object.fromEntries((partition.fields as Json[]).map((f) => [f.name, (f.type as unknown[])[1]]));
    assert.deepEqual(types, {
      ts_day: { type: "int", logicalType: "date" },
      region: "string",
      id_bucket: "int",
      id: "long",
      amount: { type: "fixed", name: "decimal_10_2", size: 5, logicalType: "decimal", precision: 10, scale: 2 },
      uid: { type: "fixed", name: "uuid_fixed", size: 16, logicalType: "uuid" },
      score: "double",
    });
  });

  test("a partition name that is no Avro name is sanitised as Java does, and still resolves by id", () => {
    const odd: PartitionSpec = {
      specId: 1,
      fields: [{ sourceId: 2, fieldId: 1000, name: "1st-region", transform: { kind: "identity" } }],
    };
    const writer = new ManifestWriter({ schema, spec: odd, content: ManifestContent.DATA, snapshotId: 1n });
    writer.add({ ...dataFile("a.parquet", 1n, "eu", 0), partition: new Map([[1000, "eu"]]) });
    const { bytes } = writer.finish("m.avro");
    const rows = headerRows(bytes).filter(([path]) => path.startsWith("data_file.partition."));
    assert.deepEqual(rows, [["data_file.partition._1st_x2Dregion", 1000, false]]);
    assert.deepEqual(readManifest(bytes).entries[0]!.file.partition, new Map([[1000, "eu"]]));
  });
});
