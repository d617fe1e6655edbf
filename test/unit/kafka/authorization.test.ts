// Who floe says it is to the broker, and the ACLs a refusal names: pure, from the settings and the
// error tree as @platformatic/kafka raises it (kafka-acls.test.ts meets the refusals for real).
import assert from "node:assert/strict";
import { test } from "node:test";
import { authorizationFailure, principalOf } from "#src/kafka/authorization.ts";
import { KafkaAuthorizationError } from "#src/kafka/errors.ts";
import type { KafkaSecurity } from "#src/kafka/security.ts";

const password = { reveal: () => "pa55", toString: () => "***" };
/** Self-signed, subject O=floe tests then CN=floe-client (RFC 2253: CN=floe-client,O=floe tests). */
const clientCert = `-----BEGIN CERTIFICATE-----
MIIBrjCCAVOgAwIBAgIUCUupPDU1stMg8j9RqUrsL3FO7uUwCgYIKoZIzj0EAwIw
KzETMBEGA1UECgwKZmxvZSB0ZXN0czEUMBIGA1UEAwwLZmxvZS1jbGllbnQwIBcN
MjYxMjAxMTIzMTI5WhgPMjEyNjExMDcxMjMxMjlaMCsxEzARBgNVBAoMCmZsb2Ug
dGVzdHMxFDASBgNVBAMMC2Zsb2UtY2xpZW50MFkwEwYHKoZIzj0CAQYIKoZIzj0D
AQcDQgAEEWR1WUaPknFwgNjLNVseOgJ4SUM0l11Gpa1Gpjg03YjR79Ogm+uACpx1
QA2trsT3kWwJrURKvJjNHDnN/RTTtqNTMFEwHQYDVR0OBBYEFPtMIiiDHDU3x517
SeF57HhHvixqMB8GA1UdIwQYMBaAFPtMIiiDHDU3x517SeF57HhHvixqMA8GA1Ud
EwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSQAwRgIhAO8F+EjvGUzJ2jheq4cs8ePY
IaPQwOmk31YPOuCxpVdiAiEA2QpoAdnMNK2OZZDPprJBsgyYXJKabHdxRDH74Vgh
QFw=
-----END CERTIFICATE-----`;
/** Self-signed, subject O=acme, OU=data: no CN. */
const noCnCert = `-----BEGIN CERTIFICATE-----
MIIBkjCCATmgAwIBAgIUEown22U3h2eySk9Ez+YXAaODFZEwCgYIKoZIzj0EAwIw
HjENMAsGA1UECgwEYWNtZTENMAsGA1UECwwEZGF0YTAgFw0yNjEyMDExMjMxMjla
GA8yMTI2MTEwNzEyMzEyOVowHjENMAsGA1UECgwEYWNtZTENMAsGA1UECwwEZGF0
YTBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABKd/NZwCjmrQZpgNSg5BM9XUVXyF
n5nPbUHU/7wnI3taUx68U1JjMS4ro/2sehfmHXe+lCSXk35FikB372/pCTCjUzBR
MB0GA1UdDgQWBBQmxg0XLoE7FLGfRjrDY+pz/bl7GDAfBgNVHSMEGDAWgBQmxg0X
LoE7FLGfRjrDY+pz/bl7GDAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0cA
MEQCIH3BxUwKTH8ZNy0yZhfRucOWGBD3SSgdnoCpRh6qAcKSAiAFGQRpbsUi9nQw
236sqpDLlzH4cHJT/46ljz7LyI6CJw==
-----END CERTIFICATE-----`;
const ssl = (cert: string): KafkaSecurity => ({
  protocol: "SSL",
  tls: { clientCertificate: { cert, key: "unused.key" } },
});

test("the principal: the SASL user, the client certificate's CN (with the broker's default named), else ANONYMOUS", () => {
  assert.deepEqual(principalOf({ protocol: "SASL_SSL", sasl: { mechanism: "PLAIN", username: "KEY123", password } }), {
    principal: "User:KEY123",
  });
  const mtls = principalOf(ssl(clientCert));
  assert.equal(mtls.principal, "User:floe-client");
  assert.match(mtls.note ?? "", /without ssl\.principal\.mapping\.rules names it User:CN=floe-client,O=floe tests$/);
  assert.deepEqual(principalOf(ssl(noCnCert)), { principal: "User:OU=data,O=acme" });
  assert.deepEqual(principalOf({ protocol: "SSL", tls: {} }), { principal: "User:ANONYMOUS" });
  assert.deepEqual(principalOf({ protocol: "PLAINTEXT" }), { principal: "User:ANONYMOUS" });
});

/** The library's shape: ResponseError (an AggregateError) > ProtocolError with apiId. */
const refusal = (apiId: string) =>
  new AggregateError([Object.assign(new Error("authorization failed."), { apiId })], "Received response with error");

const config = {
  bootstrapServers: ["b1:9096"],
  security: { protocol: "SASL_SSL", sasl: { mechanism: "SCRAM-SHA-512", username: "floe", password } } as KafkaSecurity,
};

test("a group refusal names Read on the group; a topic refusal Read and Describe on the topics concerned", () => {
  const group = authorizationFailure(
    "reading the committed offsets of consumer group g",
    refusal("GROUP_AUTHORIZATION_FAILED"),
    { group: "g", topics: ["t"] },
    config,
  );
  assert.ok(group instanceof KafkaAuthorizationError);
  assert.deepEqual(group.missing, [{ resource: "group", name: "g", operations: ["Read"] }]);
  assert.match(
    group.message,
    /kafka-acls\.sh --bootstrap-server b1:9096 --add --allow-principal User:floe --operation Read --group g$/,
  );
  const topics = authorizationFailure(
    "listing the high watermarks of a, b",
    refusal("TOPIC_AUTHORIZATION_FAILED"),
    { topics: ["a", "b"] },
    config,
  );
  assert.deepEqual(
    topics?.missing.map((m) => `${m.resource} ${m.name} ${m.operations.join("+")}`),
    ["topic a Read+Describe", "topic b Read+Describe"],
  );
  assert.equal(topics?.principal, "User:floe");
});

test("anything else is not an authorization failure", () => {
  assert.equal(authorizationFailure("x", refusal("UNKNOWN_TOPIC_OR_PARTITION"), { topics: ["a"] }, config), undefined);
  assert.equal(authorizationFailure("x", new Error("Connection closed"), { group: "g" }, config), undefined);
  // A group refusal with no group to name says nothing rather than something wrong.
  assert.equal(authorizationFailure("x", refusal("GROUP_AUTHORIZATION_FAILED"), {}, config), undefined);
});

test("of several topics, only those the answer refused are named", () => {
  const answer = Object.assign(refusal("TOPIC_AUTHORIZATION_FAILED"), {
    response: {
      topics: [
        { name: "a", errorCode: 0, partitions: [] },
        { name: "b", errorCode: 29, partitions: [] },
        { name: "c", errorCode: 0, partitions: [{ errorCode: 29 }] },
      ],
    },
  });
  const refused = authorizationFailure("listing", answer, { topics: ["a", "b", "c"] }, config);
  assert.deepEqual(
    refused?.missing.map((m) => m.name),
    ["b", "c"],
  );
});
