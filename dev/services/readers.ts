// The verification readers of the integration tests and the demo: DuckDB with the iceberg extension,
// PyIceberg and PySpark with the Iceberg runtime, installed into a project-local Python venv
// (.local/venv) plus the jars Spark adds (.local/spark-jars). DuckDB installs the extensions of
// the pip packages into .local/duckdb when a reader starts. Nothing runs as a daemon: each
// test file starts its own reader process through dev/readers.ts.
import { join } from "node:path";
import {
  buildBeside,
  buildFrom,
  copyMavenJars,
  isBuiltFrom,
  localDir,
  requireCommand,
  root,
  runStep,
  type Service,
  ServiceError,
} from "./lib.ts";

const name = "readers";
const recipes = join(root, "dev", "services", "readers");
const requirements = join(recipes, "requirements.txt");
const pom = join(recipes, "pom.xml");
const s3Pom = join(recipes, "s3", "pom.xml");
const venv = join(localDir, "venv");

/** Where the test helpers find the installed readers. */
export const readerEnv = {
  python: join(venv, "bin", "python"),
  sparkJars: join(localDir, "spark-jars"),
  /** DuckDB's home, extension and secret directories: the readers' own, not the user's ~/.duckdb. */
  duckdb: join(localDir, "duckdb"),
};

/** Each part is rebuilt only when the recipe it came from changes (a stamp holds the recipe's hash). */
const parts = [
  { what: "the Python venv", dir: venv, recipe: requirements, build: buildVenv },
  { what: "the Spark jars", dir: readerEnv.sparkJars, recipe: pom, build: fetchJars },
];

function stampFile(dir: string): string {
  return join(dir, ".recipe-sha256");
}

function isCurrent(part: (typeof parts)[number]): boolean {
  return isBuiltFrom(part.recipe, stampFile(part.dir));
}

function buildVenv(): void {
  requireCommand(name, "python3");
  runStep(name, "creating the venv", "python3", ["-m", "venv", venv]);
  runStep(name, "installing the readers from PyPI (pyspark alone is ~450 MB)", readerEnv.python, [
    "-m",
    "pip",
    "install",
    "--disable-pip-version-check",
    "--quiet",
    "-r",
    requirements,
  ]);
}

function fetchJars(): void {
  // The Iceberg runtime is shaded and PySpark brings the rest; transitive jars would only
  // put a second copy of Spark's own dependencies on its classpath.
  copyMavenJars(name, "the Spark jars", pom, readerEnv.sparkJars, { options: ["-DexcludeTransitive=true"] });
}

/**
 * The jars Spark adds for S3 tables (iceberg-aws-bundle), fetched unless there: a directory named
 * by the digest of their pom, beside any other version a running Spark may have open.
 */
export function sparkS3Jars(): string {
  return buildBeside([s3Pom], join(localDir, "spark-s3-jars"), (dir) =>
    copyMavenJars(name, "the Spark S3 jars", s3Pom, dir, { options: ["-DexcludeTransitive=true"] }),
  );
}

export const readers: Service = {
  name,

  async install() {
    for (const part of parts) buildFrom(part.recipe, part.dir, stampFile(part.dir), part.build);
    sparkS3Jars();
  },

  async start() {
    // Spark needs a JVM when a test starts it; failing here names the missing tool up front.
    requireCommand(name, "java", ["-version"]);
    const stale = parts.filter((part) => !isCurrent(part));
    if (stale.length > 0) {
      throw new ServiceError(
        name,
        `${stale.map((p) => p.what).join(" and ")} not installed or outdated; run: npm run services -- install readers`,
      );
    }
  },

  async stop() {},

  async status() {
    const stale = parts.filter((part) => !isCurrent(part));
    return stale.length === 0
      ? { running: true, detail: `installed: ${venv}, ${readerEnv.sparkJars}` }
      : { running: false, detail: `not installed or outdated: ${stale.map((p) => p.what).join(", ")}` };
  },
};
