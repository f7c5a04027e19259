"""ListOffsets for one partition: which offset a timestamp or a special value names.

Kafka splits this between ``Partition.fetchOffsetForTimestamp`` (core, the caps a client sees:
the last fetchable offset, the leader's epoch for "latest") and
``UnifiedLog.fetchOffsetByTimestamp`` / ``RemoteLogManager.findHighestRemoteOffset`` (storage,
the special values and the search), Kafka 4.2. :func:`fetch_offset_for_timestamp` is both, for
the server's ListOffsets handler and for ``kafkalog get-offsets`` (``GetOffsetShell``, offline).

The special values (``ListOffsetsRequest``):

=====  ========================  ============================================================
``-1``  latest                    the last fetchable offset: the high watermark, or the last
                                  stable offset for ``read_committed``; the leader's epoch
``-2``  earliest                  the log start offset (with tiered storage: the remote one)
``-3``  max-timestamp             the first record carrying the largest timestamp (KIP-734)
``-4``  earliest-local            the local log start offset (without tiered storage: ``-2``)
``-5``  latest-tiered             the highest offset copied to remote storage (KIP-1005)
``-6``  earliest-pending-upload   the first offset not yet copied (KIP-1023)
=====  ========================  ============================================================

A timestamp gives the first record whose timestamp is >= it. Every answer other than latest,
earliest and earliest-local is kept only below the last fetchable offset; an answer of no
offset is ``None`` (Kafka's offset -1, which ``GetOffsetShell`` does not print).

Tiered storage is described by a :class:`RemoteLogState` (what the ``__remote_log_metadata``
replay knows of the partition). Its records are elsewhere: a timestamp that a copied remote
segment may hold raises :class:`RemoteRecordsUnavailableError` naming that segment, where a
broker would read the segment back from remote storage.

>>> import tempfile
>>> from kafkalog import Log, Record
>>> with Log.open(tempfile.mkdtemp()) as log:
...     _ = log.append([Record(None, b"a", 100), Record(None, b"b", 200)])
...     fetch_offset_for_timestamp(log, 150, last_fetchable_offset=2, leader_epoch=0)
TimestampAndOffset(timestamp=200, offset=1, leader_epoch=-1)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from .epoch_lineage import build_filtered_leader_epoch_map, segment_outside_lineage
from .errors import KafkaLogError
from .log import (
    EARLIEST_LOCAL_TIMESTAMP,
    EARLIEST_PENDING_UPLOAD_TIMESTAMP,
    EARLIEST_TIMESTAMP,
    LATEST_TIERED_TIMESTAMP,
    LATEST_TIMESTAMP,
    MAX_TIMESTAMP,
    Log,
)
from .records.batch import iter_batches

__all__ = ["TimestampAndOffset", "RemoteSegment", "RemoteLogState", "RemoteTimestampReader",
           "RemoteRecordsUnavailableError", "fetch_offset_for_timestamp",
           "record_timestamp_and_epoch", "epoch_for_offset", "local_log_start_offset",
           "NO_TIMESTAMP", "NO_PARTITION_LEADER_EPOCH"]

#: ``RecordBatch.NO_TIMESTAMP`` and ``NO_PARTITION_LEADER_EPOCH``
NO_TIMESTAMP = -1
NO_PARTITION_LEADER_EPOCH = -1


class TimestampAndOffset(NamedTuple):
    """``FileRecords.TimestampAndOffset``: the answer (-1 for an unknown timestamp or epoch)."""

    timestamp: int
    offset: int
    leader_epoch: int


class RemoteSegment(NamedTuple):
    """A remote segment whose copy finished (``COPY_SEGMENT_FINISHED``, not being deleted);
    ``leader_epochs`` its ``segmentLeaderEpochs`` ((epoch, first offset) ascending)."""

    segment_id: str
    start_offset: int
    end_offset: int
    max_timestamp: int
    leader_epochs: tuple[tuple[int, int], ...] = ()


#: reads a remote segment's records: ``(segment, target timestamp, starting offset)`` -> the
#: first record at or after both (``RemoteLogManager.lookupTimestamp``), None when none
RemoteTimestampReader = Callable[[RemoteSegment, int, int], "TimestampAndOffset | None"]


class RemoteLogState(NamedTuple):
    """What the remote log metadata knows of one partition with tiered storage enabled.

    ``log_start_offset`` is the partition's log start offset, which may lie below the local
    segments (a tiered log's local copy is not clamped to them, and its leader raises it to the
    first remote segment's start, ``findLogStartOffset``); ``highest_offset`` is
    ``RemoteLogManager.findHighestRemoteOffset`` (-1: nothing copied); ``segments`` the copied
    segments (their records are not in the log dir)."""

    log_start_offset: int
    highest_offset: int
    segments: tuple[RemoteSegment, ...] = ()
    #: where the remote segments' records can be read (a bucket copy); None: nowhere
    reader: RemoteTimestampReader | None = None


class RemoteRecordsUnavailableError(KafkaLogError):
    """The answer lies in a remote segment, whose records only remote storage holds."""


def epoch_for_offset(entries: Sequence[tuple[int, int]], offset: int) -> int | None:
    """``LeaderEpochFileCache.epochForOffset``: the epoch whose range holds ``offset`` (None
    below the first entry or without entries).

    >>> epoch_for_offset([(0, 0), (3, 10)], 9), epoch_for_offset([(0, 0), (3, 10)], 10)
    (0, 3)
    """
    previous = None
    for epoch, start in entries:
        if start == offset:
            return epoch
        if start > offset:
            return previous
        previous = epoch
    return previous


def local_log_start_offset(log: Log) -> int:
    """``UnifiedLog.localLogStartOffset``: the first offset the local segments hold (never below
    the log start offset; with tiered storage the log start offset may be remote)."""
    segs = log.segments
    base = segs[0].base_offset if segs else log.log_end_offset
    return max(log.log_start_offset, base)


def record_timestamp_and_epoch(log: Any, offset: int) -> tuple[int, int]:
    """``(timestamp, leader epoch)`` of the record at ``offset``: its batch's partition leader
    epoch, and its own timestamp (the batch's max timestamp for ``LogAppendTime``); -1 for
    either when unknown."""
    try:
        data = log.read(offset, 1)
    except KafkaLogError:
        return NO_TIMESTAMP, NO_PARTITION_LEADER_EPOCH
    for batch in iter_batches(data, validate=False):
        epoch = getattr(batch, "partition_leader_epoch", NO_PARTITION_LEADER_EPOCH)
        if batch.last_offset < offset:
            continue
        for r in batch:
            if r.offset >= offset:
                return r.timestamp, epoch
        return NO_TIMESTAMP, epoch
    return NO_TIMESTAMP, NO_PARTITION_LEADER_EPOCH


def _epoch_or_none(epoch: int | None) -> int:
    return NO_PARTITION_LEADER_EPOCH if epoch is None else epoch


def _found(log: Log, offset: int | None) -> TimestampAndOffset | None:
    if offset is None or offset < 0:
        return None
    ts, epoch = record_timestamp_and_epoch(log, offset)
    return TimestampAndOffset(ts, offset, epoch)


def _fetch_offset_by_timestamp(log: Log, timestamp: int,
                               remote: RemoteLogState | None) -> TimestampAndOffset | None:
    """``UnifiedLog.fetchOffsetByTimestamp`` (everything but latest)."""
    entries = log.leader_epoch_entries
    lso = log.log_start_offset if remote is None else remote.log_start_offset
    if timestamp == EARLIEST_TIMESTAMP or (remote is None
                                           and timestamp == EARLIEST_LOCAL_TIMESTAMP):
        # the first cached epoch usually starts at the log start offset; not after a
        # message format change (batches older than v2 have no epoch)
        first = entries[0] if entries else None
        epoch = first[0] if first is not None and first[1] <= lso else None
        return TimestampAndOffset(NO_TIMESTAMP, lso, _epoch_or_none(epoch))
    if timestamp == EARLIEST_LOCAL_TIMESTAMP:
        local = local_log_start_offset(log)
        return TimestampAndOffset(NO_TIMESTAMP, local,
                                  _epoch_or_none(epoch_for_offset(entries, local)))
    if timestamp == LATEST_TIERED_TIMESTAMP:
        if remote is None:
            return None  # offset -1, epoch -1
        highest = remote.highest_offset
        if highest < 0:
            return None
        return TimestampAndOffset(NO_TIMESTAMP, highest,
                                  _epoch_or_none(epoch_for_offset(entries, highest)))
    if timestamp == EARLIEST_PENDING_UPLOAD_TIMESTAMP:
        if remote is None:
            return None
        if remote.highest_offset < 0:
            if local_log_start_offset(log) == lso:  # nothing uploaded yet: the earliest
                return _fetch_offset_by_timestamp(log, EARLIEST_TIMESTAMP, remote)
            return None  # the leader does not know of the uploaded segments
        pending = max(remote.highest_offset + 1, lso)
        return TimestampAndOffset(NO_TIMESTAMP, pending,
                                  _epoch_or_none(epoch_for_offset(entries, pending)))
    if timestamp == MAX_TIMESTAMP:
        return _found(log, log.offset_for_timestamp(MAX_TIMESTAMP))
    # any other value is searched as a timestamp, negative ones too (as Kafka does)
    if remote is not None and lso != log.log_end_offset:
        found = _find_offset_by_timestamp_remote(log, timestamp, lso, remote)
        if found is not _NOT_IN_REMOTE:
            return found  # type: ignore[return-value]
    return _found(log, log.offset_for_timestamp(timestamp))


_NOT_IN_REMOTE = object()


def _find_offset_by_timestamp_remote(log: Log, timestamp: int, starting_offset: int,
                                     remote: RemoteLogState) -> object:
    """``RemoteLogManager.findOffsetByTimestamp``: from the epoch of the starting offset on,
    the first copied segment within the lineage whose max timestamp reaches the target holds
    the answer (read from the remote segment, or from the local log when it is local too);
    ``_NOT_IN_REMOTE`` when no remote segment qualifies (the caller searches the local log)."""
    entries = log.leader_epoch_entries
    lineage = sorted(build_filtered_leader_epoch_map(dict(entries)).items())
    epochs = [e for e, _ in entries]
    epoch = epoch_for_offset(entries, starting_offset)
    segs = log.segments
    while epoch is not None:
        of_epoch = sorted((s for s in remote.segments if epoch in dict(s.leader_epochs)),
                          key=lambda s: s.start_offset)
        for seg in of_epoch:
            if (seg.max_timestamp >= timestamp and seg.end_offset >= starting_offset
                    and segment_outside_lineage(dict(seg.leader_epochs), seg.end_offset,
                                                log.log_end_offset, lineage) is None):
                if segs and seg.start_offset >= segs[0].base_offset:
                    return _found(log, log.offset_for_timestamp(timestamp))  # local too
                if remote.reader is None:
                    raise RemoteRecordsUnavailableError(
                        f"the first offset with a timestamp >= {timestamp} is in remote "
                        f"segment {seg.segment_id} (offsets {seg.start_offset}-"
                        f"{seg.end_offset}, max timestamp {seg.max_timestamp}), whose records "
                        "are only in remote storage (give a copy of its objects with "
                        "--objects, or restore it with kafkalog tiered-restore)",
                        path=log.directory, offset=seg.start_offset)
                return remote.reader(seg, timestamp, starting_offset)
        i = epochs.index(epoch)
        epoch = epochs[i + 1] if i + 1 < len(epochs) else None
    return _NOT_IN_REMOTE


def fetch_offset_for_timestamp(log: Log, timestamp: int, *, last_fetchable_offset: int,
                               leader_epoch: int,
                               remote: RemoteLogState | None = None
                               ) -> TimestampAndOffset | None:
    """The ListOffsets answer for ``timestamp`` (a time in ms or a special value, see the
    module) on ``log``; None when Kafka answers offset -1.

    Parameters
    ----------
    last_fetchable_offset:
        The high watermark (``read_uncommitted``) or the last stable offset
        (``read_committed``): the answer to latest, and a bound on all but earliest and
        earliest-local.
    leader_epoch:
        The partition's leader epoch, given with latest (-1 unknown).
    remote:
        The partition's tiered storage, None when it has none (Kafka's ``remoteLogEnabled``).

    Raises
    ------
    RemoteRecordsUnavailableError
        The timestamp's answer lies in a remote segment (see the module).

    >>> import tempfile
    >>> from kafkalog import Log, Record
    >>> with Log.open(tempfile.mkdtemp()) as log:
    ...     _ = log.append([Record(None, b"a", 100), Record(None, b"b", 200)])
    ...     [fetch_offset_for_timestamp(log, t, last_fetchable_offset=1, leader_epoch=0)
    ...      for t in (-1, -2, 150)]
    [TimestampAndOffset(timestamp=-1, offset=1, leader_epoch=0), \
TimestampAndOffset(timestamp=-1, offset=0, leader_epoch=-1), None]
    """
    if timestamp == LATEST_TIMESTAMP:
        return TimestampAndOffset(NO_TIMESTAMP, last_fetchable_offset, leader_epoch)
    found = _fetch_offset_by_timestamp(log, timestamp, remote)
    if timestamp in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP) or found is None:
        return found
    # ReplicaManager.fetchOffset: an answer at or past the last fetchable offset is no answer
    return None if found.offset >= last_fetchable_offset else found
