// A source: the Kafka cluster a job reads, as the job file's `source.kafka` describes it
// (servers, security, SASL, TLS, timeouts). The settings and the rules that tie them together
// (a SASL protocol needs sasl:, tls: only with a TLS protocol, cert with key) are checked here
// and nowhere else; the types are kafka/'s own, so that what passes here is what kafka/ takes.
//
// source.kafka also holds the job's reading settings (consumer_group, topic_pattern,
// max_threads): job-schema.ts adds them, and they belong to the job, not to the cluster.
import { z } from "zod";
import {
  type KafkaSasl,
  type KafkaSecurity,
  type KafkaTls,
  SASL_MECHANISMS,
  SECURITY_PROTOCOLS,
} from "../kafka/security.ts";
import type { RegistryAuth, RegistrySettings } from "../registry/client.ts";
import { duration, nonEmpty, secret } from "./schema-parts.ts";

/** A Kafka cluster and how to connect to it. */
export interface Source {
  readonly bootstrapServers: readonly string[];
  /** Passwords are Secrets; TLS files absolute paths once loaded. */
  readonly security: KafkaSecurity;
  /** Connecting to a broker (TCP, TLS, SASL). */
  readonly connectTimeoutMs: number;
  /** Waiting for a broker's answer to one request. */
  readonly requestTimeoutMs: number;
  /** The schema registry of the Avro and Protobuf streams; undefined when the job file names none. */
  readonly schemaRegistry?: RegistrySettings;
}

/** host:port, with an IPv6 host in brackets. */
const HOST_PORT = /^(\[[0-9A-Fa-f:.]+\]|[^\s:[\]]+):\d{1,5}$/;

const hostPort = z.string().regex(HOST_PORT, "expected host:port (an IPv6 host in brackets: [::1]:9092)");

const bootstrapServers = z
  .union([
    z.array(hostPort).min(1, "list at least one broker"),
    z
      .string()
      .transform((list) => list.split(",").map((s) => s.trim()))
      .pipe(z.array(hostPort)),
  ])
  .describe("Brokers to bootstrap from: a list of host:port, or one comma-separated string.");

const SASL_PROTOCOLS: readonly string[] = ["SASL_PLAINTEXT", "SASL_SSL"];
const TLS_PROTOCOLS: readonly string[] = ["SSL", "SASL_SSL"];

const sasl = z.strictObject({
  mechanism: z.enum(SASL_MECHANISMS),
  username: nonEmpty,
  password: secret,
});

const tls = z
  .strictObject({
    ca: nonEmpty.optional().describe("PEM file of the CA(s) to trust; omitted: the system's."),
    cert: nonEmpty.optional().describe("PEM file of the client certificate (mutual TLS), with key."),
    key: nonEmpty.optional().describe("PEM file of the client's private key, with cert."),
    insecure_skip_verify: z.boolean().default(false).describe("Accept any broker certificate. For tests only."),
  })
  .superRefine((t, ctx) => {
    if ((t.cert === undefined) !== (t.key === undefined)) {
      const missing = t.cert === undefined ? "cert" : "key";
      ctx.addIssue({ code: "custom", path: [missing], message: "cert and key go together (mutual TLS)" });
    }
  });

const registryAuth = z
  .union([
    z.literal("none"),
    z.strictObject({ basic: z.strictObject({ username: nonEmpty, password: secret }) }),
    z.strictObject({ bearer: z.strictObject({ token: secret }) }),
  ])
  .default("none")
  .describe(
    "none (default), {basic: {username, password}} (Confluent Cloud: the API key and secret) or {bearer: {token}}.",
  );

const schemaRegistry = z
  .strictObject({
    url: z
      .url({ protocol: /^https?$/, error: "expected an http:// or https:// URL" })
      .describe("Base URL of the Confluent-compatible API, e.g. https://psrc-xxxx.us-east-2.aws.confluent.cloud."),
    auth: registryAuth,
    tls: z
      .strictObject({
        ca: nonEmpty.optional().describe("PEM file (or PEM text) of the CA(s) to trust; omitted: the system's."),
        insecure_skip_verify: z.boolean().default(false).describe("Accept any certificate. For tests only."),
      })
      .optional()
      .describe("For an https:// registry signed by a private CA."),
    request_timeout: duration("30s", "Waiting for the registry's answer to a request."),
  })
  .describe(
    "The schema registry that Avro, Protobuf and JSON Schema streams (format: avro | protobuf | json_schema) take their schemas from.",
  );

/** The keys of source.kafka that describe the cluster. */
export const kafkaClusterShape = {
  bootstrap_servers: bootstrapServers,
  security: z
    .strictObject({ protocol: z.enum(SECURITY_PROTOCOLS).default("PLAINTEXT") })
    .prefault({})
    .describe("protocol: PLAINTEXT (default), SASL_PLAINTEXT, SASL_SSL or SSL."),
  sasl: sasl.optional().describe("Required when security.protocol is SASL_PLAINTEXT or SASL_SSL."),
  tls: tls.optional().describe("For security.protocol SSL or SASL_SSL."),
  connect_timeout: duration("30s", "Connecting to a broker (TCP, TLS and SASL), e.g. 30s."),
  request_timeout: duration(
    "30s",
    "Waiting for a broker's answer to a request; a request left unanswered that long fails the step.",
  ),
  schema_registry: schemaRegistry.optional(),
};

const kafkaCluster = z.strictObject(kafkaClusterShape);
/** A cluster on its own (a source kept apart from the jobs that read it), with its security rules. */
export const kafkaClusterSchema = kafkaCluster.superRefine((k, ctx) => checkKafkaSecurity(k, ctx));
type KafkaClusterInput = z.output<typeof kafkaCluster>;

/** The settings the protocol uses: sasl: with a SASL protocol, and neither sasl: nor tls: where it would be ignored. */
export function checkKafkaSecurity(
  k: Pick<KafkaClusterInput, "security" | "sasl" | "tls">,
  ctx: z.RefinementCtx,
): void {
  const { protocol } = k.security;
  if (SASL_PROTOCOLS.includes(protocol) && k.sasl === undefined) {
    ctx.addIssue({ code: "custom", path: ["sasl"], message: `required when security.protocol is ${protocol}` });
  }
  if (!SASL_PROTOCOLS.includes(protocol) && k.sasl !== undefined) {
    ctx.addIssue({
      code: "custom",
      path: ["sasl"],
      message: `only used with security.protocol SASL_PLAINTEXT or SASL_SSL, and it is ${protocol}`,
    });
  }
  if (!TLS_PROTOCOLS.includes(protocol) && k.tls !== undefined) {
    ctx.addIssue({
      code: "custom",
      path: ["tls"],
      message: `only used with security.protocol SSL or SASL_SSL, and it is ${protocol}`,
    });
  }
}

/** The validated keys as a Source (checkKafkaSecurity has passed). */
export function toSource(k: KafkaClusterInput): Source {
  return {
    bootstrapServers: k.bootstrap_servers,
    security: security(k),
    connectTimeoutMs: k.connect_timeout,
    requestTimeoutMs: k.request_timeout,
    ...(k.schema_registry && {
      schemaRegistry: {
        url: k.schema_registry.url,
        auth: toRegistryAuth(k.schema_registry.auth),
        ...(k.schema_registry.tls
          ? { tls: { ca: k.schema_registry.tls.ca, insecureSkipVerify: k.schema_registry.tls.insecure_skip_verify } }
          : {}),
        requestTimeoutMs: k.schema_registry.request_timeout,
      },
    }),
  };
}

function toRegistryAuth(auth: z.output<typeof registryAuth>): RegistryAuth {
  if (auth === "none") return { kind: "none" };
  if ("basic" in auth) return { kind: "basic", username: auth.basic.username, password: auth.basic.password };
  return { kind: "bearer", token: auth.bearer.token };
}

function security(k: KafkaClusterInput): KafkaSecurity {
  const t = k.tls;
  const tlsSettings: KafkaTls = {
    ca: t?.ca,
    clientCertificate: t?.cert !== undefined && t.key !== undefined ? { cert: t.cert, key: t.key } : undefined,
    insecureSkipVerify: t?.insecure_skip_verify ?? false,
  };
  // checkKafkaSecurity guarantees sasl for the SASL protocols.
  const credentials: KafkaSasl | undefined = k.sasl && {
    mechanism: k.sasl.mechanism,
    username: k.sasl.username,
    password: k.sasl.password,
  };
  const protocol = k.security.protocol;
  switch (protocol) {
    case "PLAINTEXT":
      return { protocol };
    case "SSL":
      return { protocol, tls: tlsSettings };
    case "SASL_PLAINTEXT":
      return { protocol, sasl: credentials! };
    case "SASL_SSL":
      return { protocol, sasl: credentials!, tls: tlsSettings };
  }
}
