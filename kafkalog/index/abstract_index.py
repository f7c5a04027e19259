"""What the offset and time indexes share (Kafka's ``AbstractIndex``): the memory-mapped file.

On-disk invariants (spec §5.1):

* An index is a flat array of fixed-size big-endian entries, no header, no checksum (after a
  crash it is rebuilt from the ``.log``). The bytes in the mapping are the only source of truth:
  nothing is cached except ``entries`` and the last entry, both re-derived after every remap.
* A **new** file is preallocated to ``round_down(max_index_size, entry_size)`` zero bytes and
  has 0 entries.
* Opening an **existing** file trusts every whole slot: ``entries = length // entry_size``. That
  is why an index is trimmed to ``entries * entry_size`` when its segment rolls or closes
  (:meth:`trim_to_valid_size`), and why the active segment's index is re-extended to
  ``max_index_size`` (:meth:`resize`) when a log is opened: appends continue after the trusted
  entries.
* A partial trailing slot (length not a multiple of the entry size) is never read;
  :meth:`sanity_check` reports it.

Read-only mode (``writable=False``) is for files we must not modify (dump, verify, Spark
readers), which a writer in another process may be changing: the file is never created,
preallocated, resized or trimmed, and it is **not mapped**: its bytes are read once, with
``pread``, into private memory (:func:`kafkalog.file_copy.read_file`). The writer trims the
active segment's preallocated index at every roll; a mapping of it would fault (SIGBUS, the
process dies) on the first page past the new end, while a copy only shows the index as it was
when it was read (a rolled index is read in well under a millisecond; the active segment's
preallocated 10 MiB in a few, while readers that stop at the zero tail use
:func:`kafkalog.file_copy.read_preallocated`, benchmarks/bench_index.py). Every whole slot of the
copy is an entry, as Kafka counts them for an existing file. An empty file is an empty buffer.

Searches go through :mod:`kafkalog.native.index_search` directly over the mapped bytes
(``np.frombuffer(mmap, uint8)``, no copy, no byte swap), including Kafka's warm-section-first
search (KAFKA-6432: lookups are almost always near the end of the index, so the last 8 KB of
entries is searched first and stays in the page cache; see that module for the full reasoning).

Threading: mutations (append, truncate, resize, close) take an internal lock; lookups do not.
Like ``LogSegment`` in Kafka, the owner serializes writers; concurrent lookups are safe as long
as no resize/close runs at the same time.

Buffer lifetime: numpy views returned by ``entries_array()`` point into the mapping of a writable
index. They are valid until the next ``truncate_to``/``resize``/``trim_to_valid_size``/``close``
of this index (its owner is the only process that shrinks the file). A read-only index's views
point into its private copy and stay valid as long as they are referenced.
"""

from __future__ import annotations

import errno
import mmap
import os
import struct
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np

from kafkalog.errors import (
    ConfigError,
    CorruptIndexError,
    InvalidRequestError,
    OffsetOutOfRangeError,
    OffsetOverflowError,
)
from kafkalog.file_copy import read_file
from kafkalog.native import index_search
from kafkalog.native._jit import kernel_input

__all__ = ["AbstractIndex", "DEFAULT_MAX_INDEX_SIZE", "round_down_to_exact_multiple"]

#: CPython's ``mmap.flush()`` runs ``msync(MS_SYNC)`` with the GIL held: every other thread of
#: the process (a server's event loop, clients' heartbeats) stops for the whole disk write
#: (measured: 468 ms for 300 MB of dirty pages, 0 ticks of a 1 ms ticker meanwhile; ``os.fsync``
#: of the same file let the ticker run). On Linux ``msync(MS_SYNC)`` of a shared file mapping is
#: ``vfs_fsync_range`` over the file, and pages dirtied through the mapping are tracked by the
#: page cache, so the ``fsync`` below (which releases the GIL) already writes them; elsewhere
#: POSIX does not promise that, so ``msync`` stays.
_MSYNC_NEEDED = not sys.platform.startswith("linux")

# (the advice the writable mappings take, see _map; None where the platform has none)
_MADV_RANDOM = getattr(mmap, "MADV_RANDOM", None)

#: segment.index.bytes default (10 MiB)
DEFAULT_MAX_INDEX_SIZE = 10 * 1024 * 1024

_INT32_MAX = 2**31 - 1
# Every buffer the search kernels see is a read-only uint8 array (the mapping's view included:
# writes go through the mmap), so each kernel compiles once, not once per flag (kernel_input)
_EMPTY = kernel_input(np.zeros(0, dtype=np.uint8), np.uint8)


def _reserve(fd: int, size: int) -> None:
    """Set the file to ``size`` bytes with its blocks allocated: entries are written through a
    mapping, and a write fault on a sparse page of a full filesystem is SIGBUS (the process
    dies), while an allocation here fails with ENOSPC that reaches the caller. (Kafka creates
    sparse files and has the hazard.)"""
    os.ftruncate(fd, size)
    if size > 0 and hasattr(os, "posix_fallocate"):
        try:
            os.posix_fallocate(fd, 0, size)
        except OSError as e:
            if e.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
                raise  # ENOSPC, EFBIG...: the caller sees the disk is full
            # a filesystem without fallocate: keep the sparse file (Kafka's behavior)


def round_down_to_exact_multiple(number: int, factor: int) -> int:
    """Greatest multiple of ``factor`` not above ``number``: ``(67, 8) -> 64`` (Kafka's helper)."""
    return factor * (number // factor)


class AbstractIndex:
    """An array of fixed-size big-endian entries, mmapped when writable and a private copy when
    read-only (base class; not used directly).

    Subclasses set ``ENTRY_SIZE``, ``KEY_POS``/``KEY_SIZE`` and ``VALUE_POS``/``VALUE_SIZE``
    (byte layout inside an entry), and implement :meth:`_key_base`/:meth:`_value_base`,
    :meth:`_reload_last_entry`, :meth:`sanity_check` and :meth:`truncate_to`.

    Parameters
    ----------
    path:
        The index file.
    base_offset:
        Base offset of the segment this index belongs to.
    max_index_size:
        ``segment.index.bytes``: size of a newly created (preallocated) file, rounded down to a
        multiple of the entry size.
    writable:
        False reads the file into private memory once and never changes it (must exist).
    """

    ENTRY_SIZE: int = 0
    KEY_POS: int = 0
    KEY_SIZE: int = 4
    VALUE_POS: int = 4
    VALUE_SIZE: int = 4
    #: numpy structured dtype of one entry, big-endian fields (set by subclasses)
    ENTRY_DTYPE: np.dtype[Any] = np.dtype([])

    def __init__(
        self,
        path: str | os.PathLike[str],
        base_offset: int,
        max_index_size: int = DEFAULT_MAX_INDEX_SIZE,
        writable: bool = True,
    ) -> None:
        self._path = Path(path)
        self._base_offset = int(base_offset)
        self._max_index_size = int(max_index_size)
        self._writable = bool(writable)
        self._lock = threading.RLock()
        self._mmap: mmap.mmap | None = None
        self._buf: np.ndarray = _EMPTY
        self._length = 0
        self._max_entries = 0
        self._entries = 0
        self._closed = False
        self._create_and_map()

    # -- mapping -----------------------------------------------------------------------------

    def _create_and_map(self) -> None:
        es = self.ENTRY_SIZE
        if not self._writable:
            # never create or change a file in read-only mode; a missing file is the caller's
            # decision (FileNotFoundError passes through). A private copy, never a mapping: see
            # the module notes.
            data = read_file(self._path)
            self._buf = kernel_input(np.frombuffer(data, np.uint8), np.uint8) if data else _EMPTY
            self._length = len(data)
            self._max_entries = self._length // es
            self._entries = self._max_entries
            return
        newly_created = False
        try:
            fd = os.open(self._path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
            newly_created = True
        except FileExistsError:
            fd = os.open(self._path, os.O_RDWR)
        try:
            if newly_created:
                if self._max_index_size < es:
                    os.close(fd)
                    fd = -1
                    os.unlink(self._path)
                    raise ConfigError(
                        f"invalid max index size (expected at least {es} bytes, "
                        f"found {self._max_index_size})",
                        path=self._path,
                    )
                _reserve(fd, round_down_to_exact_multiple(self._max_index_size, es))
            length = os.fstat(fd).st_size
            self._map(fd, length, 0 if newly_created else length)
        finally:
            if fd >= 0:
                os.close(fd)
        # Kafka: new file -> position 0; existing file -> every whole slot is an entry
        self._entries = 0 if newly_created else length // es

    def _map(self, fd: int, length: int, written: int) -> None:
        """Map ``length`` bytes of ``fd`` (writable indexes only; none for 0 bytes, which mmap
        rejects); the first ``written`` bytes hold entries, the rest is preallocated room."""
        if length > 0:
            self._mmap = mmap.mmap(fd, length, access=mmap.ACCESS_WRITE)
            start = written - written % mmap.PAGESIZE
            if _MADV_RANDOM is not None and start < length:
                # No read-around on faults in the preallocated room: appends fill it one page
                # at a time, while a fault's read-around reads up to the block device's
                # read_ahead_kb. On a new (sparse) index that is megabytes of zeroed page
                # cache for the first entry written: measured 4.5 ms for the first write into
                # a new 10 MiB index with read_ahead_kb = 8192, 0.02 ms with this (twice per
                # segment roll); the trim on roll then drops those pages again. The entries
                # keep the default advice: a cold lookup's read-around fetches the index in
                # one read instead of one per page its binary search touches.
                self._mmap.madvise(_MADV_RANDOM, start, length - start)
            self._buf = kernel_input(np.frombuffer(self._mmap, np.uint8), np.uint8)
        else:
            self._mmap = None
            self._buf = _EMPTY
        self._length = length
        self._max_entries = length // self.ENTRY_SIZE

    def _writable_slots(self, first: int, count: int) -> np.ndarray:
        """The mapped bytes of slots ``first .. first + count - 1``, writable (the batched
        appends store into them; :attr:`buffer` is a read-only view of the same memory)."""
        es = self.ENTRY_SIZE
        return np.frombuffer(self._mmap, np.uint8)[first * es:(first + count) * es]

    def _unmap(self) -> None:
        """Release the mapping (Kafka's ``forceUnmap``)."""
        m = self._mmap
        self._buf = _EMPTY
        self._mmap = None
        if m is not None:
            try:
                m.close()
            except BufferError:
                # numpy views handed out by entries_array() still export the buffer: dropping
                # our reference lets the mapping go when the last view does (never a dangling
                # pointer in Python)
                pass

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError(f"{self._path}: index is closed")

    def _check_writable(self) -> None:
        self._check_open()
        if not self._writable:
            raise PermissionError(f"{self._path}: index was opened read-only")

    # -- properties ----------------------------------------------------------------------------

    @property
    def path(self) -> Path:
        """The index file (changes on :meth:`rename_to`)."""
        return self._path

    @property
    def file(self) -> Path:
        """Alias of :attr:`path` (Kafka's ``file()``)."""
        return self._path

    @property
    def base_offset(self) -> int:
        """Base offset of the segment."""
        return self._base_offset

    @property
    def max_index_size(self) -> int:
        """``segment.index.bytes`` this index was opened with."""
        return self._max_index_size

    @property
    def writable(self) -> bool:
        """False when opened read-only."""
        return self._writable

    @property
    def entries(self) -> int:
        """Number of valid entries."""
        return self._entries

    @property
    def max_entries(self) -> int:
        """Slots in the current mapping (``length // entry_size``)."""
        return self._max_entries

    @property
    def length(self) -> int:
        """Current file length in bytes (as mapped)."""
        return self._length

    @property
    def size_in_bytes(self) -> int:
        """Bytes actually used: ``entries * entry_size``."""
        return self.ENTRY_SIZE * self._entries

    @property
    def entry_size(self) -> int:
        """Bytes per entry."""
        return self.ENTRY_SIZE

    @property
    def warm_entries(self) -> int:
        """Size of Kafka's warm section in entries (8192 // entry size)."""
        return index_search.WARM_SECTION_BYTES // self.ENTRY_SIZE

    @property
    def buffer(self) -> np.ndarray:
        """The index bytes as a ``uint8`` array: the mapping, or the private copy of a read-only
        index (empty when the file is empty or closed)."""
        return self._buf

    def is_full(self) -> bool:
        """True iff no slot is free (the segment must roll)."""
        return self._entries >= self._max_entries

    def __len__(self) -> int:
        return self._entries

    def entry(self, n: int) -> Any:
        """The ``n``-th entry, decoded by the subclass (Kafka's ``parseEntry``).

        Raises :class:`InvalidRequestError` (also a ``ValueError``) when ``n`` is not in
        ``[0, entries)``.
        """
        if not 0 <= n < self._entries:
            raise InvalidRequestError(
                f"attempt to fetch entry {n} from an index with {self._entries} entries",
                path=self._path,
            )
        return self._parse_entry(n)

    def _parse_entry(self, n: int) -> Any:
        raise NotImplementedError

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({str(self._path)!r}, base_offset={self._base_offset}, "
            f"entries={self._entries}, max_entries={self._max_entries})"
        )

    def __enter__(self) -> AbstractIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- offsets -------------------------------------------------------------------------------

    def can_append_offset(self, offset: int) -> bool:
        """True iff ``offset - base_offset`` fits in the int32 relative offset field."""
        rel = offset - self._base_offset
        return 0 <= rel <= _INT32_MAX

    def relative_offset(self, offset: int) -> int:
        """``offset - base_offset``; raises OffsetOverflowError outside ``[0, 2**31 - 1]``."""
        rel = offset - self._base_offset
        if not 0 <= rel <= _INT32_MAX:
            raise OffsetOverflowError(
                f"integer overflow for offset relative to base offset {self._base_offset} "
                f"(expected 0..{_INT32_MAX}, found {rel})",
                path=self._path,
                offset=offset,
            )
        return rel

    # -- search --------------------------------------------------------------------------------

    def _search_error(self, what: str, code: int) -> Exception:
        """The error for a failed search kernel call: the mapping was released under the caller
        (retention deleted the segment while another thread looked up) -> the documented
        OffsetOutOfRangeError; otherwise a bug (RuntimeError)."""
        if self._closed or self._buf is _EMPTY:
            return OffsetOutOfRangeError(
                f"index closed under the reader (segment deleted) during {what}", path=self._path)
        return RuntimeError(f"{self._path}: index {what} failed with code {code}")

    def _slot_for(self, target: int, by_value: bool, search_type: int) -> int:
        if by_value:
            pos, size, base = self.VALUE_POS, self.VALUE_SIZE, self._value_base()
        else:
            pos, size, base = self.KEY_POS, self.KEY_SIZE, self._key_base()
        slot = int(
            index_search.index_slot_for(
                self._buf, self._entries, self.ENTRY_SIZE, pos, size, base, target, search_type
            )
        )
        if slot < index_search.NOT_FOUND:  # an error code: a bug here, not bad data
            raise self._search_error("search", slot)
        return slot

    def largest_lower_bound_slot_for(self, target: int, *, by_value: bool = False) -> int:
        """Slot of the largest entry <= ``target`` (by key, or by value), or -1."""
        return self._slot_for(int(target), by_value, index_search.LARGEST_LOWER_BOUND)

    def smallest_upper_bound_slot_for(self, target: int, *, by_value: bool = False) -> int:
        """Slot of the smallest entry >= ``target`` (Kafka's search and quirk), or -1."""
        return self._slot_for(int(target), by_value, index_search.SMALLEST_UPPER_BOUND)

    def _slots_for_many(self, targets: np.ndarray, by_value: bool, search_type: int) -> np.ndarray:
        t = np.ascontiguousarray(targets, dtype=np.int64).reshape(-1)
        out = np.empty(t.shape[0], dtype=np.int64)
        if by_value:
            pos, size, base = self.VALUE_POS, self.VALUE_SIZE, self._value_base()
        else:
            pos, size, base = self.KEY_POS, self.KEY_SIZE, self._key_base()
        status = int(
            index_search.index_slots_for(
                self._buf, self._entries, self.ENTRY_SIZE, pos, size, base, t, search_type, out
            )
        )
        if status != 0:
            raise self._search_error("search", status)
        return out

    def _gather(
        self, slots: np.ndarray, missing_key: int, missing_value: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """(keys, values) of the entries at ``slots``, absolute; the missing pair for -1."""
        keys = np.empty(slots.shape[0], dtype=np.int64)
        values = np.empty(slots.shape[0], dtype=np.int64)
        status = int(
            index_search.gather_entries(
                self._buf, self._entries, self.ENTRY_SIZE, self.KEY_POS, self.KEY_SIZE,
                self._key_base(), self.VALUE_POS, self.VALUE_SIZE, self._value_base(), slots,
                missing_key, missing_value, keys, values,
            )
        )
        if status != 0:
            raise self._search_error("gather", status)
        return keys, values

    def entries_array(self) -> np.ndarray:
        """The valid entries as a zero-copy structured view with big-endian fields.

        Each field decodes from big-endian on access (``arr["position"]`` etc.); relative
        offsets stay relative. The view is read-only and valid until the next
        truncate/resize/close (see the module notes).
        """
        n = self._entries
        if n == 0:
            return np.zeros(0, dtype=self.ENTRY_DTYPE)
        view = np.frombuffer(self._buf, dtype=self.ENTRY_DTYPE, count=n)
        view.flags.writeable = False
        return view

    # -- hooks for subclasses ----------------------------------------------------------------

    def _key_base(self) -> int:
        raise NotImplementedError

    def _value_base(self) -> int:
        raise NotImplementedError

    def _reload_last_entry(self) -> None:
        """Re-derive the cached last entry from the mapped bytes."""
        raise NotImplementedError

    def sanity_check(self) -> None:
        """Raise CorruptIndexError on obvious corruption (Kafka's checks)."""
        raise NotImplementedError

    def truncate_to(self, offset: int) -> None:
        """Remove every entry with offset >= ``offset``."""
        raise NotImplementedError

    def _check_length_multiple(self, what: str) -> None:
        if self._length % self.ENTRY_SIZE != 0:
            raise CorruptIndexError(
                f"{what} file is corrupt: found {self._length} bytes which is neither positive "
                f"nor a multiple of {self.ENTRY_SIZE} (expected a multiple of "
                f"{self.ENTRY_SIZE}, found remainder {self._length % self.ENTRY_SIZE})",
                path=self._path,
                position=self._length - self._length % self.ENTRY_SIZE,
            )

    # -- mutation ------------------------------------------------------------------------------

    def _truncate_to_entries(self, entries: int, zero_removed: bool = False) -> None:
        with self._lock:
            old = self._entries
            self._entries = entries
            if zero_removed and entries < old and self._mmap is not None:
                # truncate_to: zero the removed slots (Kafka leaves their bytes). A reader in
                # another process copies an active index up to its first zeroed slot, and the
                # removed entries name batches that are gone (its lookups there failed, or
                # went past the refilled data). Kafka reads nothing past the entry count.
                # (Not for truncate()/reset(): recovery rebuilds the whole file, and zeroing a
                # segment's entries in place showed readers an index of zeros meanwhile.)
                es = self.ENTRY_SIZE
                self._mmap[entries * es:old * es] = bytes((old - entries) * es)
            self._reload_last_entry()

    def truncate(self) -> None:
        """Remove every entry (the bytes stay; the next appends overwrite them)."""
        self._check_writable()
        self._truncate_to_entries(0)

    def resize(self, new_size: int) -> bool:
        """Set the file and mapping to ``round_down(new_size, entry_size)`` bytes.

        Used to trim on roll/close (:meth:`trim_to_valid_size`) and to re-extend the active
        segment's index to ``max_index_size`` when a log is opened or truncated back. Entries
        are kept (capped by the new slot count). Returns False when the size is unchanged.
        """
        self._check_writable()
        with self._lock:
            rounded = round_down_to_exact_multiple(int(new_size), self.ENTRY_SIZE)
            if rounded < 0:
                raise ValueError(f"{self._path}: negative index size {new_size}")
            if rounded == self._length:
                return False
            # Never unmapped in between: a reader thread looking up meanwhile keeps using the
            # old mapping (it only reads the first ``entries`` slots, which stay inside the
            # file), and a failed open or truncate leaves the index mapped and usable. (Kafka
            # unmaps first because Windows cannot truncate a mapped file; this is POSIX.)
            fd = os.open(self._path, os.O_RDWR)
            try:
                if rounded > self._length:
                    _reserve(fd, rounded)
                else:
                    os.ftruncate(fd, rounded)
                old = self._mmap
                self._map(fd, rounded, self._entries * self.ENTRY_SIZE)
                if old is not None:
                    try:
                        old.close()
                    except BufferError:
                        pass  # views still export it: it goes with the last one
            finally:
                os.close(fd)
            if self._entries > self._max_entries:
                self._entries = self._max_entries
            self._reload_last_entry()
            return True

    def trim_to_valid_size(self) -> None:
        """Cut the unwritten tail: the file becomes ``entries * entry_size`` bytes."""
        self._check_writable()
        self.resize(self.ENTRY_SIZE * self._entries)

    def reset(self) -> None:
        """Remove every entry and resize to ``max_index_size`` (Kafka's ``reset``)."""
        self.truncate()
        self.resize(self._max_index_size)

    def flush(self) -> None:
        """Make the entries durable: ``fsync`` the file (and ``msync`` where that is needed;
        the fsync itself runs without this index's lock, as :meth:`flush_descriptor` allows)."""
        fd = self.flush_descriptor()
        if fd is not None:
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def flush_descriptor(self) -> int | None:
        """A new read-only descriptor of the index file, for an ``fsync`` made later without
        this index's lock (after an ``msync`` where one is needed, see :meth:`flush`); None
        when the index is not writable. The caller closes it. The descriptor keeps the file
        even if it is renamed, trimmed or deleted meanwhile."""
        self._check_open()
        if not self._writable:
            return None
        with self._lock:
            if self._mmap is not None and _MSYNC_NEEDED:
                self._mmap.flush()
            return os.open(self._path, os.O_RDONLY)

    def close_handler(self) -> None:
        """Release the mapping without trimming (Kafka's ``closeHandler``)."""
        with self._lock:
            self._unmap()
            self._closed = True

    def close(self) -> None:
        """Trim to the valid entries (writable indexes) and release the mapping."""
        if self._closed:
            return
        with self._lock:
            if self._writable and self._path.exists():
                self.trim_to_valid_size()
            self.close_handler()

    def delete(self) -> bool:
        """Release the mapping and delete the file; False when it did not exist.

        Kafka's ``deleteIfExists``.
        """
        self.close_handler()
        try:
            os.unlink(self._path)
        except FileNotFoundError:
            return False
        return True

    delete_if_exists = delete

    def rename_to(self, path: str | os.PathLike[str]) -> None:
        """Rename the backing file (atomic ``os.replace``); the mapping stays valid."""
        target = Path(path)
        try:
            os.replace(self._path, target)
        finally:
            # Kafka updates the file even when the move fails
            self._path = target

    def update_parent_dir(self, parent: str | os.PathLike[str]) -> None:
        """Point at the same file name under ``parent`` (after a directory rename)."""
        self._path = Path(parent) / self._path.name

    def _pack_entry_at(self, slot: int, fmt: struct.Struct, *values: int) -> None:
        # callers check is_full first, so slot < max_entries and the mapping exists
        if self._mmap is None or slot >= self._max_entries:
            raise RuntimeError(f"{self._path}: no slot {slot} in a {self._length}-byte mapping")
        fmt.pack_into(self._mmap, slot * self.ENTRY_SIZE, *values)
