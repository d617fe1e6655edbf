// The diagnosis of a failed connection, from error trees shaped as @platformatic/kafka and Node's
// TLS raise them (the integration tests meet each for real on the secure broker): one reason and
// one message per cause, and never the password.
import assert from "node:assert/strict";
import { test } from "node:test";
import { diagnose } from "#src/kafka/diagnose.ts";
import { aclCommand, KafkaAuthorizationError, KafkaConnectionError } from "#src/kafka/errors.ts";
import type { KafkaSecurity } from "#src/kafka/security.ts";

const password = { reveal: () => "pa55-word", toString: () => "***" };
const saslSsl = (mechanism: "PLAIN" | "SCRAM-SHA-256" | "SCRAM-SHA-512", ca?: string): KafkaSecurity => ({
  protocol: "SASL_SSL",
  sasl: { mechanism, username: "floe", password },
  tls: ca === undefined ? {} : { ca },
});
const settings = (security: KafkaSecurity) => ({ bootstrapServers: ["127.0.0.1:9193"], security });

/** The library's nesting: MultipleErrors > NetworkError > (its cause). */
function libraryError(cause: object): Error {
  const network = Object.assign(new Error("Connection to 127.0.0.1:9193 failed."), { code: "PLT_KFK_NETWORK", cause });
  return Object.assign(new AggregateError([network], "Cannot connect to any broker."), { code: "PLT_KFK_MULTIPLE" });
}

function protocolError(apiId: string, extra: object = {}): Error {
  const protocol = Object.assign(new Error("SASL authentication failed."), { apiId });
  return Object.assign(new AggregateError([protocol], "Received response with error"), extra);
}

test("a refused SASL password is an authentication failure naming user and mechanism, not the password", () => {
  const auth = Object.assign(new Error("SASL authentication failed."), {
    code: "PLT_KFK_AUTHENTICATION",
    cause: protocolError("SASL_AUTHENTICATION_FAILED"),
  });
  const d = diagnose(settings(saslSsl("SCRAM-SHA-512")), libraryError(auth));
  assert.equal(d?.reason, "authentication");
  assert.match(d!.problem, /refused the credentials of user 'floe' \(SCRAM-SHA-512\)/);
  assert.match(d!.hint, /kafka-configs\.sh --describe --entity-type users --entity-name floe/);
  assert.doesNotMatch(JSON.stringify(d), /pa55-word/);
});

test("a mechanism the listener does not offer names the ones it offers, from the handshake's answer", () => {
  const handshake = protocolError("UNSUPPORTED_SASL_MECHANISM", {
    response: { mechanisms: ["PLAIN", "SCRAM-SHA-512"] },
  });
  const cause = Object.assign(new Error("Cannot find a suitable SASL mechanism."), { cause: handshake });
  const d = diagnose(settings(saslSsl("SCRAM-SHA-256")), libraryError(cause));
  assert.equal(d?.reason, "mechanism");
  assert.equal(d?.problem, "the listener does not offer SASL SCRAM-SHA-256; it offers PLAIN, SCRAM-SHA-512");
});

test("an untrusted CA, with and without security.tls.ca, names the certificate's issuer when the probe saw it", () => {
  const verify = Object.assign(new Error("self-signed certificate in certificate chain"), {
    code: "SELF_SIGNED_CERT_IN_CHAIN",
  });
  const system = diagnose(settings(saslSsl("PLAIN")), libraryError(verify), {
    certificate: { subject: "CN=localhost", issuer: "CN=floe test CA", names: "DNS:localhost" },
  });
  assert.equal(system?.reason, "untrusted-certificate");
  assert.match(system!.problem, /issued by CN=floe test CA, and floe trusts only the system's CAs/);
  assert.match(system!.hint, /^Set security\.tls\.ca/);
  const wrongCa = diagnose(settings(saslSsl("PLAIN", "/etc/floe/ca.pem")), libraryError(verify));
  assert.equal(wrongCa?.reason, "untrusted-certificate");
  assert.match(wrongCa!.hint, /^security\.tls\.ca does not hold the CA/);
  for (const code of [
    "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
    "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
    "DEPTH_ZERO_SELF_SIGNED_CERT",
  ]) {
    const d = diagnose(settings(saslSsl("PLAIN")), libraryError(Object.assign(new Error(code), { code })));
    assert.equal(d?.reason, "untrusted-certificate", code);
  }
});

test("a host name the certificate does not hold names the host and the certificate's names", () => {
  const mismatch = Object.assign(new Error("Hostname/IP does not match certificate's altnames"), {
    code: "ERR_TLS_CERT_ALTNAME_INVALID",
    host: "127.0.0.1",
    cert: { subjectaltname: "DNS:broker.invalid" },
  });
  const d = diagnose(settings({ protocol: "SSL", tls: {} }), libraryError(mismatch));
  assert.equal(d?.reason, "hostname-mismatch");
  assert.equal(d?.problem, "the broker's certificate does not name 127.0.0.1 (it names DNS:broker.invalid)");
});

test("an expired certificate is its own case", () => {
  const d = diagnose(
    settings({ protocol: "SSL", tls: {} }),
    libraryError(Object.assign(new Error("certificate has expired"), { code: "CERT_HAS_EXPIRED" })),
  );
  assert.equal(d?.reason, "certificate");
});

test("a TLS alert after the handshake (seen by the probe) is a missing or refused client certificate", () => {
  const closed = libraryError(Object.assign(new Error("Connection closed"), { code: "PLT_KFK_NETWORK" }));
  const alert = { code: "ERR_SSL_SSL/TLS_ALERT_BAD_CERTIFICATE", message: "ssl/tls alert bad certificate" };
  const certificate = { subject: "CN=localhost", issuer: "CN=ca", names: "IP Address:127.0.0.1" };
  const none = diagnose(settings({ protocol: "SSL", tls: { ca: "ca.pem" } }), closed, { certificate, alert });
  assert.equal(none?.reason, "client-certificate");
  assert.match(none!.problem, /requires a client certificate \(mutual TLS\) and none was sent/);
  const refused = diagnose(
    settings({ protocol: "SSL", tls: { clientCertificate: { cert: "/etc/floe/client.pem", key: "k.pem" } } }),
    closed,
    { certificate, alert: { code: "ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED", message: "x" } },
  );
  assert.match(refused!.problem, /refused the client certificate \/etc\/floe\/client\.pem/);
  // Without the probe's alert, a closed connection is only a network failure.
  assert.equal(diagnose(settings({ protocol: "SSL", tls: {} }), closed)?.reason, "network");
});

test("an authentication failure is not retryable; a network failure is", () => {
  assert.equal(new KafkaConnectionError(["k:1"], "s", "h", { reason: "client-certificate" }).isAuthentication, true);
  assert.equal(new KafkaConnectionError(["k:1"], "s", "h", { reason: "refused" }).isAuthentication, false);
  assert.equal(new KafkaConnectionError(["k:1"], "s", "h").reason, "network");
});

test("a missing ACL is named as the kafka-acls.sh command that adds it", () => {
  assert.equal(
    aclCommand("User:floe", { resource: "group", name: "floe_job", operations: ["Read"] }, ["127.0.0.1:9092"]),
    "kafka-acls.sh --bootstrap-server 127.0.0.1:9092 --add --allow-principal User:floe --operation Read --group floe_job",
  );
  assert.equal(
    aclCommand("User:floe", { resource: "topic", name: "odd name's", operations: ["Read", "Describe"] }, []),
    "kafka-acls.sh --add --allow-principal User:floe --operation Read --operation Describe --topic 'odd name'\\''s'",
  );
  const error = new KafkaAuthorizationError(
    "reading the committed offsets of consumer group g",
    { principal: "User:floe" },
    [{ resource: "group", name: "g", operations: ["Read"] }],
    ["k:9092"],
  );
  assert.match(
    error.message,
    /^reading the committed offsets of consumer group g was refused: User:floe needs Read on group g\./,
  );
  assert.match(error.message, /--add --allow-principal User:floe --operation Read --group g$/);
});
