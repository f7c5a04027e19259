"""The ``kafkalog`` PySpark Python Data Source: batch reader (with and without filter pushdown).

Where things run (PySpark 4.3): ``schema()`` in one planner worker, ``reader()`` +
``pushFilters()`` + ``partitions()`` in another, ``read()`` in executor workers. Nothing is shared
between them except what pickles, so the reader keeps only options, column names and bounds,
and each InputPartition only paths, byte ranges and offsets.

Pushdown switch. Spark's ``spark.sql.python.filterPushdown.enabled`` is off by default, and a
reader class that overrides ``pushFilters`` then fails every query. So the default reader has
no ``pushFilters``; :class:`KafkaLogPushdownReader` (a subclass adding it) is returned only when
pushdown is on:

* ``pushFilters=auto`` (default): chosen when ``reader()`` is being called by PySpark's
  pushdown planning worker (``pyspark/sql/worker/data_source_pushdown_filters.py``), which Spark
  uses only while the conf is on;
* ``pushFilters=true`` / ``false``: forced (true with the conf off fails, as Spark says);
* :func:`kafkalog.spark.register` with ``pushdown=True`` sets the conf and registers a variant
  whose reader always pushes down.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from ..errors import ConfigError
from .options import ReadOptions
from .pushdown import Bounds, analyze_filters
from .schema import default_columns, projection_from_schema, spark_schema

__all__ = [
    "KafkaLogDataSource",
    "KafkaLogPythonDataSource",
    "KafkaLogReader",
    "KafkaLogPushdownReader",
    "KafkaLogInputPartition",
    "register",
]

_PUSHDOWN_WORKER = "data_source_pushdown_filters.py"


class KafkaLogInputPartition(InputPartition):
    """One Spark task: a :class:`~kafkalog.spark.planning.ReadTask` (paths, byte ranges)."""


def _called_by_pushdown_worker() -> bool:
    """Whether PySpark's pushdown planning worker is calling ``reader()`` (conf is on)."""
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code.co_filename.endswith(_PUSHDOWN_WORKER):
            return True
        if "enable_pushdown" in frame.f_locals:  # plan_data_source_read: the conf's value
            return bool(frame.f_locals["enable_pushdown"])
        frame = frame.f_back
    return False


class KafkaLogReader(DataSourceReader):
    """Batch reader without ``pushFilters`` (works whatever the pushdown conf says)."""

    def __init__(self, options: ReadOptions, columns: Sequence[str]) -> None:
        self.options = options
        self.columns = tuple(columns)
        self.bounds: Bounds | None = None

    def partitions(self) -> list[InputPartition]:
        from .planning import plan_read

        plan = plan_read(self.options, self.bounds)
        return [KafkaLogInputPartition(task) for task in plan.tasks]

    def _settings(self) -> Any:
        from .read import ReadSettings

        b = self.bounds or Bounds()
        return ReadSettings(
            columns=self.columns,
            fail_on_data_loss=self.options.fail_on_data_loss,
            max_records_per_batch=self.options.max_records_per_batch,
            timestamp_lo_ms=b.timestamp_lo_ms,
            offset_in=tuple(sorted(b.offset_in)) if b.offset_in is not None else None,
            offsets_excluded=tuple(sorted(b.offsets_excluded)),
            metrics_dir=self.options.metrics_dir,
            check_crcs=self.options.check_crcs,
        )

    def read(self, partition: InputPartition) -> Iterator[Any]:
        from .arrow import arrow_schema
        from .read import read_task_value

        yield from read_task_value(getattr(partition, "value", None), self._settings(),
                                   arrow_schema(self.columns))


class KafkaLogPushdownReader(KafkaLogReader):
    """Batch reader that claims exact topic/partition/offset filters (see :mod:`.pushdown`)."""

    def pushFilters(self, filters: list[Any]) -> Iterator[Any]:  # noqa: N802 (PySpark's name)
        self.bounds, rest = analyze_filters(filters)
        yield from rest


class KafkaLogDataSource(DataSource):
    """Read, write and stream Kafka log directories as Spark's Kafka source would.

    Name ``kafkalog``. Registered automatically when the project is installed (PySpark imports
    the top-level module ``pyspark_kafkalog`` and registers its ``DefaultSource``), or with
    :func:`kafkalog.spark.register`.

    Reading: ``load(path)`` where path is a partition directory (``orders-0``), a ``log.dirs``
    root, or a list of them. Schema is Spark's Kafka source schema (``key, value, topic,
    partition, offset, timestamp, timestampType`` and ``headers`` with ``includeHeaders=true``).
    Options: see :mod:`kafkalog.spark.options`. A ``.schema(...)`` naming a subset of the
    columns is used as the projection (only those columns are built).

    Partitioning: one task per ``maxBytesPerPartition`` bytes of ``.log`` (default 128 MiB; or
    fewer bytes to reach ``minPartitions``); large segments are split at ``.index`` entries,
    small segments are grouped.

    Writing: ``df.write.format("kafkalog").mode("append").save(path)``, see
    :class:`kafkalog.spark.writer.KafkaLogWriter`. Streaming: ``spark.readStream``, see
    :class:`kafkalog.spark.stream.KafkaLogStreamReader`.

    Examples
    --------
    >>> df = spark.read.format("kafkalog").load("/var/lib/kafka/data")  # doctest: +SKIP
    >>> (df.where("timestamp >= '2026-01-01'")                           # doctest: +SKIP
    ...    .groupBy("topic").count().write.parquet("/tmp/counts"))
    """

    @classmethod
    def name(cls) -> str:
        return "kafkalog"

    def schema(self) -> Any:
        # fail early on bad options; a stream's own ones (startingOffsets latest or -1, the
        # stream's default) are checked as a stream's here, since schema() does not say
        # which it serves: reader() and streamReader() parse again with their own rules
        try:
            opts = ReadOptions.parse(self.options)
        except ConfigError as batch_error:
            try:
                opts = ReadOptions.parse(self.options, streaming=True)
            except ConfigError:
                raise batch_error from None
        return spark_schema(default_columns(opts.include_headers))

    def _want_pushdown(self, opts: ReadOptions) -> bool:
        if opts.push_filters != "auto":
            return opts.push_filters == "true"
        return _called_by_pushdown_worker()

    def reader(self, schema: Any) -> DataSourceReader:
        opts = ReadOptions.parse(self.options)
        columns = projection_from_schema(schema)
        if self._want_pushdown(opts):
            return KafkaLogPushdownReader(opts, columns)
        return KafkaLogReader(opts, columns)

    def streamReader(self, schema: Any) -> Any:  # noqa: N802 (PySpark's name)
        from .stream import KafkaLogStreamReader

        opts = ReadOptions.parse(self.options, streaming=True)
        return KafkaLogStreamReader(opts, projection_from_schema(schema))

    def writer(self, schema: Any, overwrite: bool) -> Any:
        from .writer import KafkaLogWriter

        return KafkaLogWriter(dict(self.options), schema, overwrite)


class _KafkaLogPushdownDataSource(KafkaLogDataSource):
    """Variant registered by ``register(spark, pushdown=True)``: always the pushdown reader."""

    def _want_pushdown(self, opts: ReadOptions) -> bool:
        return opts.push_filters != "false"


class KafkaLogPythonDataSource(KafkaLogDataSource):
    """The Python source under the name ``kafkalog_python`` (registered by :func:`register`):
    reaches the Python reader even when ``format("kafkalog")`` is served by the JVM reader."""

    @classmethod
    def name(cls) -> str:
        return "kafkalog_python"


class _KafkaLogPythonPushdownDataSource(_KafkaLogPushdownDataSource):
    """``kafkalog_python`` registered by ``register(spark, pushdown=True)``."""

    @classmethod
    def name(cls) -> str:
        return "kafkalog_python"


def register(spark: Any, pushdown: bool | None = None, *, jvm: bool = True
             ) -> type[KafkaLogDataSource]:
    """Register the ``kafkalog`` format on a SparkSession, with the JVM reader when it can be had.

    Parameters
    ----------
    spark:
        The SparkSession.
    pushdown:
        ``True`` turns ``spark.sql.python.filterPushdown.enabled`` on and registers a source
        whose reader claims topic/partition/offset filters; ``False`` turns the conf off;
        ``None`` leaves the conf alone (the source then follows it automatically). Applies to the
        Python reader; the JVM reader always pushes filters down.

        PySpark (4.1 to 4.3 at least) keeps the scan it planned with pushed filters for later
        queries of the same DataFrame: after ``df.where("offset < 5").count()``,
        ``df.count()`` plans nothing and reuses that scan, so it counts the filtered rows
        (reproduced with a 20-line source that claims one filter; the JVM reader is not
        affected). With the Python reader and pushdown on, ``load()`` a DataFrame per query.
    jvm:
        ``True`` (default): switch ``format("kafkalog")`` to the JVM reader
        (:mod:`kafkalog.spark.jvm`): the jar is built at first use and added to the running
        session with ``ADD JAR`` unless ``spark.jars`` already holds it. Without a JDK, or when
        the session cannot load it, a :class:`~kafkalog.spark.jvm.JvmReaderWarning` says why and
        the Python source serves ``format("kafkalog")``. ``False``: register the Python source
        only (a jar given in ``spark.jars`` still serves batch reads).

    The Python source is always registered too: as ``kafkalog`` (writes and streams, and batch
    reads without the JVM reader) and as ``kafkalog_python`` (the Python reader by name).

    Returns
    -------
    The registered Python DataSource class.

    Examples
    --------
    >>> import kafkalog.spark
    >>> kafkalog.spark.register(spark, pushdown=True)  # doctest: +SKIP
    >>> spark.read.format("kafkalog").load(path).where("offset >= 100").count()  # doctest: +SKIP
    """
    cls: type[KafkaLogDataSource] = KafkaLogDataSource
    alias: type[KafkaLogDataSource] = KafkaLogPythonDataSource
    if pushdown is not None:
        spark.conf.set("spark.sql.python.filterPushdown.enabled", "true" if pushdown else "false")
    if pushdown:
        cls, alias = _KafkaLogPushdownDataSource, _KafkaLogPythonPushdownDataSource
    spark.dataSource.register(cls)
    spark.dataSource.register(alias)
    if jvm:
        from .jvm import activate

        activate(spark)
    return cls
