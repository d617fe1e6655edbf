// Avro object container files (Avro spec, "Object Container Files"): magic `Obj\x01`, a
// metadata map (`avro.schema`, `avro.codec` and ours), a 16-byte sync marker, then blocks of
// (record count, byte size, records, sync marker). Manifests and manifest lists are such files.
//
// The schema goes into the header as the raw JSON we were given, not as avsc re-serialises it,
// so Iceberg's `field-id` attributes survive. Avro longs are int64: they map to bigint.
// We write `deflate` (what Java writes, and a codec every Avro reader must support); we read
// `null`, `deflate` and `zstandard`, the codecs Iceberg writers offer bar snappy.

import { Buffer } from "node:buffer";
import { deflateRawSync, inflateRawSync, zstdDecompressSync } from "node:zlib";
import avsc from "avsc";
import { IcebergError } from "../errors.ts";
import { bigintLongHook } from "../spec/avro-long.ts";
import type { AvroSchema } from "./avro-schema.ts";

function avroType(schema: AvroSchema): avsc.Type {
  return avsc.Type.forSchema(schema as avsc.Schema, {
    typeHook: bigintLongHook,
    wrapUnions: "never",
  });
}

const MAGIC = Buffer.from("Obj\x01", "latin1");

const headerType = avsc.Type.forSchema({
  type: "record",
  name: "org.apache.avro.file.Header",
  fields: [
    { name: "magic", type: { type: "fixed", name: "Magic", size: 4 } },
    { name: "meta", type: { type: "map", values: "bytes" } },
    { name: "sync", type: { type: "fixed", name: "Sync", size: 16 } },
  ],
});

// A block's record count and byte size are Avro longs; block sizes fit a JS number.
const longType = avsc.Type.forSchema("long");

export interface AvroFile {
  schema: AvroSchema;
  /** File metadata other than the `avro.*` keys, as UTF-8 strings. */
  metadata: ReadonlyMap<string, string>;
  records: readonly unknown[];
}

export function writeAvroFile(file: AvroFile): Uint8Array {
  const type = avroType(file.schema);
  const sync = Buffer.from(crypto.getRandomValues(new Uint8Array(16)));
  const meta: Record<string, Buffer> = {
    "avro.schema": Buffer.from(JSON.stringify(file.schema)),
    "avro.codec": Buffer.from("deflate"),
  };
  for (const [key, value] of file.metadata) meta[key] = Buffer.from(value);
  const parts = [headerType.toBuffer({ magic: MAGIC, meta, sync })];
  if (file.records.length > 0) {
    const data = deflateRawSync(Buffer.concat(file.records.map((r) => type.toBuffer(r))));
    parts.push(longType.toBuffer(file.records.length), longType.toBuffer(data.length), data, sync);
  }
  return new Uint8Array(Buffer.concat(parts));
}

export function readAvroFile(bytes: Uint8Array): AvroFile {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const { value: header, offset: start } = headerType.decode(buf, 0);
  if (start < 0 || !MAGIC.equals(header.magic)) throw new IcebergError("corrupt", "not an Avro object container file");
  const meta = header.meta as Record<string, Buffer>;
  const schema = JSON.parse(String(meta["avro.schema"])) as AvroSchema;
  const codec = meta["avro.codec"] === undefined ? "null" : String(meta["avro.codec"]);
  const decompress = codecs.get(codec);
  if (!decompress) {
    throw new IcebergError("unsupported", `Avro codec ${codec}: floe reads null, deflate and zstandard`);
  }
  const type = avroType(schema);
  const sync = header.sync as Buffer;

  const records: unknown[] = [];
  let pos = start;
  while (pos < buf.length) {
    const count = longType.decode(buf, pos);
    const size = longType.decode(buf, count.offset);
    const end = size.offset + size.value;
    if (count.offset < 0 || size.offset < 0 || end + 16 > buf.length) {
      throw new IcebergError("corrupt", "truncated Avro block");
    }
    const data = decompress(buf.subarray(size.offset, end));
    let at = 0;
    for (let i = 0; i < count.value; i += 1) {
      const record = type.decode(data, at);
      if (record.offset < 0) throw new IcebergError("corrupt", "truncated Avro record");
      records.push(record.value);
      at = record.offset;
    }
    if (!sync.equals(buf.subarray(end, end + 16))) {
      throw new IcebergError("corrupt", "Avro block does not end with the sync marker");
    }
    pos = end + 16;
  }

  const metadata = new Map(
    Object.entries(meta)
      .filter(([key]) => !key.startsWith("avro."))
      .map(([key, value]) => [key, String(value)]),
  );
  return { schema, metadata, records };
}

const codecs = new Map<string, (data: Buffer) => Buffer>([
  ["null", (data) => data],
  ["deflate", (data) => inflateRawSync(data)],
  ["zstandard", (data) => zstdDecompressSync(data)],
]);
