// A sync over each way into the secure broker (dev/services/kafka-secure.ts): SASL_PLAINTEXT with
// PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512, SASL_SSL with PLAIN and SCRAM-SHA-512, and SSL with a
// client certificate (mutual TLS, by IP and by the name localhost, and with insecure_skip_verify
// to a listener whose certificate names another host). Each runs as a principal
// with only the ACLs such a tool is given (Read and Describe on its topic, Read on its group),
// lands an upsert table in the REST catalog read back through DuckDB, PyIceberg and Spark and
// compared with the model, and commits the group's offsets: a second sync reads nothing.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { parseJob } from "#src/job/load-job.ts";
import { createTopic, produce } from "../../dev/kafka.ts";
import { type Mechanism, principalOf, secureAdmin, secureServers, sourceYaml } from "../../dev/kafka-secure.ts";
import { type Readers, restTable, startReaders } from "../../dev/readers.ts";
import { floeUser } from "../../dev/services/kafka-secure/config.ts";
import { grantSyncAcls, secureJobYaml } from "../helpers/secure-kafka.ts";
import { syncJob } from "../helpers/sync-job.ts";

const run = `${process.pid}_${Date.now()}`;
const stateDir = mkdtempSync(join(tmpdir(), "floe-secure-"));

let readers: Readers;
before(async () => {
  readers = await startReaders();
});
after(() => readers?.close());

/** Ten messages over eight ids, two of them updated: the model is the last value per id. */
const messages = Array.from({ length: 10 }, (_, i) => {
  const id = i < 8 ? i + 1 : i - 6;
  return { key: String(id), value: JSON.stringify({ id, name: `n${i}` }) };
});
const model = [...new Map(messages.map((m) => [JSON.parse(m.value).id as number, JSON.parse(m.value)])).values()]
  .sort((a, b) => a.id - b.id)
  .map((r) => ({ id: BigInt(r.id), name: r.name }));

const ways: { label: string; connection: string; principal: string }[] = [
  ...(["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] as Mechanism[]).map((mechanism) => ({
    label: `SASL_PLAINTEXT ${mechanism}`,
    connection: sourceYaml({ protocol: "SASL_PLAINTEXT", mechanism }),
    principal: principalOf(floeUser),
  })),
  ...(["PLAIN", "SCRAM-SHA-512"] as Mechanism[]).map((mechanism) => ({
    label: `SASL_SSL ${mechanism}`,
    connection: sourceYaml({ protocol: "SASL_SSL", mechanism }),
    principal: principalOf(floeUser),
  })),
  {
    label: "SSL with a client certificate",
    connection: sourceYaml({ protocol: "SSL" }),
    principal: principalOf("client-certificate"),
  },
  {
    label: "SSL with a client certificate, by host name",
    connection: sourceYaml({ protocol: "SSL", server: secureServers.ssl.replace("127.0.0.1", "localhost") }),
    principal: principalOf("client-certificate"),
  },
  {
    label: "SSL with insecure_skip_verify, to a certificate for another host",
    connection: sourceYaml({ protocol: "SSL", server: secureServers.mismatch, insecureSkipVerify: true }),
    principal: principalOf("client-certificate"),
  },
];

ways.forEach((way, i) => {
  test(`a sync over ${way.label} lands the table and commits the group`, async () => {
    const name = `sec_${run}_${i}`;
    const topic = `sec${run}_${i}`;
    const job = parseJob(secureJobYaml(name, way.connection, [topic]), join(stateDir, `${name}.yaml`));
    await createTopic(topic, 1, secureAdmin);
    await produce(topic, messages, secureAdmin);
    await grantSyncAcls(way.principal, [topic], `floe_${name}`);

    const first = await syncJob(job, { stateDir: join(stateDir, name) });
    assert.equal(first.status, "complete");
    assert.equal(first.messagesRead, messages.length);
    await readers.assertRows(restTable(`${name}_topics`, topic), model, { columns: ["id", "name"], orderBy: ["id"] });

    const second = await syncJob(job, { stateDir: join(stateDir, name) });
    assert.equal(second.messagesRead, 0);
  });
});
