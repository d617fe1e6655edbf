"""The three readers, each answering with Arrow tables so that arrow_json normalises them alike.

A table reference is either {"catalog": {...}, "namespace": "ns", "table": "t"} or
{"metadataLocation": "/path/v1.metadata.json"} (a table that no catalog knows). A catalog is
{"type": "rest", "name", "uri", "warehouse"?, "s3"?} or {"type": "sql", "name", "uri": <SQLite
file>, "warehouse"}; for SQL catalogs the name is the catalog_name column the writer filled in.
"s3" holds static settings for tables in s3:// locations: {"endpoint", "region", "accessKeyId",
"secretAccessKey"} (an S3-compatible store, path-style addressing). "oauth2" holds the client
credentials of a catalog that wants a token: {"clientId", "clientSecret"}, exchanged at
<uri>/v1/oauth/tokens.

Every read goes back to the catalog: tests read, let floe commit, and read again, so no
engine may answer from a cached snapshot.
"""

import fcntl
import glob
import json
import os
import sqlite3

import duckdb
import duckdb_extension_avro
import duckdb_extension_httpfs
import duckdb_extension_iceberg
import pyarrow as pa
from pyiceberg.catalog import load_catalog
from pyiceberg.table import StaticTable
from pyspark.sql import SparkSession


def _json_key(catalog: dict) -> str:
    return json.dumps(catalog, sort_keys=True)


def _sqlite_metadata_location(catalog: dict, namespace: str, table: str) -> str:
    """The current metadata file of a table in a SQL catalog (the JDBC catalog's table layout)."""
    with sqlite3.connect(f"file:{catalog['uri']}?mode=ro", uri=True) as db:
        row = db.execute(
            "SELECT metadata_location FROM iceberg_tables"
            " WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?",
            (catalog["name"], namespace, table),
        ).fetchone()
    if row is None:
        raise LookupError(f"table {namespace}.{table} of catalog '{catalog['name']}' not found in {catalog['uri']}")
    return row[0]


def _sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _package_extension(package) -> str:
    """The extension file that a duckdb-extension-* pip package ships for this DuckDB version."""
    directory = os.path.join(os.path.dirname(package.__file__), "extensions", f"v{duckdb.__version__}")
    pattern = os.path.join(directory, "*.duckdb_extension")
    files = glob.glob(pattern)
    if len(files) != 1:
        raise FileNotFoundError(f"expected one extension file at {pattern}, found {files}")
    return files[0]


_DUCKDB_EXTENSIONS = {
    # httpfs carries the iceberg extension's REST calls; avro reads the manifests.
    "httpfs": duckdb_extension_httpfs,
    "avro": duckdb_extension_avro,
    "iceberg": duckdb_extension_iceberg,
}


def connect_duckdb(directory: str) -> duckdb.DuckDBPyConnection:
    """DuckDB with the iceberg, avro and httpfs extensions of the pip packages, installed from
    those files into an extension directory of the harness (`directory`, under .local) and loaded
    from there, offline: with autoinstall and autoload off, and DuckDB's home, extension and
    secret directories its own, nothing in the user's home (~/.duckdb/extensions,
    ~/.duckdb/stored_secrets) takes part in a read."""
    os.makedirs(directory, exist_ok=True)
    con = duckdb.connect(
        config={
            "home_directory": directory,
            "extension_directory": os.path.join(directory, "extensions"),
            "secret_directory": os.path.join(directory, "secrets"),
            "autoinstall_known_extensions": False,
            "autoload_known_extensions": False,
        }
    )
    con.execute("SET TimeZone = 'UTC'")
    # DuckDB locks an install's temporary file and fails, rather than waits, when another
    # connection installs the same extension at that moment: reader processes of test files that
    # run side by side (and engines that start on threads of one process) take turns here. flock
    # locks an open file description, so it orders threads of one process as well as processes.
    with open(os.path.join(directory, "install.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for name, package in _DUCKDB_EXTENSIONS.items():
            _install_duckdb_extension(con, name, _package_extension(package))
    for name in _DUCKDB_EXTENSIONS:
        con.execute(f"LOAD {name}")
    return con


def _install_duckdb_extension(con: duckdb.DuckDBPyConnection, name: str, source: str) -> None:
    """Installs the package's file unless the extension directory holds a copy of it already.
    DuckDB installs through a temporary file renamed into place, so a reader that has the previous
    file loaded keeps a whole file; connect_duckdb holds the install lock around this."""
    installed = con.execute(
        "SELECT install_path, installed_from FROM duckdb_extensions() WHERE extension_name = ? AND installed",
        [name],
    ).fetchone()
    if installed is not None:
        path, origin = installed
        if origin == source and os.path.isfile(path) and os.path.getsize(path) == os.path.getsize(source):
            return
    con.execute(f"FORCE INSTALL {_sql_string(source)}")


class DuckDB:
    """connect_duckdb's connection; REST catalogs are attached under their name."""

    def __init__(self, options: dict):
        self._con = connect_duckdb(options["duckdbDirectory"])
        self._attached: dict[str, str] = {}

    def table(self, ref: dict, columns: list[str] | None) -> pa.Table:
        select = ", ".join(f'"{c}"' for c in columns) if columns else "*"
        return self._query(f"SELECT {select} FROM {self._source(ref)}")

    def sql(self, query: str, catalog: dict | None) -> pa.Table:
        if catalog is not None:
            self._attach(catalog)
        return self._query(query)

    def _query(self, query: str) -> pa.Table:
        result = self._con.execute(query)
        if result.description is None:  # a statement without a result set (SET, ATTACH, ...)
            return pa.table({})
        return result.to_arrow_table()

    def _source(self, ref: dict) -> str:
        if "metadataLocation" in ref:
            return f"iceberg_scan({_sql_string(ref['metadataLocation'])})"
        catalog = ref["catalog"]
        if catalog["type"] == "sql":
            # DuckDB cannot attach a JDBC/SQLite catalog; read the metadata file it points to.
            location = _sqlite_metadata_location(catalog, ref["namespace"], ref["table"])
            return f"iceberg_scan({_sql_string(location)})"
        self._attach(catalog)
        return f'"{catalog["name"]}"."{ref["namespace"]}"."{ref["table"]}"'

    def _attach(self, catalog: dict) -> None:
        if catalog["type"] != "rest":
            raise ValueError("DuckDB attaches REST catalogs only; read SQL catalog tables with iceberg_scan")
        name, key = catalog["name"], _json_key(catalog)
        if self._attached.get(name) == key:
            return
        if name in self._attached:
            self._con.execute(f'DETACH "{name}"')
        oauth2 = catalog.get("oauth2")
        if oauth2:
            self._con.execute(
                f'CREATE OR REPLACE SECRET "{name}_oauth2" (TYPE iceberg, CLIENT_ID {_sql_string(oauth2["clientId"])},'
                f" CLIENT_SECRET {_sql_string(oauth2['clientSecret'])},"
                f" OAUTH2_SERVER_URI {_sql_string(catalog['uri'] + '/v1/oauth/tokens')})"
            )
            options = f"TYPE iceberg, ENDPOINT {_sql_string(catalog['uri'])}, SECRET \"{name}_oauth2\""
        else:
            options = f"TYPE iceberg, ENDPOINT {_sql_string(catalog['uri'])}, AUTHORIZATION_TYPE 'none'"
        s3 = catalog.get("s3")
        if s3:
            # httpfs reads the files with this secret; the catalog is not asked for credentials.
            endpoint = s3["endpoint"]
            self._con.execute(
                f'CREATE OR REPLACE SECRET "{name}_s3" (TYPE s3, KEY_ID {_sql_string(s3["accessKeyId"])},'
                f' SECRET {_sql_string(s3["secretAccessKey"])}, REGION {_sql_string(s3["region"])},'
                f" ENDPOINT {_sql_string(endpoint.split('://', 1)[-1])}, URL_STYLE 'path',"
                f" USE_SSL {'true' if endpoint.startswith('https://') else 'false'}"
                # Scoped to its bucket: with secrets of two stores, DuckDB takes the longest match.
                + (f", SCOPE {_sql_string(s3['scope'])})" if s3.get("scope") else ")")
            )
            options += ", ACCESS_DELEGATION_MODE 'none'"
        self._con.execute(f"ATTACH {_sql_string(catalog.get('warehouse', ''))} AS \"{name}\" ({options})")
        self._attached[name] = key

    def close(self) -> None:
        self._con.close()


class PyIceberg:
    def __init__(self, _options: dict):
        self._catalogs: dict[str, object] = {}

    def table(self, ref: dict, columns: list[str] | None) -> pa.Table:
        if "metadataLocation" in ref:
            table = StaticTable.from_metadata(ref["metadataLocation"])
        else:
            table = self._catalog(ref["catalog"]).load_table((ref["namespace"], ref["table"]))
        return table.scan(selected_fields=tuple(columns) if columns else ("*",)).to_arrow()

    def sql(self, _query: str, _catalog: dict | None) -> pa.Table:
        raise ValueError("PyIceberg has no SQL; use rows()")

    def _catalog(self, catalog: dict):
        key = _json_key(catalog)
        if key not in self._catalogs:
            properties = {"type": catalog["type"], "uri": catalog["uri"]}
            if catalog["type"] == "sql":
                properties["uri"] = f"sqlite:///{catalog['uri']}"
            if catalog.get("warehouse"):
                properties["warehouse"] = catalog["warehouse"]
            oauth2 = catalog.get("oauth2")
            if oauth2:
                properties["credential"] = f"{oauth2['clientId']}:{oauth2['clientSecret']}"
            s3 = catalog.get("s3")
            if s3:
                properties.update(
                    {
                        "s3.endpoint": s3["endpoint"],
                        "s3.region": s3["region"],
                        "s3.access-key-id": s3["accessKeyId"],
                        "s3.secret-access-key": s3["secretAccessKey"],
                    }
                )
            self._catalogs[key] = load_catalog(catalog["name"], **properties)
        return self._catalogs[key]

    def close(self) -> None:
        pass


class Spark:
    """A local[1] Spark with the Iceberg runtime. Each catalog lives in its own session
    (sessions share the JVM and SparkContext), because Spark binds a catalog name once per
    session and SQL catalogs of different tests all carry the writer's catalog name."""

    def __init__(self, options: dict):
        jars = sorted(glob.glob(os.path.join(options["sparkJars"], "*.jar")))
        for extra in options.get("sparkExtraJars", []):
            jars += sorted(glob.glob(os.path.join(extra, "*.jar")))
        if not jars:
            raise FileNotFoundError(f"no jars in {options['sparkJars']}; run: npm run services -- install readers")
        builder = SparkSession.builder.master("local[1]").appName("floe-test-readers")
        for key, value in {
            "spark.jars": ",".join(jars),
            "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
            "spark.driver.memory": options["sparkDriverMemory"],
            # Tests run short queries on small tables: the C1 compiler alone and the serial GC
            # start Spark and answer them faster (measured: start 4.3 s instead of 5.5-8 s).
            "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
            # Loopback only, no UI server, no console progress bars in the test output.
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            # Without Hive nothing creates metastore_db/ or derby.log in the working directory.
            "spark.sql.catalogImplementation": "in-memory",
            "spark.sql.session.timeZone": "UTC",
            "spark.sql.shuffle.partitions": "1",
        }.items():
            builder = builder.config(key, value)
        self._root = builder.getOrCreate()
        self._root.sparkContext.setLogLevel("WARN")
        self._sessions: dict[str, object] = {}

    def table(self, ref: dict, columns: list[str] | None) -> pa.Table:
        if "metadataLocation" in ref:
            frame = self._root.read.format("iceberg").load(ref["metadataLocation"])
        else:
            catalog = ref["catalog"]
            frame = self._session(catalog).table(f"`{catalog['name']}`.`{ref['namespace']}`.`{ref['table']}`")
        if columns:
            frame = frame.select(*[f"`{c}`" for c in columns])
        return frame.toArrow()

    def sql(self, query: str, catalog: dict | None) -> pa.Table:
        session = self._root if catalog is None else self._session(catalog)
        return session.sql(query).toArrow()

    def _session(self, catalog: dict):
        key = _json_key(catalog)
        if key not in self._sessions:
            session = self._root.newSession()
            prefix = f"spark.sql.catalog.{catalog['name']}"
            properties = {
                "": "org.apache.iceberg.spark.SparkCatalog",
                ".type": "rest" if catalog["type"] == "rest" else "jdbc",
                ".uri": catalog["uri"] if catalog["type"] == "rest" else f"jdbc:sqlite:{catalog['uri']}",
                # The catalog's table cache would serve the snapshot of the previous read.
                ".cache-enabled": "false",
            }
            if catalog.get("warehouse"):
                properties[".warehouse"] = catalog["warehouse"]
            oauth2 = catalog.get("oauth2")
            if oauth2:
                properties[".credential"] = f"{oauth2['clientId']}:{oauth2['clientSecret']}"
                properties[".oauth2-server-uri"] = catalog["uri"] + "/v1/oauth/tokens"
            s3 = catalog.get("s3")
            if s3:
                properties.update(
                    {
                        ".io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
                        ".s3.endpoint": s3["endpoint"],
                        ".s3.path-style-access": "true",
                        ".s3.access-key-id": s3["accessKeyId"],
                        ".s3.secret-access-key": s3["secretAccessKey"],
                        ".client.region": s3["region"],
                    }
                )
            for suffix, value in properties.items():
                session.conf.set(prefix + suffix, value)
            self._sessions[key] = session
        return self._sessions[key]

    def close(self) -> None:
        self._root.stop()


ENGINES = {"duckdb": DuckDB, "pyiceberg": PyIceberg, "spark": Spark}
