"""The console consumer's default output (Kafka's ``DefaultMessageFormatter``) for many
records at once: one kernel call writes every line of a chunk of decoded columns.

A line is the enabled fields in Kafka's order, each followed by the key separator when a
later field is enabled, the last one by the line separator:

    [CreateTime:<ts> | LogAppendTime:<ts> | NO_TIMESTAMP]  (FIELD_TIMESTAMP)
    Partition:<p>                                          (FIELD_PARTITION)
    Offset:<o>                                             (FIELD_OFFSET)
    Delivery:NOT_PRESENT                                   (FIELD_DELIVERY)
    Epoch:NOT_PRESENT                                      (FIELD_EPOCH)
    <headers text, given per row>                          (FIELD_HEADERS)
    <key or null literal>                                  (FIELD_KEY)
    <value or null literal>                                (FIELD_VALUE)

Inputs are the columns as Arrow lays them out: a binary column is its data bytes, its
``n + 1`` offsets (int64) and a validity byte per row (0: null). ``timestamp_types``: 0
CreateTime, 1 LogAppendTime, anything else no timestamp (v0 messages). The caller passes the
headers column already formatted (``k:v`` pairs joined by the headers separator, or
``NO_HEADERS``), when ``FIELD_HEADERS`` is set.

``line_sizes`` gives each line's length (the caller allocates the output), ``write_lines``
writes them; integers print as Java's ``Long.toString`` (decimal, ``-`` for negatives).
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel

FIELD_TIMESTAMP = 1
FIELD_PARTITION = 2
FIELD_OFFSET = 4
FIELD_DELIVERY = 8
FIELD_EPOCH = 16
FIELD_HEADERS = 32
FIELD_KEY = 64
FIELD_VALUE = 128

# (module-level arrays are constants to numba)
_CREATE_TIME = np.frombuffer(b"CreateTime:", np.uint8)
_LOG_APPEND_TIME = np.frombuffer(b"LogAppendTime:", np.uint8)
_NO_TIMESTAMP = np.frombuffer(b"NO_TIMESTAMP", np.uint8)
_PARTITION = np.frombuffer(b"Partition:", np.uint8)
_OFFSET = np.frombuffer(b"Offset:", np.uint8)
_DELIVERY = np.frombuffer(b"Delivery:NOT_PRESENT", np.uint8)
_EPOCH = np.frombuffer(b"Epoch:NOT_PRESENT", np.uint8)


_INT64_MIN = -9223372036854775807 - 1
_INT64_MIN_TEXT = np.frombuffer(b"-9223372036854775808", np.uint8)


_POW10 = np.array([10 ** i for i in range(19)], np.int64)
# "00" "01" ... "99": two digits per division when writing a number
_PAIRS = np.frombuffer("".join(f"{i:02d}" for i in range(100)).encode(), np.uint8)


@kernel
def _positive_digits(v):
    n = 1
    while n < 19 and v >= _POW10[n]:
        n += 1
    return n


@kernel
def _digits(v):
    """Characters of ``v`` in decimal (with the sign)."""
    if v < 0:
        if v == _INT64_MIN:  # (no positive int64 to negate it into)
            return _INT64_MIN_TEXT.shape[0]
        return 1 + _positive_digits(-v)
    return _positive_digits(v)


@kernel
def _write_int(out, pos, v):
    """Write ``v`` in decimal at ``pos``; returns the position after it."""
    if v == _INT64_MIN:
        return _copy(out, pos, _INT64_MIN_TEXT, 0, _INT64_MIN_TEXT.shape[0])
    end = pos + _digits(v)
    if v < 0:
        out[pos] = 45  # '-'
        v = -v
    p = end
    while v >= 100:
        r = v % 100
        v //= 100
        out[p - 2] = _PAIRS[2 * r]
        out[p - 1] = _PAIRS[2 * r + 1]
        p -= 2
    if v >= 10:
        out[p - 2] = _PAIRS[2 * v]
        out[p - 1] = _PAIRS[2 * v + 1]
    else:
        out[p - 1] = 48 + v
    return end


@kernel
def _copy(out, pos, src, start, end):
    n = end - start
    if n > 8:  # (a slice copy is a memmove: twice a byte loop's speed on 100 B values)
        out[pos:pos + n] = src[start:end]
        return pos + n
    for j in range(start, end):
        out[pos] = src[j]
        pos += 1
    return pos


@kernel
def _enabled_after(fields, bit):
    """Whether a field after ``bit`` is enabled (a key separator follows ``bit``'s field)."""
    return (fields & ~((bit << 1) - 1) & 0xFF) != 0


@kernel
def line_sizes(fields, n, timestamps, timestamp_types, offsets, partition,
               key_offsets, key_valid, value_offsets, value_valid, header_offsets,
               key_sep_len, line_sep_len, null_len, sizes):
    """``sizes[i]`` = the length of row ``i``'s line; returns the total (0 when no field is
    enabled: Kafka prints nothing then)."""
    if fields & 0xFF == 0:
        for i in range(n):
            sizes[i] = 0
        return 0
    fixed = 0
    nfields = 0
    for b in range(8):
        if fields & (1 << b):
            nfields += 1
    fixed += (nfields - 1) * key_sep_len + line_sep_len
    if fields & FIELD_PARTITION:
        fixed += _PARTITION.shape[0] + _digits(partition)
    if fields & FIELD_DELIVERY:
        fixed += _DELIVERY.shape[0]
    if fields & FIELD_EPOCH:
        fixed += _EPOCH.shape[0]
    total = 0
    for i in range(n):
        s = fixed
        if fields & FIELD_TIMESTAMP:
            t = timestamp_types[i]
            if t == 0:
                s += _CREATE_TIME.shape[0] + _digits(timestamps[i])
            elif t == 1:
                s += _LOG_APPEND_TIME.shape[0] + _digits(timestamps[i])
            else:
                s += _NO_TIMESTAMP.shape[0]
        if fields & FIELD_OFFSET:
            s += _OFFSET.shape[0] + _digits(offsets[i])
        if fields & FIELD_HEADERS:
            s += header_offsets[i + 1] - header_offsets[i]
        if fields & FIELD_KEY:
            s += key_offsets[i + 1] - key_offsets[i] if key_valid[i] else null_len
        if fields & FIELD_VALUE:
            s += value_offsets[i + 1] - value_offsets[i] if value_valid[i] else null_len
        sizes[i] = s
        total += s
    return total


@kernel
def _sep(out, pos, fields, bit, key_sep, line_sep):
    if _enabled_after(fields, bit):
        return _copy(out, pos, key_sep, 0, key_sep.shape[0])
    return _copy(out, pos, line_sep, 0, line_sep.shape[0])


@kernel
def write_lines(fields, n, timestamps, timestamp_types, offsets, partition,
                key_data, key_offsets, key_valid, value_data, value_offsets, value_valid,
                header_data, header_offsets, key_sep, line_sep, null_literal, out):
    """Write every row's line into ``out`` (sized by :func:`line_sizes`); returns the
    number of bytes written."""
    pos = 0
    if fields & 0xFF == 0:
        return 0
    for i in range(n):
        if fields & FIELD_TIMESTAMP:
            t = timestamp_types[i]
            if t == 0:
                pos = _copy(out, pos, _CREATE_TIME, 0, _CREATE_TIME.shape[0])
                pos = _write_int(out, pos, timestamps[i])
            elif t == 1:
                pos = _copy(out, pos, _LOG_APPEND_TIME, 0, _LOG_APPEND_TIME.shape[0])
                pos = _write_int(out, pos, timestamps[i])
            else:
                pos = _copy(out, pos, _NO_TIMESTAMP, 0, _NO_TIMESTAMP.shape[0])
            pos = _sep(out, pos, fields, FIELD_TIMESTAMP, key_sep, line_sep)
        if fields & FIELD_PARTITION:
            pos = _copy(out, pos, _PARTITION, 0, _PARTITION.shape[0])
            pos = _write_int(out, pos, partition)
            pos = _sep(out, pos, fields, FIELD_PARTITION, key_sep, line_sep)
        if fields & FIELD_OFFSET:
            pos = _copy(out, pos, _OFFSET, 0, _OFFSET.shape[0])
            pos = _write_int(out, pos, offsets[i])
            pos = _sep(out, pos, fields, FIELD_OFFSET, key_sep, line_sep)
        if fields & FIELD_DELIVERY:
            pos = _copy(out, pos, _DELIVERY, 0, _DELIVERY.shape[0])
            pos = _sep(out, pos, fields, FIELD_DELIVERY, key_sep, line_sep)
        if fields & FIELD_EPOCH:
            pos = _copy(out, pos, _EPOCH, 0, _EPOCH.shape[0])
            pos = _sep(out, pos, fields, FIELD_EPOCH, key_sep, line_sep)
        if fields & FIELD_HEADERS:
            pos = _copy(out, pos, header_data, header_offsets[i], header_offsets[i + 1])
            pos = _sep(out, pos, fields, FIELD_HEADERS, key_sep, line_sep)
        if fields & FIELD_KEY:
            if key_valid[i]:
                pos = _copy(out, pos, key_data, key_offsets[i], key_offsets[i + 1])
            else:
                pos = _copy(out, pos, null_literal, 0, null_literal.shape[0])
            pos = _sep(out, pos, fields, FIELD_KEY, key_sep, line_sep)
        if fields & FIELD_VALUE:
            if value_valid[i]:
                pos = _copy(out, pos, value_data, value_offsets[i], value_offsets[i + 1])
            else:
                pos = _copy(out, pos, null_literal, 0, null_literal.shape[0])
            pos = _copy(out, pos, line_sep, 0, line_sep.shape[0])
    return pos
