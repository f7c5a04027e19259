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

from collections.abc import Sequence

import numpy as np

from ..native._jit import kernel_input
from ..native.murmur2 import key_partitions as _key_partitions
from ..native.murmur2 import murmur2 as _kernel

__all__ = ["murmur2", "to_positive", "partitions_for_keys"]


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


def partitions_for_keys(keys: Sequence[bytes], num_partitions: int) -> np.ndarray:
    """``toPositive(murmur2(key)) % num_partitions`` of every key (the producer's partition of
    a keyed record) in one kernel call: an int32 array.

    >>> partitions_for_keys([b"kafka", b""], 3).tolist()
    [1, 0]
    """
    if num_partitions < 1:
        raise ValueError(f"a topic has at least one partition (found {num_partitions})")
    offsets = np.zeros(len(keys) + 1, np.int64)
    np.cumsum(np.fromiter(map(len, keys), np.int64, len(keys)), out=offsets[1:])
    data = np.frombuffer(b"".join(keys), np.uint8)
    return _key_partitions(data, kernel_input(offsets, np.int64), num_partitions)
