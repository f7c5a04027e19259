"""The consumer protocol: what members of a ``consumer`` group put in JoinGroup metadata and
what the leader hands out in SyncGroup (clients/src/main/java/org/apache/kafka/clients/consumer/
internals/ConsumerProtocol.java, 3.9).

Both are an int16 version followed by the generated message (``ConsumerProtocolSubscription`` /
``ConsumerProtocolAssignment``, versions 0-3), encoded with the project's one schema codec
(:mod:`kafkalog.decoders.message`). A version above the newest known is read as the newest
(``checkSubscriptionVersion``), as Kafka does, so newer clients' bytes still parse.

>>> raw = encode_subscription(Subscription(["t2", "t1"], owned_partitions=[("t1", 0)]))
>>> decode_subscription(raw).topics, decode_subscription(raw).owned_partitions
(['t1', 't2'], [('t1', 0)])
>>> decode_assignment(encode_assignment(Assignment([("t", 1), ("t", 0)]))).partitions
[('t', 1), ('t', 0)]
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..decoders import _schemas, message
from ..errors import CorruptRecordError
from .java_order import java_string_key

__all__ = [
    "PROTOCOL_TYPE",
    "Subscription",
    "Assignment",
    "encode_subscription",
    "decode_subscription",
    "encode_assignment",
    "decode_assignment",
    "subscription_topics",
    "group_subscribed_topics",
    "HIGHEST_VERSION",
]

#: ``ConsumerProtocol.PROTOCOL_TYPE``
PROTOCOL_TYPE = "consumer"

_SUBSCRIPTION = message.compile_schema(_schemas.CLIENT["ConsumerProtocolSubscription"])
_ASSIGNMENT = message.compile_schema(_schemas.CLIENT["ConsumerProtocolAssignment"])
HIGHEST_VERSION: int = _SUBSCRIPTION.versions[1]  # type: ignore[index]


@dataclass
class Subscription:
    """``ConsumerPartitionAssignor.Subscription``."""

    topics: list[str]
    user_data: bytes | None = None
    owned_partitions: list[tuple[str, int]] = field(default_factory=list)
    generation_id: int | None = None
    rack_id: str | None = None


@dataclass
class Assignment:
    """``ConsumerPartitionAssignor.Assignment``."""

    partitions: list[tuple[str, int]]
    user_data: bytes | None = None


def _version(raw: bytes, what: str) -> int:
    if raw is None or len(raw) < 2:
        raise CorruptRecordError(f"{what} shorter than its int16 version "
                                 f"(expected >= 2 bytes, found {0 if raw is None else len(raw)})")
    version = struct.unpack_from(">h", raw, 0)[0]
    if version < 0:
        raise CorruptRecordError(f"{what} version {version} is negative")
    return min(version, HIGHEST_VERSION)


def encode_subscription(sub: Subscription, version: int = HIGHEST_VERSION) -> bytes:
    """``ConsumerProtocol.serializeSubscription``: topics sorted, owned partitions sorted and
    grouped by topic, generation -1 when unknown."""
    version = min(version, HIGHEST_VERSION)
    owned: list[dict] = []
    for t, p in sorted(sub.owned_partitions, key=lambda tp: (java_string_key(tp[0]), tp[1])):
        if not owned or owned[-1]["topic"] != t:
            owned.append({"topic": t, "partitions": []})
        owned[-1]["partitions"].append(p)
    obj = {
        "topics": sorted(sub.topics, key=java_string_key),
        "userData": sub.user_data,
        "ownedPartitions": owned,
        "generationId": -1 if sub.generation_id is None else sub.generation_id,
        "rackId": sub.rack_id,
    }
    return struct.pack(">h", version) + message.write(_SUBSCRIPTION, obj, version)


def decode_subscription(raw: bytes) -> Subscription:
    """``ConsumerProtocol.deserializeSubscription``.

    Raises
    ------
    kafkalog.errors.CorruptRecordError
        Bytes that are not a consumer-protocol subscription.
    """
    version = _version(raw, "consumer protocol subscription")
    obj = message.read_prefix(_SUBSCRIPTION, raw, version, 2)[0]
    owned = [(tp["topic"], p) for tp in obj["ownedPartitions"] for p in tp["partitions"]]
    generation = obj["generationId"] if version >= 2 else None
    rack = obj["rackId"] or None
    return Subscription(list(obj["topics"]), obj["userData"], owned, generation, rack)


def subscription_topics(raw: bytes) -> list[str]:
    """The topics of a subscription read with version 0, the prefix of every version, as the
    group coordinator does (``ClassicGroup.computeSubscribedTopics``)."""
    if raw is None or len(raw) < 2:
        raise CorruptRecordError("consumer protocol subscription shorter than its int16 version")
    return list(message.read_prefix(_SUBSCRIPTION, raw, 0, 2)[0]["topics"])


def group_subscribed_topics(protocol_type: str | None, protocol: str | None,
                            member_metadata: Sequence[bytes]) -> frozenset[str] | None:
    """The topics a classic group subscribes to (``ClassicGroup.computeSubscribedTopics``):
    None unless the group uses the consumer protocol, empty without members, None when the
    protocol is unknown or a subscription does not parse (the coordinator then cannot tell)."""
    if protocol_type != PROTOCOL_TYPE:
        return None
    if not member_metadata:
        return frozenset()
    if protocol is None:
        return None
    topics: set[str] = set()
    try:
        for raw in member_metadata:
            topics.update(subscription_topics(raw))
    except CorruptRecordError:
        return None
    return frozenset(topics)


def encode_assignment(assignment: Assignment, version: int = HIGHEST_VERSION) -> bytes:
    """``ConsumerProtocol.serializeAssignment``: partitions grouped by topic, topics in order of
    first appearance."""
    version = min(version, HIGHEST_VERSION)
    groups: dict[str, list[int]] = {}
    for t, p in assignment.partitions:
        groups.setdefault(t, []).append(p)
    obj = {"assignedPartitions": [{"topic": t, "partitions": ps} for t, ps in groups.items()],
           "userData": assignment.user_data}
    return struct.pack(">h", version) + message.write(_ASSIGNMENT, obj, version)


def decode_assignment(raw: bytes) -> Assignment:
    """``ConsumerProtocol.deserializeAssignment``.

    Raises
    ------
    kafkalog.errors.CorruptRecordError
        Bytes that are not a consumer-protocol assignment.
    """
    version = _version(raw, "consumer protocol assignment")
    obj = message.read_prefix(_ASSIGNMENT, raw, version, 2)[0]
    parts = [(tp["topic"], p) for tp in obj["assignedPartitions"] for p in tp["partitions"]]
    return Assignment(parts, obj["userData"])
