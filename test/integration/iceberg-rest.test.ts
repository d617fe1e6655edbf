// Smoke test of the REST catalog test service: it answers the protocol over plain HTTP on the
// loopback interface only, keeps its tables under the exported warehouse and accepts format v3
// tables, which floe writes.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { createConnection } from "node:net";
import { networkInterfaces } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { icebergRest, restCatalog } from "../services/iceberg-rest.ts";

const namespace = `smoke_${randomUUID().replaceAll("-", "")}`;
const table = "events";
const api = `${restCatalog.uri}/v1`;

async function call(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${api}${path}`, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function json(response: Response): Promise<Record<string, unknown>> {
  const text = await response.text();
  assert.ok(response.ok, `HTTP ${response.status}: ${text}`);
  return JSON.parse(text);
}

before(async () => {
  await icebergRest.install();
  await icebergRest.start();
  await json(await call("POST", "/namespaces", { namespace: [namespace], properties: {} }));
});

after(async () => {
  await call("DELETE", `/namespaces/${namespace}/tables/${table}?purgeRequested=true`);
  await call("DELETE", `/namespaces/${namespace}`);
  // The JDBC catalog leaves the emptied directories behind.
  rmSync(join(restCatalog.warehouse, namespace), { recursive: true, force: true });
});

/** Whether a TCP connection to host:port is accepted (a refusal, an error or no answer is not). */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port });
    const done = (accepted: boolean) => {
      socket.destroy();
      resolve(accepted);
    };
    socket.setTimeout(2000, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

test("it listens on 127.0.0.1 only, not on the machine's other addresses", async (t) => {
  const external = Object.values(networkInterfaces())
    .flatMap((addresses) => addresses ?? [])
    .filter((address) => !address.internal && !address.address.startsWith("fe80:"))
    .map((address) => address.address);
  if (external.length === 0) {
    t.skip("the machine has no address but loopback");
    return;
  }
  assert.ok(await accepts("127.0.0.1", restCatalog.port), `nothing listens on 127.0.0.1:${restCatalog.port}`);
  for (const address of external) {
    assert.equal(await accepts(address, restCatalog.port), false, `the catalog accepts connections on ${address}`);
  }
});

test("a created namespace is listed", async () => {
  const listed = (await json(await call("GET", "/namespaces"))).namespaces as string[][];
  assert.ok(
    listed.some((levels) => levels.length === 1 && levels[0] === namespace),
    `${namespace} missing from ${JSON.stringify(listed)}`,
  );
});

test("a format v3 table is created and loads back as v3", async () => {
  const schema = {
    type: "struct",
    "schema-id": 0,
    fields: [
      { id: 1, name: "id", required: true, type: "long" },
      { id: 2, name: "payload", required: false, type: "string" },
    ],
  };
  await json(
    await call("POST", `/namespaces/${namespace}/tables`, {
      name: table,
      schema,
      properties: { "format-version": "3" },
    }),
  );

  const loaded = await json(await call("GET", `/namespaces/${namespace}/tables/${table}`));
  const metadata = loaded.metadata as Record<string, unknown>;
  assert.equal(metadata["format-version"], 3);
  assert.equal(metadata["next-row-id"], 0, "v3 tables track row lineage from row id 0");
  assert.equal(metadata.location, `${restCatalog.warehouse}/${namespace}/${table}`);
});
