"""Find topic-partition directories and describe their segments from indexes and batch headers.

Planning never decodes records and never reads ``.log`` bodies: a segment is described by

* its base offset (the file name), its size;
* the entries of its ``.index`` (offset -> byte position of a batch start) and ``.timeindex``
  (max timestamp so far -> offset), copied with ``pread`` up to their preallocated zero tail;
* a *tail walk*: the batch headers from the last ``.index`` entry to the end of the file
  (:func:`kafkalog.native.scan.scan_entries`). Kafka adds an index entry at most every
  ``index.interval.bytes`` (4096 by default), so this reads a few KiB and yields the segment's
  next offset (log end offset for the last segment) and its true max timestamp, even for an
  active segment whose time index does not have its final entry yet.

A segment whose index is missing or unusable (not increasing, positions past the end) is walked
from position 0 instead: headers only, still no record decoding.

Preallocated index files of an active segment end in zeros; entries stop at the first entry
``i > 0`` whose relative offset is 0 (the rule of Kafka's DumpLogSegments).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kafkalog import files
from kafkalog.errors import KafkaLogError
from kafkalog.file_copy import FileCopy

__all__ = ["SegmentInfo", "PartitionInfo", "discover_partitions", "describe_partition"]

_EMPTY_I64 = np.zeros(0, dtype=np.int64)


@dataclass
class SegmentInfo:
    """One segment as planning sees it (arrays are native int64, absolute offsets)."""

    base_offset: int
    log_path: str
    size: int
    data_end: int  # first byte after the last whole batch found by the tail walk
    next_offset: int  # last offset + 1 of the last whole batch (base_offset if empty)
    max_timestamp: int  # -1 when unknown/none
    index_offsets: np.ndarray = field(default_factory=lambda: _EMPTY_I64)
    index_positions: np.ndarray = field(default_factory=lambda: _EMPTY_I64)
    time_timestamps: np.ndarray = field(default_factory=lambda: _EMPTY_I64)
    time_offsets: np.ndarray = field(default_factory=lambda: _EMPTY_I64)
    txn_index_path: str | None = None
    walk_start: int = 0  # where the tail walk started
    bytes_read: int = 0  # .log bytes planning read: 17-byte entry headers + index file bytes

    def position_for(self, offset: int) -> int:
        """Byte position of a batch start at or before the batch holding ``offset``.

        ``.index`` lookup: greatest entry with offset <= target; position 0 if none. Valid
        because an entry (O, P) says the append starting at P ends at O, so batches holding
        offsets >= O start at P or later.
        """
        i = int(np.searchsorted(self.index_offsets, offset, side="right")) - 1
        return int(self.index_positions[i]) if i >= 0 else 0

    def end_position_for(self, end_offset: int) -> int:
        """A batch-start position from which every batch holds only offsets >= ``end_offset``.

        With entries (O_j, P_j): batches at positions >= P_{j+1} hold offsets > O_j. Take the
        first j with O_j >= end_offset - 1; if none, the data end.
        """
        j = int(np.searchsorted(self.index_offsets, end_offset - 1, side="left"))
        if j + 1 < len(self.index_positions):
            return int(self.index_positions[j + 1])
        return self.data_end

    def time_lookup(self, timestamp: int) -> int | None:
        """Offset of the greatest ``.timeindex`` entry with timestamp <= ``timestamp``, or None."""
        entry = self.time_entry_at_or_below(timestamp)
        return entry[1] if entry is not None else None

    def time_entry_at_or_below(self, timestamp: int) -> tuple[int, int] | None:
        """``(timestamp, offset)`` of the greatest ``.timeindex`` entry with timestamp <=
        ``timestamp``, or None."""
        i = int(np.searchsorted(self.time_timestamps, timestamp, side="right")) - 1
        return (int(self.time_timestamps[i]), int(self.time_offsets[i])) if i >= 0 else None


@dataclass
class PartitionInfo:
    """A topic-partition directory and its segments (sorted by base offset)."""

    topic: str
    partition: int
    path: str
    segments: list[SegmentInfo]
    checkpoint_log_start: int | None = None  # from log-start-offset checkpoints, if any
    stable_end: int | None = None  # last stable offset, set for read_committed readers

    @property
    def readable_end(self) -> int:
        """Where "latest" is: the last stable offset under read_committed (as a Kafka consumer
        with isolation.level=read_committed sees it), else the log end offset."""
        return self.log_end_offset if self.stable_end is None else self.stable_end

    @property
    def log_start_offset(self) -> int:
        """Kafka's rule: max(checkpointed log start offset, first segment's base offset)."""
        first = self.segments[0].base_offset if self.segments else 0
        if self.checkpoint_log_start is None:
            return first
        return min(max(first, self.checkpoint_log_start), self.log_end_offset)

    @property
    def log_end_offset(self) -> int:
        if not self.segments:
            return 0
        last = self.segments[-1]
        return max(last.next_offset, last.base_offset)

    def segment_end(self, i: int) -> int:
        """Exclusive upper bound on offsets in segment ``i`` (next base offset, or log end)."""
        if i + 1 < len(self.segments):
            return self.segments[i + 1].base_offset
        return self.log_end_offset


def _is_partition_dir(p: Path) -> bool:
    try:
        files.parse_topic_partition_name(p)
    except ValueError:
        return False
    return not (files.is_delete_dir(p) or files.is_future_dir(p) or files.is_stray_dir(p))


def discover_partitions(paths: Iterable[str]) -> list[tuple[str, int, str]]:
    """``(topic, partition, dir)`` for every partition directory under ``paths``.

    A path holding ``.log`` files (or named ``<topic>-<n>`` with no sub-directories) is one
    partition directory; anything else is a ``log.dirs`` root whose ``<topic>-<n>`` children are
    the partitions (``-delete``/``-future``/``-stray`` and other entries are skipped).
    """
    out: dict[tuple[str, int], str] = {}
    for raw in paths:
        p = Path(raw)
        if not p.is_dir():
            raise KafkaLogError("no such log directory (expected a partition directory or a "
                                "log.dirs root)", path=p)
        children = sorted(p.iterdir())
        has_logs = any(c.is_file() and c.name.endswith(files.LOG_FILE_SUFFIX) for c in children)
        has_dirs = any(c.is_dir() for c in children)
        if has_logs or (_is_partition_dir(p) and not has_dirs):
            if not _is_partition_dir(p):
                raise KafkaLogError(
                    "holds .log files but its name is not <topic>-<partition>", path=p
                )
            t, n = files.parse_topic_partition_name(p)
            out.setdefault((t, n), str(p))
            continue
        for c in children:
            if c.is_dir() and _is_partition_dir(c):
                t, n = files.parse_topic_partition_name(c)
                out.setdefault((t, n), str(c))
    return [(t, n, d) for (t, n), d in sorted(out.items())]


def _read_index(path: Path, dtype: np.dtype) -> np.ndarray | None:
    """The slots of an index file up to its preallocated zero tail (a private copy, never a
    mapping: the writer trims the active segment's index at every roll); None if unreadable."""
    from kafkalog.file_copy import read_preallocated

    try:
        data = read_preallocated(path, dtype.itemsize)
    except (FileNotFoundError, IsADirectoryError, PermissionError, OSError):
        return None
    return np.frombuffer(data, dtype)


def _valid_prefix(rel: np.ndarray) -> int:
    """Entries before the preallocated zero tail: stop at the first i > 0 with rel == 0."""
    if rel.size <= 1:
        return int(rel.size)
    zeros = np.flatnonzero(rel[1:] == 0)
    return int(zeros[0] + 1) if zeros.size else int(rel.size)


_OFFSET_ENTRY = np.dtype([("relative_offset", ">i4"), ("position", ">i4")])
_TIME_ENTRY = np.dtype([("timestamp", ">i8"), ("relative_offset", ">i4")])


def _read_offset_index(path: Path, base: int, log_size: int) -> tuple[np.ndarray, np.ndarray]:
    arr = _read_index(path, _OFFSET_ENTRY)
    if arr is None:
        return _EMPTY_I64, _EMPTY_I64
    rel = arr["relative_offset"].astype(np.int64)
    pos = arr["position"].astype(np.int64)
    n = _valid_prefix(rel)
    rel, pos = rel[:n], pos[:n]
    # an index we cannot trust is ignored (planning falls back to walking headers): offsets
    # must strictly increase, positions must not decrease and must lie inside the .log
    if n and (np.any(np.diff(rel) <= 0) or np.any(np.diff(pos) < 0) or rel[0] < 0
              or pos[0] < 0 or pos[-1] >= max(log_size, 1)):
        return _EMPTY_I64, _EMPTY_I64
    return rel + base, pos


def _read_time_index(path: Path, base: int) -> tuple[np.ndarray, np.ndarray]:
    arr = _read_index(path, _TIME_ENTRY)
    if arr is None:
        return _EMPTY_I64, _EMPTY_I64
    ts = arr["timestamp"].astype(np.int64)
    rel = arr["relative_offset"].astype(np.int64)
    n = ts.size
    if n > 1:
        zeros = np.flatnonzero((ts[1:] == 0) & (rel[1:] == 0))
        n = int(zeros[0] + 1) if zeros.size else n
    ts, rel = ts[:n], rel[:n]
    if n and (np.any(np.diff(ts) <= 0) or np.any(np.diff(rel) < 0)):
        return _EMPTY_I64, _EMPTY_I64
    return ts, rel + base


def _walk(copy: FileCopy, start: int, end: int | None = None
          ) -> tuple[int, int | None, int, int, int, tuple[int, int, int, int, int] | None]:
    """Header walk from ``start`` to ``end`` (the end of the copy): ``(entries, last offset of
    the last whole entry or None, max timestamp or -1, stop position, stop reason, tail)``;
    ``tail``: ``(position, size, magic, stored crc, first offset)`` of the last whole entry
    (None when there is none)."""
    n, last, max_ts, tail = 0, None, -1, None
    for scan in copy.scan_chunks(start, end):
        c = int(scan["count"])
        if c:
            n += c
            last = int(scan["last_offsets"][c - 1])
            max_ts = max(max_ts, int(scan["max_timestamps"][:c].max()))
            magic = int(scan["magics"][c - 1])
            tail = (int(scan["positions"][c - 1]), int(scan["sizes"][c - 1]), magic,
                    int(scan["crcs"][c - 1]),
                    int(scan["base_offsets"][c - 1]) if magic == 2 else last)
        stop, reason = int(scan["stop_position"]), int(scan["stop_reason"])
    return n, last, max_ts, stop, reason, tail


def entry_crc_matches(copy: FileCopy, position: int, size: int, magic: int, stored: int
                      ) -> bool:
    """Whether the whole entry of ``size`` bytes at ``position`` of ``copy`` holds the CRC its
    header stores (``stored``, as a header scan reports it)."""
    from kafkalog.records.crc import entry_crc

    data = copy.read(position, position + size)
    return len(data) == size and entry_crc(data, magic) == stored


def _checked_time_index(copy: FileCopy, offs: np.ndarray, poss: np.ndarray, ts: np.ndarray,
                        ts_offs: np.ndarray, data_end: int, last: bool
                        ) -> tuple[np.ndarray, np.ndarray, int, int]:
    """``(timestamps, offsets, walked max, batches walked)``: the ``.timeindex`` entries if
    their last one holds (``LogSegment.check_time_index``'s rule), else none; and the max
    timestamp (and count) of the batches from the one holding that entry's offset to
    ``data_end``.

    The last entry is the segment's max, written at roll and close: the batch holding its
    offset must carry its timestamp as max, and no batch after it a later one (except in the
    ``last`` segment, whose writer appends the final entry only at roll). A damaged index
    that stays increasing passes :func:`_read_time_index` (a truncated one, an entry's
    fields changed); trusted, a search would skip the segment or start past the answer.
    Without entries the segment's max is not exact, so a search goes through it from its
    start. Healthy, the walk is the tail walk's batches, or more where a later batch was
    stamped earlier."""
    t, o = int(ts[-1]), int(ts_offs[-1])
    i = int(np.searchsorted(offs, o, side="right")) - 1
    holds, walked, n = None, -1, 0
    for scan in copy.scan_chunks(int(poss[i]) if i >= 0 else 0, data_end):
        c = int(scan["count"])
        if c == 0:
            break
        n += c
        if holds is None:
            j = int(np.searchsorted(scan["last_offsets"][:c], o, side="left"))
            if j < c:
                holds = int(scan["max_timestamps"][j]) == t
        walked = max(walked, int(scan["max_timestamps"][:c].max()))
    if holds and (last or walked <= t):
        return ts, ts_offs, walked, n
    return _EMPTY_I64, _EMPTY_I64, walked, n


def describe_segment(directory: str, base: int, *, last: bool = False) -> SegmentInfo:
    """Read one segment's indexes and walk its tail (see the module notes).

    The ``.log`` is read through a :class:`~kafkalog.file_copy.FileCopy` (``pread`` into
    private memory, only the walked tail), never mapped: a writer in another process may cut
    the file (``preallocate`` trim at roll, ``truncate_to``, recovery) while planning runs.
    """
    from kafkalog.native.scan import STOP_BAD_MAGIC, STOP_CORRUPT_SIZE, STOP_END, STOP_SHORT_V2

    d = Path(directory)
    log_path = files.log_file(d, base)
    with FileCopy(log_path) as copy:
        size = copy.size
        offs, poss = _read_offset_index(files.offset_index_file(d, base), base, size)
        ts, ts_offs = _read_time_index(files.time_index_file(d, base), base)
        walk_start = int(poss[-1]) if poss.size else 0
        n, last_offset, tail_max, stop, reason, tail = _walk(copy, walk_start)
        if n == 0 and walk_start > 0:
            # the last entry points at a batch we cannot read: walk the whole segment
            walk_start = 0
            offs, poss = _EMPTY_I64, _EMPTY_I64
            n, last_offset, tail_max, stop, reason, tail = _walk(copy, 0)
        size = copy.size  # lower if the file shrank while we read it
        if tail is not None and stop < size and not entry_crc_matches(copy, *tail[:4]):
            # (LogSegment.settle_read_only_tail's rule) a last whole batch with a bad CRC and
            # non-batch bytes after it, in a preallocated file: still being copied in by the
            # writer, or torn by a writer killed midway; not data yet. Walked again up to it,
            # from the index entry before it (entries hold the last offset of the append at
            # their position)
            keep = poss < tail[0]
            offs, poss = offs[keep], poss[keep]
            i = int(np.searchsorted(offs, tail[4] - 1, side="right")) - 1
            walk_start = int(poss[i]) if i >= 0 else 0
            n, last_offset, tail_max, stop, reason, _ = _walk(copy, walk_start, tail[0])
            stop, reason = tail[0], STOP_END
        data_end = stop if n or walk_start == 0 else walk_start
        if reason in (STOP_CORRUPT_SIZE, STOP_BAD_MAGIC, STOP_SHORT_V2) and bool(
            np.any(copy.read(data_end, data_end + 4096))
        ):
            # not a zero-filled preallocated tail: garbage. Plan up to the file end so the
            # reader meets it and applies failOnDataLoss (fail naming the position, or skip).
            data_end = size
        next_offset = last_offset + 1 if last_offset is not None else (
            int(offs[-1]) + 1 if offs.size else base)
        if ts.size:
            n_ts = int(ts.size)
            ts, ts_offs, walked, n_walked = _checked_time_index(copy, offs, poss, ts, ts_offs,
                                                                int(data_end), last)
            tail_max = max(tail_max, walked)
            time_bytes = 12 * n_ts + 61 * n_walked  # (entries, then the headers walked)
        else:
            time_bytes = 0
    max_ts = max(tail_max, int(ts[-1]) if ts.size else -1)
    txn = files.transaction_index_file(d, base)
    return SegmentInfo(
        base_offset=base, log_path=str(log_path), size=size, data_end=int(data_end),
        next_offset=next_offset, max_timestamp=max_ts, index_offsets=offs,
        index_positions=poss, time_timestamps=ts, time_offsets=ts_offs,
        txn_index_path=str(txn) if txn.exists() else None, walk_start=walk_start,
        bytes_read=int(n) * 61 + 8 * int(offs.size) + time_bytes,
    )


def list_segment_bases(directory: str) -> list[int]:
    """Base offsets of the ``.log`` files of a partition directory, ascending."""
    return files.segment_base_offsets(directory)


def _checkpointed_log_start(topic: str, partition: int, directory: str) -> int | None:
    """Log start offset recorded by a broker (``log-start-offset-checkpoint`` in the log dir
    root, written after DeleteRecords) or by the engine (its partition offsets file)."""
    from kafkalog.checkpoint import OffsetCheckpointFile

    found = []
    root_cp = Path(directory).parent / files.LOG_START_OFFSET_CHECKPOINT_FILE
    try:
        from kafkalog.log import OFFSETS_FILE

        own = Path(directory) / OFFSETS_FILE
    except ImportError:  # pragma: no cover - log module always present in a full install
        own = None
    for path, key in ((root_cp, (topic, partition)), (own, ("log-start-offset", 0))):
        if path is None or not path.is_file():
            continue
        try:
            value = OffsetCheckpointFile(path).read().get(key)
        except (KafkaLogError, OSError, ValueError):
            continue  # an unreadable checkpoint only loses this hint
        if value is not None:
            found.append(int(value))
    return max(found) if found else None


def describe_partition(topic: str, partition: int, directory: str) -> PartitionInfo:
    """All segments of one partition directory, described for planning."""
    segs = []
    bases = list_segment_bases(directory)
    for base in bases:
        try:
            segs.append(describe_segment(directory, base, last=base == bases[-1]))
        except FileNotFoundError:
            continue  # deleted by retention between listing and reading
    return PartitionInfo(topic, partition, directory, segs,
                         _checkpointed_log_start(topic, partition, directory))


def last_stable_offset(info: PartitionInfo) -> int:
    """Kafka's last stable offset of a partition: the first offset of the oldest transaction
    still open at the log end (no COMMIT/ABORT marker yet), else the log end offset.

    Producer state comes from the newest ``.snapshot`` (Kafka writes one at every roll) plus a
    header replay of the batches after it (:class:`kafkalog.producer_state.ProducerStateManager`,
    read-only), so normally only the active segment is walked.
    """
    from kafkalog.clock import SystemClock
    from kafkalog.config import LogConfig
    from kafkalog.producer_state import ProducerStateManager
    from kafkalog.segment import LogSegment

    leo = info.log_end_offset
    if not info.segments:
        return leo
    psm = ProducerStateManager(info.path, read_only=True)
    psm.load_latest_snapshot(leo, info.log_start_offset)
    start = max(psm.map_end_offset, info.log_start_offset)
    segs = []
    try:
        for i, seg in enumerate(info.segments):
            if info.segment_end(i) <= start:
                continue
            segs.append(LogSegment.open(info.path, seg.base_offset, LogConfig(), SystemClock(),
                                        read_only=True))
        if segs:
            segs[-1].settle_read_only_tail()  # a batch being written is not data yet
        psm.replay(segs, start, leo)
    finally:
        for s in segs:
            s.close()
    return psm.last_stable_offset(leo)
