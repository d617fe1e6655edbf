// floe status --config job.yaml [--config ...]: per job the last run, the last successful one,
// the next run, the lag per partition now, the retention warning, and for a `cluster:` job the
// members of its group with their partitions and lag, and the group's last rebalance: when, the
// generation, and what each member gained and gave up (runtime/job-status.ts).
// Without --config: the jobs of the state root's run store, from the store alone (no lag).
import type { Command } from "commander";
import type { Job } from "../job/job.ts";
import { stringifyJson } from "../lib/int64-json.ts";
import type { JobStatus } from "../runtime/job-status.ts";
import { runStorePath, stateRoot } from "../runtime/state-paths.ts";
import { RunStore } from "../state/run-store.ts";
import { ExitCode } from "./exit-codes.ts";
import { collect } from "./options.ts";
import { duration, time } from "./run-format.ts";
import { textTable } from "./text-table.ts";

interface StatusFlags {
  config?: string[];
  stateDir?: string;
  json?: boolean;
}

export function registerStatus(command: Command): void {
  command
    .option("-c, --config <file>", "job file (YAML); repeat for more jobs", collect)
    .option("--state-dir <dir>", "the state root (default: .floe next to each job file, or in this folder)")
    .option("--json", "print the statuses as JSON")
    .addHelpText(
      "after",
      `
The lag of a partition is its high watermark now minus the offset the table has committed (from its snapshot
summary; where the table has none, where the next sync would start). The warning appears when the time since
the last successful run passes 80% of the shortest retention.ms of the job's topics: past it, messages expire unread.

Example:
  floe status --config orders.yaml --config customers.yaml
  floe status --config job.yaml --json | jq '.[0].lag.partitions'

Exit codes: 0, 2 bad job file or usage`,
    )
    .action(async (flags: StatusFlags) => {
      process.exitCode = await status(flags);
    });
}

async function status(flags: StatusFlags): Promise<ExitCode> {
  const stores = new Map<string, RunStore>();
  const storeOf = (root: string) => {
    let store = stores.get(root);
    if (!store) {
      store = RunStore.open(runStorePath(root));
      stores.set(root, store);
    }
    return store;
  };
  try {
    const { jobStatus, measureLag } = await import("../runtime/job-status.ts");
    const statuses: JobStatus[] = [];
    if (flags.config === undefined) {
      const store = storeOf(stateRoot(flags.stateDir));
      for (const name of store.jobs()) statuses.push(storeOnlyStatus(name, store));
    }
    for (const file of flags.config ?? []) {
      // The runs part needs no secret; the lag part connects, and is skipped without them.
      const unset: string[] = [];
      const job = await (await import("../job/load-job.ts")).loadJob(file, {
        secretsOptional: { missing: (_path, name) => unset.push(name) },
      });
      const store = storeOf(stateRoot(flags.stateDir, file));
      const { openConnections } = await import("../pipeline/connect.ts");
      let lag: Parameters<typeof jobStatus>[3];
      if (unset.length > 0) {
        lag = { error: `not measured: ${[...new Set(unset)].join(", ")} not set (the job's secrets)` };
      } else {
        try {
          const connections = await openConnections(job);
          try {
            lag = { lag: await measureLag(job, connections, { members: job.cluster !== undefined }) };
          } finally {
            await connections.close();
          }
        } catch (error) {
          lag = { error: (error as Error).message };
        }
      }
      statuses.push(jobStatus(job, store, Date.now(), lag));
    }
    process.stdout.write(
      `${flags.json ? stringifyJson(statuses, { bigints: "strings", indent: 2 }) : statuses.map(statusToText).join("\n\n")}\n`,
    );
    return ExitCode.OK;
  } catch (error) {
    return (await import("./fail.ts")).fail("status", error, flags.json === true);
  } finally {
    for (const store of stores.values()) store.close();
  }
}

function storeOnlyStatus(name: string, store: RunStore): JobStatus {
  return {
    job: name,
    schedule: null,
    lastRun: store.lastRun(name) ?? null,
    lastSuccess: store.lastSuccess(name) ?? null,
    nextRun: null,
    lag: null,
    lagError: "no job file given (--config): lag and next run unknown",
    retentionWarning: null,
  } satisfies JobStatus & { job: Job["name"] };
}

/** orders[0,1,2] clicks[3]: partitions by topic. */
function partitionList(partitions: readonly { topic: string; partition: number }[]): string {
  const byTopic = new Map<string, number[]>();
  for (const p of partitions) byTopic.set(p.topic, [...(byTopic.get(p.topic) ?? []), p.partition]);
  return byTopic.size === 0 ? "none" : [...byTopic].map(([t, ps]) => `${t}[${ps.join(",")}]`).join(" ");
}

/** "gained t[3] gave up t[4]", or "kept" when nothing moved for the member. */
function movedText(moved: {
  gained: { topic: string; partition: number }[];
  gaveUp: { topic: string; partition: number }[];
}) {
  const parts = [
    moved.gained.length > 0 ? `gained ${partitionList(moved.gained)}` : "",
    moved.gaveUp.length > 0 ? `gave up ${partitionList(moved.gaveUp)}` : "",
  ].filter(Boolean);
  return parts.length > 0 ? parts.join(", ") : "kept its partitions";
}

function statusToText(s: JobStatus): string {
  const lines = [`job ${s.job}${s.schedule ? ` (schedule: ${s.schedule})` : ""}`];
  const last = s.lastRun;
  lines.push(
    last
      ? `  last run      ${time(last.startedAt)}  ${last.outcome}  ${duration(last.durationMs)}  ${last.messages} messages  (${last.runId})`
      : "  last run      none",
  );
  if (last?.error) lines.push(`                ${last.error.kind}: ${last.error.message}`);
  lines.push(`  last success  ${s.lastSuccess ? time(s.lastSuccess.startedAt) : "none"}`);
  lines.push(`  next run      ${s.nextRun === null ? "-" : time(s.nextRun)}`);
  if (s.lag) {
    const total = s.lag.partitions.reduce((sum, p) => sum + p.lag, 0n);
    lines.push(`  lag           ${total} messages`);
    const table = textTable(
      ["topic", "partition", "high watermark", "table offset", "lag"],
      s.lag.partitions.map((p) => [
        p.topic,
        String(p.partition),
        String(p.highWatermark),
        p.tableOffset === null ? "-" : String(p.tableOffset),
        String(p.lag),
      ]),
      { right: [1, 2, 3, 4], indent: "    " },
    );
    lines.push(...table);
  } else if (s.lagError) {
    lines.push(`  lag           unknown: ${s.lagError}`);
  }
  if (s.lag?.group) {
    const { group, state, protocol, members, lastRebalance } = s.lag.group;
    lines.push(
      protocol === "consumer"
        ? `  members       not listed (group ${group}, ${state}, of Kafka's consumer protocol: not floe's members)`
        : `  members       ${members.length} (group ${group}, ${state})`,
    );
    if (members.length > 0) {
      lines.push(
        ...textTable(
          ["member", "host", "partitions", "lag", "last rebalance"],
          members.map((m) => [
            m.clientId,
            m.host,
            partitionList(m.partitions),
            String(m.lag),
            m.moved ? movedText(m.moved) : "-",
          ]),
          { right: [3], indent: "    " },
        ),
      );
    }
    lines.push(
      `  last rebalance ${lastRebalance ? `${time(lastRebalance.at)}  generation ${lastRebalance.generationId}` : "unknown (no floe member noted one)"}`,
    );
  }
  if (s.retentionWarning) lines.push(`  WARNING       ${s.retentionWarning}`);
  return lines.join("\n");
}
