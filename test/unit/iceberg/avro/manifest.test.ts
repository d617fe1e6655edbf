import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { inheritFromManifestFile } from "#src/iceberg/avro/inheritance.ts";
import { readManifest } from "#src/iceberg/avro/manifest-reader.ts";
import { ManifestWriter } from "#src/iceberg/avro/manifest-writer.ts";
import { partitionType } from "#src/iceberg/avro/v3-metadata.ts";
import {
  type DataFile,
  type DeletionVectorFile,
  EntryStatus,
  ManifestContent,
  type ManifestEntry,
} from "#src/iceberg/spec/manifest.ts";
import { partitionSpecToJson, unpartitioned } from "#src/iceberg/spec/partition-spec.ts";
import { schemaToJson } from "#src/iceberg/spec/schema.ts";
import { decodeSingleValue } from "#src/iceberg/spec/single-value.ts";
import type { PrimitiveType } from "#src/iceberg/spec/types.ts";
import { parseJson } from "#src/lib/int64-json.ts";
import { big, dataFile, deletionVector, schema, spec } from "./fixtures.ts";

const snapshotId = 2n ** 62n + 1n;
const path = (name: string) => `s3://bucket/t/data/${name}`;

describe("data manifest", () => {
  const existing: ManifestEntry<DataFile> = {
    status: EntryStatus.ADDED,
    snapshotId: 77n,
    sequenceNumber: 3n,
    fileSequenceNumber: 4n,
    file: { ...dataFile(path("old.parquet"), 25n, "us", 18999), firstRowId: 800n },
  };
  const removed: ManifestEntry<DataFile> = {
    status: EntryStatus.EXISTING,
    snapshotId: 78n,
    sequenceNumber: 2n,
    fileSequenceNumber: 2n,
    file: { ...dataFile(path("gone.parquet"), 9n, "eu", 19000), firstRowId: 900n },
  };
  const added = [dataFile(path("a.parquet"), 50n, "eu", 19001), dataFile(path("b.parquet"), 50n, "eu", 19000)];

  const writer = new ManifestWriter<DataFile>({ schema, spec, content: ManifestContent.DATA, snapshotId });
  writer.existing(existing);
  for (const file of added) writer.add(file);
  writer.delete(removed);
  const { bytes, manifest } = writer.finish("s3://bucket/t/metadata/m0.avro");
  const read = readManifest(bytes);

  test("entries round trip: ADDED leave sequence numbers to inheritance, the others keep theirs", () => {
    assert.deepEqual(read.entries, [
      { ...existing, status: EntryStatus.EXISTING },
      ...added.map((file) => ({ status: EntryStatus.ADDED, snapshotId, file })),
      { ...removed, status: EntryStatus.DELETED, snapshotId },
    ]);
  });

  test("int64 values beyond 2^53 survive: ids, partition values, stats, split offsets", () => {
    const file = read.entries[1]!.file as DataFile;
    assert.equal(read.entries[1]!.snapshotId, snapshotId);
    assert.equal(file.partition.get(1003), big);
    assert.equal(file.columnSizes?.get(2), 2n ** 40n);
    assert.deepEqual(file.splitOffsets, [4n, big]);
    assert.equal(file.partition.get(1004), -12345n, "decimal partition value as its unscaled bigint");
    assert.ok(Object.is(file.partition.get(1006), -0), "-0.0 stays -0.0");
  });

  test("file metadata: schema, schema-id, partition-spec, partition-spec-id, format-version, content", () => {
    const meta = read.metadata;
    assert.deepEqual(parseJson(meta.get("schema")!), parseJson(JSON.stringify(schemaToJson(schema))));
    assert.equal(meta.get("schema-id"), "3");
    assert.deepEqual(parseJson(meta.get("partition-spec")!), (partitionSpecToJson(spec) as { fields: unknown }).fields);
    assert.equal(meta.get("partition-spec-id"), "2");
    assert.equal(meta.get("format-version"), "3");
    assert.equal(meta.get("content"), "data");
    assert.equal(read.content, ManifestContent.DATA);
  });

  test("summary: path, length, counts, and the min sequence number of the live entries", () => {
    const { partitions, ...rest } = manifest;
    assert.deepEqual(rest, {
      manifestPath: "s3://bucket/t/metadata/m0.avro",
      manifestLength: BigInt(bytes.length),
      partitionSpecId: 2,
      content: ManifestContent.DATA,
      minSequenceNumber: 3n,
      addedSnapshotId: snapshotId,
      addedFilesCount: 2,
      existingFilesCount: 1,
      deletedFilesCount: 1,
      addedRowsCount: 100n,
      existingRowsCount: 25n,
      deletedRowsCount: 9n,
    });
    assert.equal(partitions?.length, spec.fields.length);
  });

  test("partition summaries: bounds in single-value form over all entries, nulls and NaNs flagged", () => {
    const types = partitionType(spec, schema).fields.map((f) => f.type as PrimitiveType);
    const decode = (i: number, b: Uint8Array | undefined) => (b === undefined ? b : decodeSingleValue(types[i]!, b));
    const bounds = manifest.partitions!.map((s, i) => [
      spec.fields[i]!.name,
      s.containsNull,
      s.containsNan,
      decode(i, s.lowerBound),
      decode(i, s.upperBound),
    ]);
    assert.deepEqual(bounds, [
      ["ts_day", false, false, 18999, 19001],
      ["region", false, false, "eu", "us"],
      ["id_bucket", false, false, 7, 7],
      ["id", false, false, big, big],
      ["amount", false, false, -12345n, -12345n],
      ["uid", false, false, "0f8fad5b-d9cb-469f-a165-70867728950e", "0f8fad5b-d9cb-469f-a165-70867728950e"],
      ["score", false, false, -0, -0],
    ]);
  });

  test("a null partition value reads back absent and marks contains_null; NaN marks contains_nan", () => {
    const w = new ManifestWriter<DataFile>({ schema, spec, content: ManifestContent.DATA, snapshotId });
    const nulls = dataFile(path("c.parquet"), 1n, null, 19000);
    w.add({ ...nulls, partition: new Map([...nulls.partition, [1006, Number.NaN]]) });
    w.add({ ...nulls, partition: new Map([...nulls.partition, [1006, 0]]) });
    w.add(dataFile(path("d.parquet"), 1n, "eu", 19000));
    const out = w.finish("m.avro");
    const [region, score] = [out.manifest.partitions![1]!, out.manifest.partitions![6]!];
    assert.equal(region.containsNull, true);
    assert.deepEqual(new TextDecoder().decode(region.lowerBound), "eu");
    assert.equal(score.containsNan, true);
    assert.ok(Object.is(decodeSingleValue("double", score.lowerBound!), -0), "-0 sorts before +0");
    assert.ok(Object.is(decodeSingleValue("double", score.upperBound!), 0));
    assert.equal(readManifest(out.bytes).entries[0]!.file.partition.has(1001), false);
  });

  test("committed entries need both sequence numbers; a manifest holds one kind of file", () => {
    const w = new ManifestWriter<DataFile>({ schema, spec, content: ManifestContent.DATA, snapshotId });
    const { fileSequenceNumber: _, ...noFileSeq } = existing;
    assert.throws(() => w.existing(noFileSeq), /sequence numbers/);
    assert.throws(() => w.delete({ status: EntryStatus.ADDED, file: added[0]! }), /sequence numbers/);
    const deletes = new ManifestWriter({ schema, spec, content: ManifestContent.DELETES, snapshotId });
    assert.throws(() => deletes.add(added[0]!), /manifest of the other kind/);
  });

  test("an unpartitioned manifest has an empty partition struct and no partition summaries", () => {
    const w = new ManifestWriter<DataFile>({ schema, spec: unpartitioned, content: ManifestContent.DATA, snapshotId });
    w.add({ ...added[0]!, partition: new Map() });
    const out = w.finish("m.avro");
    assert.deepEqual(out.manifest.partitions, []);
    assert.equal(out.manifest.minSequenceNumber, undefined, "all sequence numbers are the commit's");
    assert.deepEqual(readManifest(out.bytes).entries[0]!.file.partition, new Map());
  });
});

describe("delete manifest of deletion vectors", () => {
  const dv = deletionVector(path("dv-1.puffin"), path("a.parquet"));
  const superseded: ManifestEntry<DeletionVectorFile> = {
    status: EntryStatus.ADDED,
    snapshotId: 70n,
    sequenceNumber: 4n,
    fileSequenceNumber: 4n,
    file: { ...deletionVector(path("dv-0.puffin"), path("a.parquet")), contentOffset: 4n, contentSizeInBytes: 40n },
  };
  const writer = new ManifestWriter<DeletionVectorFile>({
    schema,
    spec,
    content: ManifestContent.DELETES,
    snapshotId,
  });
  writer.add(dv);
  writer.delete(superseded);
  const { bytes, manifest } = writer.finish("s3://bucket/t/metadata/m1.avro");

  test("a DV entry keeps referenced_data_file, content_offset and content_size_in_bytes", () => {
    const read = readManifest(bytes);
    assert.equal(read.content, ManifestContent.DELETES);
    assert.equal(read.metadata.get("content"), "deletes");
    assert.deepEqual(read.entries, [
      { status: EntryStatus.ADDED, snapshotId, file: dv },
      { ...superseded, status: EntryStatus.DELETED, snapshotId },
    ]);
  });

  test("the superseded DV counts as deleted and its sequence number is not live", () => {
    assert.equal(manifest.content, ManifestContent.DELETES);
    assert.deepEqual(
      [manifest.addedFilesCount, manifest.deletedFilesCount, manifest.addedRowsCount, manifest.deletedRowsCount],
      [1, 1, 2n, 2n],
    );
    assert.equal(manifest.minSequenceNumber, undefined);
  });
});

describe("inheritance from the manifest list entry", () => {
  const entries: ManifestEntry[] = [
    {
      status: EntryStatus.EXISTING,
      snapshotId: 5n,
      sequenceNumber: 2n,
      fileSequenceNumber: 2n,
      file: { ...dataFile("data1", 25n, "eu", 0), firstRowId: 800n },
    },
    { status: EntryStatus.ADDED, file: dataFile("data2", 50n, "eu", 0) },
    {
      status: EntryStatus.DELETED,
      snapshotId: 9n,
      sequenceNumber: 1n,
      fileSequenceNumber: 1n,
      file: dataFile("x", 7n, "eu", 0),
    },
    { status: EntryStatus.ADDED, sequenceNumber: 1n, file: dataFile("data3", 50n, "eu", 0) },
  ];
  const manifest = { addedSnapshotId: 9n, sequenceNumber: 6n, firstRowId: 1000n };

  test("spec example: null first_row_ids continue from the manifest's, deleted files get none", () => {
    const inherited = inheritFromManifestFile(entries, manifest);
    assert.deepEqual(
      inherited.map((e) => [e.snapshotId, e.sequenceNumber, e.fileSequenceNumber, (e.file as DataFile).firstRowId]),
      [
        [5n, 2n, 2n, 800n],
        [9n, 6n, 6n, 1000n],
        [9n, 1n, 1n, undefined],
        [9n, 1n, 6n, 1050n],
      ],
    );
  });

  test("a manifest without first_row_id assigns none and drops stored ones", () => {
    const { firstRowId: _, ...withoutFirstRowId } = manifest;
    const inherited = inheritFromManifestFile(entries, withoutFirstRowId);
    assert.deepEqual(
      inherited.map((e) => "firstRowId" in e.file),
      [false, false, false, false],
    );
  });

  test("a v1 manifest (sequence number 0) gives every entry sequence number 0", () => {
    const v1 = inheritFromManifestFile([{ status: EntryStatus.EXISTING, snapshotId: 3n, file: entries[1]!.file }], {
      addedSnapshotId: 3n,
      sequenceNumber: 0n,
    });
    assert.deepEqual([v1[0]!.sequenceNumber, v1[0]!.fileSequenceNumber], [0n, 0n]);
  });
});
