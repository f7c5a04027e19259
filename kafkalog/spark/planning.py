"""Plan a read: resolve starting/ending offsets per partition, then cut byte ranges into tasks.

Everything here runs in Spark's planner worker and reads only directory listings, index files
and batch headers (see :mod:`kafkalog.spark.layout`); the one exception is resolving a
*timestamp* to an offset (``startingTimestamp``... options), which decodes the single batch
Kafka's ``offsetsForTimes`` lands on.

Splitting (issue 5): a selected segment range ``[start_pos, end_pos)`` is cut only at positions
taken from its ``.index``: every index position is the start of a batch, so every piece starts
on a batch boundary and ends where the next piece starts. A piece closes once it holds
``target`` bytes (``maxBytesPerPartition``, or ``total / minPartitions`` if smaller) or the
estimated ``maxRecordsPerPartition`` offsets. Pieces smaller than the target (small segments,
small partitions) are then packed together into one task.

Each piece carries exact offsets ``[start_offset, end_offset)``: the reader drops records
outside them, so a batch straddling a boundary is never returned twice.

>>> Chunk("t", 0, "/x/00000000000000000000.log", 0, 100, 0, 10, 10).nbytes
100
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import numpy as np

from kafkalog.errors import ConfigError, KafkaLogError, OffsetOutOfRangeError
from kafkalog.file_copy import FileCopy
from kafkalog.native.scan import STOP_LIMIT

from .layout import (
    PartitionInfo,
    SegmentInfo,
    describe_partition,
    discover_partitions,
    last_stable_offset,
)
from .options import EARLIEST, LATEST, OffsetSpec, ReadOptions
from .pushdown import Bounds

__all__ = [
    "Chunk",
    "ReadTask",
    "Plan",
    "offset_for_timestamp",
    "resolve_range",
    "plan_read",
    "resolve_group_start",
    "partition_ranges",
    "split_and_group",
]


@dataclass
class Chunk:
    """A byte range of one segment: batches starting in ``[start_pos, end_pos)``, records in
    ``[start_offset, end_offset)``."""

    topic: str
    partition: int
    log_path: str
    start_pos: int
    end_pos: int
    start_offset: int
    end_offset: int
    est_records: int
    aborted: tuple[tuple[int, int, int], ...] = ()  # (producer id, first offset, marker offset)

    @property
    def nbytes(self) -> int:
        return self.end_pos - self.start_pos


@dataclass
class ReadTask:
    """What one Spark task reads (pickled into an InputPartition: paths and numbers only)."""

    index: int
    chunks: list[Chunk] = field(default_factory=list)

    @property
    def nbytes(self) -> int:
        return sum(c.nbytes for c in self.chunks)


@dataclass
class Plan:
    """The tasks plus what planning learned (for tests, benchmarks and the stream reader)."""

    tasks: list[ReadTask]
    partitions: list[PartitionInfo]
    ranges: dict[tuple[str, int], tuple[int, int]]  # resolved [start, end) per partition
    planning_bytes: int = 0  # bytes planning read: headers, index entries, batches decoded


# -- offset resolution ---------------------------------------------------------------------------


def _first_record_at_or_after(seg: SegmentInfo, timestamp: int, not_before: int,
                              stats: dict | None = None) -> int | None:
    """Kafka's ``LogSegment.findOffsetByTimestamp`` on one segment (spec §5.3).

    Position from ``.timeindex`` then ``.index``; walk batch headers to the first batch whose
    maxTimestamp >= ``timestamp``; decode that batch only and return its first record with
    timestamp >= ``timestamp`` and offset >= ``not_before``.
    """
    from kafkalog.records.timestamp_search import first_record_at_or_after

    hint = seg.time_entry_at_or_below(timestamp)
    if hint is not None and hint[1] <= not_before:
        hint = None  # (the entry does not place the start: nothing to check)
    target = max(hint[1] if hint is not None else seg.base_offset, not_before)
    pos = seg.position_for(target)
    try:
        copy = FileCopy(seg.log_path)  # never a mapping: the writer may cut the file
    except FileNotFoundError:
        return None  # deleted by retention since planning described it
    with copy:
        if hint is not None and not _time_entry_holds(copy, seg, pos, hint):
            # damaged, yet monotonic (it passed the layout's check): it may start the search
            # past the answer; the segment is searched from not_before's position instead
            pos = seg.position_for(max(seg.base_offset, not_before))
        while pos < seg.data_end:
            scan = copy.scan(pos, seg.data_end, max_entries=256)
            n = scan["count"]
            if n == 0:
                return None
            hits = np.flatnonzero(
                (scan["max_timestamps"] >= timestamp) & (scan["last_offsets"] >= not_before)
            )
            if hits.size:
                i = int(hits[0])
                p, size = int(scan["positions"][i]), int(scan["sizes"][i])
                attrs = int(scan["attributes"][i])
                if scan["magics"][i] == 2 and attrs & 0x20:
                    # a control batch: Kafka would return its record; starting there is the same
                    return max(int(scan["base_offsets"][i]), not_before)
                hit = first_record_at_or_after(copy.buf[p:p + size], timestamp, not_before)
                if stats is not None:
                    stats["decoded_bytes"] = stats.get("decoded_bytes", 0) + size
                if hit is not None:
                    return hit[1]
                pos = p + size
                continue
            pos = int(scan["stop_position"])
            if scan["stop_reason"] != STOP_LIMIT:  # end of data
                break
    return None


def _time_entry_holds(copy: FileCopy, seg: SegmentInfo, pos: int, entry: tuple[int, int]
                      ) -> bool:
    """``LogSegment._search_for_timestamp``'s check of a ``.timeindex`` entry: the batch
    holding its offset (walked to from ``pos``, a batch start at or before it) carries its
    timestamp as max."""
    while pos < seg.data_end:
        scan = copy.scan(pos, seg.data_end, max_entries=256)
        n = int(scan["count"])
        if n == 0:
            return False
        j = int(np.searchsorted(scan["last_offsets"][:n], entry[1], side="left"))
        if j < n:
            return int(scan["max_timestamps"][j]) == entry[0]
        pos = int(scan["stop_position"])
        if scan["stop_reason"] != STOP_LIMIT:
            break
    return False


def offset_for_timestamp(info: PartitionInfo, timestamp: int, not_before: int = 0, *,
                         stats: dict | None = None) -> int | None:
    """Earliest offset whose record timestamp >= ``timestamp`` (Kafka's ``offsetsForTimes``);
    ``None`` when no record matches. ``stats["decoded_bytes"]`` counts the batches decoded."""
    for i, seg in enumerate(info.segments):
        exact_max = seg.time_timestamps.size > 0 or seg.walk_start == 0
        if exact_max and seg.max_timestamp < timestamp:
            continue
        if info.segment_end(i) <= not_before:
            continue
        found = _first_record_at_or_after(seg, timestamp, not_before, stats)
        if found is not None:
            return found
    return None


def _resolve(info: PartitionInfo, spec: OffsetSpec, *, is_start: bool, strategy: str,
             fail_on_data_loss: bool, stats: dict | None = None) -> int:
    kind, value = spec.for_partition(info.topic, info.partition)
    lso, leo = info.log_start_offset, info.readable_end
    name = f"{info.topic}-{info.partition}"
    if kind == "timestamp":
        found = offset_for_timestamp(info, value, stats=stats)
        if found is not None:
            return found
        if is_start and strategy == "error":
            raise OffsetOutOfRangeError(
                f"{name}: no record with timestamp >= {value} for the starting timestamp "
                "(set startingOffsetsByTimestampStrategy=latest to start at the end instead)",
                path=info.path,
            )
        return leo
    if value == EARLIEST:
        return lso
    if value == LATEST:
        return leo
    if value < lso:
        if fail_on_data_loss:
            raise OffsetOutOfRangeError(
                f"{name}: {'starting' if is_start else 'ending'} offset {value} is below the log "
                f"start offset {lso} (records were deleted); set failOnDataLoss=false to "
                "read from the earliest offset instead",
                path=info.path, offset=value,
            )
        return lso
    return min(value, leo) if not is_start else value


def resolve_range(info: PartitionInfo, opts: ReadOptions, stats: dict | None = None
                  ) -> tuple[int, int]:
    """``[start, end)`` offsets for one partition from the starting/ending options."""
    start = _resolve(info, opts.starting, is_start=True, strategy=opts.starting_ts_strategy,
                     fail_on_data_loss=opts.fail_on_data_loss, stats=stats)
    end = _resolve(info, opts.ending, is_start=False, strategy="latest",
                   fail_on_data_loss=opts.fail_on_data_loss, stats=stats)
    if start > end:
        if start > info.readable_end:
            raise OffsetOutOfRangeError(
                f"{info.topic}-{info.partition}: starting offset {start} is after the "
                f"{'last stable' if info.stable_end is not None else 'log end'} offset "
                f"{info.readable_end}", path=info.path, offset=start,
            )
        raise ConfigError(
            f"{info.topic}-{info.partition}: starting offset {start} is after the ending offset "
            f"{end}"
        )
    return start, end


# -- byte ranges ---------------------------------------------------------------------------------


def _read_aborted(info: PartitionInfo) -> list[tuple[int, int, int]]:
    """Every aborted transaction recorded in the partition's ``.txnindex`` files."""
    from kafkalog.spark._txn import read_aborted_txns

    out: list[tuple[int, int, int]] = []
    for seg in info.segments:
        if seg.txn_index_path:
            out.extend(read_aborted_txns(seg.txn_index_path, seg.base_offset))
    return out


def partition_ranges(info: PartitionInfo, start: int, end: int, *, timestamp_lo: int | None = None,
                     read_committed: bool = False) -> list[tuple[SegmentInfo, Chunk]]:
    """The segment byte ranges holding offsets ``[start, end)`` (one chunk per segment).

    ``timestamp_lo`` (a pruning hint) drops segments whose max timestamp is below it and seeks
    within the first remaining one using ``.timeindex``.
    """
    out: list[tuple[SegmentInfo, Chunk]] = []
    if start >= end:
        return out
    aborted = tuple(_read_aborted(info)) if read_committed else ()
    for i, seg in enumerate(info.segments):
        seg_end = info.segment_end(i)
        if seg_end <= start or seg.base_offset >= end or seg.data_end == 0:
            continue
        seek = max(start, seg.base_offset)
        if timestamp_lo is not None:
            exact_max = seg.time_timestamps.size > 0 or seg.walk_start == 0
            if exact_max and seg.max_timestamp < timestamp_lo:
                continue
            # (T, O) with T <= lo - 1 < lo: every record up to O is older than lo
            o = seg.time_lookup(timestamp_lo - 1)
            if o is not None:
                seek = max(seek, o + 1)
        start_pos = seg.position_for(seek) if seek > seg.base_offset else 0
        end_pos = seg.end_position_for(end) if end < seg_end else seg.data_end
        end_pos = min(end_pos, seg.data_end)
        if end_pos <= start_pos:
            continue
        s_off, e_off = max(start, seg.base_offset), min(end, seg_end)
        mine = tuple(a for a in aborted if a[1] < e_off and a[2] >= s_off)
        out.append((seg, Chunk(info.topic, info.partition, seg.log_path, start_pos, end_pos,
                               s_off, e_off, e_off - s_off, mine)))
    return out


def _cut(seg: SegmentInfo, chunk: Chunk, target: int, max_records: int | None) -> list[Chunk]:
    """Cut one segment chunk at ``.index`` positions into pieces of about ``target`` bytes.

    A piece closes at the first index position at least ``target`` bytes after its start, or
    where the estimated offsets reach ``max_records`` (batches at or after index entry ``j``
    hold offsets above entry ``j - 1``'s offset, which gives the estimate). One
    ``searchsorted`` per cut: no Python loop over index entries.
    """
    if chunk.nbytes <= target and (max_records is None or chunk.est_records <= max_records):
        return [chunk]
    lo = int(np.searchsorted(seg.index_positions, chunk.start_pos, side="right"))
    hi = int(np.searchsorted(seg.index_positions, chunk.end_pos, side="left"))
    pos = seg.index_positions[lo:hi]
    prev = seg.index_offsets[max(lo - 1, 0):max(hi - 1, 0)] + 1
    est = prev if lo > 0 else np.concatenate(([seg.base_offset], prev))[: pos.size]
    est = np.clip(est, chunk.start_offset, chunk.end_offset)
    pieces: list[Chunk] = []
    cur_pos, cur_off, i = chunk.start_pos, chunk.start_offset, 0
    while i < pos.size:
        k = int(np.searchsorted(pos, cur_pos + target, side="left"))
        if max_records is not None:
            k = min(k, int(np.searchsorted(est, cur_off + max_records, side="left")))
        k = max(k, i)
        if k >= pos.size:
            break
        p = int(pos[k])
        e = max(int(est[k]), cur_off)
        pieces.append(Chunk(chunk.topic, chunk.partition, chunk.log_path, cur_pos, p,
                            chunk.start_offset, chunk.end_offset, e - cur_off, chunk.aborted))
        cur_pos, cur_off, i = p, e, k + 1
    # every piece keeps the exact range [start_offset, end_offset): records of a batch belong
    # to the piece holding the batch start, so no record is read twice or lost at a cut
    pieces.append(Chunk(chunk.topic, chunk.partition, chunk.log_path, cur_pos, chunk.end_pos,
                        chunk.start_offset, chunk.end_offset, chunk.end_offset - cur_off,
                        chunk.aborted))
    return pieces


def split_and_group(ranges: list[tuple[SegmentInfo, Chunk]], opts: ReadOptions) -> list[ReadTask]:
    """Cut large ranges at index entries and pack small ones into tasks."""
    total = sum(c.nbytes for _, c in ranges)
    target = opts.max_bytes_per_partition
    if opts.min_partitions:
        target = min(target, max(1, math.ceil(total / opts.min_partitions)))
    max_records = opts.max_records_per_partition
    pieces: list[Chunk] = []
    for seg, chunk in ranges:
        pieces.extend(_cut(seg, chunk, target, max_records))
    tasks: list[ReadTask] = []
    cur = ReadTask(0)
    cur_records = 0
    for c in pieces:
        over_bytes = cur.chunks and cur.nbytes + c.nbytes > target
        over_records = (cur.chunks and max_records is not None
                        and cur_records + c.est_records > max_records)
        if over_bytes or over_records:
            tasks.append(cur)
            cur = ReadTask(len(tasks))
            cur_records = 0
        cur.chunks.append(c)
        cur_records += c.est_records
    if cur.chunks:
        tasks.append(cur)
    return tasks


def resolve_group_start(opts: ReadOptions) -> ReadOptions:
    """``startingOffsetsFromGroup``: the group's committed offsets (from the
    ``__consumer_offsets`` directories under the paths, replayed as the group coordinator loads
    them) as an ``offsets`` start; other options are returned unchanged."""
    spec = opts.starting
    if spec.kind != "group" or spec.group is None:
        return opts
    from ..groups.config import OFFSETS_TOPIC
    from ..groups.metadata_manager import committed_offsets

    found = discover_partitions(opts.paths)
    present = {(t, p) for t, p, _ in found}
    committed = committed_offsets([d for t, _, d in found if t == OFFSETS_TOPIC], spec.group)
    per = {tp: o for tp, o in committed.items() if tp in present and opts.selects(*tp)}
    return dataclasses.replace(opts, starting=OffsetSpec("offsets", per, default=spec.default))


def plan_read(opts: ReadOptions, bounds: Bounds | None = None) -> Plan:
    """Discover, resolve and split: the whole batch plan."""
    opts = resolve_group_start(opts)
    bounds = bounds or Bounds()
    infos = []
    present = set()
    for topic, partition, directory in discover_partitions(opts.paths):
        present.add((topic, partition))
        if opts.selects(topic, partition) and bounds.allows(topic, partition):
            info = describe_partition(topic, partition, directory)
            if opts.read_committed:
                info.stable_end = last_stable_offset(info)
            infos.append(info)
    _check_requested_partitions(opts, present)
    lo_b, hi_b = bounds.offset_range()
    ranges: list[tuple[SegmentInfo, Chunk]] = []
    resolved: dict[tuple[str, int], tuple[int, int]] = {}
    planning_bytes = 0
    stats = {"decoded_bytes": 0}
    for info in infos:
        planning_bytes += sum(s.bytes_read for s in info.segments)
        start, end = resolve_range(info, opts, stats)
        resolved[(info.topic, info.partition)] = (start, end)
        if lo_b is not None:
            start = max(start, lo_b)
        if hi_b is not None:
            end = min(end, hi_b)
        ranges.extend(partition_ranges(info, start, end, timestamp_lo=bounds.timestamp_lo_ms,
                                       read_committed=opts.read_committed))
    tasks = split_and_group(ranges, opts)
    return Plan(tasks, infos, resolved, planning_bytes + stats["decoded_bytes"])


def _check_requested_partitions(opts: ReadOptions, present: set[tuple[str, int]]) -> None:
    """Topic-partitions named by ``assign`` or offsets JSON must exist (as with Kafka)."""
    wanted: set[tuple[str, int]] = set()
    if opts.assign:
        wanted |= {(t, p) for t, ps in opts.assign.items() for p in ps}
    for spec in (opts.starting, opts.ending):
        wanted |= {k for k in spec.per_partition if opts.selects(*k)}
    missing = sorted(wanted - present)
    if missing and opts.fail_on_data_loss:
        names = ", ".join(f"{t}-{p}" for t, p in missing)
        raise KafkaLogError(
            f"topic-partitions {names} were requested but no such directory exists under "
            f"{', '.join(opts.paths)} (set failOnDataLoss=false to ignore)"
        )
