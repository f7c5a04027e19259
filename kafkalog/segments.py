"""``LogSegments``: a partition's segments ordered by base offset (Kafka's ``LogSegments``).

Copy-on-write: every mutation builds new tuples and swaps them in with one assignment, so a
reader thread iterating a snapshot (``segments.values()``) never sees a half-updated list, and
lookups need no lock. Mutations are serialized by ``Log``'s writer lock.

>>> segs = LogSegments()
>>> len(segs), segs.floor_segment(5)
(0, None)
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator

from .segment import LogSegment

__all__ = ["LogSegments"]


class LogSegments:
    """Base offset -> segment, sorted; the last one is the active segment."""

    def __init__(self) -> None:
        self._bases: tuple[int, ...] = ()
        self._segments: tuple[LogSegment, ...] = ()

    # -- mutation (writer only) --------------------------------------------------------------

    def add(self, segment: LogSegment) -> LogSegment | None:
        """Insert ``segment``; returns the segment it replaced (same base offset), if any."""
        bases, segs = list(self._bases), list(self._segments)
        i = bisect.bisect_left(bases, segment.base_offset)
        replaced = None
        if i < len(bases) and bases[i] == segment.base_offset:
            replaced = segs[i]
            segs[i] = segment
        else:
            bases.insert(i, segment.base_offset)
            segs.insert(i, segment)
        self._segments, self._bases = tuple(segs), tuple(bases)
        return replaced

    def remove(self, base_offset: int) -> LogSegment | None:
        bases, segs = list(self._bases), list(self._segments)
        i = bisect.bisect_left(bases, base_offset)
        if i < len(bases) and bases[i] == base_offset:
            seg = segs.pop(i)
            bases.pop(i)
            self._segments, self._bases = tuple(segs), tuple(bases)
            return seg
        return None

    def clear(self) -> list[LogSegment]:
        old = list(self._segments)
        self._segments, self._bases = (), ()
        return old

    # -- queries (any thread) ----------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._segments)

    def __iter__(self) -> Iterator[LogSegment]:
        return iter(self._segments)

    def __contains__(self, base_offset: object) -> bool:
        if not isinstance(base_offset, int):
            return False
        bases = self._bases  # (one read: a writer may swap it meanwhile)
        i = bisect.bisect_left(bases, base_offset)
        return i < len(bases) and bases[i] == base_offset

    def values(self, from_offset: int | None = None, to_offset: int | None = None
               ) -> list[LogSegment]:
        """Segments that may hold offsets in ``[from_offset, to_offset)`` (Kafka's
        ``values(from, to)``: starts at the floor segment of ``from_offset``)."""
        segs, bases = self._segments, self._bases
        lo = 0
        if from_offset is not None:
            lo = max(0, bisect.bisect_right(bases, from_offset) - 1)
        hi = len(segs)
        if to_offset is not None:
            hi = bisect.bisect_left(bases, to_offset)
        return list(segs[lo:hi])

    def get(self, base_offset: int) -> LogSegment | None:
        i = bisect.bisect_left(self._bases, base_offset)
        if i < len(self._bases) and self._bases[i] == base_offset:
            return self._segments[i]
        return None

    def floor_segment(self, offset: int) -> LogSegment | None:
        """The segment with the greatest base offset <= ``offset``."""
        segs, bases = self._segments, self._bases
        i = bisect.bisect_right(bases, offset) - 1
        return segs[i] if i >= 0 else None

    def higher_segment(self, offset: int) -> LogSegment | None:
        """The segment with the smallest base offset > ``offset``."""
        segs, bases = self._segments, self._bases
        i = bisect.bisect_right(bases, offset)
        return segs[i] if i < len(segs) else None

    @property
    def first(self) -> LogSegment | None:
        segs = self._segments
        return segs[0] if segs else None

    @property
    def active(self) -> LogSegment:
        """The last segment (the one appended to)."""
        return self._segments[-1]

    @property
    def base_offsets(self) -> tuple[int, ...]:
        return self._bases

    def size_in_bytes(self) -> int:
        return sum(s.size for s in self._segments)
