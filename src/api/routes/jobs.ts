// The job routes: the jobs page's rows, import a job file (its source, destination and job
// together), create, read, replace, delete, export as a job file, pause and resume. A change
// reschedules the job.
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { jobRecord } from "../../state/config-store.ts";
import type { AppOptions } from "../app-options.ts";
import {
  type ApiEnv,
  ApiError,
  callerOf,
  jsonBody,
  jsonOf,
  nameParam,
  noContent,
  notFound,
  recordBody,
  refused,
  route,
  routes,
  send,
  sendText,
} from "../openapi.ts";
import { jobRow } from "../run-views.ts";
import * as S from "../schemas.ts";

const name = { params: nameParam };

const list = route({
  method: "get",
  path: "/api/jobs",
  summary: "The jobs with their last run, status, next run and lag",
  tag: "jobs",
  responses: { 200: jsonOf(S.jobRow.array()) },
});

const importJob = route({
  method: "post",
  path: "/api/jobs/import",
  summary: "Import a job file: its source, destination and job are created together",
  tag: "jobs",
  request: {
    body: jsonBody(
      z.strictObject({
        yaml: z.string().min(1).max(1_000_000),
        source: z.string().optional().describe("Name of the source to create; default the job's name."),
        destination: z.string().optional(),
      }),
    ),
  },
  responses: { 201: jsonOf(S.jobShown, "Imported"), 409: refused("A name is taken") },
});

const create = route({
  method: "post",
  path: "/api/jobs",
  summary: "Create a job",
  tag: "jobs",
  request: { body: recordBody(jobRecord) },
  responses: { 201: jsonOf(S.jobShown, "Created"), 409: refused("The name is taken") },
});

const read = route({
  method: "get",
  path: "/api/jobs/{name}",
  summary: "One job",
  tag: "jobs",
  request: name,
  responses: { 200: jsonOf(S.jobShown), ...notFound("job") },
});

const replace = route({
  method: "put",
  path: "/api/jobs/{name}",
  summary: "Replace a job; a secret left out keeps its stored value",
  tag: "jobs",
  request: { ...name, body: recordBody(jobRecord) },
  responses: { 200: jsonOf(S.jobShown), ...notFound("job") },
});

const remove = route({
  method: "delete",
  path: "/api/jobs/{name}",
  summary: "Delete a job",
  tag: "jobs",
  request: name,
  responses: { 204: { description: "Deleted" }, ...notFound("job"), 409: refused("Still used by a job") },
});

const exportJob = route({
  method: "get",
  path: "/api/jobs/{name}/export",
  summary: "The job as a job file (YAML); each secret becomes an environment variable reference",
  tag: "jobs",
  request: name,
  responses: {
    200: { description: "The job file", content: { "application/yaml": { schema: z.string() } } },
    ...notFound("job"),
  },
});

const schedule = (action: "pause" | "resume") =>
  route({
    method: "post",
    path: `/api/jobs/{name}/${action}` as `/api/jobs/{name}/${typeof action}`,
    summary: action === "pause" ? "Pause the job's schedule" : "Resume the job's schedule",
    tag: "jobs",
    request: name,
    responses: { 200: jsonOf(S.jobRow), ...notFound("job") },
  });
const pause = schedule("pause");
const resume = schedule("resume");

export function jobRoutes(options: AppOptions) {
  const { store, runs } = options;
  const row = (job: string) => jobRow(store, runs, job);
  const shown = (record: Record<string, unknown>) => record as S.JobShown;
  const setPaused = async (c: Context<ApiEnv>, job: string, paused: boolean) => {
    store.setPaused(job, paused, callerOf(c).actor);
    await runs.reschedule(job);
    return row(job);
  };
  return routes()
    .openapi(list, (c) =>
      send(
        c,
        store.list("job").map((j) => row(String(j["name"]))),
        200,
      ),
    )
    .openapi(importJob, async (c) => {
      const body = c.req.valid("json");
      const saved = store.importJob(body.yaml, callerOf(c).actor, {
        ...(body.source ? { source: body.source } : {}),
        ...(body.destination ? { destination: body.destination } : {}),
      });
      await runs.reschedule(String(saved["name"]));
      return send(c, shown(saved), 201);
    })
    .openapi(create, async (c) => {
      const saved = store.save("job", c.req.valid("json"), callerOf(c).actor);
      await runs.reschedule(String(saved["name"]));
      return send(c, shown(saved), 201);
    })
    .openapi(read, (c) => send(c, shown(store.get("job", c.req.valid("param").name)), 200))
    .openapi(replace, async (c) => {
      const job = c.req.valid("param").name;
      const saved = store.save("job", c.req.valid("json"), callerOf(c).actor, job);
      await runs.reschedule(job);
      return send(c, shown(saved), 200);
    })
    .openapi(remove, async (c) => {
      const job = c.req.valid("param").name;
      if (runs.runningRun(job)) {
        throw new ApiError(409, `job ${job} is running; cancel the run first`, [{ path: "name", message: "running" }]);
      }
      store.delete("job", job, callerOf(c).actor);
      await runs.reschedule(job);
      return noContent(c);
    })
    .openapi(exportJob, (c) => {
      const job = c.req.valid("param").name;
      return sendText(c, store.exportJob(job), "application/yaml; charset=utf-8", `${job}.yaml`);
    })
    .openapi(pause, async (c) => send(c, await setPaused(c, c.req.valid("param").name, true), 200))
    .openapi(resume, async (c) => send(c, await setPaused(c, c.req.valid("param").name, false), 200));
}
