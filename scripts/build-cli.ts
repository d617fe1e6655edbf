// Builds dist/cli/floe.mjs, the command line as one ES module, which an installed package runs
// (bin/floe.js). A start from src/ resolves, reads and compiles some 1,300 modules one by one, and
// Node refuses to strip the types of a file under node_modules, so every start also runs the type
// stripper over floe's own files; one bundle does neither. Packages that load a .wasm or a native
// file beside their own code stay outside it, resolved from node_modules as usual.
//
// One change to a dependency's code: the Kafka client compiles some forty JSON Schema validators
// (ajv) as its modules load, most of a second of CPU, and uses them only with its `strict` option,
// which floe leaves off. In the bundle each of those compiles runs at the validator's first call,
// which is the same validator, later or never.
import { readFile, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build, type Plugin } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Packages that read files beside their own modules (wasm, native addons). */
const EXTERNAL = ["parquet-wasm", "@node-rs/*", "hysnappy", "hyparquet-compressors", "@platformatic/wasm-utils"];

const lazyCompile = `
function __floeLazyCompile(ajv, schema) {
  let compiled;
  const validate = function (...args) {
    compiled ??= ajv.compile(schema);
    const valid = compiled.apply(this, args);
    validate.errors = compiled.errors;
    return valid;
  };
  validate.errors = null;
  return validate;
}
`;

const lazyKafkaValidators: Plugin = {
  name: "lazy-kafka-validators",
  setup(build) {
    build.onLoad({ filter: /[\\/]@platformatic[\\/]kafka[\\/]dist[\\/].*options\.js$/ }, async (args) => {
      const source = await readFile(args.path, "utf8");
      const compiles = source.match(/\bajv\.compile\(/g)?.length ?? 0;
      if (compiles === 0) return undefined;
      return {
        contents: source.replaceAll(/\bajv\.compile\(/g, "__floeLazyCompile(ajv, ") + lazyCompile,
        loader: "js",
      };
    });
  },
};

await rm(join(root, "dist/cli"), { recursive: true, force: true });
const result = await build({
  entryPoints: [join(root, "src/cli/main.ts")],
  outdir: join(root, "dist/cli"),
  entryNames: "floe",
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
  `build-cli: dist/cli/floe.mjs and ${outputs.length - 1} chunks, ${(bytes / 1024 / 1024).toFixed(1)} MiB ` +
    `from ${Object.keys(result.metafile.inputs).length} modules`,
);
