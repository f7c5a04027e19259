"""The log cleaner's record filter and record rewriting over v2 record bytes.

``filter_batches`` decides, record by record, what Kafka's ``Cleaner.shouldRetainRecord``
decides (core/src/main/scala/kafka/log/LogCleaner.scala 3.9, storage/.../Cleaner.java 4.x):

* a record past the map's latest offset is kept (a partially mapped segment);
* a record with a key is kept when its offset is at least the offset the map holds for the key,
  and it has a value or its batch still retains deletes (no delete horizon yet, or the cleaning
  time is before it: KIP-534);
* a record without a key is dropped (counted as invalid).

Per batch, a mode chosen by the caller from Kafka's ``checkBatchRetention``: filter by the map,
keep every record (a control batch), keep none (``discardBatchRecords``), or skip (a deleted
batch, or one the caller decodes itself: compressed and legacy data go through the same kernels
on their decompressed bytes).

``assemble_batches`` writes a window's output: batches kept whole copied, rebuilt ones given a
new header (CRC left to the caller), emptied ones a bare header, others dropped.

``rewrite_records`` writes the kept records of one batch as ``MemoryRecordsBuilder`` writes
them: attributes 0, the timestamp delta recomputed against the new base timestamp (the delete
horizon, or the first kept record's timestamp), everything after the timestamp delta (offset
delta, key, value, headers) copied byte for byte, the length varint recomputed.

Reference: tests/reference/record_filter.py.
"""

from __future__ import annotations

import numpy as np

from ._jit import inline, kernel
from .bytes_be import write_i32, write_i64
from .md5 import DIGEST_SIZE, SCRATCH_SIZE, md5_digest_into
from .offset_map import ERR_CORRUPT, OK, map_get_digest
from .varint import decode_varint, decode_varlong, encode_varint, encode_varlong, size_of_varlong

#: per-batch modes
MODE_SKIP = 0
MODE_FILTER = 1
MODE_KEEP_ALL = 2
MODE_KEEP_NONE = 3

#: batch_info columns
I_KEPT = 0
I_TOMBSTONES = 1
I_MAX_KEPT_OFFSET = 2
I_FIRST_KEPT_TS = 3
I_READ = 4
I_INVALID = 5
INFO_COLUMNS = 6

RECORDS_OFFSET = 61  # DefaultRecordBatch.RECORDS_OFFSET


@kernel
def filter_batches(buf, starts, ends, counts, base_offsets, base_timestamps, log_append_times,
                   modes, retain_deletes, first_record, table, slots, state, latest_offset,
                   rec_keep, rec_start, rec_end, rec_ts, rec_offset, batch_info, err):
    """Filter the records of the batches of one chunk.

    Batch ``i``'s records area is ``buf[starts[i]:ends[i]]`` (``counts[i]`` records);
    ``log_append_times[i]`` is its append time for a LogAppendTime batch (every record then
    carries it, as Kafka's ``DefaultRecordBatch`` iterator does), else -1. Records of batch
    ``i`` go to rows ``first_record[i]..`` of the ``rec_*`` outputs (keep flag, record start
    and end in ``buf``, timestamp, offset); ``batch_info[i]`` gets the kept count, whether a
    kept record is a tombstone, the largest kept offset (-1), the first kept timestamp, the
    records read and the keyless records dropped.

    Returns :data:`OK`, or :data:`ERR_CORRUPT` with ``err[0]`` = batch, ``err[1]`` = position.
    """
    scratch = np.empty(SCRATCH_SIZE, np.int64)
    digest = np.empty(DIGEST_SIZE, np.uint8)
    n = starts.shape[0]
    for i in range(n):
        mode = modes[i]
        kept = np.int64(0)
        tomb = np.int64(0)
        max_kept = np.int64(-1)
        first_ts = np.int64(-1)
        read = np.int64(0)
        invalid = np.int64(0)
        if mode != 0:
            p = np.int64(starts[i])
            end = np.int64(ends[i])
            row = first_record[i]
            for _j in range(counts[i]):
                length, q = decode_varint(buf, p, end)
                if q < 0 or length < 1 or q + length > end:
                    err[0] = i
                    err[1] = p
                    return ERR_CORRUPT
                r_end = q + length
                ts_delta, q = decode_varlong(buf, q + 1, r_end)
                if q < 0:
                    err[0] = i
                    err[1] = p
                    return ERR_CORRUPT
                od, q = decode_varint(buf, q, r_end)
                if q < 0:
                    err[0] = i
                    err[1] = p
                    return ERR_CORRUPT
                klen, q = decode_varint(buf, q, r_end)
                if q < 0 or klen < -1 or q + max(klen, 0) > r_end:
                    err[0] = i
                    err[1] = p
                    return ERR_CORRUPT
                kpos = q
                vlen, q2 = decode_varint(buf, q + max(klen, 0), r_end)
                if q2 < 0 or vlen < -1:
                    err[0] = i
                    err[1] = p
                    return ERR_CORRUPT
                offset = base_offsets[i] + od
                lat = log_append_times[i]
                ts = lat if lat >= 0 else base_timestamps[i] + ts_delta
                keep = False
                if mode == 2:
                    keep = True
                elif mode == 1:
                    if offset > latest_offset:
                        keep = True  # pastLatestOffset
                    elif klen >= 0:
                        md5_digest_into(buf, kpos, klen, digest, 0, scratch)
                        found = map_get_digest(table, slots, state, digest, 0)
                        keep = offset >= found and (vlen >= 0 or retain_deletes[i] != 0)
                    else:
                        invalid += 1
                read += 1
                rec_keep[row] = 1 if keep else 0
                rec_start[row] = p
                rec_end[row] = r_end
                rec_ts[row] = ts
                rec_offset[row] = offset
                if keep:
                    if kept == 0:
                        first_ts = ts
                    kept += 1
                    if vlen < 0:
                        tomb = 1
                    if offset > max_kept:
                        max_kept = offset
                row += 1
                p = r_end
        batch_info[i, 0] = kept
        batch_info[i, 1] = tomb
        batch_info[i, 2] = max_kept
        batch_info[i, 3] = first_ts
        batch_info[i, 4] = read
        batch_info[i, 5] = invalid
    return OK


@kernel
def rewrite_records(buf, rec_keep, rec_start, rec_end, rec_ts, first, count, new_base_ts,
                    out, out_pos, result):
    """Write the kept records among rows ``first..first+count`` into ``out`` from ``out_pos``.

    ``result`` (``int64[2]``): the position after the last record written, and the largest
    kept timestamp (-1 when none: ``RecordBatch.NO_TIMESTAMP``, as the builder starts).
    Returns :data:`OK`, or :data:`ERR_CORRUPT` when a record no longer parses.
    """
    w = np.int64(out_pos)
    max_ts = np.int64(-1)
    for r in range(first, first + count):
        if rec_keep[r] == 0:
            continue
        p = np.int64(rec_start[r])
        r_end = np.int64(rec_end[r])
        _length, q = decode_varint(buf, p, r_end)
        if q < 0:
            return ERR_CORRUPT
        _old, rest = decode_varlong(buf, q + 1, r_end)
        if rest < 0:
            return ERR_CORRUPT
        ts = rec_ts[r]
        if ts > max_ts:
            max_ts = ts
        delta = ts - new_base_ts
        body = 1 + size_of_varlong(delta) + (r_end - rest)
        w = encode_varint(out, w, body)
        out[w] = np.uint8(0)
        w = encode_varlong(out, w + 1, delta)
        n = r_end - rest
        out[w:w + n] = buf[rest:r_end]
        w += n
    result[0] = w
    result[1] = max_ts
    return OK


#: assemble_batches actions
A_DROP = 0
A_COPY = 1
A_REBUILD = 2
A_EMPTY = 3
A_EXTERNAL = 4


@inline
def _put_i16(out, p, v):
    x = np.int64(v) & 0xFFFF
    out[p] = np.uint8((x >> 8) & 0xFF)
    out[p + 1] = np.uint8(x & 0xFF)


@inline
def _header(out, w, size, base_offset, leader_epoch, attributes, last_delta, base_ts, max_ts,
            producer_id, producer_epoch, base_sequence, count):
    """A v2 batch header at ``out[w:]`` with a zero CRC (the caller fills it in)."""
    write_i64(out, w, base_offset)
    write_i32(out, w + 8, size - 12)
    write_i32(out, w + 12, leader_epoch)
    out[w + 16] = np.uint8(2)
    write_i32(out, w + 17, 0)
    _put_i16(out, w + 21, attributes)
    write_i32(out, w + 23, last_delta)
    write_i64(out, w + 27, base_ts)
    write_i64(out, w + 35, max_ts)
    write_i64(out, w + 43, producer_id)
    _put_i16(out, w + 51, producer_epoch)
    write_i32(out, w + 53, base_sequence)
    write_i32(out, w + 57, count)


@kernel
def assemble_batches(src, positions, sizes, actions, first_record, counts, rec_keep,
                     rec_start, rec_end, rec_ts, base_offsets, last_offsets, leader_epochs,
                     attributes, base_timestamps, max_timestamps, max_from_records,
                     producer_ids, producer_epochs, base_sequences, kept, side, side_pos,
                     side_len, out, out_pos, out_len, out_max_ts):
    """Write the output of every batch of a window, in order, into ``out``.

    Per batch ``i`` (``actions[i]``): drop it; copy its bytes (``src[positions[i]:]``, a batch
    kept whole); rebuild it (a 61-byte header with the given ``attributes``,
    ``base_timestamps``, producer fields and ``kept`` count, ``lastOffsetDelta`` from its
    offsets, ``maxTimestamp`` the largest kept record timestamp when ``max_from_records[i]``
    else ``max_timestamps[i]``; then its kept records re-encoded by :func:`rewrite_records`);
    write an empty header (no records, ``maxTimestamp = max_timestamps[i]``, ``baseTimestamp``
    -1 as ``writeEmptyHeader`` writes it); or copy external
    bytes (``side[side_pos[i]:]``, a batch the caller built: compressed or legacy). Rebuilt and
    empty batches get a zero CRC: the caller computes it. ``out_pos``/``out_len`` get each
    batch's place in ``out`` (length 0 when dropped), ``out_max_ts`` the maxTimestamp
    written (rebuilt batches). Returns the bytes written, or -1 when a record does not parse.
    """
    n = positions.shape[0]
    w = np.int64(0)
    res = np.zeros(2, np.int64)
    for i in range(n):
        a = actions[i]
        out_pos[i] = w
        out_max_ts[i] = -1
        if a == 1:
            p = positions[i]
            s = sizes[i]
            out[w:w + s] = src[p:p + s]
            w += s
        elif a == 2:
            rc = rewrite_records(src, rec_keep, rec_start, rec_end, rec_ts, first_record[i],
                                 counts[i], base_timestamps[i], out, w + RECORDS_OFFSET, res)
            if rc != OK:
                return np.int64(-1)
            mts = res[1] if max_from_records[i] else max_timestamps[i]
            size = res[0] - w
            _header(out, w, size, base_offsets[i], leader_epochs[i], attributes[i],
                    last_offsets[i] - base_offsets[i], base_timestamps[i], mts,
                    producer_ids[i], producer_epochs[i], base_sequences[i], kept[i])
            out_max_ts[i] = mts
            w = res[0]
        elif a == 3:
            # DefaultRecordBatch.writeEmptyHeader: baseTimestamp NO_TIMESTAMP (-1)
            _header(out, w, RECORDS_OFFSET, base_offsets[i], leader_epochs[i], attributes[i],
                    last_offsets[i] - base_offsets[i], -1, max_timestamps[i],
                    producer_ids[i], producer_epochs[i], base_sequences[i], 0)
            out_max_ts[i] = max_timestamps[i]
            w += RECORDS_OFFSET
        elif a == 4:
            p = side_pos[i]
            s = side_len[i]
            out[w:w + s] = side[p:p + s]
            w += s
        out_len[i] = w - out_pos[i]
    return w
