"""Producer state (issue 7): idempotent duplicates, sequence/epoch validation, snapshots.

Kafka sources followed: storage/.../internals/log/{ProducerStateManager,ProducerAppendInfo,
ProducerStateEntry}.java, core/.../UnifiedLog.scala (rebuildProducerState, roll, close).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kafkalog.clock import ManualClock
from kafkalog.config import LogConfig
from kafkalog.files import producer_snapshot_file
from kafkalog.log import Log
from kafkalog.producer_snapshot import read_snapshot
from kafkalog.producer_state import (
    InvalidProducerEpochError,
    InvalidTxnStateError,
    OutOfOrderSequenceError,
    ProducerBatch,
    ProducerStateError,
    ProducerStateManager,
    scan_producer_batches,
)
from kafkalog.records.record import Record
from tests.conftest import shared_fixture_path

kafka_mr = pytest.importorskip("kafka.record.memory_records")

PID = 4242


def recs(n: int, ts: int = 1_700_000_000_000, tag: str = "v") -> list[Record]:
    return [Record(None, f"{tag}{i}".encode(), ts + i) for i in range(n)]


def idem(log: Log, n: int, seq: int, *, epoch: int = 0, pid: int = PID, tag: str = "v"):
    return log.append(recs(n, tag=tag), producer_id=pid, producer_epoch=epoch,
                      base_sequence=seq)


def open_log(path: Path, **cfg) -> Log:
    return Log.open(path, LogConfig(**cfg) if cfg else None, clock=ManualClock())


# -- duplicates and validation on the leader append path ---------------------------------------


def test_retry_of_any_of_the_last_five_batches_returns_original_offsets(tmp_path: Path) -> None:
    with open_log(tmp_path / "p-0") as log:
        infos = [idem(log, 3, 3 * i) for i in range(6)]  # sequences 0..17, offsets 0..17
        leo = log.log_end_offset
        size = log.size
        for i in range(1, 6):  # the last 5 batches are retained
            again = idem(log, 3, 3 * i)
            assert again.duplicate
            assert (again.first_offset, again.last_offset) == (
                infos[i].first_offset, infos[i].last_offset)
        assert (log.log_end_offset, log.size) == (leo, size)  # nothing written
        # the first batch fell out of the retained five: it is out of order now, as in Kafka
        with pytest.raises(OutOfOrderSequenceError, match=r"expected 18, found 0"):
            idem(log, 3, 0)
        assert [r.value for r in log.records()][-1] == b"v2"
        assert log.log_end_offset == 18


def test_sequence_gap_and_fenced_epoch_are_refused_without_writing(tmp_path: Path) -> None:
    with open_log(tmp_path / "p-0") as log:
        idem(log, 2, 0, epoch=5)
        leo = log.log_end_offset
        with pytest.raises(OutOfOrderSequenceError) as e:
            idem(log, 1, 5, epoch=5)
        assert "expected 2, found 5" in str(e.value) and e.value.offset == leo
        with pytest.raises(InvalidProducerEpochError, match=r"expected >= 5, found 4"):
            idem(log, 1, 2, epoch=4)
        with pytest.raises(OutOfOrderSequenceError, match=r"new epoch 6.*expected 0, found 2"):
            idem(log, 1, 2, epoch=6)
        assert log.log_end_offset == leo
        assert isinstance(e.value, ProducerStateError)
        info = idem(log, 1, 0, epoch=6)  # a new epoch starts at sequence 0
        assert not info.duplicate and info.first_offset == leo
        entry = log.producer_state.last_entry(PID)
        assert (entry.producer_epoch, entry.last_seq, entry.last_data_offset) == (6, 0, leo)


def test_unknown_producer_may_start_at_any_sequence_and_wraps(tmp_path: Path) -> None:
    with open_log(tmp_path / "p-0") as log:
        idem(log, 1, 2**31 - 1)
        assert log.producer_state.last_entry(PID).last_seq == 2**31 - 1
        idem(log, 2, 0)  # Integer.MAX_VALUE is followed by 0
        assert log.producer_state.last_entry(PID).last_seq == 1


def test_non_transactional_write_inside_a_transaction_is_refused(tmp_path: Path) -> None:
    with open_log(tmp_path / "p-0") as log:
        log.append(recs(1), producer_id=PID, producer_epoch=0, base_sequence=0,
                   transactional=True)
        with pytest.raises(InvalidTxnStateError, match="transaction opened at offset 0"):
            idem(log, 1, 1)


def test_follower_appends_update_state_without_validation(tmp_path: Path) -> None:
    from kafkalog.records.builder import encode_batch

    data = encode_batch(recs(2), base_offset=0, producer_id=9, producer_epoch=1,
                        base_sequence=7) + \
        encode_batch(recs(1), base_offset=2, producer_id=9, producer_epoch=1, base_sequence=40)
    with open_log(tmp_path / "p-0") as log:
        info = log.append_batches(data)  # a gap in sequences: replicated data is trusted
        assert not info.duplicate and log.log_end_offset == 3
        e = log.producer_state.last_entry(9)
        assert [(m.first_seq, m.last_seq, m.first_offset, m.last_offset)
                for m in e.batch_metadata] == [(7, 8, 0, 1), (40, 40, 2, 2)]


def test_manager_prepare_does_not_change_state(tmp_path: Path) -> None:
    psm = ProducerStateManager(tmp_path)
    b = ProducerBatch(1, 0, 0, 4, 10, 14, 99, False)
    assert psm.prepare_append([b]).duplicate is None
    assert psm.producers == {}
    psm.apply([b])
    assert psm.map_end_offset == 15
    dup = psm.prepare_append([b]).duplicate
    assert (dup.first_offset, dup.last_offset, dup.first_seq, dup.last_seq) == (10, 14, 0, 4)


# -- snapshots -----------------------------------------------------------------------------------


def test_snapshot_on_roll_and_close_in_kafkas_format(tmp_path: Path) -> None:
    d = tmp_path / "p-0"
    with open_log(d) as log:
        idem(log, 3, 0)
        log.roll()  # snapshot at the new segment's base offset
        snap = producer_snapshot_file(d, 3)
        assert snap.exists()
        [e] = read_snapshot(snap)
        assert (e.producer_id, e.producer_epoch, e.last_sequence, e.last_offset,
                e.offset_delta, e.current_txn_first_offset) == (PID, 0, 2, 2, 2, -1)
        assert e.timestamp == 1_700_000_000_002  # the batch's max timestamp
        idem(log, 2, 3)
    [e] = read_snapshot(producer_snapshot_file(d, 5))  # close: snapshot at the log end offset
    assert (e.last_sequence, e.last_offset, e.offset_delta) == (4, 4, 1)


def test_duplicate_detected_across_clean_restart(tmp_path: Path) -> None:
    d = tmp_path / "p-0"
    with open_log(d) as log:
        idem(log, 2, 0)
        last = idem(log, 2, 2)
    with open_log(d) as log:
        assert log.producer_state.replayed_batches == 0  # the close snapshot was enough
        again = idem(log, 2, 2)
        assert again.duplicate and (again.first_offset, again.last_offset) == (
            last.first_offset, last.last_offset)
        assert log.log_end_offset == 4
        assert not idem(log, 1, 4).duplicate


_CHILD = textwrap.dedent("""
    import os, sys
    from kafkalog.log import Log
    from kafkalog.records.record import Record
    log = Log.open(sys.argv[1])
    for i in range(4):
        log.append([Record(None, b"x%d" % i, 1700000000000 + i)], producer_id=77,
                   producer_epoch=2, base_sequence=i)
        if i == 1:
            log.roll()
    log.flush()
    print("ready", flush=True)
    sys.stdin.readline()  # killed here, never closes
""")


def test_duplicate_detected_after_sigkill(tmp_path: Path) -> None:
    """The process is killed without closing: state = snapshot taken on roll + replay."""
    d = tmp_path / "p-0"
    child = subprocess.Popen([sys.executable, "-c", _CHILD, str(d)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert sorted(p.name for p in d.glob("*.snapshot")) == ["00000000000000000002.snapshot"]
    with open_log(d) as log:
        ps = log.producer_state
        assert ps.replayed_segments == [2] and ps.replayed_batches == 2
        again = log.append([Record(None, b"x3", 1)], producer_id=77, producer_epoch=2,
                           base_sequence=3)
        assert again.duplicate and again.first_offset == 3
        with pytest.raises(OutOfOrderSequenceError):
            log.append([Record(None, b"x", 1)], producer_id=77, producer_epoch=2,
                       base_sequence=9)


def test_stray_snapshots_removed_at_load(tmp_path: Path) -> None:
    """Kafka's removeStraySnapshots: only segment base offsets and the latest (clean-shutdown)
    snapshot above them stay."""
    d = tmp_path / "p-0"
    with open_log(d) as log:
        idem(log, 2, 0)
        log.roll()  # snapshot 2 (a segment base)
        idem(log, 3, 2)
    shutil.copy(producer_snapshot_file(d, 2), producer_snapshot_file(d, 1))  # a stray
    names = sorted(p.name for p in d.glob("*.snapshot"))
    assert names == [f"{o:020d}.snapshot" for o in (1, 2, 5)]
    with open_log(d) as log:
        assert log.producer_state.snapshot_offsets() == [2, 5]
        assert log.producer_state.replayed_batches == 0


def test_idle_producer_expires_when_the_snapshot_is_loaded(tmp_path: Path) -> None:
    """Kafka's isProducerExpired at snapshot load (producer.id.expiration.ms = 1 day)."""
    d = tmp_path / "p-0"
    clock = ManualClock(1_700_000_000_000)
    with Log.open(d, clock=clock) as log:
        idem(log, 2, 0)  # last timestamp 1_700_000_000_001
    clock.advance(86_400_000)  # 1 ms short of a day since the last timestamp
    with Log.open(d, clock=clock) as log:
        assert log.producer_state.last_entry(PID) is not None
    clock.advance(1)
    with Log.open(d, clock=clock) as log:
        assert log.producer_state.last_entry(PID) is None
        info = idem(log, 2, 0)  # an unknown producer: accepted again, not a duplicate
        assert not info.duplicate and info.first_offset == 2


def test_corrupt_snapshot_is_dropped_and_state_rebuilt_from_the_log(tmp_path: Path) -> None:
    d = tmp_path / "p-0"
    with open_log(d) as log:
        idem(log, 2, 0)
    snap = producer_snapshot_file(d, 2)
    raw = bytearray(snap.read_bytes())
    raw[-1] ^= 0xFF
    snap.write_bytes(bytes(raw))
    os.unlink(d / ".kafka_cleanshutdown")  # unclean: Kafka then replays from the log start
    with open_log(d) as log:
        assert log.producer_state.replayed_batches == 1
        assert idem(log, 2, 0).duplicate


def test_truncation_rebuilds_state_and_drops_later_snapshots(tmp_path: Path) -> None:
    d = tmp_path / "p-0"
    with open_log(d) as log:
        idem(log, 2, 0)
        log.roll()
        idem(log, 2, 2)
        log.roll()
        assert producer_snapshot_file(d, 4).exists()
        log.truncate_to(2)
        assert not producer_snapshot_file(d, 4).exists()
        e = log.producer_state.last_entry(PID)
        assert (e.last_seq, e.last_data_offset) == (1, 1)
        info = idem(log, 2, 2)  # after truncation the batch is new again
        assert not info.duplicate and info.first_offset == 2


def test_snapshots_kept_as_kafka_keeps_them(tmp_path: Path) -> None:
    """Kafka's minSnapshotsOffsetToRetain: from the segment before the active one."""
    d = tmp_path / "p-0"
    with open_log(d) as log:
        for i in range(4):
            idem(log, 1, i)
            log.roll()
        # (Kafka deletes them after the recovery point moved: when the flushes the rolls
        # scheduled are done)
        log.await_scheduled_flushes(timeout=30)
        assert sorted(p.name for p in d.glob("*.snapshot")) == [
            "00000000000000000003.snapshot", "00000000000000000004.snapshot"]


def test_rolls_do_not_list_the_directory(tmp_path: Path, monkeypatch) -> None:
    """The snapshot offsets are listed once (Kafka's ``snapshots`` map, loaded at start):
    a roll used to list the whole directory to find the latest snapshot, ~2 ms per roll at
    65 segments and ~18 ms at 1,500 (one more scan per flush, under the write lock)."""
    d = tmp_path / "p-0"
    listings = []
    real = ProducerStateManager._list_snapshots
    monkeypatch.setattr(ProducerStateManager, "_list_snapshots",
                        lambda self: listings.append(1) or real(self))
    with open_log(d) as log:
        for i in range(30):
            idem(log, 1, i)
            log.roll()
        log.await_scheduled_flushes(timeout=30)
        _assert_snapshot_list_is_the_directory(log)
        assert log.producer_state.snapshot_offsets() == [29, 30]
    assert len(listings) == 1


def test_a_read_only_log_sees_snapshots_another_writer_adds(tmp_path: Path) -> None:
    """A read-only manager keeps no list: the directory may have another writer."""
    d = tmp_path / "p-0"
    with open_log(d) as log:
        idem(log, 1, 0)
    ro = ProducerStateManager(d, read_only=True)
    assert ro.snapshot_offsets() == [1]
    producer_snapshot_file(d, 1).rename(producer_snapshot_file(d, 5))
    assert ro.snapshot_offsets() == [5]


# -- real Kafka data -------------------------------------------------------------------------


def test_real_idempotent_partition_replayed_like_kafka_python_reads_it(tmp_path: Path) -> None:
    """LDI-POC TestTopicPatient-0 (Kafka 3.7 idempotent producer, no snapshot): replaying it
    gives, per producer, the last batch's fields as kafka-python reads them."""
    src = shared_fixture_path("kafka-real", "LDI-POC", "TestTopicPatient-0")
    d = tmp_path / "TestTopicPatient-0"
    shutil.copytree(src, d)
    data = (d / "00000000000000000000.log").read_bytes()
    expected = {}
    mr = kafka_mr.MemoryRecords(data)
    while mr.has_next():
        b = mr.next_batch()
        if b.producer_id >= 0:
            expected[b.producer_id] = (b.producer_epoch, b.last_sequence, b.last_offset,
                                       b.last_offset - b.base_offset, b.max_timestamp)
    assert expected, "fixture holds idempotent batches"
    got = {b.producer_id: (b.producer_epoch, b.last_sequence, b.last_offset,
                           b.last_offset - b.base_offset, b.max_timestamp)
           for b in scan_producer_batches(data)}
    assert got == expected
    with open_log(d) as log:  # no clean-shutdown marker: recovered, state replayed
        for pid, (epoch, last_seq, last_off, delta, ts) in expected.items():
            e = log.producer_state.last_entry(pid)
            assert (e.producer_epoch, e.last_seq, e.last_data_offset,
                    e.batch_metadata[-1].offset_delta, e.last_timestamp) == (
                epoch, last_seq, last_off, delta, ts)
        leo = log.log_end_offset
    [snap] = [read_snapshot(p) for p in d.glob("*.snapshot") if p.name == f"{leo:020d}.snapshot"]
    assert {e.producer_id: (e.producer_epoch, e.last_sequence, e.last_offset, e.offset_delta,
                            e.timestamp) for e in snap} == expected


def test_real_snapshots_agree_with_replay(tmp_path: Path) -> None:
    """Kafka's own snapshots of VolodymyrZee-kafka (all empty: no idempotent producer) equal
    what a replay of the same offsets gives."""
    root = shared_fixture_path("kafka-real", "VolodymyrZee-kafka")
    expected = json.loads((root / "EXPECTED.json").read_text())
    assert expected  # provenance file present
    for snap in sorted(root.glob("*/*.snapshot")):
        d = tmp_path / snap.parent.name
        shutil.copytree(snap.parent, d)
        psm = ProducerStateManager(d)
        end = int(snap.name.split(".")[0])
        with Log.open(d, clock=ManualClock(), read_only=True) as log:
            psm.replay(log.segments, 0, end)
        assert [e.to_snapshot() for e in psm.producers.values()] == read_snapshot(snap)


# -- property: snapshots + replay give the state a full replay gives ------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from kafkalog.tools.verify import verify_partition  # noqa: E402

_OPS = st.lists(st.one_of(
    st.tuples(st.just("idem"), st.integers(1, 3)),
    st.tuples(st.just("txn"), st.integers(1, 3)),
    st.tuples(st.sampled_from(["commit", "abort", "roll", "reopen", "plain", "flushed"]),
              st.just(0)),
    st.tuples(st.just("truncate"), st.integers(0, 6)),
), min_size=1, max_size=25)


def _state(log: Log) -> tuple[dict, int]:
    ps = log.producer_state
    return ({pid: e.to_snapshot() for pid, e in sorted(ps.producers.items())},
            log.last_stable_offset)


def _assert_snapshot_list_is_the_directory(log: Log) -> None:
    # (under the write lock: a flush on the flusher thread deletes snapshots under it)
    with log._write_lock:
        kept = log.producer_state.snapshot_offsets()
        on_disk = sorted(int(p.name.split(".")[0]) for p in log.directory.glob("*.snapshot"))
    assert kept == on_disk


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=_OPS)
def test_incremental_state_equals_full_replay(tmp_path_factory, ops) -> None:
    root = tmp_path_factory.mktemp("ps")
    d = root / "p-0"
    log = open_log(d, segment_bytes=300)
    try:
        for op, n in ops:
            if op in ("idem", "txn"):
                pid = 1 if op == "idem" else 2
                e = log.producer_state.last_entry(pid)
                seq = 0 if e is None or e.last_seq < 0 else e.last_seq + 1
                log.append(recs(n), producer_id=pid, producer_epoch=0, base_sequence=seq,
                           transactional=op == "txn")
            elif op in ("commit", "abort"):
                (log.commit_transaction if op == "commit" else log.abort_transaction)(2, 0)
            elif op == "roll":
                log.roll()
            elif op == "plain":
                log.append(recs(1))
            elif op == "reopen":
                log.close()
                log = open_log(d, segment_bytes=300)
            elif op == "flushed":  # the rolls' flushes delete the snapshots Kafka drops
                log.await_scheduled_flushes(timeout=30)
            else:
                log.truncate_to(max(0, log.log_end_offset - n))
            _assert_snapshot_list_is_the_directory(log)
        log.flush()
        incremental = _state(log)
        committed = [r.offset for r in log.records(isolation="read_committed")]
    finally:
        log.close()
    assert [f for f in verify_partition(d).findings if f.severity == "error"] == []
    for snap in d.glob("*.snapshot"):
        snap.unlink()
    os.unlink(d / ".kafka_cleanshutdown")
    with open_log(d, segment_bytes=300) as full:  # unclean, no snapshot: replay from offset 0
        if full.log_end_offset > full.log_start_offset:
            assert full.producer_state.replayed_segments[:1] == [full.segments[0].base_offset]
        assert _state(full) == incremental
        assert [r.offset for r in full.records(isolation="read_committed")] == committed
