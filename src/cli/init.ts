// floe init [dir]: writes a commented job file for the local defaults (a broker on
// 127.0.0.1:9092, the embedded catalog over ./warehouse beside the file) and prints the next
// steps. An existing file is left alone unless --force.
import { mkdirSync, writeFileSync } from "node:fs";
import { basename, isAbsolute, join, relative, resolve } from "node:path";
import type { Command } from "commander";
import { parseJob } from "../job/load-job.ts";
import { stringifyJson } from "../lib/int64-json.ts";
import { ExitCode } from "./exit-codes.ts";
import { fail } from "./fail.ts";
import {
  DEFAULT_BOOTSTRAP_SERVER,
  DEFAULT_TOPIC_PATTERN,
  JOB_FILE_NAME,
  jobNameFor,
  jobTemplate,
  nextSteps,
} from "./init-template.ts";

interface InitFlags {
  force?: boolean;
  name?: string;
  bootstrapServer: string;
  topicPattern: string;
  file: string;
  json?: boolean;
}

export function registerInit(command: Command): void {
  command
    .argument("[dir]", "folder to write it in (created if missing)", ".")
    .option("--name <name>", "the job's name: letters, digits and _ (default: from the folder's name)")
    .option("--bootstrap-server <host:port>", "the Kafka broker(s), comma-separated", DEFAULT_BOOTSTRAP_SERVER)
    .option("--topic-pattern <regex>", "topics to sync, matched against the whole name", DEFAULT_TOPIC_PATTERN)
    .option("--file <name>", "the job file's name in the folder", JOB_FILE_NAME)
    .option("--force", "overwrite the job file if it exists")
    .option("--json", "print what was written as JSON")
    .addHelpText(
      "after",
      `
Example:
  floe init my-job && floe check --config my-job/job.yaml
  floe init . --topic-pattern '^(customers|orders)$'

Exit codes: 0 written, 1 cannot write it, 2 usage, options that give no valid job file, or the file exists (use --force)`,
    )
    .action((dir: string, flags: InitFlags) => {
      process.exitCode = init(dir, flags);
    });
}

function init(dir: string, flags: InitFlags): ExitCode {
  const folder = resolve(dir);
  const file = join(folder, flags.file);
  const shown = displayPath(file);
  const name = flags.name ?? jobNameFor(basename(folder));
  const text = jobTemplate({
    name,
    bootstrapServers: flags.bootstrapServer
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s !== ""),
    topicPattern: flags.topicPattern,
  });
  // The job loader is the one judge of a job file: what init would write must load, or nothing is written.
  try {
    parseJob(text, file, { env: {} });
  } catch (error) {
    return fail("init", error, flags.json === true);
  }
  try {
    mkdirSync(folder, { recursive: true });
    // "wx": fails if the file exists, atomically, so that two inits never both write it.
    writeFileSync(file, text, { flag: flags.force ? "w" : "wx", mode: 0o644 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") {
      return fail("init", new Error(`cannot write ${shown}: ${(error as Error).message}`), flags.json === true);
    }
    // A usage error, as fail() reports one (kind config, exit 2): the command asked for a file that is there.
    const message = `${shown} exists; nothing was written (--force overwrites it)`;
    if (flags.json) process.stdout.write(`${stringifyJson({ error: message, kind: "config", retryable: false })}\n`);
    else process.stderr.write(`floe init: ${message}\n`);
    return ExitCode.USAGE;
  }
  const steps = nextSteps(shown);
  if (flags.json) {
    process.stdout.write(`${stringifyJson({ file, name, nextSteps: steps }, { indent: 2 })}\n`);
  } else {
    process.stdout.write(
      `wrote ${shown} (job ${name}: Kafka at ${flags.bootstrapServer}, tables in ${displayPath(join(folder, "warehouse"))})\n\nnext steps:\n${steps.map((s) => `  ${s}`).join("\n")}\n`,
    );
  }
  return ExitCode.OK;
}

/** Relative to the working directory when below it, else absolute. */
function displayPath(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel === "" || rel.startsWith("..") || isAbsolute(rel) ? path : rel;
}
