"""Build partition directories with the engine's segment writer, and the rows expected back.

``write_partition`` appends encoded batches through :class:`kafkalog.segment.LogSegment` (so
``.index``/``.timeindex`` are maintained by the engine's own rule) and rolls when the next batch
would overflow ``segment_bytes``. The last segment is left *active* by default: its indexes stay
preallocated (zero-filled tails), as on a live broker.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from kafkalog.clock import ManualClock
from kafkalog.config import LogConfig
from kafkalog.records.builder import encode_batch, encode_end_txn_marker
from kafkalog.segment import LogSegment


@dataclass
class Expected:
    """Rows expected from a partition: parallel lists (offset order)."""

    topic: str
    partition: int
    offsets: list[int] = field(default_factory=list)
    keys: list[bytes | None] = field(default_factory=list)
    values: list[bytes | None] = field(default_factory=list)
    timestamps: list[int] = field(default_factory=list)
    timestamp_types: list[int] = field(default_factory=list)
    headers: list[list[tuple[str, bytes | None]] | None] = field(default_factory=list)

    def rows(self) -> list[tuple]:
        return [
            (k, v, self.topic, self.partition, o, t, tt, h)
            for o, k, v, t, tt, h in zip(self.offsets, self.keys, self.values, self.timestamps,
                                         self.timestamp_types, self.headers)
        ]


class PartitionWriter:
    """Append batches to ``root/topic-partition`` like a broker would (one batch per append)."""

    def __init__(self, root: str | os.PathLike[str], topic: str, partition: int, *,
                 segment_bytes: int = 1 << 20, index_interval_bytes: int = 4096,
                 start_offset: int = 0) -> None:
        self.dir = Path(root) / f"{topic}-{partition}"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.config = LogConfig(segment_bytes=segment_bytes,
                                index_interval_bytes=index_interval_bytes)
        self.clock = ManualClock()
        self.next_offset = start_offset
        self.segment = LogSegment.open(self.dir, start_offset, self.config, self.clock)
        self.expected = Expected(topic, partition)

    def _append(self, data: bytes, last_offset: int, max_ts: int, shallow: int) -> None:
        if self.segment.size > 0 and self.segment.size + len(data) > self.config.segment_bytes:
            self.segment.on_become_inactive()
            self.segment.close()
            self.segment = LogSegment.open(self.dir, self.next_offset, self.config, self.clock)
        self.segment.append(last_offset, max_ts, shallow, data)

    def append(self, records: list[tuple], *, compression: str = "none",
               log_append_time: int | None = None, producer_id: int = -1,
               transactional: bool = False, visible: bool = True) -> tuple[int, int]:
        """records: (key, value, timestamp, headers). Returns the (first, last) offsets."""
        base = self.next_offset
        kwargs = {}
        if log_append_time is not None:
            kwargs = {"timestamp_type": "log_append", "log_append_time": log_append_time}
        data = encode_batch([(k, v, t, h or ()) for k, v, t, h in records], base_offset=base,
                            compression=compression, producer_id=producer_id,
                            producer_epoch=0 if producer_id >= 0 else -1,
                            base_sequence=0 if producer_id >= 0 else -1,
                            transactional=transactional, **kwargs)
        last = base + len(records) - 1
        ts = [t for _, _, t, _ in records]
        max_ts = log_append_time if log_append_time is not None else max(ts)
        self._append(data, last, max_ts, last)
        self.next_offset = last + 1
        if visible:
            e = self.expected
            for i, (k, v, t, h) in enumerate(records):
                e.offsets.append(base + i)
                e.keys.append(k)
                e.values.append(v)
                e.timestamps.append(log_append_time if log_append_time is not None else t)
                e.timestamp_types.append(1 if log_append_time is not None else 0)
                e.headers.append(list(h) if h else None)
        return base, last

    def end_txn(self, producer_id: int, commit: bool, timestamp: int) -> int:
        off = self.next_offset
        data = encode_end_txn_marker(commit, producer_id=producer_id, producer_epoch=0,
                                     base_offset=off, timestamp=timestamp)
        self._append(data, off, timestamp, off)
        self.next_offset = off + 1
        return off

    def close(self, *, active: bool = True) -> None:
        """Leave the last segment active (indexes preallocated) or roll-close it."""
        if active:
            self.segment.flush()
            self.segment.close_handlers()
        else:
            self.segment.close()


def simple_partition(root: str | os.PathLike[str], topic: str, partition: int, n: int, *,
                     per_batch: int = 10, ts0: int = 1_700_000_000_000, value_size: int = 100,
                     segment_bytes: int = 1 << 20, headers_every: int = 0,
                     compression: str = "none", active: bool = True) -> Expected:
    """``n`` records in batches of ``per_batch``; timestamp = ts0 + offset*1000 (monotonic)."""
    w = PartitionWriter(root, topic, partition, segment_bytes=segment_bytes)
    for b0 in range(0, n, per_batch):
        recs = []
        for o in range(b0, min(n, b0 + per_batch)):
            key = None if o % 7 == 0 else f"k{o}".encode()
            value = None if o % 13 == 5 else (f"{topic}:{partition}:{o}:".encode()
                                               .ljust(value_size, b"x"))
            hdrs = ([("h", f"{o}".encode()), ("n", None)]
                    if headers_every and o % headers_every == 0 else None)
            recs.append((key, value, ts0 + o * 1000, hdrs))
        w.append(recs, compression=compression)
    w.close(active=active)
    return w.expected
