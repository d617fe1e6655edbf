// floe serve: the web UI, its HTTP API and the scheduler of the UI's jobs in one process.
import { resolve } from "node:path";
import type { Command } from "commander";
import { ExitCode } from "./exit-codes.ts";
import { listenAddress } from "./options.ts";

interface ServeFlags {
  stateDir: string;
  listen: string;
  auth: boolean;
  tlsCert?: string;
  tlsKey?: string;
  trustProxy?: boolean;
  allowEnv?: string;
  allowHosts?: string;
  ambientCredentials?: boolean;
}

const list = (value: string | undefined) =>
  (value ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");

export function registerServe(command: Command): void {
  command
    .option("--state-dir <dir>", "where sources, destinations, jobs, runs and the secret key live", ".floe/serve")
    .option(
      "--listen <host:port>",
      "address to listen on (FLOE_UI_PASSWORD or FLOE_UI_TOKEN required, or --no-auth on loopback)",
      "127.0.0.1:8000",
    )
    .option("--no-auth", "on a loopback address only: no credential for clients on this host (never through a proxy)")
    .option("--tls-cert <file>", "serve HTTPS with this PEM certificate (chain), with --tls-key")
    .option("--tls-key <file>", "the PEM private key of --tls-cert")
    .option("--trust-proxy", "a reverse proxy in front: believe its X-Forwarded-Proto, -For and -Host")
    .option(
      "--allow-env <names>",
      `comma-separated environment variables the UI's records may reference as \${NAME} (also FLOE_SERVE_ALLOW_ENV); default none`,
    )
    .option(
      "--allow-hosts <hosts>",
      "comma-separated hosts (or *.domain) the server may connect to for the UI's records; default any but link-local and cloud metadata",
    )
    .option(
      "--ambient-credentials",
      "let object stores fall back to the server's own credentials (AWS chain, GOOGLE_APPLICATION_CREDENTIALS, AZURE_STORAGE_*)",
    )
    .addHelpText(
      "after",
      `
Example:
  floe serve --no-auth          # only you on this machine, no proxy in front
  FLOE_UI_PASSWORD='a long passphrase' floe serve --state-dir /var/lib/floe --listen 0.0.0.0:8000

Secrets entered in the UI are encrypted with the key in <state-dir>/secret.key (created on
first start, mode 0600), or FLOE_SECRET_KEY (32 bytes, base64 or hex).
A credential is needed: FLOE_UI_PASSWORD (hashed into <state-dir>/auth.json; a changed
FLOE_UI_PASSWORD replaces the stored one at the next start; log in from the UI) or FLOE_UI_TOKEN
(Authorization: Bearer). Only on a loopback address may --no-auth replace them.

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
  if ((flags.tlsCert === undefined) !== (flags.tlsKey === undefined)) {
    process.stderr.write("floe serve: --tls-cert and --tls-key go together\n");
    return ExitCode.USAGE;
  }
  let server: Awaited<ReturnType<typeof startServer>>;
  try {
    server = await startServer({
      stateDir: resolve(flags.stateDir),
      host: address.host,
      port: address.port,
      noAuth: !flags.auth,
      ...(flags.tlsCert !== undefined && flags.tlsKey !== undefined
        ? { tls: { certFile: flags.tlsCert, keyFile: flags.tlsKey } }
        : {}),
      trustProxy: flags.trustProxy ?? false,
      allowEnv: list(flags.allowEnv),
      allowHosts: list(flags.allowHosts),
      ambientCredentials: flags.ambientCredentials ?? false,
    });
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
