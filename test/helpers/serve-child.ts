// `floe serve` as an operator starts it: `node src/cli/main.ts serve ...` in a child process,
// its address taken from the line it prints; stop() sends SIGTERM to that process only.
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";

const main = join(import.meta.dirname, "..", "..", "src", "cli", "main.ts");

export interface ServeChild {
  url: string;
  process: ChildProcess;
  stderr(): string;
  stop(): Promise<void>;
}

export async function spawnServe(args: readonly string[], env: Record<string, string> = {}): Promise<ServeChild> {
  const child = spawn(process.execPath, [main, "serve", ...args], {
    env: { ...process.env, FLOE_UI_PASSWORD: "", FLOE_UI_TOKEN: "", FLOE_SERVE_ALLOW_ENV: "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let err = "";
  child.stderr!.on("data", (chunk: Buffer) => {
    err += chunk.toString();
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const m = /the UI is at (https?:\/\/\S+\/)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once("exit", (code) => reject(new Error(`floe serve exited with ${code}: ${err}`)));
  });
  return {
    url,
    process: child,
    stderr: () => err,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

/** Runs `floe serve` to its exit (a start that is refused). */
export function serveExit(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [main, "serve", ...args], {
    env: { ...process.env, FLOE_UI_PASSWORD: "", FLOE_UI_TOKEN: "", FLOE_SERVE_ALLOW_ENV: "", ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let err = "";
  child.stderr!.on("data", (chunk: Buffer) => {
    err += chunk.toString();
  });
  const timer = setTimeout(() => child.kill("SIGTERM"), 30_000);
  return new Promise((resolve) =>
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stderr: err });
    }),
  );
}
