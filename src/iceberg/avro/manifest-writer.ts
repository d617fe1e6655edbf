// Writes a v3 manifest (spec "Manifests"): an Avro file of manifest_entry records whose
// partition struct follows the spec, with the metadata keys schema, schema-id, partition-spec,
// partition-spec-id, format-version and content.
//
// Sequence numbers are inherited (spec "Sequence Number Inheritance"): an ADDED entry leaves its
// data and file sequence numbers null unless given, so the manifest stays valid whatever
// sequence number the commit gets, and a retry rewrites only the manifest list. EXISTING and
// DELETED entries must carry both explicitly. Like Java and PyIceberg, ADDED and DELETED entries
// carry this manifest's snapshot id: a snapshot keeps its id across commit retries.

import { stringifyJson } from "../../lib/int64-json.ts";
import {
  type ContentFile,
  EntryStatus,
  FileContent,
  ManifestContent,
  type ManifestEntry,
  type ManifestFile,
} from "../spec/manifest.ts";
import { type PartitionSpec, partitionSpecToJson } from "../spec/partition-spec.ts";
import { type Schema, schemaToJson } from "../spec/schema.ts";
import type { StructType } from "../spec/types.ts";
import { structToAvroSchema } from "./avro-schema.ts";
import { structToAvro } from "./avro-value.ts";
import { writeAvroFile } from "./container.ts";
import { entryToStruct } from "./manifest-entry.ts";
import { PartitionSummary } from "./partition-summary.ts";
import { manifestEntryType, partitionType } from "./v3-metadata.ts";

export interface ManifestWriterOptions {
  /** The table schema the manifest is written with (spec: its JSON goes in the metadata). */
  schema: Schema;
  spec: PartitionSpec;
  content: ManifestContent;
  /** The snapshot that adds this manifest: it adds and deletes its entries. */
  snapshotId: bigint;
}

/**
 * A manifest list entry for a manifest not yet committed: its sequence number, and its min
 * sequence number when no entry has an explicit one, are the committing snapshot's; its
 * first_row_id is assigned when the manifest list is written.
 */
export type NewManifestFile = Omit<ManifestFile, "sequenceNumber" | "minSequenceNumber"> & {
  sequenceNumber?: bigint;
  minSequenceNumber?: bigint;
};

export class ManifestWriter<F extends ContentFile = ContentFile> {
  readonly #options: ManifestWriterOptions;
  readonly #entryType: StructType;
  readonly #partitionSummary: PartitionSummary;
  readonly #entries: ManifestEntry<F>[] = [];
  #minSequenceNumber: bigint | undefined;

  constructor(options: ManifestWriterOptions) {
    this.#options = options;
    const partition = partitionType(options.spec, options.schema);
    this.#entryType = manifestEntryType(partition);
    this.#partitionSummary = new PartitionSummary(partition);
  }

  /** A file this snapshot adds; a data sequence number only for data older than the commit. */
  add(file: F, dataSequenceNumber?: bigint): void {
    this.#append({
      status: EntryStatus.ADDED,
      snapshotId: this.#options.snapshotId,
      ...(dataSequenceNumber === undefined ? {} : { sequenceNumber: dataSequenceNumber }),
      file,
    });
  }

  /** A live file carried over from a committed manifest, with its inherited values filled in. */
  existing(entry: ManifestEntry<F>): void {
    if (entry.snapshotId === undefined) throw new TypeError(`existing entry ${entry.file.filePath} has no snapshot id`);
    this.#append({ ...committed(entry), status: EntryStatus.EXISTING, snapshotId: entry.snapshotId });
  }

  /** A committed file this snapshot removes (or, for a deletion vector, supersedes). */
  delete(entry: ManifestEntry<F>): void {
    this.#append({ ...committed(entry), status: EntryStatus.DELETED, snapshotId: this.#options.snapshotId });
  }

  #append(entry: ManifestEntry<F>): void {
    const isData = entry.file.content === FileContent.DATA;
    if (isData !== (this.#options.content === ManifestContent.DATA)) {
      throw new TypeError(
        `${entry.file.filePath}: a ${isData ? "data" : "delete"} file in a manifest of the other kind`,
      );
    }
    this.#partitionSummary.update(entry.file.partition);
    const seq = entry.sequenceNumber;
    if (entry.status !== EntryStatus.DELETED && seq !== undefined) {
      if (this.#minSequenceNumber === undefined || seq < this.#minSequenceNumber) this.#minSequenceNumber = seq;
    }
    this.#entries.push(entry);
  }

  /** The manifest's bytes, and its manifest list entry once stored at `path`. */
  finish(path: string): { bytes: Uint8Array; manifest: NewManifestFile } {
    const { schema, spec, content, snapshotId } = this.#options;
    const bytes = writeAvroFile({
      schema: structToAvroSchema(this.#entryType, "manifest_entry"),
      metadata: new Map([
        ["schema", stringifyJson(schemaToJson(schema))],
        ["schema-id", String(schema.schemaId)],
        ["partition-spec", stringifyJson((partitionSpecToJson(spec) as { fields: unknown }).fields)],
        ["partition-spec-id", String(spec.specId)],
        ["format-version", "3"],
        ["content", content === ManifestContent.DATA ? "data" : "deletes"],
      ]),
      records: this.#entries.map((e) => structToAvro(this.#entryType, entryToStruct(e))),
    });
    const withStatus = (status: EntryStatus) => this.#entries.filter((e) => e.status === status);
    const rows = (entries: ManifestEntry<F>[]) => entries.reduce((sum, e) => sum + e.file.recordCount, 0n);
    const [added, existing, deleted] = [
      withStatus(EntryStatus.ADDED),
      withStatus(EntryStatus.EXISTING),
      withStatus(EntryStatus.DELETED),
    ];
    return {
      bytes,
      manifest: {
        manifestPath: path,
        manifestLength: BigInt(bytes.length),
        partitionSpecId: spec.specId,
        content,
        ...(this.#minSequenceNumber === undefined ? {} : { minSequenceNumber: this.#minSequenceNumber }),
        addedSnapshotId: snapshotId,
        addedFilesCount: added.length,
        existingFilesCount: existing.length,
        deletedFilesCount: deleted.length,
        addedRowsCount: rows(added),
        existingRowsCount: rows(existing),
        deletedRowsCount: rows(deleted),
        partitions: this.#partitionSummary.summaries(),
      },
    };
  }
}

/** Spec: entries that are not ADDED must carry both sequence numbers explicitly. */
function committed<F extends ContentFile>(entry: ManifestEntry<F>): ManifestEntry<F> {
  if (entry.sequenceNumber === undefined || entry.fileSequenceNumber === undefined) {
    throw new TypeError(`${entry.file.filePath}: a committed entry needs its data and file sequence numbers`);
  }
  return entry;
}
