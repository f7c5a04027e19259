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


# -- compression.type: the topic's codec ---------------------------------------------------------

def _records_of(data: bytes) -> list[tuple]:
    """(offset, timestamp, key, value, headers) read by aiokafka's reader (a peer decoder)."""
    from aiokafka.record.default_records import DefaultRecordBatch

    b = DefaultRecordBatch(bytes(data))
    return [(r.offset, r.timestamp, r.key, r.value, list(r.headers)) for r in b]


def _header(data: bytes) -> tuple:
    (batch,) = iter_batches(bytes(data))
    return (batch.base_offset, batch.partition_leader_epoch, batch.compression,
            batch.timestamp_type, batch.base_timestamp, batch.max_timestamp, batch.producer_id,
            batch.producer_epoch, batch.base_sequence, batch.is_transactional,
            batch.record_count)


@pytest.mark.parametrize(("source", "target", "name"), [
    (3, "zstd", "zstd"), (1, "uncompressed", "none"), (0, "gzip", "gzip"), (4, "snappy", "snappy"),
    (2, "lz4", "lz4")])
def test_topic_compression_type_rebuilds_in_its_codec(source, target, name):
    """``compression.type`` names another codec: the batch is rebuilt in it
    (``buildRecordsAndAssignOffsets``): same records (read back by aiokafka), the producer's
    id, epoch and base sequence, the new offsets and leader epoch; byte for byte what our row
    encoder writes for those records (levels included)."""
    raw = kafka_python_batch(9, source, producer_id=77, epoch=2, sequence=40)
    config = LogConfig(compression_type=target, compression_zstd_level=7,
                       compression_gzip_level=1, compression_lz4_level=12)
    v = validate_and_assign_offsets(raw, base_offset=500, now=99, config=config,
                                    partition_leader_epoch=6)
    assert v.record_count == 9 and v.max_timestamp == 1008 and v.log_append_time == -1
    assert _header(v.data) == (500, 6, name, "CreateTime", 1000, 1008, 77, 2, 40, False, 9)
    sent = _records_of(raw)
    assert _records_of(v.data) == [(500 + o, *rest) for o, *rest in sent]
    level = {"zstd": 7, "gzip": 1, "lz4": 12}.get(name)
    expect = encode_batch([Record(k, val, t, h) for _, t, k, val, h in sent], base_offset=500,
                          compression=name, compression_level=level, producer_id=77,
                          producer_epoch=2, base_sequence=40, partition_leader_epoch=6)
    assert bytes(v.data) == expect


def test_topic_compression_type_same_codec_or_producer_stays_in_place():
    raw = kafka_python_batch(5, 4)
    for config in (LogConfig(compression_type="zstd", compression_zstd_level=19), LogConfig()):
        v = validate_and_assign_offsets(raw, base_offset=1, now=5, config=config)
        assert bytes(v.data[16:]) == raw[16:]      # the producer's bytes, levels aside


def test_topic_compression_type_with_log_append_time_and_transactions():
    from kafka.record.default_records import DefaultRecordBatchBuilder

    b = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=1,
                                  producer_id=5, producer_epoch=0, base_sequence=0,
                                  batch_size=1 << 20)
    for i in range(4):
        b.append(i, timestamp=2000 - i, key=None, value=b"v%d" % i, headers=[])
    raw = bytes(b.build())
    config = LogConfig(compression_type="lz4", message_timestamp_type="LogAppendTime")
    v = validate_and_assign_offsets(raw, base_offset=0, now=123456, config=config)
    assert (v.max_timestamp, v.log_append_time) == (123456, 123456)
    assert _header(v.data) == (0, -1, "lz4", "LogAppendTime", 2000, 123456, 5, 0, 0, True, 4)
    # readers report the append time for every record of a LogAppendTime batch
    assert [t for _, t, *_ in _records_of(v.data)] == [123456] * 4
    assert [r[2:] for r in _records_of(v.data)] == [(None, b"v%d" % i, []) for i in range(4)]


def test_log_append_stores_the_topic_codec(tmp_path):
    """Embedded appends follow the topic's codec too (Log.append with records or columns,
    append_as_leader); compression.type=producer keeps the caller's."""
    import pyarrow as pa

    config = LogConfig(compression_type="gzip", compression_gzip_level=9)
    with Log.open(tmp_path / "g", config=config) as log:
        log.append([Record(b"k", b"v", 1)], compression="lz4")
        log.append([Record(b"k%d" % i, b"v", 1) for i in range(40)])   # the row kernel path
        log.append(pa.table({"key": [b"a", b"b"], "value": [b"1", b"2"]}), compression="zstd")
        log.append_as_leader(kafka_python_batch(3, 2))
    with Log.open(tmp_path / "g", read_only=True) as log:
        codecs = {b.batch.compression for b in log.batches()}
        values = [r.value for r in log.records()]
    assert codecs == {"gzip"}
    assert values == [b"v"] * 41 + [b"1", b"2", b"v0", b"v1", b"v2"]
    with Log.open(tmp_path / "p") as log:
        log.append([Record(b"k", b"v", 1)], compression="lz4")
        assert {b.batch.compression for b in log.batches()} == {"lz4"}


_CODEC_NAMES = ["none", "gzip", "snappy", "lz4", "zstd"]
_TOPIC_TYPES = ["uncompressed", "gzip", "snappy", "lz4", "zstd"]


def test_recompression_equals_encoding_the_records_in_the_topic_codec():
    """Property: for random records, codecs and producer fields, the rebuilt batch is the one
    our encoder writes for the same records in the topic's codec (so every reader of our
    batches reads it), and it reads back as the records sent."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    blob = st.one_of(st.none(), st.binary(max_size=40))
    record = st.tuples(blob, blob, st.integers(0, 2**41),
                       st.lists(st.tuples(st.text(max_size=5), blob), max_size=2))

    @settings(max_examples=60, deadline=None)
    @given(records=st.lists(record, min_size=1, max_size=12),
           source=st.integers(0, 4), target=st.integers(0, 4),
           pid=st.sampled_from([-1, 3]), lat=st.booleans())
    def check(records, source, target, pid, lat):
        recs = [Record(k, v, t, h) for k, v, t, h in records]
        seq = 0 if pid >= 0 else -1
        raw = encode_batch(recs, compression=_CODEC_NAMES[source], producer_id=pid,
                           producer_epoch=0 if pid >= 0 else -1, base_sequence=seq)
        config = LogConfig(compression_type=_TOPIC_TYPES[target],
                           message_timestamp_type="LogAppendTime" if lat else "CreateTime")
        v = validate_and_assign_offsets(raw, base_offset=10, now=77, config=config,
                                        partition_leader_epoch=1)
        if source == target:
            assert bytes(v.data[16:]) == raw[16:] or lat
            return
        expect = encode_batch(recs, base_offset=10, compression=_CODEC_NAMES[target],
                              producer_id=pid, producer_epoch=0 if pid >= 0 else -1,
                              base_sequence=seq, partition_leader_epoch=1,
                              timestamp_type="log_append" if lat else "create",
                              log_append_time=77 if lat else None)
        assert bytes(v.data) == expect
        got = [(r.key, r.value, list(r.headers)) for b in iter_batches(bytes(v.data))
               for r in b]
        assert got == [(k, val, [(hk, hv) for hk, hv in h]) for k, val, _, h in records]

    check()


# -- message.timestamp.before/after.max.ms ---------------------------------------------------------

def test_timestamp_bounds_refuse_records_out_of_range():
    """KIP-937: a CreateTime record more than ``before`` ms behind the broker's clock or more
    than ``after`` ms ahead is refused; every such record is listed (Kafka's record errors) and
    the message is Kafka's."""
    from kafkalog.errors import InvalidTimestampError

    raw = kafka_python_batch(5)                        # timestamps 1000..1004, offsets 0..4
    config = LogConfig(message_timestamp_before_max_ms=2, message_timestamp_after_max_ms=0)
    with pytest.raises(InvalidTimestampError) as e:
        validate_and_assign_offsets(raw, base_offset=9, now=1003, config=config)
    assert e.value.record_errors == [
        (0, "Timestamp 1000 of message with offset 0 is out of range. The timestamp should be "
            "within [1001, 1003]"),
        (4, "Timestamp 1004 of message with offset 4 is out of range. The timestamp should be "
            "within [1001, 1003]")]
    assert "One or more records have been rejected due to invalid timestamp" in str(e.value)
    # inside the bounds, or the topic stamps LogAppendTime: accepted
    ok = LogConfig(message_timestamp_before_max_ms=3, message_timestamp_after_max_ms=1)
    assert validate_and_assign_offsets(raw, base_offset=9, now=1003, config=ok).max_timestamp \
        == 1004
    lat = config.replace(message_timestamp_type="LogAppendTime")
    assert validate_and_assign_offsets(raw, base_offset=9, now=1003, config=lat).log_append_time \
        == 1003
    # only one bound set: Kafka's text shows the other as Java's long arithmetic leaves it
    with pytest.raises(InvalidTimestampError) as e:
        validate_and_assign_offsets(raw, base_offset=9, now=1003,
                                    config=LogConfig(message_timestamp_before_max_ms=2))
    assert e.value.record_errors == [
        (0, "Timestamp 1000 of message with offset 0 is out of range. The timestamp should be "
            "within [1001, -9223372036854774806]")]
    # the broker names (log.message.timestamp.*) are the defaults' synonyms
    assert LogConfig.from_properties({"log.message.timestamp.after.max.ms": "3600000"}) \
        .message_timestamp_after_max_ms == 3600000


def test_a_producers_log_append_time_batch():
    """Kafka refuses a producer's batch marked LogAppendTime on a LogAppendTime topic; a
    CreateTime topic takes it, its records reading as the batch's max timestamp (as Kafka's
    reader gives them), which the bounds then check."""
    from kafkalog.errors import InvalidTimestampError

    raw = encode_batch([Record(None, b"a", 5), Record(None, b"b", -1)],
                       timestamp_type="log_append", log_append_time=7)
    with pytest.raises(InvalidTimestampError) as e:
        validate_and_assign_offsets(raw, base_offset=0, now=9,
                                    config=LogConfig(message_timestamp_type="LogAppendTime"))
    assert [i for i, _ in e.value.record_errors] == [0, 1]
    assert "Producer should not set timestamp type to LogAppendTime" in e.value.record_errors[0][1]
    v = validate_and_assign_offsets(raw, base_offset=0, now=9, config=LogConfig())
    assert v.max_timestamp == 7 and v.log_append_time == -1
    with pytest.raises(InvalidTimestampError, match="Timestamp 7 of message with offset 0"):
        validate_and_assign_offsets(raw, base_offset=0, now=9,
                                    config=LogConfig(message_timestamp_before_max_ms=1))


def test_recompressed_batch_is_checked_against_max_message_bytes(tmp_path):
    """Kafka checks the batch size again after a rebuild (``messageSizeMaybeChanged``): a gzip
    batch that fits, stored uncompressed by the topic, can exceed ``max.message.bytes``."""
    raw = encode_batch([Record(None, b"x" * 2000, 1) for _ in range(5)], compression="gzip")
    assert len(raw) < 2000
    config = LogConfig(compression_type="uncompressed", max_message_bytes=2000)
    with Log.open(tmp_path / "l", config) as log:
        with pytest.raises(RecordBatchTooLargeError, match="above max.message.bytes"):
            log.append_as_leader(raw)
        assert log.log_end_offset == 0
