// The secure test broker (kafka-secure/config.ts): SASL_PLAINTEXT, SASL_SSL, SSL with mutual
// TLS, and an SSL listener whose certificate names another host, with the StandardAuthorizer.
// It begins from nothing at every start: new certificates, a new storage formatted with the
// SCRAM users. The Kafka distribution and life cycle are the plain broker's (kafka/node.ts).
import { kafkaNodeService } from "./kafka/node.ts";
import { makeCertificates } from "./kafka-secure/certs.ts";
import {
  admin,
  certificates,
  ports,
  scramFormatArgs,
  secureKafkaDir,
  secureServerProperties,
  service,
} from "./kafka-secure/config.ts";
import type { Service } from "./lib.ts";

export const kafkaSecure: Service = kafkaNodeService({
  name: service,
  dir: secureKafkaDir,
  brokerPort: ports.saslPlaintext,
  controllerPort: ports.controller,
  portVariables: { broker: "KAFKA_SECURE_BASE_PORT", controller: "KAFKA_SECURE_BASE_PORT" },
  serverProperties: secureServerProperties,
  probeOptions: () => ({ sasl: { mechanism: "PLAIN", username: admin.username, password: admin.password } }),
  fresh: {
    prepare: () => void makeCertificates(service, certificates.dir),
    formatArgs: scramFormatArgs,
  },
  detail: `SASL_SSL :${ports.saslSsl()}, SSL (mutual TLS) :${ports.ssl()}, SSL mismatch :${ports.mismatch()}, certificates in ${certificates.dir}`,
});
