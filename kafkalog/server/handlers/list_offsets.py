"""ListOffsets (key 2): offsets by time, and the earliest/latest offsets.

The answer is :func:`kafkalog.list_offsets.fetch_offset_for_timestamp` (Kafka's
``Partition.fetchOffsetForTimestamp`` and ``UnifiedLog.fetchOffsetByTimestamp``, 4.2) for a
broker without remote storage: ``-1`` (latest) the last fetchable offset (the last stable offset
for ``read_committed``, isolation level 1, else the high watermark) with the leader's epoch;
``-2`` and ``-4`` the log start offset; ``-3`` the first record carrying the largest timestamp;
``-5`` and ``-6`` offset -1 (nothing is tiered); a timestamp the first record whose timestamp is
>= it, kept only below the last fetchable offset, with its timestamp and its batch's leader
epoch. No answer: offset, timestamp and epoch -1.

Errors per partition: ``UNKNOWN_TOPIC_OR_PARTITION``, ``FENCED_LEADER_EPOCH`` /
``UNKNOWN_LEADER_EPOCH`` (v4+). Versions 1-11 (Kafka 4.2: 1-11; v10 adds the timeout of
KIP-1075's remote reads, v11 the earliest-pending-upload value; v0's offset arrays are gone from
kio as from Kafka 4).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import KafkaLogError
from ...list_offsets import fetch_offset_for_timestamp
from ...security.acls import AclOperation, ResourceType
from ..api import RequestContext, register
from ..error_codes import error_code_for
from ..protocol import ErrorCode

__all__ = ["handle"]


def _lookup(ctx: RequestContext, topic: str, p: Any, isolation_level: int) -> dict[str, Any]:
    broker = ctx.broker
    out = {"partition_index": p.partition_index, "error_code": ErrorCode.none,
           "timestamp": -1, "offset": -1, "leader_epoch": -1,
           "old_style_offsets": []}
    try:
        log = broker.log(topic, p.partition_index)
    except KafkaLogError as e:
        return {**out, "error_code": error_code_for(e)}
    code = broker.check_leader_epoch(topic, p.partition_index,
                                     getattr(p, "current_leader_epoch", -1))
    if code:
        return {**out, "error_code": code}
    last_fetchable = log.last_stable_offset if isolation_level == 1 \
        else broker.high_watermark(topic, p.partition_index)
    try:
        found = fetch_offset_for_timestamp(
            log, p.timestamp, last_fetchable_offset=last_fetchable,
            leader_epoch=broker.leader_epoch(topic, p.partition_index))
    except KafkaLogError as e:
        return {**out, "error_code": error_code_for(e)}
    if found is None:
        return out
    return {**out, "offset": found.offset, "timestamp": found.timestamp,
            "leader_epoch": found.leader_epoch}


@register(2, "ListOffsets", 1, 11)
async def handle(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    isolation = getattr(request, "isolation_level", 0)
    topics = []
    for t in request.topics:
        if ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, t.name):
            parts = [_lookup(ctx, t.name, p, isolation) for p in t.partitions]
        else:  # (KafkaApis: DESCRIBE on each topic)
            parts = [{"partition_index": p.partition_index,
                      "error_code": ErrorCode.topic_authorization_failed, "timestamp": -1,
                      "offset": -1, "leader_epoch": -1, "old_style_offsets": []}
                     for p in t.partitions]
        topics.append({"name": t.name, "partitions": parts})
    return {"throttle_time": 0, "topics": topics}
