"""Kafka's ``SkimpyOffsetMap`` probing, and filling the map from v2 record bytes.

The map is one ``uint8`` table of ``slots`` slots of 24 bytes: the 16-byte MD5 digest of a key,
then the key's latest offset as a big-endian int64 (``ByteBuffer.putLong``). A slot of 24 zero
bytes is empty. Probing (``SkimpyOffsetMap.positionOf``): attempt ``i`` reads the big-endian
int32 at byte ``min(i, 12)`` of the digest and adds ``max(0, i - 12)`` (Java ``int`` arithmetic,
wrapping), takes ``Utils.abs`` (``Integer.MIN_VALUE`` -> 0) modulo ``slots``: the first 13
attempts are 13 independent hash positions, then probing turns linear.

Map state shared by every kernel (an ``int64`` array, see the ``S_*`` indices): the number of
entries, of lookups and of probes (Kafka's collision statistics) and the latest offset put.

Record bytes (``put_records``): an uncompressed v2 records area, ``length attributes
timestampDelta offsetDelta keyLength key valueLength value headers`` per record (zig-zag
varints), walked with the bounds checks of ``native.varint``; a record that does not parse makes
the kernel return :data:`ERR_CORRUPT` with the failing position.

Reference: tests/reference/offset_map.py (dict-free plain Python over the same table layout).
"""

from __future__ import annotations

import numpy as np

from ._jit import inline, kernel
from .md5 import DIGEST_SIZE, SCRATCH_SIZE, md5_digest_into
from .varint import decode_varint, decode_varlong

#: bytes per slot: digest + offset (``SkimpyOffsetMap.bytesPerEntry``)
BYTES_PER_ENTRY = DIGEST_SIZE + 8
#: map state indices
S_ENTRIES = 0
S_LOOKUPS = 1
S_PROBES = 2
S_LAST_OFFSET = 3
STATE_SIZE = 4

#: put_records / filter kernels: results
OK = 0
FULL = 1
ERR_CORRUPT = -1

_INT_MIN = -(2**31)


@inline
def position_of(digest, dpos, attempt, slots):
    """Byte position in the table of probe ``attempt`` for the digest at ``digest[dpos:]``."""
    i = attempt if attempt < DIGEST_SIZE - 4 else DIGEST_SIZE - 4
    q = dpos + i
    v = ((np.int64(digest[q]) << 24) | (np.int64(digest[q + 1]) << 16)
         | (np.int64(digest[q + 2]) << 8) | np.int64(digest[q + 3]))
    if v >= 2**31:  # the big-endian int32 is signed
        v -= 2**32
    extra = attempt - (DIGEST_SIZE - 4)
    if extra > 0:
        v += extra
        v = ((v + 2**31) % 2**32) - 2**31  # Java int addition wraps
    a = 0 if v == _INT_MIN else (v if v >= 0 else -v)  # Utils.abs
    return np.int64((a % slots) * BYTES_PER_ENTRY)


@inline
def _is_empty(table, pos):
    for j in range(BYTES_PER_ENTRY):
        if table[pos + j] != 0:
            return False
    return True


@inline
def _same_digest(table, pos, digest, dpos):
    for j in range(DIGEST_SIZE):
        if table[pos + j] != digest[dpos + j]:
            return False
    return True


@inline
def _write_offset(table, pos, offset):
    v = np.int64(offset)
    for j in range(8):
        table[pos + DIGEST_SIZE + j] = np.uint8((v >> (8 * (7 - j))) & 0xFF)


@inline
def _read_offset(table, pos):
    v = np.int64(0)
    for j in range(8):
        v = (v << 8) | np.int64(table[pos + DIGEST_SIZE + j])
    return v


@inline
def map_put_digest(table, slots, state, digest, dpos, offset):
    """``SkimpyOffsetMap.put`` of a digest; returns 1 for a new entry, 0 for an overwrite.

    The caller checks ``state[S_ENTRIES] < slots`` first (Kafka throws on a full map).
    """
    state[S_LOOKUPS] += 1
    attempt = np.int64(0)
    pos = position_of(digest, dpos, attempt, slots)
    state[S_PROBES] += 1
    while not _is_empty(table, pos):
        if _same_digest(table, pos, digest, dpos):
            _write_offset(table, pos, offset)
            state[S_LAST_OFFSET] = offset
            return 0
        attempt += 1
        pos = position_of(digest, dpos, attempt, slots)
        state[S_PROBES] += 1
    for j in range(DIGEST_SIZE):
        table[pos + j] = digest[dpos + j]
    _write_offset(table, pos, offset)
    state[S_LAST_OFFSET] = offset
    state[S_ENTRIES] += 1
    return 1


@inline
def map_get_digest(table, slots, state, digest, dpos):
    """``SkimpyOffsetMap.get`` of a digest: the offset stored for it, or -1."""
    state[S_LOOKUPS] += 1
    max_attempts = slots + DIGEST_SIZE - 4
    attempt = np.int64(0)
    while True:
        if attempt >= max_attempts:
            return np.int64(-1)
        pos = position_of(digest, dpos, attempt, slots)
        state[S_PROBES] += 1
        if _is_empty(table, pos):
            return np.int64(-1)
        attempt += 1
        if _same_digest(table, pos, digest, dpos):
            return _read_offset(table, pos)


@kernel
def map_put(table, slots, state, digest, offset):
    """Kernel entry point: put a 16-byte ``digest`` (``uint8`` array) with ``offset``."""
    return map_put_digest(table, slots, state, digest, 0, offset)


@kernel
def map_get(table, slots, state, digest):
    """Kernel entry point: the offset stored for a 16-byte ``digest``, or -1."""
    return map_get_digest(table, slots, state, digest, 0)


@inline
def _record_key(buf, pos, end):
    """Parse one record's header: ``(record_end, offset_delta, key_pos, key_len, ts_delta)``;
    ``record_end`` < 0 when it does not parse (``key_len`` -1: no key)."""
    length, p = decode_varint(buf, pos, end)
    if p < 0 or length < 1 or p + length > end:
        return np.int64(-1), np.int64(0), np.int64(0), np.int64(-1), np.int64(0)
    rec_end = p + length
    q = p + 1  # attributes
    ts_delta, q = decode_varlong(buf, q, rec_end)
    if q < 0:
        return np.int64(-1), np.int64(0), np.int64(0), np.int64(-1), np.int64(0)
    od, q = decode_varint(buf, q, rec_end)
    if q < 0:
        return np.int64(-1), np.int64(0), np.int64(0), np.int64(-1), np.int64(0)
    klen, q = decode_varint(buf, q, rec_end)
    if q < 0 or klen < -1 or q + max(klen, 0) > rec_end:
        return np.int64(-1), np.int64(0), np.int64(0), np.int64(-1), np.int64(0)
    return rec_end, od, q, klen, ts_delta


@kernel
def put_records(buf, pos, end, count, base_offset, start_offset, table, slots, state,
                max_entries, out):
    """Put the keys of one records area ``buf[pos:end]`` (``count`` records of the batch with
    ``base_offset``) into the map: Kafka's ``buildOffsetMapForSegment`` inner loop.

    Records without a key, or below ``start_offset``, are skipped. When the map already holds
    ``max_entries`` entries at a keyed record, stop: :data:`FULL` (the record is not put).
    ``out`` (``int64[2]``): records read (those fully handled), position where parsing stopped.
    Returns :data:`OK`, :data:`FULL` or :data:`ERR_CORRUPT`.
    """
    scratch = np.empty(SCRATCH_SIZE, np.int64)
    digest = np.empty(DIGEST_SIZE, np.uint8)
    p = np.int64(pos)
    read = np.int64(0)
    for _i in range(count):
        rec_end, od, kpos, klen, _ts = _record_key(buf, p, end)
        if rec_end < 0:
            out[0] = read
            out[1] = p
            return ERR_CORRUPT
        offset = base_offset + od
        if klen >= 0 and offset >= start_offset:
            if state[S_ENTRIES] >= max_entries:
                out[0] = read
                out[1] = p
                return FULL
            md5_digest_into(buf, kpos, klen, digest, 0, scratch)
            map_put_digest(table, slots, state, digest, 0, offset)
        read += 1
        p = rec_end
    out[0] = read
    out[1] = p
    return OK


@kernel
def put_batches(buf, positions, sizes, base_offsets, last_offsets, counts, plain, first,
                start_offset, table, slots, state, max_entries, out):
    """Kafka's per-batch map building over uncompressed v2 batches ``first..`` of ``buf``.

    For each batch ``i``: when ``plain[i]`` (an uncompressed v2 data batch, not aborted) its
    records are put (:func:`put_records`); every batch whose last offset reaches
    ``start_offset`` then moves the map's latest offset to its last offset
    (``updateLatestOffset``). Stops at the first batch with ``plain[i] == 2`` (the caller
    handles it: compressed or legacy) and returns its index in ``out[0]``.

    ``out`` (``int64[3]``): index of the batch where it stopped (``len`` when done), records
    read, position of a parse error. Returns :data:`OK`, :data:`FULL` (``out[0]`` is the batch
    that filled the map) or :data:`ERR_CORRUPT`.
    """
    n = positions.shape[0]
    rec_out = np.zeros(2, np.int64)
    read = np.int64(0)
    for i in range(first, n):
        kind = plain[i]
        if kind == 2:
            out[0] = i
            out[1] = read
            return OK
        if kind == 1 and last_offsets[i] >= start_offset:
            p = positions[i]
            rc = put_records(buf, p + 61, p + sizes[i], counts[i], base_offsets[i],
                             start_offset, table, slots, state, max_entries, rec_out)
            read += rec_out[0]
            if rc != OK:
                out[0] = i
                out[1] = read
                out[2] = rec_out[1]
                return rc
        if last_offsets[i] >= start_offset:
            state[S_LAST_OFFSET] = last_offsets[i]
    out[0] = n
    out[1] = read
    return OK
