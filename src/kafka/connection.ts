// How floe reaches a Kafka cluster: its connection options (bootstrap servers, security.ts,
// timeouts) mapped onto the options of @platformatic/kafka, one handle that owns the admin
// client, and connection failures turned into one error that names the bootstrap servers and
// says what to check. No message ever contains the password: errors are built from the settings
// minus the secret, and library text is scrubbed.
//
// Every connect and every request is bounded (connectTimeoutMs, requestTimeoutMs). The library
// retries a timed-out request, and nests those retries (each metadata attempt retries its
// ApiVersions handshake), so that a server that accepts connections and never answers held a
// step for 16 request timeouts, 8 minutes. An admin step here fails at its first timeout instead,
// naming the step and the server.
import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import type { ConnectionOptions as TlsOptions } from "node:tls";
import { inspect } from "node:util";
import { Admin, type BaseOptions, Consumer, TimeoutError } from "@platformatic/kafka";
import { useContiguousResponseBuffers } from "./contiguous-buffers.ts";
import { describeCause, KafkaConfigError, KafkaConnectionError, KafkaError, walk } from "./errors.ts";
import type { KafkaSecurity, KafkaTls } from "./security.ts";

/**
 * How to reach a cluster. The job file's rules (host:port servers, credentials the protocol
 * uses) are checked where the job file is validated; these options take them as given.
 */
export interface KafkaConnectionOptions {
  /** host:port of one or more brokers; the others are discovered from the cluster metadata. */
  readonly bootstrapServers: readonly string[];
  readonly clientId?: string;
  readonly security: KafkaSecurity;
  /** Connecting to a broker, TCP, TLS and SASL handshakes included. Default 30 s. */
  readonly connectTimeoutMs?: number;
  /** Waiting for a broker's answer to one request. Default 30 s. */
  readonly requestTimeoutMs?: number;
}

const defaultClientId = "floe";
export const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** The library's own delay between attempts, kept for the retries that are not timeouts. */
const RETRY_DELAY_MS = 1000;

/**
 * The options of an @platformatic/kafka client (Admin, Consumer, Producer) for these settings.
 * Throws KafkaConfigError when a PEM file cannot be read.
 */
export function clientOptions(config: KafkaConnectionOptions): BaseOptions {
  const security = config.security;
  const options: BaseOptions = {
    clientId: config.clientId ?? defaultClientId,
    bootstrapBrokers: [...config.bootstrapServers],
    connectTimeout: config.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    requestTimeout: config.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
  };
  if (security.protocol === "SSL" || security.protocol === "SASL_SSL") {
    options.tls = tlsOptions(security.tls ?? {});
    // Node sends no SNI unless asked, and brokers behind a shared endpoint (most managed Kafka)
    // route by SNI. `true` sends each broker's own host name; Node refuses an IP as SNI, so a
    // cluster addressed by IP goes without.
    if (!config.bootstrapServers.every((server) => isIP(hostOf(server)) !== 0)) options.tlsServerName = true;
  }
  if ("sasl" in security) {
    const { mechanism, username, password } = security.sasl;
    // A provider rather than the string: the library's options then hold no password to print.
    options.sasl = { mechanism, username, password: () => password.reveal() };
  }
  return options;
}

/** "127.0.0.1:9092 over SASL_SSL (SCRAM-SHA-512 as 'floe')": the settings as a user may see them, never the password. */
export function describeConnection(config: KafkaConnectionOptions): string {
  const security = config.security;
  const servers = config.bootstrapServers.join(", ") || "(no bootstrap server)";
  const who = "sasl" in security ? ` (${security.sasl.mechanism} as '${security.sasl.username}')` : "";
  return `${servers} over ${security.protocol}${who}`;
}

/**
 * The handle on one cluster: it owns the admin client that discovery, planning and offset commits
 * share, and makes consumers with the same settings for the reads (each read thread has its own
 * connections and fetch session). Close it when done.
 */
export class KafkaCluster {
  readonly config: KafkaConnectionOptions;
  readonly description: string;
  readonly #options: BaseOptions;
  readonly #admin: Admin;
  /** The admin steps under way, each failed by the first request or connect of the admin client that times out. */
  readonly #pending = new Set<(timeout: unknown) => void>();
  /** host:port of the brokers that accepted a connection (and the SASL handshake): a timeout after that is the server not answering. */
  readonly #connected = new Set<string>();

  private constructor(config: KafkaConnectionOptions) {
    useContiguousResponseBuffers();
    this.#options = clientOptions(config);
    this.config = config;
    this.description = describeConnection(config);
    this.#admin = new Admin({
      ...this.#options,
      // Called before each retry with the error that failed the attempt: a timeout ends the step
      // now rather than after the library's nested retries.
      retryDelay: (_client, _operation, _attempt, _retries, error) => {
        if (isTimeout(error)) for (const fail of this.#pending) fail(error);
        return RETRY_DELAY_MS;
      },
    });
    this.#admin.on("client:broker:connect", (event: { broker?: { host: string; port: number } }) => {
      if (event.broker) this.#connected.add(`${event.broker.host}:${event.broker.port}`);
    });
  }

  /** Connects and fetches the cluster metadata once, so that a wrong address or credential fails here, clearly. */
  static async connect(config: KafkaConnectionOptions): Promise<KafkaCluster> {
    const cluster = new KafkaCluster(config);
    try {
      // No topic asked: the brokers and the cluster id only, however many topics there are.
      await cluster.run("reading the cluster metadata", (admin) => admin.metadata({ topics: [], forceUpdate: true }));
    } catch (error) {
      await cluster.close().catch(() => {});
      throw error;
    }
    return cluster;
  }

  /** The admin client, for the modules of src/kafka/. */
  get admin(): Admin {
    return this.#admin;
  }

  /**
   * A consumer that never joins a group: reads use explicit offsets and `fetch`, so its group id
   * is a placeholder the broker never sees. The caller closes it.
   */
  newConsumer(options: { retries?: number; retryDelay?: number } = {}): Consumer {
    return new Consumer({ ...this.#options, ...options, groupId: `${this.#options.clientId}-reader` });
  }

  /**
   * Runs an admin operation. A connection failure becomes a KafkaConnectionError; any other error
   * becomes a KafkaError saying what was being done, with the library's error as its cause.
   */
  async run<T>(what: string, work: (admin: Admin) => Promise<T>): Promise<T> {
    try {
      return await this.bounded(what, () => work(this.#admin));
    } catch (error) {
      if (error instanceof KafkaError) throw error;
      throw (
        this.connectionError(error) ??
        new KafkaError(`${what} failed: ${this.scrub(describeCause(error))}`, { cause: error })
      );
    }
  }

  /**
   * Runs a step of the admin client that ends at the first connect or request that times out,
   * with a KafkaConnectionError naming the step and the server. Other errors pass through as the
   * library raised them.
   */
  async bounded<T>(what: string, work: () => Promise<T>): Promise<T> {
    let fail!: (timeout: unknown) => void;
    const timedOut = new Promise<never>((_, reject) => {
      fail = (timeout) => reject(this.#timeoutError(what, timeout));
    });
    this.#pending.add(fail);
    try {
      return await Promise.race([work(), timedOut]);
    } catch (error) {
      if (!(error instanceof KafkaError) && isTimeout(error)) throw this.#timeoutError(what, error);
      throw error;
    } finally {
      this.#pending.delete(fail);
    }
  }

  #timeoutError(what: string, timeout: unknown): KafkaConnectionError {
    const { protocol } = this.config.security;
    const servers = this.config.bootstrapServers.join(", ");
    const seconds = (ms: number | undefined) => `${(ms ?? 0) / 1000} s`;
    const connectTimeout = seconds(this.#options.connectTimeout);
    const requestTimeout = seconds(this.#options.requestTimeout);
    const connecting = [...walk(timeout)].some((e) => e instanceof TimeoutError && /^Connection/.test(e.message));
    if (connecting || this.#connected.size === 0) {
      return new KafkaConnectionError(
        this.config.bootstrapServers,
        `cannot connect to Kafka at ${this.description}: ${what}: no connection within ${connectTimeout} (connect_timeout)`,
        `Check that ${servers} is reachable from this machine (firewall, VPN) and that security.protocol (${protocol}) matches the listener.`,
        { cause: timeout },
      );
    }
    const connected = [...this.#connected].join(", ");
    return new KafkaConnectionError(
      this.config.bootstrapServers,
      `Kafka at ${this.description} did not answer within ${requestTimeout} (request_timeout): ${what}: ` +
        `${connected} accepted the connection but answered no request`,
      `Check that ${connected} is a Kafka listener (not another service, or a proxy that holds connections) and that the broker is healthy; source.kafka.request_timeout sets how long floe waits.`,
      { cause: timeout },
    );
  }

  /** The KafkaConnectionError for a library error that is a connection failure, else undefined. */
  connectionError(error: unknown): KafkaConnectionError | undefined {
    const diagnosis = diagnose(this.config, error);
    if (!diagnosis) return undefined;
    const summary = `cannot connect to Kafka at ${this.description}: ${diagnosis.problem} (${this.scrub(describeCause(error))})`;
    return new KafkaConnectionError(this.config.bootstrapServers, summary, diagnosis.hint, { cause: error });
  }

  /** Removes the password from text that came from elsewhere (library messages), should it ever appear. */
  scrub(text: string): string {
    const security = this.config.security;
    const password = "sasl" in security ? security.sasl.password.reveal() : "";
    return password ? text.replaceAll(password, "***") : text;
  }

  async close(): Promise<void> {
    await this.#admin.close();
  }

  // console.log(cluster) must not print the settings, which hold the password.
  [inspect.custom](): string {
    return `KafkaCluster(${this.description})`;
  }
}

/** A connect or a request of the library that timed out, anywhere in the error tree. */
function isTimeout(error: unknown): boolean {
  for (const e of walk(error)) if (e instanceof TimeoutError) return true;
  return false;
}

function tlsOptions(tls: KafkaTls): TlsOptions {
  const options: TlsOptions = {};
  if (tls.ca) options.ca = pem("ca", tls.ca);
  if (tls.clientCertificate) {
    options.cert = pem("cert", tls.clientCertificate.cert);
    options.key = pem("key", tls.clientCertificate.key);
  }
  if (tls.insecureSkipVerify) {
    options.rejectUnauthorized = false;
    options.checkServerIdentity = () => undefined;
  }
  return options;
}

function pem(field: string, value: string): string {
  if (value.trimStart().startsWith("-----BEGIN")) return value;
  try {
    return readFileSync(value, "utf8");
  } catch (error) {
    throw new KafkaConfigError(`security.tls.${field}: cannot read PEM file '${value}' (${(error as Error).message})`, {
      cause: error,
    });
  }
}

function hostOf(server: string): string {
  const end = server.lastIndexOf(":");
  const host = end < 0 ? server : server.slice(0, end);
  return host.startsWith("[") ? host.slice(1, -1) : host;
}

interface Diagnosis {
  problem: string;
  hint: string;
}

const certificateCodes = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "CERT_HAS_EXPIRED",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

/** Says what went wrong and what to check, when the error is a failure to connect or to authenticate. */
function diagnose(config: KafkaConnectionOptions, error: unknown): Diagnosis | undefined {
  const { protocol } = config.security;
  const sasl = "sasl" in config.security ? config.security.sasl : undefined;
  const servers = config.bootstrapServers.join(", ");
  let network = false;
  for (const e of walk(error)) {
    const code = (e as { code?: unknown }).code;
    const apiId = (e as { apiId?: unknown }).apiId;
    const message = e instanceof Error ? e.message : "";
    if (code === "ECONNREFUSED") {
      return {
        problem: "connection refused",
        hint: `Check that a broker listens on ${servers} and that the host and port are right.`,
      };
    }
    if (code === "ENOTFOUND" || code === "EAI_AGAIN") {
      return {
        problem: "host name not found",
        hint: `Check the host names of ${servers} and the DNS of this machine.`,
      };
    }
    if (message.includes("Broker requires TLS")) {
      return {
        problem: "the broker speaks TLS",
        hint: `The listener at ${servers} expects TLS: set security.protocol to SSL or SASL_SSL, or use the port of the plaintext listener.`,
      };
    }
    if (message.includes("TLS handshake failed")) {
      return {
        problem: "TLS handshake failed",
        hint: `security.protocol is ${protocol} but the listener at ${servers} does not seem to speak TLS: use PLAINTEXT or SASL_PLAINTEXT, or the port of the TLS listener.`,
      };
    }
    if (typeof code === "string" && certificateCodes.has(code)) {
      return {
        problem: `the broker's certificate was rejected (${code})`,
        hint: "Set security.tls.ca to the CA that signed the broker certificate, check that the certificate names the host you connect to, or set insecure_skip_verify for a test cluster.",
      };
    }
    if (message.includes("Cannot find a suitable SASL mechanism") || apiId === "UNSUPPORTED_SASL_MECHANISM") {
      return {
        problem: `the broker does not offer SASL ${sasl?.mechanism ?? ""}`.trimEnd(),
        hint: "Check security.sasl.mechanism against the mechanisms the listener enables, and that the port is a SASL listener.",
      };
    }
    if (apiId === "SASL_AUTHENTICATION_FAILED" || apiId === "ILLEGAL_SASL_STATE") {
      return {
        problem: `authentication failed for user '${sasl?.username ?? "?"}'`,
        hint: `Check security.sasl.username, security.sasl.password and the mechanism (${sasl?.mechanism ?? "none"}).`,
      };
    }
    if (code === "PLT_KFK_AUTHENTICATION") {
      return {
        problem: "SASL authentication failed",
        hint: `Check security.sasl.username, security.sasl.password and the mechanism (${sasl?.mechanism ?? "none"}).`,
      };
    }
    if (code === "PLT_KFK_NETWORK" || code === "PLT_KFK_TIMEOUT" || code === "ETIMEDOUT") network = true;
  }
  if (network) {
    return {
      problem: "the connection failed or timed out",
      hint: `Check that ${servers} is reachable from this machine (firewall, VPN) and that security.protocol (${protocol}) matches the listener.`,
    };
  }
  return undefined;
}
