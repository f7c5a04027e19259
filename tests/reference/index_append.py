"""Plain-Python oracle for native/index_append.py: the entries the one-entry index appends
(``OffsetIndex.append``, ``TimeIndex.maybe_append``) would write, with ``struct``."""

from __future__ import annotations

import struct

INT32_MAX = 2**31 - 1


def pack_offset_entries(offsets: list[int], positions: list[int], base_offset: int,
                        last_offset: int, has_last: int) -> bytes | None:
    """Packed entries, or None when one would fail ``OffsetIndex.append``'s checks."""
    out = bytearray()
    prev = last_offset if has_last else None
    for o, p in zip(offsets, positions):
        if prev is not None and o <= prev:
            return None
        if not 0 <= o - base_offset <= INT32_MAX or not 0 <= p <= INT32_MAX:
            return None
        out += struct.pack(">ii", o - base_offset, p)
        prev = o
    return bytes(out)


def pack_time_entries(timestamps: list[int], offsets: list[int], base_offset: int,
                      last_timestamp: int, last_offset: int, has_last: int) -> bytes | None:
    """Packed kept entries, or None when a call would fail ``maybe_append``'s checks."""
    out = bytearray()
    last_ts, last_off, nonempty = last_timestamp, last_offset, bool(has_last)
    for t, o in zip(timestamps, offsets):
        if nonempty and (o < last_off or t < last_ts):
            return None
        if t > last_ts:
            if not 0 <= o - base_offset <= INT32_MAX:
                return None
            out += struct.pack(">qi", t, o - base_offset)
            last_ts, last_off, nonempty = t, o, True
    return bytes(out)
