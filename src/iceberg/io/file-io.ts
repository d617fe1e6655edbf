// File IO: where data, delete, manifest and metadata files are read and written. A table's
// files are addressed by location strings exactly as they appear in metadata; the same string
// must come back byte-identical (a DV's referenced-data-file is compared as a string by readers).
// Object stores (s3, gs, abfss) plug in behind the same interface, built per table from the
// catalog's vended credentials (the `config` of a loadTable response).
import { IcebergError } from "../errors.ts";

export interface FileIO {
  /** Writes a whole new file; parents are created as needed. Never overwrites a table file in place. */
  write(location: string, bytes: Uint8Array): Promise<void>;
  read(location: string): Promise<Uint8Array>;
  readRange(location: string, offset: number, length: number): Promise<Uint8Array>;
  exists(location: string): Promise<boolean>;
  delete(location: string): Promise<void>;
  /**
   * Every file under `prefix` (a directory-like location), at any depth, with its size and last
   * modification time: what DeleteOrphanFiles compares with the metadata. Optional: a store
   * without it cannot have orphans removed.
   */
  list?(prefix: string): AsyncIterable<ListedFile>;
}

export interface ListedFile {
  location: string;
  size: number;
  lastModifiedMs: number;
}

/** A table's storage properties, and which layer of the catalog's answer carried its credentials. */
export interface StorageProperties {
  readonly properties: Readonly<Record<string, string>>;
  readonly origin: string;
}

export interface FileIOContext {
  /** Where the properties' credentials came from ("storage-credentials for s3://b/t"), for messages. */
  readonly credentialOrigin?: string;
  /** Asks the catalog again for the table's properties: fresh vended credentials before the old expire. */
  readonly refresh?: () => Promise<StorageProperties>;
}

/** Builds the FileIO for one table from the catalog's per-table properties (credentials, region, ...). */
export type FileIOFactory = (
  location: string,
  properties: Readonly<Record<string, string>>,
  context?: FileIOContext,
) => FileIO;

export class UnsupportedListingError extends IcebergError {
  constructor(location: string) {
    super("unsupported", `cannot list ${location}: its file IO has no listing, so orphan files cannot be found there`);
    this.name = "UnsupportedListingError";
  }
}

export class UnsupportedLocationError extends IcebergError {
  constructor(location: string) {
    super(
      "unsupported",
      `no file IO for ${location}: floe reads and writes local paths (file:), s3:// (s3a://), gs://, abfss:// and wasbs:// locations`,
    );
    this.name = "UnsupportedLocationError";
  }
}
