"""The one decorator every kernel in ``kafkalog.native`` uses.

Why one place: the options are a contract. ``cache=True`` so a kernel compiles once per machine
(numba caches next to the module; kernels must depend only on their arguments and module
constants, since the cache does not see changes elsewhere). ``nogil=True`` so reader threads scan
in parallel with a writer. ``error_model="numpy"`` so arithmetic never raises inside a kernel:
every kernel bounds-checks its reads explicitly and reports errors through return codes, because
an exception raised in nopython mode is slow and loses the position. No ``fastmath``/``parallel``:
byte kernels gain nothing from them and they make results harder to reason about.

``NUMBA_DISABLE_JIT=1`` turns every kernel into the plain Python function it is written as; the
test suite runs once that way so the pure-Python path is exercised too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
from numba import njit

F = TypeVar("F", bound=Callable[..., Any])


def kernel(fn: F) -> F:
    """Compile ``fn`` as a nopython kernel with the project's fixed options."""
    return njit(cache=True, nogil=True, error_model="numpy")(fn)  # type: ignore[no-any-return]


def inline(fn: F) -> F:
    """A small helper kernel meant to be inlined into callers (big-endian reads, varints)."""
    return njit(cache=True, nogil=True, error_model="numpy", inline="always")(fn)  # type: ignore[no-any-return]


def kernel_input(a: Any, dtype: Any) -> np.ndarray:
    """``a`` as a read-only, C-contiguous array of ``dtype``, for a kernel argument it only
    reads. A view, no copy, when ``a`` already has that dtype and layout.

    Why: numba compiles (and caches) one specialisation per combination of its arguments'
    dtypes, layouts and read-only flags, and a big kernel takes seconds to compile (the columnar
    encode kernel ~6 s). Arrow buffers are read-only and numpy arrays writable, offsets int32 or
    int64: left as they come, one kernel reached 14 specialisations in the test suite, each
    compiled on first use. Callers pass inputs through this so each kernel has one.

    >>> kernel_input(np.arange(3, dtype=np.int32), np.int64).flags.writeable
    False
    """
    out = np.ascontiguousarray(a, dtype)
    if out.flags.writeable:
        out = out.view()
        out.flags.writeable = False
    return out
