"""kafkalog.records.pooled_arrays: large arrays from Arrow's pool, small ones from numpy."""

from __future__ import annotations

import gc

import numpy as np
import pyarrow as pa
import pytest

from kafkalog.records import columnar
from kafkalog.records.pooled_arrays import POOLED_MIN_BYTES, pooled_empty


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
    owner = cols.value_data
    while isinstance(owner.base, np.ndarray):
        owner = owner.base
    assert isinstance(owner.base, pa.Buffer)
