"""kafkalog.records.pooled_arrays: large arrays from Arrow's pool, small ones from numpy."""

from __future__ import annotations

import gc

import numpy as np
import pyarrow as pa
import pytest

from kafkalog.records import columnar
from kafkalog.records.pooled_arrays import POOLED_MIN_BYTES, pooled_empty


def array_owner(a: np.ndarray) -> object:
    """The object that owns ``a``'s memory (through any views): a ``pa.Buffer`` from the pool."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a.base


@pytest.mark.parametrize("dtype", [np.uint8, np.int32, np.int64, bool])
def test_large_arrays_come_from_arrows_pool(dtype: type) -> None:
    n = POOLED_MIN_BYTES // np.dtype(dtype).itemsize + 3
    before = pa.total_allocated_bytes()
    a = pooled_empty(n, dtype)
    assert a.shape == (n,) and a.dtype == np.dtype(dtype) and a.flags.writeable
    assert isinstance(a.base, pa.Buffer)
    assert pa.total_allocated_bytes() - before >= a.nbytes
    a[:] = 1
    view = a[5:9]
    del a
    gc.collect()
    assert view.tolist() == [1] * 4  # the view keeps the pool's buffer alive
    del view
    gc.collect()
    assert pa.total_allocated_bytes() == before


def test_small_arrays_come_from_numpy() -> None:
    a = pooled_empty(10, np.int64)
    assert a.base is None and a.shape == (10,)
    assert pooled_empty(0, np.uint8).shape == (0,)


def test_decoded_columns_live_in_arrows_pool() -> None:
    from kafkalog import Record, encode_batch

    data = encode_batch([Record(b"k", b"v" * 1000, 1)] * 2000)
    cols = columnar.decode_columns(data)
    assert cols.value(1999) == b"v" * 1000
    assert isinstance(array_owner(cols.value_data), pa.Buffer)


def test_unpooled_allocates_from_numpy_inside_the_block_only() -> None:
    from kafkalog.records.pooled_arrays import unpooled

    with unpooled():
        assert pooled_empty(POOLED_MIN_BYTES, np.uint8).base is None
        with unpooled():
            pass
        assert pooled_empty(POOLED_MIN_BYTES, np.uint8).base is None  # (nested: still off)
    assert isinstance(pooled_empty(POOLED_MIN_BYTES, np.uint8).base, pa.Buffer)


@pytest.mark.parametrize("limit, pooled", [(1 << 30, True), (1000, False)])
def test_read_table_pools_only_reads_up_to_its_limit(tmp_path, monkeypatch: pytest.MonkeyPatch,
                                                     limit: int, pooled: bool) -> None:
    """A read above READ_TABLE_POOLED_BYTES keeps every chunk (nothing to reuse): its columns
    come from numpy; a smaller one's from Arrow's pool. The rows are the same."""
    from kafkalog import Log, Record
    from kafkalog import log as log_module

    monkeypatch.setattr(log_module, "READ_TABLE_POOLED_BYTES", limit)
    seen = []
    real = columnar.decode_columns

    def spy(*a: object, **kw: object) -> object:
        cols = real(*a, **kw)
        seen.append(array_owner(cols.value_data))
        return cols

    monkeypatch.setattr(columnar, "decode_columns", spy)
    with Log.open(tmp_path / "log") as log:
        for j in range(4):
            log.append([Record(b"k%d" % i, b"v" * 2000, i) for i in range(250 * j, 250 * j + 250)])
        table = log.read_table()
    assert table.num_rows == 1000 and table.column("value")[999].as_py() == b"v" * 2000
    assert seen and all(isinstance(o, pa.Buffer) == pooled for o in seen)
