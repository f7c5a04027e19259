"""Crash recovery: whatever a crash leaves, reopening keeps exactly the valid prefix and
rebuilds correct indexes (checked against the plain model of Kafka's rebuild rule)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from kafkalog.native.scan import scan_entries

from kafkalog import Record
from kafkalog.clock import ManualClock
from kafkalog.config import LONG_MAX, LogConfig
from kafkalog.errors import LogLockedError
from kafkalog.files import CLEAN_SHUTDOWN_FILE
from kafkalog.log import Log
from tests.reference.kafka_index_model import model_rebuild

CONFIG = LogConfig(segment_bytes=3000, index_interval_bytes=150, segment_index_bytes=4096,
                   segment_ms=LONG_MAX)


def _records(i: int) -> list[Record]:
    n = 1 + i % 4
    return [Record(b"k%d" % i, b"v" * (10 + (i * 7) % 90), 1_700_000_000_000 + i * 10 - j)
            for j in range(n)]


def _build(d: Path, batches: int = 60) -> list[tuple[int, bytes]]:
    """A closed log of several segments; returns (offset, value) of every record."""
    with Log.open(d, CONFIG, clock=ManualClock()) as log:
        for i in range(batches):
            log.append(_records(i))
        log.append([Record(None, b"tail", 1_700_000_000_000)])  # a small last batch
        assert len(log.segments) >= 3
        return [(r.offset, r.value) for r in log.records()]


def _batches(path: Path) -> dict:
    return scan_entries(np.frombuffer(path.read_bytes(), np.uint8))


def _check_indexes(d: Path) -> None:
    """Every segment's index files equal the model's rebuild from its .log."""
    for p in sorted(d.glob("*.log")):
        sc = _batches(p)
        model = model_rebuild(
            list(zip(sc["sizes"].tolist(), sc["last_offsets"].tolist(),
                     sc["max_timestamps"].tolist())),
            base_offset=int(p.name.split(".")[0]), index_interval=CONFIG.index_interval_bytes)
        assert p.with_suffix(".index").read_bytes() == model.index_file(), p.name
        assert p.with_suffix(".timeindex").read_bytes() == model.time_index_file(), p.name


def _crash(d: Path) -> None:
    (d / CLEAN_SHUTDOWN_FILE).unlink()


def test_cut_active_segment_at_every_byte_of_last_batch(tmp_path: Path) -> None:
    d = tmp_path / "p"
    everything = _build(d)
    active = sorted(d.glob("*.log"))[-1]
    original = active.read_bytes()
    sc = _batches(active)
    last_pos, last_size = int(sc["positions"][-1]), int(sc["sizes"][-1])
    last_base = int(sc["base_offsets"][-1])
    assert last_pos + last_size == len(original)
    want = [rv for rv in everything if rv[0] < last_base]
    for cut in range(last_size):
        active.write_bytes(original[:last_pos + cut])
        _crash(d)
        with Log.open(d, CONFIG, clock=ManualClock()) as log:
            assert log.log_end_offset == last_base
            assert [(r.offset, r.value) for r in log.records()] == want
            assert active.stat().st_size == last_pos  # partial batch truncated away
        if cut % 37 == 0:
            _check_indexes(d)
    # the whole batch back: nothing lost
    active.write_bytes(original)
    _crash(d)
    with Log.open(d, CONFIG, clock=ManualClock()) as log:
        assert [(r.offset, r.value) for r in log.records()] == everything


@pytest.mark.parametrize("zeros", [1, 16, 17, 18, 4096])
def test_zero_filled_tail_is_truncated(tmp_path: Path, zeros: int) -> None:
    d = tmp_path / "p"
    everything = _build(d)
    active = sorted(d.glob("*.log"))[-1]
    size = active.stat().st_size
    with open(active, "ab") as f:
        f.write(b"\0" * zeros)  # what a preallocated segment leaves after a crash
    _crash(d)
    with Log.open(d, CONFIG, clock=ManualClock()) as log:
        [(_, result)] = log.loaded.recovered_segments
        assert result.truncated_bytes == zeros
        assert [(r.offset, r.value) for r in log.records()] == everything
    assert active.stat().st_size == size
    _check_indexes(d)
    with Log.open(d, CONFIG, clock=ManualClock()) as log:
        log.append([Record(None, b"after", 1)])
        assert [r.value for r in log.records(log.log_end_offset - 1)] == [b"after"]


def test_corrupt_batch_in_old_segment_truncates_and_deletes_later_segments(
        tmp_path: Path) -> None:
    d = tmp_path / "p"
    everything = _build(d)
    logs = sorted(d.glob("*.log"))
    victim = logs[1]
    sc = _batches(victim)
    k = int(sc["count"]) // 2
    pos = int(sc["positions"][k])
    data = bytearray(victim.read_bytes())
    data[pos + 70] ^= 0xFF  # a record byte: the CRC no longer matches
    victim.write_bytes(bytes(data))
    _crash(d)
    # recovery point 0 (as after a crash with no checkpoint): every segment is validated
    with Log.open(d, CONFIG, clock=ManualClock(), recovery_point=0) as log:
        cut = int(sc["base_offsets"][k])
        assert log.log_end_offset == cut
        assert [(r.offset, r.value) for r in log.records()] == \
            [rv for rv in everything if rv[0] < cut]
        assert len(log.segments) == 2
        assert log.loaded.deleted_segments == [int(p.name.split(".")[0]) for p in logs[2:]]
    assert victim.stat().st_size == pos
    assert sorted(p.name for p in d.glob("*.log")) == [p.name for p in logs[:2]]
    _check_indexes(d)


def test_missing_and_truncated_indexes_are_rebuilt(tmp_path: Path) -> None:
    d = tmp_path / "p"
    everything = _build(d)
    logs = sorted(d.glob("*.log"))
    logs[0].with_suffix(".index").unlink()
    idx = logs[1].with_suffix(".index")
    idx.write_bytes(idx.read_bytes()[:-3])  # not a multiple of 8: fails the sanity check
    tidx = logs[2].with_suffix(".timeindex")
    tidx.write_bytes(tidx.read_bytes()[:-5])
    with Log.open(d, CONFIG, clock=ManualClock()) as log:  # clean shutdown otherwise
        rebuilt = sorted(b for b, _ in log.loaded.recovered_segments)
        assert rebuilt == [int(p.name.split(".")[0]) for p in logs[:3]]
        assert [(r.offset, r.value) for r in log.records()] == everything
    _check_indexes(d)


def test_missing_time_index_is_created_empty(tmp_path: Path) -> None:
    d = tmp_path / "p"
    everything = _build(d)
    first = sorted(d.glob("*.log"))[0]
    first.with_suffix(".timeindex").unlink()
    with Log.open(d, CONFIG, clock=ManualClock()) as log:
        assert log.loaded.recovered_segments == []
        assert [(r.offset, r.value) for r in log.records()] == everything
    assert first.with_suffix(".timeindex").read_bytes() == b""


def test_stray_files_are_cleaned_up(tmp_path: Path) -> None:
    d = tmp_path / "p"
    everything = _build(d)
    (d / "00000000000000000000.log.deleted").write_bytes(b"x")
    (d / "00000000000000000007.index.deleted").write_bytes(b"x")
    (d / "00000000000000099999.log.cleaned").write_bytes(b"x")
    (d / "00000000000000099999.index").write_bytes(b"\0" * 8)  # index without a .log
    (d / "00000000000000099999.timeindex").write_bytes(b"")
    (d / "00000000000000088888.index").mkdir()  # not a file: left alone, as Kafka does
    (d / "00000000000000088888.index.deleted").mkdir()
    with Log.open(d, CONFIG, clock=ManualClock()) as log:
        assert [(r.offset, r.value) for r in log.records()] == everything
    names = os.listdir(d)
    assert [n for n in names if n.endswith((".deleted", ".cleaned"))] == [
        "00000000000000088888.index.deleted"]
    assert "00000000000000099999.index" not in names
    assert "00000000000000099999.timeindex" not in names
    assert "00000000000000088888.index" in names


def test_swap_file_replaces_the_segments_it_covers(tmp_path: Path) -> None:
    d = tmp_path / "p"
    everything = _build(d)
    logs = sorted(d.glob("*.log"))
    # a "cleaned" copy of the first two segments, as the cleaner swaps it in
    merged = logs[0].read_bytes() + logs[1].read_bytes()
    (d / (logs[0].name + ".swap")).write_bytes(merged)
    with Log.open(d, CONFIG, clock=ManualClock()) as log:
        assert [s.base_offset for s in log.segments][0] == int(logs[0].name.split(".")[0])
        assert logs[1].name not in os.listdir(d)
        assert [(r.offset, r.value) for r in log.records()] == everything
    _check_indexes(d)


def test_unclean_shutdown_recovers_only_from_the_recovery_point(tmp_path: Path) -> None:
    d = tmp_path / "p"
    _build(d)
    _crash(d)
    with Log.open(d, CONFIG, clock=ManualClock()) as log:
        # the standalone checkpoint says everything was flushed: only the active segment
        assert [b for b, _ in log.loaded.recovered_segments] == [log.segments[-1].base_offset]


def test_second_writer_is_refused_and_lock_is_released(tmp_path: Path) -> None:
    with Log.open(tmp_path, CONFIG) as log:
        with pytest.raises(LogLockedError) as e:
            Log.open(tmp_path, CONFIG)
        assert ".kafkalog.lock" in str(e.value)
        log.append([Record(None, b"x", 1)])
    with Log.open(tmp_path, CONFIG) as log:
        assert log.log_end_offset == 1
