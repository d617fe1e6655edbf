// The routes of a stored source or destination: list, create, read, replace, delete, and Test
// connection of a stored record (its result kept as the record's health) or of a form not saved
// yet (with only the secrets it carries), both through the outbound policy. A record is shown
// with its stored health: the last Test connection of it as saved.
import type { z } from "@hono/zod-openapi";
import type { Job } from "../../job/job.ts";
import type { AppOptions } from "../app-options.ts";
import {
  callerOf,
  jsonOf,
  nameParam,
  noContent,
  notFound,
  recordBody,
  refused,
  refusedHost,
  route,
  routes,
  send,
} from "../openapi.ts";
import * as S from "../schemas.ts";
import { checked, inspect } from "./connect.ts";

type Kind = "source" | "destination";

/** What a connection test reaches, for the summary. */
const REACHES = { source: "the brokers", destination: "the catalog" } as const;

function declare<P extends "sources" | "destinations", Shown extends z.ZodType>(
  kind: Kind,
  plural: P,
  record: z.ZodType,
  shown: Shown,
) {
  const name = { params: nameParam };
  return {
    list: route({
      method: "get",
      path: `/api/${plural}` as `/api/${P}`,
      summary: `List the ${plural}`,
      tag: plural,
      responses: { 200: jsonOf(shown.array()) },
    }),
    create: route({
      method: "post",
      path: `/api/${plural}` as `/api/${P}`,
      summary: `Create a ${kind}`,
      tag: plural,
      request: { body: recordBody(record) },
      responses: { 201: jsonOf(shown, "Created"), 409: refused("The name is taken") },
    }),
    read: route({
      method: "get",
      path: `/api/${plural}/{name}` as `/api/${P}/{name}`,
      summary: `One ${kind}`,
      tag: plural,
      request: name,
      responses: { 200: jsonOf(shown), ...notFound(kind) },
    }),
    replace: route({
      method: "put",
      path: `/api/${plural}/{name}` as `/api/${P}/{name}`,
      summary: `Replace a ${kind}; a secret left out keeps its stored value`,
      tag: plural,
      request: { ...name, body: recordBody(record) },
      responses: { 200: jsonOf(shown), ...notFound(kind) },
    }),
    remove: route({
      method: "delete",
      path: `/api/${plural}/{name}` as `/api/${P}/{name}`,
      summary: `Delete a ${kind}`,
      tag: plural,
      request: name,
      responses: { 204: { description: "Deleted" }, ...notFound(kind), 409: refused("Still used by a job") },
    }),
    testStored: route({
      method: "post",
      path: `/api/${plural}/{name}/test` as `/api/${P}/{name}/test`,
      summary: `Test connection: reach ${REACHES[kind]} as a sync would, and say what is wrong`,
      tag: plural,
      request: name,
      responses: { 200: jsonOf(S.diagnosis), ...notFound(kind), ...refusedHost },
    }),
    testUnsaved: route({
      method: "post",
      path: `/api/${plural}/test` as `/api/${P}/test`,
      summary: `Test connection of a ${kind} not saved yet (the form as it is), with only the secrets it carries`,
      tag: plural,
      request: { body: recordBody(record) },
      responses: { 200: jsonOf(S.diagnosis), ...refusedHost },
    }),
  };
}

/** The routes of the `kind` records; `Shown` is what the store keeps of one, without its secrets. */
export function recordRoutes<P extends "sources" | "destinations", Shown extends z.ZodType>(
  options: AppOptions,
  kind: Kind,
  plural: P,
  record: z.ZodType,
  shown: Shown,
) {
  const { store, runs, policy } = options;
  const r = declare(kind, plural, record, shown);
  type Record = z.output<Shown>;
  const withHealth = (record: object) =>
    ({ ...record, health: runs.health(kind, String((record as { name: unknown }).name)) }) as Record;
  const test = async (job: Job) => {
    const calls = await inspect();
    return kind === "source" ? calls.testSource(job.source) : calls.testDestination(job.destination);
  };
  return routes()
    .openapi(r.list, (c) => send(c, store.list(kind).map(withHealth), 200))
    .openapi(r.create, (c) => send(c, store.save(kind, c.req.valid("json"), callerOf(c).actor) as Record, 201))
    .openapi(r.read, (c) => send(c, withHealth(store.get(kind, c.req.valid("param").name)), 200))
    .openapi(r.replace, (c) => {
      const { name } = c.req.valid("param");
      const saved = store.save(kind, c.req.valid("json"), callerOf(c).actor, name);
      // A changed record's last test says nothing of it any more.
      runs.dropHealth(kind, name);
      return send(c, withHealth(saved), 200);
    })
    .openapi(r.remove, (c) => {
      const { name } = c.req.valid("param");
      store.delete(kind, name, callerOf(c).actor);
      runs.dropHealth(kind, name);
      return noContent(c);
    })
    .openapi(r.testStored, async (c) => {
      const { name } = c.req.valid("param");
      const result = await test(await checked(policy, store.probeJob(kind, name)));
      runs.saveHealth(kind, name, result);
      return send(c, result, 200);
    })
    .openapi(r.testUnsaved, async (c) =>
      send(c, await test(await checked(policy, store.probeUnsaved(kind, c.req.valid("json")))), 200),
    );
}
