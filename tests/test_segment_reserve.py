"""Blocks a writable segment reserves past its end (``fallocate(FALLOC_FL_KEEP_SIZE)``, see
``kafkalog.segment.RESERVE_AHEAD_BYTES``): the file's length never shows them, and roll,
close and truncation give them back without changing the file's modification time."""

from __future__ import annotations

import errno
import os

import pytest

from kafkalog import Record
from kafkalog import segment as segment_module
from kafkalog.clock import ManualClock
from kafkalog.config import LogConfig
from kafkalog.log import Log

AHEAD = segment_module.RESERVE_AHEAD_BYTES
PAGE = 4096


def _allocated(path: os.PathLike[str] | str) -> int:
    return os.stat(path).st_blocks * 512


def _records(n: int, size: int = 1000) -> list[Record]:
    return [Record(b"k%d" % i, bytes([i % 251]) * size, 1_000 + i) for i in range(n)]


def _open(tmp_path: os.PathLike[str], **cfg: object) -> Log:
    return Log.open(tmp_path, LogConfig(**cfg), clock=ManualClock(10_000))


@pytest.fixture
def reserving(tmp_path: os.PathLike[str]) -> None:
    if segment_module._reserve_blocks is None:
        pytest.skip("the optional C extension is not built (or KAFKALOG_NO_EXTENSIONS): "
                    "segments do not reserve blocks")
    probe = os.path.join(tmp_path, "probe")
    fd = os.open(probe, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        err = segment_module._reserve_blocks(fd, 0, PAGE)
    finally:
        os.close(fd)
        os.unlink(probe)
    if err:
        pytest.skip(f"this filesystem does not reserve blocks ({errno.errorcode.get(err, err)})")


def _mtime_back(path: os.PathLike[str], seconds: int = 3_600) -> int:
    """Set the file's modification time an hour back (a segment appended to long ago)."""
    st = os.stat(path)
    mtime = st.st_mtime_ns - seconds * 10**9
    os.utime(path, ns=(st.st_atime_ns, mtime))
    return mtime


def test_appends_reserve_ahead_and_close_gives_back(tmp_path, reserving) -> None:
    log = _open(tmp_path)
    log.append(_records(100))
    seg = log.active_segment
    path = seg.log_path
    # the length is the committed size: readers, Kafka and copies see no reservation
    assert os.stat(path).st_size == seg.size
    assert _allocated(path) >= min(seg.size + AHEAD // 2, AHEAD)
    mtime = _mtime_back(path)
    log.close()
    assert os.stat(path).st_size > 0
    assert _allocated(path) <= -(-os.stat(path).st_size // PAGE) * PAGE
    assert os.stat(path).st_mtime_ns == mtime  # retention by mtime unchanged by the trim
    with _open(tmp_path) as again:
        assert [r.value for r in again.records()] == [r.value for r in _records(100)]


def test_roll_and_truncation_give_back(tmp_path, reserving) -> None:
    log = _open(tmp_path)
    log.append(_records(50))
    first = log.active_segment
    assert _allocated(first.log_path) >= AHEAD
    log.roll()
    assert os.stat(first.log_path).st_size == first.size
    assert _allocated(first.log_path) <= -(-first.size // PAGE) * PAGE
    log.append(_records(10))
    log.append(_records(40))
    second = log.active_segment
    assert _allocated(second.log_path) >= AHEAD
    log.truncate_to(second.base_offset + 10)  # drops the second batch
    assert second.size > 0
    assert _allocated(second.log_path) <= -(-second.size // PAGE) * PAGE
    log.append(_records(5))  # reserves again from the new end
    assert _allocated(second.log_path) >= AHEAD
    assert log.log_end_offset == second.base_offset + 15
    log.close()


def test_reservation_stops_at_the_segment_size(tmp_path, reserving) -> None:
    log = _open(tmp_path, segment_bytes=64 * 1024)
    log.append(_records(3))
    path = log.active_segment.log_path
    assert _allocated(path) <= 64 * 1024
    log.close()


def test_a_crash_leftover_is_given_back_by_the_next_writer(tmp_path, reserving) -> None:
    log = _open(tmp_path)
    log.append(_records(20))
    path = log.active_segment.log_path
    size = log.active_segment.size
    log.close()
    # what a crash leaves: blocks reserved past the end (the writer's close never ran)
    fd = os.open(path, os.O_RDWR)
    try:
        assert segment_module._reserve_blocks(fd, size, 4 * AHEAD) == 0
    finally:
        os.close(fd)
    assert _allocated(path) >= 4 * AHEAD
    assert os.stat(path).st_size == size
    with _open(tmp_path) as again:
        again.append(_records(1))
    assert _allocated(path) <= -(-os.stat(path).st_size // PAGE) * PAGE


def test_no_reservation_where_it_fails(tmp_path, monkeypatch) -> None:
    calls = []

    def unsupported(fd: int, offset: int, length: int) -> int:
        calls.append((offset, length))
        return errno.EOPNOTSUPP

    monkeypatch.setattr(segment_module, "_reserve_blocks", unsupported)
    log = _open(tmp_path, segment_bytes=256 * 1024)
    for _ in range(20):  # several segments
        log.append(_records(30))
    segments = len(log.segments)
    assert segments > 2
    assert len(calls) == segments  # one try per segment, then it writes as it goes
    log.close()
    with _open(tmp_path) as again:
        assert sum(1 for _ in again.records()) == 600
