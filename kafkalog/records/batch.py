"""v2 record batches (magic 2): header layout, a lazy batch view, and iteration over a log.

Batch header, 61 bytes (``RECORD_BATCH_OVERHEAD``), big-endian (spec §1.1)::

    0  baseOffset            int64
    8  batchLength           int32   bytes after this field (= size - 12)
    12 partitionLeaderEpoch  int32   not covered by the CRC
    16 magic                 int8    = 2
    17 crc                   uint32  CRC-32C of attributes .. end of batch
    21 attributes            int16   codec 0x07, timestamp type 0x08, transactional 0x10,
                                     control 0x20, delete horizon 0x40
    23 lastOffsetDelta       int32
    27 baseTimestamp         int64   (the delete horizon when bit 0x40 is set)
    35 maxTimestamp          int64
    43 producerId            int64
    51 producerEpoch         int16
    53 baseSequence          int32
    57 recordsCount          int32
    61 records               uncompressed, or one compressed stream of them

:func:`iter_batches` walks a ``.log`` buffer or file with ``kafkalog.native.scan`` (Kafka's
``FileLogInputStream`` stop rule: a partial trailing entry ends iteration, a declared size below
14 is corrupt) and yields a :class:`RecordBatch` per v2 batch and a
:class:`~kafkalog.records.legacy.LegacyEntry` per v0/v1 message or wrapper. Records are decoded
only when a batch is iterated. Decoding arbitrary bytes either succeeds or raises
:class:`CorruptRecordError` carrying the path and position; memory is bounded by the input size
and ``max_decompressed_bytes``.

>>> from kafkalog.records.builder import encode_batch
>>> from kafkalog.records.record import Record
>>> data = encode_batch([Record(None, b"hello", 1700000000000)], partition_leader_epoch=0)
>>> [(b.base_offset, b.crc, b.is_valid) for b in iter_batches(data)]
[(0, 3863061579, True)]
>>> [r.value for b in iter_batches(data) for r in b]
[b'hello']
"""

from __future__ import annotations

import mmap
import os
import struct
from collections.abc import Iterator
from typing import Any, NamedTuple

import numpy as np

from ..errors import CorruptRecordError, RecordTooLargeError, UnsupportedCodecError
from ..file_copy import FileCopy
from ..java_utf8 import JAVA_REPLACE
from ..native import scan as _scan
from . import compression as _compression
from .compression import DEFAULT_MAX_DECOMPRESSED
from .crc import crc32c
from .legacy import LegacyEntry
from .record import (
    CREATE_TIME,
    LOG_APPEND_TIME,
    Header,
    Record,
)

__all__ = [
    "RecordBatch",
    "LegacyEntry",
    "ControlRecord",
    "EndTxnMarker",
    "iter_batches",
    "records_bytes",
    "parse_control_key",
    "parse_end_txn_marker",
    "increment_sequence",
    "DEFAULT_MAX_DECOMPRESSED",
    "LOG_OVERHEAD",
    "RECORD_BATCH_OVERHEAD",
    "HEADER_STRUCT",
]

# --- layout (Kafka's DefaultRecordBatch constants) ---------------------------------------------
BASE_OFFSET_OFFSET = 0
BASE_OFFSET_LENGTH = 8
LENGTH_OFFSET = BASE_OFFSET_OFFSET + BASE_OFFSET_LENGTH
LENGTH_LENGTH = 4
LOG_OVERHEAD = LENGTH_OFFSET + LENGTH_LENGTH  # 12: offset + size prefix shared by every format
PARTITION_LEADER_EPOCH_OFFSET = LOG_OVERHEAD
PARTITION_LEADER_EPOCH_LENGTH = 4
MAGIC_OFFSET = PARTITION_LEADER_EPOCH_OFFSET + PARTITION_LEADER_EPOCH_LENGTH  # 16
MAGIC_LENGTH = 1
CRC_OFFSET = MAGIC_OFFSET + MAGIC_LENGTH  # 17
CRC_LENGTH = 4
ATTRIBUTES_OFFSET = CRC_OFFSET + CRC_LENGTH  # 21: CRC coverage starts here
ATTRIBUTE_LENGTH = 2
LAST_OFFSET_DELTA_OFFSET = ATTRIBUTES_OFFSET + ATTRIBUTE_LENGTH  # 23
LAST_OFFSET_DELTA_LENGTH = 4
BASE_TIMESTAMP_OFFSET = LAST_OFFSET_DELTA_OFFSET + LAST_OFFSET_DELTA_LENGTH  # 27
BASE_TIMESTAMP_LENGTH = 8
MAX_TIMESTAMP_OFFSET = BASE_TIMESTAMP_OFFSET + BASE_TIMESTAMP_LENGTH  # 35
MAX_TIMESTAMP_LENGTH = 8
PRODUCER_ID_OFFSET = MAX_TIMESTAMP_OFFSET + MAX_TIMESTAMP_LENGTH  # 43
PRODUCER_ID_LENGTH = 8
PRODUCER_EPOCH_OFFSET = PRODUCER_ID_OFFSET + PRODUCER_ID_LENGTH  # 51
PRODUCER_EPOCH_LENGTH = 2
BASE_SEQUENCE_OFFSET = PRODUCER_EPOCH_OFFSET + PRODUCER_EPOCH_LENGTH  # 53
BASE_SEQUENCE_LENGTH = 4
RECORDS_COUNT_OFFSET = BASE_SEQUENCE_OFFSET + BASE_SEQUENCE_LENGTH  # 57
RECORDS_COUNT_LENGTH = 4
RECORDS_OFFSET = RECORDS_COUNT_OFFSET + RECORDS_COUNT_LENGTH  # 61
RECORD_BATCH_OVERHEAD = RECORDS_OFFSET

#: The whole header in one unpack (field order as above); its size is RECORD_BATCH_OVERHEAD
#: (checked in tests/test_batch.py).
HEADER_STRUCT = struct.Struct(">qiibIhiqqqhii")

# --- attributes ---------------------------------------------------------------------------------
COMPRESSION_CODEC_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_FLAG_MASK = 0x10
CONTROL_FLAG_MASK = 0x20
DELETE_HORIZON_FLAG_MASK = 0x40

# --- sentinels and magic values (Kafka's RecordBatch constants) --------------------------------
MAGIC_VALUE_V0 = 0
MAGIC_VALUE_V1 = 1
MAGIC_VALUE_V2 = 2
CURRENT_MAGIC_VALUE = MAGIC_VALUE_V2
NO_TIMESTAMP = -1
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_PARTITION_LEADER_EPOCH = -1

# --- control records (ControlRecordType) -------------------------------------------------------
CONTROL_TYPES: dict[int, str] = {
    0: "ABORT",
    1: "COMMIT",
    2: "LEADER_CHANGE",
    3: "SNAPSHOT_HEADER",
    4: "SNAPSHOT_FOOTER",
    5: "KRAFT_VERSION",
    6: "KRAFT_VOTERS",
}
CONTROL_TYPE_IDS: dict[str, int] = {v: k for k, v in CONTROL_TYPES.items()}
UNKNOWN_CONTROL_TYPE = -1
CONTROL_KEY_SIZE = 4  # int16 version + int16 type
END_TXN_MARKER_VALUE_SIZE = 6  # int16 version + int32 coordinatorEpoch

_INT32_MAX = 2147483647
_I64_MIN = -(1 << 63)
_I64_MAX = (1 << 63) - 1
_U64 = 0xFFFFFFFFFFFFFFFF

_CONTROL_KEY = struct.Struct(">hh")
_END_TXN_VALUE = struct.Struct(">hi")


class ControlRecord(NamedTuple):
    """The key of a control record: its version and type (``UNKNOWN`` for unknown ids)."""

    version: int
    type_id: int
    type: str


class EndTxnMarker(NamedTuple):
    """A COMMIT/ABORT marker: ``type`` is "COMMIT" or "ABORT"."""

    type: str
    version: int
    coordinator_epoch: int


def parse_control_key(key: bytes | None) -> ControlRecord:
    """Parse a control record key (Kafka's ``ControlRecordType.parse``).

    Raises :class:`CorruptRecordError` for a key shorter than 4 bytes or a negative version.
    Versions above 0 are parsed as version 0 (only the type is read).

    >>> parse_control_key(b"\\x00\\x00\\x00\\x01")
    ControlRecord(version=0, type_id=1, type='COMMIT')
    """
    if key is None or len(key) < CONTROL_KEY_SIZE:
        raise CorruptRecordError(
            f"Invalid record size for a control record (expected a key of at least "
            f"{CONTROL_KEY_SIZE} bytes, found {0 if key is None else len(key)})"
        )
    version, type_id = _CONTROL_KEY.unpack_from(key, 0)
    if version < 0:
        raise CorruptRecordError(
            f"Invalid version found for control record: {version}. May indicate data corruption"
        )
    name = CONTROL_TYPES.get(type_id)
    if name is None:
        return ControlRecord(version, UNKNOWN_CONTROL_TYPE, "UNKNOWN")
    return ControlRecord(version, type_id, name)


def parse_end_txn_marker(key: bytes | None, value: bytes | None) -> EndTxnMarker:
    """Parse a COMMIT/ABORT control record (Kafka's ``EndTransactionMarker.deserialize``).

    >>> parse_end_txn_marker(b"\\x00\\x00\\x00\\x00", b"\\x00\\x00\\x00\\x00\\x00\\x07")
    EndTxnMarker(type='ABORT', version=0, coordinator_epoch=7)
    """
    ctl = parse_control_key(key)
    if ctl.type_id not in (0, 1):
        raise CorruptRecordError(
            f"Invalid control record type for an end transaction marker "
            f"(expected ABORT or COMMIT, found {ctl.type})"
        )
    if value is None or len(value) < END_TXN_MARKER_VALUE_SIZE:
        raise CorruptRecordError(
            f"Invalid value size found for end transaction marker (expected at least "
            f"{END_TXN_MARKER_VALUE_SIZE} bytes, found {0 if value is None else len(value)})"
        )
    version, coordinator_epoch = _END_TXN_VALUE.unpack_from(value, 0)
    if version < 0:
        raise CorruptRecordError(
            f"Invalid version found for end transaction marker: {version}. "
            f"May indicate data corruption"
        )
    return EndTxnMarker(ctl.type, version, coordinator_epoch)


def increment_sequence(sequence: int, increment: int) -> int:
    """Kafka's ``DefaultRecordBatch.incrementSequence``: add, wrapping past INT32_MAX to 0.

    >>> increment_sequence(2147483647, 1)
    0
    """
    if sequence > _INT32_MAX - increment:
        return increment - (_INT32_MAX - sequence) - 1
    return sequence + increment


def _wrap64(x: int) -> int:
    # Java long arithmetic wraps; garbage deltas must still give int64 offsets/timestamps
    return ((x + (1 << 63)) & _U64) - (1 << 63)


# ---------------------------------------------------------------------------------------------
# record decoding (plain Python; the columnar path lives in records/columnar.py)


class _Malformed(Exception):
    """Internal: records area does not parse; carries the relative position."""

    def __init__(self, message: str, pos: int) -> None:
        super().__init__(message)
        self.pos = pos


def _varint_slow(data: bytes, pos: int, max_bytes: int, mask: int) -> tuple[int, int]:
    start = pos
    result = 0
    shift = 0
    n = len(data)
    for _ in range(max_bytes):
        if pos >= n:
            raise _Malformed("truncated varint (expected a continuation byte, found end)", start)
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            result &= mask
            return (result >> 1) ^ -(result & 1), pos
        shift += 7
    raise _Malformed(f"varint is too long (more than {max_bytes} bytes)", start)


def _decode_records(
    data: bytes,
    count: int,
    base_offset: int,
    base_timestamp: int,
    append_time: int | None,
) -> list[Record]:
    """Decode ``count`` v2 records from ``data`` (the whole records area, decompressed).

    Invariants checked as Kafka's ``DefaultRecord.readFrom`` and the batch iterator do: every
    record's declared length equals the bytes it consumes, no length overruns the record, header
    counts are >= 0 and not above the bytes left, header keys are not null, and no bytes remain
    after ``count`` records. Each record consumes >= 7 bytes, so the loop is bounded by ``len``.

    Hot path: one- and two-byte varints (lengths < 64 / < 8192, small deltas) are decoded
    inline; longer ones go through ``_varint_slow``. A read past the end of ``data`` surfaces
    as IndexError and is reported as a truncated record.
    """
    n = len(data)
    out: list[Record] = []
    append = out.append
    new = tuple.__new__
    slow = _varint_slow
    m32 = 0xFFFFFFFF
    pos = 0
    i = 0
    rec_start = 0
    try:
        for i in range(count):
            if pos >= n:
                raise _Malformed(f"expected {count} records, found end of data after {i}", pos)
            rec_start = pos
            # length (varint)
            b = data[pos]
            if b < 0x80:
                length = (b >> 1) ^ -(b & 1)
                pos += 1
            elif data[pos + 1] < 0x80:
                u = (b & 0x7F) | (data[pos + 1] << 7)
                length = (u >> 1) ^ -(u & 1)
                pos += 2
            else:
                length, pos = slow(data, pos, 5, m32)
            end = pos + length
            if length < 6 or end > n:
                raise _Malformed(
                    f"record {i}: invalid record size (expected 6..{n - pos} bytes, "
                    f"found {length})",
                    rec_start,
                )
            pos += 1  # record attributes: unused by Kafka
            # timestampDelta (varlong)
            b = data[pos]
            if b < 0x80:
                ts_delta = (b >> 1) ^ -(b & 1)
                pos += 1
            elif data[pos + 1] < 0x80:
                u = (b & 0x7F) | (data[pos + 1] << 7)
                ts_delta = (u >> 1) ^ -(u & 1)
                pos += 2
            else:
                ts_delta, pos = slow(data, pos, 10, _U64)
            # offsetDelta (varint)
            b = data[pos]
            if b < 0x80:
                off_delta = (b >> 1) ^ -(b & 1)
                pos += 1
            elif data[pos + 1] < 0x80:
                u = (b & 0x7F) | (data[pos + 1] << 7)
                off_delta = (u >> 1) ^ -(u & 1)
                pos += 2
            else:
                off_delta, pos = slow(data, pos, 5, m32)
            # key
            if pos >= end:
                raise _Malformed(f"record {i}: body ends before the key length", rec_start)
            b = data[pos]
            if b < 0x80:
                klen = (b >> 1) ^ -(b & 1)
                pos += 1
            elif data[pos + 1] < 0x80:
                u = (b & 0x7F) | (data[pos + 1] << 7)
                klen = (u >> 1) ^ -(u & 1)
                pos += 2
            else:
                klen, pos = slow(data, pos, 5, m32)
            if klen < 0:
                key = None
            else:
                if pos + klen > end:
                    raise _Malformed(
                        f"record {i}: key length {klen} overruns the record", rec_start
                    )
                key = data[pos : pos + klen]
                pos += klen
            # value
            if pos >= end:
                raise _Malformed(f"record {i}: body ends before the value length", rec_start)
            b = data[pos]
            if b < 0x80:
                vlen = (b >> 1) ^ -(b & 1)
                pos += 1
            elif data[pos + 1] < 0x80:
                u = (b & 0x7F) | (data[pos + 1] << 7)
                vlen = (u >> 1) ^ -(u & 1)
                pos += 2
            else:
                vlen, pos = slow(data, pos, 5, m32)
            if vlen < 0:
                value = None
            else:
                if pos + vlen > end:
                    raise _Malformed(
                        f"record {i}: value length {vlen} overruns the record", rec_start
                    )
                value = data[pos : pos + vlen]
                pos += vlen
            # headers
            if pos >= end:
                raise _Malformed(f"record {i}: body ends before the header count", rec_start)
            b = data[pos]
            if b < 0x80:
                hcount = (b >> 1) ^ -(b & 1)
                pos += 1
            else:
                hcount, pos = slow(data, pos, 5, m32)
            if hcount == 0:
                headers: tuple[Header, ...] = ()
            else:
                if hcount < 0 or hcount > end - pos:
                    raise _Malformed(
                        f"record {i}: invalid header count (expected 0..{end - pos}, "
                        f"found {hcount})",
                        rec_start,
                    )
                hl = []
                for _ in range(hcount):
                    hklen, pos = slow(data, pos, 5, m32)
                    if hklen < 0:
                        raise _Malformed(
                            f"record {i}: Invalid negative header key size", rec_start
                        )
                    if pos + hklen > end:
                        raise _Malformed(
                            f"record {i}: header key length {hklen} overruns the record",
                            rec_start,
                        )
                    # Java's String(bytes, UTF_8) replaces malformed input rather than failing
                    hkey = data[pos : pos + hklen].decode("utf-8", JAVA_REPLACE)
                    pos += hklen
                    hvlen, pos = slow(data, pos, 5, m32)
                    if hvlen < 0:
                        hval = None
                    else:
                        if pos + hvlen > end:
                            raise _Malformed(
                                f"record {i}: header value length {hvlen} overruns the record",
                                rec_start,
                            )
                        hval = data[pos : pos + hvlen]
                        pos += hvlen
                    hl.append(new(Header, (hkey, hval)))
                headers = tuple(hl)
            if pos != end:
                raise _Malformed(
                    f"record {i}: invalid record size (expected to read {length} bytes in "
                    f"record payload, read {pos - (end - length)})",
                    rec_start,
                )
            if append_time is None:
                ts = base_timestamp + ts_delta
                if ts > _I64_MAX or ts < _I64_MIN:
                    ts = _wrap64(ts)
            else:
                ts = append_time
            off = base_offset + off_delta
            if off > _I64_MAX or off < _I64_MIN:
                off = _wrap64(off)
            append(new(Record, (key, value, ts, headers, off)))
    except IndexError:
        raise _Malformed(f"record {i}: truncated record (found end of data)", rec_start) from None
    if pos != n:
        raise _Malformed(
            f"Incorrect declared batch size, records still remaining in file "
            f"({n - pos} bytes after {count} records)",
            pos,
        )
    return out


# ---------------------------------------------------------------------------------------------
# RecordBatch


class RecordBatch:
    """A lazy view of one v2 record batch in a buffer (no copy until records are decoded).

    Header fields are plain attributes; derived values are properties. Iterating decodes the
    records (decompressing first when needed) and yields :class:`Record` objects with absolute
    offsets; with LogAppendTime every record's timestamp is the batch ``max_timestamp``.

    Parameters
    ----------
    buffer:
        Bytes-like object holding the batch (a whole mmapped segment is fine).
    position:
        Byte position of the batch's baseOffset field in ``buffer``.
    size:
        Total size including the 12-byte prefix; default ``12 + batchLength``.
    path:
        File named in error messages.
    max_decompressed_bytes:
        Bound on the decompressed records area.

    Examples
    --------
    >>> from kafkalog.records.builder import encode_batch
    >>> b = RecordBatch(encode_batch([Record(b"k", b"v", 5)], base_offset=3, compression="gzip"))
    >>> (b.base_offset, b.last_offset, b.compression, b.timestamp_type, b.record_count)
    (3, 3, 'gzip', 'CreateTime', 1)
    >>> list(b)[0].offset
    3
    """

    __slots__ = (
        "_mv",
        "position",
        "size",
        "path",
        "max_decompressed_bytes",
        "base_offset",
        "batch_length",
        "partition_leader_epoch",
        "magic",
        "crc",
        "attributes",
        "last_offset_delta",
        "base_timestamp",
        "max_timestamp",
        "producer_id",
        "producer_epoch",
        "base_sequence",
        "record_count",
        "_computed_crc",
    )

    def __init__(
        self,
        buffer: Any,
        position: int = 0,
        size: int | None = None,
        *,
        path: str | os.PathLike[str] | None = None,
        max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED,
    ) -> None:
        mv = buffer if isinstance(buffer, memoryview) else memoryview(buffer)
        if mv.format != "B" or mv.ndim != 1:
            mv = mv.cast("B")
        self._mv = mv
        self.position = position
        self.path = os.fspath(path) if path is not None else None
        self.max_decompressed_bytes = max_decompressed_bytes
        avail = len(mv) - position
        if avail < RECORD_BATCH_OVERHEAD:
            raise CorruptRecordError(
                f"record batch truncated (expected at least {RECORD_BATCH_OVERHEAD} bytes, "
                f"found {avail})",
                path=self.path,
                position=position,
            )
        (
            self.base_offset,
            self.batch_length,
            self.partition_leader_epoch,
            self.magic,
            self.crc,
            self.attributes,
            self.last_offset_delta,
            self.base_timestamp,
            self.max_timestamp,
            self.producer_id,
            self.producer_epoch,
            self.base_sequence,
            self.record_count,
        ) = HEADER_STRUCT.unpack_from(mv, position)
        if size is None:
            size = LOG_OVERHEAD + self.batch_length
        if size < RECORD_BATCH_OVERHEAD:
            raise CorruptRecordError(
                f"Record batch is corrupt (the size {size} is smaller than the minimum allowed "
                f"overhead {RECORD_BATCH_OVERHEAD})",
                path=self.path,
                position=position,
            )
        if size > avail:
            raise CorruptRecordError(
                f"record batch truncated (expected {size} bytes, found {avail})",
                path=self.path,
                position=position,
            )
        if self.magic != MAGIC_VALUE_V2:
            raise CorruptRecordError(
                f"not a v2 record batch (expected magic 2, found {self.magic})",
                path=self.path,
                position=position,
            )
        self.size = size
        self._computed_crc: int | None = None

    # -- derived header values ----------------------------------------------------------------

    @property
    def last_offset(self) -> int:
        """baseOffset + lastOffsetDelta."""
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1

    @property
    def compression_id(self) -> int:
        return self.attributes & COMPRESSION_CODEC_MASK

    @property
    def compression(self) -> str:
        """Codec name from the attributes (``"unknown(N)"`` for the invalid ids 5-7)."""
        cid = self.attributes & COMPRESSION_CODEC_MASK
        return _compression.CODEC_NAMES.get(cid, f"unknown({cid})")

    @property
    def timestamp_type(self) -> str:
        """``"CreateTime"`` or ``"LogAppendTime"``."""
        return LOG_APPEND_TIME if self.attributes & TIMESTAMP_TYPE_MASK else CREATE_TIME

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_FLAG_MASK)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_FLAG_MASK)

    @property
    def has_delete_horizon(self) -> bool:
        return bool(self.attributes & DELETE_HORIZON_FLAG_MASK)

    @property
    def delete_horizon_ms(self) -> int | None:
        """The delete horizon (held in baseTimestamp) when attribute bit 6 is set, else None."""
        return self.base_timestamp if self.attributes & DELETE_HORIZON_FLAG_MASK else None

    @property
    def last_sequence(self) -> int:
        """Sequence of the last record (wrapping past INT32_MAX); -1 without a base sequence."""
        if self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return increment_sequence(self.base_sequence, self.last_offset_delta)

    @property
    def count_or_null(self) -> int:
        """Kafka's ``countOrNull()`` (the records count for v2)."""
        return self.record_count

    @property
    def computed_crc(self) -> int:
        """CRC-32C of attributes .. end of batch (computed once)."""
        if self._computed_crc is None:
            p = self.position
            self._computed_crc = crc32c(self._mv[p + ATTRIBUTES_OFFSET : p + self.size])
        return self._computed_crc

    @property
    def is_valid(self) -> bool:
        """Kafka's ``isValid``: size >= 61 (always, by construction) and the CRC matches."""
        return self.crc == self.computed_crc

    def ensure_valid(self) -> None:
        """Raise :class:`CorruptRecordError` naming both CRCs unless the batch is valid."""
        if not self.is_valid:
            raise CorruptRecordError(
                f"Record is corrupt (stored crc = {self.crc}, computed crc = {self.computed_crc})",
                path=self.path,
                position=self.position,
                offset=self.base_offset,
            )

    # -- records ------------------------------------------------------------------------------

    def _error(
        self, message: str, cls: type[CorruptRecordError] = CorruptRecordError
    ) -> CorruptRecordError:
        return cls(message, path=self.path, position=self.position, offset=self.base_offset)

    def entry_bytes(self) -> memoryview:
        """The whole batch as it lies in the log, 12-byte prefix included (a view, no copy)."""
        return self._mv[self.position : self.position + self.size]

    def records_bytes(self) -> bytes | memoryview:
        """The records area: a memoryview of the buffer (uncompressed) or decompressed bytes."""
        p = self.position
        area = self._mv[p + RECORDS_OFFSET : p + self.size]
        cid = self.attributes & COMPRESSION_CODEC_MASK
        if cid == 0:
            return area
        if cid > 4:
            raise self._error(f"Unknown compression type id {cid} (expected 0-4)")
        try:
            return _compression.decompress(
                cid, area, magic=2, max_size=self.max_decompressed_bytes
            )
        except RecordTooLargeError as e:
            raise self._error(e.message, RecordTooLargeError) from e
        except CorruptRecordError as e:
            raise self._error(e.message) from e
        except UnsupportedCodecError as e:  # pragma: no cover - ids checked above
            raise self._error(e.message) from e

    def records(self) -> list[Record]:
        """Decode every record of the batch (raises :class:`CorruptRecordError` if malformed)."""
        count = self.record_count
        if count == 0:
            # DefaultRecordBatch.iterator(): an empty batch yields nothing; its records area
            # (normally empty) is neither decompressed nor checked
            return []
        if count < 0:
            raise self._error(f"Found invalid record count {count} (expected >= 0)")
        area = self.records_bytes()
        data = area if isinstance(area, bytes) else bytes(area)
        append_time = self.max_timestamp if self.attributes & TIMESTAMP_TYPE_MASK else None
        try:
            return _decode_records(data, count, self.base_offset, self.base_timestamp, append_time)
        except _Malformed as e:
            if self.attributes & COMPRESSION_CODEC_MASK:
                where = f"at byte {e.pos} of the decompressed records area"
            else:
                where = f"at byte {self.position + RECORDS_OFFSET + e.pos} of the buffer"
            raise self._error(f"{e} ({where})") from None

    def __iter__(self) -> Iterator[Record]:
        return iter(self.records())

    # -- control batches ----------------------------------------------------------------------

    def control_record(self) -> ControlRecord | None:
        """The first record's control key (version, type id, type name); None if not control."""
        if not self.attributes & CONTROL_FLAG_MASK:
            return None
        recs = self.records()
        if not recs:
            return None
        try:
            return parse_control_key(recs[0].key)
        except CorruptRecordError as e:
            raise self._error(e.message) from None

    def control_type(self) -> str | None:
        """Control type name ("COMMIT", "ABORT", "LEADER_CHANGE", ..., "UNKNOWN") or None."""
        ctl = self.control_record()
        return None if ctl is None else ctl.type

    def control_type_id(self) -> int | None:
        """Control type id (-1 for unknown types) or None for a data batch."""
        ctl = self.control_record()
        return None if ctl is None else ctl.type_id

    def end_txn_marker(self) -> EndTxnMarker | None:
        """The COMMIT/ABORT marker of an end-transaction control batch, else None."""
        ctl = self.control_record()
        if ctl is None or ctl.type_id not in (0, 1):
            return None
        rec = self.records()[0]
        try:
            return parse_end_txn_marker(rec.key, rec.value)
        except CorruptRecordError as e:
            raise self._error(e.message) from None

    @property
    def coordinator_epoch(self) -> int | None:
        """Coordinator epoch of an end-transaction marker batch, else None."""
        m = self.end_txn_marker()
        return None if m is None else m.coordinator_epoch

    def __repr__(self) -> str:
        return (
            f"RecordBatch(base_offset={self.base_offset}, last_offset={self.last_offset}, "
            f"count={self.record_count}, compression={self.compression!r}, "
            f"size={self.size}, position={self.position})"
        )


# ---------------------------------------------------------------------------------------------
# sources and iteration


def _as_uint8(source: Any) -> tuple[np.ndarray, Any]:
    """(uint8 array view, keep-alive object) for a bytes-like/mmap/numpy source, no copy."""
    if isinstance(source, np.ndarray):
        if source.dtype != np.uint8 or source.ndim != 1:
            raise TypeError(
                f"numpy source must be a 1-D uint8 array, got {source.ndim}-D {source.dtype}"
            )
        if not source.flags.c_contiguous:
            source = np.ascontiguousarray(source)
        return source, source
    if isinstance(source, (bytes, bytearray, mmap.mmap)):
        return np.frombuffer(source, np.uint8), source
    if isinstance(source, memoryview):
        mv = source if (source.format == "B" and source.ndim == 1) else source.cast("B")
        if not mv.c_contiguous:
            raise TypeError("memoryview source must be C-contiguous")
        return np.frombuffer(mv, np.uint8), mv
    try:
        mv = memoryview(source)
    except TypeError:
        raise TypeError(
            f"source must be bytes-like, an mmap, a numpy uint8 array or a path, "
            f"got {type(source).__name__}"
        ) from None
    return _as_uint8(mv)




_FIRST_CHUNK = 64  # entries scanned before the first yield: keeps next(iter_batches(big)) cheap
_CHUNK = 8192  # then this many per kernel call (bounded index arrays on huge segments)


def iter_batches(
    source: Any,
    *,
    validate: bool = True,
    max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED,
    start: int = 0,
    end: int | None = None,
    path: str | os.PathLike[str] | None = None,
) -> Iterator[RecordBatch | LegacyEntry]:
    """Yield every log entry of a ``.log`` buffer or file, in order.

    Parameters
    ----------
    source:
        ``bytes``/``bytearray``/``memoryview``, an ``mmap``, a 1-D ``numpy.uint8`` array, or a
        path (str/PathLike) to a ``.log`` file (read with ``pread`` into private memory as the
        iteration goes, never mapped, so a writer may cut the file meanwhile; empty files are
        fine).
    validate:
        Check every entry's CRC (and a v2 batch's codec id) and raise
        :class:`CorruptRecordError` naming the position and both CRCs on a mismatch. With
        ``False`` invalid entries are yielded with ``is_valid == False``.
    max_decompressed_bytes:
        Bound on one batch's decompressed size (:class:`RecordTooLargeError` above it).
    start, end:
        Byte range of the buffer to walk (``start`` must be an entry boundary).
    path:
        File name for error messages when ``source`` is a buffer read from a file.

    Yields
    ------
    RecordBatch or LegacyEntry
        One per v2 batch / legacy message or compressed wrapper; iterate it for records.

    Raises
    ------
    CorruptRecordError
        A declared entry size below 14 (e.g. a zero-filled tail), an unknown magic, a v2 batch
        shorter than its header, or (``validate``) a CRC mismatch. A partial trailing entry is
        not an error: iteration just ends.

    Examples
    --------
    >>> from kafkalog.records.builder import encode_batch
    >>> data = encode_batch([Record(b"a", b"1"), Record(b"b", b"2")], base_offset=10)
    >>> [(r.offset, r.value) for b in iter_batches(data + data[:30]) for r in b]
    [(10, b'1'), (11, b'2')]
    """
    copy: FileCopy | None = None
    if isinstance(source, (str, os.PathLike)):
        # a private copy filled as the iteration goes, never a mapping: a writer in another
        # process may cut the file (see kafkalog.file_copy); the yielded batches keep it alive
        path = source if path is None else path
        copy = FileCopy(source)
        buf, keep = copy.buf, copy
    else:
        buf, keep = _as_uint8(source)
    path_s = os.fspath(path) if path is not None else None
    mv = memoryview(buf) if buf.size else memoryview(b"")
    n = buf.shape[0]
    stop_at = n if end is None else min(end, n)
    pos = max(0, start)
    chunk = _FIRST_CHUNK
    try:
        while True:
            if copy is not None:
                stop_at = min(stop_at, copy.size)
                out = copy.scan(pos, stop_at, max_entries=chunk)
            else:
                out = _scan.scan_entries(buf, pos, stop_at, max_entries=chunk)
            positions = out["positions"].tolist()
            sizes = out["sizes"].tolist()
            magics = out["magics"].tolist()
            for i in range(out["count"]):
                p = positions[i]
                if magics[i] == 2:
                    entry: RecordBatch | LegacyEntry = RecordBatch(
                        mv, p, sizes[i], path=path_s, max_decompressed_bytes=max_decompressed_bytes
                    )
                    if validate:
                        entry.ensure_valid()
                        cid = entry.attributes & COMPRESSION_CODEC_MASK
                        if cid > 4:
                            raise entry._error(f"Unknown compression type id {cid} (expected 0-4)")
                else:
                    entry = LegacyEntry(
                        mv, p, sizes[i], path=path_s, max_decompressed_bytes=max_decompressed_bytes
                    )
                    if validate:
                        entry.ensure_valid()
                yield entry
            reason = out["stop_reason"]
            stop = out["stop_position"]
            if reason == _scan.STOP_LIMIT:
                pos = stop
                chunk = _CHUNK
                continue
            if reason in (_scan.STOP_END, _scan.STOP_PARTIAL):
                del keep
                return
            raise _stop_error(buf, stop, reason, path_s)
    finally:
        if copy is not None:
            copy.close()  # the descriptor; the bytes live as long as the batches


def _stop_error(buf: np.ndarray, pos: int, reason: int, path: str | None) -> CorruptRecordError:
    if reason == _scan.STOP_CORRUPT_SIZE:
        size = int.from_bytes(buf[pos + 8 : pos + 12].tobytes(), "big", signed=True)
        return CorruptRecordError(
            f"Record size {size} is less than the minimum record overhead "
            f"({_scan.MIN_ENTRY_SIZE}); zero-filled or corrupt data",
            path=path,
            position=pos,
        )
    if reason == _scan.STOP_BAD_MAGIC:
        return CorruptRecordError(
            f"unknown magic byte (expected 0, 1 or 2, found {int(buf[pos + 16])})",
            path=path,
            position=pos,
        )
    if reason == _scan.STOP_SHORT_V2:
        size = LOG_OVERHEAD + int.from_bytes(buf[pos + 8 : pos + 12].tobytes(), "big", signed=True)
        return CorruptRecordError(
            f"Record batch is corrupt (the size {size} is smaller than the minimum allowed "
            f"overhead {RECORD_BATCH_OVERHEAD})",
            path=path,
            position=pos,
        )
    return CorruptRecordError(  # pragma: no cover - no other stop reasons exist
        f"log scan stopped: {_scan.STOP_REASONS.get(reason, reason)}", path=path, position=pos
    )


def records_bytes(
    buf: Any,
    position: int,
    size: int,
    *,
    max_size: int = DEFAULT_MAX_DECOMPRESSED,
    path: str | os.PathLike[str] | None = None,
) -> bytes | memoryview:
    """The records area of the v2 batch at ``buf[position:position+size]``, decompressed.

    Uncompressed batches give a zero-copy memoryview of ``buf``; compressed ones the
    decompressed bytes (bounded by ``max_size``). The CRC is not checked here.

    >>> from kafkalog.records.builder import encode_batch
    >>> data = encode_batch([Record(None, b"x")], compression="zstd")
    >>> bytes(records_bytes(data, 0, len(data)))
    b'\\x0e\\x00\\x00\\x00\\x01\\x02x\\x00'
    """
    return RecordBatch(
        buf, position, size, path=path, max_decompressed_bytes=max_size
    ).records_bytes()
