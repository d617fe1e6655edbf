// floe's command line. One file per command lives beside this one; this file only wires them.
import { readFileSync } from "node:fs";
import { Command } from "commander";
import { registerCheck } from "./check.ts";
import { registerConfig } from "./config-schema.ts";
import { registerDiscover } from "./discover.ts";
import { ExitCode } from "./exit-codes.ts";
import { registerHistory } from "./history.ts";
import { registerInit } from "./init.ts";
import { registerLogs } from "./logs.ts";
import { registerMaintain } from "./maintain.ts";
import { registerRun } from "./run.ts";
import { registerServe } from "./serve.ts";
import { registerStatus } from "./status.ts";
import { registerSync } from "./sync.ts";

const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };

const program = new Command("floe")
  .description("Land Kafka topics in Apache Iceberg tables: one row per key (v3 deletion vectors) or per message.")
  .version(pkg.version, "-V, --version")
  .showHelpAfterError()
  .exitOverride((error) => process.exit(error.exitCode === 0 ? ExitCode.OK : ExitCode.USAGE));

registerInit(program);
registerSync(program);
registerRun(program);
registerMaintain(program);
registerStatus(program);
registerHistory(program);
registerLogs(program);
registerCheck(program);
registerDiscover(program);
registerConfig(program);
registerServe(program);

await program.parseAsync(process.argv);
