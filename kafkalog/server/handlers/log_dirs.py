"""DescribeLogDirs (key 35): the log directory served, its partitions' sizes and its volume
(``kafka-log-dirs.sh --describe``, ``Admin.describeLogDirs``); AlterReplicaLogDirs (key 34),
moving partitions between log directories (``kafka-reassign-partitions.sh`` with log dirs,
``Admin.alterReplicaLogDirs``): with one directory there is nowhere to move to.

As Kafka's ``ReplicaManager.describeLogDirs`` (3.9) for a broker with one log dir: one result
naming the directory's absolute path; per partition held (all when the request's topics are
null, else those named that are held here) its size (the bytes of its segments, Kafka's
``UnifiedLog.size``), its offset lag (``max(high watermark - log end offset, 0)``: 0 for a
leader) and ``is_future_key`` false (no ``-future`` logs are served). From v4 the volume's
total and usable bytes (``FileStore.getTotalSpace``/``getUsableSpace``: ``statvfs`` here,
usable counting the blocks an unprivileged writer may use). From v5 ``is_cordoned`` false
(KIP-1066: nothing cordons a directory here). ``__cluster_metadata`` is left out, as a broker
keeps it in its metadata log dir, outside ``LogManager``.

Versions 1-5 (Kafka 4: 1-5; kio starts at 1).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ...errors import KafkaLogError
from ...log_dir import METADATA_TOPIC
from ...security.acls import CLUSTER_NAME, AclOperation, ResourceType
from ..api import RequestContext, register
from ..protocol import ErrorCode

__all__ = ["handle", "alter_replica_log_dirs", "volume_bytes"]

#: ``UnifiedLog.logFutureDirName``'s parts around the partition's name: ``.<32 hex>-future``
_FUTURE_DIR_SUFFIX_LEN = 1 + 32 + len("-future")


def volume_bytes(path: os.PathLike[str] | str) -> tuple[int, int]:
    """``(total, usable)`` bytes of the volume holding ``path`` (Java's ``FileStore`` sizes:
    usable is what a non-root writer may still use)."""
    st = os.statvfs(path)
    return st.f_blocks * st.f_frsize, st.f_bavail * st.f_frsize


def _wanted(request: Any, held: list[tuple[str, int]]) -> list[tuple[str, int]]:
    if request.topics is None:
        return [tp for tp in held if tp[0] != METADATA_TOPIC]
    have = set(held)
    out = {(t.topic, p) for t in request.topics for p in t.partitions
           if (t.topic, p) in have and t.topic != METADATA_TOPIC}
    return sorted(out)


@register(35, "DescribeLogDirs", 1, 5)
async def handle(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    broker = ctx.broker
    if not ctx.authorize(AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME):
        # KafkaApis: without DESCRIBE on the cluster, CLUSTER_AUTHORIZATION_FAILED
        return {"throttle_time": 0, "error_code": ErrorCode.cluster_authorization_failed,
                "results": []}
    log_dir = broker.log_dir
    topics: dict[str, list[dict[str, Any]]] = {}
    for topic, partition in _wanted(request, log_dir.partitions()):
        try:
            log = broker.log(topic, partition)
            size = log.size
            lag = max(broker.high_watermark(topic, partition) - log.log_end_offset, 0)
        except KafkaLogError:  # deleted under the request: absent, as Kafka's allLogs would be
            continue
        topics.setdefault(topic, []).append({"partition_index": partition,
                                             "partition_size": size, "offset_lag": lag,
                                             "is_future_key": False})
    root = os.path.abspath(log_dir.root)
    try:
        total, usable = volume_bytes(root)
    except OSError:
        total = usable = -1
    result = {"error_code": ErrorCode.none, "log_dir": root, "total_bytes": total,
              "usable_bytes": usable, "is_cordoned": False,
              "topics": [{"name": t, "partitions": ps} for t, ps in sorted(topics.items())]}
    return {"throttle_time": 0, "error_code": ErrorCode.none, "results": [result]}


@register(34, "AlterReplicaLogDirs", 1, 2)
async def alter_replica_log_dirs(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    """AlterReplicaLogDirs (key 34), as Kafka's ``KafkaApis.handleAlterReplicaLogDirsRequest``
    and ``ReplicaManager.alterReplicaLogDirs`` (4.2) answer for a broker with one log dir.

    Without ALTER on the cluster every partition named is ``CLUSTER_AUTHORIZATION_FAILED``.
    Each (topic, partition) is taken once, with the last directory naming it
    (``AlterReplicaLogDirsRequest.partitionDirs``), and checked in Kafka's order: a name whose
    future-log directory (``<topic>-<p>.<32 hex>-future``) would pass 255 characters,
    ``INVALID_TOPIC_EXCEPTION`` (KAFKA-4893); a path that is not the served directory's absolute
    path, ``LOG_DIR_NOT_FOUND``; a partition not held, ``UNKNOWN_TOPIC_OR_PARTITION``; else
    ``NONE``: the replica already lives in the destination (``maybeCreateFutureReplica`` makes
    no future log). Results are grouped by topic in the order the request first names them.
    Versions 1-2 (Kafka 4: v0 removed)."""
    pairs: dict[tuple[str, int], str] = {}
    for d in request.dirs:
        for t in d.topics:
            for p in t.partitions:
                pairs[(t.name, p)] = d.path      # (the last directory wins, the first place)
    if not ctx.authorize(AclOperation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME):
        # getErrorResponse: the request's own (topic, partitions) lists, every one refused
        code = ErrorCode.cluster_authorization_failed
        return {"throttle_time": 0, "results": [
            {"topic_name": t.name, "partitions": [
                {"partition_index": p, "error_code": code} for p in t.partitions]}
            for d in request.dirs for t in d.topics]}
    broker = ctx.broker
    root = os.path.abspath(broker.log_dir.root)
    results: dict[str, list[dict[str, Any]]] = {}
    for (topic, partition), path in pairs.items():
        if len(f"{topic}-{partition}") + _FUTURE_DIR_SUFFIX_LEN > 255:
            code = ErrorCode.invalid_topic_exception
        elif path != root:
            code = ErrorCode.log_dir_not_found
        elif partition not in broker.partitions_of(topic):
            code = ErrorCode.unknown_topic_or_partition
        else:
            code = ErrorCode.none
        results.setdefault(topic, []).append({"partition_index": partition,
                                              "error_code": code})
    return {"throttle_time": 0, "results": [{"topic_name": t, "partitions": ps}
                                            for t, ps in results.items()]}
