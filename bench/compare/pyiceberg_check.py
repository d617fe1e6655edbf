# PyIceberg's reading of a result table, for the comparison's check (verify.ts): row count and
# distinct ids from a scan of the id column, and the rows of the sampled ids. Run with the
# readers' venv (dev/services/readers.ts); aggregates are computed here, so a table of ten
# million rows never crosses a pipe.
#   python pyiceberg_check.py CATALOG_URI NAMESPACE TABLE '[sample ids]'  -> one JSON line
import json
import sys

import pyarrow.compute as pc
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.expressions import In

uri, namespace, name, sample = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
table = RestCatalog("rest", uri=uri).load_table((namespace, name))
ids = table.scan(selected_fields=("id",)).to_arrow().column("id")
rows = (
    table.scan(row_filter=In("id", sample), selected_fields=("id", "status", "amount", "created_at"))
    .to_arrow()
    .to_pylist()
)
print(
    json.dumps(
        {
            "rows": len(ids),
            "ids": pc.count_distinct(ids).as_py(),
            "sample": [{**r, "amount": str(r["amount"]), "created_at": str(r["created_at"])} for r in rows],
        },
        default=str,
    )
)
