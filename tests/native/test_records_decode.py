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


def _run_both(buf: bytes, scratch: bytes, batches: list[tuple], lo: int, last: int):
    """Decode through kernel and reference, one call per run of batches in the same buffer.

    batches: (src, start, end, base_offset, base_ts, log_append, max_ts, count); src 0 = buf,
    1 = scratch. Consecutive calls continue each other through ``state``, as columnar.py does.
    Returns the last call's result and the kernel's outputs (None after an error).
    """
    runs: list[list[tuple]] = []
    for bt in batches:
        if runs and runs[-1][0][0] == bt[0]:
            runs[-1].append(bt)
        else:
            runs.append([bt])
    cap = int(sum(b[7] for b in batches if b[7] > 0))
    data_cap = sum(max(b[2] - b[1], 0) for b in batches)
    results = []
    for impl in (kd, ref):
        out = dict(
            offsets=np.zeros(cap, np.int64), timestamps=np.zeros(cap, np.int64),
            timestamp_types=np.zeros(cap, np.int32), key_offsets=np.zeros(cap + 1, np.int64),
            key_data=np.zeros(data_cap, np.uint8), key_valid=np.zeros(cap, bool),
            value_offsets=np.zeros(cap + 1, np.int64), value_data=np.zeros(data_cap, np.uint8),
            value_valid=np.zeros(cap, bool), header_pos=np.zeros(cap, np.int64),
            header_count=np.zeros(cap, np.int32), state=np.zeros(6, np.int64),
        )
        rets = []
        headers: list = []
        ret = (0, ref.ERR_OK, -1, -1)
        for run in runs:
            source = scratch if run[0][0] else buf
            cols = list(zip(*run))[1:]
            arrs = [np.array(c, dt) for c, dt in zip(
                cols, [np.int64, np.int64, np.int64, np.int64, np.int8, np.int64, np.int64])]
            k0 = int(out["state"][0])
            h0 = out["state"][3:].copy()
            ret = tuple(int(x) for x in impl.decode_records(
                _ro(source), *arrs, np.int64(lo), np.int64(last), *out.values()))
            rets.append(ret)
            if ret[1] != ref.ERR_OK:
                break
            k1 = int(out["state"][0])
            headers.extend(_gather(impl, source, out, k0, k1, out["state"][3:] - h0))
        results.append((rets, out, headers))
    (krets, kout, kh), (rrets, rout, rh) = results
    assert krets == rrets
    ret = krets[-1] if krets else (0, ref.ERR_OK, -1, -1)
    if ret[1] != ref.ERR_OK:
        return ret, None
    k = ret[0]
    for name in ("offsets", "timestamps", "timestamp_types", "key_valid", "value_valid",
                 "header_count"):
        assert kout[name][:k].tolist() == rout[name][:k].tolist(), name
    for name in ("key_offsets", "value_offsets"):
        assert kout[name][:k + 1].tolist() == rout[name][:k + 1].tolist(), name
    for name in ("key_data", "value_data"):
        used = int(kout[name.replace("data", "offsets")][k])
        assert bytes(kout[name][:used]) == bytes(rout[name][:used]), name
    assert kout["state"].tolist() == rout["state"].tolist()
    has = kout["header_count"][:k] > 0
    assert kout["header_pos"][:k][has].tolist() == rout["header_pos"][:k][has].tolist()
    assert kh == rh
    return ret, kout


def _gather(impl, source: bytes, out: dict, k0: int, k1: int, grown) -> list:
    """Headers of rows k0..k1 (one call's rows), as lists of (key, value) per row."""
    pos, count = out["header_pos"][k0:k1], out["header_count"][k0:k1]
    if impl is ref:
        return ref.gather_headers(source, k1 - k0, pos, count)
    t_h, t_hk, t_hv = (int(x) for x in grown)
    hoffs = np.zeros(k1 - k0 + 1, np.int64)
    hko = np.zeros(t_h + 1, np.int64)
    hkd = np.zeros(t_hk, np.uint8)
    hvo = np.zeros(t_h + 1, np.int64)
    hvd = np.zeros(t_hv, np.uint8)
    hvv = np.zeros(t_h, bool)
    n = kd.gather_headers(_ro(source), np.int64(k1 - k0), pos, count, hoffs, hko, hkd, hvo, hvd,
                          hvv)
    assert n == t_h
    got = []
    for r in range(k1 - k0):
        got.append([(bytes(hkd[hko[h]:hko[h + 1]]),
                     bytes(hvd[hvo[h]:hvo[h + 1]]) if hvv[h] else None)
                    for h in range(int(hoffs[r]), int(hoffs[r + 1]))])
    return got


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
    area, count = _damaged_area(recs, data)
    _run_both(area, b"", [(0, 0, len(area), 100, 5, 0, 9, count)], *INT64)


def _damaged_area(recs: list, data: st.DataObject) -> tuple[bytes, int]:
    """The records area of ``recs`` with 1-3 bits flipped, cut somewhere, and a record count
    from 0 to one more than it holds."""
    area = bytearray(b"".join(_record(*r) for r in recs))
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(area) - 1))
        area[i] ^= 1 << data.draw(st.integers(0, 7))
    cut = data.draw(st.integers(0, len(area)))
    return bytes(area[:cut]), data.draw(st.integers(0, len(recs) + 1))


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


def test_outputs_too_small_are_refused_before_writing() -> None:
    area = _record(0, 0, b"key", b"value", [])
    batch = [np.zeros(1, np.int64), np.array([len(area)], np.int64), np.zeros(1, np.int64),
             np.zeros(1, np.int64), np.zeros(1, np.int8), np.zeros(1, np.int64),
             np.ones(1, np.int64)]
    for state in ([0, 0, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0]):
        for impl in (kd, ref):
            out = [np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1, np.int32),
                   np.zeros(2, np.int64), np.zeros(len(area) - (state == [0] * 6), np.uint8),
                   np.zeros(1, bool), np.zeros(2, np.int64), np.zeros(len(area), np.uint8),
                   np.zeros(1, bool), np.zeros(1, np.int64), np.zeros(1, np.int32),
                   np.array(state, np.int64)]
            ret = impl.decode_records(_ro(area), *batch, np.int64(INT64[0]), np.int64(INT64[1]),
                                      *out)
            assert tuple(int(x) for x in ret)[1:] == (ref.ERR_OUTPUT_TOO_SMALL, -1, -1)
            assert not out[4].any() and out[-1].tolist() == state


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


@settings(max_examples=600, deadline=None)
@given(st.sampled_from(["move_down", "move_up"]), st.binary(min_size=0, max_size=200),
       st.integers(-5, 210), st.integers(-5, 210), st.integers(-5, 210))
def test_moves_match_reference(name: str, data: bytes, src: int, dst: int, n: int) -> None:
    expected = bytearray(data)
    moved = getattr(ref, name)(expected, src, dst, n)
    buf = np.frombuffer(bytearray(data), np.uint8)
    assert int(getattr(kd, name)(buf, np.int64(src), np.int64(dst), np.int64(n))) == moved
    assert buf.tobytes() == bytes(expected)


def _check_both(data: bytes, start: int, end: int, count: int, base_ts: int, log_append: bool,
                max_ts: int) -> tuple:
    args = (_ro(data), start, end, count, base_ts, log_append, max_ts)
    got = tuple(int(x) if not isinstance(x, (bool, np.bool_)) else bool(x)
                for x in kd.check_records(*args))
    want = ref.check_records(*args)
    assert got == tuple(want)
    return got


@settings(max_examples=300, deadline=None)
@given(records, st.booleans(), st.integers(-(2**62), 2**62), st.booleans())
def test_check_records_matches_reference_on_valid_areas(recs, log_append, base_ts,
                                                       renumber) -> None:
    if renumber:  # the producer's numbering: offset delta j for record j
        recs = [(r[0], j, *r[2:]) for j, r in enumerate(recs)]
    area = b"\xee" + b"".join(_record(*r) for r in recs)
    got = _check_both(area, 1, len(area), len(recs), base_ts, log_append, base_ts + 3)
    assert got[1] == ref.ERR_OK
    if renumber:
        assert got[3] is True


@settings(max_examples=300, deadline=None)
@given(records.filter(bool), st.data())
def test_check_records_matches_reference_on_damaged_areas(recs, data) -> None:
    area, count = _damaged_area(recs, data)
    _check_both(area, 0, len(area), count, 5, False, 9)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=64), st.integers(0, 8), st.integers(-3, 70), st.integers(0, 70))
def test_check_records_matches_reference_on_arbitrary_bytes(data, count, start, end) -> None:
    _check_both(data, start, end, count, -(2**63) + 1, False, 0)


@settings(max_examples=200, deadline=None)
@given(records, st.data())
def test_check_records_agrees_with_decode_records(recs, data) -> None:
    # the validate-only walk and the decoder accept and refuse the same bytes (one parse)
    area = bytearray(b"".join(_record(*r) for r in recs))
    if area and data.draw(st.booleans()):
        area[data.draw(st.integers(0, len(area) - 1))] ^= 1 << data.draw(st.integers(0, 7))
    count = data.draw(st.integers(0, len(recs) + 1))
    chk = kd.check_records(_ro(bytes(area)), 0, len(area), count, 0, False, 0)
    ret, out = _run_both(bytes(area), b"", [(0, 0, len(area), 0, 0, 0, 0, count)], *INT64)
    assert (int(chk[1]), int(chk[2])) == (int(ret[1]), int(ret[3]))
    if ret[1] == ref.ERR_OK:
        n = int(ret[0])
        assert int(chk[0]) == n
        assert bool(chk[5]) == bool(np.all(out["key_valid"][:n]))
        assert int(chk[4]) == (int(out["timestamps"][:n].max()) if n else -1)


def _first_both(data: bytes, start: int, end: int, count: int, base_off: int, base_ts: int,
                log_append: bool, max_ts: int, target: int, min_offset: int) -> tuple:
    args = (_ro(data), start, end, count, base_off, base_ts, log_append, max_ts, target,
            min_offset)
    got = tuple(int(x) for x in kd.first_record_at_or_after(*args))
    assert got == tuple(ref.first_record_at_or_after(*args))
    return got


@settings(max_examples=300, deadline=None)
@given(records, st.integers(-(2**62), 2**62), st.integers(-(2**62), 2**62), st.booleans(),
       st.data())
def test_first_record_at_or_after_matches_reference_on_valid_areas(recs, base_off, base_ts,
                                                                   log_append, data) -> None:
    area = b"\xee" + b"".join(_record(*r) for r in recs)
    # targets near the records' own timestamps and offsets, so that some qualify
    ts = [base_ts + r[0] for r in recs] or [base_ts]
    offs = [base_off + r[1] for r in recs] or [base_off]
    target = data.draw(st.sampled_from(ts)) + data.draw(st.integers(-2, 2))
    min_offset = data.draw(st.sampled_from(offs)) + data.draw(st.integers(-2, 2))
    got = _first_both(area, 1, len(area), len(recs), base_off, base_ts, log_append,
                      base_ts + 3, target, min_offset)
    assert got[0] == ref.ERR_OK


@settings(max_examples=300, deadline=None)
@given(records.filter(bool), st.data())
def test_first_record_at_or_after_matches_reference_on_damaged_areas(recs, data) -> None:
    area, count = _damaged_area(recs, data)
    _first_both(area, 0, len(area), count, 100, 5, False, 9, 5, 100)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=64), st.integers(0, 8), st.integers(-3, 70), st.integers(0, 70),
       st.integers(-(2**63), 2**63 - 1))
def test_first_record_at_or_after_matches_reference_on_arbitrary_bytes(data, count, start, end,
                                                                      target) -> None:
    _first_both(data, start, end, count, 2**63 - 2, -(2**63) + 1, False, 0, target, -(2**63))


@settings(max_examples=200, deadline=None)
@given(records, st.data())
def test_first_record_at_or_after_agrees_with_check_records(recs, data) -> None:
    # the search and the validate-only walk accept and refuse the same bytes (one parse)
    area = bytearray(b"".join(_record(*r) for r in recs))
    if area and data.draw(st.booleans()):
        area[data.draw(st.integers(0, len(area) - 1))] ^= 1 << data.draw(st.integers(0, 7))
    count = data.draw(st.integers(0, len(recs) + 1))
    chk = kd.check_records(_ro(bytes(area)), 0, len(area), count, 0, False, 0)
    got = kd.first_record_at_or_after(_ro(bytes(area)), 0, len(area), count, 0, 0, False, 0,
                                      -(2**63), -(2**63))
    assert (int(got[0]), int(got[1])) == (int(chk[1]), int(chk[2]))
    if int(got[0]) == ref.ERR_OK:
        assert int(got[2]) == (0 if count else -1)  # everything qualifies: the first record
