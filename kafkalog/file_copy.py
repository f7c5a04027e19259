"""Reading files that a writer in another process may shrink: private copies, never mappings.

Why not ``mmap``
----------------
A writer cuts files while readers look at them: every roll trims the previous active segment's
preallocated ``.index``/``.timeindex`` (and, with ``preallocate=true``, its ``.log``) with
``ftruncate``; ``truncate_to`` and recovery cut ``.log``, index and ``.txnindex`` files in place;
a later roll of a segment that ``truncate_to`` made active again trims it below the size a reader
once saw. A reader that mapped such a file and touches a page past the new end gets ``SIGBUS``,
and Python cannot survive that signal (the handler returns into the faulting load). No size check
before the access helps (the file can shrink between the check and the load), and a shared lock
the writer must wait for would let any reader stall the writer's rolls. Deletion is harmless (an
unlinked inode stays readable through an open descriptor), so the hazard is exactly "in place
shrink", and it concerns every file of a live partition directory.

So a reader here never dereferences file-backed memory. :class:`FileCopy` reads the bytes it needs
with ``preadv`` into *anonymous* memory sized to the file's length at open, on demand, in 64 KiB
blocks: an access anywhere in the buffer is always an access to our own pages. When the file
shrinks under the copy, ``preadv`` returns fewer bytes; the copy's :attr:`FileCopy.size` drops to
what was really there and the rest of the buffer stays zero, which every scanner reads as the end
of the data (a zero-filled tail). A reader thus sees the file as it was when each block was read:
a consistent older state of every batch it returns, since batches are checked (CRC) where their
bytes are used, and a torn mixture of an old and a new block fails that check instead of being
returned. The descriptor stays open for the copy's lifetime, so a file deleted by retention keeps
reading as it was.

The cost is one memory copy of the bytes a reader uses (the page cache to our buffer), paid
instead of the page-table work of a mapping. A sequential reader (dump, verify, Spark) copies in
windows and :meth:`FileCopy.release`\\ s what it has passed, so its resident set stays flat; the
pages it releases are moved under the next windows rather than freed (:mod:`kafkalog.page_pool`:
a fresh page costs a fault and a zeroing, which made the copy six times slower than the read); index
files are copied whole (:func:`read_file`) or up to their preallocated zero tail
(:func:`read_preallocated`). The writer itself keeps its mappings: it is the one process that
changes its files, and :mod:`kafkalog.index.abstract_index` / :mod:`kafkalog.segment` order its
own resizes against its own reader threads.

Example
-------
>>> import os, tempfile
>>> p = os.path.join(tempfile.mkdtemp(), "f")
>>> _ = open(p, "wb").write(b"0123456789")
>>> with FileCopy(p) as c:
...     c.ensure(2, 5), bytes(c.buf[2:5]), c.size
(5, b'234', 10)
"""

from __future__ import annotations

import ctypes
import errno
import mmap
import os
import stat
from collections.abc import Iterator

import numpy as np

from kafkalog.native import scan as native_scan
from kafkalog.page_pool import PagePool, address_of

__all__ = ["FileCopy", "BLOCK_SIZE", "SCAN_WINDOW", "POOL_BYTES", "read_file",
           "read_preallocated"]

#: copy granularity (bytes): one ``preadv`` fills every missing block of a requested range
BLOCK_SIZE = 64 * 1024
#: bytes a windowed :meth:`FileCopy.scan` copies ahead of the header scan per step
SCAN_WINDOW = 4 * 1024 * 1024
#: released pages a copy keeps for its next reads (see :mod:`kafkalog.page_pool`): two scan
#: windows, so what a sequential reader releases (about a window at a time) all finds a next
#: window; more would only add to the resident set
POOL_BYTES = 2 * SCAN_WINDOW
_EMPTY = np.zeros(0, dtype=np.uint8)
_EMPTY.flags.writeable = False


def _pread_into(fd: int, view: memoryview, position: int) -> int:
    """Fill ``view`` from ``position``; return the bytes read (fewer at end of file)."""
    done = 0
    total = view.nbytes
    while done < total:
        n = os.preadv(fd, [view[done:]], position + done)
        if n <= 0:
            break
        done += n
    return done


def read_file(path: str | os.PathLike[str]) -> bytes:
    """The whole file as it is now, read with ``pread`` (a file cut meanwhile reads shorter;
    the length at open is the view, as with a mapping).

    One ``pread`` straight into a new ``bytes`` is the cheapest copy Python offers here (the
    allocator reuses freed memory, so repeated reads do not fault fresh pages in).

    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "f"); _ = open(p, "wb").write(b"abc")
    >>> read_file(p)
    b'abc'
    """
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        parts = []
        done = 0
        while done < size:
            part = os.pread(fd, size - done, done)
            if not part:
                break  # cut under us: what we have is the file
            parts.append(part)
            done += len(part)
        return parts[0] if len(parts) == 1 else b"".join(parts)
    finally:
        os.close(fd)


def read_preallocated(path: str | os.PathLike[str], slot_size: int, *,
                      first_chunk: int = 16 * 1024) -> bytes:
    """Whole ``slot_size`` slots of a preallocated index file, up to its zero-filled tail.

    The active segment's ``.index``/``.timeindex`` is preallocated to ``segment.index.bytes``
    (10 MiB by default) and its unwritten slots are zero. Readers that stop at the first zeroed
    slot anyway (Kafka's DumpLogSegments rule, planning, read-only logs) need not copy the rest:
    chunks of growing size are read until one holds an all-zero slot at index > 0 or the file
    ends. Every slot before that zero slot is returned, and possibly a few after it (callers apply
    their own stop rule); a rolled, trimmed index is read whole in one or two ``pread`` calls.
    """
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        size -= size % slot_size
        out = bytearray()
        chunk = max(slot_size, first_chunk - first_chunk % slot_size)
        while len(out) < size:
            want = min(chunk, size - len(out))
            part = os.pread(fd, want, len(out))
            part = part[: len(part) - len(part) % slot_size]
            if not part:
                break  # shrunk under us: what we have is the index
            start_slot = len(out) // slot_size
            out += part
            slots = np.frombuffer(part, np.uint8).reshape(-1, slot_size)
            zero = ~slots.any(axis=1)
            if start_slot == 0 and zero.size:
                zero[0] = False  # slot 0 may legitimately be (0, 0)
            if zero.any() or len(part) < want:
                break
            chunk *= 4
        return bytes(out)
    finally:
        os.close(fd)


class FileCopy:
    """A private copy of a file, filled from it on demand: never a fault, whatever the writer does.

    Parameters
    ----------
    path:
        The file (opened read-only; the descriptor is kept until :meth:`close`).

    Attributes
    ----------
    buf:
        ``uint8`` array of the file's length at open (read-only view of anonymous memory). Only
        ranges passed to :meth:`ensure` (or walked by :meth:`scan`) hold the file's bytes; the rest
        reads as zeros.
    size:
        Bytes that exist: the length at open, lowered when a read finds the file shorter.

    Raises ``FileNotFoundError``/``IsADirectoryError``/``PermissionError`` from ``open``.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self._fd = os.open(self.path, os.O_RDONLY)
        try:
            st = os.fstat(self._fd)
            if stat.S_ISDIR(st.st_mode):
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), self.path)
            length = st.st_size
            self._mem: mmap.mmap | None = None
            if length:
                # private anonymous memory: pages cost nothing until written, MADV_DONTNEED
                # frees them, and no file can take them away
                # (no MADV_HUGEPAGE: where THP defragments on demand, the compaction stalls
                # cost more than the 4 KiB faults they save; measured on 6.x kernels)
                self._mem = mmap.mmap(-1, length, flags=mmap.MAP_PRIVATE)
                self._view = memoryview(self._mem)
                buf = np.frombuffer(self._mem, dtype=np.uint8)
                buf.flags.writeable = False
                self.buf = buf
            else:
                self._view = memoryview(b"")
                self.buf = _EMPTY
        except BaseException:
            os.close(self._fd)
            raise
        self.length = length  # buffer length (file length at open)
        self.size = length
        nblocks = -(-length // BLOCK_SIZE)
        self._copied = np.zeros(nblocks, dtype=bool)
        # made at the first release (only sequential readers release)
        self._pool: PagePool | None = None
        self._addr = 0

    # -- filling ---------------------------------------------------------------------------

    def ensure(self, start: int, end: int | None = None) -> int:
        """Copy ``[start, end)`` (clamped to the file) if not copied yet; return the end of the
        bytes now available there (``min(end, size)``: less when the file shrank)."""
        end = self.length if end is None else min(int(end), self.length)
        start = max(0, int(start))
        if end <= start or self._fd < 0:
            return min(end, self.size)
        b0, b1 = start // BLOCK_SIZE, -(-end // BLOCK_SIZE)
        missing = np.flatnonzero(~self._copied[b0:b1])
        if missing.size:
            # runs of consecutive missing blocks: one preadv each
            breaks = np.flatnonzero(np.diff(missing) != 1)
            firsts = np.concatenate(([missing[0]], missing[breaks + 1])) + b0
            lasts = np.concatenate((missing[breaks], [missing[-1]])) + b0
            pool = self._pool
            for f, last in zip(firsts.tolist(), lasts.tolist()):
                lo = f * BLOCK_SIZE
                hi = min((last + 1) * BLOCK_SIZE, self.length)
                if lo >= self.size:
                    break  # known to be past the (shrunk) end: zeros already
                # pages released earlier move under the range first (no fault, no zeroing);
                # they hold old bytes until the read below overwrites them
                lent = pool.borrow(self._addr + lo, hi - lo) if pool is not None else 0
                got = _pread_into(self._fd, self._view[lo:hi], lo)
                self._copied[f:last + 1] = True
                if got < lent:
                    # the file ends inside the borrowed pages: past its end reads as zeros
                    ctypes.memset(self._addr + lo + got, 0, lent - got)
                if got < hi - lo:
                    self.size = min(self.size, lo + got)
        return min(end, self.size)

    def read(self, start: int, end: int) -> np.ndarray:
        """``buf[start:end]`` after :meth:`ensure` (shorter when the file shrank)."""
        stop = self.ensure(start, end)
        return self.buf[start:max(start, stop)]

    def is_at_path(self) -> bool:
        """Whether :attr:`path` still names the file the copy reads (not renamed, deleted or
        replaced since the open). One ``stat`` and one ``fstat``."""
        if self._fd < 0:
            return False
        try:
            a, b = os.fstat(self._fd), os.stat(self.path)
        except OSError:
            return False
        return (a.st_ino, a.st_dev) == (b.st_ino, b.st_dev)

    def scan(self, start: int = 0, end: int | None = None, *,
             max_entries: int = 1 << 16, window: int = SCAN_WINDOW) -> dict:
        """:func:`kafkalog.native.scan.scan_entries` over ``[start, end)``, copying ahead.

        Same result as ``scan_entries(buf, start, end, max_entries)`` on the whole file, except
        that the scan may also stop early with ``STOP_LIMIT`` at a window boundary: callers loop
        on ``STOP_LIMIT`` from ``stop_position`` as they do for ``max_entries``. ``end`` is
        clamped to :attr:`size` (a file shrunk under the copy ends where it now ends).
        """
        end = self.size if end is None else min(int(end), self.size)
        pos = max(0, int(start))
        while True:
            w_end = min(end, pos + window)
            w_end = min(w_end, self.ensure(pos, w_end))
            end = min(end, self.size)
            out = native_scan.scan_entries(self.buf, pos, w_end, max_entries=max_entries)
            if w_end >= end:
                return out
            reason = out["stop_reason"]
            if reason not in (native_scan.STOP_PARTIAL, native_scan.STOP_END):
                return out  # corruption, or max_entries: decided inside the window
            if out["count"]:
                out["stop_reason"] = native_scan.STOP_LIMIT  # the window ended, not the data
                return out
            # one entry larger than the window: widen the window to hold it and scan again
            stop = int(out["stop_position"])
            head = self.read(stop, stop + native_scan.LOG_OVERHEAD)
            if head.size < native_scan.LOG_OVERHEAD:
                return out
            need = native_scan.LOG_OVERHEAD + int.from_bytes(head[8:12].tobytes(), "big",
                                                             signed=True)
            window = max(2 * window, need)

    def scan_chunks(self, start: int = 0, end: int | None = None, *,
                    max_entries: int = 1 << 16, window: int = SCAN_WINDOW) -> Iterator[dict]:
        """Every :meth:`scan` result from ``start`` until a stop other than ``STOP_LIMIT``."""
        pos = start
        while True:
            out = self.scan(pos, end, max_entries=max_entries, window=window)
            yield out
            if out["stop_reason"] != native_scan.STOP_LIMIT:
                return
            pos = int(out["stop_position"])

    # -- memory ----------------------------------------------------------------------------

    def release(self, upto: int) -> None:
        """Free the copied pages below ``upto`` (rounded down to a block); read again on demand.

        Only for sequential readers that hold no view of those bytes any more: the pages read
        as zeros until :meth:`ensure` copies them again.
        """
        b1 = min(int(upto), self.length) // BLOCK_SIZE
        if b1 <= 0 or self._mem is None or not hasattr(self._mem, "madvise"):
            return
        copied = np.flatnonzero(self._copied[:b1])
        if not copied.size:
            return
        if self._pool is None:
            self._pool = PagePool(POOL_BYTES)
            self._addr = address_of(self._mem)
        pool = self._pool
        # runs of copied blocks: parked in the pool for the next reads while it has room, the
        # rest freed; either way the range reads as zeros from here
        breaks = np.flatnonzero(np.diff(copied) != 1)
        firsts = np.concatenate(([copied[0]], copied[breaks + 1]))
        lasts = np.concatenate((copied[breaks], [copied[-1]]))
        for f, last in zip(firsts.tolist(), lasts.tolist()):
            lo, hi = f * BLOCK_SIZE, (last + 1) * BLOCK_SIZE
            lo += pool.park(self._addr + lo, hi - lo)
            if lo < hi:
                self._mem.madvise(mmap.MADV_DONTNEED, lo, hi - lo)
        self._copied[:b1] = False

    def close(self) -> None:
        """Close the descriptor and drop the buffer (views still exported keep it alive)."""
        fd, self._fd = self._fd, -1
        if fd >= 0:
            os.close(fd)
        self.buf = _EMPTY
        self._view.release()
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()
        mem, self._mem = self._mem, None
        if mem is not None:
            try:
                mem.close()
            except BufferError:
                pass  # a numpy/Arrow view still uses it: freed with the last view

    def __enter__(self) -> FileCopy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"FileCopy({self.path!r}, size={self.size}, length={self.length})"
