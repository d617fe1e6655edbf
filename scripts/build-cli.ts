// Builds dist/cli/floe.mjs, the command line as one ES module, which an installed package runs
// (bin/floe.js). A start from src/ resolves, reads and compiles some 1,300 modules one by one, and
// Node refuses to strip the types of a file under node_modules, so every start also runs the type
// stripper over floe's own files; one bundle does neither. Packages that load a .wasm or a native
// file beside their own code stay outside it, resolved from node_modules as usual.
//
// One change to a dependency's code: the Kafka client's validators compile at their first call,
// not as its modules load (src/cli/lazy-kafka-validators.ts, which a checkout applies as it runs).
import { readFile, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build, type Plugin } from "esbuild";
import { KAFKA_OPTIONS_MODULE, withLazyValidators } from "../src/cli/lazy-kafka-validators.ts";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Packages that read files beside their own modules (wasm, native addons). */
const EXTERNAL = ["parquet-wasm", "@node-rs/*", "hysnappy", "hyparquet-compressors", "@platformatic/wasm-utils"];

const lazyKafkaValidators: Plugin = {
  name: "lazy-kafka-validators",
  setup(build) {
    build.onLoad({ filter: KAFKA_OPTIONS_MODULE }, async (args) => {
      const contents = withLazyValidators(await readFile(args.path, "utf8"));
      return contents === undefined ? undefined : { contents, loader: "js" };
    });
  },
};

await rm(join(root, "dist/cli"), { recursive: true, force: true });
const result = await build({
  // The Parquet encoding worker is a module of its own, which a worker thread loads by its path
  // (src/iceberg/parquet/parquet-encoder.ts).
  entryPoints: [
    { in: join(root, "src/cli/main.ts"), out: "floe" },
    { in: join(root, "src/iceberg/parquet/parquet-encode-worker.ts"), out: "parquet-encode-worker" },
  ],
  outdir: join(root, "dist/cli"),
  // Chunks sit beside floe.mjs, so that a path relative to a module (the UI, package.json) means
  // the same in every one of them as in src/cli/ and src/api/.
  chunkNames: "[name]-[hash]",
  outExtension: { ".js": ".mjs" },
  // One chunk per command (main.ts imports each on demand), and chunks of what they share: a
  // command loads only its own code, `floe --version` none.
  splitting: true,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node22",
  external: EXTERNAL,
  // CommonJS dependencies call require() on Node's own modules; an ES module has no require.
  banner: {
    js: "import { createRequire as __floeCreateRequire } from 'node:module'; const require = __floeCreateRequire(import.meta.url);",
  },
  plugins: [lazyKafkaValidators],
  legalComments: "linked",
  metafile: true,
  logLevel: "warning",
});
const outputs = Object.entries(result.metafile.outputs).filter(([path]) => path.endsWith(".mjs"));
const bytes = outputs.reduce((sum, [, o]) => sum + o.bytes, 0);
console.log(
  `build-cli: dist/cli/floe.mjs, parquet-encode-worker.mjs and ${outputs.length - 2} chunks, ${(bytes / 1024 / 1024).toFixed(1)} MiB ` +
    `from ${Object.keys(result.metafile.inputs).length} modules`,
);
