"""Index and time-index files written by ``Log`` are byte-identical to a plain model of Kafka's
rules (tests/reference/kafka_index_model.py), for live appends and for rebuilds."""

from __future__ import annotations

import os
import random
from pathlib import Path

import numpy as np
import pytest
from kafkalog.native.scan import scan_entries

from kafkalog import Record, encode_batch
from kafkalog.clock import ManualClock
from kafkalog.config import LONG_MAX, LogConfig
from kafkalog.log import Log
from tests.reference.kafka_index_model import Append, model_live_appends, model_rebuild


def _timestamps(rng: random.Random, pattern: str, n: int, state: list[int]) -> list[int]:
    out = []
    for _ in range(n):
        if pattern == "increasing":
            state[0] += rng.randint(0, 50)
            out.append(state[0])
        elif pattern == "decreasing":
            state[0] -= rng.randint(0, 50)
            out.append(state[0])
        elif pattern == "none":
            out.append(-1)
        else:  # mixed: -1, repeats, jumps back and forth
            out.append(rng.choice([-1, state[0], state[0] + rng.randint(-500, 500)]))
    return out


def _random_batches(seed: int, pattern: str, count: int, max_size: int) -> list[list[Record]]:
    """``count`` batches of varied shape, each encoding to at most ``max_size`` bytes."""
    rng = random.Random(seed)
    state = [1_700_000_000_000]
    batches: list[list[Record]] = []
    while len(batches) < count:
        n = rng.choice([1, 1, 2, 3, 10, 40])
        ts = _timestamps(rng, pattern, n, state)
        recs = [
            Record(None if rng.random() < 0.3 else b"k%d" % rng.randint(0, 99),
                   rng.randbytes(rng.choice([0, 5, 60, 300])), t)
            for t in ts
        ]
        if len(encode_batch(recs)) <= max_size:
            batches.append(recs)
    return batches


def _expected_append(first: int, records: list[Record]) -> Append:
    size = len(encode_batch(records, base_offset=first))
    max_ts = max(r.timestamp for r in records)
    last = first + len(records) - 1
    return Append(first, last, size, max_ts, last)


def _config(segment_bytes: int, interval: int, index_bytes: int) -> LogConfig:
    return LogConfig(segment_bytes=segment_bytes, index_interval_bytes=interval,
                     segment_index_bytes=index_bytes, segment_ms=LONG_MAX)


def _files(d: Path, suffix: str) -> dict[int, bytes]:
    return {int(p.name.split(".")[0]): p.read_bytes() for p in sorted(d.glob("*" + suffix))}


CASES = [
    # (pattern, segment_bytes, index_interval_bytes, segment_index_bytes, batches)
    ("increasing", 4000, 100, 10485760, 120),
    ("decreasing", 3000, 0, 10485760, 80),
    ("mixed", 2500, 200, 10485760, 150),
    ("none", 5000, 50, 10485760, 60),
    ("mixed", 1_000_000, 4096, 10485760, 200),
    ("increasing", 1_000_000, 0, 64, 120),  # 8 offset slots / 5 time slots: index-full rolls
    ("mixed", 20_000, 10, 100, 150),
]


@pytest.mark.parametrize("pattern,segment_bytes,interval,index_bytes,count", CASES)
def test_live_append_indexes_match_model(tmp_path: Path, pattern: str, segment_bytes: int,
                                         interval: int, index_bytes: int, count: int) -> None:
    batches = _random_batches(segment_bytes + interval, pattern, count, segment_bytes)
    config = _config(segment_bytes, interval, index_bytes)
    expected = []
    with Log.open(tmp_path, config, clock=ManualClock()) as log:
        for recs in batches:
            expected.append(_expected_append(log.log_end_offset, recs))
            info = log.append(recs)
            assert (info.first_offset, info.last_offset) == (expected[-1].first_offset,
                                                             expected[-1].last_offset)
    model = model_live_appends(expected, segment_bytes=segment_bytes, index_interval=interval,
                               index_bytes=index_bytes)
    indexes, time_indexes = _files(tmp_path, ".index"), _files(tmp_path, ".timeindex")
    assert sorted(indexes) == [s.base_offset for s in model]
    assert len(model) > (1 if segment_bytes < 100_000 or index_bytes < 1000 else 0)
    for seg in model:
        assert indexes[seg.base_offset] == seg.index_file(), seg.base_offset
        assert time_indexes[seg.base_offset] == seg.time_index_file(), seg.base_offset
    # some entries at all, or the comparison would prove little
    assert sum(len(s.offset_entries) for s in model) > 0 or pattern == "none"


@pytest.mark.parametrize("pattern,segment_bytes,interval,index_bytes,count", CASES[:4])
def test_follower_multi_batch_appends_match_model(tmp_path: Path, pattern: str,
                                                  segment_bytes: int, interval: int,
                                                  index_bytes: int, count: int) -> None:
    """``append_batches`` with several batches per call: one Kafka append per call (keyed by
    its last offset, time entry at the last offset of the first batch holding the max)."""
    rng = random.Random(7)
    batches = _random_batches(11, pattern, count, segment_bytes // 4)
    config = _config(segment_bytes, interval, index_bytes)
    expected = []
    offset = 0
    with Log.open(tmp_path, config, clock=ManualClock()) as log:
        i = 0
        while i < len(batches):
            k = rng.randint(1, 4)
            group = batches[i:i + k]
            i += k
            data, first = b"", offset
            best_ts, best_off = -1, -1
            for recs in group:
                data += encode_batch(recs, base_offset=offset, partition_leader_epoch=3)
                offset += len(recs)
                ts = max(r.timestamp for r in recs)
                if ts > best_ts:
                    best_ts, best_off = ts, offset - 1
            expected.append(Append(first, offset - 1, len(data), best_ts, best_off))
            log.append_batches(data)
            offset += rng.choice([0, 0, 5])  # gaps, as after compaction
        assert log.leader_epoch_entries == [(3, 0)]
    model = model_live_appends(expected, segment_bytes=segment_bytes, index_interval=interval,
                               index_bytes=index_bytes)
    indexes, time_indexes = _files(tmp_path, ".index"), _files(tmp_path, ".timeindex")
    assert sorted(indexes) == [s.base_offset for s in model]
    for seg in model:
        assert indexes[seg.base_offset] == seg.index_file()
        assert time_indexes[seg.base_offset] == seg.time_index_file()


@pytest.mark.parametrize("pattern,segment_bytes,interval,index_bytes,count", CASES)
def test_rebuilt_indexes_match_model(tmp_path: Path, pattern: str, segment_bytes: int,
                                     interval: int, index_bytes: int, count: int) -> None:
    """Deleting every index and reopening rebuilds them with the per-batch rule."""
    batches = _random_batches(3, pattern, count, segment_bytes)
    config = _config(segment_bytes, interval, index_bytes)
    with Log.open(tmp_path, config, clock=ManualClock()) as log:
        for recs in batches:
            log.append(recs)
    for p in list(tmp_path.glob("*.index")) + list(tmp_path.glob("*.timeindex")):
        os.unlink(p)
    with Log.open(tmp_path, config, clock=ManualClock()) as log:
        assert len(log.loaded.recovered_segments) == len(log.segments)
    for p in sorted(tmp_path.glob("*.log")):
        base = int(p.name.split(".")[0])
        sc = scan_entries(np.frombuffer(p.read_bytes(), np.uint8))
        model = model_rebuild(
            list(zip(sc["sizes"].tolist(), sc["last_offsets"].tolist(),
                     sc["max_timestamps"].tolist())),
            base_offset=base, index_interval=interval, index_bytes=index_bytes)
        assert p.with_suffix(".index").read_bytes() == model.index_file()
        assert p.with_suffix(".timeindex").read_bytes() == model.time_index_file()
