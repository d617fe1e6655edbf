// floe as a user runs it: `node src/cli/main.ts ...` in a child process, with its output on
// pipes, or on a pseudo-terminal through util-linux's script(1) (stdin, stdout and stderr all a
// terminal of the size given), for the tests of what a terminal shows and a pipe does not.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";

const main = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));

export interface FloeOutcome {
  code: number;
  stdout: string;
  stderr: string;
}

export interface FloeOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Far above what a command takes here; a hang fails the test instead of stalling it. */
  timeoutMs?: number;
  /** Run as another user (the tests of file permissions run as root and drop to one). */
  uid?: number;
  gid?: number;
}

/** Runs floe with stdout and stderr on pipes (not terminals). */
export function floe(args: readonly string[], options: FloeOptions = {}): Promise<FloeOutcome> {
  return run(process.execPath, [main, ...args], options);
}

/**
 * Runs floe on a pseudo-terminal of `columns` x `rows`: script(1) copies what the terminal
 * receives (stdout and stderr both, control sequences included) to its stdout. `-e` returns
 * floe's exit code.
 */
export function floeInTerminal(
  args: readonly string[],
  options: FloeOptions & { columns?: number; rows?: number } = {},
): Promise<FloeOutcome> {
  const command = [process.execPath, main, ...args].map(shellQuote).join(" ");
  const size = `stty cols ${options.columns ?? 120} rows ${options.rows ?? 40}`;
  return run("script", ["-qefc", `${size}; exec ${command}`, "/dev/null"], {
    ...options,
    env: { TERM: "xterm-256color", ...(options.env ?? process.env) },
  });
}

function run(file: string, args: readonly string[], options: FloeOptions): Promise<FloeOutcome> {
  return new Promise((resolve, reject) => {
    execFile(
      file,
      args,
      {
        timeout: options.timeoutMs ?? 180_000,
        maxBuffer: 64 * 1024 * 1024,
        ...(options.cwd ? { cwd: options.cwd } : {}),
        ...(options.env ? { env: options.env } : {}),
        ...(options.uid === undefined ? {} : { uid: options.uid }),
        ...(options.gid === undefined ? {} : { gid: options.gid }),
      },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== "number") reject(new Error(`${file} ${args.join(" ")}: ${error.message}`));
        else resolve({ code: error ? (error.code as number) : 0, stdout, stderr });
      },
    );
  });
}

function shellQuote(text: string): string {
  return /^[A-Za-z0-9_./:=-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}
