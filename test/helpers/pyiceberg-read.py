# Reads an Iceberg table of floe's SQL catalog through PyIceberg (its PyArrow FileIO, or the
# FileIO named by py-io-impl) and prints its live rows as JSON: argv[1] is a JSON object
# {"catalog": {properties}, "table": "ns.table", "columns": [...]}.
import decimal
import json
import sys

from pyiceberg.catalog import load_catalog

request = json.loads(sys.argv[1])
catalog = load_catalog("floe", **request["catalog"])
table = catalog.load_table(request["table"])
rows = table.scan(selected_fields=tuple(request["columns"])).to_arrow().to_pylist()


def plain(value):
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, bytes):
        return value.hex()
    return str(value)


print(json.dumps(rows, default=plain))
