"""Plain-Python oracle for native/records_encode.py: Kafka's DefaultRecord.writeTo, one record
at a time, building ``bytes`` with the reference varints. Same signatures as the kernels."""

from __future__ import annotations

from tests.reference.varint import encode_varint, encode_varlong

ERR_OK = 0
ERR_BAD_OFFSETS = 1
ERR_OUTPUT_FULL = 2
INT32_MAX = 2**31 - 1


def _long(x: int) -> int:
    return ((x + 2**63) % 2**64) - 2**63


def _varint(v: int, long: bool = False) -> bytes:
    out = bytearray(10)
    n = (encode_varlong if long else encode_varint)(out, 0, v)
    return bytes(out[:n])


def _item(offsets, valid, data, r):
    if not valid[r]:
        return None
    a, b = int(offsets[r]), int(offsets[r + 1])
    if a < 0 or b < a or b > len(data) or b - a > INT32_MAX:
        raise ValueError
    return bytes(data[a:b])


def _headers_bytes(header_offsets, header_key_data, header_key_offsets, header_value_data,
                   header_value_offsets, header_value_valid, r) -> bytes:
    h0, h1 = int(header_offsets[r]), int(header_offsets[r + 1])
    if h0 < 0 or h1 < h0 or h1 > len(header_value_valid):
        raise ValueError
    out = _varint(h1 - h0)
    for h in range(h0, h1):
        hk = _item(header_key_offsets, [True] * (h + 1), header_key_data, h)
        hv = _item(header_value_offsets, header_value_valid, header_value_data, h)
        out += _varint(len(hk)) + hk
        out += _varint(-1) if hv is None else _varint(len(hv)) + hv
    return out


def header_sizes(header_offsets, header_key_offsets, header_key_size, header_value_offsets,
                 header_value_valid, header_value_size, n, sizes):
    n_headers = len(header_value_valid)
    if (len(header_offsets) < n + 1 or len(header_key_offsets) < n_headers + 1
            or len(header_value_offsets) < n_headers + 1 or len(sizes) < n):
        return ERR_BAD_OFFSETS, 0
    fake_keys = bytes(int(header_key_size))
    fake_values = bytes(int(header_value_size))
    for r in range(int(n)):
        try:
            sizes[r] = len(_headers_bytes(header_offsets, fake_keys, header_key_offsets,
                                          fake_values, header_value_offsets,
                                          header_value_valid, r))
        except ValueError:
            return ERR_BAD_OFFSETS, r
    return ERR_OK, -1


def _shapes_ok(batch_bounds, timestamps, key_offsets, key_valid, value_offsets, value_valid,
               header_offsets, header_key_offsets, header_value_offsets, n_headers) -> bool:
    if len(header_key_offsets) < n_headers + 1 or len(header_value_offsets) < n_headers + 1:
        return False
    if len(batch_bounds) == 0:
        return True
    bounds = [int(x) for x in batch_bounds]
    if bounds[0] < 0 or any(b < a for a, b in zip(bounds, bounds[1:])):
        return False
    n = bounds[-1]
    return (len(timestamps) >= n and len(key_valid) >= n and len(value_valid) >= n
            and len(key_offsets) >= n + 1 and len(value_offsets) >= n + 1
            and len(header_offsets) >= n + 1)


def encode_batches(batch_bounds, header_size, timestamps, key_data, key_offsets, key_valid,
                   value_data, value_offsets, value_valid, header_offsets, header_key_data,
                   header_key_offsets, header_value_data, header_value_offsets,
                   header_value_valid, header_bytes, out, area_start, area_end):
    nb = len(batch_bounds) - 1
    if (not _shapes_ok(batch_bounds, timestamps, key_offsets, key_valid, value_offsets,
                       value_valid, header_offsets, header_key_offsets, header_value_offsets,
                       len(header_value_valid))
            or len(header_bytes) < batch_bounds[nb] or len(area_start) < nb
            or len(area_end) < nb or header_size < 0):
        return ERR_BAD_OFFSETS, 0, 0
    p = 0
    for b in range(nb):
        first, last = int(batch_bounds[b]), int(batch_bounds[b + 1])
        if p + header_size > len(out):
            return ERR_OUTPUT_FULL, first, p
        p += header_size
        area_start[b] = p
        for r in range(first, last):
            try:
                key = _item(key_offsets, key_valid, key_data, r)
                value = _item(value_offsets, value_valid, value_data, r)
                hb = _headers_bytes(header_offsets, header_key_data, header_key_offsets,
                                    header_value_data, header_value_offsets,
                                    header_value_valid, r)
            except ValueError:
                return ERR_BAD_OFFSETS, r, p
            if len(hb) != header_bytes[r]:
                return ERR_BAD_OFFSETS, r, p
            body = b"\x00" + _varint(_long(int(timestamps[r]) - int(timestamps[first])), True)
            body += _varint(r - first)
            for part in (key, value):
                body += _varint(-1) if part is None else _varint(len(part)) + part
            rec = _varint(len(body + hb)) + body + hb
            if p + len(rec) > len(out):
                return ERR_OUTPUT_FULL, r, p
            out[p:p + len(rec)] = list(rec)
            p += len(rec)
        area_end[b] = p
    return ERR_OK, -1, p
