"""Metadata (key 3): this node, the cluster id, and every topic led here.

Kafka's ``KafkaApis.handleTopicMetadataRequest`` (3.9) for one node leading every partition:

* Topics asked: all of them for a null list (v1+) or an empty list at v0; by name, or by topic id
  from v10 (``UNKNOWN_TOPIC_ID`` when unknown).
* An unknown topic is created when ``allow_auto_topic_creation`` (always at v0-3) and the broker's
  ``auto.create.topics.enable`` allow it and its name is legal and not internal, with
  ``num.partitions`` partitions (``AutoTopicCreationManager``); it is answered at once (Kafka
  answers ``LEADER_NOT_AVAILABLE`` until its controller has elected leaders: here the leader
  exists as soon as the directory does). Otherwise ``UNKNOWN_TOPIC_OR_PARTITION``, or
  ``INVALID_TOPIC_EXCEPTION`` for an illegal name.
* Each partition: leader, replicas and ISR are this node; the leader epoch is
  :meth:`Broker.leader_epoch`.
* Authorized operations (v8+, when asked): Kafka's bit fields, of the operations the ACLs allow
  (everything without an authorizer). With one, a topic is listed only with DESCRIBE on it
  (named: TOPIC_AUTHORIZATION_FAILED), and auto-creation needs CREATE on the cluster or the
  topic.

Versions 0-12 (Kafka 3.9). DescribeCluster (key 60), DescribeTopicPartitions (key 75) and
ElectLeaders (key 43) live here too: the same leadership facts for admin clients.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from ...errors import KafkaLogError
from ...security.acls import CLUSTER_NAME, AclOperation, ResourceType
from ..api import RequestContext, register
from ..broker import INTERNAL_TOPICS
from ..protocol import ErrorCode

__all__ = ["topic_metadata", "TOPIC_OPERATIONS", "CLUSTER_OPERATIONS",
           "MAX_REQUEST_PARTITION_SIZE_LIMIT"]

logger = logging.getLogger("kafkalog.server")

# AclOperation codes (clients/.../common/acl/AclOperation.java)
_READ, _WRITE, _CREATE, _DELETE, _ALTER, _DESCRIBE = 3, 4, 5, 6, 7, 8
_CLUSTER_ACTION, _DESCRIBE_CONFIGS, _ALTER_CONFIGS, _IDEMPOTENT_WRITE = 9, 10, 11, 12
#: the operations a topic supports (ResourceType.TOPIC), all allowed without an authorizer
TOPIC_OPERATIONS = sum(1 << op for op in (_READ, _WRITE, _CREATE, _DELETE, _ALTER, _DESCRIBE,
                                          _DESCRIBE_CONFIGS, _ALTER_CONFIGS))
CLUSTER_OPERATIONS = sum(1 << op for op in (_CREATE, _ALTER, _DESCRIBE, _CLUSTER_ACTION,
                                            _DESCRIBE_CONFIGS, _ALTER_CONFIGS,
                                            _IDEMPOTENT_WRITE))
_NOT_REQUESTED = -(2**31)
#: ``max.request.partition.size.limit`` (Kafka's default): the most partitions one
#: DescribeTopicPartitions response carries
MAX_REQUEST_PARTITION_SIZE_LIMIT = 2000


def topic_metadata(broker: Any, topic: str, *, with_operations: bool = False,
                   ctx: RequestContext | None = None) -> dict[str, Any]:
    """The metadata of a topic held here (plain values)."""
    node = broker.config.node_id
    return {
        "error_code": ErrorCode.none,
        "name": topic,
        "topic_id": broker.topic_id(topic),
        "is_internal": topic in INTERNAL_TOPICS,
        "partitions": [{
            "error_code": ErrorCode.none,
            "partition_index": p,
            "leader_id": node,
            "leader_epoch": broker.leader_epoch(topic, p),
            "replica_nodes": [node],
            "isr_nodes": [node],
            "offline_replicas": [],
        } for p in broker.partitions_of(topic)],
        "topic_authorized_operations": _NOT_REQUESTED if not with_operations
        else TOPIC_OPERATIONS if ctx is None
        else ctx.authorized_operations(ResourceType.TOPIC, topic, TOPIC_OPERATIONS),
    }


def _error_topic(name: str | None, code: int, topic_id: Any = None) -> dict[str, Any]:
    return {"error_code": code, "name": name, "topic_id": topic_id, "is_internal": False,
            "partitions": [], "topic_authorized_operations": _NOT_REQUESTED}


def _maybe_create(ctx: RequestContext, name: str, allow: bool) -> int:
    """Error code of an unknown topic after the auto-creation attempt (NONE when created)."""
    from ...log_dir import validate_topic_name

    broker = ctx.broker
    try:
        validate_topic_name(name)
    except ValueError:
        return ErrorCode.invalid_topic_exception
    if not (allow and broker.config.auto_create_topics_enable) or name in INTERNAL_TOPICS:
        return ErrorCode.unknown_topic_or_partition
    try:
        broker.create_topic(name, broker.config.num_partitions)
    except KafkaLogError as e:
        # the controller refuses it (a name colliding with an existing topic's): Kafka's
        # AutoTopicCreationManager only logs that, and the topic stays "being created"
        logger.warning("%s: auto-creating topic %s refused: %s", ctx.peer, name, e)
        return ErrorCode.leader_not_available
    return ErrorCode.none


@register(3, "Metadata", 0, 13)
async def handle(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    """Metadata (key 3, Kafka 4.2 versions 0-13): this node leads every partition it holds.
    v13's top-level error code (KIP-1102: REBOOTSTRAP_REQUIRED tells a client to rebootstrap)
    is always NONE, as a Kafka 4.2 broker never sets it either."""
    broker = ctx.broker
    v = ctx.api_version
    with_ops = bool(getattr(request, "include_topic_authorized_operations", False))
    allow = bool(getattr(request, "allow_auto_topic_creation", True)) if v >= 4 else True
    asked = request.topics
    topics: list[dict[str, Any]] = []

    def describable(name: str) -> bool:
        return ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, name)

    if asked is None or (v == 0 and not asked):
        # every topic the principal may DESCRIBE (KafkaApis filters the others out)
        topics = [topic_metadata(broker, t, with_operations=with_ops, ctx=ctx)
                  for t in broker.topics() if describable(t)]
    else:
        for t in asked:
            name = t.name
            tid = getattr(t, "topic_id", None)
            if name is None:
                found = broker.topic_by_id(tid) if tid is not None else None
                if found is None:
                    topics.append(_error_topic(None, ErrorCode.unknown_topic_id, tid))
                    continue
                name = found
            if not describable(name):
                topics.append(_error_topic(name, ErrorCode.topic_authorization_failed,
                                           tid if t.name is None else None))
                continue
            if not broker.partitions_of(name):
                if allow and broker.config.auto_create_topics_enable \
                        and not ctx.authorize(AclOperation.CREATE, ResourceType.CLUSTER,
                                              CLUSTER_NAME) \
                        and not ctx.authorize(AclOperation.CREATE, ResourceType.TOPIC, name):
                    topics.append(_error_topic(name, ErrorCode.topic_authorization_failed))
                    continue
                code = _maybe_create(ctx, name, allow)
                if code != ErrorCode.none:
                    topics.append(_error_topic(name, code))
                    continue
            topics.append(topic_metadata(broker, name, with_operations=with_ops, ctx=ctx))
    with_cluster_ops = bool(getattr(request, "include_cluster_authorized_operations", False))
    return {
        "throttle_time": 0,
        "error_code": ErrorCode.none,
        "brokers": [_endpoint(ctx, "node_id")],
        "cluster_id": broker.cluster_id,
        "controller_id": broker.config.node_id,
        "topics": topics,
        "cluster_authorized_operations": ctx.authorized_operations(
            ResourceType.CLUSTER, CLUSTER_NAME, CLUSTER_OPERATIONS) if with_cluster_ops
        else _NOT_REQUESTED,
    }


@register(60, "DescribeCluster", 0, 2)
async def describe_cluster(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    """DescribeCluster (key 60, KIP-700; Kafka 4.2 versions 0-2): this node as the cluster and
    its controller. Endpoint type 1 (brokers) only: a controller endpoint (2) does not exist
    here (``UNSUPPORTED_ENDPOINT_TYPE``, as a broker answers). v2's ``IncludeFencedBrokers``
    (KIP-1073) changes nothing: the one node serving the request is not fenced."""
    broker = ctx.broker
    endpoint_type = getattr(request, "endpoint_type", 1)
    out = {"throttle_time": 0, "error_code": ErrorCode.none, "error_message": None,
           "endpoint_type": endpoint_type, "cluster_id": broker.cluster_id or "",
           "controller_id": broker.config.node_id, "brokers": [],
           "cluster_authorized_operations": (
               ctx.authorized_operations(ResourceType.CLUSTER, CLUSTER_NAME, CLUSTER_OPERATIONS)
               if ctx.authorize(AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME)
               else 0)
           if request.include_cluster_authorized_operations else _NOT_REQUESTED}
    if endpoint_type != 1:
        return {**out, "error_code": ErrorCode.unsupported_endpoint_type,
                "error_message": "only broker endpoints are served"}
    out["brokers"] = [{**_endpoint(ctx, "broker_id"), "is_fenced": False}]
    return out


def _describe_partitions(broker: Any, topic: str, start: int, limit: int
                         ) -> tuple[list[dict[str, Any]], int]:
    """The topic's partitions from ``start`` (at most ``limit``) and the next partition held
    after them (-1: none). A log dir may hold only some partitions of a broker's topic: the
    ones held are described, in order."""
    held = [p for p in broker.partitions_of(topic) if p >= start]
    node = broker.config.node_id
    parts = [{"error_code": ErrorCode.none, "partition_index": p, "leader_id": node,
              "leader_epoch": broker.leader_epoch(topic, p), "replica_nodes": [node],
              "isr_nodes": [node], "eligible_leader_replicas": [], "last_known_elr": [],
              "offline_replicas": []} for p in held[:limit]]
    return parts, held[limit] if len(held) > limit else -1


@register(75, "DescribeTopicPartitions", 0, 0)
async def describe_topic_partitions(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    """DescribeTopicPartitions (key 75, KIP-966; what Kafka 3.8+ admin clients use to describe
    topics), as ``DescribeTopicPartitionsRequestHandler`` and ``KRaftMetadataCache
    .getTopicMetadataForDescribeTopicResponse`` (3.9): the topics asked (all for an empty
    list) from the cursor's topic on, sorted by name, with at most ``response_partition_limit``
    partitions (capped at ``max.request.partition.size.limit``, at least 1) and the cursor of
    the next partition when more remain. Unknown names asked for answer
    ``UNKNOWN_TOPIC_OR_PARTITION`` (``INVALID_TOPIC_EXCEPTION`` for an illegal one); a cursor
    naming a topic not asked for, or a negative partition, answers ``INVALID_REQUEST`` for
    every topic asked, as Kafka's error response does."""
    from ...log_dir import validate_topic_name

    broker = ctx.broker
    cursor = request.cursor
    cursor_topic = cursor.topic_name if cursor is not None else ""
    fetch_all = not request.topics
    names = broker.topics() if fetch_all else [t.name for t in request.topics]
    names = sorted({n for n in names if n >= cursor_topic})
    if fetch_all:  # (the handler lists only the topics the principal may DESCRIBE)
        names = [n for n in names
                 if ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, n)]
    if cursor is not None and ((not fetch_all and cursor.topic_name not in names)
                               or cursor.partition_index < 0):
        return {"throttle_time": 0, "next_cursor": None,
                "topics": [_error_topic(t.name, ErrorCode.invalid_request)
                           for t in request.topics]}
    remaining = max(min(MAX_REQUEST_PARTITION_SIZE_LIMIT, request.response_partition_limit), 1)
    topics: list[dict[str, Any]] = []
    next_cursor = None
    for name in names:
        if remaining == 0:
            # the cursor points at the start of the next topic (all of the previous ones given)
            next_cursor = {"topic_name": name, "partition_index": 0}
            break
        if not fetch_all and not ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, name):
            topics.append({**_error_topic(name, ErrorCode.topic_authorization_failed),
                           "is_internal": name in INTERNAL_TOPICS})
            continue
        if not broker.partitions_of(name):
            if not fetch_all:
                try:
                    validate_topic_name(name)
                    code = ErrorCode.unknown_topic_or_partition
                except ValueError:
                    code = ErrorCode.invalid_topic_exception
                topics.append({**_error_topic(name, code), "is_internal": name in INTERNAL_TOPICS})
            continue
        start = cursor.partition_index if cursor is not None and name == cursor_topic else 0
        parts, next_partition = _describe_partitions(broker, name, start, remaining)
        topics.append({**topic_metadata(broker, name, with_operations=True, ctx=ctx),
                       "partitions": parts})
        if next_partition != -1:
            next_cursor = {"topic_name": name, "partition_index": next_partition}
            break
        remaining -= len(parts)
    return {"throttle_time": 0, "topics": topics, "next_cursor": next_cursor}


#: ElectionType ids
_PREFERRED, _UNCLEAN = 0, 1


@register(43, "ElectLeaders", 0, 2)
async def elect_leaders(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    """ElectLeaders (key 43; ``kafka-leader-election.sh``), as ``ReplicationControlManager
    .electLeaders`` (3.9) answers on a cluster of one node: every partition already has its
    preferred leader, so each one named answers ``ELECTION_NOT_NEEDED`` (Kafka's message), an
    unknown one ``UNKNOWN_TOPIC_OR_PARTITION`` ("No such topic as T" / "No such partition as
    T-P"); with a null list every topic is listed without partitions (Kafka leaves out the
    partitions that need no election). An unknown election type fails the request
    (``INVALID_REQUEST``, for every partition named). Versions 0-2 (v0 has no election type:
    preferred)."""
    broker = ctx.broker
    election_type = getattr(request, "election_type", _PREFERRED)
    if not ctx.authorize(AclOperation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME):
        # ControllerApis.handleElectLeaders: AuthHelper.authorizeClusterOperation(request,
        # ALTER), else every partition CLUSTER_AUTHORIZATION_FAILED with its message
        message = ctx.cluster_refused(AclOperation.ALTER)
        return {"throttle_time": 0, "error_code": ErrorCode.cluster_authorization_failed,
                "replica_election_results": [
                    {"topic": t.topic, "partition_result": [
                        {"partition_id": p, "error_code":
                         ErrorCode.cluster_authorization_failed, "error_message": message}
                        for p in t.partitions]}
                    for t in request.topic_partitions or ()]}
    if election_type not in (_PREFERRED, _UNCLEAN):
        message = f"Unknown election type {election_type}"
        return {"throttle_time": 0, "error_code": ErrorCode.invalid_request,
                "replica_election_results": [
                    {"topic": t.topic, "partition_result": [
                        {"partition_id": p, "error_code": ErrorCode.invalid_request,
                         "error_message": message} for p in t.partitions]}
                    for t in request.topic_partitions or ()]}
    if request.topic_partitions is None:
        results = [{"topic": t, "partition_result": []} for t in broker.topics()]
    else:
        results = []
        for t in request.topic_partitions:
            held = broker.partitions_of(t.topic)
            out = []
            for p in t.partitions:
                if not held:
                    code, message = (ErrorCode.unknown_topic_or_partition,
                                     f"No such topic as {t.topic}")
                elif p not in held:
                    code, message = (ErrorCode.unknown_topic_or_partition,
                                     f"No such partition as {t.topic}-{p}")
                else:
                    code, message = (ErrorCode.election_not_needed,
                                     "Leader election not needed for topic partition.")
                out.append({"partition_id": p, "error_code": code, "error_message": message})
            results.append({"topic": t.topic, "partition_result": out})
    return {"throttle_time": 0, "error_code": ErrorCode.none,
            "replica_election_results": results}


def _endpoint(ctx: RequestContext, id_field: str) -> dict[str, Any]:
    """The broker as the client is told it: the advertised address of the listener the
    request came on (Kafka's MetadataCache.getAliveBrokerNode(id, listenerName))."""
    broker = ctx.broker
    host, port = ctx.endpoint or (broker.host, broker.port)
    return {id_field: broker.config.node_id, "host": host, "port": port,
            "rack": broker.config.broker_rack}
