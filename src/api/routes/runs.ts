// The run routes: sync now, cancel the running run, a job's runs, one run (its report and live
// progress), and its log lines (filtered, or as a text file).
import { z } from "@hono/zod-openapi";
import { JobBusyError } from "../../runtime/job-lock.ts";
import type { AppOptions } from "../app-options.ts";
import {
  ApiError,
  jsonOf,
  nameParam,
  notFound,
  refused,
  refusedHost,
  route,
  routes,
  send,
  sendText,
} from "../openapi.ts";
import { runSummary } from "../run-views.ts";
import * as S from "../schemas.ts";

const job = { params: nameParam };
const run = { params: z.object({ id: z.string() }) };

const syncNow = route({
  method: "post",
  path: "/api/jobs/{name}/sync",
  summary: "Sync now (the running run's id if one is running)",
  tag: "runs",
  request: job,
  responses: {
    202: jsonOf(z.object({ runId: z.string() }), "Started"),
    ...notFound("job"),
    409: refused("Another process is syncing the job"),
    ...refusedHost,
  },
});

const cancel = route({
  method: "post",
  path: "/api/jobs/{name}/cancel",
  summary: "Cancel the running run: it commits what it read and stops",
  tag: "runs",
  request: job,
  responses: { 200: jsonOf(z.object({ cancelled: z.boolean() })), ...notFound("job") },
});

const jobRuns = route({
  method: "get",
  path: "/api/jobs/{name}/runs",
  summary: "The job's runs, newest first",
  tag: "runs",
  request: job,
  responses: { 200: jsonOf(S.runSummary.array()), ...notFound("job") },
});

const oneRun = route({
  method: "get",
  path: "/api/runs/{id}",
  summary: "One run: its report per table, and live progress per partition while it runs",
  tag: "runs",
  request: run,
  responses: { 200: jsonOf(S.runDetail), ...notFound("run") },
});

const logQuery = z.object({
  errors: z.enum(["true", "false"]).optional().describe("Only warnings and errors."),
  q: z.string().max(200).optional().describe("Lines containing this text (case-insensitive)."),
});

const logs = route({
  method: "get",
  path: "/api/runs/{id}/logs",
  summary: "The run's log lines",
  tag: "runs",
  request: { ...run, query: logQuery },
  responses: { 200: jsonOf(S.logLine.array()), ...notFound("run") },
});

const logFile = route({
  method: "get",
  path: "/api/runs/{id}/log.txt",
  summary: "The run's log as a text file",
  tag: "runs",
  request: run,
  responses: {
    200: { description: "The log", content: { "text/plain": { schema: z.string() } } },
    ...notFound("run"),
  },
});

/** pino's numeric levels by name. */
function levelName(level: number): "debug" | "info" | "warn" | "error" {
  return level >= 50 ? "error" : level >= 40 ? "warn" : level >= 30 ? "info" : "debug";
}

/** A job busy in another process is a conflict, named. */
export function busyIsConflict(error: unknown): never {
  if (error instanceof JobBusyError) throw new ApiError(409, error.message, [{ path: "name", message: "busy" }]);
  throw error;
}

export function runRoutes(options: AppOptions) {
  const { store, runs } = options;
  const runOf = (id: string): S.RunDetail => {
    const found = runs.run(id);
    if (!found) throw new ApiError(404, `no run ${id}`, [{ path: "id", message: "unknown run" }]);
    const shown = runSummary(runs, found.record);
    return {
      ...shown,
      messages: found.liveMessages ?? shown.messages,
      report: {
        status: found.record.outcome,
        tables: found.record.tables.map((t) => ({ ...t })),
        messagesRead: found.record.messages,
      },
      progress: found.progress,
    };
  };
  const filteredLogs = (id: string, query: z.infer<typeof logQuery>): S.LogLine[] => {
    runOf(id);
    const q = query.q?.toLowerCase();
    return runs.store
      .logs(id)
      .map((l) => ({ seq: l.seq, at: new Date(l.at).toISOString(), level: levelName(l.level), msg: l.msg }))
      .filter((l) => query.errors !== "true" || l.level === "error" || l.level === "warn")
      .filter((l) => q === undefined || l.msg.toLowerCase().includes(q));
  };
  return routes()
    .openapi(syncNow, async (c) => {
      const { name } = c.req.valid("param");
      store.get("job", name);
      const runId = await runs.syncNow(name).catch(busyIsConflict);
      return send(c, { runId }, 202);
    })
    .openapi(cancel, async (c) => {
      const { name } = c.req.valid("param");
      store.get("job", name);
      return send(c, { cancelled: await runs.cancel(name) }, 200);
    })
    .openapi(jobRuns, (c) => {
      const { name } = c.req.valid("param");
      store.get("job", name);
      return send(
        c,
        runs.runs(name).map((r) => runSummary(runs, r)),
        200,
      );
    })
    .openapi(oneRun, (c) => send(c, runOf(c.req.valid("param").id), 200))
    .openapi(logs, (c) => send(c, filteredLogs(c.req.valid("param").id, c.req.valid("query")), 200))
    .openapi(logFile, (c) => {
      const { id } = c.req.valid("param");
      const text = filteredLogs(id, {})
        .map((l) => `${l.at} ${l.level.toUpperCase().padEnd(5)} ${l.msg}`)
        .join("\n")
        .concat("\n");
      return sendText(c, text, "text/plain; charset=utf-8", `floe-run-${id}.log`);
    });
}
