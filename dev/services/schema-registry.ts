// The schema registry of the tests: franz-go's in-memory implementation of the Confluent Schema
// Registry REST API (github.com/twmb/franz-go/pkg/sr/srfake, from the Go module proxy), behind a
// small launcher of ours (schema-registry/main.go) that serves it on 127.0.0.1 only: without
// authentication, behind basic auth or a bearer token, and over HTTPS with a private CA. Subjects, versions,
// schema ids and references behave as the Confluent API says, over real HTTP; what it holds is
// gone when it stops (the tests register what they use).
//
// Karapace is not on PyPI, and Apicurio Registry's own modules are not on Maven Central (and
// 3.x needs Java 21): this is the registry the project's package registries give.
import { join } from "node:path";
import {
  buildBeside,
  daemonPid,
  isPortOpen,
  localDir,
  requireCommand,
  root,
  runStep,
  type Service,
  ServiceError,
  spawnDaemon,
  stopDaemon,
  waitFor,
} from "./lib.ts";

const name = "schema-registry";
const home = join(localDir, "schema-registry");
const recipes = join(root, "dev", "services", "schema-registry");
const sources = ["go.mod", "go.sum", "main.go"].map((f) => join(recipes, f));
const env = (key: string, fallback: number) => Number(process.env[key] ?? fallback);
const port = env("FLOE_TEST_SCHEMA_REGISTRY_PORT", 8085);
const authPort = env("FLOE_TEST_SCHEMA_REGISTRY_AUTH_PORT", 8086);
const tlsPort = env("FLOE_TEST_SCHEMA_REGISTRY_TLS_PORT", 8087);
const tlsDir = join(home, "tls");

/** Where the tests find the registry, and the credentials of its guarded listener. */
export const schemaRegistry = {
  url: `http://127.0.0.1:${port}`,
  authUrl: `http://127.0.0.1:${authPort}`,
  /** HTTPS with a certificate for 127.0.0.1 signed by the CA in `caFile`, made at every start. */
  tlsUrl: `https://127.0.0.1:${tlsPort}`,
  caFile: join(tlsDir, "ca.pem"),
  username: "floe",
  password: "floe-registry-password",
  token: "floe-registry-token",
};

/** The launcher, built from the recipe (its digest names the directory); returns the binary. */
function installBinary(): string {
  const dir = buildBeside(sources, join(home, "bin"), (staging) => {
    requireCommand(name, "go", ["version"]);
    runStep(
      name,
      "building the schema registry with the Go module proxy",
      "go",
      ["build", "-o", join(staging, "schema-registry"), "."],
      recipes,
      { GOFLAGS: "-mod=mod" },
    );
  });
  return join(dir, "schema-registry");
}

async function healthy(): Promise<boolean> {
  try {
    const response = await fetch(`${schemaRegistry.url}/subjects`, { signal: AbortSignal.timeout(1000) });
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}

export const schemaRegistryService: Service = {
  name,

  async install() {
    installBinary();
  },

  async start() {
    if (await healthy()) return;
    const starting = daemonPid(name);
    if (starting !== undefined) {
      await waitFor(name, `GET ${schemaRegistry.url}/subjects`, healthy, { pid: starting, timeoutMs: 30_000 });
      return;
    }
    for (const p of [port, authPort, tlsPort]) {
      if (await isPortOpen(p)) {
        throw new ServiceError(
          name,
          `port ${p} is taken by a process that is not the schema registry; stop it or set FLOE_TEST_SCHEMA_REGISTRY_PORT / _AUTH_PORT / _TLS_PORT`,
        );
      }
    }
    const binary = installBinary();
    const pid = spawnDaemon(name, binary, [
      "-listen",
      `127.0.0.1:${port}`,
      "-auth-listen",
      `127.0.0.1:${authPort}`,
      "-username",
      schemaRegistry.username,
      "-password",
      schemaRegistry.password,
      "-token",
      schemaRegistry.token,
      "-tls-listen",
      `127.0.0.1:${tlsPort}`,
      "-tls-dir",
      tlsDir,
    ]);
    await waitFor(name, `GET ${schemaRegistry.url}/subjects`, healthy, { pid, timeoutMs: 30_000 });
  },

  async stop() {
    await stopDaemon(name);
  },

  async status() {
    if (await healthy()) {
      const pid = daemonPid(name);
      const owner = pid === undefined ? "not started by these scripts" : `pid ${pid}`;
      return {
        running: true,
        detail: `${schemaRegistry.url}, ${schemaRegistry.authUrl} and ${schemaRegistry.tlsUrl} (${owner})`,
      };
    }
    return { running: false, detail: `nothing answers at ${schemaRegistry.url}` };
  },
};
