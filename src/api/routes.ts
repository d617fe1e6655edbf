// The API's routes. Each is a few lines over the config store, the run service or sync/.
import { setCookie } from "hono/cookie";
import { z } from "zod";
import type { Job } from "../config/job.ts";
import { KEY_FORMATS, VALUE_FORMATS } from "../config/job.ts";
import { ENGINE_SUPPORT, engineConflicts, TARGET_ENGINES } from "../config/target-engines.ts";
import { JobBusyError } from "../service/job-lock.ts";
import { previewSchedule, SCHEDULE_PRESETS } from "../service/schedule-spec.ts";
import { destinationRecord, jobRecord, type Kind, sourceRecord } from "../state/config-store.ts";
import type { RunRecord } from "../state/run-store.ts";
import { type AppOptions, clientAddress, overHttps } from "./app.ts";
import { type AnyRoute, ApiError, defineRoute, errorSchema, json } from "./route-table.ts";
import * as S from "./schemas.ts";

const named = (kind: string) => ({ 404: { description: `No ${kind} of that name`, schema: errorSchema } });
const ok = (schema: z.ZodType, description = "OK") => ({ 200: { description, schema } });
const refusedHost = {
  400: {
    description:
      "The record does not make a valid job here (a variable reference the operator did not allow, a bad field)",
    schema: errorSchema,
  },
  403: { description: "A host the record names is one the server's outbound policy refuses", schema: errorSchema },
};

export function apiRoutes(options: AppOptions): AnyRoute[] {
  const { store, runs, auth, limiter, policy } = options;
  const cookie = (context: Parameters<typeof setCookie>[0]) =>
    ({ httpOnly: true, sameSite: "Strict", path: "/", secure: overHttps(context, options) }) as const;
  /** The job a connection is made for, its hosts checked against the outbound policy first. */
  const checked = async (job: Job): Promise<Job> => {
    await policy.checkJob(job);
    return job;
  };
  const sync = () => import("./sync-calls.ts");

  // A source or destination is shown with its stored health: the last Test connection of it as saved.
  const withHealth = (kind: Kind, record: Record<string, unknown>) =>
    kind === "job" ? record : { ...record, health: runs.health(kind, String(record["name"])) };
  const summary = (r: RunRecord) => runSummary(r, runs.wasCancelled(r.runId));

  // Test connection of a stored record (its result kept as the record's health) and of a form not
  // saved yet (with only the secrets it carries), both through the outbound policy.
  const connectionTests = (
    kind: "source" | "destination",
    plural: string,
    record: z.ZodType,
    reaches: string,
  ): AnyRoute[] => {
    const test = async (job: Job) => {
      const calls = await sync();
      return kind === "source" ? calls.testSource(job.source) : calls.testDestination(job.destination);
    };
    return [
      defineRoute({
        method: "post",
        path: `/api/${plural}/:name/test`,
        summary: `Test connection: reach ${reaches} as a sync would, and say what is wrong`,
        tag: plural,
        responses: { ...ok(S.diagnosis), ...named(kind), ...refusedHost },
        handler: async ({ params }) => {
          const result = await test(await checked(store.probeJob(kind, params["name"]!)));
          runs.saveHealth(kind, params["name"]!, result);
          return json(result);
        },
      }),
      defineRoute({
        method: "post",
        path: `/api/${plural}/test`,
        summary: `Test connection of a ${kind} not saved yet (the form as it is), with only the secrets it carries`,
        tag: plural,
        body: z.unknown(),
        bodyDoc: record,
        responses: { ...ok(S.diagnosis), ...refusedHost },
        handler: async ({ body }) => json(await test(await checked(store.probeUnsaved(kind, body)))),
      }),
    ];
  };

  const crud = (kind: Kind, plural: string, record: z.ZodType, shown: z.ZodType, tag: string): AnyRoute[] => [
    defineRoute({
      method: "get",
      path: `/api/${plural}`,
      summary: `List the ${plural}`,
      tag,
      responses: ok(z.array(shown)),
      handler: () => json(store.list(kind).map((r) => withHealth(kind, r))),
    }),
    defineRoute({
      method: "post",
      path: `/api/${plural}`,
      summary: `Create a ${kind}`,
      tag,
      body: z.unknown(),
      bodyDoc: record,
      responses: {
        201: { description: "Created", schema: shown },
        409: { description: "The name is taken", schema: errorSchema },
      },
      handler: async ({ body, caller }) => {
        const saved = store.save(kind, body, caller.actor);
        if (kind === "job") await runs.reschedule(String(saved["name"]));
        return json(saved, 201);
      },
    }),
    defineRoute({
      method: "get",
      path: `/api/${plural}/:name`,
      summary: `One ${kind}`,
      tag,
      responses: { ...ok(shown), ...named(kind) },
      handler: ({ params }) => json(withHealth(kind, store.get(kind, params["name"]!))),
    }),
    defineRoute({
      method: "put",
      path: `/api/${plural}/:name`,
      summary: `Replace a ${kind}; a secret left out keeps its stored value`,
      tag,
      body: z.unknown(),
      bodyDoc: record,
      responses: { ...ok(shown), ...named(kind) },
      handler: async ({ params, body, caller }) => {
        const saved = store.save(kind, body, caller.actor, params["name"]);
        if (kind === "job") await runs.reschedule(params["name"]!);
        // A changed record's last test says nothing of it any more.
        else runs.dropHealth(kind, params["name"]!);
        return json(withHealth(kind, saved));
      },
    }),
    defineRoute({
      method: "delete",
      path: `/api/${plural}/:name`,
      summary: `Delete a ${kind}`,
      tag,
      responses: {
        204: { description: "Deleted" },
        ...named(kind),
        409: { description: "Still used by a job", schema: errorSchema },
      },
      handler: async ({ params, caller }) => {
        if (kind === "job" && runs.runningRun(params["name"]!)) {
          throw new ApiError(409, `job ${params["name"]} is running; cancel the run first`, [
            { path: "name", message: "running" },
          ]);
        }
        store.delete(kind, params["name"]!, caller.actor);
        if (kind === "job") await runs.reschedule(params["name"]!);
        else runs.dropHealth(kind, params["name"]!);
        return { status: 204 };
      },
    }),
  ];

  const jobRow = (name: string) => {
    const job = store.get("job", name);
    const last = runs.store.lastRun(name);
    const lag = runs.lagSamples(name);
    const lastAt = lag.at(-1)?.at;
    return {
      name,
      source: String(job["source"]),
      destination: String(job["destination"]),
      schedule: typeof job["schedule"] === "string" ? job["schedule"] : null,
      paused: job["paused"] === true,
      lastRun: last ? summary(last) : null,
      runningRun: runs.runningRun(name) ?? null,
      nextRun: runs.nextRun(name)?.toISOString() ?? null,
      lag:
        runs.measuredLag(name) ??
        (lastAt === undefined ? null : lag.filter((s) => s.at === lastAt).reduce((sum, s) => sum + s.lag, 0)),
    };
  };

  const runOf = (id: string) => {
    const run = runs.run(id);
    if (!run) throw new ApiError(404, `no run ${id}`, [{ path: "id", message: "unknown run" }]);
    const shown = summary(run.record);
    return {
      ...shown,
      messages: run.liveMessages ?? shown.messages,
      report: { status: run.record.outcome, tables: run.record.tables, messagesRead: run.record.messages },
      progress: run.progress,
    };
  };

  const logQuery = z.object({
    errors: z.enum(["true", "false"]).optional().describe("Only warnings and errors."),
    q: z.string().max(200).optional().describe("Lines containing this text (case-insensitive)."),
  });
  const filteredLogs = (id: string, query: z.infer<typeof logQuery>) => {
    runOf(id);
    const q = query.q?.toLowerCase();
    return runs.store
      .logs(id)
      .map((l) => ({ seq: l.seq, at: new Date(l.at).toISOString(), level: levelName(l.level), msg: l.msg }))
      .filter((l) => query.errors !== "true" || l.level === "error" || l.level === "warn")
      .filter((l) => q === undefined || l.msg.toLowerCase().includes(q));
  };

  return [
    defineRoute({
      method: "get",
      path: "/api/session",
      summary: "Whether a login is needed, and the CSRF token of this caller",
      tag: "session",
      open: true,
      responses: ok(S.session),
      handler: ({ context }) => {
        const known = auth.caller(context.req.header("authorization"), getSessionCookie(context));
        return json({
          authRequired: auth.required,
          authenticated: known !== undefined,
          csrfToken: known?.csrf ?? null,
        });
      },
    }),
    defineRoute({
      method: "post",
      path: "/api/login",
      summary: "Log in with the password; sets the session cookie",
      tag: "session",
      open: true,
      body: z.strictObject({ password: z.string().min(1).max(1000) }),
      responses: {
        ...ok(S.session),
        401: { description: "Wrong password", schema: errorSchema },
        429: { description: "Too many wrong passwords: wait Retry-After seconds", schema: errorSchema },
      },
      handler: async ({ body, context }) => {
        const client = clientAddress(context, options.trustProxy);
        const wait = limiter.waitMs(client);
        if (wait > 0) {
          const seconds = Math.ceil(wait / 1000);
          return {
            status: 429,
            headers: { "retry-after": String(seconds) },
            body: {
              error: `too many wrong passwords: try again in ${seconds} s`,
              issues: [{ path: "password", message: `too many wrong passwords: try again in ${seconds} s` }],
            },
          };
        }
        // Counted as wrong before it is hashed: guesses sent at once all pass waitMs before any
        // hash ends, and would otherwise all be hashed before the first failure is recorded.
        limiter.failed(client);
        const id = await auth.login(body.password);
        if (id === undefined) {
          throw new ApiError(401, "wrong password", [{ path: "password", message: "wrong password" }]);
        }
        limiter.succeeded(client);
        setCookie(context, "floe_session", id, cookie(context));
        const caller = auth.caller(undefined, id)!;
        return json({ authRequired: true, authenticated: true, csrfToken: caller.csrf ?? null });
      },
    }),
    defineRoute({
      method: "post",
      path: "/api/logout",
      summary: "End the session",
      tag: "session",
      responses: { 204: { description: "Logged out" } },
      handler: ({ context }) => {
        auth.logout(getSessionCookie(context));
        setCookie(context, "floe_session", "", { ...cookie(context), maxAge: 0 });
        return { status: 204 };
      },
    }),
    ...crud("source", "sources", sourceRecord, S.sourceShown, "sources"),
    ...connectionTests("source", "sources", sourceRecord, "the brokers"),
    defineRoute({
      method: "post",
      path: "/api/sources/:name/discover",
      summary: "The source's topics with partitions, retained messages and the columns inferred from a sample",
      tag: "sources",
      body: z.strictObject({
        topic_pattern: z
          .string()
          .max(500)
          .optional()
          .describe("Matched against the whole topic name; absent: every topic."),
        sample: z.int().min(0).max(5000).default(200).describe("Messages sampled per topic."),
        destination: z.string().optional().describe("A stored destination: its existing tables are marked."),
        job: z.string().optional().describe("The job's name (its namespace); default discover."),
      }),
      responses: { ...ok(S.discovery), ...named("source"), ...refusedHost },
      handler: async ({ params, body }) => {
        const job = await checked(
          store.discoveryJob(
            { source: params["name"]!, destination: body.destination, job: body.job },
            body.topic_pattern || ".*",
          ),
        );
        return json(await (await sync()).discover(job, body.sample));
      },
    }),
    ...crud("destination", "destinations", destinationRecord, S.destinationShown, "destinations"),
    ...connectionTests("destination", "destinations", destinationRecord, "the catalog"),
    defineRoute({
      method: "get",
      path: "/api/choices",
      summary: "The job file's choices the forms offer: target engines (with what each reads), value and key formats",
      tag: "jobs",
      responses: ok(S.choices),
      handler: () =>
        json({
          targetEngines: engineSupport(),
          valueFormats: [...VALUE_FORMATS],
          keyFormats: [...KEY_FORMATS],
        }),
    }),
    defineRoute({
      method: "post",
      path: "/api/engines/check",
      summary: "The delete format the target engines resolve to, and whether upsert streams are allowed",
      tag: "jobs",
      body: z.strictObject({ target_engines: z.array(z.enum(TARGET_ENGINES)) }),
      responses: ok(S.engineCheck),
      handler: ({ body }) => {
        const [conflict] = engineConflicts(body.target_engines, ["this stream"]);
        return json({
          deleteFormat: conflict
            ? "none: append only (an engine reads no deletion vectors)"
            : "Iceberg v3 deletion vectors",
          upsertAllowed: conflict === undefined,
          reason: conflict ? conflict.message : null,
          engines: engineSupport(),
        });
      },
    }),
    defineRoute({
      method: "post",
      path: "/api/schedule/preview",
      summary: "The next three run times of a schedule, and the presets",
      tag: "jobs",
      body: z.strictObject({ schedule: z.string().max(200) }),
      responses: ok(S.schedulePreview),
      handler: ({ body }) => {
        const { error, next: times } = previewSchedule(body.schedule, 3);
        return json({
          error,
          next: times.map((d) => d.toISOString()),
          presets: SCHEDULE_PRESETS,
        });
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/jobs",
      summary: "The jobs with their last run, status, next run and lag",
      tag: "jobs",
      responses: ok(z.array(S.jobRow)),
      handler: () => json(store.list("job").map((j) => jobRow(String(j["name"])))),
    }),
    defineRoute({
      method: "post",
      path: "/api/jobs/import",
      summary: "Import a job file: its source, destination and job are created together",
      tag: "jobs",
      body: z.strictObject({
        yaml: z.string().min(1).max(1_000_000),
        source: z.string().optional().describe("Name of the source to create; default the job's name."),
        destination: z.string().optional(),
      }),
      responses: {
        201: { description: "Imported", schema: S.jobShown },
        409: { description: "A name is taken", schema: errorSchema },
      },
      handler: async ({ body, caller }) => {
        const saved = store.importJob(body.yaml, caller.actor, {
          ...(body.source ? { source: body.source } : {}),
          ...(body.destination ? { destination: body.destination } : {}),
        });
        await runs.reschedule(String(saved["name"]));
        return json(saved, 201);
      },
    }),
    ...crud("job", "jobs", jobRecord, S.jobShown, "jobs").filter((r) => r.path !== "/api/jobs" || r.method !== "get"),
    defineRoute({
      method: "get",
      path: "/api/jobs/:name/export",
      summary: "The job as a job file (YAML); each secret becomes an environment variable reference",
      tag: "jobs",
      responses: { 200: { description: "The job file", contentType: "application/yaml" }, ...named("job") },
      handler: ({ params }) => ({
        text: store.exportJob(params["name"]!),
        contentType: "application/yaml; charset=utf-8",
        headers: { "content-disposition": `attachment; filename="${params["name"]}.yaml"` },
      }),
    }),
    defineRoute({
      method: "post",
      path: "/api/jobs/:name/sync",
      summary: "Sync now (the running run's id if one is running)",
      tag: "runs",
      responses: {
        202: { description: "Started", schema: z.object({ runId: z.string() }) },
        ...named("job"),
        409: { description: "Another process is syncing the job", schema: errorSchema },
        ...refusedHost,
      },
      handler: async ({ params }) => {
        store.get("job", params["name"]!);
        try {
          return json({ runId: await runs.syncNow(params["name"]!) }, 202);
        } catch (error) {
          if (error instanceof JobBusyError)
            throw new ApiError(409, error.message, [{ path: "name", message: "busy" }]);
          throw error;
        }
      },
    }),
    ...(["pause", "resume"] as const).map((action) =>
      defineRoute({
        method: "post",
        path: `/api/jobs/:name/${action}`,
        summary: action === "pause" ? "Pause the job's schedule" : "Resume the job's schedule",
        tag: "jobs",
        responses: { ...ok(S.jobRow), ...named("job") },
        handler: async ({ params, caller }) => {
          store.setPaused(params["name"]!, action === "pause", caller.actor);
          await runs.reschedule(params["name"]!);
          return json(jobRow(params["name"]!));
        },
      }),
    ),
    defineRoute({
      method: "post",
      path: "/api/jobs/:name/cancel",
      summary: "Cancel the running run: it commits what it read and stops",
      tag: "runs",
      responses: { ...ok(z.object({ cancelled: z.boolean() })), ...named("job") },
      handler: async ({ params }) => {
        store.get("job", params["name"]!);
        return json({ cancelled: await runs.cancel(params["name"]!) });
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/jobs/:name/runs",
      summary: "The job's runs, newest first",
      tag: "runs",
      responses: { ...ok(z.array(S.runSummary)), ...named("job") },
      handler: ({ params }) => {
        store.get("job", params["name"]!);
        return json(runs.runs(params["name"]!).map(summary));
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/runs/:id",
      summary: "One run: its report per table, and live progress per partition while it runs",
      tag: "runs",
      responses: { ...ok(S.runDetail), ...named("run") },
      handler: ({ params }) => json(runOf(params["id"]!)),
    }),
    defineRoute({
      method: "get",
      path: "/api/runs/:id/logs",
      summary: "The run's log lines",
      tag: "runs",
      query: logQuery,
      responses: { ...ok(z.array(S.logLine)), ...named("run") },
      handler: ({ params, query }) => json(filteredLogs(params["id"]!, query)),
    }),
    defineRoute({
      method: "get",
      path: "/api/runs/:id/log.txt",
      summary: "The run's log as a text file",
      tag: "runs",
      responses: { 200: { description: "The log", contentType: "text/plain" }, ...named("run") },
      handler: ({ params }) => ({
        text: filteredLogs(params["id"]!, {})
          .map((l) => `${l.at} ${l.level.toUpperCase().padEnd(5)} ${l.msg}`)
          .join("\n")
          .concat("\n"),
        headers: { "content-disposition": `attachment; filename="floe-run-${params["id"]}.log"` },
      }),
    }),
    defineRoute({
      method: "get",
      path: "/api/jobs/:name/tables",
      summary: "The job's tables: schema, snapshots, data files, deletion vectors, dead letters",
      tag: "tables",
      responses: { ...ok(z.array(S.jobTable)), ...named("job"), ...refusedHost },
      handler: async ({ params }) => json(await (await sync()).tables(await checked(store.job(params["name"]!)))),
    }),
    defineRoute({
      method: "post",
      path: "/api/jobs/:name/maintain",
      summary: "Maintain the job's tables now: compaction, manifest rewrite, snapshot expiry, orphan removal",
      tag: "tables",
      responses: {
        ...ok(S.maintenancePass),
        ...named("job"),
        409: { description: "Another process is syncing the job", schema: errorSchema },
        ...refusedHost,
      },
      handler: async ({ params }) => {
        store.get("job", params["name"]!);
        try {
          const pass = await runs.maintainNow(params["name"]!);
          return json({ runId: pass.record.runId, outcome: pass.record.outcome, tables: pass.tables });
        } catch (error) {
          if (error instanceof JobBusyError)
            throw new ApiError(409, error.message, [{ path: "name", message: "busy" }]);
          throw error;
        }
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/jobs/:name/health",
      summary: "Each table's health (files, average file size, deleted-row ratio, snapshots) and the last maintenance",
      tag: "tables",
      responses: { ...ok(S.tablesHealth), ...named("job"), ...refusedHost },
      handler: async ({ params }) => {
        const name = params["name"]!;
        const tables = await (await sync()).health(await checked(store.job(name)));
        const last = runs.store.lastMaintenance(name);
        return json({
          tables,
          lastMaintenance: last
            ? { runId: last.runId, at: new Date(last.startedAt).toISOString(), outcome: last.outcome }
            : null,
        });
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/jobs/:name/tables/:table/preview",
      summary: "The first live rows of a table, read by floe itself",
      tag: "tables",
      query: z.object({ limit: z.coerce.number().int().min(1).max(500).default(50) }),
      responses: { ...ok(S.preview), ...named("job"), ...refusedHost },
      handler: async ({ params, query }) =>
        json(await (await sync()).preview(await checked(store.job(params["name"]!)), params["table"]!, query.limit)),
    }),
    defineRoute({
      method: "get",
      path: "/api/jobs/:name/metrics",
      summary:
        "For the plots: messages per second per run, lag per partition over time, data files per table over time",
      tag: "tables",
      responses: { ...ok(S.metrics), ...named("job"), ...refusedHost },
      handler: async ({ params }) => {
        const name = params["name"]!;
        const job = await checked(store.job(name));
        const history = runs
          .runs(name, 200)
          .filter((r) => r.kind !== "maintenance")
          .map(summary)
          .filter((r) => r.durationMs !== null && r.status !== "failed")
          .reverse()
          .map((r) => ({
            id: r.id,
            startedAt: r.startedAt,
            messages: r.messages,
            durationMs: r.durationMs!,
            perSecond: r.durationMs! > 0 ? Math.round((r.messages / r.durationMs!) * 1000) : 0,
          }));
        const tables = await (await sync()).tables(job).catch(() => []);
        return json({
          runs: history,
          lag: runs.lagSamples(name),
          dataFiles: tables
            .filter((t) => !t.deadLetter)
            .map((t) => ({
              table: t.name,
              points: t.snapshots.map((s) => ({
                at: s.at,
                dataFiles: s.totalDataFiles,
                deleteFiles: s.totalDeleteFiles,
              })),
            })),
        });
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/audit",
      summary: "Every change to a source, destination or job, newest first",
      tag: "audit",
      responses: ok(z.array(S.auditEntry)),
      handler: () => json(store.auditLog()),
    }),
  ];
}

const engineSupport = () => TARGET_ENGINES.map((engine) => ({ engine, ...ENGINE_SUPPORT[engine] }));

/** A run record as the API shows it. */
function runSummary(r: RunRecord, cancelled: boolean) {
  return {
    id: r.runId,
    job: r.job,
    trigger: r.trigger === "sync" ? ("manual" as const) : r.trigger,
    startedAt: new Date(r.startedAt).toISOString(),
    finishedAt: r.endedAt === null ? null : new Date(r.endedAt).toISOString(),
    durationMs: r.durationMs,
    status: r.outcome,
    messages: r.messages,
    bytes: r.bytes,
    deadLetters: r.deadLetters,
    cancelled,
    tables: r.tables.map((t) => ({
      topic: t.topic,
      table: t.table,
      messages: t.messagesRead,
      records: t.recordsAdded,
      deadLetters: t.deadLetters,
    })),
    error: r.error === null ? null : `${r.error.message} (${r.error.kind})`,
  };
}

/** pino's numeric levels by name. */
function levelName(level: number): "debug" | "info" | "warn" | "error" {
  return level >= 50 ? "error" : level >= 40 ? "warn" : level >= 30 ? "info" : "debug";
}

function getSessionCookie(context: Parameters<typeof setCookie>[0]): string | undefined {
  const header = context.req.header("cookie") ?? "";
  return /(?:^|;\s*)floe_session=([^;]+)/.exec(header)?.[1];
}
