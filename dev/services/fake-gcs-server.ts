// fake-gcs-server, the GCS of the tests: the JSON API (media, multipart and resumable uploads,
// ranged reads) on 127.0.0.1 over plain HTTP, objects under .local/fake-gcs-server/data. Built
// from the Go module proxy at a pinned version; the binary is kept under .local/fake-gcs-server/,
// named by the version. It takes any bearer token, so the tests check that floe sends one, not
// that GCS would accept it.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { daemonService, goInstall, localDir, type Service, ServiceError, spawnDaemon } from "./lib.ts";

const name = "fake-gcs-server";
export const FAKE_GCS_SERVER_VERSION = "v1.56.1";
const home = join(localDir, "fake-gcs-server");
const binDir = join(home, `bin-${FAKE_GCS_SERVER_VERSION}`);
const binary = join(binDir, "fake-gcs-server");
const dataDir = join(home, "data");
const port = Number(process.env.FLOE_TEST_FAKE_GCS_PORT ?? 4443);

export const fakeGcs = {
  endpoint: `http://127.0.0.1:${port}`,
  port,
  /** The bucket the tests write into. */
  bucket: "floe-gcs-warehouse",
  /** Any token does; floe must send one. */
  token: "floe-fake-gcs-token",
};

async function healthy(): Promise<boolean> {
  try {
    const response = await fetch(`${fakeGcs.endpoint}/storage/v1/b`, { signal: AbortSignal.timeout(2000) });
    const body = (await response.json()) as { kind?: unknown };
    return response.ok && body.kind === "storage#buckets";
  } catch {
    return false;
  }
}

function installBinary(): void {
  goInstall(name, "github.com/fsouza/fake-gcs-server", FAKE_GCS_SERVER_VERSION, binDir);
}

/** Creates a bucket unless it exists (409). */
export async function createGcsBucket(bucket: string): Promise<void> {
  const response = await fetch(`${fakeGcs.endpoint}/storage/v1/b`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: bucket }),
  });
  const text = await response.text();
  if (!response.ok && response.status !== 409) {
    throw new ServiceError(name, `creating bucket ${bucket}: HTTP ${response.status} ${text}`);
  }
}

/** The names of the objects under `prefix` in the test bucket. */
export async function gcsObjectNames(prefix: string, bucket = fakeGcs.bucket): Promise<string[]> {
  const names: string[] = [];
  let pageToken: string | undefined;
  do {
    const query = new URLSearchParams({ prefix, ...(pageToken ? { pageToken } : {}) });
    const response = await fetch(`${fakeGcs.endpoint}/storage/v1/b/${bucket}/o?${query}`);
    const body = (await response.json()) as { items?: { name: string }[]; nextPageToken?: string };
    names.push(...(body.items ?? []).map((i) => i.name));
    pageToken = body.nextPageToken;
  } while (pageToken);
  return names;
}

export const fakeGcsService: Service = daemonService({
  name,
  endpoint: fakeGcs.endpoint,
  waitingFor: `${fakeGcs.endpoint} to answer the JSON API`,
  ports: [port],
  portSetting: "FLOE_TEST_FAKE_GCS_PORT",
  healthy,
  install: installBinary,
  binary,
  launch() {
    mkdirSync(dataDir, { recursive: true });
    return spawnDaemon(
      name,
      binary,
      [
        "-scheme",
        "http",
        "-host",
        "127.0.0.1",
        "-port",
        String(port),
        "-backend",
        "filesystem",
        "-filesystem-root",
        dataDir,
        // Resumable upload sessions are handed out under this URL.
        "-external-url",
        fakeGcs.endpoint,
        "-public-host",
        `127.0.0.1:${port}`,
        "-log-level",
        "warn",
      ],
      { cwd: home },
    );
  },
  ready: () => createGcsBucket(fakeGcs.bucket),
  detail: `data ${dataDir}`,
});
