"""Plain-Python oracle for native/codec_frames.py: each frame format read with struct, from
its specification (snappy-java's stream, the LZ4 frame format, RFC 8878 for zstd)."""

from __future__ import annotations

import struct

SLOW = (-1, 0, 0, 0, 0, -1, -1)


def frame_payload(area: bytes, codec: int) -> tuple[int, ...]:
    """``(kind, payload start, payload end, need, desc, check, block_check)`` for one area
    (positions from its start); :data:`SLOW` when it is not the plain shape."""
    if not area:
        return SLOW
    return {2: _snappy, 3: _lz4, 4: _zstd}[codec](area)


def _snappy(a: bytes) -> tuple[int, ...]:
    start, end = 0, len(a)
    if len(a) >= 16 and a[:8] == b"\x82SNAPPY\x00":
        (version,) = struct.unpack_from(">i", a, 8)
        if version < 1 or len(a) < 20:
            return SLOW
        (chunk,) = struct.unpack_from(">i", a, 16)
        if not 1 <= chunk <= len(a) - 20 or len(a) - 20 - chunk >= 4:
            return SLOW
        start, end = 20, 20 + chunk
    length, shift = 0, 0
    for p in range(start, min(end, start + 5)):
        length |= (a[p] & 0x7F) << shift
        if a[p] < 0x80:
            break
        shift += 7
    else:
        return SLOW
    if length > 0xFFFFFFFF:
        return SLOW
    return 0, start, end, length, 0, -1, -1


def _lz4(a: bytes) -> tuple[int, ...]:
    if len(a) < 7 or struct.unpack_from("<I", a)[0] != 0x184D2204:
        return SLOW
    flg, bd = a[4], a[5]
    version, independent, block_sum, sized, content_sum, reserved = (
        flg >> 6, flg & 0x20, flg & 0x10, flg & 0x08, flg & 0x04, flg & 0x03)
    if version != 1 or not independent or reserved:
        return SLOW
    if bd & 0x8F or (bd >> 4) < 4:
        return SLOW
    max_block = 1 << (2 * (bd >> 4) + 8)
    hc_at = 14 if sized else 6
    if hc_at >= len(a):
        return SLOW
    p = hc_at + 1
    if len(a) - p < 4:
        return SLOW
    (word,) = struct.unpack_from("<I", a, p)
    size = word & 0x7FFFFFFF
    p += 4
    if size == 0 or size > max_block or size > len(a) - p:
        return SLOW
    block = (p, p + size)
    p += size
    block_check = -1
    if block_sum:
        if len(a) - p < 4:
            return SLOW
        (block_check,) = struct.unpack_from("<I", a, p)
        p += 4
    if len(a) - p < 4 or struct.unpack_from("<I", a, p)[0] != 0:
        return SLOW
    p += 4
    check = -1
    if content_sum:
        if len(a) - p < 4:
            return SLOW
        (check,) = struct.unpack_from("<I", a, p)
    stored = bool(word & 0x80000000)
    desc = flg | bd << 8 | a[hc_at] << 16 | (1 << 24 if sized else 0)
    return (1 if stored else 0), *block, (size if stored else max_block), desc, check, \
        block_check


def _zstd(a: bytes) -> tuple[int, ...]:
    if len(a) < 6 or struct.unpack_from("<I", a)[0] != 0xFD2FB528:
        return SLOW
    fhd = a[4]
    if fhd & 0x08 or fhd & 0x03:
        return SLOW
    single = bool(fhd & 0x20)
    fcs = {0: 1 if single else 0, 1: 2, 2: 4, 3: 8}[fhd >> 6]
    p = 5 + (0 if single else 1) + fcs
    bound = 0
    while True:
        if len(a) - p < 3:
            return SLOW
        header = int.from_bytes(a[p:p + 3], "little")
        p += 3
        last, btype, bsize = header & 1, (header >> 1) & 3, header >> 3
        if btype == 3:
            return SLOW
        p += 1 if btype == 1 else bsize
        bound += 128 * 1024 if btype == 2 else bsize
        if p > len(a):
            return SLOW
        if last:
            break
    if fhd & 0x04:
        p += 4
    if p != len(a):
        return SLOW
    return 0, 0, len(a), bound, 0, -1, -1
