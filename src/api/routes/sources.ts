// The source routes: the stored Kafka clusters (records.ts), and discovery of a source's topics
// for the streams step of the job editor.
import { z } from "@hono/zod-openapi";
import { sourceRecord } from "../../state/config-store.ts";
import type { AppOptions } from "../app-options.ts";
import { jsonBody, jsonOf, nameParam, notFound, refusedHost, route, send } from "../openapi.ts";
import * as S from "../schemas.ts";
import { checked, inspect } from "./connect.ts";
import { recordRoutes } from "./records.ts";

const discover = route({
  method: "post",
  path: "/api/sources/{name}/discover",
  summary: "The source's topics with partitions, retained messages and the columns inferred from a sample",
  tag: "sources",
  request: {
    params: nameParam,
    body: jsonBody(
      z.strictObject({
        topic_pattern: z
          .string()
          .max(500)
          .optional()
          .describe("Matched against the whole topic name; absent: every topic."),
        sample: z.int().min(0).max(5000).default(200).describe("Messages sampled per topic."),
        destination: z.string().optional().describe("A stored destination: its existing tables are marked."),
        job: z.string().optional().describe("The job's name (its namespace); default discover."),
      }),
    ),
  },
  responses: { 200: jsonOf(S.discovery), ...notFound("source"), ...refusedHost },
});

export function sourceRoutes(options: AppOptions) {
  const { store, policy } = options;
  return recordRoutes(options, "source", "sources", sourceRecord, S.sourceShown).openapi(discover, async (c) => {
    const body = c.req.valid("json");
    const job = await checked(
      policy,
      store.discoveryJob(
        { source: c.req.valid("param").name, destination: body.destination, job: body.job },
        body.topic_pattern || ".*",
      ),
    );
    return send(c, await (await inspect()).discover(job, body.sample), 200);
  });
}
