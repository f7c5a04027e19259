"""The data source's pure parts, without Spark: options, discovery, planning, pushdown, reading.

These run the same code the Spark planner worker and executors run (``plan_read`` then
``read_chunks`` per task), over directories written by the engine's segment writer and over
the real-Kafka fixtures.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil

import numpy as np
import pyarrow as pa
import pytest

from kafkalog.errors import ConfigError, CorruptRecordError, KafkaLogError, OffsetOutOfRangeError
from kafkalog.spark.arrow import KAFKA_COLUMNS, arrow_schema, spark_schema
from kafkalog.spark.layout import describe_partition, discover_partitions
from kafkalog.spark.options import ReadOptions
from kafkalog.spark.planning import plan_read
from kafkalog.spark.pushdown import Bounds, analyze_filters
from kafkalog.spark.read import ReadSettings, read_chunks

from ._data import PartitionWriter, simple_partition

TS0 = 1_700_000_000_000


def read_all(options: dict, bounds: Bounds | None = None, columns=KAFKA_COLUMNS,
             stats: list | None = None) -> pa.Table:
    opts = ReadOptions.parse(options)
    plan = plan_read(opts, bounds)
    b = bounds or Bounds()
    settings = ReadSettings(
        columns=tuple(columns), fail_on_data_loss=opts.fail_on_data_loss,
        max_records_per_batch=opts.max_records_per_batch, timestamp_lo_ms=b.timestamp_lo_ms,
        offset_in=tuple(sorted(b.offset_in)) if b.offset_in is not None else None,
        offsets_excluded=tuple(sorted(b.offsets_excluded)), metrics_dir=opts.metrics_dir,
        check_crcs=opts.check_crcs)
    schema = arrow_schema(columns)
    batches = []
    for t in plan.tasks:
        batches.extend(read_chunks(t.chunks, settings, schema, t.index))
    if stats is not None:
        stats.append(plan)
    return pa.Table.from_batches(batches, schema)


def as_rows(table: pa.Table) -> list[tuple]:
    out = []
    for r in table.to_pylist():
        ts = r["timestamp"]
        ms = None if ts is None else round(ts.timestamp() * 1000)
        h = r.get("headers")
        out.append((r["key"], r["value"], r["topic"], r["partition"], r["offset"], ms,
                    r["timestampType"],
                    None if h is None else [(x["key"], x["value"]) for x in h]))
    return out


@pytest.fixture()
def logdir(tmp_path):
    """Two topics, three partitions; orders-0 has 4 segments (the last active)."""
    exp = {
        ("orders", 0): simple_partition(tmp_path, "orders", 0, 3000, segment_bytes=100_000,
                                        headers_every=4),
        ("orders", 1): simple_partition(tmp_path, "orders", 1, 200, compression="lz4"),
        ("pay-ments", 0): simple_partition(tmp_path, "pay-ments", 0, 50, compression="zstd"),
    }
    return tmp_path, exp


def expected_rows(exp, keys=None, lo=None, hi=None):
    rows = []
    for k in sorted(exp):
        if keys is not None and k not in keys:
            continue
        rows.extend(r for r in exp[k].rows()
                    if (lo is None or r[4] >= lo) and (hi is None or r[4] < hi))
    return rows


def sort_rows(rows):
    return sorted(rows, key=lambda r: (r[2], r[3], r[4]))


# -- options ------------------------------------------------------------------------------------


def test_options_precedence_and_defaults():
    o = ReadOptions.parse({"path": "/x"})
    assert o.starting.kind == "earliest" and o.ending.kind == "latest"
    assert ReadOptions.parse({"path": "/x"}, streaming=True).starting.kind == "latest"
    o = ReadOptions.parse({"path": "/x", "startingTimestamp": "5",
                           "startingOffsetsByTimestamp": '{"t": {"0": 1}}',
                           "startingOffsets": "earliest"})
    assert o.starting.kind == "timestamp" and o.starting.timestamp == 5
    o = ReadOptions.parse({"path": "/x", "startingOffsetsByTimestamp": '{"t": {"0": 1}}',
                           "startingOffsets": '{"t": {"0": 3}}'})
    assert o.starting.kind == "timestamps" and o.starting.per_partition == {("t", 0): 1}
    o = ReadOptions.parse({"path": "/x", "STARTINGOFFSETS": '{"t": {"0": 3, "1": -2}}'})
    assert o.starting.for_partition("t", 0) == ("offset", 3)
    assert o.starting.for_partition("t", 1) == ("offset", -2)
    assert o.starting.for_partition("t", 9) == ("offset", -2)
    o = ReadOptions.parse({"paths": json.dumps(["/a", "/b"]), "subscribe": "x, y"})
    assert o.paths == ("/a", "/b") and o.topics == ("x", "y")


@pytest.mark.parametrize("options,needle", [
    ({}, "no path"),
    ({"path": "/x", "startingOffsets": "latest"}, "startingOffsets"),
    ({"path": "/x", "startingOffsets": '{"t": {"0": -1}}'}, r"latest \(-1\)"),
    ({"path": "/x", "endingOffsets": "earliest"}, "endingOffsets"),
    ({"path": "/x", "endingOffsets": '{"t": {"0": -2}}'}, r"earliest \(-2\)"),
    ({"path": "/x", "startingOffsets": "{bad"}, "expected JSON"),
    ({"path": "/x", "startingOffsets": '{"t": {"a": 1}}'}, "partition number"),
    ({"path": "/x", "subscribe": "a", "assign": '{"a": [0]}'}, "at most one"),
    ({"path": "/x", "topicPattern": "("}, "regular expression"),
    ({"path": "/x", "failOnDataLoss": "maybe"}, "failOnDataLoss"),
    ({"path": "/x", "minPartitions": "0"}, "minPartitions"),
    ({"path": "/x", "maxBytesPerPartition": "lots"}, "maxBytesPerPartition"),
    ({"path": "/x", "isolationLevel": "serializable"}, "isolationLevel"),
    ({"path": "/x", "startingOffsetsByTimestampStrategy": "maybe"}, "Strategy"),
    ({"path": "/x", "assign": '{"a": ["0"]}'}, "assign"),
])
def test_options_errors(options, needle):
    with pytest.raises(ConfigError, match=needle):
        ReadOptions.parse(options)


def test_options_topic_selection():
    o = ReadOptions.parse({"path": "/x"})
    assert o.selects("orders", 0) and not o.selects("__consumer_offsets", 3)
    assert ReadOptions.parse({"path": "/x", "includeInternal": "true"}).selects(
        "__consumer_offsets", 3)
    # a topic named explicitly is read even when internal
    assert ReadOptions.parse({"path": "/x", "topics": "__consumer_offsets"}).selects(
        "__consumer_offsets", 1)
    o = ReadOptions.parse({"path": "/x", "subscribePattern": "ord.*"})
    assert o.selects("orders", 0) and not o.selects("xorders", 0)
    o = ReadOptions.parse({"path": "/x", "assign": '{"orders": [1]}'})
    assert o.selects("orders", 1) and not o.selects("orders", 0)


# -- discovery and layout -----------------------------------------------------------------------


def test_discover_root_partition_dir_and_list(logdir, tmp_path):
    root, _ = logdir
    (root / "orders-0.0123456789abcdef0123456789abcdef-delete").mkdir()
    (root / "not a partition").mkdir()
    (root / "meta.properties").write_text("version=1\n")
    found = discover_partitions([str(root)])
    assert [(t, p) for t, p, _ in found] == [("orders", 0), ("orders", 1), ("pay-ments", 0)]
    one = discover_partitions([str(root / "orders-1")])
    assert [(t, p) for t, p, _ in one] == [("orders", 1)]
    both = discover_partitions([str(root / "orders-1"), str(root / "pay-ments-0")])
    assert [(t, p) for t, p, _ in both] == [("orders", 1), ("pay-ments", 0)]
    with pytest.raises(KafkaLogError, match="no such log directory"):
        discover_partitions([str(tmp_path / "missing")])


def test_describe_uses_indexes_and_tail_walk(logdir):
    root, exp = logdir
    info = describe_partition("orders", 0, str(root / "orders-0"))
    assert len(info.segments) >= 3
    assert info.log_start_offset == 0 and info.log_end_offset == 3000
    last = info.segments[-1]
    # the active segment's index is preallocated (zero tail) but entries stop before the zeros
    assert os.path.getsize(root / "orders-0" / f"{last.base_offset:020d}.index") > 1_000_000
    assert 0 < last.index_offsets.size < 1000
    assert np.all(np.diff(last.index_offsets) > 0)
    # tail walk: only bytes after the last index entry were read
    assert last.data_end - last.walk_start < 10_000
    assert last.max_timestamp == TS0 + 2999 * 1000
    for i, seg in enumerate(info.segments[:-1]):
        assert seg.next_offset == info.segments[i + 1].base_offset
        assert seg.max_timestamp == TS0 + (seg.next_offset - 1) * 1000


# -- reading ------------------------------------------------------------------------------------


def test_read_everything_equals_written(logdir):
    root, exp = logdir
    table = read_all({"path": str(root), "includeHeaders": "true"})
    assert table.schema == arrow_schema(KAFKA_COLUMNS)
    assert sort_rows(as_rows(table)) == expected_rows(exp)


def test_arrow_schema_is_pysparks():
    from pyspark.sql.pandas.types import to_arrow_schema

    for cols in (KAFKA_COLUMNS, KAFKA_COLUMNS[:-1], ("offset", "headers", "key")):
        assert arrow_schema(cols).equals(to_arrow_schema(spark_schema(cols), timezone="UTC"))


def test_projection_subset(logdir):
    root, exp = logdir
    table = read_all({"path": str(root / "orders-1")}, columns=("offset", "value"))
    assert table.column_names == ["offset", "value"]
    assert table.column("offset").to_pylist() == exp[("orders", 1)].offsets
    assert table.column("value").to_pylist() == exp[("orders", 1)].values


def test_splits_start_on_index_positions(logdir):
    root, exp = logdir
    plans = []
    table = read_all({"path": str(root / "orders-0"), "maxBytesPerPartition": "20000"},
                     stats=plans)
    plan = plans[0]
    info = plan.partitions[0]
    positions = {s.log_path: set(s.index_positions.tolist()) | {0} for s in info.segments}
    total = sum(s.data_end for s in info.segments)
    assert len(plan.tasks) >= total // 20000 - 1
    for t in plan.tasks:
        for c in t.chunks:
            assert c.start_pos in positions[c.log_path]
            assert c.nbytes <= 20000 + 5000  # a piece closes at the first entry past the target
    # pieces of a segment tile it exactly: each ends where the next starts
    by_file: dict[str, list] = {}
    for t in plan.tasks:
        for c in t.chunks:
            by_file.setdefault(c.log_path, []).append((c.start_pos, c.end_pos))
    for seg in info.segments:
        spans = sorted(by_file[seg.log_path])
        assert spans[0][0] == 0 and spans[-1][1] == seg.data_end
        assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
    assert as_rows(table) == expected_rows(exp, {("orders", 0)})


def test_min_partitions_and_grouping(logdir):
    root, exp = logdir
    plans = []
    read_all({"path": str(root)}, stats=plans)
    assert len(plans[0].tasks) == 1  # everything is small: grouped into one task
    plans = []
    table = read_all({"path": str(root), "minPartitions": "8"}, stats=plans)
    assert 6 <= len(plans[0].tasks) <= 12
    assert sort_rows(as_rows(table))[:5] == expected_rows(exp)[:5]
    assert table.num_rows == 3250
    plans = []
    table = read_all({"path": str(root / "orders-0"), "maxRecordsPerPartition": "500"},
                     stats=plans)
    assert len(plans[0].tasks) >= 6
    assert table.num_rows == 3000


def test_starting_and_ending_offsets(logdir):
    root, exp = logdir
    table = read_all({"path": str(root), "subscribe": "orders",
                      "startingOffsets": json.dumps({"orders": {"0": 1234, "1": -2}}),
                      "endingOffsets": json.dumps({"orders": {"0": 2345, "1": -1}})})
    want = [r for r in expected_rows(exp, {("orders", 0)}) if 1234 <= r[4] < 2345]
    want += expected_rows(exp, {("orders", 1)})
    assert sort_rows(as_rows(table))[: len(want)] == sort_rows(want)
    assert table.num_rows == len(want)
    with pytest.raises(ConfigError, match="after the ending offset"):
        read_all({"path": str(root / "orders-1"), "startingOffsets": '{"orders": {"1": 150}}',
                  "endingOffsets": '{"orders": {"1": 100}}'})
    with pytest.raises(KafkaLogError, match="orders-7"):
        read_all({"path": str(root), "assign": '{"orders": [7]}'})


def test_offset_seek_reads_few_bytes(logdir):
    root, exp = logdir
    plans = []
    read_all({"path": str(root / "orders-0"),
              "startingOffsets": '{"orders": {"0": 2990}}'}, stats=plans)
    plan = plans[0]
    assert sum(t.nbytes for t in plan.tasks) < 10_000


def test_timestamp_options_resolve_through_indexes(logdir):
    root, exp = logdir
    # 1700001234500 lies between offsets 1234 and 1235: the first record >= it is 1235
    table = read_all({"path": str(root / "orders-0"), "startingTimestamp": str(TS0 + 1234500),
                      "endingTimestamp": str(TS0 + 2000000)}, columns=("offset",))
    assert table.column("offset").to_pylist() == list(range(1235, 2000))
    table = read_all({"path": str(root), "subscribe": "orders",
                      "startingOffsetsByTimestamp": json.dumps(
                          {"orders": {"0": TS0 + 2998000, "1": TS0}}),
                      "endingOffsetsByTimestamp": json.dumps({"orders": {"1": TS0 + 10000}})},
                     columns=("partition", "offset"))
    assert sorted(zip(*table.to_pydict().values())) == (
        [(0, 2998), (0, 2999)] + [(1, o) for o in range(10)])
    # no record at or after the starting timestamp: error by default, latest on request
    late = str(TS0 + 10_000_000)
    with pytest.raises(OffsetOutOfRangeError, match="no record with timestamp"):
        read_all({"path": str(root / "orders-1"), "startingTimestamp": late})
    assert read_all({"path": str(root / "orders-1"), "startingTimestamp": late,
                     "startingOffsetsByTimestampStrategy": "latest"}).num_rows == 0


# -- pushdown ------------------------------------------------------------------------------------


def test_analyze_filters_claims_exact_and_returns_timestamp():
    from pyspark.sql.datasource import (
        EqualTo,
        GreaterThan,
        GreaterThanOrEqual,
        In,
        IsNotNull,
        LessThan,
        Not,
        StringEndsWith,
        StringStartsWith,
    )

    ts = dt.datetime(2023, 11, 14, 22, 13, 25, 500000, tzinfo=dt.timezone.utc)
    fs = [IsNotNull(("offset",)), GreaterThanOrEqual(("offset",), 3), LessThan(("offset",), 9),
          EqualTo(("topic",), "orders"), In(("partition",), [0, 2]),
          Not(EqualTo(("partition",), 2)), GreaterThan(("timestamp",), ts),
          StringStartsWith(("topic",), "ord"), StringEndsWith(("key",), "x"),
          EqualTo(("value",), b"v")]
    b, rest = analyze_filters(fs)
    assert rest == [IsNotNull(("offset",)), GreaterThan(("timestamp",), ts),
                    StringEndsWith(("key",), "x"), EqualTo(("value",), b"v")]
    assert (b.offset_lo, b.offset_hi) == (3, 9)
    assert b.allows("orders", 0) and not b.allows("orders", 2) and not b.allows("other", 0)
    assert b.timestamp_lo_ms == 1700000005500
    b, rest = analyze_filters([In(("offset",), [5, 1, 8]), Not(In(("offset",), [8]))])
    assert rest == [] and b.offset_range() == (1, 9) and b.offsets_excluded == {8}
    b, rest = analyze_filters([In(("offset",), [1, None])])
    assert rest == [In(("offset",), [1, None])]


def test_pushdown_bounds_prune_and_filter_exactly(logdir):
    from pyspark.sql.datasource import EqualTo, GreaterThanOrEqual, In, LessThan, Not

    root, exp = logdir
    b, _ = analyze_filters([EqualTo(("topic",), "orders"), EqualTo(("partition",), 0),
                            GreaterThanOrEqual(("offset",), 2500), LessThan(("offset",), 2600),
                            Not(In(("offset",), [2550]))])
    plans = []
    table = read_all({"path": str(root)}, b, columns=("offset",), stats=plans)
    assert table.column("offset").to_pylist() == [o for o in range(2500, 2600) if o != 2550]
    assert sum(t.nbytes for t in plans[0].tasks) < 20_000
    b, _ = analyze_filters([In(("offset",), [3, 2999, 1500])])
    table = read_all({"path": str(root / "orders-0")}, b, columns=("offset",))
    assert table.column("offset").to_pylist() == [3, 1500, 2999]


def test_timestamp_hint_skips_batches(logdir, tmp_path):
    from pyspark.sql.datasource import GreaterThanOrEqual

    root, exp = logdir
    cut = dt.datetime.fromtimestamp((TS0 + 2900_000) / 1000, dt.timezone.utc)
    b, rest = analyze_filters([GreaterThanOrEqual(("timestamp",), cut)])
    assert len(rest) == 1  # handed back to Spark
    mdir = tmp_path / "metrics"
    table = read_all({"path": str(root / "orders-0"), "metricsDir": str(mdir)}, b,
                     columns=("offset",))
    offs = table.column("offset").to_pylist()
    assert offs[0] <= 2900 and offs[-1] == 2999 and 2900 in offs
    stats = [json.loads(p.read_text()) for p in mdir.iterdir()]
    assert sum(s["batches_decoded"] for s in stats) <= 12  # of 300 batches


# -- transactions, control batches, LogAppendTime ------------------------------------------------


def _txn_partition(tmp_path):
    w = PartitionWriter(tmp_path, "tx", 0)
    w.append([(b"a", b"plain", TS0, None)])
    w.append([(b"c", b"committed", TS0 + 1, None)], producer_id=7, transactional=True)
    first_aborted, _ = w.append([(b"x", b"aborted1", TS0 + 2, None), (b"y", b"aborted2", TS0 + 3,
                                                                       None)],
                                producer_id=8, transactional=True, visible=False)
    w.end_txn(7, True, TS0 + 4)
    marker = w.end_txn(8, False, TS0 + 5)
    w.append([(b"z", b"after", TS0 + 6, None)], log_append_time=TS0 + 100)
    # a transaction still open at the log end: read_committed stops before it (last stable
    # offset), even for the plain record appended after it
    w.append([(b"o", b"open", TS0 + 7, None)], producer_id=9, transactional=True, visible=False)
    w.append([(b"p", b"past-lso", TS0 + 8, None)], visible=False)
    w.close(active=False)
    # the broker records aborted transactions in the segment's .txnindex (spec §5.4)
    entry = (np.array([(0, 8, first_aborted, marker, marker)],
                      dtype=[("v", ">i2"), ("p", ">i8"), ("f", ">i8"), ("l", ">i8"),
                             ("s", ">i8")]))
    (tmp_path / "tx-0" / "00000000000000000000.txnindex").write_bytes(entry.tobytes())
    return w


def test_transactions_control_and_log_append_time(tmp_path):
    w = _txn_partition(tmp_path)
    uncommitted = read_all({"path": str(tmp_path)}, columns=("value", "offset", "timestamp",
                                                             "timestampType"))
    # control records never appear; aborted data does under read_uncommitted
    assert uncommitted.column("value").to_pylist() == [
        b"plain", b"committed", b"aborted1", b"aborted2", b"after", b"open", b"past-lso"]
    committed = read_all({"path": str(tmp_path), "isolationLevel": "read_committed"},
                         columns=("value", "offset", "timestamp", "timestampType"))
    assert committed.column("value").to_pylist() == [b"plain", b"committed", b"after"]
    rows = as_rows(read_all({"path": str(tmp_path), "isolationLevel": "read_committed",
                             "includeHeaders": "true"}))
    assert rows == w.expected.rows()
    assert rows[-1][5] == TS0 + 100 and rows[-1][6] == 1  # LogAppendTime: batch max timestamp


# -- corruption ----------------------------------------------------------------------------------


def test_corrupt_batch_fails_with_position_or_is_skipped(logdir, tmp_path):
    root, exp = logdir
    src = root / "orders-1"
    bad = tmp_path / "bad" / "orders-1"
    shutil.copytree(src, bad)
    log = bad / "00000000000000000000.log"
    info = describe_partition("orders", 1, str(bad))
    from kafkalog.native.scan import scan_entries

    buf = np.fromfile(log, dtype=np.uint8)
    scan = scan_entries(buf)
    victim = int(scan["positions"][5])
    buf[victim + 70] ^= 0xFF  # inside batch 5's records: its CRC no longer matches
    buf.tofile(log)
    with pytest.raises(CorruptRecordError) as e:
        read_all({"path": str(bad)})
    assert e.value.path == str(log) and e.value.position == victim
    assert "crc" in str(e.value).lower()
    mdir = tmp_path / "m"
    table = read_all({"path": str(bad), "failOnDataLoss": "false", "metricsDir": str(mdir)},
                     columns=("offset",))
    lost = set(range(int(scan["base_offsets"][5]), int(scan["last_offsets"][5]) + 1))
    assert table.column("offset").to_pylist() == [o for o in range(200) if o not in lost]
    stats = [json.loads(p.read_text()) for p in mdir.iterdir()]
    assert sum(s["corrupt_batches_skipped"] for s in stats) == 1
    assert info.log_end_offset == 200


def test_corrupt_header_skips_to_next_index_entry(logdir, tmp_path):
    root, exp = logdir
    bad = tmp_path / "bad" / "orders-0"
    shutil.copytree(root / "orders-0", bad)
    info = describe_partition("orders", 0, str(bad))
    seg = info.segments[0]
    log = bad / "00000000000000000000.log"
    buf = np.fromfile(log, dtype=np.uint8)
    pos = int(seg.index_positions[3]) + 1200  # not a batch start: find the batch there
    from kafkalog.native.scan import scan_entries

    sc = scan_entries(buf, int(seg.index_positions[3]))
    k = int(np.searchsorted(sc["positions"], pos))
    victim = int(sc["positions"][k])
    buf[victim + 8:victim + 12] = 0  # batch length 0 < 14: a corrupt header
    buf.tofile(log)
    with pytest.raises(CorruptRecordError) as e:
        read_all({"path": str(bad)})
    assert e.value.position == victim
    table = read_all({"path": str(bad), "failOnDataLoss": "false"}, columns=("offset",))
    offs = table.column("offset").to_pylist()
    resume = int(seg.index_positions[seg.index_positions > victim][0])
    lost_batches = sc["positions"][(sc["positions"] >= victim) & (sc["positions"] < resume)]
    assert 0 < 3000 - len(offs) <= 10 * len(lost_batches)
    assert offs == sorted(offs) and offs[-1] == 2999


# -- real Kafka fixtures -------------------------------------------------------------------------


def _real_dirs(shared_fixtures):
    real = shared_fixtures / "kafka-real"
    out = []
    for root in sorted(real.iterdir()):
        if root.is_dir():
            for d in sorted(root.iterdir()):
                if d.is_dir() and any(f.suffix == ".log" for f in d.iterdir()):
                    out.append(d)
    return out


def test_real_kafka_fixtures_equal_engine_decode(shared_fixtures):
    from kafkalog.records.columnar import decode_table

    dirs = _real_dirs(shared_fixtures)
    assert dirs
    checked = 0
    for d in dirs:
        table = read_all({"path": str(d), "includeInternal": "true", "includeHeaders": "true"})
        want = [decode_table(str(p)) for p in sorted(d.glob("*.log"))]
        want = pa.concat_tables(want) if want else None
        assert table.num_rows == want.num_rows, d
        assert table.column("offset").to_pylist() == want.column("offset").to_pylist()
        assert table.column("key").to_pylist() == want.column("key").to_pylist()
        assert table.column("value").to_pylist() == want.column("value").to_pylist()
        ts = table.column("timestamp").cast(pa.int64()).to_numpy() // 1000
        assert ts.tolist() == want.column("timestamp").to_pylist()
        assert (table.column("timestampType").to_pylist()
                == want.column("timestamp_type").to_pylist())
        hs = [None if not h else h for h in want.column("headers").to_pylist()]
        assert table.column("headers").to_pylist() == hs
        topic, _, part = d.name.rpartition("-")
        assert set(table.column("topic").to_pylist()) <= {topic}
        assert set(table.column("partition").to_pylist()) <= {int(part)}
        checked += table.num_rows
    assert checked > 100


def test_log_start_offset_checkpoint_is_honoured(logdir, tmp_path):
    root, exp = logdir
    copy = tmp_path / "root"
    shutil.copytree(root / "orders-1", copy / "orders-1")
    (copy / "log-start-offset-checkpoint").write_text("0\n1\norders 1 150\n")
    table = read_all({"path": str(copy)}, columns=("offset",))
    assert table.column("offset").to_pylist() == list(range(150, 200))
    with pytest.raises(OffsetOutOfRangeError, match="below the log start offset 150"):
        read_all({"path": str(copy), "startingOffsets": '{"orders": {"1": 100}}'})
    table = read_all({"path": str(copy), "startingOffsets": '{"orders": {"1": 100}}',
                      "failOnDataLoss": "false"}, columns=("offset",))
    assert table.num_rows == 50


def test_check_crcs_false_skips_crc_validation(tmp_path):
    simple_partition(tmp_path, "c", 0, 30)
    log = tmp_path / "c-0" / "00000000000000000000.log"
    buf = bytearray(log.read_bytes())
    buf[61 + 30] ^= 0x01  # inside the first record's value (uncompressed batch)
    log.write_bytes(bytes(buf))
    with pytest.raises(CorruptRecordError, match="(?i)crc"):
        read_all({"path": str(tmp_path)})
    # kafka.check.crcs=false, the consumer's check.crcs: the changed byte is read as is
    table = read_all({"path": str(tmp_path), "kafka.check.crcs": "false"}, columns=("value",))
    assert table.num_rows == 30 and table.column("value")[0].as_py() != b"c:0:0:".ljust(100, b"x")


@pytest.mark.parametrize("name", [
    "kafka-go/derived/v1-v1c-v2-v2c-v2b-v2b-v2b-v2bc-v1b-v1bc.records.bin",
    "kafkajs/derived/v4_response_mixed_formats.records.bin",
    "kafkajs/derived/v0_response_gzip.records.bin",
])
def test_broker_served_record_sets_all_magics(shared_fixtures, tmp_path, name):
    """Record sets a broker served (v0/v1 wrappers, gzip, v2 mixed) read as one segment."""
    from kafkalog.records.columnar import decode_table

    src = shared_fixtures / "kafka-real" / name
    d = tmp_path / "mixed-0"
    d.mkdir()
    (d / "00000000000000000000.log").write_bytes(src.read_bytes())
    want = decode_table(str(d / "00000000000000000000.log"))
    table = read_all({"path": str(d), "minPartitions": "3"})
    assert table.num_rows == want.num_rows > 0
    for ours, theirs in (("offset", "offset"), ("key", "key"), ("value", "value"),
                         ("timestampType", "timestamp_type")):
        assert table.column(ours).to_pylist() == want.column(theirs).to_pylist()
    ts = table.column("timestamp").cast(pa.int64()).to_numpy() // 1000
    assert ts.tolist() == want.column("timestamp").to_pylist()


def test_decode_runs_bounded_by_records_and_bytes():
    from kafkalog.spark.read import _runs

    keep = np.array([1, 1, 1, 0, 1, 1, 1, 1], dtype=bool)
    counts = np.array([10, 10, 10, 10, 50, 50, 50, 5])
    sizes = np.array([100, 100, 100, 100, 900, 100, 100, 100])
    assert _runs(keep, counts, sizes, 25) == [(0, 2), (2, 3), (4, 5), (5, 6), (6, 7), (7, 8)]
    assert _runs(keep, counts, sizes, 1000) == [(0, 3), (4, 8)]
    assert _runs(keep, counts, sizes, 1000, max_bytes=1000) == [(0, 3), (4, 6), (6, 8)]
    assert _runs(np.zeros(3, bool), counts[:3], sizes[:3], 5) == []


def test_empty_log_dir_and_empty_partition(tmp_path):
    (tmp_path / "root").mkdir()
    assert read_all({"path": str(tmp_path / "root")}).num_rows == 0
    (tmp_path / "root" / "idle-0").mkdir()  # a partition directory without segments yet
    plans = []
    assert read_all({"path": str(tmp_path / "root")}, stats=plans).num_rows == 0
    assert plans[0].ranges == {("idle", 0): (0, 0)} and plans[0].tasks == []


@pytest.mark.parametrize("cut", [30, 3000])
def test_a_batch_still_being_copied_into_a_preallocated_segment_is_not_planned(tmp_path, cut):
    """A live writer with ``preallocate=true``: the active ``.log`` is zeros past its data, so
    a batch whose first bytes landed is whole by its length field. Planning ends before it
    (as a read-only ``Log`` does) instead of planning a read that fails on its CRC; once the
    copy is done the next plan takes it in."""
    from kafkalog import Log, Record, encode_batch
    from kafkalog.config import LogConfig

    d = tmp_path / "live-0"
    cfg = LogConfig(segment_bytes=1_000_000, preallocate=True)
    with Log.open(d, cfg) as writer:
        for first in range(0, 30, 10):
            writer.append([Record(b"k%d" % o, b"v%d" % o * 40, TS0 + o)
                           for o in range(first, first + 10)])
        seg = writer.active_segment
        batch = encode_batch([Record(b"k%d" % o, b"w" * 1000, TS0 + o) for o in range(30, 35)],
                             base_offset=30)
        fd = os.open(seg.log_path, os.O_WRONLY)
        try:
            os.pwrite(fd, batch[:cut], seg.size)  # the writer's copy, part way
            info = describe_partition("live", 0, str(d))
            assert info.log_end_offset == 30 and info.segments[-1].data_end == seg.size
            table = read_all({"path": str(d)})
            assert table.column("offset").to_pylist() == list(range(30))
            os.pwrite(fd, batch[cut:], seg.size + cut)  # the copy done
            assert describe_partition("live", 0, str(d)).log_end_offset == 35
            table = read_all({"path": str(d)})
            assert table.column("offset").to_pylist() == list(range(35))
        finally:
            os.pwrite(fd, bytes(len(batch)), seg.size)
            os.close(fd)


def _plan_then_rewrite(tmp_path, refill):
    """A live partition (batches of 10 records) planned, then cut back to offset 10 by its
    writer and refilled by ``refill(writer)``: the plan's batch boundaries past 10 are gone."""
    from kafkalog import Log, Record
    from kafkalog.config import LogConfig

    d = tmp_path / "live-0"
    writer = Log.open(d, LogConfig(segment_bytes=1_000_000))
    for first in range(0, 40, 10):
        writer.append([Record(b"k%d" % o, b"v%d-" % o * 40, TS0 + o)
                       for o in range(first, first + 10)])
    opts = ReadOptions.parse({"path": str(d), "failOnDataLoss": "true"})
    plan = plan_read(opts)
    writer.truncate_to(10)
    refill(writer, Record)
    return writer, plan


def _read_plan(plan, fail_on_data_loss, metrics_dir=None):
    settings = ReadSettings(columns=("offset", "value"), fail_on_data_loss=fail_on_data_loss,
                            metrics_dir=metrics_dir)
    schema = arrow_schema(("offset", "value"))
    batches = []
    for t in plan.tasks:
        batches.extend(read_chunks(t.chunks, settings, schema, t.index))
    return pa.Table.from_batches(batches, schema)


@pytest.mark.parametrize("shape", ["boundary_inside_a_batch", "batch_still_being_written"])
def test_a_segment_rewritten_since_planning_is_not_reported_as_corrupt(tmp_path, monkeypatch,
                                                                      shape):
    """A task reads a chunk planned earlier; the writer cut the segment back (``truncate_to``)
    and wrote other batches since. A planned batch boundary then falls inside a new batch, or
    the task copied a new batch while the writer was still writing it (its CRC does not match
    in the copy, it does in the file): that is a changed segment, reported as such
    (``OffsetOutOfRangeError``, plan again), not ``CorruptRecordError`` (the readers stress
    test met 132 of these in 2,039 Spark reads). Rows before the change are the writer's."""
    from kafkalog.spark.read import _ChunkReader

    def refill(writer, Record):
        if shape == "boundary_inside_a_batch":  # one batch over the old 10..19 and 20..29
            writer.append([Record(b"k%d" % o, b"x%d-" % o * 45, TS0 + o) for o in range(10, 40)])
        else:  # the same boundaries
            for first in range(10, 40, 10):
                writer.append([Record(b"k%d" % o, b"y%d-" % o * 40, TS0 + o)
                               for o in range(first, first + 10)])

    writer, plan = _plan_then_rewrite(tmp_path, refill)
    try:
        if shape == "batch_still_being_written":
            # the task copies batch 20..29 with one byte not yet written; the writer writes it
            # before the task looks again
            seg = writer.active_segment
            at = seg.read(20, 1)[0].position + 70
            fd = os.open(seg.log_path, os.O_RDWR)
            good = os.pread(fd, 1, at)
            check = _ChunkReader._rewritten_since_planning

            def write_then_check(self, position):
                os.pwrite(fd, good, at)
                return check(self, position)

            monkeypatch.setattr(_ChunkReader, "_rewritten_since_planning", write_then_check)
        for fail_on_data_loss in (True, False):
            if shape == "batch_still_being_written":
                os.pwrite(fd, bytes([good[0] ^ 0xFF]), at)
            if fail_on_data_loss:
                with pytest.raises(OffsetOutOfRangeError, match="rewritten since planning") as e:
                    _read_plan(plan, True)
                assert e.value.path.endswith("00000000000000000000.log")
                continue
            mdir = tmp_path / "m"
            table = _read_plan(plan, False, str(mdir))
            offs = table.column("offset").to_pylist()
            # the rows before the change are read
            assert offs == list(range(20 if shape == "batch_still_being_written" else 10))
            stats = [json.loads(p.read_text()) for p in mdir.iterdir()]
            assert sum(s["rewritten_chunks_skipped"] for s in stats) == 1
            assert sum(s["corrupt_batches_skipped"] for s in stats) == 0
        if shape == "batch_still_being_written":
            os.close(fd)
    finally:
        writer.close()


def test_damage_found_by_a_read_stays_corruption_under_the_rewrite_check(tmp_path):
    """The same flipped byte left in the file (damage, not a write in progress): still
    ``CorruptRecordError`` at the batch's position."""
    def refill(writer, Record):
        for first in range(10, 40, 10):
            writer.append([Record(b"k%d" % o, b"y%d-" % o * 40, TS0 + o)
                           for o in range(first, first + 10)])

    writer, plan = _plan_then_rewrite(tmp_path, refill)
    try:
        seg = writer.active_segment
        pos = seg.read(20, 1)[0].position
        fd = os.open(seg.log_path, os.O_RDWR)
        os.pwrite(fd, bytes([os.pread(fd, 1, pos + 70)[0] ^ 0xFF]), pos + 70)
        os.close(fd)
        with pytest.raises(CorruptRecordError, match="CRC") as e:
            _read_plan(plan, True)
        assert e.value.position == pos
    finally:
        writer.close()


@pytest.mark.parametrize("damage", ["entry_offset", "truncated"])
def test_timestamp_resolution_over_a_damaged_time_index(tmp_path, damage):
    """A ``.timeindex`` entry whose offset was damaged while the entries stay increasing
    passes the layout's check; the search started at that offset and resolved a later one.
    The entry is now checked against the batch holding its offset (as the engine's search
    does); a truncated index is covered by the tail walk. Every timestamp resolves to the
    first record at or after it."""
    from kafkalog.config import LogConfig
    from kafkalog.log import Log
    from kafkalog.records.record import Record
    from kafkalog.spark.planning import offset_for_timestamp

    # every odd record is late (an old timestamp): time entries only at even offsets, so
    # an entry's offset can move one up and the entries stay increasing
    stamps = [TS0 + 10 * o if o % 2 == 0 else TS0 for o in range(80)]
    d = tmp_path / "t-0"
    with Log.open(d, LogConfig(index_interval_bytes=0, segment_bytes=3000)) as log:
        for t in stamps:
            log.append([Record(b"k", b"v", t)])
        assert len(log.segments) >= 2
    ti = sorted(d.glob("*.timeindex"))[0]
    raw = bytearray(ti.read_bytes())
    if damage == "truncated":
        raw = raw[:24]
    else:
        k = next(i for i in range(len(raw) // 12)
                 if int.from_bytes(raw[12 * i:12 * i + 8], "big") == TS0 + 100)
        off = int.from_bytes(raw[12 * k + 8:12 * k + 12], "big")
        assert off == 10 and int.from_bytes(raw[12 * k + 20:12 * k + 24], "big") == 12
        raw[12 * k + 8:12 * k + 12] = (off + 1).to_bytes(4, "big")  # now says 11
    ti.write_bytes(bytes(raw))
    info = describe_partition("t", 0, str(d))
    targets = sorted({TS0 + 10 * o + dt for o in range(80) for dt in (-5, 0)})
    want = [next((o for o, t in enumerate(stamps) if t >= x), None) for x in targets]
    assert [offset_for_timestamp(info, x) for x in targets] == want
