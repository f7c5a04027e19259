"""Plain-Python oracle for native/varint.py, written the way Kafka's ByteUtils reads it.

Python integers never overflow, so this emulates Java's ``int``/``long`` wrap-around explicitly
with masks instead of the split arithmetic the kernels use.
"""

from __future__ import annotations

ERR_TRUNCATED = -1
ERR_VARINT_TOO_LONG = -2


def _zigzag_decode(raw: int, bits: int) -> int:
    raw &= (1 << bits) - 1
    v = (raw >> 1) ^ -(raw & 1)
    return v


def decode_varint(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    raw = 0
    for i in range(5):
        if pos + i >= end:
            return 0, ERR_TRUNCATED
        b = buf[pos + i]
        raw |= (b & 0x7F) << (7 * i)
        if not b & 0x80:
            return _zigzag_decode(raw, 32), pos + i + 1
    return 0, ERR_VARINT_TOO_LONG


def decode_varlong(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    raw = 0
    for i in range(10):
        if pos + i >= end:
            return 0, ERR_TRUNCATED
        b = buf[pos + i]
        raw |= (b & 0x7F) << (7 * i)
        if not b & 0x80:
            return _zigzag_decode(raw, 64), pos + i + 1
    return 0, ERR_VARINT_TOO_LONG


def _zigzag(value: int, bits: int) -> int:
    return ((value << 1) ^ (value >> (bits - 1))) & ((1 << bits) - 1)


def _groups(z: int) -> bytes:
    out = bytearray()
    while z >= 0x80:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def size_of_varint(value: int) -> int:
    return len(_groups(_zigzag(value, 32)))


def size_of_varlong(value: int) -> int:
    return len(_groups(_zigzag(value, 64)))


def encode_varint(buf: bytearray, pos: int, value: int) -> int:
    data = _groups(_zigzag(value, 32))
    buf[pos:pos + len(data)] = data
    return pos + len(data)


def encode_varlong(buf: bytearray, pos: int, value: int) -> int:
    data = _groups(_zigzag(value, 64))
    buf[pos:pos + len(data)] = data
    return pos + len(data)
