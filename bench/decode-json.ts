// The decode stage alone: JSON decode -> schema inference -> column values (+ _kafka_key, and
// _floe_id with --upsert), on generated messages shaped like the seed walkthrough's orders.
//
//   node bench/decode-json.ts [messages=1000000] [--upsert] [--rounds=3]
//
// Messages go through in chunks, as the sync does: observe a chunk, settle, convert it into
// typed arrays (numbers) and string arrays, the way the column builders hold them. Prints the
// best round (the machine may be shared): messages/s per step and overall.
import { type ColumnConverter, columnConverter } from "../src/decode/column-value.ts";
import { SchemaInference } from "../src/decode/infer-schema.ts";
import { type DecodedRecord, decodeJsonMessage } from "../src/decode/json-message.ts";
import { isSystemColumn, kafkaKeyText } from "../src/decode/system-columns.ts";
import type { NestedField } from "../src/iceberg/spec/types.ts";
import { formatKeyHash, hashKey } from "../src/upsert/key-hash.ts";

const total = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 1_000_000);
const upsert = process.argv.includes("--upsert");
const rounds = Number(/^--rounds=(\d+)$/.exec(process.argv.find((a) => a.startsWith("--rounds=")) ?? "")?.[1] ?? 3);
const CHUNK = 10_000;

// One buffer for all values and one for all keys, handed out as views, as a Kafka client hands
// out slices of its fetch responses.
const PRODUCTS = ["Headphones", "Monitor", "Phone case", "Desk lamp", "Webcam", "Laptop", "Backpack", "Charger"];
const STATUSES = ["placed", "shipped", "delivered"];
const valueText: string[] = [];
const keyText: string[] = [];
for (let i = 0; i < total; i++) {
  const at = new Date(Date.UTC(2026, 9, 29, 15, 22, 4) + i * 1000).toISOString().replace(".000Z", "+00:00");
  const amount = (((i * 37) % 100_000) / 100 + 0.01).toFixed(2);
  valueText.push(
    `{"id":${i + 1},"customer_id":${(i * 7) % 1000},"product":"${PRODUCTS[i % PRODUCTS.length]}",` +
      `"amount":${amount},"status":"${STATUSES[i % 3]}","created_at":"${at}","updated_at":"${at}"}`,
  );
  keyText.push(String(i + 1));
}
const encoder = new TextEncoder();
const valueBytes = encoder.encode(valueText.join(""));
const keyBytes = encoder.encode(keyText.join(""));
const valueEnds = new Int32Array(total + 1);
const keyEnds = new Int32Array(total + 1);
for (let i = 0; i < total; i++) {
  valueEnds[i + 1] = valueEnds[i]! + valueText[i]!.length; // ASCII: one byte per character
  keyEnds[i + 1] = keyEnds[i]! + keyText[i]!.length;
}
valueText.length = 0;
keyText.length = 0;

/** Where converted values go: a Float64Array for numbers, an array for strings (as the builders keep them). */
interface Sink {
  readonly name: string;
  readonly convert: ColumnConverter;
  readonly numbers: Float64Array | undefined;
  readonly strings: (string | null)[] | undefined;
}

function sinkFor(field: NestedField): Sink {
  const numeric = field.type !== "string";
  return {
    name: field.name,
    convert: columnConverter(field.type),
    numbers: numeric ? new Float64Array(CHUNK) : undefined,
    strings: numeric ? undefined : new Array<string | null>(CHUNK).fill(null),
  };
}

interface Timings {
  decode: number;
  infer: number;
  convert: number;
  system: number;
  total: number;
  /** CPU time of the process (all threads, GC's included): steadier than wall time on a shared machine. */
  cpu: number;
}

function round(): Timings {
  const inference = new SchemaInference();
  const records: DecodedRecord[] = new Array(CHUNK);
  const keyColumn: (string | null)[] = new Array(CHUNK).fill(null);
  const idColumn: string[] = new Array(CHUNK).fill("");
  const keyValues: (number | bigint | string | boolean | null)[] = [null];
  let sinks: Sink[] = [];
  const t: Timings = { decode: 0, infer: 0, convert: 0, system: 0, total: 0, cpu: 0 };
  const cpuStart = process.cpuUsage();
  const start = performance.now();
  for (let first = 0; first < total; first += CHUNK) {
    const count = Math.min(total, first + CHUNK) - first;
    let t0 = performance.now();
    for (let i = 0; i < count; i++) {
      const m = first + i;
      const decoded = decodeJsonMessage(valueBytes.subarray(valueEnds[m], valueEnds[m + 1]));
      if (decoded.kind !== "record") throw new Error(`message ${m}: ${decoded.kind}`);
      records[i] = decoded;
    }
    let t1 = performance.now();
    t.decode += t1 - t0;

    t0 = t1;
    for (let i = 0; i < count; i++) {
      if (inference.observe(records[i]!) !== undefined) throw new Error(`message ${first + i} does not fit`);
    }
    inference.settle();
    t1 = performance.now();
    t.infer += t1 - t0;

    t0 = t1;
    if (sinks.length === 0) sinks = inference.schema.fields.filter((f) => !isSystemColumn(f.name)).map(sinkFor);
    for (const { name, convert, numbers, strings } of sinks) {
      for (let i = 0; i < count; i++) {
        const value = records[i]!.record[name];
        const converted = value === null || value === undefined ? null : convert(value);
        if (numbers) numbers[i] = Number(converted);
        else strings![i] = converted as string | null;
      }
    }
    t1 = performance.now();
    t.convert += t1 - t0;

    t0 = t1;
    const ids = sinks[0]!.numbers!;
    for (let i = 0; i < count; i++) {
      const m = first + i;
      keyColumn[i] = kafkaKeyText(keyBytes.subarray(keyEnds[m], keyEnds[m + 1]));
      if (upsert) {
        keyValues[0] = ids[i]!;
        idColumn[i] = formatKeyHash(hashKey(keyValues));
      }
    }
    t.system += performance.now() - t0;
  }
  t.total = performance.now() - start;
  const cpu = process.cpuUsage(cpuStart);
  t.cpu = (cpu.user + cpu.system) / 1000;
  return t;
}

let best: Timings | undefined;
for (let r = 0; r < rounds; r++) {
  const timings = round();
  if (best === undefined || timings.total < best.total) best = timings;
}
const bytes = valueBytes.length;
const rate = (ms: number) =>
  `${((total / ms) * 1000).toFixed(0).padStart(9)} msg/s ${((ms * 1e6) / total).toFixed(0).padStart(6)} ns/msg`;
console.log(
  `${total} messages of ${(bytes / total).toFixed(0)} bytes, ${upsert ? "upsert (with _floe_id)" : "append"}, best of ${rounds}`,
);
console.log(`  decode   UTF-8 check + JSON.parse        ${rate(best!.decode)}`);
console.log(`  infer    SchemaInference.observe         ${rate(best!.infer)}`);
console.log(`  convert  7 columns                       ${rate(best!.convert)}`);
console.log(`  system   _kafka_key${upsert ? " + _floe_id" : "            "}           ${rate(best!.system)}`);
console.log(
  `  total                                    ${rate(best!.total)} ${((bytes / best!.total) * 1e-3).toFixed(1)} MB/s`,
);
console.log(`  total, CPU time                          ${rate(best!.cpu)}`);
