"""Plain-Python oracle for native/index_search.py: Kafka's AbstractIndex.indexSlotRangeFor.

Written from AbstractIndex.java with ``struct`` over bytes, one step per Java statement, so the
kernel can be checked against it on arbitrary (even unsorted) keys.
"""

from __future__ import annotations

import struct

LARGEST_LOWER_BOUND = 0
SMALLEST_UPPER_BOUND = 1
NOT_FOUND = -1
ERR_BUFFER_TOO_SHORT = -2
ERR_BAD_LAYOUT = -3


def _key(buf: bytes, slot: int, entry_size: int, key_pos: int, key_size: int, base: int) -> int:
    fmt = ">q" if key_size == 8 else ">i"
    return struct.unpack_from(fmt, buf, slot * entry_size + key_pos)[0] + base


def index_slot_for(
    buf: bytes,
    entries: int,
    entry_size: int,
    key_pos: int,
    key_size: int,
    key_base: int,
    target: int,
    search_type: int,
) -> int:
    """Same contract as the kernel."""
    if entry_size <= 0 or key_pos < 0 or key_size not in (4, 8) or key_pos + key_size > entry_size:
        return ERR_BAD_LAYOUT
    if search_type not in (LARGEST_LOWER_BOUND, SMALLEST_UPPER_BOUND) or entries < 0:
        return ERR_BAD_LAYOUT
    if entries * entry_size > len(buf):
        return ERR_BUFFER_TOO_SHORT
    if entries == 0:
        return NOT_FOUND

    def key(slot: int) -> int:
        return _key(buf, slot, entry_size, key_pos, key_size, key_base)

    def binary_search(begin: int, end: int) -> int:
        lo, hi = begin, end
        while lo < hi:
            mid = (lo + hi + 1) // 2
            found = key(mid)
            if found > target:
                hi = mid - 1
            elif found < target:
                lo = mid
            else:
                return mid
        if search_type == LARGEST_LOWER_BOUND:
            return lo
        return NOT_FOUND if lo == entries - 1 else lo + 1

    first_hot = max(0, entries - 1 - 8192 // entry_size)
    if key(first_hot) < target:
        return binary_search(first_hot, entries - 1)
    if key(0) > target:
        return NOT_FOUND if search_type == LARGEST_LOWER_BOUND else 0
    return binary_search(0, first_hot)


def index_slots_for(
    buf: bytes,
    entries: int,
    entry_size: int,
    key_pos: int,
    key_size: int,
    key_base: int,
    targets: list[int],
    search_type: int,
    out: list[int],
) -> int:
    """Same contract as the kernel: status, ``out`` filled when 0."""
    first = index_slot_for(buf, entries, entry_size, key_pos, key_size, key_base, 0, search_type)
    if first < NOT_FOUND:
        return first
    if len(out) < len(targets):
        return ERR_BAD_LAYOUT
    for i, t in enumerate(targets):
        out[i] = index_slot_for(
            buf, entries, entry_size, key_pos, key_size, key_base, int(t), search_type
        )
    return 0
