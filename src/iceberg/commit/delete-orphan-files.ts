// DeleteOrphanFiles (Java's DeleteOrphanFilesSparkAction): deletes the files under the table's
// location that no metadata reaches, once they are older than a safety margin.
// Rules, as Java's:
// - reachable is everything the table metadata names: the current metadata file and those of
//   its metadata-log, each snapshot's manifest list, the manifests they list, the data and delete
//   files those hold, and the statistics files (any path the unmodelled metadata keys carry);
// - a file is an orphan candidate only when it is older than `olderThan` (3 days by default). A
//   commit in flight writes its data, delete and manifest files before the catalog accepts it, so
//   a young unreferenced file may be about to be added: never removed;
// - the listing comes first and the metadata is read after it, so a file committed while the
//   listing ran is seen as reachable;
// - locations compare by path, with s3a:// as s3:// and file:/x as /x, since writers spell
//   the same file differently (Java's prefix-mismatch-mode "ignore" for the scheme).
// Only the file kinds an Iceberg writer puts under a table (Parquet, Avro, ORC, Puffin, the
// metadata JSON and statistics) are ever deleted; anything else under the location is left.
import { IcebergError } from "../errors.ts";
import type { ListedFile } from "../io/file-io.ts";
import { readManifestEntries, readManifestList } from "../scan/read-manifests.ts";
import type { TableMetadata } from "../spec/table-metadata.ts";
import type { Table } from "../table.ts";
import { deleteAll } from "./expire-snapshots.ts";

export const DEFAULT_ORPHAN_AGE_MS = 3 * 24 * 3600 * 1000;
const ICEBERG_FILE = /\.(parquet|avro|orc|puffin|stats|metadata\.json(\.gz)?)$/;

export interface OrphanFilesResult {
  orphans: ListedFile[];
  bytes: number;
  /** Files listed under the table's location. */
  listed: number;
}

/** The same file however a writer spelled its location. */
export function normalizeLocation(location: string): string {
  const unified = location.replace(/^s3[an]:\/\//, "s3://").replace(/^file:\/+/, "/");
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(unified)?.[0] ?? "";
  return scheme + unified.slice(scheme.length).replace(/\/{2,}/g, "/");
}

/**
 * The listed files that are orphans: unreachable, of an Iceberg kind, older than `olderThanMs`
 * (epoch ms). Pure: unit-tested.
 */
export function selectOrphans(
  listed: readonly ListedFile[],
  reachable: ReadonlySet<string>,
  olderThanMs: number,
): ListedFile[] {
  return listed.filter(
    (f) =>
      f.lastModifiedMs < olderThanMs && ICEBERG_FILE.test(f.location) && !reachable.has(normalizeLocation(f.location)),
  );
}

/** Every location the metadata reaches (normalized). */
export async function reachableLocations(
  table: Table,
  metadata: TableMetadata,
  metadataLocation: string,
): Promise<Set<string>> {
  const reachable = new Set<string>([normalizeLocation(metadataLocation)]);
  for (const entry of metadata.metadataLog) reachable.add(normalizeLocation(entry.metadataFile));
  collectStrings(metadata.extra, reachable);
  for (const snapshot of metadata.snapshots) {
    reachable.add(normalizeLocation(snapshot.manifestList));
    for (const manifest of await readManifestList(table, snapshot)) {
      if (reachable.has(normalizeLocation(manifest.manifestPath))) continue;
      reachable.add(normalizeLocation(manifest.manifestPath));
      for (const entry of await readManifestEntries(table, manifest))
        reachable.add(normalizeLocation(entry.file.filePath));
    }
  }
  return reachable;
}

/** Statistics and partition-statistics files: any string under the unmodelled keys, taken as reachable. */
function collectStrings(value: unknown, into: Set<string>): void {
  if (typeof value === "string") into.add(normalizeLocation(value));
  else if (Array.isArray(value)) for (const v of value) collectStrings(v, into);
  else if (value !== null && typeof value === "object") for (const v of Object.values(value)) collectStrings(v, into);
}

export class DeleteOrphanFiles {
  readonly #table: Table;
  #olderThanMs: number | undefined;
  #location: string | undefined;

  constructor(table: Table) {
    this.#table = table;
  }

  /** Only files last modified before this (epoch ms) are removed; now minus 3 days by default. */
  olderThan(timestampMs: number): this {
    this.#olderThanMs = timestampMs;
    return this;
  }

  /** Where to look; the table's location by default. */
  under(location: string): this {
    this.#location = location;
    return this;
  }

  /** The orphans, without deleting them. */
  async plan(): Promise<OrphanFilesResult> {
    const io = this.#table.io;
    const root = this.#location ?? this.#table.metadata.location;
    if (!io.list)
      throw new IcebergError("unsupported", `${this.#table.name}: the file IO of ${root} cannot list files`);
    const cutoff = this.#olderThanMs ?? Date.now() - DEFAULT_ORPHAN_AGE_MS;
    const listed: ListedFile[] = [];
    for await (const file of io.list(root)) listed.push(file);
    // After the listing: a file committed meanwhile is reachable from this metadata.
    await this.#table.refresh();
    const reachable = await reachableLocations(this.#table, this.#table.metadata, this.#table.metadataLocation);
    const orphans = selectOrphans(listed, reachable, cutoff);
    return { orphans, bytes: orphans.reduce((sum, f) => sum + f.size, 0), listed: listed.length };
  }

  async execute(): Promise<OrphanFilesResult> {
    const result = await this.plan();
    await deleteAll(
      this.#table,
      result.orphans.map((f) => f.location),
    );
    return result;
  }
}
