// A job's `maintenance:` policy: what `floe maintain`, and `floe run` / `floe serve` after a
// sync when it is due, do to each of the job's tables. On by default with settings that never
// take what a reader or a writer may still need:
//   compaction      files under 75% of the target, or with 30% of their rows deleted, rewritten
//   snapshots       kept: the last 10, and any younger than 6 hours (the current one always): a
//                   job that syncs every minute then keeps about 370 snapshots, not one a minute
//                   forever, and a query or time travel of the last hours still finds its files
//   manifests       rewritten once a snapshot lists more than 20
//   orphans         unreferenced files removed once older than 3 days (a commit in flight is
//                   never that old)
//   interval        at most one pass per table per 1 hour
import { z } from "zod";
import { parseDurationMs } from "./schema-parts.ts";

const duration = (what: string) =>
  z
    .string()
    .transform((text, ctx) => {
      const ms = parseDurationMs(text);
      if (ms === undefined) {
        ctx.addIssue({
          code: "custom",
          message: `expected <n><unit> with unit s, m, h or d ("6h", "3d"), got ${JSON.stringify(text)}`,
        });
        return z.NEVER;
      }
      return ms;
    })
    .describe(what);

export interface MaintenancePolicy {
  readonly enabled: boolean;
  /** Least time between two passes on a table, in ms. */
  readonly intervalMs: number;
  readonly compaction: {
    readonly enabled: boolean;
    /** Bytes of a compacted file; undefined: the job's target_file_size_bytes, else the table's write.target-file-size-bytes. */
    readonly targetFileSizeBytes: number | undefined;
    readonly minInputFiles: number;
    readonly deleteRatio: number;
  };
  readonly snapshots: { readonly enabled: boolean; readonly retainLast: number; readonly maxAgeMs: number };
  readonly manifests: { readonly enabled: boolean; readonly maxCount: number };
  readonly orphans: { readonly enabled: boolean; readonly olderThanMs: number };
}

export const maintenanceSchema = z
  .strictObject({
    enabled: z.boolean().default(true).describe("Maintain the job's tables at all."),
    interval: duration("Least time between two passes on a table (floe run, floe serve).").prefault("1h"),
    compaction: z
      .strictObject({
        enabled: z.boolean().default(true),
        target_file_size_bytes: z
          .int()
          .min(1024)
          .optional()
          .describe("Size of a compacted file. Default: the job's, else the table's."),
        min_input_files: z.int().min(1).default(5).describe("Small files rewritten together at the least."),
        delete_ratio: z
          .number()
          .gt(0)
          .max(1)
          .default(0.3)
          .describe("Share of a file's rows deleted from which it is rewritten."),
      })
      .prefault({}),
    snapshots: z
      .strictObject({
        enabled: z.boolean().default(true),
        retain_last: z.int().min(1).default(10).describe("Snapshots kept whatever their age."),
        max_age: duration("Snapshots younger than this are kept.").prefault("6h"),
      })
      .prefault({}),
    manifests: z
      .strictObject({
        enabled: z.boolean().default(true),
        max_count: z
          .int()
          .min(1)
          .default(20)
          .describe("Manifests of the current snapshot from which they are rewritten."),
      })
      .prefault({}),
    orphans: z
      .strictObject({
        enabled: z.boolean().default(true),
        older_than: duration("Unreferenced files younger than this are never removed (commits in flight).").prefault(
          "3d",
        ),
      })
      .prefault({}),
  })
  .prefault({})
  .transform(
    (m): MaintenancePolicy => ({
      enabled: m.enabled,
      intervalMs: m.interval,
      compaction: {
        enabled: m.compaction.enabled,
        targetFileSizeBytes: m.compaction.target_file_size_bytes,
        minInputFiles: m.compaction.min_input_files,
        deleteRatio: m.compaction.delete_ratio,
      },
      snapshots: { enabled: m.snapshots.enabled, retainLast: m.snapshots.retain_last, maxAgeMs: m.snapshots.max_age },
      manifests: { enabled: m.manifests.enabled, maxCount: m.manifests.max_count },
      orphans: { enabled: m.orphans.enabled, olderThanMs: m.orphans.older_than },
    }),
  )
  .describe("Table maintenance: compaction, snapshot expiry, manifest rewrites, orphan removal. On by default.");

/** The policy of a job file without `maintenance:`. */
export const DEFAULT_MAINTENANCE: MaintenancePolicy = maintenanceSchema.parse(undefined);
