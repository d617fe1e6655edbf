// The Kafka client's validators, compiled at their first call rather than as the client loads:
// the same answers and errors, one compile, none for a validator never called.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Ajv } from "ajv";
import { KAFKA_OPTIONS_MODULE, withLazyValidators } from "#src/cli/lazy-kafka-validators.ts";

test("the client's options modules are the ones changed, and a module that compiles nothing is left as it is", () => {
  assert.ok(KAFKA_OPTIONS_MODULE.test("file:///x/node_modules/@platformatic/kafka/dist/clients/base/options.js"));
  assert.ok(!KAFKA_OPTIONS_MODULE.test("file:///x/node_modules/@platformatic/kafka/dist/clients/base/base.js"));
  assert.equal(withLazyValidators("export const a = 1;"), undefined);
});

test("a lazy validator compiles once, at its first call, and answers as the compiled one", async () => {
  const source = withLazyValidators(
    [
      "export const compiles = [];",
      "const ajv = globalThis.__lazyValidatorsTestAjv;",
      "const compile = ajv.compile.bind(ajv);",
      "ajv.compile = (schema) => (compiles.push(schema), compile(schema));",
      'export const isCount = ajv.compile({ type: "integer", minimum: 0 });',
      'export const isName = ajv.compile({ type: "string" });',
    ].join("\n"),
  );
  assert.ok(source);
  Object.assign(globalThis, { __lazyValidatorsTestAjv: new Ajv() });
  const m = (await import(`data:text/javascript,${encodeURIComponent(source)}`)) as {
    compiles: unknown[];
    isCount: ((value: unknown) => boolean) & { errors: unknown[] | null };
  };
  assert.equal(m.compiles.length, 0, "nothing compiled as the module loads");
  assert.equal(m.isCount(3), true);
  assert.equal(m.isCount.errors, null);
  assert.equal(m.isCount(-1), false);
  assert.match(JSON.stringify(m.isCount.errors), /must be >= 0/);
  assert.equal(m.isCount("x"), false);
  assert.equal(m.compiles.length, 1, "one compile, for the validator called; none for the other");
});
