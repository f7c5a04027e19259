"""PySpark Python Data Source for Kafka log directories (format name ``kafkalog``).

>>> from kafkalog.spark import KafkaLogDataSource
>>> KafkaLogDataSource.name()
'kafkalog'

After ``pip install`` the format is registered automatically (module ``pyspark_kafkalog``);
``register(spark, pushdown=True)`` registers it explicitly and turns filter pushdown on.
Modules: :mod:`.options` (option parsing), :mod:`.layout` (directories, segments, indexes),
:mod:`.planning` (offset resolution, splits), :mod:`.pushdown` (filters), :mod:`.arrow`
(schema, RecordBatch building), :mod:`.read` (executor side), :mod:`.source` (batch reader),
:mod:`.stream` (micro-batch reader), :mod:`.writer` (Arrow writer).
"""

from __future__ import annotations

from .source import KafkaLogDataSource, register

__all__ = ["KafkaLogDataSource", "register"]
