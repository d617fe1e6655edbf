// A command loads only what it needs: `floe --version` and `floe --help` load no command's file
// (and so neither the Kafka client, Arrow nor a cloud SDK), a command loads its own file only,
// and a sync loads what writes rows (Arrow, the Parquet writer and reader, the Avro manifest
// codecs) only once it has rows to write. Each case runs in a child process whose module loads a
// hook records.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";

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

interface Loaded {
  /** floe's own modules, as paths from the checkout. */
  own: string[];
  /** Packages by name, wherever node_modules is (a worktree's may be a link to another checkout's). */
  packages: Set<string>;
  /** Node's own modules, as node:name. */
  builtins: Set<string>;
}

/** The modules a child process running `args` loads. */
async function loadedIn(name: string, args: readonly string[]): Promise<Loaded> {
  const file = join(dir, `${name.replace(/\W/g, "")}.json`);
  await new Promise<void>((resolve, reject) => {
    execFile(
      process.execPath,
      ["--import", `data:text/javascript,${encodeURIComponent(recorder)}`, ...args],
      { env: { ...process.env, FLOE_LOADED_FILE: file }, timeout: 60_000 },
      (error) => (error && error.code !== 0 ? reject(error) : resolve()),
    );
  });
  const urls = JSON.parse(readFileSync(file, "utf8")) as string[];
  const paths = urls.filter((u) => u.startsWith("file:")).map((u) => fileURLToPath(u));
  const packages = new Set(
    paths.flatMap((p) => {
      const match = /[\\/]node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)/.exec(p);
      return match ? [match[1]!.replace("\\", "/")] : [];
    }),
  );
  const own = paths
    .filter((p) => p.startsWith(join(root, "src")))
    .map((p) => p.slice(root.length))
    .sort();
  return { own, packages, builtins: new Set(urls.filter((u) => u.startsWith("node:"))) };
}

/** The modules `floe <args>` loads. */
const loadedBy = (...args: string[]) => loadedIn(args.join("_"), [join(root, "bin/floe.js"), ...args]);

test("--version and --help load no command: main.ts, its exit codes and commander only", async () => {
  for (const args of [["--version"], ["--help"]]) {
    const { own, packages } = await loadedBy(...args);
    // lazy-kafka-validators.ts is the checkout's load hook (bin/floe.js); it imports node:module alone.
    assert.deepStrictEqual(
      own,
      ["src/cli/exit-codes.ts", "src/cli/lazy-kafka-validators.ts", "src/cli/main.ts"],
      args.join(" "),
    );
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
  // A command's help needs neither the job file's parser (yaml, and zod for sync's), the logger
  // (pino), a Parquet codec nor the Kafka client.
  assert.deepStrictEqual([...syncHelp.packages], ["commander"], "sync --help");
  for (const command of ["run", "status", "check", "history", "maintain", "discover"]) {
    const { packages } = await loadedBy(command, "--help");
    for (const pkg of ["yaml", "pino", "@platformatic/kafka", "parquet-wasm", "apache-arrow"]) {
      assert.ok(!packages.has(pkg), `${command} --help loads ${pkg}`);
    }
  }
  // An ES import of node:http builds its whole namespace, which loads Node's fetch (undici).
  assert.ok(!syncHelp.builtins.has("node:http"), "sync --help imports node:http");
});

test("a sync loads what writes rows only when it writes: not to plan, read nothing and compare positions", async () => {
  // What `floe sync` loads before it connects (recorded-sync.ts loads these two), which is all a
  // sync with nothing new runs.
  const script = [
    `await import(${JSON.stringify(pathToFileURL(join(root, "src/pipeline/connect.ts")).href)});`,
    `await import(${JSON.stringify(pathToFileURL(join(root, "src/pipeline/sync.ts")).href)});`,
  ].join("\n");
  const { own, packages, builtins } = await loadedIn("sync-modules", ["--input-type=module", "-e", script]);
  assert.ok(own.includes("src/pipeline/write-binding.ts") && own.includes("src/iceberg/table.ts"), own.join(", "));
  for (const pkg of ["apache-arrow", "parquet-wasm", "hyparquet", "hyparquet-compressors"]) {
    assert.ok(!packages.has(pkg), `a sync loads ${pkg} before it writes`);
  }
  const writers = own.filter(
    (p) =>
      p.startsWith("src/iceberg/parquet/") ||
      p.startsWith("src/iceberg/avro/") ||
      [
        "src/iceberg/data-writer.ts",
        "src/iceberg/commit/rewrite-data-files.ts",
        "src/pipeline/row-batch.ts",
        "src/pipeline/key-index-store.ts",
        "src/decode/avro-decoder.ts",
      ].includes(p),
  );
  assert.deepStrictEqual(writers, []);
  assert.ok(!builtins.has("node:http"), "a sync imports node:http");
});
