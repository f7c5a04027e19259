"""The ``kafkalog`` data source on a real local[2] Spark session (one session for all tests).

Covers: auto-registration (no ``register`` call), ``register``, schema and every column against
what the engine wrote, UTC timestamps under a non-UTC session zone, splits proven by task count,
pushdown proven by batches decoded (per-task statistics in ``metricsDir``) with the pushdown
conf off and on, projection through ``.schema``, real Kafka fixtures, the writer, and streaming
with ``trigger(availableNow=True)`` and a restart from the checkpoint.
"""

from __future__ import annotations

import json
import os

import pyarrow as pa
import pytest

from kafkalog.spark.options import ReadOptions
from kafkalog.spark.planning import plan_read

from ._data import PartitionWriter, simple_partition

pytestmark = pytest.mark.spark

TS0 = 1_700_000_000_000
PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"


@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    root = tmp_path_factory.mktemp("logdir")
    exp = {
        ("orders", 0): simple_partition(root, "orders", 0, 3000, segment_bytes=100_000,
                                        headers_every=4),
        ("orders", 1): simple_partition(root, "orders", 1, 200, compression="lz4"),
        ("pay-ments", 0): simple_partition(root, "pay-ments", 0, 50, compression="zstd"),
    }
    return root, exp


def _stats(mdir) -> list[dict]:
    return [json.loads(open(os.path.join(mdir, f)).read()) for f in os.listdir(mdir)]


KAFKA_SELECT = ["key", "value", "topic", "partition", "offset", "unix_millis(timestamp) AS ms",
                "timestampType", "headers"]


def _rows(df) -> list[tuple]:
    out = []
    for r in df.selectExpr(*KAFKA_SELECT).collect():
        h = None if r.headers is None else [(x.key, x.value) for x in r.headers]
        out.append((r.key, r.value, r.topic, r.partition, r.offset, r.ms, r.timestampType, h))
    return sorted(out, key=lambda x: (x[2], x[3], x[4]))


def test_auto_registered_read_equals_engine(spark, logdir):
    root, exp = logdir
    # no register() call: PySpark found pyspark_kafkalog.DefaultSource by itself
    df = spark.read.format("kafkalog").option("includeHeaders", "true").load(str(root))
    assert df.schema.simpleString() == (
        "struct<key:binary,value:binary,topic:string,partition:int,offset:bigint,"
        "timestamp:timestamp,timestampType:int,headers:array<struct<key:string,value:binary>>>")
    want = sorted((r for k in exp for r in exp[k].rows()), key=lambda x: (x[2], x[3], x[4]))
    assert _rows(df) == want  # every column; timestamps as UTC epoch ms (session zone is LA)
    plain = spark.read.format("kafkalog").load(str(root))
    assert "headers" not in plain.columns and plain.count() == 3250


def test_register_splits_and_task_count(spark, logdir):
    import kafkalog.spark

    root, exp = logdir
    kafkalog.spark.register(spark, jvm=False)  # this module tests the Python source
    opts = {"path": str(root / "orders-0"), "maxBytesPerPartition": "40000"}
    expected_tasks = len(plan_read(ReadOptions.parse(opts)).tasks)
    assert expected_tasks >= 5
    df = spark.read.format("kafkalog").options(**opts).load()
    assert df.rdd.getNumPartitions() == expected_tasks
    # rows per Spark task (partition id), counted on the JVM side
    per_task = {r.pid: r.n for r in df.selectExpr("spark_partition_id() AS pid")
                .groupBy("pid").count().withColumnRenamed("count", "n").collect()}
    assert sorted(per_task) == list(range(expected_tasks)) and sum(per_task.values()) == 3000
    df = spark.read.format("kafkalog").option("minPartitions", "4").load(str(root))
    assert df.rdd.getNumPartitions() >= 4
    assert df.selectExpr("sum(offset)").first()[0] == sum(range(3000)) + sum(range(200)) + sum(
        range(50))


def test_pushdown_off_and_on(spark, logdir, tmp_path):
    root, _ = logdir
    query = "topic = 'orders' AND partition = 0 AND offset >= 2990 AND offset < 2995"
    results = {}
    for mode in ("off", "on", "register"):
        mdir = str(tmp_path / mode)
        if mode == "off":
            spark.conf.set(PUSHDOWN_CONF, "false")
        elif mode == "on":
            spark.conf.set(PUSHDOWN_CONF, "true")
        else:
            import kafkalog.spark

            kafkalog.spark.register(spark, pushdown=True, jvm=False)
        try:
            df = spark.read.format("kafkalog").option("metricsDir", mdir).load(str(root))
            got = sorted(r.offset for r in df.where(query).select("offset").collect())
        finally:
            spark.conf.set(PUSHDOWN_CONF, "false")
            kafkalog_register_default(spark)
        assert got == [2990, 2991, 2992, 2993, 2994]
        results[mode] = sum(s["batches_decoded"] for s in _stats(mdir))
    assert results["off"] >= 300  # every batch of every partition
    assert results["on"] <= 2 and results["register"] <= 2
    # a timestamp filter prunes but is handed back to Spark (CreateTime is not monotonic)
    spark.conf.set(PUSHDOWN_CONF, "true")
    try:
        mdir = str(tmp_path / "ts")
        df = spark.read.format("kafkalog").option("metricsDir", mdir).load(str(root / "orders-0"))
        n = df.where(f"timestamp >= timestamp_millis({TS0 + 2900_000})").count()
    finally:
        spark.conf.set(PUSHDOWN_CONF, "false")
    assert n == 100
    assert sum(s["batches_decoded"] for s in _stats(mdir)) <= 12


def kafkalog_register_default(spark) -> None:
    import kafkalog.spark

    kafkalog.spark.register(spark, jvm=False)  # this module tests the Python source


def test_schema_projection(spark, logdir):
    root, exp = logdir
    df = (spark.read.format("kafkalog").schema("offset long, value binary, partition int")
          .load(str(root / "orders-1")))
    rows = df.collect()
    assert df.columns == ["offset", "value", "partition"]
    assert [r.offset for r in rows] == exp[("orders", 1)].offsets
    assert [r.value for r in rows] == exp[("orders", 1)].values
    # a list of paths (arrives as the ``paths`` option)
    both = spark.read.format("kafkalog").load([str(root / "orders-1"), str(root / "pay-ments-0")])
    assert both.count() == 250


def test_real_kafka_fixture_root(spark, shared_fixtures):
    from kafkalog.records.columnar import decode_table

    root = shared_fixtures / "kafka-real" / "LDI-POC"
    df = spark.read.format("kafkalog").option("includeInternal", "true").load(str(root))
    got = df.groupBy("topic").agg({"offset": "sum", "*": "count"}).collect()
    got = {r.topic: (r["count(1)"], r["sum(offset)"]) for r in got}
    want = {}
    for d in sorted(root.iterdir()):
        if d.is_dir() and list(d.glob("*.log")):
            t = pa.concat_tables([decode_table(str(p)) for p in sorted(d.glob("*.log"))])
            topic = d.name.rpartition("-")[0]
            offs = t.column("offset").to_pylist()
            if offs:
                want[topic] = (len(offs), sum(offs))
    assert got == want
    # without includeInternal only the user topic is read
    topics = {r.topic for r in spark.read.format("kafkalog").load(str(root))
              .select("topic").distinct().collect()}
    assert topics == {"TestTopicPatient"}


def test_write_then_read_back(spark, logdir, tmp_path):
    root, exp = logdir
    src = spark.read.format("kafkalog").option("includeHeaders", "true").load(str(root))
    out = tmp_path / "copy"
    (src.repartition("topic", "partition")
     .write.format("kafkalog").mode("append").option("segment.bytes", "60000")
     .save(str(out)))
    assert not (out / "_staging").exists()
    back = spark.read.format("kafkalog").option("includeHeaders", "true").load(str(out))
    assert _rows(back) == _rows(src)
    assert len(list((out / "orders-0").glob("*.log"))) > 2  # segment.bytes honoured
    _verified(out)
    # append again: offsets continue after the log end offset
    (src.where("topic = 'pay-ments'").coalesce(1)
     .write.format("kafkalog").mode("append").option("compression", "zstd").save(str(out)))
    offs = [r.offset for r in spark.read.format("kafkalog").load(str(out / "pay-ments-0"))
            .select("offset").collect()]
    assert sorted(offs) == list(range(100))
    _verified(out)
    # two tasks writing the same topic-partition: refused, nothing published
    bad = tmp_path / "bad"
    with pytest.raises(Exception, match="written by Spark tasks"):
        (src.where("topic = 'orders' AND partition = 1").repartition(2)
         .write.format("kafkalog").mode("append").save(str(bad)))
    assert not any(p.name.startswith("orders") for p in bad.iterdir()) if bad.exists() else True
    # overwrite replaces the dataset
    (src.where("topic = 'orders' AND partition = 1").coalesce(1)
     .write.format("kafkalog").mode("overwrite").save(str(out)))
    assert sorted(p.name for p in out.iterdir()) == ["orders-1"]
    _reopens_without_recovery(out / "orders-1", 200)


def test_writer_refuses_topics_that_would_leave_the_root(spark, tmp_path):
    """Issue 16: a row's topic becomes a path only through Kafka's rule, inside the root."""
    root, outside = tmp_path / "out", tmp_path / "outside"
    outside.mkdir()
    df = spark.createDataFrame([("../escaped", b"v"), ("/tmp/kafkalog-abs", b"w")],
                               "topic string, value binary")
    with pytest.raises(Exception, match="Topic name is invalid"):
        df.coalesce(1).write.format("kafkalog").mode("append").save(str(root))
    # a legal name whose partition directory is a symlink out of the root: refused at commit
    root.mkdir(exist_ok=True)
    (root / "linked-0").symlink_to(outside, target_is_directory=True)
    ok = spark.createDataFrame([("linked", b"v")], "topic string, value binary")
    with pytest.raises(Exception, match="outside the root"):
        ok.coalesce(1).write.format("kafkalog").mode("append").save(str(root))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "outside"]
    assert list(outside.iterdir()) == []
    assert not (tmp_path / "escaped").exists() and not os.path.exists("/tmp/kafkalog-abs-0")
    assert sorted(p.name for p in root.iterdir()) == ["linked-0"]  # staging cleaned up


def _verified(root) -> None:
    """``kafkalog verify`` finds no error in what the writer published."""
    from kafkalog.tools.verify import verify_paths

    report = verify_paths([str(root)], deep=True)
    errors = [f for f in report.findings if f.severity == "error"]
    assert report.partitions and not errors, errors


def _reopens_without_recovery(directory, n):
    from kafkalog.log import Log

    with Log.open(directory) as log:
        assert log.log_end_offset == n
        assert log.read_table().num_rows == n


def test_stream_available_now_and_restart(spark, tmp_path):
    root = tmp_path / "live"
    first = simple_partition(root, "events", 0, 250, per_batch=10)
    simple_partition(root, "events", 1, 30, per_batch=10)
    cp = str(tmp_path / "checkpoint")
    seen: list[tuple[int, int, int]] = []

    def run():
        def sink(df, batch_id):
            r = df.selectExpr("count(*) AS n", "min(offset) AS lo", "max(offset) AS hi").first()
            seen.append((batch_id, r.n, r.lo))

        q = (spark.readStream.format("kafkalog").option("startingOffsets", "earliest")
             .option("maxOffsetsPerTrigger", "100").load(str(root))
             .writeStream.foreachBatch(sink).option("checkpointLocation", cp)
             .trigger(availableNow=True).start())
        q.awaitTermination(120)
        assert q.exception() is None

    run()
    assert sum(n for _, n, _ in seen) == 280
    assert len(seen) == 3 and max(n for _, n, _ in seen) <= 100
    # more data: a new segment in events-0 and a new partition events-2
    w = PartitionWriter(root, "events", 0, start_offset=first.offsets[-1] + 1)
    w.append([(None, b"late", TS0, None), (b"k", b"later", TS0 + 1, None)])
    w.close()
    simple_partition(root, "events", 2, 5)
    seen.clear()
    run()
    assert sum(n for _, n, _ in seen) == 7


def test_stream_starting_offsets_latest_and_minus_one(spark, tmp_path):
    """A stream's own startingOffsets (``latest``, the stream's default in Spark's Kafka
    source, and -1 in JSON) are accepted by readStream (schema() used to check them as a
    batch's) and still refused by a batch read."""
    root = tmp_path / "live"
    simple_partition(root, "events", 0, 40, per_batch=10)
    simple_partition(root, "events", 1, 30, per_batch=10)
    for i, (start, want) in enumerate((("latest", 0), ('{"events": {"0": -1, "1": -2}}', 30),
                                       ('{"events": {"0": 35, "1": -1}}', 5))):
        seen: list[int] = []
        q = (spark.readStream.format("kafkalog").option("startingOffsets", start)
             .load(str(root)).writeStream
             .foreachBatch(lambda df, _id, seen=seen: seen.append(df.count()))
             .option("checkpointLocation", str(tmp_path / f"cp{i}"))
             .trigger(availableNow=True).start())
        q.awaitTermination(120)
        assert q.exception() is None and sum(seen) == want, (start, seen)
    with pytest.raises(Exception, match="not allowed for batch queries"):
        spark.read.format("kafkalog").option("startingOffsets", "latest").load(
            str(root)).count()


def test_readme_example(spark, logdir, tmp_path):
    """The README example, verbatim apart from paths: read, filter by time, aggregate, Parquet."""
    from pyspark.sql import functions as F

    root, exp = logdir
    log_dirs, out = str(root), str(tmp_path / "orders_per_minute")
    # --- README snippet ---
    orders = (spark.read.format("kafkalog")           # registered by `pip install kafkalog`
              .option("subscribe", "orders")
              .option("startingTimestamp", "1700001000000")  # seeks with .timeindex + .index
              .option("startingOffsetsByTimestampStrategy", "latest")  # none that new: skip
              .load(log_dirs))                        # log.dirs root, a topic-N dir, or a list
    per_minute = (orders
                  .where(F.col("timestamp") < F.timestamp_millis(F.lit(1700002000000)))
                  .groupBy("partition", F.window("timestamp", "1 minute"))
                  .agg(F.count("*").alias("records"), F.sum(F.length("value")).alias("bytes")))
    per_minute.write.mode("overwrite").parquet(out)
    # --- end of snippet ---
    got = spark.read.parquet(out).agg(F.sum("records")).first()[0]
    want = sum(1 for k in exp if k[0] == "orders" for t in exp[k].timestamps
               if 1700001000000 <= t < 1700002000000)
    assert got == want == 1000
