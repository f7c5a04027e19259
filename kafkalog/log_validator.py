"""Kafka's ``LogValidator`` for a leader append: check one producer's batch, assign its offsets.

What a partition leader does with the records of one partition of a produce request before they
reach the log (storage/src/main/java/org/apache/kafka/storage/internals/log/LogValidator.java and
``UnifiedLog.analyzeAndValidateRecords``, Kafka 3.9), for the only format produce v3+ carries,
one v2 record batch:

* **Shape.** Exactly one whole batch (``getFirstBatchAndMaybeValidateNoMoreBatches``: "Compressed
  outer record has more than one batch"), magic 2 (``ProduceRequest.validateRecords``), a valid
  CRC-32C (``ensureValid``).
* **Batch** (``validateBatch``): ``lastOffsetDelta + 1`` equals the record count and both are > 0;
  no control batch from a client; a producer id comes with a base sequence >= 0.
* **Records** (``validateRecord``): every record parses (decompressed for compressed batches, as
  Kafka's ``skipKeyValueIterator`` does); a compacted topic refuses a null key.
* **Offsets and header** (``assignOffsetsNonCompressed`` / the in-place branch of
  ``validateMessagesAndAssignOffsetsCompressed``): the base offset becomes the log end offset, the
  partition leader epoch the leader's, and the max timestamp is set as ``setMaxTimestamp`` sets it
  (``LogAppendTime``: the timestamp-type bit and now; ``CreateTime``: the largest record
  timestamp), with the CRC recomputed only when the attributes or max timestamp change. Base
  offset and leader epoch lie outside the CRC, so the record bytes are never re-encoded.

* **The topic's codec** (``compression.type``, ``BrokerCompressionType.targetCompression``):
  ``producer`` or the batch's own codec keeps the bytes as above; another codec rebuilds the
  batch in it at the topic's ``compression.<codec>.level`` (``buildRecordsAndAssignOffsets``:
  the records as sent, the producer id, epoch, base sequence and transactional flag kept, the
  base timestamp the first record's, LogAppendTime as above).

* **Timestamps** (``validateTimestamp``): with ``message.timestamp.before/after.max.ms`` set,
  a CreateTime record too far from the broker's clock is refused; so is a batch the producer
  marked LogAppendTime on a LogAppendTime topic. Every record refused is listed
  (:class:`~kafkalog.errors.InvalidTimestampError`, INVALID_TIMESTAMP on the wire).

Deliberate deviation: Kafka also rebuilds a compressed batch whose records' offset deltas are
not ``0, 1, 2, ...`` (old clients wrote wrong inner offsets for v1 messages); no v2 client does
that, so such a batch is refused with :class:`InvalidRecordError`.

Threads: pure functions over a private copy of the bytes.

Example
-------
>>> from kafkalog.config import LogConfig
>>> from kafkalog.records.builder import encode_batch
>>> from kafkalog.records.record import Record
>>> raw = encode_batch([Record(None, b"a", 5), Record(None, b"b", 7)])   # base offset 0
>>> v = validate_and_assign_offsets(raw, base_offset=100, now=9, config=LogConfig())
>>> v.record_count, v.max_timestamp, v.log_append_time, int.from_bytes(v.data[:8], "big")
(2, 7, -1, 100)
"""

from __future__ import annotations

import struct
from typing import Any, NamedTuple

import numpy as np

from .config import LONG_MAX, LogConfig
from .errors import CorruptRecordError, InvalidRecordError, InvalidTimestampError, KafkaLogError
from .native import records_decode as _rd
from .records.batch import (
    ATTRIBUTES_OFFSET,
    COMPRESSION_CODEC_MASK,
    CONTROL_FLAG_MASK,
    CRC_OFFSET,
    HEADER_STRUCT,
    LOG_OVERHEAD,
    MAGIC_VALUE_V2,
    MAX_TIMESTAMP_OFFSET,
    NO_TIMESTAMP,
    PARTITION_LEADER_EPOCH_OFFSET,
    RECORD_BATCH_OVERHEAD,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
)
from .records.columnar import MIN_RECORD_SIZE
from .records.compression import DEFAULT_MAX_DECOMPRESSED, decompress
from .records.crc import crc32c

__all__ = ["ValidatedBatch", "validate_and_assign_offsets", "check_timestamps"]

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_U32 = struct.Struct(">I")


class ValidatedBatch(NamedTuple):
    """A producer's batch ready to be written at ``base_offset``.

    Attributes
    ----------
    data:
        The batch bytes with base offset, partition leader epoch and max timestamp assigned.
    record_count:
        Records in the batch.
    max_timestamp:
        The batch's max timestamp as written (``now`` with ``LogAppendTime``).
    log_append_time:
        ``now`` when the topic uses ``LogAppendTime``, else -1 (Kafka's produce response field).
    """

    data: bytearray
    record_count: int
    max_timestamp: int
    log_append_time: int


def validate_and_assign_offsets(
    records: bytes | bytearray | memoryview,
    *,
    base_offset: int,
    now: int,
    config: LogConfig,
    partition_leader_epoch: int = -1,
) -> ValidatedBatch:
    """Validate one producer's v2 batch and assign offsets from ``base_offset``.

    Parameters
    ----------
    records:
        The ``records`` field of one partition of a produce request.
    base_offset:
        The offset of the first record (the log end offset).
    now:
        The broker's time in ms (``LogAppendTime``).
    config:
        The topic's config (``message_timestamp_type``, ``cleanup_policy``).
    partition_leader_epoch:
        Stamped into the batch header.

    Raises
    ------
    CorruptRecordError
        Cut bytes, a CRC mismatch, records that do not parse or do not match the count.
    InvalidRecordError
        A batch Kafka refuses as invalid: more than one batch, magic below 2, a control batch,
        inconsistent offset deltas, a producer id without sequence, a null key on a compacted
        topic.
    """
    n = len(records)
    if n == 0:
        raise InvalidRecordError("produced records rejected: record batch has no batches at all",
                                 position=0)
    if n < RECORD_BATCH_OVERHEAD:
        raise CorruptRecordError(
            f"produced records rejected: {n} bytes is shorter than a v2 batch header "
            f"(expected >= {RECORD_BATCH_OVERHEAD})", position=0)
    (_base, length, _epoch, magic, crc, attrs, last_delta, base_ts, max_ts, producer_id,
     _producer_epoch, base_sequence, count) = HEADER_STRUCT.unpack_from(records)
    if magic != MAGIC_VALUE_V2:
        raise InvalidRecordError(
            f"produced records rejected: produce requests (v3+) may only carry record batches "
            f"with magic 2 (expected 2, found {magic})", position=16)
    size = length + LOG_OVERHEAD
    if size < RECORD_BATCH_OVERHEAD or size > n:
        raise CorruptRecordError(
            f"produced records rejected: batch length does not match the bytes sent (expected "
            f"{RECORD_BATCH_OVERHEAD}..{n} bytes, found {size})", position=LOG_OVERHEAD - 4)
    if size < n:
        raise InvalidRecordError(
            f"produced records rejected: compressed outer record has more than one batch "
            f"(expected {size} bytes, found {n})", position=size)
    data = bytearray(records)
    view = memoryview(data)
    computed = crc32c(view[ATTRIBUTES_OFFSET:])
    if computed != crc:
        raise CorruptRecordError(
            f"produced records rejected: record batch is corrupt (stored crc = {crc}, computed "
            f"crc = {computed})", position=0)
    if last_delta < 0 or count <= 0 or last_delta + 1 != count:
        raise InvalidRecordError(
            f"produced records rejected: inconsistent batch offset range (expected "
            f"lastOffsetDelta + 1 == record count > 0, found lastOffsetDelta {last_delta}, "
            f"count {count})", position=0)
    if attrs & CONTROL_FLAG_MASK:
        raise InvalidRecordError(
            "produced records rejected: clients are not allowed to write control records",
            position=0)
    if producer_id >= 0 and base_sequence < 0:
        raise InvalidRecordError(
            f"produced records rejected: invalid sequence number {base_sequence} in record "
            f"batch with producerId {producer_id}", position=0)

    log_append = config.message_timestamp_type == "LogAppendTime"
    largest, all_keys = _check_records(view, count, attrs, base_ts, max_ts)
    if (attrs & TIMESTAMP_TYPE_MASK or config.message_timestamp_before_max_ms < LONG_MAX
            or config.message_timestamp_after_max_ms < LONG_MAX):
        check_timestamps(data, now, config, log_append)
    if "compact" in config.cleanup_policy and not all_keys:
        raise InvalidRecordError(
            "produced records rejected: compacted topic cannot accept message without key",
            position=0)

    source_codec = attrs & COMPRESSION_CODEC_MASK
    target_codec, level = config.target_compression(source_codec)
    if target_codec != source_codec:
        # the topic's compression.type is another codec: the records are rebuilt in it
        # (validateMessagesAndAssignOffsetsCompressed, not in place: buildRecordsAndAssignOffsets)
        rebuilt = _rebuild(data, count, base_offset=base_offset, now=now, codec=target_codec,
                           level=level, log_append=log_append,
                           partition_leader_epoch=partition_leader_epoch)
        _, _, _, _, _, _, _, _, rebuilt_max, _, _, _, _ = HEADER_STRUCT.unpack_from(rebuilt)
        return ValidatedBatch(rebuilt, count, rebuilt_max, now if log_append else -1)
    if log_append:
        new_attrs, new_max = attrs | TIMESTAMP_TYPE_MASK, now
    else:
        new_attrs = attrs & ~TIMESTAMP_TYPE_MASK
        new_max = largest if count else NO_TIMESTAMP
    if (new_attrs, new_max) != (attrs, max_ts):  # DefaultRecordBatch.setMaxTimestamp
        _I16.pack_into(data, ATTRIBUTES_OFFSET, new_attrs)
        _I64.pack_into(data, MAX_TIMESTAMP_OFFSET, new_max)
        _U32.pack_into(data, CRC_OFFSET, crc32c(view[ATTRIBUTES_OFFSET:]))
    _I64.pack_into(data, 0, base_offset)
    _I32.pack_into(data, PARTITION_LEADER_EPOCH_OFFSET, partition_leader_epoch)
    del view
    return ValidatedBatch(data, count, new_max, now if log_append else -1)


def check_timestamps(data: bytes | bytearray, now: int, config: LogConfig,
                     log_append: bool) -> None:
    """``LogValidator.validateTimestamp`` for every record: a CreateTime record outside
    ``[now - message.timestamp.before.max.ms, now + message.timestamp.after.max.ms]``, or a
    record of a batch the producer marked LogAppendTime on a LogAppendTime topic, is refused;
    all the records refused are listed (Kafka's ``RecordValidationException`` with
    ``InvalidTimestampException``)."""
    from .records.columnar import decode_columns

    before = config.message_timestamp_before_max_ms
    after = config.message_timestamp_after_max_ms
    producer_lat = bool(_I16.unpack_from(data, ATTRIBUTES_OFFSET)[0] & TIMESTAMP_TYPE_MASK)
    # one columnar decode (the CRC was checked): a LogAppendTime batch's records read as its
    # max timestamp, as Kafka's DefaultRecordBatch gives them, so Kafka checks that one
    cols = decode_columns(bytes(data), validate=False)
    ts, offsets = cols.timestamps, cols.offsets       # (the producer's offsets, as Kafka's)
    errors: list[tuple[int, str]] = []
    if not log_append:
        bad = (ts != NO_TIMESTAMP) & ((now - ts > before) | (ts - now > after))
        for index in np.flatnonzero(bad).tolist():
            errors.append((index, f"Timestamp {int(ts[index])} of message with offset "
                                  f"{int(offsets[index])} is out of range. The timestamp "
                                  f"should be within [{_java_long(now - before)}, "
                                  f"{_java_long(now + after)}]"))
    if producer_lat:
        # the records the CreateTime check did not take: all of them on a LogAppendTime topic
        lat = np.ones(len(cols), bool) if log_append else ts == NO_TIMESTAMP
        for index in np.flatnonzero(lat).tolist():
            errors.append((index, f"Invalid timestamp type in message with offset "
                                  f"{int(offsets[index])}. Producer should not set timestamp "
                                  "type to LogAppendTime."))
        errors.sort()
    if errors:
        raise InvalidTimestampError(
            "produced records rejected: One or more records have been rejected due to invalid "
            f"timestamp (first: {errors[0][1]})", record_errors=errors, position=0)


def _java_long(n: int) -> int:
    """``n`` as Java's long arithmetic leaves it (wrapped to 64 bits: ``now + Long.MAX_VALUE``
    in Kafka's message is negative)."""
    return (n + (1 << 63)) % (1 << 64) - (1 << 63)


def _rebuild(data: bytearray, count: int, *, base_offset: int, now: int, codec: int,
             level: int | None, log_append: bool, partition_leader_epoch: int) -> bytes:
    """The batch's records as a new batch in ``codec`` (Kafka's ``MemoryRecordsBuilder`` with
    the producer's id, epoch, base sequence and transactional flag; the records' timestamps,
    keys, values and headers as sent; the append time as the max timestamp for
    ``LogAppendTime``)."""
    from .records.columnar import decode_columns, encode_columns

    (_b, _l, _e, _m, _c, attrs, _d, _bt, _mt, producer_id, producer_epoch, base_sequence,
     _n) = HEADER_STRUCT.unpack_from(data)
    columns = decode_columns(bytes(data), validate=False)      # the CRC was checked above
    return bytes(encode_columns(
        columns, base_offset=base_offset, records_per_batch=count, compression=codec,
        compression_level=level, timestamp_type="log_append" if log_append else "create",
        log_append_time=now if log_append else None, producer_id=producer_id,
        producer_epoch=producer_epoch, base_sequence=base_sequence,
        partition_leader_epoch=partition_leader_epoch,
        transactional=bool(attrs & TRANSACTIONAL_FLAG_MASK)))


def _check_records(view: memoryview, count: int, attrs: int, base_ts: int, max_ts: int
                   ) -> tuple[int, bool]:
    """Parse every record of the batch (decompressed first when compressed), as Kafka's record
    iterator does, and check that the record offsets are the deltas 0, 1, 2, ...: ``(largest
    record timestamp, every key present)``. One call of
    :func:`kafkalog.native.records_decode.check_records`, which walks the records with the
    columnar decoder's own record parse (the same bytes accepted and refused) and copies
    nothing: a producer's batch is small, and this runs once per partition of every produce
    request."""
    codec = attrs & COMPRESSION_CODEC_MASK
    area: Any = view[RECORD_BATCH_OVERHEAD:]
    if codec:
        try:
            area = decompress(codec, area, magic=2, max_size=DEFAULT_MAX_DECOMPRESSED)
        except KafkaLogError as e:
            raise CorruptRecordError(f"produced records rejected: codec id {codec}: {e.message}",
                                     position=RECORD_BATCH_OVERHEAD) from None
    buf = np.frombuffer(area, np.uint8)
    buf.flags.writeable = False  # the kernel's compiled (read-only input) signature
    size = buf.shape[0]
    if count * MIN_RECORD_SIZE > size:
        raise CorruptRecordError(
            f"produced records rejected: recordsCount {count} cannot fit in a {size}-byte "
            f"records area", position=RECORD_BATCH_OVERHEAD)
    _, err, err_pos, in_sequence, largest, all_keys = _rd.check_records(
        buf, 0, size, count, base_ts, bool(attrs & TIMESTAMP_TYPE_MASK), max_ts)
    if err != _rd.ERR_OK:
        msg = _rd.ERROR_MESSAGES.get(int(err), f"record error {int(err)}")
        where = (f"at byte {int(err_pos)} of the decompressed records" if codec
                 else f"at byte {RECORD_BATCH_OVERHEAD + int(err_pos)} of the batch")
        raise CorruptRecordError(f"produced records rejected: {msg} ({where})", position=0)
    if not in_sequence:
        raise InvalidRecordError(
            "produced records rejected: record offset deltas are not 0, 1, 2, ... (a v2 "
            "producer writes them so; Kafka would rebuild the batch)", position=0)
    return int(largest), bool(all_keys)
