// One single-node KRaft cluster (broker and controller in one JVM) on loopback, run from the
// Maven Central jars of dev/services/kafka/pom.xml: the life cycle the plain test broker
// (kafka.ts) and the secure one (kafka-secure.ts) share. Each has its own directory under
// .local/ (config, data), its own ports and its own way to be probed (the secure one only
// answers a client that authenticates).
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Admin, type BaseOptions } from "@platformatic/kafka";
import {
  buildFrom,
  copyMavenJars,
  daemonPid,
  isPortOpen,
  requireCommand,
  root,
  runStep,
  type Service,
  ServiceError,
  type ServiceStatus,
  spawnDaemon,
  stopDaemon,
  waitFor,
} from "../lib.ts";
import { libsDir } from "./config.ts";

const pomFile = join(root, "dev", "services", "kafka", "pom.xml");
const log4jConfig = join(root, "dev", "services", "kafka", "log4j2.properties");
// Holds the hash of the pom the jars were fetched for, so that a version bump refetches them.
const installedMarker = join(libsDir, ".pom-sha256");
// java expands a trailing `*` in a class path itself, so no shell is needed.
const classpath = join(libsDir, "*");
const jvmOptions = [`-Dlog4j2.configurationFile=${log4jConfig}`];

export interface KafkaNodeSpec {
  name: string;
  /** Holds config/server.properties and data/. */
  dir: string;
  /** The port the probe asks, and the controller's, which must be free before a start. */
  brokerPort(): number;
  controllerPort(): number;
  /** The variables that move the ports, named when a port is taken. */
  portVariables: { broker: string; controller: string };
  serverProperties(): string;
  /** Client options for the probe besides the bootstrap broker (SASL, TLS). */
  probeOptions?(): Partial<BaseOptions>;
  /**
   * Begin from an empty directory at every start (the data too), calling `prepare` first, then
   * formatting with `formatArgs`: for a node whose users and certificates are made at start.
   * Without it the data survive restarts and the storage is formatted once.
   */
  fresh?: { prepare(): void; formatArgs(): string[] };
  /** What `status` adds to a running node's line. */
  detail?: string;
}

/** Fetches the Kafka jars once (shared by every node). */
export async function installKafkaJars(): Promise<void> {
  // Rebuilt from an empty directory, so that jars of a previous version do not linger on the class path.
  buildFrom(pomFile, libsDir, installedMarker, () =>
    copyMavenJars("kafka", "the Kafka jars", pomFile, libsDir, {
      goal: "org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies",
      options: ["-DincludeScope=runtime"],
    }),
  );
}

export function kafkaNodeService(spec: KafkaNodeSpec): Service {
  const { name } = spec;
  const configFile = join(spec.dir, "config", "server.properties");
  const dataDir = join(spec.dir, "data");

  /** The cluster id our storage was formatted with, which tells our broker from any other. */
  const ourClusterId = (): string | undefined => {
    const metaProperties = join(dataDir, "meta.properties");
    if (!existsSync(metaProperties)) return undefined;
    return /^cluster\.id=(.+)$/m.exec(readFileSync(metaProperties, "utf8"))?.[1]?.trim();
  };

  const probe = (port: number) => probeNode(port, spec.probeOptions?.() ?? {});

  const portTaken = (port: number, answer: Answer): string => {
    const who =
      answer.kind === "kafka"
        ? `another Kafka cluster (id ${answer.clusterId}) than the one in ${spec.dir}`
        : "a process that does not answer Kafka metadata requests";
    return `127.0.0.1:${port} is taken by ${who}; stop it or set ${spec.portVariables.broker} to a free port`;
  };

  const format = (extra: string[]): void => {
    runStep(name, "formatting the KRaft storage", "java", [
      "-Xmx256m",
      ...jvmOptions,
      "-cp",
      classpath,
      "kafka.tools.StorageTool",
      "format",
      "--standalone",
      "--cluster-id",
      newClusterId(),
      "--config",
      configFile,
      ...extra,
    ]);
  };

  const start = async (): Promise<void> => {
    await installKafkaJars();
    requireCommand(name, "java", ["-version"]);
    const port = spec.brokerPort();
    let pid = daemonPid(name);
    if (pid === undefined) {
      const answer = await probe(port);
      if (answer.kind === "kafka" && answer.clusterId === ourClusterId()) return;
      if (answer.kind !== "closed") throw new ServiceError(name, portTaken(port, answer));
      if (await isPortOpen(spec.controllerPort())) {
        throw new ServiceError(
          name,
          `controller port 127.0.0.1:${spec.controllerPort()} is taken by another process; free it or set ${spec.portVariables.controller}`,
        );
      }
      if (spec.fresh) rmSync(spec.dir, { recursive: true, force: true });
      mkdirSync(join(spec.dir, "config"), { recursive: true });
      if (spec.fresh) spec.fresh.prepare();
      writeFileSync(configFile, spec.serverProperties());
      if (spec.fresh) {
        format(spec.fresh.formatArgs());
      } else if (ourClusterId() === undefined) {
        // A format interrupted half-way leaves a directory the broker refuses; begin again from nothing.
        rmSync(dataDir, { recursive: true, force: true });
        format([]);
      }
      pid = spawnDaemon(name, "java", ["-Xmx512m", ...jvmOptions, "-cp", classpath, "kafka.Kafka", configFile]);
    }
    await waitFor(name, `a metadata answer on 127.0.0.1:${port}`, async () => (await probe(port)).kind === "kafka", {
      pid,
      timeoutMs: 60_000,
    });
  };

  const status = async (): Promise<ServiceStatus> => {
    const port = spec.brokerPort();
    const answer = await probe(port);
    const pid = daemonPid(name);
    if (answer.kind === "kafka" && answer.clusterId === ourClusterId()) {
      const owner = pid === undefined ? "not started by this checkout's pid file" : `pid ${pid}`;
      const detail = spec.detail ? `, ${spec.detail}` : "";
      return { running: true, detail: `127.0.0.1:${port}${detail}, cluster ${answer.clusterId}, ${owner}` };
    }
    if (answer.kind !== "closed") return { running: false, detail: portTaken(port, answer) };
    const detail =
      pid === undefined ? `nothing on 127.0.0.1:${port}` : `pid ${pid} alive, 127.0.0.1:${port} not open yet`;
    return { running: false, detail };
  };

  return { name, install: installKafkaJars, start, stop: () => stopDaemon(name), status };
}

/**
 * A Kafka Uuid in its text form: 16 random bytes, URL-safe base64 without padding. Like Kafka's
 * own generator, skip those starting with '-', which a command line would take for an option.
 */
function newClusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString("base64url");
    if (!id.startsWith("-")) return id;
  }
}

type Answer = { kind: "closed" } | { kind: "kafka"; clusterId: string } | { kind: "other" };

/** What listens on the port: nothing, a Kafka broker (and of which cluster), or something else. */
async function probeNode(port: number, options: Partial<BaseOptions>): Promise<Answer> {
  if (!(await isPortOpen(port))) return { kind: "closed" };
  const admin = new Admin({
    clientId: "floe-test-services",
    bootstrapBrokers: [`127.0.0.1:${port}`],
    retries: 0,
    connectTimeout: 1_000,
    requestTimeout: 2_000,
    ...options,
  });
  try {
    const metadata = await admin.metadata({ topics: [] });
    // A broker lists itself once it has registered with the controller, i.e. once it serves.
    return metadata.brokers.size > 0 ? { kind: "kafka", clusterId: metadata.id } : { kind: "other" };
  } catch {
    return { kind: "other" };
  } finally {
    await admin.close();
  }
}
