// The UI in a real browser (Debian's Chromium through playwright-core) against `floe serve`
// and the real broker, for what a new user found misleading: the edit page holds the job's own
// source and destination on every load and saves an unchanged job unchanged; the topic field
// says what it does; errors show at their fields with human labels, aria-invalid and the
// focus; connection health is stored and dated, and a form can be tested before it is saved;
// a run with dead letters is a warning; the Jobs table fits 1400 px and 390 px, Sync now says
// it started, the Run and Log pages name their job, an unknown route is Not found; the plots
// keep a sane time axis in UTC. Every page is screenshotted at 1400 px and 390 px, light and
// dark, into test-artifacts/ui/.
//
// The tables it writes (an embedded SQLite catalog) are checked through floe's own preview:
// what they hold is the seed walkthrough's, which the engine tests compare across readers.
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { Page } from "playwright-core";
import { createTopics, expected, producePhase } from "../../demo/seed-walkthrough.ts";
import { launchBrowser } from "../../dev/browser.ts";
import { bootstrapServers, createTopic, produce } from "../../dev/kafka.ts";
import { root } from "../../dev/services/lib.ts";
import { startUiServer } from "../helpers/ui-server.ts";

// The browser's globals as the page.evaluate callbacks use them (the tests compile without the DOM library).
interface Element {
  value?: string;
  getAttribute(name: string): string | null;
  getBoundingClientRect(): { right: number };
}
declare const document: {
  querySelector(selector: string): Element | null;
  activeElement: unknown;
  documentElement: { scrollWidth: number };
};
declare const innerWidth: number;

const run = `${process.pid}_${Date.now()}`;
const prefix = `um${run}_`;
const jobName = `um_${run}`;
const badTopic = `${prefix}bad`;
const artifacts = join(root, "test-artifacts", "ui");

let ui: Awaited<ReturnType<typeof startUiServer>>;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let page: Page;
const pageErrors: string[] = [];
const HOOK = { timeout: 180_000 };
const TEST = { timeout: 300_000 };

const open = async (hash: string) => {
  await page.goto(new URL(hash, ui.server.url).href);
};

before(async () => {
  mkdirSync(artifacts, { recursive: true });
  ui = await startUiServer();
  browser = await launchBrowser();
  page = await browser.browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.setDefaultTimeout(30_000);
  page.on("pageerror", (e) => pageErrors.push(e.message));
  page.on("dialog", (d) => d.accept());
  await createTopics(prefix);
  await producePhase(1, prefix);
  await createTopic(badTopic);
  await produce(badTopic, [{ value: '{"id": 1, "v": "fine"}' }, { value: "this is not JSON" }]);
  // Sources and destinations named so that the job's are NOT the first of their lists: a select
  // that falls back to its first option shows another one.
  const c = ui.client;
  for (const name of ["a_other", "b_job"]) {
    assert.equal(
      (await c.post("/api/sources", { name, kafka: { bootstrap_servers: [bootstrapServers] } })).status,
      201,
    );
  }
  for (const name of ["a_other_wh", "b_job_wh"]) {
    const created = await c.post("/api/destinations", {
      name,
      iceberg: { catalog: { type: "sql", warehouse: `./${name}` } },
    });
    assert.equal(created.status, 201, created.text);
  }
  const job = await c.post("/api/jobs", {
    name: jobName,
    source: "b_job",
    destination: "b_job_wh",
    streams: {
      [`${prefix}customers`]: { mode: "upsert", dedup_keys: ["id"] },
      [`${prefix}orders`]: { mode: "append" },
    },
  });
  assert.equal(job.status, 201, job.text);
}, HOOK);
after(async () => {
  await browser?.close();
  await ui?.close();
}, HOOK);

test(
  "the edit page holds the job's own source and destination on every load, and saves an unchanged job unchanged",
  TEST,
  async () => {
    const before = (await ui.client.get(`/api/jobs/${jobName}`)).text;
    const exported = (await ui.client.get(`/api/jobs/${jobName}/export`)).text;
    const seen: string[] = [];
    // Each order of arrival, by holding back one answer or another: the job's record, or the lists.
    let load = 0;
    const delays = [
      { job: 0, lists: 0 },
      { job: 400, lists: 0 },
      { job: 0, lists: 400 },
    ];
    const hold = (which: "job" | "lists") => async (route: import("playwright-core").Route) => {
      await new Promise((resolve) => setTimeout(resolve, delays[load % 3]![which]));
      await route.continue();
    };
    await page.route(`**/api/jobs/${jobName}`, hold("job"));
    await page.route(/\/api\/(sources|destinations)$/, hold("lists"));
    await open(`#/jobs/${jobName}/edit`);
    for (let i = 0; i < 15; i++) {
      load = i;
      if (i > 0) await page.reload();
      await page.waitForFunction((name) => document.querySelector('input[name="job_name"]')?.value === name, jobName);
      // Whatever arrives last (the job, the sources, the destinations), the selects end on the job's.
      await page.waitForTimeout(i % 3 === 0 ? 0 : 150);
      seen.push(
        `${await page.locator('select[name="source"]').inputValue()}/${await page.locator('select[name="destination"]').inputValue()}`,
      );
    }
    assert.deepEqual(seen, Array(15).fill("b_job/b_job_wh"), "the selects show the job's source and destination");
    await page.unrouteAll();
    assert.equal(
      await page.locator('input[name="topic_pattern"]').inputValue(),
      "",
      "the topic field is not rewritten",
    );

    await page.getByTestId("save-job").click();
    await page.getByTestId(`job-${jobName}`).waitFor();
    assert.equal((await ui.client.get(`/api/jobs/${jobName}`)).text, before, "the job's record is unchanged");
    assert.equal((await ui.client.get(`/api/jobs/${jobName}/export`)).text, exported, "the job file is unchanged");

    // Dedup keys change without running Discover again.
    await open(`#/jobs/${jobName}/edit`);
    const keys = page.getByTestId(`stream-${prefix}customers`).locator('input[name="dedup_keys"]');
    assert.equal(await keys.inputValue(), "id");
    await keys.fill("id, name");
    await keys.blur();
    await page.getByTestId("save-job").click();
    await page.getByTestId(`job-${jobName}`).waitFor();
    const saved = (await ui.client.get(`/api/jobs/${jobName}`)).body;
    assert.deepEqual(saved.streams[`${prefix}customers`], { mode: "upsert", dedup_keys: ["id", "name"] });
    // Back as it was, for the tests below.
    await ui.client.put(`/api/jobs/${jobName}`, JSON.parse(before));
  },
);

test(
  "a new user sees the steps of a first pipeline, ticked as they are done; New job after Edit is a fresh form",
  TEST,
  async () => {
    const fresh = await startUiServer();
    try {
      await page.goto(new URL("#/jobs", fresh.server.url).href);
      const steps = page.getByTestId("getting-started").locator("li");
      await steps.first().waitFor();
      assert.equal(await steps.count(), 3);
      assert.equal(await page.getByTestId("getting-started").locator("li.done").count(), 0);
      await fresh.client.post("/api/sources", { name: "k", kafka: { bootstrap_servers: [bootstrapServers] } });
      await fresh.client.post("/api/sources/k/test");
      await page.reload();
      await page.getByTestId("getting-started").locator("li.done").getByText("(tested ✔)").waitFor();
    } finally {
      await fresh.close();
    }
    await open(`#/jobs/${jobName}/edit`);
    await page.waitForFunction((name) => document.querySelector('input[name="job_name"]')?.value === name, jobName);
    await page.evaluate(() => {
      (globalThis as unknown as { location: { hash: string } }).location.hash = "#/jobs/new";
    });
    await page.getByRole("heading", { name: "New job" }).waitFor();
    assert.equal(await page.locator('input[name="job_name"]').inputValue(), "");
    assert.equal(await page.locator('input[name="job_name"]').isEnabled(), true);
  },
);

test(
  "the topic field says what it does: empty lists all topics, and no pick is named at the streams, not as a required pattern",
  TEST,
  async () => {
    await open("#/jobs/new");
    await page.locator('input[name="job_name"]').fill(`${jobName}_new`);
    const hint =
      (await page.locator(".field", { has: page.locator('input[name="topic_pattern"]') }).textContent()) ?? "";
    assert.match(hint, /empty: all topics/);
    await page.getByTestId("save-job").click();
    await page
      .getByTestId("streams-issue")
      .getByText(/tick at least one topic/)
      .waitFor();
    assert.equal(await page.locator('input[name="topic_pattern"]').getAttribute("aria-invalid"), null);
    assert.doesNotMatch((await page.locator("main").textContent()) ?? "", /required/i);

    await page.locator('select[name="source"]').selectOption("b_job");
    await page.locator('select[name="destination"]').selectOption("b_job_wh");
    await page.locator('input[name="topic_pattern"]').fill(`${prefix}orders`);
    await page.getByRole("button", { name: "Discover topics" }).click();
    await page.getByTestId(`stream-${prefix}orders`).locator('input[name="tick"]').check();
    await page.getByTestId("save-job").click();
    await page.getByTestId(`job-${jobName}_new`).waitFor();
    assert.deepEqual(Object.keys((await ui.client.get(`/api/jobs/${jobName}_new`)).body.streams), [`${prefix}orders`]);
  },
);

test(
  "errors show at their field with a human label, aria-invalid, aria-describedby and the focus; a delete refused shows above the list",
  TEST,
  async () => {
    await open("#/sources");
    const form = page.getByTestId("source-form");
    await form.locator('input[name="name"]').fill("broken");
    await form.locator('input[name="bootstrap_servers"]').fill("no port here");
    await form.getByRole("button", { name: "Create source" }).click();
    const input = form.locator('input[name="bootstrap_servers"]');
    await page.locator('input[name="bootstrap_servers"][aria-invalid="true"]').waitFor();
    const describedBy = (await input.getAttribute("aria-describedby")) ?? "";
    const messages = await Promise.all(describedBy.split(" ").map((id) => page.locator(`[id="${id}"]`).textContent()));
    const errorText = messages.find((m) => m && m !== "host:port, comma-separated") ?? "";
    assert.ok(errorText.length > 0, "the input is described by its error");
    assert.equal(await input.evaluate((el) => el === document.activeElement), true, "the invalid field has the focus");
    const text = (await page.locator("main").textContent()) ?? "";
    assert.doesNotMatch(text, /kafka\.bootstrap_servers/, "no JSON path in what the user reads");
    assert.equal(text.split(errorText).length - 1, 1, `the message is shown once: ${errorText}`);
    await page.screenshot({ path: join(artifacts, "field-error.png") });

    // A source in use: the refusal is the list's, not the New source form's.
    await page.getByTestId("source-b_job").getByRole("button", { name: "Delete" }).click();
    const listError = page.getByTestId("error").filter({ hasText: /used by job/ });
    await listError.waitFor();
    assert.equal(await form.getByText(/used by job/).count(), 0, "the New source form holds no delete error");
  },
);

test("connection health is stored and dated; a form is tested before it is saved", TEST, async () => {
  await open("#/sources");
  const row = page.getByTestId("source-b_job");
  await row.getByRole("button", { name: "Test connection" }).click();
  await row
    .getByTestId("diagnosis")
    .getByText(/✔ connected to/)
    .waitFor();
  await page.reload();
  await row
    .getByTestId("diagnosis")
    .getByText(/✔ connected to/)
    .waitFor();
  assert.match((await row.getByTestId("tested-at").textContent()) ?? "", /tested \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/);
  assert.ok((await ui.client.get("/api/sources/b_job")).body.health.testedAt);

  const form = page.getByTestId("source-form");
  await form.locator('input[name="name"]').fill("unsaved");
  await form.locator('input[name="bootstrap_servers"]').fill(bootstrapServers);
  await form.getByRole("button", { name: "Test these settings" }).click();
  await form
    .getByTestId("form-test")
    .getByText(/✔ connected to/)
    .waitFor();
  assert.equal((await ui.client.get("/api/sources/unsaved")).status, 404, "testing saved nothing");
});

test(
  "a run with dead letters is a warning; Sync now says it started; the Run and Log pages name their job",
  TEST,
  async () => {
    const created = await ui.client.post("/api/jobs", {
      name: `${jobName}_dlq`,
      source: "b_job",
      destination: "b_job_wh",
      streams: { [badTopic]: { mode: "append" } },
    });
    assert.equal(created.status, 201, created.text);
    await open("#/jobs");
    const row = page.getByTestId(`job-${jobName}_dlq`);
    await row.getByRole("button", { name: "Sync now" }).click();
    await page.getByTestId("toasts").getByText(`Sync of ${jobName}_dlq started`).waitFor();
    const status = row.getByTestId("job-status").locator(".status");
    await status.getByText(/dead letter/).waitFor({ timeout: 120_000 });
    assert.doesNotMatch((await status.getAttribute("class")) ?? "", /status-complete/, "not a green complete");

    const runs = (await ui.client.get(`/api/jobs/${jobName}_dlq/runs`)).body;
    assert.equal(runs[0].deadLetters, 1);
    await open(`#/runs/${runs[0].id}`);
    await page.getByRole("heading", { name: new RegExp(`Run of ${jobName}_dlq`) }).waitFor();
    await page.getByTestId("open-log").click();
    await page.getByRole("heading", { name: new RegExp(`Log of ${jobName}_dlq`) }).waitFor();

    await open("#/no/such/page");
    await page.getByRole("heading", { name: "Not found" }).waitFor();
  },
);

test("the Jobs table fits 1400 px with its actions in a menu, and 390 px", TEST, async () => {
  await ui.client.post(`/api/jobs/${jobName}/sync`);
  for (let i = 0; i < 240 && (await ui.client.get(`/api/jobs/${jobName}/runs`)).body[0]?.status !== "complete"; i++) {
    await page.waitForTimeout(500);
  }
  await open("#/jobs");
  const row = page.getByTestId(`job-${jobName}`);
  await row.waitFor();
  const fits = () =>
    page.evaluate(() => {
      const table = document.querySelector('[data-testid="jobs-table"]')!;
      return {
        table: table.getBoundingClientRect().right,
        page: document.documentElement.scrollWidth,
        view: innerWidth,
      };
    });
  const wide = await fits();
  assert.ok(wide.table <= 1400 && wide.page <= 1400, `the Jobs table fits 1400 px: ${JSON.stringify(wide)}`);
  assert.ok((await row.locator("button:visible, a.button:visible").count()) <= 2, "at most two buttons a row");
  await row.getByTestId("job-menu").locator("summary").click();
  for (const action of ["Edit", "Export job file", "Delete"]) {
    assert.ok(await row.getByTestId("job-menu").getByText(action, { exact: true }).isVisible(), `${action} reachable`);
  }
  await page.setViewportSize({ width: 390, height: 844 });
  const narrow = await fits();
  assert.ok(narrow.page <= 390, `nothing wider than 390 px: ${JSON.stringify(narrow)}`);
  assert.ok(await row.getByRole("button", { name: "Sync now" }).isVisible());
  await page.setViewportSize({ width: 1400, height: 900 });
});

test("the plots keep a time axis of hours in UTC, whole counts and labels that fit", TEST, async () => {
  await open(`#/jobs/${jobName}/plots`);
  const files = page.getByTestId("plot-files").locator(".chart");
  await files.locator("canvas").waitFor();
  await page.waitForFunction(() =>
    document.querySelector('[data-testid="plot-files"] .chart')?.getAttribute("data-x-labels"),
  );
  for (const id of ["plot-rate", "plot-files", "plot-lag"]) {
    const chart = page.getByTestId(id).locator(".chart");
    if ((await chart.count()) === 0) continue;
    const span = Number(await chart.getAttribute("data-x-span"));
    assert.ok(span >= 3600 && span < 86_400, `${id}: an axis of an hour or so around one run, not ${span} s`);
    const xLabels = ((await chart.getAttribute("data-x-labels")) ?? "").split("|");
    for (const l of xLabels) assert.match(l, /^\d\d:\d\d$/, `${id}: 24-hour UTC ticks, not ${l}`);
    const yLabels = ((await chart.getAttribute("data-y-labels")) ?? "").split("|");
    for (const l of yLabels) assert.match(l, /^\d+(\.\d[kM]|[kM])?$/, `${id}: a whole count, not ${l}`);
    const width = Number(await chart.getAttribute("data-y-axis-width"));
    const longest = Math.max(...yLabels.map((l) => l.length));
    assert.ok(width >= 24 + longest * 7, `${id}: the y axis (${width} px) holds its labels (${longest} chars)`);
  }
});

test("History shows the rows per stream; Tables say where each table lives", TEST, async () => {
  await open(`#/jobs/${jobName}/history`);
  const perStream = page.getByTestId("run-row").first().getByTestId("per-stream");
  await perStream.getByText(/customers/).waitFor();
  const text = (await perStream.textContent()) ?? "";
  assert.match(text, new RegExp(`customers ${expected.after_phase1.customers.rows}`));
  assert.match(text, new RegExp(`orders ${expected.after_phase1.orders.rows}`));
  await open(`#/jobs/${jobName}/tables`);
  const where = page.getByTestId(`table-${prefix}customers`).getByTestId("where");
  await where.waitFor();
  assert.match((await where.textContent()) ?? "", /in destination b_job_wh · location \S+/);
});

test("screenshots of each page at 1400 px and 390 px, light and dark", TEST, async () => {
  const runs = (await ui.client.get(`/api/jobs/${jobName}/runs`)).body;
  const pages: [string, string][] = [
    ["jobs", "#/jobs"],
    ["sources", "#/sources"],
    ["destinations", "#/destinations"],
    ["edit-job", `#/jobs/${jobName}/edit`],
    ["history", `#/jobs/${jobName}/history`],
    ["run", `#/runs/${runs[0].id}`],
    ["log", `#/runs/${runs[0].id}/log`],
    ["tables", `#/jobs/${jobName}/tables`],
    ["plots", `#/jobs/${jobName}/plots`],
    ["audit", "#/audit"],
  ];
  for (const scheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const width of [1400, 390]) {
      await page.setViewportSize({ width, height: width > 1000 ? 900 : 844 });
      for (const [name, hash] of pages) {
        await open(hash);
        await page.locator("main h1").first().waitFor();
        await page.waitForTimeout(name === "plots" || name === "tables" ? 1500 : 300);
        await page.screenshot({ path: join(artifacts, `${name}-${width}-${scheme}.png`), fullPage: true });
        const wide = await page.evaluate(() => document.documentElement.scrollWidth);
        assert.ok(wide <= width, `${name} at ${width} px is ${wide} px wide: nothing may run off the side`);
      }
    }
  }
  await page.emulateMedia({ colorScheme: "light" });
  await page.setViewportSize({ width: 1400, height: 900 });
  const table = (await ui.client.get(`/api/jobs/${jobName}/tables`)).body.find(
    (t: { name: string }) => t.name === `${prefix}customers`,
  );
  assert.equal(
    table.records,
    expected.after_phase1.customers.rows,
    "the job's sync landed the walkthrough's customers",
  );
  assert.deepEqual(pageErrors, [], "the pages threw no error");
  assert.ok((await ui.client.checkAgainstOpenApi()) > 0, "the answers match the OpenAPI document");
});
