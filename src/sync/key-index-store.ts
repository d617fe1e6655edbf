// The upsert key index of a table, kept beside the job: the hash of each key (`_floe_id`) ->
// the data file and row position of its live row, which the key's next deletion vector needs;
// loaded from its file, caught up from the snapshots committed since it was saved (by another
// writer, a compaction, or a sync that died between its commit and saving the index), or
// rebuilt from the `_floe_id` column of the live data files when it cannot be caught up. It is
// a cache of the table, never the truth: a missing or foreign file only costs a rebuild.
import { mkdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { AsyncBuffer } from "hyparquet";
import { FLOE_ID } from "../decode/system-columns.ts";
import { readKeyColumns } from "../iceberg/parquet/key-column-reader.ts";
import { deletedPositionsOf, readDeletedPositions } from "../iceberg/scan/deleted-positions.ts";
import { type FileSnapshot, planFiles } from "../iceberg/scan/plan-files.ts";
import { findField } from "../iceberg/spec/schema.ts";
import type { Snapshot } from "../iceberg/spec/snapshot.ts";
import { ancestors, currentSchema, currentSnapshot, snapshotById } from "../iceberg/spec/table-metadata.ts";
import type { Table } from "../iceberg/table.ts";
import { catchUp, type DataFileKeys, rebuildKeyIndex } from "../upsert/catch-up.ts";
import { KEY_HASH_WORDS, keyHashes, parseKeyHash } from "../upsert/key-hash.ts";
import { KeyIndex } from "../upsert/key-index.ts";
import { loadKeyIndex, saveKeyIndex } from "../upsert/key-index-file.ts";

export class KeyIndexStore {
  readonly path: string;
  private readonly scope: string;

  constructor(stateDir: string, table: Table, dedupKeys: readonly string[]) {
    this.path = join(stateDir, `${table.name}.keyindex`);
    // A recreated table (new uuid) or other dedup keys make a saved index foreign.
    this.scope = `${table.metadata.tableUuid}|${dedupKeys.join(",")}`;
  }

  /** The index as of the table's current snapshot. */
  async open(table: Table): Promise<KeyIndex> {
    return this.bringTo(await loadKeyIndex(this.path, this.scope), table, currentSnapshot(table.metadata));
  }

  /**
   * `index` (when given) brought to `target`, a snapshot of the table's metadata: caught up from
   * the snapshots in between when the one it reflects is an ancestor of `target`, otherwise
   * rebuilt. Used when a sync's commit must land on a parent that another writer committed.
   */
  async bringTo(index: KeyIndex | undefined, table: Table, target: Snapshot | undefined): Promise<KeyIndex> {
    if (!target) return new KeyIndex(this.scope, null);
    const targetId = target.snapshotId;
    if (index && index.snapshotId === targetId) return index;
    const now = await planFiles(table, target);
    // Catching up replays what happened after the index's snapshot, so only from an ancestor of
    // the target: after a rollback the index's snapshot may still be in the metadata, but its
    // removed files and DVs are live again, and only a rebuild sees them.
    const then =
      index?.snapshotId != null && [...ancestors(table.metadata, target)].some((s) => s.snapshotId === index.snapshotId)
        ? snapshotById(table.metadata, index.snapshotId)
        : undefined;
    if (index && then) {
      const before = await planFiles(table, then);
      catchUp(index, {
        snapshotId: targetId,
        removedFiles: [...before.dataFiles.keys()].filter((path) => !now.dataFiles.has(path)),
        deletedRows: await changedDeletionVectors(table, before, now),
        addedFiles: await Promise.all(
          [...now.dataFiles.values()]
            .filter(({ entry }) => !before.dataFiles.has(entry.file.filePath))
            .sort((a, b) => Number(a.entry.sequenceNumber! - b.entry.sequenceNumber!))
            .map(({ entry }) => dataFileKeys(table, now, entry.file.filePath)),
        ),
      });
      return index;
    }
    const live = [...now.dataFiles.values()].sort((a, b) => Number(a.entry.sequenceNumber! - b.entry.sequenceNumber!));
    const files = await Promise.all(live.map(({ entry }) => dataFileKeys(table, now, entry.file.filePath)));
    return rebuildKeyIndex(this.scope, targetId, files).index;
  }

  async save(index: KeyIndex): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true });
    await saveKeyIndex(index, this.path);
  }
}

async function changedDeletionVectors(table: Table, before: FileSnapshot, now: FileSnapshot) {
  const changed = [...now.deletionVectors].filter(([path, dv]) => {
    const old = before.deletionVectors.get(path);
    return before.dataFiles.has(path) && (!old || old.entry.file.filePath !== dv.entry.file.filePath);
  });
  return Promise.all(
    changed.map(async ([path, dv]) => ({
      path,
      positions: (await readDeletedPositions(table.io, dv.entry.file)).toArray(),
    })),
  );
}

/** Files up to this size are read whole (one request); larger ones by ranges: footer, then the key column. */
const WHOLE_FILE_READ_BYTES = 16 * 1024 * 1024;

/** A data file's bytes, or ranged reads of it when it is large. */
async function dataFileSource(table: Table, plan: FileSnapshot, path: string): Promise<Uint8Array | AsyncBuffer> {
  const size = Number(plan.dataFiles.get(path)?.entry.file.fileSizeInBytes ?? 0);
  if (size <= WHOLE_FILE_READ_BYTES) return table.io.read(path);
  return {
    byteLength: size,
    async slice(start: number, end = size) {
      const bytes = await table.io.readRange(path, start, end - start);
      return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
        ? (bytes.buffer as ArrayBuffer)
        : (bytes.slice().buffer as ArrayBuffer);
    },
  };
}

/** The key hashes of a data file's rows, from its `_floe_id` column, and its deleted rows. */
async function dataFileKeys(table: Table, plan: FileSnapshot, path: string): Promise<DataFileKeys> {
  const schema = currentSchema(table.metadata);
  const field = findField(schema, FLOE_ID);
  if (!field) throw new Error(`${table.name}: no ${FLOE_ID} column, so its rows cannot be matched by key`);
  const { rowCount, columns } = await readKeyColumns(await dataFileSource(table, plan, path), schema, [field.id], path);
  const ids = columns.get(field.id)!;
  const hashes = keyHashes(rowCount);
  const unkeyed: number[] = [];
  for (let row = 0; row < rowCount; row++) {
    const id = ids[row];
    // A row without a readable _floe_id (written by another tool) has no key to match: not indexed.
    if (typeof id !== "string" || !parseKeyHash(id, hashes, row)) {
      unkeyed.push(row);
      hashes.fill(0, row * KEY_HASH_WORDS, (row + 1) * KEY_HASH_WORDS);
    }
  }
  // Its DV, or in a table upgraded from v2 its position delete files: deleted rows are not indexed.
  const positions = await deletedPositionsOf(table.io, plan, path);
  const deleted = positions ? Array.from(positions.toArray(), Number) : [];
  return { path, keyHashes: hashes, deletedPositions: [...deleted, ...unkeyed] };
}
