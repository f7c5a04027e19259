"""Zig-zag varints and varlongs as Kafka writes them (``ByteUtils.writeVarint``/``writeVarlong``).

A value is zig-zag mapped to an unsigned one (``n << 1 ^ n >> 31`` for 32-bit varints,
``n << 1 ^ n >> 63`` for 64-bit varlongs) so small magnitudes of either sign stay short, then
written as little-endian base-128 groups, the high bit of each byte meaning "more follows".

Decoding follows Kafka's ``ByteUtils.readVarint``/``readVarlong`` exactly: at most 5 bytes for a
varint and 10 for a varlong (a longer one is corrupt); bits of the last allowed byte beyond 32/64
bits are dropped, as Java's shifts drop them. Truncated input raises :class:`CorruptRecordError`
carrying the position.

>>> encode_varint(-1), encode_varint(5), encode_varint(300)
(b'\\x01', b'\\n', b'\\xd8\\x04')
>>> decode_varint(b"\\x00\\xd8\\x04", 1)
(300, 3)
>>> size_of_varlong(-(1 << 63))
10
"""

from __future__ import annotations

from ..errors import CorruptRecordError

__all__ = [
    "encode_unsigned_varint",
    "encode_varint",
    "encode_varlong",
    "decode_varint",
    "decode_varlong",
    "size_of_varint",
    "size_of_varlong",
    "zigzag_encode32",
    "zigzag_encode64",
    "MAX_VARINT_SIZE",
    "MAX_VARLONG_SIZE",
]

MAX_VARINT_SIZE = 5
MAX_VARLONG_SIZE = 10

_INT32_MIN = -(1 << 31)
_INT32_MAX = (1 << 31) - 1
_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1
_U32 = 0xFFFFFFFF
_U64 = 0xFFFFFFFFFFFFFFFF


def zigzag_encode32(n: int) -> int:
    """Zig-zag map a signed 32-bit int to an unsigned one (``ValueError`` when out of range)."""
    if not _INT32_MIN <= n <= _INT32_MAX:
        raise ValueError(f"varint value out of int32 range: {n}")
    return ((n << 1) ^ (n >> 31)) & _U32


def zigzag_encode64(n: int) -> int:
    """Zig-zag map a signed 64-bit int to an unsigned one (``ValueError`` when out of range)."""
    if not _INT64_MIN <= n <= _INT64_MAX:
        raise ValueError(f"varlong value out of int64 range: {n}")
    return ((n << 1) ^ (n >> 63)) & _U64


def encode_unsigned_varint(u: int) -> bytes:
    """Encode a non-negative int as an unsigned varint (Kafka's
    ``ByteUtils.writeUnsignedVarint``: the protocol's compact lengths and tags).

    >>> encode_unsigned_varint(300).hex()
    'ac02'
    """
    if u < 0:
        raise ValueError(f"unsigned varint of a negative value: {u}")
    return _unsigned_to_bytes(u)


def _unsigned_to_bytes(u: int) -> bytes:
    if u < 0x80:
        return bytes((u,))
    out = bytearray()
    while u >= 0x80:
        out.append((u & 0x7F) | 0x80)
        u >>= 7
    out.append(u)
    return bytes(out)


# single-byte encodings are by far the most common (lengths, deltas, header counts)
_SMALL = {n: bytes((((n << 1) ^ (n >> 31)) & _U32,)) for n in range(-64, 64)}


def encode_varint(n: int) -> bytes:
    """Encode a signed 32-bit int as a zig-zag varint (1..5 bytes)."""
    b = _SMALL.get(n)
    if b is not None:
        return b
    return _unsigned_to_bytes(zigzag_encode32(n))


def encode_varlong(n: int) -> bytes:
    """Encode a signed 64-bit int as a zig-zag varlong (1..10 bytes)."""
    b = _SMALL.get(n)
    if b is not None:
        return b
    return _unsigned_to_bytes(zigzag_encode64(n))


def size_of_varint(n: int) -> int:
    """Number of bytes :func:`encode_varint` writes for ``n``."""
    u = zigzag_encode32(n)
    return max(1, (u.bit_length() + 6) // 7)


def size_of_varlong(n: int) -> int:
    """Number of bytes :func:`encode_varlong` writes for ``n``."""
    u = zigzag_encode64(n)
    return max(1, (u.bit_length() + 6) // 7)


def _decode_unsigned(buf: object, pos: int, max_bytes: int, what: str) -> tuple[int, int]:
    start = pos
    result = 0
    shift = 0
    n = len(buf)  # type: ignore[arg-type]
    for _ in range(max_bytes):
        if pos >= n:
            raise CorruptRecordError(
                f"truncated {what} (expected a continuation byte, found end of data)",
                position=pos,
            )
        b = buf[pos]  # type: ignore[index]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
    raise CorruptRecordError(
        f"{what} is too long (expected at most {max_bytes} bytes, "
        f"found a continuation bit in byte {max_bytes})",
        position=start,
    )


def decode_varint(buf: object, pos: int = 0) -> tuple[int, int]:
    """Decode a zig-zag varint at ``buf[pos]``; return ``(value, position after it)``.

    ``buf`` is anything indexable to ints (bytes, bytearray, memoryview, numpy uint8 array).
    """
    u, pos = _decode_unsigned(buf, pos, MAX_VARINT_SIZE, "varint")
    u &= _U32  # Java's int shifts drop the bits of the fifth byte beyond 32
    v = (u >> 1) ^ -(u & 1)
    return v, pos


def decode_varlong(buf: object, pos: int = 0) -> tuple[int, int]:
    """Decode a zig-zag varlong at ``buf[pos]``; return ``(value, position after it)``."""
    u, pos = _decode_unsigned(buf, pos, MAX_VARLONG_SIZE, "varlong")
    u &= _U64
    v = (u >> 1) ^ -(u & 1)
    return v, pos
