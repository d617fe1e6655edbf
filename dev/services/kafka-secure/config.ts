// The secure test broker: where it listens, its users and the server.properties it runs with.
// One KRaft node beside the plain one, with a listener per way a real cluster is reached:
//
//   SASL_PLAINTEXT  9192  PLAIN, SCRAM-SHA-256, SCRAM-SHA-512
//   SASL_SSL        9193  PLAIN, SCRAM-SHA-512 (as MSK and Confluent Cloud offer them; SCRAM-SHA-256
//                         is the mechanism it does not offer)
//   SSL             9194  mutual TLS required; the client certificate's CN is the principal
//   MISMATCH        9195  SSL with a certificate for broker.invalid only: a host-name mismatch
//                         (mutual TLS required too, so that insecure_skip_verify has a principal)
//   CONTROLLER      9199  SASL_PLAINTEXT PLAIN, the broker's own
//
// StandardAuthorizer with no ACL to start with: only the super user `admin` may do anything;
// tests grant the ACLs they mean to test. dev/kafka-secure.ts gives the tests their connections.
import { join } from "node:path";
import { host, type Listener, nodeProperties, portFromEnv } from "../kafka/config.ts";
import { localDir } from "../lib.ts";
import { type CertificateFiles, certificateFiles } from "./certs.ts";

export const service = "kafka-secure";
export const secureKafkaDir = join(localDir, "kafka-secure");
export const certificates: CertificateFiles = certificateFiles(join(secureKafkaDir, "certs"));
const dataDir = join(secureKafkaDir, "data");

const basePort = (): number => portFromEnv(service, "KAFKA_SECURE_BASE_PORT", 9192);
export const ports = {
  saslPlaintext: () => basePort(),
  saslSsl: () => basePort() + 1,
  ssl: () => basePort() + 2,
  mismatch: () => basePort() + 3,
  controller: () => basePort() + 7,
};

/** The super user the scripts (and the tests' set-up) act as. */
export const admin = { username: "admin", password: "admin-secret-7f3a" } as const;
/** The principal a sync runs as over SASL: PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512, one password. */
export const floeUser = { username: "floe", password: "floe-pw-c41d9e" } as const;
/** A second SASL principal, for the tests that grant fewer ACLs. */
export const limitedUser = { username: "floe-limited", password: "limited-pw-58b2" } as const;
const users = [admin, floeUser, limitedUser];

export const listenerHost = host;

function listeners(): { clients: Listener[]; controller: Listener } {
  return {
    clients: [
      { name: "SASL_PLAINTEXT", protocol: "SASL_PLAINTEXT", port: ports.saslPlaintext() },
      { name: "SASL_SSL", protocol: "SASL_SSL", port: ports.saslSsl() },
      { name: "SSL", protocol: "SSL", port: ports.ssl() },
      { name: "MISMATCH", protocol: "SSL", port: ports.mismatch() },
    ],
    controller: { name: "CONTROLLER", protocol: "SASL_PLAINTEXT", port: ports.controller() },
  };
}

const quote = (s: string) => `"${s}"`;
const plainJaas = (
  self: { username: string; password: string },
  accepted: readonly { username: string; password: string }[],
) =>
  "org.apache.kafka.common.security.plain.PlainLoginModule required " +
  `username=${quote(self.username)} password=${quote(self.password)} ` +
  accepted.map((u) => `user_${u.username}=${quote(u.password)}`).join(" ") +
  ";";
const scramJaas = "org.apache.kafka.common.security.scram.ScramLoginModule required;";

export function secureServerProperties(): string {
  const { clients, controller } = listeners();
  return nodeProperties({
    clients,
    controller,
    dataDir,
    extra: {
      // The broker speaks to itself (and to its controller) as the super user, over PLAIN.
      "sasl.mechanism.inter.broker.protocol": "PLAIN",
      "sasl.mechanism.controller.protocol": "PLAIN",
      "listener.name.controller.sasl.enabled.mechanisms": "PLAIN",
      "listener.name.controller.plain.sasl.jaas.config": plainJaas(admin, [admin]),

      "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
      "listener.name.sasl_plaintext.plain.sasl.jaas.config": plainJaas(admin, users),
      "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config": scramJaas,
      "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config": scramJaas,

      "listener.name.sasl_ssl.sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512",
      "listener.name.sasl_ssl.plain.sasl.jaas.config": plainJaas(admin, users),
      "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config": scramJaas,

      "ssl.keystore.type": "PEM",
      "ssl.keystore.location": certificates.brokerKeyStore,
      "ssl.truststore.type": "PEM",
      "ssl.truststore.location": certificates.ca,
      "listener.name.ssl.ssl.client.auth": "required",
      "listener.name.mismatch.ssl.client.auth": "required",
      "listener.name.mismatch.ssl.keystore.type": "PEM",
      "listener.name.mismatch.ssl.keystore.location": certificates.mismatchKeyStore,
      // CN=floe-client,O=floe tests is User:floe-client, as clusters usually map certificates.
      "ssl.principal.mapping.rules": "RULE:^CN=([^,]+).*$/$1/,DEFAULT",

      "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
      "super.users": `User:${admin.username}`,
      // A request for a topic that does not exist must not create it (with ACLs it needs Create anyway).
      "auto.create.topics.enable": false,
    },
  });
}

/** kafka-storage format arguments that create the SCRAM users (KIP-900), both mechanisms each. */
export function scramFormatArgs(): string[] {
  return users
    .filter((u) => u !== admin)
    .flatMap((u) => ["SCRAM-SHA-256", "SCRAM-SHA-512"].map((m) => `${m}=[name=${u.username},password=${u.password}]`))
    .flatMap((credential) => ["--add-scram", credential]);
}
