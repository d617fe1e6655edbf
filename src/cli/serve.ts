// floe serve: the web UI, its HTTP API and the scheduler of the UI's jobs in one process.
import { resolve } from "node:path";
import type { Command } from "commander";
import { ExitCode } from "./exit-codes.ts";
import { listenAddress } from "./options.ts";

interface ServeFlags {
  stateDir: string;
  listen: string;
}

export function registerServe(program: Command): void {
  program
    .command("serve")
    .description("serve the web UI and its API, and run the UI's jobs on their schedules")
    .option("--state-dir <dir>", "where sources, destinations, jobs, runs and the secret key live", ".floe/serve")
    .option(
      "--listen <host:port>",
      "address to listen on; not loopback: FLOE_UI_PASSWORD or FLOE_UI_TOKEN required",
      "127.0.0.1:8000",
    )
    .addHelpText(
      "after",
      `
Example:
  floe serve --state-dir /var/lib/floe --listen 127.0.0.1:8000

Secrets entered in the UI are encrypted with the key in <state-dir>/secret.key (created on
first start, mode 0600), or FLOE_SECRET_KEY (32 bytes, base64 or hex).
Listening on another address than loopback needs FLOE_UI_PASSWORD (hashed into
<state-dir>/auth.json on first start; log in from the UI) or FLOE_UI_TOKEN (Authorization: Bearer).

Exit codes: 0 stopped by a signal, 1 failed to start, 2 bad options or missing credentials`,
    )
    .action(async (flags: ServeFlags) => {
      process.exitCode = await run(flags);
    });
}

async function run(flags: ServeFlags): Promise<ExitCode> {
  let address: { host: string; port: number };
  try {
    // Parsed here rather than by commander, so that the default goes through the same check.
    address = listenAddress(flags.listen);
  } catch (error) {
    process.stderr.write(`floe serve: --listen ${flags.listen}: ${(error as Error).message}\n`);
    return ExitCode.USAGE;
  }
  const { startServer } = await import("../api/serve.ts");
  const { AuthSetupError } = await import("../api/auth.ts");
  let server: Awaited<ReturnType<typeof startServer>>;
  try {
    server = await startServer({ stateDir: resolve(flags.stateDir), host: address.host, port: address.port });
  } catch (error) {
    process.stderr.write(`floe serve: ${(error as Error).message}\n`);
    return error instanceof AuthSetupError ? ExitCode.USAGE : ExitCode.FAILED;
  }
  process.stdout.write(`floe serve: the UI is at ${server.url} (state in ${resolve(flags.stateDir)})\n`);
  await new Promise<void>((done) => {
    const stop = () => done();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  process.stdout.write("floe serve: stopping (a running sync commits what it read)\n");
  await server.close();
  return ExitCode.OK;
}
