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
* Authorized operations (v8+, when asked): everything (no authorizer), as Kafka's bit fields.

Versions 0-12 (Kafka 3.9). DescribeCluster (key 60) lives here too: the same facts for admin
clients.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..api import RequestContext, register
from ..broker import INTERNAL_TOPICS
from ..protocol import ErrorCode

__all__ = ["topic_metadata", "TOPIC_OPERATIONS", "CLUSTER_OPERATIONS"]

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


def topic_metadata(broker: Any, topic: str, *, with_operations: bool = False) -> dict[str, Any]:
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
        "topic_authorized_operations": TOPIC_OPERATIONS if with_operations else _NOT_REQUESTED,
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
    broker.create_topic(name, broker.config.num_partitions)
    return ErrorCode.none


@register(3, "Metadata", 0, 12)
async def handle(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    broker = ctx.broker
    v = ctx.api_version
    with_ops = bool(getattr(request, "include_topic_authorized_operations", False))
    allow = bool(getattr(request, "allow_auto_topic_creation", True)) if v >= 4 else True
    asked = request.topics
    topics: list[dict[str, Any]] = []
    if asked is None or (v == 0 and not asked):
        topics = [topic_metadata(broker, t, with_operations=with_ops) for t in broker.topics()]
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
            if not broker.partitions_of(name):
                code = _maybe_create(ctx, name, allow)
                if code != ErrorCode.none:
                    topics.append(_error_topic(name, code))
                    continue
            topics.append(topic_metadata(broker, name, with_operations=with_ops))
    with_cluster_ops = bool(getattr(request, "include_cluster_authorized_operations", False))
    return {
        "throttle_time": 0,
        "brokers": [{"node_id": broker.config.node_id, "host": broker.host,
                     "port": broker.port, "rack": None}],
        "cluster_id": broker.cluster_id,
        "controller_id": broker.config.node_id,
        "topics": topics,
        "cluster_authorized_operations": CLUSTER_OPERATIONS if with_cluster_ops
        else _NOT_REQUESTED,
    }


@register(60, "DescribeCluster", 0, 1)
async def describe_cluster(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    """DescribeCluster (key 60, KIP-700; Kafka 3.9 versions 0-1): this node as the cluster and
    its controller. Endpoint type 1 (brokers) only: a controller endpoint (2) does not exist
    here (``UNSUPPORTED_ENDPOINT_TYPE``, as a broker answers)."""
    broker = ctx.broker
    endpoint_type = getattr(request, "endpoint_type", 1)
    out = {"throttle_time": 0, "error_code": ErrorCode.none, "error_message": None,
           "endpoint_type": endpoint_type, "cluster_id": broker.cluster_id or "",
           "controller_id": broker.config.node_id, "brokers": [],
           "cluster_authorized_operations": CLUSTER_OPERATIONS
           if request.include_cluster_authorized_operations else _NOT_REQUESTED}
    if endpoint_type != 1:
        return {**out, "error_code": ErrorCode.unsupported_endpoint_type,
                "error_message": "only broker endpoints are served"}
    out["brokers"] = [{"broker_id": broker.config.node_id, "host": broker.host,
                       "port": broker.port, "rack": None}]
    return out
