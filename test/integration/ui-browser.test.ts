// The UI in a real browser (Debian's Chromium, headless, driven by playwright-core) against
// `floe serve`, the real broker and the real REST catalog: create a source and a destination
// and test both, create a job with two streams of the seed walkthrough (customers upsert on id,
// orders append), Sync now twice, the run in the history with the walkthrough's commit report,
// its log, the table preview with the 10 customers; and a job whose target engines include one
// that reads no deletion vectors shows upsert disabled with the reason. Every page is
// screenshotted into test-artifacts/ui/.
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { Page } from "playwright-core";
import { createTopics, expected, producePhase } from "../../demo/seed-walkthrough.ts";
import { launchBrowser } from "../../dev/browser.ts";
import { bootstrapServers } from "../../dev/kafka.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";
import { root } from "../../dev/services/lib.ts";
import { schemaRegistry } from "../../dev/services/schema-registry.ts";
import { seaweedfs } from "../../dev/services/seaweedfs.ts";
import { startUiServer } from "../helpers/ui-server.ts";

const run = `${process.pid}_${Date.now()}`;
const prefix = `ui${run}_`;
const jobName = `ui_${run}`;
const artifacts = join(root, "test-artifacts", "ui");

let ui: Awaited<ReturnType<typeof startUiServer>>;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let page: Page;
const pageErrors: string[] = [];
// Every hook and test has a timeout: one that hangs (a browser that never launches, a wait that
// never ends) then fails, instead of being cancelled when the run is killed, which the spec
// reporter counts as neither passed nor failed.
const HOOK = { timeout: 180_000 };
const TEST = { timeout: 600_000 };

before(async () => {
  mkdirSync(artifacts, { recursive: true });
  ui = await startUiServer();
  browser = await launchBrowser();
  page = await browser.browser.newPage({ viewport: { width: 1440, height: 900 } });
  page.setDefaultTimeout(60_000);
  page.on("pageerror", (e) => pageErrors.push(e.message));
  await createTopics(prefix);
  await producePhase(1, prefix);
}, HOOK);
after(async () => {
  await browser?.close();
  await ui?.close();
}, HOOK);

const shot = (name: string) => page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });
const open = (hash: string) => page.goto(new URL(hash, ui.server.url).href);

async function waitForRuns(count: number) {
  // The history polls the API every 2 s; the page's CSP allows no string eval, so the test polls the rows.
  const deadline = Date.now() + 120_000;
  for (;;) {
    const rows = await page.getByTestId("run-row").allTextContents();
    if (rows.length >= count && rows.every((r) => r.includes("complete"))) return;
    assert.ok(Date.now() < deadline, `the history shows ${JSON.stringify(rows)}`);
    await page.waitForTimeout(250);
  }
}

test("create a source and a destination, and test both", TEST, async () => {
  await open("#/sources");
  const form = page.getByTestId("source-form");
  await form.locator('input[name="name"]').fill("kafka");
  await form.locator('input[name="bootstrap_servers"]').fill(bootstrapServers);
  await form.getByRole("button", { name: "Create source" }).click();
  const row = page.getByTestId("source-kafka");
  await row.getByRole("button", { name: "Test connection" }).click();
  await row
    .getByTestId("diagnosis")
    .getByText(/✔ connected to/)
    .waitFor();
  await shot("sources");

  await open("#/destinations");
  const dform = page.getByTestId("destination-form");
  await dform.locator('input[name="name"]').fill("catalog");
  await dform.locator('select[name="type"]').selectOption("rest");
  await dform.locator('input[name="uri"]').fill(restCatalog.uri);
  for (const engine of ["databricks", "duckdb", "spark"]) {
    await dform.getByLabel(engine, { exact: true }).check();
  }
  await dform.getByRole("button", { name: "Create destination" }).click();
  const drow = page.getByTestId("destination-catalog");
  await drow.getByRole("button", { name: "Test connection" }).click();
  await drow
    .getByTestId("diagnosis")
    .getByText(/✔ connected to the rest catalog/)
    .waitFor();

  // SeaweedFS's catalog asked with no credential: a real refusal (403), shown as floe check words it.
  await dform.locator('input[name="name"]').fill("refusing");
  await dform.locator('select[name="type"]').selectOption("rest");
  await dform.locator('input[name="uri"]').fill(seaweedfs.catalogUri);
  await dform.locator('input[name="rest_warehouse"]').fill(`s3://${seaweedfs.tableBucket}`);
  await dform.locator('select[name="auth"]').selectOption("none");
  await dform.getByRole("button", { name: "Create destination" }).click();
  const refusing = page.getByTestId("destination-refusing");
  await refusing.getByRole("button", { name: "Test connection" }).click();
  await refusing
    .getByTestId("diagnosis")
    .getByText(/✘ .*denied it \(HTTP 403.*on Unity Catalog: USE CATALOG.*\(auth\)/)
    .waitFor();
  await shot("destinations");
});

test(
  "a job with two streams of the walkthrough: Sync now twice, the commit report, the log, the preview",
  TEST,
  async () => {
    await open("#/jobs/new");
    await page.locator('input[name="job_name"]').fill(jobName);
    await page.locator('select[name="source"]').selectOption("kafka");
    await page.locator('select[name="destination"]').selectOption("catalog");
    await page.getByRole("button", { name: "continuous" }).click();
    await page
      .getByTestId("next-runs")
      .getByText(/Runs continuously/)
      .waitFor();
    await page.getByRole("button", { name: "every hour" }).click();
    await page
      .getByTestId("next-runs")
      .getByText(/Next runs/)
      .waitFor();
    assert.equal(await page.getByTestId("next-runs").locator("div").count(), 3);
    await page.locator('input[name="topic_pattern"]').fill(`${prefix}(customers|orders)`);
    await page.getByRole("button", { name: "Discover topics" }).click();
    const customers = page.getByTestId(`stream-${prefix}customers`);
    const orders = page.getByTestId(`stream-${prefix}orders`);
    await customers.waitFor();
    assert.match((await customers.textContent()) ?? "", /8/, "8 retained customers");
    await customers.locator('input[name="tick"]').check();
    await customers.locator('select[name="mode"]').selectOption("upsert");
    await customers.locator('input[name="key-id"]').check();
    await orders.locator('input[name="tick"]').check();
    await orders.locator('select[name="mode"]').selectOption("append");
    await shot("new-job");
    await page.getByTestId("save-job").click();
    await page.getByTestId(`job-${jobName}`).waitFor();

    const row = page.getByTestId(`job-${jobName}`);
    await row.getByRole("button", { name: "Sync now" }).click();
    await row.getByTestId("job-status").getByText("complete").waitFor({ timeout: 120_000 });
    await producePhase(2, prefix);
    await row.getByRole("button", { name: "Sync now" }).click();
    await open(`#/jobs/${jobName}/history`);
    await waitForRuns(2);
    await open("#/jobs");
    await page.getByTestId(`job-${jobName}`).waitFor();
    await shot("jobs");

    await open(`#/jobs/${jobName}/history`);
    await waitForRuns(2);
    await shot("history");
    await page.getByTestId("run-row").first().getByRole("link").click();
    const report = page.getByTestId(`report-${prefix}customers`);
    await report.waitFor();
    const cell = async (col: string) => Number(await report.locator(`[data-col="${col}"]`).textContent());
    assert.deepEqual(
      [await cell("dataFiles"), await cell("dvs"), await cell("records"), await cell("deleted")],
      [1, 1, expected.after_phase2.customers.added_records, expected.after_phase2.customers.deleted_positions],
    );
    await shot("run");

    await page.getByTestId("open-log").click();
    await page
      .getByTestId("log")
      .getByText(/committed \S+customers: 4 records added, 2 positions deleted/)
      .waitFor();
    await page.locator('input[name="q"]').fill("run complete");
    await page
      .getByTestId("log")
      .locator("div")
      .first()
      .getByText(/run complete: 12 messages/)
      .waitFor();
    await page.locator('input[name="q"]').fill("");
    await shot("log");

    await open(`#/jobs/${jobName}/tables`);
    const table = page.getByTestId(`table-${prefix}customers`);
    await table.waitFor();
    assert.equal(await table.getByTestId("records").textContent(), "10");
    assert.equal(await table.getByTestId("dvs").textContent(), "1");
    await table.getByTestId("preview-button").click();
    await table.getByTestId("preview").waitFor();
    assert.equal(await table.getByTestId("preview").locator("tbody tr").count(), expected.after_phase2.customers.rows);
    for (const c of expected.after_phase2.customers.rows_by_id) {
      await table.getByTestId("preview").getByText(c.name, { exact: true }).waitFor();
    }
    await shot("tables");

    await open(`#/jobs/${jobName}/plots`);
    await page.getByTestId("plot-files").locator("canvas").waitFor();
    await shot("plots");
  },
);

test(
  "a source with a schema registry and a stream with Avro values and keys: the job file's keys, the password write-only",
  TEST,
  async () => {
    await open("#/sources");
    const form = page.getByTestId("source-form");
    await form.locator('input[name="name"]').fill("with_registry");
    await form.locator('input[name="bootstrap_servers"]').fill(bootstrapServers);
    await form.locator('input[name="registry_url"]').fill(schemaRegistry.authUrl);
    await form.locator('select[name="registry_auth"]').selectOption("basic");
    await form.locator('input[name="registry_username"]').fill(schemaRegistry.username);
    await form.locator('input[name="registry_password"]').fill(schemaRegistry.password);
    await form.getByRole("button", { name: "Create source" }).click();
    await page.getByTestId("source-with_registry").waitFor();
    const stored = (await ui.client.get("/api/sources/with_registry")).body;
    assert.deepEqual(stored.kafka.schema_registry, {
      url: schemaRegistry.authUrl,
      auth: { basic: { username: schemaRegistry.username } },
    });
    assert.deepEqual(stored.secrets_set, ["kafka.schema_registry.auth.basic.password"]);
    // Edit shows the registry but never its password; saving with it empty keeps the stored one.
    await page.getByTestId("source-with_registry").getByRole("button", { name: "Edit" }).click();
    assert.equal(await form.locator('input[name="registry_url"]').inputValue(), schemaRegistry.authUrl);
    assert.equal(await form.locator('input[name="registry_password"]').inputValue(), "");
    await form.getByRole("button", { name: "Save" }).click();
    await page.getByText("New source").waitFor();
    assert.deepEqual((await ui.client.get("/api/sources/with_registry")).body.secrets_set, [
      "kafka.schema_registry.auth.basic.password",
    ]);
    assert.ok(!(await page.content()).includes(schemaRegistry.password), "the page holds no registry password");

    await open("#/jobs/new");
    await page.locator('input[name="job_name"]').fill(`${jobName}_avro`);
    await page.locator('select[name="source"]').selectOption("with_registry");
    await page.locator('select[name="destination"]').selectOption("catalog");
    await page.locator('input[name="topic_pattern"]').fill(`${prefix}orders`);
    await page.getByRole("button", { name: "Discover topics" }).click();
    const orders = page.getByTestId(`stream-${prefix}orders`);
    await orders.locator('input[name="tick"]').check();
    await orders.locator('select[name="format"]').selectOption("avro");
    await orders.locator('select[name="key_format"]').selectOption("avro");
    await page.getByTestId("save-job").click();
    await page.getByTestId(`job-${jobName}_avro`).waitFor();
    const job = (await ui.client.get(`/api/jobs/${jobName}_avro`)).body;
    assert.deepEqual(job.streams[`${prefix}orders`], {
      mode: "append",
      on_error: "dlq",
      format: "avro",
      key_format: "avro",
    });
  },
);

test(
  "a job whose target engines include one that reads no deletion vectors shows upsert disabled with the reason",
  TEST,
  async () => {
    await open("#/jobs/new");
    await page.locator('select[name="source"]').selectOption("kafka");
    await page.locator('select[name="destination"]').selectOption("catalog");
    await page.locator('input[name="override_engines"]').check();
    await page.locator('input[name="engine-duckdb"]').check();
    await page.locator('input[name="engine-athena"]').check();
    await page.locator('input[name="topic_pattern"]').fill(`${prefix}customers`);
    await page.getByRole("button", { name: "Discover topics" }).click();
    const customers = page.getByTestId(`stream-${prefix}customers`);
    await customers.getByTestId("upsert-disabled").waitFor();
    assert.match(
      (await customers.getByTestId("upsert-disabled").textContent()) ?? "",
      /athena reads Iceberg v2 position and equality deletes, not v3 deletion vectors/,
    );
    assert.equal(await customers.locator("option", { hasText: "upsert" }).isDisabled(), true);
    assert.match((await page.getByTestId("delete-format").textContent()) ?? "", /append only/);
    await shot("upsert-disabled");
    assert.deepEqual(pageErrors, [], "the pages threw no error");
  },
);
