// The secure test broker (dev/services/kafka-secure.ts) as the tests reach it: its super user
// for the chores of dev/kafka.ts (topics, producing) and for granting ACLs, and the job-file
// `source.kafka` keys of each way in, as a user would write them.
import { AclOperations, AclPermissionTypes, ResourcePatternTypes, ResourceTypes } from "@platformatic/kafka";
import type { DevBroker } from "./kafka.ts";
import { withAdmin } from "./kafka.ts";
import { clientCommonName, mismatchHost } from "./services/kafka-secure/certs.ts";
import { admin, certificates, floeUser, limitedUser, listenerHost, ports } from "./services/kafka-secure/config.ts";

export { certificates, clientCommonName, floeUser, limitedUser, mismatchHost };

/** The secure broker as its super user, over SASL_PLAINTEXT with PLAIN. */
export const secureAdmin: DevBroker = {
  bootstrapBrokers: [`${listenerHost}:${ports.saslPlaintext()}`],
  sasl: { mechanism: "PLAIN", username: admin.username, password: admin.password },
};

export const secureServers = {
  saslPlaintext: `${listenerHost}:${ports.saslPlaintext()}`,
  saslSsl: `${listenerHost}:${ports.saslSsl()}`,
  ssl: `${listenerHost}:${ports.ssl()}`,
  /** The SSL listener whose certificate is for broker.invalid only. */
  mismatch: `${listenerHost}:${ports.mismatch()}`,
};

export type Mechanism = "PLAIN" | "SCRAM-SHA-256" | "SCRAM-SHA-512";

/** The principal the broker sees for a SASL user or for the client certificate. */
export const principalOf = (user: { username: string } | "client-certificate") =>
  user === "client-certificate" ? `User:${clientCommonName}` : `User:${user.username}`;

/**
 * The job file's `source.kafka` connection keys (bootstrap_servers, security, sasl, tls) for a
 * way into the secure broker, as YAML lines indented for `source.kafka`.
 */
export function sourceYaml(
  way:
    | { protocol: "SASL_PLAINTEXT"; mechanism: Mechanism; user?: { username: string; password: string } }
    | { protocol: "SASL_SSL"; mechanism: Mechanism; user?: { username: string; password: string }; ca?: string }
    | { protocol: "SSL"; server?: string; ca?: string; clientCertificate?: boolean; insecureSkipVerify?: boolean },
  indent = "    ",
): string {
  const lines: string[] = [];
  if (way.protocol === "SSL") {
    lines.push(`bootstrap_servers: [${way.server ?? secureServers.ssl}]`, "security: {protocol: SSL}");
    const cert = way.clientCertificate ?? true;
    const tls = [`ca: ${way.ca ?? certificates.ca}`];
    if (cert) tls.push(`cert: ${certificates.clientCert}`, `key: ${certificates.clientKey}`);
    if (way.insecureSkipVerify) tls.push("insecure_skip_verify: true");
    lines.push(`tls: {${tls.join(", ")}}`);
  } else {
    const user = way.user ?? floeUser;
    const server = way.protocol === "SASL_SSL" ? secureServers.saslSsl : secureServers.saslPlaintext;
    lines.push(`bootstrap_servers: [${server}]`, `security: {protocol: ${way.protocol}}`);
    lines.push(
      `sasl: {mechanism: ${way.mechanism}, username: ${user.username}, password: ${JSON.stringify(user.password)}}`,
    );
    if (way.protocol === "SASL_SSL") lines.push(`tls: {ca: ${way.ca ?? certificates.ca}}`);
  }
  return lines.map((l) => `${indent}${l}`).join("\n");
}

export type Grant =
  | { topic: string; operations: ("Read" | "Describe")[]; prefixed?: boolean }
  | { group: string; operations: ("Read" | "Describe")[] };

/** Allows `principal` the operations, from any host (kafka-acls.sh --add --allow-principal ...). */
export async function grantAcls(principal: string, grants: Grant[]): Promise<void> {
  const creations = grants.flatMap((g) =>
    g.operations.map((operation) => ({
      resourceType: "topic" in g ? ResourceTypes.TOPIC : ResourceTypes.GROUP,
      resourceName: "topic" in g ? g.topic : g.group,
      resourcePatternType: "topic" in g && g.prefixed ? ResourcePatternTypes.PREFIXED : ResourcePatternTypes.LITERAL,
      principal,
      host: "*",
      operation: operation === "Read" ? AclOperations.READ : AclOperations.DESCRIBE,
      permissionType: AclPermissionTypes.ALLOW,
    })),
  );
  await withAdmin(secureAdmin, (a) => a.createAcls({ creations }));
  // ACLs reach the authorizer through the metadata log: wait until the broker lists them all.
  const deadline = Date.now() + 30_000;
  for (;;) {
    const listed = await withAdmin(secureAdmin, (a) =>
      a.describeAcls({
        filter: {
          resourceType: ResourceTypes.ANY,
          resourceName: null,
          resourcePatternType: ResourcePatternTypes.ANY,
          principal,
          host: null,
          operation: AclOperations.ANY,
          permissionType: AclPermissionTypes.ANY,
        },
      }),
    );
    const have = new Set(
      listed.flatMap((r) =>
        r.acls.map((acl) => `${r.resourceType}/${r.resourceName}/${r.resourcePatternType}/${acl.operation}`),
      ),
    );
    const missing = creations.filter(
      (c) => !have.has(`${c.resourceType}/${c.resourceName}/${c.resourcePatternType}/${c.operation}`),
    );
    if (missing.length === 0) return;
    if (Date.now() > deadline) throw new Error(`ACLs of ${principal} not listed after 30 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
