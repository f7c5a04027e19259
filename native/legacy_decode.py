"""Columnar decode of legacy messages (magic 0 and 1): field positions of many messages per call.

Layout of one message from its CRC field (spec §2, Kafka ``LegacyRecord``)::

    crc uint32 | magic int8 | attributes int8 | [timestamp int64, v1] | keyLength int32 (-1 null)
    | key | valueLength int32 (-1 null) | value

The object path (``kafkalog.records.legacy``) builds a ``Record`` per message; these kernels
instead return where each message's fields are, so keys and values are copied once, straight
into Arrow-style columns (:func:`gather`). Wrappers' compressed values are decompressed by the
caller (codecs are library calls) and their inner entries ``[offset int64][size int32][message]``
walked here by :func:`walk_inner`.

The kernels validate exactly what ``_parse_message`` and ``LegacyEntry._decode`` validate and
report the first failing message or wrapper instead of raising: the caller then decodes the same
entries through the object path, which raises its precise error. Every read is bounds-checked.
"""

from __future__ import annotations

from ._jit import kernel
from .bytes_be import read_i32, read_i64
from .records_decode import _copy

#: crc + magic + attributes + key length + value length
RECORD_OVERHEAD_V0 = 14
#: v0 overhead + the v1 timestamp
RECORD_OVERHEAD_V1 = 22
LOG_OVERHEAD = 12

#: :func:`parse_messages` failure codes (the object path words them)
ERR_SMALL = 1  # below the magic's minimum size
ERR_MAGIC = 2  # magic not 0 or 1
ERR_KEY = 3  # key length overruns the message
ERR_VALUE_LENGTH = 4  # no room for the value length
ERR_VALUE = 5  # value length overruns the message
#: :func:`walk_inner` failure codes
ERR_INNER_SIZE = 6  # an inner entry's size below the minimum overhead
ERR_NO_INNER = 7  # a wrapper without a whole inner entry


@kernel
def parse_messages(buf, starts, ends, magic, attrs, ts, kpos, klen, vpos, vlen):
    """Parse messages ``buf[starts[i]:ends[i]]`` (CRC field .. end of value) into the output
    arrays: magic, attributes, timestamp (-1 for v0), key and value position and length (length
    -1 = null). Returns ``(index, code)`` of the first message that does not parse (``(-1, 0)``:
    all parsed); outputs past it are unset."""
    n = starts.shape[0]
    for i in range(n):
        s = starts[i]
        e = ends[i]
        if e - s < RECORD_OVERHEAD_V0:
            return i, ERR_SMALL
        m = buf[s + 4]
        magic[i] = m
        attrs[i] = buf[s + 5]
        p = s + 6
        if m == 0:
            ts[i] = -1
        elif m == 1:
            if e - s < RECORD_OVERHEAD_V1:
                return i, ERR_SMALL
            ts[i] = read_i64(buf, p)
            p += 8
        else:
            return i, ERR_MAGIC
        k = read_i32(buf, p)
        p += 4
        if k < 0:
            kpos[i] = p
            klen[i] = -1
        else:
            if k > e - p - 4:
                return i, ERR_KEY
            kpos[i] = p
            klen[i] = k
            p += k
        if e - p < 4:
            return i, ERR_VALUE_LENGTH
        v = read_i32(buf, p)
        p += 4
        if v < 0:
            vpos[i] = p
            vlen[i] = -1
        else:
            if v > e - p:
                return i, ERR_VALUE
            vpos[i] = p
            vlen[i] = v
    return -1, 0


@kernel
def walk_inner(buf, wstarts, wends, starts, ends, offsets, counts):
    """The inner entries of each wrapper's decompressed bytes ``buf[wstarts[w]:wends[w]]``, in
    order: message ``starts``/``ends`` (after the 12-byte prefix) and ``offsets``, ``counts[w]``
    per wrapper. A partial trailing entry ends a wrapper (Kafka's ``DataLogInputStream``).
    Output arrays hold at least ``sum(wends - wstarts) // 26`` entries. Returns
    ``(total, wrapper, code)``: ``wrapper`` -1 unless one failed (``code`` says why)."""
    t = 0
    for w in range(wstarts.shape[0]):
        p = wstarts[w]
        e = wends[w]
        c = 0
        while e - p >= LOG_OVERHEAD:
            size = read_i32(buf, p + 8)
            if size < RECORD_OVERHEAD_V0:
                return t, w, ERR_INNER_SIZE
            if size > e - p - LOG_OVERHEAD:
                break
            offsets[t] = read_i64(buf, p)
            starts[t] = p + LOG_OVERHEAD
            ends[t] = p + LOG_OVERHEAD + size
            t += 1
            c += 1
            p += LOG_OVERHEAD + size
        if c == 0:
            return t, w, ERR_NO_INNER
        counts[w] = c
    return t, -1, 0


@kernel
def gather(buf0, buf1, source, pos, length, out_offsets, out_data):
    """Copy field ``i`` (``length[i]`` bytes at ``pos[i]`` of ``buf0``, or of ``buf1`` where
    ``source[i]``; length -1 = null, nothing copied) into ``out_data``; Arrow-style
    ``out_offsets`` (n + 1). Returns the bytes written."""
    w = 0
    out_offsets[0] = 0
    for i in range(pos.shape[0]):
        n = length[i]
        if n > 0:
            p = pos[i]
            # (records_decode's copy: slice assignment's per-call cost dominated small fields)
            if source[i]:
                _copy(out_data[w:w + n], buf1[p:p + n])
            else:
                _copy(out_data[w:w + n], buf0[p:p + n])
            w += n
        out_offsets[i + 1] = w
    return w
