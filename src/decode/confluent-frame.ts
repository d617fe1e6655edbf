// The Confluent wire format of a schema-registry value (or key):
//
//   byte 0      magic, 0
//   bytes 1-4   schema id, unsigned 32-bit big-endian
//   protobuf    message indexes: a zigzag varint count n, then n zigzag varints, the path of the
//               message type in the schema file (top-level index, then nested); the count 0
//               alone (one byte 0x00) stands for [0], the first message of the file
//   rest        the Avro binary datum, or the Protobuf message bytes
//
// Framing is checked here; what the payload means is the decoders' business.

export const CONFLUENT_MAGIC = 0x00;
export const CONFLUENT_HEADER_LENGTH = 5;

/** A framed value's schema id and where its payload starts. */
export interface ConfluentFrame {
  readonly schemaId: number;
  /** Protobuf only: the message type's path in the schema file; [0] for the first message. */
  readonly messageIndexes: readonly number[];
  readonly payload: Uint8Array;
}

export type FrameResult = { readonly frame: ConfluentFrame } | { readonly problem: string };

/** Whether the bytes start like a framed value (magic byte 0 and room for the schema id). */
export function isConfluentFramed(bytes: Uint8Array): boolean {
  return bytes.length >= CONFLUENT_HEADER_LENGTH && bytes[0] === CONFLUENT_MAGIC;
}

/** The frame of a value; `protobuf` reads the message indexes after the schema id. */
export function parseConfluentFrame(bytes: Uint8Array, protobuf: boolean): FrameResult {
  if (bytes.length === 0) return { problem: "value is empty, not in the Confluent wire format" };
  if (bytes[0] !== CONFLUENT_MAGIC) {
    return {
      problem: `value is not in the Confluent wire format: first byte 0x${bytes[0]!.toString(16).padStart(2, "0")}, not the magic byte 0x00`,
    };
  }
  if (bytes.length < CONFLUENT_HEADER_LENGTH) {
    return { problem: `value of ${bytes.length} bytes is too short for the Confluent wire format (5-byte header)` };
  }
  const schemaId = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(1);
  if (!protobuf) return { frame: { schemaId, messageIndexes: [], payload: bytes.subarray(CONFLUENT_HEADER_LENGTH) } };
  let at = CONFLUENT_HEADER_LENGTH;
  const count = readZigzagVarint(bytes, at);
  if (count === undefined || count.value < 0) return { problem: `schema id ${schemaId}: bad message-index count` };
  at = count.next;
  const indexes: number[] = [];
  if (count.value === 0) indexes.push(0);
  // Each index takes at least a byte: a count beyond the bytes left is corrupt, not a loop to run.
  if (count.value > bytes.length - at) return { problem: `schema id ${schemaId}: bad message-index count` };
  for (let i = 0; i < count.value; i++) {
    const index = readZigzagVarint(bytes, at);
    if (index === undefined || index.value < 0) return { problem: `schema id ${schemaId}: bad message index` };
    indexes.push(index.value);
    at = index.next;
  }
  return { frame: { schemaId, messageIndexes: indexes, payload: bytes.subarray(at) } };
}

/** A zigzag-encoded varint (at most 5 bytes, a 32-bit value) at `at`, or undefined when truncated or too long. */
export function readZigzagVarint(bytes: Uint8Array, at: number): { value: number; next: number } | undefined {
  let raw = 0;
  for (let shift = 0, i = at; shift <= 28; shift += 7, i++) {
    if (i >= bytes.length) return undefined;
    const byte = bytes[i]!;
    raw += (byte & 0x7f) * 2 ** shift;
    if ((byte & 0x80) === 0) {
      const value = raw % 2 === 0 ? raw / 2 : -(raw + 1) / 2;
      return { value, next: i + 1 };
    }
  }
  return undefined;
}

/** The frame of a value, for producers (tests, the demo): magic, schema id, protobuf indexes, payload. */
export function encodeConfluentFrame(
  schemaId: number,
  payload: Uint8Array,
  messageIndexes?: readonly number[],
): Uint8Array {
  const indexBytes: number[] = [];
  if (messageIndexes !== undefined) {
    if (messageIndexes.length === 1 && messageIndexes[0] === 0) indexBytes.push(0);
    else for (const n of [messageIndexes.length, ...messageIndexes]) writeZigzagVarint(n, indexBytes);
  }
  const out = new Uint8Array(CONFLUENT_HEADER_LENGTH + indexBytes.length + payload.length);
  out[0] = CONFLUENT_MAGIC;
  new DataView(out.buffer).setUint32(1, schemaId);
  out.set(indexBytes, CONFLUENT_HEADER_LENGTH);
  out.set(payload, CONFLUENT_HEADER_LENGTH + indexBytes.length);
  return out;
}

function writeZigzagVarint(value: number, out: number[]): void {
  let raw = value >= 0 ? value * 2 : -value * 2 - 1;
  while (raw >= 0x80) {
    out.push((raw % 0x80) | 0x80);
    raw = Math.floor(raw / 0x80);
  }
  out.push(raw);
}
