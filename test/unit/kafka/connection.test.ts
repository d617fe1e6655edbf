// Connection settings onto @platformatic/kafka options, and the errors a user sees when they are wrong.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { inspect } from "node:util";
import { clientOptions, describeConnection, KafkaCluster, type KafkaConnectionOptions } from "#src/kafka/connection.ts";
import { KafkaConfigError, KafkaConnectionError } from "#src/kafka/errors.ts";

const pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
/** A password as the job holds it: printed as ***, given by reveal(). */
const secret = (value: string) => ({ reveal: () => value, toString: () => "***", [inspect.custom]: () => "***" });

test("PLAINTEXT maps to bootstrap brokers, a client id and the 30 s timeouts, without TLS or SASL", () => {
  const options = clientOptions({ bootstrapServers: ["k1:9092", "k2:9092"], security: { protocol: "PLAINTEXT" } });
  assert.deepEqual(options, {
    clientId: "floe",
    bootstrapBrokers: ["k1:9092", "k2:9092"],
    connectTimeout: 30_000,
    requestTimeout: 30_000,
  });
  const set = clientOptions({
    bootstrapServers: ["k1:9092"],
    security: { protocol: "PLAINTEXT" },
    connectTimeoutMs: 1500,
    requestTimeoutMs: 2000,
  });
  assert.deepEqual([set.connectTimeout, set.requestTimeout], [1500, 2000]);
});

test("SASL_SSL maps to TLS with SNI and SASL whose password is a provider, not a string", async () => {
  const options = clientOptions({
    bootstrapServers: ["broker.example.com:9093"],
    clientId: "job-1",
    security: {
      protocol: "SASL_SSL",
      sasl: { mechanism: "SCRAM-SHA-512", username: "floe", password: secret("pa55") },
      tls: { ca: pem },
    },
  });
  assert.equal(options.clientId, "job-1");
  assert.deepEqual(options.tls, { ca: pem });
  assert.equal(options.tlsServerName, true);
  assert.equal(options.sasl?.mechanism, "SCRAM-SHA-512");
  assert.equal(options.sasl?.username, "floe");
  assert.equal(typeof options.sasl?.password, "function");
  assert.equal(await (options.sasl!.password as () => string)(), "pa55");
  assert.doesNotMatch(inspect(options, { depth: 10 }), /pa55/);
});

test("a SASL_PLAINTEXT password is revealed only by the provider", async () => {
  const options = clientOptions({
    bootstrapServers: ["k:9092"],
    security: { protocol: "SASL_PLAINTEXT", sasl: { mechanism: "PLAIN", username: "u", password: secret("hidden-1") } },
  });
  assert.equal(options.tls, undefined);
  assert.equal(await (options.sasl!.password as () => string)(), "hidden-1");
});

test("SSL reads PEM files, maps insecure_skip_verify and sends no SNI to an IP address", () => {
  const dir = mkdtempSync(join(tmpdir(), "floe-tls-"));
  writeFileSync(join(dir, "ca.pem"), pem);
  writeFileSync(join(dir, "client.pem"), pem);
  writeFileSync(join(dir, "client.key"), "-----BEGIN PRIVATE KEY-----\nK\n-----END PRIVATE KEY-----\n");
  const options = clientOptions({
    bootstrapServers: ["10.0.0.1:9093"],
    security: {
      protocol: "SSL",
      tls: {
        ca: join(dir, "ca.pem"),
        clientCertificate: { cert: join(dir, "client.pem"), key: join(dir, "client.key") },
        insecureSkipVerify: true,
      },
    },
  });
  assert.equal(options.tls?.ca, pem);
  assert.equal(options.tls?.cert, pem);
  assert.match(String(options.tls?.key), /PRIVATE KEY/);
  assert.equal(options.tls?.rejectUnauthorized, false);
  assert.equal(options.tlsServerName, undefined);
  assert.equal(options.sasl, undefined);
});

test("a PEM file that cannot be read fails before any connection, naming the setting and the file", () => {
  // The job file's rules (host:port, the settings each protocol uses) are checked where it is
  // validated (job/source.ts); the options take them as given, and only reading files can fail here.
  assert.throws(
    () =>
      clientOptions({ bootstrapServers: ["k:9092"], security: { protocol: "SSL", tls: { ca: "/no/such/ca.pem" } } }),
    (error: Error) =>
      error instanceof KafkaConfigError && /security\.tls\.ca: .*\/no\/such\/ca\.pem/.test(error.message),
  );
});

test("IPv6 bootstrap servers in brackets are accepted", () => {
  assert.deepEqual(
    clientOptions({ bootstrapServers: ["[::1]:9092"], security: { protocol: "PLAINTEXT" } }).bootstrapBrokers,
    ["[::1]:9092"],
  );
});

test("the description names servers, protocol, mechanism and user, never the password", () => {
  const text = describeConnection({
    bootstrapServers: ["a:9092", "b:9092"],
    security: {
      protocol: "SASL_SSL",
      sasl: { mechanism: "PLAIN", username: "bob", password: secret("s3cret") },
      tls: {},
    },
  });
  assert.equal(text, "a:9092, b:9092 over SASL_SSL (PLAIN as 'bob')");
});

test("an unreachable broker is a KafkaConnectionError naming the servers and what to check", async () => {
  // Port 1 on loopback: nothing listens, the connection is refused at once.
  const config: KafkaConnectionOptions = {
    bootstrapServers: ["127.0.0.1:1"],
    security: {
      protocol: "SASL_PLAINTEXT",
      sasl: { mechanism: "PLAIN", username: "u", password: secret("do-not-print") },
    },
  };
  await assert.rejects(KafkaCluster.connect(config), (error: Error) => {
    assert.ok(error instanceof KafkaConnectionError, String(error));
    assert.match(error.message, /127\.0\.0\.1:1/);
    assert.match(error.message, /connection refused/);
    assert.match(error.message, /Check that a broker listens on 127\.0\.0\.1:1/);
    assert.doesNotMatch(error.message, /do-not-print/);
    assert.doesNotMatch(inspect(error, { depth: 10 }), /do-not-print/);
    return true;
  });
});

test("an unknown host is reported as such", async () => {
  await assert.rejects(
    KafkaCluster.connect({ bootstrapServers: ["no-such-host.invalid:9092"], security: { protocol: "PLAINTEXT" } }),
    (error: Error) => error instanceof KafkaConnectionError && /host name not found/.test(error.message),
  );
});
