// Loading job files: the issue's example, defaults, every error path with its YAML path and line.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { ConfigError } from "#src/job/config-error.ts";
import { loadJob, parseJob } from "#src/job/load-job.ts";
import { Secret } from "#src/job/secret.ts";

const ISSUE_EXAMPLE = `
name: kafka_to_databricks
source:
  kafka:
    bootstrap_servers: [127.0.0.1:9092]
    consumer_group: floe_kafka_to_databricks
    topic_pattern: ^(customers|orders)$
    security: {protocol: PLAINTEXT}  # SASL_PLAINTEXT | SASL_SSL | SSL
    # sasl: {mechanism: PLAIN | SCRAM-SHA-256 | SCRAM-SHA-512, username, password}
    # tls: {ca, cert, key, insecure_skip_verify}
    max_threads: 2
destination:
  iceberg:
    catalog: {type: rest, uri: http://127.0.0.1:8181, warehouse: floe}  # or unity, or sql (default: sql in ./warehouse)
    target_engines: [databricks, duckdb, spark]
streams:
  customers: {mode: upsert, dedup_keys: [id]}
  orders: {mode: upsert, dedup_keys: [id]}   # mode: append keeps every message
`;

/** The problems of a job file, as `line: path: message` without the file name. */
function problems(text: string, env: Record<string, string> = {}): string[] {
  try {
    parseJob(text, "job.yaml", { env });
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    assert.equal(error.file, "job.yaml");
    assert.match(error.message, /^job\.yaml: /);
    return error.issues.map((i) => `${i.line}: ${i.path.join(".")}: ${i.message}`);
  }
  assert.fail("expected a ConfigError");
}

const minimal = (rest: string) => `name: j\nsource:\n  kafka:\n    bootstrap_servers: [k:9092]\n${rest}`;

test("the issue's example parses into a camel-cased Job: its source, its destination, and its own settings", () => {
  const job = parseJob(ISSUE_EXAMPLE, "/jobs/job.yaml");
  assert.equal(job.name, "kafka_to_databricks");
  assert.deepEqual(job.source, {
    bootstrapServers: ["127.0.0.1:9092"],
    security: { protocol: "PLAINTEXT" },
    connectTimeoutMs: 30_000,
    requestTimeoutMs: 30_000,
  });
  assert.deepEqual(job.destination, {
    catalog: {
      type: "rest",
      uri: "http://127.0.0.1:8181",
      warehouse: "floe",
      credential: undefined,
      requestTimeoutMs: 30_000,
    },
    targetEngines: ["databricks", "duckdb", "spark"],
    // Not stated: the table's write properties, else their defaults (iceberg/write-settings.ts).
    targetFileSizeBytes: undefined,
    compression: undefined,
  });
  assert.equal(job.consumerGroup, "floe_kafka_to_databricks");
  assert.equal(job.topicPattern, "^(customers|orders)$");
  assert.equal(job.maxThreads, 2);
  assert.equal(job.namespace, "kafka_to_databricks_topics");
  assert.deepEqual(Object.fromEntries(job.bindings), {
    customers: {
      topic: "customers",
      mode: "upsert",
      dedupKeys: [{ kind: "column", column: "id" }],
      onError: "dlq",
      columns: new Map(),
      format: "json",
      keyFormat: "bytes",
      envelope: undefined,
      keyColumns: new Map(),
      table: "customers",
    },
    orders: {
      topic: "orders",
      mode: "upsert",
      dedupKeys: [{ kind: "column", column: "id" }],
      onError: "dlq",
      columns: new Map(),
      format: "json",
      keyFormat: "bytes",
      envelope: undefined,
      keyColumns: new Map(),
      table: "orders",
    },
  });
  assert.deepEqual(job.defaultBinding, {
    mode: "append",
    dedupKeys: [],
    onError: "dlq",
    columns: new Map(),
    format: "json",
    keyFormat: "bytes",
    keyColumns: new Map(),
  });
});

test("columns: declared types per stream and in default_stream, in the order written", () => {
  const job = parseJob(
    minimal(`    topic_pattern: orders.*
streams:
  orders: {mode: append, columns: {amount: double, id: string, at: timestamptz}}
default_stream: {mode: append, columns: {n: long, ok: boolean}}
`),
    "j.yaml",
  );
  assert.deepEqual(
    [...job.bindings.get("orders")!.columns],
    [
      ["amount", "double"],
      ["id", "string"],
      ["at", "timestamptz"],
    ],
  );
  assert.deepEqual(
    [...job.defaultBinding.columns],
    [
      ["n", "long"],
      ["ok", "boolean"],
    ],
  );
});

test("columns: an unknown type, a system column, names equal but for case, each with its path", () => {
  assert.deepEqual(
    problems(
      minimal(`    topic_pattern: orders.*
streams:
  orders:
    mode: append
    columns: {amount: float, _kafka_offset: string, Id: long, id: string, "": long}
default_stream: {mode: append, columns: [amount]}
`),
    ),
    [
      '9: streams.orders.columns.amount: expected boolean | long | double | string | timestamptz | json | map, got "float"',
      "9: streams.orders.columns.: key: must not be empty",
      "9: streams.orders.columns._kafka_offset: _kafka_offset is a floe system column; its type is fixed",
      "9: streams.orders.columns.id: differs from Id only in case, and Spark, Databricks and Trino match column names without case",
      "10: default_stream.columns: expected a mapping, got a list",
    ],
  );
});

test("columns: a field inside a struct cannot be declared; a dedup key cannot go inside a field declared json or map", () => {
  assert.deepEqual(
    problems(
      minimal(`    topic_pattern: orders.*
streams:
  orders:
    mode: upsert
    dedup_keys: [customer.id, payload.id, address.zip]
    columns: {customer.id: long, payload: json, address: map}
`),
    ),
    [
      "9: streams.orders.dedup_keys.1: payload is declared json (columns), so payload.id is inside no struct: a dedup key may be a field inside structs only",
      "9: streams.orders.dedup_keys.2: address is declared map (columns), so address.zip is inside no struct: a dedup key may be a field inside structs only",
      "10: streams.orders.columns.customer.id: a field inside a struct cannot be declared (columns: names top-level fields); declare customer: json or customer: map to type the whole field",
    ],
  );
});

test("defaults: sql catalog in ./warehouse next to the job file, group floe_<name>, 4 threads", () => {
  const job = parseJob(minimal("streams:\n  Orders.V1: {mode: append}\n"), "/jobs/nightly/job.yaml");
  assert.deepEqual(job.destination.catalog, { type: "sql", warehouse: "/jobs/nightly/warehouse" });
  assert.equal(job.consumerGroup, "floe_j");
  assert.equal(job.maxThreads, 4);
  assert.equal(job.topicPattern, undefined);
  assert.equal(job.bindings.get("Orders.V1")?.table, "orders_v1");
  const uri = parseJob(
    minimal("streams: {t: {mode: append}}\ndestination: {iceberg: {catalog: {type: sql, warehouse: s3://b/w}}}"),
    "/j.yaml",
  );
  assert.deepEqual(uri.destination.catalog, { type: "sql", warehouse: "s3://b/w" });
});

test("security: SASL over TLS with relative PEM paths, secrets wrapped", () => {
  const job = parseJob(
    minimal(`    topic_pattern: orders.*
    security: {protocol: SASL_SSL}
    sasl: {mechanism: SCRAM-SHA-512, username: floe, password: hunter2}
    tls: {ca: certs/ca.pem, cert: /etc/c.pem, key: k.pem}
`),
    "/jobs/job.yaml",
  );
  const security = job.source.security;
  assert.equal(security.protocol, "SASL_SSL");
  assert.ok(security.protocol === "SASL_SSL");
  assert.ok(security.sasl.password instanceof Secret);
  assert.equal(security.sasl.password.reveal(), "hunter2");
  assert.deepEqual(security.tls, {
    ca: "/jobs/certs/ca.pem",
    clientCertificate: { cert: "/etc/c.pem", key: "/jobs/k.pem" },
    insecureSkipVerify: false,
  });
});

test("catalogs: rest with OAuth2 client credentials, unity with a token", () => {
  const rest = parseJob(
    minimal(`    topic_pattern: x
destination:
  iceberg:
    catalog: {type: rest, uri: "https://polaris:8181/api/catalog", client_id: floe, client_secret: s, scope: "PRINCIPAL_ROLE:floe"}
`),
    "j.yaml",
  );
  assert.equal(rest.destination.catalog.type, "rest");
  const credential = rest.destination.catalog.type === "rest" ? rest.destination.catalog.credential : undefined;
  assert.ok(credential && "clientId" in credential);
  assert.equal(credential.clientSecret.reveal(), "s");
  assert.equal(credential.scope, "PRINCIPAL_ROLE:floe");
  const unity = parseJob(
    minimal(`    topic_pattern: x
destination: {iceberg: {catalog: {type: unity, workspace_url: https://w.cloud.databricks.com, catalog: main, token: dapi1}, namespace: bronze}}
`),
    "j.yaml",
  );
  assert.equal(unity.namespace, "bronze");
  assert.ok(unity.destination.catalog.type === "unity" && "token" in unity.destination.catalog.credential);
});

test("upsert without dedup_keys names the stream and the line", () => {
  assert.deepEqual(problems(minimal("streams:\n  orders: {mode: upsert}\n")), [
    "6: streams.orders.dedup_keys: required when mode is upsert",
  ]);
});

test("every kind of problem is reported at once, each with its path and line", () => {
  const text = `name: kafka-job
source:
  kafka:
    bootstrap_servers: [127.0.0.1:9092, nope]
    topic_pattern: ^(a|b$
    security: {protocol: SASL_SSL}
    max_thread: 2
    tls: {cert: c.pem}
destination:
  iceberg:
    catalog: {type: rest, uri: ftp://x, token: t, client_id: x}
    target_engines: [duckdb, athenax]
    compression: lzo
streams:
  a: {mode: upsertx}
  b: {mode: append, on_error: 3, extra: 1}
  c: {mode: upsert, dedup_keys: [id, id, _kafka_offset]}
  d: {dedup_keys: [id]}
`;
  assert.deepEqual(problems(text), [
    "1: name: must be letters, digits and _ (it becomes a catalog identifier)",
    "3: source.kafka.sasl: required when security.protocol is SASL_SSL",
    "4: source.kafka.bootstrap_servers.1: expected host:port (an IPv6 host in brackets: [::1]:9092)",
    "5: source.kafka.topic_pattern: not a regular expression: Invalid regular expression: /^(a|b$/: Unterminated group",
    "7: source.kafka.max_thread: unknown key",
    "8: source.kafka.tls.key: cert and key go together (mutual TLS)",
    "11: destination.iceberg.catalog.uri: expected an http(s) URL",
    "11: destination.iceberg.catalog.token: give token or client_id + client_secret, not both",
    "11: destination.iceberg.catalog.client_secret: required with client_id",
    '12: destination.iceberg.target_engines.1: expected databricks | duckdb | spark | snowflake | trino | pyiceberg | athena | bigquery | redshift | iceberg-rust, got "athenax"',
    '13: destination.iceberg.compression: expected zstd | snappy | gzip | lz4 | uncompressed, got "lzo"',
    '15: streams.a.mode: expected upsert | append, got "upsertx"',
    "16: streams.b.on_error: expected dlq | fail | skip, got 3",
    "16: streams.b.extra: unknown key",
    "17: streams.c.dedup_keys.1: id is listed twice",
    "17: streams.c.dedup_keys.2: _kafka_offset is a floe system column; of those only _kafka_key can be a dedup key",
    "18: streams.d.mode: required",
  ]);
});

test("wrong types and missing sections say what was expected", () => {
  assert.deepEqual(problems("name: j\nsource: {kafka: {bootstrap_servers: 9092, max_threads: 0}}\n"), [
    "2: source.kafka.bootstrap_servers: expected a list or a string, got number 9092",
    "2: source.kafka.max_threads: Too small: expected number to be >=1",
  ]);
  assert.deepEqual(problems("name: j\n"), ["1: source: required"]);
  assert.deepEqual(problems(minimal("destination: {iceberg: {catalog: {type: glue}}}\n")), [
    '5: destination.iceberg.catalog.type: expected rest | unity | sql, got "glue"',
  ]);
  assert.deepEqual(
    problems(
      minimal("    topic_pattern: x\ndestination: {iceberg: {catalog: {type: unity, workspace_url: w, catalog: c}}}\n"),
    ),
    ["6: destination.iceberg.catalog.token: unity needs token, or client_id and client_secret"],
  );
});

test("topics: a pattern or a list is needed; listed topics must match the pattern and not share a table", () => {
  assert.deepEqual(problems(minimal("")), ["3: source.kafka.topic_pattern: required when streams lists no topic"]);
  assert.deepEqual(
    problems(
      minimal(
        "    topic_pattern: orders.*\nstreams:\n  customers: {mode: append}\n  orders.eu: {mode: append}\n  orders_eu: {mode: append}\n  __consumer_offsets: {mode: append}\n",
      ),
    ),
    [
      "7: streams.customers: topic_pattern orders.* does not match this topic, so it would never sync",
      "9: streams.orders_eu: writes table orders_eu, as orders.eu does; set table: for one of them",
      "9: streams.orders_eu: writes table orders_eu__dlq, as orders.eu does; set table: for one of them",
      "10: streams.__consumer_offsets: internal topics are never synced",
    ],
  );
});

test("an invalid topic_pattern is a problem of source.kafka.topic_pattern, not a crash", () => {
  assert.deepEqual(problems(minimal("    topic_pattern: orders(\n")), [
    "5: source.kafka.topic_pattern: not a regular expression: Invalid regular expression: /orders(/: Unterminated group",
  ]);
  // With streams listed too, which are checked against the pattern only when it compiles.
  assert.deepEqual(problems(minimal('    topic_pattern: "["\nstreams:\n  orders: {mode: append}\n')), [
    "5: source.kafka.topic_pattern: not a regular expression: Invalid regular expression: /[/: Unterminated character class",
  ]);
});

test("timeouts: durations with a unit for Kafka connect and requests and for REST and Unity catalogs", () => {
  const job = parseJob(
    minimal(`    topic_pattern: x
    connect_timeout: 1500ms
    request_timeout: 2m
destination:
  iceberg:
    catalog: {type: rest, uri: http://c:8181, request_timeout: 0.5s}
`),
    "j.yaml",
  );
  assert.equal(job.source.connectTimeoutMs, 1500);
  assert.equal(job.source.requestTimeoutMs, 120_000);
  assert.ok(job.destination.catalog.type === "rest");
  assert.equal(job.destination.catalog.requestTimeoutMs, 500);
  const unity = parseJob(
    minimal(`    topic_pattern: x
destination: {iceberg: {catalog: {type: unity, workspace_url: w, catalog: main, token: t, request_timeout: 45s}}}
`),
    "j.yaml",
  );
  assert.ok(unity.destination.catalog.type === "unity");
  assert.equal(unity.destination.catalog.requestTimeoutMs, 45_000);
  assert.deepEqual(
    problems(
      minimal(`    topic_pattern: x
    connect_timeout: 30
    request_timeout: 0s
destination: {iceberg: {catalog: {type: sql, request_timeout: 5s}}}
`),
    ),
    [
      '6: source.kafka.connect_timeout: expected a duration with its unit ("30s", "1500ms" or "2m"), got 30',
      "7: source.kafka.request_timeout: must be at least 1ms",
      "8: destination.iceberg.catalog.request_timeout: unknown key",
    ],
  );
});

test("YAML syntax errors and duplicate keys carry their line", () => {
  assert.deepEqual(problems("name: j\nname: k\n"), ["2: : Map keys must be unique"]);
  assert.deepEqual(problems("name: j\nsource: {kafka: [\n"), [
    "3: : Flow sequence in block collection must be sufficiently indented and end with a ]",
    "3: : Flow map in block collection must be sufficiently indented and end with a }",
  ]);
  assert.deepEqual(problems(""), ["undefined: : the job file is empty"]);
});

test("loadJob reads the file and names it in errors", async () => {
  const folder = mkdtempSync(join(tmpdir(), "floe-job-"));
  const file = join(folder, "job.yaml");
  writeFileSync(file, ISSUE_EXAMPLE);
  assert.equal((await loadJob(file)).name, "kafka_to_databricks");
  await assert.rejects(loadJob(join(folder, "missing.yaml")), (error: unknown) => {
    assert.ok(error instanceof ConfigError);
    assert.match(
      error.message,
      /missing\.yaml: invalid job file\n {2}.*missing\.yaml: cannot read the job file: ENOENT/,
    );
    return true;
  });
});

test("TLS files given as PEM text are kept as text, not resolved as paths against the job file's folder", () => {
  const cert = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
  const key = "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n";
  const job = parseJob(
    `name: j
source:
  kafka:
    bootstrap_servers: [k:9093]
    topic_pattern: x
    security: {protocol: SSL}
    tls: {cert: ${JSON.stringify(cert)}, key: ${JSON.stringify(key)}, ca: ca.pem}
`,
    "/etc/floe/job.yaml",
    { env: {} },
  );
  const tls = (job.source.security as { tls: { ca?: string; clientCertificate?: { cert: string; key: string } } }).tls;
  assert.deepEqual(tls.clientCertificate, { cert, key });
  assert.equal(tls.ca, "/etc/floe/ca.pem");
});
