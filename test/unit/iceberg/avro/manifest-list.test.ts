import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { readAvroFile } from "#src/iceberg/avro/container.ts";
import { readManifestList, writeManifestList } from "#src/iceberg/avro/manifest-list.ts";
import type { NewManifestFile } from "#src/iceberg/avro/manifest-writer.ts";
import { ManifestContent, type ManifestFile } from "#src/iceberg/spec/manifest.ts";

const snapshotId = 2n ** 62n + 7n;
const parentSnapshotId = 2n ** 61n + 3n;

function newManifest(path: string, added: bigint, existing: bigint, content: ManifestContent = 0): NewManifestFile {
  return {
    manifestPath: path,
    manifestLength: 4096n,
    partitionSpecId: 0,
    content,
    addedSnapshotId: snapshotId,
    addedFilesCount: added > 0n ? 1 : 0,
    existingFilesCount: existing > 0n ? 1 : 0,
    deletedFilesCount: 0,
    addedRowsCount: added,
    existingRowsCount: existing,
    deletedRowsCount: 0n,
    partitions: [
      {
        containsNull: false,
        containsNan: false,
        lowerBound: Uint8Array.of(1, 0, 0, 0),
        upperBound: Uint8Array.of(9, 0, 0, 0),
      },
    ],
  };
}

// Carried over from the parent: committed with its sequence numbers and first_row_id.
const existing: ManifestFile = {
  ...newManifest("existing", 75n, 0n),
  addedSnapshotId: parentSnapshotId,
  sequenceNumber: 4n,
  minSequenceNumber: 2n,
  firstRowId: 925n,
};

describe("manifest list", () => {
  // spec "Row lineage example": a snapshot with first-row-id 1000.
  const manifests = [
    existing,
    newManifest("added1", 100n, 25n),
    newManifest("added2", 0n, 100n),
    newManifest("deletes", 3n, 0n, ManifestContent.DELETES),
    { ...newManifest("added3", 125n, 25n), minSequenceNumber: 3n },
  ];
  const written = writeManifestList({ snapshotId, parentSnapshotId, sequenceNumber: 5n, firstRowId: 1000n, manifests });

  test("first_row_id: new data manifests count on from the snapshot's, delete manifests get none", () => {
    assert.deepEqual(
      written.manifests.map((m) => [m.manifestPath, m.firstRowId]),
      [
        ["existing", 925n],
        ["added1", 1000n],
        ["added2", 1125n],
        ["deletes", undefined],
        ["added3", 1225n],
      ],
    );
    assert.equal(written.addedRows, 375n, "added-rows covers the added and existing rows of the assigned manifests");
  });

  test("new manifests get the snapshot's sequence number; carried ones keep theirs", () => {
    assert.deepEqual(
      written.manifests.map((m) => [m.sequenceNumber, m.minSequenceNumber]),
      [
        [4n, 2n],
        [5n, 5n],
        [5n, 5n],
        [5n, 5n],
        [5n, 3n],
      ],
    );
  });

  test("round trips: what is read is what was listed", () => {
    assert.deepEqual(readManifestList(written.bytes), written.manifests);
  });

  test("metadata: snapshot-id, parent-snapshot-id, sequence-number, first-row-id, format-version", () => {
    assert.deepEqual(
      readAvroFile(written.bytes).metadata,
      new Map([
        ["snapshot-id", String(snapshotId)],
        ["parent-snapshot-id", String(parentSnapshotId)],
        ["sequence-number", "5"],
        ["first-row-id", "1000"],
        ["format-version", "3"],
      ]),
    );
    const first = writeManifestList({ snapshotId, sequenceNumber: 1n, firstRowId: 0n, manifests: [] });
    assert.equal(readAvroFile(first.bytes).metadata.get("parent-snapshot-id"), "null");
    assert.deepEqual(readManifestList(first.bytes), []);
    assert.equal(first.addedRows, 0n);
  });

  test("a manifest of another snapshot must come with its sequence number", () => {
    const stray = { ...newManifest("stray", 1n, 0n), addedSnapshotId: parentSnapshotId };
    assert.throws(
      () => writeManifestList({ snapshotId, sequenceNumber: 5n, firstRowId: 0n, manifests: [stray] }),
      /has no sequence number/,
    );
  });
});
