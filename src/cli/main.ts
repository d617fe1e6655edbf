// floe's command line. One file per command lives beside this one; this file only wires them.
//
// A command's file is loaded only when that command runs: the Kafka client, Arrow, the cloud
// SDKs and the rest cost most of a second to load, and `floe --version`, `floe --help` or a
// command that needs none of them should not pay for them. Every command is declared here with
// its one-line description, for the top-level help; its options, help text and action come from
// its file, registered on the command once it is the one asked for. A command's file in turn
// loads the job schema (zod, yaml), the failure classification and its work in its action (an
// `await import`), so that `floe <command> --help` and a usage error need little beyond commander.
import { readFileSync } from "node:fs";
import { Command } from "commander";
import { ExitCode } from "./exit-codes.ts";

type Register = (command: Command) => void;

const commands: readonly { name: string; description: string; load: () => Promise<Register> }[] = [
  {
    name: "init",
    description: "write a commented job file for a local Kafka and the embedded warehouse",
    load: async () => (await import("./init.ts")).registerInit,
  },
  {
    name: "sync",
    description: "drain the job's topics into their Iceberg tables once, then exit",
    load: async () => (await import("./sync.ts")).registerSync,
  },
  {
    name: "run",
    description: "stay up and sync each job on its schedule (one run of a job at a time, across processes too)",
    load: async () => (await import("./run.ts")).registerRun,
  },
  {
    name: "maintain",
    description: "compact the job's tables, rewrite their manifests, expire snapshots and remove orphan files, once",
    load: async () => (await import("./maintain.ts")).registerMaintain,
  },
  {
    name: "status",
    description: "per job: last run, next run, lag per partition now, and a warning when retention nears",
    load: async () => (await import("./status.ts")).registerStatus,
  },
  {
    name: "history",
    description: "the job's last runs: start, duration, outcome, messages, bytes, per-table commits, error",
    load: async () => (await import("./history.ts")).registerHistory,
  },
  {
    name: "logs",
    description: "one run's log lines (the run ids are in floe history)",
    load: async () => (await import("./logs.ts")).registerLogs,
  },
  {
    name: "check",
    description: "validate the job file, reach Kafka and the catalog, and show what a sync would read",
    load: async () => (await import("./check.ts")).registerCheck,
  },
  {
    name: "discover",
    description:
      "show the topics the job selects, their partitions and retained messages, and the columns a sample gives",
    load: async () => (await import("./discover.ts")).registerDiscover,
  },
  {
    name: "config",
    description: "the job file: its JSON Schema",
    load: async () => (await import("./config-schema.ts")).registerConfig,
  },
  {
    name: "serve",
    description: "serve the web UI and its API, and run the UI's jobs on their schedules",
    load: async () => (await import("./serve.ts")).registerServe,
  },
];

const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };

const program = new Command("floe")
  .description("Land Kafka topics in Apache Iceberg tables: one row per key (v3 deletion vectors) or per message.")
  .version(pkg.version, "-V, --version")
  .showHelpAfterError()
  .exitOverride((error) => process.exit(error.exitCode === 0 ? ExitCode.OK : ExitCode.USAGE));

const asked = askedCommand(process.argv.slice(2));
for (const { name, description, load } of commands) {
  const command = program.command(name).description(description);
  if (name === asked) (await load())(command);
}

await program.parseAsync(process.argv);

/** The command the arguments name (`floe <command> ...` or `floe help <command>`), if any. */
function askedCommand(args: readonly string[]): string | undefined {
  // floe itself has no option that takes a value, so the first word that is not an option is
  // the command.
  const words = args.filter((arg) => !arg.startsWith("-"));
  return words[0] === "help" ? words[1] : words[0];
}
