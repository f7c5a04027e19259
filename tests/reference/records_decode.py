"""Plain-Python oracle for native/records_decode.py: Kafka's DefaultRecord.readFrom, one record
at a time, on ``bytes``, with Python integers wrapped to Java ``long`` explicitly.

Same signatures and output conventions as the kernels, so tests compare arrays directly.
"""

from __future__ import annotations

from tests.reference.varint import decode_varint, decode_varlong

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


def _long(x: int) -> int:
    return ((x + 2**63) % 2**64) - 2**63


class _Bad(Exception):
    def __init__(self, code: int) -> None:
        self.code = code


def _varint(src: bytes, p: int, end: int, long: bool = False) -> tuple[int, int]:
    v, q = (decode_varlong if long else decode_varint)(src, p, end)
    if q < 0:
        raise _Bad(ERR_TRUNCATED if q == -1 else ERR_BAD_VARINT)
    return v, q


def _read_record(src: bytes, p: int, end: int) -> tuple[int, dict]:
    length, p = _varint(src, p, end)
    if length < 0:
        raise _Bad(ERR_NEGATIVE_LENGTH)
    if length > end - p:
        raise _Bad(ERR_TRUNCATED)
    body_end = p + length
    if p >= body_end:
        raise _Bad(ERR_TRUNCATED)
    p += 1
    ts_delta, p = _varint(src, p, body_end, long=True)
    offset_delta, p = _varint(src, p, body_end)
    fields = {"ts_delta": ts_delta, "offset_delta": offset_delta}
    for name in ("key", "value"):
        n, p = _varint(src, p, body_end)
        fields[name + "_pos"] = p
        if n >= 0:
            if n > body_end - p:
                raise _Bad(ERR_TRUNCATED)
            p += n
        fields[name + "_len"] = max(n, -1)
        fields[name] = None if n < 0 else src[p - n:p]
    nh, p = _varint(src, p, body_end)
    if nh < 0:
        raise _Bad(ERR_NEGATIVE_HEADER_COUNT)
    fields["header_pos"] = p
    headers = []
    for _ in range(nh):
        hk, p = _varint(src, p, body_end)
        if hk < 0:
            raise _Bad(ERR_NEGATIVE_HEADER_KEY)
        if hk > body_end - p:
            raise _Bad(ERR_TRUNCATED)
        key = src[p:p + hk]
        p += hk
        hv, p = _varint(src, p, body_end)
        value = None
        if hv >= 0:
            if hv > body_end - p:
                raise _Bad(ERR_TRUNCATED)
            value = src[p:p + hv]
            p += hv
        headers.append((key, value))
    fields["headers"] = headers
    if p != body_end:
        raise _Bad(ERR_RECORD_SIZE)
    return p, fields


def decode_records(
    buf, batch_start, batch_end, batch_base_offset, batch_base_timestamp, batch_log_append,
    batch_max_timestamp, batch_record_count, start_offset, last_offset,
    offsets, timestamps, timestamp_types, key_offsets, key_data, key_valid,
    value_offsets, value_data, value_valid, header_pos, header_count, state,
):
    if len(state) < 6:
        return 0, ERR_OUTPUT_TOO_SMALL, -1, -1
    k, ko, vo, t0, t1, t2 = (int(x) for x in state[:6])
    nb = len(batch_start)
    if k < 0 or ko < 0 or vo < 0 or any(
            len(a) < nb for a in (batch_end, batch_base_offset, batch_base_timestamp,
                                  batch_log_append, batch_max_timestamp, batch_record_count)):
        return k, ERR_OUTPUT_TOO_SMALL, -1, -1
    rows = k + sum(max(int(c), 0) for c in batch_record_count[:nb])
    area = sum(max(int(e) - int(s), 0) for s, e in zip(batch_start, batch_end))
    if (min(len(offsets), len(timestamps), len(timestamp_types), len(key_valid),
            len(value_valid), len(header_pos), len(header_count)) < rows
            or min(len(key_offsets), len(value_offsets)) < rows + 1
            or len(key_data) < ko + area or len(value_data) < vo + area):
        return k, ERR_OUTPUT_TOO_SMALL, -1, -1
    src = bytes(buf)
    t = [t0, t1, t2]
    key_offsets[k] = ko
    value_offsets[k] = vo
    for i in range(nb):
        p, end = int(batch_start[i]), int(batch_end[i])
        if p < 0 or end < p or end > len(src):
            return k, ERR_BAD_BATCH_RANGE, i, p
        for _ in range(int(batch_record_count[i])):
            rec_start = p
            try:
                p, f = _read_record(src, p, end)
            except _Bad as e:
                return k, e.code, i, rec_start
            offset = _long(int(batch_base_offset[i]) + f["offset_delta"])
            if not start_offset <= offset <= last_offset:
                continue
            offsets[k] = offset
            if batch_log_append[i]:
                timestamps[k], timestamp_types[k] = batch_max_timestamp[i], 1
            else:
                timestamps[k] = _long(int(batch_base_timestamp[i]) + f["ts_delta"])
                timestamp_types[k] = 0
            key_valid[k] = f["key"] is not None
            if f["key"] is not None:
                key_data[ko:ko + len(f["key"])] = list(f["key"])
                ko += len(f["key"])
            key_offsets[k + 1] = ko
            value_valid[k] = f["value"] is not None
            if f["value"] is not None:
                value_data[vo:vo + len(f["value"])] = list(f["value"])
                vo += len(f["value"])
            value_offsets[k + 1] = vo
            header_count[k] = len(f["headers"])
            if f["headers"]:
                header_pos[k] = f["header_pos"]
            t[0] += len(f["headers"])
            t[1] += sum(len(hk) for hk, _ in f["headers"])
            t[2] += sum(len(hv) for _, hv in f["headers"] if hv is not None)
            k += 1
        if p != end:
            return k, ERR_RECORDS_REMAINING, i, p
    state[:6] = [k, ko, vo, *t]
    return k, ERR_OK, -1, -1


def gather_headers(buf, n, header_pos, header_count):
    """Returns the headers of each of the ``n`` records: ``[(key, value|None), ...]`` lists."""
    src = bytes(buf)
    out = []
    for r in range(n):
        headers = []
        if header_count[r] > 0:
            p = int(header_pos[r])
            for _ in range(int(header_count[r])):
                hk, p = decode_varint(src, p, len(src))
                hkey = src[p:p + hk]
                p += hk
                hv, p = decode_varint(src, p, len(src))
                hval = None
                if hv >= 0:
                    hval = src[p:p + hv]
                    p += hv
                headers.append((hkey, hval))
        out.append(headers)
    return out


def move_down(buf: bytearray, src: int, dst: int, n: int) -> int:
    """``buf[dst:dst + n] = buf[src:src + n]`` (``dst <= src``); 0 and no change when the
    ranges are not inside ``buf`` or ``dst > src``."""
    if n <= 0 or dst < 0 or dst > src or src + n > len(buf):
        return 0
    buf[dst:dst + n] = bytes(buf[src:src + n])
    return n


def move_up(buf: bytearray, src: int, dst: int, n: int) -> int:
    """``buf[dst:dst + n] = buf[src:src + n]`` (``dst >= src``); 0 and no change when the
    ranges are not inside ``buf`` or ``dst < src``."""
    if n <= 0 or src < 0 or dst < src or dst + n > len(buf):
        return 0
    buf[dst:dst + n] = bytes(buf[src:src + n])
    return n


def check_records(buf, start, end, count, base_timestamp, log_append, max_timestamp):
    """Oracle of the validate-only walk: ``(parsed, err, err_pos, in_sequence, max_ts,
    all_keys)`` (see the kernel's docstring)."""
    src = bytes(buf)
    p, end = int(start), int(end)
    if p < 0 or end < p or end > len(src):
        return 0, ERR_BAD_BATCH_RANGE, p, False, -1, False
    deltas, stamps, keys = [], [], []
    for _ in range(int(count)):
        rec_start = p
        try:
            p, f = _read_record(src, p, end)
        except _Bad as e:
            return len(deltas), e.code, rec_start, False, max(stamps, default=-1), False
        deltas.append(f["offset_delta"])
        stamps.append(int(max_timestamp) if log_append
                      else _long(int(base_timestamp) + f["ts_delta"]))
        keys.append(f["key"] is not None)
    if p != end:
        return len(deltas), ERR_RECORDS_REMAINING, p, False, max(stamps, default=-1), False
    return (len(deltas), ERR_OK, -1, deltas == list(range(len(deltas))),
            max(stamps, default=-1), all(keys))


def first_record_at_or_after(buf, start, end, count, base_offset, base_timestamp, log_append,
                             max_timestamp, target, min_offset):
    """Oracle of the one-batch timestamp search: ``(err, err_pos, index, offset, timestamp)``
    (see the kernel's docstring): every record parsed, the first qualifying one kept."""
    src = bytes(buf)
    p, end = int(start), int(end)
    if p < 0 or end < p or end > len(src):
        return ERR_BAD_BATCH_RANGE, p, -1, 0, 0
    found = None
    for j in range(int(count)):
        rec_start = p
        try:
            p, f = _read_record(src, p, end)
        except _Bad as e:
            return e.code, rec_start, -1, 0, 0
        ts = int(max_timestamp) if log_append else _long(int(base_timestamp) + f["ts_delta"])
        off = _long(int(base_offset) + f["offset_delta"])
        if found is None and ts >= target and off >= min_offset:
            found = (j, off, ts)
    if p != end:
        return ERR_RECORDS_REMAINING, p, -1, 0, 0
    return (ERR_OK, -1, *found) if found else (ERR_OK, -1, -1, 0, 0)
