"""A partition's tiered offsets as its leader computes them from the remote log metadata.

``RemoteLogManager.findHighestRemoteOffset`` (storage, Kafka 4.2): walk the local leader-epoch
cache from the latest epoch down; the first epoch the metadata has copied segments for gives
the highest remote offset, capped one below where that epoch ends locally (a segment copied in an
epoch the local log truncated away must not count past the truncation). Nothing found: -1.

:func:`remote_log_state` turns one partition's :class:`RemoteLogMetadataCache` into the
:class:`~kafkalog.list_offsets.RemoteLogState` ListOffsets answers from.
"""

from __future__ import annotations

from ..list_offsets import RemoteLogState, RemoteSegment, local_log_start_offset
from ..log import Log
from .metadata_cache import RemoteLogMetadataCache

__all__ = ["find_highest_remote_offset", "find_log_start_offset", "remote_log_state"]

_COPIED = "COPY_SEGMENT_FINISHED"


def find_highest_remote_offset(cache: RemoteLogMetadataCache, log: Log) -> tuple[int, int]:
    """``(offset, leader epoch)`` of the highest offset in remote storage that ``log``'s
    leader-epoch chain reaches; ``(-1, -1)`` when none."""
    for epoch, _ in reversed(log.leader_epoch_entries):
        highest = cache.highest_offset_for_epoch(epoch)
        if highest is None:
            continue
        requested_epoch, end_offset = log.end_offset_for_epoch(epoch)
        if end_offset <= highest:
            return end_offset - 1, requested_epoch
        return highest, epoch
    return -1, -1


def find_log_start_offset(cache: RemoteLogMetadataCache, log: Log) -> int:
    """``RemoteLogManager.findLogStartOffset``: the start of the first remote segment of the
    earliest local leader epoch that has any, else the local log start offset."""
    for epoch, _ in log.leader_epoch_entries:
        segments = cache.list_remote_log_segments(epoch)
        if segments:
            return segments[0].start_offset
    return local_log_start_offset(log)


def remote_log_state(cache: RemoteLogMetadataCache, log: Log, *,
                     checkpointed_log_start_offset: int = 0) -> RemoteLogState:
    """What ListOffsets needs of a tiered partition: its log start offset (``LogLoader`` keeps
    a tiered log's ``log-start-offset-checkpoint`` entry, 0 without one, unclamped by the local
    segments; the leader then raises it to :func:`find_log_start_offset`), its highest remote
    offset and the segments whose copy finished (the readable ones, by start offset)."""
    highest, _ = find_highest_remote_offset(cache, log)
    segments = tuple(
        RemoteSegment(m.segment_id.id, m.start_offset, m.end_offset, m.max_timestamp_ms,
                      tuple(m.segment_leader_epochs))
        for m in cache.list_remote_log_segments() if m.state == _COPIED)
    lso = max(checkpointed_log_start_offset, find_log_start_offset(cache, log))
    return RemoteLogState(lso, highest, segments)
