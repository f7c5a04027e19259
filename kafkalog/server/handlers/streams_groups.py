"""StreamsGroupDescribe (89, v0): KIP-1071 streams groups of the directory described as Kafka
4.2 describes them (:meth:`kafkalog.groups.GroupCoordinator.streams_group_describe`), with
KafkaApis' ACL rules: DESCRIBE on each group, and a group whose topology names a topic the
client may not DESCRIBE answered TOPIC_AUTHORIZATION_FAILED without its topology and members.

The streams protocol itself (StreamsGroupHeartbeat, 88) is not served: the groups come from a
Kafka cluster's files; their offsets are read and changed with the consumer group APIs, as
``kafka-streams-groups.sh`` does (its describe uses this API).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...groups.streams.describe import describe_error
from ...security.acls import AclOperation, ResourceType
from ..api import RequestContext, register
from ..protocol import ErrorCode
from .groups import GROUP_OPERATIONS

__all__: list[str] = []

#: KafkaApis.handleStreamsGroupDescribe's message for a topology naming an undescribable topic
UNDESCRIBABLE_TOPOLOGY = ("The described group uses topics that the client is not authorized "
                          "to describe.")


def _topology_topics(group: Mapping[str, Any]) -> set[str]:
    topology = group["topology"]
    if topology is None:
        return set()
    out: set[str] = set()
    for sub in topology["subtopologies"] or ():
        out.update(sub["source_topics"])
        out.update(sub["repartition_sink_topics"])
        out.update(t["name"] for t in sub["repartition_source_topics"])
        out.update(t["name"] for t in sub["state_changelog_topics"])
    return out


@register(89, "StreamsGroupDescribe", 0, 0)
async def streams_group_describe(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    service = ctx.broker.groups
    if service is None:
        return {"throttle_time": 0, "groups": [
            describe_error(g, ErrorCode.coordinator_not_available) for g in request.group_ids]}
    groups, allowed = [], []
    for g in request.group_ids:        # (KafkaApis: the refused groups first)
        if ctx.authorize(AclOperation.DESCRIBE, ResourceType.GROUP, g):
            allowed.append(g)
        else:
            groups.append(describe_error(g, ErrorCode.group_authorization_failed))
    for g in service.call(lambda c: c.streams_group_describe(allowed)):
        if request.include_authorized_operations and g["error_code"] == 0:
            g["authorized_operations"] = ctx.authorized_operations(
                ResourceType.GROUP, g["group_id"], GROUP_OPERATIONS)
        groups.append(g)
    if ctx.broker.authorizer is not None:
        names = set().union(*(_topology_topics(g) for g in groups))
        denied = {t for t in names
                  if not ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, t)}
        groups = [describe_error(g["group_id"], ErrorCode.topic_authorization_failed,
                         UNDESCRIBABLE_TOPOLOGY) if _topology_topics(g) & denied else g
                  for g in groups]
    return {"throttle_time": 0, "groups": groups}
