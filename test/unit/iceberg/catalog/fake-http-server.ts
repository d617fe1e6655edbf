// A scripted HTTP server on 127.0.0.1 for unit tests of the REST client: each route answers
// from a function, every request is recorded, and a route can cut the connection or never
// answer instead.
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";

export interface RecordedRequest {
  method: string;
  /** The raw request target: path and query exactly as sent. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export type Reply = { status?: number; json?: unknown; text?: string; contentType?: string } | "cut" | "hang";
export type Route = (request: RecordedRequest, seen: number) => Reply;

export interface FakeServer {
  uri: string;
  requests: RecordedRequest[];
  /** Routes keyed by "METHOD /path" (no query); unknown routes answer 404 NoSuchTableException. */
  routes: Map<string, Route>;
  close(): Promise<void>;
}

export async function fakeServer(): Promise<FakeServer> {
  const requests: RecordedRequest[] = [];
  const routes = new Map<string, Route>();
  const seen = new Map<string, number>();
  const server: Server = createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const request = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body };
    requests.push(request);
    const key = `${request.method} ${request.url.split("?")[0]}`;
    const count = (seen.get(key) ?? 0) + 1;
    seen.set(key, count);
    const route = routes.get(key);
    const reply: Reply = route
      ? route(request, count)
      : { status: 404, json: { error: { message: `no route ${key}`, type: "NoSuchTableException", code: 404 } } };
    if (reply === "cut") {
      req.socket.destroy();
      return;
    }
    if (reply === "hang") return;
    res.statusCode = reply.status ?? 200;
    if (reply.json !== undefined) {
      res.setHeader("content-type", "application/json");
      res.end(typeof reply.json === "string" ? reply.json : JSON.stringify(reply.json));
    } else {
      if (reply.contentType !== undefined) res.setHeader("content-type", reply.contentType);
      res.end(reply.text ?? "");
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    uri: `http://127.0.0.1:${port}`,
    requests,
    routes,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function icebergError(status: number, type: string, message: string): Reply {
  return { status, json: { error: { message, type, code: status } } };
}

/** The smallest table metadata a loadTable answer carries. */
export function tableMetadataJson(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    "format-version": 3,
    "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
    location: "/warehouse/ns/t",
    "last-sequence-number": 0,
    "last-updated-ms": 1700000000000,
    "last-column-id": 1,
    "current-schema-id": 0,
    schemas: [{ type: "struct", "schema-id": 0, fields: [{ id: 1, name: "id", required: true, type: "long" }] }],
    "default-spec-id": 0,
    "partition-specs": [{ "spec-id": 0, fields: [] }],
    "last-partition-id": 999,
    "default-sort-order-id": 0,
    "sort-orders": [{ "order-id": 0, fields: [] }],
    properties: {},
    "next-row-id": 0,
    ...overrides,
  };
}
