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

Two kernels, so the output is allocated once at its exact size: :func:`encoded_sizes` (size of
every record) then :func:`encode_records` (write them). Both bounds-check every read of the
input columns against the buffers' sizes and return an error code instead of reading out of
bounds; the writer also checks each record against the output's capacity.
"""

from __future__ import annotations

import numpy as np

from ._jit import inline, kernel
from .records_decode import add_wrap
from .varint import encode_varint, encode_varlong, size_of_varint, size_of_varlong

ERR_OK = 0
ERR_BAD_OFFSETS = 1  # offsets not within their data buffer, decreasing, or a length > int32
ERR_OUTPUT_FULL = 2  # the output is smaller than the sizes say (caller bug)

ERROR_MESSAGES = {
    ERR_BAD_OFFSETS: "column offsets outside their data buffer, decreasing, or a length above "
    "2147483647",
    ERR_OUTPUT_FULL: "output buffer smaller than the encoded size",
}

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
def _body_size(ts_delta, offset_delta, klen, vlen, r, header_offsets, header_key_offsets,
               header_value_offsets, header_value_valid, hk_size, hv_size, n_headers):
    """Size of a record after its length varint; -1 when an input offset is bad."""
    size = 1 + size_of_varlong(ts_delta) + size_of_varint(offset_delta)
    size += 1 if klen < 0 else size_of_varint(klen) + klen
    size += 1 if vlen < 0 else size_of_varint(vlen) + vlen
    h0 = np.int64(header_offsets[r])
    h1 = np.int64(header_offsets[r + 1])
    if h0 < 0 or h1 < h0 or h1 > n_headers or h1 - h0 > INT32_MAX:
        return np.int64(-1)
    size += size_of_varint(h1 - h0)
    for h in range(h0, h1):
        ka = np.int64(header_key_offsets[h])
        kb = np.int64(header_key_offsets[h + 1])
        if ka < 0 or kb < ka or kb > hk_size or kb - ka > INT32_MAX:
            return np.int64(-1)
        size += size_of_varint(kb - ka) + (kb - ka)
        if header_value_valid[h]:
            va = np.int64(header_value_offsets[h])
            vb = np.int64(header_value_offsets[h + 1])
            if va < 0 or vb < va or vb > hv_size or vb - va > INT32_MAX:
                return np.int64(-1)
            size += size_of_varint(vb - va) + (vb - va)
        else:
            size += 1
    return size


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
def encoded_sizes(
    batch_bounds, timestamps, key_data, key_offsets, key_valid, value_data, value_offsets,
    value_valid, header_offsets, header_key_data, header_key_offsets, header_value_data,
    header_value_offsets, header_value_valid, sizes,
):
    """``sizes[r]`` = encoded size of record ``r`` including its length varint.

    ``header_offsets`` has n + 1 entries (all zero when there are no headers); the header
    arrays are indexed through it. Returns ``(err, record)``: ``(ERR_OK, -1)`` or the first
    record whose column offsets are invalid.
    """
    n_headers = header_value_valid.shape[0]
    if (header_key_offsets.shape[0] < n_headers + 1
            or header_value_offsets.shape[0] < n_headers + 1
            or not _shapes_ok(batch_bounds, timestamps, key_offsets, key_valid, value_offsets,
                              value_valid, header_offsets)
            or (batch_bounds.shape[0] > 0 and sizes.shape[0] < batch_bounds[-1])):
        return ERR_BAD_OFFSETS, np.int64(0)
    for b in range(batch_bounds.shape[0] - 1):
        first = np.int64(batch_bounds[b])
        last = np.int64(batch_bounds[b + 1])
        base_ts = np.int64(timestamps[first]) if last > first else np.int64(0)
        for r in range(first, last):
            _, klen = _span(key_offsets, key_valid, r, key_data.shape[0])
            _, vlen = _span(value_offsets, value_valid, r, value_data.shape[0])
            if klen < -1 or vlen < -1:
                return ERR_BAD_OFFSETS, np.int64(r)
            ts_delta = add_wrap(timestamps[r], neg_wrap(base_ts))
            body = _body_size(ts_delta, r - first, klen, vlen, r, header_offsets,
                              header_key_offsets, header_value_offsets, header_value_valid,
                              header_key_data.shape[0], header_value_data.shape[0], n_headers)
            if body < 0 or body > INT32_MAX:
                return ERR_BAD_OFFSETS, np.int64(r)
            sizes[r] = size_of_varint(body) + body
    return ERR_OK, np.int64(-1)


@kernel
def encode_records(
    batch_bounds, area_start, timestamps, key_data, key_offsets, key_valid, value_data,
    value_offsets, value_valid, header_offsets, header_key_data, header_key_offsets,
    header_value_data, header_value_offsets, header_value_valid, out,
):
    """Write the records of batch ``b`` contiguously from ``out[area_start[b]]``.

    Same inputs as :func:`encoded_sizes` (which must have succeeded on them). Returns
    ``(err, record)`` like it; ``ERR_OUTPUT_FULL`` if a record would pass the end of ``out``.
    """
    n_headers = header_value_valid.shape[0]
    if (header_key_offsets.shape[0] < n_headers + 1
            or header_value_offsets.shape[0] < n_headers + 1
            or not _shapes_ok(batch_bounds, timestamps, key_offsets, key_valid, value_offsets,
                              value_valid, header_offsets)
            or area_start.shape[0] < batch_bounds.shape[0] - 1):
        return ERR_BAD_OFFSETS, np.int64(0)
    cap = out.shape[0]
    for b in range(batch_bounds.shape[0] - 1):
        first = np.int64(batch_bounds[b])
        last = np.int64(batch_bounds[b + 1])
        p = np.int64(area_start[b])
        base_ts = np.int64(timestamps[first]) if last > first else np.int64(0)
        for r in range(first, last):
            ka, klen = _span(key_offsets, key_valid, r, key_data.shape[0])
            va, vlen = _span(value_offsets, value_valid, r, value_data.shape[0])
            if klen < -1 or vlen < -1:
                return ERR_BAD_OFFSETS, np.int64(r)
            ts_delta = add_wrap(timestamps[r], neg_wrap(base_ts))
            body = _body_size(ts_delta, r - first, klen, vlen, r, header_offsets,
                              header_key_offsets, header_value_offsets, header_value_valid,
                              header_key_data.shape[0], header_value_data.shape[0], n_headers)
            if body < 0 or body > INT32_MAX:
                return ERR_BAD_OFFSETS, np.int64(r)
            if p < 0 or p + size_of_varint(body) + body > cap:
                return ERR_OUTPUT_FULL, np.int64(r)
            p = encode_varint(out, p, body)
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
            p = encode_varint(out, p, h1 - h0)
            for h in range(h0, h1):
                a = np.int64(header_key_offsets[h])
                hl = np.int64(header_key_offsets[h + 1]) - a
                p = encode_varint(out, p, hl)
                _copy(out[p:p + hl], header_key_data[a:a + hl])
                p += hl
                if header_value_valid[h]:
                    a = np.int64(header_value_offsets[h])
                    hl = np.int64(header_value_offsets[h + 1]) - a
                    p = encode_varint(out, p, hl)
                    _copy(out[p:p + hl], header_value_data[a:a + hl])
                    p += hl
                else:
                    out[p] = 1
                    p += 1
    return ERR_OK, np.int64(-1)
