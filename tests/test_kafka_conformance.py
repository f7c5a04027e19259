"""Rules of Apache Kafka's log layer, each checked against the engine.

Every test states one rule with its source in apache/kafka (storage module, 4.x code line;
``storage/src/main/java/org/apache/kafka/storage/internals/...``, shortened to ``storage/...``
below) and would fail on the behaviour the engine had before the rule was checked.
"""

from __future__ import annotations

from pathlib import Path

from kafkalog import Record
from kafkalog.clock import ManualClock
from kafkalog.config import LONG_MAX, LogConfig
from kafkalog.files import CLEAN_SHUTDOWN_FILE
from kafkalog.log import Log
from kafkalog.records.batch import iter_batches
from kafkalog.records.builder import encode_batch

T0 = 1_700_000_000_000


def _recs(n: int, ts: int = T0, size: int = 20) -> list[Record]:
    return [Record(None, b"%d" % i + b"x" * size, ts + i) for i in range(n)]


def _bases(d: Path) -> list[int]:
    return sorted(int(p.name.split(".")[0]) for p in d.glob("*.log"))


# -- appends (UnifiedLog.append) ----------------------------------------------------------------


def test_follower_append_does_not_check_max_message_bytes(tmp_path: Path) -> None:
    """Kafka: ``UnifiedLog.appendAsFollower`` calls ``append(..., ignoreRecordSize=true, ...)``
    (storage/.../log/UnifiedLog.java), so ``analyzeAndValidateRecords`` skips the
    ``max.message.bytes`` check for replicated batches: a follower stores whatever the leader
    accepted. Only the leader path rejects a batch above ``max.message.bytes``."""
    cfg = LogConfig(max_message_bytes=200)
    big = encode_batch(_recs(1, size=300), base_offset=0)
    assert len(big) > 200
    with Log.open(tmp_path, cfg, clock=ManualClock(T0)) as log:
        info = log.append_batches(big)
        assert (info.first_offset, info.last_offset, log.log_end_offset) == (0, 0, 1)
        big2 = encode_batch(_recs(2, size=300), base_offset=1)
        log.append_batches(big2)
        assert log.log_end_offset == 3
        assert [r.offset for r in log.records()] == [0, 1, 2]


def test_follower_append_never_overfills_a_segment(tmp_path: Path) -> None:
    """Kafka: ``UnifiedLog.append`` throws ``RecordBatchTooLargeException`` when one append is
    larger than ``segment.bytes``, then ``maybeRoll``/``LogSegment.shouldRoll`` rolls when
    ``size > segment.bytes - messagesSize``; so a segment never holds more than
    ``segment.bytes`` unless one batch alone is bigger. ``append_batches`` splits its input into
    several Kafka appends; each must fit a segment."""
    cfg = LogConfig(segment_bytes=1000, segment_ms=LONG_MAX)
    data = b"".join(encode_batch(_recs(2), base_offset=2 * i) for i in range(40))
    assert len(data) > 4 * 1000
    with Log.open(tmp_path, cfg, clock=ManualClock(T0)) as log:
        log.append_batches(data)
        assert log.log_end_offset == 80
        assert len(log.segments) > 4
        assert all(s.size <= 1000 for s in log.segments)
        assert [r.offset for r in log.records()] == list(range(80))


def test_append_with_lower_leader_epoch_truncates_the_epoch_cache(tmp_path: Path) -> None:
    """Kafka: ``UnifiedLog.append`` calls ``assignEpochStartOffset(batch.partitionLeaderEpoch,
    batch.baseOffset)`` for every v2 batch appended (storage/.../log/UnifiedLog.java), and
    ``LeaderEpochFileCache.assign`` (storage/.../epoch/LeaderEpochFileCache.java) removes the
    entries with an epoch >= the new one (``maybeTruncateNonMonotonicEntries``). Only recovery
    (``LogSegment.recover``) skips epochs that are not above the latest."""
    with Log.open(tmp_path, clock=ManualClock(T0)) as log:
        log.append(_recs(1), partition_leader_epoch=5)
        log.append(_recs(1), partition_leader_epoch=7)
        assert log.leader_epoch_entries == [(5, 0), (7, 1)]
        log.append_batches(encode_batch(_recs(1), base_offset=2, partition_leader_epoch=6))
        assert log.leader_epoch_entries == [(5, 0), (6, 2)]
        log.append(_recs(1), partition_leader_epoch=3)
        assert log.leader_epoch_entries == [(3, 3)]
    text = (tmp_path / "leader-epoch-checkpoint").read_text().split("\n")
    assert text[:3] == ["0", "1", "3 3"]


def test_legacy_append_clears_the_leader_epoch_cache(tmp_path: Path) -> None:
    """Kafka: ``UnifiedLog.append``, for a batch with magic < 2: "In partial upgrade scenarios,
    we may get a temporary regression to the message format ... we clear the epoch cache"
    (``leaderEpochCache.clearAndFlush()`` when it is not empty)."""
    with Log.open(tmp_path, clock=ManualClock(T0)) as log:
        log.append(_recs(2), partition_leader_epoch=4)
        assert log.leader_epoch_entries == [(4, 0)]
        log.append_batches(encode_batch(_recs(1), base_offset=2, magic=1))
        assert log.leader_epoch_entries == []
        log.append(_recs(1), partition_leader_epoch=4)
        assert log.leader_epoch_entries == [(4, 3)]


# -- ListOffsets special timestamps (UnifiedLog.fetchOffsetByTimestamp) -------------------------


def test_max_timestamp_gives_the_offset_of_the_largest_timestamp(tmp_path: Path) -> None:
    """Kafka: ``UnifiedLog.fetchOffsetByTimestamp`` with ``ListOffsetsRequest.MAX_TIMESTAMP``
    (-3, KIP-734) takes the first segment with the largest ``maxTimestampSoFar``, looks up the
    batch whose ``maxTimestamp`` equals it and answers ``batch.offsetOfMaxTimestamp()`` (the
    first record carrying that timestamp). ``EARLIEST_LOCAL_TIMESTAMP`` (-4) without remote
    storage is the log start offset; ``LATEST_TIERED_TIMESTAMP`` (-5) and
    ``EARLIEST_PENDING_UPLOAD_TIMESTAMP`` (-6) without remote storage answer offset -1."""
    cfg = LogConfig(segment_bytes=400, segment_ms=LONG_MAX)
    with Log.open(tmp_path, cfg, clock=ManualClock(T0)) as log:
        log.append([Record(None, b"a", T0 + 5), Record(None, b"b", T0 + 1)])
        log.append([Record(None, b"c", T0 + 2), Record(None, b"d", T0 + 90),
                    Record(None, b"e", T0 + 90)])  # offsets 2..4, max at offset 3
        for i in range(8):
            log.append([Record(None, b"f" * 50, T0 + 10 + i)])
        assert len(log.segments) > 2
        log.delete_records_before(1)
        assert log.offset_for_timestamp(-3) == 3
        assert log.offset_for_timestamp(-4) == 1
        assert log.offset_for_timestamp(-5) == -1
        assert log.offset_for_timestamp(-6) == -1
        assert log.offsets_for_timestamps([-3, -4, -2, -1, -5]) == [3, 1, 1, 13, -1]


# -- roll (LocalLog.roll) -------------------------------------------------------------------------


def test_roll_deletes_stray_files_of_the_new_segment(tmp_path: Path) -> None:
    """Kafka: ``LocalLog.roll`` (storage/.../log/LocalLog.java): "Newly rolled segment file
    {} already exists; deleting it first" for the new offset's ``.log``, ``.index``,
    ``.timeindex`` and ``.txnindex`` before ``LogSegment.open``."""
    with Log.open(tmp_path, clock=ManualClock(T0)) as log:
        log.append(_recs(3))
        stray_log = tmp_path / "00000000000000000003.log"
        stray_log.write_bytes(b"\x01" * 100)
        (tmp_path / "00000000000000000003.index").write_bytes(b"\x02" * 64)
        seg = log.roll()
        assert seg.base_offset == 3 and seg.size == 0
        log.append(_recs(2))
        assert [r.offset for r in log.records()] == [0, 1, 2, 3, 4]
        assert [b.base_offset for b in iter_batches(stray_log.read_bytes())] == [3]
    with Log.open(tmp_path, clock=ManualClock(T0)) as log:
        assert log.log_end_offset == 5


# -- loading (LogLoader.load / recoverLog) --------------------------------------------------------


def _three_segments(d: Path) -> tuple[LogConfig, list[tuple[int, bytes]]]:
    cfg = LogConfig(segment_bytes=600, segment_ms=LONG_MAX, index_interval_bytes=100)
    with Log.open(d, cfg, clock=ManualClock(T0)) as log:
        for i in range(12):
            log.append(_recs(2, T0 + i), partition_leader_epoch=i // 4)
        assert len(log.segments) >= 3
        return cfg, [(r.offset, r.value) for r in log.records()]


def test_segment_recovered_for_a_missing_index_does_not_delete_later_segments(
        tmp_path: Path) -> None:
    """Kafka: ``LogLoader.loadSegmentFiles`` recovers a segment whose offset index is missing
    (``NoSuchFileException`` from ``sanityCheck``); ``recoverLog`` then recovers every segment
    from the recovery point again, and deletes the later segments only when *that* recovery
    truncates bytes (``truncatedBytes > 0``). A second recovery of an already-recovered segment
    truncates nothing, so the later segments stay."""
    cfg, expected = _three_segments(tmp_path)
    bases = _bases(tmp_path)
    first = tmp_path / f"{bases[0]:020d}.log"
    with open(first, "ab") as f:
        f.write(b"\x00\x00\x00\x00\x00\x00\x00\x63\x00\x00\x00\x40\x00")  # torn batch header
    first.with_suffix(".index").unlink()
    (tmp_path / CLEAN_SHUTDOWN_FILE).unlink()
    with Log.open(tmp_path, cfg, clock=ManualClock(T0), recovery_point=0) as log:
        assert [s.base_offset for s in log.segments] == bases
        assert [(r.offset, r.value) for r in log.records()] == expected
        assert log.loaded.deleted_segments == []


def test_log_end_below_log_start_clears_the_epoch_cache(tmp_path: Path) -> None:
    """Kafka: ``LogLoader.deleteSegmentsIfLogStartGreaterThanLogEnd`` deletes every segment,
    calls ``leaderEpochCache.clearAndFlush()`` and returns no log end offset, so ``recoverLog``
    answers ``min(recoveryPointCheckpoint, logEndOffset)`` as the recovery point even after a
    clean shutdown."""
    cfg, _ = _three_segments(tmp_path)
    with Log.open(tmp_path, cfg, clock=ManualClock(T0)) as log:
        leo = log.log_end_offset
        assert log.leader_epoch_entries
    with Log.open(tmp_path, cfg, clock=ManualClock(T0), log_start_offset=1000) as log:
        assert (log.log_start_offset, log.log_end_offset) == (1000, 1000)
        assert log.leader_epoch_entries == []
        assert log.recovery_point == leo
        assert _bases(tmp_path) == [1000]


def test_load_truncates_the_epoch_cache_from_the_checkpointed_log_start(tmp_path: Path) -> None:
    """Kafka: ``LogLoader.load`` calls ``leaderEpochCache.truncateFromStartAsyncFlush(
    logStartOffsetCheckpoint)`` (the checkpointed value, not the first segment's base offset),
    while the loaded log start offset is ``max(checkpoint, first base offset)``."""
    cfg, _ = _three_segments(tmp_path)
    with Log.open(tmp_path, cfg, clock=ManualClock(T0)) as log:
        epochs = log.leader_epoch_entries
    bases = _bases(tmp_path)
    for p in tmp_path.glob(f"{bases[0]:020d}.*"):
        p.unlink()  # the oldest segment removed behind the log's back
    with Log.open(tmp_path, cfg, clock=ManualClock(T0)) as log:
        assert log.log_start_offset == bases[1]
        assert log.leader_epoch_entries == epochs


# -- reads (FileRecords.searchForOffsetWithSize via LogSegment.translateOffset) -----------------


def test_reading_up_to_an_offset_inside_a_legacy_compressed_entry(tmp_path: Path) -> None:
    """Kafka: ``LogSegment.translateOffset`` -> ``FileRecords.searchForOffsetWithSize`` answers
    the first batch whose *last* offset is >= the target, with ``batch.baseOffset()``; for a
    legacy compressed wrapper that is its first inner offset (the wrapper's offset field holds
    the last one). A read bounded by an end offset inside such an entry must keep the entry's
    records below the bound."""
    with Log.open(tmp_path, clock=ManualClock(T0)) as log:
        for base in (0, 5):
            log.append_batches(encode_batch(_recs(5, T0 + base), base_offset=base, magic=1,
                                            compression="gzip"))
        assert [r.offset for r in log.records(0, 7)] == list(range(7))
        assert [r.offset for r in log.records(6, 8)] == [6, 7]
        assert log.read_table(3, 7).column("offset").to_pylist() == [3, 4, 5, 6]
        # v2 batches: the batch starting at the bound is left out of the range
        log.append(_recs(3))
        assert [r.offset for r in log.records(9, 11)] == [9, 10]


def test_timestamp_search_past_a_segment_that_answers_nothing(tmp_path: Path) -> None:
    """Kafka: ``UnifiedLog.searchOffsetInLocalLog`` returns ``findOffsetByTimestamp`` of the
    *first* segment whose ``largestTimestamp()`` is >= the target, even when that finds
    nothing; ``largestTimestamp()`` is the ``.log`` mtime when the segment has no max
    timestamp (its time index was lost and recreated empty at load). Deliberate deviation
    (kept from tests/reliability/test_regressions.py, damage resilience): the search goes on
    to later segments. ``offsets_for_timestamps`` must answer as ``offset_for_timestamp``
    (it answered None, Kafka's way, while the single lookup went on)."""
    import os

    cfg = LogConfig(segment_bytes=300, segment_ms=LONG_MAX)
    with Log.open(tmp_path, cfg, clock=ManualClock(T0)) as log:
        for i in range(6):
            log.append(_recs(2, T0 + 100 * i))
        assert len(log.segments) >= 3
        first = log.segments[0]
        later = log.segments[1].base_offset
        target = T0 + 100 * ((later - 1) // 2) + 2  # above every timestamp of segment 0
        assert log.offset_for_timestamp(target) == later
    first_log = tmp_path / f"{first.base_offset:020d}.log"
    first_log.with_suffix(".timeindex").unlink()
    future_s = (T0 + 10**9) / 1000
    os.utime(first_log, (future_s, future_s))
    with Log.open(tmp_path, cfg, clock=ManualClock(T0)) as log:
        assert log.segments[0].largest_timestamp == int(future_s * 1000)
        assert log.offset_for_timestamp(target) == later
        assert log.offsets_for_timestamps([T0 + 50, target, T0 + 500]) == [2, later, 10]


def test_batched_timestamp_lookup_equals_single_lookups(tmp_path) -> None:
    """``offsets_for_timestamps`` answers exactly as ``offset_for_timestamp`` per target,
    for a writer and for a read-only reader in another process, including timestamps below
    Kafka's special values (-7: an ordinary search in ``UnifiedLog.fetchOffsetByTimestamp``)."""
    from kafkalog import Log, LogConfig, Record

    path = tmp_path / "t-0"
    log = Log.open(path, LogConfig(segment_bytes=600))
    for i in range(40):
        log.append([Record(None, b"v" * 20, 1000 + 10 * i)])
    log.flush()
    targets = [-7, -6, -5, -4, -3, -2, -1, 0, 999, 1000, 1005, 1200, 1390, 1391, 5000]
    reader = Log.open(path, read_only=True)
    try:
        for lg in (log, reader):
            assert lg.offsets_for_timestamps(targets) == [
                lg.offset_for_timestamp(t) for t in targets]
        assert reader.offset_for_timestamp(1390) == 39
        assert reader.offsets_for_timestamps([1390])[0] == 39
    finally:
        reader.close()
        log.close()
