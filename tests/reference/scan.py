"""Plain-Python oracle for native/scan.py: Kafka's FileLogInputStream walk, written with struct."""

from __future__ import annotations

import struct

LOG_OVERHEAD = 12


def count_entries(buf: bytes, start: int, end: int, max_entries: int) -> tuple[int, int, int]:
    """Same contract as the kernel: ``(count, stop_position, stop_reason)``."""
    end = min(end, len(buf))
    pos = max(start, 0)
    n = 0
    while True:
        if n >= max_entries:
            return n, pos, 5
        remaining = end - pos
        if remaining <= 0:
            return n, pos, 0
        if remaining <= 17:
            return n, pos, 1
        (size,) = struct.unpack_from(">i", buf, pos + 8)
        if size < 14:
            return n, pos, 2
        magic = buf[pos + 16]
        if magic > 2:
            return n, pos, 3
        if LOG_OVERHEAD + size > remaining:
            return n, pos, 1
        if magic == 2 and LOG_OVERHEAD + size < 61:
            return n, pos, 4
        pos += LOG_OVERHEAD + size
        n += 1


def fill_entries(buf: bytes, start: int, count: int) -> list[tuple[int, ...]]:
    """Per entry: (position, size, base_offset, last_offset, max_timestamp, magic, attributes,
    record_count, leader_epoch, crc)."""
    out = []
    pos = max(start, 0)
    for _ in range(count):
        offset, size = struct.unpack_from(">qi", buf, pos)
        magic = buf[pos + 16]
        if magic == 2:
            (epoch,) = struct.unpack_from(">i", buf, pos + 12)
            crc, attrs, lod, _base_ts, max_ts = struct.unpack_from(">IhiqQ", buf, pos + 17)
            max_ts = struct.unpack_from(">q", buf, pos + 35)[0]
            (count_,) = struct.unpack_from(">i", buf, pos + 57)
            out.append((pos, 12 + size, offset, offset + lod, max_ts, 2, attrs, count_, epoch, crc))
        else:
            (crc,) = struct.unpack_from(">I", buf, pos + 12)
            attrs = buf[pos + 17]
            ts = struct.unpack_from(">q", buf, pos + 18)[0] if magic == 1 and size >= 14 else -1
            out.append((pos, 12 + size, offset, offset, ts, magic, attrs, 1, -1, crc))
        pos += 12 + size
    return out
