"""encode_batch writes v2 batches the way Kafka's MemoryRecordsBuilder does; round trips."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalog import Record, UnsupportedCodecError, encode_batch, iter_batches
from kafkalog.records.batch import RecordBatch
from kafkalog.records.builder import encode_record

T = 1700000000000
CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]


def test_header_rules() -> None:
    records = [Record(b"a", b"1", T + 5), Record(b"b", b"2", T - 3), Record(b"c", b"3", T + 9)]
    b = RecordBatch(encode_batch(records, base_offset=50))
    # baseTimestamp = first record's, maxTimestamp = largest; deltas may be negative
    assert (b.base_timestamp, b.max_timestamp) == (T + 5, T + 9)
    assert [r.timestamp for r in b] == [T + 5, T - 3, T + 9]
    assert (b.last_offset_delta, b.record_count, b.attributes) == (2, 3, 0)
    assert (b.producer_id, b.producer_epoch, b.base_sequence, b.partition_leader_epoch) == (
        -1, -1, -1, -1)


def test_none_timestamps_are_minus_one() -> None:
    b = RecordBatch(encode_batch([Record(b"a", b"1"), Record(b"b", b"2")]))
    assert (b.base_timestamp, b.max_timestamp) == (-1, -1)
    assert [r.timestamp for r in b] == [-1, -1]


def test_explicit_offsets_keep_gaps() -> None:
    records = [Record(b"a", b"1", T, offset=10), Record(b"b", b"2", T, offset=14)]
    b = RecordBatch(encode_batch(records, base_offset=10))
    assert (b.last_offset, b.record_count) == (14, 2)
    assert [r.offset for r in b] == [10, 14]
    with pytest.raises(ValueError, match="increase"):
        encode_batch([Record(b"a", b"1", offset=5), Record(b"b", b"2", offset=5)],
                     base_offset=5)
    with pytest.raises(ValueError, match="increase"):
        encode_batch([Record(b"a", b"1", offset=3)], base_offset=5)


def test_empty_batch_as_left_by_compaction() -> None:
    b = RecordBatch(encode_batch([], base_offset=7, last_offset_delta=4))
    assert (b.size, b.record_count, b.last_offset, b.base_timestamp, b.max_timestamp) == (
        61, 0, 11, -1, -1)
    assert list(b) == [] and b.is_valid


def test_flags_and_producer_fields() -> None:
    b = RecordBatch(encode_batch([Record(b"k", b"v", T)], producer_id=123456789012,
                                 producer_epoch=32767, base_sequence=99, transactional=True,
                                 partition_leader_epoch=2147483647, compression="snappy"))
    assert (b.producer_id, b.producer_epoch, b.base_sequence) == (123456789012, 32767, 99)
    assert b.attributes == 0x10 | 2 and b.is_transactional
    assert b.partition_leader_epoch == 2147483647


def test_log_append_default_time_is_now() -> None:
    import time

    before = time.time_ns() // 1_000_000
    b = RecordBatch(encode_batch([Record(b"k", b"v", T)], timestamp_type="log_append"))
    assert before <= b.max_timestamp <= time.time_ns() // 1_000_000
    assert b.timestamp_type == "LogAppendTime"


def test_compressed_batch_header_stays_plain() -> None:
    records = [Record(b"k", b"v" * 1000, T + i) for i in range(20)]
    plain = encode_batch(records)
    for codec in CODECS[1:]:
        data = encode_batch(records, compression=codec)
        assert data[27:61] == plain[27:61]  # timestamps, producer fields, count
        assert len(data) < len(plain)
        assert list(RecordBatch(data)) == list(RecordBatch(plain))


def test_encode_record_layout() -> None:
    # spec §1.7 C: one record with two headers (the second null)
    rec = encode_record(0, 0, b"k", b"v", [("h1", b"x"), ("h2", None)])
    assert rec.hex() == "22000000026b027604046831027804683201"


def test_misuse_errors() -> None:
    with pytest.raises(UnsupportedCodecError):
        encode_batch([Record(b"k", b"v")], compression="brotli")
    with pytest.raises(ValueError):
        encode_batch([Record(b"k", b"v")], magic=3)
    with pytest.raises(ValueError):
        encode_batch([Record(b"k", b"v")], timestamp_type="wallclock")
    with pytest.raises(TypeError):
        encode_batch([Record("k", b"v")])  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        encode_batch([Record(b"k", b"v", headers=[(b"h", b"v")])])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        encode_batch([Record(b"k", b"v", headers=[("h", "str")])])  # type: ignore[list-item]
    with pytest.raises(ValueError):
        encode_batch([Record(b"k", b"v")], base_offset=1 << 63)


def test_tuples_and_bytes_like_are_accepted() -> None:
    data = encode_batch([(bytearray(b"k"), memoryview(b"v"), T)])
    assert list(RecordBatch(data)) == [Record(b"k", b"v", T, (), 0)]


# --- properties ---------------------------------------------------------------------------------

header_st = st.tuples(st.text(max_size=8), st.none() | st.binary(max_size=8))
record_st = st.builds(
    Record,
    st.none() | st.binary(max_size=40),
    st.none() | st.binary(max_size=200),
    st.integers(-(1 << 40), 1 << 45),
    st.lists(header_st, max_size=3),
    offset=st.none(),
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(record_st, min_size=1, max_size=20),
    st.sampled_from(CODECS),
    st.integers(0, (1 << 62)),
    st.sampled_from(["create", "log_append"]),
)
def test_batch_round_trip(records: list[Record], codec: str, base: int, ts_type: str) -> None:
    data = encode_batch(records, compression=codec, base_offset=base, timestamp_type=ts_type,
                        log_append_time=T)
    (b,) = list(iter_batches(data))
    assert b.size == len(data) and b.is_valid and b.compression == codec
    got = list(b)
    want_ts = [T] * len(records) if ts_type == "log_append" else [r.timestamp for r in records]
    assert got == [
        Record(r.key, r.value, ts, tuple(tuple(h) for h in r.headers), base + i)
        for i, (r, ts) in enumerate(zip(records, want_ts))
    ]
    if ts_type == "create":
        assert b.max_timestamp == max(max(r.timestamp for r in records), -1)


@settings(max_examples=100, deadline=None)
@given(st.lists(record_st, min_size=1, max_size=10), st.sampled_from(["none", "gzip", "snappy",
                                                                       "lz4"]),
       st.sampled_from([0, 1]), st.integers(0, 1 << 40))
def test_legacy_round_trip(records: list[Record], codec: str, magic: int, base: int) -> None:
    records = [r._replace(headers=(), timestamp=abs(r.timestamp)) for r in records]
    data = encode_batch(records, magic=magic, compression=codec, base_offset=base)
    got = [r for e in iter_batches(data) for r in e]
    assert got == [
        Record(r.key, r.value, r.timestamp if magic else -1, (), base + i)
        for i, r in enumerate(records)
    ]


@settings(max_examples=200, deadline=None)
@given(st.integers(0, (1 << 31) - 1), st.integers(-(1 << 63), (1 << 63) - 1), record_st)
def test_fast_record_writer_matches_encode_record(delta: int, ts_delta: int, r: Record) -> None:
    from kafkalog.records.builder import _append_record

    out = bytearray(b"prefix")
    _append_record(out, delta, ts_delta, r.key, r.value, r.headers)
    assert bytes(out) == b"prefix" + encode_record(delta, ts_delta, r.key, r.value, r.headers)
