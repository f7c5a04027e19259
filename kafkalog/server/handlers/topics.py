"""CreateTopics (key 19) and DeleteTopics (key 20) through the log dir.

CreateTopics, as Kafka's controller validates a creation (``ReplicationControlManager.createTopic``
and ``ControllerApis.createTopics``, 3.9), for one broker:

* a name repeated in the request: ``INVALID_REQUEST`` for it; an illegal name (Kafka's rule,
  :func:`kafkalog.log_dir.validate_topic_name`) or one that differs from an existing topic only
  in ``.`` and ``_`` (a metric-name collision): ``INVALID_TOPIC_EXCEPTION``; an existing topic:
  ``TOPIC_ALREADY_EXISTS``;
* ``num_partitions`` -1 means ``num.partitions``, other values below 1 ``INVALID_PARTITIONS``;
  ``replication_factor`` -1 means 1, anything but 1 ``INVALID_REPLICATION_FACTOR`` (one broker);
  manual assignments must name only this broker (``INVALID_REPLICA_ASSIGNMENT``) and come with
  -1 for both counts (``INVALID_REQUEST``);
* configs: the topic configs the engine implements (:class:`kafkalog.config.LogConfig`), checked
  by it; any other name or a bad value ``INVALID_CONFIG`` (Kafka accepts configs the engine has
  no behaviour for, such as ``remote.storage.enable``: refusing them is a deliberate deviation,
  an accepted setting would otherwise be silently ignored);
* ``validate_only``: everything checked, nothing created. From v5 the answer carries the counts
  and the topic's effective configs, from v7 its id.

DeleteTopics (``ReplicationControlManager.deleteTopics``): by name (v0-5) or by name or id (v6):
``UNKNOWN_TOPIC_OR_PARTITION`` / ``UNKNOWN_TOPIC_ID`` when absent; internal topics are refused
with ``INVALID_TOPIC_EXCEPTION`` (our choice: deleting ``__consumer_offsets`` under a running
coordinator would lose every group). The partitions go through :meth:`LogDir.delete_topic`.

CreatePartitions (key 37, ``ControllerApis.createPartitions`` and
``ReplicationControlManager.createPartitions``, 3.9): a name repeated in the request:
``INVALID_REQUEST`` ("Duplicate topic name."); an unknown topic: ``UNKNOWN_TOPIC_OR_PARTITION``;
a count not above the current one: ``INVALID_PARTITIONS`` with Kafka's messages; manual
assignments must number the partitions added and name this broker once each
(``INVALID_REPLICA_ASSIGNMENT``, Kafka's messages). Internal topics are refused with
``INVALID_REQUEST``, our choice: a broker would accept, and then every group would hash to a
different ``__consumer_offsets`` partition (``offsets.topic.num.partitions`` is fixed for a
cluster's life). ``validate_only``: checked, nothing created. The new partitions go through
:meth:`LogDir.create_partitions` (empty, the topic's id and config), and groups subscribed to
the topic rebalance.

Versions: CreateTopics 2-7, DeleteTopics 1-6 (Kafka 3.9: 0-7 and 0-6; kio and Kafka 4 start at
2 and 1); CreatePartitions 0-3 (Kafka 3.9 and 4).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from ...config import LogConfig
from ...errors import KafkaLogError
from ...log_dir import colliding_topics, config_to_properties, validate_topic_name
from ...security.acls import CLUSTER_NAME, AclOperation, ResourceType
from ..api import RequestContext, register
from ..broker import INTERNAL_TOPICS
from ..error_codes import error_code_for
from ..protocol import ErrorCode

__all__ = ["create_topics", "delete_topics", "create_partitions", "topic_config_entries"]

#: DescribeConfigsResponse.ConfigSource ids
SOURCE_TOPIC_CONFIG = 1
SOURCE_STATIC_BROKER_CONFIG = 4
SOURCE_DEFAULT_CONFIG = 5


def topic_config_entries(broker: Any, topic: str) -> list[dict[str, Any]]:
    """The topic's effective configs: name, value, source (plain values)."""
    overrides = broker.log_dir.topic_overrides(topic)
    return [{"name": k, "value": v, "read_only": False, "is_sensitive": False,
             "config_source": SOURCE_TOPIC_CONFIG if k in overrides else SOURCE_DEFAULT_CONFIG}
            for k, v in sorted(config_to_properties(broker.log_dir.topic_config(topic)).items())]


def _result(name: str, code: int, message: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"name": name, "topic_id": None, "error_code": code, "error_message": message,
            "num_partitions": -1, "replication_factor": -1, "configs": [], **extra}


def _check_create(broker: Any, t: Any) -> tuple[int, str | None, int, dict[str, str]]:
    """``(error code, message, partitions, configs)`` of one creatable topic."""
    name = t.name
    try:
        validate_topic_name(name)
    except ValueError as e:
        return ErrorCode.invalid_topic_exception, str(e), 0, {}
    colliding = colliding_topics(name, broker.topics())
    if colliding:
        # ReplicationControlManager.validateNewTopicNames, before the existence check (an
        # existing name with '.' or '_' collides with itself there)
        return (ErrorCode.invalid_topic_exception, f"Topic '{name}' collides with existing "
                f"topic: {colliding[0]}", 0, {})
    if broker.partitions_of(name):
        return ErrorCode.topic_already_exists, f"Topic '{name}' already exists.", 0, {}
    assignments = list(t.assignments or ())
    if assignments:
        if t.num_partitions != -1 or t.replication_factor != -1:
            return (ErrorCode.invalid_request, "Both numPartitions or replicationFactor and "
                    "replicasAssignments were set. Both cannot be used at the same time.", 0, {})
        node = broker.config.node_id
        for i, a in enumerate(sorted(assignments, key=lambda a: a.partition_index)):
            if a.partition_index != i or list(a.broker_ids) != [node]:
                return (ErrorCode.invalid_replica_assignment,
                        f"partition {a.partition_index} must be assigned to broker {node} only "
                        f"(found {list(a.broker_ids)})", 0, {})
        partitions = len(assignments)
    else:
        partitions = broker.config.num_partitions if t.num_partitions == -1 else t.num_partitions
        if partitions < 1:
            return (ErrorCode.invalid_partitions, "Number of partitions was set to an invalid "
                    "non-positive value.", 0, {})
        rf = 1 if t.replication_factor == -1 else t.replication_factor
        if rf != 1:
            return (ErrorCode.invalid_replication_factor,
                    f"Unable to replicate the partition {rf} time(s): The target replication "
                    f"factor of {rf} cannot be reached because only 1 broker(s) are "
                    f"registered.", 0, {})
    configs = {c.name: c.value for c in (t.configs or ())}
    known = config_to_properties(LogConfig())
    unknown = sorted(set(configs) - set(known))
    if unknown:
        return (ErrorCode.invalid_config, f"Unknown or unsupported topic config name(s) "
                f"{', '.join(unknown)} (kafkalog implements {', '.join(sorted(known))})",
                0, {})
    if any(v is None for v in configs.values()):
        return ErrorCode.invalid_config, "Null value not supported for topic configs", 0, {}
    try:
        LogConfig.from_properties(configs)
    except (KafkaLogError, ValueError) as e:
        return ErrorCode.invalid_config, str(e), 0, {}
    return ErrorCode.none, None, partitions, configs


@register(19, "CreateTopics", 2, 7)
async def create_topics(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    broker = ctx.broker
    counts = Counter(t.name for t in request.topics)  # a name given twice is refused
    results = []
    # KafkaApis: CREATE on the cluster, else on each topic
    cluster_ok = ctx.authorize(AclOperation.CREATE, ResourceType.CLUSTER, CLUSTER_NAME)
    effective = [t for t in request.topics if counts[t.name] == 1 and (
        cluster_ok or ctx.authorize(AclOperation.CREATE, ResourceType.TOPIC, t.name))]
    if _total_partitions(broker, effective) > MAX_PARTITIONS_PER_BATCH:
        # ReplicationControlManager.validateTotalNumberOfPartitions throws before anything:
        # CreateTopicsRequest.getErrorResponse gives every topic of the request the error
        message = "Excessively large number of partitions per request."
        return {"throttle_time": 0, "topics": [_result(t.name, ErrorCode.policy_violation,
                                                       message) for t in request.topics]}
    for t in request.topics:
        if counts[t.name] > 1:
            results.append(_result(t.name, ErrorCode.invalid_request,
                                   f"Duplicate topic name: {t.name}"))
            continue
        if not cluster_ok and not ctx.authorize(AclOperation.CREATE, ResourceType.TOPIC,
                                                t.name):
            results.append(_result(t.name, ErrorCode.topic_authorization_failed,
                                   "Authorization failed."))
            continue
        code, message, partitions, configs = _check_create(broker, t)
        if code != ErrorCode.none:
            results.append(_result(t.name, code, message))
            continue
        if not request.validate_only:
            try:
                broker.create_topic(t.name, partitions, configs)
            except (KafkaLogError, ValueError, OSError) as e:
                code = error_code_for(e) if not isinstance(e, ValueError) or isinstance(
                    e, KafkaLogError) else ErrorCode.invalid_request
                results.append(_result(t.name, code, str(e)))
                continue
            entries = topic_config_entries(broker, t.name)
            tid = broker.topic_id(t.name)
        else:
            entries, tid = [], None
        results.append(_result(t.name, ErrorCode.none, None, topic_id=tid,
                               num_partitions=partitions, replication_factor=1,
                               configs=entries))
    return {"throttle_time": 0, "topics": results}


@register(20, "DeleteTopics", 1, 6)
async def delete_topics(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    broker = ctx.broker
    if ctx.api_version >= 6:
        wanted = [(t.name, t.topic_id) for t in request.topics]
    else:
        wanted = [(name, None) for name in request.topic_names]
    results = []
    for name, tid in wanted:
        if name is None:
            name = broker.topic_by_id(tid) if tid is not None else None
            if name is None:
                results.append({"name": None, "topic_id": tid,
                                "error_code": ErrorCode.unknown_topic_id, "error_message": None})
                continue
        if not ctx.authorize(AclOperation.DELETE, ResourceType.TOPIC, name):
            # (KafkaApis: DELETE on the topic; by id, DESCRIBE decides whether it is named)
            results.append({"name": name, "topic_id": tid, "error_message": None,
                            "error_code": ErrorCode.topic_authorization_failed})
            continue
        if not broker.partitions_of(name):
            results.append({"name": name, "topic_id": tid, "error_message": None,
                            "error_code": ErrorCode.unknown_topic_or_partition})
            continue
        if name in INTERNAL_TOPICS:
            results.append({"name": name, "topic_id": tid,
                            "error_code": ErrorCode.invalid_topic_exception,
                            "error_message": f"Cannot delete internal topic {name}"})
            continue
        tid = broker.topic_id(name)
        try:
            broker.delete_topic(name)
        except (KafkaLogError, OSError) as e:
            results.append({"name": name, "topic_id": tid, "error_code": error_code_for(e),
                            "error_message": str(e)})
            continue
        results.append({"name": name, "topic_id": tid, "error_code": ErrorCode.none,
                        "error_message": None})
    return {"throttle_time": 0, "responses": results}


#: ReplicationControlManager.MAX_PARTITIONS_PER_BATCH (CreateTopics) and the controller's
#: MAX_RECORDS_PER_USER_OP (one PartitionRecord per new partition of CreatePartitions)
MAX_PARTITIONS_PER_BATCH = 10_000


def _total_partitions(broker: Any, topics: list[Any]) -> int:
    """``validateTotalNumberOfPartitions``: the partitions a CreateTopics request asks for
    (``num.partitions`` for -1; assignments when given; non-positive counts: none)."""
    total = 0
    for t in topics:
        if t.assignments:
            total += len(t.assignments)
        elif t.num_partitions == -1:
            total += broker.config.num_partitions
        elif t.num_partitions > 0:
            total += t.num_partitions
    return total


def _check_create_partitions(broker: Any, t: Any) -> tuple[int, str | None]:
    """``(error code, message)`` of growing one topic (the checks of
    ``ReplicationControlManager.createPartitions``, in its order)."""
    held = broker.partitions_of(t.name)
    if not held:
        return ErrorCode.unknown_topic_or_partition, "This server does not host this topic."
    if t.name in INTERNAL_TOPICS:
        return (ErrorCode.invalid_request, f"Cannot add partitions to internal topic {t.name}: "
                f"its partition count is fixed for the cluster's life")
    declared = broker.log_dir.declared_partitions(t.name)
    current = declared if declared is not None else len(held)
    if t.count == current:
        return ErrorCode.invalid_partitions, f"Topic already has {current} partition(s)."
    if t.count < current:
        return (ErrorCode.invalid_partitions, f"The topic {t.name} currently has {current} "
                f"partition(s); {t.count} would not be an increase.")
    additional = t.count - current
    if t.assignments is not None:
        if len(t.assignments) != additional:
            return (ErrorCode.invalid_replica_assignment, f"Attempted to add {additional} "
                    f"additional partition(s), but only {len(t.assignments)} assignment(s) "
                    f"were specified.")
        node = broker.config.node_id
        for a in t.assignments:
            ids = sorted(a.broker_ids)
            if not ids:
                return (ErrorCode.invalid_replica_assignment,
                        "The manual partition assignment includes an empty replica list.")
            for prev, b in zip([None, *ids], ids):
                if b != node:
                    return (ErrorCode.invalid_replica_assignment, f"The manual partition "
                            f"assignment includes broker {b}, but no such broker is "
                            f"registered.")
                if b == prev:
                    return (ErrorCode.invalid_replica_assignment, f"The manual partition "
                            f"assignment includes the broker {b} more than once.")
    return ErrorCode.none, None


@register(37, "CreatePartitions", 0, 3)
async def create_partitions(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    broker = ctx.broker
    counts = Counter(t.name for t in request.topics)  # a name given twice is refused
    results = []
    added = 0  # new partitions of the request so far (one controller record each)
    for t in request.topics:
        if counts[t.name] > 1:
            code, message = ErrorCode.invalid_request, "Duplicate topic name."
        elif not ctx.authorize(AclOperation.ALTER, ResourceType.TOPIC, t.name):
            code, message = ErrorCode.topic_authorization_failed, None  # (ALTER on the topic)
        else:
            code, message = _check_create_partitions(broker, t)
        if code == ErrorCode.none:
            declared = broker.log_dir.declared_partitions(t.name)
            more = t.count - (declared if declared is not None
                              else len(broker.partitions_of(t.name)))
            if added + more > MAX_PARTITIONS_PER_BATCH:
                # the controller's BoundedList of records overflows: createPartitions' catch-all
                # (ApiError.fromThrowable: UNKNOWN_SERVER_ERROR, no message); nothing created
                code, message = ErrorCode.unknown_server_error, None
            else:
                added += more
        if code == ErrorCode.none and not request.validate_only:
            try:
                broker.create_partitions(t.name, t.count)
            except (KafkaLogError, OSError) as e:
                code, message = error_code_for(e), str(e)
        results.append({"name": t.name, "error_code": code, "error_message": message})
    return {"throttle_time": 0, "results": results}
