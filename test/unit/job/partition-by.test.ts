// `partition_by` in the job file: every spelling of a transform, the default, and each error at
// its path with what is wrong.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigError } from "#src/job/config-error.ts";
import { parseJob } from "#src/job/load-job.ts";

const job = (stream: string) =>
  `name: j\nsource:\n  kafka:\n    bootstrap_servers: [k:9092]\nstreams:\n  orders: ${stream}\n`;

function problems(text: string): string[] {
  try {
    parseJob(text, "job.yaml");
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
  }
  assert.fail("expected a ConfigError");
}

test("partition_by: each transform, a bare column as identity, the spec's bracket spellings", () => {
  const parsed = parseJob(
    job(
      "{mode: append, partition_by: [day(_kafka_timestamp), 'bucket(16, id)', 'truncate(4, name)', identity(region), country, 'bucket[8](sku)', 'truncate[2](code)', year(ts), month(ts2), hour(_floe_timestamp)]}",
    ),
    "job.yaml",
  );
  assert.deepEqual(parsed.bindings.get("orders")!.partitionBy, [
    { column: "_kafka_timestamp", transform: { kind: "day" } },
    { column: "id", transform: { kind: "bucket", buckets: 16 } },
    { column: "name", transform: { kind: "truncate", width: 4 } },
    { column: "region", transform: { kind: "identity" } },
    { column: "country", transform: { kind: "identity" } },
    { column: "sku", transform: { kind: "bucket", buckets: 8 } },
    { column: "code", transform: { kind: "truncate", width: 2 } },
    { column: "ts", transform: { kind: "year" } },
    { column: "ts2", transform: { kind: "month" } },
    { column: "_floe_timestamp", transform: { kind: "hour" } },
  ]);
});

test("partition_by: absent by default (a new table is unpartitioned); [] says unpartitioned", () => {
  assert.equal(parseJob(job("{mode: append}"), "job.yaml").bindings.get("orders")!.partitionBy, undefined);
  assert.deepEqual(
    parseJob(job("{mode: append, partition_by: []}"), "job.yaml").bindings.get("orders")!.partitionBy,
    [],
  );
});

test("partition_by: errors name the entry and say what is wrong", () => {
  assert.deepEqual(
    problems(
      job(
        "{mode: append, columns: {price: double}, partition_by: [week(ts), 'bucket(0, id)', 'truncate(name)', 'day(a, b)', day(_kafka_offset), hour(price), 'bucket(x, id)', 'day(ts']}",
      ),
    ),
    [
      "streams.orders.partition_by.0: unknown transform week: floe writes identity, year, month, day, hour, bucket and truncate",
      "streams.orders.partition_by.1: bucket: the number of buckets must be an integer from 1 to 2147483647, got 0",
      "streams.orders.partition_by.2: truncate takes the width and a column: truncate(<n>, <column>)",
      "streams.orders.partition_by.3: day takes one column: day(<column>)",
      "streams.orders.partition_by.6: bucket: the number of buckets must be an integer from 1 to 2147483647, got x",
      'streams.orders.partition_by.7: "day(ts" is not a transform: write e.g. day(ts), bucket(16, id), truncate(4, name) or a column name',
    ],
  );
  // Once the entries parse, the types the job file fixes are checked.
  assert.deepEqual(
    problems(
      job(
        "{mode: append, columns: {price: double}, partition_by: [day(_kafka_offset), hour(price), 'truncate(3, _kafka_partition)']}",
      ),
    ),
    [
      "streams.orders.partition_by.0: day does not apply to column _kafka_offset of type long",
      "streams.orders.partition_by.1: hour does not apply to column price of type double",
    ],
  );
  assert.deepEqual(problems(job("{mode: append, partition_by: [region, identity(region)]}")), [
    "streams.orders.partition_by.1: partition field region is also made by entry 0",
  ]);
});
