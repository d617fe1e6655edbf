// The members of a job's consumer group and its last rebalance, as `floe status` (text and --json)
// and floe serve's GET /api/jobs/{name}/group show them, against the real broker and the REST
// fixture catalog. Two members of the job's group (kafka/group-member.ts, as `floe run` replicas
// join it) share a topic of 4 partitions holding 3, 6, 9 and 12 messages: one joins alone and
// owns everything, the second joins and the group rebalances. Both views then name the two
// members with their client id and host, the partitions the group assigned each (as the members
// themselves hold them), the lag of those partitions, what each gained and gave up, and the
// generation and time of the rebalance as the leader noted it. Before any member: no members,
// said plainly; a group of Kafka's consumer protocol (whose members DescribeGroups does not list)
// is said to be one, not to have no members. The route refuses hostile job names with a 404 and matches the OpenAPI document.
// Nothing is synced: no table is written.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { Consumer } from "@platformatic/kafka";
import type { KafkaCluster } from "#src/kafka/connection.ts";
import { bootstrapServers, connectCluster, createTopic, deleteTopic, produce } from "../../dev/kafka.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";
import { type RebalancedPair, twoMembersRebalanced } from "../helpers/group-members.ts";
import { writeJobFile } from "../helpers/job-file.ts";
import { createAppendJob, type Json, startUiServer } from "../helpers/ui-server.ts";

const repo = join(import.meta.dirname, "..", "..");
const run = `${process.pid}_${Date.now()}`;
const job = `grp_${run}`;
const group = `floe_${job}`;
const topic = `grp${run}_t`;
/** Messages in partition p: 3 (p + 1). */
const messagesIn = (p: number) => 3 * (p + 1);
const dir = mkdtempSync(join(tmpdir(), "floe-cluster-status-"));
let pair: RebalancedPair | undefined;
let cluster: KafkaCluster;
let ui: Awaited<ReturnType<typeof startUiServer>>;

before(
  async () => {
    cluster = await connectCluster();
    await createTopic(topic, 4);
    for (let p = 0; p < 4; p++) {
      await produce(
        topic,
        Array.from({ length: messagesIn(p) }, (_, i) => ({
          key: `k${i}`,
          value: JSON.stringify({ id: i }),
          partition: p,
        })),
      );
    }
    ui = await startUiServer();
    await createAppendJob(ui.client, job, topic);
  },
  { timeout: 120_000 },
);

after(
  async () => {
    await pair?.stop();
    await cluster?.close();
    await ui?.close();
    await deleteTopic(topic);
    rmSync(dir, { recursive: true, force: true });
  },
  { timeout: 120_000 },
);

const jobFile = writeJobFile(join(dir, "job.yaml"), {
  name: job,
  iceberg: { catalog: { type: "rest", uri: restCatalog.uri } },
  streams: { [topic]: { mode: "append", table: "t" } },
  cluster: { session_timeout: "10s", heartbeat_interval: "1s", rebalance_timeout: "30s" },
});

const execFileAsync = promisify(execFile);
async function floeStatus(json: boolean): Promise<string> {
  const { stdout } = await execFileAsync(
    process.execPath,
    ["src/cli/main.ts", "status", "--config", jobFile, "--state-dir", join(dir, "state"), ...(json ? ["--json"] : [])],
    { cwd: repo },
  );
  return stdout;
}

const lagOf = (partitions: readonly number[]) => partitions.reduce((sum, p) => sum + messagesIn(p), 0);
const numbers = (ps: { topic: string; partition: number }[]) => {
  assert.ok(ps.every((p) => p.topic === topic));
  return ps.map((p) => p.partition).sort((a, b) => a - b);
};

test("without members, the route says the group has none and no rebalance", { timeout: 120_000 }, async () => {
  const answer = await ui.client.get(`/api/jobs/${job}/group`);
  assert.equal(answer.status, 200, answer.text);
  assert.equal(answer.body.group, group);
  assert.deepEqual(answer.body.members, []);
  assert.equal(answer.body.lastRebalance, null);
  assert.equal(answer.body.lag, lagOf([0, 1, 2, 3]));
});

test("two members: floe status and the route show each one's host, partitions, lag and the last rebalance", {
  timeout: 300_000,
}, async () => {
  pair = await twoMembersRebalanced(cluster, group, topic, [
    `floe-test-a-${process.pid}`,
    `floe-test-b-${process.pid}`,
  ]);
  const { first: a, second: b, aloneOwned, beforeRebalance, owned } = pair;
  assert.deepEqual(aloneOwned, [0, 1, 2, 3], "alone, the first member owned every partition");
  const generation = b.generationId;
  assert.deepEqual([...owned(a), ...owned(b)].sort(), [0, 1, 2, 3]);
  const expected = new Map([
    [`floe-test-a-${process.pid}`, { partitions: owned(a), gained: [] as number[], gaveUp: owned(b) }],
    [`floe-test-b-${process.pid}`, { partitions: owned(b), gained: owned(b), gaveUp: [] as number[] }],
  ]);

  // floe status --json: the group, each member and the last rebalance.
  const [status] = JSON.parse(await floeStatus(true)) as Json[];
  const shown = status.lag.group;
  assert.equal(shown.group, group);
  assert.equal(shown.state, "Stable");
  assert.equal(shown.lastRebalance.generationId, generation);
  assert.ok(shown.lastRebalance.at >= beforeRebalance && shown.lastRebalance.at <= Date.now(), JSON.stringify(shown));
  assert.equal(shown.members.length, 2, JSON.stringify(shown));
  for (const m of shown.members) {
    const want = expected.get(m.clientId);
    assert.ok(want, `floe status lists ${m.clientId}`);
    assert.match(m.host, /^(127\.0\.0\.1|::1)$/, "the address, without the broker's leading slash");
    assert.deepEqual(numbers(m.partitions), want.partitions, m.clientId);
    assert.equal(m.lag, String(lagOf(want.partitions)), m.clientId);
    assert.deepEqual(numbers(m.moved.gained), want.gained, `${m.clientId} gained`);
    assert.deepEqual(numbers(m.moved.gaveUp), want.gaveUp, `${m.clientId} gave up`);
  }

  // The text: a row per member, what it did at the rebalance, and the rebalance's generation.
  const text = await floeStatus(false);
  assert.match(text, new RegExp(`members +2 \\(group ${group}, Stable\\)`), text);
  assert.match(
    text,
    new RegExp(`last rebalance \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d  generation ${generation}\\n`),
    text,
  );
  const rowOf = (client: string) => text.split("\n").find((l) => l.includes(client)) ?? "";
  assert.match(rowOf(`floe-test-a-${process.pid}`), new RegExp(`gave up ${topic}\\[${owned(b).join(",")}\\]`), text);
  assert.match(rowOf(`floe-test-b-${process.pid}`), new RegExp(`gained ${topic}\\[${owned(b).join(",")}\\]`), text);

  // The route: the same, for a job of floe serve (which has no cluster: of its own).
  const answer = await ui.client.get(`/api/jobs/${job}/group`);
  assert.equal(answer.status, 200, answer.text);
  const body = answer.body;
  assert.equal(body.state, "Stable");
  assert.equal(body.lastRebalance.generation, generation);
  assert.equal(new Date(body.lastRebalance.at).getTime(), shown.lastRebalance.at);
  assert.equal(body.lag, lagOf([0, 1, 2, 3]));
  assert.equal(body.members.length, 2);
  for (const m of body.members) {
    const want = expected.get(m.clientId)!;
    assert.deepEqual(numbers(m.partitions), want.partitions, m.clientId);
    assert.equal(m.lag, lagOf(want.partitions));
    assert.deepEqual(numbers(m.moved.gained), want.gained);
    assert.deepEqual(numbers(m.moved.gaveUp), want.gaveUp);
  }
});

test("a group of Kafka's consumer protocol (KIP-848): its members are said to be unlisted, not absent", {
  timeout: 120_000,
}, async () => {
  const other = `${job}_848`;
  const created = await ui.client.post("/api/jobs", {
    name: other,
    source: "kafka",
    destination: "rest",
    streams: { [topic]: { mode: "append", table: "t848" } },
  });
  assert.equal(created.status, 201, created.text);
  const consumer = new Consumer({
    clientId: "other-app",
    groupId: `floe_${other}`,
    bootstrapBrokers: [bootstrapServers],
    groupProtocol: "consumer",
    maxWaitTime: 200,
    autocommit: false,
  });
  try {
    const stream = await consumer.consume({ topics: [topic], mode: "earliest" });
    stream.on("data", () => {});
    let answer = await ui.client.get(`/api/jobs/${other}/group`);
    for (const deadline = Date.now() + 60_000; answer.body?.state !== "Stable" && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      answer = await ui.client.get(`/api/jobs/${other}/group`);
    }
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.state, "Stable", answer.text);
    assert.equal(answer.body.protocol, "consumer");
    assert.deepEqual(answer.body.members, []);
  } finally {
    await consumer.close(true);
  }
});

test("hostile job names get a 404 naming no file, and every answer matches the OpenAPI document", {
  timeout: 120_000,
}, async () => {
  for (const name of ["..%2F..%2Fetc%2Fpasswd", "%3Cscript%3Ealert(1)%3C%2Fscript%3E", "x%00y", "nope"]) {
    const answer = await ui.client.get(`/api/jobs/${name}/group`);
    assert.equal(answer.status, 404, `${name}: ${answer.text}`);
    assert.match(answer.headers.get("content-type") ?? "", /application\/json/);
    assert.equal(typeof answer.body.error, "string");
  }
  assert.ok((await ui.client.checkAgainstOpenApi()) >= 6);
});
