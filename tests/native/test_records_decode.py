"""native.records_decode kernels against the plain-Python oracle in
tests/reference/records_decode.py: valid records areas, mutated ones and arbitrary bytes."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from kafkalog.native import records_decode as kd

from tests.reference import records_decode as ref
from tests.reference.varint import encode_varint, encode_varlong

INT64 = (-(2**63), 2**63 - 1)


def _varint(v: int, long: bool = False) -> bytes:
    out = bytearray(10)
    n = (encode_varlong if long else encode_varint)(out, 0, v)
    return bytes(out[:n])


def _record(ts_delta, off_delta, key, value, headers) -> bytes:
    body = b"\x00" + _varint(ts_delta, True) + _varint(off_delta)
    for part in (key, value):
        body += _varint(-1) if part is None else _varint(len(part)) + part
    body += _varint(len(headers))
    for hk, hv in headers:
        body += _varint(len(hk)) + hk
        body += _varint(-1) if hv is None else _varint(len(hv)) + hv
    return _varint(len(body)) + body


blob = st.one_of(st.none(), st.binary(max_size=12))
records = st.lists(
    st.tuples(
        st.integers(-(2**40), 2**40), st.integers(0, 2**31 - 1), blob, blob,
        st.lists(st.tuples(st.binary(max_size=5), blob), max_size=3),
    ),
    max_size=6,
)


def _ro(data: bytes) -> np.ndarray:
    a = np.frombuffer(data, np.uint8)
    return a  # frombuffer over bytes is already read-only


def _run_both(buf: bytes, scratch: bytes, batches: list[tuple], lo: int, hi: int):
    """batches: (src, start, end, base_offset, base_ts, log_append, max_ts, count)."""
    cols = list(zip(*batches)) if batches else [[]] * 8
    arrs = [np.array(c, dt) for c, dt in zip(
        cols, [np.int8, np.int64, np.int64, np.int64, np.int64, np.int8, np.int64, np.int64])]
    cap = int(sum(b[7] for b in batches if b[7] > 0))
    data_cap = len(buf) + len(scratch)
    results = []
    for impl in (kd, ref):
        out = dict(
            offsets=np.zeros(cap, np.int64), timestamps=np.zeros(cap, np.int64),
            timestamp_types=np.zeros(cap, np.int32), key_offsets=np.zeros(cap + 1, np.int64),
            key_data=np.zeros(data_cap, np.uint8), key_valid=np.zeros(cap, bool),
            value_offsets=np.zeros(cap + 1, np.int64), value_data=np.zeros(data_cap, np.uint8),
            value_valid=np.zeros(cap, bool), header_src=np.zeros(cap, np.int8),
            header_pos=np.zeros(cap, np.int64), header_count=np.zeros(cap, np.int32),
            totals=np.zeros(3, np.int64),
        )
        ret = impl.decode_records(_ro(buf), _ro(scratch), *arrs, np.int64(lo), np.int64(hi),
                                  *out.values())
        results.append((tuple(int(x) for x in ret), out))
    (kret, kout), (rret, rout) = results
    assert kret == rret
    k = kret[0]
    if kret[1] != ref.ERR_OK:
        return kret, None
    for name in ("offsets", "timestamps", "timestamp_types", "key_valid", "value_valid",
                 "header_count"):
        assert kout[name][:k].tolist() == rout[name][:k].tolist(), name
    for name in ("key_offsets", "value_offsets"):
        assert kout[name][:k + 1].tolist() == rout[name][:k + 1].tolist(), name
    for name in ("key_data", "value_data"):
        used = int(kout[name.replace("data", "offsets")][k])
        assert bytes(kout[name][:used]) == bytes(rout[name][:used]), name
    assert kout["totals"].tolist() == rout["totals"].tolist()
    has = kout["header_count"][:k] > 0
    assert kout["header_pos"][:k][has].tolist() == rout["header_pos"][:k][has].tolist()
    # headers: kernel gather vs reference gather
    t_h, t_hk, t_hv = (int(x) for x in kout["totals"])
    hoffs = np.zeros(k + 1, np.int64)
    hko = np.zeros(t_h + 1, np.int64)
    hkd = np.zeros(t_hk, np.uint8)
    hvo = np.zeros(t_h + 1, np.int64)
    hvd = np.zeros(t_hv, np.uint8)
    hvv = np.zeros(t_h, bool)
    n = kd.gather_headers(_ro(buf), _ro(scratch), np.int64(k), kout["header_src"],
                          kout["header_pos"], kout["header_count"], hoffs, hko, hkd, hvo, hvd, hvv)
    assert n == t_h
    expected = ref.gather_headers(buf, scratch, k, kout["header_src"], kout["header_pos"],
                                  kout["header_count"])
    got = []
    for r in range(k):
        hs = []
        for h in range(int(hoffs[r]), int(hoffs[r + 1])):
            hs.append((bytes(hkd[hko[h]:hko[h + 1]]),
                       bytes(hvd[hvo[h]:hvo[h + 1]]) if hvv[h] else None))
        got.append(hs)
    assert got == expected
    return kret, kout


def test_vector_c_from_spec() -> None:
    # spec 1.7 C: key k, value v, headers h1=x, h2=null, records area starts at byte 61
    data = bytes.fromhex(
        "000000000000000a000000430000000002b4e9301a0000000000000000018bcfe568000000018bcfe568"
        "00ffffffffffffffffffffffffffff0000000122000000026b027604046831027804683201")
    ret, out = _run_both(data, b"", [(0, 61, len(data), 10, 1700000000000, 0, 0, 1)],
                         *INT64)
    assert ret == (1, 0, -1, -1)
    assert out["offsets"][0] == 10 and out["timestamps"][0] == 1700000000000
    assert bytes(out["key_data"][:1]) == b"k" and bytes(out["value_data"][:1]) == b"v"


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(records, st.booleans(), st.booleans(),
                       st.integers(-(2**62), 2**62), st.integers(0, 2**40)), max_size=4),
    st.integers(-5, 10), st.integers(-5, 12),
)
def test_valid_areas_match_reference(batches, lo, hi) -> None:
    buf = bytearray(b"\xee" * 3)
    scratch = bytearray()
    descs = []
    for recs, in_scratch, log_append, base_offset, base_ts in batches:
        area = b"".join(_record(*r) for r in recs)
        target = scratch if in_scratch else buf
        start = len(target)
        target += area
        descs.append((int(in_scratch), start, len(target), base_offset, base_ts,
                      int(log_append), base_ts + 7, len(recs)))
        buf += b"\xee"  # junk between areas must not be read
    base = batches[0][3] if batches else 0
    ret, _ = _run_both(bytes(buf), bytes(scratch), descs, base + lo, base + hi)
    assert ret[1] == ref.ERR_OK


@settings(max_examples=300, deadline=None)
@given(records.filter(bool), st.data())
def test_mutated_areas_match_reference(recs, data) -> None:
    area = bytearray(b"".join(_record(*r) for r in recs))
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(area) - 1))
        area[i] ^= 1 << data.draw(st.integers(0, 7))
    cut = data.draw(st.integers(0, len(area)))
    count = data.draw(st.integers(0, len(recs) + 1))
    _run_both(bytes(area[:cut]), b"", [(0, 0, cut, 100, 5, 0, 9, count)], *INT64)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=64), st.integers(0, 8), st.integers(0, 70), st.integers(0, 70))
def test_arbitrary_bytes_match_reference(data, count, start, end) -> None:
    # includes records-area ranges outside the buffer (ERR_BAD_BATCH_RANGE)
    _run_both(data, data[::-1], [(0, start, end, 2**63 - 2, -(2**63) + 1, 0, 0, count),
                                 (1, 0, len(data), 0, 0, 1, 3, count)], *INT64)


def test_offset_and_timestamp_wrap_like_java_long() -> None:
    area = _record(-5, 3, b"k", None, [])
    ret, out = _run_both(area, b"", [(0, 0, len(area), 2**63 - 2, -(2**63) + 2, 0, 0, 1)],
                         *INT64)
    assert ret[1] == 0
    assert out["offsets"][0] == -(2**63) + 1  # (2**63 - 2) + 3 wraps
    assert out["timestamps"][0] == 2**63 - 3  # (-(2**63) + 2) - 5 wraps


def test_error_codes() -> None:
    good = _record(0, 0, b"k", b"v", [(b"h", None)])
    cases = {
        ref.ERR_RECORDS_REMAINING: (good + b"\x00", 1),
        ref.ERR_TRUNCATED: (good[:-1], 1),
        ref.ERR_NEGATIVE_LENGTH: (b"\x01" + good[1:], 1),
        ref.ERR_BAD_VARINT: (b"\xff\xff\xff\xff\xff\x01", 1),
    }
    for code, (area, count) in cases.items():
        ret, _ = _run_both(area, b"", [(0, 0, len(area), 0, 0, 0, 0, count)], *INT64)
        assert ret[1] == code, (code, ret)
    # a negative header key length: header count 1, key length -1
    body = b"\x00\x00\x00\x01\x01\x02\x01\x00"
    area = _varint(len(body)) + body
    ret, _ = _run_both(area, b"", [(0, 0, len(area), 0, 0, 0, 0, 1)], *INT64)
    assert ret[1] == ref.ERR_NEGATIVE_HEADER_KEY
    body = b"\x00\x00\x00\x01\x01\x01"  # header count -1
    area = _varint(len(body)) + body
    ret, _ = _run_both(area, b"", [(0, 0, len(area), 0, 0, 0, 0, 1)], *INT64)
    assert ret[1] == ref.ERR_NEGATIVE_HEADER_COUNT
    body = b"\x00\x00\x00\x01\x01\x00\x00"  # one byte more than the fields
    area = _varint(len(body)) + body
    ret, _ = _run_both(area, b"", [(0, 0, len(area), 0, 0, 0, 0, 1)], *INT64)
    assert ret[1] == ref.ERR_RECORD_SIZE
