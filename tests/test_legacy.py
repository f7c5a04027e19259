"""Legacy messages (magic 0/1) and compressed wrappers: Kafka's DeepRecordsIterator rules."""

from __future__ import annotations

import struct

import pytest

from kafkalog import CorruptRecordError, Record, RecordTooLargeError, encode_batch, iter_batches
from kafkalog.records.compression import compress
from kafkalog.records.legacy import LegacyEntry, encode_legacy, encode_legacy_message

T = 1700000000000


def wrapper(inner: bytes, *, offset: int, magic: int = 1, codec: str = "gzip",
            ts: int = T, log_append: bool = False) -> bytes:
    cid = {"gzip": 1, "snappy": 2, "lz4": 3}[codec]
    attrs = cid | (0x08 if log_append else 0)
    return encode_legacy_message(offset, None, compress(codec, inner, magic=magic), magic=magic,
                                 timestamp=ts, attributes=attrs)


def inner_msgs(offsets: list[int], magic: int = 1) -> bytes:
    return b"".join(encode_legacy_message(o, b"k%d" % o, b"v%d" % o, magic=magic,
                                          timestamp=T + o) for o in offsets)


def test_plain_messages_v0_v1() -> None:
    data = encode_legacy([Record(b"a", None, T), Record(None, b"", T + 1)], magic=1,
                         base_offset=40)
    e1, e2 = list(iter_batches(data))
    assert isinstance(e1, LegacyEntry)
    assert (e1.offset, e1.base_offset, e1.last_offset, e1.next_offset) == (40, 40, 40, 41)
    assert (e1.magic, e1.compression, e1.timestamp_type, e1.max_timestamp) == (
        1, "none", "CreateTime", T)
    assert (e1.key, e1.value, e2.key, e2.value) == (b"a", None, None, b"")
    assert (e1.producer_id, e1.producer_epoch, e1.base_sequence, e1.partition_leader_epoch) == (
        -1, -1, -1, -1)
    assert (e1.is_transactional, e1.is_control, e1.record_count, e1.count_or_null) == (
        False, False, 1, None)
    assert (e1.last_sequence, e1.delete_horizon_ms, e1.control_type()) == (-1, None, None)
    assert list(e2) == [Record(None, b"", T + 1, (), 41)]
    (v0,) = list(iter_batches(encode_legacy([Record(b"k", b"v", T)], magic=0)))
    assert (v0.timestamp_type, v0.max_timestamp, list(v0)[0].timestamp) == (
        "NoTimestampType", -1, -1)


def test_v1_relative_inner_offsets() -> None:
    data = wrapper(inner_msgs([0, 1, 2]), offset=102)
    (e,) = list(iter_batches(data))
    assert (e.base_offset, e.last_offset, e.record_count, e.last_offset_delta) == (100, 102, 3, 2)
    assert [(r.offset, r.key, r.timestamp) for r in e] == [
        (100, b"k0", T), (101, b"k1", T + 1), (102, b"k2", T + 2)]


def test_v1_wrapper_offset_zero_means_absolute_inner_offsets() -> None:
    (e,) = list(iter_batches(wrapper(inner_msgs([5, 6]), offset=0)))
    assert [r.offset for r in e] == [5, 6]


def test_v1_wrapper_offset_below_last_inner_is_corrupt() -> None:
    (e,) = list(iter_batches(wrapper(inner_msgs([0, 1, 7]), offset=3)))
    with pytest.raises(CorruptRecordError, match="wrapper offset"):
        list(e)


def test_v0_inner_offsets_are_absolute() -> None:
    (e,) = list(iter_batches(wrapper(inner_msgs([8, 9], magic=0), offset=9, magic=0)))
    assert [(r.offset, r.timestamp) for r in e] == [(8, -1), (9, -1)]
    assert e.timestamp_type == "NoTimestampType"


def test_v1_log_append_time_wrapper_stamps_inner_messages() -> None:
    (e,) = list(iter_batches(wrapper(inner_msgs([0, 1]), offset=1, ts=T + 777,
                                     log_append=True)))
    assert e.timestamp_type == "LogAppendTime"
    assert [r.timestamp for r in e] == [T + 777, T + 777]


def test_inner_magic_mismatch_is_tolerated() -> None:
    # Kafka only checks inner magic when validating produce requests; v0 inner: no timestamps
    (e,) = list(iter_batches(wrapper(inner_msgs([0, 1], magic=0), offset=11)))
    assert [(r.offset, r.timestamp) for r in e] == [(10, -1), (11, -1)]


def test_partial_trailing_inner_entry_is_ignored() -> None:
    inner = inner_msgs([0, 1, 2])
    (e,) = list(iter_batches(wrapper(inner[:-5], offset=1)))
    assert [r.offset for r in e] == [0, 1]


@pytest.mark.parametrize(
    ("inner", "match"),
    [
        (b"", "no inner records"),
        (b"\x00" * 11, "no inner records"),  # less than one offset+size header
        (struct.pack(">qi", 0, 5) + bytes(5), "minimum record overhead"),
        (struct.pack(">qi", 0, 14) + bytes(4) + b"\x07" + bytes(9), "magic"),
        (struct.pack(">qi", 0, 14) + bytes(6) + struct.pack(">i", 50) + bytes(4), "key length"),
    ],
)
def test_bad_inner_sequences(inner: bytes, match: str) -> None:
    (e,) = list(iter_batches(wrapper(inner, offset=0)))
    with pytest.raises(CorruptRecordError, match=match):
        list(e)


def test_compressed_inner_message_is_corrupt() -> None:
    inner = encode_legacy_message(0, None, b"x", magic=1, timestamp=T, attributes=1)
    (e,) = list(iter_batches(wrapper(inner, offset=0)))
    with pytest.raises(CorruptRecordError, match="must not be compressed"):
        list(e)


def test_null_wrapper_value_and_bad_codecs() -> None:
    null = encode_legacy_message(0, None, None, magic=1, timestamp=T, attributes=1)
    (e,) = list(iter_batches(null))
    with pytest.raises(CorruptRecordError, match="null value"):
        list(e)
    for attrs in (4, 5, 7):  # zstd below magic 2, and ids 5-7
        msg = encode_legacy_message(0, None, b"\x00" * 20, magic=1, timestamp=T,
                                    attributes=attrs)
        (e,) = list(iter_batches(msg))
        with pytest.raises(CorruptRecordError, match="codec"):
            list(e)
    garbage = encode_legacy_message(0, None, b"not gzip", magic=1, timestamp=T, attributes=1)
    (e,) = list(iter_batches(garbage))
    with pytest.raises(CorruptRecordError, match="gzip") as ei:
        _ = e.base_offset
    assert ei.value.position == 0


def test_crc_is_crc32_over_magic_to_end() -> None:
    data = bytearray(encode_legacy([Record(b"k", b"value", T)], magic=1))
    data[-1] ^= 0xFF
    with pytest.raises(CorruptRecordError, match="stored crc"):
        list(iter_batches(bytes(data)))
    (e,) = list(iter_batches(bytes(data), validate=False))
    assert not e.is_valid and e.crc != e.computed_crc
    data[0] ^= 0xFF  # the offset is outside the CRC
    data[-1] ^= 0xFF
    (e,) = list(iter_batches(bytes(data)))
    assert e.is_valid


def test_truncated_message_body_is_corrupt() -> None:
    msg = bytearray(encode_legacy_message(0, b"key", b"value", magic=1, timestamp=T))
    struct.pack_into(">i", msg, 26, 1000)  # key length past the end
    msg_b = bytes(msg)
    (e,) = list(iter_batches(msg_b, validate=False))
    with pytest.raises(CorruptRecordError, match="key length"):
        list(e)


def test_wrapper_bounded() -> None:
    (e,) = list(iter_batches(wrapper(inner_msgs(list(range(50))), offset=49),
                             max_decompressed_bytes=100))
    with pytest.raises(RecordTooLargeError):
        list(e)


# --- writing ------------------------------------------------------------------------------------


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4"])
def test_encode_legacy_wrappers_as_a_broker_stores_them(magic: int, codec: str) -> None:
    records = [Record(b"k%d" % i, b"v" * i, T + 10 - i) for i in range(5)]
    data = encode_batch(records, magic=magic, compression=codec, base_offset=20)
    (e,) = list(iter_batches(data))
    assert (e.offset, e.base_offset, e.record_count, e.compression) == (24, 20, 5, codec)
    assert e.max_timestamp == (T + 10 if magic else -1)  # wrapper: max inner timestamp
    assert [(r.offset, r.key) for r in e] == [(20 + i, b"k%d" % i) for i in range(5)]
    # inner offsets: relative for v1, absolute for v0
    from kafkalog.records.compression import decompress

    raw = decompress(codec, e.value, magic=magic)
    first_inner_offset = struct.unpack_from(">q", raw, 0)[0]
    assert first_inner_offset == (0 if magic == 1 else 20)
    if codec == "lz4":  # KAFKA-3160 header checksum for magic 0
        assert e.value[6] == (0x1A if magic == 0 else 0x82)


def test_encode_legacy_log_append_time() -> None:
    records = [Record(b"k", b"v", T), Record(b"k", b"v", T + 1)]
    data = encode_batch(records, magic=1, compression="gzip", timestamp_type="log_append",
                        log_append_time=T + 500)
    (e,) = list(iter_batches(data))
    assert (e.timestamp_type, e.max_timestamp) == ("LogAppendTime", T + 500)
    assert [r.timestamp for r in e] == [T + 500] * 2
    plain = list(iter_batches(encode_batch(records, magic=1, timestamp_type="log_append",
                                           log_append_time=T + 500)))
    assert [(p.timestamp_type, p.max_timestamp) for p in plain] == [("LogAppendTime", T + 500)] * 2


def test_encode_legacy_misuse() -> None:
    with pytest.raises(ValueError, match="headers"):
        encode_batch([Record(b"k", b"v", T, [("h", b"x")])], magic=1)
    with pytest.raises(ValueError):
        encode_batch([Record(b"k", b"v")], magic=0, timestamp_type="log_append")
    with pytest.raises(ValueError):
        encode_batch([Record(b"k", b"v")], magic=1, producer_id=5)
    from kafkalog import UnsupportedCodecError

    with pytest.raises(UnsupportedCodecError):
        encode_batch([Record(b"k", b"v")], magic=1, compression="zstd")
    with pytest.raises(TypeError):
        encode_batch([Record("str", b"v")], magic=1)  # type: ignore[arg-type]


def test_direct_construction_errors() -> None:
    msg = encode_legacy_message(0, b"k", b"v", magic=1, timestamp=T)
    with pytest.raises(CorruptRecordError, match="truncated"):
        LegacyEntry(msg[:20])
    with pytest.raises(CorruptRecordError, match="truncated"):
        LegacyEntry(msg[:-1])
    with pytest.raises(CorruptRecordError, match="too small"):
        LegacyEntry(msg[:8] + struct.pack(">i", 10) + msg[12:])
    e = LegacyEntry(b"\x00\x00" + msg, 2)
    assert e.position == 2 and e.is_valid and list(e)[0].key == b"k"
    assert "LegacyEntry(offset=0" in repr(e)


def test_inner_crcs_are_not_checked_when_reading() -> None:
    inner = bytearray(inner_msgs([0, 1]))
    inner[12] ^= 0xFF  # first inner message's CRC
    (e,) = list(iter_batches(wrapper(bytes(inner), offset=1)))  # outer CRC is fine
    assert [r.key for r in e] == [b"k0", b"k1"]


def test_header_fields_agree_with_the_native_scan() -> None:
    import numpy as np
    from kafkalog.native.scan import scan_entries

    data = (encode_batch([Record(b"k", b"v", T)], magic=0)
            + encode_batch([Record(b"k", b"v", T + 1)] * 3, magic=1, compression="gzip",
                           base_offset=1)
            + encode_batch([Record(b"k", b"v", T + 2)], base_offset=4))
    out = scan_entries(np.frombuffer(data, np.uint8))
    entries = list(iter_batches(data))
    assert out["count"] == len(entries) == 3
    for i, e in enumerate(entries):
        assert out["positions"][i] == e.position and out["sizes"][i] == e.size
        assert out["last_offsets"][i] == e.last_offset and out["crcs"][i] == e.crc
        assert out["max_timestamps"][i] == e.max_timestamp and out["magics"][i] == e.magic
        assert out["attributes"][i] == e.attributes
        assert out["leader_epochs"][i] == e.partition_leader_epoch
