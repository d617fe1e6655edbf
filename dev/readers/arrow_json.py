"""Arrow tables -> JSON rows, normalised so that the three engines' answers compare equal.

Every engine hands over an Arrow table; the Arrow types are what the value's meaning is read
from. The rules (mirrored in dev/readers.ts, which decodes the tags):

  int8/16/32            JSON number
  int64 (Iceberg long)  {"$int64": "<decimal digits>"}            -> bigint in TS
  float/double          JSON number; NaN and +-Infinity as {"$float": "NaN" | "Infinity" | "-Infinity"}
  decimal               string with the type's scale, never an exponent: "12.30"
  string, uuid          string (uuid in canonical lowercase form)
  binary, fixed         {"$bytes": "<base64>"}                     -> Buffer in TS
  date                  "YYYY-MM-DD"
  time                  "HH:MM:SS.ffffff"
  timestamp             "YYYY-MM-DDTHH:MM:SS.ffffff" (9 fraction digits for nanoseconds);
                        with a time zone (Iceberg timestamptz) in UTC with a trailing "Z"
  struct                object; list: array
  map                   array of [key, value] pairs sorted by key, as engines differ in order
"""

import base64
import datetime
import json
import math

import pyarrow as pa
import pyarrow.compute as pc

_EPOCH = datetime.datetime(1970, 1, 1)
_UNIT = {"s": (1, 0), "ms": (1_000, 3), "us": (1_000_000, 6), "ns": (1_000_000_000, 9)}


def rows_of(table: pa.Table, order_by: list[str] | None) -> list[dict]:
    """All rows of the table, JSON-ready. order_by None sorts by every top-level primitive
    column, so that engines reading files in different orders still agree."""
    if order_by is None:
        order_by = [f.name for f in table.schema if _sortable(f.type)]
    if order_by:
        table = _sorted(table, order_by)
    columns = []
    for field in table.schema:
        # Temporal values travel as integers: Python's datetime has no nanoseconds.
        wire = _wire_type(field.type)
        column = table.column(field.name)
        values = (column.cast(wire) if wire != field.type else column).to_pylist()
        columns.append((field.name, _converter(field.type), values))
    return [{name: convert(values[i]) for name, convert, values in columns} for i in range(table.num_rows)]


def _sortable(t: pa.DataType) -> bool:
    return not (pa.types.is_nested(t) or pa.types.is_null(t))


def _sorted(table: pa.Table, order_by: list[str]) -> pa.Table:
    missing = [name for name in order_by if name not in table.column_names]
    if missing:
        raise KeyError(f"orderBy names no column of the result: {missing}; columns are {table.column_names}")
    # Arrow sorts no extension type (PyIceberg's uuid); its storage bytes sort like the
    # canonical strings DuckDB and Spark return.
    keys = pa.table({name: _storage(table.column(name)) for name in order_by})
    indices = pc.sort_indices(keys, sort_keys=[(name, "ascending") for name in order_by], null_placement="at_end")
    return table.take(indices)


def _storage(column: pa.ChunkedArray) -> pa.ChunkedArray:
    if isinstance(column.type, pa.BaseExtensionType):
        return pa.chunked_array([chunk.storage for chunk in column.chunks], type=column.type.storage_type)
    return column


def _wire_type(t: pa.DataType) -> pa.DataType:
    if pa.types.is_timestamp(t) or pa.types.is_time64(t):
        return pa.int64()
    if pa.types.is_time32(t):
        return pa.int32()
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(_wire_type(f.type)) for f in t])
    if pa.types.is_map(t):
        return pa.map_(t.key_field.with_type(_wire_type(t.key_type)), t.item_field.with_type(_wire_type(t.item_type)))
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        value_field = t.value_field.with_type(_wire_type(t.value_type))
        if pa.types.is_fixed_size_list(t):
            return pa.list_(value_field, t.list_size)
        return pa.large_list(value_field) if pa.types.is_large_list(t) else pa.list_(value_field)
    return t


def _converter(t: pa.DataType):
    convert = _converter_of_valid(t)
    return lambda v: None if v is None else convert(v)


def _converter_of_valid(t: pa.DataType):
    if isinstance(t, pa.BaseExtensionType):
        if t.extension_name == "arrow.uuid":
            return str
        return _converter_of_valid(t.storage_type)
    if pa.types.is_boolean(t) or pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return lambda v: v
    if pa.types.is_int64(t) or pa.types.is_uint64(t):
        return lambda v: {"$int64": str(v)}
    if pa.types.is_integer(t):
        return lambda v: v
    if pa.types.is_floating(t):
        return _float
    if pa.types.is_decimal(t):
        return lambda v: format(v, "f")
    if (
        pa.types.is_binary(t)
        or pa.types.is_large_binary(t)
        or pa.types.is_binary_view(t)
        or pa.types.is_fixed_size_binary(t)
    ):
        return lambda v: {"$bytes": base64.b64encode(v).decode("ascii")}
    if pa.types.is_date(t):
        return lambda v: v.isoformat()
    if pa.types.is_timestamp(t):
        return _timestamp(t.unit, t.tz is not None)
    if pa.types.is_time(t):
        return _time(t.unit)
    if pa.types.is_struct(t):
        fields = [(f.name, _converter(f.type)) for f in t]
        return lambda v: {name: convert(v[name]) for name, convert in fields}
    if pa.types.is_map(t):
        key, item = _converter(t.key_type), _converter(t.item_type)
        return lambda v: sorted(([key(k), item(i)] for k, i in v), key=lambda pair: json.dumps(pair[0]))
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        element = _converter(t.value_type)
        return lambda v: [element(e) for e in v]
    raise TypeError(f"no JSON normalisation for Arrow type {t}; add one in {__file__}")


def _float(v: float):
    if math.isfinite(v):
        return v
    return {"$float": "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")}


def _timestamp(unit: str, utc: bool):
    per_second, digits = _UNIT[unit]

    def convert(v: int) -> str:
        seconds, fraction = divmod(v, per_second)
        text = (_EPOCH + datetime.timedelta(seconds=seconds)).isoformat()
        if digits:
            text += f".{fraction:0{digits}d}"
        return f"{text}Z" if utc else text

    return convert


def _time(unit: str):
    per_second, digits = _UNIT[unit]

    def convert(v: int) -> str:
        seconds, fraction = divmod(v, per_second)
        text = (_EPOCH + datetime.timedelta(seconds=seconds)).time().isoformat()
        return f"{text}.{fraction:0{digits}d}" if digits else text

    return convert
