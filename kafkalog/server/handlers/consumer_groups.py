"""The KIP-848 consumer group APIs, translated to :class:`kafkalog.groups.GroupCoordinator`.

ConsumerGroupHeartbeat (68, v0-1) and ConsumerGroupDescribe (69, v0): the request fields go to
``consumer_group_heartbeat`` / ``consumer_group_describe`` (the rules live in
:mod:`kafkalog.groups.modern.coordinator`, ported from Kafka 4.0's group coordinator);
topic ids cross as ``uuid.UUID`` on the wire and as Kafka's string form in the coordinator.
``group.protocol=consumer`` clients (librdkafka >= 2.10, Kafka's Java consumer >= 3.7) use these
with OffsetCommit v9 / OffsetFetch v9, whose member epoch the coordinator checks.

ACLs as Kafka 4.x's KafkaApis and group coordinator apply them: a heartbeat needs READ on the
group and DESCRIBE on each subscribed topic name; a subscription regex resolves only to the
topics the principal of the heartbeat that triggers the refresh may DESCRIBE; a described group
whose members' assignment or target assignment names a topic the client may not DESCRIBE is
answered TOPIC_AUTHORIZATION_FAILED without its members.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ...decoders.message import uuid_from_str, uuid_to_str
from ...security.acls import AclOperation, ResourceType
from ..api import RequestContext, register
from ..protocol import ErrorCode, millis
from .groups import GROUP_OPERATIONS, _host

__all__: list[str] = []


def _wire_id(topic_id: str) -> uuid.UUID:
    return uuid.UUID(bytes=uuid_from_str(topic_id))


def _refused(ctx: RequestContext, request: Any) -> int | None:
    """KafkaApis.handleConsumerGroupHeartbeat: READ on the group, DESCRIBE on every subscribed
    topic name (a client may not learn of topics it cannot describe)."""
    if not ctx.authorize(AclOperation.READ, ResourceType.GROUP, request.group_id):
        return ErrorCode.group_authorization_failed
    names = request.subscribed_topic_names or ()
    if any(not ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, n) for n in names):
        return ErrorCode.topic_authorization_failed
    return None


def _describable(ctx: RequestContext) -> Callable[[frozenset[str]], set[str]] | None:
    """The topics of a set the request's principal may DESCRIBE (None without an authorizer):
    the group coordinator resolves subscription regexes to those only (Kafka 4.0+
    ``GroupMetadataManager.refreshRegularExpressions`` -> ``filterTopicDescribeAuthorizedTopics``
    with the heartbeat's request context)."""
    if ctx.broker.authorizer is None:
        return None
    return lambda topics: {t for t in topics
                           if ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, t)}


#: KafkaApis.handleConsumerGroupDescribe (Kafka 4.0+, KAFKA-18813) / handleShareGroupDescribe
#: (4.1+, KAFKA-18817): the message of a group whose members' assignments name a topic the
#: client may not DESCRIBE
UNDESCRIBABLE_TOPICS = ("The group has described topic(s) that the client is not authorized "
                        "to describe.")


def undescribable(ctx: RequestContext, groups: list[dict[str, Any]],
                  topics_of: Callable[[dict[str, Any]], Iterable[str]]) -> set[str]:
    """The group ids of ``groups`` (described without error or with) whose members name a topic
    (``topics_of(member)``) the principal may not DESCRIBE; nothing without an authorizer
    (KafkaApis checks only ``if (authorizerPlugin.isDefined)``). Each topic is authorized once."""
    if ctx.broker.authorizer is None:
        return set()
    names = {t for g in groups for m in g.get("members", ()) for t in topics_of(m)}
    denied = {t for t in names
              if not ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, t)}
    return {g["group_id"] for g in groups
            if any(t in denied for m in g.get("members", ()) for t in topics_of(m))}


def _assigned_topics(member: dict[str, Any]) -> list[str]:
    # member.assignment and member.targetAssignment (a topic id this node no longer knows has
    # no name here; Kafka's describe leaves such a topic out, so it is not checked)
    return [tp["topic_name"] for k in ("assignment", "target_assignment")
            for tp in member[k]["topic_partitions"] if tp["topic_name"]]


@register(68, "ConsumerGroupHeartbeat", 0, 1)
async def consumer_group_heartbeat(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    service = ctx.broker.groups
    if service is None:
        return {"throttle_time": 0, "error_code": ErrorCode.coordinator_not_available,
                "error_message": None, "member_id": None, "member_epoch": 0,
                "heartbeat_interval": 0, "assignment": None}
    refused = _refused(ctx, request)
    if refused is not None:
        return {"throttle_time": 0, "error_code": refused, "error_message": None,
                "member_id": None, "member_epoch": 0, "heartbeat_interval": 0,
                "assignment": None}
    shares = ctx.broker.shares
    if shares is not None and shares.coordinator.group(request.group_id) is not None:
        return {"throttle_time": 0, "error_code": ErrorCode.group_id_not_found,
                "error_message": f"Group {request.group_id} is not a consumer group.",
                "member_id": None, "member_epoch": 0, "heartbeat_interval": 0,
                "assignment": None}
    owned = request.topic_partitions
    fields = {
        "instance_id": request.instance_id,
        "rack_id": request.rack_id,
        "rebalance_timeout_ms": millis(request.rebalance_timeout),
        "subscribed_topic_names": None if request.subscribed_topic_names is None
        else list(request.subscribed_topic_names),
        "subscribed_topic_regex": getattr(request, "subscribed_topic_regex", None),
        "server_assignor": request.server_assignor,
        "topic_partitions": None if owned is None else [
            (uuid_to_str(tp.topic_id.bytes), list(tp.partitions)) for tp in owned
            if tp.topic_id is not None],
        "client_id": ctx.client_id or "",
        "client_host": _host(ctx),
        "api_version": ctx.api_version,
        "describable_topics": _describable(ctx),
    }
    r = service.call(lambda c: c.consumer_group_heartbeat(
        request.group_id, request.member_id, request.member_epoch, **fields))
    assignment = None if r.assignment is None else {"topic_partitions": [
        {"topic_id": _wire_id(t), "partitions": ps} for t, ps in r.assignment]}
    return {"throttle_time": 0, "error_code": r.error_code, "error_message": r.error_message,
            "member_id": r.member_id, "member_epoch": r.member_epoch,
            "heartbeat_interval": r.heartbeat_interval_ms, "assignment": assignment}


@register(69, "ConsumerGroupDescribe", 0, 0)
async def consumer_group_describe(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    service = ctx.broker.groups
    # KafkaApis fills authorizedOperations in only for the groups described without an error;
    # the others keep the field's default, Integer.MIN_VALUE
    unset = -(1 << 31)
    if service is None:
        return {"throttle_time": 0, "groups": [
            {"error_code": ErrorCode.coordinator_not_available, "error_message": None,
             "group_id": g, "group_state": "", "group_epoch": 0, "assignment_epoch": 0,
             "assignor_name": "", "members": [], "authorized_operations": unset}
            for g in request.group_ids]}
    allowed = [g for g in request.group_ids
               if ctx.authorize(AclOperation.DESCRIBE, ResourceType.GROUP, g)]
    described = service.call(lambda c: c.consumer_group_describe(allowed))
    groups = []
    for g in request.group_ids:  # (KafkaApis: DESCRIBE on each group)
        if g not in allowed:
            groups.append({"error_code": ErrorCode.group_authorization_failed,
                           "error_message": None, "group_id": g, "group_state": "",
                           "group_epoch": 0, "assignment_epoch": 0, "assignor_name": "",
                           "members": [], "authorized_operations": unset})
    for g in described:
        out = dataclasses.asdict(g)
        for m in out["members"]:
            for k in ("assignment", "target_assignment"):
                m[k] = {"topic_partitions": [
                    {"topic_id": _wire_id(tp["topic_id"]), "topic_name": tp["topic_name"],
                     "partitions": tp["partitions"]} for tp in m[k]]}
        out["authorized_operations"] = ctx.authorized_operations(
            ResourceType.GROUP, out["group_id"], GROUP_OPERATIONS) if (
            request.include_authorized_operations and out["error_code"] == 0) else unset
        groups.append(out)
    # KafkaApis (4.0+): clients are not allowed to see topics they may not DESCRIBE: a group
    # whose members' assignment or target assignment names one is answered without its members
    refused = undescribable(ctx, groups, _assigned_topics)
    groups = [g if g["group_id"] not in refused else {
        "error_code": ErrorCode.topic_authorization_failed,
        "error_message": UNDESCRIBABLE_TOPICS, "group_id": g["group_id"], "group_state": "",
        "group_epoch": 0, "assignment_epoch": 0, "assignor_name": "", "members": [],
        "authorized_operations": unset} for g in groups]
    return {"throttle_time": 0, "groups": groups}
