// floe run --config job.yaml [--config other.yaml ...]: stays up and runs each job on its
// schedule (runtime/scheduler.ts), logging to stdout, recording every run in the run store, with
// optional Prometheus metrics and webhook alerts. SIGINT/SIGTERM stop it: the running syncs
// commit what they read, and the process exits within --stop-timeout.
import { resolve } from "node:path";
import { type Command, Option } from "commander";
import { ConfigError } from "../job/config-error.ts";
import { CONTINUOUS } from "../job/schedule.ts";
import type { Secret } from "../job/secret.ts";
import { type SyncChoices, syncChoices } from "../pipeline/sync-options.ts";
import type { Readiness } from "../runtime/health.ts";
import { LOG_LEVELS, type LogLevel } from "../runtime/logger.ts";
import type { ScheduledJob } from "../runtime/scheduler.ts";
import { runStorePath, stateRoot } from "../runtime/state-paths.ts";
import type { RunStore } from "../state/run-store.ts";
import { ExitCode } from "./exit-codes.ts";
import {
  collect,
  listenAddress,
  nonNegativeSeconds,
  positiveSeconds,
  RESUME_FROM_CHOICES,
  webhookUrl,
} from "./options.ts";

interface RunFlags extends SyncChoices {
  config: string[];
  stateDir?: string;
  logLevel: LogLevel;
  logFormat?: "pretty" | "json";
  metrics?: { host: string; port: number };
  webhook?: Secret;
  stopTimeout: number;
  retryDelay: number;
  wait?: number | true;
  continuous?: boolean;
}

export function registerRun(command: Command): void {
  command
    .requiredOption("-c, --config <file>", "job file (YAML) with a schedule:; repeat for more jobs", collect)
    .option(
      "--state-dir <dir>",
      "the state root: the run store (floe.db) and <dir>/<job> (default: .floe next to each job file)",
    )
    .addOption(
      new Option("--log-level <level>", "the lowest level logged to stdout").choices(LOG_LEVELS).default("info"),
    )
    .addOption(
      new Option(
        "--log-format <format>",
        "log lines as JSON or readable (default: readable on a terminal, else JSON)",
      ).choices(["pretty", "json"]),
    )
    .option(
      "--metrics <host:port>",
      "serve Prometheus metrics at http://<host:port>/metrics, and the probes /healthz and /readyz (e.g. 127.0.0.1:9464)",
      listenAddress,
    )
    .option(
      "--webhook <url>",
      "alert webhook (Slack-compatible) for the jobs whose file sets no alerts.webhook",
      webhookUrl,
    )
    .option(
      "--stop-timeout <seconds>",
      "after SIGINT/SIGTERM, how long a running sync may take to commit what it read before it is abandoned",
      positiveSeconds,
      30,
    )
    .option(
      "--retry-delay <seconds>",
      "first retry delay after a retryable failure; doubles per failure in a row, at most 300 s",
      positiveSeconds,
      5,
    )
    .option(
      "--wait [seconds]",
      "when another floe run schedules one of these jobs, wait for it to end (a standby) instead of exiting 5",
      nonNegativeSeconds,
    )
    .option("--accept-data-loss", "go on when messages expired unread (retention); the loss is reported")
    .addOption(
      new Option(
        "--resume-from <where>",
        "for a table that holds rows but no Kafka position floe can trust (snapshots expired before floe kept it as a table property, rolled back, written by another engine): resume from the group's offsets (else the log start), the log start, or the log end; recorded in the next commit",
      ).choices(RESUME_FROM_CHOICES),
    )
    .option(
      "--continuous",
      "run every job continuously, whatever its schedule: says: keep reading, commit by its commit: limits (commit.interval, 10 s by default)",
    )
    .addHelpText(
      "after",
      `
The job file's schedule: is "continuous", "every <n><unit>" (s, m, h, d: "every 5m", "every 2s") or a cron expression of
five fields, or six with seconds first ("*/10 * * * * *"). A run starts at each tick; a tick that finds the
job being synced (floe sync) is skipped. A continuous job keeps reading and commits by its commit: limits,
whichever comes first: commit.interval (10 s), commit.max_bytes (32 MiB) or commit.max_messages (250000). A failed run is retried at the next tick, and sooner, with backoff,
when its error is retryable (a connection, a commit conflict). Every run is recorded: floe history, floe logs.

Example:
  floe run --config orders.yaml --config customers.yaml --metrics 127.0.0.1:9464
  floe run --config clicks.yaml --continuous --metrics 127.0.0.1:9464
  floe run --config job.yaml --log-format json --webhook https://hooks.slack.com/services/T000/B000/XXXX

Exit codes: 0 stopped by SIGINT/SIGTERM, every run ended; 1 failed, or a run was abandoned after --stop-timeout;
2 bad job file or usage (a job without schedule: and no --continuous); 5 another floe run schedules one of these jobs`,
    )
    .action(async (flags: RunFlags) => {
      process.exitCode = await run(flags);
    });
}

async function run(flags: RunFlags): Promise<ExitCode> {
  const stores = new Map<string, RunStore>();
  try {
    const scheduled = await loadScheduled(flags, stores);
    const [{ createLogger, RunLogSink }, { Scheduler }, { ServiceMetrics, serveMetrics }] = await Promise.all([
      import("../runtime/logger.ts"),
      import("../runtime/scheduler.ts"),
      import("../runtime/metrics.ts"),
    ]);
    const listen = flags.metrics;
    const webhook = flags.webhook;
    const sink = new RunLogSink();
    const logger = await createLogger({
      level: flags.logLevel,
      ...(flags.logFormat ? { format: flags.logFormat } : {}),
      sink,
    });
    const metrics = listen ? new ServiceMetrics() : undefined;
    const service = new Scheduler(scheduled, {
      logger,
      sink,
      ...(metrics ? { metrics } : {}),
      ...(webhook ? { webhook } : {}),
      backoff: { baseMs: flags.retryDelay * 1000, maxMs: Math.max(300_000, flags.retryDelay * 1000) },
      sync: syncChoices(flags),
      waitMs: flags.wait === undefined ? 0 : flags.wait === true ? Number.POSITIVE_INFINITY : flags.wait * 1000,
    });

    let abandoned = false;
    const onSignal = (signal: string) => {
      if (service.stopping) {
        logger.warn(`${signal} again: abandoning the running syncs now`);
        abandon();
        return;
      }
      logger.info(`${signal}: stopping; running syncs commit what they read (at most ${flags.stopTimeout} s)`);
      service.stop();
      setTimeout(abandon, flags.stopTimeout * 1000).unref();
    };
    const abandon = () => {
      abandoned = true;
      const ids = service.abandonRunning();
      // Nothing of an unfinished commit is visible: the process may exit now, and the next run resumes.
      logger.error({ runs: ids }, `stopped without waiting for ${ids.length} running sync(s): marked abandoned`);
      for (const store of stores.values()) store.close();
      process.exit(ExitCode.FAILED);
    };
    process.on("SIGINT", () => onSignal("SIGINT"));
    process.on("SIGTERM", () => onSignal("SIGTERM"));

    // Ready once every job's lock is held and its loop started, until a signal stops the service.
    let started = false;
    const readiness = (): Readiness =>
      service.stopping
        ? { ready: false, reason: "stopping" }
        : started
          ? { ready: true }
          : { ready: false, reason: "starting" };
    const server = metrics && listen ? await serveMetrics(metrics, listen, readiness) : undefined;
    const closeServer = () =>
      new Promise<void>((done) => {
        if (!server) return done();
        server.close(() => done());
        server.closeAllConnections();
      });
    if (listen) logger.info(`metrics at http://${listen.host}:${listen.port}/metrics`);
    try {
      // Before the first tick: another floe run of a job is an error at once.
      await service.start();
      started = true;
      await service.done();
    } finally {
      await closeServer();
    }
    logger.info("floe run stopped");
    return abandoned ? ExitCode.FAILED : ExitCode.OK;
  } catch (error) {
    return (await import("./fail.ts")).fail("run", error, false);
  } finally {
    for (const store of stores.values()) store.close();
  }
}

async function loadScheduled(flags: RunFlags, stores: Map<string, RunStore>): Promise<ScheduledJob[]> {
  const { RunStore } = await import("../state/run-store.ts");
  const scheduled: ScheduledJob[] = [];
  const seen = new Map<string, string>();
  for (const file of flags.config) {
    const job = await (await import("../job/load-job.ts")).loadJob(file);
    const schedule = flags.continuous ? CONTINUOUS : job.schedule;
    if (schedule === undefined) {
      throw new ConfigError(file, [
        { path: ["schedule"], message: "floe run needs a schedule: (e.g. every 5m, or continuous) or --continuous" },
      ]);
    }
    const root = stateRoot(flags.stateDir, file);
    const key = `${root}\u0000${job.name}`;
    if (seen.has(key)) {
      throw new ConfigError(file, [
        {
          path: ["name"],
          message: `job ${job.name} is also given by ${seen.get(key)}, with the same state root ${root}`,
        },
      ]);
    }
    seen.set(key, file);
    let store = stores.get(root);
    if (!store) {
      store = RunStore.open(runStorePath(root));
      stores.set(root, store);
    }
    scheduled.push({ job: { ...job, schedule }, file: resolve(file), root, store });
  }
  return scheduled;
}
