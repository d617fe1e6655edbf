// A second look at a TLS listener after a connection failed, to say why: the library reports a
// refused client certificate as "Connection closed" (the alert comes after the handshake, when
// the first request is read), and a rejected broker certificate without the certificate itself.
// The probe connects once more with the same TLS settings but without verifying, reads the
// broker's certificate (subject, names, issuer) and whether it verifies against the settings'
// CAs and host name, then sends an ApiVersions request and reports a TLS alert that answers it.
import { type ConnectionOptions, checkServerIdentity, connect, type PeerCertificate } from "node:tls";

export interface TlsFindings {
  /** The broker's certificate, as the settings would judge it. */
  certificate?: {
    subject: string;
    issuer: string;
    /** subjectAltName as Node prints it: "DNS:localhost, IP Address:127.0.0.1". */
    names: string;
    /** The verification error (Node's code, e.g. SELF_SIGNED_CERT_IN_CHAIN), if the CAs do not verify it. */
    verifyError?: string;
    /** Set when the certificate does not name the host. */
    hostnameError?: string;
  };
  /** The error after the handshake: a TLS alert such as ERR_SSL_SSL/TLS_ALERT_BAD_CERTIFICATE. */
  alert?: { code: string; message: string };
}

// ApiVersions v0 (api key 18), correlation id 1, client id "floe-probe": the first request any
// client sends, and the first that a listener requiring a client certificate refuses.
const clientId = Buffer.from("floe-probe");
const header = Buffer.alloc(10);
header.writeInt16BE(18, 0);
header.writeInt16BE(0, 2);
header.writeInt32BE(1, 4);
header.writeInt16BE(clientId.length, 8);
const body = Buffer.concat([header, clientId]);
const size = Buffer.alloc(4);
size.writeInt32BE(body.length);
const apiVersionsRequest = Buffer.concat([size, body]);

export function probeTls(
  host: string,
  port: number,
  tls: ConnectionOptions,
  options: { servername?: string; timeoutMs: number },
): Promise<TlsFindings> {
  return new Promise((resolve) => {
    const findings: TlsFindings = {};
    const socket = connect({
      ...tls,
      host,
      port,
      ...(options.servername ? { servername: options.servername } : {}),
      rejectUnauthorized: false,
      timeout: options.timeoutMs,
    });
    let settled = false;
    const done = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(findings);
    };
    const timer = setTimeout(done, options.timeoutMs);
    socket.once("secureConnect", () => {
      const peer = socket.getPeerCertificate(false) as PeerCertificate | undefined;
      if (peer && Object.keys(peer).length > 0) {
        const certificate: NonNullable<TlsFindings["certificate"]> = {
          subject: distinguishedName(peer.subject),
          issuer: distinguishedName(peer.issuer),
          names: peer.subjectaltname ?? "",
        };
        const authorizationError = socket.authorizationError as unknown as Error | string | null;
        if (authorizationError) {
          certificate.verifyError =
            typeof authorizationError === "string"
              ? authorizationError
              : ((authorizationError as { code?: string }).code ?? authorizationError.message);
        }
        const identity = checkServerIdentity(options.servername ?? host, peer);
        if (identity) certificate.hostnameError = identity.message;
        findings.certificate = certificate;
      }
      socket.write(apiVersionsRequest);
    });
    socket.on("data", done);
    socket.once("error", (error: Error & { code?: string }) => {
      if (findings.certificate) findings.alert = { code: error.code ?? "", message: error.message };
      done();
    });
    socket.once("close", done);
    socket.once("timeout", done);
  });
}

function distinguishedName(name: PeerCertificate["subject"] | undefined): string {
  if (!name) return "";
  return Object.entries(name)
    .map(([key, value]) => `${key}=${Array.isArray(value) ? value.join("+") : value}`)
    .join(", ");
}
