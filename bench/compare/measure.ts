// Runs one system as a process tree and measures it: wall time, CPU seconds of the whole tree
// and its peak resident memory.
//
// The command runs under GNU time (/usr/bin/time), whose figures are those of wait4: user and
// system CPU of the process and of every descendant that was waited for, and the largest
// resident set among them. A /proc sampler (every SAMPLE_MS) adds what wait4 cannot see: the
// CPU of the live tree at a moment the bench picks (the commit that holds the last message, for
// a system that does not exit by itself) and the peak of the tree's summed RSS (a JVM with a
// Python driver is two processes). A system that exits is measured to its exit; one that keeps
// running (Kafka Connect) to the moment `until` resolves, and then stopped.
import { spawn } from "node:child_process";
import { createWriteStream, readdirSync, readFileSync } from "node:fs";

const SAMPLE_MS = 100;
const CLOCK_TICKS = 100;
const PAGE_KB = 4;

/** Process groups of systems still running: stopped if the bench itself exits or is interrupted. */
const live = new Set<number>();
process.on("exit", () => {
  for (const pid of live) signalTree(pid, "SIGKILL");
});
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => process.exit(130));
}

export interface Measured {
  wallSeconds: number;
  cpuSeconds: number;
  peakRssMb: number;
}

export interface RunSpec {
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Where its stdout and stderr go. */
  log: string;
  /** For a system that does not exit: resolves at the moment that ends the measurement (it is then stopped). */
  until?: (exited: Promise<number | null>) => Promise<void>;
  /** Seconds before the run is given up as hung. */
  timeoutSeconds: number;
}

export async function measure(spec: RunSpec): Promise<Measured> {
  const timeFile = `${spec.log}.time`;
  const log = createWriteStream(spec.log);
  const started = performance.now();
  const child = spawn("/usr/bin/time", ["-f", "%e %U %S %M", "-o", timeFile, spec.command, ...spec.args], {
    cwd: spec.cwd,
    env: { ...process.env, ...spec.env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  live.add(child.pid!);
  child.stdout.pipe(log, { end: false });
  child.stderr.pipe(log, { end: false });
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve(code));
  });
  let peakTreeKb = 0;
  let treeCpu = 0;
  const sample = () => {
    const tree = descendants(child.pid!);
    let rss = 0;
    let cpu = 0;
    for (const pid of tree) {
      const stat = procStat(pid);
      if (stat === undefined) continue;
      rss += stat.rssKb;
      cpu += stat.cpuTicks;
    }
    peakTreeKb = Math.max(peakTreeKb, rss);
    treeCpu = Math.max(treeCpu, cpu / CLOCK_TICKS);
  };
  const sampler = setInterval(sample, SAMPLE_MS);
  const timeout = setTimeout(() => signalTree(child.pid!, "SIGKILL"), spec.timeoutSeconds * 1000);
  try {
    if (spec.until !== undefined) {
      await spec.until(exited);
      const ended = performance.now();
      sample();
      const atEnd = { wallSeconds: (ended - started) / 1000, cpuSeconds: treeCpu };
      // The moment is measured; stop the system (its own process group: the JVM under time).
      signalTree(child.pid!, "SIGTERM");
      const killer = setTimeout(() => signalTree(child.pid!, "SIGKILL"), 20_000);
      await exited;
      clearTimeout(killer);
      return { ...atEnd, peakRssMb: Math.max(peakTreeKb, timeFigures(timeFile).maxRssKb) / 1024 };
    }
    const code = await exited;
    const ended = performance.now();
    if (code !== 0) throw new Error(`${spec.command} exited with ${code}; see ${spec.log}`);
    const t = timeFigures(timeFile);
    return {
      wallSeconds: (ended - started) / 1000,
      cpuSeconds: Math.max(t.userSeconds + t.systemSeconds, treeCpu),
      peakRssMb: Math.max(peakTreeKb, t.maxRssKb) / 1024,
    };
  } catch (error) {
    signalTree(child.pid!, "SIGKILL");
    throw error;
  } finally {
    clearInterval(sampler);
    clearTimeout(timeout);
    live.delete(child.pid!);
    // Flushed before the figures are returned: a caller may read the output next.
    await new Promise<void>((resolve) => log.end(resolve));
  }
}

function timeFigures(file: string): { userSeconds: number; systemSeconds: number; maxRssKb: number } {
  let text = "";
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return { userSeconds: 0, systemSeconds: 0, maxRssKb: 0 };
  }
  // A killed child makes time print "Command terminated by signal N" before the figures.
  const line = text.trim().split("\n").at(-1) ?? "";
  const [, user, system, rss] = line.split(" ").map(Number);
  return { userSeconds: user ?? 0, systemSeconds: system ?? 0, maxRssKb: rss ?? 0 };
}

/** The process and its descendants, from /proc/<pid>/task/<tid>/children. */
export function descendants(root: number): number[] {
  const out: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    out.push(pid);
    let tasks: string[] = [];
    try {
      tasks = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tasks) {
      try {
        const children = readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").trim();
        if (children !== "") queue.push(...children.split(" ").map(Number));
      } catch {
        // The task ended meanwhile.
      }
    }
  }
  return out;
}

/** utime+stime+cutime+cstime (ticks) and RSS of a live process; undefined once gone. */
function procStat(pid: number): { cpuTicks: number; rssKb: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the parenthesised command name, which may itself hold spaces.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const n = (i: number) => Number(fields[i - 3]);
    return { cpuTicks: n(14) + n(15) + n(16) + n(17), rssKb: n(24) * PAGE_KB };
  } catch {
    return undefined;
  }
}

function signalTree(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}
