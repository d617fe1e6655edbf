// ExpireSnapshots (Java's RemoveSnapshots; spec "Snapshots", "Snapshot Retention Policy"):
// removes snapshots from the table metadata, then deletes the files that only they reached.
// Spec rules it follows:
// - the snapshot a ref (branch or tag) points at is never expired, so the current snapshot stays;
// - on a branch, ancestors are kept while they are among the last `retainLast` or younger than
//   `expireOlderThan` (history.expire.min-snapshots-to-keep, history.expire.max-snapshot-age-ms);
//   a snapshot on no branch's ancestry is expired once older than `expireOlderThan`;
// - a file is deleted only after the metadata commit landed, and only when no snapshot left in
//   the metadata the catalog answered (concurrent commits included) still reaches it: manifest
//   lists of expired snapshots, manifests no kept snapshot lists, content files no kept manifest
//   holds (as Java's ReachableFileCleanup).
// The commit asserts that `main` is where the selection saw it; a concurrent commit makes the
// selection run again on the refreshed table.

import { readManifestEntries, readManifestList } from "../scan/read-manifests.ts";
import type { ManifestFile } from "../spec/manifest.ts";
import { MAIN_BRANCH, type Snapshot } from "../spec/snapshot.ts";
import { ancestors, snapshotById, type TableMetadata } from "../spec/table-metadata.ts";
import {
  HISTORY_EXPIRE_MAX_SNAPSHOT_AGE_MS,
  HISTORY_EXPIRE_MIN_SNAPSHOTS_TO_KEEP,
  propertyValue,
} from "../spec/table-properties.ts";
import type { Table } from "../table.ts";
import { commitWithRetries } from "./retry.ts";

const DELETES_IN_FLIGHT = 16;

export interface RetentionPolicy {
  /** Snapshots older than this (epoch ms) may expire; undefined: only the count decides. */
  expireOlderThanMs?: bigint;
  /** Ancestors of each branch kept whatever their age (at least 1: the branch's head). */
  retainLast: number;
  /** Snapshots the caller needs kept whatever their age (say, the one recording a position). */
  keep?: (snapshot: Snapshot) => boolean;
}

/** The snapshot ids the policy expires from `metadata` (pure: unit-tested). */
export function selectExpiredSnapshots(metadata: TableMetadata, policy: RetentionPolicy): bigint[] {
  const retained = new Set<bigint>();
  const onBranch = new Set<bigint>();
  const retainLast = Math.max(1, policy.retainLast);
  // No age given: only the count keeps a snapshot.
  const older = (s: Snapshot) => policy.expireOlderThanMs === undefined || s.timestampMs < policy.expireOlderThanMs;
  for (const ref of Object.values(metadata.refs)) {
    const head = snapshotById(metadata, ref.snapshotId);
    if (!head) continue;
    retained.add(head.snapshotId);
    if (ref.type !== "branch") continue;
    let count = 0;
    let cut = false;
    for (const s of ancestors(metadata, head)) {
      onBranch.add(s.snapshotId);
      count++;
      // As Java: the first ancestor beyond the count that is also too old ends the kept run.
      if (!cut && (count <= retainLast || !older(s))) retained.add(s.snapshotId);
      else cut = true;
    }
  }
  const expired: bigint[] = [];
  for (const s of metadata.snapshots) {
    if (retained.has(s.snapshotId) || policy.keep?.(s)) continue;
    if (onBranch.has(s.snapshotId) || older(s)) expired.push(s.snapshotId);
  }
  return expired;
}

/** Files an expiry removed (or, on a dry run, would remove), by kind. */
export interface ExpiredFiles {
  manifestLists: string[];
  manifests: string[];
  dataFiles: string[];
  deleteFiles: string[];
  /** Bytes of the manifests and content files (manifest lists are not sized in metadata). */
  bytes: bigint;
}

export interface ExpireSnapshotsResult {
  expiredSnapshotIds: bigint[];
  files: ExpiredFiles;
}

export class ExpireSnapshots {
  readonly #table: Table;
  #olderThanMs: bigint | undefined;
  #retainLastCount: number | undefined;
  readonly #keeps: ((snapshot: Snapshot) => boolean)[] = [];
  #cleanFiles = true;

  constructor(table: Table) {
    this.#table = table;
  }

  expireOlderThan(timestampMs: bigint | number): this {
    this.#olderThanMs = BigInt(timestampMs);
    return this;
  }

  retainLast(count: number): this {
    if (!Number.isInteger(count) || count < 1) throw new RangeError(`retainLast must be at least 1, got ${count}`);
    this.#retainLastCount = count;
    return this;
  }

  /** Never expires a snapshot `keep` holds on to. */
  retain(keep: (snapshot: Snapshot) => boolean): this {
    this.#keeps.push(keep);
    return this;
  }

  /** Whether to delete the files only expired snapshots reach (on by default, as Java). */
  deleteFiles(clean: boolean): this {
    this.#cleanFiles = clean;
    return this;
  }

  /** The policy as set, falling back to the table's history.expire.* properties as Java does. */
  policy(metadata: TableMetadata): RetentionPolicy {
    const props = metadata.properties;
    // A retain-last count set here replaces the age limit unless the table sets one itself.
    const ageSet = props[HISTORY_EXPIRE_MAX_SNAPSHOT_AGE_MS.key] !== undefined;
    const olderThan =
      this.#olderThanMs ??
      (this.#retainLastCount === undefined || ageSet
        ? BigInt(Date.now()) - propertyValue(props, HISTORY_EXPIRE_MAX_SNAPSHOT_AGE_MS)
        : undefined);
    return {
      ...(olderThan === undefined ? {} : { expireOlderThanMs: olderThan }),
      retainLast: this.#retainLastCount ?? propertyValue(props, HISTORY_EXPIRE_MIN_SNAPSHOTS_TO_KEEP),
      keep: (s) => this.#keeps.some((keep) => keep(s)),
    };
  }

  /** What commit() would expire and delete, from the table as it is now; nothing is changed. */
  async plan(): Promise<ExpireSnapshotsResult> {
    const before = this.#table.metadata;
    const ids = selectExpiredSnapshots(before, this.policy(before));
    const removed = new Set(ids);
    const after = { ...before, snapshots: before.snapshots.filter((s) => !removed.has(s.snapshotId)) };
    return { expiredSnapshotIds: ids, files: await unreachableFiles(this.#table, before, after, ids) };
  }

  async commit(): Promise<ExpireSnapshotsResult> {
    let expired: bigint[] = [];
    let before: TableMetadata = this.#table.metadata;
    await commitWithRetries(this.#table, async (base) => {
      expired = selectExpiredSnapshots(base, this.policy(base));
      before = base;
      if (expired.length === 0) return undefined;
      return {
        requirements: [
          { type: "assert-table-uuid", uuid: base.tableUuid },
          { type: "assert-ref-snapshot-id", ref: MAIN_BRANCH, snapshotId: base.refs[MAIN_BRANCH]?.snapshotId ?? null },
        ],
        updates: [{ action: "remove-snapshots", snapshotIds: expired }],
      };
    });
    const empty: ExpiredFiles = { manifestLists: [], manifests: [], dataFiles: [], deleteFiles: [], bytes: 0n };
    if (expired.length === 0) return { expiredSnapshotIds: [], files: empty };
    // What the catalog answered after the commit: snapshots committed meanwhile count as kept.
    const after = this.#table.metadata;
    const gone = expired.filter((id) => !snapshotById(after, id));
    const files = await unreachableFiles(this.#table, before, after, gone);
    if (this.#cleanFiles) {
      await deleteAll(this.#table, [
        ...files.dataFiles,
        ...files.deleteFiles,
        ...files.manifests,
        ...files.manifestLists,
      ]);
    }
    return { expiredSnapshotIds: gone, files };
  }
}

/** Files the expired snapshots of `before` reach that no snapshot of `after` reaches. */
async function unreachableFiles(
  table: Table,
  before: TableMetadata,
  after: TableMetadata,
  expiredIds: readonly bigint[],
): Promise<ExpiredFiles> {
  const files: ExpiredFiles = { manifestLists: [], manifests: [], dataFiles: [], deleteFiles: [], bytes: 0n };
  const expired = expiredIds.map((id) => snapshotById(before, id)).filter((s) => s !== undefined);
  if (expired.length === 0) return files;
  const keptManifests = new Map<string, ManifestFile>();
  for (const s of after.snapshots) {
    for (const m of await readManifestList(table, s)) keptManifests.set(m.manifestPath, m);
  }
  const candidates = new Map<string, ManifestFile>();
  for (const s of expired) {
    if (!after.snapshots.some((k) => k.manifestList === s.manifestList)) files.manifestLists.push(s.manifestList);
    for (const m of await readManifestList(table, s)) {
      if (!keptManifests.has(m.manifestPath)) candidates.set(m.manifestPath, m);
    }
  }
  const keptContent = new Set<string>();
  for (const m of keptManifests.values()) {
    for (const e of await readManifestEntries(table, m)) keptContent.add(e.file.filePath);
  }
  const seen = new Set<string>();
  for (const m of candidates.values()) {
    files.manifests.push(m.manifestPath);
    files.bytes += m.manifestLength;
    for (const e of await readManifestEntries(table, m)) {
      const path = e.file.filePath;
      if (keptContent.has(path) || seen.has(path)) continue;
      seen.add(path);
      files.bytes += e.file.fileSizeInBytes;
      (e.file.content === 0 ? files.dataFiles : files.deleteFiles).push(path);
    }
  }
  return files;
}

/** Deletes files, a bounded number at a time; a file already gone is not an error. */
export async function deleteAll(table: Table, locations: readonly string[]): Promise<void> {
  for (let i = 0; i < locations.length; i += DELETES_IN_FLIGHT) {
    await Promise.all(locations.slice(i, i + DELETES_IN_FLIGHT).map((l) => table.io.delete(l)));
  }
}
