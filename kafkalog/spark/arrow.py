"""Spark's Kafka schema and the conversion of decoded columns to ``pyarrow.RecordBatch``.

PySpark 4.3 checks the first batch a reader yields against ``to_arrow_schema(schema,
timezone="UTC")`` with ``pa.Schema.equals``: same names, order, types and nullability. So every
batch here is built against exactly that schema (:func:`arrow_schema`), never inferred.

Columns are assembled from the decoder's contiguous buffers with ``from_buffers`` (no Python
object per row): binary columns reuse the decoder's data/offsets/validity arrays, the constant
``topic``/``partition`` columns are built from one value, timestamps are milliseconds x 1000 as
``timestamp[us, tz=UTC]`` whatever the session time zone.

>>> import pyarrow as pa
>>> arrow_schema(["offset", "topic"]).names
['offset', 'topic']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from kafkalog.errors import ConfigError

from .schema import KAFKA_COLUMNS, default_columns, projection_from_schema, spark_schema

__all__ = [
    "KAFKA_COLUMNS",
    "HEADERS_TYPE",
    "arrow_schema",
    "default_columns",
    "spark_schema",
    "projection_from_schema",
    "columns_to_batch",
    "empty_batch",
]

#: ``array<struct<key:string,value:binary>>`` as PySpark's ``to_arrow_type`` renders it.
HEADERS_TYPE = pa.list_(
    pa.field(
        "element",
        pa.struct([pa.field("key", pa.string()), pa.field("value", pa.binary())]),
    )
)

_ARROW_TYPES: dict[str, pa.DataType] = {
    "key": pa.binary(),
    "value": pa.binary(),
    "topic": pa.string(),
    "partition": pa.int32(),
    "offset": pa.int64(),
    "timestamp": pa.timestamp("us", tz="UTC"),
    "timestampType": pa.int32(),
    "headers": HEADERS_TYPE,
}


def arrow_schema(columns: Sequence[str]) -> pa.Schema:
    """The Arrow schema PySpark expects for these columns (all nullable, Spark's field names)."""
    return pa.schema([pa.field(c, _ARROW_TYPES[c], nullable=True) for c in columns])


def _validity(valid: np.ndarray | None, n: int) -> pa.Buffer | None:
    """Arrow validity bitmap from a bool array; ``None`` when nothing is null."""
    if valid is None:
        return None
    valid = np.asarray(valid, dtype=bool)[:n]
    if valid.all():
        return None
    return pa.py_buffer(np.packbits(valid, bitorder="little"))


def _offsets32(offsets: np.ndarray, what: str) -> np.ndarray:
    offsets = np.asarray(offsets)
    if offsets.dtype != np.int32:
        if offsets.size and int(offsets[-1]) >= 2**31:
            # Spark's binary is Arrow binary (int32 offsets): a single batch may not exceed 2 GiB
            raise ConfigError(
                f"{what}: more than 2 GiB in one Arrow batch; lower maxRecordsPerBatch"
            )
        offsets = offsets.astype(np.int32)
    return np.ascontiguousarray(offsets)


def _binary(data: np.ndarray, offsets: np.ndarray, valid: np.ndarray | None, n: int,
            typ: pa.DataType, what: str) -> pa.Array:
    offs = _offsets32(offsets, what)
    return pa.Array.from_buffers(
        typ, n,
        [_validity(valid, n), pa.py_buffer(offs), pa.py_buffer(np.ascontiguousarray(data))],
    )


def _constant_string(value: str, n: int) -> pa.Array:
    raw = value.encode("utf-8")
    offs = (np.arange(n + 1, dtype=np.int64) * len(raw))
    return pa.Array.from_buffers(
        pa.string(), n, [None, pa.py_buffer(_offsets32(offs, "topic")), pa.py_buffer(raw * n)]
    )


def _headers(cols: Any, n: int) -> pa.Array:
    hoff = np.asarray(cols.header_offsets)
    count = int(hoff[-1] - hoff[0]) if n else 0
    base = int(hoff[0]) if n else 0
    keys = _binary(cols.header_key_data, cols.header_key_offsets, None,
                   int(np.asarray(cols.header_key_offsets).size - 1), pa.string(), "header keys")
    values = _binary(cols.header_value_data, cols.header_value_offsets,
                     getattr(cols, "header_value_valid", None),
                     int(np.asarray(cols.header_value_offsets).size - 1), pa.binary(),
                     "header values")
    struct = pa.StructArray.from_arrays(
        [keys, values], fields=list(HEADERS_TYPE.value_type)
    )
    if base or len(struct) != count:
        struct = struct.slice(base, count)
    offs = _offsets32(hoff - base, "headers")
    no_headers = np.diff(offs) == 0  # Kafka source: null, not an empty array
    return pa.ListArray.from_arrays(
        pa.array(offs, pa.int32()), struct, type=HEADERS_TYPE,
        mask=pa.array(no_headers) if no_headers.any() else None,
    )


def columns_to_batch(cols: Any, topic: str, partition: int, schema: pa.Schema,
                     keep: np.ndarray | None = None) -> pa.RecordBatch:
    """Build one RecordBatch with exactly ``schema`` from a ``RecordColumns``.

    Parameters
    ----------
    cols:
        A ``kafkalog.records.columnar.RecordColumns`` (only the columns in ``schema`` are read).
    topic, partition:
        Constant values for the ``topic`` and ``partition`` columns.
    schema:
        From :func:`arrow_schema`; decides which columns are built and their order.
    keep:
        Optional bool mask of rows to keep (exact offset filters such as ``offset IN (...)``).
    """
    n = len(cols.offsets)
    arrays = []
    for f in schema:
        name = f.name
        if name == "key":
            arrays.append(_binary(cols.key_data, cols.key_offsets, cols.key_valid, n,
                                  pa.binary(), "key"))
        elif name == "value":
            arrays.append(_binary(cols.value_data, cols.value_offsets, cols.value_valid, n,
                                  pa.binary(), "value"))
        elif name == "topic":
            arrays.append(_constant_string(topic, n))
        elif name == "partition":
            arrays.append(pa.Array.from_buffers(
                pa.int32(), n, [None, pa.py_buffer(np.full(n, partition, np.int32))]))
        elif name == "offset":
            arrays.append(pa.Array.from_buffers(
                pa.int64(), n,
                [None, pa.py_buffer(np.ascontiguousarray(cols.offsets, dtype=np.int64))]))
        elif name == "timestamp":
            us = np.asarray(cols.timestamps, dtype=np.int64) * 1000
            arrays.append(pa.Array.from_buffers(f.type, n, [None, pa.py_buffer(us)]))
        elif name == "timestampType":
            arrays.append(pa.Array.from_buffers(
                pa.int32(), n,
                [None, pa.py_buffer(np.ascontiguousarray(cols.timestamp_types, dtype=np.int32))]))
        elif name == "headers":
            arrays.append(_headers(cols, n))
        else:  # pragma: no cover - schema built by arrow_schema
            raise ConfigError(f"unknown column {name!r}")
    batch = pa.RecordBatch.from_arrays(arrays, schema=schema)
    if keep is not None and not bool(np.all(keep)):
        batch = batch.filter(pa.array(np.asarray(keep, dtype=bool)))
    return batch


def empty_batch(schema: pa.Schema) -> pa.RecordBatch:
    """A zero-row batch with ``schema``."""
    return pa.RecordBatch.from_arrays([pa.array([], f.type) for f in schema], schema=schema)
