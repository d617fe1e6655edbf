// A workaround for a quadratic cost in @platformatic/kafka's response parsing, measured on fetches.
//
// The library keeps a response as the list of socket chunks it arrived in (a DynamicBuffer of
// @platformatic/dynamic-buffer 0.3, still so in 0.4), and every read of a field locates its chunk
// by scanning the list from the start. A fetch response of n chunks (up to 64 KiB each) therefore
// costs O(n) per field and O(n²) per response. Reading 1M messages of 150 bytes
// (bench/kafka-read.ts, CPU seconds of the client) took 1.2-1.6 s at 1 MiB per fetch, 1.6 s at
// 4 MiB and 3.4 s at 16 MiB; with this workaround 0.65-1.0 s, 1.2 s and 1.3 s.
//
// The library hands each response to its parser through DynamicBuffer#subarray. Here subarray
// returns, when the range spans several chunks, a DynamicBuffer over one contiguous copy of it: one
// memcpy per response, then constant-time reads. The content is the same; only the parsers use
// these buffers, and they only read. Remove this file once the library indexes its chunks.
import { Reader } from "@platformatic/kafka";

interface ChunkedBuffer {
  buffers: Buffer[];
  length: number;
  subarray(start?: number, end?: number): ChunkedBuffer;
}

type ChunkedBufferClass = (new (
  buffers: Buffer | Buffer[],
) => ChunkedBuffer) & {
  prototype: ChunkedBuffer & { [installed]?: true };
};

const installed = Symbol.for("floe.kafka.contiguousSubarray");

/** Installs the workaround once per process; later calls do nothing. */
export function useContiguousResponseBuffers(): void {
  // The class the library itself uses, reached through its public Reader rather than by importing
  // its dependency: a second copy of the package would not be the one that parses responses.
  const DynamicBuffer = Reader.from(Buffer.alloc(0)).buffer.constructor as unknown as ChunkedBufferClass;
  const prototype = DynamicBuffer.prototype;
  if (prototype[installed]) return;
  const chunkedSubarray = prototype.subarray;
  prototype.subarray = function contiguousSubarray(this: ChunkedBuffer, start?: number, end?: number) {
    const view = chunkedSubarray.call(this, start, end);
    return view.buffers.length > 1 ? new DynamicBuffer(Buffer.concat(view.buffers, view.length)) : view;
  };
  prototype[installed] = true;
}
