// The types of node-flags.js, which is plain JavaScript as bin/floe.js is.

/** What a data command runs with. */
export declare const DATA_COMMAND_FLAGS: readonly string[];

/** The flags `floe <args>` adds to its Node (node-flags.js). */
export declare function nodeFlags(
  args: readonly string[],
  execArgv: readonly string[],
  nodeOptions: string | undefined,
): string[];
