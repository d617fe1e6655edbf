// bin/floe.js, the `floe` command: under a Node that strips types it runs the CLI in process;
// under an older one (the machines here have node 20 on PATH) it runs itself again under the
// package's Node 24, printing nothing of its own, with the child's exit code and signal passed on.
// A command that moves data runs with the V8 flags of bin/node-flags.js.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { DATA_COMMAND_FLAGS, nodeFlags } from "../../../bin/node-flags.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const bin = join(root, "bin", "floe.js");
const version = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version;

/** A node on PATH (outside node_modules) too old to strip types, as on the machines floe installs on. */
function oldNode(): string | undefined {
  for (const dir of (process.env["PATH"] ?? "").split(delimiter)) {
    if (dir === "" || dir.includes("node_modules")) continue;
    const node = join(dir, "node");
    if (!existsSync(node)) continue;
    const v = spawnSync(node, ["-p", "process.versions.node"], { encoding: "utf8" }).stdout.trim();
    const [major = 0, minor = 0] = v.split(".").map(Number);
    if (major < 22 || (major === 22 && minor < 18)) return node;
  }
  return undefined;
}

/** `floe serve` under `node`, once it says where its UI is; its output so far, and its exit. */
async function startServe(node: string, state: string, port: number) {
  const child = spawn(node, [bin, "serve", "--no-auth", "--listen", `127.0.0.1:${port}`, "--state-dir", state], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (d: Buffer) => {
    out += d;
  });
  child.stderr.on("data", (d: Buffer) => {
    out += d;
  });
  const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)));
  const deadline = Date.now() + 60_000;
  while (!out.includes("the UI is at") && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  assert.match(out, /the UI is at/);
  return { child, exited, output: () => out };
}

const old = oldNode();
const nodes: [string, string | undefined][] = [
  ["this Node (in process)", process.execPath],
  ["an old node on PATH (re-executed)", old],
];

for (const [label, node] of nodes) {
  test(`floe --version under ${label} prints the version alone`, {
    skip: node === undefined && "no node older than 22.18 on PATH",
  }, () => {
    const r = spawnSync(node!, [bin, "--version"], { encoding: "utf8", timeout: 60_000 });
    assert.equal(r.stderr, "");
    assert.equal(r.stdout, `${version}\n`);
    assert.equal(r.status, 0);
  });

  test(`floe init under ${label} writes the job file, and passes exit code 2 on when it exists`, {
    skip: node === undefined && "no node older than 22.18 on PATH",
  }, () => {
    const dir = mkdtempSync(join(tmpdir(), "floe-bin-"));
    try {
      const first = spawnSync(node!, [bin, "init", "shop"], { cwd: dir, encoding: "utf8", timeout: 60_000 });
      assert.equal(first.status, 0, first.stderr);
      assert.match(readFileSync(join(dir, "shop", "job.yaml"), "utf8"), /^name: shop$/m);
      const again = spawnSync(node!, [bin, "init", "shop"], { cwd: dir, encoding: "utf8", timeout: 60_000 });
      assert.equal(again.status, 2);
      assert.match(again.stderr, /exists; nothing was written/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test("a SIGTERM to the re-executing floe reaches the CLI, which stops and exits 0", {
  skip: old === undefined && "no node older than 22.18 on PATH",
  timeout: 90_000,
}, async () => {
  const state = mkdtempSync(join(tmpdir(), "floe-bin-serve-"));
  try {
    const serve = await startServe(old!, state, 20_000 + (process.pid % 20_000));
    serve.child.kill("SIGTERM");
    assert.equal(await serve.exited, 0, serve.output());
    assert.match(serve.output(), /stopping/);
  } finally {
    rmSync(state, { recursive: true, force: true });
  }
});

test("the commands that move data get the data commands' V8 flags; the others, help and a user's own flag do not", () => {
  const flags = DATA_COMMAND_FLAGS;
  for (const command of ["sync", "run", "serve", "maintain"]) {
    assert.deepEqual(nodeFlags([command, "--config", "job.yaml"], [], undefined), flags, command);
  }
  for (const args of [
    ["--version"],
    ["--help"],
    ["status"],
    ["init", "shop"],
    ["sync", "--help"],
    ["serve", "-h"],
    [],
  ]) {
    assert.deepEqual(nodeFlags(args, [], undefined), [], args.join(" "));
  }
  assert.deepEqual(nodeFlags(["sync"], ["--max-semi-space-size=64"], undefined), []);
  assert.deepEqual(nodeFlags(["sync"], [], "--enable-source-maps --max_semi_space_size=2"), []);
  assert.deepEqual(nodeFlags(["sync"], ["--enable-source-maps"], "--max-old-space-size=4096"), flags);
});

test("floe serve under this Node starts again with the data commands' V8 flags, keeping its pid", {
  skip: !existsSync("/proc/self/cmdline") && "no /proc to read a process's command line from",
  timeout: 90_000,
}, async () => {
  const state = mkdtempSync(join(tmpdir(), "floe-bin-flags-"));
  try {
    const serve = await startServe(process.execPath, state, 20_000 + ((process.pid + 7) % 20_000));
    const child = serve.child;
    const commandLine = readFileSync(`/proc/${child.pid}/cmdline`, "utf8").split("\0");
    for (const flag of DATA_COMMAND_FLAGS) assert.ok(commandLine.includes(flag), commandLine.join(" "));
    assert.ok(commandLine.includes("serve"), commandLine.join(" "));
    child.kill("SIGTERM");
    assert.equal(await serve.exited, 0, serve.output());
  } finally {
    rmSync(state, { recursive: true, force: true });
  }
});
