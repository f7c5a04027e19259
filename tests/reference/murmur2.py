"""Plain-Python oracle for native/murmur2.py: Kafka's ``Utils.murmur2`` (clients
``common/utils/Utils.java``, 4.2) with 32-bit arithmetic masked by hand."""

from __future__ import annotations

import struct

_M32 = 0xFFFFFFFF


def _int32(n: int) -> int:
    n &= _M32
    return n - (1 << 32) if n & 0x80000000 else n


def murmur2(data: bytes | bytearray | memoryview) -> int:
    """Kafka's ``Utils.murmur2``: MurmurHash2, seed ``0x9747b28c``, as a signed 32-bit int.

    >>> murmur2(b"")
    275646681
    """
    m, r = 0x5BD1E995, 24
    data = bytes(data)
    length = len(data)
    h = (0x9747B28C ^ length) & _M32
    n4 = length // 4
    for (k,) in struct.iter_unpack("<I", data[: n4 * 4]):
        k = (k * m) & _M32
        k ^= k >> r
        k = (k * m) & _M32
        h = ((h * m) & _M32) ^ k
    tail = data[n4 * 4:]
    # the switch falls through: 3 bytes left xor the third, then the second, then the first
    if len(tail) >= 3:
        h ^= tail[2] << 16
    if len(tail) >= 2:
        h ^= tail[1] << 8
    if tail:
        h ^= tail[0]
        h = (h * m) & _M32
    h ^= h >> 13
    h = (h * m) & _M32
    h ^= h >> 15
    return _int32(h)
