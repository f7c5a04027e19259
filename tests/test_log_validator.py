"""Leader appends of producers' batches: ``kafkalog.log_validator`` (Kafka's LogValidator) and
``Log.append_as_leader`` (validation, offset assignment, producer state). Batches are built by
kafka-python's record builder (a peer encoder) as well as ours."""

from __future__ import annotations

import struct

import pytest

from kafkalog import Log, LogConfig, Record, encode_batch, iter_batches
from kafkalog.clock import ManualClock
from kafkalog.errors import CorruptRecordError, InvalidRecordError, RecordBatchTooLargeError
from kafkalog.log_validator import validate_and_assign_offsets
from kafkalog.producer_state import InvalidProducerEpochError, OutOfOrderSequenceError
from kafkalog.records.crc import crc32c


def kafka_python_batch(n: int, codec: int = 0, *, producer_id: int = -1, epoch: int = -1,
                       sequence: int = -1) -> bytes:
    records = pytest.importorskip("kafka.record.default_records")
    b = records.DefaultRecordBatchBuilder(magic=2, compression_type=codec, is_transactional=0,
                                          producer_id=producer_id, producer_epoch=epoch,
                                          base_sequence=sequence, batch_size=1 << 20)
    for i in range(n):
        b.append(i, timestamp=1000 + i, key=b"k%d" % i, value=b"v%d" % i,
                 headers=[("h", b"x")])
    return bytes(b.build())


@pytest.mark.parametrize("codec", [0, 1, 2, 3, 4])
def test_assigns_offsets_in_place_without_touching_records(codec):
    raw = kafka_python_batch(7, codec)
    v = validate_and_assign_offsets(raw, base_offset=1234, now=5, config=LogConfig(),
                                    partition_leader_epoch=3)
    assert v.record_count == 7 and v.max_timestamp == 1006 and v.log_append_time == -1
    # only baseOffset and partitionLeaderEpoch change: both outside the CRC
    assert struct.unpack_from(">qii", v.data) == (1234, len(raw) - 12, 3)
    assert bytes(v.data[8:12]) == raw[8:12] and bytes(v.data[16:]) == raw[16:]
    (batch,) = iter_batches(bytes(v.data))
    assert batch.is_valid and batch.base_offset == 1234 and batch.partition_leader_epoch == 3
    assert [r.offset for r in batch] == list(range(1234, 1241))


def test_log_append_time_sets_timestamp_type_max_timestamp_and_crc():
    raw = encode_batch([Record(None, b"a", 5), Record(None, b"b", 9)], compression="zstd")
    cfg = LogConfig.from_properties({"message.timestamp.type": "LogAppendTime"})
    v = validate_and_assign_offsets(raw, base_offset=0, now=777, config=cfg)
    (batch,) = iter_batches(bytes(v.data))
    assert batch.is_valid and batch.timestamp_type == "LogAppendTime"
    assert batch.max_timestamp == 777 and v.log_append_time == 777
    assert [r.timestamp for r in batch] == [777, 777]


@pytest.mark.parametrize("mutate, error, text", [
    (lambda b: b"", InvalidRecordError, "no batches at all"),
    (lambda b: b[:40], CorruptRecordError, "shorter than a v2 batch header"),
    (lambda b: b[:-3], CorruptRecordError, "batch length"),
    (lambda b: b + b, InvalidRecordError, "more than one batch"),
    (lambda b: b[:16] + b"\x01" + b[17:], InvalidRecordError, "magic 2"),
    (lambda b: b[:-1] + bytes([b[-1] ^ 0xFF]), CorruptRecordError, "crc"),
])
def test_refuses_what_kafka_refuses(mutate, error, text):
    raw = encode_batch([Record(b"k", b"v", 1)])
    with pytest.raises(error, match=text):
        validate_and_assign_offsets(mutate(raw), base_offset=0, now=0, config=LogConfig())


def _recrc(buf: bytearray) -> bytes:
    struct.pack_into(">I", buf, 17, crc32c(bytes(buf[21:])))
    return bytes(buf)


def test_refuses_control_batches_inconsistent_counts_and_missing_sequences():
    raw = bytearray(encode_batch([Record(b"k", b"v", 1)]))
    control = bytearray(raw)
    control[22] |= 0x20
    with pytest.raises(InvalidRecordError, match="control records"):
        validate_and_assign_offsets(_recrc(control), base_offset=0, now=0, config=LogConfig())
    wrong_count = bytearray(raw)
    struct.pack_into(">i", wrong_count, 57, 2)
    with pytest.raises(InvalidRecordError, match="inconsistent batch offset range"):
        validate_and_assign_offsets(_recrc(wrong_count), base_offset=0, now=0,
                                    config=LogConfig())
    no_seq = bytearray(raw)
    struct.pack_into(">q", no_seq, 43, 7)
    with pytest.raises(InvalidRecordError, match="invalid sequence number"):
        validate_and_assign_offsets(_recrc(no_seq), base_offset=0, now=0, config=LogConfig())


def test_compacted_topic_refuses_null_keys():
    cfg = LogConfig.from_properties({"cleanup.policy": "compact"})
    with pytest.raises(InvalidRecordError, match="without key"):
        validate_and_assign_offsets(encode_batch([Record(None, b"v", 1)]), base_offset=0,
                                    now=0, config=cfg)
    validate_and_assign_offsets(encode_batch([Record(b"k", b"v", 1)]), base_offset=0, now=0,
                                config=cfg)


def test_append_as_leader_dedupes_retries_and_checks_sequences(tmp_path):
    with Log.open(tmp_path / "t-0", clock=ManualClock(10)) as log:
        first = kafka_python_batch(3, 4, producer_id=9, epoch=0, sequence=0)
        info = log.append_as_leader(first, partition_leader_epoch=0)
        assert (info.first_offset, info.last_offset, info.duplicate) == (0, 2, False)
        retry = log.append_as_leader(first, partition_leader_epoch=0)
        assert (retry.first_offset, retry.last_offset, retry.duplicate) == (0, 2, True)
        assert log.log_end_offset == 3
        with pytest.raises(OutOfOrderSequenceError):
            log.append_as_leader(kafka_python_batch(1, producer_id=9, epoch=0, sequence=7))
        nxt = log.append_as_leader(kafka_python_batch(2, producer_id=9, epoch=0, sequence=3))
        assert (nxt.first_offset, nxt.last_offset) == (3, 4)
        assert log.leader_epoch_entries == [(0, 0)]
        assert [r.value for r in log.records()] == [b"v0", b"v1", b"v2", b"v0", b"v1"]
        # a new epoch fences the old one
        log.append_as_leader(kafka_python_batch(1, producer_id=9, epoch=1, sequence=0))
        with pytest.raises(InvalidProducerEpochError):
            log.append_as_leader(kafka_python_batch(1, producer_id=9, epoch=0, sequence=5))
        assert log.log_end_offset == 6


def test_append_as_leader_size_limit(tmp_path):
    cfg = LogConfig.from_properties({"max.message.bytes": "100"})
    with Log.open(tmp_path / "t-0", cfg) as log:
        with pytest.raises(RecordBatchTooLargeError):
            log.append_as_leader(encode_batch([Record(None, b"x" * 200, 1)]))
        assert log.log_end_offset == 0


def test_records_that_do_not_parse_or_skip_offsets_are_refused():
    raw = bytearray(encode_batch([Record(b"k", b"v", 1), Record(b"k", b"w", 2)]))
    truncated = bytearray(raw)
    truncated[61] = 0x7E  # first record's length varint: 63, beyond the records area
    with pytest.raises(CorruptRecordError, match="records"):
        validate_and_assign_offsets(_recrc(truncated), base_offset=0, now=0, config=LogConfig())
    # second record's offset delta 1 -> 5 (record layout: length, attributes, timestamp delta,
    # offset delta): inner offsets a v2 producer never writes
    first_len = raw[61] >> 1  # zig-zag varint of a small length
    second = 61 + 1 + first_len
    skipped = bytearray(raw)
    assert skipped[second + 3] == 2  # zig-zag 1
    skipped[second + 3] = 10  # zig-zag 5
    with pytest.raises(InvalidRecordError, match="offset deltas"):
        validate_and_assign_offsets(_recrc(skipped), base_offset=0, now=0, config=LogConfig())
