"""LogSegment on its own: shouldRoll, append index rule, translate/read, recover, truncate."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkalog import Record, encode_batch
from kafkalog.clock import ManualClock
from kafkalog.config import LogConfig
from kafkalog.errors import OffsetOverflowError
from kafkalog.segment import LogSegment
from kafkalog.segments import LogSegments

T0 = 1_700_000_000_000


def batch(base: int, n: int = 2, ts: int = T0, size: int = 20) -> bytes:
    return encode_batch([Record(None, b"v" * size, ts + i) for i in range(n)], base_offset=base)


def append(seg: LogSegment, data: bytes, base: int, n: int, ts: int) -> None:
    seg.append(base + n - 1, ts + n - 1, base + n - 1, data)


def test_should_roll_rules(tmp_path: Path) -> None:
    clock = ManualClock(T0)
    cfg = LogConfig(segment_bytes=1000, segment_ms=100, segment_index_bytes=24)
    seg = LogSegment.open(tmp_path, 50, cfg, clock, roll_jitter_ms=10)

    def roll(size: int = 10, ts: int = T0, last: int = 60, now: int = T0) -> bool:
        return seg.should_roll(max_timestamp_in_messages=ts, max_offset_in_messages=last,
                               messages_size=size, now=now)

    assert not roll()
    assert roll(last=50 + 2**31)  # relative offset overflow
    assert not roll(last=50 + 2**31 - 1)
    assert not roll(size=1000)
    assert roll(size=1001)  # 0 > 1000 - 1001: even an empty segment (Log rejects it earlier)
    data = batch(50)
    append(seg, data, 50, 2, T0)
    # size: roll when size > segment_bytes - incoming
    assert roll(size=1000 - len(data)) is False
    assert roll(size=1000 - len(data) + 1)
    # time: incoming max timestamp - first batch's max timestamp > segment_ms - jitter
    first_max = T0 + 1
    assert not roll(ts=first_max + 90)
    assert roll(ts=first_max + 91)
    # index full: 3 offset slots; the time index (2 slots) is full at 1 entry
    seg.offset_index.append(52, 10)
    seg.offset_index.append(53, 20)
    assert not roll()
    seg.offset_index.append(54, 30)
    assert roll()
    seg.offset_index.truncate()
    assert not roll()
    seg.time_index.maybe_append(T0, 51)
    assert roll()
    seg.close()


def test_wall_clock_roll_without_timestamps(tmp_path: Path) -> None:
    clock = ManualClock(T0)
    seg = LogSegment.open(tmp_path, 0, LogConfig(segment_ms=100), clock)
    seg.append(0, -1, -1, encode_batch([Record(None, b"x", -1)]))
    kw = dict(max_timestamp_in_messages=-1, max_offset_in_messages=1, messages_size=10)
    assert not seg.should_roll(now=T0 + 100, **kw)
    assert seg.should_roll(now=T0 + 101, **kw)
    seg.close()


_ROLL_STEP = st.tuples(
    st.sampled_from(["append", "append", "append", "truncate", "reopen", "tick"]),
    st.integers(1, 3),  # records in the batch
    st.integers(-5, 400),  # timestamp step from T0 (< 0: the batch has no timestamps)
    st.integers(0, 200),  # probe: incoming size
    st.integers(-1, 500),  # probe: incoming max timestamp step (-1: none)
    st.integers(-2, 2**31 + 2),  # probe: incoming last offset step from the base offset
)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(_ROLL_STEP, min_size=1, max_size=25),
       segment_bytes=st.integers(200, 3000), segment_ms=st.integers(1, 300),
       jitter=st.integers(0, 50), compact=st.booleans(), index_bytes=st.sampled_from([24, 120]))
def test_should_roll_common_case_agrees_with_the_full_checks(
        tmp_path_factory: pytest.TempPathFactory, steps: list, segment_bytes: int,
        segment_ms: int, jitter: int, compact: bool, index_bytes: int) -> None:
    """should_roll_positional decides the common case from kept limits; whatever the segment
    went through (appends with and without timestamps, truncation, reopening, time passing),
    its answer is the full checks' answer."""
    d = tmp_path_factory.mktemp("roll")
    clock = ManualClock(T0)
    cfg = LogConfig(segment_bytes=segment_bytes, segment_ms=segment_ms,
                    segment_index_bytes=index_bytes, index_interval_bytes=50,
                    cleanup_policy="compact" if compact else "delete",
                    max_compaction_lag_ms=segment_ms // 2 + 1)
    seg = LogSegment.open(d, 100, cfg, clock, roll_jitter_ms=jitter)
    next_offset = 100
    for action, n, ts_step, size, probe_ts, probe_last in steps:
        if action == "append":
            ts = -1 if ts_step < 0 else T0 + ts_step
            data = encode_batch([Record(None, b"v", ts) for _ in range(n)],
                                base_offset=next_offset)
            if not seg.should_roll_positional(ts, next_offset + n - 1, len(data),
                                              clock.milliseconds()):
                seg.append(next_offset + n - 1, ts, next_offset + n - 1 if ts >= 0 else -1,
                           data)
                next_offset += n
        elif action == "truncate":
            seg.truncate_to(100 + (next_offset - 100) // 2)
            next_offset = seg.read_next_offset()
        elif action == "reopen":
            seg.close()
            seg = LogSegment.open(d, 100, cfg, clock, roll_jitter_ms=jitter,
                                  file_already_exists=True)
        else:
            clock.advance(max(ts_step, 0))
        args = (T0 + probe_ts if probe_ts >= 0 else -1, 100 + probe_last, size,
                clock.milliseconds())
        fast = seg.should_roll_positional(*args)
        assert fast == seg._should_roll_full(*args), (action, args)
        assert seg.should_roll_positional(*args) == fast
    seg.close()


def test_append_index_rule_and_read(tmp_path: Path) -> None:
    cfg = LogConfig(index_interval_bytes=100)
    seg = LogSegment.open(tmp_path, 0, cfg, ManualClock())
    positions = []
    for i in range(10):
        data = batch(i * 2, ts=T0 + 100 * i)
        positions.append(seg.size)
        append(seg, data, i * 2, 2, T0 + 100 * i)
    # first append never indexed; each batch is 115 bytes > 100, so every later append is,
    # keyed by its last offset at its start position
    entries = [tuple(seg.offset_index.entry(i)) for i in range(seg.offset_index.entries)]
    assert len(data) == 115
    assert entries == [(2 * i + 1, positions[i]) for i in range(1, 10)]
    hit = seg.translate_offset(7)
    assert (hit.offset, hit.position) == (6, positions[3])
    found, data = seg.read(7, max_size=1)
    assert found.position == positions[3] and len(data) == found.size  # first batch whole
    assert seg.read(20, 100) is None
    assert seg.read_next_offset() == 20
    with pytest.raises(OffsetOverflowError):
        seg.append(2**31, T0, 2**31, batch(2**31))
    seg.close()
    assert seg.index_path.stat().st_size == 8 * len(entries)


def test_recover_truncates_and_rebuilds(tmp_path: Path) -> None:
    cfg = LogConfig(index_interval_bytes=0)
    seg = LogSegment.open(tmp_path, 0, cfg, ManualClock())
    for i in range(5):
        append(seg, batch(i * 2, ts=T0 + i), i * 2, 2, T0 + i)
    good = seg.size
    seg.close()
    with open(tmp_path / "00000000000000000000.log", "ab") as f:
        f.write(batch(10)[:-1])  # partial
    seg = LogSegment.open(tmp_path, 0, cfg, ManualClock(), file_already_exists=True)
    epochs = []
    result = seg.recover(lambda e, b: epochs.extend(zip(e.tolist(), b.tolist())))
    assert (result.valid_bytes, result.entries) == (good, 5)
    assert result.truncated_bytes == len(batch(10)) - 1
    assert epochs == [(-1, 0), (-1, 2), (-1, 4), (-1, 6), (-1, 8)]
    assert seg.offset_index.entries == 4  # the per-batch rule with interval 0
    assert seg.time_index.last_entry == (T0 + 5, 9)
    assert os.path.getsize(seg.log_path) == good
    seg.close()


def test_truncate_to_and_largest_timestamp(tmp_path: Path) -> None:
    cfg = LogConfig(index_interval_bytes=0)
    seg = LogSegment.open(tmp_path, 0, cfg, ManualClock())
    for i in range(5):
        append(seg, batch(i * 2, ts=T0 + 10 * i), i * 2, 2, T0 + 10 * i)
    assert seg.max_timestamp_so_far == T0 + 41
    removed = seg.truncate_to(5)  # batch [4, 5] goes whole
    assert removed > 0 and seg.read_next_offset() == 4
    assert seg.max_timestamp_so_far == T0 + 11
    assert seg.truncate_to(0) > 0 and seg.size == 0
    assert seg.offset_index.entries == 0 and seg.time_index.entries == 0
    seg.close()


def test_segments_ordering(tmp_path: Path) -> None:
    clock = ManualClock()
    segs = LogSegments()
    made = [LogSegment.open(tmp_path, b, LogConfig(), clock) for b in (30, 0, 10)]
    for s in made:
        segs.add(s)
    assert segs.base_offsets == (0, 10, 30)
    assert segs.floor_segment(29).base_offset == 10
    assert segs.floor_segment(-1) is None
    assert segs.higher_segment(10).base_offset == 30
    assert [s.base_offset for s in segs.values(12, 30)] == [10]
    assert [s.base_offset for s in segs.values(0, None)] == [0, 10, 30]
    assert segs.active.base_offset == 30
    assert [b in segs for b in (-1, 0, 5, 10, 30, 31)] == [False, True, False, True, True, False]
    assert "10" not in segs and None not in segs
    assert segs.remove(10).base_offset == 10 and 10 not in segs
    assert 0 in segs and 30 in segs
    for s in made:
        s.close()
