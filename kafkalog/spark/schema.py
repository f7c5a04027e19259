"""Spark's Kafka source schema and the user-schema projection (no pyarrow: imported at lookup).

>>> default_columns(False)[-1]
'timestampType'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kafkalog.errors import ConfigError

__all__ = ["KAFKA_COLUMNS", "default_columns", "spark_schema", "projection_from_schema"]

#: Spark's Kafka source columns in order; ``headers`` only with ``includeHeaders=true``.
KAFKA_COLUMNS = (
    "key", "value", "topic", "partition", "offset", "timestamp", "timestampType", "headers",
)


def default_columns(include_headers: bool) -> tuple[str, ...]:
    """The column list of ``schema()``: the 7 Kafka columns, plus ``headers`` if asked."""
    return KAFKA_COLUMNS if include_headers else KAFKA_COLUMNS[:-1]


def spark_schema(columns: Sequence[str]) -> Any:
    """The ``StructType`` for these columns (imports PySpark)."""
    from pyspark.sql.types import (
        ArrayType,
        BinaryType,
        IntegerType,
        LongType,
        StringType,
        StructField,
        StructType,
        TimestampType,
    )

    types = {
        "key": BinaryType(),
        "value": BinaryType(),
        "topic": StringType(),
        "partition": IntegerType(),
        "offset": LongType(),
        "timestamp": TimestampType(),
        "timestampType": IntegerType(),
        "headers": ArrayType(
            StructType([StructField("key", StringType()), StructField("value", BinaryType())])
        ),
    }
    return StructType([StructField(c, types[c], True) for c in columns])


def projection_from_schema(schema: Any) -> tuple[str, ...]:
    """Check a user ``.schema(...)`` and return its column names (the projection to emit).

    Every field must be one of the Kafka columns with Spark's Kafka type; order is free. This is
    the only column pruning PySpark 4.3 offers (``reader()`` receives the user's schema).
    """
    full = spark_schema(KAFKA_COLUMNS)
    want = {f.name: f.dataType for f in full.fields}
    names = []
    for f in schema.fields:
        if f.name not in want:
            raise ConfigError(
                f"schema: unknown column {f.name!r} "
                f"(expected a subset of {', '.join(KAFKA_COLUMNS)})"
            )
        # headers' inner nullability is irrelevant to Spark's checks; compare the simple form
        if f.dataType.simpleString() != want[f.name].simpleString():
            raise ConfigError(
                f"schema: column {f.name!r} must be {want[f.name].simpleString()}, "
                f"found {f.dataType.simpleString()}"
            )
        names.append(f.name)
    if len(set(names)) != len(names):
        raise ConfigError(f"schema: duplicate column names in {names}")
    return tuple(names)
