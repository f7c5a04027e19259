"""DescribeQuorum (key 55, KIP-595/836/853): what ``kafka-metadata-quorum.sh describe`` and
``Admin.describeMetadataQuorum`` ask, answered from the served log dir's KRaft files.

A broker forwards DescribeQuorum to the active controller, whose raft client answers
(``KafkaRaftClient.handleDescribeQuorumRequest``, Kafka 4.1). Here there is no running quorum:
when the log dir holds ``__cluster_metadata-0`` (a KRaft node's dir, served as it was copied),
the answer is that node's files as :mod:`kafkalog.cluster.quorum` reads them (leader and epoch
from ``quorum-state`` or the last ``LeaderChange``, voters from the last ``VotersRecord`` or a
``data_version`` 0 ``quorum-state``, this node's end offset; the others' end offsets are not in
its files: -1, as Kafka reports a voter that never fetched; timestamps -1). Errors, as Kafka's:

- without DESCRIBE on the cluster, the top-level ``CLUSTER_AUTHORIZATION_FAILED``
  (``ControllerApis.handleDescribeQuorum``; the request's ``getErrorResponse``: no topics);
- a request naming anything but ``__cluster_metadata`` partition 0 alone, the partition-level
  ``UNKNOWN_TOPIC_OR_PARTITION`` for each partition named (``getPartitionLevelErrorResponse``);
- a log dir without ``__cluster_metadata-0`` keeps no KRaft log: the same
  ``UNKNOWN_TOPIC_OR_PARTITION``, its message saying so (v2 carries messages);
- files that name no leader: ``NOT_LEADER_OR_FOLLOWER`` (what a node without a leader answers);
  files that cannot be read: ``KAFKA_STORAGE_ERROR`` with the file and the reason.

Versions 0-2 (Kafka 4.1). The description is re-read only when a file of the partition
directory changed (name, size or modification time).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...cluster.quorum import NoLeaderKnownError, describe_quorum, read_metadata_node
from ...errors import KafkaLogError
from ...log_dir import METADATA_TOPIC
from ...security.acls import CLUSTER_NAME, AclOperation, ResourceType
from ..api import ERROR_MESSAGES, RequestContext, register
from ..protocol import ErrorCode

__all__ = ["describe_quorum_handler"]

_METADATA_PARTITION = f"{METADATA_TOPIC}-0"
_UNKNOWN = ERROR_MESSAGES[ErrorCode.unknown_topic_or_partition]
_NOT_LEADER = ERROR_MESSAGES[ErrorCode.not_leader_or_follower]
_cache: dict[str, tuple[Any, Any]] = {}


def _signature(part: Path) -> tuple:
    """What changes when any file of the partition directory does (one stat each)."""
    out = []
    for e in os.scandir(part):
        if e.is_file():
            st = e.stat()
            out.append((e.name, st.st_size, st.st_mtime_ns))
    return tuple(sorted(out))


def _describe(root: Path) -> Any:
    part = root / _METADATA_PARTITION
    sig = _signature(part)
    hit = _cache.get(str(part))
    if hit is not None and hit[0] == sig:
        return hit[1]
    q = describe_quorum([read_metadata_node(root)])
    _cache[str(part)] = (sig, q)
    return q


def _partition_errors(request: Any, code: int, message: str) -> list[dict[str, Any]]:
    return [{"topic_name": t.topic_name, "partitions": [
        {"partition_index": p.partition_index, "error_code": code, "error_message": message,
         "leader_id": 0, "leader_epoch": 0, "high_watermark": 0, "current_voters": [],
         "observers": []} for p in t.partitions]} for t in request.topics]


def _replica(r: Any) -> dict[str, Any]:
    return {"replica_id": r.node_id, "replica_directory_id": r.directory_id,
            "log_end_offset": r.log_end_offset, "last_fetch_timestamp": -1,
            "last_caught_up_timestamp": -1}


@register(55, "DescribeQuorum", 0, 2)
async def describe_quorum_handler(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    """DescribeQuorum (key 55), as the module docstring says."""
    out: dict[str, Any] = {"error_code": ErrorCode.none, "error_message": None, "topics": [],
                           "nodes": []}
    if not ctx.authorize(AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME):
        return {**out, "error_code": ErrorCode.cluster_authorization_failed,
                "error_message": ERROR_MESSAGES[ErrorCode.cluster_authorization_failed]}
    topics = request.topics
    # RaftUtil.hasValidTopicPartition: exactly one topic, the metadata topic, partition 0
    if not (len(topics) == 1 and topics[0].topic_name == METADATA_TOPIC
            and len(topics[0].partitions) == 1
            and topics[0].partitions[0].partition_index == 0):
        return {**out, "topics": _partition_errors(request, ErrorCode.unknown_topic_or_partition,
                                                   _UNKNOWN)}
    root = Path(ctx.broker.log_dir.root)
    if not (root / _METADATA_PARTITION).is_dir():
        return {**out, "topics": _partition_errors(
            request, ErrorCode.unknown_topic_or_partition,
            f"{_UNKNOWN} (the served log dir holds no {_METADATA_PARTITION}: no KRaft "
            f"metadata log to describe)")}
    try:
        q = _describe(root)
    except NoLeaderKnownError as e:
        return {**out, "topics": _partition_errors(request, ErrorCode.not_leader_or_follower,
                                                   f"{_NOT_LEADER} ({e})")}
    except (KafkaLogError, OSError) as e:
        return {**out, "topics": _partition_errors(request, ErrorCode.kafka_storage_error,
                                                   str(e))}
    voters = [r for r in q.replicas if r.status != "Observer"]
    voters.sort(key=lambda r: r.node_id)          # the leader's voter map: ids in order
    observers = [r for r in q.replicas if r.status == "Observer"]
    out["topics"] = [{"topic_name": METADATA_TOPIC, "partitions": [{
        "partition_index": 0, "error_code": ErrorCode.none, "error_message": None,
        "leader_id": q.leader_id, "leader_epoch": q.leader_epoch,
        "high_watermark": q.high_watermark, "current_voters": [_replica(r) for r in voters],
        "observers": [_replica(r) for r in observers]}]}]
    # v2: each voter's endpoints (a static quorum's voters from quorum-state have none)
    out["nodes"] = [{"node_id": v.id, "listeners": [
        {"name": n, "host": h, "port": p} for n, h, p in v.endpoints]}
        for v in q.voters if v.endpoints]
    return out
