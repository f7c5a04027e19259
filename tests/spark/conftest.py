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


@pytest.fixture(scope="module")
def jvm_spark(spark):
    """The shared session with the JVM reader serving ``format("kafkalog")`` (module scope).

    ``kafkalog.spark.register`` adds the jar to the running session (``ADD JAR``: the calling
    thread's context class loader, see ``kafkalog.spark.jvm``), and registers the Python source
    as ``kafkalog_python``. Teardown restores the thread's class loader, so modules that run
    later see the Python source under ``kafkalog`` again (the jar stays loaded, unused). Skips
    without a JDK.
    """
    import warnings

    import kafkalog.spark
    from kafkalog.spark.jvm import JvmUnavailableError, jvm_reader_active

    try:
        kafkalog.spark.jar_path()
    except JvmUnavailableError as e:
        pytest.skip(f"the JVM reader cannot be built here: {e.message}")
    thread = spark._jvm.java.lang.Thread.currentThread()
    original = thread.getContextClassLoader()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fallback warning here is a failure
        kafkalog.spark.register(spark)
    assert jvm_reader_active(spark)
    yield spark
    thread.setContextClassLoader(original)
    kafkalog.spark.register(spark, jvm=False)
    assert not jvm_reader_active(spark)
