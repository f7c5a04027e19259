"""Write record batches: v2 exactly as Kafka's ``MemoryRecordsBuilder`` does; v0/v1 for tests.

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

import numpy as np

from ..errors import InvalidRecordError, InvalidRequestError
from ..native import optional_extension
from ..native import records_encode as _re
from ..native._jit import kernel_input
from . import compression as _compression
from .batch import (
    ATTRIBUTES_OFFSET,
    CONTROL_FLAG_MASK,
    DELETE_HORIZON_FLAG_MASK,
    HEADER_STRUCT,
    LOG_OVERHEAD,
    RECORD_BATCH_OVERHEAD,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
)
from .crc import _crc32c
from .legacy import _timestamp_type_is_log_append, encode_legacy
from .varint import encode_varint, encode_varlong

__all__ = ["encode_batch", "encode_record", "encode_end_txn_marker", "encode_control_batch"]

_CRC = struct.Struct(">I")
_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


# -- the columnar row path ----------------------------------------------------------------------
#
# A list of records is encoded in one pass by native/_rows.c's encode_records when the
# extension is built: each record is checked and sized, then written straight from its bytes
# objects into the output. Its twin and the fallback, _encode_records_py, flattens the records
# into the columns the columnar encode kernel takes (native/records_encode.encode_batches) and
# makes one kernel call. Both write the same bytes as _append_record below, shown by
# tests/test_builder_rows.py against the per-record path kept in tests/reference. Records
# neither takes (explicit offsets, bytearray keys, other sequences...) and batch options they
# do not cover go through the per-record path.

def _batch_attributes(codec: int, log_append: bool, transactional: bool, control: bool,
                      delete_horizon: bool) -> int:
    """The v2 batch attributes (spec §1.2: codec bits 0-2, then bits 3-6)."""
    attributes = codec
    if log_append:
        attributes |= TIMESTAMP_TYPE_MASK
    if transactional:
        attributes |= TRANSACTIONAL_FLAG_MASK
    if control:
        attributes |= CONTROL_FLAG_MASK
    if delete_horizon:
        attributes |= DELETE_HORIZON_FLAG_MASK
    return attributes


def _flatten_py(records: Any, default_timestamp: int) -> tuple | None:
    """Python twin of ``native/_rows.c`` ``flatten``: the records' fields as flat buffers, or
    None when a record needs the per-record path (see the C source for the rules)."""
    if not isinstance(records, (list, tuple)):
        return None
    keys: list[bytes] = []
    values: list[bytes] = []
    key_lens: list[int] = []
    value_lens: list[int] = []
    stamps: list[int] = []
    header_counts: list[int] = []
    hkeys: list[bytes] = []
    hvalues: list[bytes] = []
    hk_lens: list[int] = []
    hv_lens: list[int] = []
    for r in records:
        if not isinstance(r, tuple) or not 2 <= len(r) <= 5:
            return None
        m = len(r)
        for item, data, lens in ((r[0], keys, key_lens), (r[1], values, value_lens)):
            if item is None:
                lens.append(-1)
            elif isinstance(item, bytes):
                data.append(item)
                lens.append(len(item))
            else:
                return None
        ts = r[2] if m > 2 else None
        if ts is None:
            ts = default_timestamp
        elif not isinstance(ts, int) or not _INT64_MIN <= ts <= _INT64_MAX:
            return None
        if stamps and not _INT64_MIN <= ts - stamps[0] <= _INT64_MAX:
            return None  # a timestampDelta outside int64: the per-record path raises for it
        stamps.append(ts)
        hs = r[3] if m > 3 else None
        count = 0
        if hs is not None:
            if not isinstance(hs, (tuple, list)):
                return None
            for h in hs:
                if not isinstance(h, (tuple, list)) or len(h) != 2:
                    return None
                hk, hv = h[0], h[1]
                if type(hk) is not str or not (hv is None or isinstance(hv, bytes)):
                    return None  # (a str subclass may override encode())
                try:
                    kb = hk.encode("utf-8")
                except UnicodeEncodeError:
                    return None
                hkeys.append(kb)
                hk_lens.append(len(kb))
                if hv is None:
                    hv_lens.append(-1)
                else:
                    hvalues.append(hv)
                    hv_lens.append(len(hv))
                count += 1
        header_counts.append(count)
        if m > 4 and r[4] is not None:
            return None

    def offsets(lens: list[int]) -> bytes:
        out = np.zeros(len(lens) + 1, np.int64)
        np.cumsum(np.maximum(np.array(lens, np.int64), 0), out=out[1:])
        return out.tobytes()

    def valid(lens: list[int]) -> bytes:
        return (np.array(lens, np.int64) >= 0).tobytes()

    n = len(records)
    return (np.array(stamps, np.int64).tobytes(), b"".join(keys), offsets(key_lens),
            valid(key_lens), b"".join(values), offsets(value_lens), valid(value_lens),
            np.concatenate([[0], np.cumsum(header_counts, dtype=np.int64)]).astype(
                np.int64).tobytes(),
            b"".join(hkeys), offsets(hk_lens), b"".join(hvalues), offsets(hv_lens),
            valid(hv_lens), n, max(max(stamps, default=-1), -1))


def _encode_records_py(records: Any, default_timestamp: int, header_room: int
                       ) -> tuple[bytearray, int, int, int] | None:
    """Python twin of ``native/_rows.c`` ``encode_records`` (its reference, and the path when
    the extension is not built): ``header_room`` zero bytes then the records area of one v2
    batch, as a bytearray, with the record count, the first and the largest timestamp; None
    when a record needs the per-record path. The records are flattened (:func:`_flatten_py`)
    and written by the columnar encode kernel."""
    global _ONES
    flat = _flatten_py(records, default_timestamp)
    if flat is None or flat[13] == 0:
        return None
    (ts_b, kd_b, ko_b, kv_b, vd_b, vo_b, vv_b, ho_b, hkd_b, hko_b, hvd_b, hvo_b, hvv_b, n,
     max_ts) = flat
    u8, i64 = np.uint8, np.int64
    timestamps = np.frombuffer(ts_b, i64)
    args = (timestamps, np.frombuffer(kd_b, u8), np.frombuffer(ko_b, i64),
            np.frombuffer(kv_b, np.bool_), np.frombuffer(vd_b, u8), np.frombuffer(vo_b, i64),
            np.frombuffer(vv_b, np.bool_), np.frombuffer(ho_b, i64), np.frombuffer(hkd_b, u8),
            np.frombuffer(hko_b, i64), np.frombuffer(hvd_b, u8), np.frombuffer(hvo_b, i64),
            np.frombuffer(hvv_b, np.bool_))
    if hvv_b:
        header_bytes = np.empty(n, i64)
        err, _ = _re.header_sizes(args[7], args[9], i64(len(hkd_b)), args[11], args[12],
                                  i64(len(hvd_b)), i64(n), header_bytes)
        if err != _re.ERR_OK:
            return None  # a header above int32: the per-record path raises for it
        header_total = int(header_bytes.sum())
        header_bytes = kernel_input(header_bytes, i64)
    else:
        if _ONES.shape[0] < n:
            _ONES = kernel_input(np.ones(max(n, 4096), i64), i64)  # as encode_columns passes
        header_bytes = _ONES[:n]  # just the header count varint (0)
        header_total = n
    cap = header_room + header_total + n * _re.MAX_RECORD_OVERHEAD + len(kd_b) + len(vd_b)
    out = np.zeros(cap, u8)
    area = np.empty(1, i64)
    area_end = np.empty(1, i64)
    err, _, end = _re.encode_batches(np.array([0, n], i64), i64(header_room), *args,
                                     header_bytes, out, area, area_end)
    if err != _re.ERR_OK:
        return None  # a record above int32: the per-record path raises for it
    return bytearray(out[:int(end)]), n, int(timestamps[0]), max_ts


_rows = optional_extension("_rows")
#: ``encode_records(records, default_timestamp, header_room)``: the C function when built,
#: else ``_encode_records_py``.
encode_records = _rows.encode_records if _rows is not None else _encode_records_py
#: fewer records go through the per-record path: with the kernel (no C extension) the row
#: path's fixed cost exceeds the per-record path's below about 8 records; the C encoder is
#: the faster one from 1 record on (4.5 us against 7.8 us for one record, measured)
ROW_KERNEL_MIN_RECORDS = 8 if encode_records is _encode_records_py else 1
_ONES = np.ones(0, np.int64)


def encode_records_v2(
    records: Any,
    default_timestamp: int,
    *,
    base_offset: int,
    codec: int,
    log_append: bool,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    partition_leader_epoch: int = -1,
    transactional: bool = False,
    control: bool = False,
    log_append_time: int | None = None,
    compression_level: int | None = None,
    in_place: bool = False,
) -> bytes | bytearray | None:
    """One v2 batch of ``records`` through the row encoder (:data:`encode_records`), or None
    when the records need the per-record path (see above). A None timestamp is written as
    ``default_timestamp`` (-1 for :func:`encode_batch`; the clock's now for ``Log.append``).
    Same bytes as :func:`encode_batch`; ``in_place``: an uncompressed batch is returned in the
    ``bytearray`` it was encoded in, without the copy into ``bytes`` (for a writer that
    passes it on to ``os.pwrite`` and drops it)."""
    if not isinstance(records, (list, tuple)) or len(records) < ROW_KERNEL_MIN_RECORDS:
        return None
    header_size = RECORD_BATCH_OVERHEAD if codec == 0 else 0
    encoded = encode_records(records, default_timestamp, header_size)
    if encoded is None:
        return None
    if not _INT64_MIN <= base_offset <= _INT64_MAX:
        raise ValueError(f"base_offset out of int64 range: {base_offset}")
    out, n, base_timestamp, max_ts = encoded
    end = len(out)
    if log_append:
        max_ts = time.time_ns() // 1_000_000 if log_append_time is None else log_append_time
    attributes = _batch_attributes(codec, log_append, transactional, control, False)
    if codec == 0:
        HEADER_STRUCT.pack_into(out, 0, base_offset, end - LOG_OVERHEAD, partition_leader_epoch,
                                2, 0, attributes, n - 1, base_timestamp, max_ts, producer_id,
                                producer_epoch, base_sequence, n)
        _CRC.pack_into(out, 17, _crc32c(memoryview(out)[ATTRIBUTES_OFFSET:]))
        return out if in_place else bytes(out)
    records_area = _compression.compress(codec, out, magic=2,
                                         level=compression_level)
    return _v2_batch(records_area, base_offset, partition_leader_epoch, attributes, n - 1,
                     base_timestamp, max_ts, producer_id, producer_epoch, base_sequence, n)


def _v2_batch(records_area: bytes, base_offset: int, partition_leader_epoch: int,
              attributes: int, last_offset_delta: int, base_timestamp: int, max_timestamp: int,
              producer_id: int, producer_epoch: int, base_sequence: int, count: int) -> bytes:
    """The 61-byte v2 header (its CRC-32C over attributes .. end) followed by
    ``records_area``: one whole batch (the last step of both encode paths)."""
    header = bytearray(HEADER_STRUCT.pack(
        base_offset, RECORD_BATCH_OVERHEAD - LOG_OVERHEAD + len(records_area),
        partition_leader_epoch, 2, 0, attributes, last_offset_delta, base_timestamp,
        max_timestamp, producer_id, producer_epoch, base_sequence, count))
    crc = _crc32c(records_area, _crc32c(memoryview(header)[ATTRIBUTES_OFFSET:]))
    _CRC.pack_into(header, 17, crc)
    return bytes(header) + records_area


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
    if delete_horizon_ms is None and last_offset_delta is None:
        fast = encode_records_v2(
            records, -1, base_offset=base_offset, codec=cid, log_append=log_append,
            producer_id=producer_id, producer_epoch=producer_epoch, base_sequence=base_sequence,
            partition_leader_epoch=partition_leader_epoch, transactional=transactional,
            control=control, log_append_time=log_append_time,
            compression_level=compression_level)
        if fast is not None:
            return fast
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

    attributes = _batch_attributes(cid, log_append, transactional, control,
                                   delete_horizon_ms is not None)
    if last_offset_delta is None:
        last_offset_delta = rows[-1][0] if rows else 0
    return _v2_batch(records_area, base_offset, partition_leader_epoch, attributes,
                     last_offset_delta, base_timestamp, max_timestamp, producer_id,
                     producer_epoch, base_sequence, len(rows))


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
