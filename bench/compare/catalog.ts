// The few REST catalog calls the comparison makes itself (Iceberg REST OpenAPI): a namespace per
// run, the sink's table made up front, a pre-loaded table registered under a new name, and the
// current snapshot's summary, which tells when a commit holds the last message.
import { restCatalog } from "../../dev/services/iceberg-rest.ts";

export const catalogUri = restCatalog.uri;

async function call(method: string, path: string, body?: unknown): Promise<unknown> {
  const response = await fetch(`${catalogUri}/v1/${path}`, {
    method,
    headers: { "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`REST catalog ${method} ${path}: ${response.status} ${text.slice(0, 500)}`);
  return text === "" ? undefined : JSON.parse(text);
}

export async function createNamespace(namespace: string): Promise<void> {
  await call("POST", "namespaces", { namespace: [namespace], properties: {} });
}

/** The orders' columns as the JVM systems declare them (floe infers its own from the JSON). */
export const ORDERS_SCHEMA = {
  type: "struct",
  "schema-id": 0,
  fields: [
    { id: 1, name: "id", required: false, type: "long" },
    { id: 2, name: "customer_id", required: false, type: "long" },
    { id: 3, name: "status", required: false, type: "string" },
    { id: 4, name: "amount", required: false, type: "double" },
    { id: 5, name: "currency", required: false, type: "string" },
    { id: 6, name: "created_at", required: false, type: "string" },
    { id: 7, name: "note", required: false, type: "string" },
  ],
};

export async function createTable(
  namespace: string,
  name: string,
  schema: unknown,
  properties: Record<string, string>,
): Promise<void> {
  await call("POST", `namespaces/${namespace}/tables`, { name, schema, properties });
}

interface LoadTableResult {
  "metadata-location": string;
  metadata: {
    "current-snapshot-id"?: number | null;
    snapshots?: { "snapshot-id": number; summary: Record<string, string> }[];
  };
}

export async function loadTable(namespace: string, name: string): Promise<LoadTableResult> {
  return (await call("GET", `namespaces/${namespace}/tables/${name}`)) as LoadTableResult;
}

/** The current snapshot's summary, or undefined while the table has none. */
export async function currentSummary(namespace: string, name: string): Promise<Record<string, string> | undefined> {
  const { metadata } = await loadTable(namespace, name);
  const id = metadata["current-snapshot-id"];
  if (id === undefined || id === null || id === -1) return undefined;
  return metadata.snapshots?.find((s) => s["snapshot-id"] === id)?.summary;
}

/** A new table over an existing metadata file: the pre-loaded table, fresh for each run. */
export async function registerTable(namespace: string, name: string, metadataLocation: string): Promise<void> {
  await call("POST", `namespaces/${namespace}/register`, { name, "metadata-location": metadataLocation });
}
