"""One local[2] SparkSession for every Spark test (about 10 s to start; shared by the session).

PySpark starts Python workers with ``PYSPARK_PYTHON``, or whatever ``python3`` is on PATH, which
may lack pyarrow/kafkalog: set it to this interpreter before the session exists.
"""

from __future__ import annotations

import os
import sys

import pytest


@pytest.fixture(scope="session")
def spark():
    pytest.importorskip("pyspark")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("kafkalog-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.python.worker.reuse", "true")
        # a non-UTC session zone: timestamps must still be the records' UTC instants
        .config("spark.sql.session.timeZone", "America/Los_Angeles")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
