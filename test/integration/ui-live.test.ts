// A running sync seen through `floe serve`: the run stands still at a fault point (the data
// files written, their commit not yet made) while the API and the UI show it running, with its
// progress per partition; Cancel on the Jobs page asks first, shows "cancelling", reaches the
// run, which then shows "cancelled"; once let go, it lands what it read.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { createTopics, producePhase } from "../../demo/seed-walkthrough.ts";
import { launchBrowser } from "../../dev/browser.ts";
import { bootstrapServers } from "../../dev/kafka.ts";
import { root } from "../../dev/services/lib.ts";
import { type Json, UiClient } from "../helpers/ui-server.ts";

const run = `${process.pid}_${Date.now()}`;
const prefix = `live${run}_`;
const jobName = `live_${run}`;
const stateDir = mkdtempSync(join(tmpdir(), "floe-serve-live-"));
const pauseFile = join(stateDir, "paused");
let server: ChildProcess;
let api: UiClient;

before(async () => {
  await createTopics(prefix);
  await producePhase(1, prefix);
  server = spawn(
    process.execPath,
    [join(root, "src", "cli", "main.ts"), "serve", "--state-dir", stateDir, "--listen", "127.0.0.1:0", "--no-auth"],
    {
      env: { ...process.env, FLOE_FAULT_AT: "after-data-files", FLOE_FAULT: "pause", FLOE_FAULT_FILE: pauseFile },
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    server.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const m = /the UI is at (http:\/\/\S+\/)/.exec(out);
      if (m) resolve(m[1]!);
    });
    server.once("exit", (code) => reject(new Error(`floe serve exited with ${code}`)));
  });
  api = new UiClient(url);
  await api.session();
});
after(async () => {
  rmSync(pauseFile, { force: true });
  server?.kill("SIGTERM");
  await new Promise((resolve) => server?.once("exit", resolve));
  rmSync(stateDir, { recursive: true, force: true });
});

test("a running sync shows its progress per partition, and Cancel reaches it", async () => {
  assert.equal(
    (await api.post("/api/sources", { name: "k", kafka: { bootstrap_servers: [bootstrapServers] } })).status,
    201,
  );
  assert.equal(
    (await api.post("/api/destinations", { name: "d", iceberg: { catalog: { type: "sql", warehouse: "./wh" } } }))
      .status,
    201,
  );
  const created = await api.post("/api/jobs", {
    name: jobName,
    source: "k",
    destination: "d",
    streams: { [`${prefix}orders`]: { mode: "append", table: "orders" } },
  });
  assert.equal(created.status, 201, created.text);
  const { runId } = (await api.post(`/api/jobs/${jobName}/sync`)).body;
  while (!existsSync(pauseFile)) await new Promise((resolve) => setTimeout(resolve, 100));

  const running = await api.get(`/api/runs/${runId}`);
  assert.equal(running.body.status, "running");
  assert.deepEqual(
    running.body.progress.map((p: Json) => [p.topic, p.partition, p.messages, p.nextOffset, p.stopOffset]),
    [[`${prefix}orders`, 0, 40, "40", "40"]],
  );
  const jobs = await api.get("/api/jobs");
  assert.equal(jobs.body[0].runningRun, runId);
  assert.equal((await api.post(`/api/jobs/${jobName}/sync`)).body.runId, runId, "one run of a job at a time");

  const browser = await launchBrowser();
  try {
    const page = await browser.browser.newPage({ viewport: { width: 1440, height: 700 } });
    await page.goto(new URL(`#/runs/${runId}`, api.base).href);
    await page
      .getByTestId("live-progress")
      .getByText(/40 read, offset 40 of 40/)
      .waitFor({ timeout: 60_000 });
    await page
      .getByTestId("overall-progress")
      .getByText(/40 of 40 \(100%\) · \d+ msg\/s · ETA 0 s/)
      .waitFor();
    mkdirSync(join(root, "test-artifacts", "ui"), { recursive: true });
    await page.screenshot({ path: join(root, "test-artifacts", "ui", "run-live.png"), fullPage: true });

    // Cancel from the Jobs page: it asks first, then shows "cancelling" until the run stops.
    await page.goto(new URL("#/jobs", api.base).href);
    const row = page.getByTestId(`job-${jobName}`);
    const dialogs: string[] = [];
    page.once("dialog", async (d) => {
      dialogs.push(d.message());
      await d.dismiss();
    });
    await row.getByRole("button", { name: "Cancel" }).click();
    assert.match(dialogs[0] ?? "", /Cancel the running sync of/, "Cancel asks first");
    assert.equal((await api.get(`/api/runs/${runId}`)).body.status, "running", "a dismissed Cancel cancels nothing");
    page.once("dialog", (d) => d.accept());
    await row.getByRole("button", { name: "Cancel" }).click();
    await row.getByTestId("job-status").getByText("cancelling").waitFor();
    await page
      .getByTestId("toasts")
      .getByText(/Cancelling the sync of/)
      .waitFor();
    rmSync(pauseFile);
    await row.getByTestId("job-status").getByText("cancelled", { exact: true }).waitFor({ timeout: 60_000 });
    await page.goto(new URL(`#/runs/${runId}`, api.base).href);
    await page.locator(".status", { hasText: "cancelled" }).waitFor();
  } finally {
    await browser.close();
  }

  let done: Json;
  do {
    await new Promise((resolve) => setTimeout(resolve, 200));
    done = (await api.get(`/api/runs/${runId}`)).body;
  } while (done.status === "running");
  // Everything was read before the cancel: what was read lands, and the run says it was cancelled.
  assert.equal(done.status, "complete", JSON.stringify(done));
  assert.equal(done.cancelled, true);
  assert.equal(done.report.tables[0].recordsAdded, 40);
  await api.checkAgainstOpenApi();
});
