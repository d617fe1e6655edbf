// What the forms ask the server so that they restate none of the job file's rules: the choices
// (target engines and what each reads, value and key formats, a binding's defaults), what a set
// of target engines allows, and the next run times of a schedule.
import { z } from "@hono/zod-openapi";
import { BINDING_DEFAULTS, KEY_FORMATS, VALUE_FORMATS } from "../../job/job.ts";
import { ENGINE_SUPPORT, engineConflicts, TARGET_ENGINES } from "../../job/target-engines.ts";
import { previewSchedule, SCHEDULE_PRESETS } from "../../runtime/schedule-spec.ts";
import { jsonBody, jsonOf, route, routes, send } from "../openapi.ts";
import * as S from "../schemas.ts";

const choices = route({
  method: "get",
  path: "/api/choices",
  summary:
    "The job file's choices the forms offer: target engines (with what each reads), value and key formats, a stream's defaults",
  tag: "jobs",
  responses: { 200: jsonOf(S.choices) },
});

const engineCheck = route({
  method: "post",
  path: "/api/engines/check",
  summary: "The delete format the target engines resolve to, and whether upsert streams are allowed",
  tag: "jobs",
  request: { body: jsonBody(z.strictObject({ target_engines: z.array(z.enum(TARGET_ENGINES)) })) },
  responses: { 200: jsonOf(S.engineCheck) },
});

const schedulePreview = route({
  method: "post",
  path: "/api/schedule/preview",
  summary: "The next three run times of a schedule, and the presets",
  tag: "jobs",
  request: { body: jsonBody(z.strictObject({ schedule: z.string().max(200) })) },
  responses: { 200: jsonOf(S.schedulePreview) },
});

const engineSupport = () => TARGET_ENGINES.map((engine) => ({ engine, ...ENGINE_SUPPORT[engine] }));

export function choiceRoutes() {
  return routes()
    .openapi(choices, (c) =>
      send(
        c,
        {
          targetEngines: engineSupport(),
          valueFormats: [...VALUE_FORMATS],
          keyFormats: [...KEY_FORMATS],
          streamDefaults: BINDING_DEFAULTS,
        },
        200,
      ),
    )
    .openapi(engineCheck, (c) => {
      const [conflict] = engineConflicts(c.req.valid("json").target_engines, ["this stream"]);
      return send(
        c,
        {
          deleteFormat: conflict
            ? "none: append only (an engine reads no deletion vectors)"
            : "Iceberg v3 deletion vectors",
          upsertAllowed: conflict === undefined,
          reason: conflict ? conflict.message : null,
          engines: engineSupport(),
        },
        200,
      );
    })
    .openapi(schedulePreview, (c) => {
      const { error, next, continuous } = previewSchedule(c.req.valid("json").schedule, 3);
      return send(
        c,
        { error, next: next.map((d) => d.toISOString()), continuous, presets: [...SCHEDULE_PRESETS] },
        200,
      );
    });
}
