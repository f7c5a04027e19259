"""Legacy entries (magic 0 and 1) decoded into columns without a Python object per record.

Old segments (written before Kafka 0.11, or by brokers keeping ``message.format.version`` below
0.11) hold one legacy message per entry, or compressed wrappers of inner messages. Decoded
through :class:`kafkalog.records.legacy.LegacyEntry` (a ``Record`` per message, then columns),
they read at 20,000-200,000 records/s, 10-60x slower than aiokafka. Here the kernels of
:mod:`kafkalog.native.legacy_decode` find every field of a run of entries in one call, wrappers
are decompressed with one codec call each, and keys and values are copied once into the columns.

Same records, offsets, timestamps and types as the object path (a hypothesis test compares the
two on logs built by kafka-python and aiokafka, plus the shared vectors). Anything the object
path would refuse (a bad CRC when validating, a malformed message, a codec or wrapper rule broken)
makes :func:`decode_legacy_entries` return None: the caller then decodes the same entries through
the object path, which raises its precise error. So errors are unchanged by construction.
"""

from __future__ import annotations

import numpy as np

from ..errors import KafkaLogError
from ..native import legacy_decode as _ld
from ..native._jit import kernel_input
from .compression import LZ4, decompress, decompress_into, decompressed_bound
from .crc import crc_of_ranges
from .pooled_arrays import pooled_empty

__all__ = ["decode_legacy_entries"]

_CODEC_MASK = 0x07
_LOG_APPEND_TIME_BIT = 0x08
_MIN_INNER_ENTRY = _ld.LOG_OVERHEAD + _ld.RECORD_OVERHEAD_V0  # 26 bytes


def _parse(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, ...] | None:
    n = starts.shape[0]
    magic = np.empty(n, np.uint8)
    attrs = np.empty(n, np.uint8)
    ts = np.empty(n, np.int64)
    kpos, klen, vpos, vlen = (np.empty(n, np.int64) for _ in range(4))
    bad, _code = _ld.parse_messages(buf, kernel_input(starts, np.int64),
                                    kernel_input(ends, np.int64), magic, attrs, ts, kpos, klen,
                                    vpos, vlen)
    if bad >= 0:
        return None
    return magic, attrs, ts, kpos, klen, vpos, vlen


def _decompress_wrappers(buf: np.ndarray, w: np.ndarray, codec: np.ndarray,
                         magic: np.ndarray, vpos: np.ndarray, vlen: np.ndarray,
                         max_decompressed: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The wrappers ``w``'s values decompressed back to back into one buffer, and each one's
    length. LZ4 wrappers of magic 1 (whose frames, unlike magic 0's, carry Kafka's v2 header
    checksum) go straight into one buffer sized from their block headers; any other wrapper
    makes every one a bytes object, joined (a copy of all of them)."""
    mv = memoryview(buf)
    spans = [(int(vpos[j]), int(vpos[j] + vlen[j])) for j in w.tolist()]
    if (codec[w] == LZ4).all() and (magic[w] == 1).all():
        bounds = [decompressed_bound(LZ4, mv[a:b]) for a, b in spans]
        if None not in bounds:
            # (+ the largest block: the frame walk wants a whole block's room before each)
            out = np.empty(sum(bounds) + (4 << 20), np.uint8)  # type: ignore[arg-type]
            view = memoryview(out)
            lengths = []
            at = 0
            for a, b in spans:
                got = decompress_into(LZ4, mv[a:b], view[at:], max_size=max_decompressed)
                if got is None:
                    return None
                lengths.append(got)
                at += got
            return kernel_input(out[:at], np.uint8), np.array(lengths, np.int64)
    parts = [decompress(int(codec[j]), mv[a:b], magic=int(magic[j]), max_size=max_decompressed)
             for j, (a, b) in zip(w.tolist(), spans)]
    lengths = np.fromiter((len(x) for x in parts), np.int64, len(parts))
    return kernel_input(np.frombuffer(b"".join(parts), np.uint8), np.uint8), lengths


def decode_legacy_entries(buf: np.ndarray, positions: np.ndarray, sizes: np.ndarray,
                          entry_offsets: np.ndarray, stored_crcs: np.ndarray, *,
                          lo: int, last: int, validate: bool,
                          max_decompressed: int) -> dict[str, np.ndarray] | None:
    """Columns of the records of the legacy entries at ``positions`` (whole entries of ``buf``,
    sizes including the 12-byte prefix), offsets in ``[lo, last]``; None where the object path
    must decode them (it raises what is wrong).

    ``entry_offsets`` and ``stored_crcs`` are each entry's offset and stored CRC as
    :func:`kafkalog.native.scan.scan_entries` reads them (``base_offsets``, ``crcs``): the
    caller has scanned the entries already, so they are not read twice.

    Returns ``offsets``, ``timestamps``, ``timestamp_types`` (int32: -1 none (v0), 0
    CreateTime, 1 LogAppendTime), ``key_data``/``key_offsets``/``key_valid`` and the same for
    values (offsets int64, n + 1).

    >>> from kafkalog.records.legacy import encode_legacy
    >>> from kafkalog import Record
    >>> from kafkalog.native.scan import scan_entries
    >>> data = np.frombuffer(encode_legacy([Record(b"k", b"v", 5)], magic=1), np.uint8)
    >>> sc = scan_entries(data)
    >>> cols = decode_legacy_entries(data, sc["positions"], sc["sizes"], sc["base_offsets"],
    ...                              sc["crcs"], lo=0, last=2**63 - 1, validate=True,
    ...                              max_decompressed=1 << 20)
    >>> cols["offsets"].tolist(), cols["timestamps"].tolist(), cols["value_data"].tobytes()
    ([0], [5], b'v')
    """
    buf = kernel_input(buf, np.uint8)
    pos = np.asarray(positions, np.int64)
    ends = pos + np.asarray(sizes, np.int64)
    n = pos.shape[0]
    outer = _parse(buf, pos + _ld.LOG_OVERHEAD, ends)
    if outer is None:
        return None
    magic, attrs, ts, kpos, klen, vpos, vlen = outer
    entry_offsets = np.asarray(entry_offsets, np.int64)
    if validate:
        # Kafka's LegacyRecord.isValid: CRC-32 of magic .. end of each entry (one kernel
        # call for small messages: a zlib call per message was half of this path's time)
        stored = np.asarray(stored_crcs, np.int64)
        computed = crc_of_ranges(buf, pos + 16, ends, castagnoli=False)
        if not np.array_equal(computed, stored):
            return None
    codec = attrs & _CODEC_MASK
    is_wrap = codec != 0
    types = np.where(magic == 0, -1, (attrs & _LOG_APPEND_TIME_BIT) != 0).astype(np.int32)

    counts = np.ones(n, np.int64)
    inner = None
    if is_wrap.any():
        w = np.flatnonzero(is_wrap)
        if (codec[w] > 3).any() or (vlen[w] < 0).any():
            return None  # an invalid codec id, a null wrapper value
        try:
            unpacked = _decompress_wrappers(buf, w, codec, magic, vpos, vlen, max_decompressed)
        except KafkaLogError:
            return None
        if unpacked is None:
            return None
        dbuf, lengths = unpacked
        wends = np.cumsum(lengths)
        wstarts = wends - lengths
        cap = int(lengths.sum()) // _MIN_INNER_ENTRY + 1
        istarts, iends, ioffs = (np.empty(cap, np.int64) for _ in range(3))
        wcount = np.zeros(len(w), np.int64)
        total, failed, _code = _ld.walk_inner(dbuf, kernel_input(wstarts, np.int64),
                                              kernel_input(wends, np.int64), istarts, iends,
                                              ioffs, wcount)
        if failed >= 0:
            return None
        istarts, iends, ioffs = istarts[:total], iends[:total], ioffs[:total]
        parsed = _parse(dbuf, istarts, iends)
        if parsed is None:
            return None
        imagic, iattrs, its, ikpos, iklen, ivpos, ivlen = parsed
        if (iattrs & _CODEC_MASK).any():
            return None  # a compressed inner message
        wmagic = magic[w]
        wrapper_offset = entry_offsets[w]
        last_inner = ioffs[np.cumsum(wcount) - 1]
        if ((wmagic == 1) & (wrapper_offset != 0) & (wrapper_offset < last_inner)).any():
            return None  # Kafka: wrapper offset below the last inner offset and not zero
        # v1: relative inner offsets (absolute = wrapper - last inner + inner) unless the
        # wrapper offset is 0 (some librdkafka producers: already absolute); v0: absolute.
        # int64 arithmetic wraps as Java's long does.
        base = np.where((wmagic == 1) & (wrapper_offset != 0), wrapper_offset - last_inner, 0)
        with np.errstate(over="ignore"):
            iabs = np.repeat(base, wcount) + ioffs
        log_append = np.repeat((wmagic == 1) & ((attrs[w] & _LOG_APPEND_TIME_BIT) != 0), wcount)
        its = np.where((imagic == 1) & log_append, np.repeat(ts[w], wcount), its)
        counts[w] = wcount
        inner = (iabs, its, np.repeat(types[w], wcount), ikpos, iklen, ivpos, ivlen, dbuf)

    plain = np.repeat(~is_wrap, counts)
    total_rows = int(counts.sum())

    all_plain, all_wrapped = inner is None, not (~is_wrap).any()

    def rows(outer_col: np.ndarray, inner_col: np.ndarray | None, dtype: type) -> np.ndarray:
        # (a segment is usually all plain messages or all wrappers: no masked copies then)
        if all_plain:
            return outer_col.astype(dtype, copy=False)
        if all_wrapped and inner_col is not None:
            return inner_col.astype(dtype, copy=False)
        out = np.empty(total_rows, dtype)
        out[plain] = outer_col[~is_wrap]
        if inner_col is not None:
            out[~plain] = inner_col
        return out

    i = inner if inner is not None else (None,) * 8
    offsets = rows(entry_offsets, i[0], np.int64)
    timestamps = rows(ts, i[1], np.int64)
    ts_types = rows(types, i[2], np.int32)
    kp, kl = rows(kpos, i[3], np.int64), rows(klen, i[4], np.int64)
    vp, vl = rows(vpos, i[5], np.int64), rows(vlen, i[6], np.int64)
    source = ~plain
    keep = (offsets >= lo) & (offsets <= last)
    if not keep.all():
        offsets, timestamps, ts_types = offsets[keep], timestamps[keep], ts_types[keep]
        kp, kl, vp, vl, source = kp[keep], kl[keep], vp[keep], vl[keep], source[keep]
    dbuf = i[7] if inner is not None else buf
    out: dict[str, np.ndarray] = {"offsets": offsets, "timestamps": timestamps,
                                  "timestamp_types": ts_types}
    for name, p, ln in (("key", kp, kl), ("value", vp, vl)):
        # (Arrow's pool, as the v2 decode's columns: reused memory is not faulted in again)
        data = pooled_empty(int(ln[ln > 0].sum()), np.uint8)
        offs = np.empty(ln.shape[0] + 1, np.int64)
        _ld.gather(buf, dbuf, kernel_input(source, np.bool_), kernel_input(p, np.int64),
                   kernel_input(ln, np.int64), offs, data)
        out[f"{name}_data"], out[f"{name}_offsets"], out[f"{name}_valid"] = data, offs, ln >= 0
    return out
