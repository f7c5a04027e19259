"""A writable segment's per-append state, and the one-call append of its common case.

:class:`SegmentAppendState` holds what a :class:`~kafkalog.segment.LogSegment` reads and
changes on every append; the segment keeps no copy of it (its ``_size``, ``_reserved_end``,
... are properties over this object). Fields:

- ``fd``: the ``.log`` appends write to, or -1 (closed or read-only: no append).
- ``base_offset``, ``segment_bytes``, ``index_interval``: fixed for the segment's life.
- ``size``: committed bytes of the ``.log`` (whole batches only), moved after the bytes are
  written, so a reader never sees a size whose bytes are not in the page cache.
- ``reserved_end``: disk blocks of the ``.log`` are reserved up to here (``fallocate``); an
  append ending past it reserves more first.
- ``bytes_since_index``: bytes appended since the last index entry (Kafka's
  ``bytesSinceLastIndexEntry``).
- ``roll_after_timestamp``: an append whose max timestamp is above this may be due to roll by
  the time rule (``INT64_MIN`` while the rule's start is unknown or not a timestamp).
- ``max_timestamp``, ``max_timestamp_offset``: the running max timestamp and the offset of
  its batch, valid when ``max_loaded`` is 1.
- ``room``, ``last_offset`` and the staged entries: index entries earned by appends and not
  yet in the index files (``LogSegment.append``), each ``(offset, position, max timestamp,
  its offset)``, the arguments of ``OffsetIndex.append`` and ``TimeIndex.maybe_append``.
  ``room``: how many more may be staged, at most the free slots of either index, so that
  while ``room > 0`` neither index can be full with every staged entry written; 0 means
  "write at once", and also "unknown" (the indexes were used from outside: measured again by
  the next roll check). ``last_offset``: the last offset staged or written.

:func:`append_v2_batch` ``(state, data, check_crc, log_end_offset, max_bytes)`` appends one
whole v2 batch when it is the common case (no roll due, no blocks to reserve, ...) and returns
``(base_offset, last_offset, partition_leader_epoch, max_timestamp, records_count,
pending_position)``, or None having done nothing; ``pending_position >= 0`` asks the caller
to write the index entry the append earned there. It exists only in C (``native/_append.c``);
without the extension it is None and every append takes the Python path, which is its
reference (``tests/test_segment_append_state.py`` compares the files both write).

>>> st = SegmentAppendState(4)
>>> st.stage(10, 0, 5, 10)
>>> st.staged_count(), len(st.take_staged()), st.staged_count()
(1, 32, 0)
"""

from __future__ import annotations

import struct
from typing import Any

from .native import optional_extension

__all__ = ["SegmentAppendState", "SegmentAppendStatePy", "append_v2_batch"]

_INT64_MIN = -(2**63)
_ENTRY = struct.Struct("=4q")


class SegmentAppendStatePy:
    """The Python twin of the C ``SegmentAppendState`` (same fields and methods)."""

    __slots__ = ("fd", "base_offset", "size", "reserved_end", "segment_bytes",
                 "bytes_since_index", "index_interval", "roll_after_timestamp",
                 "max_timestamp", "max_timestamp_offset", "max_loaded", "room", "last_offset",
                 "capacity", "_staged")

    def __init__(self, capacity: int) -> None:
        if not 0 <= capacity <= 1 << 20:  # (0: nothing is ever staged)
            raise ValueError(f"SegmentAppendState: capacity must be in 0..{1 << 20}, "
                             f"found {capacity}")
        self.capacity = capacity
        self.fd = -1
        self.base_offset = self.size = self.reserved_end = self.segment_bytes = 0
        self.bytes_since_index = self.index_interval = 0
        self.roll_after_timestamp = _INT64_MIN
        self.max_timestamp = self.max_timestamp_offset = -1
        self.max_loaded = 0
        self.room = 0
        self.last_offset = _INT64_MIN
        self._staged = bytearray()

    def stage(self, offset: int, position: int, timestamp: int, timestamp_offset: int) -> None:
        """Add one index entry (``room`` and ``last_offset`` are the caller's to update)."""
        if len(self._staged) >= self.capacity * _ENTRY.size:
            raise RuntimeError(f"stage: {self.capacity} entries already staged (the capacity)")
        self._staged += _ENTRY.pack(offset, position, timestamp, timestamp_offset)

    def staged_count(self) -> int:
        return len(self._staged) // _ENTRY.size

    def take_staged(self) -> bytes:
        """Every staged entry as 4 native int64 each; none staged after."""
        taken = bytes(self._staged)
        del self._staged[:len(taken)]
        return taken


_append = optional_extension("_append")
#: the C class when the extension is built, else the Python twin
SegmentAppendState: Any = _append.SegmentAppendState if _append is not None \
    else SegmentAppendStatePy
#: the one-call append of the common case, or None without the extension
append_v2_batch: Any = _append.append_v2_batch if _append is not None else None
