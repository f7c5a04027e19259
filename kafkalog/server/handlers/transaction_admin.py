"""The transaction admin APIs of ``kafka-transactions.sh`` (KIP-664): find and abort hanging
transactions against a log directory.

* **DescribeProducers** (61, ``Partition.activeProducerState``): per partition, what its
  producer state holds of each producer (:meth:`kafkalog.log.Log.active_producers`): epoch,
  last sequence, last timestamp, the coordinator epoch of its last marker and the first offset
  of its open transaction (-1 when none). A partition not held: ``UNKNOWN_TOPIC_OR_PARTITION``.
* **ListTransactions** (66, ``TransactionStateManager.listTransactionStates``): the
  transactional ids the coordinator knows, filtered by state names (unknown names are listed
  back in ``unknown_state_filters`` and match nothing), producer ids, from v1 a minimum running
  time and from v2 a regular expression over the id (KIP-1152; a bad one answers
  ``INVALID_REGULAR_EXPRESSION``). Dead ids are never listed.
* **DescribeTransactions** (65, ``TransactionCoordinator.handleDescribeTransactions``): state,
  timeout, start time, producer id/epoch and the partitions of each id's open transaction;
  ``TRANSACTIONAL_ID_NOT_FOUND`` for an unknown (or Dead) id, ``INVALID_REQUEST`` for "".
* **WriteTxnMarkers** (27, ``KafkaApis.handleWriteTxnMarkersRequest``): a COMMIT or ABORT
  marker per partition named, appended as the coordinator's markers are
  (:meth:`kafkalog.log.Log.commit_transaction` / ``abort_transaction``, which check the
  producer and coordinator epochs: ``INVALID_PRODUCER_EPOCH``,
  ``TRANSACTION_COORDINATOR_FENCED``); a partition not held: ``UNKNOWN_TOPIC_OR_PARTITION``.
  A broker gets these from its cluster's coordinators; admin clients send them to abort a
  hanging transaction (``kafka-transactions.sh abort``). A marker landing in
  ``__consumer_offsets`` completes the group coordinator's pending transactional offsets, as
  Kafka's ``onTransactionCompleted`` does. The coordinator's own record of the transaction is
  not changed, as in Kafka.

Versions: DescribeProducers 0, ListTransactions 0-2, DescribeTransactions 0 (Kafka 4.1);
WriteTxnMarkers 1 (Kafka 4 removed v0; v2, KIP-890's transaction version, is not served).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ...errors import KafkaLogError
from ...security.acls import CLUSTER_NAME, AclOperation, ResourceType
from ..api import RequestContext, register
from ..broker import OFFSETS_TOPIC
from ..error_codes import error_code_for
from ..protocol import ErrorCode

__all__ = ["describe_producers", "list_transactions", "describe_transactions",
           "write_txn_markers"]


def _producer_states(broker: Any, topic: str, partition: int) -> dict[str, Any]:
    out: dict[str, Any] = {"partition_index": partition, "error_code": ErrorCode.none,
                           "error_message": None, "active_producers": []}
    if partition not in broker.partitions_of(topic):
        return {**out, "error_code": ErrorCode.unknown_topic_or_partition,
                "error_message": f"partition {topic}-{partition} is not held here"}
    try:
        entries = broker.log(topic, partition).active_producers()
    except KafkaLogError as e:
        return {**out, "error_code": error_code_for(e), "error_message": str(e)}
    out["active_producers"] = [
        {"producer_id": e.producer_id, "producer_epoch": e.producer_epoch,
         "last_sequence": e.last_seq, "last_timestamp": e.last_timestamp,
         "coordinator_epoch": e.coordinator_epoch,
         "current_txn_start_offset": (-1 if e.current_txn_first_offset is None
                                      else e.current_txn_first_offset)}
        for e in entries]
    return out


@register(61, "DescribeProducers", 0, 0)
async def describe_producers(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    topics = []
    for t in request.topics:
        if ctx.authorize(AclOperation.READ, ResourceType.TOPIC, t.name):
            parts = [_producer_states(ctx.broker, t.name, p) for p in t.partition_indexes]
        else:  # (KafkaApis: READ on the topic)
            parts = [{"partition_index": p, "error_code": ErrorCode.topic_authorization_failed,
                      "error_message": None, "active_producers": []}
                     for p in t.partition_indexes]
        topics.append({"name": t.name, "partitions": parts})
    return {"throttle_time": 0, "topics": topics}


@register(66, "ListTransactions", 0, 2)
async def list_transactions(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    tc = ctx.broker.transactions
    try:
        found, unknown = tc.list_transactions(
            request.state_filters, request.producer_id_filters,
            getattr(request, "duration_filter", -1),
            getattr(request, "transactional_id_pattern", None))
    except re.error:
        return {"throttle_time": 0, "error_code": ErrorCode.invalid_regular_expression,
                "unknown_state_filters": [], "transaction_states": []}
    # (TransactionCoordinator.handleListTransactions: only the ids the principal may DESCRIBE)
    return {"throttle_time": 0, "error_code": ErrorCode.none,
            "unknown_state_filters": unknown,
            "transaction_states": [{"transactional_id": m.transactional_id,
                                    "producer_id": m.producer_id,
                                    "transaction_state": m.state.kafka_name}
                                   for m in found
                                   if ctx.authorize(AclOperation.DESCRIBE,
                                                    ResourceType.TRANSACTIONAL_ID,
                                                    m.transactional_id)]}


def _describe_one(tc: Any, transactional_id: str) -> dict[str, Any]:
    # an error entry carries the schema's zeros (DescribeTransactionsResponse.json has no
    # defaults), as Kafka's does
    out: dict[str, Any] = {"error_code": ErrorCode.none, "transactional_id": transactional_id,
                           "transaction_state": "", "transaction_timeout": 0,
                           "transaction_start_time": 0, "producer_id": 0,
                           "producer_epoch": 0, "topics": []}
    if not transactional_id:
        return {**out, "error_code": ErrorCode.invalid_request}
    meta = tc.metadata(transactional_id)
    if meta is None or meta.state.kafka_name == "Dead":
        return {**out, "error_code": ErrorCode.transactional_id_not_found}
    by_topic: dict[str, list[int]] = {}
    for topic, p in sorted(meta.partitions):
        by_topic.setdefault(topic, []).append(p)
    return {**out, "transaction_state": meta.state.kafka_name,
            "transaction_timeout": meta.timeout_ms, "transaction_start_time": meta.start_ms,
            "producer_id": meta.producer_id, "producer_epoch": meta.producer_epoch,
            "topics": [{"topic": t, "partitions": ps} for t, ps in by_topic.items()]}


@register(65, "DescribeTransactions", 0, 0)
async def describe_transactions(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    tc = ctx.broker.transactions
    states = []
    for tid in request.transactional_ids:
        if ctx.authorize(AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, tid):
            states.append(_describe_one(tc, tid))
        else:  # (KafkaApis: DESCRIBE on the transactional id)
            states.append({**_describe_one(tc, ""), "transactional_id": tid,
                           "error_code": ErrorCode.transactional_id_authorization_failed})
    return {"throttle_time": 0, "transaction_states": states}


def _write_marker(ctx: RequestContext, marker: Any, topic: str, partition: int) -> int:
    broker = ctx.broker
    if partition not in broker.partitions_of(topic):
        return ErrorCode.unknown_topic_or_partition
    commit = bool(marker.transaction_result)
    try:
        log = broker.log(topic, partition)
        write = log.commit_transaction if commit else log.abort_transaction
        write(marker.producer_id, marker.producer_epoch, marker.coordinator_epoch)
    except (KafkaLogError, OSError) as e:
        return error_code_for(e)
    except ValueError:  # a producer id or epoch below 0
        return ErrorCode.invalid_request
    broker.notify((topic, partition))
    tc = broker.transactions
    if topic == OFFSETS_TOPIC and tc is not None and tc.offsets_marker_hook is not None:
        tc.offsets_marker_hook(topic, partition, marker.producer_id, commit)
    return ErrorCode.none


@register(27, "WriteTxnMarkers", 1, 1)
async def write_txn_markers(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    results = []
    if not ctx.authorize(AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER, CLUSTER_NAME):
        # KafkaApis: CLUSTER_ACTION on the cluster (what brokers do), else every partition
        # CLUSTER_AUTHORIZATION_FAILED
        return {"markers": [{"producer_id": m.producer_id, "topics": [
            {"name": t.name, "partitions": [
                {"partition_index": p, "error_code": ErrorCode.cluster_authorization_failed}
                for p in t.partition_indexes]} for t in m.topics]} for m in request.markers]}
    for m in request.markers:
        topics = [{"name": t.name,
                   "partitions": [{"partition_index": p,
                                   "error_code": _write_marker(ctx, m, t.name, p)}
                                  for p in t.partition_indexes]}
                  for t in m.topics]
        results.append({"producer_id": m.producer_id, "topics": topics})
    return {"markers": results}
