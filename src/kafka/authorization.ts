// Who the broker takes floe for, and the ACLs a refusal asks for. Kafka names a principal
// User:<SASL username>; over mutual TLS, the broker's ssl.principal.mapping.rules make it from the
// client certificate's subject (most clusters keep the CN; without rules it is the whole subject
// in RFC 2253 form); with neither, User:ANONYMOUS. A refusal is answered with the kafka-acls.sh
// command that allows it: Read (which implies Describe) and Describe on a topic, Read on a group.
import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { hasProtocolError, KafkaAuthorizationError, type MissingAcl, walk } from "./errors.ts";
import type { KafkaSecurity } from "./security.ts";

/** The resources an admin step concerns, which an authorization failure names. */
export interface AclResources {
  readonly topics?: readonly string[];
  readonly group?: string;
}

export interface Principal {
  readonly principal: string;
  /** How it was made, where the broker may name it otherwise. */
  readonly note?: string;
}

/** The principal the broker sees for these settings, as far as floe can tell. */
export function principalOf(security: KafkaSecurity): Principal {
  if ("sasl" in security) return { principal: `User:${security.sasl.username}` };
  const cert = "tls" in security ? security.tls?.clientCertificate?.cert : undefined;
  if (cert === undefined) return { principal: "User:ANONYMOUS" };
  let parts: string[];
  try {
    const text = cert.trimStart().startsWith("-----BEGIN") ? cert : readFileSync(cert, "utf8");
    // Node lists the subject's parts in the certificate's order; Kafka's RFC 2253 form reverses them.
    parts = new X509Certificate(text).subject.split("\n").reverse();
  } catch {
    // An unreadable certificate fails the connection first.
    return { principal: "User:ANONYMOUS" };
  }
  const subject = parts.join(",");
  const cn = parts.find((p) => p.startsWith("CN="))?.slice(3);
  if (cn === undefined) return { principal: `User:${subject}` };
  return {
    principal: `User:${cn}`,
    note: `the client certificate's CN; a broker without ssl.principal.mapping.rules names it User:${subject}`,
  };
}

/**
 * The KafkaAuthorizationError for a broker's refusal of `what` for want of an ACL on the
 * resources (GROUP_AUTHORIZATION_FAILED, TOPIC_AUTHORIZATION_FAILED anywhere in the error tree),
 * naming the ACLs to add; undefined when the error is not such a refusal.
 */
export function authorizationFailure(
  what: string,
  error: unknown,
  resources: AclResources,
  config: { readonly bootstrapServers: readonly string[]; readonly security: KafkaSecurity },
): KafkaAuthorizationError | undefined {
  const missing: MissingAcl[] = [];
  if (hasProtocolError(error, "GROUP_AUTHORIZATION_FAILED") && resources.group !== undefined) {
    missing.push({ resource: "group", name: resources.group, operations: ["Read"] });
  }
  if (hasProtocolError(error, "TOPIC_AUTHORIZATION_FAILED")) {
    const concerned = resources.topics ?? [];
    // The answer says which topics it refused; a step over many topics names only those.
    const refused = refusedTopics(error);
    const named = concerned.some((t) => refused.has(t)) ? concerned.filter((t) => refused.has(t)) : concerned;
    for (const topic of named) missing.push({ resource: "topic", name: topic, operations: ["Read", "Describe"] });
  }
  if (missing.length === 0) return undefined;
  return new KafkaAuthorizationError(what, principalOf(config.security), missing, config.bootstrapServers, {
    cause: error,
  });
}

/** Kafka's error code TOPIC_AUTHORIZATION_FAILED. */
const TOPIC_AUTHORIZATION_FAILED = 29;

/**
 * The topics a broker's answer (the `response` of the library's ResponseError) refused: those
 * whose own error code, or one of whose partitions' codes, is TOPIC_AUTHORIZATION_FAILED.
 */
function refusedTopics(error: unknown): Set<string> {
  const refused = new Set<string>();
  for (const e of walk(error)) {
    const topics = (e as { response?: { topics?: unknown } }).response?.topics;
    if (!Array.isArray(topics)) continue;
    for (const topic of topics as { name?: unknown; errorCode?: unknown; partitions?: unknown }[]) {
      if (typeof topic?.name !== "string") continue;
      const partitions = Array.isArray(topic.partitions) ? (topic.partitions as { errorCode?: unknown }[]) : [];
      if (
        topic.errorCode === TOPIC_AUTHORIZATION_FAILED ||
        partitions.some((p) => p?.errorCode === TOPIC_AUTHORIZATION_FAILED)
      ) {
        refused.add(topic.name);
      }
    }
  }
  return refused;
}
