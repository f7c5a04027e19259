"""A streams group as StreamsGroupDescribe (API 89) answers it: Kafka 4.2's
``StreamsGroup.asDescribedGroup`` and ``StreamsGroupMember.asStreamsGroupDescribeMember``, as
plain values in the response schema's shape (snake-case field names).

The topology is the plain one (``StreamsTopology.asStreamsGroupDescribeTopology``: what a
coordinator that has just loaded the group describes until a heartbeat configures it against
topic metadata): subtopologies by id, their topics sorted. Task offsets are soft state a
coordinator keeps from heartbeats only: empty here.

>>> from kafkalog.groups.streams import StreamsGroup
>>> described_group(StreamsGroup("app"))["group_state"]
'Empty'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...decoders.jvm_order import java_hash_map_order, java_string_hash
from .streams_group import StreamsGroup, StreamsGroupMember, TasksTuple, TopicInfo

__all__ = ["described_group", "describe_error"]


def _task_ids(tasks: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [{"subtopology_id": s, "partitions": sorted(ps)} for s, ps in sorted(tasks.items())]


def _assignment(t: TasksTuple | None) -> dict[str, Any]:
    if t is None:
        return {"active_tasks": [], "standby_tasks": [], "warmup_tasks": []}
    return {"active_tasks": _task_ids(t.active), "standby_tasks": _task_ids(t.standby),
            "warmup_tasks": _task_ids(t.warmup)}


def _topic_info(i: TopicInfo) -> dict[str, Any]:
    return {"name": i.name, "partitions": i.partitions, "replication_factor":
            i.replication_factor, "topic_configs": [{"key": k, "value": v}
                                                    for k, v in i.topic_configs]}


def _member(m: StreamsGroupMember, target: TasksTuple | None) -> dict[str, Any]:
    tags = java_hash_map_order(m.client_tags, java_string_hash)     # (a HashMap's entries)
    return {
        "member_id": m.member_id, "member_epoch": m.member_epoch,
        "instance_id": m.instance_id, "rack_id": m.rack_id, "client_id": m.client_id,
        "client_host": m.client_host, "topology_epoch": m.topology_epoch,
        "process_id": m.process_id,
        "user_endpoint": None if m.user_endpoint is None else
        {"host": m.user_endpoint[0], "port": m.user_endpoint[1]},
        "client_tags": [{"key": k, "value": m.client_tags[k]} for k in tags],
        "task_offsets": [], "task_end_offsets": [],
        "assignment": _assignment(m.assigned_tasks),
        "target_assignment": _assignment(target),
        "is_classic": False,
    }


def described_group(group: StreamsGroup) -> dict[str, Any]:
    """``asDescribedGroup`` (``authorized_operations`` left at the schema default)."""
    topo = group.topology
    topology = None if topo is None else {"epoch": topo.epoch, "subtopologies": [{
        "subtopology_id": sid, "source_topics": sorted(sub.source_topics),
        "repartition_sink_topics": sorted(sub.repartition_sink_topics),
        "state_changelog_topics": [_topic_info(i) for i in
                                   sorted(sub.state_changelog_topics, key=lambda i: i.name)],
        "repartition_source_topics": [_topic_info(i) for i in
                                      sorted(sub.repartition_source_topics,
                                             key=lambda i: i.name)],
    } for sid, sub in sorted(topo.subtopologies.items())]}
    return {"error_code": 0, "error_message": None, "group_id": group.group_id,
            "group_state": group.state, "group_epoch": group.group_epoch,
            "assignment_epoch": group.target_assignment_epoch, "topology": topology,
            "members": [_member(m, group.target_assignment.get(m.member_id))
                        for m in group.members.values()],
            "authorized_operations": -(1 << 31)}


def describe_error(group_id: str, error_code: int, message: str | None = None
                   ) -> dict[str, Any]:
    """A DescribedGroup carrying only an error (the other fields at their defaults)."""
    return {"error_code": error_code, "error_message": message, "group_id": group_id,
            "group_state": "", "group_epoch": 0, "assignment_epoch": 0, "topology": None,
            "members": [], "authorized_operations": -(1 << 31)}
