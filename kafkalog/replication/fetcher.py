"""What a follower's fetcher does to its log when it starts following a leader (sans-IO).

Kafka's replica fetcher (``core/src/main/scala/kafka/server/AbstractFetcherThread.scala``,
Kafka 4.2) and the leader's side of a follower fetch (``Partition.readRecords`` in
``core/src/main/scala/kafka/cluster/Partition.scala``), replayed over two logs described by
their offsets and leader-epoch caches, with the truncation-on-fetch protocol every supported
release uses (KIP-595's ``lastFetchedEpoch``, metadata version 2.7 and later):

1. the follower starts fetching at its log end offset with its latest epoch
   (``ReplicaManager.initialFetchOffset``); a log without epochs first truncates to its high
   watermark (``truncateToHighWatermark``) and fetches from there without one;
2. the leader answers each fetch (:func:`leader_fetch_check`): a *diverging epoch* when the
   fetcher's last epoch ended earlier on the leader (or is unknown below it), *offset out of
   range* when the end of that epoch is unknown or the offset lies outside the leader's log,
   else records;
3. a diverging epoch truncates the follower (:func:`offset_truncation_state`, Kafka's
   ``getOffsetTruncationState``), possibly in several rounds when the leader names an epoch the
   follower does not know;
4. an out-of-range answer resets the follower (``fetchOffsetAndTruncate``): truncated to the
   leader's log end offset when it is ahead of it, emptied and restarted at the leader's log
   start when it is wholly below it, else kept as it is (Kafka's comment: "There is a potential
   for a mismatch between the logs of the two replicas here. We don't fix this mismatch").

:func:`follow` runs these rounds until the follower fetches records (it is then a prefix of the
leader, by Kafka's rules), and returns each step with the text the broker logs for it.

Example
-------
>>> leader = ReplicaLog(0, 150, ((1, 0), (3, 100)))
>>> follower = ReplicaLog(0, 120, ((1, 0), (2, 110)))    # wrote epoch 2, which the leader lacks
>>> outcome = follow(leader, follower)
>>> outcome.truncated_to, outcome.fetch_offset, [s.kind for s in outcome.steps]
(100, 100, ['diverging_epoch', 'truncate', 'fetch'])
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..leader_epoch import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET, EpochEntry, end_offset_for

__all__ = ["ReplicaLog", "DivergingEpoch", "OFFSET_OUT_OF_RANGE", "leader_fetch_check",
           "check_last_fetched_epoch",
           "OffsetTruncationState", "offset_truncation_state", "Step", "FollowOutcome",
           "follow"]

#: What :func:`leader_fetch_check` returns for Kafka's ``OffsetOutOfRangeException``.
OFFSET_OUT_OF_RANGE = "offset_out_of_range"

# A fetcher makes progress each round (its log only shrinks), so a handful of rounds ends every
# exchange; a round that repeats an earlier state is Kafka's endless retry (reported, not run).
_MAX_ROUNDS = 1000


@dataclass(frozen=True)
class ReplicaLog:
    """One replica of a partition as the fetch protocol sees it.

    ``epochs`` are the ``leader-epoch-checkpoint`` entries, ``(epoch, start offset)`` with both
    increasing; ``high_watermark`` is None when unknown.
    """

    log_start_offset: int
    log_end_offset: int
    epochs: tuple[EpochEntry, ...] = ()
    high_watermark: int | None = None
    first_segment_base_offset: int | None = None

    @property
    def latest_epoch(self) -> int | None:
        return self.epochs[-1][0] if self.epochs else None

    def end_offset_for(self, epoch: int) -> tuple[int, int]:
        """``LeaderEpochFileCache.endOffsetFor`` over this log (``(-1, -1)``: unknown)."""
        return end_offset_for(self.epochs, epoch, self.log_end_offset)

    def as_leader(self, leader_epoch: int) -> ReplicaLog:
        """This log once it leads in ``leader_epoch``: Kafka assigns the epoch at the log end
        offset when a replica becomes leader (``assignEpochStartOffset``), and the cache's
        ``assign`` first drops the entries in the way (an epoch >= it, or one starting at or
        after the log end offset: an epoch led without a write)."""
        if self.latest_epoch is not None and self.latest_epoch >= leader_epoch:
            return self
        end = self.log_end_offset
        kept = tuple(e for e in self.epochs if e[0] < leader_epoch and e[1] < end)
        return replace(self, epochs=(*kept, (leader_epoch, end)))

    def truncates_fully(self, offset: int) -> bool:
        """Whether :meth:`truncated_to` ``offset`` empties the log (its first segment starts
        above ``offset``)."""
        first = self.first_segment_base_offset
        if first is None:
            first = self.log_start_offset
        return offset < self.log_end_offset and first > offset

    def truncated_to(self, offset: int) -> ReplicaLog:
        """``UnifiedLog.truncateTo(offset)``: the log end offset becomes ``offset`` (no effect
        at or above it, but for the epoch cache), epochs starting at or after it are dropped,
        the log start and high watermark are capped; a log whose first segment starts above
        ``offset`` is emptied and restarted there."""
        if self.truncates_fully(offset):
            return self.truncated_fully_and_started_at(offset)
        end = min(offset, self.log_end_offset)
        epochs = tuple(e for e in self.epochs if e[1] < end)
        hw = None if self.high_watermark is None else min(self.high_watermark, end)
        return replace(self, log_start_offset=min(self.log_start_offset, end),
                       log_end_offset=end, epochs=epochs, high_watermark=hw)

    def truncated_fully_and_started_at(self, offset: int) -> ReplicaLog:
        """``UnifiedLog.truncateFullyAndStartAt(offset)``: empty, starting at ``offset``."""
        return ReplicaLog(offset, offset, (), offset, offset)


@dataclass(frozen=True)
class DivergingEpoch:
    """The leader's ``divergingEpoch`` in a fetch response: ``epoch`` is the largest epoch of
    the leader's that is <= the fetcher's last fetched epoch, ending at ``end_offset``."""

    epoch: int
    end_offset: int


def check_last_fetched_epoch(epoch_end: tuple[int, int], fetch_offset: int,
                             last_fetched_epoch: int, log_start_offset: int
                             ) -> DivergingEpoch | str | None:
    """``Partition.readRecords``' check of a fetch's ``lastFetchedEpoch``: ``epoch_end`` is the
    leader's ``(epoch, end offset)`` for it (``endOffsetFor``). :data:`OFFSET_OUT_OF_RANGE`
    when that end is unknown or ``fetch_offset`` is below the log start, a
    :class:`DivergingEpoch` when the epoch ended before ``fetch_offset`` (or only a smaller
    one is known), else None."""
    epoch, end = epoch_end
    if end == UNDEFINED_EPOCH_OFFSET or epoch == UNDEFINED_EPOCH:
        return OFFSET_OUT_OF_RANGE  # "Could not determine the end offset of the last ..."
    if fetch_offset < log_start_offset:
        return OFFSET_OUT_OF_RANGE  # regardless of whether epochs are diverging
    if epoch < last_fetched_epoch or end < fetch_offset:
        return DivergingEpoch(epoch, end)
    return None


def leader_fetch_check(leader: ReplicaLog, fetch_offset: int, last_fetched_epoch: int | None
                       ) -> DivergingEpoch | str | None:
    """The leader's answer to a fetch at ``fetch_offset`` (``Partition.readRecords`` then
    ``UnifiedLog.read``): a :class:`DivergingEpoch`, :data:`OFFSET_OUT_OF_RANGE`, or None when it
    returns records (``fetch_offset`` within ``[log start, log end]``)."""
    if last_fetched_epoch is not None and last_fetched_epoch >= 0:
        answer = check_last_fetched_epoch(leader.end_offset_for(last_fetched_epoch),
                                          fetch_offset, last_fetched_epoch,
                                          leader.log_start_offset)
        if answer is not None:
            return answer
    if fetch_offset < leader.log_start_offset or fetch_offset > leader.log_end_offset:
        return OFFSET_OUT_OF_RANGE
    return None


@dataclass(frozen=True)
class OffsetTruncationState:
    """Kafka's ``OffsetTruncationState``: truncate to ``offset``; ``completed`` False when the
    follower must ask again (the leader named an epoch it does not know)."""

    offset: int
    completed: bool


def offset_truncation_state(follower: ReplicaLog, diverging: DivergingEpoch,
                            fetch_offset: int) -> OffsetTruncationState:
    """Kafka's ``AbstractFetcherThread.getOffsetTruncationState`` for the leader's
    ``diverging`` epoch and end offset (``fetch_offset``: the follower's current one)."""
    if diverging.end_offset == UNDEFINED_EPOCH_OFFSET:
        return OffsetTruncationState(fetch_offset, True)
    replica_end = follower.log_end_offset
    if diverging.epoch == UNDEFINED_EPOCH:  # an OffsetForLeaderEpoch v0 peer
        return OffsetTruncationState(min(diverging.end_offset, replica_end), True)
    epoch, end = follower.end_offset_for(diverging.epoch)
    if end == UNDEFINED_EPOCH_OFFSET:
        # the follower tracks no epoch <= the leader's: the leader's offset alone
        return OffsetTruncationState(min(diverging.end_offset, replica_end), True)
    if epoch != diverging.epoch:
        # the follower does not know the leader's epoch: to the end of its largest smaller one,
        # then ask again
        return OffsetTruncationState(min(end, replica_end), False)
    return OffsetTruncationState(min(end, diverging.end_offset, replica_end), True)


@dataclass(frozen=True)
class Step:
    """One round of the exchange: ``kind`` is ``fetch`` (records come: done),
    ``diverging_epoch``, ``offset_out_of_range``, ``truncate``, ``truncate_fully`` or
    ``reset`` (the fetch offset moves, nothing is truncated); ``message`` is what the broker
    logs (Kafka's texts, the partition left out)."""

    kind: str
    fetch_offset: int
    last_fetched_epoch: int | None
    message: str
    offset: int | None = None


@dataclass
class FollowOutcome:
    """Where a follower ends up: ``follower`` is its log after every truncation,
    ``fetch_offset`` where it fetches the leader's records from, ``truncated_to`` the lowest
    offset it truncated to (None: nothing removed), ``truncated_fully`` whether it was emptied,
    ``stuck`` whether Kafka would retry the same failing fetch forever."""

    follower: ReplicaLog
    fetch_offset: int
    truncated_to: int | None = None
    truncated_fully: bool = False
    stuck: bool = False
    steps: list[Step] = field(default_factory=list)


def follow(leader: ReplicaLog, follower: ReplicaLog) -> FollowOutcome:
    """Replay Kafka's fetcher for ``follower`` starting to follow ``leader`` until it fetches
    records (or would retry forever: ``stuck``)."""
    out = FollowOutcome(follower, follower.log_end_offset)

    def truncate(log: ReplicaLog, offset: int, fetch_offset: int, last: int | None,
                 why: str) -> ReplicaLog:
        if offset < log.log_end_offset:
            out.truncated_to = offset if out.truncated_to is None else \
                min(out.truncated_to, offset)
        out.truncated_fully = out.truncated_fully or log.truncates_fully(offset)
        new = log.truncated_to(offset)
        out.steps.append(Step("truncate", fetch_offset, last, why, offset))
        return new

    log = follower
    if log.latest_epoch is None:
        # no epochs (old message format, or a cache lost): Truncating state,
        # truncateToHighWatermark; a log without a checkpointed high watermark starts with 0,
        # raised to its log start offset (UnifiedLog's constructor)
        hw = log.high_watermark if log.high_watermark is not None else log.log_start_offset
        log = truncate(log, hw, hw, None,
                       f"Truncating partition with OffsetTruncationState(offset={hw}, "
                       f"truncationCompleted=true) due to local high watermark {hw}")
        fetch_offset = hw
    else:
        fetch_offset = log.log_end_offset
    seen: set[tuple[int, int | None, int, int]] = set()
    for _ in range(_MAX_ROUNDS):
        last = log.latest_epoch
        key = (fetch_offset, last, log.log_start_offset, log.log_end_offset)
        if key in seen:
            out.stuck = True
            break
        seen.add(key)
        answer = leader_fetch_check(leader, fetch_offset, last)
        if answer is None:
            out.steps.append(Step("fetch", fetch_offset, last,
                                  f"fetching from offset {fetch_offset}"))
            break
        if isinstance(answer, DivergingEpoch):
            out.steps.append(Step(
                "diverging_epoch", fetch_offset, last,
                f"leader replied with diverging epoch {answer.epoch} ending at offset "
                f"{answer.end_offset} to a fetch at offset {fetch_offset} with last fetched "
                f"epoch {last}", answer.end_offset))
            state = offset_truncation_state(log, answer, fetch_offset)
            log = truncate(log, state.offset, fetch_offset, last,
                           f"Truncating partition with OffsetTruncationState(offset="
                           f"{state.offset}, truncationCompleted="
                           f"{'true' if state.completed else 'false'}) due to leader epoch and "
                           f"offset EpochEndOffset(leaderEpoch={answer.epoch}, "
                           f"endOffset={answer.end_offset})")
            fetch_offset = state.offset
            continue
        # OffsetOutOfRange: fetchOffsetAndTruncate
        out.steps.append(Step("offset_out_of_range", fetch_offset, last,
                              f"offset out of range fetching at offset {fetch_offset} (leader's "
                              f"log is {leader.log_start_offset} to {leader.log_end_offset})"))
        replica_end = log.log_end_offset
        if leader.log_end_offset < replica_end:
            log = truncate(log, leader.log_end_offset, fetch_offset, last,
                           f"Reset fetch offset from {replica_end} to current leader's latest "
                           f"offset {leader.log_end_offset}")
            fetch_offset = leader.log_end_offset
        elif leader.log_start_offset > replica_end:
            out.truncated_fully = True
            if log.log_start_offset < replica_end:  # (everything it held goes)
                out.truncated_to = log.log_start_offset if out.truncated_to is None else \
                    min(out.truncated_to, log.log_start_offset)
            log = log.truncated_fully_and_started_at(leader.log_start_offset)
            out.steps.append(Step(
                "truncate_fully", fetch_offset, last,
                f"Truncate fully and reset fetch offset from {replica_end} to the current "
                f"leader's start offset {leader.log_start_offset} because the local replica's "
                f"end offset is smaller than the current leader's start offsets.",
                leader.log_start_offset))
            fetch_offset = leader.log_start_offset
        else:
            fetch_offset = max(leader.log_start_offset, replica_end)
            out.steps.append(Step("reset", fetch_offset, last,
                                  f"Reset fetch offset from {replica_end} to the current local "
                                  f"replica's end offset {fetch_offset}", fetch_offset))
    else:  # pragma: no cover - every round shrinks the log or repeats a state
        out.stuck = True
    out.follower = log
    out.fetch_offset = fetch_offset
    return out
