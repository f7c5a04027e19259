"""Fetch (key 1): stored batches, as they lie in the segments, with long polling.

Kafka's ``KafkaApis.handleFetchRequest`` / ``ReplicaManager.fetchMessages`` / ``DelayedFetch``
(3.9) for consumers of a single-replica leader:

* **Bytes.** Each partition's records are :meth:`kafkalog.log.Log.read` of the segment bytes from
  the batch holding ``fetch_offset``: never decoded or re-encoded. At most ``partition_max_bytes``
  per partition and ``max_bytes`` for the response, except that the first batch of the first
  partition with data is returned whole however large (KIP-74); a partition left no room by the
  response limit gets no records. The last batch may be cut, as Kafka sends it (clients drop a
  partial tail).
* **Bound.** ``read_uncommitted`` reads up to the high watermark (the log end offset here);
  ``read_committed`` up to the last stable offset, with the aborted transactions overlapping the
  bytes returned (Kafka's ``collectAbortedTransactions`` over the ``.txnindex`` files, from the
  fetch offset to the offset after the last batch sent) so that the client drops their records.
* **Long poll.** When fewer than ``min_bytes`` are ready and no partition has an error, the
  response waits until an append or a transaction marker touches a fetched partition, or
  ``max_wait`` passes (``DelayedFetch.tryComplete``), then reads again.
* **Errors per partition:** ``UNKNOWN_TOPIC_OR_PARTITION`` / ``UNKNOWN_TOPIC_ID`` (v13+, topics
  by id), ``OFFSET_OUT_OF_RANGE`` outside [log start, log end], ``FENCED_LEADER_EPOCH`` /
  ``UNKNOWN_LEADER_EPOCH`` for a stale or future ``current_leader_epoch`` (v9+), and from v12 a
  ``diverging_epoch`` when ``last_fetched_epoch`` ended before the fetch offset
  (``Partition.fetchRecords``).
* **Fetch sessions** (KIP-227, v7+): none are created; every response carries session id 0,
  which tells the client to keep sending full fetch requests (what a broker whose session cache
  is full answers). A request naming a session id gets ``FETCH_SESSION_ID_NOT_FOUND``.
* A fetch from a replica (``replica_id >= 0``): this node has no followers,
  ``NOT_LEADER_OR_FOLLOWER``.
* **Client quotas**: with a ``consumer_byte_rate`` for the client, ``max_bytes`` is capped to one
  quota window's worth; the size recorded and a throttled response emptied is the connection's
  work (:mod:`kafkalog.server.client_quotas`).

Versions 4-16 (Kafka 3.9: 0-17; v17 only adds a follower field).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import numpy as np

from ...errors import KafkaLogError
from ...native import scan as native_scan
from ...replication.fetcher import OFFSET_OUT_OF_RANGE, DivergingEpoch, check_last_fetched_epoch
from ...security.acls import AclOperation, ResourceType
from ...transactions import READ_COMMITTED, read_committed_filter
from ..api import RequestContext, register
from ..error_codes import error_code_for
from ..protocol import ErrorCode, millis

__all__ = ["handle"]


class _Wanted:
    """One partition of the request, resolved to a topic name."""

    __slots__ = ("topic", "topic_id", "request", "error")

    def __init__(self, topic: str | None, topic_id: Any, request: Any, error: int) -> None:
        self.topic = topic
        self.topic_id = topic_id
        self.request = request
        self.error = error


def _resolve(ctx: RequestContext, request: Any) -> list[tuple[Any, list[_Wanted]]]:
    broker = ctx.broker
    out = []
    for t in request.topics:
        name = getattr(t, "topic", None)
        tid = getattr(t, "topic_id", None)
        error = ErrorCode.none
        if ctx.api_version >= 13:
            name = broker.topic_by_id(tid) if tid is not None else None
            if name is None:
                error = ErrorCode.unknown_topic_id
        if error == ErrorCode.none and name is not None \
                and not ctx.authorize(AclOperation.READ, ResourceType.TOPIC, name):
            error = ErrorCode.topic_authorization_failed  # (KafkaApis: READ on each topic)
        out.append((t, [_Wanted(name, tid, p, error) for p in t.partitions]))
    return out


def _diverging_epoch(broker: Any, log: Any, topic: str, p: Any) -> tuple[int, int] | int | None:
    """Kafka's ``Partition.readRecords`` check of ``lastFetchedEpoch`` (v12+): None when the
    fetcher's history agrees with this log; ``(epoch, end offset)`` to truncate to when its last
    epoch ended before its fetch offset; an error code (``OFFSET_OUT_OF_RANGE``) when that end
    is unknown or the offset is below the log start."""
    last_epoch = getattr(p, "last_fetched_epoch", -1)
    if last_epoch < 0:
        return None
    current = broker.leader_epoch(topic, p.partition)
    # the current epoch ends at the log end offset even before this leader appended in it
    epoch_end = (current, log.log_end_offset) if last_epoch == current else \
        log.end_offset_for_epoch(last_epoch)
    answer = check_last_fetched_epoch(epoch_end, p.fetch_offset, last_epoch,
                                      log.log_start_offset)
    if answer == OFFSET_OUT_OF_RANGE:
        return ErrorCode.offset_out_of_range
    if isinstance(answer, DivergingEpoch):
        return answer.epoch, answer.end_offset
    return None


def _read_partition(ctx: RequestContext, w: _Wanted, budget: int, isolation: str,
                    first_with_data: bool) -> tuple[dict[str, Any], int]:
    """The partition's response and the record bytes it carries."""
    # (one dict, its error code set on the way out: a Fetch lists every partition a consumer
    # has, each answered even when empty, so per-partition work is the cost of a poll)
    p = w.request
    out: dict[str, Any] = {"partition_index": p.partition, "error_code": w.error,
                           "high_watermark": -1, "last_stable_offset": -1,
                           "log_start_offset": -1, "aborted_transactions": None, "records": b""}
    if w.error:
        return out, 0
    broker = ctx.broker
    topic = w.topic
    assert topic is not None
    try:
        log = broker.log(topic, p.partition)
    except KafkaLogError as e:
        out["error_code"] = error_code_for(e)
        return out, 0
    leader_epoch = p.current_leader_epoch if ctx.api_version >= 9 else -1
    if leader_epoch >= 0:
        code = broker.check_leader_epoch(topic, p.partition, leader_epoch)
        if code:
            out["error_code"] = code
            return out, 0
    hw = broker.high_watermark(topic, p.partition)
    lso = log.last_stable_offset
    out["high_watermark"] = hw
    out["last_stable_offset"] = lso
    out["log_start_offset"] = log.log_start_offset
    if ctx.api_version >= 12:
        diverging = _diverging_epoch(broker, log, topic, p)
        if isinstance(diverging, int):
            out["error_code"] = diverging
            return out, 0
        if diverging is not None:
            out["diverging_epoch"] = {"epoch": diverging[0], "end_offset": diverging[1]}
            return out, 0
    committed = isolation == READ_COMMITTED
    if committed:
        out["aborted_transactions"] = []
    limit = min(p.partition_max_bytes, budget)
    if limit <= 0 and not first_with_data:
        return out, 0
    bound = lso if committed else hw
    try:
        data = log.read(p.fetch_offset, max(limit, 0), max_offset=bound)
    except KafkaLogError as e:
        out["error_code"] = error_code_for(e)
        return out, 0
    if committed and data:
        upper = _end_of_whole_batches(data)
        if upper is not None:
            tx = read_committed_filter(log, p.fetch_offset, upper, READ_COMMITTED)
            if tx is not None:
                out["aborted_transactions"] = sorted(
                    ({"producer_id": pid, "first_offset": first}
                     for pid, ranges in tx.aborted.items() for first, _ in ranges),
                    key=lambda a: a["first_offset"])
    out["records"] = data
    return out, len(data)


def _end_of_whole_batches(data: bytes) -> int | None:
    """The offset after the last whole batch of ``data`` (None when no batch is whole)."""
    sc = native_scan.scan_entries(np.frombuffer(data, np.uint8))
    if sc["count"] == 0:
        return None
    return int(sc["last_offsets"][sc["count"] - 1]) + 1


def _read_all(ctx: RequestContext, resolved: list[tuple[Any, list[_Wanted]]], max_bytes: int,
              isolation: str) -> tuple[list[dict[str, Any]], int, bool]:
    responses = []
    total = 0
    errors = False
    for t, wanted in resolved:
        parts = []
        for w in wanted:
            resp, n = _read_partition(ctx, w, max_bytes - total, isolation, total == 0)
            total += n
            errors = errors or resp["error_code"] != ErrorCode.none \
                or "diverging_epoch" in resp
            parts.append(resp)
        responses.append({"topic": getattr(t, "topic", None), "topic_id": t.topic_id
                          if ctx.api_version >= 13 else None, "partitions": parts})
    return responses, total, errors


@register(1, "Fetch", 4, 18)
async def handle(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    """Fetch (key 1, Kafka 4.2 versions 4-18). v17 (KIP-853's ReplicaDirectoryId) and v18
    (KIP-1166's replica HighWatermark) add only tagged fields of a follower's fetch, and a
    follower's fetch is refused here (NOT_LEADER_OR_FOLLOWER: no replica follows this node),
    so a consumer's v17-v18 fetch is answered as v16's."""
    broker = ctx.broker
    if ctx.api_version >= 7 and request.session_id != 0:
        return {"throttle_time": 0, "error_code": ErrorCode.fetch_session_id_not_found,
                "session_id": 0, "responses": []}
    replica_id = request.replica_state.replica_id if ctx.api_version >= 15 \
        else request.replica_id
    resolved = _resolve(ctx, request)
    if replica_id >= 0:
        for _, wanted in resolved:
            for w in wanted:
                w.error = w.error or ErrorCode.not_leader_or_follower
    isolation = READ_COMMITTED if request.isolation_level == 1 else "read_uncommitted"
    max_wait_ms = max(0, millis(request.max_wait))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + max_wait_ms / 1000
    tps = [(w.topic, w.request.partition) for _, ws in resolved for w in ws
           if w.topic is not None]
    max_bytes = request.max_bytes
    if broker.client_quotas is not None and replica_id < 0:
        # no more than one quota window's worth: a larger fetch would be throttled for sure
        # (KafkaApis.handleFetchRequest's maxQuotaWindowBytes; the min_bytes with it)
        max_bytes = broker.client_quotas.fetch_max_bytes(ctx, max_bytes)
    min_bytes = min(request.min_bytes, max_bytes)
    while True:
        responses, total, errors = _read_all(ctx, resolved, max_bytes, isolation)
        remaining = deadline - loop.time()
        if total >= min_bytes or errors or remaining <= 0 or not tps:
            break
        await broker.wait_for_change(tps, remaining)
    return {"throttle_time": 0, "error_code": ErrorCode.none, "session_id": 0,
            "responses": responses}
