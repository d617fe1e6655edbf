// The job page's Consumer group card in a real browser (Debian's Chromium, headless,
// playwright-core) against `floe serve`, the real broker and the REST fixture catalog: a job of
// floe serve (set up through the API) over a topic of 4 partitions holding 5 messages each. With
// no member the card says the group has none; then two members join the job's group (as `floe run`
// replicas do), one of them with a client id made of markup, and the card lists both with host,
// partitions, lag and what each did at the last rebalance, and the rebalance's generation, all as
// the API reads them; the markup is shown as text, never run. A job name made of markup in the
// page's address is a "no job" error, shown as text. Screenshotted into test-artifacts/ui/.
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { Page } from "playwright-core";
import type { KafkaCluster } from "#src/kafka/connection.ts";
import { launchBrowser } from "../../dev/browser.ts";
import { connectCluster, createTopic, deleteTopic, produce } from "../../dev/kafka.ts";
import { root } from "../../dev/services/lib.ts";
import { type RebalancedPair, twoMembersRebalanced } from "../helpers/group-members.ts";
import { createAppendJob, type Json, startUiServer } from "../helpers/ui-server.ts";

const run = `${process.pid}_${Date.now()}`;
const job = `uig_${run}`;
const topic = `uig${run}_t`;
const artifacts = join(root, "test-artifacts", "ui");
const MARKUP_CLIENT = `<img src=x onerror="window.pwned=1">-${process.pid}`;
const HOOK = { timeout: 180_000 };
const TEST = { timeout: 600_000 };

let ui: Awaited<ReturnType<typeof startUiServer>>;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let page: Page;
let cluster: KafkaCluster;
let pair: RebalancedPair | undefined;
const pageErrors: string[] = [];

before(async () => {
  mkdirSync(artifacts, { recursive: true });
  cluster = await connectCluster();
  await createTopic(topic, 4);
  for (let p = 0; p < 4; p++) {
    await produce(
      topic,
      Array.from({ length: 5 }, (_, i) => ({ key: `k${i}`, value: JSON.stringify({ id: i }), partition: p })),
    );
  }
  ui = await startUiServer();
  await createAppendJob(ui.client, job, topic);
  browser = await launchBrowser();
  page = await browser.browser.newPage({ viewport: { width: 1440, height: 900 } });
  page.setDefaultTimeout(60_000);
  page.on("pageerror", (e) => pageErrors.push(e.message));
}, HOOK);

after(async () => {
  await browser?.close();
  await pair?.stop();
  await cluster?.close();
  await ui?.close();
  await deleteTopic(topic);
}, HOOK);

const open = (hash: string) => page.goto(new URL(hash, ui.server.url).href);

test("the job page shows the group's members, their partitions and lag, and the last rebalance", TEST, async () => {
  await open(`#/jobs/${job}/history`);
  await page.getByTestId("no-members").waitFor();
  assert.match((await page.getByTestId("group-summary").textContent()) ?? "", new RegExp(`floe_${job}: .*0 members`));
  assert.match((await page.getByTestId("last-rebalance").textContent()) ?? "", /unknown/);

  pair = await twoMembersRebalanced(cluster, `floe_${job}`, topic, [`floe-ui-a-${process.pid}`, MARKUP_CLIENT]);
  const { first, second, owned } = pair;
  // The card asks again every 10 s; a reload asks now.
  await page.reload();
  await page.getByTestId("members-table").waitFor();
  const rows = page.getByTestId("member-row");
  assert.equal(await rows.count(), 2);
  const api: Json = (await ui.client.get(`/api/jobs/${job}/group`)).body;
  assert.equal(api.members.length, 2);
  const partitionText = (ps: number[]) => `${topic}[${ps.join(",")}]`;
  const expected = new Map([
    [`floe-ui-a-${process.pid}`, { partitions: owned(first), moved: `gave up ${partitionText(owned(second))}` }],
    [MARKUP_CLIENT, { partitions: owned(second), moved: `gained ${partitionText(owned(second))}` }],
  ]);
  for (let i = 0; i < 2; i++) {
    const row = rows.nth(i);
    const client = (await row.getByTestId("member-client").textContent()) ?? "";
    const want = expected.get(client);
    assert.ok(want, `the card lists ${client}`);
    const shown = api.members.find((m: Json) => m.clientId === client);
    assert.equal(await row.getByTestId("member-host").textContent(), shown.host);
    assert.equal(await row.getByTestId("member-partitions").textContent(), partitionText(want.partitions));
    assert.equal(await row.getByTestId("member-lag").textContent(), String(5 * want.partitions.length));
    assert.equal(await row.getByTestId("member-moved").textContent(), want.moved);
  }
  assert.match(
    (await page.getByTestId("group-summary").textContent()) ?? "",
    new RegExp(`floe_${job}: Stable, 2 members, 20 messages behind`),
  );
  assert.match(
    (await page.getByTestId("last-rebalance").textContent()) ?? "",
    new RegExp(`Last rebalance: .*\\(generation ${second.generationId}\\)`),
  );
  // The client id made of markup is text on the page, not an element, and ran nothing.
  assert.equal(await page.getByTestId("members-table").locator("img").count(), 0);
  assert.equal(await page.evaluate(() => (globalThis as { pwned?: number }).pwned), undefined);
  await page.screenshot({ path: join(artifacts, "job-group-members.png"), fullPage: true });
  assert.deepEqual(pageErrors, []);
});

test("a job name made of markup in the address is a no-job error, shown as text", TEST, async () => {
  await open(`#/jobs/${encodeURIComponent('<img src=x onerror="window.pwned=2">')}/history`);
  const card = page.getByTestId("group-members");
  await card.getByText(/no job/i).waitFor();
  assert.equal(await page.locator("img").count(), 0);
  assert.equal(await page.evaluate(() => (globalThis as { pwned?: number }).pwned), undefined);
  assert.deepEqual(pageErrors, []);
});
