// The test command. `npm test` installs and starts the real services (Kafka, the Iceberg REST
// catalog, the reader venv), then runs the unit and integration tests with node:test;
// `npm run test:unit` runs the pure tests alone, with no service; `npm run test:scale` runs the
// scale tests of test/scale (a million messages each, minutes) against the same services.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { services } from "../dev/services/index.ts";
import { root, ServiceError } from "../dev/services/lib.ts";

const unitOnly = process.argv.includes("--unit");
const scaleOnly = process.argv.includes("--scale");
const suites = unitOnly ? ["test/unit"] : scaleOnly ? ["test/scale"] : ["test/unit", "test/integration"];

if (!unitOnly) {
  try {
    for (const service of services) {
      const t0 = performance.now();
      await service.install();
      await service.start();
      console.log(`services: ${service.name} ready (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
    }
  } catch (error) {
    console.error(error instanceof ServiceError ? error.message : error);
    process.exit(1);
  }
}

// Test files run side by side; each uses names of its own (topics, groups, namespaces, ports).
// The scale tests, of a million messages each, run one at a time. FLOE_TEST_CONCURRENCY
// overrides the number.
const concurrency = Number(process.env.FLOE_TEST_CONCURRENCY ?? (scaleOnly ? 1 : 2));
if (!Number.isSafeInteger(concurrency) || concurrency < 1) {
  console.error(`FLOE_TEST_CONCURRENCY: expected a positive integer, not ${process.env.FLOE_TEST_CONCURRENCY}`);
  process.exit(1);
}

const files = suites.flatMap((dir) => testFiles(join(root, dir))).map((f) => relative(root, f));
const result = spawnSync(
  process.execPath,
  ["--test", "--test-reporter=spec", `--test-concurrency=${concurrency}`, ...files],
  { cwd: root, stdio: "inherit" },
);
process.exit(result.status ?? 1);

function testFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(".test.ts"))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}
