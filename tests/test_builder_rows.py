"""The columnar row path of ``encode_batch`` / ``Log.append`` writes the same bytes as the
per-record writer it replaced (kept in tests/reference/builder_rows.py), for any records,
headers, codecs and batch options; the C encoder equals its Python twin; the C ``Record``
constructor makes the same objects and raises the same errors as ``Record.__new__``."""

from __future__ import annotations

import os
import pickle

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkalog import Record
from kafkalog.clock import ManualClock
from kafkalog.log import Log
from kafkalog.records import builder
from kafkalog.records.record import FAST_CONSTRUCTOR
from tests.reference import builder_rows as reference

try:
    from kafkalog.native import _rows
except ImportError:  # pragma: no cover - the extension is optional
    _rows = None

@pytest.fixture(autouse=True)
def _row_path_for_any_size(monkeypatch: pytest.MonkeyPatch) -> None:
    # small batches go through the per-record path by design: take the row path for all here
    monkeypatch.setattr(builder, "ROW_KERNEL_MIN_RECORDS", 1)


SETTINGS = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])
BYTES = st.one_of(st.none(), st.binary(max_size=40))
HEADER = st.tuples(st.text(max_size=4), st.one_of(st.none(), st.binary(max_size=6)))
HEADERS = st.one_of(st.just(()), st.none(), st.lists(HEADER, max_size=3),
                    st.lists(HEADER, max_size=3).map(tuple))
TIMESTAMP = st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1), st.integers(-2, 2**42),
                      st.just(True))
# anything encode_batch takes or rejects: odd sequences, non-bytes, offsets, big timestamps
ODD = st.one_of(
    st.tuples(BYTES, BYTES, TIMESTAMP, HEADERS, st.integers(0, 5)),
    st.tuples(st.just(bytearray(b"ba")), BYTES),
    st.tuples(BYTES, st.just(memoryview(b"mv"))),
    st.tuples(BYTES, BYTES, st.integers(2**63, 2**64)),
    st.tuples(BYTES, BYTES, st.none(), st.lists(st.tuples(st.just("\ud800"), BYTES),
                                                min_size=1, max_size=1)),
    st.tuples(BYTES, BYTES, st.none(), st.just([["k", b"list-pair"]])),
    st.tuples(BYTES),
    st.lists(BYTES, min_size=2, max_size=2),
    st.tuples(st.text(max_size=2), BYTES),
)
RECORD = st.one_of(
    st.builds(Record, BYTES, BYTES, TIMESTAMP.filter(lambda t: t is not True), HEADERS,
              offset=st.none()),
    st.tuples(BYTES, BYTES),
    st.tuples(BYTES, BYTES, TIMESTAMP),
    st.tuples(BYTES, BYTES, TIMESTAMP, HEADERS),
)
OPTIONS = st.fixed_dictionaries({}, optional={
    "base_offset": st.integers(-5, 2**62),
    "compression": st.sampled_from(["none", "gzip", "snappy", "lz4", "zstd", 0, 3]),
    "timestamp_type": st.sampled_from(["create", "log_append"]),
    "producer_id": st.integers(-1, 2**40),
    "producer_epoch": st.integers(-1, 300),
    "base_sequence": st.integers(-1, 2**31 - 1),
    "partition_leader_epoch": st.integers(-1, 2**31 - 1),
    "transactional": st.booleans(),
    "control": st.booleans(),
    "log_append_time": st.integers(0, 2**41),
    "compression_level": st.none(),
})


def _outcome(fn: object, *args: object, **kw: object) -> object:
    try:
        return ("ok", fn(*args, **kw))  # type: ignore[operator]
    except Exception as e:  # noqa: BLE001 - compared: same type and message on both paths
        return ("error", type(e), str(e))


@SETTINGS
@given(st.lists(RECORD, max_size=30), OPTIONS)
def test_same_bytes_as_the_per_record_writer(records: list, options: dict) -> None:
    options.setdefault("log_append_time", 1_700_000_000_000)  # deterministic either way
    assert _outcome(builder.encode_batch, records, **options) == _outcome(
        reference.encode_batch, records, **options)


@SETTINGS
@given(st.lists(st.one_of(RECORD, ODD), min_size=1, max_size=12))
def test_odd_records_same_outcome(records: list) -> None:
    """Whatever the row path declines goes to the per-record path: same bytes or error."""
    assert _outcome(builder.encode_batch, records) == _outcome(reference.encode_batch, records)


@pytest.mark.skipif(_rows is None, reason="the optional C extension is not built")
@SETTINGS
@given(st.lists(st.one_of(RECORD, ODD), max_size=12), st.integers(-(2**63), 2**63 - 1),
       st.sampled_from([0, 61, 3]))
def test_c_encode_records_equals_python_twin(records: list, default: int, room: int) -> None:
    """The C encoder writes the bytes the flattening + columnar kernel twin writes, and
    declines (None) exactly the records the twin declines."""
    assert _rows.encode_records(records, default, room) == builder._encode_records_py(
        records, default, room)


@pytest.mark.skipif(_rows is None, reason="the optional C extension is not built")
def test_c_encode_records_other_sequences_and_sizes() -> None:
    recs = [Record(b"k", b"v", 1)]
    assert _rows.encode_records(iter(recs), -1, 0) is None
    assert builder._encode_records_py(iter(recs), -1, 0) is None
    assert _rows.encode_records(tuple(recs), -1, 0) == builder._encode_records_py(
        tuple(recs), -1, 0)
    assert _rows.encode_records([], -1, 0) is None and builder._encode_records_py([], -1, 0) is None
    # a key of 300 bytes (2-byte length varint), a header-heavy record, a null everything
    big = [Record(b"x" * 300, b"y" * 70_000, 5, [("h" * 200, b"z" * 130), ("e", None)]),
           Record(None, None, None), Record(b"", b"", -1, [("", b"")])]
    out = _rows.encode_records(big, 7, 61)
    assert out == builder._encode_records_py(big, 7, 61)
    data, n, first, max_ts = out
    assert (n, first, max_ts) == (3, 5, 7) and bytes(data[:61]) == bytes(61)
    with pytest.raises(ValueError):
        _rows.encode_records(big, 7, -1)


@pytest.mark.skipif(not FAST_CONSTRUCTOR, reason="the C constructor is not active")
def test_record_dealloc_frees_what_it_holds() -> None:
    """Records (and a subclass's instances) release their fields when dropped, however
    deeply they nest (the trashcan path)."""
    import sys
    import weakref

    class Value:  # (a GC-tracked value: the records holding it stay tracked)
        pass

    v = Value()
    ref = weakref.ref(v)
    b = b"an untracked value " * 3
    base_b = sys.getrefcount(b)
    atoms = [Record(b"k", b, 1) for _ in range(100)]
    assert sys.getrefcount(b) == base_b + 100
    del atoms
    assert sys.getrefcount(b) == base_b
    before = sys.getrefcount(v)
    recs = [Record(b"k", v, 1) for _ in range(100)]
    assert sys.getrefcount(v) == before + 100
    del recs
    assert sys.getrefcount(v) == before

    class Sub(Record):
        __slots__ = ()

    subs = [Sub(b"k", v) for _ in range(10)]
    assert type(subs[0]) is Sub and sys.getrefcount(v) == before + 10
    del subs
    assert sys.getrefcount(v) == before
    nested: object = v
    for _ in range(200_000):  # deeper than the C stack allows without the trashcan
        nested = Record(b"k", nested)
    del nested
    assert sys.getrefcount(v) == before
    del v
    assert ref() is None


@pytest.mark.skipif(not FAST_CONSTRUCTOR, reason="the C constructor is not active")
def test_freed_records_are_reused_as_new_ones() -> None:
    """Records come back from the constructor's free list as new: their own fields, tracked
    by the collector only when they could be in a cycle, and the class's reference count
    balanced. Records of every origin go through the list: the constructor's, ``__new__``'s
    (``_replace``) and the decoders' ``tuple.__new__``; more of them than the list holds.
    (From the second round on, the tracked records are built from untracked ones' memory.)"""
    import gc
    import sys

    from kafkalog.records.record import _make_record

    gc.collect()  # (records left in cycles by earlier tests would be freed mid-test)
    before = sys.getrefcount(Record)
    for round_ in range(3):
        tracked = [Record(b"k", [i]) for i in range(6000)]
        assert all(gc.is_tracked(r) for r in tracked)
        replaced = [r._replace(value=b"v") for r in tracked[:100]]
        decoded = [_make_record(b"d", b"v", i, (), i) for i in range(100)]
        del tracked, replaced, decoded
        atoms = [Record(b"k%d" % i, b"v", round_ * 10_000 + i) for i in range(6000)]
        assert not any(gc.is_tracked(r) for r in atoms)
        assert [tuple(r) for r in atoms] == [
            (b"k%d" % i, b"v", round_ * 10_000 + i, (), None) for i in range(6000)]
        with_headers = [Record(None, None, i, [("h", b"x")]) for i in range(6000)]
        assert all(r.headers == (("h", b"x"),) and r.offset is None for r in with_headers)
        # the list, the loop variable and the call hold the only references
        assert {sys.getrefcount(r) for r in atoms} == {3}
        del atoms, with_headers
    gc.collect()
    assert sys.getrefcount(Record) == before


@SETTINGS
@given(st.lists(RECORD, min_size=1, max_size=20), st.sampled_from(["none", "lz4"]))
def test_log_append_same_bytes_as_per_record_path(tmp_path_factory: pytest.TempPathFactory,
                                                  records: list, codec: str) -> None:
    """Log.append of records (missing timestamps = the clock's now) writes what the
    per-record path wrote: encode_batch of the records with now filled in."""
    now = 1_700_000_123_456
    filled = [Record(*r) for r in records]
    filled = [r._replace(timestamp=now) if r.timestamp is None else r for r in filled]
    expected = _outcome(reference.encode_batch, filled, compression=codec,
                        partition_leader_epoch=4)
    d = tmp_path_factory.mktemp("log")
    with Log.open(d, clock=ManualClock(now)) as log:
        got = _outcome(log.append, records, compression=codec, partition_leader_epoch=4)
        if got[0] == "ok":
            got = ("ok", log.read(0, 1 << 20))
    assert got == expected


ARGS = st.one_of(
    st.tuples(BYTES, BYTES),
    st.tuples(BYTES, BYTES, TIMESTAMP),
    st.tuples(BYTES, BYTES, TIMESTAMP, HEADERS),
    st.tuples(BYTES, BYTES, TIMESTAMP, HEADERS, st.one_of(st.none(), st.integers(0, 9))),
    st.tuples(), st.tuples(BYTES), st.tuples(BYTES, BYTES, TIMESTAMP, HEADERS, st.none(),
                                             st.none()),
    st.tuples(BYTES, BYTES, TIMESTAMP, st.integers(0, 3)),
    st.tuples(BYTES, BYTES, TIMESTAMP, st.text(max_size=2)),
)
KWARGS = st.dictionaries(st.sampled_from(["key", "value", "timestamp", "headers", "offset",
                                          "bogus"]), st.one_of(BYTES, HEADERS), max_size=3)


@SETTINGS
@given(ARGS, KWARGS)
def test_record_constructor_same_as_new(args: tuple, kwargs: dict) -> None:
    def new() -> object:
        return Record.__new__(Record, *args, **kwargs)

    def call() -> object:
        return Record(*args, **kwargs)

    a, b = _outcome(call), _outcome(new)
    assert a == b
    if a[0] == "ok":
        r = a[1]
        assert type(r) is Record and type(r.headers) is tuple
        assert pickle.loads(pickle.dumps(r)) == r


def test_small_batches_take_the_per_record_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(builder, "ROW_KERNEL_MIN_RECORDS", 8)
    recs = [Record(b"k", b"v", i) for i in range(7)]
    assert builder.encode_records_v2(recs, -1, base_offset=0, codec=0, log_append=False) is None
    recs.append(Record(b"k", b"v", 7))
    data = builder.encode_records_v2(recs, -1, base_offset=0, codec=0, log_append=False)
    assert data == reference.encode_batch(recs)


@pytest.mark.skipif(not FAST_CONSTRUCTOR, reason="the C constructor is not active")
def test_atomic_records_are_not_tracked_by_the_gc() -> None:
    import gc

    assert not gc.is_tracked(Record(b"k", b"v", 1))
    assert not gc.is_tracked(Record(None, None, None, (), 5))
    assert gc.is_tracked(Record(b"k", [b"a list"]))  # could be in a cycle: tracked
    assert gc.is_tracked(Record(b"k", b"v", 1, [("h", b"x")]))
    cycle: list = []
    r = Record(b"k", cycle)
    cycle.append(r)
    del r, cycle
    assert gc.collect() >= 2  # the cycle through a tracked record is still collected


def test_fast_constructor_is_active_when_built() -> None:
    wanted = _rows is not None and not os.environ.get("KAFKALOG_NO_EXTENSIONS")
    assert FAST_CONSTRUCTOR == wanted
    assert (builder.encode_records is builder._encode_records_py) == (not wanted)
