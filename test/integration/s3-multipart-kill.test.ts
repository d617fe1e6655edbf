// A data file too large for one PutObject goes up as a multipart upload; a sync SIGKILLed in the
// middle of it leaves no object anyone can see (only the open upload, invisible to listings and
// reads), and the next sync writes the table whole. `floe sync` runs as a child process with its
// S3 endpoint on a pass-through proxy that holds the upload's second part: the kill lands while
// the upload is open, on any machine. Parts are 5 MiB, so a file above 10 MiB is uploaded in
// parts; the messages carry random base64 text, which Parquet's zstd cannot shrink below that.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { createTopic, deleteTopic, produce } from "../../dev/kafka.ts";
import { type Readers, restS3Table, startReaders } from "../../dev/readers.ts";
import { startVendingProxy, type VendingProxy } from "../../dev/services/credential-vending-proxy.ts";
import { restS3Catalog } from "../../dev/services/iceberg-rest-s3.ts";
import { minio } from "../../dev/services/minio.ts";
import { envRef, writeJobFile } from "../helpers/job-file.ts";
import { abortUpload, objectKeys, uploadedParts } from "../helpers/s3.ts";
import { type HoldProxy, startHoldProxy } from "../helpers/s3-hold-proxy.ts";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const dir = mkdtempSync(join(tmpdir(), "floe-s3-kill-"));
const run = `${process.pid}_${Date.now()}`;
const topic = `s3kill${run}_blobs`;
const name = `s3kill_${run}`;
const namespace = `${name}_topics`;
const MESSAGES = 1500;
/** ~12 KB of base64 per message: about 14 MiB of Parquet, three 5 MiB parts. */
const PAYLOAD_BYTES = 9000;

let readers: Readers;
let catalogProxy: VendingProxy;
let s3Proxy: HoldProxy;
before(async () => {
  catalogProxy = await startVendingProxy({ upstream: restS3Catalog.uri, placement: "storage-credentials" });
  s3Proxy = await startHoldProxy((method, url) => method === "PUT" && /[?&]partNumber=2(&|$)/.test(url));
  readers = await startReaders({ s3: true });
  await createTopic(topic, 1);
  for (let start = 0; start < MESSAGES; start += 50) {
    await produce(
      topic,
      Array.from({ length: Math.min(50, MESSAGES - start) }, (_, i) => ({
        value: JSON.stringify({ id: start + i, blob: randomBytes(PAYLOAD_BYTES).toString("base64") }),
      })),
    );
  }
});
after(async () => {
  await readers?.close();
  await catalogProxy?.close();
  await s3Proxy?.close();
  await deleteTopic(topic);
});

const jobPath = join(dir, "job.yaml");
writeJobFile(jobPath, {
  name,
  kafka: { topic_pattern: `^${topic}$` },
  iceberg: {
    catalog: { type: "rest", uri: envRef("CATALOG_URI") },
    storage: { s3: { endpoint: envRef("S3_ENDPOINT"), region: minio.region, part_size_bytes: 5242880 } },
  },
  streams: { [topic]: { mode: "append", table: "blobs" } },
});

function sync(): {
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
  kill: () => void;
} {
  const child = spawn(
    process.execPath,
    ["src/cli/main.ts", "sync", "--config", jobPath, "--json", "--state-dir", join(dir, "state")],
    {
      cwd: repo,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        CATALOG_URI: catalogProxy.uri,
        S3_ENDPOINT: s3Proxy.endpoint,
        AWS_EC2_METADATA_DISABLED: "true",
      },
    },
  );
  let stderr = "";
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  // The JSON report (or the error) is on stdout.
  child.stdout.on("data", (d) => {
    stderr += d;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal, stderr })),
  );
  return { exited, kill: () => child.kill("SIGKILL") };
}

test("a sync killed during a multipart upload leaves no visible object; the next sync lands every row", async () => {
  const tablePrefix = `warehouse/${namespace}/blobs/`;
  const first = sync();
  const heldOrExit = await Promise.race([s3Proxy.held, first.exited.then((e) => `exit ${JSON.stringify(e)}`)]);
  assert.match(heldOrExit, /^PUT .*uploadId=/, "the sync reached the second part of a multipart upload");
  first.kill();
  assert.equal((await first.exited).signal, "SIGKILL");

  // PUT /<bucket>/<key>?partNumber=2&uploadId=<id>: the data file being uploaded.
  const heldUrl = new URL(heldOrExit.split(" ")[1]!, "http://x");
  const key = decodeURIComponent(heldUrl.pathname).slice(`/${minio.warehouseBucket}/`.length);
  const uploadId = heldUrl.searchParams.get("uploadId")!;
  assert.ok(key.startsWith(`${tablePrefix}data/`) && key.endsWith(".parquet"), key);
  assert.deepEqual(await objectKeys(`${tablePrefix}data/`), [], "no data file is visible, under its name or another");
  assert.ok(!(await uploadedParts(key, uploadId)).includes(2), "the upload is open, without the part held");

  s3Proxy.release();
  const second = sync();
  const done = await second.exited;
  assert.equal(done.code, 0, done.stderr);
  const files = (await objectKeys(`${tablePrefix}data/`)).filter((k) => k.endsWith(".parquet"));
  assert.equal(files.length, 1, `one data file: ${files.join(", ")}`);

  // What a bucket lifecycle rule (AbortIncompleteMultipartUpload) would do to the parts left.
  await abortUpload(key, uploadId);

  for (const engine of readers.engines) {
    const rows = await readers.rows(engine, restS3Table(namespace, "blobs"), { columns: ["id"] });
    assert.deepEqual(
      rows.map((r) => r.id),
      Array.from({ length: MESSAGES }, (_, i) => BigInt(i)),
      `${engine} reads every row once`,
    );
  }
});
