"""Staged index entries (``LogSegment.append``): the index files after flush, roll and close are
byte for byte those of writing every entry at once; in between, what a reader of the files sees
is a consistent prefix; errors come from the same append as without staging."""

from __future__ import annotations

import random
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from kafkalog import Record, encode_batch
from kafkalog import segment as segment_module
from kafkalog.clock import ManualClock
from kafkalog.config import LONG_MAX, LogConfig
from kafkalog.errors import IndexFullError, InvalidOffsetError
from kafkalog.log import Log
from kafkalog.segment import LogSegment

T0 = 1_700_000_000_000


def _batches(seed: int, count: int) -> list[tuple[bytes, int, int, int]]:
    """(data, last offset, max timestamp, its offset) per batch, offsets from 0, timestamps
    going up and down (the running max decides the time entries)."""
    rng = random.Random(seed)
    out, offset, ts = [], 0, T0
    for _ in range(count):
        n = rng.choice([1, 2, 5])
        stamps = [ts + rng.randint(-30, 40) for _ in range(n)]
        ts = max(stamps)
        recs = [Record(None, rng.randbytes(rng.choice([10, 80, 300])), t) for t in stamps]
        data = encode_batch(recs, base_offset=offset)
        best = max(range(n), key=lambda i: (stamps[i], -i))
        out.append((data, offset + n - 1, stamps[best], offset + n - 1))
        offset += n + rng.choice([0, 0, 3])
    return out


def _append_all(seg: LogSegment, batches: list[tuple[bytes, int, int, int]],
                on_step: object = None) -> None:
    for i, (data, last, max_ts, _) in enumerate(batches):
        seg.append(last, max_ts, last, data)
        if on_step is not None:
            on_step(i)  # type: ignore[operator]


def _index_prefix(path: Path, entry_size: int) -> bytes:
    """What a reader in another process takes as the index: whole slots up to the first
    zeroed one after slot 0 (the preallocated tail)."""
    data = path.read_bytes()
    out = bytearray()
    for i in range(0, len(data) - entry_size + 1, entry_size):
        slot = data[i:i + entry_size]
        if i and slot == bytes(entry_size):
            break
        out += slot
    return bytes(out)


@pytest.mark.parametrize("interval", [0, 50, 700])
def test_staged_indexes_equal_immediate_writes(tmp_path: Path, interval: int,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    batches = _batches(interval + 1, 700)
    config = LogConfig(index_interval_bytes=interval, segment_ms=LONG_MAX)
    files = {}
    for name, staged in (("staged", 256), ("immediate", 0)):
        monkeypatch.setattr(segment_module, "STAGED_INDEX_ENTRIES", staged)
        d = tmp_path / name
        d.mkdir()
        seg = LogSegment.open(d, 0, config, ManualClock(T0))
        flushed = []

        def step(i: int, seg: LogSegment = seg, flushed: list = flushed) -> None:
            if i in (100, 101, 400):
                seg.flush()  # after a flush the files hold every entry so far
                flushed.append((seg.index_path.read_bytes(), seg.time_index_path.read_bytes()))

        _append_all(seg, batches, step)
        seg.close()
        files[name] = (flushed, seg.index_path.read_bytes(), seg.time_index_path.read_bytes())
    assert files["staged"] == files["immediate"]
    assert len(files["staged"][1]) > 8 * 20  # entries at all, or this proves little


def test_reader_sees_consistent_prefix(tmp_path: Path) -> None:
    """Between writes of the staged entries, the index files hold a prefix of the final
    entries, each pointing at a batch already committed."""
    batches = _batches(5, 1500)
    seg = LogSegment.open(tmp_path, 0, LogConfig(index_interval_bytes=0), ManualClock(T0))
    snapshots = []

    def step(i: int) -> None:
        if i % 97 == 0:
            snapshots.append((seg.size, _index_prefix(seg.index_path, 8),
                              _index_prefix(seg.time_index_path, 12)))

    _append_all(seg, batches, step)
    seg.close()
    final_index = seg.index_path.read_bytes()
    final_time = seg.time_index_path.read_bytes()
    starts = set(np.cumsum([0] + [len(b[0]) for b in batches]).tolist())
    assert any(len(s[1]) < 8 * (97 * k) for k, s in enumerate(snapshots) if k)  # staged
    for size, index, time_index in snapshots:
        # an empty index reads as one zeroed slot (base offset at position 0: still valid)
        index = b"" if index == bytes(8) else index
        time_index = b"" if time_index == bytes(12) else time_index
        assert final_index.startswith(index) and final_time.startswith(time_index)
        for i in range(0, len(index), 8):
            pos = int.from_bytes(index[i + 4:i + 8], "big")
            assert pos in starts and pos < size


def test_errors_come_from_the_same_append(tmp_path: Path) -> None:
    seg = LogSegment.open(tmp_path, 0, LogConfig(index_interval_bytes=0), ManualClock(T0))
    batches = _batches(9, 40)
    _append_all(seg, batches)
    data, last, max_ts, _ = batches[5]  # an offset below the last indexed one
    with pytest.raises(InvalidOffsetError):
        seg.append(last, max_ts, last, data)
    seg.close()


@pytest.mark.parametrize("index_bytes", [24, 48, 120])
def test_full_index_rolls_and_raises_as_before(tmp_path: Path, index_bytes: int,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Tiny indexes: should_roll answers and the append that raises IndexFullError are the
    same with staging as with every entry written at once."""
    cfg = LogConfig(index_interval_bytes=0, segment_index_bytes=index_bytes)
    batches = _batches(3, 30)
    runs = {}
    for staged in (256, 0):
        monkeypatch.setattr(segment_module, "STAGED_INDEX_ENTRIES", staged)
        d = tmp_path / str(staged)
        d.mkdir()
        seg = LogSegment.open(d, 0, cfg, ManualClock(T0))
        answers: list[object] = []
        for data, last, max_ts, _ in batches:
            answers.append(seg.should_roll(max_timestamp_in_messages=max_ts,
                                           max_offset_in_messages=last, messages_size=1,
                                           now=T0))
            try:
                seg.append(last, max_ts, last, data)
            except IndexFullError:
                answers.append("full")
                break
        seg.close()
        runs[staged] = (answers, seg.index_path.read_bytes(), seg.time_index_path.read_bytes())
    assert runs[256] == runs[0]
    assert "full" in runs[0][0] and True in runs[0][0]


def _append_while_reading(log: Log, batches: list, seed: int) -> list[tuple[int, int]]:
    """Append ``batches`` while another thread looks up positions in the active segment (each
    lookup writes the staged entries first); the ``(target, position)`` answers it got."""
    stop = threading.Event()
    seen: list[tuple[int, int]] = []

    def reader() -> None:
        rng = random.Random(seed)
        while not stop.is_set():
            target = rng.randint(0, max(1, log.log_end_offset))
            seen.append((target, log.segments[-1].lookup_position(target)))

    t = threading.Thread(target=reader)
    t.start()
    try:
        for data, _, _, _ in batches:
            log.append_batches(data)
    finally:
        stop.set()
        t.join()
    return seen


def test_reader_thread_lookups_while_appending(tmp_path: Path) -> None:
    """Lookups from another thread (which write the staged entries) while the writer appends:
    every answer is the start of a committed batch at or before the target."""
    cfg = LogConfig(index_interval_bytes=0, segment_ms=LONG_MAX)
    batches = _batches(11, 2000)
    starts = {}
    pos = 0
    for data, last, _, _ in batches:
        starts[pos] = last
        pos += len(data)
    with Log.open(tmp_path, cfg, clock=ManualClock(T0)) as log:
        seen = _append_while_reading(log, batches, seed=1)
    assert seen
    assert [(target, p) for target, p in seen if p not in starts] == []


def test_reader_thread_writing_staged_entries_never_fails_an_append(tmp_path: Path) -> None:
    """A reader thread writing the staged entries while the writer stages more: the writer's
    append must not fail (it did, with ``BufferError``, when the reader held a numpy view of
    the staged array: the writer's ``extend`` then could not resize it, after its bytes were
    written). GIL switches forced every microsecond make the interleaving likely: before the
    fix about half of these runs failed."""
    cfg = LogConfig(index_interval_bytes=0, segment_ms=LONG_MAX)
    batches = _batches(11, 2000)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for run in range(8):
            with Log.open(tmp_path / str(run), cfg, clock=ManualClock(T0)) as log:
                _append_while_reading(log, batches, seed=2)
                assert log.log_end_offset == batches[-1][1] + 1
    finally:
        sys.setswitchinterval(interval)
