// Metrics modes from table properties, as Iceberg Java's MetricsConfig derives them.
import assert from "node:assert/strict";
import { test } from "node:test";
import { metricsModes, parseMetricsMode } from "#src/iceberg/parquet/metrics-config.ts";
import type { Schema } from "#src/iceberg/spec/schema.ts";
import type { NestedField } from "#src/iceberg/spec/types.ts";

const schema: Schema = {
  schemaId: 0,
  fields: [
    { id: 1, name: "id", required: true, type: "long" },
    {
      id: 2,
      name: "loc",
      required: false,
      type: { kind: "struct", fields: [{ id: 3, name: "lat", required: true, type: "double" }] },
    },
    {
      id: 4,
      name: "tags",
      required: false,
      type: { kind: "list", elementId: 5, element: "string", elementRequired: false },
    },
    { id: 6, name: "name", required: false, type: "string" },
  ],
};

test("modes parse as Java parses them", () => {
  assert.deepEqual(parseMetricsMode("none"), { kind: "none" });
  assert.deepEqual(parseMetricsMode(" Counts "), { kind: "counts" });
  assert.deepEqual(parseMetricsMode("FULL"), { kind: "full" });
  assert.deepEqual(parseMetricsMode("truncate(8)"), { kind: "truncate", length: 8 });
  for (const bad of ["truncate(0)", "truncate", "truncate(-1)", "some"]) assert.throws(() => parseMetricsMode(bad));
});

test("every primitive column, nested ones included, defaults to truncate(16)", () => {
  const modes = metricsModes(schema);
  assert.deepEqual([...modes.keys()].sort(), [1, 3, 5, 6]);
  for (const mode of modes.values()) assert.deepEqual(mode, { kind: "truncate", length: 16 });
});

test("the default property applies to all columns; column properties by dotted name win", () => {
  const modes = metricsModes(schema, {
    "write.metadata.metrics.default": "counts",
    "write.metadata.metrics.column.loc.lat": "full",
    "write.metadata.metrics.column.tags.element": "none",
  });
  assert.deepEqual(modes.get(1), { kind: "counts" });
  assert.deepEqual(modes.get(3), { kind: "full" });
  assert.deepEqual(modes.get(5), { kind: "none" });
  assert.deepEqual(modes.get(6), { kind: "counts" });
});

test("past 100 columns, the first 100 (a struct's own primitives first) keep metrics, the rest none", () => {
  const wide: NestedField[] = [
    {
      id: 1000,
      name: "inner",
      required: false,
      type: { kind: "struct", fields: [{ id: 1001, name: "x", required: false, type: "int" }] },
    },
    ...Array.from({ length: 100 }, (_, i): NestedField => ({ id: i + 1, name: `c${i}`, required: false, type: "int" })),
  ];
  const modes = metricsModes({ schemaId: 0, fields: wide });
  assert.deepEqual(modes.get(1), { kind: "truncate", length: 16 });
  assert.deepEqual(modes.get(100), { kind: "truncate", length: 16 });
  assert.deepEqual(modes.get(1001), { kind: "none" });
  const raised = metricsModes(
    { schemaId: 0, fields: wide },
    { "write.metadata.metrics.max-inferred-column-defaults": "101" },
  );
  assert.deepEqual(raised.get(1001), { kind: "truncate", length: 16 });
});
