// The pure selections of the maintenance actions: which files a compaction bin-packs, which
// snapshots a retention policy expires, which manifests a merge packs, which listed files are
// orphans.
import assert from "node:assert/strict";
import { test } from "node:test";
import { normalizeLocation, selectOrphans } from "#src/iceberg/commit/delete-orphan-files.ts";
import { selectExpiredSnapshots } from "#src/iceberg/commit/expire-snapshots.ts";
import { packManifests, selectManifestMerges } from "#src/iceberg/commit/manifest-merge.ts";
import { type FileCandidate, planRewriteGroups } from "#src/iceberg/commit/rewrite-data-files.ts";
import { manifestBins } from "#src/iceberg/commit/rewrite-manifests.ts";
import type { Snapshot } from "#src/iceberg/spec/snapshot.ts";
import type { TableMetadata } from "#src/iceberg/spec/table-metadata.ts";

const MB = 1024 * 1024;
const file = (path: string, sizeBytes: number, records = 100, deletedRecords = 0): FileCandidate => ({
  path,
  sizeBytes,
  records,
  deletedRecords,
});

test("bin-packing: small files grouped up to the target, full files left alone", () => {
  const files = [
    ...Array.from({ length: 10 }, (_, i) => file(`s${i}`, 10 * MB)),
    file("full", 120 * MB),
    file("big", 300 * MB),
  ];
  const groups = planRewriteGroups(files, { targetFileSizeBytes: 128 * MB, maxGroupBytes: 1024 * MB });
  const paths = groups.map((g) => g.map((f) => f.path).sort());
  assert.ok(!paths.flat().includes("full"), "a file near the target is not rewritten");
  assert.deepEqual(
    paths.find((g) => g.includes("big")),
    ["big"],
    "a file over 180% of the target is split alone",
  );
  const small = paths.filter((g) => !g.includes("big"));
  assert.deepEqual(
    small.flat().sort(),
    files
      .slice(0, 10)
      .map((f) => f.path)
      .sort(),
  );
  for (const g of groups) {
    if (g.length > 1) assert.ok(g.reduce((sum, f) => sum + f.sizeBytes, 0) <= 128 * MB);
  }
});

test("bin-packing: a group is never larger than maxGroupBytes, and a file over it is left", () => {
  const files = [...Array.from({ length: 10 }, (_, i) => file(`s${i}`, 10 * MB)), file("big", 300 * MB)];
  const groups = planRewriteGroups(files, { targetFileSizeBytes: 128 * MB, maxGroupBytes: 32 * MB });
  assert.ok(!groups.flat().some((f) => f.path === "big"));
  for (const g of groups) assert.ok(g.reduce((sum, f) => sum + f.sizeBytes, 0) <= 32 * MB);
  assert.equal(groups.flat().length, 9, "bins of three 10 MB files; the tenth alone is under min-input-files");
});

test("bin-packing: fewer small files than min-input-files are left, unless one has many deletes", () => {
  const target = { targetFileSizeBytes: 128 * MB, maxGroupBytes: 1024 * MB };
  assert.deepEqual(planRewriteGroups([file("a", MB), file("b", MB)], target), []);
  const groups = planRewriteGroups([file("a", MB), file("b", MB, 100, 40)], target);
  assert.deepEqual(
    groups.map((g) => g.map((f) => f.path).sort()),
    [["a", "b"]],
  );
  // A large file with 30% of its rows deleted is rewritten on its own.
  const deleted = planRewriteGroups([file("c", 127 * MB, 1000, 300)], target);
  assert.deepEqual(
    deleted.map((g) => g.map((f) => f.path)),
    [["c"]],
  );
  // Live bytes count: a file with most rows deleted packs as small.
  const packed = planRewriteGroups(
    [file("d", 100 * MB, 100, 90), file("e", 100 * MB, 100, 90), ...[1, 2, 3].map((i) => file(`f${i}`, MB))],
    target,
  );
  assert.equal(packed.length, 1);
});

function snapshot(id: number, parent: number | undefined, ageMs: number, now: number): Snapshot {
  return {
    snapshotId: BigInt(id),
    ...(parent === undefined ? {} : { parentSnapshotId: BigInt(parent) }),
    sequenceNumber: BigInt(id),
    timestampMs: BigInt(now - ageMs),
    manifestList: `/m/snap-${id}.avro`,
    summary: { operation: "append" },
  };
}

function metadata(snapshots: Snapshot[], refs: TableMetadata["refs"]): TableMetadata {
  return { snapshots, refs, currentSnapshotId: refs.main?.snapshotId } as unknown as TableMetadata;
}

test("retention: the last N, or the younger than T; the current and tagged snapshots always", () => {
  const now = 1_000_000_000;
  const hour = 3_600_000;
  // 1 <- 2 <- ... <- 6 (main), ages 6h..1h; 7 is on no branch (an old orphaned snapshot), 8 a tag.
  const chain = [1, 2, 3, 4, 5, 6].map((id) => snapshot(id, id === 1 ? undefined : id - 1, (7 - id) * hour, now));
  const m = metadata([...chain, snapshot(7, 2, 10 * hour, now), snapshot(8, undefined, 20 * hour, now)], {
    main: { snapshotId: 6n, type: "branch" },
    v1: { snapshotId: 8n, type: "tag" },
  });
  const ids = (policy: Parameters<typeof selectExpiredSnapshots>[1]) =>
    selectExpiredSnapshots(m, policy)
      .map(Number)
      .sort((a, b) => a - b);
  // No age: the count alone keeps, and a snapshot on no branch goes.
  assert.deepEqual(ids({ retainLast: 2 }), [1, 2, 3, 4, 7]);
  assert.deepEqual(ids({ retainLast: 1, expireOlderThanMs: BigInt(now - 3.5 * hour) }), [1, 2, 3, 7]);
  assert.deepEqual(ids({ retainLast: 4, expireOlderThanMs: BigInt(now) }), [1, 2, 7]);
  // retainLast below 1 still keeps the current snapshot.
  assert.ok(!ids({ retainLast: 0, expireOlderThanMs: BigInt(now + hour) }).includes(6));
  assert.deepEqual(
    ids({ retainLast: 1, expireOlderThanMs: BigInt(now + hour), keep: (s) => s.snapshotId === 3n }),
    [1, 2, 4, 5, 7],
  );
});

test("manifest merge: only groups reaching min-count, only carried-over manifests, bins up to the target", () => {
  assert.deepEqual(packManifests([3, 3, 3, 5, 1], 6), [[0, 1], [2], [3, 4]]);
  assert.deepEqual(packManifests([10, 1], 6), [[0], [1]]);
  const m = (length: number, own = false, content = 0) => ({
    manifestLength: BigInt(length),
    content,
    partitionSpecId: 0,
    own,
  });
  const settings = { enabled: true, minCountToMerge: 4, targetSizeBytes: 10 };
  // 3 data manifests: under the count, nothing merged.
  assert.deepEqual(selectManifestMerges([m(1, true), m(1), m(1)], settings), []);
  // The new manifest (index 0) stays; the carried ones pack oldest first.
  const merges = selectManifestMerges([m(1, true), m(4), m(4), m(4), m(4)], settings);
  assert.deepEqual(merges, [
    [4, 3],
    [2, 1],
  ]);
  // Delete manifests are their own group.
  assert.deepEqual(selectManifestMerges([m(1, true), m(1), m(1, false, 1), m(1, false, 1)], settings), []);
  assert.deepEqual(selectManifestMerges([m(1), m(1), m(1), m(1)], { ...settings, enabled: false }), []);
  const bins = manifestBins(
    [
      { manifestLength: 4n, content: 0, partitionSpecId: 0 },
      { manifestLength: 4n, content: 1, partitionSpecId: 0 },
      { manifestLength: 4n, content: 0, partitionSpecId: 0 },
    ],
    10,
  );
  assert.equal(bins.length, 2);
});

test("orphans: unreferenced, of an Iceberg kind, and older than the margin", () => {
  const now = 10_000_000;
  const listed = [
    { location: "s3a://b/t/data/a.parquet", size: 1, lastModifiedMs: 0 },
    { location: "s3://b/t/data/b.parquet", size: 2, lastModifiedMs: 0 },
    { location: "s3://b/t/data/young.parquet", size: 3, lastModifiedMs: now },
    { location: "s3://b/t/data/notes.txt", size: 4, lastModifiedMs: 0 },
    { location: "s3://b/t/metadata/00001-x.metadata.json", size: 5, lastModifiedMs: 0 },
  ];
  const reachable = new Set([normalizeLocation("s3://b/t/data/a.parquet")]);
  assert.deepEqual(
    selectOrphans(listed, reachable, now - 1000).map((f) => f.location),
    ["s3://b/t/data/b.parquet", "s3://b/t/metadata/00001-x.metadata.json"],
  );
  assert.equal(normalizeLocation("file:///w/t/x.avro"), "/w/t/x.avro");
  assert.equal(normalizeLocation("file:/w/t//x.avro"), "/w/t/x.avro");
});
