// A `floe serve` for a test: its own state directory, a free port, and a client that sends the
// CSRF token, records every answer, and checks each JSON answer against the OpenAPI document
// the server publishes (the same document, schema by schema, status by status).
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { type Server, startServer } from "#src/api/serve.ts";
import { bootstrapServers } from "../../dev/kafka.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";

// biome-ignore lint/suspicious/noExplicitAny: an answer is JSON, checked against the OpenAPI document
export type Json = any;

export interface Answer {
  status: number;
  body: Json;
  text: string;
  headers: Headers;
}

export class UiClient {
  readonly base: string;
  csrf: string | null = null;
  readonly answers: { method: string; path: string; answer: Answer }[] = [];

  constructor(base: string) {
    this.base = base.replace(/\/$/, "");
  }

  async session(): Promise<void> {
    const a = await this.call("GET", "/api/session");
    this.csrf = a.body.csrfToken;
  }

  async call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
    const h: Record<string, string> = { ...headers };
    if (body !== undefined) h["content-type"] = "application/json";
    if (method !== "GET" && this.csrf && !("x-floe-csrf" in h)) h["x-floe-csrf"] = this.csrf;
    const response = await fetch(`${this.base}${path}`, {
      method,
      headers: h,
      body: body === undefined ? null : typeof body === "string" ? body : JSON.stringify(body),
    });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    const answer = { status: response.status, body: parsed, text, headers: response.headers };
    this.answers.push({ method, path, answer });
    return answer;
  }

  get = (path: string) => this.call("GET", path);
  post = (path: string, body: unknown = {}) => this.call("POST", path, body);
  put = (path: string, body: unknown) => this.call("PUT", path, body);
  delete = (path: string) => this.call("DELETE", path);

  /** The run `runId` once it no longer runs (its GET /api/runs answer, polled). */
  async finishedRun(runId: string): Promise<Json> {
    for (;;) {
      const r = await this.get(`/api/runs/${runId}`);
      if (r.body.status !== "running") return r.body;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  /** Sync now of job `name`, awaited: its finished run, which must be complete. */
  async syncNow(name: string): Promise<Json> {
    const run = await this.finishedRun((await this.post(`/api/jobs/${name}/sync`)).body.runId);
    assert.equal(run.status, "complete", JSON.stringify(run));
    return run;
  }

  /**
   * Source `source` (the local broker), destination `destination` (the REST fixture) and job
   * `name` upserting `topic` by id into table `table`, made through the API as a UI user does.
   */
  async createRestUpsertJob(spec: {
    name: string;
    source: string;
    destination: string;
    topic: string;
    table: string;
    bootstrapServers: string;
    restUri: string;
  }): Promise<void> {
    const source = await this.post("/api/sources", {
      name: spec.source,
      kafka: { bootstrap_servers: [spec.bootstrapServers] },
    });
    assert.equal(source.status, 201, source.text);
    const destination = await this.post("/api/destinations", {
      name: spec.destination,
      iceberg: { catalog: { type: "rest", uri: spec.restUri } },
    });
    assert.equal(destination.status, 201, destination.text);
    const job = await this.post("/api/jobs", {
      name: spec.name,
      source: spec.source,
      destination: spec.destination,
      streams: { [spec.topic]: { mode: "upsert", dedup_keys: ["id"], table: spec.table } },
    });
    assert.equal(job.status, 201, job.text);
  }

  /** Every recorded JSON answer matches the document's schema for its route and status. */
  async checkAgainstOpenApi(): Promise<number> {
    const doc = (await (await fetch(`${this.base}/api/openapi.json`)).json()) as {
      paths: Record<
        string,
        Record<string, { responses: Record<string, { content?: Record<string, { schema: object }> }> }>
      >;
    };
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    const routes = Object.entries(doc.paths).flatMap(([template, ops]) =>
      Object.entries(ops).map(([method, op]) => ({
        method: method.toUpperCase(),
        pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`),
        op,
        template,
      })),
    );
    let checked = 0;
    for (const { method, path, answer } of this.answers) {
      const bare = path.split("?")[0]!;
      const candidates = routes.filter((r) => r.method === method && r.pattern.test(bare));
      // The most literal template wins (/api/jobs/import over /api/jobs/{name}).
      const route = candidates.sort(
        (a, b) => b.template.replace(/\{[^}]+\}/g, "").length - a.template.replace(/\{[^}]+\}/g, "").length,
      )[0];
      assert.ok(route, `${method} ${bare} is not in the OpenAPI document`);
      const response = route.op.responses[String(answer.status)];
      assert.ok(response, `${method} ${bare} answered ${answer.status}, which the document does not list`);
      const schema = response.content?.["application/json"]?.schema;
      if (schema === undefined) continue;
      const validate = ajv.compile(schema);
      assert.ok(
        validate(answer.body),
        `${method} ${bare} ${answer.status}: ${ajv.errorsText(validate.errors)}\n${answer.text.slice(0, 500)}`,
      );
      checked++;
    }
    return checked;
  }
}

export async function startUiServer(env: Record<string, string | undefined> = {}): Promise<{
  server: Server;
  client: UiClient;
  stateDir: string;
  close(): Promise<void>;
}> {
  const stateDir = mkdtempSync(join(tmpdir(), "floe-serve-"));
  const server = await startServer({ stateDir, host: "127.0.0.1", port: 0, env, logFormat: "none", noAuth: true });
  const client = new UiClient(server.url);
  await client.session();
  return {
    server,
    client,
    stateDir,
    async close() {
      await server.close();
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
}

/**
 * Through the API: a source `kafka` of the development broker, a destination `rest` of the REST
 * fixture, and job `job` appending `topic` into table `t`.
 */
export async function createAppendJob(api: UiClient, job: string, topic: string): Promise<void> {
  assert.equal(
    (await api.post("/api/sources", { name: "kafka", kafka: { bootstrap_servers: [bootstrapServers] } })).status,
    201,
  );
  const destination = { name: "rest", iceberg: { catalog: { type: "rest", uri: restCatalog.uri } } };
  assert.equal((await api.post("/api/destinations", destination)).status, 201);
  const created = await api.post("/api/jobs", {
    name: job,
    source: "kafka",
    destination: "rest",
    streams: { [topic]: { mode: "append", table: "t" } },
  });
  assert.equal(created.status, 201, created.text);
}
