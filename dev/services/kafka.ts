// Apache Kafka for the tests, the demo and the benchmarks: one KRaft node (broker and controller
// in one JVM) on loopback, run from the Maven Central jars of dev/services/kafka/pom.xml, data
// under .local/kafka.
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Admin } from "@platformatic/kafka";
import {
  brokerPort,
  configFile,
  controllerPort,
  dataDir,
  kafkaDir,
  libsDir,
  serverProperties,
} from "./kafka/config.ts";
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
} from "./lib.ts";

const name = "kafka";
const pomFile = join(root, "dev", "services", "kafka", "pom.xml");
const log4jConfig = join(root, "dev", "services", "kafka", "log4j2.properties");
// Holds the hash of the pom the jars were fetched for, so that a version bump refetches them.
const installedMarker = join(libsDir, ".pom-sha256");
// java expands a trailing `*` in a class path itself, so no shell is needed.
const classpath = join(libsDir, "*");
const jvmOptions = [`-Dlog4j2.configurationFile=${log4jConfig}`];

export const kafka: Service = { name, install, start, stop, status };

async function install(): Promise<void> {
  // Rebuilt from an empty directory, so that jars of a previous version do not linger on the class path.
  buildFrom(pomFile, libsDir, installedMarker, () =>
    copyMavenJars(name, "the Kafka jars", pomFile, libsDir, {
      goal: "org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies",
      options: ["-DincludeScope=runtime"],
    }),
  );
}

async function start(): Promise<void> {
  await install();
  requireCommand(name, "java", ["-version"]);
  const port = brokerPort();
  let pid = daemonPid(name);
  if (pid === undefined) {
    const answer = await probe(port);
    if (answer.kind === "kafka" && answer.clusterId === ourClusterId()) return;
    if (answer.kind !== "closed") throw new ServiceError(name, portTaken(port, answer));
    if (await isPortOpen(controllerPort())) {
      throw new ServiceError(
        name,
        `controller port 127.0.0.1:${controllerPort()} is taken by another process; free it or set KAFKA_CONTROLLER_PORT`,
      );
    }
    mkdirSync(dirname(configFile), { recursive: true });
    writeFileSync(configFile, serverProperties());
    formatStorageOnce();
    pid = spawnDaemon(name, "java", ["-Xmx512m", ...jvmOptions, "-cp", classpath, "kafka.Kafka", configFile]);
  }
  await waitFor(name, `a metadata answer on 127.0.0.1:${port}`, async () => (await probe(port)).kind === "kafka", {
    pid,
    timeoutMs: 60_000,
  });
}

async function stop(): Promise<void> {
  await stopDaemon(name);
}

async function status(): Promise<ServiceStatus> {
  const port = brokerPort();
  const answer = await probe(port);
  const pid = daemonPid(name);
  if (answer.kind === "kafka" && answer.clusterId === ourClusterId()) {
    const owner = pid === undefined ? "not started by this checkout's pid file" : `pid ${pid}`;
    return { running: true, detail: `127.0.0.1:${port}, cluster ${answer.clusterId}, ${owner}` };
  }
  if (answer.kind !== "closed") return { running: false, detail: portTaken(port, answer) };
  const detail =
    pid === undefined ? `nothing on 127.0.0.1:${port}` : `pid ${pid} alive, 127.0.0.1:${port} not open yet`;
  return { running: false, detail };
}

/** Formats .local/kafka/data as `kafka-storage format --standalone` does, unless it already is. */
function formatStorageOnce(): void {
  if (ourClusterId() !== undefined) return;
  // A format interrupted half-way leaves a directory the broker refuses; begin again from nothing.
  rmSync(dataDir, { recursive: true, force: true });
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
  ]);
}

/** The cluster id our storage was formatted with, which tells our broker from any other. */
function ourClusterId(): string | undefined {
  const metaProperties = join(dataDir, "meta.properties");
  if (!existsSync(metaProperties)) return undefined;
  return /^cluster\.id=(.+)$/m.exec(readFileSync(metaProperties, "utf8"))?.[1]?.trim();
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
async function probe(port: number): Promise<Answer> {
  if (!(await isPortOpen(port))) return { kind: "closed" };
  const admin = new Admin({
    clientId: "floe-test-services",
    bootstrapBrokers: [`127.0.0.1:${port}`],
    retries: 0,
    connectTimeout: 1_000,
    requestTimeout: 2_000,
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

function portTaken(port: number, answer: Answer): string {
  const who =
    answer.kind === "kafka"
      ? `another Kafka cluster (id ${answer.clusterId}) than the one in ${kafkaDir}`
      : "a process that does not answer Kafka metadata requests";
  return `127.0.0.1:${port} is taken by ${who}; stop it or set KAFKA_PORT to a free port`;
}
