"""One numba specialisation per kernel on the product's paths (``native._jit.kernel_input``).

numba compiles a kernel once per combination of its arguments' types (dtype, layout, read-only
flag); the columnar encode kernel takes ~6 s to compile. These record the argument types the
product passes for every kind of input it accepts and require them to be one signature.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numba
import numpy as np
import pyarrow as pa
import pytest
from kafkalog.native import index_search
from kafkalog.native import records_encode as _re
from kafkalog.native._jit import kernel_input

from kafkalog import Record
from kafkalog.records import builder, columnar


def test_kernel_input_is_a_read_only_view_when_it_fits() -> None:
    a = np.arange(5, dtype=np.int64)
    v = kernel_input(a, np.int64)
    assert np.shares_memory(v, a) and not v.flags.writeable and a.flags.writeable
    c = kernel_input(a.astype(np.int32), np.int64)  # another dtype: converted
    assert c.dtype == np.int64 and not c.flags.writeable
    s = kernel_input(a[::2], np.int64)  # strided: made contiguous
    assert s.flags.c_contiguous and s.tolist() == [0, 2, 4]


def _recorder(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[tuple]:
    seen: list[tuple] = []
    real = getattr(module, name)

    def record(*args: Any) -> Any:
        seen.append(tuple(numba.typeof(a) for a in args))
        return real(*args)

    monkeypatch.setattr(module, name, record)
    return seen


def test_encode_kernels_see_one_signature_for_every_input_kind(
        monkeypatch: pytest.MonkeyPatch) -> None:
    enc = _recorder(monkeypatch, _re, "encode_batches")
    sizes = _recorder(monkeypatch, _re, "header_sizes")
    n = 50
    keys = [b"k%d" % i for i in range(n)]
    values = [b"v" * (i % 7) for i in range(n)]
    ts = np.arange(n, dtype=np.int64)
    hdr = pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))
    headers = [[{"key": "h", "value": b"x"}] for _ in range(n)]
    tables = [
        # Arrow binary (int32 offsets, read-only buffers) and large_binary (int64 offsets)
        pa.table({"key": pa.array(keys), "value": pa.array(values), "timestamp": ts}),
        pa.table({"key": pa.array(keys, pa.large_binary()),
                  "value": pa.array(values, pa.large_binary()), "timestamp": ts}),
        pa.table({"key": pa.array(keys), "value": pa.array(values), "timestamp": ts,
                  "headers": pa.array(headers, hdr)}),
    ]
    for t in tables:
        columnar.encode_columns(t, records_per_batch=10)
    # decoded columns (writable numpy arrays) encoded again
    data = columnar.encode_columns(tables[2], records_per_batch=10)
    columnar.encode_columns(columnar.decode_columns(data), records_per_batch=10)
    # the plain-Python twin of the C row encoder uses the same kernel
    assert builder._encode_records_py([Record(b"k", b"v", 1)] * 9, -1, 61) is not None
    assert builder._encode_records_py(
        [Record(b"k", b"v", 1, [("h", b"x")])] * 9, -1, 61) is not None
    assert len(enc) >= 6 and len(sizes) >= 3
    assert len(set(enc)) == 1, set(enc)
    assert len(set(sizes)) == 1, set(sizes)


def test_index_searches_see_one_signature_for_writer_and_reader(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch
                                                                  ) -> None:
    """The writer's index buffer is a view of its mapping, a read-only reader's a private copy:
    the search kernels see the same type for both."""
    from kafkalog.index import offset_index, time_index

    seen = [_recorder(monkeypatch, offset_index, "_offset_index_lookup"),
            _recorder(monkeypatch, time_index, "_time_index_lookup")]
    seen += [_recorder(monkeypatch, index_search, name)
             for name in ("index_slot_for", "index_slots_for", "gather_entries")]

    def lookups() -> list[tuple]:
        return [sig for calls in seen for sig in calls]

    def read(oi: offset_index.OffsetIndex, ti: time_index.TimeIndex) -> None:
        oi.lookup(7)
        oi.lookup_many(np.array([3, 9], np.int64))
        ti.lookup(1005)
        ti.lookup_many(np.array([1003, 1009], np.int64))

    # the writer's index: a view of its mapping
    oi = offset_index.OffsetIndex(tmp_path / "0.index", 0, 4096)
    ti = time_index.TimeIndex(tmp_path / "0.timeindex", 0, 4096)
    for o in range(10):
        oi.append(o, o * 100)
        ti.maybe_append(1000 + o, o)
    oi.append_many_unlocked(np.arange(10, 20), np.arange(10, 20) * 100)
    ti.maybe_append_many_unlocked(np.arange(1010, 1020), np.arange(10, 20))
    read(oi, ti)
    oi.flush(), ti.flush()
    by_writer = len(lookups())
    # a reader's (dump-segments, verify): a private copy of the file
    ro = (offset_index.OffsetIndex(tmp_path / "0.index", 0, 4096, writable=False),
          time_index.TimeIndex(tmp_path / "0.timeindex", 0, 4096, writable=False))
    read(*ro)
    for index in (oi, ti, *ro):
        index.close()
    assert 0 < by_writer < len(lookups())
    for calls in seen:  # each kernel: one type per argument, whichever index called it
        assert len(set(calls)) <= 1, set(calls)
