// A credential-vending front for the S3 REST fixture (iceberg-rest-s3.ts), which vends none: it
// passes every request through, and to the answers of loadTable and createTable asked with
// `X-Iceberg-Access-Delegation: vended-credentials` it adds short-lived MinIO credentials for the
// table, from MinIO's STS, narrowed by a session policy to the table's location, in the table's
// `config`, in `storage-credentials`, or both, as catalogs differ. With `credentialsEndpoint` it
// also serves GET .../tables/{table}/credentials and lists it in /v1/config's endpoints.
//
// `lifetimeMs` shortens what the credentials are said to last (s3.session-token-expires-at-ms)
// below MinIO's 15-minute minimum: the proxy revokes them at MinIO when that time comes, so they
// really stop working then, and a client that does not renew them fails.
//
// Started in-process by a test, on an ephemeral loopback port; close() revokes what it vended.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { parseJson, stringifyJson } from "../../src/lib/int64-json.ts";
import { minio } from "./minio.ts";
import { assumeRole, prefixPolicy, revokeTokens, type TemporaryCredentials } from "./minio-sts.ts";

export interface VendingProxyOptions {
  /** The catalog behind it, e.g. restS3Catalog.uri. */
  upstream: string;
  /** Where the keys go in the answer. Default both. */
  placement?: "config" | "storage-credentials" | "both";
  /** What the credentials are announced (and made) to last. Default: MinIO's own 15 minutes. */
  lifetimeMs?: number;
  /** Whether the answer says when they expire. Default true. */
  announceExpiry?: boolean;
  /** Also vend s3.endpoint, client.region and s3.path-style-access (some catalogs do). Default true. */
  vendEndpoint?: boolean;
  /** The location the session policy allows, given the table's. Default: the table's own. */
  allowedLocation?: (tableLocation: string) => string;
  /** Serve and announce the table credentials endpoint. Default false. */
  credentialsEndpoint?: boolean;
}

export interface VendingRecord {
  table: string;
  location: string;
  via: "loadTable" | "createTable" | "loadCredentials";
  accessKeyId: string;
}

export interface VendingProxy {
  readonly uri: string;
  /** Every set of credentials handed out, in order. */
  readonly vended: readonly VendingRecord[];
  /** The access key ids revoked so far (at the end of their lifetime, or by revokeAll). */
  readonly revoked: readonly string[];
  /** Revokes every credential handed out so far, at once. */
  revokeAll(): Promise<void>;
  close(): Promise<void>;
}

const DELEGATION = "x-iceberg-access-delegation";
const CREDENTIALS_ENDPOINT = "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials";
const HOP_HEADERS = new Set(["host", "connection", "content-length", "transfer-encoding", "keep-alive"]);

export async function startVendingProxy(options: VendingProxyOptions): Promise<VendingProxy> {
  const upstream = options.upstream.replace(/\/+$/, "");
  const vended: VendingRecord[] = [];
  const revoked: string[] = [];
  const outstanding = new Map<string, { credentials: TemporaryCredentials; timer?: NodeJS.Timeout }>();

  async function revoke(accessKeyId: string): Promise<void> {
    const entry = outstanding.get(accessKeyId);
    if (entry === undefined) return;
    outstanding.delete(accessKeyId);
    clearTimeout(entry.timer);
    await revokeTokens(entry.credentials);
    revoked.push(accessKeyId);
  }

  async function vend(table: string, location: string, via: VendingRecord["via"]) {
    const allowed = options.allowedLocation?.(location) ?? location;
    const credentials = await assumeRole({ policy: prefixPolicy(allowed) });
    const expiresAtMs = options.lifetimeMs === undefined ? credentials.expiresAtMs : Date.now() + options.lifetimeMs;
    const entry: { credentials: TemporaryCredentials; timer?: NodeJS.Timeout } = { credentials };
    if (options.lifetimeMs !== undefined) {
      entry.timer = setTimeout(() => void revoke(credentials.accessKeyId).catch(() => {}), options.lifetimeMs);
    }
    outstanding.set(credentials.accessKeyId, entry);
    vended.push({ table, location, via, accessKeyId: credentials.accessKeyId });
    const config: Record<string, string> = {
      "s3.access-key-id": credentials.accessKeyId,
      "s3.secret-access-key": credentials.secretAccessKey,
      "s3.session-token": credentials.sessionToken,
      ...(options.announceExpiry === false ? {} : { "s3.session-token-expires-at-ms": String(expiresAtMs) }),
      ...(options.vendEndpoint === false
        ? {}
        : { "s3.endpoint": minio.endpoint, "client.region": minio.region, "s3.path-style-access": "true" }),
    };
    return config;
  }

  /** Adds credentials to a LoadTableResult. */
  async function withCredentials(body: string, table: string, via: VendingRecord["via"]): Promise<string> {
    const result = parseJson(body) as {
      metadata: { location: string };
      config?: Record<string, string>;
      "storage-credentials"?: unknown[];
    };
    const location = result.metadata.location;
    const config = await vend(table, location, via);
    const placement = options.placement ?? "both";
    if (placement !== "storage-credentials") result.config = { ...result.config, ...config };
    if (placement !== "config") result["storage-credentials"] = [{ prefix: location, config }];
    return stringifyJson(result);
  }

  async function forward(request: IncomingMessage, body: Buffer, path: string): Promise<Response> {
    const headers: Record<string, string> = {};
    for (const [key, value] of Object.entries(request.headers)) {
      if (!HOP_HEADERS.has(key) && typeof value === "string") headers[key] = value;
    }
    return fetch(`${upstream}${path}`, {
      method: request.method ?? "GET",
      headers,
      ...(body.length > 0 ? { body } : {}),
      signal: AbortSignal.timeout(30_000),
    });
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const url = new URL(request.url ?? "/", "http://proxy");
    const method = request.method ?? "GET";
    const delegated = /vended-credentials/i.test(String(request.headers[DELEGATION] ?? ""));
    const tablePath = /^\/v1\/(?:.+\/)?namespaces\/([^/]+)\/tables\/([^/]+)$/.exec(url.pathname);
    const tablesPath = /^\/v1\/(?:.+\/)?namespaces\/([^/]+)\/tables$/.exec(url.pathname);
    const credentialsPath = /^(\/v1\/(?:.+\/)?namespaces\/([^/]+)\/tables\/([^/]+))\/credentials$/.exec(url.pathname);

    if (credentialsPath && method === "GET" && options.credentialsEndpoint) {
      const loaded = await forward(request, Buffer.alloc(0), `${credentialsPath[1]}${url.search}`);
      const text = await loaded.text();
      if (!loaded.ok) return send(response, loaded.status, loaded.headers.get("content-type"), text);
      const table = `${decodeURIComponent(credentialsPath[2]!)}.${decodeURIComponent(credentialsPath[3]!)}`;
      const location = (parseJson(text) as { metadata: { location: string } }).metadata.location;
      const config = await vend(table, location, "loadCredentials");
      return send(
        response,
        200,
        "application/json",
        JSON.stringify({ "storage-credentials": [{ prefix: location, config }] }),
      );
    }

    const answer = await forward(request, body, `${url.pathname}${url.search}`);
    let text = await answer.text();
    if (answer.ok && method === "GET" && url.pathname === "/v1/config" && options.credentialsEndpoint) {
      const config = JSON.parse(text) as { endpoints?: string[] };
      if (Array.isArray(config.endpoints)) config.endpoints = [...config.endpoints, CREDENTIALS_ENDPOINT];
      text = JSON.stringify(config);
    } else if (answer.ok && delegated && method === "GET" && tablePath) {
      const table = `${decodeURIComponent(tablePath[1]!)}.${decodeURIComponent(tablePath[2]!)}`;
      text = await withCredentials(text, table, "loadTable");
    } else if (answer.ok && delegated && method === "POST" && tablesPath) {
      const name = (JSON.parse(body.toString()) as { name: string }).name;
      text = await withCredentials(text, `${decodeURIComponent(tablesPath[1]!)}.${name}`, "createTable");
    }
    send(response, answer.status, answer.headers.get("content-type"), text);
  }

  function send(response: ServerResponse, status: number, contentType: string | null, text: string): void {
    response.writeHead(status, contentType ? { "content-type": contentType } : {});
    response.end(text);
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) {
        const message = error instanceof Error ? error.message : String(error);
        send(
          response,
          500,
          "application/json",
          JSON.stringify({ error: { message: `vending proxy: ${message}`, type: "ProxyError", code: 500 } }),
        );
      } else response.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  const revokeAll = async () => {
    await Promise.all([...outstanding.keys()].map((key) => revoke(key)));
  };
  return {
    uri: `http://127.0.0.1:${port}`,
    vended,
    revoked,
    revokeAll,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await revokeAll().catch(() => {});
    },
  };
}
