"""DescribeConfigs (key 32): topic configs from the engine's ``LogConfig``, a few broker ones.

Kafka's ``ConfigHelper.describeConfigs`` (3.9): per resource, the configs asked for
(``configuration_keys``, null for all), each with its value, source (``TOPIC_CONFIG`` for a
topic override, ``DEFAULT_CONFIG`` otherwise; ``STATIC_BROKER_CONFIG`` for the broker), its
synonyms when asked (the entry itself), and from v3 its type. Topics: the effective
:class:`~kafkalog.config.LogConfig` under Kafka's names (``UNKNOWN_TOPIC_OR_PARTITION`` when
absent). Broker (resource type 4, name this node's id or empty): the broker settings
:class:`~kafkalog.server.broker.ServerConfig` has. Other resource types: ``INVALID_REQUEST``.

AlterConfigs (key 33) and IncrementalAlterConfigs (key 44): topic overrides changed online, as
Kafka's ``ConfigAdminManager.preprocess`` and ``ConfigurationControlManager`` (3.9) do:

* a resource named twice: ``INVALID_REQUEST`` for both ("Each resource must appear at most
  once."); a config named twice in one resource, or a null value (other than a DELETE):
  ``INVALID_REQUEST`` with Kafka's messages;
* topics: AlterConfigs replaces every override (the ones not named are removed, Kafka's
  implicit deletions); IncrementalAlterConfigs applies SET, DELETE, APPEND and SUBTRACT per key
  (APPEND/SUBTRACT only on list configs, ``cleanup.policy`` here: "Can't APPEND to key …
  because its type is not LIST."; a list without an override starts from the topic's
  effective value). The result is checked as a whole by :class:`~kafkalog.config.LogConfig`
  (``INVALID_CONFIG`` with its message); names the engine does not implement are refused with
  ``INVALID_CONFIG``, the deliberate deviation CreateTopics makes; an unknown topic answers
  ``UNKNOWN_TOPIC_OR_PARTITION``. Then :meth:`LogDir.update_topic_config` persists the
  overrides and applies them to the open logs (retention, roll, flush and compaction settings
  take effect without a restart). ``validate_only``: checked, nothing changed;
* the broker (empty name or this node's id; another id ``INVALID_REQUEST``): every setting is
  static (``kafkalog serve -c``), so naming any answers ``INVALID_REQUEST`` ("Cannot update
  these configs dynamically: …", Kafka's text for a static config);
* groups (resource type 32): the consumer- and share-group configs of
  :mod:`kafkalog.server.group_configs` (``share.auto.offset.reset`` and the others it lists),
  checked and kept there; DescribeConfigs lists them with source ``GROUP_CONFIG`` (8) for an
  override, ``DEFAULT_CONFIG`` otherwise;
* other resource types (client metrics, broker loggers): ``INVALID_REQUEST``, as kafkalog keeps
  no such configs.

Versions: DescribeConfigs 1-4 (Kafka 3.9: 0-4; kio starts at 1); AlterConfigs 0-2;
IncrementalAlterConfigs 0-1 (Kafka 3.9 and 4).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...config import LogConfig
from ...errors import KafkaLogError
from ...log_dir import config_to_properties, validate_topic_name
from ...security.acls import CLUSTER_NAME, AclOperation, ResourceType
from ..api import AUTHORIZATION_MESSAGES, RequestContext, register
from ..error_codes import error_code_for
from ..protocol import ErrorCode
from .topics import SOURCE_DEFAULT_CONFIG, SOURCE_STATIC_BROKER_CONFIG, topic_config_entries

__all__ = ["handle", "alter_configs", "incremental_alter_configs"]

TOPIC = 2
BROKER = 4
GROUP = 32
#: DescribeConfigsResponse.ConfigSource GROUP_CONFIG
SOURCE_GROUP_CONFIG = 8

#: AlterConfigOp.OpType ids
OP_SET, OP_DELETE, OP_APPEND, OP_SUBTRACT = 0, 1, 2, 3
_OP_NAMES = {OP_SET: "SET", OP_DELETE: "DELETE", OP_APPEND: "APPEND", OP_SUBTRACT: "SUBTRACT"}
#: the topic configs of type LIST kafkalog implements (APPEND and SUBTRACT apply to these)
_LIST_CONFIGS = frozenset({"cleanup.policy"})

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
    "group.share.session.timeout.ms": _INT, "group.share.heartbeat.interval.ms": _INT,
    "group.share.max.size": _INT, "group.share.record.lock.duration.ms": _INT,
    "group.share.delivery.count.limit": _INT, "group.share.partition.max.record.locks": _INT,
    "share.coordinator.state.topic.num.partitions": _INT,
    "share.record.lock.duration.ms": _INT, "share.delivery.count.limit": _INT,
    "share.partition.max.record.locks": _INT, "share.session.timeout.ms": _INT,
    "share.heartbeat.interval.ms": _INT, "share.auto.offset.reset": _STRING,
    "share.isolation.level": _STRING,
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
        "group.share.session.timeout.ms": c.group_share_session_timeout_ms,
        "group.share.heartbeat.interval.ms": c.group_share_heartbeat_interval_ms,
        "group.share.max.size": c.group_share_max_size,
        "group.share.record.lock.duration.ms": c.group_share_record_lock_duration_ms,
        "group.share.delivery.count.limit": c.group_share_delivery_count_limit,
        "group.share.partition.max.record.locks": c.group_share_partition_max_record_locks,
        "share.coordinator.state.topic.num.partitions":
            c.share_coordinator_state_topic_num_partitions,
    }
    return [{"name": k, "value": str(v), "read_only": True, "is_sensitive": False,
             "config_source": SOURCE_STATIC_BROKER_CONFIG} for k, v in sorted(values.items())]


def _denied(ctx: RequestContext, resource_type: int, name: str, op: int) -> int | None:
    """KafkaApis' check of a config resource (DESCRIBE_CONFIGS or ALTER_CONFIGS on the topic,
    the group, or the cluster for a broker): the error code when refused."""
    if resource_type == TOPIC:
        return None if ctx.authorize(op, ResourceType.TOPIC, name) \
            else ErrorCode.topic_authorization_failed
    if resource_type == GROUP:
        return None if ctx.authorize(op, ResourceType.GROUP, name) \
            else ErrorCode.group_authorization_failed
    return None if ctx.authorize(op, ResourceType.CLUSTER, CLUSTER_NAME) \
        else ErrorCode.cluster_authorization_failed


def _describe(ctx: RequestContext, r: Any, synonyms: bool) -> dict[str, Any]:
    broker = ctx.broker
    out = {"error_code": ErrorCode.none, "error_message": None,
           "resource_type": r.resource_type, "resource_name": r.resource_name, "configs": []}
    denied = _denied(ctx, r.resource_type, r.resource_name, AclOperation.DESCRIBE_CONFIGS)
    if denied is not None:
        # ConfigHelper.describeConfigs: the error's default message (Kafka 4.x)
        return {**out, "error_code": denied, "error_message": AUTHORIZATION_MESSAGES[denied]}
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
    elif r.resource_type == GROUP and broker.group_configs is not None:
        store = broker.group_configs
        own = store.overrides(r.resource_name)
        entries = [{"name": k, "value": v, "read_only": False, "is_sensitive": False,
                    "config_source": SOURCE_GROUP_CONFIG if k in own
                    else SOURCE_DEFAULT_CONFIG}
                   for k, v in sorted(store.effective(r.resource_name).items())]
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


# -- altering -----------------------------------------------------------------------------------

def _invalid_request(message: str) -> tuple[int, str]:
    return ErrorCode.invalid_request, message


def _preprocess(ctx: RequestContext, resources: Any, incremental: bool
                ) -> list[tuple[int, str | None] | None]:
    """Per resource, the error ``ConfigAdminManager.preprocess`` answers, or None to go on."""
    seen: dict[tuple[int, str], int] = {}
    out: list[tuple[int, str | None] | None] = [None] * len(resources)
    for i, r in enumerate(resources):
        j = seen.setdefault((r.resource_type, r.resource_name), i)
        if j != i:
            out[i] = out[j] = _invalid_request("Each resource must appear at most once.")
    for i, r in enumerate(resources):
        if out[i] is not None:
            continue
        names = [c.name for c in r.configs]
        if len(set(names)) != len(names):
            out[i] = _invalid_request("Error due to duplicate config keys")
            continue
        nulls = [c.name for c in r.configs if c.value is None
                 and not (incremental and c.config_operation == OP_DELETE)]
        if nulls:
            out[i] = _invalid_request("Null value not supported for : " + ", ".join(nulls))
            continue
        if incremental:
            bad = [c.config_operation for c in r.configs if c.config_operation not in _OP_NAMES]
            if bad:
                out[i] = _invalid_request(f"Unknown operations type {bad[0]}")
                continue
        if r.resource_type == BROKER:
            node = str(ctx.broker.config.node_id)
            if r.resource_name not in ("", node):
                out[i] = _invalid_request(f"Unexpected broker id, expected {node} or empty "
                                          f"string, but received {r.resource_name}")
            elif names:
                out[i] = _invalid_request(
                    f"Cannot update these configs dynamically: {', '.join(sorted(names))} "
                    f"(kafkalog serve takes broker settings at start: -c KEY=VALUE)")
            else:
                out[i] = (ErrorCode.none, None)
        elif r.resource_type not in (TOPIC, GROUP):
            out[i] = _invalid_request(f"Unknown resource type {r.resource_type}: kafkalog "
                                      f"keeps topic configs and static broker settings only")
    return out


def _incremental_overrides(current: dict[str, str], configs: Any,
                           effective: Any) -> dict[str, str]:
    """The overrides after the ops (``incrementalAlterConfigResource``); ``effective()`` gives
    every config's effective value (where a list without an override starts).

    Raises
    ------
    ValueError
        APPEND/SUBTRACT on a config that is not a list (Kafka's message).
    """
    new = dict(current)
    values = None
    for c in configs:
        op = c.config_operation
        if op == OP_SET:
            new[c.name] = c.value
        elif op == OP_DELETE:
            new.pop(c.name, None)
        else:
            if c.name not in _LIST_CONFIGS:
                raise ValueError(f"Can't {_OP_NAMES[op]} to key {c.name} because its type is "
                                 f"not LIST.")
            if c.name not in new and values is None:
                values = effective()
            now = new.get(c.name, values[c.name] if values else "")
            parts = [v for v in now.split(",") if v]
            for v in (c.value or "").split(","):
                if op == OP_APPEND and v not in parts:
                    parts.append(v)
                elif op == OP_SUBTRACT and v in parts:
                    parts.remove(v)
            new[c.name] = ",".join(parts)
    return new


def _check_topic_overrides(broker: Any, topic: str, overrides: dict[str, str]
                           ) -> tuple[int, str | None]:
    """``ControllerConfigurationValidator.validate`` then the existence check."""
    try:
        validate_topic_name(topic)
    except ValueError as e:
        return ErrorCode.invalid_topic_exception, str(e)
    known = config_to_properties(LogConfig())
    unknown = sorted(set(overrides) - set(known))
    if unknown:
        return (ErrorCode.invalid_config, f"Unknown or unsupported topic config name(s) "
                f"{', '.join(unknown)} (kafkalog implements {', '.join(sorted(known))})")
    try:
        broker.log_dir.validate_topic_config(overrides)
    except (KafkaLogError, ValueError) as e:
        return ErrorCode.invalid_config, str(e)
    if not broker.partitions_of(topic):
        return ErrorCode.unknown_topic_or_partition, f"The topic '{topic}' does not exist."
    return ErrorCode.none, None


def _alter(ctx: RequestContext, request: Any, incremental: bool) -> dict[str, Any]:
    broker = ctx.broker
    resources = list(request.resources)
    responses = []
    for r, pre in zip(resources, _preprocess(ctx, resources, incremental)):
        code, message = pre if pre is not None else (ErrorCode.none, None)
        denied = _denied(ctx, r.resource_type, r.resource_name, AclOperation.ALTER_CONFIGS)
        if denied is not None:
            # ControllerApis.authorizeAlterResource: new ApiError(error), whose message is the
            # error's default one (Kafka 4.x)
            message = AUTHORIZATION_MESSAGES[denied]
            code, pre = denied, (denied, message)
        if pre is None and r.resource_type == GROUP:
            code, message = _alter_group(broker, r, incremental, request.validate_only)
        elif pre is None:  # a topic
            name = r.resource_name
            try:
                overrides = (_incremental_overrides(
                    broker.log_dir.topic_overrides(name), r.configs,
                    lambda name=name: config_to_properties(broker.log_dir.topic_config(name)))
                    if incremental else {c.name: c.value for c in r.configs})
            except ValueError as e:
                code, message = ErrorCode.invalid_config, str(e)
            else:
                code, message = _check_topic_overrides(broker, r.resource_name, overrides)
                if code == ErrorCode.none and not request.validate_only:
                    try:
                        broker.update_topic_config(r.resource_name, overrides)
                    except (KafkaLogError, ValueError, OSError) as e:
                        code = (error_code_for(e) if not isinstance(e, ValueError)
                                or isinstance(e, KafkaLogError) else ErrorCode.invalid_config)
                        message = str(e)
        responses.append({"error_code": code, "error_message": message,
                          "resource_type": r.resource_type, "resource_name": r.resource_name})
    return {"throttle_time": 0, "responses": responses}


def _alter_group(broker: Any, r: Any, incremental: bool, validate_only: bool
                 ) -> tuple[int, str | None]:
    """A GROUP resource: its overrides replaced (AlterConfigs) or changed (incremental)."""
    store = broker.group_configs
    if store is None or broker.shares is None:
        return ErrorCode.invalid_request, "group configs are not served"
    gid = r.resource_name
    if not gid:
        return ErrorCode.invalid_request, "the group id is empty"
    try:
        overrides = (_incremental_overrides(store.overrides(gid), r.configs,
                                            lambda: store.effective(gid))
                     if incremental else {c.name: c.value for c in r.configs})
        store.validate(overrides)
    except (ValueError, KafkaLogError) as e:
        return ErrorCode.invalid_config, str(e)
    if not validate_only:
        try:
            broker.shares.set_group_config(gid, overrides)
        except (KafkaLogError, OSError) as e:
            return error_code_for(e), str(e)
    return ErrorCode.none, None


@register(33, "AlterConfigs", 0, 2)
async def alter_configs(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    return _alter(ctx, request, incremental=False)


@register(44, "IncrementalAlterConfigs", 0, 1)
async def incremental_alter_configs(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    return _alter(ctx, request, incremental=True)
