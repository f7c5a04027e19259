"""KIP-1101's group metadata hash: what a consumer or share group's epoch record carries.

Kafka 4.1 replaced the subscription-metadata records (``ConsumerGroupPartitionMetadata``, type
4; ``ShareGroupPartitionMetadata``, type 9) by one 64-bit hash of the subscribed topics in the
group's epoch record (``ConsumerGroupMetadataValue.MetadataHash``, a tagged field;
``ShareGroupMetadataValue.MetadataHash``). The coordinator recomputes it when a member's
subscription changes or the metadata refresh deadline passes, and bumps the group epoch (a new
target assignment) when it differs from the stored one. A group stored with hash 0 (Kafka 4.0,
or a writer that does not compute it) therefore rebalances once on its first heartbeat after a
4.1+ coordinator loads it.

A port of ``org.apache.kafka.coordinator.group.Utils.computeTopicHash`` and
``computeGroupHash`` (Kafka 4.2), which stream into hash4j's XXH3-64 (seed 0). hash4j's sink
writes little-endian: ``putInt`` 4 bytes, ``putLong`` 8, ``putString(s)`` the UTF-16 code units
of ``s`` (2 bytes each) followed by ``putInt(s.length())``. XXH3 over the concatenated bytes is
what the streaming hasher returns, so the bytes are built here and hashed once.

Topic hash = XXH3 of: the magic byte 0; the topic id's most then least significant 64 bits;
the name; the partition count; then for each partition its index and its replicas' racks
sorted, each as ``putInt(len)`` + ``putString``. Group hash = XXH3 of the topic hashes in the
order of their topic names (0 for no topics). Both are Java ``long`` values (signed).

>>> tid = bytes(range(16))
>>> h = topic_hash(tid, "foo", [[], []])
>>> h == topic_hash(tid, "foo", [[], []]) and h != topic_hash(tid, "foo", [[]])
True
>>> group_hash({}) == 0
True
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import xxhash

from ..checkpoint import Uuid

__all__ = ["TOPIC_HASH_MAGIC_BYTE", "topic_hash", "group_hash", "metadata_hash",
           "topic_id_bytes", "TopicHashes"]

#: ``Utils.TOPIC_HASH_MAGIC_BYTE``: the version of the topic hash's layout
TOPIC_HASH_MAGIC_BYTE = 0

_INT = struct.Struct("<i")
_LONG_SIGNED = struct.Struct("<q")


def _signed(h: int) -> int:
    return h - (1 << 64) if h >= 1 << 63 else h


def _put_string(out: bytearray, s: str) -> None:
    units = s.encode("utf-16-le", "surrogatepass")
    out += units
    out += _INT.pack(len(units) // 2)


def topic_id_bytes(topic_id: Any) -> bytes:
    """The 16 bytes of a topic id given as bytes, :class:`uuid.UUID`, the project's
    ``Uuid`` or Kafka's base64 string form (``str(Uuid)``)."""
    if isinstance(topic_id, (bytes, bytearray, memoryview)):
        raw = bytes(topic_id)
    elif isinstance(topic_id, uuid.UUID):
        raw = topic_id.bytes
    elif isinstance(topic_id, str):
        raw = Uuid.from_string(topic_id).to_bytes()
    else:
        raw = topic_id.to_bytes()
    if len(raw) != 16:
        raise ValueError(f"a topic id is 16 bytes, got {len(raw)}")
    return raw


def topic_hash(topic_id: Any, name: str, partition_racks: Sequence[Iterable[str]]) -> int:
    """``Utils.computeTopicHash`` of an existing topic: ``partition_racks[i]`` holds the racks
    of partition ``i``'s replicas (empty where the brokers have no rack; any order), and its
    length is the partition count."""
    raw = topic_id_bytes(topic_id)
    out = bytearray([TOPIC_HASH_MAGIC_BYTE & 0xFF])
    # putLong(msb), putLong(lsb): each half big-endian in the id, written little-endian
    out += raw[7::-1]
    out += raw[15:7:-1]
    _put_string(out, name)
    out += _INT.pack(len(partition_racks))
    for i, racks in enumerate(partition_racks):
        out += _INT.pack(i)
        for rack in sorted(racks, key=lambda r: r.encode("utf-16-be", "surrogatepass")):
            # Java's String.length(): UTF-16 code units
            out += _INT.pack(len(rack.encode("utf-16-le", "surrogatepass")) // 2)
            _put_string(out, rack)
    return _signed(xxhash.xxh3_64_intdigest(bytes(out)))


def group_hash(topic_hashes: Mapping[str, int]) -> int:
    """``Utils.computeGroupHash``: the topic hashes in the order of their names; 0 when
    there are none."""
    if not topic_hashes:
        return 0
    data = b"".join(_LONG_SIGNED.pack(topic_hashes[name])
                    for name in sorted(topic_hashes,
                                       key=lambda n: n.encode("utf-16-be", "surrogatepass")))
    return _signed(xxhash.xxh3_64_intdigest(data))


def metadata_hash(subscribed: Iterable[str],
                  topics: Mapping[str, tuple[Any, Sequence[Iterable[str]]]]) -> int:
    """``ModernGroup.computeMetadataHash``: the group hash of the subscribed topics that exist
    (``topics``: name -> (topic id, racks per partition)); topics that do not exist are left
    out.

    >>> metadata_hash(["gone"], {}) == 0
    True
    """
    return group_hash({name: topic_hash(topics[name][0], name, topics[name][1])
                       for name in set(subscribed) if name in topics})


class TopicHashes:
    """The topics of one metadata image and their hashes, each computed once (Kafka's
    ``topicHashCache``, dropped at every new image): ``topics`` is name -> (topic id, partition
    count), ``racks`` name -> each partition's replica racks (none by default).

    >>> th = TopicHashes({"t": (bytes(range(16)), 2)})
    >>> th.group_hash(["t", "gone"]) == metadata_hash(["t"], {"t": (bytes(range(16)), [[], []])})
    True
    """

    def __init__(self, topics: Mapping[str, tuple[Any, int]] | None = None,
                 racks: Mapping[str, Sequence[Iterable[str]]] | None = None) -> None:
        self._topics = dict(topics or {})
        self._racks = dict(racks or {})
        self._hashes: dict[str, int] = {}

    def group_hash(self, subscribed: Iterable[str]) -> int:
        """``computeMetadataHash`` of the subscribed topics that exist."""
        hashes = {}
        for name in set(subscribed):
            known = self._topics.get(name)
            if known is None or not known[1]:
                continue
            h = self._hashes.get(name)
            if h is None:
                h = self._hashes[name] = topic_hash(
                    known[0], name, self._racks.get(name) or [()] * known[1])
            hashes[name] = h
        return group_hash(hashes)
