"""One topic partition's remote segments as Kafka's topic-based metadata manager tracks them.

A port of ``RemoteLogMetadataCache`` and ``RemoteLogLeaderEpochState``
(``storage/src/main/java/org/apache/kafka/server/log/remote/metadata/storage``, Kafka 3.9):

* ``add_copy_in_progress_segment`` takes a segment in ``COPY_SEGMENT_STARTED``: it is known,
  not readable (in every leader epoch's *unreferenced* set).
* an update to ``COPY_SEGMENT_FINISHED`` makes it readable: for each leader epoch of the segment,
  its start offset in that epoch maps to the segment, replacing the segments of that epoch that
  start at or after it (an unclean leader election re-copies a range) as long as the epoch's
  highest copied offset does not pass this one's end in the epoch.
* ``DELETE_SEGMENT_STARTED`` makes it unreadable again; ``DELETE_SEGMENT_FINISHED`` forgets it.
* a transition ``RemoteLogSegmentState.isValidTransition`` refuses is dropped (Kafka logs an
  error); an update of a segment never added is dropped too (Kafka warns). Both are kept here as
  :attr:`RemoteLogMetadataCache.dropped` so that an operator sees them.

Invariant: :attr:`segments` holds every segment not yet ``DELETE_SEGMENT_FINISHED``; each epoch's
``offset_to_id`` holds only ``COPY_SEGMENT_FINISHED`` segments, keyed by the first offset of the
epoch within the segment.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import NamedTuple

__all__ = ["RemoteLogSegmentId", "RemoteLogSegmentMetadata", "RemoteLogMetadataCache",
           "RemoteLogLeaderEpochState",
           "is_valid_transition", "COPY_SEGMENT_STARTED", "COPY_SEGMENT_FINISHED",
           "DELETE_SEGMENT_STARTED", "DELETE_SEGMENT_FINISHED"]

COPY_SEGMENT_STARTED = "COPY_SEGMENT_STARTED"
COPY_SEGMENT_FINISHED = "COPY_SEGMENT_FINISHED"
DELETE_SEGMENT_STARTED = "DELETE_SEGMENT_STARTED"
DELETE_SEGMENT_FINISHED = "DELETE_SEGMENT_FINISHED"

_NEXT = {COPY_SEGMENT_STARTED: (COPY_SEGMENT_FINISHED, DELETE_SEGMENT_STARTED),
         COPY_SEGMENT_FINISHED: (DELETE_SEGMENT_STARTED,),
         DELETE_SEGMENT_STARTED: (DELETE_SEGMENT_FINISHED,),
         DELETE_SEGMENT_FINISHED: ()}


def is_valid_transition(source: str | None, target: str) -> bool:
    """``RemoteLogSegmentState.isValidTransition``: the first state must be
    ``COPY_SEGMENT_STARTED``; a state may repeat (retries, failover); else the lifecycle order.

    >>> is_valid_transition(COPY_SEGMENT_FINISHED, COPY_SEGMENT_FINISHED)
    True
    >>> is_valid_transition(COPY_SEGMENT_FINISHED, COPY_SEGMENT_STARTED)
    False
    """
    if source is None:
        return target == COPY_SEGMENT_STARTED
    return source == target or target in _NEXT[source]


class RemoteLogSegmentId(NamedTuple):
    """A remote segment: its topic partition (topic id, name, number) and its own uuid.

    (Named tuples, here and for the metadata: one is made per event, and a frozen dataclass
    cost several times more to build.)"""

    topic_id: str
    topic: str
    partition: int
    id: str


class RemoteLogSegmentMetadata(NamedTuple):
    """A remote segment's metadata after its last applied event (``RemoteLogSegmentMetadata``).

    ``segment_leader_epochs``: ``(epoch, first offset of the epoch in the segment)`` sorted by
    epoch; ``broker_id``/``event_timestamp_ms``/``custom_metadata``/``state`` come from the last
    event (``createWithUpdates``). ``event_offset`` is where that event sits in the metadata
    topic, ``(metadata partition, offset)``; ``events`` counts the events applied.
    """

    segment_id: RemoteLogSegmentId
    start_offset: int
    end_offset: int
    max_timestamp_ms: int
    broker_id: int
    event_timestamp_ms: int
    segment_size_in_bytes: int
    segment_leader_epochs: tuple[tuple[int, int], ...]
    custom_metadata: bytes | None
    state: str
    txn_index_empty: bool = False
    event_offset: tuple[int, int] | None = None
    events: int = 1

    def epoch_end_offset(self, epoch: int) -> int:
        """The last offset of ``epoch`` in this segment (``highestOffsetForEpoch``): one before
        the next epoch's start, or the segment's end offset."""
        for e, start in self.segment_leader_epochs:
            if e > epoch:
                return start - 1
        return self.end_offset


@dataclass
class RemoteLogLeaderEpochState:
    """One leader epoch's segments (``RemoteLogLeaderEpochState``): the readable ones by their
    first offset in the epoch (``offset_to_id``), the others known in it (``unreferenced``:
    copy in progress, superseded, being deleted), and the highest offset copied in it."""

    offsets: list[int] = field(default_factory=list)      # sorted keys of offset_to_id
    offset_to_id: dict[int, RemoteLogSegmentId] = field(default_factory=dict)
    unreferenced: set[RemoteLogSegmentId] = field(default_factory=set)
    highest_log_offset: int | None = None

    def copy_finished(self, start: int, seg: RemoteLogSegmentId, epoch_end: int) -> None:
        # segments of this epoch starting at or after `start` are superseded, unless this copy
        # ends before what the epoch already covers (Kafka's loop condition, kept as written)
        while self.offsets and self.offsets[-1] >= start and \
                self.highest_log_offset is not None and self.highest_log_offset <= epoch_end:
            last = self.offsets.pop()
            self.unreferenced.add(self.offset_to_id.pop(last))
        if start not in self.offset_to_id:
            bisect.insort(self.offsets, start)
        self.offset_to_id[start] = seg
        self.unreferenced.discard(seg)
        if self.highest_log_offset is None or epoch_end > self.highest_log_offset:
            self.highest_log_offset = epoch_end

    def delete_started(self, start: int, seg: RemoteLogSegmentId) -> None:
        if self.offset_to_id.get(start) == seg:  # ConcurrentSkipListMap.remove(key, value)
            del self.offset_to_id[start]
            self.offsets.remove(start)
        self.unreferenced.add(seg)

    def floor(self, offset: int) -> RemoteLogSegmentId | None:
        i = bisect.bisect_right(self.offsets, offset)
        return self.offset_to_id[self.offsets[i - 1]] if i else None


class RemoteLogMetadataCache:
    """The remote segments of one topic partition, built by applying its events in order.

    Example
    -------
    >>> seg = RemoteLogSegmentId("AAAAAAAAAAAAAAAAAAAAyg", "orders", 7, "AAAAAAAAAAAAAAAAAAAA_g")
    >>> cache = RemoteLogMetadataCache()
    >>> cache.add_copy_in_progress_segment(RemoteLogSegmentMetadata(
    ...     seg, 0, 99, 100, 42, 123, 4096, ((0, 0), (1, 50)), None, COPY_SEGMENT_STARTED))
    >>> cache.update(seg, COPY_SEGMENT_FINISHED, broker_id=42, event_timestamp_ms=456)
    >>> cache.remote_log_segment_metadata(1, 60).end_offset, cache.highest_offset_for_epoch(0)
    (99, 49)
    """

    def __init__(self) -> None:
        self.segments: dict[RemoteLogSegmentId, RemoteLogSegmentMetadata] = {}
        self._epochs: dict[int, RemoteLogLeaderEpochState] = {}
        #: events Kafka drops, as ``(event offset, reason)``
        self.dropped: list[tuple[tuple[int, int] | None, str]] = []

    def epoch_state(self, leader_epoch: int) -> RemoteLogLeaderEpochState:
        """The state of ``leader_epoch`` (created empty: ``computeIfAbsent``)."""
        es = self._epochs.get(leader_epoch)
        if es is None:
            es = self._epochs[leader_epoch] = RemoteLogLeaderEpochState()
        return es

    # -- events -------------------------------------------------------------------------------

    def add_copy_in_progress_segment(self, metadata: RemoteLogSegmentMetadata) -> None:
        """``addCopyInProgressSegment``: a ``RemoteLogSegmentMetadataRecord`` event."""
        if metadata.state != COPY_SEGMENT_STARTED:
            # Kafka throws IllegalArgumentException (the metadata manager's event loop logs it)
            self.dropped.append((metadata.event_offset,
                                 f"segment {metadata.segment_id.id} added in state "
                                 f"{metadata.state} (must be {COPY_SEGMENT_STARTED})"))
            return
        existing = self.segments.get(metadata.segment_id)
        if not is_valid_transition(existing.state if existing else None, metadata.state):
            self.dropped.append((metadata.event_offset,
                                 f"segment {metadata.segment_id.id}: {existing.state} can not "  # type: ignore[union-attr]
                                 f"be transitioned to {metadata.state}"))
            return
        for epoch, _ in metadata.segment_leader_epochs:
            self.epoch_state(epoch).unreferenced.add(metadata.segment_id)
        if existing is not None:
            metadata = metadata._replace(events=existing.events + 1)
        self.segments[metadata.segment_id] = metadata

    def update(self, segment_id: RemoteLogSegmentId, state: str, *, broker_id: int,
               event_timestamp_ms: int, custom_metadata: bytes | None = None,
               event_offset: tuple[int, int] | None = None) -> None:
        """``updateRemoteLogSegmentMetadata``: a ``RemoteLogSegmentMetadataUpdateRecord``."""
        existing = self.segments.get(segment_id)
        if existing is None:
            self.dropped.append((event_offset, f"update of segment {segment_id.id} to {state}: "
                                 "no remote log segment metadata found for it"))
            return
        if not is_valid_transition(existing.state, state):
            self.dropped.append((event_offset, f"segment {segment_id.id}: {existing.state} can "
                                 f"not be transitioned to {state}"))
            return
        if state == COPY_SEGMENT_STARTED:  # (only a repeat reaches here)
            self.dropped.append((event_offset, f"segment {segment_id.id}: an update with state "
                                 f"{COPY_SEGMENT_STARTED} can not be applied"))
            return
        # createWithUpdates (the constructor called directly: dataclasses.replace cost more
        # than the rest of an update)
        e = existing
        updated = RemoteLogSegmentMetadata(
            segment_id, e.start_offset, e.end_offset, e.max_timestamp_ms, broker_id,
            event_timestamp_ms, e.segment_size_in_bytes, e.segment_leader_epochs,
            custom_metadata, state, e.txn_index_empty, event_offset, e.events + 1)
        for epoch, start in updated.segment_leader_epochs:
            es = self.epoch_state(epoch)
            if state == COPY_SEGMENT_FINISHED:
                es.copy_finished(start, segment_id, updated.epoch_end_offset(epoch))
            elif state == DELETE_SEGMENT_STARTED:
                es.delete_started(start, segment_id)
            else:
                es.unreferenced.discard(segment_id)
        if state == DELETE_SEGMENT_FINISHED:
            del self.segments[segment_id]
        else:
            self.segments[segment_id] = updated

    # -- queries ------------------------------------------------------------------------------

    def remote_log_segment_metadata(self, leader_epoch: int, offset: int
                                    ) -> RemoteLogSegmentMetadata | None:
        """``remoteLogSegmentMetadata(leaderEpoch, offset)``: the readable segment holding
        ``offset`` in ``leader_epoch``, or None."""
        es = self._epochs.get(leader_epoch)
        seg = es.floor(offset) if es else None
        if seg is None:
            return None
        metadata = self.segments[seg]
        return None if offset > metadata.epoch_end_offset(leader_epoch) else metadata

    def find_offset(self, offset: int) -> list[tuple[int, RemoteLogSegmentMetadata]]:
        """Every ``(leader epoch, segment)`` whose readable range in that epoch holds
        ``offset``, highest epoch first (offline there is no leader-epoch cache to pick one)."""
        found = []
        for epoch in sorted(self._epochs, reverse=True):
            metadata = self.remote_log_segment_metadata(epoch, offset)
            if metadata is not None:
                found.append((epoch, metadata))
        return found

    def highest_offset_for_epoch(self, leader_epoch: int) -> int | None:
        """``highestOffsetForEpoch``: the highest offset copied in ``leader_epoch``."""
        es = self._epochs.get(leader_epoch)
        return es.highest_log_offset if es else None

    def list_remote_log_segments(self, leader_epoch: int | None = None
                                 ) -> list[RemoteLogSegmentMetadata]:
        """Every known segment (any state) by start offset, or those of one leader epoch
        (``listRemoteLogSegments``: readable ones by start offset, then the unreferenced)."""
        if leader_epoch is None:
            return sorted(self.segments.values(), key=lambda m: (m.start_offset, m.segment_id))
        es = self._epochs.get(leader_epoch)
        if es is None:
            return []
        out = [self.segments[es.offset_to_id[o]] for o in es.offsets]
        if es.unreferenced:
            out += [self.segments[s] for s in es.unreferenced if s in self.segments]
            out.sort(key=lambda m: m.start_offset)
        return out
