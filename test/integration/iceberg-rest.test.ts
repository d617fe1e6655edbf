// Smoke test of the REST catalog test service: it answers the protocol over plain HTTP on the
// loopback interface only, keeps its tables under the exported warehouse and accepts format v3
// tables, which floe writes.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { icebergRest, restCatalog } from "../../dev/services/iceberg-rest.ts";

const namespace = `smoke_${randomUUID().replaceAll("-", "")}`;
const table = "events";
const api = `${restCatalog.uri}/v1`;

async function call(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${api}${path}`, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? null : JSON.stringify(body),
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

test("it listens on 127.0.0.1 only, not on the machine's other addresses", () => {
  // Read from the kernel's socket tables rather than by connecting to the machine's other
  // addresses: tests send traffic to loopback only.
  const listening = listeningAddresses(restCatalog.port);
  assert.deepEqual(listening, ["127.0.0.1"], `sockets listening on port ${restCatalog.port}: ${listening.join(", ")}`);
});

/** The local addresses of the TCP sockets in LISTEN state on `port`, from /proc/net/tcp and tcp6. */
function listeningAddresses(port: number): string[] {
  const addresses = new Set<string>();
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (!local || state !== "0A") continue; // 0A: LISTEN
      const [hex, portHex] = local.split(":");
      if (Number.parseInt(portHex!, 16) !== port) continue;
      addresses.add(hex!.length === 8 ? ipv4(hex!) : ipv6(hex!));
    }
  }
  return [...addresses].sort();
}

/** /proc/net/tcp spells an IPv4 address as one little-endian 32-bit hex word. */
function ipv4(hex: string): string {
  return [6, 4, 2, 0].map((i) => Number.parseInt(hex.slice(i, i + 2), 16)).join(".");
}

/** IPv6 as four little-endian 32-bit words; "::" for the wildcard; an IPv4-mapped address as the IPv4 one (a JVM binds 127.0.0.1 so). */
function ipv6(hex: string): string {
  if (/^0+$/.test(hex)) return "::";
  const words = [0, 8, 16, 24].map((i) =>
    hex
      .slice(i, i + 8)
      .match(/../g)!
      .reverse()
      .join(""),
  );
  if (words.slice(0, 2).every((w) => w === "00000000") && words[2] === "0000FFFF") return ipv4(hex.slice(24));
  return words.join("").match(/..../g)!.join(":").toLowerCase();
}

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
