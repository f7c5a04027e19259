"""Kafka's ``Utils.murmur2`` and ``Utils.toPositive``: the hash the producer partitions keyed
records with, and every other place Kafka reuses it.

Source: ``clients/src/main/java/org/apache/kafka/common/utils/Utils.java`` (Kafka 4.2). Users:
the producer's keyed partition (``BuiltInPartitioner.partitionForKey``,
:mod:`kafkalog.console.partitioner`) and the ``__remote_log_metadata`` partition of a topic
partition (``RemoteLogMetadataTopicPartitioner``, :mod:`kafkalog.tiered.partitioner`).

>>> murmur2(b"kafka"), to_positive(murmur2(b"kafka")) % 3
(-798503068, 1)
"""

from __future__ import annotations

import struct

__all__ = ["murmur2", "to_positive"]

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


def to_positive(number: int) -> int:
    """Kafka's ``Utils.toPositive``: the int with its sign bit cleared (``number & 0x7fffffff``),
    not ``abs`` (``abs(Integer.MIN_VALUE)`` is negative in Java).

    >>> to_positive(-1), to_positive(-(2**31)), to_positive(5)
    (2147483647, 0, 5)
    """
    return number & 0x7FFFFFFF
