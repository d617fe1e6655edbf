// Prometheus metrics of `floe run` (prom-client), served at /metrics by `--metrics HOST:PORT`.
// Counters grow with each commit a run lands (so a run's progress shows before it ends), the
// freshness gauges are set by each commit, the lag gauges by each batch read (the offset read
// up to against the high watermark last listed) and by a measurement after each run, so that a
// continuous job's are live; the last-success gauge from the run store at start and after each
// run that landed.
import { createServer, type Server } from "node:http";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { SyncEvent } from "../pipeline/events.ts";
import type { RunRecord } from "../state/run-store.ts";
import { healthAnswer, type Readiness } from "./health.ts";
import type { JobLag } from "./job-status.ts";

export class ServiceMetrics {
  readonly registry = new Registry();
  readonly #messages = this.#counter("floe_messages_read_total", "Kafka messages read and committed, per table.", [
    "job",
    "table",
  ]);
  readonly #bytes = this.#counter("floe_bytes_read_total", "Bytes of Kafka messages read and committed, per table.", [
    "job",
    "table",
  ]);
  readonly #records = this.#counter("floe_records_added_total", "Rows added to each table.", ["job", "table"]);
  readonly #deleted = this.#counter(
    "floe_positions_deleted_total",
    "Rows retired by deletion vectors in each table (upserts and deletes).",
    ["job", "table"],
  );
  readonly #deadLetters = this.#counter("floe_dead_letters_total", "Messages written to dead-letter tables.", [
    "job",
    "table",
  ]);
  readonly #runs = this.#counter("floe_runs_total", "Runs ended, by outcome.", ["job", "outcome"]);
  readonly #errors = this.#counter("floe_errors_total", "Failed runs, by the error's kind.", ["job", "kind"]);
  readonly #lag = new Gauge({
    name: "floe_partition_lag",
    help: "Messages behind: the high watermark minus the offset the job has read up to, set by each batch read and measured after each run.",
    labelNames: ["job", "topic", "partition"],
    registers: [this.registry],
  });
  readonly #freshness = new Gauge({
    name: "floe_freshness_seconds",
    help: "From a message's produce timestamp to the commit that made it visible in its table: quantiles 0.5, 0.99 and 1 (the oldest) of the table's last commit.",
    labelNames: ["job", "table", "quantile"],
    registers: [this.registry],
  });
  readonly #lastSuccess = new Gauge({
    name: "floe_last_success_timestamp_seconds",
    help: "When the job's last successful run started (Unix time).",
    labelNames: ["job"],
    registers: [this.registry],
  });
  readonly #member = new Gauge({
    name: "floe_cluster_member",
    help: "1 for the consumer group member id and generation this process is in a job's group as (the job's cluster:); its series are replaced at every rebalance.",
    labelNames: ["job", "member_id", "generation"],
    registers: [this.registry],
  });
  /** The labels of each job's floe_cluster_member series, replaced at the next rebalance. */
  readonly #memberLabels = new Map<string, { job: string; member_id: string; generation: string }>();
  readonly #assigned = new Gauge({
    name: "floe_cluster_assigned_partitions",
    help: "Partitions the job's consumer group assigned to this process (the job's cluster:).",
    labelNames: ["job"],
    registers: [this.registry],
  });
  readonly #duration = new Histogram({
    name: "floe_run_duration_seconds",
    help: "How long runs took, by outcome.",
    labelNames: ["job", "outcome"],
    buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600],
    registers: [this.registry],
  });

  readonly #maintenanceRuns = this.#counter("floe_maintenance_runs_total", "Maintenance passes ended, by outcome.", [
    "job",
    "outcome",
  ]);
  readonly #compacted = this.#counter(
    "floe_maintenance_files_compacted_total",
    "Data files rewritten by compaction, per table.",
    ["job", "table"],
  );
  readonly #expired = this.#counter("floe_maintenance_snapshots_expired_total", "Snapshots expired, per table.", [
    "job",
    "table",
  ]);
  readonly #manifestsRewritten = this.#counter(
    "floe_maintenance_manifests_rewritten_total",
    "Manifests replaced by manifest rewrites, per table.",
    ["job", "table"],
  );
  readonly #orphans = this.#counter("floe_maintenance_orphan_files_removed_total", "Orphan files removed, per table.", [
    "job",
    "table",
  ]);
  readonly #bytesRemoved = this.#counter(
    "floe_maintenance_bytes_removed_total",
    "Bytes of files deleted by snapshot expiry and orphan removal, per table.",
    ["job", "table"],
  );
  readonly #tableFiles = new Gauge({
    name: "floe_table_data_files",
    help: "Live data files of the table after the last maintenance pass.",
    labelNames: ["job", "table"],
    registers: [this.registry],
  });
  readonly #tableSnapshots = new Gauge({
    name: "floe_table_snapshots",
    help: "Snapshots in the table's metadata after the last maintenance pass.",
    labelNames: ["job", "table"],
    registers: [this.registry],
  });
  readonly #lastMaintenance = new Gauge({
    name: "floe_last_maintenance_timestamp_seconds",
    help: "When the job's last maintenance pass started (Unix time).",
    labelNames: ["job"],
    registers: [this.registry],
  });

  /** A maintenance pass that ended. */
  observeMaintenance(run: RunRecord): void {
    this.#maintenanceRuns.inc({ job: run.job, outcome: run.outcome });
    this.#lastMaintenance.set({ job: run.job }, run.startedAt / 1000);
    for (const t of run.maintenance ?? []) {
      if (t.dryRun || t.error !== undefined) continue;
      const labels = { job: run.job, table: t.table };
      this.#compacted.inc(labels, t.compaction?.dataFiles ?? 0);
      this.#expired.inc(labels, t.snapshots?.expired ?? 0);
      this.#manifestsRewritten.inc(labels, t.manifests?.replaced ?? 0);
      this.#orphans.inc(labels, t.orphans?.files ?? 0);
      this.#bytesRemoved.inc(labels, (t.snapshots?.bytes ?? 0) + (t.orphans?.bytes ?? 0));
      if (t.after) {
        this.#tableFiles.set(labels, t.after.dataFiles);
        this.#tableSnapshots.set(labels, t.after.snapshots);
      }
    }
  }

  #counter(name: string, help: string, labelNames: string[]): Counter {
    return new Counter({ name, help, labelNames, registers: [this.registry] });
  }

  /** A run's event: the counters of each commit. */
  observeEvent(job: string, event: SyncEvent): void {
    if (event.type === "partition-progress") {
      const lag = event.stopOffset > event.nextOffset ? event.stopOffset - event.nextOffset : 0n;
      this.#lag.set({ job, topic: event.topic, partition: String(event.partition) }, Number(lag));
      return;
    }
    if (event.type !== "table-committed") return;
    const r = event.report;
    if (r.freshness) {
      for (const [quantile, ms] of [
        ["0.5", r.freshness.p50Ms],
        ["0.99", r.freshness.p99Ms],
        ["1", r.freshness.maxMs],
      ] as const) {
        this.#freshness.set({ job, table: r.table, quantile }, ms / 1000);
      }
    }
    const labels = { job, table: r.table };
    this.#messages.inc(labels, r.messagesRead);
    this.#bytes.inc(labels, r.bytesRead);
    this.#records.inc(labels, r.recordsAdded);
    this.#deleted.inc(labels, r.positionsDeleted);
    this.#deadLetters.inc(labels, r.deadLetters);
  }

  /** A run that ended. */
  observeRun(run: RunRecord): void {
    this.#runs.inc({ job: run.job, outcome: run.outcome });
    if (run.durationMs !== null) this.#duration.observe({ job: run.job, outcome: run.outcome }, run.durationMs / 1000);
    if (run.outcome === "failed" && run.error) this.#errors.inc({ job: run.job, kind: run.error.kind });
    if (run.outcome === "complete" || run.outcome === "partial") this.setLastSuccess(run.job, run.startedAt);
  }

  setLastSuccess(job: string, startedAt: number): void {
    this.#lastSuccess.set({ job }, startedAt / 1000);
  }

  /** The member this process is in the job's group as, after a (re)join. */
  setMembership(job: string, memberId: string, generation: number, partitions: number): void {
    const previous = this.#memberLabels.get(job);
    if (previous) this.#member.remove(previous);
    const labels = { job, member_id: memberId, generation: String(generation) };
    this.#memberLabels.set(job, labels);
    this.#member.set(labels, 1);
    this.#assigned.set({ job }, partitions);
  }

  setLag(job: string, lag: JobLag): void {
    for (const p of lag.partitions) {
      this.#lag.set({ job, topic: p.topic, partition: String(p.partition) }, Number(p.lag));
    }
  }
}

/**
 * Serves the metrics at http://HOST:PORT/metrics, and the probes of health.ts beside them
 * (/healthz, /readyz, answered by `readiness`); resolves once listening.
 */
export async function serveMetrics(
  metrics: ServiceMetrics,
  address: { host: string; port: number },
  readiness: () => Readiness,
): Promise<Server> {
  const server = createServer((request, response) => {
    const path = (request.url ?? "/").split("?")[0] ?? "/";
    const probe = request.method === "GET" ? healthAnswer(path, readiness) : undefined;
    if (probe) {
      response
        .writeHead(probe.status, { "content-type": "application/json", "cache-control": "no-store" })
        .end(`${JSON.stringify(probe.body)}\n`);
      return;
    }
    if (request.method !== "GET" || path !== "/metrics") {
      response.writeHead(404, { "content-type": "text/plain" }).end("floe serves /metrics, /healthz and /readyz\n");
      return;
    }
    metrics.registry.metrics().then(
      (text) => response.writeHead(200, { "content-type": metrics.registry.contentType }).end(text),
      (error: Error) => response.writeHead(500, { "content-type": "text/plain" }).end(`${error.message}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(address.port, address.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return server;
}
