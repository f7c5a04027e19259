"""``LogSegment``: one ``.log`` file and its ``.index``/``.timeindex`` (Kafka's ``LogSegment``).

A segment holds the batches with offsets from its **base offset** (the file name) up to the next
segment's base offset. Appends go to the end of the ``.log``; every ``index.interval.bytes`` of
appended data the offset index gets one entry and the time index maybe one (spec §5.2/§5.3).

Invariants (the ones readers rely on):

* ``size`` is the **committed** size: bytes ``[0, size)`` of the ``.log`` are whole, written
  batches. A writer makes the bytes of an append visible (``pwrite`` into the page cache) *before*
  it publishes the new ``size``; readers never read past the ``size`` they saw, so a reader in
  another thread sees whole batches only. Index entries are written after ``size`` moves, so an
  index entry never points past what a reader may read.
* Offsets inside the segment strictly increase from batch to batch and are all ``>= base_offset``
  and ``<= base_offset + 2**31 - 1`` (relative offsets are int32).
* The ``.log`` is read with ``os.pread`` on the segment's own descriptor, never through a
  mapping: a mapping of a file that the writer truncates (recovery, ``truncate_to``) faults
  (SIGBUS) in a reader; ``pread`` just returns fewer bytes.

Recovery (:meth:`LogSegment.recover`) is Kafka's: every entry is checked in file order (whole,
known magic, size >= overhead, CRC, offsets increasing and indexable), the file is truncated after
the last valid entry and both indexes are rebuilt with the per-batch rule.

>>> import tempfile
>>> from kafkalog.config import LogConfig
>>> from kafkalog.clock import ManualClock
>>> seg = LogSegment.open(tempfile.mkdtemp(), 0, LogConfig(), ManualClock())
>>> seg.size, seg.read_next_offset()
(0, 0)
>>> seg.close()
"""

from __future__ import annotations

import dataclasses
import errno
import logging
import mmap
import os
import struct
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from . import files
from .clock import Clock
from .config import LONG_MAX, LogConfig
from .errors import (
    LogClosedError,
    OffsetOutOfRangeError,
    OffsetOverflowError,
)
from .file_copy import read_preallocated
from .index.offset_index import OffsetIndex
from .index.time_index import TimeIndex, TimestampOffset
from .native import optional_extension
from .native import scan as native_scan
from .records.batch import LAST_OFFSET_DELTA_OFFSET, MAGIC_OFFSET
from .records.crc import crc32, crc32c, entry_crc
from .records.timestamp_search import first_record_at_or_after
from .segment_append_state import SegmentAppendState

__all__ = [
    "LogSegment",
    "LogOffsetPosition",
    "RecoveryResult",
    "validate_entries",
    "rebuild_index_entries",
    "NO_TIMESTAMP",
]

NO_TIMESTAMP = -1
INT32_MAX = 2**31 - 1
_INT64_MIN = -(2**63)
# TimestampOffset from a 2-tuple without NamedTuple.__new__'s argument parsing (per append)
_new_timestamp_offset = partial(tuple.__new__, TimestampOffset)
logger = logging.getLogger(__name__)
LOG_OVERHEAD = native_scan.LOG_OVERHEAD
HEADER_SIZE_UP_TO_MAGIC = native_scan.HEADER_SIZE_UP_TO_MAGIC

#: how much of the ``.log`` a header scan reads per ``pread`` (grows for bigger batches)
_SCAN_WINDOW = 32 * 1024
#: how much of the ``.log`` a sequential reader (records, read_table) reads per ``pread``
READ_CHUNK = 16 * 1024 * 1024
#: most index entries appends may leave staged before they are written (``LogSegment.append``)
STAGED_INDEX_ENTRIES = 256

_U32 = struct.Struct(">I")
_I32 = struct.Struct(">i")
_HEAD = struct.Struct(">qi")  # an entry's offset and length fields
_pwrite = os.pwrite  # (per append: one global lookup instead of two)
#: how far past its end a writable segment reserves disk blocks for the appends that follow,
#: once it holds that much itself (``LogSegment._reserve``). Why: on ext4 a write into blocks
#: reserved with ``fallocate(FALLOC_FL_KEEP_SIZE)`` costs less than one that allocates them
#: (16 KiB pwrites of fresh data: 10.7-12.0 us against 12.2-13.4 us, about the same with
#: 256 KiB to 4 MiB ahead; row ``append.pwrite_16KiB.reserved`` of benchmarks/RESULTS.md,
#: 1.13x). The file's length is unchanged (readers, Kafka and copies see the same file);
#: the reserved tail is given back when the segment is rolled, closed or truncated. So the
#: blocks held past the data are at most this much per active segment and never more than
#: the segment holds (a directory of many small partitions reserves nothing); a crash leaves
#: them until that segment is next appended to and closed.
RESERVE_AHEAD_BYTES = 1 << 20


_append_ext = optional_extension("_append")
#: ``reserve_blocks(fd, offset, length) -> errno`` (0: reserved), or None without the
#: extension (segments then reserve nothing)
_reserve_blocks: Callable[[int, int, int], int] | None = \
    _append_ext.reserve_blocks if _append_ext is not None else None


class LogOffsetPosition(NamedTuple):
    """Where the batch holding an offset starts (Kafka's ``LogOffsetPosition``)."""

    offset: int  # the batch's base offset (legacy: its offset)
    position: int  # byte position of the batch in the .log
    size: int  # whole batch size in bytes (12-byte log overhead included)


class RecoveryResult(NamedTuple):
    """What :meth:`LogSegment.recover` found."""

    valid_bytes: int
    truncated_bytes: int
    entries: int
    reason: str | None  # why validation stopped early, None when the whole file was valid


# -- pure helpers over scan arrays (also used by tests and the loader) --------------------------


def validate_entries(
    buf: np.ndarray, scan: dict, base_offset: int | None, *, prev_last_offset: int = -1
) -> tuple[int, str | None]:
    """How many leading entries of ``scan`` are valid, and why the next one is not.

    Kafka's per-batch recovery checks, in file order: CRC (v2: CRC-32C from the attributes on;
    v0/v1: CRC-32 from the magic byte on), offsets strictly increasing (and ``>= base_offset``),
    last offset indexable relative to ``base_offset`` (``None``: no segment yet, skip the
    segment checks). ``buf`` is the bytes ``scan`` was taken over (positions index into it).
    The scan itself already stopped at the first entry that is partial, too short, or of
    unknown magic.
    """
    n = int(scan["count"])
    if n == 0:
        return 0, None
    positions = scan["positions"][:n]
    ends = (positions + scan["sizes"][:n]).tolist()
    positions = positions.tolist()
    magics = scan["magics"][:n]
    mv = memoryview(buf)
    # Recovery of a large segment checks tens of thousands of batches: the CRCs are one C call
    # each in a comprehension, every other check is vectorised. The first failing entry is the
    # one the per-entry loop (CRC, then offsets, then indexability) would stop at. CRCs after
    # it are computed needlessly, which only costs time on corrupt data.
    if bool((magics == 2).all()):
        computed = [crc32c(mv[p + 21 : e]) for p, e in zip(positions, ends)]
    else:
        computed = [crc32c(mv[p + 21 : e]) if m == 2 else crc32(mv[p + 16 : e])
                    for p, e, m in zip(positions, ends, magics.tolist())]
    crcs = scan["crcs"][:n]
    crc_bad = np.asarray(computed, dtype=np.int64) != crcs
    lasts = scan["last_offsets"][:n]
    firsts = np.where(magics == 2, scan["base_offsets"][:n], lasts)
    prevs = np.empty(n, dtype=np.int64)  # last offset of the entry before (all valid so far)
    prevs[0] = prev_last_offset if base_offset is None \
        else max(prev_last_offset, base_offset - 1)
    prevs[1:] = lasts[:-1]
    offsets_bad = (firsts <= prevs) | (lasts < firsts)
    bad = crc_bad | offsets_bad
    if base_offset is not None:
        bad |= lasts - base_offset > INT32_MAX
    if not bool(bad.any()):
        return n, None
    i = int(np.argmax(bad))
    pos, first, last = positions[i], int(firsts[i]), int(lasts[i])
    if crc_bad[i]:
        return i, (
            f"record is corrupt (stored crc = {int(crcs[i])}, computed crc = {computed[i]}) "
            f"at position {pos}"
        )
    if offsets_bad[i]:
        return i, (
            f"offsets not increasing at position {pos} (expected > {int(prevs[i])}, found "
            f"{first}..{last})"
        )
    return i, (
        f"offset {last} at position {pos} is not indexable relative to base offset "
        f"{base_offset}"
    )


def rebuild_index_entries(
    positions: np.ndarray,
    sizes: np.ndarray,
    last_offsets: np.ndarray,
    max_timestamps: np.ndarray,
    index_interval_bytes: int,
) -> tuple[list[tuple[int, int]], list[tuple[int, int]], TimestampOffset]:
    """Kafka's recovery rule: the index entries a rebuild writes for these batches.

    Before counting a batch, if ``valid_bytes - last_index_position > index_interval_bytes`` the
    offset index gets ``(batch.last_offset, batch.position)`` and the time index gets the running
    ``(max_timestamp, offset of the batch holding it)`` (``maybeAppend`` drops it unless the
    timestamp grew). Returns (offset entries, time entries to offer, final running max) where the
    final max is what recovery offers the time index last (``skipFullCheck``).
    """
    n = len(positions)
    if n > 1 and int(sizes[: n - 1].min()) > index_interval_bytes:
        # Batches larger than the interval (the common case for big segments): every batch
        # from the second on starts more than index_interval_bytes after the last entry, so
        # each gets one; the running max (updated on a strictly greater timestamp, before the
        # entry) is vectorised instead of a Python step per batch.
        ts = max_timestamps.astype(np.int64, copy=False)
        running = np.maximum.accumulate(np.maximum(ts, NO_TIMESTAMP))
        before = np.empty(n, dtype=np.int64)
        before[0] = NO_TIMESTAMP
        before[1:] = running[:-1]
        holder = np.maximum.accumulate(np.where(ts > before, np.arange(n), -1))
        running_offset = np.where(holder >= 0, last_offsets[np.maximum(holder, 0)], -1)
        return (list(zip(last_offsets[1:].tolist(), positions[1:].tolist())),
                list(zip(running[1:].tolist(), running_offset[1:].tolist())),
                TimestampOffset(int(running[-1]), int(running_offset[-1])))
    offset_entries: list[tuple[int, int]] = []
    time_entries: list[tuple[int, int]] = []
    max_ts, max_ts_offset = NO_TIMESTAMP, -1
    valid = 0
    last_entry_pos = 0
    for pos, size, last, ts in zip(
        positions.tolist(), sizes.tolist(), last_offsets.tolist(), max_timestamps.tolist()
    ):
        if ts > max_ts:
            max_ts, max_ts_offset = ts, last
        if valid - last_entry_pos > index_interval_bytes:
            offset_entries.append((last, pos))
            time_entries.append((max_ts, max_ts_offset))
            last_entry_pos = valid
        valid += size
    return offset_entries, time_entries, TimestampOffset(max_ts, max_ts_offset)


class LogSegment:
    """One segment of a partition log: ``.log`` + ``.index`` + ``.timeindex``.

    Use :meth:`open`. ``Log`` serializes all mutations (one writer); reads may come from any
    thread at any time (see the module invariants).

    Attributes
    ----------
    base_offset:
        Lower bound of every offset in the segment (the file name).
    log_path, index_path, time_index_path, txn_index_path:
        The segment's files.
    """

    def __init__(
        self,
        directory: Path,
        base_offset: int,
        config: LogConfig,
        clock: Clock,
        fd: int,
        size: int,
        *,
        roll_jitter_ms: int = 0,
        read_only: bool = False,
        file_suffix: str = "",
    ) -> None:
        self.directory = directory
        self.base_offset = int(base_offset)
        self.config = config
        self._clock = clock
        self._fd = fd
        # what every append reads and changes (committed size, reserved end, index rule, time
        # rule's limit, running max timestamp, staged index entries): one object the C fast
        # path of a log's append (segment_append_state.append_v2_batch) works on as well;
        # _size, _reserved_end, ... below are properties over it
        hot = self._hot = SegmentAppendState(STAGED_INDEX_ENTRIES)
        hot.fd = -1 if read_only else fd
        hot.base_offset = self.base_offset
        hot.segment_bytes = config.segment_bytes
        hot.index_interval = config.index_interval_bytes
        self._size = size
        # disk blocks of the .log are reserved (fallocate, file length unchanged) up to here,
        # or the segment reserves nothing before it holds RESERVE_AHEAD_BYTES; an append
        # ending past it reserves more (_reserve). _blocks_reserved: some may lie past the end
        # of the file, to give back on roll, close or truncation
        self._reserved_end = max(size, RESERVE_AHEAD_BYTES)
        self._blocks_reserved = False
        # rolled, its trims (indexes to their entries, the .log's reserved blocks) not done
        # yet: the log's scheduled flush does them (on_become_inactive(trim=False)); flush(),
        # flush_descriptors() and close() do them first, so no file is fsynced untrimmed
        self._trim_pending = False
        self._read_only = read_only
        self.roll_jitter_ms = roll_jitter_ms
        self.log_path = files.log_file(directory, base_offset, file_suffix)
        self.index_path = files.offset_index_file(directory, base_offset, file_suffix)
        self.time_index_path = files.time_index_file(directory, base_offset, file_suffix)
        self.txn_index_path = files.transaction_index_file(directory, base_offset, file_suffix)
        self.created_ms = clock.milliseconds()
        # (roll_jitter_ms, the index interval and the index size are fixed for the segment's
        # life; segment.bytes and the time rule follow update_config: the time rule's limit
        # that should_roll_positional compares against is derived once per start or update)
        self._rolling_based_timestamp = None  # (also sets the time rule's limit)
        self._max_timestamp_and_offset: TimestampOffset | None = None  # None: not loaded yet
        # whether the time index agrees with the .log (check_time_index): None not checked
        # yet; False: a search found it damaged and no longer uses it, and _scanned_max is
        # then the max timestamp (and its batch's offset) of the batches when that was found,
        # with the running max (from the damaged index) at that moment
        self._time_index_trusted: bool | None = None
        # time-index entries (by offset) found to agree with the batches up to theirs
        self._checked_time_entries: set[int] = set()
        self._scanned_max: tuple[TimestampOffset, TimestampOffset] | None = None
        self._bytes_since_last_index_entry = 0
        self._offset_index: OffsetIndex | None = None
        self._time_index: TimeIndex | None = None
        # index entries earned by appends, not yet written, are staged in self._hot (see
        # append()); _index_lock serializes writing them (the writer, or a reader thread
        # asking for an index)
        self._index_lock = threading.Lock()
        self._ro_indexes: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
        # read-only: (st_ino, st_dev) of the file the descriptor reads, taken once (the open
        # descriptor keeps that inode alive, so the number cannot be reused meanwhile)
        self._ro_identity: tuple[int, int] | None = None
        # read-only, the last segment of a view: the offset after the batch that ends the
        # committed bytes (the view's log end offset), set by settle_read_only_tail. A scan
        # reaching the committed end must end with that batch; another one there means the
        # writer cut the file and refilled it to the same length with other offsets
        self._ro_end_offset: int | None = None
        # readers holding a mapping of the .log (see mapped()); truncation waits for them
        self._mapped_readers = 0
        self._mapped_cond = threading.Condition()
        self.deleted = False
        # (committed size, header scan of [0, size)) kept by recover() for one
        # take_recovery_scan(): the producer-state replay right after recovery reads the same
        # headers; dropped on truncation and close
        self._recovery_scan: tuple[int, dict] | None = None

    # -- opening ---------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        directory: str | os.PathLike[str],
        base_offset: int,
        config: LogConfig,
        clock: Clock,
        *,
        roll_jitter_ms: int = 0,
        file_already_exists: bool = False,
        read_only: bool = False,
        file_suffix: str = "",
    ) -> LogSegment:
        """Open (or create) the segment with ``base_offset`` in ``directory``.

        A new segment's ``.log`` is created empty, or at ``segment_bytes`` length with
        ``config.preallocate`` (the committed size is still 0). An existing segment's committed
        size is the file length until recovery says otherwise. ``file_suffix`` (``.cleaned``,
        ``.swap``) is appended to every file name, as Kafka's ``LogSegment.open`` does for the
        log cleaner's segments.
        """
        directory = Path(directory)
        path = files.log_file(directory, base_offset, file_suffix)
        if read_only:
            fd = os.open(path, os.O_RDONLY)
            size = os.fstat(fd).st_size
        elif file_already_exists:
            fd = os.open(path, os.O_RDWR)
            size = os.fstat(fd).st_size
        else:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
            size = 0
            if config.preallocate:
                os.ftruncate(fd, config.segment_bytes)
        seg = cls(directory, base_offset, config, clock, fd, size,
                  roll_jitter_ms=roll_jitter_ms, read_only=read_only, file_suffix=file_suffix)
        if not read_only and not file_already_exists:
            # a new segment's indexes exist from the start (preallocated, trimmed on roll)
            seg.offset_index  # noqa: B018
            seg.time_index  # noqa: B018
        return seg

    # -- properties ------------------------------------------------------------------------

    @property
    def size(self) -> int:
        """Committed bytes of the ``.log`` (whole batches only)."""
        return self._size

    # the per-append state's fields under the names the segment's code uses (see __init__)
    @property
    def _size(self) -> int:
        return self._hot.size

    @_size.setter
    def _size(self, value: int) -> None:
        self._hot.size = value

    @property
    def _reserved_end(self) -> int:
        return self._hot.reserved_end

    @_reserved_end.setter
    def _reserved_end(self, value: int) -> None:
        self._hot.reserved_end = value

    @property
    def _bytes_since_last_index_entry(self) -> int:
        return self._hot.bytes_since_index

    @_bytes_since_last_index_entry.setter
    def _bytes_since_last_index_entry(self, value: int) -> None:
        self._hot.bytes_since_index = value

    @property
    def _max_timestamp_and_offset(self) -> TimestampOffset | None:
        """The running max timestamp and its batch's offset; None: not loaded yet."""
        h = self._hot
        return _new_timestamp_offset((h.max_timestamp, h.max_timestamp_offset)) \
            if h.max_loaded else None

    @_max_timestamp_and_offset.setter
    def _max_timestamp_and_offset(self, m: TimestampOffset | None) -> None:
        h = self._hot
        if m is None:
            h.max_loaded = 0
        else:
            h.max_timestamp, h.max_timestamp_offset = int(m[0]), int(m[1])
            h.max_loaded = 1

    @property
    def closed(self) -> bool:
        return self._fd < 0

    @property
    def read_only(self) -> bool:
        """True when opened read-only (another process may be writing the file)."""
        return self._read_only

    @property
    def offset_index(self) -> OffsetIndex:
        """The offset index, opened on first use (Kafka's ``LazyIndex``), with every staged
        entry written (see :meth:`append`)."""
        st = self._hot
        if st.room or st.staged_count():
            self._write_staged_index()
        return self._open_offset_index()

    @property
    def time_index(self) -> TimeIndex:
        """The time index, opened on first use, with every staged entry written."""
        st = self._hot
        if st.room or st.staged_count():
            self._write_staged_index()
        return self._open_time_index()

    def _open_offset_index(self) -> OffsetIndex:
        idx = self._offset_index
        if idx is None:
            idx = OffsetIndex(self.index_path, self.base_offset,
                              max_index_size=self.config.segment_index_bytes,
                              writable=not self._read_only)
            self._offset_index = idx
        return idx

    def _open_time_index(self) -> TimeIndex:
        idx = self._time_index
        if idx is None:
            idx = TimeIndex(self.time_index_path, self.base_offset,
                            max_index_size=self.config.segment_index_bytes,
                            writable=not self._read_only)
            self._time_index = idx
        return idx

    def lookup_position(self, offset: int) -> int:
        """Byte position to start scanning from for ``offset``: the offset index's entry for
        the greatest indexed offset <= ``offset`` (0 when there is none)."""
        if self._read_only:
            offsets, positions, _, _ = self._read_only_indexes()
            i = int(np.searchsorted(offsets, offset, side="right")) - 1
            pos = int(positions[i]) if i >= 0 else 0
        else:
            pos = self.offset_index.lookup(offset).position
        return pos if pos == 0 or self._entry_starts_at(pos, offset) else 0

    _lookup_position = lookup_position  # older spelling, used by other modules

    def _entry_starts_at(self, position: int, offset: int) -> bool:
        """Whether a plausible entry for ``offset`` starts at ``position``: a damaged index
        entry that passed the sanity check (which looks at the last entry only) must not send a
        read into the middle of a batch, where the scan stops and records are silently
        skipped; :meth:`lookup_position` then scans from the segment start. One 17-byte pread
        per lookup. (Kafka trusts the entry.)"""
        head = self.pread(position, HEADER_SIZE_UP_TO_MAGIC)
        if len(head) < HEADER_SIZE_UP_TO_MAGIC:
            return False
        first, length = struct.unpack_from(">qi", head)
        magic = head[16]
        if magic > 2 or length < 14 or position + LOG_OVERHEAD + length > self._size:
            return False
        return magic != 2 or self.base_offset <= first <= offset

    def _time_lookup_many(self, timestamps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(timestamps, offsets)`` of the time-index entries with the largest timestamp <=
        each target (``(-1, base_offset)`` where none)."""
        if self._read_only:
            _, _, ts, offs = self._read_only_indexes()
            i = np.searchsorted(ts, timestamps, side="right") - 1
            j = np.maximum(i, 0)
            found = i >= 0
            return (np.where(found, ts[j] if ts.size else 0, NO_TIMESTAMP).astype(np.int64),
                    np.where(found, offs[j] if offs.size else 0,
                             self.base_offset).astype(np.int64))
        return self.time_index.lookup_many(timestamps)

    def _position_lookup_many(self, offsets: np.ndarray) -> np.ndarray:
        if self._read_only:
            return np.array([self.lookup_position(int(o)) for o in offsets.tolist()],
                            dtype=np.int64)
        return self.offset_index.lookup_many(offsets)[1]

    def _read_only_indexes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Read-only segments: a private copy of both indexes, never a mapping.

        The writing process trims and re-extends index files (roll, close, recovery); a
        mapping in this process would fault (SIGBUS) on the shrunk pages, so a reader copies
        the file with ``pread`` instead and stops at the first zeroed slot of a preallocated
        index (what DumpLogSegments does). Dropped by :meth:`refresh_read_only`.
        """
        snap = self._ro_indexes
        if snap is None:
            offs, positions = _read_index_copy(self.index_path, ">i4", ">i4", True)
            ts, ts_offs = _read_index_copy(self.time_index_path, ">i8", ">i4", False)
            if ts.size and ts[0] == 0 and ts_offs[0] == 0:
                # the first slot of a preallocated index its writer has not filled yet (a
                # record at the base offset stamped 1970-01-01T00:00:00.000 reads the same;
                # without the entry, searches scan from the segment start: the same answers)
                ts, ts_offs = ts[1:], ts_offs[1:]
            snap = (offs + self.base_offset, positions, ts, ts_offs + self.base_offset)
            self._ro_indexes = snap
        return snap

    @property
    def max_timestamp_so_far(self) -> int:
        """Largest batch max timestamp seen (from the time index when the segment was loaded)."""
        return self._max_ts_and_offset().timestamp

    @property
    def shallow_offset_of_max_timestamp_so_far(self) -> int:
        return self._max_ts_and_offset().offset

    def _max_ts_and_offset(self) -> TimestampOffset:
        m = self._max_timestamp_and_offset
        if m is None:
            # Kafka: loaded lazily from the time index's last entry
            if self._read_only:
                _, _, ts, offs = self._read_only_indexes()
                m = TimestampOffset(int(ts[-1]), int(offs[-1])) if ts.size and ts[-1] >= 0 \
                    else TimestampOffset(NO_TIMESTAMP, -1)
            else:
                last = self.time_index.last_entry
                m = last if last.timestamp >= 0 else TimestampOffset(NO_TIMESTAMP, -1)
            self._max_timestamp_and_offset = m
        return m

    @property
    def largest_timestamp(self) -> int:
        """Max record timestamp, or the ``.log`` mtime when there is none (retention, search)."""
        ts = self.max_timestamp_so_far
        if ts >= 0:
            return ts
        return self.last_modified_ms

    @property
    def last_modified_ms(self) -> int:
        try:
            return int(os.stat(self.log_path).st_mtime_ns // 1_000_000)
        except FileNotFoundError:
            return 0

    # -- reading ---------------------------------------------------------------------------

    def pread(self, position: int, size: int) -> bytes:
        """``size`` bytes from ``position`` (fewer at the committed end). Thread safe."""
        fd = self._fd
        if fd < 0:
            raise OffsetOutOfRangeError(
                "segment was deleted or closed under the reader", path=self.log_path,
                position=position)
        end = min(position + size, self._size)
        if end <= position:
            return b""
        try:
            data = os.pread(fd, end - position, position)
        except OSError as e:  # descriptor closed by a concurrent deletion
            raise OffsetOutOfRangeError(
                f"segment was deleted under the reader ({e.strerror})", path=self.log_path,
                position=position) from None
        return data

    @contextmanager
    def mapped(self, start: int, end: int) -> Iterator[Any]:
        """Bytes ``[start, end)`` of the ``.log`` (committed bytes only) for one bulk read.

        A writable segment lends a read-only mapping (no copy) and holds off truncation of
        this segment until the ``with`` block ends: a mapping of pages a truncation removed
        would fault (SIGBUS). The caller must not keep views past the block. Read-only
        segments (another process writes the file, and may cut it: no mapping is safe there)
        get a ``pread`` copy instead, checked to hold whole batches up to ``end`` (else
        :class:`OffsetOutOfRangeError`, as in :meth:`iter_chunks`); ``[start, end)`` must
        then be a batch range.
        """
        if self._read_only:
            want = max(0, min(end, self._size) - start)
            data = self.pread(start, want)
            sc = native_scan.scan_entries(np.frombuffer(data, np.uint8))
            if len(data) < want or sc["stop_position"] != len(data):
                raise self.changed_under_reader(start + int(sc["stop_position"]))
            yield data
            return
        with self._mapped_cond:
            # registered before reading the size: a truncation publishes the smaller size
            # first, then waits for registered readers, then cuts the file
            if self._fd < 0:
                raise OffsetOutOfRangeError(
                    "segment was deleted or closed under the reader", path=self.log_path,
                    position=start)
            fd = os.dup(self._fd)  # ours: a concurrent close cannot recycle it under us
            self._mapped_readers += 1
            end = min(end, self._size)
        try:
            if end <= start:
                os.close(fd)
                yield b""
                return
            try:
                mm = mmap.mmap(fd, end, access=mmap.ACCESS_READ)
            finally:
                os.close(fd)
            view = memoryview(mm)
            part = view[start:end]
            try:
                yield part
            finally:
                try:
                    part.release()
                    view.release()
                    mm.close()
                except BufferError:
                    # a view escaped (e.g. held by a traceback): the mapping goes when it does
                    pass
        finally:
            with self._mapped_cond:
                self._mapped_readers -= 1
                self._mapped_cond.notify_all()

    def take_recovery_scan(self) -> dict | None:
        """The header scan (``native.scan.scan_entries`` layout, positions from 0) of the
        entries the last :meth:`recover` kept, handed out once; None when none was kept or
        the segment changed since (truncated, appended to, closed).

        For the producer-state replay that follows recovery: it reads the same headers, and a
        second scan of a large segment costs as much as the rest of the replay.
        """
        kept, self._recovery_scan = self._recovery_scan, None
        if kept is None or kept[0] != self._size:
            return None
        return kept[1]

    def _wait_for_mapped_readers(self) -> None:
        with self._mapped_cond:
            while self._mapped_readers:
                self._mapped_cond.wait()

    def scan_headers(self, start: int = 0, end: int | None = None, *,
                     stop_short_ok: bool = False) -> Iterator[tuple[int, dict]]:
        """Yield ``(chunk_position, scan)`` over whole entries in ``[start, end)``.

        Reads ``_SCAN_WINDOW`` bytes at a time (more when one entry is bigger), scanning each
        window with the header kernel. Stops at the first partial or corrupt entry; a
        read-only segment raises :class:`OffsetOutOfRangeError` there instead (as
        :meth:`iter_chunks` does), unless ``stop_short_ok`` (:meth:`settle_read_only_tail`,
        which looks for that end): its committed bytes are whole batches, so a scan that ends
        short of ``end`` read a file the writer cut, or cut and refilled, since the view was
        taken, and "no batch there" would be an answer about a log that never existed (a
        fetch going on to the next segment, a timestamp search answering None).
        """
        end = self._size if end is None else min(end, self._size)
        pos = start
        window = _SCAN_WINDOW
        while pos < end:
            buf = self.pread(pos, min(window, end - pos))
            if not buf:
                break
            sc = native_scan.scan_entries(np.frombuffer(buf, np.uint8))
            if sc["count"] == 0:
                if sc["stop_reason"] == native_scan.STOP_PARTIAL and len(buf) >= LOG_OVERHEAD \
                        and pos + len(buf) < end:
                    need = LOG_OVERHEAD + _I32.unpack_from(buf, 8)[0]
                    if pos + need <= end and need > window:
                        window = need
                        continue
                break
            yield pos, sc
            pos += sc["stop_position"]
            if pos == self._size and self._ro_end_offset is not None:
                self._check_view_end(pos, int(sc["last_offsets"][int(sc["count"]) - 1]))
            if sc["stop_reason"] not in (native_scan.STOP_END, native_scan.STOP_PARTIAL):
                break
            window = _SCAN_WINDOW
        if pos < end and self._read_only and not stop_short_ok:
            raise self.changed_under_reader(pos)

    def translate_offset(self, offset: int, start_position: int = 0,
                         max_position: int | None = None) -> LogOffsetPosition | None:
        """The first batch at or after ``start_position`` whose last offset is >= ``offset``.

        Kafka's ``FileRecords.searchForOffsetWithSize``; None when there is none.
        """
        for chunk_pos, sc in self.scan_headers(start_position, max_position):
            lasts = sc["last_offsets"]
            hits = np.flatnonzero(lasts >= offset)
            if hits.size:
                i = int(hits[0])
                first = int(sc["base_offsets"][i]) if sc["magics"][i] == 2 else int(lasts[i])
                return LogOffsetPosition(first, chunk_pos + int(sc["positions"][i]),
                                         int(sc["sizes"][i]))
        return None

    def read(self, start_offset: int, max_size: int, max_position: int | None = None,
             min_one_message: bool = True) -> tuple[LogOffsetPosition, bytes] | None:
        """Kafka's ``LogSegment.read``: bytes from the batch holding ``start_offset``.

        At most ``max_size`` bytes (the first batch whole when ``min_one_message``), never past
        ``max_position`` (default: the committed size). None when no batch here has an offset
        >= ``start_offset``.
        """
        limit = self._size if max_position is None else min(max_position, self._size)
        start = self.lookup_position(start_offset)
        found = self.translate_offset(start_offset, start, limit)
        if found is None:
            return None
        adjusted = max(max_size, found.size) if min_one_message else max_size
        fetch = min(limit - found.position, adjusted)
        if fetch <= 0:
            return found, b""
        data = self.pread(found.position, fetch)
        self._check_batch_read(data, found.position, found.offset, found.size, fetch)
        return found, data

    def read_next_offset(self) -> int:
        """The offset after the last batch (``base_offset`` when empty). Kafka's
        ``readNextOffset``: scan from the last index entry to the end."""
        start = self.lookup_position(2**63 - 1) if self._size else 0
        last = None
        for _, sc in self.scan_headers(start, stop_short_ok=True):
            last = int(sc["last_offsets"][sc["count"] - 1])
        return self.base_offset if last is None else last + 1

    def iter_chunks(self, start: int, end: int | None = None,
                    chunk_size: int = READ_CHUNK) -> Iterator[tuple[int, bytes]]:
        """Yield ``(position, bytes)`` chunks of whole batches covering ``[start, end)``.

        A read-only segment (another process writes the file) raises
        :class:`OffsetOutOfRangeError` when the walk stops short of ``end``: bytes it saw as
        committed are no longer whole batches, so the writer truncated the file since the
        reader's view was taken (or the file is damaged). Returning what was found would skip
        offsets silently; the caller refreshes and reads again.
        """
        end = self._size if end is None else min(end, self._size)
        pos = start
        while pos < end:
            buf = self.pread(pos, min(chunk_size, end - pos))
            if not buf:
                if self._read_only:
                    raise self.changed_under_reader(pos)
                return
            sc = native_scan.scan_entries(np.frombuffer(buf, np.uint8))
            whole = sc["stop_position"]
            if whole == 0:
                # one batch larger than the chunk: read exactly it
                if len(buf) >= LOG_OVERHEAD and sc["stop_reason"] == native_scan.STOP_PARTIAL:
                    need = LOG_OVERHEAD + _I32.unpack_from(buf, 8)[0]
                    if pos + need <= end:
                        buf = self.pread(pos, need)
                        yield pos, buf
                        pos += need
                        if pos == self._size and self._ro_end_offset is not None:
                            self._check_view_end(pos, _entry_last_offset(buf))
                        continue
                if self._read_only:
                    raise self.changed_under_reader(pos)
                return
            yield pos, buf[:whole] if whole < len(buf) else buf
            pos += whole
            if pos == self._size and self._ro_end_offset is not None:
                self._check_view_end(pos, int(sc["last_offsets"][int(sc["count"]) - 1]))
            if sc["stop_reason"] not in (native_scan.STOP_END, native_scan.STOP_PARTIAL):
                if self._read_only:
                    raise self.changed_under_reader(pos)
                return
        if self._read_only and pos < end:
            raise self.changed_under_reader(pos)

    def _check_view_end(self, position: int, last_offset: int) -> None:
        """Read-only, a read that reached the committed end at ``position`` after an entry
        whose last offset is ``last_offset``: raise unless that is the entry the view ends
        with (see ``_ro_end_offset``). The file is whole batches up to there and no shorter,
        so only the offsets tell that the writer cut it and refilled it to the same length
        (a time search answered None, a fetch nothing, below the view's log end offset)."""
        if last_offset + 1 != self._ro_end_offset:
            raise self.changed_under_reader(
                position, f"the entry ending the committed bytes at position {position} ends "
                f"at offset {last_offset}, the view at offset {self._ro_end_offset - 1}")

    def check_view(self) -> None:
        """Read-only segments, after a read: raise :class:`OffsetOutOfRangeError` when the
        writing process deleted this segment (retention, or ``truncate_to`` removing the
        segments above its new end: renamed ``.deleted``, then unlinked) or cut it below the
        committed size this reader uses (:meth:`is_current`).

        Bytes read before that moment are an older state of the log; what a caller read from
        *earlier* segments may already be the newer state, and the two must not be mixed (a
        reader would see offsets twice or skip some), so the read stops here and the caller
        refreshes. One ``stat``.
        """
        if self._read_only and not self.is_current():
            raise OffsetOutOfRangeError(
                "segment deleted or truncated under the reader by the writing process (since "
                "the last refresh()); refresh() and read again", path=self.log_path)

    def is_current(self) -> bool:
        """Read-only segments: the descriptor still reads the file at :attr:`log_path` (not
        renamed ``.deleted``, unlinked or replaced) and that file is not shorter than the
        committed size. One ``stat`` (the descriptor's own identity is taken once)."""
        cur = self._stat_if_current()
        return cur is not None and cur.st_size >= self._size

    def _stat_if_current(self) -> os.stat_result | None:
        """``stat`` of :attr:`log_path` when it is still the file the descriptor reads, else
        None (renamed, unlinked, replaced, or the segment closed)."""
        fd = self._fd
        if fd < 0:
            return None
        try:
            if self._ro_identity is None:
                st = os.fstat(fd)
                self._ro_identity = (st.st_ino, st.st_dev)
            cur = os.stat(self.log_path)
        except OSError:
            return None
        return cur if (cur.st_ino, cur.st_dev) == self._ro_identity else None

    def changed_under_reader(self, position: int, found: str | None = None
                             ) -> OffsetOutOfRangeError:
        """The error of a read-only reader whose view of this segment is stale (see
        :meth:`iter_chunks`); ``found`` says what gave it away, when not the default (the
        committed bytes are no longer whole batches)."""
        found = found or f"committed bytes up to {self._size} are not whole batches from here"
        return OffsetOutOfRangeError(
            f"segment changed under the reader: {found} (the writing process truncated it "
            f"since the last refresh(), or it is damaged: kafkalog verify tells); refresh() "
            f"and read again", path=self.log_path, position=position)

    def find_offset_by_timestamp(self, timestamp: int, starting_offset: int
                                 ) -> tuple[int, int] | None:
        """Kafka's ``findOffsetByTimestamp``: ``(timestamp, offset)`` of the first record with
        timestamp >= ``timestamp`` and offset >= ``starting_offset``, or None.

        A batch whose max timestamp reaches the target is searched by
        :func:`~kafkalog.records.timestamp_search.first_record_at_or_after`.
        The time-index entry the search starts from is checked against the batches on the way
        (see :meth:`check_time_index`).
        """
        return self.find_offsets_by_timestamps(np.array([timestamp], np.int64),
                                               starting_offset)[0]

    def find_offsets_by_timestamps(self, timestamps: np.ndarray, starting_offset: int
                                   ) -> list[tuple[int, int] | None]:
        """:meth:`find_offset_by_timestamp` for many targets: both index lookups are one
        batched kernel call each; the batch scan is per target."""
        ts = np.ascontiguousarray(timestamps, dtype=np.int64)
        if self._time_index_trusted is False:
            return [self._search_without_time_index(t, starting_offset) for t in ts.tolist()]
        entry_ts, entry_offsets = self._time_lookup_many(ts)
        # an entry not checked yet: the scan starts at the entry before it (the segment start
        # for the first) and the batches from there to the entry's are checked on the way (see
        # _search_for_timestamp); for a sound index they are all earlier than the target, so
        # the answers are the same. Once checked, an entry places the start itself.
        checked = self._checked_time_entries
        # none found ((-1, base offset): the start is the segment's), or one not above
        # starting_offset, does not place the start: nothing to check
        check = [e_off > starting_offset and e_off not in checked
                 and (e_ts, e_off) != (NO_TIMESTAMP, self.base_offset)
                 for e_ts, e_off in zip(entry_ts.tolist(), entry_offsets.tolist())]
        starts = entry_offsets
        if any(check):
            mask = np.array(check)
            starts = entry_offsets.copy()
            starts[mask] = self._time_lookup_many(entry_ts[mask] - 1)[1]
        positions = self._position_lookup_many(np.maximum(starts, starting_offset))
        return [self._search_for_timestamp(t, p, starting_offset,
                                           (e_ts, e_off) if c else None)
                for t, p, e_ts, e_off, c in zip(ts.tolist(), positions.tolist(),
                                                entry_ts.tolist(), entry_offsets.tolist(), check)]

    def _search_without_time_index(self, timestamp: int, starting_offset: int
                                   ) -> tuple[int, int] | None:
        return self._search_for_timestamp(timestamp, self.lookup_position(starting_offset),
                                          starting_offset, None)

    def _search_for_timestamp(self, timestamp: int, position: int, starting_offset: int,
                              entry: tuple[int, int] | None = None
                              ) -> tuple[int, int] | None:
        """Kafka's ``FileRecords.searchForTimestamp`` from ``position``.

        ``entry``: the time-index entry ``(timestamp, offset)`` that placed ``position``.
        Invariant of an entry: the batch holding its offset is the one whose max timestamp
        it records (Kafka's ``maxTimestampSoFar`` and its batch), and no record before it
        is later. A damaged entry that stays monotonic passes the sanity check and would
        start the search past the answer (Kafka answers a later offset); so the batches from
        ``position`` (the previous entry's) to the one holding its offset are read on the way
        (about two index intervals): that batch's max must be the entry's timestamp and none
        before it later. If not, the segment's searches stop using the time index."""
        pending = entry  # the entry, until the batch holding its offset has been seen
        hit = None
        for chunk_pos, sc in self.scan_headers(position):
            max_ts = sc["max_timestamps"]
            if pending is not None:
                i = int(np.searchsorted(sc["last_offsets"], pending[1], side="left"))
                before = max_ts[:i]
                if before.shape[0] and int(before.max()) > pending[0]:
                    j = int(np.argmax(before))
                    self._distrust_time_index(
                        f"entry ({pending[0]}, {pending[1]}): the batch at position "
                        f"{chunk_pos + int(sc['positions'][j])}, before the one holding offset "
                        f"{pending[1]}, has max timestamp {int(before[j])}")
                    return self._search_without_time_index(timestamp, starting_offset)
                if i < max_ts.shape[0]:
                    if int(max_ts[i]) != pending[0]:
                        self._distrust_time_index(
                            f"entry ({pending[0]}, {pending[1]}): the batch holding offset "
                            f"{pending[1]} (at position {chunk_pos + int(sc['positions'][i])}) "
                            f"has max timestamp {int(max_ts[i])}")
                        return self._search_without_time_index(timestamp, starting_offset)
                    self._checked_time_entries.add(pending[1])
                    pending = None
            if hit is None:
                hit = self._first_hit(chunk_pos, sc, timestamp, starting_offset)
            if hit is not None and pending is None:
                return hit
        if pending is not None:
            self._distrust_time_index(f"entry ({pending[0]}, {pending[1]}): no batch from "
                                      f"position {position} holds offset {pending[1]}")
            return self._search_without_time_index(timestamp, starting_offset)
        return hit

    def _first_hit(self, chunk_pos: int, sc: dict, timestamp: int, starting_offset: int
                   ) -> tuple[int, int] | None:
        """The first record of one scanned chunk with timestamp >= ``timestamp`` and offset
        >= ``starting_offset``."""
        for i in np.flatnonzero(sc["max_timestamps"] >= timestamp).tolist():
            p, s = chunk_pos + int(sc["positions"][i]), int(sc["sizes"][i])
            data = self.pread(p, s)
            first = int(sc["base_offsets"][i]) if sc["magics"][i] == 2 \
                else int(sc["last_offsets"][i])
            self._check_batch_read(data, p, first, s, s)
            hit = first_record_at_or_after(data, timestamp, starting_offset)
            if hit is not None:
                return hit
        return None

    @property
    def time_index_checked(self) -> bool:
        """Whether :meth:`check_time_index` has run since the last change of the view."""
        return self._time_index_trusted is not None

    def searched_max_timestamp(self) -> TimestampOffset:
        """``(max timestamp, offset of its batch)`` as a timestamp search must see it: the
        running max (:attr:`max_timestamp_so_far`), or, once :meth:`check_time_index` found
        the time index damaged, the max scanned from the batches then (or a later append's,
        if larger). Runs :meth:`check_time_index` first."""
        self.check_time_index()
        m = self._max_ts_and_offset()
        if self._scanned_max is None:
            return m
        scanned, running_then = self._scanned_max
        # the running max came from the damaged index (it may be too low, or too high); it
        # moves only when an append brings a larger one, which is then a batch's own
        return scanned if m == running_then or scanned.timestamp > m.timestamp else m

    def check_time_index(self) -> bool:
        """Whether the time index agrees with the ``.log`` where a timestamp search relies on
        it; checked once (again after :meth:`refresh_read_only` or a truncation).

        A search picks the first segment whose :attr:`largest_timestamp` reaches the target,
        and that is the time index's last entry (the segment's max, appended at roll and
        close). A ``.timeindex`` that lost its last entries, or whose last entry was damaged
        while staying monotonic, behind a clean shutdown passes Kafka's sanity check; Kafka
        then skips the segment and answers a later offset. Here the last entry must be the
        max timestamp of the batch holding its offset, and no batch after it may carry a
        later one (for the last segment of a read-only view, whose writer appends the final
        entry only at roll, just the first). Healthy, that is one short header scan from the
        max's batch to the end. If not, the max is taken from a scan of every batch (what
        :meth:`searched_max_timestamp` answers, and the log's searches and retention by time
        go by; :attr:`largest_timestamp` stays Kafka's), a warning names the file, and the
        segment's searches no longer use the time index (``kafkalog verify`` reports it;
        recovery and ``kafkalog repair`` rebuild it).

        Examples
        --------
        >>> import tempfile
        >>> from kafkalog import Log, Record
        >>> with Log.open(tempfile.mkdtemp()) as log:
        ...     _ = log.append([Record(None, b"a", 100), Record(None, b"b", 200)])
        ...     seg = log.segments[0]
        ...     seg.check_time_index(), seg.searched_max_timestamp().timestamp
        (True, 200)
        """
        trusted = self._time_index_trusted
        if trusted is not None:
            return trusted
        m = self._max_ts_and_offset()
        # the last segment of a read-only view: its writer appends the final entry only at
        # roll, so batches after the last entry may be later; their max is taken instead
        live_tail = self._read_only and self._ro_end_offset is not None
        if self._size == 0:
            self._time_index_trusted = True
            return True
        problem = None
        tail = m  # the max of the entry's batch and those after it
        pending = m.timestamp >= 0  # the batch holding the entry's offset is still to be seen
        for chunk_pos, sc in self.scan_headers(self.lookup_position(m.offset) if pending else 0):
            max_ts = sc["max_timestamps"]
            if pending:
                i = int(np.searchsorted(sc["last_offsets"], m.offset, side="left"))
                if i < max_ts.shape[0]:
                    if int(max_ts[i]) != m.timestamp:
                        problem = (f"its last entry ({m.timestamp}, {m.offset}): the batch "
                                   f"holding offset {m.offset} (at position "
                                   f"{chunk_pos + int(sc['positions'][i])}) has max timestamp "
                                   f"{int(max_ts[i])}")
                        break
                    pending = False
            j = int(np.argmax(max_ts))
            if int(max_ts[j]) > tail.timestamp:
                tail = TimestampOffset(int(max_ts[j]), int(sc["last_offsets"][j]))
                if not live_tail:
                    problem = (f"the batch at position {chunk_pos + int(sc['positions'][j])} "
                               f"has max timestamp {tail.timestamp}, above the index's largest "
                               f"{m.timestamp}" + (" (entries lost?)" if m.timestamp >= 0
                                                   else ""))
                    break
        if problem is None and pending:
            problem = f"its last entry ({m.timestamp}, {m.offset}): no batch holds offset " \
                      f"{m.offset}"
        if problem is not None:
            self._distrust_time_index(problem)
            return False
        if tail != m:  # (a live tail only)
            self._scanned_max = (tail, m)
        self._time_index_trusted = True
        return True

    def _distrust_time_index(self, problem: str) -> None:
        """Stop using the time index for searches: take the max timestamp from the batches
        (a scan of the whole segment, once) and warn once."""
        first = self._time_index_trusted is not False
        best = self._scan_max_timestamp(0, TimestampOffset(NO_TIMESTAMP, -1))
        # (not the running max: a close or roll would append it to an index trimmed full;
        # set before the flag, which other threads read without a lock)
        self._scanned_max = (best, self._max_ts_and_offset())
        self._time_index_trusted = False
        if first:
            # a read-only view may have read the index while its writer rewrote it (quiet);
            # a writer's own files disagreeing is damage
            logger.log(logging.INFO if self._read_only else logging.WARNING,
                       "%s: the time index disagrees with the log: %s; timestamp searches in "
                       "this segment scan its batches instead (kafkalog verify reports it; "
                       "recovery rebuilds the index)", self.time_index_path, problem)

    def _check_batch_read(self, data: bytes, position: int, first: int, size: int,
                          wanted: int) -> None:
        """Read-only segments: raise :class:`OffsetOutOfRangeError` unless ``data``, read at
        ``position`` after a header scan found there the entry ``first`` (v2: base offset,
        v0/v1: offset) of ``size`` bytes, starts with that entry's header. A second read of
        the file is another moment: the writer may have cut and refilled it in between with
        other batch boundaries, and a batch that is not the one scanned would answer with other
        offsets (a time search a later one, a fetch a batch not holding its offset).
        ``wanted``: the bytes asked for (fewer came: the file was cut)."""
        if not self._read_only:
            return
        if len(data) < wanted or (len(data) >= LOG_OVERHEAD and _HEAD.unpack_from(data)
                                  != (first, size - LOG_OVERHEAD)):
            raise self.changed_under_reader(position,
                                            "the batch at this position is not the one its "
                                            "scan found")

    # -- writing ---------------------------------------------------------------------------

    def _check_writable(self) -> None:
        if self._fd < 0:
            raise LogClosedError("segment is closed", path=self.log_path)
        if self._read_only:
            raise PermissionError(f"{self.log_path}: segment opened read-only")

    def can_convert_to_relative_offset(self, offset: int) -> bool:
        return 0 <= offset - self.base_offset <= INT32_MAX

    def should_roll(self, *, max_timestamp_in_messages: int, max_offset_in_messages: int,
                    messages_size: int, now: int) -> bool:
        """Kafka's ``shouldRoll`` (spec §6.1), checked before each append."""
        return self.should_roll_positional(max_timestamp_in_messages, max_offset_in_messages,
                                           messages_size, now)

    @property
    def _rolling_based_timestamp(self) -> int | None:
        """The first batch's max timestamp (Kafka's ``rollingBasedTimestamp``): the time
        rule's start; None when not loaded yet (or the segment is empty), < 0 when the batch
        has none (the rule then goes by ``created_ms``)."""
        return self._rolling_ts

    @_rolling_based_timestamp.setter
    def _rolling_based_timestamp(self, ts: int | None) -> None:
        self._rolling_ts = ts
        # Invariant: an append whose max timestamp is above this limit may be due to roll by
        # the time rule (Kafka's timeWaitedForRoll > maxSegmentMs - rollJitterMs, for a
        # timestamp-based start); at or below it, it is not. INT64_MIN (every append takes
        # the full check) while the start is unknown or not a timestamp, as then the rule
        # goes by the clock. Every change of the start comes through here. (Capped at
        # INT64_MAX, a field of 64 bits: no timestamp is above a limit beyond it either.)
        self._hot.roll_after_timestamp = (
            min(ts + self.config.max_segment_ms - self.roll_jitter_ms, LONG_MAX)
            if ts is not None and ts >= 0 else _INT64_MIN)

    def update_config(self, config: LogConfig) -> None:
        """Take a topic's changed config (Kafka's ``LocalLog.updateConfig``): the roll rules
        (``segment.bytes``, ``segment.ms``, ``max.compaction.lag.ms``) apply from the next
        append, as Kafka builds its ``RollParams`` from the log's current config per append;
        the index interval and index size stay those the segment was created with (Kafka
        passes them to ``LogSegment``'s constructor)."""
        self.config = dataclasses.replace(
            config, index_interval_bytes=self.config.index_interval_bytes,
            segment_index_bytes=self.config.segment_index_bytes)
        self._hot.segment_bytes = config.segment_bytes
        self._rolling_based_timestamp = self._rolling_ts  # re-derives the time rule's limit

    def should_roll_positional(self, max_timestamp_in_messages: int,
                               max_offset_in_messages: int, messages_size: int,
                               now: int) -> bool:
        """:meth:`should_roll` with positional arguments (the per-append call of a log's
        fast path, where keyword passing costs as much as the checks)."""
        # The common case, one comparison per rule: the append fits segment.bytes, its max
        # timestamp is within the time rule's limit (kept by the setter above), the staging
        # of index entries has room (so neither index is full) and its last offset is
        # indexable. Measured (timeit): 0.30 us a call, the full checks below 0.64 us.
        h = self._hot
        if (h.size <= h.segment_bytes - messages_size
                and max_timestamp_in_messages <= h.roll_after_timestamp
                and h.room > 0
                and 0 <= max_offset_in_messages - self.base_offset <= INT32_MAX):
            return False
        return self._should_roll_full(max_timestamp_in_messages, max_offset_in_messages,
                                      messages_size, now)

    def _should_roll_full(self, max_timestamp_in_messages: int, max_offset_in_messages: int,
                          messages_size: int, now: int) -> bool:
        """Kafka's ``shouldRoll`` conditions, each evaluated (the reference of the common
        case in :meth:`should_roll_positional`)."""
        # _time_waited_for_roll and can_convert_to_relative_offset are inlined and the
        # timestamp rule only evaluated for a non-empty segment (where it counts); the
        # conditions are Kafka's, in order.
        cfg = self.config
        size = self._size
        if size > cfg.segment_bytes - messages_size:
            return True
        if size > 0:
            ts = self._rolling_based_timestamp
            if ts is None:
                self._load_first_batch_timestamp()
                ts = self._rolling_based_timestamp
            waited = (max_timestamp_in_messages - ts if ts is not None and ts >= 0
                      else now - self.created_ms)
            # Kafka's RollParams.maxSegmentMs: min(max.compaction.lag.ms, segment.ms) when
            # compacted, so that a compacted log's records become cleanable in time
            if waited > cfg.max_segment_ms - self.roll_jitter_ms:
                return True
        # is_full() of either index, staged entries counted: neither can be while staging has
        # room (fewer staged than free slots); otherwise (or when unknown) ask them
        if self._hot.room <= 0:
            oi, ti = self.offset_index, self.time_index
            full = oi.is_full() or ti.is_full()
            with self._index_lock:
                self._measure_index_room()
            if full:
                return True
        return not 0 <= max_offset_in_messages - self.base_offset <= INT32_MAX

    def _time_waited_for_roll(self, now: int, message_timestamp: int) -> int:
        self._load_first_batch_timestamp()
        ts = self._rolling_based_timestamp
        if ts is not None and ts >= 0:
            return message_timestamp - ts
        return now - self.created_ms

    def first_batch_timestamp(self) -> int:
        """Kafka's ``getFirstBatchTimestamp``: the first batch's max timestamp, or Long.MAX
        when the segment is empty or it has none (the log cleaner's
        ``max.compaction.lag.ms`` rule)."""
        self._load_first_batch_timestamp()
        ts = self._rolling_based_timestamp
        return ts if ts is not None and ts >= 0 else 2**63 - 1

    def _load_first_batch_timestamp(self) -> None:
        if self._rolling_based_timestamp is None and self._size > 0:
            for _, sc in self.scan_headers(0):
                self._rolling_based_timestamp = int(sc["max_timestamps"][0])
                break

    def append(self, largest_offset: int, largest_timestamp: int,
               shallow_offset_of_max_timestamp: int, data: bytes | bytearray | memoryview) -> None:
        """Kafka's ``LogSegment.append``: write one append (one or more whole batches).

        Index rule (§5.2): when more than ``index_interval_bytes`` were appended since the last
        entry, add ``(largest_offset, position where this append starts)`` and offer the running
        max timestamp to the time index; then count this append's bytes.

        The entries are staged: packed into a buffer, checked as the indexes' ``append`` and
        ``maybe_append`` would check them, and copied into the index files with one slice
        assignment per index once ``STAGED_INDEX_ENTRIES`` are staged, or before anything
        reads or changes an index through this segment (``offset_index``/``time_index``, a
        ``should_roll`` near a full index, flush, roll, truncation, recovery, close). Why:
        two index writes per append cost more than the rest of the bookkeeping of a 16 KiB
        append (measured). An entry is a hint, not data: until it is written, a reader of the
        files (another process) sees the index as it was, every entry of which points at a
        committed batch, and scans from an earlier position. After flush, roll and close the
        index files hold exactly what writing each entry at once gives (Kafka's index model).
        An entry that would fail a check (not above the last indexed offset, no free slot) is
        written at once, so its error comes from the same append as before.
        """
        n = len(data)
        if n == 0:
            return
        fd = self._fd
        if fd < 0 or self._read_only:
            self._check_writable()
        h = self._hot
        position = h.size
        if position == 0:
            self._rolling_based_timestamp = largest_timestamp
        if not 0 <= largest_offset - self.base_offset <= INT32_MAX:
            raise OffsetOverflowError(
                f"offset not indexable relative to base offset {self.base_offset}",
                path=self.log_path, offset=largest_offset)
        if position + n > h.reserved_end:
            self._reserve(position + n)
        written = _pwrite(fd, data, position)
        if written != n:  # rare: a short write, finish it
            _pwrite_all(fd, memoryview(data)[written:], position + written)
        # publish: the bytes are in the page cache before readers can see the new size
        h.size = position + n
        if not h.max_loaded:
            self._max_ts_and_offset()
        if largest_timestamp > h.max_timestamp:
            h.max_timestamp = largest_timestamp
            h.max_timestamp_offset = shallow_offset_of_max_timestamp
        if h.bytes_since_index > h.index_interval:
            if h.room > 0 and largest_offset > h.last_offset:
                h.stage(largest_offset, position, h.max_timestamp, h.max_timestamp_offset)
                h.last_offset = largest_offset
                h.room -= 1
            else:
                self._write_index_entry(largest_offset, position,
                                        _new_timestamp_offset((h.max_timestamp,
                                                               h.max_timestamp_offset)))
            h.bytes_since_index = n
        else:
            h.bytes_since_index += n

    def _reserve(self, end: int) -> None:
        """Reserve the .log's blocks up to ``end`` and ``RESERVE_AHEAD_BYTES`` past the
        reserved end (at most to ``segment_bytes``, where the segment rolls); called by an
        append ending past ``_reserved_end`` (never by one ending within the segment's first
        ``RESERVE_AHEAD_BYTES``). Where that fails
        (no extension, a filesystem without ``fallocate``, no space left: the write itself
        reports that) this segment stops reserving: writes then allocate as they go."""
        start = max(self._reserved_end, self._size)
        target = max(end, min(start + RESERVE_AHEAD_BYTES, self.config.segment_bytes))
        err = _reserve_blocks(self._fd, start, target - start) \
            if _reserve_blocks is not None else errno.ENOSYS
        if err:
            self._reserved_end = 2**63 - 1
            return
        self._reserved_end = target
        self._blocks_reserved = True

    def _release_reserved_blocks(self) -> None:
        """Give back the blocks reserved past the end of the file: a same-length
        ``ftruncate`` frees them. The file's modification time is put back: retention of a
        segment without timestamps goes by it, and Kafka's trim never changes it."""
        self._blocks_reserved = False
        st = os.fstat(self._fd)
        os.ftruncate(self._fd, st.st_size)
        os.utime(self._fd, ns=(st.st_atime_ns, st.st_mtime_ns))
        self._reserved_end = max(st.st_size, RESERVE_AHEAD_BYTES)

    def write_pending_index_entry(self, offset: int, position: int) -> None:
        """The index entry an append by ``append_v2_batch`` earned (its last ``offset``, the
        ``position`` where it starts) but could not stage: a reader thread wrote the staged
        entries during its pwrite. Written as :meth:`append` writes it then."""
        m = self._max_timestamp_and_offset
        if m is None:
            m = self._max_ts_and_offset()
        self._write_index_entry(offset, position, m)

    def _write_index_entry(self, offset: int, position: int, m: TimestampOffset) -> None:
        """Write the staged entries, then stage this append's entry again (staging was full,
        or its room unknown) or write it at once (an offset not above the last one: the index
        raises here, in the append that earned it, as it did before staging)."""
        with self._index_lock:
            self._measure_index_room()
            st = self._hot
            if st.room > 0 and offset > st.last_offset:
                st.stage(offset, position, m[0], m[1])
                st.last_offset = offset
                st.room -= 1
                return
            # every mutation of a segment's indexes comes through the segment, whose owner
            # serializes them (Log's write lock): the indexes' own locks would only add cost
            self._open_offset_index().append_unlocked(offset, position)
            self._open_time_index().maybe_append_unlocked(m[0], m[1])
            self._measure_index_room()

    def _write_staged_index(self) -> None:
        """Write the staged entries; staging resumes once the room is measured again."""
        with self._index_lock:
            self._write_staged_locked()
            self._hot.room = 0

    def _write_staged_locked(self) -> None:
        # every entry staged so far, taken in one step under the GIL (the writer stages only
        # at the end, from this or another thread, before or after it, never in between)
        taken = self._hot.take_staged()
        k = len(taken) // 32
        if not k:
            return
        # columns (offset, position, timestamp, time-index offset), each contiguous: the
        # append kernels then see the one array type every caller passes (one compilation)
        cols = np.frombuffer(taken, np.int64).reshape(k, 4).T.copy()
        # the checks and errors of sequential appends (staging only checked the offsets)
        self._open_offset_index().append_many_unlocked(cols[0], cols[1])
        self._open_time_index().maybe_append_many_unlocked(cols[2], cols[3])

    def _measure_index_room(self) -> None:
        """Write the staged entries, then measure the room for staging more."""
        self._write_staged_locked()
        oi, ti = self._open_offset_index(), self._open_time_index()
        st = self._hot
        st.room = max(min(STAGED_INDEX_ENTRIES, oi.max_entries - oi.entries,
                          ti.max_entries - 1 - ti.entries), 0)
        st.last_offset = oi.last_offset if oi.entries else _INT64_MIN  # (offsets are >= 0)

    # -- recovery and truncation -------------------------------------------------------------

    def recover(self, on_batch_epochs: Callable[[np.ndarray, np.ndarray], None] | None = None
                ) -> RecoveryResult:
        """Kafka's ``LogSegment.recover``: validate every entry, truncate after the last valid
        one, rebuild both indexes with the per-batch rule (§5.2) and add the final time entry.

        ``on_batch_epochs(leader_epochs, base_offsets)`` receives the valid v2 batches' partition
        leader epochs (for the leader-epoch cache).
        """
        self._check_writable()
        file_size = os.fstat(self._fd).st_size
        self._size = file_size
        oi, ti = self.offset_index, self.time_index
        oi.reset()
        ti.reset()
        if file_size == 0:
            count, valid_bytes, reason = 0, 0, None
            sc = None
        else:
            with mmap.mmap(self._fd, file_size, access=mmap.ACCESS_READ) as mm:
                buf = np.frombuffer(mm, np.uint8)
                try:
                    sc = native_scan.scan_entries(buf)
                    count, reason = validate_entries(buf, sc, self.base_offset)
                finally:
                    del buf
            if reason is None and sc["stop_reason"] != native_scan.STOP_END:
                reason = (f"{native_scan.STOP_REASONS[sc['stop_reason']]} at position "
                          f"{sc['stop_position']}")
            valid_bytes = int(sc["positions"][count - 1] + sc["sizes"][count - 1]) if count else 0
            if count:
                self._recovery_scan = (valid_bytes, {
                    **{k: v[:count] for k, v in sc.items() if isinstance(v, np.ndarray)},
                    "count": count, "stop_position": valid_bytes,
                    "stop_reason": native_scan.STOP_END})
        if count:
            sl = slice(0, count)
            entries, time_entries, final = rebuild_index_entries(
                sc["positions"][sl], sc["sizes"][sl], sc["last_offsets"][sl],
                sc["max_timestamps"][sl], self.config.index_interval_bytes)
            self._max_timestamp_and_offset = final if final.timestamp >= 0 else \
                TimestampOffset(NO_TIMESTAMP, -1)
            if len(entries) < oi.max_entries and len(entries) < ti.max_entries - 1:
                oi, ti = self._write_rebuilt_indexes(entries, time_entries,
                                                     self._max_timestamp_and_offset)
            else:  # more entries than slots: keep those that fit (an index is a sparse hint;
                # raising as Kafka would left the log unopenable); the next append rolls
                for (off, pos), (ts, ts_off) in zip(entries, time_entries):
                    if oi.is_full() or ti.is_full():
                        break
                    oi.append(off, pos)
                    ti.maybe_append(ts, ts_off)
            if on_batch_epochs is not None:
                v2 = sc["magics"][sl] == 2
                on_batch_epochs(sc["leader_epochs"][sl][v2], sc["base_offsets"][sl][v2])
            self._rolling_based_timestamp = int(sc["max_timestamps"][0])
        else:
            self._max_timestamp_and_offset = TimestampOffset(NO_TIMESTAMP, -1)
            self._rolling_based_timestamp = None
        self._time_index_trusted = self._scanned_max = None  # (rebuilt from these batches)
        self._checked_time_entries = set()
        truncated = file_size - valid_bytes
        os.ftruncate(self._fd, valid_bytes)  # (gives back reserved blocks too)
        self._size = valid_bytes
        self._blocks_reserved = False
        self._reserved_end = max(valid_bytes, RESERVE_AHEAD_BYTES)
        oi.trim_to_valid_size()
        m = self._max_timestamp_and_offset
        if m.timestamp >= 0:
            ti.maybe_append(m.timestamp, m.offset, skip_full_check=True)
        ti.trim_to_valid_size()
        # Kafka leaves the counter alone here: a loaded segment starts counting from 0
        self._bytes_since_last_index_entry = 0
        return RecoveryResult(valid_bytes, truncated, count, reason if truncated else None)

    def _write_rebuilt_indexes(self, entries: list[tuple[int, int]],
                               time_entries: list[tuple[int, int]], final: TimestampOffset
                               ) -> tuple[OffsetIndex, TimeIndex]:
        """Write a rebuild's entries as whole files, then reopen the indexes over them.

        Same bytes as appending entry by entry through ``OffsetIndex.append`` and
        ``TimeIndex.maybe_append`` (a time entry is kept only when its timestamp grows, the
        final running max included), without a Python call per entry: recovery of a large
        segment has tens of thousands of them.
        """
        kept: list[tuple[int, int]] = []
        last_ts = NO_TIMESTAMP
        for ts, off in [*time_entries, tuple(final)]:
            if ts > last_ts:
                kept.append((ts, off))
                last_ts = ts
        base = self.base_offset
        oi_rows = np.array([(o - base, p) for o, p in entries],
                           dtype=[("o", ">i4"), ("p", ">i4")]) if entries else b""
        ti_rows = np.array([(t, o - base) for t, o in kept],
                           dtype=[("t", ">i8"), ("o", ">i4")]) if kept else b""
        for idx, rows in ((self.offset_index, oi_rows), (self.time_index, ti_rows)):
            idx.close_handler()
            # a whole new file renamed over the old one: a reader in another process copies
            # either index whole, never one cut to 0 bytes and half rewritten (its largest
            # timestamp then read low, and a time search skipped the segment). A rebuild
            # stopped by a crash leaves a .deleted file, which the next load removes (as
            # Kafka's loader does)
            tmp = idx.path.with_name(idx.path.name + ".rebuild" + files.DELETED_FILE_SUFFIX)
            with open(tmp, "wb") as f:
                f.write(rows.tobytes() if isinstance(rows, np.ndarray) else rows)
            os.replace(tmp, idx.path)
        self._offset_index = None
        self._time_index = None
        return self.offset_index, self.time_index  # reopened: every whole slot is an entry

    def truncate_to(self, offset: int) -> int:
        """Kafka's ``LogSegment.truncateTo``: drop every batch whose last offset >= ``offset``.

        The batch holding ``offset`` goes whole. Indexes are truncated and re-extended (this
        segment becomes the active one). Returns the bytes removed.
        """
        self._check_writable()
        self._recovery_scan = None
        self._trim_pending = False  # (active again: its indexes are re-extended below)
        mapping = self.translate_offset(offset, self.lookup_position(offset))
        oi, ti = self.offset_index, self.time_index
        oi.truncate_to(offset)
        ti.truncate_to(offset)
        oi.resize(oi.max_index_size)
        ti.resize(ti.max_index_size)
        truncated = 0
        if mapping is not None:
            truncated = self._size - mapping.position
            self._size = mapping.position  # new readers stop here at once
            self._wait_for_mapped_readers()
            os.ftruncate(self._fd, mapping.position)  # (gives back reserved blocks too)
            self._blocks_reserved = False
            self._reserved_end = max(mapping.position, RESERVE_AHEAD_BYTES)
        if self._size == 0:
            self.created_ms = self._clock.milliseconds()
            self._rolling_based_timestamp = None
        self._bytes_since_last_index_entry = 0
        self._max_timestamp_and_offset = self._read_largest_timestamp()
        self._time_index_trusted = self._scanned_max = None
        self._checked_time_entries = set()
        return truncated

    def _read_largest_timestamp(self) -> TimestampOffset:
        """Max timestamp: the time index's last entry, then the batches after it."""
        last = self.time_index.last_entry
        best = last if last.timestamp >= 0 else TimestampOffset(NO_TIMESTAMP, -1)
        start = self.offset_index.lookup(last.offset).position if last.timestamp >= 0 else 0
        return self._scan_max_timestamp(start, best)

    def _scan_max_timestamp(self, start: int, best: TimestampOffset) -> TimestampOffset:
        """``best``, or the larger max timestamp of the batches from ``start`` with the last
        offset of the first batch carrying it (Kafka's ``shallowOffsetOfMaxTimestamp``)."""
        for _, sc in self.scan_headers(start):
            ts = sc["max_timestamps"]
            i = int(np.argmax(ts))
            if ts[i] > best.timestamp:
                best = TimestampOffset(int(ts[i]), int(sc["last_offsets"][i]))
        return best

    # -- lifecycle -------------------------------------------------------------------------

    def on_become_inactive(self, trim: bool = True) -> None:
        """Roll: final time-index entry, trim indexes and a preallocated ``.log`` (Kafka's
        ``onBecomeInactiveSegment``).

        ``trim=False``: the trims are left to :meth:`complete_roll` (or the next
        :meth:`flush`, :meth:`flush_descriptors`, :meth:`close`). Each trim is an
        ``ftruncate``, ~1 ms, but 40-110 ms on ext4 here while another file's fsync is being
        committed; the log runs them on its flusher thread, before the fsync of this segment,
        so that the appending call does not wait for them. Until then the index files keep
        their preallocated zeroed room, which readers stop at (as they do for the active
        segment), and the ``.log`` its reserved blocks past its end (its length is the
        data's). A preallocated ``.log`` (``preallocate=True``) is cut at once all the same:
        readers in other processes take a segment that is not the last one for its file
        length."""
        self._check_writable()
        m = self._max_ts_and_offset()
        if m.timestamp >= 0:
            self.time_index.maybe_append(m.timestamp, m.offset, skip_full_check=True)
        if trim:
            self._trim_inactive()
        else:
            if os.fstat(self._fd).st_size != self._size:
                self._trim_log()
            self._trim_pending = True

    def complete_roll(self) -> None:
        """The trims :meth:`on_become_inactive` left pending, if any (and the segment is
        open)."""
        if self._trim_pending and self._fd >= 0 and not self._read_only:
            self._trim_inactive()

    def _trim_inactive(self) -> None:
        self._trim_pending = False
        self.offset_index.trim_to_valid_size()
        self.time_index.trim_to_valid_size()
        self._trim_log()

    def _trim_log(self) -> None:
        if os.fstat(self._fd).st_size != self._size:
            os.ftruncate(self._fd, self._size)  # (gives back reserved blocks too)
            self._blocks_reserved = False
            self._reserved_end = max(self._size, RESERVE_AHEAD_BYTES)
        elif self._blocks_reserved:
            self._release_reserved_blocks()

    def refresh_read_only(self) -> bool:
        """Read-only segments: take the current file length as the committed size (the scan
        still stops at a partial trailing batch) and drop what was read at the old one (the
        index copies, the max timestamp). False, and nothing changed, when the file at
        :attr:`log_path` is no longer the one the descriptor reads (see :meth:`is_current`).
        One ``stat``: the size of the file at the name is the descriptor's file's size once
        both are the same file."""
        cur = self._stat_if_current()
        if cur is None:
            return False
        self._size = cur.st_size
        self._ro_indexes = None
        self._ro_end_offset = None  # (settle_read_only_tail sets it again for the last one)
        self._max_timestamp_and_offset = None
        self._time_index_trusted = self._scanned_max = None
        self._checked_time_entries = set()
        return True

    def settle_read_only_tail(self) -> int:
        """Read-only segments: :meth:`read_next_offset`, and the committed size cut to the end of
        the last whole batch when what follows is not (yet) a batch.

        A writer in another process appends past the file length (a reader can meet a batch
        whose first pages landed before the rest) or, with ``preallocate=true``, into a file
        already ``segment.bytes`` long whose unwritten part is zeros. Neither is data yet: the
        reader's view ends before it, as the writer's committed size does, so reads of that view
        never meet it (and a read that does meet non-batch bytes inside the view knows the file
        changed under it, see :meth:`iter_chunks`). Called for the last segment at open and by
        :meth:`Log.refresh`.

        A read-only view also ends before its last whole batch when that batch's CRC does not
        match and the file goes on past it (bytes that are not a whole batch follow): in a
        preallocated file (zeros up to ``segment.bytes``) a batch the writer is still copying
        in, or one a writer killed mid-``pwrite`` left with its first pages only, has all its
        length inside the file, so only its CRC tells that it is not whole yet (the recovery of
        the writer's next open truncates the torn one). Only the last whole batch can be such a
        write (every byte before the one being copied is final), and one that ends the file
        exactly cannot be (a write past the end shows only its copied part): a bad CRC anywhere
        else is damage, left in the view for reads to report.
        """
        self._ro_end_offset = None  # (its scans below look for the end it checks)
        start = self.lookup_position(2**63 - 1) if self._size else 0
        last = None
        end = start
        first = self.base_offset
        tail = None  # (position, size, magic, stored crc) of the last whole batch
        for chunk_pos, sc in self.scan_headers(start, stop_short_ok=True):
            n = int(sc["count"])
            last = int(sc["last_offsets"][n - 1])
            tail = (chunk_pos + int(sc["positions"][n - 1]), int(sc["sizes"][n - 1]),
                    int(sc["magics"][n - 1]), int(sc["crcs"][n - 1]))
            # (an index entry holds the last offset of the append starting at its position,
            # so one for an offset below this batch's first points before it)
            first = int(sc["base_offsets"][n - 1]) if tail[2] == 2 else last
            end = chunk_pos + int(sc["stop_position"])
        if self._read_only and tail is not None and end < self._size \
                and not self._entry_crc_matches(*tail):
            end = tail[0]
            last = None  # the last offset before it, scanned from the index entry before it
            for _, sc in self.scan_headers(self.lookup_position(first - 1), end,
                                            stop_short_ok=True):
                last = int(sc["last_offsets"][int(sc["count"]) - 1])
        if self._read_only and end < self._size:
            self._size = end
        next_offset = self.base_offset if last is None else last + 1
        if self._read_only and last is not None:
            self._ro_end_offset = next_offset
        return next_offset

    def _entry_crc_matches(self, position: int, size: int, magic: int, stored: int) -> bool:
        """Whether the entry at ``position`` holds the CRC its header stores (v2: CRC-32C from
        the attributes on; v0/v1: CRC-32 from the magic byte on)."""
        data = self.pread(position, size)
        return len(data) == size and entry_crc(data, magic) == stored

    def resize_indexes(self, size: int) -> None:
        self.offset_index.resize(size)
        self.time_index.resize(size)

    def sanity_check_indexes(self) -> None:
        """Kafka's index sanity checks (CorruptIndexError)."""
        self.offset_index.sanity_check()
        self.time_index.sanity_check()

    def flush(self) -> None:
        """fsync the ``.log`` and both indexes."""
        if self._fd < 0 or self._read_only:
            return
        self.complete_roll()
        if self._hot.staged_count():
            self._write_staged_index()
        os.fsync(self._fd)
        if self._offset_index is not None:
            self._offset_index.flush()
        if self._time_index is not None:
            self._time_index.flush()

    def flush_descriptors(self) -> list[int]:
        """New descriptors of the ``.log`` and of both indexes (staged index entries written
        first), for the caller to fsync without the log's lock and then close
        (:mod:`kafkalog.log_flusher`): the fsyncs make this segment's bytes and entries up to
        now durable even when it is renamed, deleted or closed in between. Empty for a
        read-only or closed segment."""
        if self._fd < 0 or self._read_only:
            return []
        self.complete_roll()
        if self._hot.staged_count():
            self._write_staged_index()
        fds = [os.dup(self._fd)]
        try:
            for idx in (self._offset_index, self._time_index):
                fd = idx.flush_descriptor() if idx is not None else None
                if fd is not None:
                    fds.append(fd)
        except BaseException:
            for fd in fds:
                os.close(fd)
            raise
        return fds

    def close(self) -> None:
        """Final time entry, trim indexes and log, release files (Kafka's ``close``)."""
        if self._fd < 0:
            return
        if not self._read_only:
            m = self._max_timestamp_and_offset
            if m is not None and m.timestamp >= 0:
                self.time_index.maybe_append(m.timestamp, m.offset, skip_full_check=True)
            self._trim_pending = False  # (the trims below are the ones it left)
            self._trim_log()
        self._close_files(trim=not self._read_only)

    def _close_files(self, trim: bool) -> None:
        self._recovery_scan = None
        if self._hot.staged_count() and not self._read_only and self._fd >= 0:
            self._write_staged_index()
        for idx in (self._offset_index, self._time_index):
            if idx is not None:
                if trim:
                    idx.close()
                else:
                    idx.close_handler()
        if self._blocks_reserved and self._fd >= 0:
            self._release_reserved_blocks()  # (the file's length stays as it is)
        with self._mapped_cond:  # mapped() dups the descriptor under it: never a closed one
            fd, self._fd = self._fd, -1
            self._hot.fd = -1
        if fd >= 0:
            os.close(fd)

    def close_handlers(self) -> None:
        """Release files without trimming anything."""
        self._close_files(trim=False)

    def rename_suffix(self, suffix: str) -> None:
        """Add a state suffix (``.deleted``) to every file of the segment."""
        self.change_file_suffixes("", suffix)

    def change_file_suffixes(self, old_suffix: str, new_suffix: str) -> None:
        """Kafka's ``changeFileSuffixes``: rename every existing file of the segment from
        ``old_suffix`` to ``new_suffix`` (``.log`` first, then the indexes, as Kafka does; each
        rename is atomic, the set is not: the loader completes or discards a partial set)."""
        for attr, idx in (("log_path", None), ("index_path", self._offset_index),
                          ("time_index_path", self._time_index), ("txn_index_path", None)):
            p: Path = getattr(self, attr)
            name = p.name[: len(p.name) - len(old_suffix)] if old_suffix and \
                p.name.endswith(old_suffix) else p.name
            target = p.with_name(name + new_suffix)
            if p.exists():
                if idx is not None:
                    idx.rename_to(target)  # the mapping stays valid
                else:
                    os.replace(p, target)
            setattr(self, attr, target)
        self.deleted = new_suffix == files.DELETED_FILE_SUFFIX

    def set_last_modified(self, ms: int) -> None:
        """Kafka's ``setLastModified``: the ``.log``, ``.index`` and ``.timeindex`` mtimes."""
        ns = int(ms) * 1_000_000
        for p in (self.log_path, self.index_path, self.time_index_path):
            if p.exists():
                os.utime(p, ns=(ns, ns))

    def delete(self) -> None:
        """Close and remove every file of the segment."""
        self.close_handlers()
        for p in (self.log_path, self.index_path, self.time_index_path, self.txn_index_path):
            try:
                os.unlink(p)
            except FileNotFoundError:
                pass

    def __repr__(self) -> str:
        return (f"LogSegment(base_offset={self.base_offset}, size={self._size}, "
                f"path={str(self.log_path)!r})")


def _entry_last_offset(entry: bytes) -> int:
    """The last offset of the log entry ``entry`` starts with: v2 base offset plus last
    offset delta, v0/v1 the offset field (a wrapper's is its last inner offset)."""
    first = _HEAD.unpack_from(entry)[0]
    if entry[MAGIC_OFFSET] >= 2:
        return first + _I32.unpack_from(entry, LAST_OFFSET_DELTA_OFFSET)[0]
    return first


def _read_index_copy(path: Path, key_dtype: str, value_dtype: str, values_grow: bool
                     ) -> tuple[np.ndarray, np.ndarray]:
    """(keys, values) of an index file read into memory, up to the first zeroed slot after
    slot 0 (the unwritten, preallocated tail of an active segment's index) or the first slot
    that does not follow the one before it, whichever comes first. Read with ``pread`` only as
    far as the zeroed tail (:func:`kafkalog.file_copy.read_preallocated`).

    Invariant of the entries a writer keeps: keys (offsets; timestamps) strictly grow, and
    values (positions when ``values_grow``; offsets of a time index) grow, resp. never go
    down. Slots past the entry count of an active index Kafka truncated (``truncate_to``)
    still hold the removed entries until appends overwrite them: they break the order where
    the refilled entries end, and name batches that are gone."""
    dt = np.dtype([("k", key_dtype), ("v", value_dtype)])
    try:
        data = read_preallocated(path, dt.itemsize)
    except FileNotFoundError:
        data = b""
    arr = np.frombuffer(data, dt, count=len(data) // dt.itemsize)
    keys, values = arr["k"].astype(np.int64), arr["v"].astype(np.int64)
    stop = (keys == 0) & (values == 0)
    if stop.size:
        stop[0] = False
        dv = np.diff(values)
        stop[1:] |= (np.diff(keys) <= 0) | ((dv <= 0) if values_grow else (dv < 0))
    n = int(np.argmax(stop)) if stop.any() else arr.shape[0]
    return keys[:n], values[:n]


def _pwrite_all(fd: int, data: bytes | bytearray | memoryview, position: int) -> None:
    view = memoryview(data)
    while view.nbytes:
        n = os.pwrite(fd, view, position)
        if n <= 0:
            raise OSError(f"short write at position {position}")
        view = view[n:]
        position += n

