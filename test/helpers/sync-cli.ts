// `floe sync --json` of a job file in a child process, as a user runs it, and the report's
// figures of one topic's table. A run killed by a fault point resolves with its signal rather
// than rejecting, so that a test can assert the kill and run again.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";

const repo = join(import.meta.dirname, "..", "..");

export interface SyncRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `floe sync --config <jobPath> --state-dir <stateDir> --json` with `env` on top of this process's. */
export function floeSync(jobPath: string, stateDir: string, env: Record<string, string> = {}): Promise<SyncRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["src/cli/main.ts", "sync", "--config", jobPath, "--state-dir", stateDir, "--json"],
      { cwd: repo, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

export interface TableFigures {
  messagesRead: number;
  recordsAdded: number;
  positionsDeleted: number;
  deadLetters: number;
  snapshotId: string | null;
}

/** A sync that must exit 0; the figures of `topic`'s table (0 messages when it is not in the report). */
export async function syncTopic(jobPath: string, stateDir: string, topic: string): Promise<TableFigures> {
  const result = await floeSync(jobPath, stateDir);
  assert.equal(result.code, 0, result.stderr || result.stdout);
  const report = JSON.parse(result.stdout) as { tables: (TableFigures & { topic: string })[] };
  return report.tables.find((t) => t.topic === topic) ?? ({ messagesRead: 0 } as TableFigures);
}
