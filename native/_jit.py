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

from numba import njit

F = TypeVar("F", bound=Callable[..., Any])


def kernel(fn: F) -> F:
    """Compile ``fn`` as a nopython kernel with the project's fixed options."""
    return njit(cache=True, nogil=True, error_model="numpy")(fn)  # type: ignore[no-any-return]


def inline(fn: F) -> F:
    """A small helper kernel meant to be inlined into callers (big-endian reads, varints)."""
    return njit(cache=True, nogil=True, error_model="numpy", inline="always")(fn)  # type: ignore[no-any-return]
