"""Legacy messages, magic 0 and 1 (message formats v0/v1), and their compressed wrappers (§2).

Layout of one log entry (all big-endian)::

    offset        int64    absolute offset (a compressed wrapper: its LAST inner offset)
    messageSize   int32    bytes after this field (>= 14)
    crc           uint32   CRC-32 (zlib) of magic .. end of value
    magic         int8     0 or 1
    attributes    int8     bits 0-2 codec (0-3), bit 3 timestamp type (v1 only)
    timestamp     int64    v1 only
    keyLength     int32    -1 = null key
    key
    valueLength   int32    -1 = null value
    value

A compressed set is one wrapper message whose value is the compressed bytes of complete inner
entries ``[int64 offset][int32 size][message]``. Reading rules are those of Kafka's
``AbstractLegacyRecordBatch.DeepRecordsIterator``:

* the whole wrapper is decompressed before any inner message is yielded;
* a partial trailing inner entry ends the inner sequence (``DataLogInputStream``), an inner size
  below 14 is corrupt, an empty inner sequence, a null wrapper value or a compressed inner
  message is corrupt;
* v1 wrappers store relative inner offsets: absolute = wrapperOffset - lastInner + inner, except
  that a wrapper offset of 0 (some librdkafka producers) means "inner offsets are absolute"; a
  non-zero wrapper offset below the last inner offset is corrupt;
* a v1 LogAppendTime wrapper's timestamp is every inner message's timestamp;
* inner magic need not match the wrapper's (Kafka checks that only when validating produce
  requests); inner CRCs are not checked; an inner magic other than 0/1 is corrupt (Kafka would
  read such a message with the v1 layout).

Writing (:func:`encode_legacy`) is for test tooling: it produces what a broker stores, e.g. v1
compressed wrappers with relative inner offsets and the wrapper at the last offset.

>>> data = encode_legacy([Record(None, b"hello", 1700000000000)], magic=1)
>>> data.hex()
'00000000000000000000001b8ee30bba01000000018bcfe56800ffffffff0000000568656c6c6f'
>>> [r.value for r in LegacyEntry(data, 0)]
[b'hello']
"""

from __future__ import annotations

import os
import struct
import time
from collections.abc import Iterable, Iterator
from typing import Any

from ..errors import CorruptRecordError, RecordTooLargeError, UnsupportedCodecError
from . import compression as _compression
from .crc import crc32
from .record import (
    CREATE_TIME,
    LOG_APPEND_TIME,
    NO_TIMESTAMP_TYPE,
    Record,
    _make_record,
)

__all__ = [
    "LegacyEntry",
    "encode_legacy",
    "encode_legacy_message",
    "RECORD_OVERHEAD_V0",
    "RECORD_OVERHEAD_V1",
    "LOG_OVERHEAD",
]

LOG_OVERHEAD = 12
CRC_OFFSET = 12  # from the entry start (after offset and size)
MAGIC_OFFSET = 16
ATTRIBUTES_OFFSET = 17
TIMESTAMP_OFFSET = 18  # v1 only
#: crc + magic + attributes + key length + value length (``LegacyRecord.RECORD_OVERHEAD_V0``).
RECORD_OVERHEAD_V0 = 14
#: v0 overhead + 8-byte timestamp (``LegacyRecord.RECORD_OVERHEAD_V1``).
RECORD_OVERHEAD_V1 = 22
COMPRESSION_CODEC_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08

_I64_I32 = struct.Struct(">qi")
_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")
_I64 = struct.Struct(">q")


class _Malformed(Exception):
    """Internal: a message body that does not parse (converted to CorruptRecordError)."""


def _parse_message(
    mv: Any, start: int, end: int
) -> tuple[int, int, int, bytes | None, bytes | None]:
    """Parse the message in ``mv[start:end]`` (crc .. value). Returns magic, attrs, ts, key, value.

    Raises ``_Malformed`` with a relative description when fields overrun ``end``.
    """
    if end - start < RECORD_OVERHEAD_V0:
        raise _Malformed(
            f"message too small (expected at least {RECORD_OVERHEAD_V0} bytes, found {end - start})"
        )
    magic = mv[start + 4]
    attributes = mv[start + 5]
    p = start + 6
    if magic == 0:
        timestamp = -1
    elif magic == 1:
        if end - start < RECORD_OVERHEAD_V1:
            raise _Malformed(
                f"v1 message too small (expected at least {RECORD_OVERHEAD_V1} bytes, "
                f"found {end - start})"
            )
        (timestamp,) = _I64.unpack_from(mv, p)
        p += 8
    else:
        raise _Malformed(f"unexpected magic in a legacy message (expected 0 or 1, found {magic})")
    (klen,) = _I32.unpack_from(mv, p)
    p += 4
    key: bytes | None
    if klen < 0:
        key = None
    else:
        if klen > end - p - 4:
            raise _Malformed(f"key length {klen} overruns the message ({end - p - 4} bytes left)")
        key = bytes(mv[p : p + klen])
        p += klen
    if end - p < 4:
        raise _Malformed("message ends before the value length")
    (vlen,) = _I32.unpack_from(mv, p)
    p += 4
    value: bytes | None
    if vlen < 0:
        value = None
    else:
        if vlen > end - p:
            raise _Malformed(f"value length {vlen} overruns the message ({end - p} bytes left)")
        value = bytes(mv[p : p + vlen])
    return magic, attributes, timestamp, key, value


class LegacyEntry:
    """One v0/v1 log entry: a plain message or a compressed wrapper (a lazy view).

    Exposes the same attributes as :class:`kafkalog.records.batch.RecordBatch`; iterating yields
    :class:`Record` objects (no headers in these formats). ``base_offset``, ``record_count`` and
    ``last_offset_delta`` of a compressed wrapper need decompression (done once, on first use).

    Parameters
    ----------
    buffer:
        Bytes-like object holding the entry (the whole segment is fine: no copy is made).
    position:
        Byte position of the entry's offset field in ``buffer``.
    size:
        Entry size including the 12-byte offset/size prefix (default: from the size field).
    path:
        File name used in error messages.
    max_decompressed_bytes:
        Bound on a wrapper's decompressed size.

    Examples
    --------
    >>> e = LegacyEntry(encode_legacy([Record(b"k", b"v")], magic=0), 0)
    >>> (e.magic, e.timestamp_type, e.is_valid, list(e)[0].key)
    (0, 'NoTimestampType', True, b'k')
    """

    __slots__ = (
        "_mv",
        "position",
        "size",
        "path",
        "max_decompressed_bytes",
        "offset",
        "magic",
        "crc",
        "attributes",
        "timestamp",
        "_inner",
        "_computed_crc",
    )

    producer_id = -1
    producer_epoch = -1
    base_sequence = -1
    last_sequence = -1
    partition_leader_epoch = -1
    is_transactional = False
    is_control = False
    delete_horizon_ms = None

    def __init__(
        self,
        buffer: Any,
        position: int = 0,
        size: int | None = None,
        *,
        path: str | os.PathLike[str] | None = None,
        max_decompressed_bytes: int = _compression.DEFAULT_MAX_DECOMPRESSED,
    ) -> None:
        mv = buffer if isinstance(buffer, memoryview) else memoryview(buffer)
        if mv.format != "B" or mv.ndim != 1:
            mv = mv.cast("B")
        self._mv = mv
        self.position = position
        self.path = os.fspath(path) if path is not None else None
        self.max_decompressed_bytes = max_decompressed_bytes
        if len(mv) - position < LOG_OVERHEAD + RECORD_OVERHEAD_V0:
            raise self._error(
                f"legacy entry truncated (expected at least {LOG_OVERHEAD + RECORD_OVERHEAD_V0} "
                f"bytes, found {len(mv) - position})"
            )
        offset, msg_size = _I64_I32.unpack_from(mv, position)
        if size is None:
            size = LOG_OVERHEAD + msg_size
        if msg_size < RECORD_OVERHEAD_V0 or size != LOG_OVERHEAD + msg_size:
            raise self._error(
                f"legacy message size too small (expected >= {RECORD_OVERHEAD_V0}, "
                f"found {msg_size})"
            )
        if position + size > len(mv):
            raise self._error(
                f"legacy entry truncated (expected {size} bytes, found {len(mv) - position})"
            )
        self.size = size
        self.offset = offset
        (self.crc,) = _U32.unpack_from(mv, position + CRC_OFFSET)
        self.magic = mv[position + MAGIC_OFFSET]
        self.attributes = mv[position + ATTRIBUTES_OFFSET]
        if self.magic == 1 and size >= TIMESTAMP_OFFSET + 8:  # same rule as native.scan
            (self.timestamp,) = _I64.unpack_from(mv, position + TIMESTAMP_OFFSET)
        else:
            self.timestamp = -1
        self._inner: list[Record] | None = None
        self._computed_crc: int | None = None

    # -- errors -------------------------------------------------------------------------------

    def _error(
        self, message: str, cls: type[CorruptRecordError] = CorruptRecordError
    ) -> CorruptRecordError:
        return cls(message, path=self.path, position=self.position)

    def entry_bytes(self) -> memoryview:
        """The whole entry as it lies in the log, 12-byte prefix included (a view, no copy)."""
        return self._mv[self.position : self.position + self.size]

    # -- header-derived attributes --------------------------------------------------------------

    @property
    def compression_id(self) -> int:
        """Codec id from the attribute bits (0 none .. 3 lz4; 4-7 are invalid here)."""
        return self.attributes & COMPRESSION_CODEC_MASK

    @property
    def compression(self) -> str:
        """Codec name (``"none"``, ``"gzip"``...; ``"unknown(N)"`` for ids 5-7)."""
        return _compression.CODEC_NAMES.get(self.compression_id, f"unknown({self.compression_id})")

    @property
    def is_compressed(self) -> bool:
        """True for a compressed wrapper message."""
        return self.compression_id != 0

    @property
    def timestamp_type(self) -> str:
        """``"NoTimestampType"`` (v0), else ``"CreateTime"`` or ``"LogAppendTime"``."""
        if self.magic == 0:
            return NO_TIMESTAMP_TYPE
        return LOG_APPEND_TIME if self.attributes & TIMESTAMP_TYPE_MASK else CREATE_TIME

    @property
    def max_timestamp(self) -> int:
        """The message's timestamp (v1; for a wrapper the max inner or the append time); v0: -1."""
        return self.timestamp

    @property
    def base_timestamp(self) -> int:
        """Legacy entries have no base timestamp; the message timestamp stands in for it."""
        return self.timestamp

    @property
    def last_offset(self) -> int:
        """The entry's own offset (a wrapper sits at its last inner offset)."""
        return self.offset

    @property
    def next_offset(self) -> int:
        return self.offset + 1

    @property
    def base_offset(self) -> int:
        """First offset: the entry offset, or (wrapper) the first inner absolute offset."""
        if not self.is_compressed:
            return self.offset
        return self._inner_records()[0].offset  # type: ignore[return-value]

    @property
    def last_offset_delta(self) -> int:
        return self.last_offset - self.base_offset

    @property
    def record_count(self) -> int:
        """Number of records: 1, or the number of inner messages of a wrapper."""
        if not self.is_compressed:
            return 1
        return len(self._inner_records())

    @property
    def count_or_null(self) -> int | None:
        """Kafka's ``countOrNull()``: None for legacy entries (DumpLogSegments prints it)."""
        return None

    @property
    def computed_crc(self) -> int:
        """CRC-32 of magic .. end of the message."""
        if self._computed_crc is None:
            p = self.position
            self._computed_crc = crc32(self._mv[p + MAGIC_OFFSET : p + self.size])
        return self._computed_crc

    @property
    def is_valid(self) -> bool:
        """Kafka's ``isValid``: size >= 14 (always, by construction) and the CRC matches."""
        return self.crc == self.computed_crc

    def ensure_valid(self) -> None:
        """Raise :class:`CorruptRecordError` (stored and computed CRC) unless valid."""
        if not self.is_valid:
            raise self._error(
                f"Record is corrupt (stored crc = {self.crc}, computed crc = {self.computed_crc})"
            )

    def control_type(self) -> str | None:
        """Legacy entries are never control batches."""
        return None

    def control_type_id(self) -> int | None:
        return None

    def end_txn_marker(self) -> None:
        return None

    # -- message body -------------------------------------------------------------------------

    def _message(self) -> tuple[int, int, int, bytes | None, bytes | None]:
        p = self.position
        try:
            return _parse_message(self._mv, p + LOG_OVERHEAD, p + self.size)
        except _Malformed as e:
            raise self._error(f"corrupt legacy message at offset {self.offset}: {e}") from None

    @property
    def key(self) -> bytes | None:
        """The (outer) message key."""
        return self._message()[3]

    @property
    def value(self) -> bytes | None:
        """The (outer) message value: compressed inner messages for a wrapper."""
        return self._message()[4]

    def _inner_records(self) -> list[Record]:
        if self._inner is None:
            self._inner = self._decode()
        return self._inner

    def _decode(self) -> list[Record]:
        magic, attributes, timestamp, key, value = self._message()
        cid = attributes & COMPRESSION_CODEC_MASK
        if cid == 0:
            if magic == 0:
                timestamp = -1
            return [_make_record(key, value, timestamp, (), self.offset)]
        if cid > 3:
            raise self._error(
                f"invalid compression codec for a magic {magic} wrapper (expected 0-3, found {cid})"
            )
        if value is None:
            raise self._error(
                f"Found invalid compressed record set with null value (magic = {magic})"
            )
        try:
            data = _compression.decompress(
                cid, value, magic=magic, max_size=self.max_decompressed_bytes
            )
        except RecordTooLargeError as e:
            raise self._error(
                f"wrapper at offset {self.offset}: {e.message}", RecordTooLargeError
            ) from e
        except CorruptRecordError as e:
            raise self._error(f"wrapper at offset {self.offset}: {e.message}") from e
        except UnsupportedCodecError as e:  # pragma: no cover - cid checked above
            raise self._error(e.message) from e
        log_append = magic == 1 and bool(attributes & TIMESTAMP_TYPE_MASK)
        inner: list[tuple[int, int, int, bytes | None, bytes | None]] = []
        dmv = memoryview(data)
        n = len(data)
        p = 0
        while n - p >= LOG_OVERHEAD:
            ioff, isize = _I64_I32.unpack_from(dmv, p)
            if isize < RECORD_OVERHEAD_V0:
                raise self._error(
                    f"inner message of wrapper at offset {self.offset}: record size is less than "
                    f"the minimum record overhead (expected >= {RECORD_OVERHEAD_V0}, found {isize})"
                )
            if isize > n - p - LOG_OVERHEAD:
                break  # partial trailing inner entry: Kafka's DataLogInputStream stops here
            try:
                imagic, iattr, its, ikey, ivalue = _parse_message(
                    dmv, p + LOG_OVERHEAD, p + LOG_OVERHEAD + isize
                )
            except _Malformed as e:
                raise self._error(
                    f"inner message {len(inner)} of wrapper at offset {self.offset}: {e}"
                ) from None
            if iattr & COMPRESSION_CODEC_MASK:
                raise self._error(
                    f"inner message {len(inner)} of wrapper at offset {self.offset}: Inner "
                    f"messages must not be compressed (found codec id "
                    f"{iattr & COMPRESSION_CODEC_MASK})"
                )
            if imagic == 1 and log_append:
                its = timestamp
            inner.append((ioff, imagic, its, ikey, ivalue))
            p += LOG_OVERHEAD + isize
        if not inner:
            raise self._error(
                f"Found invalid compressed record set with no inner records "
                f"(wrapper at offset {self.offset})"
            )
        if magic == 1:
            last_inner = inner[-1][0]
            if self.offset == 0:
                base = 0  # librdkafka producers: inner offsets are already absolute
            else:
                if self.offset < last_inner:
                    raise self._error(
                        f"Found invalid wrapper offset in compressed v1 message set, wrapper "
                        f"offset '{self.offset}' is less than the last inner message offset "
                        f"'{last_inner}' and it is not zero."
                    )
                base = self.offset - last_inner
        else:
            base = 0  # v0 inner offsets are absolute
        return [
            _make_record(k, v, ts, (), _wrap64(base + o)) for (o, _m, ts, k, v) in inner
        ]

    def __iter__(self) -> Iterator[Record]:
        return iter(self._inner_records())

    def records(self) -> list[Record]:
        """All records of the entry as a list."""
        return list(self._inner_records())

    def __repr__(self) -> str:
        return (
            f"LegacyEntry(offset={self.offset}, magic={self.magic}, "
            f"compression={self.compression!r}, size={self.size}, position={self.position})"
        )


def _wrap64(x: int) -> int:
    # Java long arithmetic wraps; keep offsets representable as int64 like Kafka does
    if -(1 << 63) <= x < (1 << 63):
        return x
    return ((x + (1 << 63)) & 0xFFFFFFFFFFFFFFFF) - (1 << 63)


# ---------------------------------------------------------------------------------------------
# writing (test tooling)


def _as_bytes(b: Any, what: str) -> bytes | None:
    if b is None:
        return None
    if isinstance(b, bytes):
        return b
    if isinstance(b, (bytearray, memoryview)):
        return bytes(b)
    raise TypeError(f"{what} must be bytes-like or None, got {type(b).__name__}")


def encode_legacy_message(
    offset: int,
    key: bytes | None,
    value: bytes | None,
    *,
    magic: int,
    timestamp: int = -1,
    attributes: int = 0,
) -> bytes:
    """One legacy log entry ``[offset][size][crc magic attributes (timestamp) key value]``.

    >>> encode_legacy_message(0, None, b"hello", magic=0).hex()
    '00000000000000000000001387a77ab20000ffffffff0000000568656c6c6f'
    """
    if magic not in (0, 1):
        raise ValueError(f"legacy magic must be 0 or 1, got {magic!r}")
    parts = [bytes((magic, attributes & 0xFF))]
    if magic == 1:
        parts.append(_I64.pack(timestamp))
    if key is None:
        parts.append(_I32.pack(-1))
    else:
        parts.append(_I32.pack(len(key)))
        parts.append(key)
    if value is None:
        parts.append(_I32.pack(-1))
    else:
        parts.append(_I32.pack(len(value)))
        parts.append(value)
    body = b"".join(parts)
    return b"".join(
        (_I64_I32.pack(offset, 4 + len(body)), _U32.pack(crc32(body)), body)
    )


def encode_legacy(
    records: Iterable[Any],
    *,
    magic: int,
    base_offset: int = 0,
    compression: str | int = "none",
    timestamp_type: str = "create",
    log_append_time: int | None = None,
    compression_level: int | None = None,
) -> bytes:
    """Encode records as v0/v1 log entries the way a broker stores them (test tooling).

    Uncompressed: one message per record. Compressed: one wrapper at the last offset whose value
    holds the inner messages (v0: absolute inner offsets; v1: relative 0, 1, ...). v1 wrapper
    timestamp: the max inner timestamp (CreateTime) or the append time (LogAppendTime, when
    inner timestamps are also the append time, as ``MemoryRecordsBuilder`` writes them).

    Records are :class:`Record` objects or tuples ``(key, value[, timestamp[, headers[,
    offset]]])``; headers must be empty (legacy formats have none). A record ``offset`` of None
    means base_offset + its index.
    """
    if magic not in (0, 1):
        raise ValueError(f"legacy magic must be 0 or 1, got {magic!r}")
    cid = _compression.codec_id(compression)
    if cid == _compression.ZSTD:
        raise UnsupportedCodecError(f"zstd requires magic 2 (found magic {magic})")
    log_append = _timestamp_type_is_log_append(timestamp_type)
    if log_append and magic == 0:
        raise ValueError("magic 0 has no timestamps: timestamp_type must be 'create'")
    if log_append and log_append_time is None:
        log_append_time = time.time_ns() // 1_000_000
    rows = []
    next_off = base_offset
    for i, r in enumerate(records):
        n = len(r)
        key = _as_bytes(r[0], "key")
        value = _as_bytes(r[1], "value")
        ts = r[2] if n > 2 and r[2] is not None else -1
        if n > 3 and r[3]:
            raise ValueError(f"record {i}: magic {magic} messages cannot carry headers")
        off = r[4] if n > 4 and r[4] is not None else next_off
        if off < next_off:
            raise ValueError(
                f"record {i}: offsets must increase (expected >= {next_off}, got {off})"
            )
        next_off = off + 1
        if log_append:
            ts = log_append_time
        rows.append((off, key, value, ts if magic == 1 else -1))
    ts_bit = TIMESTAMP_TYPE_MASK if log_append else 0
    if cid == 0:
        return b"".join(
            encode_legacy_message(o, k, v, magic=magic, timestamp=t, attributes=ts_bit)
            for (o, k, v, t) in rows
        )
    if not rows:
        return b""
    first = rows[0][0]
    inner = b"".join(
        encode_legacy_message(
            o - first if magic == 1 else o, k, v, magic=magic, timestamp=t, attributes=ts_bit
        )
        for (o, k, v, t) in rows
    )
    payload = _compression.compress(cid, inner, magic=magic, level=compression_level)
    if magic == 1:
        wrapper_ts = log_append_time if log_append else max(t for (_o, _k, _v, t) in rows)
    else:
        wrapper_ts = -1
    return encode_legacy_message(
        rows[-1][0], None, payload, magic=magic, timestamp=wrapper_ts, attributes=cid | ts_bit
    )


def _timestamp_type_is_log_append(timestamp_type: str) -> bool:
    t = timestamp_type.lower().replace("_", "").replace("-", "")
    if t in ("create", "createtime"):
        return False
    if t in ("logappend", "logappendtime"):
        return True
    raise ValueError(f"timestamp_type must be 'create' or 'log_append', got {timestamp_type!r}")
