"""Which ``__remote_log_metadata`` partition holds a topic partition's tiered-storage events.

Kafka (``storage/.../remote/metadata/storage/RemoteLogMetadataTopicPartitioner.java``)::

    toPositive(murmur2(bytes(Objects.hash(topicId.lsb, topicId.msb, partition)))) % n

where ``Objects.hash`` is ``Arrays.hashCode`` over a ``Long``, a ``Long`` and an ``Integer``,
its int written big-endian, and ``murmur2``/``toPositive`` are the producer partitioner's
(``clients/.../common/utils/Utils.java``; :mod:`kafkalog.records.murmur2`, re-exported here).
``n`` is ``remote.log.metadata.topic.num.partitions`` (default 50).

>>> metadata_partition("AAAAAAAAAAAAAAAAAAAAyg", 7)
31
"""

from __future__ import annotations

import struct

from ..decoders.message import uuid_from_str
from ..records.murmur2 import murmur2, to_positive

__all__ = ["DEFAULT_METADATA_TOPIC_PARTITIONS", "metadata_partition", "murmur2",
           "topic_id_partition_hash"]

#: ``remote.log.metadata.topic.num.partitions`` default
#: (``TopicBasedRemoteLogMetadataManagerConfig``)
DEFAULT_METADATA_TOPIC_PARTITIONS = 50
_M32 = 0xFFFFFFFF


def _int32(n: int) -> int:
    n &= _M32
    return n - (1 << 32) if n & 0x80000000 else n


def _long_hash(v: int) -> int:
    # Long.hashCode: (int) (v ^ (v >>> 32))
    u = v & 0xFFFFFFFFFFFFFFFF
    return _int32(u ^ (u >> 32))


def topic_id_partition_hash(topic_id: str, partition: int) -> int:
    """``Objects.hash(topicId.getLeastSignificantBits(), topicId.getMostSignificantBits(),
    partition)`` for a Kafka ``Uuid`` string."""
    msb, lsb = struct.unpack(">qq", uuid_from_str(topic_id))
    h = 1
    for part in (_long_hash(lsb), _long_hash(msb), _int32(partition)):
        h = _int32(31 * h + part)
    return h


def metadata_partition(topic_id: str, partition: int,
                       num_partitions: int = DEFAULT_METADATA_TOPIC_PARTITIONS) -> int:
    """The ``__remote_log_metadata`` partition of ``topic_id``'s ``partition``.

    Raises ``ValueError`` for ``num_partitions`` below 1 or a string that is not a Kafka
    ``Uuid``."""
    if num_partitions < 1:
        raise ValueError(f"remote.log.metadata.topic.num.partitions must be >= 1 "
                         f"(found {num_partitions})")
    h = topic_id_partition_hash(topic_id, partition)
    return to_positive(murmur2(struct.pack(">i", h))) % num_partitions
