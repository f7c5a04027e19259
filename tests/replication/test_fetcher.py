"""The follower's truncation protocol (:mod:`kafkalog.replication.fetcher`) against Kafka 4.2.

Scenarios ported from Kafka 4.2.0's tests (each test names the one it ports):

* ``core/src/test/scala/unit/kafka/server/AbstractFetcherThreadTest.scala``
* ``core/src/test/scala/unit/kafka/server/ReplicaFetcherThreadTest.scala``
* ``core/src/test/scala/unit/kafka/cluster/PartitionTest.scala`` (the leader's diverging-epoch
  check), plus the same check in ``FetchRequestTest``, ``ReplicaManagerTest`` and
  ``DelayedFetchTest``
* ``core/src/test/scala/unit/kafka/server/epoch/LeaderEpochFileCacheTest.scala`` (``endOffsetFor``;
  in 4.2 the file lives under ``core/``, not ``storage/``)

Translation rules. ``mkBatch(baseOffset, leaderEpoch, records...)`` becomes ``(base, epoch, n)``;
a sequence of them gives the log start (the first base offset, as ``PartitionState.apply`` does),
the log end offset (last base + its record count) and the epoch cache (an epoch starts at the base
offset of its first batch).

The Kafka tests run against ``MockLeaderEndPoint``/``MockFetcherThread``, which differ from the
production code that ``fetcher.py`` ports; the ports assert what the production code does and
keep the Kafka tests' final assertions, which agree:

* the mock's ``lookupEndOffsetForEpoch`` answers "undefined" for the log's latest epoch (the real
  ``LeaderEpochFileCache.endOffsetFor`` answers the log end offset) and, for an epoch below every
  known one, the *higher* epoch (the real one answers the requested epoch), so some intermediate
  rounds differ;
* ``MockFetcherThread.latestEpoch`` of an empty log is ``Some(0)`` unless ``forceTruncation``; a
  real empty ``UnifiedLog`` has no epoch, so it first truncates to its high watermark;
* the mock tests pass explicit initial fetch offsets (``initialFetchState(..., 3L, ...)`` for a
  one-record log); the real ``ReplicaManager.initialFetchOffset`` is the log end offset (or the
  high watermark without epochs), which is what :func:`follow` starts from.

Not ported (nothing of a (leader log, follower log) -> truncation outcome to express):

* threads, metrics, back-off: ``testMetricsRemovedOnShutdown``,
  ``testConsumerLagRemovedWithPartition``, ``testDelay``, ``testPartitionsInError``,
  ``testMaybeUpdateTopicIds``; in ``ReplicaFetcherThreadTest``:
  ``shouldSendLatestRequestVersionsByDefault``, ``shouldHandleExceptionFromBlockingSend``,
  ``testLagIsUpdatedWhenNoRecords``,
  ``shouldCatchExceptionFromBlockingSendWhenShuttingDownReplicaFetcherThread``,
  ``shouldUpdateReassignmentBytesInMetrics``,
  ``shouldNotUpdateReassignmentBytesInMetricsWhenNoReassignmentsInProgress``,
  ``testBuildFetch``, ``testLocalFetchCompletionIfHighWatermarkUpdated``;
* current-leader-epoch fencing (``FENCED_LEADER_EPOCH``/``UNKNOWN_LEADER_EPOCH``, not modelled):
  ``testFencedTruncation``, ``testFencedFetch``, ``testUnknownLeaderEpochInTruncation``,
  ``testUnknownLeaderEpochWhileFetching``, ``testFencedOffsetResetAfterOutOfRange``,
  ``testIgnoreFetchResponseWhenLeaderEpochChanged``,
  ``testParameterizedLeaderEpochChangeDuringFetchEpochsFromLeader``;
* partition removal / failure bookkeeping: ``testTruncateToHighWatermarkDuringRemovePartitions``,
  ``testTruncateToEpochEndOffsetsDuringRemovePartitions``, the second half of
  ``testTruncationOnFetchSkippedIfPartitionRemoved`` and of ``testTruncationSkippedIfNoEpochChange``
  (re-adding a partition with the same epoch), ``testFetcherThreadHandlingPartitionFailure*``,
  ``testTruncationThrowsExceptionIfLeaderReturnsPartitionsNotRequestedInFetchEpochs``;
* the append side (what is done with fetched records): ``testCorruptMessage``,
  ``testReplicateBatchesUpToLeaderEpoch`` (KAFKA-18723 batch filtering);
* tiered storage (``OFFSET_MOVED_TO_TIERED_STORAGE``, local log start): the six
  ``testEmptyFollowerFetchTieredStorageEnabled*`` tests;
* transient errors: the retry half of ``testRetryAfterUnknownLeaderEpochInLatestOffsetFetch``;
* the OffsetsForLeaderEpoch (pre-2.7, ``truncateOnFetch = false``) paths, which 4.2 no longer
  tests.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalog.leader_epoch import LeaderEpochFileCache, end_offset_for
from kafkalog.replication.fetcher import (
    OFFSET_OUT_OF_RANGE,
    DivergingEpoch,
    OffsetTruncationState,
    ReplicaLog,
    check_last_fetched_epoch,
    follow,
    leader_fetch_check,
    offset_truncation_state,
)

UNDEFINED = (-1, -1)


def mk_batch(base_offset: int, leader_epoch: int, records: int = 1) -> tuple[int, int, int]:
    """Kafka's ``mkBatch(baseOffset, leaderEpoch, records...)``, as offsets."""
    return base_offset, leader_epoch, records


def log_of(*batches: tuple[int, int, int], high_watermark: int | None = None) -> ReplicaLog:
    """A log holding ``batches`` (``PartitionState(log, ...)``: starts at the first batch)."""
    epochs: list[tuple[int, int]] = []
    for base, epoch, _ in batches:
        if not epochs or epochs[-1][0] != epoch:
            assert not epochs or (epoch > epochs[-1][0] and base > epochs[-1][1])
            epochs.append((epoch, base))
    start = batches[0][0] if batches else 0
    end = batches[-1][0] + batches[-1][2] if batches else 0
    return ReplicaLog(start, end, tuple(epochs), high_watermark)


def kinds(outcome) -> list[str]:
    return [s.kind for s in outcome.steps]


def truncations(outcome) -> list[int]:
    return [s.offset for s in outcome.steps if s.kind == "truncate"]


# ---------------------------------------------------------------------------------------------
# AbstractFetcherThreadTest
# ---------------------------------------------------------------------------------------------

def test_simple_fetch() -> None:
    # AbstractFetcherThreadTest.testSimpleFetch
    # An empty follower has no epoch (the mock says 0): it truncates to its high watermark 0
    # (a no-op) and fetches everything from offset 0.
    follower = log_of(high_watermark=0)
    leader = log_of(mk_batch(0, 0, 2), high_watermark=2)
    out = follow(leader, follower)
    assert kinds(out) == ["truncate", "fetch"]
    assert out.truncated_to is None and not out.truncated_fully
    assert out.fetch_offset == 0 and out.follower.log_end_offset == 0


def test_truncation() -> None:
    # AbstractFetcherThreadTest.testTruncation
    # No epoch in common: the leader names epochs the follower does not know twice
    # (truncationCompleted=false), then epoch 0, whose leader end (0) empties the log.
    follower = log_of(mk_batch(0, 0), mk_batch(1, 2), mk_batch(2, 4), high_watermark=0)
    leader = log_of(mk_batch(0, 1), mk_batch(1, 3), mk_batch(2, 5), high_watermark=2)
    assert follower.epochs == ((0, 0), (2, 1), (4, 2)) and follower.log_end_offset == 3
    out = follow(leader, follower)
    assert kinds(out) == ["diverging_epoch", "truncate"] * 3 + ["fetch"]
    assert [(s.last_fetched_epoch, s.fetch_offset) for s in out.steps
            if s.kind == "diverging_epoch"] == [(4, 3), (2, 2), (0, 1)]
    assert [s.message for s in out.steps if s.kind == "diverging_epoch"] == [
        "leader replied with diverging epoch 3 ending at offset 2 to a fetch at offset 3 with "
        "last fetched epoch 4",
        "leader replied with diverging epoch 1 ending at offset 1 to a fetch at offset 2 with "
        "last fetched epoch 2",
        "leader replied with diverging epoch 0 ending at offset 0 to a fetch at offset 1 with "
        "last fetched epoch 0",
    ]
    assert truncations(out) == [2, 1, 0]
    assert ["truncationCompleted=false" in s.message for s in out.steps
            if s.kind == "truncate"] == [True, True, False]
    # the log is emptied and refetched: leader and follower logs end up equal
    assert out.truncated_to == 0 and not out.truncated_fully and not out.stuck
    assert out.fetch_offset == 0
    assert out.follower == ReplicaLog(0, 0, (), 0)
    assert out.steps[-1].last_fetched_epoch is None


def test_truncate_to_high_watermark_if_leader_epoch_info_not_available() -> None:
    # AbstractFetcherThreadTest.testTruncateToHighWatermarkIfLeaderEpochInfoNotAvailable
    # latestEpoch is empty: OffsetTruncationState(highWatermark=2, completed) and fetch from 2.
    high_watermark = 2
    follower = ReplicaLog(0, 3, (), high_watermark)    # three batches, no epoch cache
    leader = log_of(mk_batch(0, 0), mk_batch(1, 2), mk_batch(2, 4))
    out = follow(leader, follower)
    assert kinds(out) == ["truncate", "fetch"]
    assert out.steps[0].offset == high_watermark
    assert out.steps[0].message == (
        "Truncating partition with OffsetTruncationState(offset=2, truncationCompleted=true) "
        "due to local high watermark 2")
    assert out.follower.log_end_offset == high_watermark
    assert out.fetch_offset == high_watermark
    assert out.truncated_to == high_watermark
    assert out.steps[-1].last_fetched_epoch is None


def test_truncation_skipped_if_no_epoch_change_first_round() -> None:
    # AbstractFetcherThreadTest.testTruncationSkippedIfNoEpochChange (first round only: the
    # re-added partition with the same epoch is fetcher-thread state)
    # A forced-truncation (epoch-less) empty follower truncates exactly once, then fetches.
    follower = log_of(high_watermark=0)
    leader = log_of(mk_batch(0, 1), mk_batch(1, 3), mk_batch(2, 5), high_watermark=2)
    out = follow(leader, follower)
    assert kinds(out).count("truncate") == 1
    assert kinds(out) == ["truncate", "fetch"] and out.fetch_offset == 0


def test_truncation_on_fetch_when_partition_owned() -> None:
    # AbstractFetcherThreadTest.testTruncationOnFetchSkippedIfPartitionRemoved (first half: the
    # partition is still owned; the second half is about removal)
    follower = log_of(mk_batch(0, 0), mk_batch(1, 2), mk_batch(2, 4), high_watermark=2)
    state = offset_truncation_state(follower, DivergingEpoch(4, 3), fetch_offset=6)
    assert state == OffsetTruncationState(3, True)
    truncated = follower.truncated_to(state.offset)
    assert truncated.log_end_offset == 3 and truncated.epochs == follower.epochs


@pytest.mark.parametrize("leader_epochs", [(), ((4, 0),)], ids=["empty-cache", "still-epoch-4"])
def test_follower_fetch_out_of_range_high(leader_epochs) -> None:
    # AbstractFetcherThreadTest.testFollowerFetchOutOfRangeHigh
    follower = log_of(mk_batch(0, 0), mk_batch(1, 2), mk_batch(2, 4), high_watermark=0)
    leader = log_of(mk_batch(0, 0), mk_batch(1, 2), mk_batch(2, 4), high_watermark=2)
    # first round: in sync, fetches at 3 with last fetched epoch 4
    first = follow(leader, follower)
    assert kinds(first) == ["fetch"] and first.fetch_offset == 3
    assert first.steps[0].last_fetched_epoch == 4
    # then the leader's log is cleared (offsets 0..0) without the follower truncating
    emptied = ReplicaLog(0, 0, leader_epochs, 0)
    out = follow(emptied, follower)
    if not leader_epochs:
        # the mock's path (and Kafka's when the leader's epoch cache is empty): "Could not
        # determine the end offset of the last fetched epoch" -> OffsetOutOfRange ->
        # fetchOffsetAndTruncate truncates to the leader's log end offset
        assert kinds(out) == ["offset_out_of_range", "truncate", "fetch"]
        assert out.steps[1].message == (
            "Reset fetch offset from 3 to current leader's latest offset 0")
    else:
        # a real leader still in epoch 4 knows epoch 4 ends at its log end offset 0
        assert kinds(out) == ["diverging_epoch", "truncate", "fetch"]
    assert out.follower.log_end_offset == 0
    assert out.follower.log_start_offset == 0
    assert out.follower.high_watermark == 0
    assert out.fetch_offset == 0 and out.truncated_to == 0


def _out_of_range_low():
    leader_epoch = 4
    follower = log_of(mk_batch(0, 0), high_watermark=0)
    leader = log_of(mk_batch(2, leader_epoch), high_watermark=2)
    return leader, follower


def test_follower_fetch_out_of_range_low() -> None:
    # AbstractFetcherThreadTest.testFollowerFetchOutOfRangeLow
    # The follower (log end 1) is behind the leader's log start 2: the leader knows epoch 0
    # ends at 2 but offset 1 is below its log start -> OffsetOutOfRange "regardless of whether
    # epochs are diverging" -> truncate fully and restart at the leader's log start.
    leader, follower = _out_of_range_low()
    assert leader_fetch_check(leader, 1, 0) == OFFSET_OUT_OF_RANGE
    out = follow(leader, follower)
    assert kinds(out) == ["offset_out_of_range", "truncate_fully", "fetch"]
    assert out.truncated_fully
    assert out.follower.log_start_offset == 2
    assert out.follower.log_end_offset == 2
    assert out.follower.epochs == ()
    assert out.fetch_offset == 2
    assert out.steps[-1].last_fetched_epoch is None


def test_retry_after_unknown_leader_epoch_in_latest_offset_fetch_outcome() -> None:
    # AbstractFetcherThreadTest.testRetryAfterUnknownLeaderEpochInLatestOffsetFetch (the
    # outcome; the first, failing ListOffsets call is a transient error, not modelled)
    leader, follower = _out_of_range_low()
    out = follow(leader, follower)
    assert out.follower == ReplicaLog(2, 2, (), 2, 2)
    assert out.fetch_offset == leader.log_start_offset


def test_diverging_epochs() -> None:
    # AbstractFetcherThreadTest.testDivergingEpochs
    follower = log_of(mk_batch(0, 0), mk_batch(1, 2), mk_batch(2, 4), high_watermark=0)
    leader = log_of(mk_batch(0, 0), mk_batch(1, 2), mk_batch(2, 5), high_watermark=2)
    out = follow(leader, follower)
    assert out.steps[0].last_fetched_epoch == 4            # verifyLastFetchedEpoch(Some(4))
    assert kinds(out) == ["diverging_epoch", "truncate", "fetch"]
    assert out.steps[0].offset == 2
    assert out.truncated_to == 2 and out.fetch_offset == 2
    assert out.follower.latest_epoch == 2                  # verifyLastFetchedEpoch(Some(2))
    assert out.steps[-1].last_fetched_epoch == 2


def test_truncate_on_fetch_does_not_process_partition_data() -> None:
    # AbstractFetcherThreadTest.testTruncateOnFetchDoesNotProcessPartitionData
    follower = log_of(mk_batch(0, 0), mk_batch(1, 0), mk_batch(2, 2), mk_batch(3, 4),
                      mk_batch(4, 4), mk_batch(5, 4), high_watermark=1)
    leader = log_of(mk_batch(0, 0), mk_batch(1, 0), mk_batch(2, 2), mk_batch(3, 5),
                    mk_batch(4, 5), high_watermark=4)
    assert follower.log_end_offset == 6
    out = follow(leader, follower)
    assert truncations(out) == [3]                         # truncateCalls == 1
    assert kinds(out) == ["diverging_epoch", "truncate", "fetch"]
    assert out.follower.log_end_offset == 3
    assert out.follower.high_watermark == 1                # not updated by the truncation
    assert out.fetch_offset == 3


def test_empty_follower_fetch_tiered_storage_disabled_leader_log_start_offset_zero() -> None:
    # AbstractFetcherThreadTest.testEmptyFollowerFetchTieredStorageDisabledLeaderLogStartOffsetZero
    follower = log_of(high_watermark=0)
    leader = log_of(mk_batch(0, 0), mk_batch(150, 0), mk_batch(199, 0), high_watermark=199)
    assert leader.log_end_offset == 200
    out = follow(leader, follower)
    assert kinds(out) == ["truncate", "fetch"]
    assert out.follower.log_start_offset == 0 and out.fetch_offset == 0
    assert not out.truncated_fully


def test_empty_follower_fetch_tiered_storage_disabled_leader_log_start_offset_non_zero() -> None:
    # AbstractFetcherThreadTest
    #     .testEmptyFollowerFetchTieredStorageDisabledLeaderLogStartOffsetNonZero
    # "Follower gets out-of-range error (no messages received), fetch offset is updated from 0
    # to 10"
    follower = log_of(high_watermark=0)
    leader = log_of(mk_batch(10, 0), mk_batch(150, 0), mk_batch(199, 0), high_watermark=199)
    out = follow(leader, follower)
    assert kinds(out) == ["truncate", "offset_out_of_range", "truncate_fully", "fetch"]
    assert out.follower.log_start_offset == 10
    assert out.follower.log_end_offset == 10
    assert out.fetch_offset == 10


# ---------------------------------------------------------------------------------------------
# ReplicaFetcherThreadTest
# ---------------------------------------------------------------------------------------------

def test_should_not_fetch_leader_epoch_on_first_fetch_with_truncate_on_fetch() -> None:
    # ReplicaFetcherThreadTest.shouldNotFetchLeaderEpochOnFirstFetchWithTruncateOnFetch
    # latestEpoch 5, endOffsetForEpoch(5) = (0, 5), high watermark 0; the leader's epoch 5 ends
    # at 1. The first request is a fetch carrying lastFetchedEpoch (no OffsetsForLeaderEpoch).
    follower = ReplicaLog(0, 0, ((5, 0),), 0)
    assert follower.end_offset_for(5) == (5, 0)
    leader = ReplicaLog(0, 1, ((5, 0),))
    out = follow(leader, follower)
    assert kinds(out) == ["fetch"]
    assert out.steps[0].last_fetched_epoch == 5 and out.fetch_offset == 0


# The mocked log: end offset 200, endOffsetForEpoch(4) = (149, 4), (3) = (129, 2).
_DIVERGING_NOT_KNOWN = ReplicaLog(0, 200, ((1, 0), (2, 119), (4, 129), (5, 149)), 115)


@pytest.mark.parametrize("end_offset", [140, 141], ids=["t1p0", "t1p1"])
def test_should_truncate_if_leader_replies_with_diverging_epoch_not_known_to_follower(
        end_offset) -> None:
    # ReplicaFetcherThreadTest.shouldTruncateIfLeaderRepliesWithDivergingEpochNotKnownToFollower
    log = _DIVERGING_NOT_KNOWN
    assert log.end_offset_for(4) == (4, 149) and log.end_offset_for(3) == (2, 129)
    # Loop 2: the leader's epoch 4 ends at 140/141, before the follower's (149)
    state = offset_truncation_state(log, DivergingEpoch(4, end_offset), 200)
    assert state == OffsetTruncationState(end_offset, True)
    log = log.truncated_to(state.offset)
    assert log.latest_epoch == 4                           # latestLogEpoch = Optional.of(4)
    # Loop 3: epoch 3 unknown to the follower: to the end of its epoch 2 (129), not complete
    state = offset_truncation_state(log, DivergingEpoch(3, end_offset - 10), log.log_end_offset)
    assert state == OffsetTruncationState(129, False)
    log = log.truncated_to(state.offset)
    assert log.log_end_offset == 129 and log.latest_epoch == 2
    # Loop 4 stubs endOffsetForEpoch(2) = (119, 1): a log that does not know epoch 2 (the
    # stubs are not one log: after loop 3 a real log does know epoch 2, see below)
    unknown_two = ReplicaLog(0, 129, ((1, 0), (3, 119)))
    assert unknown_two.end_offset_for(2) == (1, 119)
    state = offset_truncation_state(unknown_two, DivergingEpoch(2, end_offset - 20), 129)
    assert state == OffsetTruncationState(119, False)
    # the real log after loop 3 knows epoch 2 (ending at its log end 129): min(129, 120/121)
    state = offset_truncation_state(log, DivergingEpoch(2, end_offset - 20), 129)
    assert state == OffsetTruncationState(end_offset - 20, True)


def test_truncate_on_fetch_does_not_update_high_watermark() -> None:
    # ReplicaFetcherThreadTest.testTruncateOnFetchDoesNotUpdateHighWatermark
    # log end 150, high watermark 130, latest epoch 5, endOffsetForEpoch(4) = (149, 4); the
    # leader (high watermark 160) answers diverging epoch 4 ending at 140.
    follower = ReplicaLog(0, 150, ((4, 0), (5, 149)), 130)
    assert follower.end_offset_for(4) == (4, 149)
    assert offset_truncation_state(follower, DivergingEpoch(4, 140), 150) == \
        OffsetTruncationState(140, True)
    leader = ReplicaLog(0, 160, ((4, 0), (6, 140)), 160)
    assert leader_fetch_check(leader, 150, 5) == DivergingEpoch(4, 140)
    out = follow(leader, follower)
    assert truncations(out) == [140]                       # truncateTo(140, false) once
    assert out.follower.log_end_offset == 140
    assert out.follower.high_watermark == 130              # maybeUpdateHighWatermark not called
    assert out.fetch_offset == 140


# ---------------------------------------------------------------------------------------------
# The leader's side: Partition.readRecords
# ---------------------------------------------------------------------------------------------

# PartitionTest.testLastFetchedOffsetValidation: appends in epochs 0 (2 records), 3 (3 + 3),
# 4 (5), 7 (1), 9 (3), then the log leads in epoch 10 from its log end offset 17.
_VALIDATION_LOG = ReplicaLog(0, 17, ((0, 0), (3, 2), (4, 8), (7, 13), (9, 14)))


def test_last_fetched_offset_validation() -> None:
    # PartitionTest.testLastFetchedOffsetValidation
    leader = _VALIDATION_LOG.as_leader(10)
    assert leader.epochs[-1] == (10, 17)

    def read(last_fetched_epoch: int, fetch_offset: int, log: ReplicaLog = leader):
        return leader_fetch_check(log, fetch_offset, last_fetched_epoch)

    assert read(2, 5) == DivergingEpoch(0, 2)
    assert read(0, 4) == DivergingEpoch(0, 2)
    assert read(6, 6) == DivergingEpoch(4, 13)
    assert read(5, 9) == DivergingEpoch(4, 13)
    assert read(10, 18) == DivergingEpoch(10, 17)
    assert read(0, 2) is None
    assert read(7, 14) is None
    assert read(9, 17) is None
    assert read(10, 17) is None
    # Reads from epochs larger than we know about should cause an out of range error
    assert read(11, 5) == OFFSET_OUT_OF_RANGE

    # Move log start offset to the middle of epoch 3: truncateFromStart(5) moves the last epoch
    # starting at or before 5 (epoch 3) to start at 5
    moved = ReplicaLog(5, 17, ((3, 5), (4, 8), (7, 13), (9, 14), (10, 17)))
    assert moved.epochs == _truncate_from_start(leader.epochs, 5)
    assert read(2, 8, moved) == DivergingEpoch(2, 5)
    assert read(0, 5, moved) is None
    assert read(3, 5, moved) is None
    assert read(0, 0, moved) == OFFSET_OUT_OF_RANGE

    # Fetch offset lower than start offset should throw OffsetOutOfRangeException
    moved = ReplicaLog(10, 17, ((4, 10), (7, 13), (9, 14), (10, 17)))
    assert moved.epochs == _truncate_from_start(leader.epochs, 10)
    assert read(5, 6, moved) == OFFSET_OUT_OF_RANGE        # diverging
    assert read(3, 6, moved) == OFFSET_OUT_OF_RANGE        # not diverging


def test_make_leader_updates_epoch_cache() -> None:
    # PartitionTest.testMakeLeaderUpdatesEpochCache
    log = ReplicaLog(0, 4, ((0, 0), (5, 2)))
    leader = log.as_leader(8)
    assert leader.end_offset_for(8) == (8, 4)


def test_fetch_request_last_fetched_epoch_validation() -> None:
    # FetchRequestTest.testLastFetchedEpochValidation: 100 records in the first epoch, 100 in
    # the second; a fetch in the middle of the second epoch with the first as last fetched
    first_epoch, second_epoch = 0, 1
    leader = ReplicaLog(0, 200, ((first_epoch, 0), (second_epoch, 100)))
    fetch_offset = 200 + (200 - 100) // 2
    assert leader_fetch_check(leader, fetch_offset, first_epoch) == \
        DivergingEpoch(first_epoch, 100)


def test_follower_state_not_updated_if_log_read_fails() -> None:
    # ReplicaManagerTest.testFollowerStateNotUpdatedIfLogReadFails (the diverging read): the
    # leader appended 5 records in epoch 5
    leader_epoch = 5
    leader = ReplicaLog(0, 5, ((leader_epoch, 0),))
    assert leader_fetch_check(leader, 0, None) is None
    assert leader_fetch_check(leader, 3, leader_epoch - 1) == DivergingEpoch(leader_epoch - 1, 0)


def test_delayed_fetch_diverging_epoch() -> None:
    # DelayedFetchTest.testDivergingEpoch: lastOffsetForLeaderEpoch(9) = (9, fetchOffset - 1)
    assert check_last_fetched_epoch((9, 499), 500, 9, 0) == DivergingEpoch(9, 499)
    leader = ReplicaLog(0, 500, ((9, 0), (10, 499)))
    assert leader.end_offset_for(9) == (9, 499)
    assert leader_fetch_check(leader, 500, 9) == DivergingEpoch(9, 499)


# ---------------------------------------------------------------------------------------------
# AbstractFetcherThread.getOffsetTruncationState: the branches of its doc comment
# ---------------------------------------------------------------------------------------------

def test_offset_truncation_state_branches() -> None:
    follower = ReplicaLog(0, 30, ((2, 0), (4, 10), (6, 20)))
    # "the leader replied with undefined epoch offset": the current fetch offset
    assert offset_truncation_state(follower, DivergingEpoch(3, -1), 25) == \
        OffsetTruncationState(25, True)
    # "valid offset but undefined leader epoch" (OffsetForLeaderEpoch v0): min(leader, LEO)
    assert offset_truncation_state(follower, DivergingEpoch(-1, 12), 30) == \
        OffsetTruncationState(12, True)
    assert offset_truncation_state(follower, DivergingEpoch(-1, 40), 30) == \
        OffsetTruncationState(30, True)
    # "leader epoch not known to the follower": end of the largest smaller one, ask again
    assert offset_truncation_state(follower, DivergingEpoch(5, 18), 30) == \
        OffsetTruncationState(20, False)
    # "otherwise min(leader's offset, follower's end for that epoch, follower's LEO)"
    assert offset_truncation_state(follower, DivergingEpoch(4, 15), 30) == \
        OffsetTruncationState(15, True)
    assert offset_truncation_state(follower, DivergingEpoch(4, 25), 30) == \
        OffsetTruncationState(20, True)
    # an epoch below every one the follower tracks: endOffsetFor answers the requested epoch
    # with the start of the first one, so the follower truncates to min(that, leader's offset)
    assert offset_truncation_state(follower, DivergingEpoch(1, 7), 30) == \
        OffsetTruncationState(0, True)
    # "the follower was not tracking leader epochs" (empty cache): the leader's offset only
    bare = ReplicaLog(0, 30, ())
    assert offset_truncation_state(bare, DivergingEpoch(4, 15), 30) == \
        OffsetTruncationState(15, True)


# ---------------------------------------------------------------------------------------------
# LeaderEpochFileCacheTest: endOffsetFor
# ---------------------------------------------------------------------------------------------

# (Kafka test, cache.assign(...) calls, the resulting entries, [(epoch, LEO, expected), ...])
_END_OFFSET_FOR_CASES = [
    ("shouldAddEpochAndMessageOffsetToCache", [(2, 10)], [(2, 10)], [(2, 11, (2, 11))]),
    ("shouldReturnLogEndOffsetIfLatestEpochRequested", [(2, 11), (2, 12)], [(2, 11)],
     [(2, 14, (2, 14))]),
    ("shouldReturnUndefinedOffsetIfUndefinedEpochRequested", [(2, 11), (3, 12)],
     [(2, 11), (3, 12)], [(-1, 0, UNDEFINED)]),
    ("shouldReturnUnsupportedIfNoEpochRecorded", [], [], [(0, 0, UNDEFINED)]),
    ("shouldReturnUnsupportedIfNoEpochRecordedAndUndefinedEpochRequested", [], [],
     [(-1, 73, UNDEFINED)]),
    ("shouldReturnFirstEpochIfRequestedEpochLessThanFirstEpoch", [(5, 11), (6, 12), (7, 13)],
     [(5, 11), (6, 12), (7, 13)], [(4, 0, (4, 11))]),
    ("shouldTruncateIfMatchingEpochButEarlierStartingOffset",
     [(5, 11), (6, 12), (7, 13), (7, 12)], [(5, 11), (7, 12)],
     [(5, 0, (5, 12)), (6, 0, (5, 12))]),
    ("shouldGetFirstOffsetOfSubsequentEpochWhenOffsetRequestedForPreviousEpoch",
     [(1, 11), (1, 12), (2, 13), (2, 14), (3, 15), (3, 16)], [(1, 11), (2, 13), (3, 15)],
     [(2, 17, (2, 15))]),
    ("shouldReturnNextAvailableEpochIfThereIsNoExactEpochForTheOneRequested",
     [(0, 10), (2, 13), (4, 17)], [(0, 10), (2, 13), (4, 17)],
     [(1, 0, (0, 13)), (2, 0, (2, 17)), (3, 0, (2, 17))]),
    ("shouldReturnInvalidOffsetIfEpochIsRequestedWhichIsNotCurrentlyTracked", [(2, 100)],
     [(2, 100)], [(3, 100, UNDEFINED)]),
    ("shouldSupportEpochsThatDoNotStartFromZero", [(2, 6)], [(2, 6)], [(2, 7, (2, 7))]),
    ("shouldEnforceMonotonicallyIncreasingEpochs", [(1, 5), (2, 6), (1, 7)], [(1, 7)],
     [(1, 8, (1, 8)), (2, 8, UNDEFINED)]),
    ("shouldIncreaseAndTrackEpochsAsLeadersChangeManyTimes/1", [(0, 0), (1, 0)], [(1, 0)],
     [(1, 0, (1, 0)), (0, 0, (0, 0)), (1, 5, (1, 5)), (0, 5, (0, 0))]),
    ("shouldIncreaseAndTrackEpochsAsLeadersChangeManyTimes/2", [(0, 0), (1, 0), (2, 5)],
     [(1, 0), (2, 5)], [(2, 10, (2, 10)), (1, 10, (1, 5)), (0, 10, (0, 0))]),
    ("shouldIncreaseAndTrackEpochsAsFollowerReceivesManyMessages/1",
     [(0, 0), (0, 1), (0, 2)], [(0, 0)], [(0, 3, (0, 3))]),
    ("shouldIncreaseAndTrackEpochsAsFollowerReceivesManyMessages/2",
     [(0, 0), (0, 1), (0, 2), (1, 3), (1, 4), (1, 5)], [(0, 0), (1, 3)], [(1, 6, (1, 6))]),
    ("shouldIncreaseAndTrackEpochsAsFollowerReceivesManyMessages/3",
     [(0, 0), (0, 1), (0, 2), (1, 3), (1, 4), (1, 5), (2, 6), (2, 7), (2, 8)],
     [(0, 0), (1, 3), (2, 6)], [(2, 9, (2, 9)), (0, 9, (0, 3)), (1, 9, (1, 6))]),
    ("shouldFetchEndOffsetOfEmptyCache", [], [], [(7, 0, UNDEFINED)]),
]


@pytest.mark.parametrize("name,assigns,entries,queries", _END_OFFSET_FOR_CASES,
                         ids=[c[0] for c in _END_OFFSET_FOR_CASES])
def test_leader_epoch_file_cache_end_offset_for(tmp_path, name, assigns, entries,
                                                queries) -> None:
    # LeaderEpochFileCacheTest.<name>
    cache = LeaderEpochFileCache(tmp_path / "leader-epoch-checkpoint")
    for epoch, start in assigns:
        cache.assign(epoch, start)
    assert cache.entries == entries
    for epoch, log_end_offset, expected in queries:
        assert end_offset_for(entries, epoch, log_end_offset) == expected, (epoch, log_end_offset)
        assert cache.end_offset_for(epoch, log_end_offset) == expected
        assert ReplicaLog(0, log_end_offset, tuple(entries)).end_offset_for(epoch) == expected


# ---------------------------------------------------------------------------------------------
# ReplicaLog.as_leader: Partition.makeLeader -> assignEpochStartOffset(epoch, logEndOffset)
# ---------------------------------------------------------------------------------------------

# A log that led in epoch 3 without writing (its cache holds (3, LEO)) and leads again in 5.
# A follower that wrote epoch 4 meanwhile (a plausible history: 1 -> 3 (empty) -> 4 -> 5).
_PHANTOM_LEADER = ReplicaLog(0, 2, ((1, 0), (3, 2)))
_EPOCH_4_FOLLOWER = ReplicaLog(0, 3, ((1, 0), (4, 2)))


def test_as_leader_replaces_an_epoch_assigned_at_the_log_end() -> None:
    # LeaderEpochFileCache.assign (maybeTruncateNonMonotonicEntries) removes the entries
    # whose start offset is >= the new one's before adding it
    assert _PHANTOM_LEADER.as_leader(5).epochs == ((1, 0), (5, 2))


def test_as_leader_epoch_assigned_at_the_log_end_does_not_change_the_outcome() -> None:
    # What Kafka's leader (cache ((1, 0), (5, 2))) does: diverging epoch 1 ending at 2, done.
    kafka_leader = ReplicaLog(0, 2, ((1, 0), (5, 2)))
    expected = follow(kafka_leader, _EPOCH_4_FOLLOWER)
    assert kinds(expected) == ["diverging_epoch", "truncate", "fetch"]
    assert expected.steps[0].offset == 2 and "leaderEpoch=1," in expected.steps[1].message
    out = follow(_PHANTOM_LEADER.as_leader(5), _EPOCH_4_FOLLOWER)
    assert (out.follower, out.fetch_offset, out.truncated_to) == \
        (expected.follower, expected.fetch_offset, expected.truncated_to)


# ---------------------------------------------------------------------------------------------
# Property: plausible histories
# ---------------------------------------------------------------------------------------------
#
# Three replicas (0 = the final leader, 1 = the final follower, 2 = any other broker) live
# through leadership terms with increasing epochs. In each term one replica leads: it assigns
# the epoch at its log end offset and appends 0..4 records in that epoch (a leader that writes
# nothing keeps the epoch entry at its log end, as Kafka's cache does). Every other replica is
# offline (unchanged) or follows: it ends up with its longest common prefix with the leader
# plus any further prefix of the leader's log (what it fetched before the term ended). Records
# are single-record batches: batch boundaries change neither offsets nor epoch caches.
#
# Kafka's guarantee with these histories (one leader per epoch, so an (offset, epoch) pair
# names one record, and equal pairs imply equal prefixes): a follower of the final leader keeps
# exactly its longest common prefix with the leader. Below the leader's log start Kafka cannot
# compare ("This may be inaccurate as there could have been epochs in between, but the point is
# that the data has already been removed from the log", LeaderEpochFileCache.endOffsetFor), so
# with log start offsets the property only covers offsets at or above the leader's log start.

def _entries(recs: list[int], at_end: int | None = None) -> tuple[tuple[int, int], ...]:
    out: list[tuple[int, int]] = []
    for offset, epoch in enumerate(recs):
        if not out or out[-1][0] != epoch:
            out.append((epoch, offset))
    if at_end is not None:
        out.append((at_end, len(recs)))
    return tuple(out)


def _common_prefix(a: list[int], b: list[int]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def _kafka_assign(entries, epoch: int, start: int):
    """``LeaderEpochFileCache.assign`` (isUpdateNeeded, maybeTruncateNonMonotonicEntries)."""
    entries = list(entries)
    if entries and entries[-1][0] == epoch and start >= entries[-1][1]:
        return tuple(entries)
    while entries and (entries[-1][0] >= epoch or entries[-1][1] >= start):
        entries.pop()
    return (*entries, (epoch, start))


def _truncate_from_start(entries, start: int):
    """``LeaderEpochFileCache.truncateFromStart``: the last entry at or before ``start`` is
    moved to ``start``."""
    removed = [e for e in entries if e[1] <= start]
    kept = [e for e in entries if e[1] > start]
    return tuple(([(removed[-1][0], start)] if removed else []) + kept)


@st.composite
def histories(draw):
    recs: list[list[int]] = [[], [], []]
    at_end: list[int | None] = [None, None, None]
    epoch = draw(st.integers(0, 2))
    for _ in range(draw(st.integers(1, 7))):
        epoch += draw(st.integers(1, 3))
        lead = draw(st.integers(0, 2))
        written = draw(st.integers(0, 4))
        if written:
            recs[lead] = recs[lead] + [epoch] * written
            at_end[lead] = None
        else:
            at_end[lead] = epoch
        for r in range(3):
            if r == lead or not draw(st.booleans()):
                continue
            common = _common_prefix(recs[r], recs[lead])
            recs[r] = recs[lead][:draw(st.integers(common, len(recs[lead])))]
            at_end[r] = None
    return recs, at_end, epoch


@settings(max_examples=1500, deadline=None)
@given(histories())
def test_follower_keeps_exactly_the_common_prefix(history) -> None:
    recs, at_end, max_epoch = history
    leader_recs, follower_recs = recs[0], recs[1]
    leader_log = ReplicaLog(0, len(leader_recs), _entries(leader_recs, at_end[0]))
    follower = ReplicaLog(0, len(follower_recs), _entries(follower_recs, at_end[1]))
    leader = leader_log.as_leader(max_epoch + 1)
    out = follow(leader, follower)
    common = _common_prefix(leader_recs, follower_recs)

    assert not out.stuck and not out.truncated_fully
    assert out.steps[-1].kind == "fetch"
    # a prefix of the leader, and nothing in common removed
    assert out.follower.log_end_offset == common
    assert out.fetch_offset == common
    assert out.truncated_to == (None if common == len(follower_recs) else common)
    assert all(s.offset >= common for s in out.steps if s.kind == "truncate")
    # the epoch cache matches the kept records; an epoch this replica assigned as leader
    # without writing may stay at the log end until the next append replaces it (Kafka only
    # drops it when truncateTo is called)
    assert tuple(e for e in out.follower.epochs if e[1] < common) == \
        _entries(leader_recs[:common])
    assert all(e[1] == common for e in out.follower.epochs if e[1] >= common)
    # the same offsets as under a leader whose cache Kafka's assign built (as_leader keeps an
    # epoch the leader assigned at its log end: see test_as_leader_*; the rounds, and whether
    # such an entry of the follower's is dropped, can differ, the offsets do not)
    kafka_leader = ReplicaLog(0, len(leader_recs),
                              _kafka_assign(leader_log.epochs, max_epoch + 1, len(leader_recs)))
    kafka_out = follow(kafka_leader, follower)
    assert (kafka_out.follower.log_start_offset, kafka_out.follower.log_end_offset,
            kafka_out.fetch_offset, kafka_out.truncated_to) == \
        (out.follower.log_start_offset, out.follower.log_end_offset, out.fetch_offset,
         out.truncated_to)
    assert tuple(e for e in kafka_out.follower.epochs if e[1] < common) == \
        tuple(e for e in out.follower.epochs if e[1] < common)


@settings(max_examples=1500, deadline=None)
@given(histories(), st.data())
def test_follower_consistent_above_the_leaders_log_start(history, data) -> None:
    recs, at_end, max_epoch = history
    leader_recs, follower_recs = recs[0], recs[1]
    # retention / DeleteRecords moved the log starts (truncateFromStart on the caches)
    start = data.draw(st.integers(0, len(leader_recs)), label="leader log start")
    f_start = data.draw(st.integers(0, len(follower_recs)), label="follower log start")
    f_segment = data.draw(st.integers(0, f_start), label="follower first segment base")
    leader = ReplicaLog(start, len(leader_recs),
                        _truncate_from_start(_entries(leader_recs, at_end[0]), start))
    leader = leader.as_leader(max_epoch + 1)
    follower = ReplicaLog(f_start, len(follower_recs),
                          _truncate_from_start(_entries(follower_recs, at_end[1]), f_start),
                          None, f_segment)
    out = follow(leader, follower)
    common = _common_prefix(leader_recs, follower_recs)
    kept = out.follower

    assert not out.stuck and out.steps[-1].kind == "fetch"
    assert out.fetch_offset == kept.log_end_offset
    assert start <= out.fetch_offset <= len(leader_recs)
    # what the follower keeps at or above the leader's log start is the leader's
    assert all(follower_recs[o] == leader_recs[o]
               for o in range(max(start, kept.log_start_offset), kept.log_end_offset))
    if common >= start:
        # and nothing the two share there is removed
        assert kept.log_end_offset >= common
        if f_start <= common:
            assert kept.log_end_offset == common and not out.truncated_fully
