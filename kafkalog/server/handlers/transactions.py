"""InitProducerId (22), AddPartitionsToTxn (24), AddOffsetsToTxn (25), EndTxn (26).

The protocol side of ``KafkaApis.handleInitProducerIdRequest``, ``handleAddPartitionToTxnRequest``,
``handleAddOffsetsToTxnRequest`` and ``handleEndTxnRequest`` (3.9); the state machine is
:class:`kafkalog.server.txn_coordinator.TransactionCoordinator`.

* ``PRODUCER_FENCED`` becomes ``INVALID_PRODUCER_EPOCH`` for clients too old to know it
  (InitProducerId < v4, the others < v2), as Kafka does.
* AddPartitionsToTxn: a partition that does not exist answers ``UNKNOWN_TOPIC_OR_PARTITION``, an
  internal topic ``TOPIC_AUTHORIZATION_FAILED`` (Kafka filters internal topics out of a client's
  writable set), and then every other partition of the request ``OPERATION_NOT_ATTEMPTED``:
  nothing is added.
* AddOffsetsToTxn adds the ``__consumer_offsets`` partition of the group (Kafka's
  ``partitionFor(groupId)``: ``abs(groupId.hashCode) % offsets.topic.num.partitions``).

Versions: InitProducerId 0-5, AddPartitionsToTxn 0-3 (Kafka 3.9 serves 4-5 to brokers only),
AddOffsetsToTxn 0-4, EndTxn 0-4 (Kafka 3.9).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...security.acls import CLUSTER_NAME, AclOperation, ResourceType
from ..api import RequestContext, register
from ..broker import INTERNAL_TOPICS
from ..protocol import ErrorCode, millis
from ..txn_coordinator import partition_for

__all__ = ["init_producer_id", "add_partitions_to_txn", "add_offsets_to_txn", "end_txn"]


def _fenced_for(version: int, first_version: int, code: int) -> int:
    """Kafka's downgrade of PRODUCER_FENCED for versions before ``first_version``."""
    if code == ErrorCode.producer_fenced and version < first_version:
        return ErrorCode.invalid_producer_epoch
    return code


@register(22, "InitProducerId", 0, 5)
async def init_producer_id(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    tc = ctx.broker.transactions
    txn_id = request.transactional_id
    # KafkaApis: WRITE on the transactional id; an idempotent producer needs IDEMPOTENT_WRITE
    # on the cluster or WRITE on some topic (KIP-679)
    if txn_id is not None:
        denied = not ctx.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, txn_id) \
            and ErrorCode.transactional_id_authorization_failed
    else:
        denied = not (ctx.authorize(AclOperation.IDEMPOTENT_WRITE, ResourceType.CLUSTER,
                                    CLUSTER_NAME)
                      or ctx.broker.authorizer is None
                      or ctx.broker.authorizer.any_topic_authorized(
                          ctx.principal, ctx.client_host, AclOperation.WRITE)) \
            and ErrorCode.cluster_authorization_failed
    if denied:
        return {"throttle_time": 0, "error_code": denied, "producer_id": -1,
                "producer_epoch": -1}
    code, pid, epoch = tc.init_producer_id(
        request.transactional_id, millis(request.transaction_timeout),
        getattr(request, "producer_id", -1), getattr(request, "producer_epoch", -1))
    return {"throttle_time": 0, "error_code": _fenced_for(ctx.api_version, 4, code),
            "producer_id": pid, "producer_epoch": epoch}


@register(24, "AddPartitionsToTxn", 0, 3)
async def add_partitions_to_txn(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    broker = ctx.broker
    wanted = [(t.name, p) for t in request.v3_and_below_topics for p in t.partitions]
    errors: dict[tuple[str, int], int] = {}
    txn_ok = ctx.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID,
                           request.v3_and_below_transactional_id)
    for topic, p in wanted:
        if not txn_ok:
            errors[(topic, p)] = ErrorCode.transactional_id_authorization_failed
        elif not ctx.authorize(AclOperation.WRITE, ResourceType.TOPIC, topic):
            errors[(topic, p)] = ErrorCode.topic_authorization_failed
        elif topic in INTERNAL_TOPICS:
            errors[(topic, p)] = ErrorCode.topic_authorization_failed
        elif p not in broker.partitions_of(topic):
            errors[(topic, p)] = ErrorCode.unknown_topic_or_partition
    if errors:
        codes = {tp: errors.get(tp, ErrorCode.operation_not_attempted) for tp in wanted}
    else:
        code = broker.transactions.add_partitions(
            request.v3_and_below_transactional_id, request.v3_and_below_producer_id,
            request.v3_and_below_producer_epoch, set(wanted))
        code = _fenced_for(ctx.api_version, 2, code)
        codes = {tp: code for tp in wanted}
    by_topic: dict[str, list[dict[str, Any]]] = {}
    for (topic, p), code in codes.items():
        by_topic.setdefault(topic, []).append({"partition_index": p,
                                               "partition_error_code": code})
    return {"throttle_time": 0, "results_by_topic_v3_and_below": [
        {"name": t, "results_by_partition": parts} for t, parts in by_topic.items()]}


@register(25, "AddOffsetsToTxn", 0, 4)
async def add_offsets_to_txn(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    broker = ctx.broker
    if not ctx.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID,
                         request.transactional_id):
        return {"throttle_time": 0, "error_code": ErrorCode.transactional_id_authorization_failed}
    if not ctx.authorize(AclOperation.READ, ResourceType.GROUP, request.group_id):
        return {"throttle_time": 0, "error_code": ErrorCode.group_authorization_failed}
    partition = partition_for(request.group_id, broker.config.offsets_topic_num_partitions)
    code = broker.transactions.add_offsets(request.transactional_id, request.producer_id,
                                           request.producer_epoch, partition)
    return {"throttle_time": 0, "error_code": _fenced_for(ctx.api_version, 2, code)}


@register(26, "EndTxn", 0, 4)
async def end_txn(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    if not ctx.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID,
                         request.transactional_id):
        return {"throttle_time": 0, "error_code": ErrorCode.transactional_id_authorization_failed}
    code = ctx.broker.transactions.end_transaction(
        request.transactional_id, request.producer_id, request.producer_epoch,
        bool(request.committed))
    return {"throttle_time": 0, "error_code": _fenced_for(ctx.api_version, 2, code)}
