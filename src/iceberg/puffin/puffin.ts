// The Puffin file (Puffin spec): `Magic Blob₁ … Blobₙ Footer`, with
//   Footer = Magic FooterPayload FooterPayloadSize Flags Magic
// Magic is "PFA1"; FooterPayload is the UTF-8 JSON FileMetadata {"blobs": [BlobMetadata], "properties"};
// FooterPayloadSize is a 4-byte little-endian integer; Flags are 4 bytes whose bit 0 of byte 0 says the
// payload is LZ4-compressed. floe writes it uncompressed and, like PyIceberg and DuckDB, does not read
// a compressed footer. Bytes in, bytes out: reading and writing files is the IO layer's.

import { parseJson, stringifyJson } from "../../lib/int64-json.ts";
import { IcebergError } from "../errors.ts";

export const PUFFIN_MAGIC = Uint8Array.of(0x50, 0x46, 0x41, 0x31);
/** FooterPayloadSize + Flags + closing Magic. */
export const FOOTER_STRUCT_LENGTH = 12;
const FLAG_FOOTER_PAYLOAD_COMPRESSED = 0x01;

export interface BlobMetadata {
  type: string;
  /** Field ids the blob was computed for. */
  fields: number[];
  /** -1 when written before the snapshot exists (always, for deletion vectors). */
  snapshotId: bigint;
  sequenceNumber: bigint;
  /** Where the blob starts in the file. */
  offset: number;
  /** Its stored length in bytes. */
  length: number;
  compressionCodec?: string;
  properties: Record<string, string>;
}

export interface FileMetadata {
  blobs: BlobMetadata[];
  properties: Record<string, string>;
}

export interface BlobInput {
  type: string;
  fields: number[];
  snapshotId?: bigint;
  sequenceNumber?: bigint;
  /** Stored as given (floe writes no compressed blobs). */
  data: Uint8Array;
  properties?: Record<string, string>;
}

/** Lays out a Puffin file: the blobs in the order given, then the footer. */
export function writePuffin(
  blobs: readonly BlobInput[],
  properties: Record<string, string> = {},
): { bytes: Uint8Array; blobs: BlobMetadata[] } {
  const written: BlobMetadata[] = [];
  let offset = PUFFIN_MAGIC.length;
  for (const blob of blobs) {
    written.push({
      type: blob.type,
      fields: [...blob.fields],
      snapshotId: blob.snapshotId ?? -1n,
      sequenceNumber: blob.sequenceNumber ?? -1n,
      offset,
      length: blob.data.length,
      properties: { ...blob.properties },
    });
    offset += blob.data.length;
  }
  const payload = new TextEncoder().encode(footerJson({ blobs: written, properties }));
  const size = offset + PUFFIN_MAGIC.length + payload.length + FOOTER_STRUCT_LENGTH;
  const bytes = new Uint8Array(size);
  bytes.set(PUFFIN_MAGIC, 0);
  for (let i = 0; i < blobs.length; i++) bytes.set(blobs[i]!.data, written[i]!.offset);
  const payloadAt = offset + PUFFIN_MAGIC.length;
  const structAt = payloadAt + payload.length;
  bytes.set(PUFFIN_MAGIC, offset);
  bytes.set(payload, payloadAt);
  new DataView(bytes.buffer).setInt32(structAt, payload.length, true);
  // The 4 flag bytes stay zero: payload not compressed.
  bytes.set(PUFFIN_MAGIC, structAt + 8);
  return { bytes, blobs: written };
}

/**
 * Length of the whole footer (from its opening magic to the end of the file), read from the last
 * FOOTER_STRUCT_LENGTH bytes of the file (or any longer suffix): what to fetch to read the footer.
 */
export function footerLength(tail: Uint8Array): number {
  if (tail.length < FOOTER_STRUCT_LENGTH)
    throw new IcebergError("corrupt", `Puffin footer needs the last 12 bytes, got ${tail.length}`);
  const end = tail.length;
  checkMagic(tail, end - 4, "closing");
  const payloadSize = new DataView(tail.buffer, tail.byteOffset, tail.byteLength).getInt32(end - 12, true);
  if (payloadSize < 0) throw new IcebergError("corrupt", `Puffin footer payload size ${payloadSize} is negative`);
  return PUFFIN_MAGIC.length + payloadSize + FOOTER_STRUCT_LENGTH;
}

/**
 * Parses the footer from `tail`: the whole file, or a suffix of it holding the whole footer, in which
 * case `fileSize` is the file's size (used to check that the blobs lie between magic and footer).
 */
export function readFooter(tail: Uint8Array, fileSize = tail.length): FileMetadata {
  const length = footerLength(tail);
  if (length > tail.length)
    throw new IcebergError("corrupt", `Puffin footer is ${length} bytes, only ${tail.length} given`);
  const footerStart = fileSize - length;
  if (footerStart < PUFFIN_MAGIC.length) throw new IcebergError("corrupt", "Puffin file too short for its footer");
  if (fileSize === tail.length) checkMagic(tail, 0, "file");
  const start = tail.length - length;
  checkMagic(tail, start, "footer");
  const flags = tail.subarray(tail.length - 8, tail.length - 4);
  if ((flags[0]! & FLAG_FOOTER_PAYLOAD_COMPRESSED) !== 0) {
    throw new IcebergError("corrupt", "Puffin footer payload is LZ4-compressed; floe reads uncompressed footers only");
  }
  if ((flags[0]! & ~FLAG_FOOTER_PAYLOAD_COMPRESSED) !== 0 || flags[1] !== 0 || flags[2] !== 0 || flags[3] !== 0) {
    throw new IcebergError("corrupt", `Puffin footer has unknown flags ${Buffer.from(flags).toString("hex")}`);
  }
  const payload = tail.subarray(start + PUFFIN_MAGIC.length, tail.length - FOOTER_STRUCT_LENGTH);
  const metadata = parseFileMetadata(new TextDecoder("utf-8", { fatal: true }).decode(payload));
  for (const blob of metadata.blobs) {
    if (blob.offset < PUFFIN_MAGIC.length || blob.offset + blob.length > footerStart) {
      throw new IcebergError("corrupt", `Puffin blob at ${blob.offset} (+${blob.length}) lies outside the blob area`);
    }
  }
  return metadata;
}

/** The stored bytes of `blob` in the whole file `file` (a view, not a copy). */
export function blobBytes(file: Uint8Array, blob: Pick<BlobMetadata, "offset" | "length">): Uint8Array {
  if (blob.offset < 0 || blob.length < 0 || blob.offset + blob.length > file.length) {
    throw new IcebergError(
      "corrupt",
      `Puffin blob at ${blob.offset} (+${blob.length}) is past the end of a ${file.length}-byte file`,
    );
  }
  return file.subarray(blob.offset, blob.offset + blob.length);
}

// Java's FileMetadataParser order: type, fields, snapshot-id, sequence-number, offset, length,
// compression-codec, properties; empty property maps are left out.
function footerJson(metadata: FileMetadata): string {
  const blobs = metadata.blobs.map((b) => ({
    type: b.type,
    fields: b.fields,
    "snapshot-id": b.snapshotId,
    "sequence-number": b.sequenceNumber,
    offset: b.offset,
    length: b.length,
    ...(b.compressionCodec === undefined ? {} : { "compression-codec": b.compressionCodec }),
    ...(Object.keys(b.properties).length > 0 ? { properties: b.properties } : {}),
  }));
  return stringifyJson({
    blobs,
    ...(Object.keys(metadata.properties).length > 0 ? { properties: metadata.properties } : {}),
  });
}

function parseFileMetadata(text: string): FileMetadata {
  let json: unknown;
  try {
    json = parseJson(text);
  } catch (error) {
    throw new IcebergError("corrupt", `Puffin footer is not JSON: ${(error as Error).message}`);
  }
  if (!isObject(json) || !Array.isArray(json.blobs))
    throw new IcebergError("corrupt", "Puffin footer has no blobs list");
  const blobs = json.blobs.map((b: unknown, i: number): BlobMetadata => {
    const where = `Puffin footer blob ${i}`;
    if (!isObject(b)) throw new IcebergError("corrupt", `${where} is not an object`);
    if (typeof b.type !== "string") throw new IcebergError("corrupt", `${where} has no type`);
    if (!Array.isArray(b.fields) || !b.fields.every(Number.isInteger))
      throw new IcebergError("corrupt", `${where} has no fields`);
    const metadata: BlobMetadata = {
      type: b.type,
      fields: b.fields as number[],
      snapshotId: long(b["snapshot-id"], `${where} snapshot-id`),
      sequenceNumber: long(b["sequence-number"], `${where} sequence-number`),
      offset: size(b.offset, `${where} offset`),
      length: size(b.length, `${where} length`),
      properties: stringMap(b.properties, `${where} properties`),
    };
    if (b["compression-codec"] !== undefined && b["compression-codec"] !== null) {
      if (typeof b["compression-codec"] !== "string")
        throw new IcebergError("corrupt", `${where} compression-codec is not a string`);
      metadata.compressionCodec = b["compression-codec"];
    }
    return metadata;
  });
  return { blobs, properties: stringMap(json.properties, "Puffin footer properties") };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function long(v: unknown, what: string): bigint {
  if (typeof v === "bigint") return v;
  if (typeof v === "number" && Number.isSafeInteger(v)) return BigInt(v);
  throw new IcebergError("corrupt", `${what} is missing or not an integer`);
}

function size(v: unknown, what: string): number {
  if (typeof v === "number" && Number.isSafeInteger(v) && v >= 0) return v;
  throw new IcebergError("corrupt", `${what} is missing or not a non-negative integer`);
}

function stringMap(v: unknown, what: string): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (!isObject(v) || !Object.values(v).every((s) => typeof s === "string")) {
    throw new IcebergError("corrupt", `${what} is not a map of strings`);
  }
  return { ...(v as Record<string, string>) };
}

function checkMagic(bytes: Uint8Array, at: number, which: string): void {
  for (let k = 0; k < 4; k++) {
    if (bytes[at + k] !== PUFFIN_MAGIC[k])
      throw new IcebergError("corrupt", `Puffin ${which} magic missing at byte ${at}: not a Puffin file`);
  }
}
