// floe's manifests and manifest lists against PyIceberg 0.12 (the project venv), both ways:
// PyIceberg reads what floe writes, resolving every column by field id (its v2 read schema,
// with inheritance, and its v3 schema for first_row_id and the deletion-vector fields); and
// floe reads the v1 (null codec) and v2 (deflate) files PyIceberg writes.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { inheritFromManifestFile } from "#src/iceberg/avro/inheritance.ts";
import { readManifestList, writeManifestList } from "#src/iceberg/avro/manifest-list.ts";
import { readManifest } from "#src/iceberg/avro/manifest-reader.ts";
import { ManifestWriter } from "#src/iceberg/avro/manifest-writer.ts";
import { type DataFile, EntryStatus, ManifestContent } from "#src/iceberg/spec/manifest.ts";
import { readerEnv } from "../../dev/services/readers.ts";
import { big, dataFile, deletionVector, schema, spec } from "../unit/iceberg/avro/fixtures.ts";

const dir = mkdtempSync(join(tmpdir(), "floe-avro-"));
after(() => rmSync(dir, { recursive: true, force: true }));

function python(script: string): unknown {
  return JSON.parse(execFileSync(readerEnv.python, ["-c", script, dir], { encoding: "utf8" }));
}

// Ints become strings (int64s survive JSON), bytes hex, records lists.
const PRELUDE = `
import enum, json, sys
from collections.abc import Mapping
from pyiceberg.avro.file import AvroFile
from pyiceberg.io.pyarrow import PyArrowFileIO
from pyiceberg.manifest import *
io, d = PyArrowFileIO(), sys.argv[1]
def j(v):
    if isinstance(v, bool) or v is None: return v
    if isinstance(v, enum.Enum): return j(v.value)
    if isinstance(v, int): return str(v)
    if isinstance(v, bytes): return v.hex()
    if isinstance(v, Mapping): return {str(k): j(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)): return [j(x) for x in v]
    if hasattr(v, "_data"): return [j(x) for x in v._data]
    return str(v)
`;

describe("PyIceberg reads floe's manifests and manifest list", () => {
  const snapshotId = 2n ** 62n + 1n;
  const data = new ManifestWriter<DataFile>({ schema, spec, content: ManifestContent.DATA, snapshotId });
  data.existing({
    status: EntryStatus.ADDED,
    snapshotId: 77n,
    sequenceNumber: 3n,
    fileSequenceNumber: 3n,
    file: { ...dataFile(`file://${dir}/old.parquet`, 25n, "us", 18999), firstRowId: 800n },
  });
  data.add(dataFile(`file://${dir}/a.parquet`, 50n, "eu", 19000));
  const deletes = new ManifestWriter({ schema, spec, content: ManifestContent.DELETES, snapshotId });
  deletes.add(deletionVector(`file://${dir}/dv.puffin`, `file://${dir}/a.parquet`));
  const manifests = [data.finish(`file://${dir}/m0.avro`), deletes.finish(`file://${dir}/m1.avro`)].map((m, i) => {
    writeFileSync(join(dir, `m${i}.avro`), m.bytes);
    return m.manifest;
  });
  const list = writeManifestList({
    snapshotId,
    parentSnapshotId: 78n,
    sequenceNumber: 5n,
    firstRowId: 1000n,
    manifests,
  });
  writeFileSync(join(dir, "list.avro"), list.bytes);

  const read = python(`${PRELUDE}
out = {"list": [], "entries": [], "v3": []}
for mf in read_manifest_list(io.new_input(f"file://{d}/list.avro")):
    out["list"].append(j([mf.manifest_path.rsplit("/", 1)[1], mf.content, mf.sequence_number, mf.min_sequence_number,
        mf.added_snapshot_id, mf.added_files_count, mf.existing_files_count, mf.added_rows_count, mf.existing_rows_count,
        [[p.contains_null, p.lower_bound, p.upper_bound] for p in mf.partitions]]))
    for e in mf.fetch_manifest_entry(io, discard_deleted=False):
        f = e.data_file
        out["entries"].append(j([e.status, e.snapshot_id, e.sequence_number, e.file_sequence_number, f.content,
            f.file_path.rsplit("/", 1)[1], f.file_format, f.partition, f.record_count, f.column_sizes, f.value_counts,
            f.lower_bounds, f.split_offsets]))
with AvroFile[ManifestFile](io.new_input(f"file://{d}/list.avro"), MANIFEST_LIST_FILE_SCHEMAS[3],
        read_types={-1: ManifestFile, 508: PartitionFieldSummary}, read_enums={517: ManifestContent}) as r:
    out["firstRowIds"] = [j(mf._data[15]) for mf in r]
names = [f.name for f in MANIFEST_ENTRY_SCHEMAS[3].find_field(2).field_type.fields]
for m in ("m0", "m1"):
    with AvroFile[ManifestEntry](io.new_input(f"file://{d}/{m}.avro"), MANIFEST_ENTRY_SCHEMAS[3],
            read_types={-1: ManifestEntry, 2: DataFile}, read_enums={0: ManifestEntryStatus, 101: FileFormat, 134: DataFileContent}) as r:
        for e in r:
            v = dict(zip(names, e.data_file._data))
            out["v3"].append(j([v["first_row_id"], v["referenced_data_file"], v["content_offset"], v["content_size_in_bytes"]]))
print(json.dumps(out))
`) as { list: unknown[][]; entries: unknown[][]; firstRowIds: unknown[]; v3: unknown[][] };

  const hex = (b: Uint8Array | undefined) => Buffer.from(b ?? []).toString("hex");

  test("the manifest list: counts, sequence numbers, partition summaries, first_row_id", () => {
    assert.deepEqual(
      read.list.map((m) => m.slice(0, 9)),
      [
        ["m0.avro", "0", "5", "3", String(snapshotId), "1", "1", "50", "25"],
        ["m1.avro", "1", "5", "5", String(snapshotId), "1", "0", "2", "0"],
      ],
    );
    assert.deepEqual(
      read.list[0]![9],
      manifests[0]!.partitions!.map((p) => [p.containsNull, hex(p.lowerBound), hex(p.upperBound)]),
    );
    assert.deepEqual(read.firstRowIds, ["1000", null]);
  });

  test("entries, with sequence numbers inherited by the ADDED ones and int64s intact", () => {
    const [existing, added, dv] = read.entries;
    assert.deepEqual(existing!.slice(0, 8), [
      "0",
      "77",
      "3",
      "3",
      "0",
      "old.parquet",
      "PARQUET",
      ["18999", "us", "7", String(big), "-123.45", "0f8fad5b-d9cb-469f-a165-70867728950e", "-0.0"],
    ]);
    assert.deepEqual(added!.slice(0, 6), ["1", String(snapshotId), "5", "5", "0", "a.parquet"]);
    assert.deepEqual(added!.slice(8), [
      "50",
      { 1: "800", 2: String(2n ** 40n) },
      { 1: "50", 2: "50" },
      { 1: hex(dataFile("", 0n, null, 0).lowerBounds!.get(1)) },
      ["4", String(big)],
    ]);
    assert.deepEqual(dv!.slice(0, 7), ["1", String(snapshotId), "5", "5", "1", "dv.puffin", "PUFFIN"]);
  });

  test("v3 fields by id: first_row_id of data files, the deletion vector's blob reference", () => {
    assert.deepEqual(read.v3, [
      ["800", null, null, null],
      [null, null, null, null],
      [null, `file://${dir}/a.parquet`, "4", "44"],
    ]);
  });
});

describe("floe reads PyIceberg's v1 and v2 manifests and manifest lists", () => {
  python(`${PRELUDE}
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import BucketTransform, DayTransform, IdentityTransform
from pyiceberg.typedef import Record
from pyiceberg.types import LongType, NestedField, StringType, TimestamptzType
schema = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "region", StringType(), required=False),
                NestedField(3, "ts", TimestamptzType(), required=False), schema_id=1)
spec = PartitionSpec(PartitionField(3, 1000, DayTransform(), "ts_day"), PartitionField(2, 1001, IdentityTransform(), "region"),
                     PartitionField(1, 1002, BucketTransform(16), "id_bucket"), spec_id=1)
BIG = 2**62 + 12345
for version, codec in ((1, "null"), (2, "deflate")):
    snap = BIG + version
    with write_manifest(version, spec, schema, io.new_output(f"{d}/py-v{version}.avro"), snap, codec) as w:
        for i, region in enumerate(("eu", None)):
            f = DataFile.from_args(content=DataFileContent.DATA, file_path=f"py{i}.parquet", file_format=FileFormat.PARQUET,
                partition=Record(19000 + i, region, i), record_count=10 + i, file_size_in_bytes=1000 + i,
                column_sizes={1: BIG}, value_counts={1: 10 + i}, null_value_counts={2: 1}, nan_value_counts={},
                lower_bounds={1: bytes(8)}, upper_bounds={1: bytes(8)}, split_offsets=[4], sort_order_id=0, spec_id=1)
            if i == 0:
                w.add(ManifestEntry.from_args(status=ManifestEntryStatus.ADDED, snapshot_id=snap, data_file=f))
            else:
                w.existing(ManifestEntry.from_args(status=ManifestEntryStatus.EXISTING, snapshot_id=snap - 10,
                    sequence_number=3, file_sequence_number=3, data_file=f))
    with write_manifest_list(version, io.new_output(f"{d}/py-v{version}-list.avro"), snap, snap - 10,
            7 if version == 2 else None, codec) as lw:
        lw.add_manifests([w.to_manifest_file()])
print("{}")
`);

  for (const version of [1, 2]) {
    test(`v${version}: entries resolve by id and inherit from the list (v1: sequence number 0)`, () => {
      const [manifest] = readManifestList(readFileSync(join(dir, `py-v${version}-list.avro`)));
      const base = 2n ** 62n + 12345n + BigInt(version);
      const sequence = version === 1 ? 0n : 7n;
      assert.deepEqual(
        [manifest!.content, manifest!.sequenceNumber, manifest!.addedSnapshotId, manifest!.addedRowsCount],
        [ManifestContent.DATA, sequence, base, 10n],
      );
      const read = readManifest(readFileSync(join(dir, `py-v${version}.avro`)));
      assert.equal(read.metadata.get("format-version"), String(version));
      const entries = inheritFromManifestFile(read.entries, manifest!);
      assert.deepEqual(
        entries.map((e) => [e.status, e.snapshotId, e.sequenceNumber, e.file.filePath, [...e.file.partition]]),
        [
          [
            EntryStatus.ADDED,
            base,
            sequence,
            "py0.parquet",
            [
              [1000, 19000],
              [1001, "eu"],
              [1002, 0],
            ],
          ],
          [
            EntryStatus.EXISTING,
            base - 10n,
            version === 1 ? 0n : 3n,
            "py1.parquet",
            [
              [1000, 19001],
              [1002, 1],
            ],
          ],
        ],
      );
      assert.equal(entries[0]!.file.columnSizes?.get(1), 2n ** 62n + 12345n);
      assert.deepEqual(entries[1]!.file.splitOffsets, [4n]);
    });
  }
});
