"""native.records_encode kernels against the plain-Python oracle in
tests/reference/records_encode.py, and encode -> decode kernel round trips."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from kafkalog.native import records_decode as kd
from kafkalog.native import records_encode as ke

from tests.reference import records_encode as ref

blob = st.one_of(st.none(), st.binary(max_size=10))
record = st.tuples(
    st.integers(-(2**63), 2**63 - 1), blob, blob,
    st.lists(st.tuples(st.binary(max_size=4), blob), max_size=3),
)


def _pack(items):
    valid = np.array([x is not None for x in items], bool)
    offs = np.zeros(len(items) + 1, np.int64)
    offs[1:] = np.cumsum([0 if x is None else len(x) for x in items])
    data = np.frombuffer(b"".join(x for x in items if x is not None), np.uint8)
    return data, offs, valid


def _columns(recs):
    kd_, ko, kv = _pack([r[1] for r in recs])
    vd, vo, vv = _pack([r[2] for r in recs])
    flat = [h for r in recs for h in r[3]]
    hkd, hko, _ = _pack([h[0] for h in flat])
    hvd, hvo, hvv = _pack([h[1] for h in flat])
    hoffs = np.zeros(len(recs) + 1, np.int64)
    hoffs[1:] = np.cumsum([len(r[3]) for r in recs])
    ts = np.array([r[0] for r in recs], np.int64)
    return (ts, kd_, ko, kv, vd, vo, vv, hoffs, hkd, hko, hvd, hvo, hvv)


def _bounds(n, per_batch):
    return np.append(np.arange(0, n, per_batch, dtype=np.int64), np.int64(n)) if n else \
        np.zeros(1, np.int64)


def _header_bytes(cols, n):
    """header_sizes through kernel and reference: they must agree."""
    hoffs, hkd, hko, hvd, hvo, hvv = cols[7:]
    k_sizes = np.zeros(n, np.int64)
    r_sizes = np.zeros(n, np.int64)
    args = (hoffs, hko, np.int64(hkd.shape[0]), hvo, hvv, np.int64(hvd.shape[0]), np.int64(n))
    kret = tuple(int(x) for x in ke.header_sizes(*args, k_sizes))
    rret = tuple(int(x) for x in ref.header_sizes(*args, r_sizes))
    assert kret == rret
    if kret[0] == ke.ERR_OK:
        assert k_sizes.tolist() == r_sizes.tolist()
    return kret, k_sizes


def _both(bounds, cols, header_size=3, capacity=None):
    """Run encode_batches through kernel and reference; return (ret, out, starts, ends)."""
    n = int(bounds[-1]) if bounds.shape[0] else 0
    hret, header_bytes = _header_bytes(cols, n)
    if hret[0] != ke.ERR_OK:
        return hret, None
    nb = max(bounds.shape[0] - 1, 0)
    cap = capacity if capacity is not None else (
        nb * header_size + n * ke.MAX_RECORD_OVERHEAD + int(header_bytes.sum())
        + cols[1].shape[0] + cols[4].shape[0])
    results = []
    for impl in (ke, ref):
        out = np.full(cap, 0xAB, np.uint8)
        starts = np.zeros(nb, np.int64)
        ends = np.zeros(nb, np.int64)
        ret = tuple(int(x) for x in impl.encode_batches(
            bounds, np.int64(header_size), *cols, header_bytes, out, starts, ends))
        results.append((ret, out, starts, ends))
    (kret, kout, ks, ke_), (rret, rout, rs, re_) = results
    assert kret[:2] == rret[:2]
    if kret[0] != ke.ERR_OK:
        return kret, None
    assert kret == rret
    assert bytes(kout) == bytes(rout)
    assert ks.tolist() == rs.tolist() and ke_.tolist() == re_.tolist()
    return kret, (kout, ks, ke_)


@settings(max_examples=200, deadline=None)
@given(st.lists(record, max_size=8), st.integers(1, 4))
def test_kernels_match_reference_and_round_trip(recs, per_batch) -> None:
    cols = _columns(recs)
    bounds = _bounds(len(recs), per_batch)
    ret, got = _both(bounds, cols)
    assert ret[:2] == (ke.ERR_OK, -1)
    if not recs:
        return
    out, starts, ends = got
    area = ends - starts
    # decode what was written with the decode kernel: same columns back
    nb = starts.shape[0]
    counts = np.diff(bounds)
    base_ts = cols[0][bounds[:-1]]
    ro = out.view()
    ro.flags.writeable = False
    n = len(recs)
    o = dict(
        offsets=np.zeros(n, np.int64), timestamps=np.zeros(n, np.int64),
        timestamp_types=np.zeros(n, np.int32), key_offsets=np.zeros(n + 1, np.int64),
        key_data=np.zeros(out.shape[0], np.uint8), key_valid=np.zeros(n, bool),
        value_offsets=np.zeros(n + 1, np.int64), value_data=np.zeros(out.shape[0], np.uint8),
        value_valid=np.zeros(n, bool), header_pos=np.zeros(n, np.int64),
        header_count=np.zeros(n, np.int32), state=np.zeros(6, np.int64))
    k, err, _, _ = kd.decode_records(
        ro, starts, starts + area, bounds[:-1], base_ts, np.zeros(nb, np.int8),
        np.zeros(nb, np.int64), counts, np.int64(-(2**63)), np.int64(2**63 - 1), *o.values())
    assert (int(k), int(err)) == (n, 0)
    assert o["offsets"].tolist() == list(range(n))
    assert o["timestamps"].tolist() == [r[0] for r in recs]
    keys = [None if not o["key_valid"][i] else
            bytes(o["key_data"][o["key_offsets"][i]:o["key_offsets"][i + 1]]) for i in range(n)]
    assert keys == [r[1] for r in recs]
    assert o["header_count"].tolist() == [len(r[3]) for r in recs]


@settings(max_examples=200, deadline=None)
@given(st.lists(record, min_size=1, max_size=5), st.data())
def test_bad_offsets_are_reported_not_read(recs, data) -> None:
    cols = list(_columns(recs))
    which = data.draw(st.sampled_from([2, 5, 7, 9, 11]))  # an offsets array
    arr = cols[which].copy()
    i = data.draw(st.integers(0, arr.shape[0] - 1))
    arr[i] = data.draw(st.sampled_from([-1, 10**6, -(2**40), 2**40]))
    cols[which] = arr
    ret, _ = _both(_bounds(len(recs), 2), tuple(cols))
    assert ret[0] in (ke.ERR_OK, ke.ERR_BAD_OFFSETS)


def test_short_arrays_and_bad_bounds() -> None:
    cols = _columns([(1, b"k", b"v", [])] * 3)
    assert _both(np.array([0, 4], np.int64), cols)[0][:2] == (ke.ERR_BAD_OFFSETS, 0)
    assert _both(np.array([0, 2, 1], np.int64), cols)[0][:2] == (ke.ERR_BAD_OFFSETS, 0)
    assert _both(np.array([-1, 2], np.int64), cols)[0][:2] == (ke.ERR_BAD_OFFSETS, 0)
    ret, got = _both(np.array([0, 3], np.int64), cols, header_size=0)
    assert ret[0] == ke.ERR_OK
    exact = ret[2]
    assert _both(np.array([0, 3], np.int64), cols, header_size=0, capacity=exact)[0][0] == 0
    assert _both(np.array([0, 3], np.int64), cols, header_size=0,
                 capacity=exact - 1)[0][:2] == (ke.ERR_OUTPUT_FULL, 2)


def test_header_bytes_must_match_the_headers() -> None:
    cols = _columns([(1, b"k", b"v", [(b"h", b"x")])])
    wrong = np.ones(1, np.int64)  # claims no headers
    out = np.zeros(100, np.uint8)
    args = (np.array([0, 1], np.int64), np.int64(0), *cols, wrong, out, np.zeros(1, np.int64),
            np.zeros(1, np.int64))
    assert tuple(ke.encode_batches(*args))[:2] == (ke.ERR_BAD_OFFSETS, 0)
    assert tuple(ref.encode_batches(*args))[:2] == (ke.ERR_BAD_OFFSETS, 0)


def test_vector_c_record_bytes() -> None:
    # spec 1.7 C: key k, value v, headers h1=x, h2=null; records area of the vector
    cols = _columns([(1700000000000, b"k", b"v", [(b"h1", b"x"), (b"h2", None)])])
    ret, (out, starts, ends) = _both(_bounds(1, 1), cols, header_size=0)
    assert bytes(out[:ret[2]]).hex() == "22000000026b027604046831027804683201"
