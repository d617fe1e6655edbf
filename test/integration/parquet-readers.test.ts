// floe's Parquet data files as other readers see them, and Spark's files as floe reads them:
//   - pyarrow and DuckDB find a field_id on every schema node and read every type back;
//   - Iceberg Java (ParquetUtil.fileMetrics) and PyIceberg derive, from the footer, the same
//     column sizes, counts and bounds floe computed from its buffers (floe adds NaN counts,
//     which Java's writer reports and a footer cannot; PyIceberg keeps no counts for list and
//     map contents and no bounds for struct fields, where floe does as Java does);
//   - Spark reads the file through an Iceberg v3 table, uuid and decimals included, and prunes
//     with its metrics; DuckDB's iceberg extension and PyIceberg read that table too;
//   - the key-column reader reads a file Spark wrote (many row groups, dictionary and plain
//     pages, parquet-mr's zstd) exactly as pyarrow does.
// One Python process of the reader venv runs all of it: Spark takes seconds to start.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { ColumnBatchBuilder } from "#src/iceberg/parquet/column-batch.ts";
import { type WrittenDataFile, writeDataFiles } from "#src/iceberg/parquet/data-file-writer.ts";
import { readKeyColumns } from "#src/iceberg/parquet/key-column-reader.ts";
import { type Schema, schemaFromJson, schemaToJson } from "#src/iceberg/spec/schema.ts";
import { decimal, fixed, type NestedField } from "#src/iceberg/spec/types.ts";
import { root } from "../../dev/services/lib.ts";
import { readerEnv, readers } from "../../dev/services/readers.ts";
import { everyTypeRows } from "../fixtures/every-type-rows.ts";

const dir = mkdtempSync(join(tmpdir(), "floe-parquet-readers-"));
after(() => rmSync(dir, { recursive: true, force: true }));

// Ids in the order Iceberg assigns them to a new table (a struct's fields, then their children),
// so that the table Spark creates from this schema keeps them.
const sparkFields: NestedField[] = [
  { id: 1, name: "id", required: true, type: "long" },
  { id: 2, name: "name", required: false, type: "string" },
  { id: 3, name: "n", required: false, type: "int" },
  { id: 4, name: "f", required: false, type: "float" },
  { id: 5, name: "d", required: false, type: "double" },
  { id: 6, name: "b", required: false, type: "boolean" },
  { id: 7, name: "day", required: false, type: "date" },
  { id: 8, name: "ts", required: false, type: "timestamp" },
  { id: 9, name: "tstz", required: false, type: "timestamptz" },
  { id: 10, name: "u", required: false, type: "uuid" },
  { id: 11, name: "dec9", required: false, type: decimal(9, 2) },
  { id: 12, name: "dec18", required: false, type: decimal(18, 3) },
  { id: 13, name: "dec38", required: false, type: decimal(38, 10) },
  { id: 14, name: "bin", required: false, type: "binary" },
  { id: 15, name: "fx", required: false, type: fixed(4) },
  {
    id: 16,
    name: "tags",
    required: false,
    type: { kind: "list", elementId: 19, element: "string", elementRequired: false },
  },
  {
    id: 17,
    name: "attrs",
    required: false,
    type: { kind: "map", keyId: 20, key: "string", valueId: 21, value: "long", valueRequired: false },
  },
  {
    id: 18,
    name: "loc",
    required: false,
    type: {
      kind: "struct",
      fields: [
        { id: 22, name: "lat", required: true, type: "double" },
        { id: 23, name: "label", required: false, type: "string" },
      ],
    },
  },
];
const sparkSchema: Schema = { schemaId: 0, fields: sparkFields };
// Spark has no time type; pyarrow and DuckDB also read time and nanosecond timestamps.
const allSchema: Schema = {
  schemaId: 0,
  fields: [
    ...sparkFields,
    { id: 24, name: "t", required: false, type: "time" },
    { id: 25, name: "tsns", required: false, type: "timestamptz_ns" },
  ],
};

const records = everyTypeRows;

function write(schema: Schema, name: string): WrittenDataFile {
  const batch = new ColumnBatchBuilder(schema);
  for (const record of records) {
    batch.appendRow(Object.fromEntries(schema.fields.map((f) => [f.name, record[f.name]])));
  }
  const [file] = writeDataFiles(batch.build(), schema);
  writeFileSync(join(dir, name), file!.bytes);
  return file!;
}

type Stats = Record<string, Record<string, string | number>>;

/** floe's metrics in the shape the Python side reports: counts as numbers, bounds as hex. */
function statsJson(file: WrittenDataFile): Stats {
  const counts = (m?: ReadonlyMap<number, bigint>) =>
    Object.fromEntries([...(m ?? [])].map(([k, v]) => [k, Number(v)]));
  const hex = (m?: ReadonlyMap<number, Uint8Array>) =>
    Object.fromEntries([...(m ?? [])].map(([k, v]) => [k, Buffer.from(v).toString("hex")]));
  const { stats } = file;
  return {
    column_sizes: counts(stats.columnSizes),
    value_counts: counts(stats.valueCounts),
    null_value_counts: counts(stats.nullValueCounts),
    nan_value_counts: counts(stats.nanValueCounts),
    lower_bounds: hex(stats.lowerBounds),
    upper_bounds: hex(stats.upperBounds),
  };
}

const python = String.raw`
import datetime, decimal, json, sys, uuid
import pyarrow as pa, pyarrow.parquet as pq
from pyiceberg.io.pyarrow import compute_statistics_plan, data_file_statistics_from_parquet_metadata, parquet_path_to_id_mapping
from pyiceberg.schema import Schema

d = sys.argv[1]
spec = json.load(open(f"{d}/input.json"))
# The readers' DuckDB, iceberg and avro extensions loaded: nothing from the user's ~/.duckdb.
sys.path.insert(0, spec["readerHelpers"])
from engines import connect_duckdb
out = {}

def plain(v):
    if isinstance(v, (bytes, bytearray)): return v.hex()
    if isinstance(v, decimal.Decimal): return str(v)
    if isinstance(v, (datetime.datetime, datetime.date, datetime.time)): return v.isoformat()
    if isinstance(v, uuid.UUID): return str(v)
    if isinstance(v, float) and v != v: return "NaN"
    if isinstance(v, dict): return {k: plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)): return [plain(x) for x in v]
    return v

# pyarrow: the schema nodes and their field ids, and the rows
md = pq.read_metadata(f"{d}/all.parquet")
nodes = []
def visit(field, path):
    nodes.append({"path": path, "field_id": field.metadata.get(b"PARQUET:field_id", b"").decode() if field.metadata else ""})
    for child in getattr(field.type, "fields", None) or ([field.type.value_field] if isinstance(field.type, pa.ListType) else [field.type.key_field, field.type.item_field] if isinstance(field.type, pa.MapType) else []):
        visit(child, path + "." + child.name)
for field in md.schema.to_arrow_schema():
    visit(field, field.name)
out["pyarrow_nodes"] = nodes
out["parquet_schema"] = [{"name": md.schema.column(i).path, "physical": md.schema.column(i).physical_type, "logical": str(md.schema.column(i).logical_type)} for i in range(md.num_columns)]
table = pq.read_table(f"{d}/all.parquet")
out["pyarrow_rows"] = plain(table.drop_columns(["tsns"]).to_pylist())
out["pyarrow_tsns"] = [None if v is None else str(v) for v in table.column("tsns").cast(pa.int64()).to_pylist()]

# DuckDB: field ids from parquet_schema, rows from read_parquet
con = connect_duckdb(spec["duckdbDirectory"])
out["duckdb_ids"] = con.execute(f"SELECT name, field_id FROM parquet_schema('{d}/all.parquet')").fetchall()
out["duckdb_rows"] = plain(con.execute(f"SELECT id, name, tstz::VARCHAR, tsns::VARCHAR, t::VARCHAR, day::VARCHAR, dec38::VARCHAR, u, tags, attrs, loc FROM read_parquet('{d}/all.parquet') ORDER BY id").fetchall())

# PyIceberg: metrics from the footer, as it computes them for files it writes
schema = Schema.model_validate(spec["sparkSchema"])
st = data_file_statistics_from_parquet_metadata(pq.read_metadata(f"{d}/spark.parquet"), compute_statistics_plan(schema, {}), parquet_path_to_id_mapping(schema)).to_serialized_dict()
out["pyiceberg_stats"] = {k: {str(i): (v.hex() if isinstance(v, bytes) else v) for i, v in st[k].items()} for k in ("column_sizes", "value_counts", "null_value_counts", "nan_value_counts", "lower_bounds", "upper_bounds")}

# Spark with the Iceberg runtime
import glob
from pyspark.sql import SparkSession
builder = SparkSession.builder.master("local[1]").appName("floe-parquet-readers")
for k, v in {"spark.jars": ",".join(sorted(glob.glob(spec["sparkJars"] + "/*.jar"))),
        "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
        "spark.sql.catalog.h": "org.apache.iceberg.spark.SparkCatalog", "spark.sql.catalog.h.type": "hadoop",
        "spark.sql.catalog.h.warehouse": f"file://{d}/wh", "spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1",
        "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC", "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false", "spark.sql.catalogImplementation": "in-memory",
        "spark.sql.session.timeZone": "UTC", "spark.sql.shuffle.partitions": "1"}.items():
    builder = builder.config(k, v)
spark = builder.getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
jvm = spark._jvm
ib = jvm.org.apache.iceberg

# Java's metrics of floe's file, from its footer
metrics = ib.parquet.ParquetUtil.fileMetrics(ib.Files.localInput(f"{d}/spark.parquet"), ib.MetricsConfig.getDefault())
def jmap(m, conv):
    return {str(k): conv(m.get(k)) for k in m.keySet()} if m is not None else {}
tohex = lambda bb: bytes(ib.util.ByteBuffers.toByteArray(bb)).hex()
out["java_stats"] = {"column_sizes": jmap(metrics.columnSizes(), int), "value_counts": jmap(metrics.valueCounts(), int),
    "null_value_counts": jmap(metrics.nullValueCounts(), int), "nan_value_counts": jmap(metrics.nanValueCounts(), int),
    "lower_bounds": jmap(metrics.lowerBounds(), tohex), "upper_bounds": jmap(metrics.upperBounds(), tohex)}

# floe's file in an Iceberg v3 table, read and filtered by Spark
catalog = ib.hadoop.HadoopCatalog(spark._jsc.hadoopConfiguration(), f"file://{d}/wh")
props = jvm.java.util.HashMap()
props.put("format-version", "3")
t = catalog.createTable(ib.catalog.TableIdentifier.parse("db.floe"), ib.SchemaParser.fromJson(json.dumps(spec["sparkSchema"])), ib.PartitionSpec.unpartitioned(), props)
out["table_schema"] = json.loads(ib.SchemaParser.toJson(t.schema()))
data_file = ib.DataFiles.builder(t.spec()).withPath(f"{d}/spark.parquet").withFormat(ib.FileFormat.PARQUET).withFileSizeInBytes(spec["sparkFileSize"]).withMetrics(metrics).build()
t.newAppend().appendFile(data_file).commit()
out["spark_rows"] = plain([r.asDict(recursive=True) for r in spark.sql("SELECT * FROM h.db.floe ORDER BY id").collect()])
out["spark_filtered"] = {q: [r[0] for r in spark.sql(f"SELECT id FROM h.db.floe WHERE {q}").collect()]
    for q in ["id = 3", "name = 'abc\U0001f600'", "u = '0192d8f4-1c6e-7b8a-9c3d-1234567890ab'", "dec38 > 0", "tstz < TIMESTAMP '1970-01-01 00:00:00'"]}

# the same table through DuckDB's iceberg extension and PyIceberg: the uuid column too
from pyiceberg.table import StaticTable
metadata = sorted(glob.glob(f"{d}/wh/db/floe/metadata/*.metadata.json"))[-1]
out["duckdb_iceberg"] = plain(con.execute(f"SELECT id, typeof(u), u::VARCHAR, dec38::VARCHAR, tstz::VARCHAR FROM iceberg_scan('{metadata}') ORDER BY id").fetchall())
out["pyiceberg_rows"] = plain(StaticTable.from_metadata(metadata).scan(selected_fields=("id", "u", "dec38")).to_arrow().sort_by("id").to_pylist())

# A file Spark writes: many row groups, for the key-column reader
spark.sql("""CREATE TABLE h.db.spark (id BIGINT, name STRING, u STRING, amount DECIMAL(20, 4), small DECIMAL(6, 2), ts TIMESTAMP, day DATE, n INT,
  nested STRUCT<inner_key: BIGINT, label: STRING>) USING iceberg TBLPROPERTIES ('format-version'='3',
  'write.parquet.row-group-size-bytes'='4096', 'write.parquet.page-size-bytes'='1024',
  'write.parquet.row-group-check-min-record-count'='10', 'write.parquet.row-group-check-max-record-count'='50')""")
spark.sql("""INSERT INTO h.db.spark SELECT id, CASE WHEN id % 7 = 0 THEN NULL ELSE concat('name-', CAST(id % 50 AS STRING), '-é') END, uuid(),
  CAST(id * 1.5 AS DECIMAL(20, 4)) - 1000, CAST(id AS DECIMAL(6, 2)) / 4, timestamp_micros(1700000000000000 + id),
  date_add(DATE'2024-01-01', CAST(id AS INT)), CAST(id AS INT) - 500, named_struct('inner_key', id * 10, 'label', 'x')
  FROM range(0, 3000) ORDER BY id""")
path = spark.sql("SELECT file_path FROM h.db.spark.files").collect()[0][0].replace("file:", "")
written = pq.read_table(path)
unscaled = lambda values, scale: [None if v is None else str(int(v.scaleb(scale))) for v in values]
out["spark_file"] = {"path": path, "row_groups": pq.read_metadata(path).num_row_groups,
    "schema": json.loads(ib.SchemaParser.toJson(catalog.loadTable(ib.catalog.TableIdentifier.parse("db.spark")).schema())),
    "expected": {"1": [str(v) for v in written["id"].to_pylist()], "2": written["name"].to_pylist(), "3": written["u"].to_pylist(),
        "4": unscaled(written["amount"].to_pylist(), 4), "5": unscaled(written["small"].to_pylist(), 2),
        "6": [str(v) for v in written["ts"].cast(pa.int64()).to_pylist()], "7": written["day"].cast(pa.int32()).to_pylist(),
        "8": written["n"].to_pylist(), "10": [str(v["inner_key"]) for v in written["nested"].to_pylist()]}}
spark.stop()
json.dump(out, open(f"{d}/output.json", "w"))
`;

let out: Record<string, unknown>;
let floeSpark: WrittenDataFile;

before(async () => {
  await readers.install();
  await readers.start();
  write(allSchema, "all.parquet");
  floeSpark = write(sparkSchema, "spark.parquet");
  writeFileSync(
    join(dir, "input.json"),
    JSON.stringify({
      sparkSchema: schemaToJson(sparkSchema),
      sparkFileSize: floeSpark.bytes.length,
      sparkJars: readerEnv.sparkJars,
      duckdbDirectory: readerEnv.duckdb,
      readerHelpers: join(root, "dev", "readers"),
    }),
  );
  writeFileSync(join(dir, "check.py"), python);
  // No __pycache__/ in the source tree next to engines.py.
  const run = spawnSync(readerEnv.python, [join(dir, "check.py"), dir], {
    encoding: "utf8",
    timeout: 300_000,
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" },
  });
  assert.equal(run.status, 0, `the reader script failed:\n${run.stderr.slice(-4000)}`);
  out = JSON.parse(readFileSync(join(dir, "output.json"), "utf8"));
});

test("pyarrow and DuckDB find a field id on every node: top-level, list element, map key and value, struct fields", () => {
  const nodes = out.pyarrow_nodes as { path: string; field_id: string }[];
  assert.deepEqual(
    nodes.filter((n) => n.field_id === "").map((n) => n.path),
    [],
  );
  assert.deepEqual(Object.fromEntries(nodes.map((n) => [n.path, Number(n.field_id)])), {
    ...Object.fromEntries(allSchema.fields.map((f) => [f.name, f.id])),
    "tags.element": 19,
    "attrs.key": 20,
    "attrs.value": 21,
    "loc.lat": 22,
    "loc.label": 23,
  });
  // DuckDB lists the repeated groups of lists and maps too: they are the only nodes without an id
  const duckdb = out.duckdb_ids as [string, number | null][];
  assert.deepEqual(
    duckdb.filter(([, id]) => id === null).map(([name]) => name),
    ["arrow_schema", "list", "key_value"],
  );
});

test("Parquet types are the spec's: timestamptz adjusted to UTC, micros; decimal by precision; date; time", () => {
  const types = Object.fromEntries(
    (out.parquet_schema as { name: string; physical: string; logical: string }[]).map((c) => [
      c.name,
      `${c.physical} ${c.logical}`,
    ]),
  );
  assert.equal(
    types.tstz,
    "INT64 Timestamp(isAdjustedToUTC=true, timeUnit=microseconds, is_from_converted_type=false, force_set_converted_type=false)",
  );
  assert.equal(
    types.ts,
    "INT64 Timestamp(isAdjustedToUTC=false, timeUnit=microseconds, is_from_converted_type=false, force_set_converted_type=false)",
  );
  assert.equal(
    types.tsns,
    "INT64 Timestamp(isAdjustedToUTC=true, timeUnit=nanoseconds, is_from_converted_type=false, force_set_converted_type=false)",
  );
  assert.equal(types.t, "INT64 Time(isAdjustedToUTC=false, timeUnit=microseconds)");
  assert.equal(types.day, "INT32 Date");
  assert.equal(types.dec9, "INT32 Decimal(precision=9, scale=2)");
  assert.equal(types.dec18, "INT64 Decimal(precision=18, scale=3)");
  assert.equal(types.dec38, "FIXED_LEN_BYTE_ARRAY Decimal(precision=38, scale=10)");
  assert.equal(types.u, "FIXED_LEN_BYTE_ARRAY None");
  assert.equal(types["tags.list.element"], "BYTE_ARRAY String");
  assert.equal(types["attrs.key_value.key"], "BYTE_ARRAY String");
});

test("pyarrow and DuckDB read every value back", () => {
  const rows = out.pyarrow_rows as Record<string, unknown>[];
  assert.deepEqual(rows[0], {
    id: 1,
    name: "héllo wörld, this is long",
    n: -7,
    f: 1.5,
    d: "NaN",
    b: true,
    day: "2022-01-08",
    ts: "2023-11-14T22:13:20.123456",
    tstz: "2023-11-14T22:13:20.123456+00:00",
    u: "0192d8f41c6e7b8a9c3d1234567890ab",
    dec9: "-123.45",
    dec18: "123456789012.345",
    dec38: "-99999999999999999999.9999999993",
    bin: "00ff03",
    fx: "01020304",
    tags: ["a", null, "c"],
    attrs: [
      ["x", 1],
      ["y", null],
    ],
    loc: { lat: 1.5, label: "zz" },
    t: "01:00:00",
  });
  assert.equal(rows[1]!.tstz, "1969-12-31T23:59:59.999999+00:00");
  assert.equal(rows[2]!.name, "abc\u{1f600}");
  assert.deepEqual(out.pyarrow_tsns, ["1700000000123456789", null, null]);
  assert.deepEqual(out.duckdb_rows, [
    [
      -5,
      null,
      "1969-12-31 23:59:59.999999+00",
      null,
      null,
      null,
      null,
      "0192d8f400007b8a9c3d1234567890ab",
      null,
      null,
      null,
    ],
    [
      1,
      "héllo wörld, this is long",
      "2023-11-14 22:13:20.123456+00",
      // DuckDB's timestamptz holds microseconds (pyarrow reads the nanoseconds exactly, above)
      "2023-11-14 22:13:20.123456+00",
      "01:00:00",
      "2022-01-08",
      "-99999999999999999999.9999999993",
      "0192d8f41c6e7b8a9c3d1234567890ab",
      ["a", null, "c"],
      { x: 1, y: null },
      { lat: 1.5, label: "zz" },
    ],
    [
      3,
      "abc\u{1f600}",
      null,
      null,
      null,
      null,
      "1000000000000000000000000000.0000000000",
      null,
      [],
      { k: 7 },
      { lat: -0, label: null },
    ],
  ]);
});

test("Iceberg Java derives floe's metrics from the footer; floe adds the NaN counts Java's writer reports", () => {
  const ours = statsJson(floeSpark);
  const java = out.java_stats as Stats;
  assert.deepEqual(java.nan_value_counts, {});
  assert.deepEqual(ours.nan_value_counts, { 4: 1, 5: 1, 22: 0 });
  assert.deepEqual({ ...java, nan_value_counts: {} }, { ...ours, nan_value_counts: {} });
});

test("PyIceberg agrees where its policy is Java's: sizes, top-level counts and bounds", () => {
  const ours = statsJson(floeSpark);
  const py = out.pyiceberg_stats as Stats;
  assert.deepEqual(py.column_sizes, ours.column_sizes);
  const topLevel = (m: Record<string, string | number>) =>
    Object.fromEntries(Object.entries(m).filter(([id]) => Number(id) <= 15));
  for (const key of ["value_counts", "null_value_counts", "lower_bounds", "upper_bounds"]) {
    assert.deepEqual(topLevel(py[key]!), topLevel(ours[key]!), key);
  }
  // PyIceberg counts list and map contents, which Java drops (floe too), and bounds no struct field
  assert.deepEqual(
    Object.keys(py.value_counts!).filter((id) => !(id in ours.value_counts!)),
    ["19", "20", "21"],
  );
  assert.deepEqual(
    Object.keys(py.lower_bounds!).filter((id) => Number(id) > 15),
    [],
  );
});

test("Spark reads the file through an Iceberg v3 table and prunes with its metrics", () => {
  assert.deepEqual(out.table_schema, schemaToJson(sparkSchema), "the table kept the file's field ids");
  const rows = out.spark_rows as Record<string, unknown>[];
  assert.deepEqual(
    rows.map((r) => [r.id, r.u, r.dec38, r.tstz]),
    [
      [-5, "0192d8f4-0000-7b8a-9c3d-1234567890ab", null, "1969-12-31T23:59:59.999999"],
      [1, "0192d8f4-1c6e-7b8a-9c3d-1234567890ab", "-99999999999999999999.9999999993", "2023-11-14T22:13:20.123456"],
      [3, null, "1000000000000000000000000000.0000000000", null],
    ],
  );
  assert.deepEqual(rows[1]!.attrs, { x: 1, y: null });
  assert.deepEqual(rows[2]!.loc, { lat: -0, label: null });
  assert.deepEqual(out.spark_filtered, {
    "id = 3": [3],
    "name = 'abc\u{1f600}'": [3],
    "u = '0192d8f4-1c6e-7b8a-9c3d-1234567890ab'": [1],
    "dec38 > 0": [3],
    "tstz < TIMESTAMP '1970-01-01 00:00:00'": [-5],
  });
});

test("DuckDB's iceberg extension and PyIceberg read the table too, the unannotated uuid as uuid", () => {
  assert.deepEqual(out.duckdb_iceberg, [
    [-5, "UUID", "0192d8f4-0000-7b8a-9c3d-1234567890ab", null, "1969-12-31 23:59:59.999999+00"],
    [
      1,
      "UUID",
      "0192d8f4-1c6e-7b8a-9c3d-1234567890ab",
      "-99999999999999999999.9999999993",
      "2023-11-14 22:13:20.123456+00",
    ],
    [3, "UUID", null, "1000000000000000000000000000.0000000000", null],
  ]);
  assert.deepEqual(out.pyiceberg_rows, [
    { id: -5, u: "0192d8f4-0000-7b8a-9c3d-1234567890ab", dec38: null },
    { id: 1, u: "0192d8f4-1c6e-7b8a-9c3d-1234567890ab", dec38: "-99999999999999999999.9999999993" },
    { id: 3, u: null, dec38: "1000000000000000000000000000.0000000000" },
  ]);
});

test("the key-column reader reads a file Spark wrote, row for row as pyarrow does", async () => {
  const file = out.spark_file as {
    path: string;
    row_groups: number;
    schema: unknown;
    expected: Record<string, unknown[]>;
  };
  assert.ok(file.row_groups > 10, `${file.row_groups} row groups`);
  const ids = Object.keys(file.expected).map(Number);
  const { rowCount, columns } = await readKeyColumns(readFileSync(file.path), schemaFromJson(file.schema), ids);
  assert.equal(rowCount, 3000);
  for (const id of ids) {
    const got = columns.get(id)!.map((v) => (typeof v === "bigint" ? String(v) : v));
    assert.deepEqual(got, file.expected[String(id)], `field ${id}`);
  }
});
