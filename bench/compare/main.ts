// npm run bench: floe against the Apache Iceberg Kafka Connect sink and Spark Structured Streaming,
// side by side on this machine, each landing the same topic into a fresh table of the REST catalog
// fixture (`npm run services -- start kafka iceberg-rest`).
//
//   npm run bench -- [--messages 1000000] [--rounds 2] [--preload-keys 10000000]
//                    [--systems floe,connect,spark] [--size 150] [--partitions 4] [--floe-root DIR]
//
// It produces the topic once (workload.ts; a topic that already holds it is reused), installs
// what the other systems need from Maven Central (dev/services/bench-systems.ts), pre-loads a
// table with --preload-keys keys through a floe upsert (0: no pre-loaded run), then runs every
// system and mode once per round, interleaved, each into its own table:
//   floe append, floe upsert, floe upsert into the pre-loaded table,
//   the Connect sink appending, and asked to upsert (it cannot: its table shows it),
//   Spark appending, and Spark MERGE INTO on id per micro-batch (deletion vectors).
// Each run is measured as a process tree (measure.ts) to the commit that holds the last
// message, and its table is checked by DuckDB, PyIceberg and Spark (verify.ts) before the figure
// counts; a wrong table's figure is refused with the reason. Results go to
// bench/results/compare.{md,json,png} (report.ts), with the machine and every version.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { bootstrapServers } from "../../dev/kafka.ts";
import { type Readers, startReaders } from "../../dev/readers.ts";
import { installConnect, installSparkKafka } from "../../dev/services/bench-systems.ts";
import { root } from "../../dev/services/lib.ts";
import { createNamespace, currentSummary } from "./catalog.ts";
import type { Measured } from "./measure.ts";
import { type RunResult, writeReport } from "./report.ts";
import { runConnect } from "./systems/connect.ts";
import { copyPreloaded, type Preloaded, preload, runFloe } from "./systems/floe.ts";
import { runSpark } from "./systems/spark.ts";
import { verify } from "./verify.ts";
import { ensurePreloadTopic, ensureTopic, expected, type Mode, preloadTopic, workload } from "./workload.ts";

const { values } = parseArgs({
  options: {
    messages: { type: "string", default: "1000000" },
    partitions: { type: "string", default: "4" },
    size: { type: "string", default: "150" },
    rounds: { type: "string", default: "2" },
    "preload-keys": { type: "string", default: "10000000" },
    systems: { type: "string", default: "floe,connect,spark" },
    "floe-root": { type: "string", default: root },
    bootstrap: { type: "string", default: bootstrapServers },
    out: { type: "string", default: join(root, "bench", "results") },
    "timeout-seconds": { type: "string", default: "1800" },
  },
});

const messages = positive("messages");
const rounds = positive("rounds");
const preloadKeys = Number(values["preload-keys"]);
const systems = values.systems.split(",");
const bootstrap = values.bootstrap;
const timeoutSeconds = positive("timeout-seconds");
for (const s of systems) if (!["floe", "connect", "spark"].includes(s)) throw new Error(`--systems: unknown ${s}`);
if (!Number.isInteger(preloadKeys) || preloadKeys < 0) throw new Error("--preload-keys: a whole number, 0 for none");

const w = workload(messages, positive("partitions"), positive("size"));
const tag = `${process.pid}_${Date.now().toString(36)}`;
const work = mkdtempSync(join(tmpdir(), "floe-bench-compare-"));
const loadBefore = loadavg();
const started = new Date();
const installs: Record<string, number> = {};

console.log(
  `topic ${w.topic}: ${w.messages} messages (${w.keys} ids) of ~${w.size} bytes on ${w.partitions} partitions`,
);
await ensureTopic(bootstrap, w);
const connect = systems.includes("connect") ? timed("connect", installConnect) : undefined;
const sparkKafka = systems.includes("spark") ? timed("spark-kafka", installSparkKafka) : undefined;

let preloaded: Preloaded | undefined;
let preloadSeconds: { produce: number; sync: number } | undefined;
if (systems.includes("floe") && preloadKeys > 0) {
  const t0 = performance.now();
  await ensurePreloadTopic(bootstrap, w, preloadKeys);
  const produced = (performance.now() - t0) / 1000;
  const namespace = `bench_preload_${tag}`;
  await createNamespace(namespace);
  console.log(`pre-loading ${preloadKeys} keys with a floe upsert...`);
  preloaded = await preload({
    floeRoot: values["floe-root"],
    bootstrap,
    topic: preloadTopic(w, preloadKeys),
    namespace,
    table: "orders",
    mode: "upsert",
    dir: join(work, "preload"),
    timeoutSeconds,
  });
  preloadSeconds = { produce: produced, sync: preloaded.seconds };
  console.log(
    `pre-load: topic ready in ${produced.toFixed(0)} s, floe upsert of it in ${preloaded.seconds.toFixed(0)} s`,
  );
}

interface Plan {
  system: string;
  mode: Mode;
  run(namespace: string, dir: string): Promise<Measured>;
}

const plans: Plan[] = [];
if (systems.includes("floe")) {
  const floe = (mode: "append" | "upsert", namespace: string, dir: string, resume = false) =>
    runFloe({
      floeRoot: values["floe-root"],
      bootstrap,
      topic: w.topic,
      namespace,
      table: "orders",
      mode,
      dir,
      timeoutSeconds,
      resumeFromEarliest: resume,
    });
  plans.push({ system: "floe", mode: "append", run: (ns, dir) => floe("append", ns, dir) });
  plans.push({ system: "floe", mode: "upsert", run: (ns, dir) => floe("upsert", ns, dir) });
  if (preloaded !== undefined) {
    const p = preloaded;
    plans.push({
      system: "floe",
      mode: "upsert-preloaded",
      async run(ns, dir) {
        await copyPreloaded(p, {
          floeRoot: values["floe-root"],
          bootstrap,
          topic: w.topic,
          namespace: ns,
          table: "orders",
          mode: "upsert",
          dir,
          timeoutSeconds,
        });
        return floe("upsert", ns, dir, true);
      },
    });
  }
}
if (connect !== undefined) {
  for (const mode of ["append", "upsert"] as const) {
    plans.push({
      system: "connect",
      mode,
      run: (ns, dir) =>
        runConnect({
          install: connect,
          bootstrap,
          topic: w.topic,
          messages,
          namespace: ns,
          table: "orders",
          mode,
          dir,
          timeoutSeconds,
        }),
    });
  }
}
if (sparkKafka !== undefined) {
  for (const mode of ["append", "upsert"] as const) {
    plans.push({
      system: "spark",
      mode,
      run: (ns, dir) =>
        runSpark({
          install: sparkKafka,
          bootstrap,
          topic: w.topic,
          namespace: ns,
          table: "orders",
          mode: mode === "append" ? "append" : "merge",
          dir,
          timeoutSeconds,
        }),
    });
  }
}

let readers: Readers | undefined;
const results: RunResult[] = [];
try {
  for (let round = 1; round <= rounds; round++) {
    for (const plan of plans) {
      const namespace = `bench_${plan.system}_${plan.mode.replaceAll("-", "_")}_r${round}_${tag}`;
      const dir = join(work, namespace);
      mkdirSync(dir, { recursive: true });
      await createNamespace(namespace);
      const label = `round ${round} ${plan.system} ${plan.mode}`;
      let measured: Measured;
      try {
        measured = await plan.run(namespace, dir);
      } catch (error) {
        console.log(`${label}: failed: ${(error as Error).message}`);
        results.push({
          system: plan.system,
          mode: plan.mode,
          round,
          ok: false,
          reasons: [`the run failed: ${(error as Error).message}`],
        });
        continue;
      }
      readers ??= await startReaders({ sparkDriverMemory: "3g" });
      const verdict = await verify(readers, namespace, "orders", expected(w, plan.mode, preloadKeys));
      const summary = await currentSummary(namespace, "orders").catch(() => undefined);
      const tableMb =
        summary?.["total-files-size"] === undefined ? undefined : Number(summary["total-files-size"]) / 1e6;
      results.push({
        system: plan.system,
        mode: plan.mode,
        round,
        ...measured,
        ...(tableMb === undefined ? {} : { tableMb }),
        ...verdict,
      });
      console.log(
        `${label}: ${measured.wallSeconds.toFixed(1)} s, ${Math.round(messages / measured.wallSeconds).toLocaleString("en")} msg/s, ` +
          `CPU ${measured.cpuSeconds.toFixed(1)} s, peak RSS ${measured.peakRssMb.toFixed(0)} MB` +
          (verdict.ok ? ", table checked" : `; REFUSED: ${verdict.reasons.join("; ")}`),
      );
    }
  }
} finally {
  await readers?.close();
}

await writeReport(values.out, {
  started: started.toISOString(),
  workload: w,
  rounds,
  preloadKeys: preloaded === undefined ? 0 : preloadKeys,
  preloadSeconds,
  installSeconds: installs,
  loadBefore,
  loadAfter: loadavg(),
  floeRoot: values["floe-root"],
  connect,
  sparkKafka,
  results,
});
rmSync(work, { recursive: true, force: true });

function timed<T>(what: string, install: () => T): T {
  const t0 = performance.now();
  const result = install();
  installs[what] = (performance.now() - t0) / 1000;
  return result;
}

function positive(name: "messages" | "rounds" | "partitions" | "size" | "timeout-seconds"): number {
  const n = Number(values[name]);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name}: a positive whole number, not ${values[name]}`);
  return n;
}
