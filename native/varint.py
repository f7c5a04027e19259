"""Zig-zag varint (32-bit) and varlong (64-bit) kernels, Kafka's ``ByteUtils`` semantics.

Encoding (protocol-buffers style): zig-zag maps a signed value to an unsigned one
(``(n << 1) ^ (n >> 31)``, or ``>> 63`` for varlongs), then little-endian base-128 groups, high
bit = "more bytes follow". A varint may take at most 5 bytes and a varlong at most 10; a longer
one is an error (``ERR_VARINT_TOO_LONG``), exactly like Kafka's ``illegalVarintException``.

Kafka truncates silently the bits that do not fit: the 5th byte of a varint is shifted left by
28 into a Java ``int`` (its bits 4..6 are lost), the 10th byte of a varlong is shifted by 63 (only
its bit 0 survives). The decoders here do the same so that every varint Kafka reads reads here.

Why the arithmetic looks indirect: these kernels also run as plain Python
(``NUMBA_DISABLE_JIT=1``), where integers never wrap, and in numba, where ``int64`` cannot hold
an unsigned 64-bit value. So nothing ever computes the raw unsigned 64-bit zig-zag value: the
decoder accumulates ``raw >> 1`` (63 bits, always a non-negative ``int64``) and the sign bit
``raw & 1`` separately, and the encoder starts from ``m = n if n >= 0 else ~n`` (the zig-zag
value is ``2 * m + sign``). Results are identical in both modes.

Contract of the decoders: ``decode_varint(buf, pos, end) -> (value, next_pos)``; on error
``next_pos`` is negative (``ERR_TRUNCATED`` when ``end`` comes first, ``ERR_VARINT_TOO_LONG``)
and ``value`` is 0. ``end`` must be ``<= len(buf)`` (callers clamp it). The encoders assume the
caller reserved ``size_of_varint(value)`` bytes at ``pos`` and return the position after.
"""

from __future__ import annotations

import numpy as np

from ._jit import inline

ERR_TRUNCATED = -1
ERR_VARINT_TOO_LONG = -2

MAX_VARINT_BYTES = 5
MAX_VARLONG_BYTES = 10


@inline
def decode_varint(buf, pos, end):
    """Read a zig-zag varint (int32) at ``pos``; return ``(value, next_pos)`` or ``(0, ERR_*)``."""
    p = np.int64(pos)
    if p >= end:
        return np.int64(0), np.int64(ERR_TRUNCATED)
    b = np.int64(buf[np.uint64(p)])
    if b < 0x80:  # fast path: most lengths and deltas fit in one byte
        half = b >> 1
        if b & 1:
            return ~half, p + 1
        return half, p + 1
    raw = np.int64(0)
    shift = np.int64(0)
    while True:
        if p >= end:
            return np.int64(0), np.int64(ERR_TRUNCATED)
        b = np.int64(buf[np.uint64(p)])  # unsigned index: no wrap-around branch (p >= 0)
        p += 1
        raw |= (b & 0x7F) << shift
        if b < 0x80:
            break
        shift += 7
        if shift > 28:
            return np.int64(0), np.int64(ERR_VARINT_TOO_LONG)
    raw &= 0xFFFFFFFF  # Java int: bits past 32 of the 5th byte are dropped
    half = raw >> 1
    if raw & 1:
        return -half - 1, p
    return half, p


@inline
def decode_varlong(buf, pos, end):
    """Read a zig-zag varlong (int64) at ``pos``; return ``(value, next_pos)`` or ``(0, ERR_*)``."""
    p = np.int64(pos)
    if p >= end:
        return np.int64(0), np.int64(ERR_TRUNCATED)
    b = np.int64(buf[np.uint64(p)])  # unsigned index: no wrap-around branch (p >= 0)
    p += 1
    sign = b & 1
    half = (b & 0x7F) >> 1  # raw >> 1, built group by group: group i lands at bit 7*i - 1
    shift = np.int64(6)
    while b >= 0x80:
        if shift > 62:  # a continuation bit on the 10th byte
            return np.int64(0), np.int64(ERR_VARINT_TOO_LONG)
        if p >= end:
            return np.int64(0), np.int64(ERR_TRUNCATED)
        b = np.int64(buf[np.uint64(p)])  # unsigned index: no wrap-around branch (p >= 0)
        p += 1
        if shift == 62:
            half |= (b & 1) << 62  # Java's b << 63 keeps only bit 0 of the 10th byte
        else:
            half |= (b & 0x7F) << shift
        shift += 7
    if sign:
        return -half - 1, p
    return half, p


@inline
def size_of_varint(value):
    """Encoded size in bytes (1..5) of ``value`` (an int32) as a zig-zag varint."""
    v = np.int64(value)
    z = (v << 1) if v >= 0 else ((~v) << 1) | 1  # zig-zag, fits in int64 for an int32
    n = np.int64(1)
    z >>= 7
    while z != 0:
        n += 1
        z >>= 7
    return n


@inline
def size_of_varlong(value):
    """Encoded size in bytes (1..10) of ``value`` (an int64) as a zig-zag varlong."""
    v = np.int64(value)
    m = v if v >= 0 else ~v
    rest = m >> 6  # zig-zag value >> 7, computed without forming the 64-bit unsigned value
    n = np.int64(1)
    while rest != 0:
        n += 1
        rest >>= 7
    return n


@inline
def encode_varint(buf, pos, value):
    """Write ``value`` (an int32) as a zig-zag varint at ``pos``; return the next position."""
    v = np.int64(value)
    z = (v << 1) if v >= 0 else ((~v) << 1) | 1
    p = np.int64(pos)
    while z >= 0x80:
        buf[p] = np.uint8((z & 0x7F) | 0x80)
        p += 1
        z >>= 7
    buf[p] = np.uint8(z)
    return p + 1


@inline
def encode_varlong(buf, pos, value):
    """Write ``value`` (an int64) as a zig-zag varlong at ``pos``; return the next position."""
    v = np.int64(value)
    sign = np.int64(0)
    m = v
    if v < 0:
        sign = np.int64(1)
        m = ~v
    first = ((m & 0x3F) << 1) | sign  # low 7 bits of the zig-zag value 2*m + sign
    rest = m >> 6
    p = np.int64(pos)
    if rest == 0:
        buf[p] = np.uint8(first)
        return p + 1
    buf[p] = np.uint8(first | 0x80)
    p += 1
    while rest >= 0x80:
        buf[p] = np.uint8((rest & 0x7F) | 0x80)
        p += 1
        rest >>= 7
    buf[p] = np.uint8(rest)
    return p + 1
