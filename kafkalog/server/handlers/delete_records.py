"""DeleteRecords (key 21): advance partitions' log start offsets (``kafka-delete-records.sh``,
``Admin.deleteRecords``).

As Kafka's ``KafkaApis.handleDeleteRecordsRequest``, ``ReplicaManager.deleteRecordsOnLocalLog``
and ``Partition.deleteRecordsOnLeader`` (3.9), per partition:

* a partition not held here: ``UNKNOWN_TOPIC_OR_PARTITION``; an internal topic
  (``__consumer_offsets``, ``__transaction_state``): ``INVALID_TOPIC_EXCEPTION``;
* a log whose ``cleanup.policy`` lacks ``delete``: ``POLICY_VIOLATION``;
* offset -1 means the high watermark; any other negative offset, or one above the high
  watermark: ``OFFSET_OUT_OF_RANGE``;
* otherwise the log start offset moves up to the offset (never down) through
  :meth:`kafkalog.log.Log.delete_records_before`, and the answer's low watermark is the log start
  offset after it. The records below it are unreadable at once; whole segments below it are
  removed by the next retention pass (``log.retention.check.interval.ms``), as in Kafka.

Failed partitions answer low watermark -1 (``DeleteRecordsResponse.INVALID_LOW_WATERMARK``).
A single replica is always "caught up", so the request's timeout never applies.

Versions 0-2 (Kafka 3.9 and 4).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import KafkaLogError
from ...security.acls import AclOperation, ResourceType
from ..api import RequestContext, register
from ..broker import INTERNAL_TOPICS
from ..error_codes import error_code_for
from ..protocol import ErrorCode

__all__ = ["handle", "HIGH_WATERMARK"]

#: DeleteRecordsRequest.HIGH_WATERMARK: delete up to the high watermark
HIGH_WATERMARK = -1


def _delete(broker: Any, topic: str, partition: int, offset: int) -> tuple[int, int]:
    """``(error code, low watermark)`` of one partition."""
    if partition not in broker.partitions_of(topic):
        return ErrorCode.unknown_topic_or_partition, -1
    if topic in INTERNAL_TOPICS:
        return ErrorCode.invalid_topic_exception, -1
    try:
        log = broker.log(topic, partition)
        if not log.config.delete:
            return ErrorCode.policy_violation, -1
        target = broker.high_watermark(topic, partition) if offset == HIGH_WATERMARK else offset
        if target < 0:
            return ErrorCode.offset_out_of_range, -1
        return ErrorCode.none, log.delete_records_before(target)
    except (KafkaLogError, OSError) as e:
        return error_code_for(e), -1


@register(21, "DeleteRecords", 0, 2)
async def handle(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    broker = ctx.broker
    topics = []
    for t in request.topics:
        parts = []
        allowed = ctx.authorize(AclOperation.DELETE, ResourceType.TOPIC, t.name)
        for p in t.partitions:
            # (KafkaApis: DELETE on the topic)
            code, low = (_delete(broker, t.name, p.partition_index, p.offset) if allowed
                         else (ErrorCode.topic_authorization_failed, -1))
            parts.append({"partition_index": p.partition_index, "low_watermark": low,
                          "error_code": code})
        topics.append({"name": t.name, "partitions": parts})
    return {"throttle_time": 0, "topics": topics}
