// The Tables page's health card in a real browser (Debian's Chromium, headless, playwright-core)
// against `floe serve`, the real broker and the real REST catalog: a job (set up through the API)
// synced twice, its table's data files, deleted rows and snapshots shown, then Maintain now: the
// pass's result and the last maintenance appear, and the health shows what the pass left, as the
// API reads it. The page is screenshotted into test-artifacts/ui/.
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { Page } from "playwright-core";
import { createTopics, producePhase } from "../../demo/seed-walkthrough.ts";
import { launchBrowser } from "../../dev/browser.ts";
import { bootstrapServers } from "../../dev/kafka.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";
import { root } from "../../dev/services/lib.ts";
import { startUiServer } from "../helpers/ui-server.ts";

const run = `${process.pid}_${Date.now()}`;
const prefix = `uim${run}_`;
const jobName = `uim_${run}`;
const artifacts = join(root, "test-artifacts", "ui");
const HOOK = { timeout: 180_000 };
const TEST = { timeout: 600_000 };

let ui: Awaited<ReturnType<typeof startUiServer>>;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let page: Page;
const pageErrors: string[] = [];

before(async () => {
  mkdirSync(artifacts, { recursive: true });
  ui = await startUiServer();
  browser = await launchBrowser();
  page = await browser.browser.newPage({ viewport: { width: 1440, height: 900 } });
  page.setDefaultTimeout(60_000);
  page.on("pageerror", (e) => pageErrors.push(e.message));
  await createTopics(prefix);
}, HOOK);
after(async () => {
  await browser?.close();
  await ui?.close();
}, HOOK);

const syncNow = () => ui.client.syncNow(jobName);

test("the Tables page shows each table's health, and Maintain now runs a pass", TEST, async () => {
  const api = ui.client;
  await api.createRestUpsertJob({
    name: jobName,
    source: "kafka",
    destination: "rest",
    topic: `${prefix}customers`,
    table: "customers",
    bootstrapServers,
    restUri: restCatalog.uri,
  });
  await producePhase(1, prefix);
  await syncNow();
  await producePhase(2, prefix);
  await syncNow();

  await page.goto(new URL(`#/jobs/${jobName}/tables`, ui.server.url).href);
  const row = page.getByTestId("health-customers");
  await row.waitFor();
  assert.equal(await row.getByTestId("health-data-files").textContent(), "2");
  assert.match((await page.getByTestId("last-maintenance").textContent()) ?? "", /Not maintained yet/);

  await page.getByTestId("maintain-button").click();
  const result = page.getByTestId("maintain-result");
  await result.waitFor();
  assert.match((await result.textContent()) ?? "", /^complete: .*customers: \d+ files compacted/);
  await page.getByText(/Last maintenance: .* \(complete\)/).waitFor();
  const health = (await api.get(`/api/jobs/${jobName}/health`)).body;
  const customers = health.tables.find((t: { table: string }) => t.table === "customers");
  assert.equal(await row.getByTestId("health-data-files").textContent(), String(customers.dataFiles));
  assert.equal(await row.getByTestId("health-snapshots").textContent(), String(customers.snapshots));
  await page.screenshot({ path: join(artifacts, "tables-health.png"), fullPage: true });
  assert.deepEqual(pageErrors, []);
});
