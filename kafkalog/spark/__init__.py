"""PySpark Python Data Source for Kafka log directories (format name ``kafkalog``).

>>> from kafkalog.spark import KafkaLogDataSource
>>> KafkaLogDataSource.name()
'kafkalog'

After ``pip install`` the format is registered automatically (module ``pyspark_kafkalog``);
``register(spark, pushdown=True)`` registers it explicitly and turns filter pushdown on.
``register(spark)`` also switches batch reads to the JVM reader (:mod:`.jvm`, a Spark
DataSource V2 built from the shipped Java sources) when a JDK is present; ``jar_path()`` gives
its jar for ``spark.jars``.
Modules: :mod:`.options` (option parsing), :mod:`.layout` (directories, segments, indexes),
:mod:`.planning` (offset resolution, splits), :mod:`.pushdown` (filters), :mod:`.arrow`
(schema, RecordBatch building), :mod:`.read` (executor side), :mod:`.source` (batch reader),
:mod:`.stream` (micro-batch reader), :mod:`.writer` (Arrow writer).
"""

from __future__ import annotations

from .source import KafkaLogDataSource, register

__all__ = ["KafkaLogDataSource", "jar_path", "register"]


def jar_path() -> str:
    """Path of the JVM reader's jar, built at first use (see :func:`kafkalog.spark.jvm.jar_path`).

    >>> builder = SparkSession.builder.config("spark.jars", jar_path())  # doctest: +SKIP
    """
    from .jvm import jar_path as _jar_path

    return _jar_path()
