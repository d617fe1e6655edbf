# PyIceberg's scan planning of a table in a REST catalog, with and without a row filter: prints
# {"all": files of the whole table, "filtered": files the filter keeps, "rows": rows the filtered
# scan returns}. argv[1] is {"uri", "warehouse", "table": "ns.table", "filter": "<PyIceberg row filter>"}.
import json
import sys

from pyiceberg.catalog import load_catalog

request = json.loads(sys.argv[1])
catalog = load_catalog("rest", type="rest", uri=request["uri"], warehouse=request["warehouse"])
table = catalog.load_table(request["table"])
everything = list(table.scan().plan_files())
filtered = table.scan(row_filter=request["filter"])
print(json.dumps({"all": len(everything), "filtered": len(list(filtered.plan_files())), "rows": filtered.to_arrow().num_rows}))
