"""Columnar fast path: whole segments of records to and from contiguous numpy/Arrow columns.

The object path (:mod:`kafkalog.records.batch`) yields one :class:`Record` per record; this
module never makes a Python object per record. :func:`decode_columns` reads a ``.log`` buffer
(the caller's, not copied; a path is read once into private memory) like this:

1. ``native.scan.scan_entries`` finds every entry header in one kernel call;
2. batches outside ``[start_offset, end_offset)`` are dropped using the scan's offsets;
3. each kept v2 batch's CRC-32C is checked over a memoryview of the buffer (no copy);
4. compressed batches are decompressed (bounded): lz4/zstd batches of 4 KiB and more each
   into a thread's scratch buffer just before they are decoded (streaming); snappy, lz4 and
   zstd frames of the plain shape into packs shared by consecutive batches
   (:mod:`.packed_areas`: one kernel call finds every payload, then one codec call a batch);
   the rest (gzip, unusual frames, damaged ones) each into its own buffer through the codec
   layer, which raises the precise error;
5. ``native.records_decode.decode_records`` validates every record and writes offsets,
   timestamps, keys and values into preallocated contiguous columns: one call for each run of
   uncompressed batches (read in place from the buffer: one call for a whole uncompressed
   segment), one per chunk, pack or run of small decompressed batches, one per big one, the
   calls continuing each other's columns; ``gather_headers`` then copies headers (only when
   some record has any).

Legacy v0/v1 entries (rare: Kafka 4 never writes them) are decoded by
:mod:`.legacy_columnar` (or, where it declines, the object path) and merged in file order.
:func:`encode_columns` is the reverse for v2: one ``native.records_encode.encode_batches`` call
writes the records of all batches into one buffer; batch headers are filled in one vectorized
step, then CRC-32C (and compression) per batch.

Arrow layout (:meth:`RecordColumns.to_arrow`): ``key``/``value`` are ``binary`` with int32
offsets while a column holds less than 2 GiB (what Spark and most consumers expect), and
``large_binary`` (int64 offsets) beyond; the data buffers are handed to Arrow without a copy.
``headers`` is ``list<struct<key: string, value: binary>>``, an empty list (not null) for a
record without headers.
"""

from __future__ import annotations

import mmap
import os
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import CorruptRecordError, InvalidRecordError, InvalidRequestError, KafkaLogError
from ..file_copy import FileCopy
from ..java_utf8 import JAVA_REPLACE
from ..native import records_decode as _rd
from ..native import records_encode as _re
from ..native._jit import kernel_input
from ..native.scan import (
    STOP_BAD_MAGIC,
    STOP_CORRUPT_SIZE,
    STOP_REASONS,
    STOP_SHORT_V2,
    scan_entries,
)
from .batch import (
    ATTRIBUTES_OFFSET,
    BASE_TIMESTAMP_OFFSET,
    COMPRESSION_CODEC_MASK,
    CONTROL_FLAG_MASK,
    CRC_OFFSET,
    RECORD_BATCH_OVERHEAD,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
    increment_sequence,
)
from .compression import DEFAULT_MAX_DECOMPRESSED, GZIP, LZ4, SNAPPY, ZSTD
from .compression import decompress as _decompress_codec
from .compression import decompress_into as _decompress_into
from .compression import decompressed_bound as _decompressed_bound
from .crc import crc32c, crc_of_ranges
from .packed_areas import PACKED_CODECS, decompress_packed
from .pooled_arrays import pooled_empty

__all__ = [
    "RecordColumns",
    "decode_columns",
    "decode_table",
    "encode_columns",
    "COLUMN_NAMES",
    "arrow_schema",
    "DEFAULT_MAX_DECOMPRESSED_BYTES",
]

#: Column names of :meth:`RecordColumns.to_arrow`, in order.
COLUMN_NAMES = ("key", "value", "offset", "timestamp", "timestamp_type", "headers")


def arrow_schema() -> Any:
    """The ``pyarrow.Schema`` of :meth:`RecordColumns.to_arrow` (below 2 GiB per column; past
    it ``key``/``value`` become ``large_binary``)."""
    return _arrow_types()[1]


def _arrow_types() -> tuple[Any, Any]:
    import pyarrow as pa

    header = pa.struct([("key", pa.string()), ("value", pa.binary())])
    schema = pa.schema([("key", pa.binary()), ("value", pa.binary()), ("offset", pa.int64()),
                        ("timestamp", pa.int64()), ("timestamp_type", pa.int32()),
                        ("headers", pa.list_(header))])
    return header, schema


#: Bound on one batch's decompressed records area (a decompression bomb raises
#: RecordTooLargeError): the object path's default.
DEFAULT_MAX_DECOMPRESSED_BYTES = DEFAULT_MAX_DECOMPRESSED

# The smallest record: length, attributes, timestampDelta, offsetDelta, keyLength, valueLength
# and headerCount, one byte each. Bounds the rows preallocated for a claimed recordsCount.
MIN_RECORD_SIZE = 7
_INT32_LIMIT = 2**31 - 1


def _offsets_dtype(total: int) -> type:
    return np.int32 if total <= _INT32_LIMIT else np.int64


@dataclass(eq=False)
class RecordColumns:
    """The records of one or more batches as contiguous columns (Arrow-style layouts).

    Attributes
    ----------
    offsets, timestamps : int64 arrays (n,)
        Record offsets and timestamps (ms; LogAppendTime batches report the batch
        maxTimestamp, v0 messages -1).
    timestamp_types : int32 array (n,)
        0 CreateTime, 1 LogAppendTime, -1 none (v0).
    key_data, key_offsets, key_valid : uint8 (total bytes), int32|int64 (n + 1), bool (n,)
        Keys: key ``i`` is ``key_data[key_offsets[i]:key_offsets[i + 1]]``, null where
        ``key_valid[i]`` is False (null keys occupy no bytes).
    value_data, value_offsets, value_valid :
        The same for values (a null value is a tombstone).
    header_offsets : int32|int64 (n + 1)
        Record ``i`` has headers ``header_offsets[i]:header_offsets[i + 1]``.
    header_key_data, header_key_offsets : uint8, int32|int64 (h + 1)
        Header keys (UTF-8 bytes; never null).
    header_value_data, header_value_offsets, header_value_valid :
        Header values (null allowed).

    Example
    -------
    >>> from kafkalog import Record, encode_batch, decode_columns
    >>> cols = decode_columns(encode_batch([Record(b"k", b"v", timestamp=5)], base_offset=7))
    >>> len(cols), cols.offsets.tolist(), cols.key(0), cols.value(0)
    (1, [7], b'k', b'v')
    """

    offsets: np.ndarray
    timestamps: np.ndarray
    timestamp_types: np.ndarray
    key_data: np.ndarray
    key_offsets: np.ndarray
    key_valid: np.ndarray
    value_data: np.ndarray
    value_offsets: np.ndarray
    value_valid: np.ndarray
    header_offsets: np.ndarray
    header_key_data: np.ndarray
    header_key_offsets: np.ndarray
    header_value_data: np.ndarray
    header_value_offsets: np.ndarray
    header_value_valid: np.ndarray

    @property
    def record_count(self) -> int:
        """Number of records (rows)."""
        return int(self.offsets.shape[0])

    def __len__(self) -> int:
        return self.record_count

    def key(self, i: int) -> bytes | None:
        """Key of record ``i`` as bytes (None when null): for tests and debugging."""
        if not self.key_valid[i]:
            return None
        return self.key_data[self.key_offsets[i]:self.key_offsets[i + 1]].tobytes()

    def value(self, i: int) -> bytes | None:
        """Value of record ``i`` as bytes (None when null): for tests and debugging."""
        if not self.value_valid[i]:
            return None
        return self.value_data[self.value_offsets[i]:self.value_offsets[i + 1]].tobytes()

    def headers(self, i: int) -> list[tuple[str, bytes | None]]:
        """Headers of record ``i`` as ``(key, value)`` pairs: for tests and debugging."""
        out = []
        for h in range(int(self.header_offsets[i]), int(self.header_offsets[i + 1])):
            hk = self.header_key_data[self.header_key_offsets[h]:self.header_key_offsets[h + 1]]
            hv = None
            if self.header_value_valid[h]:
                hv = self.header_value_data[
                    self.header_value_offsets[h]:self.header_value_offsets[h + 1]].tobytes()
            out.append((hk.tobytes().decode("utf-8", JAVA_REPLACE), hv))
        return out

    @classmethod
    def empty(cls) -> RecordColumns:
        """A RecordColumns with no rows."""
        z8 = np.zeros(0, np.uint8)
        o1 = np.zeros(1, np.int32)
        return cls(
            np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int32),
            z8, o1, np.zeros(0, bool), z8, o1.copy(), np.zeros(0, bool),
            o1.copy(), z8, o1.copy(), z8, o1.copy(), np.zeros(0, bool),
        )

    @classmethod
    def from_records(
        cls,
        records: Sequence[Any],
        timestamp_types: Sequence[int] | int = 0,
    ) -> RecordColumns:
        """Build columns from ``Record``-like objects (a per-record Python loop: for the legacy
        path, tests and small inputs only, never for bulk data).

        Each record needs ``key``, ``value``, ``timestamp`` (None -> -1), ``headers``
        (``(str, bytes|None)`` pairs) and ``offset`` (None -> its index).
        """
        n = len(records)
        if isinstance(timestamp_types, int):
            timestamp_types = [timestamp_types] * n
        keys = [r.key for r in records]
        values = [r.value for r in records]
        hdrs = [tuple(r.headers or ()) for r in records]
        kd, ko, kv = _pack(keys)
        vd, vo, vv = _pack(values)
        flat = [h for hs in hdrs for h in hs]
        hkd, hko, _ = _pack([_header_key_bytes(k) for k, _ in flat])
        hvd, hvo, hvv = _pack([v for _, v in flat])
        counts = np.fromiter((len(hs) for hs in hdrs), np.int64, n)
        hoff = np.zeros(n + 1, np.int64)
        np.cumsum(counts, out=hoff[1:])
        return cls(
            offsets=np.array([i if r.offset is None else r.offset for i, r in enumerate(records)],
                             np.int64),
            timestamps=np.array([-1 if r.timestamp is None else r.timestamp for r in records],
                                np.int64),
            timestamp_types=np.asarray(timestamp_types, np.int32).reshape(n),
            key_data=kd, key_offsets=ko, key_valid=kv,
            value_data=vd, value_offsets=vo, value_valid=vv,
            header_offsets=hoff.astype(_offsets_dtype(int(hoff[-1]))),
            header_key_data=hkd, header_key_offsets=hko,
            header_value_data=hvd, header_value_offsets=hvo, header_value_valid=hvv,
        )

    def to_arrow(self, columns: Sequence[str] | None = None) -> Any:
        """These records as a ``pyarrow.Table`` (columns in :data:`COLUMN_NAMES` order).

        Parameters
        ----------
        columns:
            Names to include, in the order wanted (default: all of :data:`COLUMN_NAMES`).
            Callers building another schema (the Spark source) take the arrays they need.

        The data buffers are wrapped, not copied (the table keeps these arrays alive); only
        validity bitmaps are built (bit-packed from the bool masks, and only when a null exists).

        >>> from kafkalog import Record, encode_batch, decode_table
        >>> decode_table(encode_batch([Record(None, b"v", timestamp=5)])).to_pylist()
        ... # doctest: +NORMALIZE_WHITESPACE
        [{'key': None, 'value': b'v', 'offset': 0, 'timestamp': 5, 'timestamp_type': 0,
          'headers': []}]
        """
        import pyarrow as pa

        names = list(COLUMN_NAMES if columns is None else columns)
        unknown = [c for c in names if c not in COLUMN_NAMES]
        if unknown:
            raise InvalidRequestError(
                f"unknown column(s) {unknown}; expected a subset of {COLUMN_NAMES}")
        n = self.record_count
        arrays = []
        for name in names:
            if name == "key":
                arrays.append(_binary_array(n, self.key_offsets, self.key_data, self.key_valid))
            elif name == "value":
                arrays.append(
                    _binary_array(n, self.value_offsets, self.value_data, self.value_valid))
            elif name == "offset":
                arrays.append(_primitive_array(pa.int64(), self.offsets, np.int64))
            elif name == "timestamp":
                arrays.append(_primitive_array(pa.int64(), self.timestamps, np.int64))
            elif name == "timestamp_type":
                arrays.append(_primitive_array(pa.int32(), self.timestamp_types, np.int32))
            else:
                arrays.append(self._headers_array())
        return pa.Table.from_arrays(arrays, names=names)

    def _headers_array(self) -> Any:
        import pyarrow as pa

        n = self.record_count
        h = int(self.header_offsets[-1]) if self.header_offsets.shape[0] else 0
        hkeys = _binary_array(h, self.header_key_offsets, self.header_key_data, None, text=True)
        try:
            hkeys.validate(full=True)  # Arrow strings must be UTF-8; Kafka writes Java Strings
        except pa.ArrowInvalid:
            # Java's String decoding replaces malformed input with U+FFFD: do the same.
            hkeys = pa.array(
                [b.decode("utf-8", JAVA_REPLACE) for b in
                 _binary_array(h, self.header_key_offsets, self.header_key_data, None)
                 .to_pylist()], pa.string())
        hvals = _binary_array(h, self.header_value_offsets, self.header_value_data,
                              self.header_value_valid)
        struct = pa.StructArray.from_arrays([hkeys, hvals], fields=list(_arrow_types()[0]))
        offs = self.header_offsets
        if offs.dtype == np.int64 and h <= _INT32_LIMIT:
            offs = offs.astype(np.int32)
        list_type = (pa.list_ if offs.dtype == np.int32 else pa.large_list)(struct.type)
        return pa.Array.from_buffers(list_type, n, [None, pa.py_buffer(_contig(offs))],
                                     children=[struct])


def _contig(a: np.ndarray) -> np.ndarray:
    return a if a.flags.c_contiguous else np.ascontiguousarray(a)


def _validity(valid: np.ndarray | None, n: int) -> tuple[Any, int]:
    import pyarrow as pa

    if valid is None:
        return None, 0
    nulls = int(n - np.count_nonzero(valid[:n]))
    if nulls == 0:
        return None, 0
    return pa.py_buffer(np.packbits(valid[:n], bitorder="little")), nulls


def _binary_array(n: int, offsets: np.ndarray, data: np.ndarray, valid: np.ndarray | None,
                  text: bool = False) -> Any:
    import pyarrow as pa

    if offsets.dtype == np.int64 and int(offsets[-1]) <= _INT32_LIMIT:
        offsets = offsets.astype(np.int32)
    if offsets.dtype == np.int32:
        typ = pa.string() if text else pa.binary()
    else:
        typ = pa.large_string() if text else pa.large_binary()
    vbuf, nulls = _validity(valid, n)
    return pa.Array.from_buffers(
        typ, n, [vbuf, pa.py_buffer(_contig(offsets)), pa.py_buffer(_contig(data))],
        null_count=nulls)


def _primitive_array(typ: Any, values: np.ndarray, dtype: type) -> Any:
    import pyarrow as pa

    values = _contig(np.asarray(values, dtype))
    return pa.Array.from_buffers(typ, values.shape[0], [None, pa.py_buffer(values)])


def _header_key_bytes(k: str | bytes) -> bytes:
    return k.encode("utf-8") if isinstance(k, str) else bytes(k)


def _pack(items: Sequence[bytes | None]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(data, offsets, valid) for a list of bytes-or-None (Python loop: small inputs only)."""
    n = len(items)
    valid = np.fromiter((x is not None for x in items), bool, n)
    lengths = np.fromiter((0 if x is None else len(x) for x in items), np.int64, n)
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    data = np.frombuffer(b"".join(x for x in items if x is not None), np.uint8).copy()
    return data, offsets.astype(_offsets_dtype(int(offsets[-1]))), valid


def concat_columns(parts: Sequence[RecordColumns]) -> RecordColumns:
    """Concatenate RecordColumns in order (offset arrays rebased)."""
    parts = [p for p in parts if len(p)] or [RecordColumns.empty()]
    if len(parts) == 1:
        return parts[0]

    def offs(attr: str) -> np.ndarray:
        pieces = [np.zeros(1, np.int64)]
        base = 0
        for p in parts:
            o = getattr(p, attr).astype(np.int64)
            pieces.append(o[1:] - o[0] + base)
            base += int(o[-1] - o[0])
        out = np.concatenate(pieces)
        return out.astype(_offsets_dtype(int(out[-1])))

    def cat(attr: str) -> np.ndarray:
        return np.concatenate([getattr(p, attr) for p in parts])

    return RecordColumns(
        offsets=cat("offsets"), timestamps=cat("timestamps"),
        timestamp_types=cat("timestamp_types"),
        key_data=cat("key_data"), key_offsets=offs("key_offsets"), key_valid=cat("key_valid"),
        value_data=cat("value_data"), value_offsets=offs("value_offsets"),
        value_valid=cat("value_valid"),
        header_offsets=offs("header_offsets"),
        header_key_data=cat("header_key_data"), header_key_offsets=offs("header_key_offsets"),
        header_value_data=cat("header_value_data"),
        header_value_offsets=offs("header_value_offsets"),
        header_value_valid=cat("header_value_valid"),
    )


# ---------------------------------------------------------------------------------------------
# source handling


class _Source:
    """A read-only ``uint8`` view of the input (for a path: a private copy of the file)."""

    def __init__(self, source: Any) -> None:
        self.path: str | None = None
        if isinstance(source, (str, os.PathLike)):
            # a private copy read with pread, never a mapping: a writer in another process may
            # cut the file while we decode it (see kafkalog.file_copy)
            self.path = os.fspath(source)
            with FileCopy(self.path) as copy:
                copy.ensure(0, copy.size)
                arr = copy.buf[: copy.size]
        elif isinstance(source, np.ndarray):
            if source.dtype != np.uint8 or source.ndim != 1:
                raise TypeError(f"expected a 1-d uint8 array, got {source.dtype} {source.shape}")
            arr = source
        else:
            try:
                arr = np.frombuffer(source, np.uint8)
            except (TypeError, ValueError) as e:
                raise TypeError(
                    f"source must be bytes-like, mmap, numpy uint8 array or a path, "
                    f"not {type(source).__name__}") from e
        # One numba type for every buffer the kernels see: contiguous and read-only (a view;
        # the caller's array keeps its own flags).
        arr = np.ascontiguousarray(arr).view()
        arr.flags.writeable = False
        self.buf = arr

    def error(self, exc_type: type[KafkaLogError], message: str, *, position: int | None = None,
              offset: int | None = None) -> KafkaLogError:
        return exc_type(message, path=self.path, position=position, offset=offset)


def _readonly(a: np.ndarray) -> np.ndarray:
    v = np.ascontiguousarray(a).view()
    v.flags.writeable = False
    return v


# ---------------------------------------------------------------------------------------------
# decode


def decode_columns(
    source: Any,
    *,
    start_offset: int | None = None,
    end_offset: int | None = None,
    start: int = 0,
    end: int | None = None,
    validate: bool = True,
    skip_control: bool = True,
    max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES,
) -> RecordColumns:
    """Decode every record of a ``.log`` buffer into :class:`RecordColumns`.

    Parameters
    ----------
    source:
        bytes-like, ``mmap``, 1-d ``uint8`` numpy array (never copied: uncompressed records are
        read in place), or a path (read once with ``pread`` into private memory, never mapped:
        a writer in another process may cut the file meanwhile).
    start_offset, end_offset:
        Keep records with ``start_offset <= offset < end_offset``; batches entirely outside are
        skipped without being read (their CRC is not checked either).
    start, end:
        Byte range of the buffer to read (entry boundaries; ``end`` defaults to the end).
    validate:
        Check each v2 batch's CRC-32C (and each legacy message's CRC-32). Record structure is
        always validated.
    skip_control:
        Leave out control batches (transaction markers, KRaft control records).
    max_decompressed_bytes:
        Bound on one batch's decompressed records (``RecordTooLargeError`` above it).

    A partial trailing entry is ignored, as Kafka's log reader does; a zero-filled tail, an
    unknown magic byte or a v2 entry shorter than its header raises ``CorruptRecordError``.

    Columns of 1 MiB or more are allocated from Arrow's default memory pool, which keeps freed
    memory for the next decode (see :mod:`kafkalog.records.pooled_arrays`).

    Raises
    ------
    CorruptRecordError
        Bad CRC (stored and computed values in the message), malformed records, unknown codec,
        with the byte position of the batch or record in ``source``.
    RecordTooLargeError
        A batch decompressing past ``max_decompressed_bytes``.

    Example
    -------
    >>> from kafkalog import Record, encode_batch, decode_columns
    >>> data = encode_batch([Record(b"a", b"1"), Record(b"b", None)], base_offset=10)
    >>> cols = decode_columns(data, start_offset=11)
    >>> cols.offsets.tolist(), cols.value_valid.tolist()
    ([11], [False])
    """
    src = _Source(source)
    buf = src.buf
    # inclusive bounds [lo, last] so that "no end" can include offset 2**63 - 1
    lo = -(2**63) if start_offset is None else max(int(start_offset), -(2**63))
    last = 2**63 - 1 if end_offset is None else min(int(end_offset) - 1, 2**63 - 1)
    scan = scan_entries(buf, int(start), end)
    if scan["stop_reason"] in (STOP_CORRUPT_SIZE, STOP_BAD_MAGIC, STOP_SHORT_V2):
        pos = scan["stop_position"]
        detail = STOP_REASONS[scan["stop_reason"]]
        if scan["stop_reason"] == STOP_CORRUPT_SIZE:
            size = int.from_bytes(bytes(buf[pos + 8:pos + 12]), "big", signed=True)
            detail += f" (expected >= 14, found {size})"
        elif scan["stop_reason"] == STOP_BAD_MAGIC:
            detail += f" (expected 0, 1 or 2, found {int(buf[pos + 16])})"
        raise src.error(CorruptRecordError, detail, position=pos)
    magics = scan["magics"]
    attrs = scan["attributes"].astype(np.int64)
    keep = scan["last_offsets"] >= lo
    is_v2 = magics == 2
    # a legacy wrapper's base offset is only known after decompression: never skip it by base
    keep &= ~is_v2 | (scan["base_offsets"] <= last)
    if skip_control:
        keep &= ~(is_v2 & ((attrs & CONTROL_FLAG_MASK) != 0))
    idx = np.flatnonzero(keep)
    if idx.shape[0] == 0 or last < lo:
        return RecordColumns.empty()
    # runs of consecutive v2 / legacy entries, decoded in file order
    kind = is_v2[idx]
    breaks = np.flatnonzero(kind[1:] != kind[:-1]) + 1
    parts = []
    for run in np.split(idx, breaks):
        if is_v2[run[0]]:
            parts.append(_decode_v2(src, scan, run, lo, last, validate, max_decompressed_bytes))
        else:
            parts.append(_decode_legacy(src, scan, run, lo, last, validate,
                                        max_decompressed_bytes))
    return concat_columns(parts)


def decode_table(source: Any, **kwargs: Any) -> Any:
    """Decode a ``.log`` buffer or file to a ``pyarrow.Table`` (see :func:`decode_columns` for
    the arguments and :meth:`RecordColumns.to_arrow` for the columns).

    >>> from kafkalog import Record, encode_batch, decode_table
    >>> decode_table(encode_batch([Record(b"k", b"v", timestamp=1)])).column_names
    ['key', 'value', 'offset', 'timestamp', 'timestamp_type', 'headers']
    """
    columns = kwargs.pop("columns", None)
    return decode_columns(source, **kwargs).to_arrow(columns)


def _check_crcs(src: _Source, scan: dict, run: np.ndarray) -> None:
    # all computed, then compared at once: on segments of small batches (a producer with
    # linger.ms=0 writes one record per batch) the Python loop around a call per batch was
    # most of the decode time. Small batches: one kernel call for all; else one library
    # (hardware CRC) call per batch from a comprehension (see native.crc_ranges)
    positions = scan["positions"][run]
    computed = crc_of_ranges(src.buf, positions + ATTRIBUTES_OFFSET,
                             positions + scan["sizes"][run], castagnoli=True)
    stored = scan["crcs"][run]
    bad = np.flatnonzero(computed != stored)
    if bad.shape[0]:
        j = int(bad[0])
        raise src.error(
            CorruptRecordError,
            f"record batch CRC mismatch (stored {int(stored[j])}, computed {int(computed[j])})",
            position=int(positions[j]), offset=int(scan["base_offsets"][run[j]]))


def _read_be_i64(buf: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Big-endian int64 at each position of ``at`` (vectorized gather, header fields only)."""
    raw = buf[at[:, None] + np.arange(8)]
    return np.ascontiguousarray(raw).view(">i8").reshape(-1).astype(np.int64)


def _decompress(codec: int, data: memoryview, max_size: int) -> bytes:
    return _decompress_codec(codec, data, magic=2, max_size=max_size)


#: each thread's scratch buffer for streamed batches (see ``_V2Run.decode``), and the largest
#: one it keeps between batches
_scratch = threading.local()
_SCRATCH_KEEP_BYTES = 16 << 20
#: bytes of bounds one streamed kernel call decompresses ahead (several batches per call: the
#: per-call cost is spread, and the bytes are still in cache when decoded)
STREAM_CHUNK_BYTES = 2 << 20
#: decompressed records areas below this are packed together and decoded in one kernel call
#: (a producer with linger.ms=0 writes a batch per record: a kernel call, and without packing a
#: group split, per batch cost more than decoding its records)
PACK_MAX_AREA = 64 << 10
#: compressed batches this small on average are decompressed first rather than streamed: the
#: frame-header bounds and per-batch scratch handling cost more than the bytes objects saved
STREAM_MIN_BATCH_BYTES = 4 << 10
#: fewer batches of a codec in a run take the codec layer one by one (the packed path's fixed
#: cost, a kernel call and a few array operations, is worth it from a few batches on)
PACKED_MIN_BATCHES = 4


# -- parallel decode ---------------------------------------------------------------------------
#
# Where a run holds many batches, _decode_v2 splits it into one contiguous part per core and decodes
# the parts in threads: CRC checks, decompression (cramjam, zstandard and lz4 release the GIL) and
# the numba kernels (nogil) then run on both cores. Each part writes into the shared output columns
# from an upper bound of the rows and bytes of the parts before it (the kernels continue from any
# ``state``). The gaps are then closed: the first part's thread moves its bytes up against the
# second part's as soon as it is done (``move_up``; its part is made lighter for it,
# ``FIRST_PART_WEIGHT``), and any later part is moved down after all of them (``move_down``).
# Measured on 2 cores, 1M records of 116 B: 68 ms serial, 38 ms in 2 parts uncompressed; lz4/zstd
# 184/202 ms serial, ~105 ms in 2 parts (before the outputs came from Arrow's pool, see
# ``pooled_arrays``, and before lz4/zstd were decoded streaming). With both, the serial decode has
# caught up much of the gain: medians 49.6 -> 44.7 ms uncompressed, 92 -> 81 ms lz4 (best 47 -> 32
# and 68 -> 64 ms). Next to each other the two parts' kernels ran at about half their speed alone
# (31 ms each for half the records, 34.5 ms serial for all): they contend, for memory bandwidth as
# far as measured. Moving the first part up instead of the second down: paired medians 4-11%
# faster uncompressed, 7-8% with lz4/zstd. Why not ``numba.prange`` over batches: the kernel's
# output cursor runs through all batches (keys and values are appended), so batches cannot be
# decoded independently inside one call, and decompression (most of the time of a compressed
# segment) happens outside the kernels anyway. Errors: when anything fails in the parallel decode,
# the serial decode runs instead and raises the same first error as always. On a machine whose other
# cores are busy the parts cannot run side by side and would only add the gap closing (~20% on one
# core, measured): a decode whose parts got less than PARALLEL_MIN_CORE_SHARE of a core each, while
# they ran, makes the next second's decodes serial (_note_concurrency). Each part's CPU time is
# compared with its own wall time, not with the whole decode's: the allocation and the gap closing
# between and after the parts run on one thread by design, and counted in they made a decode that
# did run its parts side by side look like one that did not (measured: ratios of 1.3-1.4 against
# a threshold of 1.5 for 64 MiB chunks, so that every Log.read_table after the first ran serial).

#: parallel decode only for runs with at least this many records-area bytes and batches (and
#: parallel compression in encode_columns likewise, in raw records-area bytes)
PARALLEL_MIN_BYTES = 4 << 20
PARALLEL_MIN_BATCHES = 8
#: compressed batches this small on average are decoded in one thread (see _decode_v2)
PARALLEL_MIN_COMPRESSED_BATCH = 4 << 10
#: the first part's share of the bytes, against 1 for every other part: its thread also moves
#: its decoded bytes (see _decode_v2_parts)
FIRST_PART_WEIGHT = 0.8
#: codecs encode_columns compresses in threads: their compress calls release the GIL
#: (zstandard, zlib, and cramjam 2.14's snappy ``compress_raw`` and lz4 ``compress_block``:
#: 1,000 batches of 127 KB in two threads took 27 ms against 53 ms in one for snappy, 32 against
#: 61 ms for lz4; see ``encode.<codec>.threads_vs_serial`` in benchmarks/RESULTS.md). Each batch
#: is compressed whole by one thread, so the bytes are those of the serial path.
PARALLEL_COMPRESS_CODECS = frozenset({GZIP, SNAPPY, LZ4, ZSTD})
_pool_lock = threading.Lock()
_pool: Any = None


def decode_workers() -> int:
    """Threads a decode (and ``encode_columns``' compression) may use: the cores this process
    may run on (at most 8).

    Set ``KAFKALOG_DECODE_THREADS=1`` to decode serially."""
    env = os.environ.get("KAFKALOG_DECODE_THREADS")
    if env:
        return max(1, int(env))
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, 8))


#: after a parallel decode whose parts did not run side by side (the other cores busy with
#: other work: then the parts only add the cost of closing the gaps), decode serially for this
#: long before trying again (seconds)
PARALLEL_BACKOFF_SECONDS = 1.0
#: parts that were on a CPU for less than this share of their own wall time did not run side by
#: side. Measured, 2 parts over 1M records, 16 decodes each: pinned to one core 0.51-0.60; on
#: two cores 0.86-0.99 uncompressed, and 0.82-0.95 with lz4 from the lower quartile up (a few
#: lz4 decodes fell to 0.58, when something else held a core: backing off then is right)
PARALLEL_MIN_CORE_SHARE = 0.65
_serial_until = 0.0


def _note_concurrency(cpu: float, wall: float) -> None:
    """Back off to serial decodes when the parts got less than ``PARALLEL_MIN_CORE_SHARE`` of
    a core while they ran: ``cpu``, the CPU seconds of all parts, over ``wall``, the sum of
    each part's own wall seconds (from its start to its end in its thread)."""
    global _serial_until
    if wall > 0 and cpu / wall < PARALLEL_MIN_CORE_SHARE:
        _serial_until = time.monotonic() + PARALLEL_BACKOFF_SECONDS


def _forget_pool() -> None:
    # a forked child (Spark's Python workers) inherits the pool object but not its threads
    global _pool
    _pool = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def _thread_pool(workers: int) -> Any:
    """One shared pool for decode parts (created on first use, grown when asked for more)."""
    global _pool
    with _pool_lock:
        if _pool is None or _pool._max_workers < workers:
            from concurrent.futures import ThreadPoolExecutor

            _pool = ThreadPoolExecutor(max_workers=workers,
                                       thread_name_prefix="kafkalog-decode")
        return _pool


class _V2Run:
    """Header fields of the batches of one v2 run, as arrays (batch ``j`` = ``run[j]``)."""

    def __init__(self, src: _Source, scan: dict, run: np.ndarray) -> None:
        self.src = src
        self.scan = scan
        self.run = run
        self.positions = scan["positions"][run]
        self.attrs = scan["attributes"][run].astype(np.int64)
        self.counts = scan["record_counts"][run].astype(np.int64)
        self.base_offsets = scan["base_offsets"][run]
        self.codecs = self.attrs & COMPRESSION_CODEC_MASK
        self.batch_start = self.positions + RECORD_BATCH_OVERHEAD
        self.batch_end = self.positions + scan["sizes"][run]
        self.area = self.batch_end - self.batch_start  # decompressed sizes once known
        self.decompressed: dict[int, np.ndarray] = {}
        # streaming mode: compressed batches are decompressed one at a time as ``decode``
        # reaches them (``area`` holds their bounds; ``true_area`` their sizes once decoded)
        self.streaming = False
        self.max_decompressed = 0
        self.true_area = self.area.copy()
        # batches decompressed into shared packs (see ``decompress``): batch j's bytes are
        # packs[pack_id[j]][pack_lo[j]:pack_hi[j]]; pack_id -1: its own buffer, if any
        nb = run.shape[0]
        self.pack_id = np.full(nb, -1, np.int64)
        self.pack_lo = np.zeros(nb, np.int64)
        self.pack_hi = np.zeros(nb, np.int64)
        self.packs: dict[int, np.ndarray] = {}

    def error(self, j: int, message: str) -> KafkaLogError:
        return self.src.error(CorruptRecordError, message, position=int(self.positions[j]),
                              offset=int(self.base_offsets[j]))

    def check_header_fields(self) -> None:
        bad = np.flatnonzero(self.codecs > 4)
        if bad.shape[0]:
            j = int(bad[0])
            raise self.error(j, f"unknown compression codec id (expected 0-4, found "
                                f"{int(self.codecs[j])})")
        neg = np.flatnonzero(self.counts < 0)
        if neg.shape[0]:
            j = int(neg[0])
            raise self.error(j, f"invalid record count (expected >= 0, found "
                                f"{int(self.counts[j])})")

    def decompress(self, j0: int, j1: int, max_decompressed: int) -> None:
        """Decompress the compressed batches among ``j0 .. j1 - 1`` (bounded): snappy, lz4 and
        zstd frames of the plain shape straight into packs shared by consecutive batches
        (:mod:`.packed_areas`: one kernel call finds the payloads, then one codec call a
        batch), the rest each into its own bytes through the codec layer. Batches the packed
        path leaves (any it cannot vouch for) take the codec layer, which raises as always;
        the packed path raises nothing, so the first error is still the first bad batch's."""
        mv = memoryview(self.src.buf)
        codecs = self.codecs
        comp = np.flatnonzero(codecs[j0:j1]) + j0
        for codec in PACKED_CODECS:
            sel = comp[codecs[comp] == codec]
            if sel.shape[0] < PACKED_MIN_BATCHES:
                continue
            p = decompress_packed(codec, self.src.buf, self.batch_start[sel],
                                  self.batch_end[sel], sel, max_decompressed,
                                  STREAM_CHUNK_BYTES)
            done = p.pack_id >= 0
            took = sel[done]
            self.pack_id[took] = p.pack_id[done]
            self.pack_lo[took] = p.lo[done]
            self.pack_hi[took] = p.hi[done]
            self.area[took] = p.hi[done] - p.lo[done]
            self.packs.update(p.packs)  # (pack names are batch numbers: parts never collide)
        for j in comp[self.pack_id[comp] < 0].tolist():
            self.decompressed[j] = _readonly(np.frombuffer(
                self._decompress_one(j, mv, max_decompressed), np.uint8))
            self.area[j] = len(self.decompressed[j])

    def _decompress_one(self, j: int, mv: memoryview, max_decompressed: int,
                        out: memoryview | None = None) -> Any:
        """Batch ``j``'s records area decompressed: bytes, or (``out`` given) the number of
        bytes written into ``out`` where the codec can (else bytes)."""
        codec = int(self.codecs[j])
        data = mv[int(self.batch_start[j]):int(self.batch_end[j])]
        try:
            if out is not None:
                got = _decompress_into(codec, data, out, max_size=max_decompressed,
                                       bound=int(self.area[j]) if self.streaming else None)
                if got is not None:
                    return got
            return _decompress(codec, data, max_decompressed)
        except KafkaLogError as e:
            raise type(e)(f"batch at offset {int(self.base_offsets[j])}: {e.message}",
                          path=self.src.path, position=int(self.positions[j]),
                          offset=int(self.base_offsets[j])) from e

    def bound_areas(self, max_decompressed: int) -> bool:
        """Streaming mode (see ``decode``) when every compressed batch's decompressed size is
        bounded by its headers within ``max_decompressed``: the areas become those bounds
        (output capacity) until each batch is decoded. False (nothing changed) otherwise."""
        compressed = np.flatnonzero(self.codecs).tolist()
        if not compressed:
            return False
        mv = memoryview(self.src.buf)
        bounds = []
        for j in compressed:
            b = _decompressed_bound(int(self.codecs[j]),
                                    mv[int(self.batch_start[j]):int(self.batch_end[j])])
            if b is None or b > max_decompressed:
                return False
            bounds.append(b)
        self.area[compressed] = bounds
        self.streaming = True
        self.max_decompressed = max_decompressed
        return True

    def _stream(self, j0: int, j1: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """Decompress compressed batches ``j0, j0 + 1, ...`` (before ``j1``) one after another
        into this thread's scratch buffer, as many as ``STREAM_CHUNK_BYTES`` of bounds hold
        (at least one), each count checked against its true size. Returns the filled scratch
        (valid until this thread streams again), the batches' start and end positions in it,
        and the batch after the last one taken."""
        need = int(self.area[j0])  # bounds
        room = max(STREAM_CHUNK_BYTES, need)
        scratch = getattr(_scratch, "buf", None)
        if scratch is None or scratch.shape[0] < room:
            scratch = _scratch.buf = np.empty(room, np.uint8)
        if scratch.shape[0] > _SCRATCH_KEEP_BYTES:
            _scratch.buf = None  # do not keep a huge buffer per thread
        out = memoryview(scratch)
        mv = memoryview(self.src.buf)
        starts, ends = [], []
        at = 0
        j = j0
        while j < j1 and at + int(self.area[j]) <= room:
            got = self._decompress_one(j, mv, self.max_decompressed, out[at:])
            if not isinstance(got, int):  # the codec declined the buffer: its own bytes
                if j > j0:
                    break  # decoded alone in the next call
                data = np.frombuffer(got, np.uint8)
                self._check_true_size(j, data.shape[0])
                return (_readonly(data), np.zeros(1, np.int64),
                        np.array([data.shape[0]], np.int64), j + 1)
            self._check_true_size(j, got)
            starts.append(at)
            at += got
            ends.append(at)
            j += 1
        return (_readonly(scratch[:at]), np.array(starts, np.int64), np.array(ends, np.int64),
                j)

    def _packed(self, j0: int, j1: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """Decompressed batches ``j0, j0 + 1, ...`` (before ``j1``) for one kernel call: a batch
        whose area is ``PACK_MAX_AREA`` or more alone, from its own bytes (no copy); else
        consecutive small ones copied together, up to ``STREAM_CHUNK_BYTES``. Returns the
        source, the batches' start and end positions in it, and the batch after the last."""
        pid = int(self.pack_id[j0])
        if pid >= 0:  # consecutive batches of one pack: already together
            other = np.flatnonzero(self.pack_id[j0:j1] != pid)
            j = j0 + int(other[0]) if other.shape[0] else j1
            return self.packs[pid], self.pack_lo[j0:j], self.pack_hi[j0:j], j
        first = self.decompressed[j0]
        if first.shape[0] >= PACK_MAX_AREA:
            return (first, np.zeros(1, np.int64), np.array([first.shape[0]], np.int64),
                    j0 + 1)
        parts = []
        at = 0
        j = j0
        while j < j1 and self.pack_id[j] < 0 and self.decompressed[j].shape[0] < PACK_MAX_AREA \
                and at + self.decompressed[j].shape[0] <= STREAM_CHUNK_BYTES:
            parts.append(self.decompressed[j])
            at += parts[-1].shape[0]
            j += 1
        if len(parts) == 1:
            return first, np.zeros(1, np.int64), np.array([first.shape[0]], np.int64), j
        lengths = np.fromiter((p.shape[0] for p in parts), np.int64, len(parts))
        ends = np.cumsum(lengths)
        return _readonly(np.concatenate(parts)), ends - lengths, ends, j

    def _check_true_size(self, j: int, size: int) -> None:
        self.true_area[j] = size
        if int(self.counts[j]) * MIN_RECORD_SIZE > size:
            self.area[j] = size
            self.check_counts_fit(np.array([j]))

    def check_counts_fit(self, among: np.ndarray | None = None) -> None:
        """Each batch's record count fits its records area (``among``: those batches; in
        streaming mode only the uncompressed ones are known before decoding)."""
        if among is None:
            among = np.flatnonzero(self.codecs == 0) if self.streaming \
                else np.arange(self.counts.shape[0])
        over = among[self.counts[among] * MIN_RECORD_SIZE > self.area[among]]
        if over.shape[0]:
            j = int(over[0])
            raise self.error(
                j, f"recordsCount {int(self.counts[j])} cannot fit in a {int(self.area[j])}-byte "
                   f"records area (each record takes at least {MIN_RECORD_SIZE} bytes)")

    def decode(self, j0: int, j1: int, lo: int, last: int, outputs: tuple, state: np.ndarray,
               header_pos: np.ndarray, header_count: np.ndarray) -> list[tuple]:
        """Decode batches ``j0 .. j1 - 1`` into ``outputs`` from ``state``; header parts.

        Calls: each run of consecutive uncompressed batches (read in place from the mapping);
        each chunk of consecutive compressed batches: streaming, decompressed just before (see
        ``_stream``); else from their decompressed bytes (see ``_packed``). ``state`` carries
        the cursors.
        """
        src = self.src
        buf = src.buf
        compressed = self.codecs[j0:j1] != 0
        header_parts: list[tuple] = []
        # streaming: one group per run of consecutive compressed batches, decoded in chunks;
        # else one per compressed batch (each from its own decompressed bytes)
        change = compressed[1:] != compressed[:-1]
        breaks = np.flatnonzero(change) + 1
        for group in np.split(np.arange(j0, j1), breaks):
            g0, g1 = int(group[0]), int(group[-1]) + 1
            if not compressed[g0 - j0]:
                self._decode_call(buf, self.batch_start[g0:g1], self.batch_end[g0:g1], g0, g1,
                                  False, lo, last, outputs, state, header_pos, header_count,
                                  header_parts)
            else:
                # chunks of consecutive compressed batches: decompressed just now (streaming)
                # or earlier (small ones packed together, a big one from its own bytes)
                take = self._stream if self.streaming else self._packed
                c0 = g0
                while c0 < g1:
                    source, starts, ends, c1 = take(c0, g1)
                    self._decode_call(source, starts, ends, c0, c1, True, lo, last, outputs,
                                      state, header_pos, header_count, header_parts)
                    c0 = c1
        return header_parts

    def _decode_call(self, source: np.ndarray, starts: np.ndarray, ends: np.ndarray, g0: int,
                     g1: int, packed: bool, lo: int, last: int, outputs: tuple,
                     state: np.ndarray, header_pos: np.ndarray, header_count: np.ndarray,
                     header_parts: list[tuple]) -> None:
        """One kernel call over batches ``g0 .. g1 - 1`` at ``starts``/``ends`` of ``source``
        (the mapping, or decompressed bytes); their headers gathered from ``source``."""
        k0 = int(state[0])
        headers_before = state[3:].copy()
        k, err, err_batch, err_pos = _rd.decode_records(
            source, starts, ends, self.base_offsets[g0:g1], self.base_ts[g0:g1],
            self.log_append[g0:g1], self.max_ts[g0:g1], self.counts[g0:g1],
            np.int64(lo), np.int64(last), *outputs, state)
        if err != _rd.ERR_OK:
            i = max(int(err_batch), 0)
            j = g0 + i
            msg = _rd.ERROR_MESSAGES.get(int(err), f"record error {int(err)}")
            if packed:
                raise self.error(j, f"{msg} (at byte {int(err_pos) - int(starts[i])} of the "
                                    f"decompressed records of the batch at this position)")
            raise self.src.error(CorruptRecordError,
                                 f"{msg} (batch at position {int(self.positions[j])})",
                                 position=int(err_pos), offset=int(self.base_offsets[j]))
        grown = state[3:] - headers_before
        if grown[0]:
            header_parts.append(_gather_headers(self.src, source, k0, int(k), header_pos,
                                                header_count, grown))


def _decode_v2(src: _Source, scan: dict, run: np.ndarray, lo: int, last: int, validate: bool,
               max_decompressed: int) -> RecordColumns:
    nb = run.shape[0]
    workers = min(decode_workers(), nb // max(PARALLEL_MIN_BATCHES // 2, 1))
    if workers > 1 and time.monotonic() >= _serial_until:
        sizes = scan["sizes"][run]
        compressed = (scan["attributes"][run] & COMPRESSION_CODEC_MASK) != 0
        # small compressed batches: their per-batch Python work (codec calls) holds the GIL,
        # and threads taking turns on it were slower than one (measured: 1-record lz4 batches
        # 0.05 vs 0.07 M records/s, gzip 0.05 vs 0.14)
        tiny = bool(compressed.any()) and int(sizes[compressed].sum()) < \
            int(compressed.sum()) * PARALLEL_MIN_COMPRESSED_BATCH
        if int(sizes.sum()) >= PARALLEL_MIN_BYTES and not tiny:
            try:
                return _decode_v2_parts(src, scan, run, lo, last, validate, max_decompressed,
                                        workers)
            except KafkaLogError:
                pass  # the serial decode below raises the first error, as it always has
    r = _V2Run(src, scan, run)
    if validate:
        _check_crcs(src, scan, run)
    r.check_header_fields()
    # The output capacity needs every batch's decompressed size, or a bound of it. Where the
    # frame headers bound them (lz4, zstd), each compressed batch is decompressed into this
    # thread's scratch buffer just before it is decoded (streaming: the bytes are still in
    # cache, and no fresh memory is faulted in per batch: 2-4x less decompression time than
    # a bytes object per batch, measured); else every batch is decompressed first (bounded)
    # and decoded from its own bytes.
    if not (_streams(r) and r.bound_areas(max_decompressed)):
        r.decompress(0, nb, max_decompressed)
    r.check_counts_fit()
    cap, data_cap, outputs, state, header_pos, header_count = _allocate(r)
    header_parts = r.decode(0, nb, lo, last, outputs, state, header_pos, header_count)
    return _fit_offsets(r, _columns(outputs, int(state[0]), header_parts, header_count))


def _streams(r: _V2Run) -> bool:
    """Whether the run's compressed batches are big enough on average to stream (above)."""
    compressed = r.codecs != 0
    n = int(compressed.sum())
    return n > 0 and int((r.batch_end - r.batch_start)[compressed].sum()) >= \
        n * STREAM_MIN_BATCH_BYTES


def _fit_offsets(r: _V2Run, cols: RecordColumns) -> RecordColumns:
    """Offsets as wide as the decode of decompressed-first gives them (a streamed run
    allocated them for its bounds, which may have crossed the int32 limit)."""
    if r.streaming and cols.key_offsets.dtype != _offsets_dtype(int(r.true_area.sum())):
        cols.key_offsets = cols.key_offsets.astype(np.int32)
        cols.value_offsets = cols.value_offsets.astype(np.int32)
    return cols


def _allocate(r: _V2Run) -> tuple:
    """Output columns for every record of the run (rows and bytes bounded by the areas)."""
    buf = r.src.buf
    r.log_append = ((r.attrs & TIMESTAMP_TYPE_MASK) != 0).astype(np.int8)
    r.base_ts = _read_be_i64(buf, r.positions + BASE_TIMESTAMP_OFFSET)
    r.max_ts = r.scan["max_timestamps"][r.run]
    cap = int(r.counts.sum())
    data_cap = int(r.area.sum())  # key bytes and value bytes are each bounded by the areas
    off_t = _offsets_dtype(data_cap)
    e = pooled_empty  # (Arrow's pool: reused memory is not faulted in and zeroed again)
    outputs = (e(cap, np.int64), e(cap, np.int64), e(cap, np.int32), e(cap + 1, off_t),
               e(data_cap, np.uint8), e(cap, bool), e(cap + 1, off_t), e(data_cap, np.uint8),
               e(cap, bool))
    header_pos = e(cap, np.int64)
    header_count = e(cap, np.int32)
    state = np.zeros(6, np.int64)
    return cap, data_cap, outputs + (header_pos, header_count), state, header_pos, header_count


def _decode_v2_parts(src: _Source, scan: dict, run: np.ndarray, lo: int, last: int,
                     validate: bool, max_decompressed: int, workers: int) -> RecordColumns:
    """:func:`_decode_v2` in ``workers`` contiguous parts decoded in threads (see above)."""
    r = _V2Run(src, scan, run)
    nb = run.shape[0]
    r.check_header_fields()
    streaming = _streams(r) and r.bound_areas(max_decompressed)
    # parts of about equal bytes, each at least one batch; the first one lighter, as its
    # thread also moves its bytes up against the second part's (see decode below)
    ends = np.cumsum(r.batch_end - r.positions)
    weights = np.cumsum([FIRST_PART_WEIGHT] + [1.0] * (workers - 1))
    cuts = np.searchsorted(ends, ends[-1] * weights[:-1] / weights[-1], side="left") + 1
    bounds = np.unique(np.concatenate([[0], np.clip(cuts, 1, nb - 1), [nb]])).tolist()
    parts = list(zip(bounds[:-1], bounds[1:]))
    pool = _thread_pool(len(parts))

    def prepare(part: tuple[int, int]) -> tuple[float, float]:
        t0, w0 = time.thread_time(), time.perf_counter()
        j0, j1 = part
        if validate:
            _check_crcs(src, scan, run[j0:j1])
        if not streaming:
            r.decompress(j0, j1, max_decompressed)  # distinct batches per part: no sharing
        return time.thread_time() - t0, time.perf_counter() - w0

    cpu = wall = 0.0  # (every part's CPU seconds, and its own wall seconds: _note_concurrency)
    for f in [pool.submit(prepare, p) for p in parts]:
        c, w = f.result()
        cpu, wall = cpu + c, wall + w
    r.check_counts_fit()
    cap, data_cap, outputs, _, header_pos, header_count = _allocate(r)
    # where each part starts writing: rows and bytes of the parts before it, bounded above
    row_base = np.concatenate([[0], np.cumsum(r.counts)])[bounds[:-1]]
    byte_base = np.concatenate([[0], np.cumsum(r.area)])[bounds[:-1]]
    states = [np.array([int(row_base[i]), int(byte_base[i]), int(byte_base[i]), 0, 0, 0],
                       np.int64) for i in range(len(parts))]

    # where the first part's key and value bytes start once it is decoded (see decode)
    first_start = [0, 0]

    def decode(i: int) -> tuple[list[tuple], float, float]:
        t0, w0 = time.thread_time(), time.perf_counter()
        j0, j1 = parts[i]
        h = r.decode(j0, j1, lo, last, outputs, states[i], header_pos, header_count)
        if i == 0 and len(parts) > 1:
            # The first part's bytes start at 0 and its size is now known: its own thread
            # moves them up to end where the second part's begin, while the other parts are
            # still decoding, instead of the second part being moved down after all of them
            # (with two parts nothing is left to move then; measured: the move after the
            # parts took ~11 of ~80 ms for 1M uncompressed records).
            edge = int(byte_base[1])
            for slot, buf in ((0, outputs[4]), (1, outputs[7])):
                used = int(states[0][1 + slot])
                _rd.move_up(buf, np.int64(0), np.int64(edge - used), np.int64(used))
                first_start[slot] = edge - used
                _release_range(buf, 0, edge - used)  # (left behind below the moved bytes)
        return h, time.thread_time() - t0, time.perf_counter() - w0

    header_parts = []
    for f in [pool.submit(decode, i) for i in range(len(parts))]:
        h, c, w = f.result()
        header_parts += h
        cpu, wall = cpu + c, wall + w
    _note_concurrency(cpu, wall)
    k = _close_gaps(outputs, states, row_base, byte_base, pool, *first_start)
    # the key and value columns start where the first part's bytes do
    outputs = outputs[:4] + (outputs[4][first_start[0]:],) + outputs[5:7] \
        + (outputs[7][first_start[1]:],) + outputs[8:]
    return _fit_offsets(r, _columns(outputs, k, header_parts, header_count))


def _load_madvise() -> Any:
    if not sys.platform.startswith("linux") or not hasattr(mmap, "MADV_DONTNEED"):
        return None
    try:
        import ctypes

        fn = ctypes.CDLL(None, use_errno=True).madvise
    except (OSError, AttributeError):  # pragma: no cover - no libc madvise
        return None
    fn.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    fn.restype = ctypes.c_int
    return fn


_madvise = _load_madvise()
#: tails smaller than this are left alone (a syscall per decode is not worth a few pages)
_RELEASE_MIN_BYTES = 1 << 20


def _release_range(buf: np.ndarray, lo: int, hi: int) -> None:
    """Return the physical pages wholly inside ``buf[lo:hi]`` to the system (``MADV_DONTNEED``:
    they read as zeros if touched again). For parts of output buffers that no returned slice
    covers; ranges under ``_RELEASE_MIN_BYTES`` are left alone."""
    if _madvise is None:
        return
    start = buf.ctypes.data + lo
    start += -start % mmap.PAGESIZE
    end = buf.ctypes.data + min(hi, buf.nbytes)
    end -= end % mmap.PAGESIZE
    if end - start >= _RELEASE_MIN_BYTES:
        _madvise(start, end - start, mmap.MADV_DONTNEED)  # (a failure only keeps the pages)


def _release_tail(buf: np.ndarray, used: int) -> None:
    """:func:`_release_range` of ``buf`` past its first ``used`` bytes."""
    _release_range(buf, used, buf.nbytes)


def _close_gaps(outputs: tuple, states: list[np.ndarray], row_base: np.ndarray,
                byte_base: np.ndarray, pool: Any, key_start: int = 0, value_start: int = 0
                ) -> int:
    """Move every part after the first down to where the previous one ended; the total rows.

    The first part's key and value bytes start at ``key_start`` and ``value_start`` (it may
    have moved them up itself, see ``_decode_v2_parts``), and every offset it wrote counts from
    there; the other parts' offsets are made to count from there too. Pages no part's bytes
    cover any more are released."""
    (offsets, timestamps, ts_types, key_offsets, key_data, key_valid, value_offsets,
     value_data, value_valid, header_pos, header_count) = outputs
    rows = 0
    kend = vend = 0  # bytes so far, from key_start / value_start
    moves = []
    for i, state in enumerate(states):
        r0, b0 = int(row_base[i]), int(byte_base[i])
        n = int(state[0]) - r0
        nk = int(state[1]) - b0
        nv = int(state[2]) - b0
        if i == 0:
            rows, kend, vend = n, nk, nv
            continue
        if r0 != rows:
            for a in (offsets, timestamps, ts_types, key_valid, value_valid, header_pos,
                      header_count):
                a[rows:rows + n] = a[r0:r0 + n]  # numpy copes with the overlap
        # the part's offsets point at its bytes from b0: make them count from the start. Its
        # first entry is the previous part's last (both parts wrote that slot when no row
        # fell out between them: which one is there is a race), so it is set here
        key_offsets[rows + 1:rows + n + 1] = key_offsets[r0 + 1:r0 + n + 1] - (b0 - kend)
        value_offsets[rows + 1:rows + n + 1] = value_offsets[r0 + 1:r0 + n + 1] - (b0 - vend)
        key_offsets[rows] = kend
        value_offsets[rows] = vend
        if b0 != key_start + kend:
            moves.append((key_data, b0, key_start + kend, nk))
        if b0 != value_start + vend:
            moves.append((value_data, b0, value_start + vend, nv))
        rows += n
        kend += nk
        vend += nv
    # the byte moves (the bulk) on the pool, in order per buffer (each moves down only)
    if moves:
        def run_moves(buf: np.ndarray) -> None:
            for b, src, dst, n in moves:
                if b is buf:
                    _rd.move_down(b, np.int64(src), np.int64(dst), np.int64(n))

        for f in [pool.submit(run_moves, key_data), pool.submit(run_moves, value_data)]:
            f.result()
    if len(states) > 1:
        # the parts moved down left their pages behind, above the data's new end, as did
        # every part whose bytes fell short of its bound: still resident (measured: a
        # read_table of a 1 GiB lz4 segment held 400 MiB of them beyond its output), and
        # nothing refers to them any more
        _release_tail(key_data, key_start + kend)
        _release_tail(value_data, value_start + vend)
    return rows


def _columns(outputs: tuple, k: int, header_parts: list[tuple],
             header_count: np.ndarray) -> RecordColumns:
    """The decoded rows ``0 .. k - 1`` as RecordColumns (headers joined from their parts)."""
    (offsets, timestamps, ts_types, key_offsets, key_data, key_valid, value_offsets,
     value_data, value_valid, _, _) = outputs
    hk_parts = [p[1] for p in header_parts]
    if header_parts:
        # summed in the narrowest type straight away (no int64 array and cast: fresh pages)
        counts = header_count[:k]
        header_offsets = np.empty(k + 1, _offsets_dtype(int(counts.sum(dtype=np.int64))))
        header_offsets[0] = 0
        np.cumsum(counts, dtype=header_offsets.dtype, out=header_offsets[1:])
        hk_data = _concat([p[0] for p in header_parts])
        hk_offsets = _concat_offsets(hk_parts)
        hv_data = _concat([p[2] for p in header_parts])
        hv_offsets = _concat_offsets([p[3] for p in header_parts])
        hv_valid = _concat([p[4] for p in header_parts])
    else:
        # no decode call found a header (every count is 0): no cumulative sum over the rows
        # (with its int32 -> int64 cast it cost ~8 ms per million rows, measured)
        header_offsets = np.zeros(k + 1, np.int32)
        hk_data = hv_data = np.zeros(0, np.uint8)
        hk_offsets = np.zeros(1, np.int32)
        hv_offsets = np.zeros(1, np.int32)
        hv_valid = np.zeros(0, bool)
    key_offsets = key_offsets[:k + 1]
    value_offsets = value_offsets[:k + 1]
    return RecordColumns(
        offsets=offsets[:k], timestamps=timestamps[:k], timestamp_types=ts_types[:k],
        key_data=key_data[:int(key_offsets[-1])], key_offsets=key_offsets,
        key_valid=key_valid[:k],
        value_data=value_data[:int(value_offsets[-1])], value_offsets=value_offsets,
        value_valid=value_valid[:k],
        header_offsets=header_offsets, header_key_data=hk_data, header_key_offsets=hk_offsets,
        header_value_data=hv_data, header_value_offsets=hv_offsets,
        header_value_valid=hv_valid,
    )


def _gather_headers(src: _Source, source: np.ndarray, k0: int, k1: int, header_pos: np.ndarray,
                    header_count: np.ndarray, grown: np.ndarray) -> tuple[np.ndarray, ...]:
    """Headers of rows ``k0..k1`` (one decode call's rows, all read from ``source``)."""
    t_headers, t_hkey, t_hvalue = (int(x) for x in grown)
    hoffs = np.zeros(k1 - k0 + 1, np.int64)
    hk_offsets = np.zeros(t_headers + 1, np.int64)
    hk_data = np.empty(t_hkey, np.uint8)
    hv_offsets = np.zeros(t_headers + 1, np.int64)
    hv_data = np.empty(t_hvalue, np.uint8)
    hv_valid = np.empty(t_headers, bool)
    written = _rd.gather_headers(source, np.int64(k1 - k0), header_pos[k0:k1],
                                 header_count[k0:k1], hoffs, hk_offsets, hk_data, hv_offsets,
                                 hv_data, hv_valid)
    if int(written) != t_headers:  # cannot happen for rows from decode_records
        raise src.error(CorruptRecordError, "record headers changed between decode passes")
    return hk_data, hk_offsets, hv_data, hv_offsets, hv_valid


def _concat(parts: list[np.ndarray]) -> np.ndarray:
    """The pieces end to end, in memory from the pool the decoded columns come from (pages
    a previous decode freed, not fresh ones faulted in)."""
    if len(parts) == 1:
        return parts[0]
    out = pooled_empty(sum(len(p) for p in parts), parts[0].dtype)
    return np.concatenate(parts, out=out)


def _concat_offsets(parts: list[np.ndarray]) -> np.ndarray:
    """Join Arrow-style offset arrays (each starting at 0) of consecutive pieces, in the
    narrowest offsets type. Written into one output array: a shifted copy per piece, their
    concatenation and a cast each made a fresh array whose pages fault in one by one (about
    a quarter of a header-heavy decode, measured)."""
    end = sum(int(o[-1]) for o in parts)
    out = pooled_empty(sum(len(o) - 1 for o in parts) + 1, _offsets_dtype(end))
    out[0] = 0
    pos = 1
    base = 0
    for o in parts:
        n = len(o) - 1
        np.add(o[1:], base, out=out[pos:pos + n], casting="unsafe")
        pos += n
        base += int(o[-1])
    return out


def _decode_legacy(src: _Source, scan: dict, run: np.ndarray, lo: int, last: int,
                   validate: bool, max_decompressed: int) -> RecordColumns:
    """v0/v1 entries: columns straight from their bytes (:mod:`.legacy_columnar`), or, where
    that path declines (anything the object path would refuse), through the object path, which
    raises the precise error."""
    from .batch import iter_batches
    from .legacy_columnar import decode_legacy_entries

    positions = scan["positions"]
    sizes = scan["sizes"]
    cols = decode_legacy_entries(src.buf, positions[run], sizes[run], scan["base_offsets"][run],
                                 scan["crcs"][run], lo=lo, last=last, validate=validate,
                                 max_decompressed=max_decompressed)
    if cols is not None:
        return _legacy_columns(cols)
    records = []
    types = []
    for i in run.tolist():  # per entry, not a contiguous range: skipped entries stay skipped
        pos = int(positions[i])
        for entry in iter_batches(src.buf, start=pos, end=pos + int(sizes[i]), path=src.path,
                                  validate=validate, max_decompressed_bytes=max_decompressed):
            ts_type = _timestamp_type_code(entry)
            for r in entry:
                if lo <= r.offset <= last:
                    records.append(r)
                    types.append(ts_type)
    return RecordColumns.from_records(records, types)


def _legacy_columns(c: dict[str, np.ndarray]) -> RecordColumns:
    """RecordColumns of :func:`decode_legacy_entries` output (legacy records have no headers)."""
    n = c["offsets"].shape[0]
    z8 = np.zeros(0, np.uint8)
    return RecordColumns(
        offsets=c["offsets"], timestamps=c["timestamps"], timestamp_types=c["timestamp_types"],
        key_data=c["key_data"],
        key_offsets=c["key_offsets"].astype(_offsets_dtype(int(c["key_offsets"][-1]))),
        key_valid=c["key_valid"], value_data=c["value_data"],
        value_offsets=c["value_offsets"].astype(_offsets_dtype(int(c["value_offsets"][-1]))),
        value_valid=c["value_valid"], header_offsets=np.zeros(n + 1, np.int32),
        header_key_data=z8, header_key_offsets=np.zeros(1, np.int32), header_value_data=z8,
        header_value_offsets=np.zeros(1, np.int32), header_value_valid=np.zeros(0, bool))


def _timestamp_type_code(entry: Any) -> int:
    """0 CreateTime, 1 LogAppendTime, -1 none, from a batch/legacy entry's ``timestamp_type``."""
    t = entry.timestamp_type
    if isinstance(t, int):
        return int(t)
    name = str(getattr(t, "name", t)).lower().replace("_", "").replace("-", "")
    if "logappend" in name:
        return 1
    if "create" in name:
        return 0
    return -1


# ---------------------------------------------------------------------------------------------
# encode

# The v2 batch header as a packed big-endian numpy record (same layout as batch.HEADER_STRUCT),
# so the headers of every batch are built in one vectorized step.
_HEADER_DTYPE = np.dtype([
    ("base_offset", ">i8"), ("batch_length", ">i4"), ("partition_leader_epoch", ">i4"),
    ("magic", "i1"), ("crc", ">u4"), ("attributes", ">i2"), ("last_offset_delta", ">i4"),
    ("base_timestamp", ">i8"), ("max_timestamp", ">i8"), ("producer_id", ">i8"),
    ("producer_epoch", ">i2"), ("base_sequence", ">i4"), ("records_count", ">i4"),
])
assert _HEADER_DTYPE.itemsize == RECORD_BATCH_OVERHEAD


def encode_columns(
    columns_or_table: Any,
    *,
    base_offset: int = 0,
    records_per_batch: int = 1000,
    compression: str | int = "none",
    timestamp_type: str = "create",
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    partition_leader_epoch: int = -1,
    transactional: bool = False,
    log_append_time: int | None = None,
    compression_level: int | None = None,
    as_numpy: bool = False,
) -> bytes | np.ndarray:
    """Encode records held in columns as consecutive v2 batches of ``records_per_batch``.

    Each batch is byte for byte what :func:`kafkalog.records.builder.encode_batch` writes for
    the same records (offsets ``base_offset + i``): baseTimestamp = the batch's first
    timestamp, maxTimestamp = its largest (or the append time for LogAppendTime), baseSequence
    continuing from ``base_sequence`` across batches (``-1`` stays ``-1``).

    Parameters
    ----------
    columns_or_table:
        A :class:`RecordColumns`, or a ``pyarrow.Table``/``RecordBatch`` with ``key`` and
        ``value`` (binary or string; nulls allowed), optional ``timestamp`` (int64 ms or an
        Arrow timestamp type; missing or null -> -1) and optional ``headers``
        (``list<struct<key: string, value: binary>>``; a null list means no headers).
    base_offset:
        Offset of the first record.
    records_per_batch:
        Records per batch (the last batch may hold fewer).
    compression:
        ``"none"``, ``"gzip"``, ``"snappy"``, ``"lz4"``, ``"zstd"`` (or the id); each batch's
        records area is compressed as one stream.
    timestamp_type:
        ``"create"`` or ``"log_append"`` (maxTimestamp = ``log_append_time``, default now).
    producer_id, producer_epoch, base_sequence, partition_leader_epoch, transactional:
        Batch header fields, as for ``encode_batch``.
    compression_level:
        Kafka's ``compression.<codec>.level`` (None = Kafka's default).
    as_numpy:
        Return a read-only ``uint8`` numpy array over the encoded bytes instead of ``bytes``.
        Saves the final copy into a ``bytes`` object, which costs as much as the encoding
        itself for large uncompressed inputs (a fresh ``bytes`` is not backed by huge pages);
        meant for writers that append the result to a file (``f.write(arr)`` takes it as is).

    Returns
    -------
    bytes or numpy.ndarray
        The batches, ready to append to a ``.log``.

    Example
    -------
    >>> import pyarrow as pa
    >>> t = pa.table({"key": pa.array([b"a", None]), "value": pa.array([b"1", b"2"]),
    ...               "timestamp": pa.array([5, 6], pa.int64())})
    >>> data = encode_columns(t, base_offset=100, records_per_batch=1)
    >>> decode_columns(data).offsets.tolist()
    [100, 101]
    """
    from . import compression as _compression
    from .legacy import _timestamp_type_is_log_append

    if records_per_batch < 1:
        raise InvalidRequestError(f"records_per_batch must be >= 1, got {records_per_batch}")
    cid = _compression.codec_id(compression)
    log_append = _timestamp_type_is_log_append(timestamp_type)
    cols = _as_columns(columns_or_table)
    n = len(cols)
    if n == 0:
        return np.zeros(0, np.uint8) if as_numpy else b""
    _check_shapes(cols)
    if not -(2**63) <= base_offset <= 2**63 - 1 - (n - 1):
        raise ValueError(f"base_offset {base_offset} + {n} records leaves the int64 range")
    firsts = np.arange(0, n, records_per_batch, dtype=np.int64)
    bounds = np.append(firsts, np.int64(n))
    nb = firsts.shape[0]
    # one specialisation of each kernel below (kernel_input): read-only inputs, int64 offsets
    i64, u8, b1 = np.int64, np.uint8, np.bool_
    args = (kernel_input(cols.timestamps, i64), kernel_input(_u8(cols.key_data), u8),
            kernel_input(cols.key_offsets, i64), kernel_input(cols.key_valid, b1),
            kernel_input(_u8(cols.value_data), u8), kernel_input(cols.value_offsets, i64),
            kernel_input(cols.value_valid, b1), kernel_input(cols.header_offsets, i64),
            kernel_input(_u8(cols.header_key_data), u8),
            kernel_input(cols.header_key_offsets, i64),
            kernel_input(_u8(cols.header_value_data), u8),
            kernel_input(cols.header_value_offsets, i64),
            kernel_input(cols.header_value_valid, b1))
    timestamps = args[0]
    n_headers = int(cols.header_value_valid.shape[0])
    if n_headers and int(cols.header_offsets[-1]) != int(cols.header_offsets[0]):
        header_bytes = np.empty(n, np.int64)
        err, rec = _re.header_sizes(args[7], args[9], np.int64(args[8].shape[0]), args[11],
                                    args[12], np.int64(args[10].shape[0]), np.int64(n),
                                    header_bytes)
        if err != _re.ERR_OK:
            raise InvalidRecordError(f"record {int(rec)}: {_re.ERROR_MESSAGES[int(err)]}")
        header_total = int(header_bytes.sum())
    else:
        header_bytes = np.ones(n, np.int64)  # just the header count varint (0)
        header_total = n
    header_bytes = kernel_input(header_bytes, np.int64)
    fixed = header_total + n * _re.MAX_RECORD_OVERHEAD + nb * RECORD_BATCH_OVERHEAD
    # Capacity: the data buffers' sizes bound the key/value bytes unless items share bytes
    # (offsets may overlap); the kernel checks capacity, and on ERR_OUTPUT_FULL we retry once
    # with the exact sum of item lengths.
    cap = fixed + int(args[1].shape[0]) + int(args[4].shape[0])
    area_start = np.empty(nb, np.int64)
    area_end = np.empty(nb, np.int64)
    header_size = RECORD_BATCH_OVERHEAD if cid == 0 else 0
    for attempt in range(2):
        out = np.empty(cap, np.uint8)  # upper bound: the tail past `end` is never touched
        err, rec, end = _re.encode_batches(bounds, np.int64(header_size), *args, header_bytes,
                                           out, area_start, area_end)
        if err != _re.ERR_OUTPUT_FULL or attempt:
            break
        cap = (fixed + _data_bytes(cols.key_offsets, cols.key_valid, n)
               + _data_bytes(cols.value_offsets, cols.value_valid, n))
    if err != _re.ERR_OK:
        raise InvalidRecordError(f"record {int(rec)}: {_re.ERROR_MESSAGES[int(err)]}")
    end = int(end)

    headers = np.zeros(nb, _HEADER_DTYPE)
    headers["base_offset"] = base_offset + firsts
    headers["partition_leader_epoch"] = partition_leader_epoch
    headers["magic"] = 2
    attributes = cid | (TIMESTAMP_TYPE_MASK if log_append else 0)
    attributes |= TRANSACTIONAL_FLAG_MASK if transactional else 0
    headers["attributes"] = attributes
    counts = np.diff(bounds)
    headers["last_offset_delta"] = counts - 1
    headers["base_timestamp"] = timestamps[firsts]
    if log_append:
        headers["max_timestamp"] = (time.time_ns() // 1_000_000 if log_append_time is None
                                    else log_append_time)
    else:
        # Kafka's builder starts maxTimestamp at NO_TIMESTAMP (-1)
        headers["max_timestamp"] = np.maximum(np.maximum.reduceat(timestamps, firsts), -1)
    headers["producer_id"] = producer_id
    headers["producer_epoch"] = producer_epoch
    if base_sequence == -1:
        headers["base_sequence"] = -1
    else:
        headers["base_sequence"] = [increment_sequence(base_sequence, int(f))
                                    for f in firsts.tolist()]  # per batch
    headers["records_count"] = counts

    if cid == 0:
        positions = area_start - RECORD_BATCH_OVERHEAD
        batch_sizes = area_end - positions
        headers["batch_length"] = batch_sizes - 12
        raw = headers.view(np.uint8).reshape(nb, RECORD_BATCH_OVERHEAD)
        out[positions[:, None] + np.arange(RECORD_BATCH_OVERHEAD)] = raw
        mv = memoryview(out)
        crcs = np.fromiter(
            (crc32c(mv[p + ATTRIBUTES_OFFSET:p + s])
             for p, s in zip(positions.tolist(), batch_sizes.tolist())),
            np.uint32, nb)  # per batch: the crc32c package over a view, no copy
        out[positions[:, None] + np.arange(CRC_OFFSET, CRC_OFFSET + 4)] = (
            crcs.astype(">u4").view(np.uint8).reshape(nb, 4))
        if as_numpy:
            result = out[:end]
            result.flags.writeable = False
            return result
        return out[:end].tobytes()

    mv = memoryview(out)
    starts, ends = area_start.tolist(), area_end.tolist()

    def compress_part(b0: int, b1: int) -> tuple[list[bytes], float, float]:
        # batches [b0, b1): header and compressed records area of each, in order
        t0, w0 = time.thread_time(), time.perf_counter()
        pieces = []
        for b in range(b0, b1):  # per batch: compression is the cost here
            area = _compression.compress(cid, mv[starts[b]:ends[b]], magic=2,
                                         level=compression_level)
            header = headers[b:b + 1].copy()
            header["batch_length"] = RECORD_BATCH_OVERHEAD - 12 + len(area)
            header["crc"] = crc32c(area, crc32c(header.tobytes()[ATTRIBUTES_OFFSET:]))
            pieces.append(header.tobytes())
            pieces.append(area)
        return pieces, time.thread_time() - t0, time.perf_counter() - w0

    workers = min(decode_workers(), nb // max(PARALLEL_MIN_BATCHES // 2, 1))
    if workers > 1 and cid in PARALLEL_COMPRESS_CODECS and time.monotonic() >= _serial_until \
            and ends[-1] - starts[0] >= PARALLEL_MIN_BYTES:
        # the batches in contiguous parts of about equal raw bytes, compressed in threads
        # (zstandard and zlib release the GIL while they compress); joined in order
        cum = np.cumsum(area_end - area_start)
        cuts = np.searchsorted(cum, cum[-1] * np.arange(1, workers) / workers) + 1
        bounds_ = np.unique(np.concatenate([[0], np.clip(cuts, 1, nb - 1), [nb]])).tolist()
        pool = _thread_pool(len(bounds_) - 1)
        futures = [pool.submit(compress_part, b0, b1)
                   for b0, b1 in zip(bounds_[1:-1], bounds_[2:])]
        pieces, cpu, wall = compress_part(bounds_[0], bounds_[1])
        for f in futures:
            more, c, w = f.result()
            pieces += more
            cpu, wall = cpu + c, wall + w
        _note_concurrency(cpu, wall)
    else:
        pieces = compress_part(0, nb)[0]
    joined = b"".join(pieces)
    return np.frombuffer(joined, np.uint8) if as_numpy else joined


def _check_shapes(cols: RecordColumns) -> None:
    """Per-record arrays agree on the record count (a ValueError names the first that does not)."""
    n = len(cols)
    expect = {"timestamps": n, "key_valid": n, "value_valid": n, "key_offsets": n + 1,
              "value_offsets": n + 1, "header_offsets": n + 1,
              "header_key_offsets": cols.header_value_valid.shape[0] + 1,
              "header_value_offsets": cols.header_value_valid.shape[0] + 1}
    for name, size in expect.items():
        got = np.asarray(getattr(cols, name)).shape
        if got != (size,):
            raise InvalidRecordError(
                f"RecordColumns.{name} has shape {got} (expected ({size},))")


def _data_bytes(offsets: np.ndarray, valid: np.ndarray, n: int) -> int:
    """Bytes the valid items take (an upper bound the kernel re-checks; bad offsets count 0)."""
    lengths = np.diff(np.asarray(offsets[:n + 1], np.int64))
    return int(np.clip(lengths, 0, None)[np.asarray(valid[:n], bool)].sum())


def _u8(a: np.ndarray) -> np.ndarray:
    """Contiguous bytes of ``a`` as a 1-d uint8 array (a view when already so)."""
    return np.ascontiguousarray(a).reshape(-1).view(np.uint8)


def _as_columns(obj: Any) -> RecordColumns:
    """A RecordColumns view of ``obj`` (RecordColumns, pyarrow Table or RecordBatch)."""
    if isinstance(obj, RecordColumns):
        return obj
    import pyarrow as pa

    if isinstance(obj, pa.RecordBatch):
        obj = pa.Table.from_batches([obj])
    if not isinstance(obj, pa.Table):
        raise TypeError(f"expected RecordColumns or a pyarrow Table/RecordBatch, "
                        f"got {type(obj).__name__}")
    names = obj.column_names
    n = obj.num_rows
    for required in ("key", "value"):
        if required not in names:
            raise InvalidRecordError(f"table has no {required!r} column (columns: {names})")
    kd, ko, kv = _arrow_binary(obj.column("key"), "key")
    vd, vo, vv = _arrow_binary(obj.column("value"), "value")
    if "timestamp" in names:
        timestamps = _arrow_timestamps(obj.column("timestamp"))
    else:
        timestamps = np.full(n, -1, np.int64)
    if "headers" in names:
        hoffs, hkd, hko, hvd, hvo, hvv = _arrow_headers(obj.column("headers"), n)
    else:
        z8 = np.zeros(0, np.uint8)
        hoffs, hkd, hko, hvd, hvo, hvv = (np.zeros(n + 1, np.int64), z8, np.zeros(1, np.int64),
                                          z8, np.zeros(1, np.int64), np.zeros(0, bool))
    return RecordColumns(
        offsets=np.arange(n, dtype=np.int64), timestamps=timestamps,
        timestamp_types=np.zeros(n, np.int32), key_data=kd, key_offsets=ko, key_valid=kv,
        value_data=vd, value_offsets=vo, value_valid=vv, header_offsets=hoffs,
        header_key_data=hkd, header_key_offsets=hko, header_value_data=hvd,
        header_value_offsets=hvo, header_value_valid=hvv)


def _combine(column: Any) -> Any:
    import pyarrow as pa

    if isinstance(column, pa.ChunkedArray):
        # one chunk: no copy; several: Arrow concatenates them once
        return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
    return column


def _valid_mask(arr: Any) -> np.ndarray:
    n = len(arr)
    if arr.null_count == 0:
        return np.ones(n, bool)
    bits = np.frombuffer(arr.buffers()[0], np.uint8)
    return np.unpackbits(bits, bitorder="little", count=arr.offset + n)[arr.offset:].astype(bool)


def _arrow_binary(column: Any, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(data, offsets, valid) numpy views over a binary/string Arrow column (no data copy)."""
    import pyarrow as pa

    arr = _combine(column)
    t = arr.type
    if pa.types.is_binary(t) or pa.types.is_string(t):
        odt = np.int32
    elif pa.types.is_large_binary(t) or pa.types.is_large_string(t):
        odt = np.int64
    elif pa.types.is_null(t):
        n = len(arr)
        return np.zeros(0, np.uint8), np.zeros(n + 1, np.int64), np.zeros(n, bool)
    else:
        raise TypeError(f"column {name!r} must be binary or string, not {t}")
    n = len(arr)
    bufs = arr.buffers()
    offsets = np.frombuffer(bufs[1], odt)[arr.offset:arr.offset + n + 1] if bufs[1] is not None \
        else np.zeros(n + 1, odt)
    data = np.frombuffer(bufs[2], np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    return data, offsets, _valid_mask(arr)


def _arrow_timestamps(column: Any) -> np.ndarray:
    """int64 ms (-1 for null) from an integer (ms) or Arrow timestamp column."""
    import pyarrow as pa

    arr = _combine(column)
    unit = "ms"
    if pa.types.is_timestamp(arr.type):
        unit = arr.type.unit
    elif not pa.types.is_integer(arr.type):
        raise TypeError(f"column 'timestamp' must be an integer (ms) or timestamp type, "
                        f"not {arr.type}")
    vals = np.asarray(arr.cast(pa.int64()).fill_null(-1).to_numpy(zero_copy_only=False),
                      np.int64)
    if unit == "ms":
        return vals
    # finer units floor to ms, like Java's Instant.toEpochMilli
    scaled = vals * 1000 if unit == "s" else np.floor_divide(
        vals, 1000 if unit == "us" else 1_000_000)
    return np.where(_valid_mask(arr), scaled, -1).astype(np.int64)


def _arrow_headers(column: Any, n: int) -> tuple[np.ndarray, ...]:
    """Header arrays from ``list<struct<key: string, value: binary>>`` (null list = none)."""
    import pyarrow as pa

    arr = _combine(column)
    t = arr.type
    if not (pa.types.is_list(t) or pa.types.is_large_list(t)) or not pa.types.is_struct(
            t.value_type) or t.value_type.get_field_index("key") < 0 \
            or t.value_type.get_field_index("value") < 0:
        raise TypeError(f"column 'headers' must be list<struct<key: string, value: binary>>, "
                        f"not {t}")
    odt = np.int32 if pa.types.is_list(t) else np.int64
    offsets = np.frombuffer(arr.buffers()[1], odt)[arr.offset:arr.offset + n + 1].astype(
        np.int64)
    if arr.null_count:
        # a null list holds no headers: give it an empty range
        valid = _valid_mask(arr)
        lengths = np.where(valid, np.diff(offsets), 0)
        new_offsets = np.zeros(n + 1, np.int64)
        np.cumsum(lengths, out=new_offsets[1:])
        # child index of every kept header, vectorized: start of its list + rank in it
        total = int(new_offsets[-1])
        idx = np.repeat(offsets[:-1] - new_offsets[:-1], lengths) + np.arange(total)
        child = arr.values.take(pa.array(idx))
        offsets = new_offsets
    else:
        child = arr.values
        base = int(offsets[0])
        end = int(offsets[-1])
        child = child.slice(base, end - base)
        offsets = offsets - base
    if child.null_count:
        raise InvalidRecordError("headers: a header entry is null (expected struct<key, value>)")
    keys = child.field("key")
    values = child.field("value")
    if keys.null_count:
        raise InvalidRecordError(
            "headers: a header key is null (Kafka header keys are never null)")
    hkd, hko, _ = _arrow_binary(keys, "headers.key")
    hvd, hvo, hvv = _arrow_binary(values, "headers.value")
    return offsets, hkd, hko, hvd, hvo, hvv
