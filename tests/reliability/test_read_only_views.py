"""A read-only view under a writer that truncates and refills a segment between the view and
the read (the ABA case the size check of ``LogSegment.is_current`` cannot see: the file is cut,
then grows back past the size the view committed to).

Found by ``tests/reliability/test_readers.py``: a reader process yielded offsets 13366.. after
13385, once in a CI run. These build the case byte for byte: the writer rewrites the truncated
offsets as batches of exactly the old batches' sizes, so every batch boundary the view knows
still holds a batch.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from kafkalog import Record, encode_batch, iter_batches
from kafkalog.config import LogConfig
from kafkalog.errors import OffsetOutOfRangeError
from kafkalog.log import Log
from kafkalog.segment import LogSegment

CFG = LogConfig(segment_bytes=1_000_000)


def rec(offset: int, size: int = 200) -> Record:
    return Record(b"k%d" % offset, (b"v%d-" % offset).ljust(size, b"."), 1000 + offset)


def sized_batch(first: int, last: int, base: int, size: int) -> list[Record]:
    """Records ``first..last`` (small values, the last one padded) encoding to ``size`` bytes
    at ``base``: the same byte length as the batch they replace."""
    for pad in range(4000):
        batch = [rec(o, 10) for o in range(first, last)] + [rec(last, 10 + pad)]
        if len(encode_batch(batch, base_offset=base)) == size:
            return batch
    raise AssertionError(f"no padding gives {size} bytes")


def batch_size(first: int, last: int) -> int:
    return len(encode_batch([rec(o) for o in range(first, last + 1)], base_offset=first))


def write_0_to_29(writer: Log) -> None:
    """Segment 0 with batches 0..9 and 10..19, then segment 20 with 20..29."""
    writer.append([rec(o) for o in range(10)])
    writer.append([rec(o) for o in range(10, 20)])
    writer.roll()
    writer.append([rec(o) for o in range(20, 30)])


def test_records_stop_instead_of_going_back_when_a_refilled_segment_reaches_past_the_next(
        tmp_path: Path) -> None:
    with Log.open(tmp_path, CFG) as writer:
        write_0_to_29(writer)
        reader = Log.open(tmp_path, CFG, read_only=True)
        try:
            assert [s.base_offset for s in reader.segments] == [0, 20]
            # the writer cuts segment 0 back to offset 10 (segment 20 renamed away, still read
            # through the reader's descriptor) and refills it: 10..29 in the old 10..19 bytes
            writer.truncate_to(10)
            writer.append(sized_batch(10, 29, 10, batch_size(10, 19)))
            writer.roll()
            assert reader.segments[0].is_current()  # same file, not shorter: the view passes
            seen: list[int] = []
            with pytest.raises(OffsetOutOfRangeError, match="00000000000000000020.log"):
                for r in reader.records(0):
                    seen.append(r.offset)
            # before the fix: 0..29 from the refilled segment, then 20..29 again from the old
            # file. Now segment 0 gives no offset at or past the next segment's base, and the
            # deleted segment ends the read before any of its stale records is handed out
            assert seen == list(range(20))
            with pytest.raises(OffsetOutOfRangeError):
                reader.read_table(0)
            reader.refresh()
            assert [r.offset for r in reader.records(0)] == list(range(30))
            assert reader.read_table(0).column("offset").to_pylist() == list(range(30))
        finally:
            reader.close()


def test_records_stop_instead_of_going_back_between_chunks_of_one_segment(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with Log.open(tmp_path, CFG) as writer:
        for first in (0, 10, 20):
            writer.append([rec(o) for o in range(first, first + 10)])
        reader = Log.open(tmp_path, CFG, read_only=True)
        try:
            sizes = [batch_size(0, 9), batch_size(10, 19), batch_size(20, 29)]
            # chunks of two batches: 0..19 is read and handed out before 20..29 is read
            chunks = LogSegment.iter_chunks
            monkeypatch.setattr(LogSegment, "iter_chunks", lambda self, a, b=None: chunks(
                self, a, b, chunk_size=sizes[0] + sizes[1]))
            it = reader.records(0)
            seen = [next(it).offset for _ in range(20)]
            # the writer cuts back to 10 and refills with 10..14 in the old 10..19 bytes and
            # 15..29 in the old 20..29 bytes: the next chunk starts at a batch, at offset 15
            writer.truncate_to(10)
            writer.append(sized_batch(10, 14, 10, sizes[1]))
            writer.append(sized_batch(15, 29, 15, sizes[2]))
            with pytest.raises(OffsetOutOfRangeError, match="offset 15 after 19 in one read"):
                seen.extend(r.offset for r in it)
            assert seen == list(range(20))
        finally:
            reader.close()


def test_a_writable_log_reads_as_before(tmp_path: Path) -> None:
    """The clamp to the next segment's base offset changes nothing for a valid log."""
    with Log.open(tmp_path, LogConfig(segment_bytes=3000)) as log:
        for first in range(0, 60, 5):
            log.append([rec(o) for o in range(first, first + 5)])
        assert len(log.segments) > 3
        assert [r.offset for r in log.records(3)] == list(range(3, 60))
        assert [r.offset for r in log.records(7, 41)] == list(range(7, 41))
        assert log.read_table(7, 41).column("offset").to_pylist() == list(range(7, 41))


def test_offset_for_timestamp_does_not_answer_none_from_a_segment_cut_under_it(
        tmp_path: Path) -> None:
    """Found by ``tools/reliability.py readers --seed 5``: the writer truncated the segment
    holding the target below it during the reader's search, and the reader answered None (no
    record that late) for a timestamp its view holds."""
    with Log.open(tmp_path, CFG) as writer:
        for first in (0, 10, 20):
            writer.append([rec(o) for o in range(first, first + 10)])
        reader = Log.open(tmp_path, CFG, read_only=True)
        try:
            assert reader.offset_for_timestamp(1000 + 25) == 25
            assert reader.offsets_for_timestamps([1000 + 25, 1000 + 3]) == [25, 3]
            writer.truncate_to(10)  # the view still ends at 30
            with pytest.raises(OffsetOutOfRangeError, match="00000000000000000000.log"):
                reader.offset_for_timestamp(1000 + 25)
            with pytest.raises(OffsetOutOfRangeError, match="00000000000000000000.log"):
                reader.offsets_for_timestamps([1000 + 25])
            reader.refresh()
            assert reader.log_end_offset == 10
            assert reader.offset_for_timestamp(1000 + 25) is None  # now true of the log
            assert reader.offset_for_timestamp(1000 + 5) == 5
        finally:
            reader.close()


@pytest.mark.parametrize("cut", [100, 4096 + 10])
def test_a_batch_still_being_copied_into_a_preallocated_segment_is_not_in_the_view(
        tmp_path: Path, cut: int) -> None:
    """Found by ``tools/reliability.py readers`` (CorruptRecordError in a reader): with
    ``preallocate=true`` the active ``.log`` is ``segment.bytes`` of zeros past its data, so a
    batch whose first bytes landed (a ``pwrite`` in progress, or one a writer killed midway
    left) is whole by its length field. The view ends before it until it is whole; then a
    refresh takes it in."""
    cfg = LogConfig(segment_bytes=100_000, preallocate=True)
    with Log.open(tmp_path, cfg) as writer:
        writer.append([rec(o) for o in range(10)])
        seg = writer.active_segment
        batch = encode_batch([rec(o, 1000) for o in range(10, 15)], base_offset=10)
        assert len(batch) > cut
        fd = os.open(seg.log_path, os.O_WRONLY)
        try:
            os.pwrite(fd, batch[:cut], seg.size)  # the writer's copy, part way
            reader = Log.open(tmp_path, cfg, read_only=True)
            try:
                assert reader.log_end_offset == 10
                assert [r.offset for r in reader.records(0)] == list(range(10))
                assert reader.read_table(0).column("offset").to_pylist() == list(range(10))
                os.pwrite(fd, batch[cut:], seg.size + cut)  # the copy done
                reader.refresh()
                assert reader.log_end_offset == 15
                assert [(r.offset, r.value) for r in reader.records(0)] == [
                    (o, rec(o, 1000 if o >= 10 else 200).value) for o in range(15)]
            finally:
                reader.close()
        finally:
            os.pwrite(fd, bytes(len(batch)), seg.size)  # leave the writer's file as it was
            os.close(fd)


@pytest.mark.parametrize("preallocate", [False, True])
def test_damage_inside_a_read_only_view_is_still_reported(tmp_path: Path,
                                                          preallocate: bool) -> None:
    """Only a last batch followed by non-batch bytes can be a write in progress: a bad CRC in
    a batch with whole batches after it, or in the last batch of a file that ends with it, is
    damage, and reads report it (file and position) instead of ending the view early. (A
    preallocated file's damaged last batch, zeros after it, cannot be told from a write in
    progress: the view ends before it, as the writer's recovery would cut it.)"""
    from kafkalog.errors import CorruptRecordError

    cfg = LogConfig(segment_bytes=100_000, preallocate=preallocate)
    with Log.open(tmp_path, cfg) as log:
        for first in (0, 10, 20):
            log.append([rec(o) for o in range(first, first + 10)])
        path = log.active_segment.log_path
        sizes = [batch_size(0, 9), batch_size(10, 19), batch_size(20, 29)]
    data = bytearray(path.read_bytes())
    assert len(data) == sum(sizes)
    zeros = bytes(5000) if preallocate else b""  # (close trimmed the preallocated room)
    for victim in (1, 2):
        damaged = bytearray(data)
        pos = sum(sizes[:victim]) + 100  # inside the batch's records
        damaged[pos] ^= 0xFF
        path.write_bytes(bytes(damaged) + zeros)
        reader = Log.open(tmp_path, cfg, read_only=True)
        try:
            if preallocate and victim == 2:
                assert reader.log_end_offset == 20
                assert [r.offset for r in reader.records(0)] == list(range(20))
                continue
            assert reader.log_end_offset == 30
            with pytest.raises(CorruptRecordError, match="00000000000000000000.log"):
                list(reader.records(0))
            with pytest.raises(CorruptRecordError, match="00000000000000000000.log"):
                reader.read_table(0)
        finally:
            reader.close()
    path.write_bytes(bytes(data))


# -- found by ``tools/reliability.py readers`` (traced: writer and reader events with their
# CLOCK_MONOTONIC times) --------------------------------------------------------------------


def test_a_listing_between_the_renames_of_a_truncation_has_no_hole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``truncate_to`` renames the segments above the new end away one by one. Lowest first, a
    reader's refresh between two renames listed 0, 20, 30 without 10, and its view handed out
    0..9 then 20.. (the trace: segment 39699 renamed, 8 ms later 39719; the refresh in between
    kept 39668 and 39719, and read_table gave 39698 then 39719)."""
    with Log.open(tmp_path, CFG) as writer:
        for base in (0, 10, 20, 30):
            writer.append([rec(o) for o in range(base, base + 5)])
            writer.append([rec(o) for o in range(base + 5, base + 10)])
            writer.roll()
        reader = Log.open(tmp_path, CFG, read_only=True)
        seen: dict[str, object] = {}
        rename = LogSegment.rename_suffix

        def rename_then_read(self: LogSegment, suffix: str) -> None:
            rename(self, suffix)
            if seen:
                return
            reader.refresh()  # between the first rename and the next
            seen["view"] = [s.base_offset for s in reader.segments]
            for what, read in (("records", lambda: [r.offset for r in reader.records(0)]),
                               ("table", lambda: reader.read_table(0).column("offset")
                                .to_pylist()),
                               ("fetch", lambda: reader.read(12)[:8])):
                try:
                    seen[what] = read()
                except OffsetOutOfRangeError:
                    seen[what] = "out of range"

        monkeypatch.setattr(LogSegment, "rename_suffix", rename_then_read)
        try:
            writer.truncate_to(7)  # segments 10, 20, 30 go; 0 keeps 0..4
            end = seen["view"][-1] + 10  # type: ignore[index]
            assert seen["view"] == list(range(0, end, 10))  # a prefix of the log
            assert seen["records"] in (list(range(end)), "out of range")
            assert seen["table"] in (list(range(end)), "out of range")
            assert seen["fetch"] != b""  # offset 12 is in the view: its batch, not the next
            reader.refresh()
            assert [r.offset for r in reader.records(0)] == list(range(5))
        finally:
            reader.close()


def test_a_fetch_does_not_go_on_to_the_next_segment_past_a_cut(tmp_path: Path) -> None:
    """The writer cut segment 0 (20 renamed away first, still read through the reader's
    descriptor) after the view: the fetch of an offset cut away found nothing in segment 0
    and returned segment 20's first batch ("read(119559) starts at batch 119583")."""
    with Log.open(tmp_path, CFG) as writer:
        write_0_to_29(writer)
        reader = Log.open(tmp_path, CFG, read_only=True)
        try:
            writer.truncate_to(10)
            with pytest.raises(OffsetOutOfRangeError, match="00000000000000000000.log"):
                reader.read(15)
            reader.refresh()
            assert reader.log_end_offset == 10
        finally:
            reader.close()


def test_a_search_does_not_answer_none_from_a_segment_cut_and_refilled_past_the_view(
        tmp_path: Path) -> None:
    """The writer cut the last segment back and refilled it past the view's committed size
    with other batch boundaries (one batch more: the file is longer, the view passes
    ``is_current``); the batch holding the target then crosses the view's end, the scan
    stopped there and the search answered None (traced: view of segment 91212 ending at 5903,
    truncate_to(91247) cut it to 2635, refilled to 7590 with a batch over 2929..6058)."""
    with Log.open(tmp_path, CFG) as writer:
        for first in (0, 10, 20):
            writer.append([rec(o) for o in range(first, first + 10)])
        reader = Log.open(tmp_path, CFG, read_only=True)
        try:
            view_end = reader.segments[-1].size
            writer.truncate_to(10)
            for first, last in ((10, 14), (15, 19), (20, 29)):  # the same records
                writer.append([rec(o) for o in range(first, last + 1)])
            assert writer.segments[-1].size > view_end
            assert reader.segments[-1].is_current()  # same file, not shorter
            with pytest.raises(OffsetOutOfRangeError, match="00000000000000000000.log"):
                reader.offset_for_timestamp(1000 + 25)
            with pytest.raises(OffsetOutOfRangeError, match="00000000000000000000.log"):
                reader.read(25)
            reader.refresh()
            assert reader.offset_for_timestamp(1000 + 25) == 25
            assert [r.offset for r in reader.records(0)] == list(range(30))
        finally:
            reader.close()


@pytest.mark.parametrize("op", ["time", "fetch"])
def test_a_read_does_not_answer_from_a_batch_that_replaced_the_one_it_scanned(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, op: str) -> None:
    """Found by ``tests/reliability/test_readers.py`` (``offset_for_timestamp(1700000012684) =
    12690``): the search scans the headers, then reads the batch it chose; the writer cut and
    refilled the segment in between with other batch boundaries (the file no shorter), and the
    records of the batch now at that position answered with a later offset. A fetch
    (``read``: scan, then read from the batch found) returned a batch not holding its
    offset the same way."""
    def ask(log: Log) -> object:
        if op == "time":
            return log.offset_for_timestamp(1000 + 12)
        batches = list(iter_batches(log.read(12, 100_000)))
        return batches[0].base_offset, batches[0].last_offset

    with Log.open(tmp_path, CFG) as writer:
        write_0_to_29(writer)
        reader = Log.open(tmp_path, CFG, read_only=True)
        try:
            expected = ask(reader)
            assert expected == (12 if op == "time" else (10, 19))
            scan = LogSegment.scan_headers
            done = []

            def scan_then_refill(self, *a, **k):  # type: ignore[no-untyped-def]
                for item in scan(self, *a, **k):
                    if not done:  # the writer, between the scan and the batch's read
                        done.append(1)
                        writer.truncate_to(0)
                        writer.append(sized_batch(0, 12, 0, batch_size(0, 9)))
                        writer.append(sized_batch(13, 19, 13, batch_size(10, 19)))
                        writer.roll()
                        writer.append([rec(o) for o in range(20, 30)])
                    yield item

            monkeypatch.setattr(LogSegment, "scan_headers", scan_then_refill)
            with pytest.raises(OffsetOutOfRangeError, match="00000000000000000000.log"):
                ask(reader)
            monkeypatch.undo()
            reader.refresh()
            assert ask(reader) == (12 if op == "time" else (0, 12))
        finally:
            reader.close()


@pytest.mark.parametrize("op", ["time", "fetch", "records"])
def test_a_refill_ending_exactly_at_the_view_end_short_of_its_offsets_is_seen(
        tmp_path: Path, op: str) -> None:
    """The writer cut the last segment back and refilled it with fewer offsets in the same
    bytes, a batch ending exactly where the view ends: every scan passes (whole batches up to
    the committed size, the file not shorter), but the view's last offsets are not in the file
    any more. A time search answered None and a fetch nothing below the view's log end offset
    (``tests/reliability/test_readers.py``: ``offset_for_timestamp(..) = None``, about 1 run
    in 14)."""
    with Log.open(tmp_path, CFG) as writer:
        for first in (0, 10, 20):
            writer.append([rec(o) for o in range(first, first + 10)])
        reader = Log.open(tmp_path, CFG, read_only=True)
        try:
            assert reader.log_end_offset == 30
            view_end = reader.segments[-1].size
            writer.truncate_to(10)
            # 10..19 in the bytes of the old 10..19 and 20..29: the file ends where it did
            writer.append(sized_batch(10, 14, 10, batch_size(10, 19)))
            writer.append(sized_batch(15, 19, 15, batch_size(20, 29)))
            assert writer.segments[-1].size == view_end
            assert reader.segments[-1].is_current()
            with pytest.raises(OffsetOutOfRangeError, match="00000000000000000000.log"):
                if op == "time":
                    reader.offset_for_timestamp(1000 + 25)
                elif op == "fetch":
                    reader.read(25)
                else:
                    list(reader.records(22))
            reader.refresh()
            assert reader.log_end_offset == 20
            assert reader.offset_for_timestamp(1000 + 25) is None
            assert [r.offset for r in reader.records(0)] == list(range(20))
        finally:
            reader.close()


def _write_then_truncate_and_refill(directory: Path, refill_batch: int, shift: int
                                    ) -> tuple[Log, bytes, bytes, int]:
    """300 one-record batches (index entries every 256 bytes), cut back to offset 100 and
    refilled to 200 in batches of ``refill_batch`` with timestamps moved by ``shift``.
    Returns the writer, both index files' bytes before the cut, and the offset index's entry
    count after it."""
    cfg = LogConfig(index_interval_bytes=256, segment_bytes=10_000_000)
    writer = Log.open(directory, cfg)
    for o in range(300):
        writer.append([Record(b"k", b"v" * 100, 1000 + o)])
    seg = writer.segments[-1]
    seg.flush()
    before = seg.index_path.read_bytes(), seg.time_index_path.read_bytes()
    writer.truncate_to(100)
    for o in range(100, 200, refill_batch):
        writer.append([Record(b"k", b"v" * 100, 1000 + shift + i)
                       for i in range(o, o + refill_batch)])
    seg.flush()
    return writer, before[0], before[1], seg.offset_index.entries


def _slots_written(index_bytes: bytes, entry_size: int) -> int:
    """Slots of a preallocated index up to its zeroed tail."""
    return -(-len(index_bytes.rstrip(b"\0")) // entry_size)


def test_a_truncated_index_has_its_removed_slots_zeroed(tmp_path: Path) -> None:
    """A reader in another process copies an active index up to its first zeroed slot: the
    entries ``truncate_to`` removed must not be there to copy (Kafka leaves their bytes)."""
    writer, old_index, _, entries = _write_then_truncate_and_refill(tmp_path, 5, 0)
    try:
        seg = writer.segments[-1]
        data = seg.index_path.read_bytes()
        old_entries = _slots_written(old_index, 8)
        assert entries < old_entries  # the refill wrote fewer entries than were removed
        assert data[entries * 8:old_entries * 8] == bytes((old_entries - entries) * 8)
        assert data[:entries * 8] == seg.offset_index.entries_array().tobytes()
    finally:
        writer.close()


@pytest.mark.parametrize("refill_batch,shift", [(1, 0), (5, 0), (5, 1000), (2, 1000)])
def test_a_reader_stops_at_index_entries_left_past_a_truncation(
        tmp_path: Path, refill_batch: int, shift: int) -> None:
    """Index files of a Kafka broker's active segment keep the removed entries' bytes past
    the entry count after a truncation (``AbstractIndex.truncateToEntries`` moves the count
    only): a read-only copy stops where the entries stop growing. Before, a quiescent log
    answered time searches with OffsetOutOfRangeError (the copy's binary search landed on a
    removed entry)."""
    writer, old_index, old_time_index, entries = _write_then_truncate_and_refill(
        tmp_path, refill_batch, shift)
    try:
        seg = writer.segments[-1]
        # put the removed entries back past the count, as Kafka leaves them
        for path, old, size, count in (
                (seg.index_path, old_index, 8, entries),
                (seg.time_index_path, old_time_index, 12, seg.time_index.entries)):
            with open(path, "r+b") as f:
                f.seek(count * size)
                f.write(old[count * size:_slots_written(old, size) * size])
        reader = Log.open(tmp_path, writer.config, read_only=True)
        try:
            offs, positions, ts, _ = reader.segments[-1]._read_only_indexes()
            assert len(offs) == entries and len(ts) == seg.time_index.entries
            for t in range(900, 2400, 7):
                assert reader.offset_for_timestamp(t) == writer.offset_for_timestamp(t), t
            for o in range(0, 200, 3):
                got = next(iter_batches(reader.read(o, 1)))
                assert got.base_offset <= o <= got.last_offset
        finally:
            reader.close()
    finally:
        writer.close()


def test_a_recovery_rebuilding_indexes_never_shows_a_reader_a_cut_index(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer's open after a crash rebuilds the indexes of the segments past the recovery
    point. Written in place (the file cut to 0 bytes, then written), a reader copying the time
    index meanwhile read a prefix or nothing: the segment's largest timestamp read low and a
    time search skipped it, answering with a later segment's offset
    (``tests/reliability/test_readers.py``, about 1 run in 14). Every index a reader copies
    during the rebuild must be whole."""
    cfg = LogConfig(segment_bytes=1_000_000, index_interval_bytes=256)
    with Log.open(tmp_path, cfg) as writer:
        for first in range(0, 30, 5):
            writer.append([rec(o) for o in range(first, first + 5)])
        writer.roll()
        writer.append([rec(30)])
    # a crash: no clean-shutdown marker, recovery from offset 0
    (tmp_path / ".kafka_cleanshutdown").unlink()
    (tmp_path / ".kafkalog-offsets").unlink()
    reader = Log.open(tmp_path, cfg, read_only=True)
    seen: list[tuple[int, int]] = []
    try:
        real_open = open

        class Watched:
            """An index file being written: before each write, what a reader copies."""

            def __init__(self, f: io.BufferedWriter) -> None:
                self.f = f

            def __enter__(self) -> Watched:
                return self

            def __exit__(self, *exc: object) -> None:
                self.f.close()

            def write(self, data: bytes) -> int:
                reader.refresh()
                seen.append(tuple(s.largest_timestamp for s in reader.segments))
                return self.f.write(data)

        def watched_open(path, mode="r", *a, **k):  # type: ignore[no-untyped-def]
            f = real_open(path, mode, *a, **k)
            if mode == "wb" and str(path).startswith(str(tmp_path)) \
                    and "index" in os.path.basename(path):
                return Watched(f)
            return f

        monkeypatch.setattr("builtins.open", watched_open)
        with Log.open(tmp_path, cfg):
            monkeypatch.undo()
        assert len(seen) == 4, seen  # both indexes of both segments were rebuilt
        assert set(seen) == {(1000 + 29, 1000 + 30)}, seen
        reader.refresh()
        assert reader.offset_for_timestamp(1000 + 27) == 27
    finally:
        reader.close()


def test_an_index_rebuild_stopped_by_a_crash_leaves_nothing_behind(tmp_path: Path) -> None:
    """The rebuild writes ``<index>.rebuild.deleted`` and renames it into place: a crash in
    between leaves that file, which the next load deletes with the other ``.deleted`` ones
    (Kafka's loader too), the index beside it untouched."""
    with Log.open(tmp_path, CFG) as writer:
        writer.append([rec(0)])
        index = writer.segments[-1].index_path
    stray = index.with_name(index.name + ".rebuild.deleted")
    stray.write_bytes(b"\0" * 8)
    with Log.open(tmp_path, CFG) as writer:
        assert not stray.exists()
        assert writer.offset_for_timestamp(1000) == 0
