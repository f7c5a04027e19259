"""DescribeConfigs (key 32): topic configs from the engine's ``LogConfig``, a few broker ones.

Kafka's ``ConfigHelper.describeConfigs`` (3.9): per resource, the configs asked for
(``configuration_keys``, null for all), each with its value, source (``TOPIC_CONFIG`` for a
topic override, ``DEFAULT_CONFIG`` otherwise; ``STATIC_BROKER_CONFIG`` for the broker), its
synonyms when asked (the entry itself), and from v3 its type. Topics: the effective
:class:`~kafkalog.config.LogConfig` under Kafka's names (``UNKNOWN_TOPIC_OR_PARTITION`` when
absent). Broker (resource type 4, name this node's id or empty): the broker settings
:class:`~kafkalog.server.broker.ServerConfig` has. Other resource types: ``INVALID_REQUEST``.

Versions 1-4 (Kafka 3.9: 0-4; kio starts at 1).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..api import RequestContext, register
from ..protocol import ErrorCode
from .topics import SOURCE_STATIC_BROKER_CONFIG, topic_config_entries

__all__ = ["handle"]

TOPIC = 2
BROKER = 4

# DescribeConfigsResponse.ConfigType ids of the configs served
_BOOLEAN, _STRING, _INT, _LONG, _DOUBLE, _LIST = 1, 2, 3, 5, 6, 7
_TYPES = {
    "segment.bytes": _INT, "segment.index.bytes": _INT, "index.interval.bytes": _INT,
    "max.message.bytes": _INT, "preallocate": _BOOLEAN, "message.timestamp.type": _STRING,
    "cleanup.policy": _LIST, "min.cleanable.dirty.ratio": _DOUBLE, "num.partitions": _INT,
    "node.id": _INT, "log.dirs": _STRING,
    "auto.create.topics.enable": _BOOLEAN, "offsets.topic.num.partitions": _INT,
    "transaction.state.log.num.partitions": _INT, "transaction.max.timeout.ms": _INT,
    "group.initial.rebalance.delay.ms": _INT, "group.min.session.timeout.ms": _INT,
    "group.max.session.timeout.ms": _INT, "socket.request.max.bytes": _INT,
}


def _broker_entries(broker: Any) -> list[dict[str, Any]]:
    c = broker.config
    values = {
        "node.id": c.node_id, "log.dirs": str(broker.log_dir.root),
        "num.partitions": c.num_partitions,
        "auto.create.topics.enable": "true" if c.auto_create_topics_enable else "false",
        "offsets.topic.num.partitions": c.offsets_topic_num_partitions,
        "transaction.state.log.num.partitions": c.transaction_state_num_partitions,
        "transaction.max.timeout.ms": c.transaction_max_timeout_ms,
        "group.initial.rebalance.delay.ms": c.group_initial_rebalance_delay_ms,
        "group.min.session.timeout.ms": c.group_min_session_timeout_ms,
        "group.max.session.timeout.ms": c.group_max_session_timeout_ms,
        "socket.request.max.bytes": c.max_request_bytes,
    }
    return [{"name": k, "value": str(v), "read_only": True, "is_sensitive": False,
             "config_source": SOURCE_STATIC_BROKER_CONFIG} for k, v in sorted(values.items())]


def _describe(ctx: RequestContext, r: Any, synonyms: bool) -> dict[str, Any]:
    broker = ctx.broker
    out = {"error_code": ErrorCode.none, "error_message": None,
           "resource_type": r.resource_type, "resource_name": r.resource_name, "configs": []}
    if r.resource_type == TOPIC:
        if not broker.partitions_of(r.resource_name):
            return {**out, "error_code": ErrorCode.unknown_topic_or_partition,
                    "error_message": f"Topic {r.resource_name} does not exist"}
        entries = topic_config_entries(broker, r.resource_name)
    elif r.resource_type == BROKER:
        if r.resource_name not in ("", str(broker.config.node_id)):
            return {**out, "error_code": ErrorCode.invalid_request,
                    "error_message": f"Unexpected broker id, expected {broker.config.node_id} "
                                     f"or empty string, but received {r.resource_name}"}
        entries = _broker_entries(broker)
    else:
        return {**out, "error_code": ErrorCode.invalid_request,
                "error_message": f"Unsupported resource type {r.resource_type}"}
    keys = r.configuration_keys
    if keys is not None:  # null: every config; an empty list: none (Kafka's protocol)
        entries = [e for e in entries if e["name"] in set(keys)]
    for e in entries:
        e["synonyms"] = ([{"name": e["name"], "value": e["value"],
                           "source": e["config_source"]}] if synonyms else [])
        e["config_type"] = _TYPES.get(e["name"], _LONG)
        e["documentation"] = None
    return {**out, "configs": entries}


@register(32, "DescribeConfigs", 1, 4)
async def handle(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    synonyms = bool(getattr(request, "include_synonyms", False))
    return {"throttle_time": 0,
            "results": [_describe(ctx, r, synonyms) for r in request.resources]}
