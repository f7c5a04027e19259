"""Transactions (issue 7): COMMIT/ABORT markers, ``.txnindex``, last stable offset,
``read_committed`` reading; checked against kafka-python's reader, the peer-built transactional
segments and ``kafkalog verify``."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from kafkalog.clock import ManualClock
from kafkalog.index.txn_index import AbortedTxn, TransactionIndex
from kafkalog.log import Log
from kafkalog.producer_state import InvalidProducerEpochError, TransactionCoordinatorFencedError
from kafkalog.records.record import Record
from kafkalog.tools.verify import verify_partition
from tests.conftest import shared_fixture_path

kafka_mr = pytest.importorskip("kafka.record.memory_records")
kafka_dr = pytest.importorskip("kafka.record.default_records")

T0 = 1_700_000_000_000


def open_log(path: Path) -> Log:
    return Log.open(path, clock=ManualClock(T0))


def txn_append(log: Log, pid: int, values: list[bytes], seq: int, epoch: int = 0):
    return log.append([Record(None, v, T0) for v in values], producer_id=pid,
                      producer_epoch=epoch, base_sequence=seq, transactional=True)


def plain(log: Log, values: list[bytes]):
    return log.append([Record(None, v, T0) for v in values])


def txn_entries(seg) -> list[AbortedTxn]:
    if not seg.txn_index_path.exists():
        return []
    idx = TransactionIndex(seg.txn_index_path, seg.base_offset, writable=False)
    try:
        return idx.all_aborted_txns()
    finally:
        idx.close()


def values(log: Log, *args: int, **kw) -> list[bytes]:
    return [r.value for r in log.records(*args, **kw)]


def no_errors(directory: Path) -> None:
    rep = verify_partition(directory)
    errors = [f for f in rep.findings if f.severity == "error"]
    assert errors == []


def test_abort_and_commit_markers_txnindex_lso_and_read_committed(tmp_path: Path) -> None:
    d = tmp_path / "t-0"
    with open_log(d) as log:
        plain(log, [b"a"])                                   # 0
        txn_append(log, 10, [b"p1-x", b"p1-y"], 0)            # 1-2   P10 opens at 1
        assert log.last_stable_offset == 1
        txn_append(log, 20, [b"p2-x"], 0)                     # 3     P20 opens at 3
        plain(log, [b"b"])                                   # 4
        info = log.abort_transaction(10, 0, coordinator_epoch=3)  # 5
        assert (info.first_offset, info.last_offset) == (5, 5)
        assert log.last_stable_offset == 3                    # P20 still open
        # read_committed stops at the LSO: only offset 0..2, with P10's aborted data gone
        assert values(log, isolation="read_committed") == [b"a"]
        log.commit_transaction(20, 0)                         # 6
        assert log.last_stable_offset == log.log_end_offset == 7
        assert txn_entries(log.active_segment) == [
            AbortedTxn(producer_id=10, first_offset=1, last_offset=5, last_stable_offset=3)]
        assert values(log) == [b"a", b"p1-x", b"p1-y", b"p2-x", b"b"]
        assert values(log, isolation="read_committed") == [b"a", b"p2-x", b"b"]
        assert values(log, 2, isolation="read_committed") == [b"p2-x", b"b"]
        t = log.read_table(isolation="read_committed")
        assert t.column("value").to_pylist() == [b"a", b"p2-x", b"b"]
        assert t.column("offset").to_pylist() == [0, 3, 4]
        assert log.read_table(columns=["value"], isolation="read_committed").num_rows == 3
        assert log.read_table().num_rows == 5
        ctl = [r for r in log.records(include_control=True) if r.offset in (5, 6)]
        assert [r.key for r in ctl] == [b"\x00\x00\x00\x00", b"\x00\x00\x00\x01"]
        assert ctl[0].value == b"\x00\x00\x00\x00\x00\x03"  # version 0, coordinator epoch 3
        with pytest.raises(ValueError, match="isolation must be"):
            values(log, isolation="serializable")
    no_errors(d)


def test_markers_read_by_kafka_python(tmp_path: Path) -> None:
    d = tmp_path / "t-0"
    with open_log(d) as log:
        txn_append(log, 77, [b"x"], 0, epoch=4)
        log.commit_transaction(77, 4, coordinator_epoch=9)
        txn_append(log, 77, [b"y"], 1, epoch=4)
        log.abort_transaction(77, 4, coordinator_epoch=9)
    data = (d / "00000000000000000000.log").read_bytes()
    mr = kafka_mr.MemoryRecords(data)
    seen = []
    while mr.has_next():
        b = mr.next_batch()
        assert b.validate_crc()
        if b.is_control_batch:
            [rec] = list(b)
            assert isinstance(rec, kafka_dr.ControlRecord)
            assert (b.is_transactional, b.producer_id, b.producer_epoch, b.base_sequence,
                    b.records_count) == (True, 77, 4, -1, 1)
            assert rec.value == b"\x00\x00\x00\x00\x00\x09"
            seen.append(("commit" if rec.commit else "abort" if rec.abort else "?",
                         b.base_offset, rec.timestamp))
    assert seen == [("commit", 1, T0), ("abort", 3, T0)]


def test_marker_fencing(tmp_path: Path) -> None:
    with open_log(tmp_path / "t-0") as log:
        txn_append(log, 5, [b"x"], 0, epoch=2)
        log.commit_transaction(5, 2, coordinator_epoch=7)
        leo = log.log_end_offset
        with pytest.raises(TransactionCoordinatorFencedError, match="expected >= 7, found 6"):
            log.abort_transaction(5, 2, coordinator_epoch=6)
        with pytest.raises(InvalidProducerEpochError, match="expected >= 2, found 1"):
            log.abort_transaction(5, 1, coordinator_epoch=7)
        assert log.log_end_offset == leo
        with pytest.raises(ValueError, match="producer id and epoch"):
            log.commit_transaction(-1, 0)
        # an empty transaction's marker is written but completes nothing (no txnindex entry)
        log.abort_transaction(5, 2, coordinator_epoch=7)
        assert txn_entries(log.active_segment) == []


def test_open_transaction_survives_clean_restart(tmp_path: Path) -> None:
    d = tmp_path / "t-0"
    with open_log(d) as log:
        plain(log, [b"a"])
        txn_append(log, 3, [b"t1", b"t2"], 0)
    with open_log(d) as log:
        assert log.producer_state.replayed_batches == 0
        assert log.last_stable_offset == 1
        assert values(log, isolation="read_committed") == [b"a"]
        log.abort_transaction(3, 0)
        assert values(log, isolation="read_committed") == [b"a"]
        assert txn_entries(log.active_segment) == [AbortedTxn(3, 1, 3, 4)]
    no_errors(d)


def test_marker_in_a_later_segment(tmp_path: Path) -> None:
    d = tmp_path / "t-0"
    with open_log(d) as log:
        txn_append(log, 8, [b"x", b"y"], 0)
        log.roll()
        plain(log, [b"z"])
        log.abort_transaction(8, 0)
        first, second = log.segments
        assert txn_entries(first) == []
        assert txn_entries(second) == [AbortedTxn(8, 0, 3, 4)]
        assert values(log, 0, 2, isolation="read_committed") == []
        assert values(log, isolation="read_committed") == [b"z"]
    no_errors(d)


def test_txnindex_rebuilt_by_recovery_and_truncated(tmp_path: Path) -> None:
    d = tmp_path / "t-0"
    log = open_log(d)
    try:
        txn_append(log, 8, [b"x"], 0)
        log.abort_transaction(8, 0)
        txn_append(log, 8, [b"y"], 1)
        log.abort_transaction(8, 0)
        log.flush()
        crashed = tmp_path / "crashed" / "t-0"
        shutil.copytree(d, crashed)  # the files as a crash would leave them (no marker)
    finally:
        log.close()
    txn = next(crashed.glob("*.txnindex"))
    expected = txn.read_bytes()
    assert len(expected) == 2 * 34
    txn.write_bytes(expected[:34])  # lose the second entry
    with open_log(crashed) as log:
        assert [b for b, _ in log.loaded.recovered_segments] == [0]
        assert txn.read_bytes() == expected
        log.truncate_to(3)
        assert txn_entries(log.active_segment) == [AbortedTxn(8, 0, 1, 2)]
        assert log.producer_state.last_entry(8).current_txn_first_offset == 2
        assert log.last_stable_offset == 2


@pytest.mark.parametrize("lib", ["kafka-python", "aiokafka"])
def test_peer_built_transactional_segments(tmp_path: Path, lib: str) -> None:
    """Segments written by kafka-python/aiokafka with transactional batches and COMMIT/ABORT
    markers, appended as a follower: the .txnindex gets one entry per aborted transaction and
    read_committed drops exactly the aborted records (expected values from expected.json)."""
    folder = shared_fixture_path("peer-built", lib)
    expected = json.loads((folder / "expected.json").read_text())
    data = (folder / "00000000000000000000.log").read_bytes()
    aborted_txns, open_first = [], None
    aborted_ranges: list[tuple[int, int]] = []
    pending: list[tuple[int, int]] = []
    for b in expected["batches"]:
        if b["magic"] != 2 or not b["is_transactional"]:
            continue
        if b["is_control"]:
            if b["control_type"] == "ABORT" and open_first is not None:
                aborted_txns.append(AbortedTxn(b["producer_id"], open_first, b["base_offset"],
                                               b["base_offset"] + 1))
                aborted_ranges += pending
            open_first = None
        else:
            if open_first is None:
                open_first, pending = b["base_offset"], []
            pending.append((b["base_offset"], b["last_offset"]))
    assert aborted_txns, "fixture holds aborted transactions"
    d = tmp_path / "peer-0"
    with open_log(d) as log:
        log.append_batches(data)
        assert log.log_end_offset == expected["next_offset"]
        assert txn_entries(log.active_segment) == aborted_txns
        everything = [(r.offset, r.value) for r in log.records()]
        committed = [(r.offset, r.value) for r in log.records(isolation="read_committed")]
        offs = np.array([o for o, _ in everything])
        in_aborted = np.zeros(len(offs), bool)
        for lo, hi in aborted_ranges:
            in_aborted |= (offs >= lo) & (offs <= hi)
        assert committed == [x for x, bad in zip(everything, in_aborted, strict=True) if not bad]
        assert log.read_table(isolation="read_committed").column("offset").to_pylist() == [
            o for o, _ in committed]
    no_errors(d)


def test_read_committed_from_another_thread_never_sees_aborted_or_open_data(
        tmp_path: Path) -> None:
    import threading

    d = tmp_path / "t-0"
    errors: list[BaseException] = []
    with open_log(d) as log:
        stop = threading.Event()

        def reader() -> None:
            try:
                while not stop.is_set():
                    vals = values(log, isolation="read_committed")
                    bad = [v for v in vals if v.startswith(b"A")]
                    assert bad == [], bad
            except BaseException as e:  # noqa: BLE001 - reported by the main thread
                errors.append(e)

        t = threading.Thread(target=reader)
        switch = sys.getswitchinterval()
        sys.setswitchinterval(1e-6)  # switch threads often: widen every race window
        t.start()
        try:
            seq = 0
            for i in range(150):
                aborted = i % 2 == 0
                tag = b"A" if aborted else b"C"
                txn_append(log, 5, [tag + b"%d" % i, tag + b"x"], seq)
                seq += 2
                if aborted:
                    log.abort_transaction(5, 0)
                else:
                    log.commit_transaction(5, 0)
                if i % 50 == 49:
                    log.roll()
        finally:
            stop.set()
            t.join(30)
            sys.setswitchinterval(switch)
        assert errors == []
        assert len(values(log, isolation="read_committed")) == 150
