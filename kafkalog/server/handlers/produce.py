"""Produce (key 0): append each partition's batch as the partition leader.

Kafka's ``KafkaApis.handleProduceRequest`` / ``ReplicaManager.appendRecords`` (3.9) for one node
with one replica:

* ``acks`` must be 0, 1 or -1 (``INVALID_REQUIRED_ACKS`` otherwise). With one replica in sync,
  -1 and 1 are answered alike once the batch is in the log (Kafka does not fsync for either);
  ``acks=0`` gets no response at all.
* Each partition's records go through :meth:`kafkalog.log.Log.append_as_leader` (Kafka's
  ``appendAsLeader``: LogValidator, then producer state): offsets assigned, the record bytes
  written as the client encoded them. An idempotent retry is answered with the original offsets
  (``DUPLICATE_SEQUENCE`` is never sent: Kafka answers NONE with the first append's offsets).
* Internal topics refuse client appends (``INVALID_TOPIC_EXCEPTION``: "Cannot append to internal
  topic"). A transactional batch must come with the request's ``transactional_id`` and, when
  the transaction coordinator is running, belong to a partition added to that producer's open
  transaction (Kafka's ``transaction.partition.verification.enable``, KIP-890 part 1): else
  ``INVALID_TXN_STATE`` (``TRANSACTIONAL_ID_AUTHORIZATION_FAILED`` without a transactional id).
* Errors of one partition do not affect the others (Kafka's per-partition ``PartitionResponse``);
  waiting fetches of the partitions written are woken.

Versions 3-11 (Kafka 3.9: 0-11; kio and Kafka 4 start at 3, the first version with magic-2
batches only).
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Mapping
from typing import Any

from ...errors import InvalidTimestampError, KafkaLogError
from ...security.acls import AclOperation, ResourceType
from ..api import RequestContext, register
from ..broker import INTERNAL_TOPICS
from ..error_codes import error_code_for
from ..protocol import ErrorCode

__all__ = ["handle"]

logger = logging.getLogger("kafkalog.server")

_ATTR_TRANSACTIONAL = 0x10
_PRODUCER = struct.Struct(">qh")  # producerId, producerEpoch at byte 43 of a v2 batch


def _partition_error(index: int, code: int, message: str | None = None) -> dict[str, Any]:
    return {"index": index, "error_code": code, "base_offset": -1, "log_append_time": -1,
            "log_start_offset": -1, "record_errors": [], "error_message": message}


def _append(ctx: RequestContext, topic: str, index: int, records: bytes | None,
            transactional_id: str | None) -> dict[str, Any]:
    broker = ctx.broker
    if topic in INTERNAL_TOPICS:
        return _partition_error(index, ErrorCode.invalid_topic_exception,
                                f"Cannot append to internal topic {topic}")
    try:
        log = broker.log(topic, index)
    except KafkaLogError as e:
        return _partition_error(index, error_code_for(e), str(e))
    data = records or b""
    if len(data) > 61 and data[22] & _ATTR_TRANSACTIONAL:
        if transactional_id is None:
            return _partition_error(index, ErrorCode.transactional_id_authorization_failed,
                                    "transactional records without a transactional id")
        txn = broker.transactions
        if txn is not None:
            pid, epoch = _PRODUCER.unpack_from(data, 43)
            code = txn.verify_partition(transactional_id, pid, epoch, topic, index)
            if code != ErrorCode.none:
                return _partition_error(index, code, "partition not added to the transaction")
    try:
        info = log.append_as_leader(data,
                                    partition_leader_epoch=broker.leader_epoch(topic, index))
    except KafkaLogError as e:
        logger.debug("%s: produce to %s-%d refused: %s", ctx.peer, topic, index, e)
        out = _partition_error(index, error_code_for(e), e.message)
        # the records refused (RecordValidationException's record errors), Kafka's message
        if isinstance(e, InvalidTimestampError):
            out["record_errors"] = [{"batch_index": i, "batch_index_error_message": m}
                                    for i, m in e.record_errors]
            out["error_message"] = ("One or more records have been rejected due to invalid "
                                    "timestamp")
        return out
    except OSError as e:
        logger.error("%s-%d: append failed: %s", topic, index, e)
        return _partition_error(index, error_code_for(e), str(e))
    if not info.duplicate:
        broker.notify((topic, index))
    return {"index": index, "error_code": ErrorCode.none, "base_offset": info.first_offset,
            "log_append_time": info.log_append_time, "log_start_offset": info.log_start_offset,
            "record_errors": [], "error_message": None}


@register(0, "Produce", 3, 11)
async def handle(ctx: RequestContext, request: Any) -> Mapping[str, Any] | None:
    acks = request.acks
    responses = []
    txn_id = request.transactional_id
    # KafkaApis.handleProduceRequest: WRITE on the transactional id (a transactional producer),
    # WRITE on each topic (TOPIC_AUTHORIZATION_FAILED for the partitions of the others)
    txn_ok = txn_id is None or ctx.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID,
                                             txn_id)
    for t in request.topic_data:
        parts = []
        topic_ok = ctx.authorize(AclOperation.WRITE, ResourceType.TOPIC, t.name)
        for p in t.partition_data:
            if acks not in (0, 1, -1):
                parts.append(_partition_error(p.index, ErrorCode.invalid_required_acks))
            elif not txn_ok:
                parts.append(_partition_error(p.index,
                                              ErrorCode.transactional_id_authorization_failed))
            elif not topic_ok:
                parts.append(_partition_error(p.index, ErrorCode.topic_authorization_failed))
            else:
                parts.append(_append(ctx, t.name, p.index, p.records, txn_id))
        responses.append({"name": t.name, "partition_responses": parts})
    if acks == 0:
        return None
    return {"responses": responses, "throttle_time": 0}
