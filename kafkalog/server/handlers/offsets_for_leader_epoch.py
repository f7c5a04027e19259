"""OffsetForLeaderEpoch (key 23): where a leader epoch ended.

Kafka's ``Partition.lastOffsetForLeaderEpoch`` (3.9): after the current-leader-epoch check, the
end offset of the requested epoch from the leader-epoch cache (``UnifiedLog.endOffsetForEpoch``);
the leader's own epoch ends at the log end offset; an unknown epoch answers ``(-1, -1)``.
Consumers use it to detect log truncation after a leader change (KIP-320).

Versions 2-4 (Kafka 3.9: 0-4; kio and Kafka 4 start at 2).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import KafkaLogError
from ...security.acls import AclOperation, ResourceType
from ..api import RequestContext, register
from ..error_codes import error_code_for
from ..protocol import ErrorCode

__all__ = ["handle"]


def _end(ctx: RequestContext, topic: str, p: Any) -> dict[str, Any]:
    broker = ctx.broker
    out = {"partition": p.partition, "error_code": ErrorCode.none, "leader_epoch": -1,
           "end_offset": -1}
    try:
        log = broker.log(topic, p.partition)
    except KafkaLogError as e:
        return {**out, "error_code": error_code_for(e)}
    code = broker.check_leader_epoch(topic, p.partition, p.current_leader_epoch)
    if code:
        return {**out, "error_code": code}
    current = broker.leader_epoch(topic, p.partition)
    if p.leader_epoch == current:
        return {**out, "leader_epoch": current, "end_offset": log.log_end_offset}
    epoch, end = log.end_offset_for_epoch(p.leader_epoch)
    return {**out, "leader_epoch": epoch, "end_offset": end}


@register(23, "OffsetForLeaderEpoch", 2, 4)
async def handle(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    topics = []
    for t in request.topics:
        if ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, t.topic):
            parts = [_end(ctx, t.topic, p) for p in t.partitions]
        else:  # (KafkaApis: DESCRIBE on each topic, for a consumer)
            parts = [{"error_code": ErrorCode.topic_authorization_failed,
                      "partition": p.partition, "leader_epoch": -1, "end_offset": -1}
                     for p in t.partitions]
        topics.append({"topic": t.topic, "partitions": parts})
    return {"throttle_time": 0, "topics": topics}
