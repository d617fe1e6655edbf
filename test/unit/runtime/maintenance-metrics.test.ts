// The metrics of a maintenance pass: per table what it compacted, expired, rewrote and removed,
// the table's files and snapshots after it, and when the job's last pass started; a dry run or
// a table that failed counts nothing.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { TableHealth, TableMaintenanceReport } from "#src/pipeline/maintain.ts";
import { ServiceMetrics } from "#src/runtime/metrics.ts";
import type { RunRecord } from "#src/state/run-store.ts";

const health = (dataFiles: number, snapshots: number): TableHealth => ({
  dataFiles,
  deleteFiles: 0,
  records: 100,
  deletedRecords: 0,
  dataBytes: 1000,
  averageFileBytes: 1000 / dataFiles,
  deletedRatio: 0,
  snapshots,
  manifests: 1,
});

const table = (name: string, extra: Partial<TableMaintenanceReport> = {}): TableMaintenanceReport => ({
  table: name,
  dryRun: false,
  before: health(12, 30),
  after: health(1, 10),
  compaction: { dataFiles: 12, deleteFiles: 5, addedFiles: 1, bytes: 5000, retries: 0 },
  manifests: { replaced: 4, created: 1 },
  snapshots: { expired: 20, filesRemoved: 40, bytes: 7000 },
  orphans: { files: 2, bytes: 300 },
  durationMs: 10,
  ...extra,
});

test("a maintenance pass's metrics", async () => {
  const metrics = new ServiceMetrics();
  const run: RunRecord = {
    runId: "r1",
    job: "shop",
    kind: "maintenance",
    trigger: "schedule",
    startedAt: 1_700_000_000_000,
    endedAt: 1_700_000_001_000,
    durationMs: 1000,
    outcome: "partial",
    messages: 0,
    bytes: 0,
    deadLetters: 0,
    tables: [],
    maintenance: [table("shop_topics.orders"), table("shop_topics.bad", { error: "boom" })],
    error: null,
    pid: 1,
    host: "h",
  };
  metrics.observeMaintenance(run);
  const text = await metrics.registry.metrics();
  const labels = 'job="shop",table="shop_topics.orders"';
  assert.match(text, /floe_maintenance_runs_total\{job="shop",outcome="partial"\} 1\n/);
  assert.match(text, new RegExp(`floe_maintenance_files_compacted_total\\{${labels}\\} 12\\n`));
  assert.match(text, new RegExp(`floe_maintenance_snapshots_expired_total\\{${labels}\\} 20\\n`));
  assert.match(text, new RegExp(`floe_maintenance_manifests_rewritten_total\\{${labels}\\} 4\\n`));
  assert.match(text, new RegExp(`floe_maintenance_orphan_files_removed_total\\{${labels}\\} 2\\n`));
  assert.match(text, new RegExp(`floe_maintenance_bytes_removed_total\\{${labels}\\} 7300\\n`));
  assert.match(text, new RegExp(`floe_table_data_files\\{${labels}\\} 1\\n`));
  assert.match(text, new RegExp(`floe_table_snapshots\\{${labels}\\} 10\\n`));
  assert.match(text, /floe_last_maintenance_timestamp_seconds\{job="shop"\} 1700000000\n/);
  assert.doesNotMatch(text, /shop_topics\.bad/, "a table that failed counts nothing");
});
