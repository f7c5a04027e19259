"""The JVM reader against the Python reader: identical rows, every column, in one Spark session.

``format("kafkalog")`` is served by the JVM reader (checked in every query's physical plan) and
``format("kafkalog_python")`` by the Python source, the reference. They are compared on
directories written by the engine (every codec, headers, transactions, LogAppendTime,
compacted batches with offset gaps and empty batches, segment gaps), on every real-Kafka
fixture in ../shared/fixtures (broker data dirs, broker-served record sets with magic 0/1/2,
gzip/snappy wrappers, a corrupt CRC, truncated tails) and the kafka-python/aiokafka segments,
under the option combinations of the other Spark tests; for corrupt batches both fail with the
same message (failOnDataLoss=true) or skip the same rows (false). Splits are compared through
the per-task statistics both readers write to ``metricsDir`` (task index, rows, chunks).

Also here: ``jar_path()`` building from the sources into an empty cache, the no-JDK fallback
warning, and a fresh session given the jar in ``spark.jars`` (the documented configuration).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from kafkalog.records.builder import encode_batch

from ._data import PartitionWriter, simple_partition
from .test_spark_groups import tree  # noqa: F401 (fixture: a log dir with a consumer group)

pytestmark = pytest.mark.spark

TS0 = 1_700_000_000_000
JVM, PY = "kafkalog", "kafkalog_python"


# -- data ------------------------------------------------------------------------------------------


def _compacted_partition(root: Path) -> None:
    """Batches as the log cleaner leaves them: offset gaps inside batches, an empty batch, a
    delete-horizon batch, and a gap between segments."""
    w = PartitionWriter(root, "compacted", 0, segment_bytes=600)
    batches = [
        [(b"k0", b"v0", TS0, (), 0), (b"k3", None, TS0 + 3, (("h", b"x"),), 3),
         (None, b"v9", TS0 + 9, (), 9)],
        [],  # every record cleaned away: recordsCount 0, offsets 10..14 remain taken
        [(b"k15", b"v15", TS0 + 15, (), 15), (b"k19", b"v19", TS0 + 19, (), 19)],
    ]
    base = 0
    for recs in batches:
        last = recs[-1][4] if recs else base + 4
        data = encode_batch(recs, base_offset=base, compression="zstd" if base else "none",
                            last_offset_delta=last - base)
        w._append(data, last, max([r[2] for r in recs] or [TS0]), last)
        base = last + 1
    data = encode_batch([(b"k25", b"v25", TS0 + 25, (), 25)], base_offset=20,
                        delete_horizon_ms=TS0 + 100, last_offset_delta=5)
    w._append(data, 25, TS0 + 25, 25)
    w.close(active=False)
    # a later segment starting after a gap (segments deleted by the cleaner in between)
    w2 = PartitionWriter(root, "compacted", 0, start_offset=100)
    w2.append([(b"k100", b"v100", TS0 + 100, None), (b"k101", b"v101", TS0 + 101, None)])
    w2.close()


@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    """Engine-written: every codec, headers, several segments (the last active), compaction."""
    root = tmp_path_factory.mktemp("jvm-logdir")
    simple_partition(root, "orders", 0, 3000, segment_bytes=100_000, headers_every=4)
    simple_partition(root, "orders", 1, 200, compression="lz4")
    simple_partition(root, "pay-ments", 0, 50, compression="zstd")
    simple_partition(root, "codec-gzip", 0, 120, compression="gzip", headers_every=3)
    simple_partition(root, "codec-snappy", 0, 120, compression="snappy", headers_every=5,
                     active=False)
    _compacted_partition(root)
    return root


@pytest.fixture(scope="module")
def txndir(tmp_path_factory):
    from .test_spark_planning import _txn_partition

    root = tmp_path_factory.mktemp("jvm-txn")
    _txn_partition(root)
    return root


# -- comparing the two readers ---------------------------------------------------------------------


def _stats(mdir: Path) -> list[tuple]:
    if not mdir.is_dir():
        return []
    out = []
    for f in mdir.iterdir():
        s = json.loads(f.read_text())
        out.append((s["task"], s["rows"], s["chunks"], s["batches_decoded"]))
    return sorted(out)


def _load(spark, fmt, path, options, schema):
    r = spark.read.format(fmt).options(**options)
    if schema is not None:
        r = r.schema(schema)
    return r.load(path)


def _is_jvm_plan(df) -> bool:
    return "JVM reader" in df._jdf.queryExecution().executedPlan().toString()


def both(spark, path, options=None, *, schema=None, where=None, select=None,
         same_splits=True) -> list:
    """Read with both readers; assert identical rows (every column) and splits; return rows."""
    out = {}
    for fmt in (JVM, PY):
        mdir = Path(tempfile.mkdtemp(prefix="kafkalog-jvm-test-")) / "metrics"
        opts = dict(options or {}, metricsDir=str(mdir))
        df = _load(spark, fmt, path, opts, schema)
        if where is not None:
            df = df.where(where)
        if select is not None:
            df = df.selectExpr(*select)
        assert _is_jvm_plan(df) == (fmt == JVM), fmt
        rows = df.collect()
        out[fmt] = (sorted(rows, key=lambda r: repr(tuple(r))), df.columns, _stats(mdir))
        shutil.rmtree(mdir.parent, ignore_errors=True)
    (jr, jc, js), (pr, pc, ps) = out[JVM], out[PY]
    assert jc == pc
    assert len(jr) == len(pr)
    assert jr == pr
    if same_splits and where is None and select is None:
        # the same tasks (index, rows, chunks, batches decoded): the same splits
        assert js == ps
    return jr


_PY_ERR = re.compile(r"kafkalog\.errors\.(\w+)Error: ([^\n]*)")
_JVM_ERR = re.compile(r"io\.kafkalog\.spark\.(\w+)Exception: ([^\n]*)")


def both_fail(spark, path, options=None, *, schema=None) -> tuple[str, str]:
    """Both readers fail; the same error class and message. Returns (class, message)."""
    texts = {}
    for fmt in (JVM, PY):
        with pytest.raises(Exception) as e:
            _load(spark, fmt, path, dict(options or {}), schema).collect()
        texts[fmt] = str(e.value)
    j = _JVM_ERR.search(texts[JVM])
    p = _PY_ERR.search(texts[PY])
    assert j and p, (texts[JVM][:2000], texts[PY][:2000])
    assert (j.group(1), j.group(2).strip()) == (p.group(1), p.group(2).strip())
    return j.group(1), j.group(2)


# -- building the jar, the fallback, spark.jars ----------------------------------------------------


def _need_jdk() -> None:
    from kafkalog.spark.jvm import JvmUnavailableError, find_jdk_tool

    try:
        find_jdk_tool("javac")
    except JvmUnavailableError as e:
        pytest.skip(f"needs a JDK: {e.message}")


def test_jar_path_builds_from_sources_into_a_cache(tmp_path, monkeypatch):
    import zipfile

    from kafkalog.spark import jvm

    _need_jdk()
    monkeypatch.setenv("KAFKALOG_CACHE_DIR", str(tmp_path / "cache"))
    path = Path(jvm.jar_path())
    assert path.parent == tmp_path / "cache" and path.suffix == ".jar"
    names = zipfile.ZipFile(path).namelist()
    assert "kafkalog/DefaultSource.class" in names
    assert "io/kafkalog/spark/RecordBatchDecoder.class" in names
    assert "META-INF/services/org.apache.spark.sql.sources.DataSourceRegister" in names
    # cached: the same file, not rebuilt; another cache builds the same bytes (reproducible)
    mtime = path.stat().st_mtime_ns
    assert jvm.jar_path() == str(path) and path.stat().st_mtime_ns == mtime
    other = Path(jvm.jar_path(cache=tmp_path / "other"))
    assert other.read_bytes() == path.read_bytes()


def test_concurrent_builds_publish_one_whole_jar(tmp_path):
    """Two processes building into one empty cache at once: both get the same complete jar."""
    _need_jdk()
    env = dict(os.environ, KAFKALOG_CACHE_DIR=str(tmp_path / "cache"))
    cmd = [sys.executable, "-m", "kafkalog.spark.jvm"]
    procs = [subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=600)[0].strip() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert outs[0] == outs[1] and Path(outs[0]).is_file()
    assert [p.name for p in (tmp_path / "cache").iterdir() if p.suffix == ".jar"] == [
        Path(outs[0]).name]
    assert not [p for p in (tmp_path / "cache").iterdir() if p.name.startswith(".build-")]


def test_no_jdk_falls_back_to_python_with_a_warning(spark, tmp_path, monkeypatch):
    import kafkalog.spark
    from kafkalog.spark.jvm import JvmReaderWarning, JvmUnavailableError, jvm_reader_active

    monkeypatch.setenv("KAFKALOG_CACHE_DIR", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-jdk"))
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    with pytest.raises(JvmUnavailableError, match="no JDK: javac not found"):
        kafkalog.spark.jar_path()
    if jvm_reader_active(spark):
        pytest.skip("this thread already has the JVM reader (another module added it)")
    with pytest.warns(JvmReaderWarning, match="using the Python data source.*no JDK"):
        kafkalog.spark.register(spark)
    assert not jvm_reader_active(spark)
    simple_partition(tmp_path / "d", "t", 0, 10)
    df = spark.read.format("kafkalog").load(str(tmp_path / "d"))
    assert not _is_jvm_plan(df) and df.count() == 10


SPARK_JARS_SCRIPT = textwrap.dedent("""
    import os, sys, threading, warnings
    os.environ["PYSPARK_PYTHON"] = sys.executable
    warnings.simplefilter("error")
    import kafkalog.spark
    from pyspark.sql import SparkSession
    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .config("spark.jars", kafkalog.spark.jar_path()).getOrCreate())
    def jvm_count(out):
        df = spark.read.format("kafkalog").load(sys.argv[1])
        plan = df._jdf.queryExecution().executedPlan().toString()
        out.append(("JVM reader" in plan, df.count()))
    out = []
    jvm_count(out)
    t = threading.Thread(target=jvm_count, args=(out,))
    t.start(); t.join()
    kafkalog.spark.register(spark)   # already on the classpath: no warning, nothing added
    print(out)
    spark.stop()
""")


def test_spark_jars_at_start_serves_every_thread(tmp_path):
    """The documented configuration, in a fresh session: spark.jars from jar_path()."""
    pytest.importorskip("pyspark")
    _need_jdk()
    simple_partition(tmp_path / "d", "t", 0, 25)
    script = tmp_path / "run.py"
    script.write_text(SPARK_JARS_SCRIPT)
    proc = subprocess.run([sys.executable, str(script), str(tmp_path / "d")],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().splitlines()[-1] == "[(True, 25), (True, 25)]"
    assert not [w for w in proc.stderr.splitlines() if "JvmReaderWarning" in w]


# -- engine-written directories --------------------------------------------------------------------


def test_every_column_every_codec(jvm_spark, logdir):
    rows = both(jvm_spark, str(logdir), {"includeHeaders": "true"})
    assert len(rows) == 3000 + 200 + 50 + 120 + 120 + 8
    assert any(r.headers for r in rows) and any(r.headers is None for r in rows)
    both(jvm_spark, str(logdir))  # without headers
    # the compacted partition: offset gaps, an empty batch and a segment gap survive
    offs = [r.offset for r in both(jvm_spark, str(logdir / "compacted-0"))]
    assert sorted(offs) == [0, 3, 9, 15, 19, 25, 100, 101]


@pytest.mark.parametrize("options", [
    {"subscribe": "orders"},
    {"subscribe": "pay-ments,codec-gzip"},
    {"subscribePattern": "ord.*"},
    {"topics": "compacted"},
    {"assign": '{"orders": [1], "codec-snappy": [0]}'},
    {"startingOffsets": '{"orders": {"0": 1234, "1": -2}}',
     "endingOffsets": '{"orders": {"0": 2345, "1": -1}}', "subscribe": "orders"},
    {"startingOffsets": '{"compacted": {"0": 4}}', "endingOffsets": '{"compacted": {"0": 20}}',
     "subscribe": "compacted"},
    {"startingTimestamp": str(TS0 + 1234500), "endingTimestamp": str(TS0 + 2000000),
     "assign": '{"orders": [0]}'},
    {"startingOffsetsByTimestamp": json.dumps({"orders": {"0": TS0 + 2998000, "1": TS0}}),
     "endingOffsetsByTimestamp": json.dumps({"orders": {"1": TS0 + 10000}}),
     "subscribe": "orders"},
    {"startingTimestamp": str(TS0 + 10_000_000),
     "startingOffsetsByTimestampStrategy": "latest"},
    {"startingTimestamp": "1700001000000", "startingOffsetsByTimestampStrategy": "latest",
     "subscribe": "orders"},
    {"minPartitions": "4"},
    {"minPartitions": "8", "includeHeaders": "true"},
    {"maxBytesPerPartition": "40000"},
    {"maxBytesPerPartition": "20000", "subscribe": "orders"},
    {"maxRecordsPerPartition": "500"},
    {"maxRecordsPerBatch": "7", "includeHeaders": "true"},
    {"kafka.check.crcs": "false"},
    {"isolationLevel": "read_committed"},
    {"failOnDataLoss": "false", "startingOffsets": '{"orders": {"7": 3}}'},
])
def test_options(jvm_spark, logdir, options):
    both(jvm_spark, str(logdir), options)


def test_projection_paths_and_single_partition(jvm_spark, logdir):
    both(jvm_spark, str(logdir / "orders-1"), schema="offset long, value binary, partition int")
    both(jvm_spark, str(logdir), schema="headers array<struct<key:string,value:binary>>, key "
                                        "binary, timestampType int, timestamp timestamp")
    both(jvm_spark, [str(logdir / "orders-1"), str(logdir / "pay-ments-0")])
    both(jvm_spark, str(logdir / "orders-0"), {"maxBytesPerPartition": "40000"})


@pytest.mark.parametrize("where", [
    "topic = 'orders' AND partition = 0 AND offset >= 2990 AND offset < 2995",
    "offset IN (3, 2999, 1500, 7)",
    "NOT offset IN (3, 4) AND offset < 10",
    "partition <> 0 AND offset BETWEEN 2 AND 40",
    "topic LIKE 'ord%' AND offset > 2995",
    "topic LIKE '%ments'",
    "topic IN ('compacted', 'codec-gzip') AND offset <= 3",
    f"timestamp >= timestamp_millis({TS0 + 2900_000})",
    f"timestamp > timestamp_millis({TS0 + 100}) AND partition = 1",
    "key IS NULL AND offset < 50",
    "offset = 5 OR offset = 2999",
])
def test_filters(jvm_spark, logdir, where):
    both(jvm_spark, str(logdir), {"includeHeaders": "true"}, where=where)


def test_pushdown_prunes_batches(jvm_spark, logdir, tmp_path):
    """The JVM reader pushes filters without any conf (a Python source needs
    spark.sql.python.filterPushdown.enabled): only the batches holding the rows are decoded."""
    mdir = tmp_path / "m"
    df = (jvm_spark.read.format(JVM).option("metricsDir", str(mdir)).load(str(logdir))
          .where("topic = 'orders' AND partition = 0 AND offset >= 2990 AND offset < 2995"))
    assert sorted(r.offset for r in df.select("offset").collect()) == list(range(2990, 2995))
    assert sum(s[3] for s in _stats(mdir)) <= 2
    mdir = tmp_path / "ts"
    n = (jvm_spark.read.format(JVM).option("metricsDir", str(mdir)).load(str(logdir / "orders-0"))
         .where(f"timestamp >= timestamp_millis({TS0 + 2900_000})").count())
    assert n == 100 and sum(s[3] for s in _stats(mdir)) <= 12


def test_readme_aggregation(jvm_spark, logdir):
    both(jvm_spark, str(logdir),
         {"subscribe": "orders", "startingTimestamp": "1700001000000",
          "startingOffsetsByTimestampStrategy": "latest"},
         where="timestamp < timestamp_millis(1700002000000)",
         select=["partition", "count(*) OVER (PARTITION BY partition) AS records",
                 "sum(length(value)) OVER (PARTITION BY partition) AS bytes"])


def test_starting_offsets_from_group(jvm_spark, tree, shared_fixtures):  # noqa: F811
    """startingOffsetsFromGroup (the group tree of test_spark_groups): resolved by the Python
    package through the py4j callback the JVM reader calls while planning; without that callback
    the read is the Python source's."""
    root = tree
    opts = {"subscribe": "orders", "startingOffsetsFromGroup": "app"}
    rows = both(jvm_spark, str(root), opts)
    assert sorted((r.partition, r.offset) for r in rows) == (
        [(0, 7), (0, 8), (0, 9)] + [(1, i) for i in range(10)])
    assert len(both(jvm_spark, str(root), dict(opts, startingOffsetsFromGroup="nobody"))) == 20
    real = shared_fixtures / "kafka-real" / "LDI-POC"
    assert both(jvm_spark, str(real), {"subscribe": "TestTopicPatient",
                                       "startingOffsetsFromGroup": "DEVSmileCDR"}) == []
    both_fail(jvm_spark, str(root), dict(opts, startingOffsets="earliest"))
    # no resolver in the JVM (register() never called): the Python source reads it
    group_start = jvm_spark._jvm.io.kafkalog.spark.GroupStart
    group_start.register(None)
    try:
        df = jvm_spark.read.format(JVM).options(**opts).load(str(root)).where("offset > 3")
        assert not _is_jvm_plan(df)
        assert sorted((r.partition, r.offset) for r in df.collect()) == (
            [(0, 7), (0, 8), (0, 9)] + [(1, i) for i in range(4, 10)])
    finally:
        import kafkalog.spark

        kafkalog.spark.register(jvm_spark)
    assert _is_jvm_plan(jvm_spark.read.format(JVM).options(**opts).load(str(root)))


def test_cleaner_compacted_log(jvm_spark, tmp_path):
    """A log compacted by the engine's cleaner (Kafka's LogCleaner rules): offset gaps, emptied
    batches, delete-horizon batches, index entries keyed by the cleaner."""
    from tests.cleaner_support import build_compacted_log

    log, _clock = build_compacted_log(tmp_path / "logs" / "topic-0")
    try:
        log.flush()
        path = str(tmp_path / "logs" / "topic-0")
        offs = {r.offset for r in log.records()}
        gap = next(o for o in range(log.log_start_offset, log.log_end_offset) if o not in offs)
        for opts in ({"maxBytesPerPartition": "600", "includeHeaders": "true"},
                     {"startingOffsets": json.dumps({"topic": {"0": gap}})},
                     {"startingTimestamp": str(TS0), "startingOffsetsByTimestampStrategy":
                      "latest"},
                     {"minPartitions": "4"}):
            both(jvm_spark, path, opts)
    finally:
        log.close()


def test_transactions_control_batches_log_append_time(jvm_spark, txndir):
    for iso in ("read_uncommitted", "read_committed"):
        rows = both(jvm_spark, str(txndir), {"isolationLevel": iso, "includeHeaders": "true"})
        values = {r.value for r in rows}
        assert (b"aborted1" in values) == (iso == "read_uncommitted")
    both(jvm_spark, str(txndir), {"kafka.isolation.level": "read_committed",
                                  "endingOffsets": '{"tx": {"0": 3}}'})


def test_errors_match(jvm_spark, logdir):
    assert both_fail(jvm_spark, str(logdir), {"assign": '{"orders": [7]}'})[0] == "KafkaLog"
    both_fail(jvm_spark, str(logdir / "orders-1"), {"startingOffsets": '{"orders": {"1": 150}}',
                                                    "endingOffsets": '{"orders": {"1": 100}}'})
    cls, msg = both_fail(jvm_spark, str(logdir / "orders-1"),
                         {"startingTimestamp": str(TS0 + 10_000_000)})
    assert cls == "OffsetOutOfRange" and "no record with timestamp" in msg
    for bad in ({"startingOffsets": "latest"}, {"endingOffsets": '{"t": {"0": -2}}'},
                {"failOnDataLoss": "maybe"}, {"assign": '{"a": ["0"]}'},
                {"minPartitions": "0"}, {"subscribe": "a", "assign": '{"a": [0]}'}):
        assert both_fail(jvm_spark, str(logdir), bad)[0] == "Config"
    assert both_fail(jvm_spark, str(logdir), schema="offset long, nope int")[0] == "Config"


# -- corruption ------------------------------------------------------------------------------------


def _corrupt_copy(src: Path, dst: Path, victim_batch: int, how: str) -> int:
    import numpy as np
    from kafkalog.native.scan import scan_entries

    shutil.copytree(src, dst)
    log = dst / "00000000000000000000.log"
    buf = np.fromfile(log, dtype=np.uint8)
    scan = scan_entries(buf)
    victim = int(scan["positions"][victim_batch])
    if how == "crc":
        buf[victim + 70] ^= 0xFF
    else:
        buf[victim + 8:victim + 12] = 0  # batch length 0 < 14: a corrupt header
    buf.tofile(log)
    return victim


@pytest.mark.parametrize("src,how,batch", [("orders-1", "crc", 5), ("orders-0", "header", 57),
                                           ("codec-gzip-0", "crc", 3), ("orders-0", "crc", 2)])
def test_corrupt_batches_same_failondataloss(jvm_spark, logdir, tmp_path, src, how, batch):
    bad = tmp_path / "bad" / src
    victim = _corrupt_copy(logdir / src, bad, batch, how)
    cls, msg = both_fail(jvm_spark, str(bad))
    assert cls == "CorruptRecord" and f"position {victim}" in msg
    rows = both(jvm_spark, str(bad), {"failOnDataLoss": "false", "includeHeaders": "true"})
    assert 0 < len(rows) < len(both(jvm_spark, str(logdir / src)))


# -- real Kafka and peer-built fixtures ------------------------------------------------------------


def _real_partition_dirs(shared_fixtures: Path) -> list[Path]:
    out = []
    for root in sorted((shared_fixtures / "kafka-real").iterdir()):
        if root.is_dir():
            for d in sorted(root.iterdir()):
                if d.is_dir() and any(f.suffix == ".log" for f in d.iterdir()):
                    out.append(d)
    return out


def test_real_kafka_data_dirs(jvm_spark, shared_fixtures):
    dirs = _real_partition_dirs(shared_fixtures)
    assert len(dirs) >= 15
    total = 0
    for d in dirs:
        total += len(both(jvm_spark, str(d), {"includeInternal": "true",
                                              "includeHeaders": "true"}))
    assert total > 100
    # whole broker data dirs (log.dirs roots with checkpoints), internal topics left out
    for root in ("LDI-POC", "VolodymyrZee-kafka", "KAIPASUBHASH-kafka-logs"):
        both(jvm_spark, str(shared_fixtures / "kafka-real" / root))
        both(jvm_spark, str(shared_fixtures / "kafka-real" / root), {"includeInternal": "true",
                                                                    "minPartitions": "3"})


def _record_set_root(shared_fixtures: Path, tmp: Path) -> tuple[Path, list[Path]]:
    """Every broker-served record set, the KRaft sample and the peer-built segments, each as the
    one segment of its own partition directory under one root; returns (root, corrupt dirs)."""
    from kafkalog.errors import KafkaLogError
    from kafkalog.records.columnar import decode_table

    sources = sorted((shared_fixtures / "kafka-real").glob("*/derived/*.records.bin"))
    sources += [shared_fixtures / "kafka-real" / "kafka-gleam-codecrafters" /
                "00000000000000000000.log"]
    sources += sorted((shared_fixtures / "peer-built").glob("*/00000000000000000000.log"))
    assert len(sources) >= 45
    good, bad = tmp / "good", tmp / "bad"
    corrupt = []
    for i, src in enumerate(sources):
        try:
            decode_table(str(src))
            ok = True
        except KafkaLogError:
            ok = False
        d = (good if ok else bad) / f"set{i:02d}-0"
        d.mkdir(parents=True)
        shutil.copy(src, d / "00000000000000000000.log")
        if not ok:
            corrupt.append(d)
    return good, corrupt


def test_record_sets_all_magics_codecs_and_peers(jvm_spark, shared_fixtures, tmp_path):
    good, corrupt = _record_set_root(shared_fixtures, tmp_path)
    rows = both(jvm_spark, str(good), {"includeHeaders": "true"})
    assert len(rows) > 1000
    assert {r.timestampType for r in rows} >= {-1, 0, 1}  # v0, CreateTime, LogAppendTime
    both(jvm_spark, str(good), {"minPartitions": "7", "maxRecordsPerBatch": "3"})
    both(jvm_spark, str(good), {"isolationLevel": "read_committed"})
    assert corrupt  # kafka-rust's invalid_crc capture
    for d in corrupt:
        assert both_fail(jvm_spark, str(d))[0] == "CorruptRecord"
        both(jvm_spark, str(d), {"failOnDataLoss": "false"})


def test_client_written_segments(jvm_spark, tmp_path):
    """Segments sarama, kafkajs, librdkafka and aiokafka wrote with their own compressors
    (tests/golden/client_written): the JVM reader's codecs (its LZ4 frame parser, zstd-jni
    on frames of negative-level blocks, raw and framed snappy) give what each client sent."""
    import base64

    src = Path(__file__).parent.parent / "golden" / "client_written"
    doc = json.loads((src / "expected.json").read_text())
    root = tmp_path / "clients"
    for name in doc["partitions"]:
        shutil.copytree(src / name, root / name)
    rows = both(jvm_spark, str(root), {"includeHeaders": "true"},
                select=["topic", "partition", "offset", "key", "value", "headers",
                        "unix_millis(timestamp) AS ts"])

    def b(s):
        return None if s is None else base64.b64decode(s)

    want = sorted((name.rsplit("-", 1)[0], int(name.rsplit("-", 1)[1]), r["offset"], b(r["key"]),
                   b(r["value"]), [(k, b(v)) for k, v in r["headers"]], r["timestamp"])
                  for name in doc["partitions"] for r in doc["records"])
    # (no headers: null, as in Spark's Kafka source)
    assert sorted((r.topic, r.partition, r.offset, r.key, r.value,
                   [(h.key, h.value) for h in r.headers or ()], r.ts) for r in rows) == want


def test_log_start_checkpoint_and_crc_switch(jvm_spark, logdir, tmp_path):
    copy = tmp_path / "root"
    shutil.copytree(logdir / "orders-1", copy / "orders-1")
    (copy / "log-start-offset-checkpoint").write_text("0\n1\norders 1 150\n")
    assert len(both(jvm_spark, str(copy))) == 50
    both_fail(jvm_spark, str(copy), {"startingOffsets": '{"orders": {"1": 100}}'})
    both(jvm_spark, str(copy), {"startingOffsets": '{"orders": {"1": 100}}',
                                "failOnDataLoss": "false"})
    c = tmp_path / "crc"
    simple_partition(c, "c", 0, 30)
    log = c / "c-0" / "00000000000000000000.log"
    buf = bytearray(log.read_bytes())
    buf[61 + 30] ^= 0x01  # inside the first record's value
    log.write_bytes(bytes(buf))
    both_fail(jvm_spark, str(c))
    both(jvm_spark, str(c), {"kafka.check.crcs": "false"})


def test_empty_dirs(jvm_spark, tmp_path):
    (tmp_path / "root" / "idle-0").mkdir(parents=True)
    assert both(jvm_spark, str(tmp_path / "root"), same_splits=False) == []


def test_writes_and_streams_are_handed_to_the_python_source(jvm_spark, logdir, tmp_path):
    """With the JVM reader serving format("kafkalog"), writing and streaming still work."""
    src = jvm_spark.read.format(JVM).option("subscribe", "pay-ments").load(str(logdir))
    out = tmp_path / "copy"
    src.coalesce(1).write.format(JVM).mode("append").save(str(out))
    back = jvm_spark.read.format(JVM).load(str(out))
    assert _is_jvm_plan(back)
    assert sorted(r.offset for r in back.select("offset").collect()) == list(range(50))
    src.coalesce(1).write.format(JVM).mode("append").save(str(out))
    assert back.count() == 100
    src.coalesce(1).write.format(JVM).mode("overwrite").save(str(out))  # TRUNCATE, delegated
    assert back.count() == 50
    seen = []
    q = (jvm_spark.readStream.format(JVM).option("startingOffsets", "earliest").load(str(out))
         .writeStream.foreachBatch(lambda df, _: seen.append(df.count()))
         .option("checkpointLocation", str(tmp_path / "cp")).trigger(availableNow=True).start())
    q.awaitTermination(120)
    assert q.exception() is None and sum(seen) == 50


def test_row_and_columnar_outputs_agree(jvm_spark, logdir):
    rows = {}
    for columnar in ("true", "false"):
        df = (jvm_spark.read.format(JVM).option("includeHeaders", "true")
              .option("columnarReads", columnar).option("columnarBatchRows", "333")
              .load(str(logdir)))
        rows[columnar] = sorted(df.collect(), key=lambda r: repr(tuple(r)))
    assert rows["true"] == rows["false"]
    assert len(rows["true"]) == 3498


