"""Reusing the resident pages a sequential reader releases, instead of faulting in fresh ones.

Why
---
:class:`kafkalog.file_copy.FileCopy` copies a file into private anonymous memory with ``pread``
(never a mapping of the file: a writer may cut it). A sequential reader (dump-segments, verify,
the Spark reader) frees what it has passed so its resident set stays flat; the next window is then
fresh memory, and every fresh 4 KiB page costs a fault, a zeroed page and later an unmap. That
dominated the copy: ``pread`` of 4 MiB windows into fresh pages ran at about 1.2 GiB/s on this
machine, into pages already resident at about 11 GiB/s (``benchmarks/bench_log.py``,
``file_copy.scan_crc``).

How
---
Linux's ``mremap(MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP)`` moves the page-table entries
of a private anonymous range to another address and leaves the source range mapped, reading as
zeros (fresh zero-fill pages on the next touch). That is exactly what releasing promises, so a
released range is *parked*: its pages move into a spare mapping owned by the pool. The next range
to be filled first *borrows* parked pages: they move under it, holding stale bytes that the
caller overwrites at once. No byte is copied either way; only page-table entries move.

Invariants: the spare mapping holds resident pages exactly in ``[0, held)`` (a stack: parked on
top, borrowed from the top); every address handed to :meth:`PagePool.park` or
:meth:`PagePool.borrow` is page aligned, a multiple of pages long, and lies inside a private
anonymous mapping the caller owns. Where ``mremap`` or ``MREMAP_DONTUNMAP`` is missing (not
Linux, kernels before 5.13, a seccomp filter), :attr:`PagePool.enabled` is false and callers free
and fault pages as before; the first refusal turns the pool off for the whole process.

Every move may split a mapping in two (the kernel's count of mappings per process is bounded,
``vm.max_map_count``), so one pool makes at most :data:`MAX_MOVES` moves and then stops lending.

Example
-------
>>> import mmap
>>> pool = PagePool(1 << 20)
>>> m = mmap.mmap(-1, 1 << 20, flags=mmap.MAP_PRIVATE)
>>> m[:5] = b"hello"
>>> if pool.enabled:
...     assert pool.park(address_of(m), mmap.PAGESIZE) == mmap.PAGESIZE
...     assert m[:5] == bytes(5)  # released: reads as zeros
...     assert pool.borrow(address_of(m) + mmap.PAGESIZE, mmap.PAGESIZE) == mmap.PAGESIZE
...     assert m[mmap.PAGESIZE:mmap.PAGESIZE + 5] == b"hello"  # the same page, moved
>>> pool.close(); m.close()
"""

from __future__ import annotations

import ctypes
import mmap
import os
import sys

__all__ = ["PagePool", "MAX_MOVES", "address_of", "page_moves_supported"]

#: moves one pool makes at most (each may add a mapping to the process's bounded count)
MAX_MOVES = 4096

_MREMAP_MAYMOVE = 1
_MREMAP_FIXED = 2
_MREMAP_DONTUNMAP = 4
_MAP_FAILED = ctypes.c_void_p(-1).value
PAGE = mmap.PAGESIZE

_mremap = None
if sys.platform.startswith("linux") and os.environ.get("KAFKALOG_NO_PAGE_MOVES") != "1":
    try:
        _libc = ctypes.CDLL(None, use_errno=True)
        _mremap = _libc.mremap
        _mremap.restype = ctypes.c_void_p
        _mremap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_int,
                            ctypes.c_void_p]
    except (OSError, AttributeError):  # pragma: no cover - no libc symbol
        _mremap = None
_supported = _mremap is not None


def page_moves_supported() -> bool:
    """Whether pages can be moved here (false after the kernel refused once)."""
    return _supported


def address_of(m: mmap.mmap) -> int:
    """Start address of an anonymous mapping (the temporary export is released at once)."""
    return ctypes.addressof(ctypes.c_char.from_buffer(m))


def _move(src: int, dst: int, length: int) -> bool:
    """Move ``length`` bytes of pages from ``src`` to ``dst``; the source reads as zeros after."""
    global _supported
    if not _supported:
        return False
    got = _mremap(src, length, length, _MREMAP_MAYMOVE | _MREMAP_FIXED | _MREMAP_DONTUNMAP, dst)
    if got is None or got == _MAP_FAILED or got != dst:
        # refused (EINVAL on kernels without DONTUNMAP for this mapping, ENOMEM at the
        # mapping-count limit): nothing moved; stop trying for the whole process
        _supported = False
        return False
    return True


class PagePool:
    """A stack of up to ``capacity`` bytes of resident pages, parked and borrowed by address.

    Not thread safe: one pool per reader (a :class:`~kafkalog.file_copy.FileCopy` owns one).
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity - capacity % PAGE
        self.held = 0  # resident bytes at the bottom of the spare mapping
        self.moves = 0
        self._spare: mmap.mmap | None = None
        self._spare_addr = 0
        if _supported and self.capacity > 0:
            # address space only: pages exist here only while parked
            self._spare = mmap.mmap(-1, self.capacity, flags=mmap.MAP_PRIVATE)
            self._spare_addr = address_of(self._spare)

    @property
    def enabled(self) -> bool:
        """Whether :meth:`park` and :meth:`borrow` can move anything now."""
        return self._spare is not None and _supported and self.moves < MAX_MOVES

    def park(self, addr: int, length: int) -> int:
        """Move the pages of ``[addr, addr + n)`` into the pool; return ``n`` (0 to ``length``,
        whole pages: what did not fit or could not move stays where it was, for the caller to
        free). The range reads as zeros afterwards."""
        n = min(length, self.capacity - self.held)
        n -= n % PAGE
        if n <= 0 or not self.enabled or addr % PAGE:
            return 0
        if not _move(addr, self._spare_addr + self.held, n):
            return 0
        self.moves += 1
        self.held += n
        return n

    def borrow(self, addr: int, length: int) -> int:
        """Move parked pages under ``[addr, addr + n)``; return ``n`` (0 to ``length``, whole
        pages). Those bytes hold whatever the pages last held: the caller overwrites them."""
        n = min(length, self.held)
        n -= n % PAGE
        if n <= 0 or not self.enabled or addr % PAGE:
            return 0
        if not _move(self._spare_addr + self.held - n, addr, n):
            return 0
        self.moves += 1
        self.held -= n
        return n

    def close(self) -> None:
        """Unmap the spare mapping (and the pages parked in it)."""
        spare, self._spare = self._spare, None
        self.held = 0
        if spare is not None:
            spare.close()
