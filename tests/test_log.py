"""``Log`` behaviour: appends (leader and follower), rolls, reads, offsets by time, truncation,
log start offset, flushing, retention, concurrency with readers."""

from __future__ import annotations

import os
import random
import threading
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from kafkalog.native.scan import scan_entries

from kafkalog import Record, encode_batch, iter_batches
from kafkalog.clock import ManualClock
from kafkalog.config import LONG_MAX, LogConfig
from kafkalog.errors import (
    CorruptRecordError,
    InvalidOffsetError,
    InvalidTimestampError,
    LogClosedError,
    OffsetOutOfRangeError,
    RecordBatchTooLargeError,
)
from kafkalog.log import Log

T0 = 1_700_000_000_000


def recs(n: int, ts: int = T0, size: int = 10, key: bytes | None = None) -> list[Record]:
    return [Record(key, b"%d" % i + b"x" * size, ts + i) for i in range(n)]


def segment_bases(d: Path) -> list[int]:
    return sorted(int(p.name.split(".")[0]) for p in d.glob("*.log"))


# -- appending -------------------------------------------------------------------------------


def test_append_assigns_offsets_and_reports(tmp_path: Path) -> None:
    with Log.open(tmp_path, clock=ManualClock()) as log:
        a = log.append(recs(3), partition_leader_epoch=2)
        b = log.append([Record(b"k", b"v", T0 - 5)])
        assert (a.first_offset, a.last_offset, a.max_timestamp) == (0, 2, T0 + 2)
        assert (a.record_count, a.batch_count, a.log_append_time) == (3, 1, -1)
        assert (b.first_offset, b.last_offset, b.max_timestamp) == (3, 3, T0 - 5)
        assert log.log_end_offset == 4
        [batch] = list(iter_batches(log.read(0, max_bytes=1)))  # first batch whole
        assert batch.partition_leader_epoch == 2
        assert log.leader_epoch_entries == [(2, 0)]


def test_append_tuples_and_missing_timestamps_use_the_clock(tmp_path: Path) -> None:
    clock = ManualClock(T0 + 123)
    with Log.open(tmp_path, clock=clock) as log:
        log.append([(b"k", b"v"), (None, b"w", 5)])
        assert [(r.key, r.value, r.timestamp) for r in log.records()] == [
            (b"k", b"v", T0 + 123), (None, b"w", 5)]


def test_log_append_time_stamps_batches(tmp_path: Path) -> None:
    clock = ManualClock(T0 + 999)
    cfg = LogConfig(message_timestamp_type="LogAppendTime")
    with Log.open(tmp_path, cfg, clock=clock) as log:
        info = log.append(recs(2, ts=5))
        assert info.log_append_time == T0 + 999 and info.max_timestamp == T0 + 999
        [b] = list(iter_batches(log.read(0)))
        assert b.timestamp_type == "LogAppendTime" and b.is_valid
        assert [r.timestamp for r in b] == [T0 + 999, T0 + 999]
        assert log.offset_for_timestamp(T0 + 999) == 0


def test_max_message_bytes_rejects_before_writing(tmp_path: Path) -> None:
    cfg = LogConfig(max_message_bytes=200)
    with Log.open(tmp_path, cfg) as log:
        log.append(recs(1))
        size = log.size
        with pytest.raises(RecordBatchTooLargeError) as e:
            log.append(recs(1, size=300))
        assert "max.message.bytes" in str(e.value)
        assert log.size == size and log.log_end_offset == 1
        # follower appends skip the check (Kafka's appendAsFollower: ignoreRecordSize=true;
        # see tests/test_kafka_conformance.py)
        small, big = encode_batch(recs(1), base_offset=1), encode_batch(recs(1, size=300),
                                                                         base_offset=2)
        log.append_batches(small + big)
        assert log.log_end_offset == 3


def test_append_larger_than_a_segment_is_rejected(tmp_path: Path) -> None:
    cfg = LogConfig(segment_bytes=500)
    with Log.open(tmp_path, cfg) as log:
        with pytest.raises(RecordBatchTooLargeError) as e:
            log.append(recs(1, size=600))
        assert "segment.bytes" in str(e.value)
        assert log.log_end_offset == 0


def test_append_batches_keeps_offsets_and_rejects_bad_input(tmp_path: Path) -> None:
    with Log.open(tmp_path) as log:
        b1 = encode_batch(recs(2), base_offset=10, partition_leader_epoch=1)
        b2 = encode_batch(recs(1), base_offset=15, partition_leader_epoch=4)
        info = log.append_batches(b1 + b2)
        assert (info.first_offset, info.last_offset) == (10, 15)
        assert log.log_end_offset == 16
        assert [r.offset for r in log.records(10)] == [10, 11, 15]
        assert log.leader_epoch_entries == [(1, 10), (4, 15)]
        size = log.size
        # below the log end offset
        with pytest.raises(InvalidOffsetError):
            log.append_batches(encode_batch(recs(1), base_offset=15))
        # not increasing inside the data
        with pytest.raises(InvalidOffsetError):
            log.append_batches(encode_batch(recs(2), base_offset=20) +
                               encode_batch(recs(1), base_offset=21))
        # bad CRC: one flipped byte in the second batch; the first is not written either
        bad = bytearray(encode_batch(recs(1), base_offset=30))
        bad[-1] ^= 1
        with pytest.raises(CorruptRecordError) as e:
            log.append_batches(encode_batch(recs(1), base_offset=20) + bytes(bad))
        assert "crc" in str(e.value).lower()
        # partial trailing batch
        with pytest.raises(CorruptRecordError):
            log.append_batches(encode_batch(recs(1), base_offset=20)[:-3])
        assert log.size == size and log.log_end_offset == 16


def test_columnar_append_from_table_and_columns(tmp_path: Path) -> None:
    from kafkalog.records.columnar import decode_columns

    n = 2500
    table = pa.table({
        "key": pa.array([b"k%d" % i for i in range(n)], pa.binary()),
        "value": pa.array([b"v" * (i % 50) for i in range(n)], pa.binary()),
        "timestamp": pa.array([T0 + i for i in range(n)], pa.int64()),
    })
    cfg = LogConfig(segment_bytes=50_000, index_interval_bytes=1000, segment_ms=LONG_MAX)
    with Log.open(tmp_path, cfg, clock=ManualClock()) as log:
        info = log.append(table, records_per_batch=100, partition_leader_epoch=7)
        assert (info.first_offset, info.last_offset, info.batch_count) == (0, n - 1, 25)
        cols = decode_columns(b"".join(s.log_path.read_bytes() for s in log.segments))
        info2 = log.append(cols)  # RecordColumns in: the same records again
        assert info2.first_offset == n and log.log_end_offset == 2 * n
        t = log.read_table()
        assert t.num_rows == 2 * n
        assert t.column("value").to_pylist()[:n] == table.column("value").to_pylist()
        assert t.column("offset").to_pylist() == list(range(2 * n))
        assert len(log.segments) > 2
        assert log.leader_epoch_entries == [(7, 0)]
        # a table without timestamps gets the clock's time
        info3 = log.append(pa.table({"key": pa.array([None], pa.binary()),
                                     "value": pa.array([b"z"], pa.binary())}))
        assert info3.max_timestamp == log._clock.milliseconds()


# -- rolling ---------------------------------------------------------------------------------


def test_roll_by_size_names_segments_by_base_offset(tmp_path: Path) -> None:
    cfg = LogConfig(segment_bytes=1000)
    with Log.open(tmp_path, cfg) as log:
        sizes = []
        for _ in range(20):
            log.append(recs(2, size=100))
            sizes.append(log.active_segment.size)
        bases = [s.base_offset for s in log.segments]
        assert bases == segment_bases(tmp_path)
        assert all(s.size <= 1000 for s in log.segments)
        assert len(bases) > 3
    # rolled segments' indexes are trimmed; closed active one too
    for p in tmp_path.glob("*.index"):
        assert p.stat().st_size % 8 == 0 and p.stat().st_size < 1000


def test_roll_by_time_uses_first_batch_timestamp_and_jitter(tmp_path: Path) -> None:
    clock = ManualClock(T0)
    cfg = LogConfig(segment_ms=1000, segment_jitter_ms=300)
    rng = random.Random(1)
    expected_jitter = abs(random.Random(1).randint(-(2**31), 2**31 - 1)) % 300
    with Log.open(tmp_path, cfg, clock=clock, rng=rng) as log:
        assert log.active_segment.roll_jitter_ms == expected_jitter
        log.append(recs(1, ts=T0))
        limit = 1000 - expected_jitter
        log.append(recs(1, ts=T0 + limit))  # waited exactly the limit: no roll
        assert len(log.segments) == 1
        log.append(recs(1, ts=T0 + limit + 1))  # beyond: roll before this append
        assert [s.base_offset for s in log.segments] == [0, 2]


def test_roll_by_wall_clock_when_timestamps_missing(tmp_path: Path) -> None:
    clock = ManualClock(T0)
    cfg = LogConfig(segment_ms=1000)
    with Log.open(tmp_path, cfg, clock=clock) as log:
        log.append([Record(None, b"a", -1)])
        clock.advance(1000)
        log.append([Record(None, b"b", -1)])
        assert len(log.segments) == 1
        clock.advance(1)
        log.append([Record(None, b"c", -1)])
        assert [s.base_offset for s in log.segments] == [0, 2]


def test_roll_on_full_index_and_explicit_roll(tmp_path: Path) -> None:
    cfg = LogConfig(segment_index_bytes=24, index_interval_bytes=0)  # 3 offset / 1 time slots
    with Log.open(tmp_path, cfg) as log:
        for i in range(10):
            log.append(recs(1, ts=T0 + i))
        assert len(log.segments) > 2
        n = len(log.segments)
        log.roll()
        log.roll()  # the empty active segment already starts at the log end offset
        assert len(log.segments) == n + 1
        assert log.active_segment.base_offset == log.log_end_offset


def test_relative_offset_overflow_rolls(tmp_path: Path) -> None:
    with Log.open(tmp_path) as log:
        log.append_batches(encode_batch(recs(1), base_offset=0))
        log.append_batches(encode_batch(recs(1), base_offset=2**31))
        assert [s.base_offset for s in log.segments] == [0, 2**31]


def test_preallocate_creates_full_size_log_and_trims_on_roll(tmp_path: Path) -> None:
    cfg = LogConfig(segment_bytes=4096, preallocate=True)
    with Log.open(tmp_path, cfg) as log:
        log.append(recs(1))
        first = log.segments[0].log_path
        assert first.stat().st_size == 4096
        for _ in range(40):
            log.append(recs(1, size=200))
        assert first.stat().st_size == log.segments[0].size < 4096
        assert log.active_segment.log_path.stat().st_size == 4096
        want = [r.value for r in log.records()]
    with Log.open(tmp_path, cfg) as log:
        assert [r.value for r in log.records()] == want
    for p in tmp_path.glob("*.log"):
        assert p.stat().st_size < 4096


# -- reading ---------------------------------------------------------------------------------


def test_read_fetch_semantics(tmp_path: Path) -> None:
    cfg = LogConfig(index_interval_bytes=100)
    with Log.open(tmp_path, cfg) as log:
        for i in range(20):
            log.append(recs(5, ts=T0 + i * 10))
        # from the middle of a batch: the whole batch from its start
        data = log.read(12, max_bytes=1)
        [b] = list(iter_batches(data))
        assert (b.base_offset, b.last_offset) == (10, 14)
        # a byte budget: whole batches plus maybe a cut tail
        data = log.read(0, max_bytes=500)
        assert len(data) == 500
        offs = [b.base_offset for b in iter_batches(data)]
        assert offs[0] == 0 and len(offs) >= 2
        # max_offset: stop before the batch holding it
        data = log.read(0, max_bytes=10**6, max_offset=30)
        assert [b.base_offset for b in iter_batches(data)] == [0, 5, 10, 15, 20, 25]
        assert log.read(100) == b""
        assert log.read(40, max_offset=40) == b""
        with pytest.raises(OffsetOutOfRangeError):
            log.read(101)
        assert [r.offset for r in log.records(7, 13)] == list(range(7, 13))
        t = log.read_table(7, 13)
        assert t.column("offset").to_pylist() == list(range(7, 13))


def test_read_across_segments(tmp_path: Path) -> None:
    cfg = LogConfig(segment_bytes=600)
    with Log.open(tmp_path, cfg) as log:
        for i in range(30):
            log.append(recs(3, ts=T0 + i))
        assert len(log.segments) > 3
        assert [r.offset for r in log.records()] == list(range(90))
        # a read starting in a later segment
        base = log.segments[2].base_offset
        [first, *_] = list(iter_batches(log.read(base)))
        assert first.base_offset == base
        assert log.read_table(base - 1, base + 2).column("offset").to_pylist() == \
            [base - 1, base, base + 1]


def test_offset_for_timestamp_matches_brute_force(tmp_path: Path) -> None:
    rng = random.Random(5)
    cfg = LogConfig(segment_bytes=2000, index_interval_bytes=200, segment_ms=LONG_MAX)
    with Log.open(tmp_path, cfg) as log:
        for _ in range(80):
            log.append([Record(None, b"x" * rng.randint(0, 40), rng.choice(
                [-1, rng.randint(T0, T0 + 5000)])) for _ in range(rng.randint(1, 4))])
        all_recs = list(log.records())
        segs = log.segments
        for target in [T0 - 1, T0, T0 + 1, T0 + 2500, T0 + 4999, T0 + 5000, T0 + 6000]:
            # Kafka: the first segment whose max timestamp reaches the target, then the first
            # record there with a timestamp >= target
            want = None
            for s in segs:
                if s.largest_timestamp >= target:
                    want = next((r.offset for r in all_recs
                                 if s.base_offset <= r.offset and r.timestamp >= target
                                 and (s is segs[-1] or r.offset < segs[segs.index(s) + 1]
                                      .base_offset)), None)
                    break
            assert log.offset_for_timestamp(target) == want, target
        assert log.offset_for_timestamp(-2) == 0
        assert log.offset_for_timestamp(-1) == log.log_end_offset
        targets = [T0 - 1, T0 + 17, T0 + 1234, T0 + 4321, T0 + 9999, -2, -1] + \
            [r.timestamp for r in all_recs[::7]]
        assert log.offsets_for_timestamps(targets) == \
            [log.offset_for_timestamp(t) for t in targets]


# -- truncation, start offset, retention -------------------------------------------------------


def test_truncate_to(tmp_path: Path) -> None:
    cfg = LogConfig(segment_bytes=500)
    with Log.open(tmp_path, cfg) as log:
        for i in range(20):
            log.append(recs(2, ts=T0 + i), partition_leader_epoch=i // 5)
        assert log.truncate_to(100) is False
        assert log.truncate_to(15) is True  # offset 15 is mid-batch [14, 15]: batch goes whole
        assert log.log_end_offset == 14  # the kept data's next offset
        assert [r.offset for r in log.records()] == list(range(14))
        assert log.leader_epoch_entries == [(0, 0), (1, 10)]
        assert all(s.base_offset <= 15 for s in log.segments)
        log.append(recs(1))
        assert [r.offset for r in log.records(13)] == [13, 14]
        assert log.end_offset_for_epoch(0) == (0, 10)
        assert log.end_offset_for_epoch(1) == (1, 15)
        log.truncate_to(0)
        assert (log.log_start_offset, log.log_end_offset) == (0, 0)
        assert list(log.records()) == []
    with Log.open(tmp_path, cfg) as log:
        assert log.log_end_offset == 0 and log.leader_epoch_entries == []


def test_delete_records_before_and_start_offset_retention(tmp_path: Path) -> None:
    clock = ManualClock(T0)
    cfg = LogConfig(segment_bytes=500, file_delete_delay_ms=1000)
    with Log.open(tmp_path, cfg, clock=clock) as log:
        for i in range(20):
            log.append(recs(2, ts=T0 + i), partition_leader_epoch=i // 5)
        assert log.delete_records_before(25) == 25
        with pytest.raises(OffsetOutOfRangeError):
            log.read(24)
        assert [r.offset for r in log.records()][0] == 25
        assert log.leader_epoch_entries == [(2, 25), (3, 30)]
        with pytest.raises(OffsetOutOfRangeError):
            log.delete_records_before(41)
        before = segment_bases(tmp_path)
        deleted = log.enforce_retention()
        assert deleted > 0
        assert log.segments[0].base_offset <= 25 < (log.segments[1].base_offset
                                                    if len(log.segments) > 1 else 99)
        # renamed, not yet removed
        assert len(list(tmp_path.glob("*.log.deleted"))) == deleted
        clock.advance(1000)
        log.enforce_retention()
        assert list(tmp_path.glob("*.deleted")) == []
        assert segment_bases(tmp_path) == before[deleted:]
    with Log.open(tmp_path, cfg, clock=clock) as log:
        assert log.log_start_offset == 25


def test_retention_by_time_and_size(tmp_path: Path) -> None:
    clock = ManualClock(T0)
    cfg = LogConfig(segment_bytes=500, retention_ms=10_000, file_delete_delay_ms=0,
                    segment_ms=LONG_MAX)
    with Log.open(tmp_path, cfg, clock=clock) as log:
        for i in range(30):
            log.append(recs(2, ts=T0 + i * 1000))
        before = [(s.base_offset, s.largest_timestamp) for s in log.segments]
        now = T0 + 20_000
        clock.set(now)
        old = [b for b, ts in before if now - ts > 10_000]
        assert 0 < len(old) < len(before)
        assert [b for b, _ in before[:len(old)]] == old  # timestamps grow: a prefix
        assert log.enforce_retention() == len(old)
        assert [s.base_offset for s in log.segments] == [b for b, _ in before[len(old):]]
        assert log.log_start_offset == before[len(old)][0]
        assert segment_bases(tmp_path) == [b for b, _ in before[len(old):]]
    cfg = LogConfig(segment_bytes=500, retention_bytes=1200, file_delete_delay_ms=0,
                    retention_ms=-1)
    d = tmp_path / "size"
    with Log.open(d, cfg, clock=clock) as log:
        for _ in range(30):
            log.append(recs(2, ts=T0))
        sizes = [s.size for s in log.segments]
        log.enforce_retention()
        kept = [s.size for s in log.segments]
        dropped = len(sizes) - len(kept)
        assert dropped > 0 and kept == sizes[dropped:]
        assert sum(kept) >= 1200 > sum(kept) - kept[0]  # dropping one more would go below


def test_retention_of_everything_rolls_a_new_segment(tmp_path: Path) -> None:
    clock = ManualClock(T0)
    cfg = LogConfig(retention_ms=1, file_delete_delay_ms=0)
    with Log.open(tmp_path, cfg, clock=clock) as log:
        log.append(recs(3, ts=T0))
        clock.advance(10)
        assert log.enforce_retention() == 1
        assert [s.base_offset for s in log.segments] == [3]
        assert (log.log_start_offset, log.log_end_offset) == (3, 3)
        assert log.enforce_retention() == 0  # the empty active segment is never deleted


def test_retention_under_a_reader_gives_out_of_range(tmp_path: Path) -> None:
    clock = ManualClock(T0)
    cfg = LogConfig(segment_bytes=300, retention_ms=1, file_delete_delay_ms=0)
    with Log.open(tmp_path, cfg, clock=clock) as log:
        for _ in range(10):
            log.append(recs(2, ts=T0))
        it = log.records()
        assert next(it).offset == 0
        seg = log.segments[0]
        clock.advance(10)
        log.enforce_retention()
        with pytest.raises(OffsetOutOfRangeError):
            seg.read(0, 100)
        with pytest.raises(OffsetOutOfRangeError):
            list(it)


@pytest.mark.parametrize("gone", [1, 3])
def test_a_bounded_read_in_retentions_window_is_out_of_range_not_empty(
        tmp_path: Path, gone: int) -> None:
    """Retention takes segments out of the map before it raises the log start offset; a read
    of [start, end) that starts in that window, with every segment up to ``end`` gone (3) or
    only the first (1), must not come back empty (a consumer would take that as "nothing up
    to end"): Kafka's LocalLog.read throws when no segment holds the start offset."""
    cfg = LogConfig(segment_bytes=300)
    with Log.open(tmp_path, cfg) as log:
        for _ in range(10):
            log.append(recs(2, ts=T0))
        bases = [s.base_offset for s in log.segments]
        assert len(bases) > gone
        start, end = bases[0] + 1, bases[gone]  # inside the first segment; end at a later base
        for b in bases[:gone]:
            log._segments.remove(b)  # the window: out of the map, log start not yet raised
        with pytest.raises(OffsetOutOfRangeError, match="deleted under the reader"):
            list(log.records(start, end))
        with pytest.raises(OffsetOutOfRangeError):
            log.read_table(start, end)


@pytest.mark.parametrize("shape", ["records", "tuples", "arrow"])
def test_append_enforces_the_timestamp_bounds_of_the_topic(tmp_path: Path, shape: str) -> None:
    """message.timestamp.before/after.max.ms apply to Log.append as to a produce
    (LogValidator.validateTimestamp): out-of-range records refuse the whole call."""
    clock = ManualClock(T0)
    cfg = LogConfig.from_properties({"message.timestamp.after.max.ms": "1000",
                                     "message.timestamp.before.max.ms": "5000"})

    def batch(*stamps: int) -> object:
        if shape == "records":
            return [Record(None, b"v", t) for t in stamps]
        if shape == "tuples":
            return [(None, b"v", t) for t in stamps]
        return pa.table({"key": pa.array([None] * len(stamps), pa.binary()),
                         "value": pa.array([b"v"] * len(stamps)),
                         "timestamp": pa.array(list(stamps), pa.int64())})

    with Log.open(tmp_path, cfg, clock=clock) as log:
        log.append(batch(T0 - 5000, T0, T0 + 1000))  # the bounds are inclusive
        with pytest.raises(InvalidTimestampError, match=r"Timestamp \d+ of message with "
                           r"offset 4 is out of range") as e:
            log.append(batch(T0, T0 + 1001))
        assert [i for i, _ in e.value.record_errors] == [1]
        with pytest.raises(InvalidTimestampError):
            log.append(batch(T0 - 5001))
        assert log.log_end_offset == 3  # nothing of the refused calls was written
        clock.advance(10_000)
        log.append(batch(T0 + 10_000))
        assert log.log_end_offset == 4


@pytest.mark.parametrize("unit, raw, want", [
    ("s", 1_700_000_000, 1_700_000_000_000),
    ("ms", 1_700_000_000_123, 1_700_000_000_123),
    ("us", 1_700_000_000_123_999, 1_700_000_000_123),
    ("ns", 1_700_000_000_123_999_999, 1_700_000_000_123),
    ("us", -1_001, -2),  # before 1970: floored, as Instant.toEpochMilli
])
def test_append_of_an_arrow_timestamp_column_with_nulls(tmp_path: Path, unit: str, raw: int,
                                                        want: int) -> None:
    """A null timestamp is the clock's now; a finer unit floors to ms (as encode_columns),
    also when the column has nulls (a safe cast refused sub-millisecond digits) and chunks."""
    col = pa.chunked_array([pa.array([raw, None], pa.timestamp(unit)),
                            pa.array([None, raw], pa.timestamp(unit))])
    table = pa.table({"key": pa.array([b"a", b"b", b"c", b"d"]),
                      "value": pa.array([b"1", b"2", b"3", b"4"]), "timestamp": col})
    with Log.open(tmp_path, clock=ManualClock(T0)) as log:
        log.append(table)
        assert [r.timestamp for r in log.records()] == [want, T0, T0, want]


# -- flushing and lifecycle -------------------------------------------------------------------


def test_flush_advances_recovery_point_and_flush_messages(tmp_path: Path) -> None:
    cfg = LogConfig(flush_messages=5)
    with Log.open(tmp_path, cfg) as log:
        log.append(recs(3))
        assert log.recovery_point == 0
        log.append(recs(2))
        assert log.recovery_point == 5
        log.append(recs(1))
        log.flush()
        assert log.recovery_point == 6


def test_flush_ms_uses_the_clock(tmp_path: Path) -> None:
    clock = ManualClock(T0)
    with Log.open(tmp_path, LogConfig(flush_ms=100), clock=clock) as log:
        log.append(recs(1))
        assert log.recovery_point == 0
        clock.advance(100)
        log.append(recs(1))  # the due flush happens before this append
        assert log.recovery_point == 1


def test_closed_log_refuses_work(tmp_path: Path) -> None:
    log = Log.open(tmp_path)
    log.close()
    log.close()
    with pytest.raises(LogClosedError):
        log.append(recs(1))
    with pytest.raises(LogClosedError):
        log.read(0)


def test_close_trims_and_reopen_extends_active_indexes(tmp_path: Path) -> None:
    cfg = LogConfig(index_interval_bytes=0)
    with Log.open(tmp_path, cfg) as log:
        log.append(recs(1))
        log.append(recs(1))
        idx = log.active_segment.index_path
        assert idx.stat().st_size == cfg.segment_index_bytes
    assert idx.stat().st_size == 8
    assert (tmp_path / ".kafka_cleanshutdown").exists()
    with Log.open(tmp_path, cfg) as log:
        assert not (tmp_path / ".kafka_cleanshutdown").exists()
        assert idx.stat().st_size == cfg.segment_index_bytes
        log.append(recs(1))  # Kafka: a reopened segment counts from 0, so no entry yet
        log.append(recs(1))
    assert idx.stat().st_size == 16


# -- concurrency ------------------------------------------------------------------------------


def test_reader_thread_sees_whole_batches_only(tmp_path: Path) -> None:
    cfg = LogConfig(segment_bytes=20_000)
    stop = threading.Event()
    errors: list[BaseException] = []
    seen = [0]
    with Log.open(tmp_path, cfg) as log:
        log.append(recs(1))

        def reader() -> None:
            try:
                while not stop.is_set():
                    data = log.read(0, max_bytes=10**9)
                    sc = scan_entries(np.frombuffer(data, np.uint8))
                    assert sc["stop_reason"] == 0  # whole batches, nothing partial
                    for b in iter_batches(data):
                        assert b.is_valid
                    seen[0] = max(seen[0], int(sc["count"]))
            except BaseException as e:  # noqa: BLE001 - reported in the main thread
                errors.append(e)

        t = threading.Thread(target=reader)
        t.start()
        for i in range(400):
            log.append(recs(3, size=200))
            if i % 20 == 0:
                time.sleep(0.002)  # let the reader run while the log grows and rolls
        stop.set()
        t.join()
    assert not errors, errors
    assert seen[0] > 1


def test_read_only_reader_in_another_process_view(tmp_path: Path) -> None:
    with Log.open(tmp_path) as writer:
        writer.append(recs(2))
        reader = Log.open(tmp_path, read_only=True)
        try:
            assert [r.offset for r in reader.records()] == [0, 1]
            writer.append(recs(1))
            # a partial batch at the end of the file (a write in progress) is not visible
            with open(writer.active_segment.log_path, "ab") as f:
                f.write(encode_batch(recs(1), base_offset=3)[:20])
            reader.refresh()
            assert [r.offset for r in reader.records()] == [0, 1, 2]
            with pytest.raises(PermissionError):
                reader.append(recs(1))
        finally:
            reader.close()
        os.truncate(writer.active_segment.log_path, writer.active_segment.size)


def test_read_only_refresh_leaves_files_that_are_not_segments_alone(tmp_path: Path) -> None:
    """A ``.log`` whose name is not an offset, or a directory named like a segment, is not a
    segment: the loader skips them, and so does refresh (it used to raise ValueError on the
    first and open the second)."""
    with Log.open(tmp_path, LogConfig(segment_bytes=2_000)) as writer:
        writer.append(recs(5, size=300))
        writer.roll()
        writer.append(recs(2))
        reader = Log.open(tmp_path, read_only=True)
        try:
            (tmp_path / "notes.log").write_bytes(b"not a segment")
            (tmp_path / "00000000000000000003.log").mkdir()
            writer.append(recs(3))
            reader.refresh()
            assert [s.base_offset for s in reader.segments] == [0, 5]
            assert [r.offset for r in reader.records()] == list(range(10))
        finally:
            reader.close()
        (tmp_path / "00000000000000000003.log").rmdir()
        (tmp_path / "notes.log").unlink()


def test_read_only_refresh_takes_one_stat_per_segment(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With nothing new, a refresh costs one ``stat`` per segment and one more of the last
    (checked again after its tail is read), and no ``fstat`` of a ``.log``: a reader polling a
    log of many segments pays for the check that each name still holds its file, nothing
    else (the last segment's index is read again to find its tail)."""

    with Log.open(tmp_path, LogConfig(segment_bytes=1_000)) as writer:
        for _ in range(12):
            writer.append(recs(3, size=300))
        reader = Log.open(tmp_path, read_only=True)
        try:
            n = len(reader.segments)
            assert n >= 10
            reader.refresh()
            log_fds = {s._fd for s in reader.segments}
            stats: list[str] = []
            fstats: list[int] = []
            real_stat, real_fstat = os.stat, os.fstat

            def stat(path: object, *a: object, **k: object) -> os.stat_result:
                stats.append(os.fspath(path))  # type: ignore[arg-type]
                return real_stat(path, *a, **k)  # type: ignore[arg-type]

            def fstat(fd: int) -> os.stat_result:
                fstats.append(fd)
                return real_fstat(fd)

            monkeypatch.setattr(os, "stat", stat)
            monkeypatch.setattr(os, "fstat", fstat)
            reader.refresh()
            monkeypatch.undo()
            logs = [p for p in stats if p.endswith(".log")]
            assert len(logs) == n + 1 and len(set(logs)) == n
            assert not log_fds & set(fstats)
            assert [r.offset for r in reader.records()] == list(range(36))
        finally:
            reader.close()


def test_read_only_refresh_sees_segments_the_cleaner_replaced(tmp_path: Path) -> None:
    """Compaction swaps new files in under the same names: the reader's descriptors still read
    the old files, reads through them stop (the name no longer holds the file), and a refresh
    opens the new ones. Here the cleaned segment 0 (segments 0 and 2 cleaned into one) is
    *longer* than the file the reader has open, so only the file's identity tells them
    apart, not its size."""
    cfg = LogConfig(cleanup_policy="compact")
    with Log.open(tmp_path, cfg) as writer:
        for keys in ((b"a", b"b"), (b"a", b"c")):
            writer.append([Record(k, k * 100, T0) for k in keys])
            writer.roll()
        reader = Log.open(tmp_path, cfg, read_only=True)
        try:
            old_size = reader.segments[0].size
            assert [r.offset for r in reader.records()] == [0, 1, 2, 3]
            writer.clean(now=T0 + 100)
            assert [s.base_offset for s in writer.segments][:1] == [0]
            assert writer.segments[0].size > old_size  # the new file is longer
            with pytest.raises(OffsetOutOfRangeError):
                list(reader.records())
            reader.refresh()
            assert [(r.offset, r.key) for r in reader.records()] == [
                (1, b"b"), (2, b"a"), (3, b"c")] == [(r.offset, r.key) for r in writer.records()]
            assert reader.read_table().column("offset").to_pylist() == [1, 2, 3]
        finally:
            reader.close()


def test_reader_process_sees_whole_batches_while_another_process_appends(
        tmp_path: Path) -> None:
    import subprocess
    import sys
    import textwrap

    cfg = "LogConfig(segment_bytes=20_000)"
    with Log.open(tmp_path, LogConfig(segment_bytes=20_000)) as log:
        log.append(recs(1))
    writer = textwrap.dedent(f"""
        from kafkalog import Record
        from kafkalog.config import LogConfig
        from kafkalog.log import Log
        with Log.open({str(tmp_path)!r}, {cfg}) as log:
            for i in range(300):
                log.append([Record(None, b"%d" % i + b"x" * 300, 1) for _ in range(3)])
    """)
    proc = subprocess.Popen([sys.executable, "-c", writer])
    reader = Log.open(tmp_path, LogConfig(segment_bytes=20_000), read_only=True)
    try:
        rounds = 0
        while True:
            done = proc.poll() is not None
            try:
                reader.refresh()
                offsets = [r.offset for r in reader.records()]
            except OffsetOutOfRangeError:
                continue  # a segment file vanished between listing and reading: retry
            assert offsets == list(range(len(offsets)))
            assert len(offsets) == reader.log_end_offset
            rounds += 1
            if done:
                break
        assert proc.returncode == 0
        assert reader.log_end_offset == 1 + 900 and rounds > 1
    finally:
        reader.close()


def test_read_table_in_a_thread_while_the_writer_truncates(tmp_path: Path) -> None:
    """Bulk reads map the .log; truncation waits for them instead of pulling pages away."""
    stop = threading.Event()
    errors: list[BaseException] = []
    with Log.open(tmp_path, LogConfig(segment_bytes=50_000)) as log:
        for _ in range(50):
            log.append(recs(10, size=100))

        def reader() -> None:
            try:
                while not stop.is_set():
                    try:
                        t = log.read_table()
                    except OffsetOutOfRangeError:
                        continue  # the log shrank under the call: a clean refusal
                    offs = t.column("offset").to_pylist()
                    assert offs == sorted(offs)
            except BaseException as e:  # noqa: BLE001 - reported in the main thread
                errors.append(e)

        th = threading.Thread(target=reader)
        th.start()
        for i in range(30):
            log.truncate_to(log.log_end_offset - 15)
            log.append(recs(10, size=100))
            if i % 5 == 0:
                time.sleep(0.002)
        stop.set()
        th.join()
    assert not errors, errors


@pytest.mark.parametrize("compression", ["none", "gzip", "lz4", "zstd"])
def test_segments_we_write_read_back_with_kafka_python(tmp_path: Path, compression: str) -> None:
    """Peer check both ways: batches built by kafka-python are appended as a follower, ours as
    a leader (LogAppendTime); kafka-python's MemoryRecords then walks our .log files with
    every CRC valid and the same records."""
    kafka_mr = pytest.importorskip("kafka.record.memory_records")
    kafka_dr = pytest.importorskip("kafka.record.default_records")
    codec_ids = {"none": 0, "gzip": 1, "lz4": 3, "zstd": 4}

    def peer_batch(base: int, i: int) -> bytes:
        b = kafka_dr.DefaultRecordBatchBuilder(
            magic=2, compression_type=codec_ids[compression], is_transactional=False,
            producer_id=-1, producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
        for j in range(3):
            b.append(j, T0 + j, b"p%d" % i, b"w" * (i + j), [])
        data = bytearray(b.build())
        data[0:8] = base.to_bytes(8, "big")  # baseOffset is outside the CRC
        return bytes(data)

    clock = ManualClock(T0 + 5)
    cfg = LogConfig(segment_bytes=700, message_timestamp_type="LogAppendTime")
    with Log.open(tmp_path, cfg, clock=clock) as log:
        for i in range(20):
            if i % 2:
                log.append_batches(peer_batch(log.log_end_offset, i))
            else:
                log.append([Record(b"k%d" % i, b"v" * i, T0 + i, [("h", b"x")])],
                           compression=compression, partition_leader_epoch=3)
        want = [(r.offset, r.key, r.value, r.timestamp) for r in log.records()]
        assert len(log.segments) > 1 and len(want) == 10 + 30
    got = []
    for p in sorted(tmp_path.glob("*.log")):
        mr = kafka_mr.MemoryRecords(p.read_bytes())
        while mr.has_next():
            batch = mr.next_batch()
            assert batch.validate_crc()
            got.extend((r.offset, r.key, r.value, r.timestamp) for r in batch)
    assert got == want
    assert {t for _, k, _, t in got if k.startswith(b"k")} == {T0 + 5}  # stamped by us
    assert {t for _, k, _, t in got if k.startswith(b"p")} == {T0, T0 + 1, T0 + 2}


@pytest.mark.parametrize("kwargs, error", [
    ({"records_per_batch": 1000.0}, TypeError),
    ({"records_per_batch": True}, TypeError),
    ({"producer_id": False}, TypeError),
    ({"partition_leader_epoch": 2**31}, ValueError),
    ({"producer_epoch": -(2**15) - 1}, ValueError),
    ({"records_per_batch": 0}, ValueError),
    ({"compression": True}, ValueError),
    ({"compression": "brotli"}, ValueError),
])
def test_append_rejects_header_args_it_cannot_stamp(tmp_path: Path, kwargs: dict,
                                                    error: type) -> None:
    """Values equal to valid ones but of another type, and values a batch header field
    cannot hold, are refused before anything is written (plain ints in range pass the check
    in one expression: this is what that shortcut must not let through)."""
    with Log.open(tmp_path) as log:
        with pytest.raises(error):
            log.append([Record(b"k", b"v", 1)], **kwargs)
        assert log.log_end_offset == 0
        info = log.append([Record(b"k", b"v", 1)], compression="ZSTD", producer_epoch=np.int16(-1),
                          partition_leader_epoch=3)
        assert info.last_offset == 0
        assert [r.value for r in log.records()] == [b"v"]


def test_retention_deletes_the_producer_snapshots_of_the_segments_it_deletes(
        tmp_path: Path) -> None:
    """UnifiedLog.deleteSegments calls deleteProducerSnapshots for the deleted segments: no
    ``<base>.snapshot`` of a deleted segment is left behind."""
    cfg = LogConfig.from_properties({"segment.bytes": "600", "retention.bytes": "100",
                                     "file.delete.delay.ms": "0"})
    now = int(time.time() * 1000)
    with Log.open(tmp_path, cfg) as log:
        for i in range(40):
            log.append([Record(b"k", b"v%d" % i, now)], producer_id=9, producer_epoch=0,
                       base_sequence=i)
        log.await_scheduled_flushes()
        bases = [s.base_offset for s in log.segments]
        assert any((tmp_path / f"{b:020d}.snapshot").exists() for b in bases[1:-1])
        log.enforce_retention()
        start = log.log_start_offset
        assert start > bases[1]
        left = sorted(int(p.name.split(".")[0]) for p in tmp_path.glob("*.snapshot"))
        assert all(b >= start for b in left), (start, left)
