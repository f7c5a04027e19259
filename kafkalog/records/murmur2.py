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

import numpy as np

from ..native.murmur2 import murmur2 as _kernel

__all__ = ["murmur2", "to_positive"]

def murmur2(data: bytes | bytearray | memoryview) -> int:
    """Kafka's ``Utils.murmur2``: MurmurHash2, seed ``0x9747b28c``, as a signed 32-bit int
    (the kernel :func:`kafkalog.native.murmur2.murmur2`; its plain-Python reference is
    ``tests/reference/murmur2.py``).

    >>> murmur2(b"")
    275646681
    """
    return int(_kernel(np.frombuffer(data, np.uint8)))


def to_positive(number: int) -> int:
    """Kafka's ``Utils.toPositive``: the int with its sign bit cleared (``number & 0x7fffffff``),
    not ``abs`` (``abs(Integer.MIN_VALUE)`` is negative in Java).

    >>> to_positive(-1), to_positive(-(2**31)), to_positive(5)
    (2147483647, 0, 5)
    """
    return number & 0x7FFFFFFF
