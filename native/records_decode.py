"""Columnar decode of v2 records: every record of many batches in one kernel call.

Layout of one record (spec §1.3, Kafka ``DefaultRecord``)::

    length varint | attributes int8 | timestampDelta varlong | offsetDelta varint
    | keyLength varint (-1 null) | key | valueLength varint (-1 null) | value
    | headersCount varint
    | headersCount x (keyLength varint >= 0 | key | valueLength varint (-1 null) | value)

No Python object is made per record. :func:`decode_records` walks the records areas of all
batches once: it validates every length and varint against its bounds, applies the offset
filter, and writes each kept record's offset, timestamp, type, key and value straight into
preallocated contiguous columns (Arrow-style offsets, n + 1, and validity masks). Headers are
rare and can be many per record, so the pass only notes where each record's headers are and
how many bytes they hold; :func:`gather_headers` then copies them (called only when some
record has headers).

Why one pass for keys and values rather than "measure, then gather": the source is read from
memory once instead of twice, which halved decode time at 1M records (116 MB). The price is
the capacity: the caller sizes ``key_data`` and ``value_data`` by the total records-area bytes
(an upper bound of either), most of which stays untouched virtual memory.

One call decodes batches whose records areas live in one buffer ``buf``: a run of uncompressed
batches straight from the mmapped ``.log`` (no copy), or one compressed batch from its
decompressed bytes. Calls continue each other through ``state`` (rows and bytes written so
far), so a segment mixing both kinds still fills one set of columns in file order. (Measured:
concatenating every decompressed area into one scratch buffer first cost a quarter of the
decode time of an lz4 segment; a kernel call costs ~2 us.)

Validation follows Kafka's ``DefaultRecord.readFrom`` / ``DefaultRecordBatch.RecordIterator``:
a record body longer than what is left, a malformed varint, a negative header count or header
key length, bytes consumed different from the declared length, and bytes left in the records
area after ``recordsCount`` records are all errors. Like Kafka, any negative key/value length
means null, and the per-record attributes byte is ignored. Arithmetic on offsets and timestamps
wraps like Java's ``long`` (see :func:`add_wrap`).

Errors are returned, never raised: ``(kept, err, err_batch, err_pos)`` with ``err_pos`` the byte
position in ``buf`` of the record that failed.
"""

from __future__ import annotations

import numpy as np

from ._jit import inline, kernel
from .varint import decode_varint, decode_varlong

ERR_OK = 0
ERR_TRUNCATED = 1
ERR_BAD_VARINT = 2
ERR_NEGATIVE_LENGTH = 3
ERR_RECORD_SIZE = 4
ERR_NEGATIVE_HEADER_COUNT = 5
ERR_NEGATIVE_HEADER_KEY = 6
ERR_RECORDS_REMAINING = 7
ERR_BAD_BATCH_RANGE = 8
ERR_OUTPUT_TOO_SMALL = 9

ERROR_MESSAGES = {
    ERR_TRUNCATED: "record truncated: its fields run past the end of the record or records area",
    ERR_BAD_VARINT: "malformed varint (longer than 5 bytes, or 10 for a varlong)",
    ERR_NEGATIVE_LENGTH: "negative record length",
    ERR_RECORD_SIZE: "record fields do not fill the declared record length",
    ERR_NEGATIVE_HEADER_COUNT: "negative record header count",
    ERR_NEGATIVE_HEADER_KEY: "negative record header key length",
    ERR_RECORDS_REMAINING: "bytes left in the records area after recordsCount records "
    "(incorrect declared batch size)",
    ERR_BAD_BATCH_RANGE: "records area outside its buffer",
    ERR_OUTPUT_TOO_SMALL: "output arrays smaller than the batches need (caller bug)",
}

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


@inline
def add_wrap(a, b):
    """``a + b`` wrapped to int64 like Java's ``long``, without overflowing in plain Python."""
    a = np.int64(a)
    b = np.int64(b)
    if b > 0 and a > INT64_MAX - b:
        return (a + np.int64(INT64_MIN)) + (b + np.int64(INT64_MIN))
    if b < 0 and a < INT64_MIN - b:
        return (a - np.int64(INT64_MIN)) + (b - np.int64(INT64_MIN))
    return a + b


@inline
def _copy(dst, src):
    """``dst[:] = src[:]`` for equal-length 1-d views.

    Why not slice assignment or ``dst[o + j] = src[p + j]``: numba's slice assignment has a
    per-call overhead that dominates 16-byte keys, and indexing with an offset whose sign numba
    cannot prove adds a negative-index wrap-around branch that blocks vectorization. Indexing
    views with ``range`` indices avoids both (measured: ~8x faster on 100-byte values).
    """
    for j in range(dst.shape[0]):
        dst[j] = src[j]


@inline
def _varint_error(p):
    """The error of a varint read that returned position ``p < 0``."""
    return ERR_TRUNCATED if p == -1 else ERR_BAD_VARINT


@inline
def _failed(err):
    """:func:`parse_record`'s answer for error ``err`` (its other fields meaningless)."""
    z = np.int64(0)
    return err, z, z, z, z, z, z, z, z, z, z, z


@inline
def parse_record(src, p, end):
    """Parse the record at ``src[p]``, its fields bounded by ``end`` (the records area's end),
    as Kafka's ``DefaultRecord.readFrom`` checks it (see the module docstring).

    Returns ``(err, next, ts_delta, offset_delta, klen, kpos, vlen, vpos, nh, hpos, hk_bytes,
    hv_bytes)``: ``next`` is the position after the record; ``kpos``/``vpos`` where the key and
    value bytes start (lengths < 0: null); ``hpos`` where the ``nh`` headers start and
    ``hk_bytes``/``hv_bytes`` their key and value bytes. On error (``err != ERR_OK``) the
    other fields are meaningless. One parse shared by :func:`decode_records` and
    :func:`check_records`, so both accept and refuse exactly the same bytes.
    """
    length, p = decode_varint(src, p, end)
    if p < 0:
        return _failed(_varint_error(p))
    if length < 0:
        return _failed(ERR_NEGATIVE_LENGTH)
    if length > end - p:
        return _failed(ERR_TRUNCATED)
    body_end = p + length
    if p >= body_end:  # the attributes byte
        return _failed(ERR_TRUNCATED)
    p += 1
    ts_delta, p = decode_varlong(src, p, body_end)
    if p < 0:
        return _failed(_varint_error(p))
    offset_delta, p = decode_varint(src, p, body_end)
    if p < 0:
        return _failed(_varint_error(p))
    klen, p = decode_varint(src, p, body_end)
    if p < 0:
        return _failed(_varint_error(p))
    kpos = p
    if klen >= 0:
        if klen > body_end - p:
            return _failed(ERR_TRUNCATED)
        p += klen
    vlen, p = decode_varint(src, p, body_end)
    if p < 0:
        return _failed(_varint_error(p))
    vpos = p
    if vlen >= 0:
        if vlen > body_end - p:
            return _failed(ERR_TRUNCATED)
        p += vlen
    nh, p = decode_varint(src, p, body_end)
    if p < 0:
        return _failed(_varint_error(p))
    if nh < 0:
        return _failed(ERR_NEGATIVE_HEADER_COUNT)
    hpos = p
    hk_bytes = np.int64(0)
    hv_bytes = np.int64(0)
    for _h in range(nh):
        hk, p = decode_varint(src, p, body_end)
        if p < 0:
            return _failed(_varint_error(p))
        if hk < 0:
            return _failed(ERR_NEGATIVE_HEADER_KEY)
        if hk > body_end - p:
            return _failed(ERR_TRUNCATED)
        p += hk
        hk_bytes += hk
        hv, p = decode_varint(src, p, body_end)
        if p < 0:
            return _failed(_varint_error(p))
        if hv >= 0:
            if hv > body_end - p:
                return _failed(ERR_TRUNCATED)
            p += hv
            hv_bytes += hv
    if p != body_end:
        return _failed(ERR_RECORD_SIZE)
    return (ERR_OK, p, np.int64(ts_delta), np.int64(offset_delta), np.int64(klen),
            np.int64(kpos), np.int64(vlen), np.int64(vpos), np.int64(nh), np.int64(hpos),
            hk_bytes, hv_bytes)


@kernel
def decode_records(
    buf, batch_start, batch_end, batch_base_offset, batch_base_timestamp, batch_log_append,
    batch_max_timestamp, batch_record_count, start_offset, last_offset,
    offsets, timestamps, timestamp_types, key_offsets, key_data, key_valid,
    value_offsets, value_data, value_valid, header_pos, header_count, state,
):
    """Validate every record of every batch; write those with start_offset <= offset <= last_offset.

    Per batch ``i``: records area ``buf[batch_start[i]:batch_end[i]]``; ``batch_log_append[i]``
    nonzero means LogAppendTime (every timestamp is the batch max). ``state`` (int64[6]) holds,
    on entry, the rows, key bytes and value bytes already written by earlier calls and the
    header count, header key bytes and header value bytes seen so far; rows and bytes of this
    call go after them, and on success ``state`` is updated (left as it was on error). Outputs
    must have room for ``sum(batch_record_count)`` more rows (``*_offsets`` one more entry) and
    for the total records-area bytes more in ``key_data``/``value_data`` (checked first:
    ``ERR_OUTPUT_TOO_SMALL``). ``header_pos`` is written only for records with headers.

    Returns ``(kept, err, err_batch, err_pos)``: ``kept`` counts all rows written so far.
    """
    nb = batch_start.shape[0]
    if state.shape[0] < 6:
        return np.int64(0), ERR_OUTPUT_TOO_SMALL, np.int64(-1), np.int64(-1)
    k = np.int64(state[0])
    ko = np.int64(state[1])
    vo = np.int64(state[2])
    if (k < 0 or ko < 0 or vo < 0 or batch_end.shape[0] < nb
            or batch_base_offset.shape[0] < nb
            or batch_base_timestamp.shape[0] < nb or batch_log_append.shape[0] < nb
            or batch_max_timestamp.shape[0] < nb or batch_record_count.shape[0] < nb):
        return k, ERR_OUTPUT_TOO_SMALL, np.int64(-1), np.int64(-1)
    # outputs must hold every row and every byte the batches can produce (writes unchecked
    # below): rows <= sum of counts, key or value bytes <= sum of records-area sizes
    rows = np.int64(0)
    area = np.int64(0)
    for i in range(nb):
        if batch_record_count[i] > 0:
            rows += batch_record_count[i]
        if batch_end[i] > batch_start[i]:
            area += batch_end[i] - batch_start[i]
    rows += k
    if (offsets.shape[0] < rows or timestamps.shape[0] < rows
            or timestamp_types.shape[0] < rows or key_valid.shape[0] < rows
            or value_valid.shape[0] < rows or header_pos.shape[0] < rows
            or header_count.shape[0] < rows
            or key_offsets.shape[0] < rows + 1 or value_offsets.shape[0] < rows + 1
            or key_data.shape[0] < ko + area or value_data.shape[0] < vo + area):
        return k, ERR_OUTPUT_TOO_SMALL, np.int64(-1), np.int64(-1)
    t_headers = np.int64(state[3])
    t_hkey = np.int64(state[4])
    t_hvalue = np.int64(state[5])
    key_offsets[k] = ko
    value_offsets[k] = vo
    src = buf
    for i in range(nb):
        p = np.int64(batch_start[i])
        end = np.int64(batch_end[i])
        if p < 0 or end < p or end > src.shape[0]:
            return k, ERR_BAD_BATCH_RANGE, i, p
        base_offset = np.int64(batch_base_offset[i])
        base_ts = np.int64(batch_base_timestamp[i])
        log_append = batch_log_append[i] != 0
        max_ts = np.int64(batch_max_timestamp[i])
        for _ in range(batch_record_count[i]):
            rec_start = p
            (err, p, ts_delta, offset_delta, klen, kpos, vlen, vpos, nh, hpos, hk_bytes,
             hv_bytes) = parse_record(src, p, end)
            if err != ERR_OK:
                return k, err, i, rec_start
            offset = add_wrap(base_offset, offset_delta)
            if offset < start_offset or offset > last_offset:
                continue
            offsets[k] = offset
            if log_append:
                timestamps[k] = max_ts
                timestamp_types[k] = 1
            else:
                timestamps[k] = add_wrap(base_ts, ts_delta)
                timestamp_types[k] = 0
            if klen >= 0:
                _copy(key_data[ko:ko + klen], src[kpos:kpos + klen])
                ko += klen
                key_valid[k] = True
            else:
                key_valid[k] = False
            key_offsets[k + 1] = ko
            if vlen >= 0:
                _copy(value_data[vo:vo + vlen], src[vpos:vpos + vlen])
                vo += vlen
                value_valid[k] = True
            else:
                value_valid[k] = False
            value_offsets[k + 1] = vo
            header_count[k] = nh
            if nh > 0:
                header_pos[k] = hpos
                t_headers += nh
                t_hkey += hk_bytes
                t_hvalue += hv_bytes
            k += 1
        if p != end:
            return k, ERR_RECORDS_REMAINING, i, p
    state[0] = k
    state[1] = ko
    state[2] = vo
    state[3] = t_headers
    state[4] = t_hkey
    state[5] = t_hvalue
    return k, ERR_OK, np.int64(-1), np.int64(-1)


@kernel
def gather_headers(
    buf, n, header_pos, header_count, header_offsets, header_key_offsets, header_key_data,
    header_value_offsets, header_value_data, header_value_valid,
):
    """Copy the headers of ``n`` records located in ``buf`` by one :func:`decode_records` call.

    ``header_pos``/``header_count`` are that call's rows; capacities come from the growth of
    its ``state`` header totals (header count, +1 for offsets, and header key/value bytes).
    Headers were validated by ``decode_records``; varints are re-read here with every bound
    still checked, and the kernel stops (returning fewer headers than expected) rather than
    read or write out of bounds if given rows it did not validate.

    Returns the number of headers written.
    """
    h = np.int64(0)
    hko = np.int64(0)
    hvo = np.int64(0)
    if (header_offsets.shape[0] < n + 1 or header_pos.shape[0] < n
            or header_count.shape[0] < n
            or header_key_offsets.shape[0] < header_value_valid.shape[0] + 1
            or header_value_offsets.shape[0] < header_value_valid.shape[0] + 1):
        return h
    header_offsets[0] = 0
    header_key_offsets[0] = 0
    header_value_offsets[0] = 0
    cap_h = header_value_valid.shape[0]
    for r in range(n):
        nh = header_count[r]
        if nh > 0:
            src = buf
            size = src.shape[0]
            p = np.int64(header_pos[r])
            if p < 0 or h + nh > cap_h:
                return h
            for _ in range(nh):
                hk, p = decode_varint(src, p, size)
                if p < 0 or hk < 0 or hk > size - p or hko + hk > header_key_data.shape[0]:
                    return h
                _copy(header_key_data[hko:hko + hk], src[p:p + hk])
                p += hk
                hko += hk
                header_key_offsets[h + 1] = hko
                hv, p = decode_varint(src, p, size)
                if p < 0 or hv > size - p or hvo + hv > header_value_data.shape[0]:
                    return h
                if hv >= 0:
                    _copy(header_value_data[hvo:hvo + hv], src[p:p + hv])
                    p += hv
                    hvo += hv
                    header_value_valid[h] = True
                else:
                    header_value_valid[h] = False
                header_value_offsets[h + 1] = hvo
                h += 1
        header_offsets[r + 1] = h
    return h


@kernel
def move_down(buf, src, dst, n):
    """``buf[dst:dst + n] = buf[src:src + n]`` for ``dst <= src`` (overlap allowed: the copy
    runs forward, so every byte is read before it is overwritten), in place, without the
    temporary copy numpy makes for overlapping slices. Returns the bytes moved: ``n``, or 0
    (nothing moved) when the ranges are not inside ``buf`` or ``dst > src``.

    Used to close the gap between the parts of a parallel decode (see
    ``kafkalog.records.columnar``).
    """
    size = buf.shape[0]
    if n <= 0 or dst < 0 or dst > src or src + n > size:
        return np.int64(0)
    _copy(buf[dst:dst + n], buf[src:src + n])
    return np.int64(n)


@kernel
def move_up(buf, src, dst, n):
    """``buf[dst:dst + n] = buf[src:src + n]`` for ``dst >= src`` (overlap allowed), in place.
    Copied from the end in pieces no longer than ``dst - src``, so that no piece overlaps its
    own source (each piece is a plain forward copy, which vectorizes) and every byte is read
    before it is overwritten. Returns ``n``, or 0 (nothing moved) when the ranges are not
    inside ``buf`` or ``dst < src``.

    Used by the first part of a parallel decode to move its bytes up against the second
    part's (see ``kafkalog.records.columnar``).
    """
    size = buf.shape[0]
    if n <= 0 or src < 0 or dst < src or dst + n > size:
        return np.int64(0)
    d = dst - src
    if d == 0:
        return np.int64(n)
    end = n
    while end > 0:
        c = min(d, end)
        start = end - c
        _copy(buf[dst + start:dst + end], buf[src + start:src + end])
        end = start
    return np.int64(n)


@kernel
def check_records(buf, start, end, count, base_timestamp, log_append, max_timestamp):
    """Validate the ``count`` records of one v2 records area ``buf[start:end]`` as
    :func:`decode_records` does (the same :func:`parse_record`), copying nothing: what a
    broker checks of a producer's batch (Kafka's ``LogValidator`` iterating its records).

    Returns ``(parsed, err, err_pos, in_sequence, max_ts, all_keys)``: ``in_sequence`` is true
    when record ``j``'s offset delta is ``j`` for every record (a v2 producer writes them so);
    ``max_ts`` the largest record timestamp (``max_timestamp`` for a LogAppendTime batch, whose
    records all carry it; -1 when ``count`` is 0); ``all_keys`` true when no key is null.
    ``err_pos`` is the position in ``buf`` of the record that failed, or of the bytes left
    after the last record (``ERR_RECORDS_REMAINING``); -1 without error.
    """
    p = np.int64(start)
    end = np.int64(end)
    in_sequence = True
    all_keys = True
    max_ts = np.int64(-1)
    if p < 0 or end < p or end > buf.shape[0]:
        return np.int64(0), ERR_BAD_BATCH_RANGE, p, False, max_ts, False
    base_ts = np.int64(base_timestamp)
    n = np.int64(0)
    for j in range(count):
        rec_start = p
        (err, p, ts_delta, offset_delta, klen, _kpos, _vlen, _vpos, _nh, _hpos, _hk,
         _hv) = parse_record(buf, p, end)
        if err != ERR_OK:
            return n, err, rec_start, False, max_ts, False
        if offset_delta != j:
            in_sequence = False
        ts = np.int64(max_timestamp) if log_append else add_wrap(base_ts, ts_delta)
        if n == 0 or ts > max_ts:
            max_ts = ts
        if klen < 0:
            all_keys = False
        n += 1
    if p != end:
        return n, ERR_RECORDS_REMAINING, p, False, max_ts, False
    return n, ERR_OK, np.int64(-1), in_sequence, max_ts, all_keys


@kernel
def first_record_at_or_after(buf, start, end, count, base_offset, base_timestamp, log_append,
                             max_timestamp, target, min_offset):
    """The first of the ``count`` records of one v2 records area ``buf[start:end]`` whose
    timestamp is >= ``target`` and offset >= ``min_offset`` (Kafka's
    ``FileRecords.searchForTimestamp`` inside one batch), every record validated as
    :func:`decode_records` does (the same :func:`parse_record`), those after it too: the
    batch is refused or accepted whole, as when its records are decoded.

    Returns ``(err, err_pos, index, offset, timestamp)``: ``index`` -1 and ``offset`` and
    ``timestamp`` 0 when no record qualifies or on error; ``err_pos`` as in
    :func:`check_records`. Offsets and timestamps wrap like Java's ``long``; a LogAppendTime
    batch's records all carry ``max_timestamp``.
    """
    p = np.int64(start)
    end = np.int64(end)
    found = np.int64(-1)
    found_off = np.int64(0)
    found_ts = np.int64(0)
    if p < 0 or end < p or end > buf.shape[0]:
        return ERR_BAD_BATCH_RANGE, p, found, found_off, found_ts
    base_ts = np.int64(base_timestamp)
    base_off = np.int64(base_offset)
    for j in range(count):
        rec_start = p
        (err, p, ts_delta, offset_delta, _klen, _kpos, _vlen, _vpos, _nh, _hpos, _hk,
         _hv) = parse_record(buf, p, end)
        if err != ERR_OK:
            return err, rec_start, np.int64(-1), np.int64(0), np.int64(0)
        if found < 0:
            ts = np.int64(max_timestamp) if log_append else add_wrap(base_ts, ts_delta)
            off = add_wrap(base_off, np.int64(offset_delta))
            if ts >= target and off >= min_offset:
                found = np.int64(j)
                found_off = off
                found_ts = ts
    if p != end:
        return ERR_RECORDS_REMAINING, p, np.int64(-1), np.int64(0), np.int64(0)
    return ERR_OK, np.int64(-1), found, found_off, found_ts
