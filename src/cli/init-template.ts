// The job file `floe init` writes: the local defaults (a broker on 127.0.0.1:9092, the embedded
// catalog over ./warehouse next to the file), every other key present as a comment that says
// what it does, so that the file is its own first documentation. Pure, for the unit tests.

export interface InitSettings {
  /** The job's name: letters, digits and _. */
  readonly name: string;
  readonly bootstrapServers: readonly string[];
  /** Regular expression over whole topic names. */
  readonly topicPattern: string;
}

export const DEFAULT_BOOTSTRAP_SERVER = "127.0.0.1:9092";
/** Every topic of the cluster; internal ones (`__consumer_offsets`, ...) never match. */
export const DEFAULT_TOPIC_PATTERN = ".*";
export const JOB_FILE_NAME = "job.yaml";

/** A job name from a folder's name: lowercased, what is not a letter, digit or _ made _; "floe" when nothing is left. */
export function jobNameFor(folder: string): string {
  const name = folder
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, "_")
    .replace(/^_+|_+$/g, "");
  return name === "" ? "floe" : name;
}

/** YAML's double-quoted scalar takes JSON's string escapes. */
const quoted = (text: string) => JSON.stringify(text);

export function jobTemplate(settings: InitSettings): string {
  const { name } = settings;
  return `# floe job file: which Kafka topics land in which Iceberg tables, and how.
# Check it with \`floe check --config <this file>\`; every key: \`floe config schema\`.
# \${VAR} is replaced by the environment variable VAR (for passwords and tokens: never write them here).

# Names the namespace (${name}_topics) and the consumer group (floe_${name}).
name: ${name}

source:
  kafka:
    bootstrap_servers: [${settings.bootstrapServers.map(quoted).join(", ")}]
    # Regular expression matched against the whole topic name; internal topics never match.
    # Without it, the job syncs exactly the topics listed under streams.
    topic_pattern: ${quoted(settings.topicPattern)}
    # consumer_group: floe_${name}       # where floe commits its offsets after each sync (the tables' own offsets win)
    # max_threads: 4                     # partitions read in parallel
    # security: {protocol: SASL_SSL}     # PLAINTEXT (default) | SASL_PLAINTEXT | SASL_SSL | SSL
    # sasl: {mechanism: SCRAM-SHA-512, username: floe, password: "\${KAFKA_PASSWORD}"}
    # tls: {ca: ca.pem}                  # and cert:, key: for mutual TLS
    # connect_timeout: 30s
    # request_timeout: 30s

destination:
  iceberg:
    # The embedded catalog: SQLite (warehouse/catalog.db) over ./warehouse next to this file,
    # also what floe uses when no catalog is given. PyIceberg and Spark read it as a SQL catalog.
    catalog: {type: sql, warehouse: ./warehouse}
    # catalog: {type: rest, uri: https://catalog.example.com, warehouse: prod}
    # catalog: {type: unity, workspace_url: https://dbc-123.cloud.databricks.com, catalog: main, token: "\${DATABRICKS_TOKEN}"}
    # namespace: ${name}_topics
    # target_engines: [databricks, duckdb, spark]   # refuse settings one of them cannot read

# Topics that topic_pattern selects and streams does not list: one row per message,
# bad messages to the <table>__dlq table.
default_stream: {mode: append, on_error: dlq}

# Per topic (the table is named after the topic unless table: says otherwise):
# streams:
#  customers: {mode: upsert, dedup_keys: [id]}         # one row per key; old rows retired by deletion vectors
#  orders: {mode: append, columns: {amount: double}}   # declare a type where the values mix (100, then 99.19)
#  payments: {mode: append, on_error: fail, table: payments_raw}   # fail | skip | dlq (default)
`;
}

/** What to do after `floe init`, for the file written. */
export function nextSteps(file: string): string[] {
  // Quoted for a POSIX shell when it needs to be.
  const config = /^[A-Za-z0-9_./-]+$/.test(file) ? file : `'${file.replaceAll("'", "'\\''")}'`;
  return [
    `1. Edit ${config}: topic_pattern, and streams for upserts (mode: upsert, dedup_keys).`,
    `2. floe check --config ${config}      # reach Kafka and the catalog, show what a sync would read`,
    `3. floe discover --config ${config}   # partitions, retained messages and the columns of each topic`,
    `4. floe sync --config ${config}       # land the topics in their tables`,
  ];
}
