"""RecordBatch views and iter_batches: sources, stop rule, validation, records, control info."""

from __future__ import annotations

import mmap
import struct
from pathlib import Path

import numpy as np
import pytest

from kafkalog import CorruptRecordError, Record, RecordTooLargeError, encode_batch, iter_batches
from kafkalog.records import batch as batch_mod
from kafkalog.records.batch import (
    LOG_OVERHEAD,
    RECORD_BATCH_OVERHEAD,
    RecordBatch,
    increment_sequence,
    parse_control_key,
    parse_end_txn_marker,
    records_bytes,
)
from kafkalog.records.builder import encode_control_batch, encode_end_txn_marker
from kafkalog.records.crc import crc32c

T = 1700000000000


def recs(n: int, start_ts: int = T) -> list[Record]:
    return [Record(b"k%d" % i, b"v" * i, start_ts + i, [("h", b"%d" % i)] if i % 2 else ())
            for i in range(n)]


def log_of(*batches: bytes) -> bytes:
    return b"".join(batches)


def three_batches() -> bytes:
    return log_of(
        encode_batch(recs(3), base_offset=0),
        encode_batch(recs(2), base_offset=3, compression="gzip"),
        encode_batch(recs(4), base_offset=5, compression="zstd"),
    )


def test_constants_have_kafkas_values() -> None:
    assert (LOG_OVERHEAD, RECORD_BATCH_OVERHEAD) == (12, 61)
    assert batch_mod.HEADER_STRUCT.size == RECORD_BATCH_OVERHEAD
    assert (batch_mod.CRC_OFFSET, batch_mod.ATTRIBUTES_OFFSET, batch_mod.RECORDS_COUNT_OFFSET) == (
        17, 21, 57)
    assert (batch_mod.COMPRESSION_CODEC_MASK, batch_mod.TIMESTAMP_TYPE_MASK,
            batch_mod.TRANSACTIONAL_FLAG_MASK, batch_mod.CONTROL_FLAG_MASK,
            batch_mod.DELETE_HORIZON_FLAG_MASK) == (0x07, 0x08, 0x10, 0x20, 0x40)


# --- sources ------------------------------------------------------------------------------------


def _summary(source: object) -> list[tuple]:
    return [(b.position, b.base_offset, [(r.offset, r.value) for r in b])
            for b in iter_batches(source)]


def test_every_source_kind_reads_the_same(tmp_path: Path) -> None:
    data = three_batches()
    want = _summary(data)
    assert [w[1] for w in want] == [0, 3, 5]
    p = tmp_path / "00000000000000000000.log"
    p.write_bytes(data)
    assert _summary(bytearray(data)) == want
    assert _summary(memoryview(data)) == want
    assert _summary(np.frombuffer(data, np.uint8)) == want
    assert _summary(str(p)) == want
    assert _summary(p) == want
    with open(p, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        assert _summary(mm) == want


def test_empty_sources(tmp_path: Path) -> None:
    p = tmp_path / "empty.log"
    p.write_bytes(b"")
    assert list(iter_batches(p)) == []
    assert list(iter_batches(b"")) == []
    assert list(iter_batches(np.zeros(0, np.uint8))) == []


def test_missing_file_is_oserror(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        list(iter_batches(tmp_path / "nope.log"))


def test_bad_source_types() -> None:
    with pytest.raises(TypeError):
        list(iter_batches(12345))
    with pytest.raises(TypeError):
        list(iter_batches(np.zeros(10, np.int32)))


def test_errors_name_the_path(tmp_path: Path) -> None:
    data = three_batches()
    p = tmp_path / "00000000000000000000.log"
    p.write_bytes(data + bytes(100))  # zero-filled (preallocated) tail
    with pytest.raises(CorruptRecordError) as ei:
        list(iter_batches(p))
    assert ei.value.path == str(p) and ei.value.position == len(data)
    assert str(p) in str(ei.value)


def test_start_end_range() -> None:
    data = three_batches()
    positions = [b.position for b in iter_batches(data)]
    assert [b.base_offset for b in iter_batches(data, start=positions[1])] == [3, 5]
    assert [b.base_offset for b in iter_batches(data, end=positions[2])] == [0, 3]


def test_many_entries_cross_scan_chunks() -> None:
    data = log_of(*(encode_batch([Record(None, b"%d" % i, T)], base_offset=i)
                    for i in range(300)))
    got = [b.base_offset for b in iter_batches(data)]
    assert got == list(range(300))


# --- stop rule ----------------------------------------------------------------------------------


def test_partial_trailing_entry_ends_iteration_at_every_cut() -> None:
    data = three_batches()
    sizes = [b.size for b in iter_batches(data)]
    whole = sum(sizes[:2])
    for cut in range(whole, len(data)):
        got = [b.base_offset for b in iter_batches(data[:cut])]
        assert got == [0, 3], cut


@pytest.mark.parametrize("size", [0, 5, 13, -1])
def test_corrupt_size_raises_with_position(size: int) -> None:
    data = three_batches()
    bad = struct.pack(">qi", 99, size) + bytes(30)
    with pytest.raises(CorruptRecordError, match=str(size)) as ei:
        list(iter_batches(data + bad))
    assert ei.value.position == len(data)


def test_bad_magic_and_short_v2() -> None:
    one = encode_batch(recs(1))
    bad_magic = one[:16] + b"\x07" + one[17:]
    with pytest.raises(CorruptRecordError, match="magic") as ei:
        list(iter_batches(one + bad_magic))
    assert ei.value.position == len(one)
    short = struct.pack(">qi", 0, 30) + bytes(4) + b"\x02" + bytes(25)
    with pytest.raises(CorruptRecordError, match="61"):
        list(iter_batches(short))


# --- validation ---------------------------------------------------------------------------------


def _flip(data: bytes, pos: int) -> bytes:
    return data[:pos] + bytes((data[pos] ^ 0x01,)) + data[pos + 1:]


def test_crc_mismatch_validate_true_names_both_crcs() -> None:
    data = three_batches()
    second = list(iter_batches(data))[1]
    bad = _flip(data, second.position + 40)  # inside maxTimestamp
    with pytest.raises(CorruptRecordError) as ei:
        list(iter_batches(bad))
    e = ei.value
    assert e.position == second.position and e.offset == 3
    stored = second.crc
    computed = crc32c(bad[second.position + 21 : second.position + second.size])
    assert f"stored crc = {stored}" in str(e) and f"computed crc = {computed}" in str(e)


def test_crc_mismatch_validate_false_yields_invalid() -> None:
    data = encode_batch(recs(3))
    bad = _flip(data, 40)  # maxTimestamp: still parsable
    (b,) = list(iter_batches(bad, validate=False))
    assert b.is_valid is False and b.crc != b.computed_crc
    assert [r.value for r in b] == [r.value for r in recs(3)]
    with pytest.raises(CorruptRecordError):
        b.ensure_valid()


def test_epoch_and_base_offset_are_outside_the_crc() -> None:
    data = bytearray(encode_batch(recs(2)))
    struct.pack_into(">q", data, 0, 12345)
    struct.pack_into(">i", data, 12, 77)
    (b,) = list(iter_batches(bytes(data)))
    assert (b.base_offset, b.partition_leader_epoch, b.is_valid) == (12345, 77, True)
    assert [r.offset for r in b] == [12345, 12346]


def test_unknown_codec_id() -> None:
    data = bytearray(encode_batch(recs(2)))
    data[22] |= 0x05
    struct.pack_into(">I", data, 17, crc32c(bytes(data[21:])))
    with pytest.raises(CorruptRecordError, match="compression"):
        list(iter_batches(bytes(data)))
    (b,) = list(iter_batches(bytes(data), validate=False))
    assert b.compression == "unknown(5)"
    with pytest.raises(CorruptRecordError, match="compression"):
        list(b)


# --- header-derived values ----------------------------------------------------------------------


def test_derived_values() -> None:
    data = encode_batch(recs(5), base_offset=100, producer_id=7, producer_epoch=2,
                        base_sequence=2147483646, transactional=True, partition_leader_epoch=3)
    b = RecordBatch(data)
    assert (b.last_offset, b.next_offset, b.last_offset_delta) == (104, 105, 4)
    assert b.last_sequence == 2  # wraps past INT32_MAX to 0
    assert (b.is_transactional, b.is_control, b.delete_horizon_ms) == (True, False, None)
    assert (b.size, b.position, b.magic, b.count_or_null) == (len(data), 0, 2, 5)
    assert b.control_type() is None and b.end_txn_marker() is None and b.coordinator_epoch is None
    assert increment_sequence(5, 3) == 8 and increment_sequence(2147483647, 0) == 2147483647
    assert "base_offset=100" in repr(b)


def test_log_append_time_records_read_batch_time() -> None:
    data = encode_batch(recs(4), timestamp_type="log_append", log_append_time=T + 999)
    b = RecordBatch(data)
    assert (b.timestamp_type, b.max_timestamp, b.base_timestamp) == ("LogAppendTime", T + 999, T)
    assert [r.timestamp for r in b] == [T + 999] * 4


def test_delete_horizon() -> None:
    data = encode_batch(recs(2), delete_horizon_ms=T + 50000)
    b = RecordBatch(data)
    assert b.delete_horizon_ms == T + 50000 and b.attributes & 0x40
    assert [r.timestamp for r in b] == [T, T + 1]  # deltas are relative to the horizon


def test_records_bytes_helper() -> None:
    plain = encode_batch(recs(3))
    area = records_bytes(plain, 0, len(plain))
    assert isinstance(area, memoryview) and bytes(area) == plain[61:]
    buf = np.frombuffer(plain + plain, np.uint8)
    assert bytes(records_bytes(buf, len(plain), len(plain))) == plain[61:]
    zipped = encode_batch(recs(3), compression="snappy")
    assert records_bytes(zipped, 0, len(zipped)) == plain[61:]
    with pytest.raises(RecordTooLargeError):
        records_bytes(zipped, 0, len(zipped), max_size=10)


def test_max_decompressed_bytes_bound() -> None:
    data = encode_batch([Record(None, bytes(100000), T)], compression="lz4")
    (b,) = list(iter_batches(data, max_decompressed_bytes=50000))
    with pytest.raises(RecordTooLargeError, match="50000") as ei:
        list(b)
    assert ei.value.position == 0


# --- control batches ----------------------------------------------------------------------------


def test_end_txn_markers() -> None:
    commit = RecordBatch(encode_end_txn_marker(True, producer_id=9, producer_epoch=1,
                                               coordinator_epoch=42, timestamp=T))
    abort = RecordBatch(encode_end_txn_marker(False, producer_id=9, producer_epoch=1,
                                              timestamp=T))
    assert (commit.control_type(), commit.control_type_id(), commit.coordinator_epoch) == (
        "COMMIT", 1, 42)
    assert (abort.control_type(), abort.control_type_id(), abort.coordinator_epoch) == (
        "ABORT", 0, 0)
    assert commit.base_sequence == -1 and commit.is_transactional and commit.is_control


def test_other_control_types() -> None:
    lc = RecordBatch(encode_control_batch(2, value=b"\x00\x00", timestamp=T))
    assert (lc.control_type(), lc.end_txn_marker()) == ("LEADER_CHANGE", None)
    unknown = RecordBatch(encode_control_batch(99, timestamp=T))
    assert (unknown.control_type(), unknown.control_type_id()) == ("UNKNOWN", -1)
    assert parse_control_key(b"\x00\x05\x00\x01\xff").version == 5  # higher versions parse as 0
    for bad in (None, b"\x00\x00\x01", b"\xff\xff\x00\x01"):
        with pytest.raises(CorruptRecordError):
            parse_control_key(bad)
    for key, value in ((b"\x00\x00\x00\x01", b"\x00\x00\x00"), (b"\x00\x00\x00\x02", bytes(6)),
                       (b"\x00\x00\x00\x01", b"\xff\xff\x00\x00\x00\x00")):
        with pytest.raises(CorruptRecordError):
            parse_end_txn_marker(key, value)
    bad_key = RecordBatch(encode_batch([Record(b"\x00", None, T)], control=True))
    with pytest.raises(CorruptRecordError):
        bad_key.control_type()


# --- malformed records --------------------------------------------------------------------------


def _with_records_area(area: bytes, count: int) -> bytes:
    """A valid-CRC batch whose records area is ``area`` (to test record-level checks)."""
    header = bytearray(RecordBatch(encode_batch(recs(1)))._mv[:61])
    struct.pack_into(">i", header, 8, 61 - 12 + len(area))
    struct.pack_into(">i", header, 57, count)
    body = bytes(header) + area
    crc = crc32c(body[21:])
    return body[:17] + struct.pack(">I", crc) + body[21:]


def _one_record_area() -> bytes:
    return encode_batch([Record(b"k", b"v", T, [("h", b"x")])])[61:]


@pytest.mark.parametrize(
    ("area", "count", "match"),
    [
        (b"", 1, "end of data"),
        (_one_record_area(), 2, "end of data"),
        (_one_record_area() + b"\x00", 1, "remaining"),
        (_one_record_area(), -1, "record count"),
        (b"\x02" + bytes(5), 1, "record size"),  # length 1 < minimum
        (b"\x7e" + bytes(10), 1, "record size"),  # length 63 > remaining
        (bytes.fromhex("0c" "00" "00" "00" "01" "01" "03"), 1, "header count"),  # -2 headers
        (bytes.fromhex("0e" "00" "00" "00" "01" "01" "02" "03"), 1, "negative header key"),
        (bytes.fromhex("0e" "00" "00" "00" "08" "01" "00" "00"), 1, "key length"),
        (bytes.fromhex("0e" "00" "00" "00" "01" "01" "00" "00"), 1, "record size"),  # consumed<len
    ],
)
def test_malformed_records_raise(area: bytes, count: int, match: str) -> None:
    data = _with_records_area(area, count)
    (b,) = list(iter_batches(data))  # the CRC is fine: the records are not
    with pytest.raises(CorruptRecordError, match=match) as ei:
        list(b)
    assert ei.value.position == 0 and ei.value.offset == b.base_offset


def test_zero_count_yields_nothing_like_kafka() -> None:
    (b,) = list(iter_batches(_with_records_area(b"\xff\xff garbage", 0)))
    assert list(b) == []


def test_invalid_utf8_header_key_decodes_like_java() -> None:
    area = bytes.fromhex("12" "00" "00" "00" "01" "01" "02" "02" "ff" "01")
    (b,) = list(iter_batches(_with_records_area(area, 1)))
    (r,) = list(b)
    assert r.headers == (("\ufffd", None),)


def test_direct_construction_errors() -> None:
    data = encode_batch(recs(2))
    with pytest.raises(CorruptRecordError, match="truncated"):
        RecordBatch(data[:40])
    with pytest.raises(CorruptRecordError, match="truncated"):
        RecordBatch(data[:-1])
    with pytest.raises(CorruptRecordError, match="smaller than the minimum"):
        RecordBatch(data, 0, 30)
    with pytest.raises(CorruptRecordError, match="magic 2"):
        RecordBatch(data[:16] + b"\x01" + data[17:])
    b = RecordBatch(np.frombuffer(b"\x00" * 5 + data, np.uint8), 5)
    assert b.position == 5 and b.is_valid and len(list(b)) == 2
