// One maintenance pass over a table of a job, by its policy (job/maintenance.ts), in the
// order Iceberg's own guides give: compaction (RewriteFiles), manifest rewrite, snapshot
// expiry, orphan removal. A dry run plans each step on the table as it is and changes nothing.
//
// floe's position (the Kafka offsets of snapshot-offsets.ts) is found in the summary of the
// newest ancestor that records it. The replace snapshots of a compaction and of a manifest
// rewrite copy the floe.* summary keys of that ancestor, so that the current snapshot itself
// records the position; and expiry never removes the snapshot that records it.

import type { Catalog, TableIdentifier } from "../iceberg/catalog/catalog.ts";
import { manifestMergeSettings } from "../iceberg/commit/manifest-merge.ts";
import { planDataFileRewrite, targetFileSize } from "../iceberg/commit/rewrite-data-files.ts";
import { manifestBins } from "../iceberg/commit/rewrite-manifests.ts";
import { planFiles } from "../iceberg/scan/plan-files.ts";
import { readManifestList } from "../iceberg/scan/read-manifests.ts";
import type { Snapshot } from "../iceberg/spec/snapshot.ts";
import { currentSnapshot, type TableMetadata } from "../iceberg/spec/table-metadata.ts";
import type { Table } from "../iceberg/table.ts";
import type { MaintenancePolicy } from "../job/maintenance.ts";
import { positionAt } from "./snapshot-offsets.ts";

export interface TableHealth {
  dataFiles: number;
  deleteFiles: number;
  records: number;
  deletedRecords: number;
  dataBytes: number;
  averageFileBytes: number;
  /** Deleted rows / rows of the live data files (0..1). */
  deletedRatio: number;
  snapshots: number;
  manifests: number;
}

export interface TableMaintenanceReport {
  table: string;
  dryRun: boolean;
  before: TableHealth;
  after?: TableHealth;
  compaction: { dataFiles: number; deleteFiles: number; addedFiles: number; bytes: number; retries: number } | null;
  manifests: { replaced: number; created: number } | null;
  snapshots: { expired: number; filesRemoved: number; bytes: number } | null;
  orphans: { files: number; bytes: number } | null;
  durationMs: number;
  error?: string;
}

/** The floe.* summary keys of the snapshot that records the position at `parent`: a maintenance snapshot carries them on. */
export function positionSummary(base: TableMetadata, parent: Snapshot | undefined): Record<string, string> {
  const { recordedBy } = positionAt(base, parent, "table");
  if (!recordedBy) return {};
  return Object.fromEntries(Object.entries(recordedBy.summary).filter(([key]) => key.startsWith("floe.")));
}

export async function tableHealth(table: Table): Promise<TableHealth> {
  const snapshot = currentSnapshot(table.metadata);
  const plan = await planFiles(table, snapshot);
  let records = 0;
  let deleted = 0;
  let bytes = 0;
  for (const { entry } of plan.dataFiles.values()) {
    records += Number(entry.file.recordCount);
    bytes += Number(entry.file.fileSizeInBytes);
  }
  for (const { entry } of plan.deletionVectors.values()) deleted += Number(entry.file.recordCount);
  const dataFiles = plan.dataFiles.size;
  return {
    dataFiles,
    deleteFiles: plan.deletionVectors.size,
    records,
    deletedRecords: deleted,
    dataBytes: bytes,
    averageFileBytes: dataFiles === 0 ? 0 : Math.round(bytes / dataFiles),
    deletedRatio: records === 0 ? 0 : deleted / records,
    snapshots: table.metadata.snapshots.length,
    manifests: plan.manifests.length,
  };
}

export interface MaintainOptions {
  dryRun?: boolean;
  /** The job's target_file_size_bytes, used when the policy names none. */
  targetFileSizeBytes?: number | undefined;
  now?: () => number;
  /** Tests: called in the compaction between its files written and its commit. */
  beforeCompactionCommit?: (attempt: number) => Promise<void>;
}

export async function maintainTable(
  table: Table,
  policy: MaintenancePolicy,
  options: MaintainOptions = {},
): Promise<TableMaintenanceReport> {
  const now = options.now ?? Date.now;
  const started = now();
  const dryRun = options.dryRun === true;
  await table.refresh();
  const report: TableMaintenanceReport = {
    table: table.name,
    dryRun,
    before: await tableHealth(table),
    compaction: null,
    manifests: null,
    snapshots: null,
    orphans: null,
    durationMs: 0,
  };
  const target = policy.compaction.targetFileSizeBytes ?? options.targetFileSizeBytes ?? targetFileSize(table.metadata);

  if (policy.compaction.enabled) {
    const binPack = {
      targetFileSizeBytes: target,
      minInputFiles: policy.compaction.minInputFiles,
      deleteRatioThreshold: policy.compaction.deleteRatio,
    };
    if (dryRun) {
      const { groups, dvs } = await planDataFileRewrite(table, binPack);
      const files = groups.flat();
      report.compaction = {
        dataFiles: files.length,
        deleteFiles: files.filter((f) => dvs.has(f.entry.file.filePath)).length,
        addedFiles: groups.length,
        bytes: files.reduce((sum, f) => sum + Number(f.entry.file.fileSizeInBytes), 0),
        retries: 0,
      };
    } else {
      const result = await table.rewriteDataFiles({
        ...binPack,
        summaryFromParent: positionSummary,
        ...(options.beforeCompactionCommit ? { beforeCommit: options.beforeCompactionCommit } : {}),
      });
      report.compaction = {
        dataFiles: result.rewrittenDataFiles,
        deleteFiles: result.rewrittenDeleteFiles,
        addedFiles: result.addedDataFiles,
        bytes: Number(result.rewrittenBytes),
        retries: result.retries,
      };
    }
  }

  if (policy.manifests.enabled) {
    await table.refresh();
    const snapshot = currentSnapshot(table.metadata);
    const manifests = snapshot ? await readManifestList(table, snapshot) : [];
    if (manifests.length > policy.manifests.maxCount) {
      const bins = manifestBins(manifests, manifestMergeSettings(table.metadata.properties).targetSizeBytes);
      const merged = bins.filter((b) => b.length > 1);
      if (merged.length > 0) {
        if (dryRun) {
          report.manifests = { replaced: merged.flat().length, created: merged.length };
        } else {
          const rewrite = table.rewriteManifests();
          rewrite.setFromParent(positionSummary);
          await rewrite.commit();
          report.manifests = { replaced: rewrite.result.replaced, created: rewrite.result.created };
        }
      }
    }
    report.manifests ??= { replaced: 0, created: 0 };
  }

  if (policy.snapshots.enabled) {
    await table.refresh();
    const expire = table
      .expireSnapshots()
      .retainLast(policy.snapshots.retainLast)
      .expireOlderThan(now() - policy.snapshots.maxAgeMs)
      .retain((s) => {
        // Never the snapshot that records floe's position, nor one between it and the current.
        const { recordedBy } = positionAt(table.metadata, currentSnapshot(table.metadata), "table");
        return recordedBy?.snapshotId === s.snapshotId;
      });
    const result = dryRun ? await expire.plan() : await expire.commit();
    const f = result.files;
    report.snapshots = {
      expired: result.expiredSnapshotIds.length,
      filesRemoved: f.dataFiles.length + f.deleteFiles.length + f.manifests.length + f.manifestLists.length,
      bytes: Number(f.bytes),
    };
  }

  if (policy.orphans.enabled && table.io.list) {
    const orphans = table.deleteOrphanFiles().olderThan(now() - policy.orphans.olderThanMs);
    const result = dryRun ? await orphans.plan() : await orphans.execute();
    report.orphans = { files: result.orphans.length, bytes: result.bytes };
  }

  if (!dryRun) {
    await table.refresh();
    report.after = await tableHealth(table);
  }
  report.durationMs = now() - started;
  return report;
}

/** The tables of the job's namespace, or only `only` (a table name) when given. */
export async function namespaceTables(catalog: Catalog, namespace: string, only?: string): Promise<TableIdentifier[]> {
  if (only !== undefined) return [{ namespace: [namespace], name: only }];
  if (!(await catalog.namespaceExists([namespace]))) return [];
  return catalog.listTables([namespace]);
}
