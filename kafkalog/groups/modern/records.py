"""The ``__consumer_offsets`` records of KIP-848 consumer groups (types 3-8 and 16), built and
replayed.

Builders follow Kafka 4.0's ``GroupCoordinatorRecordHelpers`` (``newConsumerGroupEpochRecord``,
``newConsumerGroupSubscriptionMetadataRecord``, ``newConsumerGroupMemberSubscriptionRecord``,
``newConsumerGroupTargetAssignmentRecord``, ``newConsumerGroupTargetAssignmentEpochRecord``,
``newConsumerGroupCurrentAssignmentRecord`` and their tombstones); the bytes come from the
project's coordinator-record codec (Kafka's message schemas). :func:`replay` applies one decoded
record to a group, as ``GroupMetadataManager.replay`` does.

Where Kafka's helper iterates a ``HashMap``/``HashSet`` (subscribed topic names, topics of an
assignment) the order here is sorted: the order carries no meaning and a reader must accept any.

>>> key, value = group_epoch_record("app", 3)
>>> rec = CODEC.decode(key, value)
>>> rec["type"], rec["key"], rec["value"]
(3, {'groupId': 'app'}, {'epoch': 3, 'metadataHash': 0, 'creationTimeMs': -1})
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ...decoders.offsets import CODEC
from .consumer_group import (
    ClassicMemberMetadata,
    ConsumerGroup,
    ConsumerGroupMember,
    MemberState,
    ResolvedRegex,
    TopicMetadata,
    assignment_of,
    assignment_to_list,
)

__all__ = [
    "CONSUMER_GROUP_TYPES",
    "group_epoch_record",
    "group_epoch_tombstone",
    "subscription_metadata_record",
    "subscription_metadata_tombstone",
    "member_subscription_record",
    "member_subscription_tombstone",
    "target_assignment_record",
    "target_assignment_tombstone",
    "target_assignment_epoch_record",
    "target_assignment_epoch_tombstone",
    "current_assignment_record",
    "current_assignment_tombstone",
    "regex_record",
    "regex_tombstone",
    "group_tombstones",
    "replay",
]

GROUP_EPOCH, SUBSCRIPTION_METADATA, MEMBER_SUBSCRIPTION = 3, 4, 5
TARGET_ASSIGNMENT_EPOCH, TARGET_ASSIGNMENT_MEMBER, CURRENT_ASSIGNMENT = 6, 7, 8
REGULAR_EXPRESSION = 16
#: the record types a consumer group's state is made of
CONSUMER_GROUP_TYPES = frozenset([*range(3, 9), REGULAR_EXPRESSION])

Record = tuple[bytes, bytes | None]


def _partitions(assignment: Mapping[str, frozenset[int]]) -> list[dict[str, Any]]:
    return [{"topicId": t, "partitions": ps} for t, ps in assignment_to_list(assignment)]


def _group_key(group_id: str) -> dict[str, Any]:
    return {"groupId": group_id}


def _member_key(group_id: str, member_id: str) -> dict[str, Any]:
    return {"groupId": group_id, "memberId": member_id}


def group_epoch_record(group_id: str, epoch: int, metadata_hash: int = 0) -> Record:
    """``newConsumerGroupEpochRecord`` (Kafka 4.1+: with the KIP-1101 metadata hash, a tagged
    field a 4.0 coordinator skips)."""
    return CODEC.encode(GROUP_EPOCH, _group_key(group_id),
                        {"epoch": epoch, "metadataHash": metadata_hash}, 0)


def group_epoch_tombstone(group_id: str) -> Record:
    return CODEC.encode(GROUP_EPOCH, _group_key(group_id), None)


def subscription_metadata_record(group_id: str, metadata: Mapping[str, TopicMetadata]) -> Record:
    topics = [{"topicId": m.topic_id, "topicName": m.name, "numPartitions": m.num_partitions,
               "partitionMetadata": []} for _, m in sorted(metadata.items())]
    return CODEC.encode(SUBSCRIPTION_METADATA, _group_key(group_id), {"topics": topics}, 0)


def subscription_metadata_tombstone(group_id: str) -> Record:
    return CODEC.encode(SUBSCRIPTION_METADATA, _group_key(group_id), None)


def member_subscription_record(group_id: str, m: ConsumerGroupMember) -> Record:
    value = {
        "instanceId": m.instance_id,
        "rackId": m.rack_id,
        "clientId": m.client_id,
        "clientHost": m.client_host,
        "subscribedTopicNames": sorted(m.subscribed_topic_names),
        "subscribedTopicRegex": m.subscribed_topic_regex,
        "rebalanceTimeoutMs": m.rebalance_timeout_ms,
        "serverAssignor": m.server_assignor_name,
        "classicMemberMetadata": None if m.classic_member_metadata is None else {
            "sessionTimeoutMs": m.classic_member_metadata.session_timeout_ms,
            "supportedProtocols": [{"name": n, "metadata": meta} for n, meta
                                   in m.classic_member_metadata.supported_protocols]},
    }
    return CODEC.encode(MEMBER_SUBSCRIPTION, _member_key(group_id, m.member_id), value, 0)


def member_subscription_tombstone(group_id: str, member_id: str) -> Record:
    return CODEC.encode(MEMBER_SUBSCRIPTION, _member_key(group_id, member_id), None)


def target_assignment_record(group_id: str, member_id: str,
                             assignment: Mapping[str, frozenset[int]]) -> Record:
    return CODEC.encode(TARGET_ASSIGNMENT_MEMBER, _member_key(group_id, member_id),
                        {"topicPartitions": _partitions(assignment)}, 0)


def target_assignment_tombstone(group_id: str, member_id: str) -> Record:
    return CODEC.encode(TARGET_ASSIGNMENT_MEMBER, _member_key(group_id, member_id), None)


def target_assignment_epoch_record(group_id: str, epoch: int) -> Record:
    return CODEC.encode(TARGET_ASSIGNMENT_EPOCH, _group_key(group_id),
                        {"assignmentEpoch": epoch}, 0)


def target_assignment_epoch_tombstone(group_id: str) -> Record:
    return CODEC.encode(TARGET_ASSIGNMENT_EPOCH, _group_key(group_id), None)


def current_assignment_record(group_id: str, m: ConsumerGroupMember) -> Record:
    value = {
        "memberEpoch": m.member_epoch,
        "previousMemberEpoch": m.previous_member_epoch,
        "state": int(m.state),
        "assignedPartitions": _partitions(m.assigned_partitions),
        "partitionsPendingRevocation": _partitions(m.partitions_pending_revocation),
    }
    return CODEC.encode(CURRENT_ASSIGNMENT, _member_key(group_id, m.member_id), value, 0)


def current_assignment_tombstone(group_id: str, member_id: str) -> Record:
    return CODEC.encode(CURRENT_ASSIGNMENT, _member_key(group_id, member_id), None)


def regex_record(group_id: str, regex: str, resolved: ResolvedRegex) -> Record:
    """``newConsumerGroupRegularExpressionRecord`` (type 16)."""
    return CODEC.encode(REGULAR_EXPRESSION, {"groupId": group_id, "regularExpression": regex},
                        {"topics": sorted(resolved.topics), "version": resolved.version,
                         "timestamp": resolved.timestamp}, 0)


def regex_tombstone(group_id: str, regex: str) -> Record:
    return CODEC.encode(REGULAR_EXPRESSION, {"groupId": group_id, "regularExpression": regex},
                        None)


def group_tombstones(group: ConsumerGroup,
                     replaced: tuple[str, str] | None = None) -> list[Record]:
    """``ConsumerGroup.createGroupTombstoneRecords``: what deleting the group writes (after
    its offsets' tombstones), members first and the group epoch last.

    ``replaced`` (leaving member id, joining member id): ``...WithReplacedMember``, the
    joining member's records are removed in place of the leaving one's."""
    g = group.group_id
    ids = list(group.members)
    if replaced is not None:
        ids = [replaced[1] if m == replaced[0] else m for m in ids]
    return ([current_assignment_tombstone(g, m) for m in ids]
            + [target_assignment_tombstone(g, m) for m in ids]
            + [target_assignment_epoch_tombstone(g)]
            + [member_subscription_tombstone(g, m) for m in ids]
            + [regex_tombstone(g, r) for r in group.resolved_regexes]
            + [subscription_metadata_tombstone(g), group_epoch_tombstone(g)])


def _pairs(items: list[dict[str, Any]]) -> dict[str, frozenset[int]]:
    return assignment_of((i["topicId"], i["partitions"]) for i in items)


def replay(groups: dict[str, ConsumerGroup], rec: Mapping[str, Any]) -> None:
    """Apply one decoded record (:meth:`CoordinatorCodec.decode` of a type in
    :data:`CONSUMER_GROUP_TYPES`) to ``groups`` (group id -> group), creating the group on its
    first record and removing it on its group epoch tombstone (``GroupMetadataManager.replay``:
    the tombstones of a deleted group come members first, epoch last)."""
    t = rec["type"]
    key = rec["key"]
    value = rec["value"]
    group_id = key["groupId"]
    group = groups.get(group_id)
    if group is None:
        if value is None:
            return  # a tombstone of something already gone
        group = groups[group_id] = ConsumerGroup(group_id)
    if t == GROUP_EPOCH:
        if value is None:
            del groups[group_id]
        else:
            group.replay_group_epoch(value["epoch"], value.get("metadataHash") or 0)
    elif t == SUBSCRIPTION_METADATA:
        group.replay_subscription_metadata({} if value is None else {
            tm["topicName"]: TopicMetadata(tm["topicId"], tm["topicName"], tm["numPartitions"])
            for tm in value["topics"]})
    elif t == REGULAR_EXPRESSION:
        group.replay_resolved_regex(key["regularExpression"], None if value is None else
                                    ResolvedRegex(frozenset(value["topics"]), value["version"],
                                                  value["timestamp"]))
    elif t == TARGET_ASSIGNMENT_EPOCH:
        group.replay_target_assignment_epoch(-1 if value is None else value["assignmentEpoch"])
    elif t == TARGET_ASSIGNMENT_MEMBER:
        group.replay_target_assignment(
            key["memberId"], None if value is None else _pairs(value["topicPartitions"]))
    elif t == MEMBER_SUBSCRIPTION:
        member_id = key["memberId"]
        if value is None:
            group.remove_member(member_id)
            return
        old = group.members.get(member_id) or ConsumerGroupMember(member_id)
        classic = value.get("classicMemberMetadata")
        if classic is not None and not classic["supportedProtocols"]:
            # no protocols: the tag was absent (Kafka reads that as an empty struct). A classic
            # member always joins with at least one protocol; kafkalog before 2026-11 wrote its
            # consumer-protocol members that way, so they are read as such.
            classic = None
        group.replay_member(ConsumerGroupMember(
            member_id, old.member_epoch, old.previous_member_epoch, old.state,
            value["instanceId"], value["rackId"], value["rebalanceTimeoutMs"],
            value["clientId"], value["clientHost"], tuple(value["subscribedTopicNames"]),
            value["subscribedTopicRegex"], value["serverAssignor"],
            old.assigned_partitions, old.partitions_pending_revocation,
            None if classic is None else ClassicMemberMetadata(
                classic["sessionTimeoutMs"], tuple((p["name"], bytes(p["metadata"] or b""))
                                                   for p in classic["supportedProtocols"]))))
    elif t == CURRENT_ASSIGNMENT:
        member_id = key["memberId"]
        old = group.members.get(member_id)
        if value is None:
            if old is not None:
                # the member is still there until its subscription tombstone: it holds nothing
                group.replay_member(replace(
                    old, member_epoch=-1, previous_member_epoch=-1, assigned_partitions={},
                    partitions_pending_revocation={}))
            return
        old = old or ConsumerGroupMember(member_id)
        group.replay_member(replace(
            old, member_epoch=value["memberEpoch"],
            previous_member_epoch=value["previousMemberEpoch"],
            state=MemberState.from_value(value["state"]),
            assigned_partitions=_pairs(value["assignedPartitions"]),
            partitions_pending_revocation=_pairs(value["partitionsPendingRevocation"])))
