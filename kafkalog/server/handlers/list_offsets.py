"""ListOffsets (key 2): offsets by time, and the earliest/latest offsets.

Kafka's ``Partition.fetchOffsetForTimestamp`` and ``UnifiedLog.fetchOffsetByTimestamp`` (3.9),
without remote storage:

* ``-1`` (latest): the last fetchable offset, the last stable offset for ``read_committed``
  (isolation level 1) else the high watermark, with timestamp -1 and the leader's epoch.
* ``-2`` (earliest) and ``-4`` (earliest local): the log start offset, timestamp -1.
* ``-3`` (max timestamp, KIP-734): the first record carrying the largest timestamp.
* ``-5`` (latest tiered): offset -1 (nothing is tiered).
* a timestamp: the first record whose timestamp is >= it, through the time index
  (:meth:`kafkalog.log.Log.offset_for_timestamp`), kept only below the last fetchable offset;
  the answer carries that record's timestamp and its batch's leader epoch. None found: offset and
  timestamp -1.

Errors per partition: ``UNKNOWN_TOPIC_OR_PARTITION``, ``FENCED_LEADER_EPOCH`` /
``UNKNOWN_LEADER_EPOCH`` (v4+). Versions 1-9 (Kafka 3.9: 0-9; v0's offset arrays are gone from
kio as from Kafka 4).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import KafkaLogError
from ...log import (
    EARLIEST_LOCAL_TIMESTAMP,
    EARLIEST_TIMESTAMP,
    LATEST_TIERED_TIMESTAMP,
    LATEST_TIMESTAMP,
)
from ...records.batch import iter_batches
from ...security.acls import AclOperation, ResourceType
from ..api import RequestContext, register
from ..error_codes import error_code_for
from ..protocol import ErrorCode

__all__ = ["handle", "record_timestamp_and_epoch"]


def record_timestamp_and_epoch(log: Any, offset: int) -> tuple[int, int]:
    """``(timestamp, leader epoch)`` of the record at ``offset`` (the batch's max timestamp for
    ``LogAppendTime``; -1 for either when unknown)."""
    try:
        data = log.read(offset, 1)
    except KafkaLogError:
        return -1, -1
    for batch in iter_batches(data, validate=False):
        epoch = getattr(batch, "partition_leader_epoch", -1)
        if batch.last_offset < offset:
            continue
        for r in batch:
            if r.offset >= offset:
                return r.timestamp, epoch
        return -1, epoch
    return -1, -1


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
    ts = p.timestamp
    last_fetchable = log.last_stable_offset if isolation_level == 1 \
        else broker.high_watermark(topic, p.partition_index)
    if ts == LATEST_TIMESTAMP:
        return {**out, "offset": last_fetchable,
                "leader_epoch": broker.leader_epoch(topic, p.partition_index)}
    if ts == LATEST_TIERED_TIMESTAMP:
        return out
    try:
        offset = log.offset_for_timestamp(ts)
    except KafkaLogError as e:
        return {**out, "error_code": error_code_for(e)}
    if offset is None or offset < 0:
        return out
    if ts in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP):
        _, epoch = record_timestamp_and_epoch(log, offset)
        return {**out, "offset": offset, "leader_epoch": epoch}
    if offset >= last_fetchable:
        return out
    found_ts, epoch = record_timestamp_and_epoch(log, offset)
    return {**out, "offset": offset, "timestamp": found_ts, "leader_epoch": epoch}


@register(2, "ListOffsets", 1, 9)
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
