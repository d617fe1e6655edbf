// How floe authenticates to a Kafka cluster and encrypts the connection: the security protocol
// and the settings each protocol uses. Types and names only, so that what describes a connection
// (the job file) need not load the Kafka client.
export const SECURITY_PROTOCOLS = ["PLAINTEXT", "SASL_PLAINTEXT", "SASL_SSL", "SSL"] as const;
export type SecurityProtocol = (typeof SECURITY_PROTOCOLS)[number];
export const SASL_MECHANISMS = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] as const;
export type SaslMechanism = (typeof SASL_MECHANISMS)[number];

/** A secret that prints as *** and gives its value only on demand. */
export interface Revealable {
  reveal(): string;
}

export interface KafkaSasl {
  readonly mechanism: SaslMechanism;
  readonly username: string;
  /** A Revealable holding the password, so that the settings never print it. */
  readonly password: Revealable;
}

/**
 * TLS material. `ca`, `cert` and `key` are each either PEM text (starts with "-----BEGIN") or
 * the path of a PEM file: paths suit job files, PEM text suits secrets injected through `${ENV}`.
 */
export interface KafkaTls {
  /** The CA(s) to trust; undefined: the system's. */
  readonly ca?: string | undefined;
  /** A client certificate and its key (mutual TLS). */
  readonly clientCertificate?: { readonly cert: string; readonly key: string } | undefined;
  /** Accept any broker certificate and host name. For test clusters only. */
  readonly insecureSkipVerify?: boolean;
}

/** The protocol says which settings go with it: SASL credentials for SASL_*, TLS material for SSL and SASL_SSL. */
export type KafkaSecurity =
  | { readonly protocol: "PLAINTEXT" }
  | { readonly protocol: "SASL_PLAINTEXT"; readonly sasl: KafkaSasl }
  | { readonly protocol: "SSL"; readonly tls?: KafkaTls }
  | { readonly protocol: "SASL_SSL"; readonly sasl: KafkaSasl; readonly tls?: KafkaTls };
