"""The ``__consumer_offsets`` records of KIP-1071 streams groups (types 17 and 19-23), built
and replayed.

Builders follow Kafka 4.2's ``StreamsCoordinatorRecordHelpers`` (task lists sorted by
subtopology id, partitions ascending, client tags by key); the bytes come from the project's
coordinator-record codec (Kafka's message schemas). :func:`replay` applies one decoded record
to a group as ``GroupMetadataManager.replay`` does for each streams record, including the
checks Kafka makes when a deleted group's or member's tombstones arrive out of order (it fails
the partition's load with an ``IllegalStateException``; here :class:`StreamsReplayError`).

Type 18 (the pre-4.1 ``StreamsGroupPartitionMetadata``) is gone from Kafka 4.1's schemas, and
24 (``StreamsGroupTargetAssignmentResolvedTopicIds``) is newer than 4.2: a 4.2 coordinator
replays neither, and neither changes the group here.

>>> key, value = metadata_record("app", 3, validated_topology_epoch=1)
>>> groups = {}
>>> replay(groups, CODEC.decode(key, value))
>>> groups["app"].group_epoch, groups["app"].validated_topology_epoch
(3, 1)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ...decoders.offsets import CODEC
from .streams_group import (
    EMPTY_TASKS,
    LEAVE_GROUP_MEMBER_EPOCH,
    MEMBER_STATES,
    StreamsGroup,
    StreamsGroupMember,
    StreamsTopology,
    Subtopology,
    TasksTuple,
    TopicInfo,
)

__all__ = [
    "STREAMS_GROUP_TYPES",
    "StreamsReplayError",
    "current_assignment_record",
    "current_assignment_tombstone",
    "group_tombstones",
    "member_record",
    "member_tombstone",
    "metadata_record",
    "metadata_tombstone",
    "replay",
    "target_assignment_epoch_record",
    "target_assignment_epoch_tombstone",
    "target_assignment_record",
    "target_assignment_tombstone",
    "topology_record",
    "topology_tombstone",
]

METADATA, MEMBER_METADATA, TARGET_ASSIGNMENT_METADATA = 17, 19, 20
TARGET_ASSIGNMENT_MEMBER, CURRENT_ASSIGNMENT, TOPOLOGY = 21, 22, 23
#: the record types a streams group's state is made of (as Kafka 4.2 replays them)
STREAMS_GROUP_TYPES = frozenset([METADATA, *range(19, 24)])

Record = tuple[bytes, bytes | None]
_STATE_VALUES = {name: value for value, name in MEMBER_STATES.items()}


class StreamsReplayError(ValueError):
    """A streams group record that Kafka's replay refuses (``IllegalStateException``)."""


def _group_key(group_id: str) -> dict[str, Any]:
    return {"groupId": group_id}


def _member_key(group_id: str, member_id: str) -> dict[str, Any]:
    return {"groupId": group_id, "memberId": member_id}


def _task_ids(tasks: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [{"subtopologyId": s, "partitions": sorted(ps)} for s, ps in sorted(tasks.items())]


def _task_ids_with_epochs(epochs: Mapping[str, Mapping[int, int]]) -> list[dict[str, Any]]:
    return [{"subtopologyId": s, "partitions": sorted(pe),
             "assignmentEpochs": [pe[p] for p in sorted(pe)]} for s, pe in sorted(epochs.items())]


def metadata_record(group_id: str, epoch: int, metadata_hash: int = 0,
                    validated_topology_epoch: int = -1,
                    assignment_configs: Mapping[str, str] | None = None) -> Record:
    """``newStreamsGroupMetadataRecord`` (type 17)."""
    return CODEC.encode(METADATA, _group_key(group_id), {
        "epoch": epoch, "metadataHash": metadata_hash,
        "validatedTopologyEpoch": validated_topology_epoch,
        "lastAssignmentConfigs": [{"key": k, "value": v}
                                  for k, v in (assignment_configs or {}).items()]}, 0)


def metadata_tombstone(group_id: str) -> Record:
    return CODEC.encode(METADATA, _group_key(group_id), None)


def member_record(group_id: str, m: StreamsGroupMember) -> Record:
    """``newStreamsGroupMemberRecord`` (type 19)."""
    return CODEC.encode(MEMBER_METADATA, _member_key(group_id, m.member_id), {
        "instanceId": m.instance_id, "rackId": m.rack_id, "clientId": m.client_id,
        "clientHost": m.client_host, "rebalanceTimeoutMs": m.rebalance_timeout_ms,
        "topologyEpoch": m.topology_epoch, "processId": m.process_id,
        "userEndpoint": None if m.user_endpoint is None else
        {"host": m.user_endpoint[0], "port": m.user_endpoint[1]},
        "clientTags": [{"key": k, "value": v} for k, v in sorted(m.client_tags.items())],
    }, 0)


def member_tombstone(group_id: str, member_id: str) -> Record:
    return CODEC.encode(MEMBER_METADATA, _member_key(group_id, member_id), None)


def target_assignment_epoch_record(group_id: str, epoch: int) -> Record:
    """``newStreamsGroupTargetAssignmentEpochRecord`` (type 20)."""
    return CODEC.encode(TARGET_ASSIGNMENT_METADATA, _group_key(group_id),
                        {"assignmentEpoch": epoch}, 0)


def target_assignment_epoch_tombstone(group_id: str) -> Record:
    return CODEC.encode(TARGET_ASSIGNMENT_METADATA, _group_key(group_id), None)


def target_assignment_record(group_id: str, member_id: str, tasks: TasksTuple) -> Record:
    """``newStreamsGroupTargetAssignmentRecord`` (type 21)."""
    return CODEC.encode(TARGET_ASSIGNMENT_MEMBER, _member_key(group_id, member_id), {
        "activeTasks": _task_ids(tasks.active), "standbyTasks": _task_ids(tasks.standby),
        "warmupTasks": _task_ids(tasks.warmup)}, 0)


def target_assignment_tombstone(group_id: str, member_id: str) -> Record:
    return CODEC.encode(TARGET_ASSIGNMENT_MEMBER, _member_key(group_id, member_id), None)


def _epochs(t: TasksTuple, member_epoch: int) -> Mapping[str, Mapping[int, int]]:
    if t.active_epochs:
        return t.active_epochs
    return {s: dict.fromkeys(ps, member_epoch) for s, ps in t.active.items()}


def current_assignment_record(group_id: str, m: StreamsGroupMember) -> Record:
    """``newStreamsGroupCurrentAssignmentRecord`` (type 22; active tasks with the epoch each
    was assigned at, Kafka 4.2)."""
    a, r = m.assigned_tasks, m.tasks_pending_revocation
    return CODEC.encode(CURRENT_ASSIGNMENT, _member_key(group_id, m.member_id), {
        "memberEpoch": m.member_epoch, "previousMemberEpoch": m.previous_member_epoch,
        "state": _STATE_VALUES.get(m.state, 127),
        "activeTasks": _task_ids_with_epochs(_epochs(a, m.member_epoch)),
        "standbyTasks": _task_ids(a.standby), "warmupTasks": _task_ids(a.warmup),
        "activeTasksPendingRevocation": _task_ids_with_epochs(_epochs(r, m.member_epoch)),
        "standbyTasksPendingRevocation": _task_ids(r.standby),
        "warmupTasksPendingRevocation": _task_ids(r.warmup),
    }, 0)


def current_assignment_tombstone(group_id: str, member_id: str) -> Record:
    return CODEC.encode(CURRENT_ASSIGNMENT, _member_key(group_id, member_id), None)


def _topic_info(info: TopicInfo) -> dict[str, Any]:
    return {"name": info.name, "partitions": info.partitions,
            "replicationFactor": info.replication_factor,
            "topicConfigs": [{"key": k, "value": v} for k, v in info.topic_configs]}


def topology_record(group_id: str, topology: StreamsTopology) -> Record:
    """``newStreamsGroupTopologyRecord`` (type 23)."""
    subs = []
    for _, s in sorted(topology.subtopologies.items()):
        subs.append({
            "subtopologyId": s.subtopology_id, "sourceTopics": list(s.source_topics),
            "sourceTopicRegex": list(s.source_topic_regex),
            "stateChangelogTopics": [_topic_info(i) for i in s.state_changelog_topics],
            "repartitionSinkTopics": list(s.repartition_sink_topics),
            "repartitionSourceTopics": [_topic_info(i) for i in s.repartition_source_topics],
            "copartitionGroups": [dict(c) for c in s.copartition_groups]})
    return CODEC.encode(TOPOLOGY, _group_key(group_id),
                        {"epoch": topology.epoch, "subtopologies": subs}, 0)


def topology_tombstone(group_id: str) -> Record:
    return CODEC.encode(TOPOLOGY, _group_key(group_id), None)


def group_tombstones(group: StreamsGroup) -> list[Record]:
    """``StreamsGroup.createGroupTombstoneRecords``: what deleting the group writes (after its
    offsets' tombstones): current assignments, target assignments, the target assignment
    epoch, members, the group epoch, the topology."""
    g, ids = group.group_id, list(group.members)
    return ([current_assignment_tombstone(g, m) for m in ids]
            + [target_assignment_tombstone(g, m) for m in ids]
            + [target_assignment_epoch_tombstone(g)]
            + [member_tombstone(g, m) for m in ids]
            + [metadata_tombstone(g), topology_tombstone(g)])


# -- replay -------------------------------------------------------------------------------------

def _simple(items: list[dict[str, Any]]) -> dict[str, frozenset[int]]:
    return {i["subtopologyId"]: frozenset(i["partitions"]) for i in items}


def _with_epochs(items: list[dict[str, Any]], member_epoch: int
                 ) -> tuple[dict[str, frozenset[int]], dict[str, dict[int, int]]]:
    """``TasksTupleWithEpochs.parseActiveTasksWithEpochs``: a record without epochs (Kafka
    4.1) takes the member epoch for every task."""
    active, epochs = {}, {}
    for i in items:
        sub, parts, eps = i["subtopologyId"], i["partitions"], i.get("assignmentEpochs") or []
        if eps and len(eps) != len(parts):
            raise StreamsReplayError(
                f"Assignment epochs must be provided for all partitions. Subtopology {sub} has "
                f"{len(parts)} partitions but {len(eps)} epochs")
        epochs[sub] = dict(zip(parts, eps)) if eps else dict.fromkeys(parts, member_epoch)
        active[sub] = frozenset(parts)
    return active, epochs


def _tasks_with_epochs(active: list, standby: list, warmup: list, member_epoch: int
                       ) -> TasksTuple:
    a, e = _with_epochs(active, member_epoch)
    return TasksTuple(a, _simple(standby), _simple(warmup), e)


def _topic_infos(items: list[dict[str, Any]]) -> tuple[TopicInfo, ...]:
    return tuple(TopicInfo(i["name"], i["partitions"], i["replicationFactor"],
                           tuple((c["key"], c["value"]) for c in i["topicConfigs"]))
                 for i in items)


def _topology(value: Mapping[str, Any]) -> StreamsTopology:
    subs = {}
    for s in value["subtopologies"]:
        subs[s["subtopologyId"]] = Subtopology(
            s["subtopologyId"], tuple(s["sourceTopics"]), tuple(s["sourceTopicRegex"]),
            _topic_infos(s["stateChangelogTopics"]), tuple(s["repartitionSinkTopics"]),
            _topic_infos(s["repartitionSourceTopics"]), tuple(s["copartitionGroups"]))
    return StreamsTopology(value["epoch"], subs)


def replay(groups: dict[str, StreamsGroup], rec: Mapping[str, Any]) -> None:
    """Apply one decoded record (:meth:`CoordinatorCodec.decode` of a type in
    :data:`STREAMS_GROUP_TYPES`) to ``groups`` (group id -> group), as Kafka 4.2's
    ``GroupMetadataManager.replay`` does: a record creates its group, a tombstone of an
    unknown group or member is ignored, the metadata tombstone deletes the group.

    Raises
    ------
    StreamsReplayError
        A tombstone Kafka refuses: a group deleted while it has members or before its target
        assignment epoch tombstone, a member deleted before its current or target assignment
        tombstone.
    """
    t, key, value = rec["type"], rec["key"], rec["value"]
    group_id = key["groupId"]
    group = groups.get(group_id)
    if group is None:
        if value is None:
            return      # getOrMaybeCreatePersistedStreamsGroup(..., false): not found, ignored
        group = groups[group_id] = StreamsGroup(group_id)
    if t == METADATA:
        if value is None:
            if group.members:
                raise StreamsReplayError(
                    f"Received a tombstone record to delete group {group_id} but the group "
                    f"still has {len(group.members)} members.")
            if group.target_assignment_epoch != -1:
                raise StreamsReplayError(
                    f"Received a tombstone record to delete group {group_id} but did not "
                    "receive StreamsGroupTargetAssignmentMetadataValue tombstone.")
            del groups[group_id]
            return
        group.group_epoch = value["epoch"]
        group.metadata_hash = value["metadataHash"]
        group.validated_topology_epoch = value.get("validatedTopologyEpoch", -1)
        group.last_assignment_configs = {c["key"]: c["value"]
                                         for c in value.get("lastAssignmentConfigs") or ()}
    elif t == TOPOLOGY:
        group.topology = None if value is None else _topology(value)
    elif t == TARGET_ASSIGNMENT_METADATA:
        if value is None and group.target_assignment:
            raise StreamsReplayError(
                f"Received a tombstone record to delete target assignment of {group_id} but "
                f"the assignment still has {len(group.target_assignment)} members.")
        group.target_assignment_epoch = -1 if value is None else value["assignmentEpoch"]
    elif t == TARGET_ASSIGNMENT_MEMBER:
        member_id = key["memberId"]
        if value is None:
            group.target_assignment.pop(member_id, None)
        else:
            group.target_assignment[member_id] = TasksTuple(
                _simple(value["activeTasks"]), _simple(value["standbyTasks"]),
                _simple(value["warmupTasks"]))
    elif t == MEMBER_METADATA:
        member_id = key["memberId"]
        old = group.members.get(member_id)
        if value is None:
            if old is None:
                return
            if old.member_epoch != LEAVE_GROUP_MEMBER_EPOCH:
                raise StreamsReplayError(
                    f"Received a tombstone record to delete member {member_id} but did not "
                    "receive StreamsGroupCurrentMemberAssignmentValue tombstone.")
            if member_id in group.target_assignment:
                raise StreamsReplayError(
                    f"Received a tombstone record to delete member {member_id} but did not "
                    "receive StreamsGroupTargetAssignmentMetadataValue tombstone.")
            del group.members[member_id]
            return
        endpoint = value.get("userEndpoint")
        group.members[member_id] = replace(
            old or StreamsGroupMember(member_id),
            instance_id=value["instanceId"], rack_id=value["rackId"],
            client_id=value["clientId"], client_host=value["clientHost"],
            rebalance_timeout_ms=value["rebalanceTimeoutMs"],
            topology_epoch=value["topologyEpoch"], process_id=value["processId"],
            user_endpoint=None if endpoint is None else (endpoint["host"], endpoint["port"]),
            client_tags={kv["key"]: kv["value"] for kv in value["clientTags"]})
    elif t == CURRENT_ASSIGNMENT:
        member_id = key["memberId"]
        old = group.members.get(member_id)
        if value is None:
            if old is not None:
                group.members[member_id] = replace(
                    old, member_epoch=LEAVE_GROUP_MEMBER_EPOCH,
                    previous_member_epoch=LEAVE_GROUP_MEMBER_EPOCH,
                    assigned_tasks=EMPTY_TASKS, tasks_pending_revocation=EMPTY_TASKS)
            return
        epoch = value["memberEpoch"]
        group.members[member_id] = replace(
            old or StreamsGroupMember(member_id),
            member_epoch=epoch, previous_member_epoch=value["previousMemberEpoch"],
            state=MEMBER_STATES.get(value["state"], "UNKNOWN"),
            assigned_tasks=_tasks_with_epochs(value["activeTasks"], value["standbyTasks"],
                                              value["warmupTasks"], epoch),
            tasks_pending_revocation=_tasks_with_epochs(
                value["activeTasksPendingRevocation"], value["standbyTasksPendingRevocation"],
                value["warmupTasksPendingRevocation"], epoch))
