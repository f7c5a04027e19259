"""Retention rules: which old segments to delete (Kafka's ``UnifiedLog.deleteOldSegments``).

Pure functions over the segment list; ``Log.enforce_retention`` applies them in Kafka's order
(log start offset, then size, then time; size and time only with ``cleanup.policy`` ``delete``)
and does the deleting. Shared rule (``LocalLog.deletableSegments``): take segments from the
oldest while the predicate holds, stop at the first that fails, never past the high watermark,
never the active segment when it is empty.

>>> class S:
...     def __init__(self, b, n, ts): self.base_offset, self.size, self.largest_timestamp = b, n, ts
>>> segs = [S(0, 100, 10), S(10, 100, 20), S(20, 0, -1)]
>>> [s.base_offset for s in retention_ms_breached(segs, now=1000, retention_ms=985,
...                                                 high_watermark=20, log_end_offset=20)]
[0]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

__all__ = [
    "deletable_segments",
    "log_start_offset_breached",
    "retention_size_breached",
    "retention_ms_breached",
]


class _Segment(Protocol):
    base_offset: int

    @property
    def size(self) -> int: ...


def deletable_segments(
    segments: Sequence[Any],
    predicate: Callable[[Any, Any | None], bool],
    *,
    high_watermark: int,
    log_end_offset: int,
) -> list[Any]:
    """The oldest segments for which ``predicate(segment, next_segment)`` holds, in order.

    A segment is taken only if every offset in it is below the high watermark (its upper bound,
    the next base offset or the log end offset, is <= ``high_watermark``) and it is not the last
    segment while empty.
    """
    out = []
    n = len(segments)
    for i, seg in enumerate(segments):
        nxt = segments[i + 1] if i + 1 < n else None
        upper = nxt.base_offset if nxt is not None else log_end_offset
        is_last_and_empty = nxt is None and seg.size == 0
        if high_watermark >= upper and not is_last_and_empty and predicate(seg, nxt):
            out.append(seg)
        else:
            break
    return out


def log_start_offset_breached(segments: Sequence[Any], *, log_start_offset: int,
                              high_watermark: int, log_end_offset: int) -> list[Any]:
    """Segments wholly below the log start offset (the next segment starts at or before it)."""
    return deletable_segments(
        segments, lambda s, nxt: nxt is not None and nxt.base_offset <= log_start_offset,
        high_watermark=high_watermark, log_end_offset=log_end_offset)


def retention_size_breached(segments: Sequence[Any], *, retention_bytes: int,
                            high_watermark: int, log_end_offset: int) -> list[Any]:
    """Oldest segments to drop so the log fits ``retention_bytes`` (-1 disables).

    Kafka: ``diff = size - retention``; take a segment while ``diff - segment.size >= 0``.
    """
    size = sum(s.size for s in segments)
    if retention_bytes < 0 or size < retention_bytes:
        return []
    diff = [size - retention_bytes]

    def pred(seg: Any, _nxt: Any) -> bool:
        if diff[0] - seg.size >= 0:
            diff[0] -= seg.size
            return True
        return False

    return deletable_segments(segments, pred, high_watermark=high_watermark,
                              log_end_offset=log_end_offset)


def retention_ms_breached(segments: Sequence[Any], *, now: int, retention_ms: int,
                          high_watermark: int, log_end_offset: int,
                          largest_timestamp: Callable[[Any], int] | None = None) -> list[Any]:
    """Oldest segments whose newest record is older than ``retention_ms`` (-1 disables).

    Age is ``now - segment.largest_timestamp`` (the segment's max timestamp, or its ``.log``
    mtime when it has none); ``largest_timestamp(segment)`` gives it instead when passed (the
    log passes its checked one: a time index that lost its last entries must not make a
    segment look older than its records and be deleted early).
    """
    if retention_ms < 0:
        return []
    if largest_timestamp is None:
        return deletable_segments(
            segments, lambda s, _nxt: now - s.largest_timestamp > retention_ms,
            high_watermark=high_watermark, log_end_offset=log_end_offset)
    return deletable_segments(
        segments, lambda s, _nxt: now - largest_timestamp(s) > retention_ms,
        high_watermark=high_watermark, log_end_offset=log_end_offset)
