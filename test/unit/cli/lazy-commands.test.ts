// A command loads only what it needs: `floe --version` and `floe --help` load no command's file
// (and so neither the Kafka client, Arrow nor a cloud SDK), and a command loads its own file
// only. Each case runs the CLI in a child process whose module loads a hook records.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "floe-lazy-"));

// Records every module URL the process loads, written out as it exits.
const recorder = `
import { registerHooks } from "node:module";
import { writeFileSync } from "node:fs";
const loaded = new Set();
registerHooks({ load(url, context, next) { loaded.add(url); return next(url, context); } });
process.on("exit", () => writeFileSync(process.env.FLOE_LOADED_FILE, JSON.stringify([...loaded])));
`;

/** The modules `floe <args>` loads: floe's own as paths from the checkout, packages by name. */
async function loadedBy(...args: string[]): Promise<{ own: string[]; packages: Set<string> }> {
  const file = join(dir, `${args.join("_").replace(/\W/g, "")}.json`);
  await new Promise<void>((resolve, reject) => {
    execFile(
      process.execPath,
      ["--import", `data:text/javascript,${encodeURIComponent(recorder)}`, join(root, "bin/floe.js"), ...args],
      { env: { ...process.env, FLOE_LOADED_FILE: file }, timeout: 60_000 },
      (error) => (error && error.code !== 0 ? reject(error) : resolve()),
    );
  });
  const urls = (JSON.parse(readFileSync(file, "utf8")) as string[]).filter((u) => u.startsWith("file:"));
  const paths = urls.map((u) => fileURLToPath(u).slice(root.length));
  const packages = new Set(
    paths
      .filter((p) => p.startsWith("node_modules/"))
      .map((p) =>
        p
          .split("/")
          .slice(1, p[13] === "@" ? 3 : 2)
          .join("/"),
      ),
  );
  return { own: paths.filter((p) => p.startsWith("src/")).sort(), packages };
}

test("--version and --help load no command: main.ts, its exit codes and commander only", async () => {
  for (const args of [["--version"], ["--help"]]) {
    const { own, packages } = await loadedBy(...args);
    assert.deepStrictEqual(own, ["src/cli/exit-codes.ts", "src/cli/main.ts"], args.join(" "));
    assert.deepStrictEqual([...packages], ["commander"], args.join(" "));
  }
});

test("a command loads its own file, not the others' nor the Kafka client it does not use", async () => {
  const schema = await loadedBy("config", "schema");
  assert.ok(schema.own.includes("src/cli/config-schema.ts"));
  for (const other of ["src/cli/sync.ts", "src/cli/serve.ts", "src/cli/run.ts"]) assert.ok(!schema.own.includes(other));
  assert.ok(!schema.packages.has("@platformatic/kafka"), [...schema.packages].join(", "));

  const syncHelp = await loadedBy("sync", "--help");
  assert.ok(syncHelp.own.includes("src/cli/sync.ts"));
  assert.ok(!syncHelp.own.includes("src/cli/serve.ts"));
});
