"""Columnar encode of v2 records: every record of many batches written by one kernel call.

Inputs are the columns of ``kafkalog.records.columnar.RecordColumns`` (Arrow-style: data buffer,
n + 1 offsets, validity mask) and ``batch_bounds``: batch ``b`` holds records
``batch_bounds[b] .. batch_bounds[b + 1] - 1``. Each record is written exactly as Kafka's
``DefaultRecord.writeTo`` does (spec §1.3)::

    length varint | attributes 0 | timestampDelta varlong | offsetDelta varint
    | key (varint length, -1 null) | value (varint length, -1 null)
    | headersCount varint | headers (key: varint length + UTF-8 bytes; value as above)

with timestampDelta = timestamp - the batch's first timestamp (``MemoryRecordsBuilder``
baseTimestamp) and offsetDelta = index in the batch.

:func:`header_sizes` measures each record's headers (skipped when no record has any); then one
kernel call, :func:`encode_batches`, writes every batch: it reserves ``header_size`` bytes
for the batch header (61 when the caller writes headers in place, 0 when it compresses the
records areas afterwards), then the batch's records, and reports where each records area
starts and ends. The caller sizes the output from an upper bound (``MAX_RECORD_OVERHEAD`` per
record, ``MAX_HEADER_OVERHEAD`` per header, plus the data bytes); the unused tail is never
touched, and the caller copies the exact prefix into the ``bytes`` it returns anyway. (A
separate pass sizing every record first cost as much as the writing, measured.)

Every read of the input columns is bounds-checked against the buffers' sizes and every record
is checked against the output's capacity; problems are returned as error codes.
"""

from __future__ import annotations

import numpy as np

from ._jit import inline, kernel
from .records_decode import add_wrap
from .varint import encode_varint, encode_varlong, size_of_varint, size_of_varlong

ERR_OK = 0
ERR_BAD_OFFSETS = 1  # offsets not within their data buffer, decreasing, or a length > int32
ERR_OUTPUT_FULL = 2  # the output is smaller than the records need (caller bug)

ERROR_MESSAGES = {
    ERR_BAD_OFFSETS: "column offsets outside their data buffer, decreasing, or a length above "
    "2147483647",
    ERR_OUTPUT_FULL: "output buffer smaller than the encoded size",
}

#: Most bytes a record takes beyond its key, value and header bytes: length varint (5),
#: attributes (1), timestampDelta (10), offsetDelta (5), key and value lengths (5 + 5),
#: header count (5); each header adds at most 10 (two length varints).
MAX_RECORD_OVERHEAD = 36
MAX_HEADER_OVERHEAD = 10

INT32_MAX = 2**31 - 1
INT64_MIN = -(2**63)


@inline
def neg_wrap(a):
    """``-a`` wrapped like Java's ``long`` (``-Long.MIN_VALUE == Long.MIN_VALUE``)."""
    a = np.int64(a)
    if a == np.int64(INT64_MIN):
        return a
    return -a


@inline
def _span(offsets, valid, r, data_size):
    """(start, length) of item ``r``; length -1 when null; length -2 when the offsets are bad."""
    if not valid[r]:
        return np.int64(0), np.int64(-1)
    a = np.int64(offsets[r])
    b = np.int64(offsets[r + 1])
    if a < 0 or b < a or b > data_size or b - a > INT32_MAX:
        return np.int64(0), np.int64(-2)
    return a, b - a


@inline
def _shapes_ok(batch_bounds, timestamps, key_offsets, key_valid, value_offsets, value_valid,
               header_offsets):
    """Every array is long enough for the records ``batch_bounds`` names, bounds ascending."""
    nb = batch_bounds.shape[0]
    if nb == 0:
        return True
    if batch_bounds[0] < 0:
        return False
    for b in range(nb - 1):
        if batch_bounds[b + 1] < batch_bounds[b]:
            return False
    n = np.int64(batch_bounds[nb - 1])
    return (timestamps.shape[0] >= n and key_valid.shape[0] >= n and value_valid.shape[0] >= n
            and key_offsets.shape[0] >= n + 1 and value_offsets.shape[0] >= n + 1
            and header_offsets.shape[0] >= n + 1)


@inline
def _copy(dst, src):
    # range-indexed views: see records_decode._copy for why not slice assignment
    for j in range(dst.shape[0]):
        dst[j] = src[j]


@kernel
def header_sizes(header_offsets, header_key_offsets, header_key_size, header_value_offsets,
                 header_value_valid, header_value_size, n, sizes):
    """``sizes[r]`` = bytes of record ``r``'s header count varint and headers.

    Validates every header offset (within ``header_*_size`` bytes and the header arrays,
    ascending, lengths <= int32). Returns ``(err, record)``: ``(ERR_OK, -1)`` or the first bad
    record.

    Why a separate pass: folded into :func:`encode_batches`' loop, the header-size loop made
    the whole loop ~4x slower even for records without headers (measured; LLVM no longer
    optimises the per-record loop well), and it is skipped entirely when no record has headers.
    """
    n_headers = header_value_valid.shape[0]
    if (header_offsets.shape[0] < n + 1 or header_key_offsets.shape[0] < n_headers + 1
            or header_value_offsets.shape[0] < n_headers + 1 or sizes.shape[0] < n):
        return ERR_BAD_OFFSETS, np.int64(0)
    for r in range(n):
        h0 = np.int64(header_offsets[r])
        h1 = np.int64(header_offsets[r + 1])
        if h0 < 0 or h1 < h0 or h1 > n_headers or h1 - h0 > INT32_MAX:
            return ERR_BAD_OFFSETS, np.int64(r)
        size = size_of_varint(h1 - h0)
        for h in range(h0, h1):
            ka = np.int64(header_key_offsets[h])
            kb = np.int64(header_key_offsets[h + 1])
            if ka < 0 or kb < ka or kb > header_key_size or kb - ka > INT32_MAX:
                return ERR_BAD_OFFSETS, np.int64(r)
            size += size_of_varint(kb - ka) + (kb - ka)
            if header_value_valid[h]:
                va = np.int64(header_value_offsets[h])
                vb = np.int64(header_value_offsets[h + 1])
                if va < 0 or vb < va or vb > header_value_size or vb - va > INT32_MAX:
                    return ERR_BAD_OFFSETS, np.int64(r)
                size += size_of_varint(vb - va) + (vb - va)
            else:
                size += 1
        if size > INT32_MAX:
            return ERR_BAD_OFFSETS, np.int64(r)
        sizes[r] = size
    return ERR_OK, np.int64(-1)


@kernel
def encode_batches(
    batch_bounds, header_size, timestamps, key_data, key_offsets, key_valid, value_data,
    value_offsets, value_valid, header_offsets, header_key_data, header_key_offsets,
    header_value_data, header_value_offsets, header_value_valid, header_bytes, out,
    area_start, area_end,
):
    """Write the batches named by ``batch_bounds`` one after the other from ``out[0]``.

    Batch ``b`` = ``header_size`` reserved bytes (left unwritten) + its records; its records
    area is ``out[area_start[b]:area_end[b]]``. ``header_offsets`` has n + 1 entries (all zero
    when there are no headers) and ``header_bytes`` the sizes from :func:`header_sizes` (1 per
    record without headers). A record whose headers do not take ``header_bytes[r]`` bytes, or
    whose offsets point outside their buffers, stops the kernel with ``ERR_BAD_OFFSETS``.
    Returns ``(err, record, end)``: ``(ERR_OK, -1, bytes written)`` or the error and the record
    it concerns.
    """
    n_headers = header_value_valid.shape[0]
    hk_size = header_key_data.shape[0]
    hv_size = header_value_data.shape[0]
    nb = batch_bounds.shape[0] - 1
    if (header_key_offsets.shape[0] < n_headers + 1
            or header_value_offsets.shape[0] < n_headers + 1
            or not _shapes_ok(batch_bounds, timestamps, key_offsets, key_valid, value_offsets,
                              value_valid, header_offsets)
            or header_bytes.shape[0] < batch_bounds[nb]
            or area_start.shape[0] < nb or area_end.shape[0] < nb or header_size < 0):
        return ERR_BAD_OFFSETS, np.int64(0), np.int64(0)
    cap = out.shape[0]
    p = np.int64(0)
    for b in range(nb):
        first = np.int64(batch_bounds[b])
        last = np.int64(batch_bounds[b + 1])
        if p + header_size > cap:
            return ERR_OUTPUT_FULL, first, p
        p += header_size
        area_start[b] = p
        base_ts = np.int64(timestamps[first]) if last > first else np.int64(0)
        for r in range(first, last):
            ka, klen = _span(key_offsets, key_valid, r, key_data.shape[0])
            va, vlen = _span(value_offsets, value_valid, r, value_data.shape[0])
            hbytes = np.int64(header_bytes[r])
            if klen < -1 or vlen < -1 or hbytes < 1 or hbytes > INT32_MAX:
                return ERR_BAD_OFFSETS, np.int64(r), p
            ts_delta = add_wrap(timestamps[r], neg_wrap(base_ts))
            body = 1 + size_of_varlong(ts_delta) + size_of_varint(r - first) + hbytes
            body += 1 if klen < 0 else size_of_varint(klen) + klen
            body += 1 if vlen < 0 else size_of_varint(vlen) + vlen
            if body > INT32_MAX:
                return ERR_BAD_OFFSETS, np.int64(r), p
            if p + size_of_varint(body) + body > cap:
                return ERR_OUTPUT_FULL, np.int64(r), p
            p = encode_varint(out, p, body)
            record_end = p + body
            out[p] = 0  # record attributes: unused
            p = encode_varlong(out, p + 1, ts_delta)
            p = encode_varint(out, p, r - first)
            if klen < 0:
                out[p] = 1  # varint -1: null
                p += 1
            else:
                p = encode_varint(out, p, klen)
                _copy(out[p:p + klen], key_data[ka:ka + klen])
                p += klen
            if vlen < 0:
                out[p] = 1
                p += 1
            else:
                p = encode_varint(out, p, vlen)
                _copy(out[p:p + vlen], value_data[va:va + vlen])
                p += vlen
            h0 = np.int64(header_offsets[r])
            h1 = np.int64(header_offsets[r + 1])
            if h0 < 0 or h1 < h0 or h1 > n_headers:
                return ERR_BAD_OFFSETS, np.int64(r), p
            p = encode_varint(out, p, h1 - h0)
            for h in range(h0, h1):
                a = np.int64(header_key_offsets[h])
                hl = np.int64(header_key_offsets[h + 1]) - a
                # every write stays inside this record's reserved bytes
                if (a < 0 or hl < 0 or a + hl > hk_size
                        or p + size_of_varint(hl) + hl > record_end):
                    return ERR_BAD_OFFSETS, np.int64(r), p
                p = encode_varint(out, p, hl)
                _copy(out[p:p + hl], header_key_data[a:a + hl])
                p += hl
                if header_value_valid[h]:
                    a = np.int64(header_value_offsets[h])
                    hl = np.int64(header_value_offsets[h + 1]) - a
                    if (a < 0 or hl < 0 or a + hl > hv_size
                            or p + size_of_varint(hl) + hl > record_end):
                        return ERR_BAD_OFFSETS, np.int64(r), p
                    p = encode_varint(out, p, hl)
                    _copy(out[p:p + hl], header_value_data[a:a + hl])
                    p += hl
                else:
                    if p >= record_end:
                        return ERR_BAD_OFFSETS, np.int64(r), p
                    out[p] = 1
                    p += 1
            if p != record_end:
                return ERR_BAD_OFFSETS, np.int64(r), p
        area_end[b] = p
    return ERR_OK, np.int64(-1), p
