// The errors src/kafka/ raises, and how it reads the errors of @platformatic/kafka.
//
// The library nests its errors deeply (MultipleErrors > ResponseError > ProtocolError, or
// MultipleErrors > NetworkError > the socket error), and its top message is usually the least
// useful one ("Cannot connect to any broker."). Our messages name the topic, partition and
// offset concerned and end with the root cause in one line, so that a log line is enough.

/** Base class of every error src/kafka/ raises on purpose; `cause` holds the library's error, if any. */
export class KafkaError extends Error {
  override name = "KafkaError";
}

/** A TLS file named by the settings cannot be read; raised before any connection. */
export class KafkaConfigError extends KafkaError {
  override name = "KafkaConfigError";
}

/** Why a connection failed, as far as floe can tell. */
export type ConnectionFailure =
  | "refused"
  | "host-not-found"
  | "timeout"
  | "network"
  /** The listener speaks TLS and the settings do not, or the other way round. */
  | "protocol-mismatch"
  /** The broker refused the SASL username and password. */
  | "authentication"
  /** The listener does not offer the SASL mechanism. */
  | "mechanism"
  /** The broker's certificate is not signed by a CA the settings trust. */
  | "untrusted-certificate"
  /** The broker's certificate does not name the host connected to. */
  | "hostname-mismatch"
  /** The broker's certificate was refused for another reason (expired, not yet valid, ...). */
  | "certificate"
  /** The listener requires a client certificate (mutual TLS) and none was sent, or refused the one sent. */
  | "client-certificate";

/** Failures that the same settings will meet again: credentials, mechanism, certificates. */
const AUTHENTICATION_FAILURES: ReadonlySet<ConnectionFailure> = new Set([
  "authentication",
  "mechanism",
  "untrusted-certificate",
  "hostname-mismatch",
  "certificate",
  "client-certificate",
]);

/** No broker could be reached, or it refused our TLS or SASL handshake. */
export class KafkaConnectionError extends KafkaError {
  override name = "KafkaConnectionError";
  readonly bootstrapServers: readonly string[];
  /** What to check, in words a user can act on. */
  readonly hint: string;
  readonly reason: ConnectionFailure;

  constructor(
    bootstrapServers: readonly string[],
    summary: string,
    hint: string,
    options?: ErrorOptions & { reason?: ConnectionFailure },
  ) {
    super(`${summary}. ${hint}`, options);
    this.bootstrapServers = bootstrapServers;
    this.hint = hint;
    this.reason = options?.reason ?? "network";
  }

  /** The broker refused who floe says it is (credentials, mechanism, certificates): no retry of the same settings helps. */
  get isAuthentication(): boolean {
    return AUTHENTICATION_FAILURES.has(this.reason);
  }
}

/** An ACL the principal lacks, as `kafka-acls.sh --add` takes it. */
export interface MissingAcl {
  readonly resource: "topic" | "group";
  readonly name: string;
  readonly operations: readonly ("Read" | "Describe")[];
}

/**
 * The broker refused an operation for want of an ACL. The message names the principal and the
 * `kafka-acls.sh --add` command a cluster admin runs to allow it.
 */
export class KafkaAuthorizationError extends KafkaError {
  override name = "KafkaAuthorizationError";
  readonly principal: string;
  readonly missing: readonly MissingAcl[];

  constructor(
    what: string,
    principal: { principal: string; note?: string | undefined },
    missing: readonly MissingAcl[],
    bootstrapServers: readonly string[],
    options?: ErrorOptions,
  ) {
    const commands = missing.map((acl) => aclCommand(principal.principal, acl, bootstrapServers));
    const needs = missing.map((acl) => `${acl.operations.join(" and ")} on ${acl.resource} ${acl.name}`).join(", ");
    const note = principal.note ? ` (${principal.note})` : "";
    super(
      `${what} was refused: ${principal.principal}${note} needs ${needs}. A cluster admin allows it with: ${commands.join(" ; ")}`,
      options,
    );
    this.principal = principal.principal;
    this.missing = missing;
  }
}

/** `kafka-acls.sh --bootstrap-server S --add --allow-principal User:X --operation Read --group G`. */
export function aclCommand(principal: string, acl: MissingAcl, bootstrapServers: readonly string[]): string {
  const server = bootstrapServers[0] === undefined ? "" : ` --bootstrap-server ${bootstrapServers[0]}`;
  const operations = acl.operations.map((o) => `--operation ${o}`).join(" ");
  return `kafka-acls.sh${server} --add --allow-principal ${shellWord(principal)} ${operations} --${acl.resource} ${shellWord(acl.name)}`;
}

function shellWord(word: string): string {
  return /^[A-Za-z0-9_.:=@/+-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

/**
 * A Kafka protocol error code as the library reports it (`apiId`, e.g. "OFFSET_OUT_OF_RANGE"),
 * searched through the whole error tree; undefined when the failure is not a broker answer.
 */
export function protocolErrorId(error: unknown): string | undefined {
  for (const e of walk(error)) {
    const apiId = (e as { apiId?: unknown }).apiId;
    if (typeof apiId === "string") return apiId;
  }
  return undefined;
}

/** Whether any error in the tree has the given protocol error id. */
export function hasProtocolError(error: unknown, ...apiIds: string[]): boolean {
  for (const e of walk(error)) {
    const apiId = (e as { apiId?: unknown }).apiId;
    if (typeof apiId === "string" && apiIds.includes(apiId)) return true;
  }
  return false;
}

/**
 * The chain of messages from the outermost error to its root cause, deduplicated, in one line:
 * "Cannot connect to any broker. > Connection to 127.0.0.1:9999 failed. > connect ECONNREFUSED 127.0.0.1:9999".
 * Only the first branch of an aggregate is followed: the siblings are, in practice, the same
 * failure on other brokers or partitions.
 */
export function describeCause(error: unknown): string {
  const messages: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && current !== null && depth < 10; depth++) {
    const message = messageOf(current);
    if (message && !messages.includes(message)) messages.push(message);
    current = childOf(current);
  }
  return messages.join(" > ") || String(error);
}

/** Every error of the tree, depth first: the error, its aggregated errors and its causes. */
export function* walk(error: unknown, depth = 0): Generator<object> {
  if (typeof error !== "object" || error === null || depth > 10) return;
  yield error;
  const errors = (error as { errors?: unknown }).errors;
  if (Array.isArray(errors)) for (const e of errors) yield* walk(e, depth + 1);
  yield* walk((error as { cause?: unknown }).cause, depth + 1);
}

function childOf(error: unknown): unknown {
  if (typeof error !== "object" || error === null) return undefined;
  const errors = (error as { errors?: unknown }).errors;
  if (Array.isArray(errors) && errors.length > 0) return errors[0];
  return (error as { cause?: unknown }).cause;
}

function messageOf(error: unknown): string {
  if (error instanceof Error) {
    const apiId = (error as { apiId?: unknown }).apiId;
    // Protocol errors carry the broker's own explanation separately from the generic text of the code.
    const serverMessage = (error as { serverErrorMessage?: unknown }).serverErrorMessage;
    const parts = [error.message.trim()];
    if (typeof apiId === "string") parts.push(`(${apiId})`);
    if (typeof serverMessage === "string" && serverMessage) parts.push(`broker says: ${serverMessage}`);
    return parts.join(" ");
  }
  return typeof error === "string" ? error : "";
}
