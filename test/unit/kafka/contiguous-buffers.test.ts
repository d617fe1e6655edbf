// The workaround for the library's chunk scanning keeps every byte where it was.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Reader } from "@platformatic/kafka";
import { useContiguousResponseBuffers } from "#src/kafka/contiguous-buffers.ts";

test("a subarray over several chunks becomes one contiguous copy with the same bytes", () => {
  useContiguousResponseBuffers();
  useContiguousResponseBuffers(); // a second install changes nothing
  const chunked = Reader.from(Buffer.from([0, 1, 2])).buffer;
  chunked.append(Buffer.from([3, 4, 5])).append(Buffer.from([6, 7, 8, 9]));

  const across = chunked.subarray(2, 8);
  assert.equal(across.buffers.length, 1);
  assert.deepEqual([...across.buffers[0]!], [2, 3, 4, 5, 6, 7]);
  assert.equal(across.length, 6);

  // Within one chunk it stays a view, as before.
  const inside = chunked.subarray(3, 5);
  assert.equal(inside.buffers.length, 1);
  assert.equal(inside.buffers[0]!.buffer, chunked.buffers[1]!.buffer);

  // The reader reads the same values through it.
  const reader = new Reader(chunked.subarray(0, 10));
  assert.equal(reader.readInt8(), 0);
  assert.equal(reader.readInt32(), 0x01020304);
});
