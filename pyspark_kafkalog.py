"""Auto-registration shim: PySpark registers ``DefaultSource`` from installed ``pyspark_*`` modules.

Kept light at import time; the data source itself lives in ``kafkalog.spark``.
"""

from kafkalog.spark import KafkaLogDataSource as DefaultSource  # noqa: F401
