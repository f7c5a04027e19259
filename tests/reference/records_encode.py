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


def _record_bytes(args, r, first) -> bytes:
    (timestamps, key_data, key_offsets, key_valid, value_data, value_offsets, value_valid,
     header_offsets, header_key_data, header_key_offsets, header_value_data,
     header_value_offsets, header_value_valid) = args
    key = _item(key_offsets, key_valid, key_data, r)
    value = _item(value_offsets, value_valid, value_data, r)
    body = b"\x00" + _varint(_long(int(timestamps[r]) - int(timestamps[first])), True)
    body += _varint(r - first)
    for part in (key, value):
        body += _varint(-1) if part is None else _varint(len(part)) + part
    h0, h1 = int(header_offsets[r]), int(header_offsets[r + 1])
    n_headers = len(header_value_valid)
    if h0 < 0 or h1 < h0 or h1 > n_headers:
        raise ValueError
    body += _varint(h1 - h0)
    for h in range(h0, h1):
        hk = _item(header_key_offsets, [True] * (h + 1), header_key_data, h)
        hv = _item(header_value_offsets, header_value_valid, header_value_data, h)
        body += _varint(len(hk)) + hk
        body += _varint(-1) if hv is None else _varint(len(hv)) + hv
    return _varint(len(body)) + body


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


def encoded_sizes(batch_bounds, timestamps, key_data, key_offsets, key_valid, value_data,
                  value_offsets, value_valid, header_offsets, header_key_data,
                  header_key_offsets, header_value_data, header_value_offsets,
                  header_value_valid, sizes):
    args = (timestamps, key_data, key_offsets, key_valid, value_data, value_offsets,
            value_valid, header_offsets, header_key_data, header_key_offsets,
            header_value_data, header_value_offsets, header_value_valid)
    if not _shapes_ok(batch_bounds, timestamps, key_offsets, key_valid, value_offsets,
                      value_valid, header_offsets, header_key_offsets, header_value_offsets,
                      len(header_value_valid)) or (
            len(batch_bounds) and len(sizes) < batch_bounds[-1]):
        return ERR_BAD_OFFSETS, 0
    for b in range(len(batch_bounds) - 1):
        first = int(batch_bounds[b])
        for r in range(first, int(batch_bounds[b + 1])):
            try:
                sizes[r] = len(_record_bytes(args, r, first))
            except ValueError:
                return ERR_BAD_OFFSETS, r
    return ERR_OK, -1


def encode_records(batch_bounds, area_start, timestamps, key_data, key_offsets, key_valid,
                   value_data, value_offsets, value_valid, header_offsets, header_key_data,
                   header_key_offsets, header_value_data, header_value_offsets,
                   header_value_valid, out):
    args = (timestamps, key_data, key_offsets, key_valid, value_data, value_offsets,
            value_valid, header_offsets, header_key_data, header_key_offsets,
            header_value_data, header_value_offsets, header_value_valid)
    if not _shapes_ok(batch_bounds, timestamps, key_offsets, key_valid, value_offsets,
                      value_valid, header_offsets, header_key_offsets, header_value_offsets,
                      len(header_value_valid)) or len(area_start) < len(batch_bounds) - 1:
        return ERR_BAD_OFFSETS, 0
    for b in range(len(batch_bounds) - 1):
        first = int(batch_bounds[b])
        p = int(area_start[b])
        for r in range(first, int(batch_bounds[b + 1])):
            try:
                rec = _record_bytes(args, r, first)
            except ValueError:
                return ERR_BAD_OFFSETS, r
            if p < 0 or p + len(rec) > len(out):
                return ERR_OUTPUT_FULL, r
            out[p:p + len(rec)] = list(rec)
            p += len(rec)
    return ERR_OK, -1
