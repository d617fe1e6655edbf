// floe as a user runs it: `floe sync` of a job file, a whole process from start to exit, into the
// REST catalog with the default settings. The sync exits once its last commit (the one that holds
// the topic's last message) and the group's offsets are in, so its wall time ends there.
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { catalogUri, loadTable, registerTable } from "../catalog.ts";
import { type Measured, measure } from "../measure.ts";

export interface FloeRun {
  /** The checkout whose bin/floe.js runs (this repository by default), as the `floe` command does. */
  floeRoot: string;
  bootstrap: string;
  topic: string;
  namespace: string;
  table: string;
  mode: "append" | "upsert";
  /** The run's folder: job file, state root, log. */
  dir: string;
  /** For a table registered over a pre-loaded one: the sync resumes from the log start. */
  resumeFromEarliest?: boolean;
  timeoutSeconds: number;
}

/** The job's name: names the state folder (<state>/<job>) and the consumer group. */
export function floeJobName(namespace: string): string {
  return `${namespace}_job`;
}

export async function runFloe(run: FloeRun): Promise<Measured> {
  mkdirSync(run.dir, { recursive: true });
  const jobFile = join(run.dir, "job.yaml");
  writeFileSync(
    jobFile,
    `name: ${floeJobName(run.namespace)}
source:
  kafka:
    bootstrap_servers: [${run.bootstrap}]
    topic_pattern: ^${run.topic.replaceAll(".", "\\.")}$
destination:
  iceberg:
    catalog: {type: rest, uri: ${catalogUri}}
    namespace: ${run.namespace}
streams:
  ${run.topic}: {mode: ${run.mode}, table: ${run.table}${run.mode === "upsert" ? ", dedup_keys: [id]" : ""}}
`,
  );
  return measure({
    command: process.execPath,
    args: [
      join(run.floeRoot, "bin", "floe.js"),
      "sync",
      "--config",
      jobFile,
      "--state-dir",
      join(run.dir, "state"),
      "--json",
      ...(run.resumeFromEarliest ? ["--resume-from", "earliest"] : []),
    ],
    cwd: run.dir,
    log: join(run.dir, "floe.log"),
    timeoutSeconds: run.timeoutSeconds,
  });
}

/** A pre-loaded table: made once by a floe upsert of the pre-load topic, then registered anew for each run. */
export interface Preloaded {
  metadataLocation: string;
  /** The key index the pre-load left (a cache of the table: without it the first sync would rebuild it). */
  keyIndexFile: string;
  seconds: number;
}

export async function preload(run: FloeRun): Promise<Preloaded> {
  const measured = await runFloe(run);
  const { "metadata-location": metadataLocation } = await loadTable(run.namespace, run.table);
  return {
    metadataLocation,
    keyIndexFile: join(run.dir, "state", floeJobName(run.namespace), `${run.namespace}.${run.table}.keyindex`),
    seconds: measured.wallSeconds,
  };
}

/** Registers the pre-loaded table as `namespace.table` and puts its key index where the run's sync finds it. */
export async function copyPreloaded(p: Preloaded, run: FloeRun): Promise<void> {
  await registerTable(run.namespace, run.table, p.metadataLocation);
  const stateDir = join(run.dir, "state", floeJobName(run.namespace));
  mkdirSync(stateDir, { recursive: true });
  copyFileSync(p.keyIndexFile, join(stateDir, `${run.namespace}.${run.table}.keyindex`));
}
