"""Large numpy output arrays backed by Arrow's memory pool.

Why: a decode writes its columns into fresh arrays. ``np.empty`` of a large size is a fresh
``mmap`` from glibc, so every page of it is faulted in and zeroed by the kernel on first write,
and unmapped again when the columns are dropped: the next decode pays it all again. Measured
on this project's 2-core VM: faulting in 120 MiB took 15 ms at best and over 200 ms when the
host had taken the freed pages back, about a quarter of the decode of 1M uncompressed records
(``clear_page`` in a perf profile). Arrow's pool (mimalloc or jemalloc, the allocator pyarrow
uses for every buffer it makes) keeps freed memory for reuse, already faulted in: the same
120 MiB reused cost 0.7 ms. The columns end up in Arrow anyway (``RecordColumns.to_arrow``
wraps them without copying).

The price is the allocator's: memory freed by a decode stays with the process for the next
one (``pyarrow.default_memory_pool().release_unused()`` gives it back), and the pool backs its
memory with 2 MiB huge pages (measured with mimalloc: 2 MiB resident per allocation at once,
and up to 2 MiB at the edge of each buffer's used bytes). Where the arrays are all kept, as in
``Log.read_table``'s chunks, nothing is reused and those pages only add up (~7 MiB per 64 MiB
chunk, measured): such callers allocate from numpy inside :func:`unpooled`.

The reuse holds while decodes follow each other closely: mimalloc returns memory that stayed
free past its purge delay (10 ms by default) to the kernel, and the next decode faults it in
again. Measured, 1M uncompressed records decoded serially: 46-53 ms back to back, 48-90 ms
with 50 ms between decodes; with ``MIMALLOC_PURGE_DELAY=-1`` in the environment (read when
pyarrow loads; it keeps freed memory for the whole process, which is why this module does not
set it) 46-48 ms either way.

Example
-------
>>> a = pooled_empty(1 << 20, np.int64)
>>> a.shape, a.dtype, a.flags.writeable
((1048576,), dtype('int64'), True)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np

#: arrays under this many bytes come from numpy (its small-allocation cache is as good, and a
#: small decode does not import pyarrow)
POOLED_MIN_BYTES = 1 << 20
_enabled: ContextVar[bool] = ContextVar("kafkalog_pooled_arrays", default=True)


@contextmanager
def unpooled() -> Iterator[None]:
    """Inside this block (this thread or task), :func:`pooled_empty` allocates from numpy."""
    token = _enabled.set(False)
    try:
        yield
    finally:
        _enabled.reset(token)


def pooled_empty(n: int, dtype: Any) -> np.ndarray:
    """An uninitialized writable 1-d array of ``n`` items, from Arrow's default memory pool
    when it takes at least ``POOLED_MIN_BYTES`` and :func:`unpooled` is not in force (the
    array keeps its Arrow buffer alive)."""
    dt = np.dtype(dtype)
    nbytes = n * dt.itemsize
    if nbytes < POOLED_MIN_BYTES or not _enabled.get():
        return np.empty(n, dt)
    import pyarrow as pa

    return np.frombuffer(pa.allocate_buffer(nbytes), dt, count=n)
