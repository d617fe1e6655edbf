// The container framing, checked against avsc's own stream encoder and decoder, an independent
// implementation of the Avro spec.
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { describe, test } from "node:test";
import avsc from "avsc";
import { readAvroFile, writeAvroFile } from "#src/iceberg/avro/container.ts";

const schema = {
  type: "record",
  name: "r",
  fields: [
    { name: "id", type: "long", "field-id": 1 },
    { name: "name", type: ["null", "string"], default: null, "field-id": 2 },
  ],
};

async function collect(stream: NodeJS.ReadableStream): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const chunk of stream) out.push(chunk);
  return out;
}

describe("Avro object container file", () => {
  test("a deflate file of ours decodes with avsc's BlockDecoder, header and records alike", async () => {
    const records = [
      { id: 1n, name: "a" },
      { id: -5n, name: null },
    ];
    const bytes = writeAvroFile({ schema, metadata: new Map([["format-version", "3"]]), records });
    // avsc's own long type: exact for these small values.
    const decoder = new avsc.streams.BlockDecoder();
    let header: Record<string, Buffer> = {};
    decoder.on("metadata", (_type: unknown, codec: string, h: { meta: Record<string, Buffer> }) => {
      header = { ...h.meta, codec: Buffer.from(codec) };
    });
    decoder.end(Buffer.from(bytes));
    const decoded = await collect(decoder);
    assert.deepEqual(
      decoded.map((r) => ({ ...(r as object) })),
      [
        { id: 1, name: "a" },
        { id: -5, name: null },
      ],
    );
    assert.equal(String(header.codec), "deflate");
    assert.equal(String(header["format-version"]), "3");
    assert.deepEqual(JSON.parse(String(header["avro.schema"])), schema, "the raw schema, field ids and all");
  });

  test("reads avsc's null-codec files of several blocks, int64 as bigint", async () => {
    const type = avsc.Type.forSchema(schema as avsc.Schema);
    const encoder = new avsc.streams.BlockEncoder(type, { codec: "null", blockSize: 16 });
    const records = Array.from({ length: 20 }, (_, i) => ({ id: i * 1000, name: i % 2 ? null : `n${i}` }));
    for (const r of records) encoder.write(r);
    encoder.end();
    const bytes = Buffer.concat((await collect(encoder)) as Buffer[]);
    const file = readAvroFile(bytes);
    assert.deepEqual(
      file.records.map((r) => ({ ...(r as object) })),
      records.map((r) => ({ ...r, id: BigInt(r.id) })),
    );
  });

  test("an empty file has a header and no block; a broken sync marker is refused", () => {
    const empty = writeAvroFile({ schema, metadata: new Map(), records: [] });
    assert.deepEqual(readAvroFile(empty).records, []);
    const bytes = writeAvroFile({ schema, metadata: new Map(), records: [{ id: 2n ** 60n, name: "x" }] });
    assert.deepEqual({ ...(readAvroFile(bytes).records[0] as object) }, { id: 2n ** 60n, name: "x" });
    const broken = bytes.slice();
    broken[broken.length - 1]! ^= 0xff;
    assert.throws(() => readAvroFile(broken), /sync marker/);
  });
});
