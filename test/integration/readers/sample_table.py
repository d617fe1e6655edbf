"""Writes the sample table of readers.test.ts with PyIceberg, a writer independent of floe.

Usage: python sample_table.py '{"catalog": {...}, "namespace": "ns", "table": "t"}' where the
catalog is a CatalogRef of dev/readers.ts. Replaces the table if it exists and
prints {"metadataLocation": ...}. The table is format version 2: PyIceberg 0.12 creates v3
tables but cannot append to them ("Cannot write manifest for table version: 3").
"""

import datetime
import decimal
import json
import sys
import uuid

import pyarrow as pa
from pyiceberg.catalog import load_catalog
from pyiceberg.exceptions import NamespaceAlreadyExistsError, NoSuchTableError
from pyiceberg.schema import Schema
from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
    UUIDType,
)

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "small", IntegerType()),
    NestedField(3, "name", StringType()),
    NestedField(4, "price", DecimalType(10, 2)),
    NestedField(5, "ratio", DoubleType()),
    NestedField(6, "day", DateType()),
    NestedField(7, "at", TimestamptzType()),
    NestedField(8, "local_at", TimestampType()),
    NestedField(9, "flag", BooleanType()),
    NestedField(10, "payload", BinaryType()),
    NestedField(11, "uid", UUIDType()),
    NestedField(
        12, "address", StructType(NestedField(13, "city", StringType()), NestedField(14, "zip", IntegerType()))
    ),
    NestedField(15, "tags", ListType(16, StringType(), element_required=False)),
    NestedField(17, "attrs", MapType(18, StringType(), 19, LongType(), value_required=False)),
)

UTC = datetime.timezone.utc
ROWS = [
    {
        "id": 1,
        "small": 7,
        "name": "alpha",
        "price": decimal.Decimal("9.90"),
        "ratio": 0.5,
        "day": datetime.date(2024, 1, 31),
        "at": datetime.datetime(2024, 1, 31, 13, 45, 0, 123456, tzinfo=UTC),
        "local_at": datetime.datetime(2024, 1, 31, 13, 45),
        "flag": True,
        "payload": b"\x00\xff",
        "uid": uuid.UUID("123e4567-e89b-12d3-a456-426614174000"),
        "address": {"city": "Oslo", "zip": 150},
        "tags": ["a", None, "b"],
        "attrs": [("x", 1), ("w", 2)],
    },
    {
        "id": 2**53 + 1,
        "small": -1,
        "name": "beta",
        "price": decimal.Decimal("-0.05"),
        "ratio": float("nan"),
        "day": datetime.date(1970, 1, 1),
        "at": datetime.datetime(1970, 1, 1, tzinfo=UTC),
        "local_at": datetime.datetime(2000, 2, 29, 23, 59, 59, 999999),
        "flag": False,
        "payload": b"",
        "uid": None,
        "address": {"city": None, "zip": None},
        "tags": [],
        "attrs": [],
    },
    {"id": 3, **{field.name: None for field in SCHEMA.fields if field.name != "id"}},
]


def main() -> None:
    ref = json.loads(sys.argv[1])
    spec = ref["catalog"]
    properties = {"type": spec["type"], "uri": spec["uri"]}
    if spec["type"] == "sql":
        properties["uri"] = f"sqlite:///{spec['uri']}"
    if spec.get("warehouse"):
        properties["warehouse"] = spec["warehouse"]
    catalog = load_catalog(spec["name"], **properties)
    try:
        catalog.create_namespace(ref["namespace"])
    except NamespaceAlreadyExistsError:
        pass
    identifier = (ref["namespace"], ref["table"])
    try:
        catalog.purge_table(identifier)
    except NoSuchTableError:
        pass
    table = catalog.create_table(identifier, SCHEMA, properties={"format-version": "2"})
    # create_table assigns fresh field ids, so the Arrow schema comes from the created table.
    table.append(pa.Table.from_pylist(ROWS, schema=table.schema().as_arrow()))
    print(json.dumps({"metadataLocation": catalog.load_table(identifier).metadata_location}))


if __name__ == "__main__":
    main()
