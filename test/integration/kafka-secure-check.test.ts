// `floe check` against the secure broker, as a user runs it (a child process), for each way a
// secure connection goes wrong: its own diagnosis on stderr and in --json (kind auth, not
// retryable, exit 1), and never the password, the wrong one or the right one, in any output.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { createTopic, produce } from "../../dev/kafka.ts";
import {
  certificates,
  floeUser,
  grantAcls,
  principalOf,
  secureAdmin,
  secureServers,
  sourceYaml,
} from "../../dev/kafka-secure.ts";
import { type FloeOutcome, floe as runFloe } from "../helpers/floe-cli.ts";

const dir = mkdtempSync(join(tmpdir(), "floe-secure-check-"));
const wrongPassword = "Wr0ng-Pa55-9f1e";

function floe(args: string[], env: Record<string, string> = {}): Promise<FloeOutcome> {
  return runFloe(args, { cwd: dir, env: { ...process.env, ...env }, timeoutMs: 120_000 });
}

function jobFile(name: string, connection: string, pattern = "nothing"): string {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(
    file,
    `name: ${name}
source:
  kafka:
${connection}
    consumer_group: floe_${name}
    topic_pattern: ^${pattern}$
    connect_timeout: 20s
    request_timeout: 20s
destination:
  iceberg:
    catalog: {type: sql, warehouse: ./warehouse_${name}}
`,
  );
  return file;
}

/**
 * Runs `floe check` (or `floe sync`) in text and in --json, and checks what both say; returns the
 * text's stderr.
 */
async function checkFails(
  file: string,
  expected: { kind: string; retryable: boolean; code: number; message: RegExp },
  env: Record<string, string> = {},
  command: "check" | "sync" = "check",
): Promise<string> {
  const stateDir = command === "sync" ? ["--state-dir", join(dir, "state")] : [];
  const text = await floe([command, "--config", file, ...stateDir], env);
  const json = await floe([command, "--config", file, "--json", ...stateDir], env);
  for (const output of [text.stdout, text.stderr, json.stdout, json.stderr]) {
    assert.doesNotMatch(output, new RegExp(wrongPassword));
    assert.doesNotMatch(output, new RegExp(floeUser.password));
  }
  assert.equal(text.code, expected.code, text.stderr);
  assert.equal(json.code, expected.code, json.stdout);
  assert.match(text.stderr, expected.message);
  const body = JSON.parse(json.stdout) as { error: string; kind: string; retryable: boolean };
  assert.deepEqual([body.kind, body.retryable], [expected.kind, expected.retryable]);
  assert.match(body.error, expected.message);
  return text.stderr;
}

const refused = { kind: "auth", retryable: false, code: 1 };

test("a wrong password: the broker refused the credentials of the user, for SCRAM and PLAIN, the password never shown", async () => {
  const scram = jobFile(
    "wrong_scram",
    sourceYaml({
      protocol: "SASL_SSL",
      mechanism: "SCRAM-SHA-512",
      // The job file's own interpolation, not this file's: the password comes from the environment.
      user: { username: floeUser.username, password: ["$", "{KAFKA_PASSWORD}"].join("") },
    }),
  );
  for (const command of ["check", "sync"] as const) {
    await checkFails(
      scram,
      { ...refused, message: /refused the credentials of user 'floe' \(SCRAM-SHA-512\): a wrong password/ },
      { KAFKA_PASSWORD: wrongPassword },
      command,
    );
  }
  const plain = jobFile(
    "wrong_plain",
    sourceYaml({ protocol: "SASL_PLAINTEXT", mechanism: "PLAIN", user: { username: "floe", password: wrongPassword } }),
  );
  await checkFails(plain, { ...refused, message: /refused the credentials of user 'floe' \(PLAIN\)/ });
});

test("an unknown mechanism is a job-file error; one the listener does not offer names those it does", async () => {
  const unknown = jobFile(
    "unknown_mechanism",
    sourceYaml({ protocol: "SASL_SSL", mechanism: "SCRAM-SHA-512" }).replace("SCRAM-SHA-512", "AWS_MSK_IAM"),
  );
  await checkFails(unknown, {
    kind: "config",
    retryable: false,
    code: 2,
    message: /source\.kafka\.sasl\.mechanism: expected PLAIN \| SCRAM-SHA-256 \| SCRAM-SHA-512, got "AWS_MSK_IAM"/,
  });
  const unoffered = jobFile("unoffered_mechanism", sourceYaml({ protocol: "SASL_SSL", mechanism: "SCRAM-SHA-256" }));
  await checkFails(unoffered, {
    ...refused,
    message: /the listener does not offer SASL SCRAM-SHA-256; it offers PLAIN, SCRAM-SHA-512/,
  });
});

test("an untrusted CA names the certificate's issuer, with no tls.ca and with the wrong one", async () => {
  const none = jobFile(
    "no_ca",
    sourceYaml({ protocol: "SASL_SSL", mechanism: "SCRAM-SHA-512" }).replace(/\n.*tls: \{ca: [^}]*\}/, ""),
  );
  await checkFails(none, {
    ...refused,
    message:
      /not signed by a CA floe trusts \(SELF_SIGNED_CERT_IN_CHAIN\): it was issued by CN=floe test CA, and floe trusts only the system's CAs/,
  });
  const wrong = jobFile("wrong_ca", sourceYaml({ protocol: "SSL", ca: certificates.otherCa }));
  await checkFails(wrong, {
    ...refused,
    message: /not signed by a CA floe trusts .*issued by CN=floe test CA, and floe trusts security\.tls\.ca/,
  });
});

test("a host name the certificate does not hold names the host and the certificate's names", async () => {
  const file = jobFile("mismatch", sourceYaml({ protocol: "SSL", server: secureServers.mismatch }));
  await checkFails(file, {
    ...refused,
    message: /the broker's certificate does not name 127\.0\.0\.1 \(it names DNS:broker\.invalid\)/,
  });
});

test("a client certificate missing where the listener requires one", async () => {
  const file = jobFile("no_client_cert", sourceYaml({ protocol: "SSL", clientCertificate: false }));
  const stderr = await checkFails(file, {
    ...refused,
    message: /the listener requires a client certificate \(mutual TLS\) and none was sent/,
  });
  assert.match(stderr, /Set security\.tls\.cert and security\.tls\.key/);
});

test("over SASL_SSL with SCRAM-SHA-512 and the sync's ACLs, floe check shows the plan and the sampled columns", async () => {
  const topic = `seccheck${process.pid}_${Date.now()}`;
  await createTopic(topic, 1, secureAdmin);
  await produce(
    topic,
    [1, 2, 3].map((id) => ({ key: String(id), value: JSON.stringify({ id, amount: id * 1.5 }) })),
    secureAdmin,
  );
  const name = `ok_${process.pid}`;
  await grantAcls(principalOf(floeUser), [
    { topic, operations: ["Read", "Describe"] },
    { group: `floe_${name}`, operations: ["Read"] },
  ]);
  const file = jobFile(name, sourceYaml({ protocol: "SASL_SSL", mechanism: "SCRAM-SHA-512" }), topic);
  const outcome = await floe(["check", "--config", file]);
  assert.equal(outcome.code, 0, outcome.stderr);
  assert.match(outcome.stdout, new RegExp(`${topic} -> ${topic} \\(append, will be created\\)`));
  assert.match(outcome.stdout, /partition 0: 3 to read, from 0 \(log-start\) to 3/);
  assert.match(outcome.stdout, /columns from a sample of 3 messages/);
  assert.match(outcome.stdout, /amount\s+double/);
  assert.doesNotMatch(outcome.stdout + outcome.stderr, new RegExp(floeUser.password));
});
