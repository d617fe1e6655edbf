// The outbound policy of floe serve: link-local and cloud-metadata addresses refused by name,
// by address and after DNS resolution (a name resolving to one), before any connection; an
// allow-list reaches only what it names.
import assert from "node:assert/strict";
import { test } from "node:test";
import { OutboundPolicy, OutboundRefusedError, refusedAddress } from "#src/pipeline/outbound-policy.ts";

test("link-local, metadata and unspecified addresses are refused; loopback and private ones are not", () => {
  for (const address of [
    "169.254.169.254",
    "169.254.0.1",
    "fd00:ec2::254",
    "fe80::1",
    "::ffff:169.254.169.254",
    // The same, as new URL() writes it, expanded, and through the NAT64 prefix.
    "::ffff:a9fe:a9fe",
    "[::ffff:a9fe:a9fe]",
    "0:0:0:0:0:ffff:a9fe:a9fe",
    "64:ff9b::a9fe:a9fe",
    "::ffff:6464:64c8",
    "100.100.100.200",
    "0.0.0.0",
    "::",
  ]) {
    assert.ok(refusedAddress(address) !== undefined, address);
  }
  for (const address of ["127.0.0.1", "::1", "10.0.0.5", "192.168.1.1", "203.0.113.4", "2001:db8::1", "::ffff:a00:5"]) {
    assert.equal(refusedAddress(address), undefined, address);
  }
});

test("a host is refused by name, by address, and when it resolves to a refused address; the path is named", async () => {
  const resolved: string[] = [];
  const policy = new OutboundPolicy([], async (host) => {
    resolved.push(host);
    return host === "sneaky.example" ? ["10.0.0.1", "169.254.169.254"] : ["203.0.113.10"];
  });
  const refused = async (host: string, pattern: RegExp) =>
    assert.rejects(policy.checkHost(host, "source.kafka.bootstrap_servers.0"), (e: unknown) => {
      assert.ok(e instanceof OutboundRefusedError);
      assert.equal(e.status, 403);
      assert.deepEqual(e.issues[0]!.path, "source.kafka.bootstrap_servers.0");
      assert.match(e.message, pattern);
      return true;
    });
  await refused("metadata.google.internal", /cloud metadata service/);
  await refused("METADATA.GOOGLE.INTERNAL.", /cloud metadata service/);
  await refused("169.254.169.254", /link-local/);
  await refused("[fd00:ec2::254]", /metadata/);
  await refused(new URL("http://[::ffff:169.254.169.254]/latest/meta-data/").hostname, /link-local/);
  await refused("sneaky.example", /resolves to 169\.254\.169\.254/);
  await policy.checkHost("catalog.example", "destination.iceberg.catalog.uri");
  await policy.checkHost("127.0.0.1", "x");
  assert.deepEqual(resolved, ["sneaky.example", "catalog.example"], "IP literals and metadata names are not looked up");
});

test("an allow-list reaches only the hosts it names (and *.domain), even one the default refuses", async () => {
  const policy = new OutboundPolicy(["broker.example", "*.corp.example", "169.254.10.10"], async () => ["203.0.113.1"]);
  await policy.checkHost("broker.example", "p");
  await policy.checkHost("catalog.corp.example", "p");
  await policy.checkHost("169.254.10.10", "p");
  await assert.rejects(policy.checkHost("other.example", "p"), /not in the hosts this server may reach/);
  await assert.rejects(policy.checkHost("169.254.169.254", "p"), OutboundRefusedError);
});
