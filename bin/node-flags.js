// The V8 flags of the commands that move data: a sync, the scheduler, the server, maintenance.
//
// V8 sizes the young generation from the heap limit, so on a machine of many GiB each semi-space
// grows to tens of MiB, and a sync's short-lived garbage (fetch responses, decoded records) and
// the off-heap buffers those hold pile up between scavenges. With 16 MiB semi-spaces a
// 1M-message sync peaked 100-150 MB lower at the same CPU time (bench/sync.ts). Such a flag only
// counts when the process starts: bin/floe.js starts the command again with it. A flag the user
// gives (on the command line or in NODE_OPTIONS) wins. Plain JavaScript, as bin/floe.js is.

const DATA_COMMANDS = new Set(["sync", "run", "serve", "maintain"]);

/** What a data command runs with; bench/sync.ts gives its syncs the same. */
export const DATA_COMMAND_FLAGS = ["--max-semi-space-size=16"];

/**
 * The flags `floe <args>` should add to its Node: none for a command that does not move data or
 * only prints its help, and none that `execArgv` or `nodeOptions` (NODE_OPTIONS) already set.
 * @param {readonly string[]} args the arguments after `floe`
 * @param {readonly string[]} execArgv
 * @param {string | undefined} nodeOptions
 * @returns {string[]}
 */
export function nodeFlags(args, execArgv, nodeOptions) {
  const command = args.find((argument) => !argument.startsWith("-"));
  if (command === undefined || !DATA_COMMANDS.has(command)) return [];
  if (args.includes("--help") || args.includes("-h")) return [];
  const given = [...execArgv, ...(nodeOptions ?? "").split(/\s+/)].map(flagName);
  return DATA_COMMAND_FLAGS.filter((flag) => !given.includes(flagName(flag)));
}

/** `--max-semi-space-size` of `--max_semi_space_size=16`: V8 takes either spelling. */
function flagName(flag) {
  const name = flag.split("=")[0];
  return name.startsWith("--") ? `--${name.slice(2).replaceAll("_", "-")}` : name;
}
