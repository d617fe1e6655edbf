# Reads an Iceberg table of floe's SQL catalog through PyIceberg (its PyArrow FileIO, or the
# FileIO named by py-io-impl) and prints its live rows as JSON: argv[1] is a JSON object
# {"catalog": {properties}, "table": "ns.table", "columns": [...]}. With "equalBytes": {"column",
# "hex"} it scans with the row filter column = those bytes and prints {"rows", "files"}: the rows
# and how many data files the scan planned after pruning by the files' bounds.
import decimal
import json
import sys

from pyiceberg.catalog import load_catalog
from pyiceberg.expressions import AlwaysTrue, EqualTo

request = json.loads(sys.argv[1])
catalog = load_catalog("floe", **request["catalog"])
table = catalog.load_table(request["table"])
equal = request.get("equalBytes")
row_filter = AlwaysTrue() if equal is None else EqualTo(equal["column"], bytes.fromhex(equal["hex"]))
scan = table.scan(row_filter=row_filter, selected_fields=tuple(request["columns"]))
rows = scan.to_arrow().to_pylist()


def plain(value):
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, bytes):
        return value.hex()
    return str(value)


print(json.dumps(rows if equal is None else {"rows": rows, "files": len(list(scan.plan_files()))}, default=plain))
