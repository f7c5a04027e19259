"""A plain model of Kafka's index-entry rules, used to prove our index files byte-identical.

Written from the Kafka sources (``LogSegment.append``, ``LogSegment.recover``,
``LogSegment.onBecomeInactiveSegment``/``close``, ``OffsetIndex.append``,
``TimeIndex.maybeAppend``, ``LogSegment.shouldRoll``), with nothing shared with kafkalog: plain
lists and ``struct``. Only size-based and index-full rolls are modelled (tests keep
``segment.ms`` out of reach).

Live appends (§5.2/§5.3):

* before writing an append, if more than ``index_interval`` bytes were appended since the last
  entry: offset entry ``(append.last_offset, position where the append starts)``, then the time
  index is offered the running ``(max timestamp, offset of the batch holding it)``;
* the time index takes an entry only if its timestamp is above the last entry's (an empty index
  compares with -1);
* on roll and close the time index is offered the running max once more (no full check).

Rebuild (recovery) uses the same rule per batch, keyed on the bytes validated so far.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field


@dataclass
class Append:
    """One append call: ``size`` bytes holding offsets ``first..last``."""

    first_offset: int
    last_offset: int
    size: int
    max_timestamp: int
    shallow_offset: int  # last offset of the (first) batch holding max_timestamp


@dataclass
class ModelSegment:
    base_offset: int
    index_bytes: int
    size: int = 0
    bytes_since_last_entry: int = 0
    offset_entries: list[tuple[int, int]] = field(default_factory=list)
    time_entries: list[tuple[int, int]] = field(default_factory=list)
    max_ts: int = -1
    max_ts_offset: int = -1

    def offset_index_full(self) -> bool:
        return len(self.offset_entries) >= self.index_bytes // 8

    def time_index_full(self) -> bool:
        return len(self.time_entries) >= self.index_bytes // 12 - 1

    def offer_time(self, ts: int, offset: int) -> None:
        last_ts = self.time_entries[-1][0] if self.time_entries else -1
        if ts > last_ts:
            self.time_entries.append((ts, offset))

    def finish(self) -> None:
        """Roll or close: the final time entry."""
        if self.max_ts >= 0:
            self.offer_time(self.max_ts, self.max_ts_offset)

    def index_file(self) -> bytes:
        return b"".join(struct.pack(">ii", o - self.base_offset, p)
                        for o, p in self.offset_entries)

    def time_index_file(self) -> bytes:
        return b"".join(struct.pack(">qi", t, o - self.base_offset)
                        for t, o in self.time_entries)


def model_live_appends(appends: list[Append], *, segment_bytes: int, index_interval: int,
                       index_bytes: int = 10485760, start_offset: int = 0
                       ) -> list[ModelSegment]:
    """Segments (finished as on close) after ``appends`` to an empty log."""
    segs = [ModelSegment(start_offset, index_bytes)]
    leo = start_offset
    for a in appends:
        seg = segs[-1]
        relative_ok = 0 <= a.last_offset - seg.base_offset <= 2**31 - 1
        if (seg.size > segment_bytes - a.size or seg.offset_index_full()
                or seg.time_index_full() or not relative_ok):
            seg.finish()
            seg = ModelSegment(max(a.first_offset, leo), index_bytes)
            segs.append(seg)
        position = seg.size
        seg.size += a.size
        if a.max_timestamp > seg.max_ts:
            seg.max_ts, seg.max_ts_offset = a.max_timestamp, a.shallow_offset
        if seg.bytes_since_last_entry > index_interval:
            seg.offset_entries.append((a.last_offset, position))
            seg.offer_time(seg.max_ts, seg.max_ts_offset)
            seg.bytes_since_last_entry = 0
        seg.bytes_since_last_entry += a.size
        leo = a.last_offset + 1
    segs[-1].finish()
    return segs


def model_rebuild(batches: list[tuple[int, int, int]], *, base_offset: int, index_interval: int,
                  index_bytes: int = 10485760) -> ModelSegment:
    """Recovery's rebuild over ``(size, last_offset, max_timestamp)`` batches in file order."""
    seg = ModelSegment(base_offset, index_bytes)
    valid = 0
    last_entry_position = 0
    for size, last, ts in batches:
        if ts > seg.max_ts:
            seg.max_ts, seg.max_ts_offset = ts, last
        if valid - last_entry_position > index_interval:
            seg.offset_entries.append((last, valid))
            seg.offer_time(seg.max_ts, seg.max_ts_offset)
            last_entry_position = valid
        valid += size
    seg.size = valid
    seg.finish()
    return seg
