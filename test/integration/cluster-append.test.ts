// Replicas of one job (its `cluster:` setting) against the real broker, the REST fixture catalog
// and the three readers: `floe run` processes with their own state roots and the same job file
// (continuous, append, 12 partitions) share the topic's partitions through the job's consumer
// group.
//
//   1. three members join; the group assigns each of them 4 partitions, and they land the first
//      quarter of the messages
//   2. one member is SIGKILLed mid-commit (between writing a round's data files and committing
//      them, a fault point): its partitions move to the other two after the session timeout and
//      resume from the table's position; the second quarter lands; floe status names the two
//      members, their partitions and the last rebalance, the generation they logged joining
//   3. a zombie: a new member is stopped between writing a round's data files and committing
//      them, SIGSTOPped there past its session timeout; the group gives its partitions to the
//      others, which land the third quarter; SIGCONTed, its commit is refused by the offset
//      claim, and it rejoins
//   4. a fourth member joins mid-run and the four take three partitions each; the rest lands
//   5. SIGTERM: every member commits what it read, leaves the group and exits 0
//
// Then: in every generation, each partition was advanced by one member only (the snapshots
// name the member and generation that wrote them); no partition's offsets ever went back; and
// DuckDB, PyIceberg and Spark read exactly the model's rows: every message once.
//
// On a schedule ("every 2s", 6 partitions, maintenance due every 2s): two members each plan and
// land their 3 partitions at every tick, and only the group's leader maintains the table; one
// stops (SIGTERM: it leaves, the other takes its partitions at once, and the maintenance with
// them), a new one joins and takes its share; every pass ran on its generation's leader and no
// generation had two maintainers; the readers read every message once.
//
// FLOE_CLUSTER_MESSAGES sets the message count of the continuous scenario (the scheduled one
// lands a fortieth of it, at least 1,800). Default 240,000: about 2.5 min on a 2-core machine
// shared with other tests; the 2,000,000 passes in about 7.5 min.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { connectRestCatalog } from "#src/iceberg/catalog/rest-catalog.ts";
import { createTopic, deleteTopic } from "../../dev/kafka.ts";
import { type Readers, startReaders } from "../../dev/readers.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";
import { assertOneMemberPerPartition, Landing, type Member, Members, stopMembers } from "../helpers/cluster-members.ts";
import { writeJobFile } from "../helpers/job-file.ts";
import { until } from "../helpers/service-process.ts";
import { syncWorkspace } from "../helpers/sync-model.ts";

const repo = join(import.meta.dirname, "..", "..");
const MESSAGES = Number(process.env.FLOE_CLUSTER_MESSAGES ?? 240_000);
const SESSION_TIMEOUT_MS = 8000;
const ws = syncWorkspace("cluster");
const members = new Members(ws.dir);
const catalog = await connectRestCatalog({ uri: restCatalog.uri });

const continuous = new Landing(catalog, `${ws.name}_c`, 12);
const scheduled = new Landing(catalog, `${ws.name}_s`, 6);

// Started once the members are done: Spark's JVM would otherwise compete with them for the cores.
let readers: Readers | undefined;
before(async () => {
  await createTopic(continuous.topic, continuous.partitions);
  await createTopic(scheduled.topic, scheduled.partitions);
});
after(async () => {
  // Each member's log stays in the test's folder, for a failure to be read after the fact.
  members.close();
  await readers?.close();
  for (const l of [continuous, scheduled]) await deleteTopic(l.topic).catch(() => {});
});

const execFileAsync = promisify(execFile);

const within = (what: string, condition: () => boolean | Promise<boolean>, ms = 600_000) =>
  until(what, condition, ms, 500);

interface StatusJson {
  lag: {
    group: {
      state: string;
      members: {
        clientId: string;
        host: string;
        partitions: { topic: string; partition: number }[];
        lag: string;
        moved?: { gained: { partition: number }[]; gaveUp: { partition: number }[] };
      }[];
      lastRebalance: { generationId: number; at: number } | null;
    };
  };
}

/** `floe status --json` of the job file, run as a user would. */
async function statusOf(file: string): Promise<StatusJson> {
  const { stdout } = await execFileAsync(
    process.execPath,
    ["src/cli/main.ts", "status", "--config", file, "--state-dir", join(ws.dir, "state-status"), "--json"],
    { cwd: repo },
  );
  return (JSON.parse(stdout) as StatusJson[])[0]!;
}

/** The generations in which member `m` maintained a table (one entry per table maintained). */
function maintainedIn(m: Member): number[] {
  return m
    .output()
    .split("\n")
    .filter((l) => l.includes('"msg":"maintained '))
    .map((l) => (JSON.parse(l) as { generation: number }).generation);
}

/** The generation member `m` last joined, from its log. */
function lastGeneration(m: Member): number | undefined {
  const joins = m
    .output()
    .split("\n")
    .filter((l) => l.includes('"cluster: member of'))
    .map((l) => (JSON.parse(l) as { generation: number }).generation);
  return joins.at(-1);
}

/** The generations in which member `m` was the group's leader, from its log. */
function ledIn(m: Member): Set<number> {
  const led = new Set<number>();
  for (const line of m.output().split("\n")) {
    if (!line.includes('"cluster: member of')) continue;
    const { generation, leader } = JSON.parse(line) as { generation: number; leader: boolean };
    if (leader) led.add(generation);
  }
  return led;
}

/** Every pass ran on the generation's leader, and no generation had two maintainers. */
function assertOneMaintainerPerGeneration(all: readonly Member[]): void {
  const maintainers = new Map<number, string>();
  for (const m of all) {
    const led = ledIn(m);
    for (const generation of maintainedIn(m)) {
      assert.ok(led.has(generation), `${m.name} maintained in generation ${generation}, which it did not lead`);
      const other = maintainers.get(generation);
      assert.ok(
        other === undefined || other === m.name,
        `${other} and ${m.name} both maintained in generation ${generation}`,
      );
      maintainers.set(generation, m.name);
    }
  }
}

test("continuous: three replicas share 12 partitions; a SIGKILL, a zombie, a fourth member; every message once", async () => {
  const { topic, partitions: PARTITIONS } = continuous;
  const produce = (count: number) => continuous.produce(count);
  const landed = () => continuous.landed();
  const file = writeJobFile(join(ws.dir, "continuous.yaml"), {
    name: continuous.job,
    kafka: { topic_pattern: `^${topic}$`, max_threads: 4 },
    iceberg: { catalog: { type: "rest", uri: restCatalog.uri } },
    streams: { [topic]: { mode: "append", table: "t" } },
    schedule: "continuous",
    commit: { interval: "2s" },
    cluster: { session_timeout: `${SESSION_TIMEOUT_MS}ms`, heartbeat_interval: "1s", rebalance_timeout: "30s" },
  });
  const quarter = Math.floor(MESSAGES / 4);

  // 1. Three members, four partitions each.
  // a SIGKILLs itself between writing its second round's data files and committing them.
  const first = [
    members.run(file, topic, "a", { FLOE_FAULT_AT: "after-data-files:2", FLOE_FAULT: "crash" }),
    members.run(file, topic, "b"),
    members.run(file, topic, "c"),
  ];
  await within("three members with four partitions each", () =>
    first.every((m) => m.assigned()?.length === PARTITIONS / 3),
  );
  const shares = first.map((m) => m.assigned()!);
  assert.deepEqual(
    shares.flat().sort((a, b) => a - b),
    Array.from({ length: PARTITIONS }, (_, i) => i),
    "the three shares cover every partition once",
  );
  await produce(quarter);
  await within("the first quarter lands", async () => (await landed()) === quarter);

  // 2. One member is SIGKILLed mid-commit (by the first quarter, or the second at the latest).
  const producing = produce(quarter);
  const [killed, ...rest] = first as [Member, Member, Member];
  assert.equal((await killed.exited).signal, "SIGKILL", killed.output().slice(-3000));
  await producing;
  await within("the two others own every partition", () => rest.every((m) => m.assigned()?.length === PARTITIONS / 2));
  await within("the second quarter lands", async () => (await landed()) === 2 * quarter);
  // floe status names the group's two members, the partitions each was assigned and their lag.
  const status = await statusOf(file);
  assert.equal(status.lag.group.members.length, 2, JSON.stringify(status.lag.group));
  const byClient = new Map(status.lag.group.members.map((m) => [m.clientId, m]));
  for (const m of rest) {
    const shown = byClient.get(`floe-${hostname()}-${m.child.pid}`);
    assert.ok(shown, `floe status lists member ${m.name} (pid ${m.child.pid})`);
    assert.deepEqual(
      shown.partitions.map((p) => p.partition),
      m.assigned(),
      `floe status shows the partitions member ${m.name} logged`,
    );
    assert.ok(shown.partitions.every((p) => p.topic === topic));
    assert.match(shown.lag, /^\d+$/);
    assert.ok(shown.moved, `floe status shows what member ${m.name} did at the last rebalance`);
  }
  // The last rebalance the group's leader noted is the generation the members last logged joining.
  assert.ok(status.lag.group.lastRebalance, JSON.stringify(status.lag.group));
  for (const m of rest) assert.equal(lastGeneration(m), status.lag.group.lastRebalance.generationId, m.name);

  // 3. A zombie: a new member stops between writing its first round's data files and committing
  // them (a fault point), is SIGSTOPped there past its session timeout, and its partitions move
  // to the two others, which land the third quarter. Then it resumes: its commit must be refused.
  const [b, c] = rest as [Member, Member];
  const pauseFile = join(ws.dir, "zombie-paused");
  const zombie = members.run(file, topic, "z", {
    FLOE_FAULT_AT: "after-data-files:1",
    FLOE_FAULT: "pause",
    FLOE_FAULT_FILE: pauseFile,
  });
  await within("the zombie joins with its share", () => zombie.assigned()?.length === PARTITIONS / 3);
  const zombieProducing = produce(quarter);
  await until("the zombie wrote its first round's data files", () => existsSync(pauseFile), 600_000, 50);
  zombie.child.kill("SIGSTOP");
  await within("the two others own every partition", () =>
    [b, c].every((m) => m.assigned()?.length === PARTITIONS / 2),
  );
  await zombieProducing;
  await within("the third quarter lands", async () => (await landed()) === 3 * quarter);
  rmSync(pauseFile);
  zombie.child.kill("SIGCONT");
  await within("the zombie's commit is refused", () => /another writer committed these messages/.test(zombie.output()));
  await within("the zombie rejoins with its share", () =>
    [b, c, zombie].every((m) => m.assigned()?.length === PARTITIONS / 3),
  );
  assert.equal(await landed(), 3 * quarter, "the zombie landed nothing twice");

  // 4. A fourth member joins mid-run.
  const fourth = members.run(file, topic, "d");
  const lastProducing = produce(MESSAGES - 3 * quarter);
  await within("four members with three partitions each", () =>
    [b, c, zombie, fourth].every((m) => m.assigned()?.length === PARTITIONS / 4),
  );
  await lastProducing;
  await within("every message lands", async () => (await landed()) >= MESSAGES);

  // 5. SIGTERM: commit, leave, exit 0.
  await stopMembers([b, c, zombie, fourth]);
  assert.match(b.output(), /cluster: .*gained/, "the log says when partitions move");
  assert.match(b.output(), /cluster: .*gave up/);

  // One member per partition and generation, offsets only forward, over the members' appends (a
  // maintenance pass's snapshots, compactions, absorb no message).
  const appends = (await continuous.snapshots()).filter((s) => s.summary.operation === "append");
  const generations = assertOneMemberPerPartition(appends, topic, PARTITIONS, (p) => continuous.counter.end(p));
  assert.ok(generations.size >= 3, `snapshots of ${generations.size} generations`);

  readers ??= await startReaders();
  await continuous.assertReaders(readers);
});

test("on a schedule: two replicas each land their share at every tick, the leader alone maintains; one leaves, one joins; every message once", async () => {
  const { topic, partitions } = scheduled;
  const file = writeJobFile(join(ws.dir, "scheduled.yaml"), {
    name: scheduled.job,
    kafka: { topic_pattern: `^${topic}$`, max_threads: 3 },
    iceberg: { catalog: { type: "rest", uri: restCatalog.uri } },
    streams: { [topic]: { mode: "append", table: "t" } },
    schedule: "every 2s",
    maintenance: { interval: "2s" },
    cluster: { session_timeout: `${SESSION_TIMEOUT_MS}ms`, heartbeat_interval: "1s", rebalance_timeout: "30s" },
  });
  const tenth = Math.max(600, Math.floor(MESSAGES / 40));
  const [a, b] = [members.run(file, topic, "sa"), members.run(file, topic, "sb")];
  await within("two members with three partitions each", () =>
    [a, b].every((m) => m.assigned()?.length === partitions / 2),
  );
  await scheduled.produce(tenth);
  await within("the first batch lands", async () => (await scheduled.landed()) === tenth);
  for (const m of [a, b]) {
    assert.match(m.output(), /planned: up to [1-9]\d* messages from 3 partitions/, `${m.name} plans its share only`);
  }

  // Only the group's leader maintains the tables.
  await within("the leader maintained the table twice", () => [a, b].some((m) => maintainedIn(m).length >= 2));
  assertOneMaintainerPerGeneration([a, b]);
  const firstLeader = [a, b].find((m) => maintainedIn(m).length > 0)!;

  // A member that stops leaves the group: the other takes its partitions without waiting for a session timeout.
  a.child.kill("SIGTERM");
  assert.equal((await a.exited).code, 0, a.output().slice(-3000));
  assert.match(a.output(), /cluster: left consumer group/);
  await within("the other member owns every partition", () => b.assigned()?.length === partitions, 60_000);
  await scheduled.produce(tenth);
  await within("the second batch lands", async () => (await scheduled.landed()) === 2 * tenth);
  // The lease moved with the leadership: b, alone now, maintains (again, or from now on if a led).
  const before = firstLeader === b ? maintainedIn(b).length : 0;
  await within("the remaining member maintains the table", () => maintainedIn(b).length > before + 1, 120_000);

  const c = members.run(file, topic, "sc");
  await within("two members with three partitions each again", () =>
    [b, c].every((m) => m.assigned()?.length === partitions / 2),
  );
  await scheduled.produce(tenth);
  await within("the third batch lands", async () => (await scheduled.landed()) === 3 * tenth);
  for (const m of [b, c]) m.child.kill("SIGTERM");
  for (const m of [b, c]) assert.equal((await m.exited).code, 0, m.output().slice(-3000));
  assertOneMaintainerPerGeneration([a, b, c]);
  readers ??= await startReaders();
  await scheduled.assertReaders(readers);
});
