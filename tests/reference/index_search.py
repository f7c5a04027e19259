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
    if entries > len(buf) // entry_size:
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



def offset_index_lookup(
    buf: bytes, entries: int, base_offset: int, target: int
) -> tuple[int, int, int]:
    """Same contract as the kernel: (slot, offset, position)."""
    slot = index_slot_for(buf, entries, 8, 0, 4, base_offset, target, LARGEST_LOWER_BOUND)
    if slot < 0:
        return slot, base_offset, 0
    rel, pos = struct.unpack_from(">ii", buf, slot * 8)
    return slot, base_offset + rel, pos


def time_index_lookup(
    buf: bytes, entries: int, base_offset: int, target: int
) -> tuple[int, int, int]:
    """Same contract as the kernel: (slot, timestamp, offset)."""
    slot = index_slot_for(buf, entries, 12, 0, 8, 0, target, LARGEST_LOWER_BOUND)
    if slot < 0:
        return slot, -1, base_offset
    ts, rel = struct.unpack_from(">qi", buf, slot * 12)
    return slot, ts, base_offset + rel


def gather_entries(
    buf: bytes,
    entries: int,
    entry_size: int,
    key_pos: int,
    key_size: int,
    key_base: int,
    value_pos: int,
    value_size: int,
    value_base: int,
    slots: list[int],
    missing_key: int,
    missing_value: int,
    out_keys: list[int],
    out_values: list[int],
) -> int:
    """Same contract as the kernel."""
    status = index_slot_for(buf, entries, entry_size, key_pos, key_size, 0, 0, 0)
    if status < NOT_FOUND:
        return status
    if value_pos < 0 or value_size not in (4, 8) or value_pos + value_size > entry_size:
        return ERR_BAD_LAYOUT
    if len(out_keys) < len(slots) or len(out_values) < len(slots):
        return ERR_BAD_LAYOUT
    for i, s in enumerate(slots):
        if s == NOT_FOUND:
            out_keys[i], out_values[i] = missing_key, missing_value
            continue
        if not 0 <= s < entries:
            return ERR_BAD_LAYOUT
        out_keys[i] = _key(buf, s, entry_size, key_pos, key_size, key_base)
        out_values[i] = _key(buf, s, entry_size, value_pos, value_size, value_base)
    return 0
