"""Regression tests for engine bugs the reliability scenarios found (one test per bug)."""

from __future__ import annotations

import contextlib
import io
import json
import os

import pytest

from kafkalog.cli import main
from kafkalog.config import LogConfig
from kafkalog.log import Log
from kafkalog.records.record import Record
from tests.reliability.crash import verify_errors

T = 1_700_000_000_000


def _recs(lo: int, n: int) -> list[Record]:
    return [Record(b"k", b"v%d" % o, T + o) for o in range(lo, lo + n)]


def test_clean_shutdown_with_torn_last_batch_keeps_log_end_offset(tmp_path):
    """A torn last batch behind a clean-shutdown marker (media damage, or a marker written by a
    broken shutdown): the log end offset was computed by scanning from the last offset-index
    entry, which pointed at the torn batch, so the scan found nothing and the log end offset fell
    back to the segment's base offset; the next append then reused offsets already in the file.
    Found by the damage campaign (torn-every-byte/clean)."""
    cfg = LogConfig(index_interval_bytes=0)
    with Log.open(tmp_path, cfg) as log:
        for _ in range(3):
            log.append(_recs(log.log_end_offset, 5))
        end_of_third = log.active_segment.size
        log.append(_recs(15, 5))
        seg_path = log.active_segment.log_path
    size = os.path.getsize(seg_path)
    os.truncate(seg_path, size - 7)  # torn: the fourth batch lost its last 7 bytes
    with Log.open(tmp_path, cfg) as log:
        assert log.log_end_offset == 15
        assert log.active_segment.size == end_of_third
        info = log.append(_recs(15, 1))
        assert info.first_offset == 15
        assert [r.offset for r in log.records()] == list(range(16))
    assert verify_errors(tmp_path) == []


def _segmented_log(path, n_segments=3):
    """A log of several segments, one-record batches, every append indexed; closed cleanly."""
    cfg = LogConfig(index_interval_bytes=0, segment_bytes=1000)
    with Log.open(path, cfg) as log:
        while len(log.segments) < n_segments:
            log.append(_recs(log.log_end_offset, 1))
        leo = log.log_end_offset
    return cfg, leo


def test_missing_time_index_does_not_hide_later_segments(tmp_path):
    """Deleting a middle segment's ``.timeindex``: the loader creates it empty (as Kafka does),
    so the segment's largest timestamp becomes the file's mtime, and ``offset_for_timestamp`` for
    a record in a *later* segment stopped at that segment and answered None (Kafka does too).
    It now goes on to the next segment. Found by the damage campaign (index/clean: delete)."""
    cfg, leo = _segmented_log(tmp_path)
    first = sorted(tmp_path.glob("*.timeindex"))[0]
    first.unlink()
    with Log.open(tmp_path, cfg) as log:
        assert log.offset_for_timestamp(T + leo - 1) == leo - 1
        assert log.offset_for_timestamp(T + 1) == 1
    assert verify_errors(tmp_path) == []


def test_damaged_offset_index_entry_does_not_hide_records(tmp_path):
    """An ``.index`` entry whose position was damaged (the file still passes Kafka's sanity
    check, which looks at the last entry only) sent reads into the middle of a batch; the scan
    stopped there and ``records()`` silently skipped the rest of the segment. Reads now check
    that an entry starts at the indexed position and scan from the segment start otherwise.
    Found by the damage campaign (flip.index/clean)."""
    cfg, leo = _segmented_log(tmp_path, 2)
    idx = sorted(tmp_path.glob("*.index"))[0]
    data = bytearray(idx.read_bytes())
    assert len(data) >= 24
    data[8 + 7] ^= 0x05  # second entry: its position now points inside a batch
    idx.write_bytes(bytes(data))
    with Log.open(tmp_path, cfg) as log:
        assert [r.offset for r in log.records()] == list(range(leo))
        assert log.read_table().num_rows == leo
        for o in range(leo):
            assert log.offset_for_timestamp(T + o) == o


def test_non_monotonic_leader_epoch_checkpoint_is_cleaned_on_load(tmp_path):
    """A damaged ``leader-epoch-checkpoint`` whose entries are not increasing was loaded as is;
    Kafka's constructor assigns entry by entry (``checkpoint.read().forEach(this::assign)``),
    which drops the entries in the way. Found by the damage campaign (verify: epoch_order)."""
    cfg = LogConfig()
    with Log.open(tmp_path, cfg) as log:
        log.append(_recs(0, 5), partition_leader_epoch=1)
        log.append(_recs(5, 5), partition_leader_epoch=2)
    (tmp_path / "leader-epoch-checkpoint").write_text("0\n2\n1 9000\n2 5\n")
    with Log.open(tmp_path, cfg) as log:
        assert log.leader_epoch_entries == [(2, 5)]
    assert verify_errors(tmp_path) == []


def _first_at_or_after(timestamps: list[int], target: int) -> int | None:
    """The reference answer of a timestamp search: the first offset whose record's timestamp
    is >= ``target`` (offsets from 0)."""
    return next((o for o, t in enumerate(timestamps) if t >= target), None)


@pytest.mark.parametrize("read_only", [False, True])
def test_truncated_time_index_after_clean_shutdown(tmp_path, caplog, read_only):
    """A ``.timeindex`` that lost its last entries behind a clean-shutdown marker passes the
    sanity check (Kafka's too): the segment's largest timestamp read low, the search skipped
    the segment and answered the next segment's first offset. The segment's time index is now
    checked against its batches before a search relies on it (was a strict xfail; found by
    the damage campaign: index/clean truncate)."""
    cfg, leo = _segmented_log(tmp_path, 3)
    ti = sorted(tmp_path.glob("*.timeindex"))[0]
    os.truncate(ti, 12)  # keep the first entry only
    first_seg_end = int(sorted(tmp_path.glob("*.log"))[1].name[:20])
    with caplog.at_level("INFO", logger="kafkalog.segment"), \
            Log.open(tmp_path, cfg, read_only=read_only) as log:
        assert log.offset_for_timestamp(T + first_seg_end - 1) == first_seg_end - 1
        assert log.offsets_for_timestamps([T + o for o in range(leo)]) == list(range(leo))
        assert log.segments[0].searched_max_timestamp() == (T + first_seg_end - 1,
                                                            first_seg_end - 1)
        assert log.offset_for_timestamp(-3) == leo - 1  # KIP-734 max: the last segment's
    assert any(ti.name in r.getMessage() and "disagrees" in r.getMessage()
               for r in caplog.records)
    # kafkalog verify says so too (every entry left is right: only the max tells)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["verify", str(tmp_path), "--json"])
    found = [(f["check"], f["file"], f["expected"], f["found"])
             for part in json.loads(out.getvalue())["partitions"] for f in part["findings"]]
    assert found == [("timeindex_max", str(ti), T + first_seg_end - 1, T + 1)]


def test_time_index_entry_pointing_past_the_answer(tmp_path, caplog):
    """A middle time-index entry whose offset was damaged while its timestamps stay monotonic
    passes the sanity check (which reads the last entry only): the search started at the
    damaged offset and answered a later one. The entry the search starts from is now checked
    against the batch holding its offset."""
    cfg = LogConfig(index_interval_bytes=0, segment_bytes=100_000)
    with Log.open(tmp_path, cfg) as log:
        for o in range(40):
            log.append([Record(b"k", b"v", T + 10 * o)])
    ti = next(tmp_path.glob("*.timeindex"))
    data = bytearray(ti.read_bytes())
    k = 20
    slot = next(i for i in range(len(data) // 12)  # the entry of offset k
                if int.from_bytes(data[12 * i:12 * i + 8], "big") == T + 10 * k)
    assert int.from_bytes(data[12 * slot + 8:12 * slot + 12], "big") == k
    data[12 * slot + 8:12 * slot + 12] = (k + 5).to_bytes(4, "big")  # now says offset k + 5
    ti.write_bytes(bytes(data))
    with caplog.at_level("WARNING", logger="kafkalog.segment"), Log.open(tmp_path, cfg) as log:
        assert log.offset_for_timestamp(T + 10 * k) == k
        assert log.offset_for_timestamp(T + 10 * k - 5) == k
        assert log.offsets_for_timestamps([T + 10 * o for o in range(40)]) == list(range(40))
    assert any("disagrees" in r.getMessage() and f"offset {k + 5}" in r.getMessage()
               for r in caplog.records)


def test_healthy_time_index_is_trusted_with_out_of_order_timestamps(tmp_path, caplog):
    """The check must not fire on a healthy index, whatever the timestamp order (the max in a
    middle batch: later batches lower), through a roll, a reopen and more appends."""
    cfg = LogConfig(index_interval_bytes=0, segment_bytes=1200)
    stamps = [T + (o * 7919) % 101 for o in range(120)]
    with Log.open(tmp_path, cfg) as log:
        for o in range(60):
            log.append([Record(b"k", b"v", stamps[o])])
    with caplog.at_level("INFO", logger="kafkalog.segment"), Log.open(tmp_path, cfg) as log:
        for o in range(60, 120):
            log.append([Record(b"k", b"v", stamps[o])])
            if o % 20 == 0:  # checked while the active segment still grows
                assert log.offset_for_timestamp(T + 50) == _first_at_or_after(stamps, T + 50)
        assert len(log.segments) > 2
        targets = list(range(T - 1, T + 103))
        assert log.offsets_for_timestamps(targets) == [_first_at_or_after(stamps, t)
                                                       for t in targets]
        assert all(s.check_time_index() for s in log.segments)
    with Log.open(tmp_path, cfg, read_only=True) as view:
        assert [view.offset_for_timestamp(t) for t in targets] == \
            [_first_at_or_after(stamps, t) for t in targets]
        assert all(s.check_time_index() for s in view.segments)
    assert not [r for r in caplog.records if "disagrees" in r.getMessage()]


def test_recovery_with_more_index_entries_than_slots_opens(tmp_path):
    """Recovery rebuilds the indexes with the per-batch rule; when that yields more entries than
    the index has slots (a smaller ``segment.index.bytes`` than when the segment was written, or
    the byte counter restarting at 0 after a reopen, which places entries later than a rebuild
    does), the rebuild raised IndexFullError and the log could not be opened at all. Found by the
    crash campaign (segment_index_bytes=96, two writer rounds). The rebuilt index now keeps the
    entries that fit (an index is a sparse hint) and the segment rolls on the next append."""
    with Log.open(tmp_path, LogConfig(index_interval_bytes=0)) as log:
        for _ in range(30):
            log.append(_recs(log.log_end_offset, 2))
    (tmp_path / ".kafka_cleanshutdown").unlink()
    (tmp_path / ".kafkalog-offsets").write_text("0\n2\nrecovery-point 0 0\nlog-start-offset 0 0\n")
    small = LogConfig(index_interval_bytes=0, segment_index_bytes=96)
    with Log.open(tmp_path, small) as log:
        assert log.log_end_offset == 60
        assert [r.offset for r in log.records()] == list(range(60))
        log.append(_recs(60, 2))
        assert log.log_end_offset == 62
    assert verify_errors(tmp_path) == []


@pytest.mark.parametrize("kind", ["offset", "time"])
def test_index_closed_under_a_reader_raises_offset_out_of_range(tmp_path, kind):
    """Retention deleting a segment closes its indexes; a reader thread in the middle of a
    lookup then met an empty mapping and got ``RuntimeError: index gather failed with code -2``
    (the kernels bounds-check, so no crash, but not the documented error). Found by the
    concurrency scenario (offset_for_timestamp racing enforce_retention)."""
    import numpy as np

    from kafkalog.errors import OffsetOutOfRangeError
    from kafkalog.index.offset_index import OffsetIndex
    from kafkalog.index.time_index import TimeIndex

    if kind == "offset":
        idx = OffsetIndex(tmp_path / "00000000000000000000.index", 0)
        for i in range(1, 5):
            idx.append(i * 10, i * 100)
    else:
        idx = TimeIndex(tmp_path / "00000000000000000000.timeindex", 0)
        for i in range(1, 5):
            idx.maybe_append(T + i, i * 10)
    idx.close_handler()  # what LogSegment.delete does, possibly while another thread reads
    with pytest.raises(OffsetOutOfRangeError):
        idx.lookup(25 if kind == "offset" else T + 2)
    with pytest.raises(OffsetOutOfRangeError):
        idx.lookup_many(np.array([25, T + 2], np.int64))


def _log_with_retention_race(tmp_path):
    """A log of several segments whose ``LogSegments.values``/``floor_segment`` first run
    retention (deleting the oldest segments) and then answer: the interleaving where a reader
    passed the log-start-offset check just before the writer's ``enforce_retention``."""
    cfg = LogConfig(index_interval_bytes=0, segment_bytes=1000, retention_bytes=1500,
                    retention_ms=-1, file_delete_delay_ms=0)
    log = Log.open(tmp_path, cfg)
    while len(log.segments) < 6:
        log.append(_recs(log.log_end_offset, 1))
    segs = log._segments
    for name in ("values", "floor_segment"):
        original = getattr(segs, name)

        def racing(*a, _original=original, **kw):
            segs.__dict__.pop("values", None)
            segs.__dict__.pop("floor_segment", None)
            assert log.enforce_retention() > 0
            return _original(*a, **kw)

        setattr(segs, name, racing)
    return log


@pytest.mark.parametrize("how", ["records", "read_table", "read"])
def test_retention_under_a_reader_raises_offset_out_of_range(tmp_path, how):
    """A reader that passed the log-start-offset check just before retention deleted the
    segment holding its start offset got the records of a later segment (``records``,
    ``read_table``: offsets silently skipped) or ``b""`` (``read``) instead of
    OffsetOutOfRangeError. Found by the concurrency scenario."""
    from kafkalog.errors import OffsetOutOfRangeError

    log = _log_with_retention_race(tmp_path)
    try:
        with pytest.raises(OffsetOutOfRangeError):
            if how == "records":
                list(log.records(0))
            elif how == "read_table":
                log.read_table(0)
            else:
                log.read(0)
    finally:
        log.close()


def test_failed_index_resize_keeps_the_index_usable(tmp_path, monkeypatch):
    """``resize`` (trim on roll, re-extend) unmapped the index before reopening its file; when
    the reopen failed (EACCES after losing permissions, EMFILE...) the index stayed unmapped
    with its entries and every later lookup failed. Found by the resource-fault scenario
    (permission lost, then a roll)."""
    from kafkalog.index import abstract_index
    from kafkalog.index.offset_index import OffsetIndex

    idx = OffsetIndex(tmp_path / "00000000000000000000.index", 0)
    for i in range(1, 5):
        idx.append(i * 10, i * 100)
    real_open = os.open

    def no_permission(path, *a, **kw):
        if str(path).endswith(".index"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *a, **kw)

    monkeypatch.setattr(abstract_index.os, "open", no_permission)
    with pytest.raises(PermissionError):
        idx.trim_to_valid_size()
    monkeypatch.setattr(abstract_index.os, "open", real_open)
    assert idx.lookup(25) == (20, 200)
    assert idx.entries == 4
    idx.close()


def test_index_resize_never_shows_readers_an_empty_mapping(tmp_path, monkeypatch):
    """``resize`` (the trim on every roll) unmapped the index, truncated, then mapped again; a
    reader thread looking up in between met an empty mapping and failed (RuntimeError, and with
    the closed-index error an OffsetOutOfRangeError for a segment that was not deleted). The new
    mapping now replaces the old one in one assignment. Found by the concurrency scenario."""
    from kafkalog.index import abstract_index
    from kafkalog.index.offset_index import OffsetIndex

    idx = OffsetIndex(tmp_path / "00000000000000000000.index", 0)
    for i in range(1, 5):
        idx.append(i * 10, i * 100)
    real_ftruncate = os.ftruncate
    seen = []

    def ftruncate_with_a_reader(fd, size):
        seen.append(idx.lookup(25))  # a concurrent reader at the worst moment
        real_ftruncate(fd, size)
        seen.append(idx.lookup(25))

    monkeypatch.setattr(abstract_index.os, "ftruncate", ftruncate_with_a_reader)
    idx.trim_to_valid_size()
    monkeypatch.setattr(abstract_index.os, "ftruncate", real_ftruncate)
    assert seen == [(20, 200), (20, 200)]
    assert idx.lookup(45) == (40, 400)
    idx.close()


def test_segment_close_racing_a_mapped_reader(tmp_path, monkeypatch):
    """``LogSegment.mapped`` checked the descriptor and then ``dup``-ed it; a concurrent close
    (retention deleting the segment) in between gave ``OSError: [Errno 9] Bad file descriptor``
    (or, had the number been reused, a mapping of another file). Close now swaps the descriptor
    out under the same condition the reader holds. Found by the concurrency scenario."""
    import threading

    from kafkalog import segment as segment_mod
    from kafkalog.clock import ManualClock
    from kafkalog.records.builder import encode_batch
    from kafkalog.segment import LogSegment

    seg = LogSegment.open(tmp_path, 0, LogConfig(), ManualClock())
    data = encode_batch(_recs(0, 3))
    seg.append(2, T + 2, 2, data)
    real_dup = os.dup
    closer = threading.Thread(target=seg.close_handlers)

    def dup_while_closing(fd):
        closer.start()
        closer.join(0.3)  # the close must wait for this reader, not run under it
        return real_dup(fd)

    monkeypatch.setattr(segment_mod.os, "dup", dup_while_closing)
    with seg.mapped(0, len(data)) as view:
        assert bytes(view) == data
    closer.join(5)
    assert not closer.is_alive() and seg.closed


_SIGBUS_CHILD = r"""
import os, sys
from kafkalog.config import LogConfig
from kafkalog.log import Log
from kafkalog.records.record import Record
d = sys.argv[1]
log = Log.open(d, LogConfig(index_interval_bytes=0, segment_index_bytes=65536))
log.append([Record(b"k", b"v", 1)])
try:  # fill the filesystem to the last page
    with open(os.path.join(d, "filler"), "wb") as f:
        while True:
            f.write(b"\0" * 4096)
            f.flush()
except OSError:
    pass
try:
    log.append([Record(b"k", b"v", 2)])  # fits in the .log's page; the index entry does not
    print("appended")
except OSError as e:
    print("error", e.errno)
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to mount a small tmpfs")
def test_disk_full_index_write_is_an_error_not_sigbus(tmp_path):
    """Index files were created sparse (``ftruncate``) and written through a mapping: on a
    full filesystem the first write to an index page killed the process with SIGBUS instead
    of an error reaching the caller (Kafka's mapped indexes have the same hazard). Index space
    is now reserved when the file is created or grown (``posix_fallocate``), so a full disk
    fails the roll/open with ENOSPC. Found by the resource-fault scenario (small tmpfs)."""
    import subprocess
    import sys

    from tests.reliability.crash import REPO

    mnt = tmp_path / "mnt"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=400k", "tmpfs", str(mnt)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount tmpfs: {r.stderr.strip()}")
    try:
        p = subprocess.run([sys.executable, "-c", _SIGBUS_CHILD, str(mnt / "t-0")],
                           capture_output=True, text=True, cwd=REPO, timeout=120)
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)
    assert p.returncode == 0, (p.returncode, p.stderr[-1000:])
    assert p.stdout.strip() in ("appended", "error 28"), p.stdout


def test_read_only_reader_finds_timestamps_appended_after_it_opened(tmp_path):
    """A ``read_only=True`` reader (another process) caches the active segment's largest
    timestamp when it first looks; after ``refresh()`` the writer's newer records were beyond
    it, so ``offset_for_timestamp`` skipped the segment and answered None. Found by the
    concurrency scenario (reader processes)."""
    cfg = LogConfig(index_interval_bytes=100)
    writer = Log.open(tmp_path, cfg)
    try:
        writer.append(_recs(0, 10))
        writer.flush()
        reader = Log.open(tmp_path, cfg, read_only=True)
        assert reader.offset_for_timestamp(T + 5) == 5
        for i in range(10, 40, 5):
            writer.append(_recs(i, 5))
        writer.flush()
        reader.refresh()
        assert reader.log_end_offset == 40
        assert reader.offset_for_timestamp(T + 33) == 33
        reader.close()
    finally:
        writer.close()


def test_retention_does_not_delete_a_segment_whose_time_index_lost_entries(tmp_path):
    """Retention by time takes a segment's age from its largest timestamp, the time index's
    last entry (Kafka's too): an index that lost its last entries behind a clean shutdown made
    the segment look as old as its first records and retention deleted records younger than
    ``retention.ms``. It now uses the max checked against the batches (check_time_index)."""
    cfg, leo = _segmented_log(tmp_path, 3)
    ti = sorted(tmp_path.glob("*.timeindex"))[0]
    os.truncate(ti, 12)  # keep the first entry only (timestamp T + 1)
    first_seg_end = int(sorted(tmp_path.glob("*.log"))[1].name[:20])
    # the first segment's newest record is T + first_seg_end - 1: 5 ms inside retention
    keep = LogConfig(index_interval_bytes=0, segment_bytes=1000, retention_ms=10)
    with Log.open(tmp_path, keep) as log:
        assert log.enforce_retention(now=T + first_seg_end - 1 + 5) == 0
        assert log.log_start_offset == 0
        # past it, the segment goes, as it always did
        assert log.enforce_retention(now=T + first_seg_end - 1 + 11) == 1
        assert log.log_start_offset == first_seg_end


def test_compaction_lag_holds_for_a_segment_whose_time_index_lost_entries(tmp_path):
    """``min.compaction.lag.ms`` keeps segments with records younger than the lag out of
    cleaning, by their largest timestamp (Kafka's ``cleanableOffsets``): a time index that lost
    its last entries behind a clean shutdown made a segment look as old as its first records,
    and it became cleanable before the lag had passed. The cleaner now takes the max checked
    against the batches (``Log.segment_largest_timestamp``)."""
    from kafkalog.cleaner.log_cleaner_manager import cleanable_offsets

    cfg = LogConfig(index_interval_bytes=0, segment_bytes=1000, cleanup_policy="compact",
                    min_compaction_lag_ms=10)
    with Log.open(tmp_path, cfg) as log:
        while len(log.segments) < 3:
            log.append(_recs(log.log_end_offset, 1))
    ti = sorted(tmp_path.glob("*.timeindex"))[0]
    os.truncate(ti, 12)  # keep the first entry only (timestamp T + 1)
    first_seg_end = int(sorted(tmp_path.glob("*.log"))[1].name[:20])
    with Log.open(tmp_path, cfg) as log:
        # the first segment's newest record is T + first_seg_end - 1: 5 ms inside the lag
        o = cleanable_offsets(log, None, T + first_seg_end - 1 + 5)
        assert o.first_uncleanable_dirty_offset == 0
        o = cleanable_offsets(log, None, T + first_seg_end - 1 + 11)  # past it: as before
        assert o.first_uncleanable_dirty_offset == first_seg_end
