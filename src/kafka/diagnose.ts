// What went wrong when a connection to Kafka failed, and what to check: read from the error tree
// of @platformatic/kafka (and of Node's TLS), and, for a TLS listener, from a second look at it
// (tls-probe.ts). Pure: the messages name settings, hosts and certificates, never the password.
import type { ConnectionFailure } from "./errors.ts";
import { walk } from "./errors.ts";
import type { KafkaSecurity } from "./security.ts";
import type { TlsFindings } from "./tls-probe.ts";

export interface Diagnosis {
  reason: ConnectionFailure;
  problem: string;
  hint: string;
}

interface Settings {
  readonly bootstrapServers: readonly string[];
  readonly security: KafkaSecurity;
}

/** Node's (OpenSSL's) verification codes of a certificate no trusted CA signed. */
const UNTRUSTED = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "CERT_SIGNATURE_FAILURE",
  "CERT_UNTRUSTED",
]);
const INVALID = new Set(["CERT_HAS_EXPIRED", "CERT_NOT_YET_VALID", "CERT_REVOKED", "INVALID_PURPOSE", "CERT_REJECTED"]);
/** TLS alerts a broker sends when it wants a client certificate, or refuses the one it got. */
const CLIENT_CERTIFICATE_ALERT =
  /ALERT_(BAD_CERTIFICATE|CERTIFICATE_REQUIRED|CERTIFICATE_UNKNOWN|UNKNOWN_CA|HANDSHAKE_FAILURE|UNSUPPORTED_CERTIFICATE|CERTIFICATE_EXPIRED|ACCESS_DENIED)/;

/** Says what went wrong and what to check, when the error is a failure to connect or to authenticate. */
export function diagnose(config: Settings, error: unknown, findings?: TlsFindings): Diagnosis | undefined {
  const { protocol } = config.security;
  const sasl = "sasl" in config.security ? config.security.sasl : undefined;
  const tls = "tls" in config.security ? config.security.tls : undefined;
  const servers = config.bootstrapServers.join(", ");
  let network = false;
  for (const e of walk(error)) {
    const code = (e as { code?: unknown }).code;
    const apiId = (e as { apiId?: unknown }).apiId;
    const message = e instanceof Error ? e.message : "";
    if (code === "ECONNREFUSED") {
      return {
        reason: "refused",
        problem: "connection refused",
        hint: `Check that a broker listens on ${servers} and that the host and port are right.`,
      };
    }
    if (code === "ENOTFOUND" || code === "EAI_AGAIN") {
      return {
        reason: "host-not-found",
        problem: "host name not found",
        hint: `Check the host names of ${servers} and the DNS of this machine.`,
      };
    }
    if (message.includes("Broker requires TLS")) {
      return {
        reason: "protocol-mismatch",
        problem: "the broker speaks TLS",
        hint: `The listener at ${servers} expects TLS: set security.protocol to SSL or SASL_SSL, or use the port of the plaintext listener.`,
      };
    }
    if (message.includes("TLS handshake failed")) {
      return {
        reason: "protocol-mismatch",
        problem: "TLS handshake failed",
        hint: `security.protocol is ${protocol} but the listener at ${servers} does not seem to speak TLS: use PLAINTEXT or SASL_PLAINTEXT, or the port of the TLS listener.`,
      };
    }
    if (code === "ERR_TLS_CERT_ALTNAME_INVALID") {
      const host = (e as { host?: unknown }).host;
      const cert = (e as { cert?: { subjectaltname?: string } }).cert;
      return hostnameMismatch(
        typeof host === "string" ? host : servers,
        cert?.subjectaltname ?? findings?.certificate?.names,
      );
    }
    if (typeof code === "string" && UNTRUSTED.has(code)) return untrusted(code, tls?.ca, findings);
    if (typeof code === "string" && INVALID.has(code)) {
      return {
        reason: "certificate",
        problem: `the broker's certificate was refused (${code}: ${message})`,
        hint: "Check the certificate's validity dates and purpose, and this machine's clock.",
      };
    }
    if (typeof code === "string" && CLIENT_CERTIFICATE_ALERT.test(code)) {
      return clientCertificate(code, tls?.clientCertificate?.cert);
    }
    if (message.includes("Cannot find a suitable SASL mechanism") || apiId === "UNSUPPORTED_SASL_MECHANISM") {
      const offered = offeredMechanisms(error);
      const mechanism = sasl?.mechanism ?? "";
      return {
        reason: "mechanism",
        problem:
          `the listener does not offer SASL ${mechanism}`.trimEnd() +
          (offered.length > 0 ? `; it offers ${offered.join(", ")}` : ""),
        hint:
          offered.length > 0
            ? `Set security.sasl.mechanism to one the listener offers (${offered.join(", ")}), or use the port of a listener that offers ${mechanism}.`
            : "Check security.sasl.mechanism against the mechanisms the listener enables, and that the port is a SASL listener.",
      };
    }
    if (apiId === "SASL_AUTHENTICATION_FAILED" || apiId === "ILLEGAL_SASL_STATE" || code === "PLT_KFK_AUTHENTICATION") {
      const user = sasl?.username ?? "?";
      const mechanism = sasl?.mechanism ?? "none";
      return {
        reason: "authentication",
        problem: `the broker refused the credentials of user '${user}' (${mechanism}): a wrong password, or no such ${mechanism} user`,
        hint:
          `Check security.sasl.username and security.sasl.password` +
          (mechanism.startsWith("SCRAM")
            ? ` (a SCRAM user exists per mechanism: kafka-configs.sh --describe --entity-type users --entity-name ${user}).`
            : "."),
      };
    }
    if (code === "PLT_KFK_NETWORK" || code === "PLT_KFK_TIMEOUT" || code === "ETIMEDOUT") network = true;
  }
  // The library reports a TLS alert that follows the handshake as "Connection closed": the probe saw it.
  if (findings?.alert && CLIENT_CERTIFICATE_ALERT.test(findings.alert.code)) {
    return clientCertificate(findings.alert.code, tls?.clientCertificate?.cert);
  }
  if (network) {
    return {
      reason: "network",
      problem: "the connection failed or timed out",
      hint:
        `Check that ${servers} is reachable from this machine (firewall, VPN) and that security.protocol (${protocol}) matches the listener` +
        (protocol === "PLAINTEXT" ? " (a SASL listener closes a connection that does not authenticate)." : "."),
    };
  }
  return undefined;
}

function hostnameMismatch(host: string, names: string | undefined): Diagnosis {
  return {
    reason: "hostname-mismatch",
    problem: `the broker's certificate does not name ${host} (it names ${names || "no host"})`,
    hint: `Connect with a name the certificate holds (bootstrap_servers, and the brokers' advertised listeners), or have the certificate issued for ${host}; insecure_skip_verify turns the check off, for test clusters only.`,
  };
}

function untrusted(code: string, ca: string | undefined, findings: TlsFindings | undefined): Diagnosis {
  const issuer = findings?.certificate?.issuer;
  const trusted = ca === undefined ? "only the system's CAs (no security.tls.ca)" : "security.tls.ca";
  return {
    reason: "untrusted-certificate",
    problem: `the broker's certificate is not signed by a CA floe trusts (${code})${issuer ? `: it was issued by ${issuer}` : ""}, and floe trusts ${trusted}`,
    hint:
      ca === undefined
        ? "Set security.tls.ca to the PEM file of the CA that signed the brokers' certificates (managed clusters with public certificates need none); insecure_skip_verify turns the check off, for test clusters only."
        : "security.tls.ca does not hold the CA that signed the brokers' certificates: set it to that CA's PEM file; insecure_skip_verify turns the check off, for test clusters only.",
  };
}

function clientCertificate(code: string, cert: string | undefined): Diagnosis {
  if (cert === undefined) {
    return {
      reason: "client-certificate",
      problem: `the listener requires a client certificate (mutual TLS) and none was sent (${code})`,
      hint: "Set security.tls.cert and security.tls.key to the client certificate the cluster's admin issued and its private key.",
    };
  }
  const file = cert.trimStart().startsWith("-----BEGIN") ? "security.tls.cert" : cert;
  return {
    reason: "client-certificate",
    problem: `the broker refused the client certificate ${file} (${code})`,
    hint: "The client certificate must be signed by a CA in the brokers' ssl.truststore, be valid now and allow client authentication.",
  };
}

/** The mechanisms a SaslHandshake answer lists, when the error tree holds one. */
function offeredMechanisms(error: unknown): string[] {
  for (const e of walk(error)) {
    const mechanisms = (e as { response?: { mechanisms?: unknown } }).response?.mechanisms;
    if (Array.isArray(mechanisms) && mechanisms.every((m) => typeof m === "string")) return mechanisms;
  }
  return [];
}
