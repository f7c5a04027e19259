"""TransactionIndex: Kafka's TransactionIndexTest cases, file format, quirks and errors."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from kafkalog.errors import CorruptIndexError, InvalidOffsetError
from kafkalog.index.txn_index import ENTRY_SIZE, AbortedTxn, TransactionIndex


def _txn(pid: int, first: int, last: int, lso: int) -> AbortedTxn:
    return AbortedTxn(producer_id=pid, first_offset=first, last_offset=last, last_stable_offset=lso)


@pytest.fixture
def idx(tmp_path: Path):
    i = TransactionIndex(tmp_path / "00000000000000000000.txnindex", 0)
    yield i
    i.close()


def test_entry_layout_is_34_big_endian_bytes() -> None:
    raw = _txn(0x0102030405060708, 5, 9, 3).to_bytes()
    assert len(raw) == ENTRY_SIZE == 34
    assert raw == struct.pack(">hqqqq", 0, 0x0102030405060708, 5, 9, 3)
    assert AbortedTxn.from_bytes(b"junk" + raw, 4) == _txn(0x0102030405060708, 5, 9, 3)


def test_file_created_lazily_and_round_trip(idx: TransactionIndex) -> None:
    assert not idx.path.exists() and idx.all_aborted_txns() == [] and idx.size_in_bytes == 0
    txns = [_txn(0, 0, 10, 11), _txn(1, 5, 15, 13), _txn(2, 18, 35, 25), _txn(1, 36, 40, 40)]
    for t in txns:
        idx.append(t)
    assert idx.all_aborted_txns() == txns == list(idx)
    assert idx.path.read_bytes() == b"".join(t.to_bytes() for t in txns)
    idx.close()
    again = TransactionIndex(idx.path, 0)
    assert again.all_aborted_txns() == txns and again.last_offset == 40
    with pytest.raises(InvalidOffsetError, match="expected > 40, found 40"):
        again.append(_txn(3, 1, 40, 1))  # reopened index still knows its last offset
    again.close()


def test_append_requires_increasing_last_offset(idx: TransactionIndex) -> None:
    idx.append(_txn(0, 0, 10, 10))
    with pytest.raises(InvalidOffsetError) as e:
        idx.append(_txn(1, 0, 9, 10))
    assert e.value.offset == 9 and e.value.path == str(idx.path)
    assert len(idx.all_aborted_txns()) == 1


def test_collect_aborted_txns(idx: TransactionIndex) -> None:
    txns = [_txn(0, 0, 10, 11), _txn(1, 5, 15, 13), _txn(2, 18, 35, 25), _txn(3, 32, 50, 40)]
    for t in txns:
        idx.append(t)
    # overlap: last_offset >= fetch_offset and first_offset < upper bound; complete as soon as
    # an entry's last stable offset reaches the upper bound
    r = idx.collect_aborted_txns(0, 32)
    assert r.aborted_transactions == txns[:3] and r.is_complete  # 4th: first 32 not < 32
    r = idx.collect_aborted_txns(0, 35)
    assert r.aborted_transactions == txns and r.is_complete
    r = idx.collect_aborted_txns(11, 35)
    assert r.aborted_transactions == txns[1:] and r.is_complete
    r = idx.collect_aborted_txns(0, 10)  # lso 11 >= 10: stops after the first entry
    assert r.aborted_transactions == txns[:1] and r.is_complete
    r = idx.collect_aborted_txns(16, 100)
    assert r.aborted_transactions == txns[2:] and not r.is_complete
    r = idx.collect_aborted_txns(51, 100)
    assert r.aborted_transactions == [] and not r.is_complete


def test_truncate_to(idx: TransactionIndex) -> None:
    txns = [_txn(0, 0, 10, 2), _txn(1, 5, 15, 16), _txn(2, 18, 35, 25)]
    for t in txns:
        idx.append(t)
    idx.truncate_to(36)  # nothing at or above: unchanged
    assert idx.all_aborted_txns() == txns
    idx.truncate_to(15)
    assert idx.all_aborted_txns() == txns[:1] and idx.size_in_bytes == 34
    assert idx.last_offset == 10
    idx.append(_txn(4, 11, 12, 12))  # appends continue after the new last offset
    idx.truncate_to(0)
    assert idx.all_aborted_txns() == [] and idx.last_offset is None
    idx.append(_txn(5, 0, 1, 1))
    idx.reset()
    assert idx.size_in_bytes == 0 and idx.last_offset is None


def test_trailing_partial_entry_is_ignored(tmp_path: Path) -> None:
    p = tmp_path / "a.txnindex"
    p.write_bytes(_txn(1, 2, 3, 4).to_bytes() + b"\x00" * 20)
    i = TransactionIndex(p, 0, writable=False)
    assert i.all_aborted_txns() == [_txn(1, 2, 3, 4)]
    i.sanity_check()
    i.close()


def test_version_quirk_reads_only_the_high_byte(tmp_path: Path) -> None:
    p = tmp_path / "b.txnindex"
    # low byte 5 is invisible to Kafka (it reads byte 0 only); high byte 0xff is -1 <= 0
    p.write_bytes(struct.pack(">hqqqq", 5, 1, 2, 3, 4) + struct.pack(">hqqqq", -1, 1, 2, 9, 4))
    i = TransactionIndex(p, 0, writable=False)
    assert [t.version for t in i.all_aborted_txns()] == [0, -1]
    i.close()
    p.write_bytes(struct.pack(">hqqqq", 0, 1, 2, 3, 4) + struct.pack(">hqqqq", 0x0100, 1, 2, 9, 4))
    with pytest.raises(CorruptIndexError, match="expected at most 0, found 1") as e:
        TransactionIndex(p, 0, writable=False)
    assert e.value.position == 34


def test_sanity_check(tmp_path: Path) -> None:
    p = tmp_path / "00000000000000000100.txnindex"
    p.write_bytes(_txn(1, 95, 120, 100).to_bytes() + _txn(2, 90, 99, 100).to_bytes())
    i = TransactionIndex(p, 100, writable=False)
    with pytest.raises(CorruptIndexError, match="expected >= 100, found 99") as e:
        i.sanity_check()
    assert e.value.position == 34 and e.value.offset == 99
    with pytest.raises(PermissionError):
        i.append(_txn(1, 1, 200, 1))
    with pytest.raises(PermissionError):
        i.truncate_to(0)
    i.close()
    assert p.stat().st_size == 68


def test_rename_delete_flush(tmp_path: Path) -> None:
    i = TransactionIndex(tmp_path / "c.txnindex", 0)
    i.rename_to(tmp_path / "c.txnindex.deleted")  # no file yet: only the path changes
    assert i.path.name == "c.txnindex.deleted" and not i.path.exists()
    i.append(_txn(1, 1, 2, 2))
    i.flush()
    target = tmp_path / "d.txnindex"
    i.rename_to(target)
    assert target.exists() and i.all_aborted_txns() == [_txn(1, 1, 2, 2)]
    assert i.delete() is True and not target.exists() and i.delete() is False
    assert i.all_aborted_txns() == []


def test_read_only_missing_file_is_empty(tmp_path: Path) -> None:
    p = tmp_path / "e.txnindex"
    i = TransactionIndex(p, 0, writable=False)
    assert i.all_aborted_txns() == [] and i.collect_aborted_txns(0, 10).is_complete is False
    i.sanity_check()
    assert not p.exists()
