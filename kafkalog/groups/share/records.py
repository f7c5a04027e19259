"""A share group's membership records in ``__consumer_offsets`` (types 10, 12, 13, 14), built,
replayed and diffed.

Kafka's group coordinator persists a share group as it does a consumer group (Kafka 4.2's
``GroupMetadataManager.shareGroupHeartbeat``, ``shareGroupFenceMember`` and
``GroupCoordinatorRecordHelpers.newShareGroup*``):

* ``ShareGroupMemberMetadata`` (10), key (group, member): the member's rack, client id, client
  host and subscribed topic names (sorted), written when any of them changes;
* ``ShareGroupMetadata`` (11): the group epoch and KIP-1101 metadata hash (built by
  :func:`kafkalog.groups.share.offline.coordinator_records`);
* ``ShareGroupTargetAssignmentMember`` (13), one per member whose target changed (a new member
  always gets one, empty or not), then ``ShareGroupTargetAssignmentMetadata`` (12), the
  assignment epoch, each time a target assignment is computed;
* ``ShareGroupCurrentMemberAssignment`` (14): the member's epoch, previous epoch, state (always
  STABLE: share groups have no revocation) and assigned partitions, when they change;
* a member leaving or timing out: tombstones of its 14, 13 and 10, then a new group epoch.

One heartbeat writes them in that order: 10, 11, 13..., 12, 14. :class:`StoredShareGroup` is
what the records say (:func:`replay`); :func:`delta` gives the records that take the stored
state to a live :class:`~kafkalog.groups.share.share_group.ShareGroup`, so the server writes
exactly what changed and a restart replays the group with its members
(:meth:`StoredShareGroup.to_live`), whose session timeouts then start again, as Kafka's
``onLoaded`` schedules them.

>>> from kafkalog.groups.share.share_group import ShareGroup, ShareMember
>>> live = ShareGroup("g", group_epoch=1, assignment_epoch=1)
>>> live.members["m"] = ShareMember("m", 1, ("t",), previous_member_epoch=0,
...                                 assignment={"t": [0]})
>>> live.target["m"] = {"t": [0]}
>>> ids = {"t": "AAAAAAAAAAAAAAAAAAAAAQ"}
>>> recs = delta(StoredShareGroup("g"), live, ids)
>>> [CODEC.decode(k, v)["type"] for k, v in recs]
[10, 13, 12, 14]
>>> stored = StoredShareGroup("g")
>>> for k, v in recs:
...     replay({"g": stored}, CODEC.decode(k, v))
>>> delta(stored, live, ids)
[]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...decoders.offsets import CODEC
from .share_group import ShareGroup, ShareMember

__all__ = ["MEMBER_METADATA", "TARGET_ASSIGNMENT_METADATA", "TARGET_ASSIGNMENT_MEMBER",
           "CURRENT_MEMBER_ASSIGNMENT", "MEMBER_RECORD_TYPES", "STABLE", "StoredMember",
           "StoredShareGroup", "member_subscription_record", "member_subscription_tombstone",
           "target_assignment_record", "target_assignment_tombstone",
           "target_assignment_epoch_record",
           "current_assignment_record", "current_assignment_tombstone", "replay", "delta",
           "fence_records"]

MEMBER_METADATA = 10
TARGET_ASSIGNMENT_METADATA = 12
TARGET_ASSIGNMENT_MEMBER = 13
CURRENT_MEMBER_ASSIGNMENT = 14
#: the membership record types this module replays
MEMBER_RECORD_TYPES = (MEMBER_METADATA, TARGET_ASSIGNMENT_METADATA, TARGET_ASSIGNMENT_MEMBER,
                       CURRENT_MEMBER_ASSIGNMENT)
#: ``MemberState.STABLE.value()``: the only state of a share-group member
STABLE = 0

Record = tuple[bytes, bytes | None]
#: topic id (Kafka's base64) -> partitions, sorted
IdAssignment = dict[str, tuple[int, ...]]


def _key(group_id: str, member_id: str | None = None) -> dict[str, Any]:
    return {"groupId": group_id} if member_id is None else {"groupId": group_id,
                                                            "memberId": member_id}


def _id_partitions(assignment: IdAssignment) -> list[dict[str, Any]]:
    return [{"topicId": tid, "partitions": list(ps)} for tid, ps in assignment.items()]


def member_subscription_record(group_id: str, m: ShareMember) -> Record:
    """``newShareGroupMemberSubscriptionRecord`` (the topic names sorted, as Kafka sorts
    them)."""
    return CODEC.encode(MEMBER_METADATA, _key(group_id, m.member_id), {
        "rackId": m.rack_id, "clientId": m.client_id, "clientHost": m.client_host,
        "subscribedTopicNames": sorted(m.subscribed_topics)}, 0)


def member_subscription_tombstone(group_id: str, member_id: str) -> Record:
    return CODEC.encode(MEMBER_METADATA, _key(group_id, member_id), None)


def target_assignment_record(group_id: str, member_id: str, assignment: IdAssignment) -> Record:
    """``newShareGroupTargetAssignmentRecord``."""
    return CODEC.encode(TARGET_ASSIGNMENT_MEMBER, _key(group_id, member_id),
                        {"topicPartitions": _id_partitions(assignment)}, 0)


def target_assignment_tombstone(group_id: str, member_id: str) -> Record:
    return CODEC.encode(TARGET_ASSIGNMENT_MEMBER, _key(group_id, member_id), None)


def target_assignment_epoch_record(group_id: str, epoch: int) -> Record:
    """``newShareGroupTargetAssignmentEpochRecord``."""
    return CODEC.encode(TARGET_ASSIGNMENT_METADATA, _key(group_id),
                        {"assignmentEpoch": epoch}, 0)



def current_assignment_record(group_id: str, member_id: str, member_epoch: int,
                              previous_member_epoch: int, assigned: IdAssignment) -> Record:
    """``newShareGroupCurrentAssignmentRecord``."""
    return CODEC.encode(CURRENT_MEMBER_ASSIGNMENT, _key(group_id, member_id), {
        "memberEpoch": member_epoch, "previousMemberEpoch": previous_member_epoch,
        "state": STABLE, "assignedPartitions": _id_partitions(assigned)}, 0)


def current_assignment_tombstone(group_id: str, member_id: str) -> Record:
    return CODEC.encode(CURRENT_MEMBER_ASSIGNMENT, _key(group_id, member_id), None)


def fence_records(group_id: str, member_id: str) -> list[Record]:
    """``shareGroupFenceMember``'s tombstones, in its order (the group epoch record follows)."""
    return [current_assignment_tombstone(group_id, member_id),
            target_assignment_tombstone(group_id, member_id),
            member_subscription_tombstone(group_id, member_id)]


@dataclass
class StoredMember:
    """A member as its records 10 and 14 say (None/-1 until the record is seen)."""

    member_id: str
    #: (rack id, client id, client host, subscribed topic names sorted), from record 10
    subscription: tuple[str | None, str, str, tuple[str, ...]] | None = None
    member_epoch: int = 0
    previous_member_epoch: int = -1
    assigned: IdAssignment = field(default_factory=dict)


@dataclass
class StoredShareGroup:
    """A share group's membership as its ``__consumer_offsets`` records say."""

    group_id: str
    #: record 12's epoch (-1: none or its tombstone)
    assignment_epoch: int = -1
    #: members in the order their first record came
    members: dict[str, StoredMember] = field(default_factory=dict)
    #: member -> its target (record 13)
    targets: dict[str, IdAssignment] = field(default_factory=dict)

    def to_live(self, group_epoch: int, names: Mapping[str, str], now: int) -> ShareGroup:
        """The coordinator's group (epoch ``group_epoch`` from record 11) with the stored
        members, each as if it had just heartbeated at ``now`` (its session timeout starts
        again). ``names``: topic id -> name; partitions of topics no longer known are
        dropped."""
        def by_name(a: IdAssignment) -> dict[str, list[int]]:
            return {names[tid]: list(ps) for tid, ps in sorted(
                a.items(), key=lambda kv: names.get(kv[0], "")) if tid in names}

        group = ShareGroup(self.group_id, group_epoch=group_epoch,
                           assignment_epoch=max(self.assignment_epoch, 0))
        for m in self.members.values():
            if m.subscription is None:
                continue            # a current assignment without metadata: not a member
            rack, client_id, host, topics = m.subscription
            group.members[m.member_id] = ShareMember(
                m.member_id, m.member_epoch, topics, rack, client_id, host,
                by_name(m.assigned), now, previous_member_epoch=m.previous_member_epoch)
        group.target = {mid: by_name(a) for mid, a in self.targets.items()
                        if mid in group.members}
        return group


def _ids(assignment: Mapping[str, list[int]], ids: Mapping[str, str]) -> IdAssignment:
    return {ids[t]: tuple(sorted(ps)) for t, ps in assignment.items() if t in ids}


def _subscription(m: ShareMember) -> tuple[str | None, str, str, tuple[str, ...]]:
    return (m.rack_id, m.client_id, m.client_host, tuple(sorted(m.subscribed_topics)))


def delta(stored: StoredShareGroup, live: ShareGroup, ids: Mapping[str, str], *,
          group_records: list[Record] | None = None) -> list[Record]:
    """The records that bring ``stored`` to ``live`` (``ids``: topic name -> id), in the order
    Kafka writes them: the fenced members' tombstones (14, 13, 10), then the present members'
    metadata (10), ``group_records`` (the group's record 11/15, built by the caller), the
    changed targets (13) and the assignment epoch (12) when a new target assignment was
    computed, and the changed current assignments (14)."""
    g = live.group_id
    out: list[Record] = []
    for mid in list(stored.members) + [m for m in stored.targets if m not in stored.members]:
        if mid not in live.members:
            out += fence_records(g, mid)
    for m in live.members.values():
        known = stored.members.get(m.member_id)
        if known is None or known.subscription != _subscription(m):
            out.append(member_subscription_record(g, m))
    out += group_records or []
    if live.assignment_epoch != stored.assignment_epoch and live.assignment_epoch > 0:
        for mid in live.members:
            new = _ids(live.target.get(mid, {}), ids)
            if stored.targets.get(mid) != new:
                out.append(target_assignment_record(g, mid, new))
        out.append(target_assignment_epoch_record(g, live.assignment_epoch))
    for m in live.members.values():
        known = stored.members.get(m.member_id)
        assigned = _ids(m.assignment, ids)
        if m.member_epoch > 0 and (known is None or (
                known.member_epoch, known.previous_member_epoch, known.assigned)
                != (m.member_epoch, m.previous_member_epoch, assigned)):
            out.append(current_assignment_record(g, m.member_id, m.member_epoch,
                                                 m.previous_member_epoch, assigned))
    return out


def _pairs(items: list[dict[str, Any]]) -> IdAssignment:
    return {str(i["topicId"]): tuple(sorted(i["partitions"])) for i in items}


def replay(groups: dict[str, StoredShareGroup], rec: Mapping[str, Any]) -> None:
    """Apply one decoded record of a type in :data:`MEMBER_RECORD_TYPES`
    (:meth:`CoordinatorCodec.decode`) to ``groups`` (group id -> stored group), as
    ``GroupMetadataManager.replay`` does for share groups: a record creates the group, a
    tombstone of something unknown is ignored, a member is gone with its record 10's
    tombstone (a 14 tombstone leaves it at epoch -1 holding nothing)."""
    t = rec["type"]
    key = rec["key"]
    value = rec["value"]
    group = groups.get(key["groupId"])
    if group is None:
        if value is None:
            return
        group = groups[key["groupId"]] = StoredShareGroup(key["groupId"])
    if t == TARGET_ASSIGNMENT_METADATA:
        group.assignment_epoch = -1 if value is None else value["assignmentEpoch"]
        return
    mid = key["memberId"]
    if t == TARGET_ASSIGNMENT_MEMBER:
        if value is None:
            group.targets.pop(mid, None)
        else:
            group.targets[mid] = _pairs(value["topicPartitions"])
        return
    member = group.members.get(mid)
    if t == MEMBER_METADATA:
        if value is None:
            group.members.pop(mid, None)
            return
        member = member or group.members.setdefault(mid, StoredMember(mid))
        member.subscription = (value["rackId"], value["clientId"], value["clientHost"],
                               tuple(sorted(value["subscribedTopicNames"])))
    elif t == CURRENT_MEMBER_ASSIGNMENT:
        if value is None:
            if member is not None:
                member.member_epoch = member.previous_member_epoch = -1
                member.assigned = {}
            return
        member = member or group.members.setdefault(mid, StoredMember(mid))
        member.member_epoch = value["memberEpoch"]
        member.previous_member_epoch = value["previousMemberEpoch"]
        member.assigned = _pairs(value["assignedPartitions"])
