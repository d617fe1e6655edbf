// Apache Kafka for the tests, the demo and the benchmarks: one KRaft node (broker and controller
// in one JVM) on loopback, PLAINTEXT without an authorizer, data under .local/kafka (kept across
// restarts). The life cycle is kafka/node.ts's, shared with kafka-secure.ts.
import { brokerPort, controllerPort, kafkaDir, serverProperties } from "./kafka/config.ts";
import { kafkaNodeService } from "./kafka/node.ts";
import type { Service } from "./lib.ts";

export const kafka: Service = kafkaNodeService({
  name: "kafka",
  dir: kafkaDir,
  brokerPort,
  controllerPort,
  portVariables: { broker: "KAFKA_PORT", controller: "KAFKA_CONTROLLER_PORT" },
  serverProperties,
});
