// The table routes of a job: its tables (schema, snapshots, files, dead letters), maintain now,
// each table's health, a preview of live rows, and the plots' metrics. Each reaches the catalog
// through the outbound policy.
import { z } from "@hono/zod-openapi";
import type { AppOptions } from "../app-options.ts";
import { jsonOf, nameParam, notFound, refused, refusedHost, route, routes, send } from "../openapi.ts";
import { runSummary } from "../run-views.ts";
import * as S from "../schemas.ts";
import { checked, inspect } from "./connect.ts";
import { busyIsConflict } from "./runs.ts";

const job = { params: nameParam };

const tables = route({
  method: "get",
  path: "/api/jobs/{name}/tables",
  summary: "The job's tables: schema, snapshots, data files, deletion vectors, dead letters",
  tag: "tables",
  request: job,
  responses: { 200: jsonOf(S.jobTable.array()), ...notFound("job"), ...refusedHost },
});

const maintain = route({
  method: "post",
  path: "/api/jobs/{name}/maintain",
  summary: "Maintain the job's tables now: compaction, manifest rewrite, snapshot expiry, orphan removal",
  tag: "tables",
  request: job,
  responses: {
    200: jsonOf(S.maintenancePass),
    ...notFound("job"),
    409: refused("Another process is syncing the job"),
    ...refusedHost,
  },
});

const health = route({
  method: "get",
  path: "/api/jobs/{name}/health",
  summary: "Each table's health (files, average file size, deleted-row ratio, snapshots) and the last maintenance",
  tag: "tables",
  request: job,
  responses: { 200: jsonOf(S.tablesHealth), ...notFound("job"), ...refusedHost },
});

const preview = route({
  method: "get",
  path: "/api/jobs/{name}/tables/{table}/preview",
  summary: "The first live rows of a table, read by floe itself",
  tag: "tables",
  request: {
    params: z.object({ name: z.string(), table: z.string() }),
    query: z.object({ limit: z.coerce.number().int().min(1).max(500).default(50) }),
  },
  responses: { 200: jsonOf(S.preview), ...notFound("job"), ...refusedHost },
});

const metrics = route({
  method: "get",
  path: "/api/jobs/{name}/metrics",
  summary: "For the plots: messages per second per run, lag per partition over time, data files per table over time",
  tag: "tables",
  request: job,
  responses: { 200: jsonOf(S.metrics), ...notFound("job"), ...refusedHost },
});

export function tableRoutes(options: AppOptions) {
  const { store, runs, policy } = options;
  const jobOf = (name: string) => checked(policy, store.job(name));
  return routes()
    .openapi(tables, async (c) => {
      const found = await (await inspect()).tables(await jobOf(c.req.valid("param").name));
      return send<S.JobTable[], 200>(
        c,
        found.map((t) => ({ ...t, snapshots: t.snapshots.map((s) => ({ ...s })) })),
        200,
      );
    })
    .openapi(maintain, async (c) => {
      const { name } = c.req.valid("param");
      store.get("job", name);
      const pass = await runs.maintainNow(name).catch(busyIsConflict);
      return send<S.MaintenancePass, 200>(
        c,
        { runId: pass.record.runId, outcome: pass.record.outcome, tables: pass.tables.map((t) => ({ ...t })) },
        200,
      );
    })
    .openapi(health, async (c) => {
      const { name } = c.req.valid("param");
      const found = await (await inspect()).health(await jobOf(name));
      const last = runs.store.lastMaintenance(name);
      return send(
        c,
        {
          tables: found,
          lastMaintenance: last
            ? { runId: last.runId, at: new Date(last.startedAt).toISOString(), outcome: last.outcome }
            : null,
        },
        200,
      );
    })
    .openapi(preview, async (c) => {
      const { name, table } = c.req.valid("param");
      const { limit } = c.req.valid("query");
      return send(c, await (await inspect()).preview(await jobOf(name), table, limit), 200);
    })
    .openapi(metrics, async (c) => {
      const { name } = c.req.valid("param");
      const job = await jobOf(name);
      const history = runs
        .runs(name, 200)
        .filter((r) => r.kind !== "maintenance")
        .map((r) => runSummary(runs, r))
        .filter((r) => r.durationMs !== null && r.status !== "failed")
        .reverse()
        .map((r) => ({
          id: r.id,
          startedAt: r.startedAt,
          messages: r.messages,
          durationMs: r.durationMs!,
          perSecond: r.durationMs! > 0 ? Math.round((r.messages / r.durationMs!) * 1000) : 0,
        }));
      const found = await (await inspect())
        .tables(job)
        .catch((): Awaited<ReturnType<Awaited<ReturnType<typeof inspect>>["tables"]>> => []);
      return send(
        c,
        {
          runs: history,
          lag: runs.lagSamples(name),
          dataFiles: found
            .filter((t) => !t.deadLetter)
            .map((t) => ({
              table: t.name,
              points: t.snapshots.map((s) => ({
                at: s.at,
                dataFiles: s.totalDataFiles,
                deleteFiles: s.totalDeleteFiles,
              })),
            })),
        },
        200,
      );
    });
}
