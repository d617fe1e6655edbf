// One change to a dependency's code, made where the command line loads it: the Kafka client
// (@platformatic/kafka) compiles some forty JSON Schema validators (ajv) as its options modules
// load, most of a second of CPU at every start of a command that connects to Kafka, and calls
// them only with its `strict` option, which floe leaves off. Each `ajv.compile(schema)` of those
// modules becomes a validator that compiles at its first call: the same validator, later or never.
//
// The bundle of the installed package makes the change as it is built (scripts/build-cli.ts); a
// checkout (and a package without the bundle) makes it in a module load hook (bin/floe.js).
import { registerHooks } from "node:module";

/** The client's modules that compile validators as they load. */
export const KAFKA_OPTIONS_MODULE = /[\\/]@platformatic[\\/]kafka[\\/]dist[\\/].*options\.js$/;

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

/** The module's source with every validator compiled at its first call; undefined when it compiles none. */
export function withLazyValidators(source: string): string | undefined {
  if (!/\bajv\.compile\(/.test(source)) return undefined;
  return source.replaceAll(/\bajv\.compile\(/g, "__floeLazyCompile(ajv, ") + lazyCompile;
}

/** Makes the change in every Kafka client options module this process loads from now on. */
export function registerLazyKafkaValidators(): void {
  registerHooks({
    load(url, context, nextLoad) {
      const loaded = nextLoad(url, context);
      if (!KAFKA_OPTIONS_MODULE.test(url) || loaded.source === undefined) return loaded;
      const text =
        typeof loaded.source === "string" ? loaded.source : new TextDecoder().decode(loaded.source as Uint8Array);
      const source = withLazyValidators(text);
      return source === undefined ? loaded : { ...loaded, source };
    },
  });
}
