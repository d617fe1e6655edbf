// floe config schema: prints the JSON Schema of the job file (draft 2020-12), for editors that
// complete and check job files (the YAML language server's `# yaml-language-server: $schema=`).
import type { Command } from "commander";
import { jobFileJsonSchema } from "../job/job-schema.ts";
import { ExitCode } from "./exit-codes.ts";

export function registerConfig(command: Command): void {
  const config = command.addHelpText(
    "after",
    `
Example:
  floe config schema > floe-job.schema.json

Exit codes: 0, 2 unknown subcommand`,
  );
  config
    .command("schema")
    .description("print the JSON Schema of the job file")
    .addHelpText(
      "after",
      `
Example:
  floe config schema > floe-job.schema.json
  # then, first line of job.yaml:  # yaml-language-server: $schema=./floe-job.schema.json

Exit codes: 0`,
    )
    .action(() => {
      process.stdout.write(`${JSON.stringify(jobFileJsonSchema(), null, 2)}\n`);
      process.exitCode = ExitCode.OK;
    });
}
