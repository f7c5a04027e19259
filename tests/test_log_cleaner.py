"""Kafka's ``LogCleanerTest`` scenarios, ported (core/src/test/scala/unit/kafka/log/
LogCleanerTest.scala 3.9; storage/src/test/java/.../log/LogCleanerTest.java on trunk for the
4.x expectations). Each test keeps Kafka's name in snake_case and its expected offsets.

Kafka's ``FakeOffsetMap`` is replaced by a real ``SkimpyOffsetMap`` of the same slot count
(``makeCleaner(capacity)``: load factor 0.75, so a 4-slot map holds 3 keys as Kafka's does).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from kafkalog.cleaner.cleaned_transaction_metadata import CleanedTransactionMetadata
from kafkalog.cleaner.cleaner import Cleaner
from kafkalog.cleaner.cleaner_stats import CleanerStats
from kafkalog.cleaner.log_to_clean import LogToClean
from kafkalog.cleaner.offset_map import SkimpyOffsetMap
from kafkalog.clock import ManualClock
from kafkalog.config import LogConfig
from kafkalog.errors import InvalidRecordError, LogCleaningAbortedError
from kafkalog.index.txn_index import AbortedTxn
from kafkalog.log import Log
from kafkalog.records.batch import iter_batches
from kafkalog.records.builder import encode_batch
from kafkalog.records.record import Record
from tests.cleaner_support import (
    LARGE_TIMESTAMP,
    LONG_MAX,
    T0,
    append_idempotent,
    append_transactional,
    batch_base_offsets,
    batches,
    clean_segments,
    config,
    do_clean,
    fake_map,
    key,
    keys_in_log,
    last_offsets_per_batch,
    last_sequences_in_log,
    ltc,
    make_cleaner,
    make_log,
    offsets_in_log,
    record,
    run_two_pass_clean,
)


def _fill(log: Log, segments: int) -> None:
    while len(log.segments) < segments:
        record(log, log.log_end_offset, log.log_end_offset)


def test_clean_segments(tmp_path: Path) -> None:
    log = make_log(tmp_path, config(segment_bytes=1024))
    _fill(log, 4)
    assert keys_in_log(log) == list(range(log.log_end_offset))
    keys = [1, 3, 5, 7, 9]
    m = fake_map({k: LONG_MAX for k in keys})
    segments = log.segments[:3]
    expected_read = sum(s.size for s in segments)
    should_remain = [k for k in keys_in_log(log) if k not in keys]
    stats = clean_segments(make_cleaner(), log, segments, m, 0)
    assert keys_in_log(log) == should_remain
    assert stats.bytes_read == expected_read
    log.close()


def test_clean_segments_retaining_last_empty_batch(tmp_path: Path) -> None:
    # KAFKA-17076 (4.0): the batch ending the cleaning round stays, emptied of its records
    log = make_log(tmp_path, config(segment_bytes=1024))
    _fill(log, 4)
    keys = keys_in_log(log)
    m = fake_map({k: LONG_MAX for k in keys})
    segments = log.segments[:3]
    upper = segments[-1].read_next_offset()
    clean_segments(make_cleaner(), log, segments, m, 0, upper=upper)
    kept = [b for b in batches(log) if b.last_offset < upper]
    assert [(b.last_offset, b.record_count) for b in kept] == [(upper - 1, 0)]
    # DefaultRecordBatch.writeEmptyHeader: baseTimestamp NO_TIMESTAMP, the batch's max kept
    assert kept[0].base_timestamp == -1 and kept[0].max_timestamp >= 0
    assert keys_in_log(log)[0] == upper  # the active segment's records are untouched
    log.close()


def test_size_trimmed_for_preallocated_and_compacted_topic(tmp_path: Path) -> None:
    log = make_log(tmp_path, config(segment_bytes=1024, preallocate="true"))
    for k, v in [(0, 0), (1, 1), (0, 0), (1, 1), (0, 0)]:
        record(log, k, v)
    log.roll()
    do_clean(make_cleaner(2), log, 2, T0)
    assert os.path.getsize(log.segments[0].log_path) < 1024
    log.close()


def test_duplicate_check_after_cleaning(tmp_path: Path) -> None:
    cfg = config(segment_bytes=2048)
    clock = ManualClock(T0)
    log = make_log(tmp_path, cfg, clock)
    p1, p2, p3, p4 = (append_idempotent(log, pid) for pid in (1, 2, 3, 4))
    p1(1, 2, 3)
    p2(3, 1, 4)
    p3(1, 4)
    log.roll()
    cleaner = make_cleaner()
    do_clean(cleaner, log, 0, clock.milliseconds())
    assert last_offsets_per_batch(log) == [2, 5, 7]
    assert last_sequences_in_log(log) == {1: 2, 2: 2, 3: 1}
    assert keys_in_log(log) == [2, 3, 1, 4]
    assert offsets_in_log(log) == [1, 3, 6, 7]
    # reload (recovery from 0) to check that the sequence numbers survived
    log.close()
    (tmp_path / ".kafka_cleanshutdown").unlink()
    log = make_log(tmp_path, cfg, clock, recovery_point=0)
    info = log.append([Record(key(k), key(k), T0) for k in (1, 2, 3)], producer_id=1,
                      producer_epoch=0, base_sequence=0)
    assert (info.first_offset, info.last_offset, info.duplicate) == (0, 2, True)
    info = log.append([Record(key(k), key(k), T0) for k in (1, 4)], producer_id=3,
                      producer_epoch=0, base_sequence=0)
    assert (info.first_offset, info.last_offset) == (6, 7)
    info = log.append([Record(key(k), key(k), T0) for k in (3, 1, 4)], producer_id=2,
                      producer_epoch=0, base_sequence=0)
    assert (info.first_offset, info.last_offset) == (3, 5)
    append_idempotent(log, 4)(2)
    log.roll()
    do_clean(cleaner, log, 0, clock.milliseconds())
    assert last_sequences_in_log(log) == {1: 2, 2: 2, 3: 1, 4: 0}
    assert last_offsets_per_batch(log) == [2, 5, 7, 8]
    assert keys_in_log(log) == [3, 1, 4, 2]
    assert offsets_in_log(log) == [3, 6, 7, 8]
    log.close()
    log = make_log(tmp_path, cfg, clock)
    info = log.append([Record(key(k), key(k), T0) for k in (1, 2, 3)], producer_id=1,
                      producer_epoch=0, base_sequence=0)
    assert (info.first_offset, info.last_offset) == (0, 2)
    log.close()


def _aborted_txns(log: Log) -> list[AbortedTxn]:
    return log.collect_aborted_transactions(0, log.log_end_offset)


def test_multi_pass_segment_cleaning_with_aborted_transactions(tmp_path: Path) -> None:
    clock = ManualClock(T0)
    log = make_log(tmp_path, config(delete_retention_ms=50000), clock)
    p1, p2 = append_transactional(log, 1), append_transactional(log, 2)
    p1(1, 2)                        # [0, 1]
    p2(2, 3)                        # [2, 3]
    p1(3, 4)                        # [4, 5]
    log.commit_transaction(1, 0)    # [6, 6]
    log.commit_transaction(2, 0)    # [7, 7]
    p1(2, 3)                        # [8, 9]
    log.abort_transaction(1, 0)     # [10, 10]
    p2(4, 5)                        # [11, 12]
    p1(5, 6)                        # [13, 14]
    log.commit_transaction(1, 0)    # [15, 15]
    log.abort_transaction(2, 0)     # [16, 16]
    p2(6, 7)                        # [17, 18]
    log.commit_transaction(2, 0)    # [19, 19]
    log.roll()
    assert log.log_end_offset == 20
    expected = [AbortedTxn(1, 8, 10, 11), AbortedTxn(2, 11, 16, 17)]
    assert _aborted_txns(log) == expected
    cleaner = make_cleaner()
    dirty = [0]

    def one_pass() -> None:
        m = SkimpyOffsetMap(4 * 24)  # FakeOffsetMap(slots = 4): 3 keys at load factor 0.75
        segments = log.log_segments(0, log.active_segment.base_offset)
        stats = CleanerStats()
        with log._clean_lock:
            cleaner.build_offset_map(log, dirty[0], log.active_segment.base_offset, m, stats)
            cleaner.clean_segments(log, segments, m, clock.milliseconds(), stats,
                                   CleanedTransactionMetadata(), LONG_MAX,
                                   segments[-1].read_next_offset())
        dirty[0] = m.latest_offset + 1

    one_pass()
    assert dirty[0] == 4
    assert batch_base_offsets(log) == [0, 2, 4, 6, 7, 10, 13, 15, 16, 17, 19]
    assert offsets_in_log(log) == [0, 2, 3, 4, 5, 6, 7, 10, 13, 14, 15, 16, 17, 18, 19]
    assert _aborted_txns(log) == expected
    one_pass()
    assert dirty[0] == 14
    assert batch_base_offsets(log) == [0, 2, 4, 6, 7, 10, 13, 15, 16, 17, 19]
    assert offsets_in_log(log) == [0, 2, 4, 5, 6, 7, 10, 13, 14, 15, 16, 17, 18, 19]
    assert _aborted_txns(log) == []
    clock.advance(50000)
    one_pass()
    assert dirty[0] == 20
    assert batch_base_offsets(log) == [0, 2, 4, 6, 7, 13, 15, 17, 19]
    assert offsets_in_log(log) == [0, 2, 4, 5, 6, 7, 13, 15, 17, 18, 19]
    assert _aborted_txns(log) == []
    log.close()


def test_basic_transaction_aware_cleaning(tmp_path: Path) -> None:
    log = make_log(tmp_path, config(segment_bytes=2048))
    p1, p2 = append_transactional(log, 1), append_transactional(log, 2)
    p1(1, 2)
    p2(2, 3)
    p1(3, 4)
    log.abort_transaction(1, 0)
    log.commit_transaction(2, 0)
    p1(2)
    log.commit_transaction(1, 0)
    aborted = log.collect_aborted_transactions(log.log_start_offset, log.log_end_offset)
    log.roll()
    do_clean(make_cleaner(), log, 0, T0)
    assert keys_in_log(log) == [3, 2]
    assert offsets_in_log(log) == [3, 6, 7, 8, 9]
    # the transaction index of the cleaned segment still holds the abort
    assert log.collect_aborted_transactions(log.log_start_offset, log.log_end_offset) == aborted
    log.close()


def test_clean_with_transactions_spanning_segments(tmp_path: Path) -> None:
    log = make_log(tmp_path, config(segment_bytes=1024))
    p1, p2, p3 = (append_transactional(log, pid) for pid in (1, 2, 3))
    p1(1, 2)
    p3(2, 3)
    p2(3, 4)
    log.roll()
    p2(5, 6)
    p3(6, 7)
    p1(7, 8)
    log.abort_transaction(2, 0)
    p3(8, 9)
    log.commit_transaction(3, 0)
    p1(9, 10)
    log.abort_transaction(1, 0)
    cleaner = make_cleaner()
    dirty = do_clean(cleaner, log, 0, T0)  # only the first segment is cleanable
    assert keys_in_log(log) == [2, 3, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10]
    log.roll()
    p2(11)
    p1(12)
    do_clean(cleaner, log, dirty, T0)
    assert keys_in_log(log) == [2, 3, 6, 7, 8, 9, 11, 12]
    log.close()


def test_commit_marker_removal(tmp_path: Path) -> None:
    log = make_log(tmp_path, config(segment_bytes=256))
    p = append_transactional(log, 1)
    p(1)
    p(2, 3)
    log.commit_transaction(1, 0)
    p(2)
    log.commit_transaction(1, 0)
    log.roll()
    cleaner = make_cleaner()
    # the marker stays in this pass: its transaction still has records
    dirty = do_clean(cleaner, log, 0, LARGE_TIMESTAMP)
    assert keys_in_log(log) == [1, 3, 2]
    assert offsets_in_log(log) == [0, 2, 3, 4, 5]
    p(1, 3)
    log.commit_transaction(1, 0)
    log.roll()
    dirty = do_clean(cleaner, log, dirty, LARGE_TIMESTAMP)
    assert keys_in_log(log) == [2, 1, 3]
    assert offsets_in_log(log) == [3, 4, 5, 6, 7, 8]
    dirty = do_clean(cleaner, log, dirty, LARGE_TIMESTAMP)  # horizon set, not reached yet
    assert offsets_in_log(log) == [3, 4, 5, 6, 7, 8]
    do_clean(cleaner, log, dirty, LONG_MAX)  # past the horizon: the marker at 3 goes
    assert keys_in_log(log) == [2, 1, 3]
    assert offsets_in_log(log) == [4, 5, 6, 7, 8]
    log.close()


def test_deleted_batches_with_no_messages_read(tmp_path: Path) -> None:
    log = make_log(tmp_path, config(max_message_bytes=100, segment_bytes=1000))
    p = append_transactional(log, 1)
    p(1)
    log.abort_transaction(1, 0)
    p(2)
    p(2)
    log.commit_transaction(1, 0)
    log.roll()
    cleaner = make_cleaner(max_message_size=100)
    do_clean(cleaner, log, 0, LARGE_TIMESTAMP)
    assert keys_in_log(log) == [2]
    assert offsets_in_log(log) == [1, 3, 4]
    run_two_pass_clean(cleaner, log, 0, LARGE_TIMESTAMP)
    assert keys_in_log(log) == [2]
    assert offsets_in_log(log) == [3, 4]
    log.close()


def test_commit_marker_retention_with_empty_batch(tmp_path: Path) -> None:
    log = make_log(tmp_path, config(segment_bytes=256))
    p1, p2 = append_transactional(log, 1), append_transactional(log, 2)
    p1(2, 3)                       # 0, 1
    log.roll()
    p2(2, 3)                       # 2, 3
    log.commit_transaction(2, 0)   # 4
    log.roll()
    record(log, 2, 2)              # 5
    record(log, 3, 3)              # 6
    log.commit_transaction(1, 0)   # 7
    log.roll()
    cleaner = make_cleaner()
    dirty = do_clean(cleaner, log, 0, LARGE_TIMESTAMP)
    assert keys_in_log(log) == [2, 3]
    assert offsets_in_log(log) == [4, 5, 6, 7]
    assert last_offsets_per_batch(log) == [1, 3, 4, 5, 6, 7]
    dirty = do_clean(cleaner, log, dirty, LARGE_TIMESTAMP)
    assert offsets_in_log(log) == [4, 5, 6, 7]
    assert last_offsets_per_batch(log) == [1, 3, 4, 5, 6, 7]
    p2(1)                          # 8
    log.commit_transaction(2, 0)   # 9
    log.roll()
    dirty = do_clean(cleaner, log, dirty, LARGE_TIMESTAMP)
    assert keys_in_log(log) == [2, 3, 1]
    assert offsets_in_log(log) == [4, 5, 6, 7, 8, 9]
    assert last_offsets_per_batch(log) == [1, 4, 5, 6, 7, 8, 9]
    dirty = run_two_pass_clean(cleaner, log, dirty, LARGE_TIMESTAMP)
    assert keys_in_log(log) == [2, 3, 1]
    assert offsets_in_log(log) == [5, 6, 7, 8, 9]
    assert last_offsets_per_batch(log) == [1, 5, 6, 7, 8, 9]
    log.close()


def test_clean_empty_control_batch(tmp_path: Path) -> None:
    log = make_log(tmp_path, config(segment_bytes=256))
    log.commit_transaction(1, 0)   # 0
    record(log, 2, 2)              # 1
    record(log, 3, 3)              # 2
    log.roll()
    cleaner = make_cleaner()
    # the marker gets a horizon, then goes; its batch stays empty (the producer's epoch)
    dirty = run_two_pass_clean(cleaner, log, 0, LARGE_TIMESTAMP)
    assert keys_in_log(log) == [2, 3]
    assert offsets_in_log(log) == [1, 2]
    assert last_offsets_per_batch(log) == [0, 1, 2]
    do_clean(cleaner, log, dirty, LONG_MAX)
    assert offsets_in_log(log) == [1, 2]
    assert last_offsets_per_batch(log) == [0, 1, 2]
    log.close()


def test_committed_transaction_spanning_segments(tmp_path: Path) -> None:
    log = make_log(tmp_path, config(segment_bytes=128))
    append_transactional(log, 1)(1)
    log.roll()
    log.commit_transaction(1, 0)
    log.roll()
    run_two_pass_clean(make_cleaner(), log, 0, LARGE_TIMESTAMP)
    assert offsets_in_log(log) == [0, 1]
    assert last_offsets_per_batch(log) == [0, 1]
    log.close()


def test_aborted_transaction_spanning_segments(tmp_path: Path) -> None:
    log = make_log(tmp_path, config(segment_bytes=128))
    append_transactional(log, 1)(1)
    log.roll()
    log.abort_transaction(1, 0)
    log.roll()
    cleaner = make_cleaner()
    do_clean(cleaner, log, 0, LARGE_TIMESTAMP)
    assert offsets_in_log(log) == [1]
    assert last_offsets_per_batch(log) == [0, 1]
    do_clean(cleaner, log, 0, LONG_MAX)
    assert offsets_in_log(log) == [1]
    assert last_offsets_per_batch(log) == [0, 1]
    log.close()


def test_abort_marker_removal(tmp_path: Path) -> None:
    log = make_log(tmp_path, config(segment_bytes=256))
    p = append_transactional(log, 1)
    p(1)
    p(2, 3)
    log.abort_transaction(1, 0)
    p(3)
    log.commit_transaction(1, 0)
    log.roll()
    cleaner = make_cleaner()
    dirty = do_clean(cleaner, log, 0, LARGE_TIMESTAMP)
    assert keys_in_log(log) == [3]
    assert offsets_in_log(log) == [3, 4, 5]
    run_two_pass_clean(cleaner, log, dirty, LARGE_TIMESTAMP)
    assert keys_in_log(log) == [3]
    assert offsets_in_log(log) == [4, 5]
    log.close()


def test_abort_marker_retention_with_empty_batch(tmp_path: Path) -> None:
    log = make_log(tmp_path, config(segment_bytes=256))
    p = append_transactional(log, 1)
    p(2, 3)                        # last offset 1
    log.abort_transaction(1, 0)    # 2
    log.roll()

    def indexed() -> None:
        txns = log.collect_aborted_transactions(0, 100)
        assert [(t.producer_id, t.first_offset, t.last_offset) for t in txns] == [(1, 0, 2)]

    indexed()
    cleaner = make_cleaner()
    dirty = do_clean(cleaner, log, 0, LARGE_TIMESTAMP)
    indexed()
    assert keys_in_log(log) == []
    assert offsets_in_log(log) == [2]
    assert last_offsets_per_batch(log) == [1, 2]
    dirty = run_two_pass_clean(cleaner, log, dirty, LARGE_TIMESTAMP)
    indexed()
    assert offsets_in_log(log) == [2]
    assert last_offsets_per_batch(log) == [1, 2]
    p(1)
    log.roll()
    dirty = do_clean(cleaner, log, dirty, LARGE_TIMESTAMP)
    indexed()
    assert keys_in_log(log) == [1]
    assert offsets_in_log(log) == [2, 3]
    assert last_offsets_per_batch(log) == [2, 3]
    run_two_pass_clean(cleaner, log, dirty, LARGE_TIMESTAMP)
    assert keys_in_log(log) == [1]
    assert offsets_in_log(log) == [3]
    assert last_offsets_per_batch(log) == [3]
    assert log.collect_aborted_transactions(0, 100) == []
    log.close()


def test_large_message(tmp_path: Path) -> None:
    large = 10000 + 100
    log = make_log(tmp_path, config(segment_bytes=large * 16, max_message_bytes=large * 2))
    value = bytes(large)
    while len(log.segments) < 2:
        record(log, log.log_end_offset, value)
    keys = keys_in_log(log)
    assert keys == list(range(log.log_end_offset))
    m = fake_map({k: LONG_MAX for k in (1, 3, 5, 7, 9)})
    cleaner = make_cleaner(max_message_size=large // 2)  # buffers must grow
    with log._clean_lock:
        cleaner.clean_segments(log, [log.segments[0]], m, 0, CleanerStats(),
                               CleanedTransactionMetadata(), -1,
                               log.segments[0].read_next_offset())
    assert keys_in_log(log) == [k for k in keys if k not in (1, 3, 5, 7, 9)]
    log.close()


def test_cleaning_with_deletes(tmp_path: Path) -> None:
    log = make_log(tmp_path, config(segment_bytes=1024))
    while len(log.segments) < 2:  # keys 0..N
        record(log, log.log_end_offset, log.log_end_offset)
    leo = log.log_end_offset
    for k in range(0, leo, 2):  # delete the even keys
        record(log, k, None)
    while len(log.segments) < 4:  # new unique keys up to a new active segment
        record(log, log.log_end_offset, log.log_end_offset)
    do_clean(make_cleaner(), log, 0, T0)
    keys = set(keys_in_log(log))
    assert not any(k in keys for k in range(0, leo, 2))  # none of the deleted keys remains
    assert all(k in keys for k in range(1, leo, 2))
    log.close()

def test_log_cleaner_retains_producer_last_sequence(tmp_path: Path) -> None:
    log = make_log(tmp_path, config())
    record(log, 0, 0)                                                    # 0
    record(log, 0, 1, producer_id=1, producer_epoch=0, base_sequence=0)  # 1
    record(log, 0, 2, producer_id=2, producer_epoch=0, base_sequence=0)  # 2
    record(log, 0, 3, producer_id=3, producer_epoch=0, base_sequence=0)  # 3
    record(log, 1, 1, producer_id=2, producer_epoch=0, base_sequence=1)  # 4
    log.roll()
    do_clean(make_cleaner(10), log, 0, T0)
    assert last_offsets_per_batch(log) == [1, 3, 4]
    assert last_sequences_in_log(log) == {1: 0, 2: 1, 3: 0}
    assert keys_in_log(log) == [0, 1]
    assert offsets_in_log(log) == [3, 4]
    log.close()

def test_log_cleaner_retains_last_sequence_even_if_transaction_aborted(tmp_path: Path) -> None:
    log = make_log(tmp_path, config())
    p = append_transactional(log, 1)
    p(1)
    p(2, 3)
    log.abort_transaction(1, 0)
    log.roll()
    cleaner = make_cleaner(10)
    do_clean(cleaner, log, 0, LARGE_TIMESTAMP)
    assert last_offsets_per_batch(log) == [2, 3]
    assert last_sequences_in_log(log) == {1: 2}
    assert keys_in_log(log) == []
    assert offsets_in_log(log) == [3]
    # a new entry of the producer: the empty batch goes
    p(1, 5)
    log.roll()
    do_clean(cleaner, log, 0, T0)
    assert last_offsets_per_batch(log) == [3, 5]
    assert last_sequences_in_log(log) == {1: 4}
    assert keys_in_log(log) == [1, 5]
    assert offsets_in_log(log) == [3, 4, 5]
    log.close()

def test_cleaning_with_keys_conflicting_with_txn_marker_keys(tmp_path: Path) -> None:
    log = make_log(tmp_path, config())
    append_transactional(log, 1)(1)
    log.commit_transaction(1, 0)
    # a record whose key is the bytes of a COMMIT marker's key (version 0, type 1)
    log.append([Record(b"\x00\x00\x00\x01", b"foo", T0)], producer_id=2, producer_epoch=0,
               base_sequence=0, transactional=True, partition_leader_epoch=5)
    log.commit_transaction(2, 0)
    log.roll()
    assert offsets_in_log(log) == [0, 1, 2, 3]
    do_clean(make_cleaner(10), log, 0, T0)  # the marker is not removed
    assert last_offsets_per_batch(log) == [0, 1, 2, 3]
    assert offsets_in_log(log) == [0, 1, 2, 3]
    log.close()

def test_partial_segment_clean(tmp_path: Path) -> None:
    log = make_log(tmp_path, config())
    for k in (0, 1, 0, 1, 0):
        record(log, k, k)   # offsets 0..4
    log.roll()
    cleaner = make_cleaner(2)  # load factor 0.75: one key fits in the map
    do_clean(cleaner, log, 2, T0)
    assert keys_in_log(log) == [1, 0, 1, 0]
    assert offsets_in_log(log) == [1, 2, 3, 4]
    do_clean(cleaner, log, 3, T0)  # progress, one key at a time
    assert keys_in_log(log) == [0, 1, 0]
    assert offsets_in_log(log) == [2, 3, 4]
    do_clean(cleaner, log, 4, T0)
    assert keys_in_log(log) == [1, 0]
    assert offsets_in_log(log) == [3, 4]
    log.close()

def test_cleaning_with_uncleanable_section(tmp_path: Path) -> None:
    log = make_log(tmp_path, config(segment_bytes=1024))
    n_keys, cleanable_segments, total_segments = 10, 2, 7
    while len(log.segments) <= cleanable_segments:
        record(log, log.log_end_offset % n_keys, log.log_end_offset)
    # one message past the cleanable segments: its whole segment is uncleanable
    first_uncleanable = log.log_end_offset + 1
    while len(log.segments) < total_segments - 1:
        record(log, log.log_end_offset % n_keys, log.log_end_offset)

    def distinct_values() -> list[int]:
        return [len({r.value for b in iter_batches(s.pread(0, s.size)) for r in b})
                for s in log.segments]

    before = distinct_values()
    assert all(n > n_keys for n in before[:-1])  # every segment holds duplicates
    with log._clean_lock:
        make_cleaner().clean(LogToClean(("test", 0), log, 0, first_uncleanable))
    after = distinct_values()
    assert all(a < b for b, a in zip(before[:cleanable_segments], after[:cleanable_segments]))
    assert before[cleanable_segments:total_segments] == after[cleanable_segments:total_segments]
    log.close()

def test_log_to_clean(tmp_path: Path) -> None:
    log = make_log(tmp_path, config(segment_bytes=100))
    for _ in range(6):  # one message per segment
        log.append([Record(b"1", bytes(25), T0)])
    t = LogToClean(("test", 0), log, log.active_segment.base_offset,
                   log.active_segment.base_offset)
    assert t.total_bytes == log.size - log.active_segment.size
    log.close()

def test_log_to_clean_with_uncleanable_section(tmp_path: Path) -> None:
    log = make_log(tmp_path, config(segment_bytes=100))
    for _ in range(6):
        log.append([Record(b"1", bytes(25), T0)])
    # segments [0, 1] clean, [2, 3] cleanable, [4, 5] uncleanable
    segs = log.segments
    t = LogToClean(("test", 0), log, segs[2].base_offset, segs[4].base_offset)
    assert t.clean_bytes == sum(s.size for s in segs[:2])
    assert t.cleanable_bytes == sum(s.size for s in segs[2:4])
    assert t.total_bytes == t.clean_bytes + t.cleanable_bytes
    log.close()

def test_cleaning_with_unkeyed_messages(tmp_path: Path) -> None:
    # a topic that became compacted later: its old records have no key
    directory = tmp_path / "t-0"
    plain = Log.open(directory, LogConfig(segment_bytes=1024), clock=ManualClock(T0))
    for i in range(20):
        plain.append([Record(None, str(i).encode(), T0)])
    plain.close()
    log = make_log(directory)
    with pytest.raises(InvalidRecordError, match="Compacted topic cannot accept message "
                                                 "without key in topic partition t-0"):
        log.append([Record(None, b"x", T0)])
    for i in range(40):
        record(log, i % 10, i)
    log.roll()
    cleaner = make_cleaner()
    with log._clean_lock:
        _, stats = cleaner.do_clean(ltc(log, 0), T0)
    assert stats.invalid_messages_read == 20
    assert all(r.key is not None for b in batches(log) for r in b)
    assert keys_in_log(log) == list(range(10))
    log.close()


def test_keyless_columns_rejected_in_compacted_log(tmp_path: Path) -> None:
    import pyarrow as pa

    log = make_log(tmp_path)
    table = pa.table({"key": pa.array([b"a", None], pa.binary()),
                      "value": pa.array([b"1", b"2"], pa.binary())})
    with pytest.raises(InvalidRecordError, match="record 1: Compacted topic"):
        log.append(table)
    assert log.log_end_offset == 0  # nothing written
    # a follower keeps whatever its leader accepted (Kafka validates leader appends only)
    log.append_batches(encode_batch([Record(None, b"v", T0)]))
    assert log.log_end_offset == 1
    log.close()


def _check_segment_order(groups: list) -> None:
    offsets = [s.base_offset for g in groups for s in g]
    assert offsets == sorted(offsets)


def _hello(log: Log) -> None:
    log.append([Record(b"hello", b"hello", T0)])


def _follower(log: Log, offset: int, k: bytes = b"hello", v: bytes = b"hello") -> None:
    log.append_batches(encode_batch([Record(k, v, T0)], base_offset=offset))


def test_segment_grouping(tmp_path: Path) -> None:
    log = make_log(tmp_path, config(segment_bytes=300, index_interval_bytes=1))
    while len(log.segments) < 10:
        _hello(log)
    group = Cleaner.group_segments_by_size
    segs = log.segments
    groups = group(segs, 2**31 - 1, 2**31 - 1, log.log_end_offset)
    assert len(groups) == 1 and len(groups[0]) == len(segs)
    _check_segment_order(groups)
    for max_size, max_index in ((1, 2**31 - 1), (2**31 - 1, 1)):
        groups = group(segs, max_size, max_index, log.log_end_offset)
        assert len(groups) == len(segs) and all(len(g) == 1 for g in groups)
        _check_segment_order(groups)
    n = 3
    log_size = sum(s.size for s in segs[:n]) + 1
    groups = group(segs, log_size, 2**31 - 1, log.log_end_offset)
    _check_segment_order(groups)
    assert all(len(g) == n for g in groups[:-1])
    index_size = sum(s.offset_index.size_in_bytes for s in segs[:n]) + 1
    groups = group(segs, 2**31 - 1, index_size, log.log_end_offset)
    _check_segment_order(groups)
    assert all(len(g) == n for g in groups[:-1])
    log.close()


def test_segment_grouping_with_sparse_offsets_and_empty_segments(tmp_path: Path) -> None:
    log = make_log(tmp_path, config())
    k, v = b"key", b"val"
    cleaner = make_cleaner()
    for i in range(3):
        log.append([Record(k, v, T0)])
        # the last offset a segment based at i * 2**31 can hold
        _follower(log, (i + 1) * 2**31 - 1, k, v)
        assert len(log.segments) == i + 1
    log.append([Record(k, v, T0)])  # a 4th, active segment
    first_uncleanable = log.log_end_offset - 1
    assert len(log.segments) == 4
    group = Cleaner.group_segments_by_size
    # 4-byte relative offsets: the non-empty segments cannot be grouped
    assert len(group(log.segments, 2**31 - 1, 2**31 - 1, first_uncleanable)) == 3
    with log._clean_lock:
        cleaner.clean(LogToClean(("test", 0), log, 0, first_uncleanable))
    assert len(log.segments) == 4
    assert log.segments[0].size == 0
    # the two emptied segments group together now
    assert len(group(log.segments, 2**31 - 1, 2**31 - 1, first_uncleanable)) == 2
    with log._clean_lock:
        cleaner.clean(LogToClean(("test", 0), log, 0, first_uncleanable))
    assert len(log.segments) == 3
    log.close()

def test_segment_grouping_with_sparse_offsets(tmp_path: Path) -> None:
    log = make_log(tmp_path, config(segment_bytes=400, index_interval_bytes=1))
    group = Cleaner.group_segments_by_size
    while len(log.segments) == 1:
        _hello(log)
    _follower(log, 2**31 - 2)  # forward the offsets: the next append is at Int.MaxValue
    _hello(log)
    assert log.active_segment.offset_index.last_offset == 2**31 - 1
    assert len(group(log.segments, 2**31 - 1, 2**31 - 1, log.log_end_offset)) == 1
    _hello(log)  # the second segment's last offset passes Int.MaxValue
    groups = group(log.segments, 2**31 - 1, 2**31 - 1, log.log_end_offset)
    assert len(groups) == 2
    _check_segment_order(groups)
    while len(log.segments) < 4:
        _hello(log)
    groups = group(log.segments, 2**31 - 1, 2**31 - 1, log.log_end_offset)
    assert len(groups) == len(log.segments) - 1
    for g in groups:
        assert g[-1].offset_index.last_offset - g[0].base_offset <= 2**31 - 1
    _check_segment_order(groups)
    log.close()


def test_segment_grouping_measures_from_the_groups_first_segment(tmp_path: Path) -> None:
    """Kafka builds a group with ``group.add(0, seg)``: its ``get(size - 1)`` is the group's
    FIRST segment, the base every offset of the group must stay within 2^31 of (the cleaned
    segment's relative offsets). Measuring from the newest one let a group span more, and
    every clean then aborted with an offset overflow."""
    from kafkalog import encode_batch as enc

    log = make_log(tmp_path, config())
    g = 2**31

    def put(base: int, keys: list[bytes]) -> None:
        log.append_batches(enc([Record(k, b"v", T0) for k in keys], base_offset=base))

    put(0, [b"a%d" % i for i in range(10)])
    log.roll()
    put(10, [b"b%d" % i for i in range(10)])
    put(g - 100, [b"a0"])
    log.roll()
    put(g - 99, [b"c"])
    put(g + 3, [b"a1"])
    log.roll()
    groups = Cleaner.group_segments_by_size(log.segments[:-1], 2**31 - 1, 2**31 - 1,
                                            log.active_segment.base_offset)
    assert [[s.base_offset for s in grp] for grp in groups] == [[0, 10], [g - 99]]
    log.clean(now=T0 + 10_000)  # (aborted with an offset overflow before)
    assert [r.offset for r in log.records() if r.key in (b"a0", b"a1")] == [g - 100, g + 3]
    log.close()


def test_segment_grouping_following_load_of_zero_index(tmp_path: Path) -> None:
    # an index interval as large as the segment: no index entries, as after loading an empty
    # index; the grouping must not trust the index for the last offset
    log = make_log(tmp_path, config(segment_bytes=400, index_interval_bytes=400))
    _follower(log, 0)
    _follower(log, 1)
    with log._write_lock:
        log._roll((2**31 - 1) // 2)
    _follower(log, (2**31 - 1) // 2)
    _follower(log, 2**31)
    assert log.log_end_offset - 1 - log.log_start_offset > 2**31 - 1
    groups = Cleaner.group_segments_by_size(log.segments, 2**31 - 1, 2**31 - 1,
                                            log.log_end_offset)
    assert len(groups) == 2
    for g in groups:
        assert g[-1].read_next_offset() - 1 - g[0].base_offset <= 2**31 - 1
    _check_segment_order(groups)
    log.close()

def test_build_offset_map(tmp_path: Path) -> None:
    log = make_log(tmp_path, config())
    for i in range(500):
        log.append_batches(encode_batch([Record(key(i), key(i), T0)], base_offset=i))
    cleaner = make_cleaner()
    m = SkimpyOffsetMap(1000 * 24)

    def check_range(start: int, end: int) -> None:
        stats = CleanerStats()
        cleaner.build_offset_map(log, start, end, m, stats)
        assert m.latest_offset + 1 == end
        assert m.size == end - start
        for i in range(start, end):
            assert m.get(key(i)) == i
        assert m.get(key(start - 1)) == -1
        assert m.get(key(end)) == -1
        assert stats.map_messages_read == end - start

    segs = log.segments
    check_range(0, segs[1].base_offset)
    check_range(segs[1].base_offset, segs[3].base_offset)
    check_range(segs[3].base_offset, log.log_end_offset)
    log.close()

def test_build_partial_offset_map(tmp_path: Path) -> None:
    log = make_log(tmp_path, config())
    for i in range(10):
        log.append_batches(encode_batch([Record(key(i), key(i), T0)], base_offset=i))
    m = SkimpyOffsetMap(4 * 24)  # load factor 0.75: 3 keys fit
    make_cleaner().build_offset_map(log, 2, 2**31 - 1, m, CleanerStats())
    assert [m.get(key(k)) for k in (2, 3, 4, 5, 6)] == [2, 3, 4, -1, -1]
    assert m.latest_offset == 4
    log.close()

def test_clean_tombstone(tmp_path: Path) -> None:
    clock = ManualClock(T0)
    log = make_log(tmp_path, config(segment_bytes=1024), clock)
    for i in range(3):
        record(log, i, i)
    record(log, 1, None)   # a tombstone for key 1
    log.roll()
    cleaner = make_cleaner(clock=clock)
    do_clean(cleaner, log, 0, T0)
    assert [(r.offset, r.value) for b in batches(log) for r in b] == \
        [(0, b"0"), (2, b"2"), (3, None)]
    tomb = [b for b in batches(log) if b.base_offset == 3][0]
    assert tomb.delete_horizon_ms == T0 + 86400000
    # before the horizon the tombstone stays; from it on it goes
    do_clean(cleaner, log, 0, T0 + 86400000 - 1)
    assert offsets_in_log(log) == [0, 2, 3]
    do_clean(cleaner, log, 0, T0 + 86400000)
    assert offsets_in_log(log) == [0, 2]
    log.close()


def test_clean_tombstone_timestamps_do_not_matter(tmp_path: Path) -> None:
    # Kafka's testCleanTombstone: the horizon counts from the cleaning, not record timestamps
    clock = ManualClock(T0)
    log = make_log(tmp_path, config(), clock)
    retention = log.config.delete_retention_ms
    log.append([Record(b"0", b"0", T0 + retention + 10000)])
    log.roll()
    cleaner = make_cleaner(10, clock=clock)
    with log._clean_lock:
        cleaner.clean(ltc(log, 0))
    log.append([Record(b"0", None, T0 - retention - 10000)])  # an old-looking tombstone
    log.roll()
    with log._clean_lock:
        cleaner.clean(ltc(log, 1))
    assert batches(log)[0].last_offset == 1  # the tombstone is retained
    log.append([Record(b"1", b"1", T0)])
    log.roll()
    with log._clean_lock:
        cleaner.clean(ltc(log, 2))
    assert batches(log)[0].last_offset == 1
    log.close()


def test_cleaning_beyond_missing_offsets(tmp_path: Path) -> None:
    cfg = config(segment_bytes=1024 * 1024)
    cleaner = make_cleaner()

    def write(log: Log, offsets: range) -> None:
        for off in offsets:
            log.append_batches(encode_batch([Record(key(off), key(off), T0)], base_offset=off))

    # a hole in [10, 10] before a segment rolled at 11
    log = make_log(tmp_path / "a-0", cfg)
    write(log, range(10))
    with log._write_lock:
        log._roll(11)
    log.append_batches(encode_batch([Record(key(1015), key(1015), T0)], base_offset=11))
    assert do_clean(cleaner, log, 0, T0) == log.active_segment.base_offset
    log.close()
    # holes in [10, 14] and [25, 29] in two segments
    log = make_log(tmp_path / "b-0", cfg)
    write(log, range(10))
    with log._write_lock:
        log._roll(15)
    write(log, range(15, 25))
    with log._write_lock:
        log._roll(30)
    log.append_batches(encode_batch([Record(key(1015), key(1015), T0)], base_offset=30))
    assert do_clean(cleaner, log, 0, T0) == log.active_segment.base_offset
    log.close()

def test_truncation_aborts_cleaning(tmp_path: Path) -> None:
    import threading

    log = make_log(tmp_path, config(segment_bytes=1024))
    _fill(log, 4)
    log.roll()
    started, release = threading.Event(), threading.Event()

    def check_done(_log: object) -> None:
        started.set()
        release.wait(5)

    cleaner = make_cleaner(check_done=check_done)
    errors: list[BaseException] = []

    def run() -> None:
        try:
            with log._clean_lock:
                cleaner.clean(ltc(log, 0))
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    t = threading.Thread(target=run)
    t.start()
    started.wait(5)
    truncator = threading.Thread(target=log.truncate_to, args=(5,))
    truncator.start()
    release.set()
    t.join(10)
    truncator.join(10)
    assert len(errors) == 1 and isinstance(errors[0], LogCleaningAbortedError)
    assert log.log_end_offset == 5
    assert not [p for p in os.listdir(tmp_path) if p.endswith((".cleaned", ".swap"))]
    log.close()


def test_log_cleaner_stats(tmp_path: Path) -> None:
    log = make_log(tmp_path, config(segment_bytes=1024))
    for i in range(60):
        record(log, i % 6, i)
    log.roll()
    size_before = sum(s.size for s in log.segments)
    res = log.clean()
    s = res.stats
    assert s.messages_read == 60 and s.messages_written == 6
    assert s.bytes_read == size_before
    assert s.bytes_written == sum(seg.size for seg in log.segments)
    assert s.map_messages_read == 60
    assert 0 < s.buffer_utilization < 1
    log.close()


def test_record_timestamps_and_codecs_survive(tmp_path: Path) -> None:
    # a rebuilt compressed batch: same codec, record timestamps unchanged, offsets kept
    for codec in ("gzip", "snappy", "lz4", "zstd"):
        d = tmp_path / codec
        log = make_log(d, config(segment_bytes=4096))
        log.append([Record(key(i % 3), str(i).encode(), T0 + i, (("h", b"%d" % i),))
                    for i in range(9)], compression=codec)
        log.append([Record(key(9), b"x", T0 + 100)])
        log.roll()
        log.clean()
        got = [(r.offset, r.key, r.value, r.timestamp, r.headers) for r in log.records()]
        assert got == [(i, key(i % 3), str(i).encode(), T0 + i, (("h", b"%d" % i),))
                       for i in (6, 7, 8)] + [(9, key(9), b"x", T0 + 100, ())]
        b = batches(log)[0]
        assert (b.compression, b.base_offset, b.last_offset, b.record_count, b.is_valid) == \
            (codec, 0, 8, 3, True)
        log.close()


def test_log_append_time_batches_rebuilt_as_the_builder_does(tmp_path: Path) -> None:
    log = make_log(tmp_path, config(message_timestamp_type="LogAppendTime"))
    log.append([Record(key(1), b"a", 5), Record(key(2), b"b", 6), Record(key(1), b"c", 7)])
    log.roll()
    lat = batches(log)[0].max_timestamp
    log.clean()
    b = batches(log)[0]
    # MemoryRecordsBuilder: every record carries the append time, so the new base is it
    assert (b.base_timestamp, b.max_timestamp, b.timestamp_type) == (lat, lat, "LogAppendTime")
    assert [(r.offset, r.timestamp) for r in b] == [(1, lat), (2, lat)]
    log.close()


def test_index_entries_follow_the_read_buffer(tmp_path: Path) -> None:
    # each read buffer's output is one append: index entries land where Kafka's do
    log = make_log(tmp_path, config(segment_bytes=8192, index_interval_bytes=0))
    for i in range(80):
        record(log, i % 40, i)
    log.roll()
    cleaner = make_cleaner(max_message_size=256)  # 256-byte buffers: many chunks
    do_clean(cleaner, log, 0, T0)
    seg = log.segments[0]
    entries = [seg.offset_index.entry(i) for i in range(seg.offset_index.entries)]
    assert len(entries) > 1
    positions = [p for _, p in entries]
    assert positions == sorted(positions)
    for off, pos in entries:  # each entry points at a batch start holding an offset <= it
        b = next(iter_batches(seg.pread(pos, seg.size - pos)))
        assert b.base_offset <= off
    log.close()


def test_offset_map_memory_is_kafkas(tmp_path: Path) -> None:
    m = SkimpyOffsetMap(1 << 20)
    assert m.slots == (1 << 20) // 24
    assert m.table.nbytes == m.slots * 24
    keys = np.arange(int(m.slots * 0.9))
    for k in keys[:1000]:
        m.put(str(int(k)).encode(), int(k))
    assert m.size == 1000 and m.collision_rate >= 0
