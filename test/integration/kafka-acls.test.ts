// ACLs as a cluster admin sets them up for a tool like floe, on the secure broker (StandardAuthorizer):
// a principal with Read and Describe on its topics and Read on its consumer group syncs (and the
// kafka-secure-sync and seed-walkthrough tests run with exactly those). Without Read on the group,
// without Describe on a topic, or without Read on a topic, `floe sync` and `floe check` fail with
// kind auth, not retryable, naming the kafka-acls.sh command to add; nothing is committed to any
// table and the group's offsets do not move. Running the command named makes the same job sync.
// With Describe but not Read on the group, the refusal comes at the group commit, after the
// tables committed whole: the next sync resumes from the tables' offsets.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { parseJob } from "#src/job/load-job.ts";
import { classifyError } from "#src/pipeline/classify-error.ts";
import { createTopic, produce, withAdmin } from "../../dev/kafka.ts";
import { grantAcls, limitedUser, principalOf, secureAdmin, sourceYaml } from "../../dev/kafka-secure.ts";
import { type Readers, restTable, startReaders, testRestCatalog } from "../../dev/readers.ts";
import { type FloeOutcome, floe as runFloe } from "../helpers/floe-cli.ts";
import { secureJobYaml } from "../helpers/secure-kafka.ts";
import { syncJob } from "../helpers/sync-job.ts";

const run = `${process.pid}_${Date.now()}`;
const dir = mkdtempSync(join(tmpdir(), "floe-acls-"));
const principal = principalOf(limitedUser);
const connection = sourceYaml({ protocol: "SASL_PLAINTEXT", mechanism: "SCRAM-SHA-256", user: limitedUser });

let readers: Readers;
before(async () => {
  readers = await startReaders();
});
after(() => readers?.close());

const messages = Array.from({ length: 6 }, (_, i) => ({
  key: String(i),
  value: JSON.stringify({ id: i, v: `m${i}` }),
}));
const model = messages.map((m) => JSON.parse(m.value)).map((r) => ({ id: BigInt(r.id), v: r.v }));

async function newTopic(name: string): Promise<string> {
  const topic = `acl${run}_${name}`;
  await createTopic(topic, 2, secureAdmin);
  await produce(topic, messages, secureAdmin);
  return topic;
}

function writeJob(name: string, topics: string[]) {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, secureJobYaml(name, connection, topics));
  return { file, job: parseJob(secureJobYaml(name, connection, topics), file), group: `floe_${name}` };
}

function floe(args: string[]): Promise<FloeOutcome> {
  return runFloe(args, { cwd: dir, timeoutMs: 120_000 });
}

/** `floe <command> --json` fails with kind auth, not retryable, exit 1, and its error matches. */
async function cliRefuses(command: "sync" | "check", file: string, acl: RegExp): Promise<void> {
  const outcome = await floe([
    command,
    "--config",
    file,
    "--json",
    ...(command === "sync" ? ["--state-dir", join(dir, "state")] : []),
  ]);
  assert.equal(outcome.code, 1, outcome.stdout + outcome.stderr);
  const body = JSON.parse(outcome.stdout) as { error: string; kind: string; retryable: boolean };
  assert.deepEqual([body.kind, body.retryable], ["auth", false], body.error);
  assert.match(body.error, acl);
  assert.doesNotMatch(outcome.stdout + outcome.stderr, new RegExp(limitedUser.password));
}

/** The number of snapshots of the table in the REST catalog; 0 when it does not exist. */
async function snapshots(namespace: string, table: string): Promise<number> {
  const response = await fetch(`${testRestCatalog.uri}/v1/namespaces/${namespace}/tables/${table}`);
  if (response.status === 404) return 0;
  assert.equal(response.status, 200);
  const body = (await response.json()) as { metadata: { snapshots?: unknown[] } };
  return body.metadata.snapshots?.length ?? 0;
}

async function committedOffsets(group: string, topics: string[]): Promise<number> {
  const groups = await withAdmin(secureAdmin, (admin) =>
    admin.listConsumerGroupOffsets({
      groups: [{ groupId: group, topics: topics.map((name) => ({ name, partitionIndexes: [0, 1] })) }],
    }),
  );
  return groups.flatMap((g) => g.topics.flatMap((t) => t.partitions)).filter((p) => p.committedOffset >= 0n).length;
}

async function syncRefused(job: ReturnType<typeof writeJob>["job"], acl: RegExp): Promise<void> {
  await assert.rejects(syncJob(job, { stateDir: join(dir, "state", job.name) }), (error: Error) => {
    const { kind, retryable } = classifyError(error);
    assert.deepEqual([kind, retryable], ["auth", false], error.message);
    assert.match(error.message, acl);
    return true;
  });
}

test("without Read on the group: sync and check name the group ACL; once it is added the job syncs", async () => {
  const topic = await newTopic("nogroup");
  const { file, job, group } = writeJob(`aclgroup_${run}`, [topic]);
  await grantAcls(principal, [{ topic, operations: ["Read", "Describe"] }]);
  const acl = new RegExp(`--add --allow-principal ${principal} --operation Read --group ${group}`);
  await syncRefused(job, acl);
  await cliRefuses("check", file, acl);
  await cliRefuses("sync", file, acl);
  assert.equal(await snapshots(`${job.namespace}`, topic), 0);
  assert.equal(await committedOffsets(group, [topic]), 0);

  // What the error says to run.
  await grantAcls(principal, [{ group, operations: ["Read"] }]);
  const report = await syncJob(job, { stateDir: join(dir, "state", job.name) });
  assert.equal(report.messagesRead, messages.length);
  await readers.assertRows(restTable(job.namespace, topic), model, { columns: ["id", "v"], orderBy: ["id"] });
  assert.equal(await committedOffsets(group, [topic]), 2);
});

test("without Describe on a topic listed under streams: the topic ACL is named, not 'no topic selected'", async () => {
  const hidden = await newTopic("hidden");
  const { file, job, group } = writeJob(`acldescribe_${run}`, [hidden]);
  await grantAcls(principal, [{ group, operations: ["Read"] }]);
  const acl = new RegExp(
    `--add --allow-principal ${principal} --operation Read --operation Describe --topic ${hidden}`,
  );
  await syncRefused(job, acl);
  await cliRefuses("check", file, acl);
  assert.equal(await snapshots(job.namespace, hidden), 0);
  assert.equal(await committedOffsets(group, [hidden]), 0);
});

test("without Read on one of two topics: the sync fails naming it, commits neither table and moves no offset", async () => {
  const readable = await newTopic("readable");
  const unreadable = await newTopic("unreadable");
  const { file, job, group } = writeJob(`aclread_${run}`, [readable, unreadable]);
  await grantAcls(principal, [
    { topic: readable, operations: ["Read", "Describe"] },
    { topic: unreadable, operations: ["Describe"] },
    { group, operations: ["Read"] },
  ]);
  const acl = new RegExp(
    `--add --allow-principal ${principal} --operation Read --operation Describe --topic ${unreadable}`,
  );
  await syncRefused(job, acl);
  await cliRefuses("sync", file, acl);
  // check reads a sample of each topic, and meets the same refusal.
  await cliRefuses("check", file, acl);
  assert.equal(await snapshots(job.namespace, readable), 0);
  assert.equal(await snapshots(job.namespace, unreadable), 0);
  assert.equal(await committedOffsets(group, [readable, unreadable]), 0);
});

test("with Describe but not Read on the group: the tables commit whole, the group commit is refused by name, the rerun resumes from the tables", async () => {
  const topic = await newTopic("describegroup");
  const { job, group } = writeJob(`acldescgroup_${run}`, [topic]);
  await grantAcls(principal, [
    { topic, operations: ["Read", "Describe"] },
    { group, operations: ["Describe"] },
  ]);
  await syncRefused(
    job,
    new RegExp(`committing the offsets of consumer group ${group} was refused: .*--operation Read --group ${group}`),
  );
  // The table holds every message read and their offsets; the group none.
  await readers.assertRows(restTable(job.namespace, topic), model, { columns: ["id", "v"], orderBy: ["id"] });
  assert.equal(await snapshots(job.namespace, topic), 1);
  assert.equal(await committedOffsets(group, [topic]), 0);

  await grantAcls(principal, [{ group, operations: ["Read"] }]);
  const rerun = await syncJob(job, { stateDir: join(dir, "state", job.name) });
  assert.equal(rerun.messagesRead, 0);
  assert.equal(await committedOffsets(group, [topic]), 2);
  await readers.assertRows(restTable(job.namespace, topic), model, { columns: ["id", "v"], orderBy: ["id"] });
});

test("a topic_pattern that selects nothing the principal may Describe says the cluster hides the others", async () => {
  const hidden = await newTopic("patternhidden");
  const name = `aclpattern_${run}`;
  const file = join(dir, `${name}.yaml`);
  const yaml = secureJobYaml(name, connection, []).replace(
    `    consumer_group: floe_${name}`,
    `    consumer_group: floe_${name}\n    topic_pattern: ^${hidden}$`,
  );
  writeFileSync(file, yaml.replace(/streams:\n*$/, "streams: {}\n"));
  const outcome = await floe(["check", "--config", file, "--json"]);
  assert.equal(outcome.code, 2, outcome.stdout);
  const body = JSON.parse(outcome.stdout) as { error: string; kind: string };
  assert.equal(body.kind, "config");
  assert.match(body.error, /selects none of the/);
  assert.match(
    body.error,
    new RegExp(
      `lists only the topics ${principal} may Describe.*--allow-principal ${principal} --operation Read --operation Describe --topic <topic>`,
    ),
  );
});
