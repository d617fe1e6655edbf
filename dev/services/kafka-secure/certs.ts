// The certificates of the secure test broker, made with openssl at every start of the broker:
// a CA, the broker's certificate for 127.0.0.1 and localhost, a second broker certificate for a
// name no client uses (the host-name mismatch listener), a client certificate for mutual TLS, and
// an unrelated CA (a client that trusts the wrong CA). EC P-256 keys: fast to make, and both
// Node and Kafka's PEM key store read them. Keys are PKCS#8 without a passphrase, as Kafka's PEM
// key store takes them.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { requireCommand, runStep } from "../lib.ts";

export interface CertificateFiles {
  dir: string;
  /** The CA that signed the broker and client certificates (PEM). */
  ca: string;
  /** A CA that signed nothing here. */
  otherCa: string;
  /** Broker key then certificate chain, one PEM file, as Kafka's PEM key store takes it. */
  brokerKeyStore: string;
  /** The same for the certificate of `mismatchHost`. */
  mismatchKeyStore: string;
  clientCert: string;
  clientKey: string;
}

/** The only name the mismatch listener's certificate holds. `.invalid` never resolves (RFC 2606). */
export const mismatchHost = "broker.invalid";
/**
 * The CN of the client certificate, which the broker maps to the principal User:floe-client. The
 * subject is written O first so that its RFC 2253 form, the broker's, is CN=floe-client,O=floe tests.
 */
export const clientCommonName = "floe-client";

export function certificateFiles(dir: string): CertificateFiles {
  return {
    dir,
    ca: join(dir, "ca.pem"),
    otherCa: join(dir, "other-ca.pem"),
    brokerKeyStore: join(dir, "broker-keystore.pem"),
    mismatchKeyStore: join(dir, "mismatch-keystore.pem"),
    clientCert: join(dir, "client.pem"),
    clientKey: join(dir, "client.key"),
  };
}

/** Makes every file of certificateFiles(dir), replacing what was there. */
export function makeCertificates(service: string, dir: string): CertificateFiles {
  requireCommand(service, "openssl", ["version"]);
  const files = certificateFiles(dir);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const openssl = (what: string, args: string[]) => runStep(service, `openssl: ${what}`, "openssl", args, dir);
  const newKey = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-noenc"];
  const days = ["-days", "30"];
  const caExtensions = ["-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign"];

  openssl("the CA", [
    "req",
    "-x509",
    ...newKey,
    "-keyout",
    "ca.key",
    "-out",
    "ca.pem",
    ...days,
    "-subj",
    "/CN=floe test CA",
    ...caExtensions,
  ]);
  openssl("an unrelated CA", [
    "req",
    "-x509",
    ...newKey,
    "-keyout",
    "other-ca.key",
    "-out",
    "other-ca.pem",
    ...days,
    "-subj",
    "/CN=floe unrelated CA",
    ...caExtensions,
  ]);
  // `req -x509 -CA` signs the new key's certificate with the CA directly (OpenSSL 3.0).
  const leaf = (what: string, name: string, subject: string, extensions: string[]) =>
    openssl(what, [
      "req",
      "-x509",
      ...newKey,
      "-keyout",
      `${name}.key`,
      "-out",
      `${name}.pem`,
      ...days,
      "-CA",
      "ca.pem",
      "-CAkey",
      "ca.key",
      "-subj",
      subject,
      "-addext",
      "basicConstraints=critical,CA:FALSE",
      ...extensions,
    ]);
  leaf("the broker certificate", "broker", "/CN=localhost", [
    "-addext",
    "subjectAltName=DNS:localhost,IP:127.0.0.1",
    "-addext",
    "extendedKeyUsage=serverAuth",
  ]);
  leaf("the mismatch certificate", "mismatch", `/CN=${mismatchHost}`, [
    "-addext",
    `subjectAltName=DNS:${mismatchHost}`,
    "-addext",
    "extendedKeyUsage=serverAuth",
  ]);
  leaf("the client certificate", "client", `/O=floe tests/CN=${clientCommonName}`, [
    "-addext",
    "extendedKeyUsage=clientAuth",
  ]);

  const read = (name: string) => readText(join(dir, name));
  writeFileSync(files.brokerKeyStore, read("broker.key") + read("broker.pem") + read("ca.pem"));
  writeFileSync(files.mismatchKeyStore, read("mismatch.key") + read("mismatch.pem") + read("ca.pem"));
  return files;
}

function readText(file: string): string {
  const text = readFileSync(file, "utf8");
  return text.endsWith("\n") ? text : `${text}\n`;
}
