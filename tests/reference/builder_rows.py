"""Reference: the per-record v2 writer as it was before the columnar row path (issue 15),
kept verbatim so that tests show ``encode_batch`` writes the same bytes as it always did.

Original docstring: write record batches: v2 exactly as Kafka's ``MemoryRecordsBuilder``
does; v0/v1 for tests.

A v2 batch is written as Kafka writes it: baseTimestamp = the first record's timestamp,
maxTimestamp = the largest record timestamp (-1 when none has one) or, for LogAppendTime, the
append time; lastOffsetDelta = the last record's offset delta; records are
``length attributes(0) timestampDelta offsetDelta key value headers`` with zig-zag varints;
the records area is compressed as one stream when a codec is asked for (even when that does
not shrink it, as Kafka does); the CRC-32C covers attributes .. end.

>>> from kafkalog.records.record import Record
>>> encode_batch([Record(None, b"hello", 1700000000000)], partition_leader_epoch=0).hex()[:42]
'00000000000000000000003d0000000002e641a44b'
"""

from __future__ import annotations

import struct
import time
from collections.abc import Iterable
from typing import Any

from kafkalog.errors import InvalidRecordError, InvalidRequestError
from kafkalog.records import compression as _compression
from kafkalog.records.batch import (
    ATTRIBUTES_OFFSET,
    CONTROL_FLAG_MASK,
    DELETE_HORIZON_FLAG_MASK,
    HEADER_STRUCT,
    LOG_OVERHEAD,
    RECORD_BATCH_OVERHEAD,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
)
from kafkalog.records.crc import crc32c
from kafkalog.records.legacy import _timestamp_type_is_log_append, encode_legacy
from kafkalog.records.varint import encode_varint, encode_varlong

__all__ = ["encode_batch", "encode_record", "encode_end_txn_marker", "encode_control_batch"]

_CRC = struct.Struct(">I")
_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def _bytes_or_none(b: Any, what: str) -> bytes | None:
    if b is None or isinstance(b, bytes):
        return b
    if isinstance(b, (bytearray, memoryview)):
        return bytes(b)
    raise TypeError(f"{what} must be bytes-like or None, got {type(b).__name__}")


# Varint bytes of small values, looked up instead of computed: lengths, deltas and header
# counts of typical records all fall in this range (hot path of encode_batch).
_SMALL_LIMIT = 1 << 13
_SMALL_VARINTS = [encode_varint(n) for n in range(-_SMALL_LIMIT, _SMALL_LIMIT)]


def _vi(n: int) -> bytes:
    if -_SMALL_LIMIT <= n < _SMALL_LIMIT:
        return _SMALL_VARINTS[n + _SMALL_LIMIT]
    return encode_varint(n)


def _append_record(
    out: bytearray,
    offset_delta: int,
    timestamp_delta: int,
    key: bytes | None,
    value: bytes | None,
    headers: Any,
) -> None:
    """Append one record (length varint + body) to ``out``; same bytes as encode_record."""
    small = _SMALL_VARINTS
    lim = _SMALL_LIMIT
    body = bytearray(b"\x00")
    body += (
        small[timestamp_delta + lim]
        if -lim <= timestamp_delta < lim
        else encode_varlong(timestamp_delta)
    )
    body += small[offset_delta + lim] if offset_delta < lim else encode_varint(offset_delta)
    if key is None:
        body += b"\x01"
    else:
        body += _vi(len(key))
        body += key
    if value is None:
        body += b"\x01"
    else:
        body += _vi(len(value))
        body += value
    if not headers:
        body += b"\x00"
    else:
        hs = headers if isinstance(headers, (tuple, list)) else tuple(headers)
        body += _vi(len(hs))
        for h in hs:
            if not isinstance(h, (tuple, list)) or len(h) != 2:
                raise TypeError(f"a header must be a (str key, bytes|None value) pair, got {h!r}")
            hkey, hval = h[0], h[1]
            if not isinstance(hkey, str):
                raise TypeError(f"header key must be str, got {type(hkey).__name__}")
            kb = hkey.encode("utf-8")
            body += _vi(len(kb))
            body += kb
            if hval is None:
                body += b"\x01"
            else:
                hval = _bytes_or_none(hval, "header value")
                body += _vi(len(hval))  # type: ignore[arg-type]
                body += hval  # type: ignore[operator]
    out += _vi(len(body))
    out += body


def encode_record(
    offset_delta: int,
    timestamp_delta: int,
    key: bytes | None,
    value: bytes | None,
    headers: Iterable[tuple[str, bytes | None]] = (),
) -> bytes:
    """One v2 record (``DefaultRecord.writeTo``), including its leading length varint.

    >>> encode_record(0, 0, None, b"hello").hex()
    '16000000010a68656c6c6f00'
    """
    parts = [b"\x00", encode_varlong(timestamp_delta), encode_varint(offset_delta)]
    if key is None:
        parts.append(b"\x01")
    else:
        parts.append(encode_varint(len(key)))
        parts.append(key)
    if value is None:
        parts.append(b"\x01")
    else:
        parts.append(encode_varint(len(value)))
        parts.append(value)
    hs = headers if isinstance(headers, (tuple, list)) else tuple(headers)
    parts.append(encode_varint(len(hs)))
    for h in hs:
        hkey, hval = h[0], h[1]
        if not isinstance(hkey, str):
            raise TypeError(f"header key must be str, got {type(hkey).__name__}")
        kb = hkey.encode("utf-8")
        parts.append(encode_varint(len(kb)))
        parts.append(kb)
        if hval is None:
            parts.append(b"\x01")
        else:
            hval = _bytes_or_none(hval, "header value")
            parts.append(encode_varint(len(hval)))  # type: ignore[arg-type]
            parts.append(hval)  # type: ignore[arg-type]
    body = b"".join(parts)
    return encode_varint(len(body)) + body


def encode_batch(
    records: Iterable[Any],
    *,
    base_offset: int = 0,
    magic: int = 2,
    compression: str | int = "none",
    timestamp_type: str = "create",
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    partition_leader_epoch: int = -1,
    transactional: bool = False,
    control: bool = False,
    log_append_time: int | None = None,
    compression_level: int | None = None,
    delete_horizon_ms: int | None = None,
    last_offset_delta: int | None = None,
) -> bytes:
    """Encode records as one v2 batch (or, magic 0/1, as broker-stored legacy entries).

    Parameters
    ----------
    records:
        :class:`~kafkalog.records.record.Record` objects or tuples ``(key, value[, timestamp[,
        headers[, offset]]])``. A ``None`` timestamp is written as -1. A record ``offset`` of
        None means "the next offset"; given offsets (e.g. compacted data) must increase.
    base_offset:
        Offset of the batch (first record).
    magic:
        2 (default); 0 and 1 write legacy messages as a broker stores them (test tooling).
    compression:
        ``"none"``, ``"gzip"``, ``"snappy"``, ``"lz4"`` or ``"zstd"`` (or the id).
    timestamp_type:
        ``"create"`` or ``"log_append"``; for the latter maxTimestamp is ``log_append_time``
        (default: now) and records keep their own deltas, as the broker writes them.
    producer_id, producer_epoch, base_sequence, partition_leader_epoch:
        Header fields (-1 = none).
    transactional, control:
        Attribute bits 4 and 5.
    log_append_time:
        Broker append time in ms for LogAppendTime batches.
    compression_level:
        Kafka's ``compression.<codec>.level`` (None = Kafka's default).
    delete_horizon_ms:
        Set attribute bit 6 and write this in baseTimestamp (record deltas are then relative
        to it, as the cleaner writes them).
    last_offset_delta:
        Override (an empty batch left by compaction keeps its old lastOffsetDelta).

    Returns
    -------
    bytes
        The batch, ready to append to a ``.log``.

    Examples
    --------
    >>> from kafkalog.records.record import Record
    >>> from kafkalog.records.batch import RecordBatch
    >>> b = RecordBatch(encode_batch([Record(b"k", b"v", 1)], compression="lz4", base_offset=7))
    >>> (b.base_offset, b.compression, [r.value for r in b])
    (7, 'lz4', [b'v'])
    """
    if magic in (0, 1):
        if producer_id != -1 or transactional or control or base_sequence != -1:
            raise ValueError(f"magic {magic} has no producer ids, sequences or control batches")
        return encode_legacy(
            records,
            magic=magic,
            base_offset=base_offset,
            compression=compression,
            timestamp_type=timestamp_type,
            log_append_time=log_append_time,
            compression_level=compression_level,
        )
    if magic != 2:
        raise InvalidRequestError(f"magic must be 0, 1 or 2, got {magic!r}")
    cid = _compression.codec_id(compression)
    log_append = _timestamp_type_is_log_append(timestamp_type)
    if not _INT64_MIN <= base_offset <= _INT64_MAX:
        raise ValueError(f"base_offset out of int64 range: {base_offset}")

    rows: list[tuple[int, int, bytes | None, bytes | None, Any]] = []
    next_delta = 0
    for i, r in enumerate(records):
        n = len(r)
        key = _bytes_or_none(r[0], "key")
        value = _bytes_or_none(r[1], "value")
        ts = r[2] if n > 2 and r[2] is not None else -1
        if not _INT64_MIN <= ts <= _INT64_MAX:
            raise InvalidRecordError(
                f"record {i}: timestamp {ts} outside the int64 range of Kafka timestamps")
        headers = r[3] if n > 3 and r[3] is not None else ()
        if n > 4 and r[4] is not None:
            delta = r[4] - base_offset
            if delta < next_delta:
                raise ValueError(
                    f"record {i}: offsets must increase from base_offset {base_offset} "
                    f"(expected >= {base_offset + next_delta}, got {r[4]})"
                )
        else:
            delta = next_delta
        if delta > _INT32_MAX:
            raise ValueError(f"record {i}: offset delta {delta} does not fit in int32")
        next_delta = delta + 1
        rows.append((delta, ts, key, value, headers))

    if delete_horizon_ms is not None:
        base_timestamp = delete_horizon_ms
    else:
        base_timestamp = rows[0][1] if rows else -1
    max_timestamp = -1
    out = bytearray()
    for delta, ts, key, value, headers in rows:
        if ts > max_timestamp:
            max_timestamp = ts
        _append_record(out, delta, ts - base_timestamp, key, value, headers)
    if log_append:
        max_timestamp = time.time_ns() // 1_000_000 if log_append_time is None else log_append_time
    records_area = bytes(out)
    if cid:
        records_area = _compression.compress(cid, records_area, magic=2, level=compression_level)

    attributes = cid
    if log_append:
        attributes |= TIMESTAMP_TYPE_MASK
    if transactional:
        attributes |= TRANSACTIONAL_FLAG_MASK
    if control:
        attributes |= CONTROL_FLAG_MASK
    if delete_horizon_ms is not None:
        attributes |= DELETE_HORIZON_FLAG_MASK
    if last_offset_delta is None:
        last_offset_delta = rows[-1][0] if rows else 0
    size = RECORD_BATCH_OVERHEAD + len(records_area)
    header = bytearray(
        HEADER_STRUCT.pack(
            base_offset,
            size - LOG_OVERHEAD,
            partition_leader_epoch,
            2,
            0,  # CRC, filled below
            attributes,
            last_offset_delta,
            base_timestamp,
            max_timestamp,
            producer_id,
            producer_epoch,
            base_sequence,
            len(rows),
        )
    )
    crc = crc32c(records_area, crc32c(memoryview(header)[ATTRIBUTES_OFFSET:]))
    _CRC.pack_into(header, 17, crc)
    return bytes(header) + records_area


def encode_control_batch(
    control_type: int,
    key_version: int = 0,
    value: bytes | None = None,
    *,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_offset: int = 0,
    partition_leader_epoch: int = -1,
    timestamp: int | None = None,
    transactional: bool = False,
) -> bytes:
    """A control batch with one control record of type ``control_type`` (key version+type).

    >>> from kafkalog.records.batch import RecordBatch
    >>> RecordBatch(encode_control_batch(2, value=b"\\x00\\x00", timestamp=1)).control_type()
    'LEADER_CHANGE'
    """
    ts = time.time_ns() // 1_000_000 if timestamp is None else timestamp
    key = struct.pack(">hh", key_version, control_type)
    return encode_batch(
        [(key, value, ts)],
        base_offset=base_offset,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        partition_leader_epoch=partition_leader_epoch,
        transactional=transactional,
        control=True,
    )


def encode_end_txn_marker(
    commit: bool,
    *,
    producer_id: int,
    producer_epoch: int,
    coordinator_epoch: int = 0,
    base_offset: int = 0,
    partition_leader_epoch: int = -1,
    timestamp: int | None = None,
) -> bytes:
    """A COMMIT (``commit=True``) or ABORT end-transaction marker batch, as the broker writes it.

    Transactional + control attributes, baseSequence -1, one record: key ``int16 0, int16 type``
    (0 ABORT, 1 COMMIT), value ``int16 0, int32 coordinatorEpoch``. ``timestamp`` None = now.

    >>> encode_end_txn_marker(True, producer_id=1000, producer_epoch=0, base_offset=5,
    ...                       partition_leader_epoch=0, timestamp=1700000000000).hex()[:42]
    '0000000000000005000000420000000002a1ac499f'
    """
    return encode_control_batch(
        1 if commit else 0,
        0,
        struct.pack(">hi", 0, coordinator_epoch),
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_offset=base_offset,
        partition_leader_epoch=partition_leader_epoch,
        timestamp=timestamp,
        transactional=True,
    )
