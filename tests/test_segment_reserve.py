"""Blocks a writable segment reserves past its end (``fallocate(FALLOC_FL_KEEP_SIZE)``, see
``kafkalog.segment.RESERVE_AHEAD_BYTES``): only once the segment holds that much, never seen
in the file's length, and given back by roll, close and truncation without changing the
file's modification time."""

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
VALUE = 10_000


def _allocated(path: os.PathLike[str] | str) -> int:
    return os.stat(path).st_blocks * 512


def _whole_pages(path: os.PathLike[str] | str) -> int:
    """The blocks a file of this length needs: nothing reserved past its end."""
    return -(-os.stat(path).st_size // PAGE) * PAGE


def _records(nbytes: int) -> list[Record]:
    """About ``nbytes`` of records (10 kB values)."""
    return [Record(b"k%d" % i, bytes([i % 251]) * VALUE, 1_000 + i)
            for i in range(max(1, nbytes // VALUE))]


def _append(log: Log, nbytes: int) -> list[Record]:
    """Append about ``nbytes`` of records in batches under ``max.message.bytes``."""
    out = []
    while nbytes > 0:
        recs = _records(min(nbytes, AHEAD // 4))
        log.append(recs)
        out += recs
        nbytes -= AHEAD // 4
    return out


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


def test_small_segments_reserve_nothing(tmp_path, reserving) -> None:
    # reserved blocks never exceed what the active segment already holds: a log of many
    # small partitions holds none
    log = _open(tmp_path)
    for _ in range(8):
        log.append(_records(AHEAD // 10))
    path = log.active_segment.log_path
    assert log.active_segment.size < AHEAD
    assert _allocated(path) <= _whole_pages(path)
    log.close()


def test_appends_reserve_ahead_and_close_gives_back(tmp_path, reserving) -> None:
    log = _open(tmp_path)
    written = []
    for _ in range(3):
        recs = _records(AHEAD // 2)
        log.append(recs)
        written += recs
    seg = log.active_segment
    path = seg.log_path
    # the length is the committed size: readers, Kafka and copies see no reservation
    assert os.stat(path).st_size == seg.size > AHEAD
    assert _allocated(path) >= seg.size + AHEAD // 4
    mtime = _mtime_back(path)
    log.close()
    assert _allocated(path) <= _whole_pages(path)
    assert os.stat(path).st_mtime_ns == mtime  # retention by mtime unchanged by the trim
    with _open(tmp_path) as again:
        assert [r.value for r in again.records()] == [r.value for r in written]


def test_roll_and_truncation_give_back(tmp_path, reserving) -> None:
    log = _open(tmp_path)
    _append(log, 2 * AHEAD)
    first = log.active_segment
    assert _allocated(first.log_path) > _whole_pages(first.log_path)
    log.roll()
    log.await_scheduled_flushes(timeout=60)  # (the roll's trims are its flush's first step)
    assert os.stat(first.log_path).st_size == first.size
    assert _allocated(first.log_path) <= _whole_pages(first.log_path)
    kept = _append(log, 2 * AHEAD)
    log.append(_records(AHEAD // 2))
    second = log.active_segment
    assert _allocated(second.log_path) > _whole_pages(second.log_path)
    log.truncate_to(second.base_offset + len(kept))  # drops the second batch
    assert second.size > AHEAD
    assert _allocated(second.log_path) <= _whole_pages(second.log_path)
    log.append(_records(AHEAD // 10))  # reserves again from the new end
    assert _allocated(second.log_path) > _whole_pages(second.log_path)
    log.close()


def test_reservation_stops_at_the_segment_size(tmp_path, reserving) -> None:
    log = _open(tmp_path, segment_bytes=AHEAD + AHEAD // 2)
    _append(log, AHEAD + AHEAD // 10)
    path = log.active_segment.log_path
    assert log.active_segment.size > AHEAD
    assert _allocated(path) <= AHEAD + AHEAD // 2
    log.close()


def test_a_crash_leftover_is_given_back_by_the_next_writer(tmp_path, reserving) -> None:
    log = _open(tmp_path)
    _append(log, 2 * AHEAD)
    path = log.active_segment.log_path
    size = log.active_segment.size
    log.close()
    # what a crash leaves: blocks reserved past the end (the writer's close never ran)
    fd = os.open(path, os.O_RDWR)
    try:
        assert segment_module._reserve_blocks(fd, size, 4 * AHEAD) == 0
    finally:
        os.close(fd)
    assert _allocated(path) >= size + 4 * AHEAD
    assert os.stat(path).st_size == size
    with _open(tmp_path) as again:
        again.append(_records(VALUE))
    assert _allocated(path) <= _whole_pages(path)


def test_no_reservation_where_it_fails(tmp_path, monkeypatch) -> None:
    calls = []

    def unsupported(fd: int, offset: int, length: int) -> int:
        calls.append((offset, length))
        return errno.EOPNOTSUPP

    monkeypatch.setattr(segment_module, "_reserve_blocks", unsupported)
    log = _open(tmp_path, segment_bytes=2 * AHEAD)
    written = []
    for _ in range(12):  # several segments, each past AHEAD
        recs = _records(AHEAD // 2)
        log.append(recs)
        written += recs
    segments = len(log.segments)
    assert segments >= 3
    # one try per segment that grew past AHEAD (the active one may not have yet), then it
    # writes as it goes
    assert segments - 1 <= len(calls) <= segments
    log.close()
    with _open(tmp_path) as again:
        assert [r.value for r in again.records()] == [r.value for r in written]


def test_peer_batches_appended_one_per_call_read_back_by_the_peer(tmp_path, reserving,
                                                                  monkeypatch) -> None:
    # aiokafka's compiled builder makes ~16 KiB batches; each goes through the single-batch
    # fast path (the C header/CRC check: the general path is made to fail here) into a
    # segment that reserves ahead; aiokafka's reader then reads the file while it is open
    # and reserving: exactly the whole batches, CRCs valid, nothing past them
    aio_dr = pytest.importorskip("aiokafka.record.default_records")
    aio_mr = pytest.importorskip("aiokafka.record.memory_records")
    log = _open(tmp_path)

    def no_general_path(*args: object, **kw: object) -> None:
        raise AssertionError("a peer batch left the single-batch fast path")

    monkeypatch.setattr(Log, "_scan_whole", no_general_path)
    values = []
    for b in range(200):
        builder = aio_dr.DefaultRecordBatchBuilder(2, 0, False, -1, -1, -1, 1 << 30)
        for i in range(128):
            v = b"%06d-%03d" % (b, i) + b"v" * 100
            builder.append(i, timestamp=1_000 + b, key=b"k%d" % i, value=v, headers=[])
            values.append(v)
        batch = bytearray(builder.build())
        batch[0:8] = (log.log_end_offset).to_bytes(8, "big")  # (not under the CRC)
        log.append_batches(bytes(batch))
    seg = log.active_segment
    assert seg.size > AHEAD and _allocated(seg.log_path) > _whole_pages(seg.log_path)
    with open(seg.log_path, "rb") as f:
        data = f.read()
    assert len(data) == seg.size
    mr = aio_mr.MemoryRecords(data)
    read, offsets = [], []
    while (batch := mr.next_batch()) is not None:
        assert batch.validate_crc()
        for r in batch:
            read.append(r.value)
            offsets.append(r.offset)
    assert read == values
    assert offsets == list(range(len(values)))
    log.close()
