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
// naming the step and the server, and at the first refusal of its credentials or certificates,
// which no retry of the same settings overcomes.
import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import type { ConnectionOptions as TlsOptions } from "node:tls";
import { inspect } from "node:util";
import { Admin, type BaseOptions, Consumer, TimeoutError } from "@platformatic/kafka";
import { type AclResources, authorizationFailure } from "./authorization.ts";
import { useContiguousResponseBuffers } from "./contiguous-buffers.ts";
import { diagnose } from "./diagnose.ts";
import {
  describeCause,
  type KafkaAuthorizationError,
  KafkaConfigError,
  KafkaConnectionError,
  KafkaError,
  walk,
} from "./errors.ts";
import type { KafkaSecurity, KafkaTls } from "./security.ts";
import { probeTls, type TlsFindings } from "./tls-probe.ts";

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
  readonly #pending = new Set<(failure: (what: string) => KafkaError) => void>();
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
        this.#onAttemptFailed(error);
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
  async run<T>(what: string, work: (admin: Admin) => Promise<T>, resources: AclResources = {}): Promise<T> {
    try {
      return await this.bounded(what, () => work(this.#admin));
    } catch (error) {
      if (error instanceof KafkaError) throw error;
      throw (
        this.authorizationError(what, error, resources) ??
        (await this.diagnosedError(error)) ??
        new KafkaError(`${what} failed: ${this.scrub(describeCause(error))}`, { cause: error })
      );
    }
  }

  /**
   * The KafkaAuthorizationError for a broker's refusal of `what` for want of an ACL on the
   * resources, naming the ACLs to add; undefined when the error is not such a refusal.
   */
  authorizationError(what: string, error: unknown, resources: AclResources): KafkaAuthorizationError | undefined {
    return authorizationFailure(what, error, resources, this.config);
  }

  /**
   * Runs a step of the admin client that ends at the first connect or request that times out,
   * with a KafkaConnectionError naming the step and the server. Other errors pass through as the
   * library raised them.
   */
  async bounded<T>(what: string, work: () => Promise<T>): Promise<T> {
    let fail!: (failure: (what: string) => KafkaError) => void;
    const timedOut = new Promise<never>((_, reject) => {
      fail = (failure) => reject(failure(what));
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

  /**
   * An attempt of the admin client failed and the library is about to retry: a timeout ends the
   * pending steps now, and so does a refusal of the credentials or certificates. A connection
   * to a TLS listener that just closed gets a second look (the TLS probe), which tells a
   * missing client certificate from a network failure.
   */
  #onAttemptFailed(error: unknown): void {
    if (this.#pending.size === 0) return;
    if (isTimeout(error)) {
      for (const fail of this.#pending) fail((what) => this.#timeoutError(what, error));
      return;
    }
    const failure = this.connectionError(error);
    // An untrusted certificate waits for the probe too, which names its issuer.
    if (failure?.isAuthentication && failure.reason !== "untrusted-certificate") {
      for (const fail of this.#pending) fail(() => failure);
    } else if ((failure?.reason === "network" || failure?.reason === "untrusted-certificate") && this.#usesTls) {
      void this.diagnosedError(error).then((diagnosed) => {
        if (diagnosed?.isAuthentication) for (const fail of this.#pending) fail(() => diagnosed);
      });
    }
  }

  get #usesTls(): boolean {
    const { protocol } = this.config.security;
    return protocol === "SSL" || protocol === "SASL_SSL";
  }

  /**
   * connectionError, with what a second look at a TLS listener shows (the broker's certificate,
   * a TLS alert after the handshake) when the error alone does not tell a certificate problem.
   */
  async diagnosedError(error: unknown): Promise<KafkaConnectionError | undefined> {
    const first = this.connectionError(error);
    if (!this.#usesTls) return first;
    if (first && first.reason !== "network" && first.reason !== "untrusted-certificate") return first;
    const findings = await this.#tlsFindings();
    return this.connectionError(error, findings) ?? first;
  }

  #tlsProbe: Promise<TlsFindings | undefined> | undefined;

  /** One probe of the first bootstrap server per handle, shared by every failure that asks. */
  #tlsFindings(): Promise<TlsFindings | undefined> {
    this.#tlsProbe ??= (async () => {
      const server = this.config.bootstrapServers[0];
      const tls = this.#options.tls;
      if (server === undefined || tls === undefined) return undefined;
      const end = server.lastIndexOf(":");
      const host = hostOf(server);
      const servername = this.#options.tlsServerName === true ? host : undefined;
      return probeTls(host, Number(server.slice(end + 1)), tls, {
        ...(servername === undefined ? {} : { servername }),
        timeoutMs: this.#options.connectTimeout ?? DEFAULT_CONNECT_TIMEOUT_MS,
      });
    })().catch(() => undefined);
    return this.#tlsProbe;
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
        { cause: timeout, reason: "timeout" },
      );
    }
    const connected = [...this.#connected].join(", ");
    return new KafkaConnectionError(
      this.config.bootstrapServers,
      `Kafka at ${this.description} did not answer within ${requestTimeout} (request_timeout): ${what}: ` +
        `${connected} accepted the connection but answered no request`,
      `Check that ${connected} is a Kafka listener (not another service, or a proxy that holds connections) and that the broker is healthy; source.kafka.request_timeout sets how long floe waits.`,
      { cause: timeout, reason: "timeout" },
    );
  }

  /** The KafkaConnectionError for a library error that is a connection failure, else undefined. */
  connectionError(error: unknown, findings?: TlsFindings): KafkaConnectionError | undefined {
    const diagnosis = diagnose(this.config, error, findings);
    if (!diagnosis) return undefined;
    const summary = `cannot connect to Kafka at ${this.description}: ${this.scrub(diagnosis.problem)} (${this.scrub(describeCause(error))})`;
    return new KafkaConnectionError(this.config.bootstrapServers, summary, diagnosis.hint, {
      cause: error,
      reason: diagnosis.reason,
    });
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
    // A private key is a secret whether it is PEM text or a path: a key pasted without its
    // BEGIN line must not come back in an error message.
    if (field === "key") {
      throw new KafkaConfigError(
        `security.tls.key: neither PEM text (-----BEGIN ...) nor a readable PEM file (${(error as NodeJS.ErrnoException).code ?? "unreadable"}); the value is not shown`,
        { cause: new Error((error as NodeJS.ErrnoException).code ?? "unreadable") },
      );
    }
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
