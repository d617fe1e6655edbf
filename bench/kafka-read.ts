// Read throughput of src/kafka against the local development broker
// (`npm run services -- start kafka`).
//
//   node bench/kafka-read.ts [--messages 1000000] [--partitions 4] [--threads 1,2,4]
//                            [--max-bytes 1048576] [--runs 3] [--size 150]
//
// Produces `messages` JSON values of about `size` bytes (keys "0".."99999") to a topic named after
// the parameters, once: a topic that already holds exactly that many messages is reused. Then, for
// each thread count, reads the whole topic `runs` times, each in a fresh child process so that the
// peak RSS is that of the read alone, and prints messages/s, MB/s and peak RSS.
import { spawnSync } from "node:child_process";
import { parseArgs } from "node:util";
import { bootstrapServers } from "../dev/kafka.ts";
import { KafkaCluster } from "../src/kafka/connection.ts";
import { planOffsets } from "../src/kafka/plan.ts";
import { readPartitions } from "../src/kafka/read.ts";
import { ensureBenchTopic } from "./bench-topic.ts";

const { values } = parseArgs({
  options: {
    messages: { type: "string", default: "1000000" },
    partitions: { type: "string", default: "4" },
    threads: { type: "string", default: "1,2,4" },
    "max-bytes": { type: "string", default: String(1024 * 1024) },
    runs: { type: "string", default: "3" },
    size: { type: "string", default: "150" },
    bootstrap: { type: "string", default: bootstrapServers },
    // Internal: run one measured read and print its figures as JSON.
    "read-once": { type: "string" },
  },
});

const bootstrap = values.bootstrap;
const config = { bootstrapServers: [bootstrap], clientId: "floe-bench", security: { protocol: "PLAINTEXT" as const } };
const messages = Number(values.messages);
const partitions = Number(values.partitions);
const size = Number(values.size);
const topic = `floe-bench-read-${messages}m-${partitions}p-${size}b`;

interface Figures {
  threads: number;
  messages: number;
  bytes: number;
  seconds: number;
  /** CPU time of the reading process: steadier than wall time on a shared machine. */
  cpuSeconds: number;
  peakRssMb: number;
}

if (values["read-once"] !== undefined) {
  console.log(JSON.stringify(await readOnce(Number(values["read-once"]))));
} else {
  await ensureTopic();
  console.log(`topic ${topic}: ${messages} messages of ~${size} bytes in ${partitions} partitions`);
  console.log("threads  run  messages/s      MB/s  CPU s  peak RSS (MB)");
  for (const threads of values.threads.split(",").map(Number)) {
    for (let run = 1; run <= Number(values.runs); run++) {
      const child = spawnSync(process.execPath, [...process.execArgv, import.meta.filename, ...argv(threads)], {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "inherit"],
      });
      if (child.status !== 0) throw new Error(`read run failed with status ${child.status}`);
      const f = JSON.parse(child.stdout.trim().split("\n").at(-1)!) as Figures;
      if (f.messages !== messages) throw new Error(`read ${f.messages} messages, expected ${messages}`);
      const rate = f.messages / f.seconds;
      const mbs = f.bytes / f.seconds / 1e6;
      console.log(
        `${String(threads).padStart(7)}  ${String(run).padStart(3)}  ${Math.round(rate).toLocaleString("en").padStart(10)}  ${mbs.toFixed(1).padStart(8)}  ${f.cpuSeconds.toFixed(2).padStart(5)}  ${f.peakRssMb.toFixed(0).padStart(13)}`,
      );
    }
  }
}

function argv(threads: number): string[] {
  const passed = ["messages", "partitions", "size", "max-bytes", "bootstrap"] as const;
  return [...passed.flatMap((name) => [`--${name}`, String(values[name])]), "--read-once", String(threads)];
}

async function readOnce(threads: number): Promise<Figures> {
  const cluster = await KafkaCluster.connect(config);
  try {
    const plan = await planOffsets(cluster, {
      topics: [{ topic, partitions }],
      consumerGroup: `floe-bench-${process.pid}`,
    });
    let count = 0;
    let checksum = 0;
    const cpuBefore = process.cpuUsage();
    const result = await readPartitions(
      cluster,
      plan.partitions,
      (batch) => {
        count += batch.messages.length;
        // Touch every message, as a decoder would, so that nothing is optimised away.
        for (const m of batch.messages) checksum += m.value === null ? 0 : m.value.length;
      },
      { maxThreads: threads, maxBytesPerFetch: Number(values["max-bytes"]) },
    );
    const cpu = process.cpuUsage(cpuBefore);
    if (result.status !== "complete") throw result.error ?? new Error(`read ${result.status}`);
    if (checksum !== result.bytes - keyBytes(result.messages)) throw new Error("value bytes do not add up");
    return {
      threads,
      messages: count,
      bytes: result.bytes,
      seconds: result.durationMs / 1000,
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      peakRssMb: process.resourceUsage().maxRSS / 1024,
    };
  } finally {
    await cluster.close();
  }
}

function ensureTopic(): Promise<void> {
  return ensureBenchTopic({
    bootstrap,
    topic,
    partitions,
    messages,
    message: (n) => ({ partition: n % partitions, key: Buffer.from(String(n % 100_000)), value: value(n) }),
  });
}

/** A customer-like JSON document padded to `size` bytes. */
function value(n: number): Buffer {
  const document = { id: n, name: `customer ${n}`, email: `c${n}@example.com`, amount: (n % 10_000) / 100, note: "" };
  const bare = JSON.stringify(document).length;
  document.note = "x".repeat(Math.max(0, size - bare));
  return Buffer.from(JSON.stringify(document));
}

/** Bytes of the keys "0".."99999" over the first `count` messages (message n has key n % 100000). */
function keyBytes(count: number): number {
  let bytes = 0;
  for (let n = 0; n < count; n++) bytes += String(n % 100_000).length;
  return bytes;
}
