// Shared plumbing of the development services (tests, demo, benchmarks): where they live, how a daemon is spawned, how we
// wait for it. Every service fetches into .local/ (git-ignored) and logs to .local/logs/.
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createConnection } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const localDir = join(root, ".local");
export const logDir = join(localDir, "logs");

export interface ServiceStatus {
  running: boolean;
  detail: string;
}

/** A real service the tests talk to. Every method is idempotent. */
export interface Service {
  name: string;
  /** Fetches what the service needs from the package registries, once. */
  install(): Promise<void>;
  /** Starts it unless it already answers its health check; resolves once healthy. */
  start(): Promise<void>;
  stop(): Promise<void>;
  status(): Promise<ServiceStatus>;
}

export class ServiceError extends Error {
  constructor(service: string, message: string) {
    super(`${service}: ${message}`);
    this.name = "ServiceError";
  }
}

/** Fails fast, naming the missing tool, instead of letting a later step hang or fail obscurely. */
export function requireCommand(service: string, command: string, versionArgs: string[] = ["--version"]): void {
  const probe = spawnSync(command, versionArgs, { stdio: "ignore" });
  if (probe.error || probe.status !== 0) {
    throw new ServiceError(service, `'${command}' is not on PATH; install it (see README "Requirements")`);
  }
}

export function isPortOpen(port: number, host = "127.0.0.1", timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host });
    const done = (open: boolean) => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

export async function waitFor(
  service: string,
  what: string,
  check: () => Promise<boolean>,
  { timeoutMs = 120_000, intervalMs = 250, pid }: { timeoutMs?: number; intervalMs?: number; pid?: number } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    if (pid !== undefined && !isAlive(pid)) {
      throw new ServiceError(service, `process ${pid} exited before ${what}; see ${logFile(service)}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new ServiceError(service, `timed out after ${timeoutMs / 1000} s waiting for ${what}; see ${logFile(service)}`);
}

export function logFile(service: string): string {
  return join(logDir, `${service}.log`);
}

function pidFile(service: string): string {
  return join(localDir, "run", `${service}.pid`);
}

/** Spawns a detached daemon whose stdout and stderr go to .local/logs/<service>.log. */
export function spawnDaemon(
  service: string,
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): number {
  mkdirSync(logDir, { recursive: true });
  mkdirSync(dirname(pidFile(service)), { recursive: true });
  const log = openSync(logFile(service), "a");
  const child = spawn(command, args, {
    cwd: options.cwd ?? root,
    env: { ...process.env, ...options.env },
    detached: true,
    stdio: ["ignore", log, log],
  });
  if (child.pid === undefined) throw new ServiceError(service, `could not spawn ${command}`);
  child.unref();
  writeFileSync(pidFile(service), String(child.pid));
  return child.pid;
}

export function daemonPid(service: string): number | undefined {
  if (!existsSync(pidFile(service))) return undefined;
  const pid = Number(readFileSync(pidFile(service), "utf8"));
  return isAlive(pid) ? pid : undefined;
}

export async function stopDaemon(service: string, graceMs = 15_000): Promise<void> {
  const pid = daemonPid(service);
  if (pid !== undefined) {
    // The daemon leads its own process group (detached), so its children go with it.
    signalGroup(pid, "SIGTERM");
    const deadline = Date.now() + graceMs;
    while (isAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    if (isAlive(pid)) signalGroup(pid, "SIGKILL");
  }
  rmSync(pidFile(service), { force: true });
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Runs a set-up command to completion, with its output in the service log; throws on failure. */
export function runStep(
  service: string,
  what: string,
  command: string,
  args: string[],
  cwd = root,
  env: NodeJS.ProcessEnv = {},
): void {
  mkdirSync(logDir, { recursive: true });
  const log = openSync(logFile(service), "a");
  const result = spawnSync(command, args, { cwd, env: { ...process.env, ...env }, stdio: ["ignore", log, log] });
  if (result.error || result.status !== 0) {
    throw new ServiceError(service, `${what} failed (${command} ${args.join(" ")}); see ${logFile(service)}`);
  }
}

/** Whether `stamp` holds the sha256 of `recipe` (a pom, a requirements file): what was built from it is current. */
export function isBuiltFrom(recipe: string, stamp: string): boolean {
  return existsSync(stamp) && readFileSync(stamp, "utf8") === fileDigest(recipe);
}

/**
 * Builds `dir` from `recipe` unless `stamp` says it is current. A half-built or outdated
 * directory would mix old and new versions: it is removed first.
 */
export function buildFrom(recipe: string, dir: string, stamp: string, build: () => void): void {
  if (isBuiltFrom(recipe, stamp)) return;
  rmSync(dir, { recursive: true, force: true });
  build();
  writeFileSync(stamp, fileDigest(recipe));
}

/**
 * The directory `<base>-<digest of the recipes>`, built by `build` (into the directory it is
 * given) unless it exists. A changed recipe builds beside what a running daemon uses, never
 * over it: a JVM opens the jars of its classpath as it needs classes, so a jar deleted or
 * rewritten under it can fail a later class load. The build goes to a staging directory that is
 * renamed into place, so a directory that exists is complete, and two installs at once (two test
 * runs) do not mix their files: the second rename fails and its copy is dropped.
 */
export function buildBeside(recipes: string[], base: string, build: (dir: string) => void): string {
  const digest = createHash("sha256");
  for (const recipe of recipes) digest.update(fileDigest(recipe));
  const dir = `${base}-${digest.digest("hex").slice(0, 16)}`;
  buildInPlace(dir, build);
  return dir;
}

/**
 * `dir` built by `build` unless it exists: into a staging directory renamed into place, so a
 * directory that exists is complete, and of two installs at once the second rename fails and
 * its copy is dropped.
 */
export function buildInPlace(dir: string, build: (staging: string) => void): void {
  if (existsSync(dir)) return;
  const staging = `${dir}.staging-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  try {
    build(staging);
    renameSync(staging, dir);
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    if (!existsSync(dir)) throw error;
  }
}

/** `go install module@version` from the Go module proxy, its binary into `binDir` (once). */
export function goInstall(service: string, module: string, version: string, binDir: string): void {
  buildInPlace(binDir, (staging) => {
    requireCommand(service, "go", ["version"]);
    runStep(
      service,
      `building ${module}@${version} with the Go module proxy (minutes)`,
      "go",
      ["install", `${module}@${version}`],
      localDir,
      { GOBIN: staging },
    );
  });
}

/** Copies the jars of `pom` from Maven Central into `dir` (Maven's own repository: .local/m2). */
export function copyMavenJars(
  service: string,
  what: string,
  pom: string,
  dir: string,
  { goal = "dependency:copy-dependencies", options = [] }: { goal?: string; options?: string[] } = {},
): void {
  requireCommand(service, "mvn", ["-v"]);
  runStep(service, `fetching ${what} from Maven Central`, "mvn", [
    "-B",
    "-q",
    "-f",
    pom,
    `-Dmaven.repo.local=${join(localDir, "m2")}`,
    goal,
    ...options,
    `-DoutputDirectory=${dir}`,
  ]);
}

function fileDigest(file: string): string {
  return createHash("sha256").update(readFileSync(file)).digest("hex");
}

/** What differs between the daemons of the tests; `daemonService` does the rest the same way. */
export interface DaemonSpec {
  name: string;
  /** Where it answers, for status lines ("http://127.0.0.1:9000"). */
  endpoint: string;
  /** What start waits for, for messages ("http://127.0.0.1:9000 to take the root credentials"). */
  waitingFor: string;
  /** Every port it listens on: one already taken by a stranger fails the start naming `portSetting`. */
  ports: readonly number[];
  /** The environment variable(s) that move its ports. */
  portSetting: string;
  /** It answers, and is ours (takes our credentials). */
  healthy(): Promise<boolean>;
  /** Fetches or builds what it runs; idempotent. */
  install(): void | Promise<void>;
  /** The installed binary; status says "not built" while it is missing. */
  binary?: string;
  /** Spawns it (spawnDaemon) once installed; returns the pid. */
  launch(): number;
  /** Once healthy, every start: the buckets or containers the tests expect. Idempotent. */
  ready?(): Promise<void>;
  /** More of the status line of a running service ("data .local/minio/data"). */
  detail: string;
  timeoutMs?: number;
}

/**
 * A daemon of the tests as a Service: start leaves one that already answers alone (whoever
 * started it), refuses a port taken by another process, and waits for health or the daemon's
 * exit; stop signals the process group the scripts started.
 */
export function daemonService(spec: DaemonSpec): Service {
  const { name } = spec;
  return {
    name,
    async install() {
      await spec.install();
    },
    async start() {
      if (!(await spec.healthy())) {
        let pid = daemonPid(name);
        if (pid === undefined) {
          for (const port of spec.ports) {
            if (await isPortOpen(port)) {
              throw new ServiceError(
                name,
                `127.0.0.1:${port} is taken by a process that is not this ${name}; stop it or set ${spec.portSetting}`,
              );
            }
          }
          await spec.install();
          pid = spec.launch();
        }
        await waitFor(name, spec.waitingFor, () => spec.healthy(), { pid, timeoutMs: spec.timeoutMs ?? 60_000 });
      }
      await spec.ready?.();
    },
    async stop() {
      await stopDaemon(name);
    },
    async status(): Promise<ServiceStatus> {
      const pid = daemonPid(name);
      if (await spec.healthy()) {
        const owner = pid === undefined ? "not started by these scripts" : `pid ${pid}`;
        return { running: true, detail: `${spec.endpoint} (${owner}), ${spec.detail}` };
      }
      if (spec.binary !== undefined && !existsSync(spec.binary)) {
        return { running: false, detail: `not built: ${spec.binary}` };
      }
      return {
        running: false,
        detail: pid === undefined ? `nothing answers at ${spec.endpoint}` : `pid ${pid} is alive but not healthy yet`,
      };
    },
  };
}
