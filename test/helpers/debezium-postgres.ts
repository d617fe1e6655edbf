// A real change-data-capture source for the tests: a PostgreSQL 15 cluster (wal_level=logical,
// 127.0.0.1 on a free port, in a temp directory) and a Kafka Connect standalone worker running
// Debezium's Postgres connector against it (pgoutput, JsonConverter with schemas for key and
// value, every other setting at Debezium's default: decimal.handling.mode precise,
// time.precision.mode adaptive, tombstones on delete), writing to the dev broker. The jars and the
// binaries are the `debezium` service's (dev/services/debezium.ts); close() stops both.
//
// Postgres refuses to run as root: as root the cluster belongs to the `postgres` user and its
// commands run through runuser; as anyone else they run as that user.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { chownSync, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Consumer, stringDeserializers } from "@platformatic/kafka";
import { bootstrapServers, plainBroker, withAdmin } from "../../dev/kafka.ts";
import { type DebeziumInstall, installDebezium } from "../../dev/services/debezium.ts";
import { root } from "../../dev/services/lib.ts";
import { freePort, until } from "./service-process.ts";

const run = promisify(execFile);
const asRoot = process.getuid?.() === 0;
const superuser = "floe";
export const database = "shop";

/** A Postgres cluster of its own; `sql` runs statements as its superuser in `database`. */
export class TestPostgres {
  readonly dir: string;
  readonly port: number;
  readonly #install: DebeziumInstall;

  private constructor(install: DebeziumInstall, dir: string, port: number) {
    this.#install = install;
    this.dir = dir;
    this.port = port;
  }

  static async start(install: DebeziumInstall): Promise<TestPostgres> {
    const dir = mkdtempSync(join(tmpdir(), "floe-postgres-"));
    if (asRoot) {
      const { stdout } = await run("id", ["-u", "postgres"]);
      const { stdout: gid } = await run("id", ["-g", "postgres"]);
      chownSync(dir, Number(stdout), Number(gid));
    }
    const pg = new TestPostgres(install, dir, await freePort());
    const data = join(dir, "data");
    await pg.#asOwner("initdb", ["-D", data, "-U", superuser, "--auth=trust", "-E", "UTF8", "--no-sync"]);
    const options = [
      "-c listen_addresses=127.0.0.1",
      `-c port=${pg.port}`,
      `-c unix_socket_directories=${dir}`,
      "-c wal_level=logical",
      "-c timezone=UTC",
      "-c fsync=off",
    ].join(" ");
    await pg.#asOwner("pg_ctl", ["-D", data, "-l", join(dir, "postgres.log"), "-o", options, "-w", "start"]);
    await pg.sql(`CREATE DATABASE ${database}`, "postgres");
    return pg;
  }

  /** Runs `statements` (psql -c), returns psql's unaligned, tuples-only output. */
  async sql(statements: string, db = database): Promise<string> {
    const { stdout } = await run(
      join(this.#install.postgresBin, "psql"),
      [
        "-X",
        "-q",
        "-A",
        "-t",
        "-v",
        "ON_ERROR_STOP=1",
        "-h",
        "127.0.0.1",
        "-p",
        String(this.port),
        "-U",
        superuser,
        "-d",
        db,
        "-c",
        statements,
      ],
      { maxBuffer: 64 * 1024 * 1024 },
    );
    return stdout;
  }

  /** The rows of a query, through json_agg: `query` is a SELECT. */
  async rows<T = Record<string, unknown>>(query: string): Promise<T[]> {
    const text = (await this.sql(`SELECT coalesce(json_agg(q), '[]') FROM (${query}) q`)).trim();
    return JSON.parse(text) as T[];
  }

  async stop(): Promise<void> {
    await this.#asOwner("pg_ctl", ["-D", join(this.dir, "data"), "-m", "fast", "-w", "stop"]).catch(() => {});
    rmSync(this.dir, { recursive: true, force: true });
  }

  async #asOwner(tool: string, args: string[]): Promise<void> {
    const binary = join(this.#install.postgresBin, tool);
    const [command, all] = asRoot ? ["runuser", ["-u", "postgres", "--", binary, ...args]] : [binary, args];
    try {
      await run(command, all, { cwd: this.dir });
    } catch (error) {
      const { stderr = "", stdout = "" } = error as { stderr?: string; stdout?: string };
      throw new Error(
        `${tool} ${args.join(" ")} failed (as ${asRoot ? "postgres" : userInfo().username}): ${stderr || stdout}`,
      );
    }
  }
}

export interface ConnectorOptions {
  /** Debezium's topic.prefix: the topics are `<prefix>.<schema>.<table>`. */
  topicPrefix: string;
  /** table.include.list. */
  tables: string[];
  /** How often the worker saves the connector's offsets (Connect's offset.flush.interval.ms). */
  offsetFlushMs?: number;
}

/**
 * A Kafka Connect standalone worker running Debezium's Postgres connector. Its offsets live in
 * a file of `dir`, so a worker started again on the same directory resumes where the last one
 * saved its offsets, as a restarted production worker does.
 */
export class DebeziumWorker {
  readonly #process: ChildProcess;
  readonly log: string;
  readonly restUrl: string;
  readonly #exited: Promise<void>;

  private constructor(child: ChildProcess, log: string, restUrl: string) {
    this.#process = child;
    this.log = log;
    this.restUrl = restUrl;
    this.#exited = new Promise((resolve) => child.once("exit", () => resolve()));
  }

  static async start(
    install: DebeziumInstall,
    pg: TestPostgres,
    dir: string,
    options: ConnectorOptions,
  ): Promise<DebeziumWorker> {
    const port = await freePort();
    const worker = join(dir, "worker.properties");
    const connector = join(dir, "connector.properties");
    writeFileSync(
      worker,
      properties({
        "bootstrap.servers": bootstrapServers,
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "key.converter.schemas.enable": "true",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "true",
        "offset.storage.file.filename": join(dir, "connect.offsets"),
        "offset.flush.interval.ms": String(options.offsetFlushMs ?? 1000),
        "plugin.path": install.pluginPath,
        listeners: `http://127.0.0.1:${port}`,
      }),
    );
    writeFileSync(
      connector,
      properties({
        name: "floe-test-debezium",
        "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
        "tasks.max": "1",
        "database.hostname": "127.0.0.1",
        "database.port": String(pg.port),
        "database.user": superuser,
        "database.password": "unused-trust-auth",
        "database.dbname": database,
        "topic.prefix": options.topicPrefix,
        "plugin.name": "pgoutput",
        "publication.autocreate.mode": "filtered",
        "table.include.list": options.tables.join(","),
      }),
    );
    const log = join(dir, `connect-${Date.now()}.log`);
    const out = openSync(log, "a");
    const child = spawn(
      "java",
      [
        "-Xms128M",
        "-Xmx512M",
        `-Dlog4j2.configurationFile=${join(root, "dev", "services", "kafka-connect", "log4j2.properties")}`,
        "-cp",
        install.classpath,
        "org.apache.kafka.connect.cli.ConnectStandalone",
        worker,
        connector,
      ],
      { cwd: dir, stdio: ["ignore", out, out] },
    );
    const started = new DebeziumWorker(child, log, `http://127.0.0.1:${port}`);
    let dead = false;
    void started.#exited.then(() => {
      dead = true;
    });
    await until(`the Debezium connector's task running (see ${log})`, async () => {
      if (dead) throw new Error(`the Connect worker exited at start; see ${log}`);
      return (await started.taskState()) === "RUNNING";
    });
    return started;
  }

  /** The connector task's state (RUNNING, FAILED, ...), undefined while the REST API does not answer. */
  async taskState(): Promise<string | undefined> {
    try {
      const response = await fetch(`${this.restUrl}/connectors/floe-test-debezium/status`, {
        signal: AbortSignal.timeout(2000),
      });
      if (!response.ok) return undefined;
      const status = (await response.json()) as { tasks?: { state: string; trace?: string }[] };
      const task = status.tasks?.[0];
      if (task?.state === "FAILED") throw new Error(`the Debezium task failed: ${task.trace ?? ""}; see ${this.log}`);
      return task?.state;
    } catch (error) {
      if (error instanceof Error && error.message.startsWith("the Debezium task failed")) throw error;
      return undefined;
    }
  }

  /** A graceful stop: Connect saves the connector's offsets first. */
  async stop(): Promise<void> {
    if (this.#process.exitCode === null && this.#process.signalCode === null) this.#process.kill("SIGTERM");
    await this.#exited;
  }

  /** As a crash would: nothing saved since the last offset flush. */
  async kill(): Promise<void> {
    if (this.#process.exitCode === null && this.#process.signalCode === null) this.#process.kill("SIGKILL");
    await this.#exited;
  }
}

/** The Debezium install (fetched unless there), or the service's error saying what is missing. */
export function debeziumInstall(): DebeziumInstall {
  return installDebezium();
}

function properties(entries: Record<string, string>): string {
  return `${Object.entries(entries)
    .map(([k, v]) => `${k}=${v.replaceAll("\\", "\\\\")}`)
    .join("\n")}\n`;
}

/** How many messages the topic holds: the sum of its partitions' high watermarks. */
export async function messageCount(topic: string, partitions: number): Promise<number> {
  const listed = await withAdmin(plainBroker, (admin) =>
    admin.listOffsets({
      topics: [
        {
          name: topic,
          partitions: Array.from({ length: partitions }, (_, partitionIndex) => ({ partitionIndex, timestamp: -1n })),
        },
      ],
    }),
  );
  let total = 0;
  for (const t of listed) for (const p of t.partitions) total += Number(p.offset);
  return total;
}

/** Resolves once the topic holds at least `count` messages; the worker's failure fails it. */
export async function waitForMessages(worker: DebeziumWorker, topic: string, partitions: number, count: number) {
  await until(`${count} messages in ${topic} (see ${worker.log})`, async () => {
    await worker.taskState();
    return (await messageCount(topic, partitions)) >= count;
  });
}

export interface CapturedMessage {
  partition: number;
  offset: bigint;
  key: string | undefined;
  /** undefined: a tombstone. */
  value: string | undefined;
  headers: Record<string, string>;
}

/** The topic's first `count` messages, as Debezium wrote them. */
export async function readMessages(topic: string, count: number): Promise<CapturedMessage[]> {
  const consumer = new Consumer({
    groupId: `floe-test-read-${process.pid}-${Date.now()}`,
    clientId: "floe-test-debezium-read",
    bootstrapBrokers: [bootstrapServers],
    deserializers: stringDeserializers,
    maxWaitTime: 500,
  });
  const received: CapturedMessage[] = [];
  try {
    const stream = await consumer.consume({ topics: [topic], mode: "earliest", autocommit: false });
    try {
      for await (const m of stream) {
        const headers: Record<string, string> = {};
        for (const [k, v] of m.headers ?? []) headers[String(k)] = String(v);
        received.push({ partition: m.partition, offset: m.offset, key: m.key, value: m.value, headers });
        if (received.length >= count) break;
      }
    } finally {
      await stream.close();
    }
  } finally {
    await consumer.close();
  }
  return received;
}
