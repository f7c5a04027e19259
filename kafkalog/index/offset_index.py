"""The offset index (``.index``): sparse map from offsets to byte positions in the ``.log``.

On disk (spec §5.2, Kafka's ``OffsetIndex``): 8-byte big-endian entries, int32 relative offset
(``offset - base_offset``) then int32 position (byte position in the segment's ``.log`` where
the indexed data starts). Offsets strictly increase; positions increase with them. Preallocated
to ``max_index_size`` bytes of zeros, trimmed on roll/close; no checksum (a crash means a
rebuild). Which offsets get an entry is the segment's business (every ``index.interval.bytes``).

Example
-------
>>> import tempfile, os
>>> d = tempfile.mkdtemp()
>>> idx = OffsetIndex(os.path.join(d, "00000000000000000100.index"), 100, max_index_size=4096)
>>> idx.append(105, 4096); idx.append(110, 8192)
>>> idx.lookup(107), idx.lookup(50)
(OffsetPosition(offset=105, position=4096), OffsetPosition(offset=100, position=0))
>>> idx.close(); os.path.getsize(os.path.join(d, "00000000000000000100.index"))
16
"""

from __future__ import annotations

import os
import struct
from functools import partial
from typing import NamedTuple

import numba
import numpy as np

from kafkalog.errors import CorruptIndexError, IndexFullError, InvalidOffsetError
from kafkalog.native import index_append, index_search

from .abstract_index import DEFAULT_MAX_INDEX_SIZE, AbstractIndex

__all__ = ["OffsetIndex", "OffsetPosition"]

_ENTRY = struct.Struct(">ii")
_INT32_MAX = 2**31 - 1


class OffsetPosition(NamedTuple):
    """An offset and the byte position in the ``.log`` where the data holding it starts."""

    offset: int
    position: int


# OffsetPosition from a 2-tuple without NamedTuple.__new__'s argument parsing (3x faster)
_offset_position = partial(tuple.__new__, OffsetPosition)
# module-level names: lookup is on every fetch path, attribute lookups add up
_offset_index_lookup = index_search.offset_index_lookup
_NOT_FOUND = index_search.NOT_FOUND
_PLAIN_PYTHON = bool(numba.config.DISABLE_JIT)


class OffsetIndex(AbstractIndex):
    """Kafka's ``OffsetIndex`` over an mmapped ``.index`` file.

    Parameters
    ----------
    path, base_offset, max_index_size, writable:
        See :class:`~kafkalog.index.abstract_index.AbstractIndex`.

    Notes
    -----
    Edge results are Kafka's: :meth:`lookup` of a target before the first entry (or on an
    empty index) is ``(base_offset, 0)``; :meth:`fetch_upper_bound_offset` with nothing above
    is ``None``.
    """

    ENTRY_SIZE = 8
    KEY_POS, KEY_SIZE = 0, 4
    VALUE_POS, VALUE_SIZE = 4, 4
    ENTRY_DTYPE = np.dtype([("relative_offset", ">i4"), ("position", ">i4")])

    def __init__(
        self,
        path: str | os.PathLike[str],
        base_offset: int,
        max_index_size: int = DEFAULT_MAX_INDEX_SIZE,
        writable: bool = True,
    ) -> None:
        self._last_offset = int(base_offset)
        super().__init__(path, base_offset, max_index_size, writable)
        self._reload_last_entry()

    # key = absolute offset, value = position
    def _key_base(self) -> int:
        return self._base_offset

    def _value_base(self) -> int:
        return 0

    def _parse_entry(self, slot: int) -> OffsetPosition:
        rel, pos = _ENTRY.unpack_from(self._buf, slot * self.ENTRY_SIZE)
        return _offset_position((self._base_offset + rel, pos))

    def _reload_last_entry(self) -> None:
        self._last_offset = self.last_entry.offset

    @property
    def last_offset(self) -> int:
        """Offset of the last entry (``base_offset`` when empty)."""
        return self._last_offset

    @property
    def last_entry(self) -> OffsetPosition:
        """The last entry, or ``(base_offset, 0)`` when empty (read from the mapped bytes)."""
        if self._entries == 0:
            return OffsetPosition(self._base_offset, 0)
        return self._parse_entry(self._entries - 1)

    def lookup(self, target_offset: int) -> OffsetPosition:
        """Largest entry with offset <= ``target_offset``; ``(base_offset, 0)`` if none."""
        # one 4-argument kernel call does the search and the decode (hot path: every fetch)
        slot, offset, position = _offset_index_lookup(
            self._buf, self._entries, self._base_offset, target_offset
        )
        if slot < _NOT_FOUND:  # entries <= length // 8 by construction: a bug
            raise self._search_error("search", slot)
        if _PLAIN_PYTHON:  # NUMBA_DISABLE_JIT returns numpy scalars: hand out ints
            offset, position = int(offset), int(position)
        return _offset_position((offset, position))

    def lookup_many(self, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`lookup` of every target: one search kernel call, one decode kernel call.

        Returns
        -------
        (offsets, positions) : tuple of int64 arrays, same length as ``targets``
            ``(base_offset, 0)`` where no entry is <= the target.
        """
        slots = self._slots_for_many(targets, False, index_search.LARGEST_LOWER_BOUND)
        return self._gather(slots, self._base_offset, 0)

    def fetch_upper_bound_offset(
        self, fetch_offset: OffsetPosition, fetch_size: int
    ) -> OffsetPosition | None:
        """Smallest entry with position >= ``fetch_offset.position + fetch_size``, or None.

        An offset guaranteed to be outside the fetched range (not necessarily the smallest);
        used to bound the collection of aborted transactions.
        """
        target = int(fetch_offset.position) + int(fetch_size)
        slot = self._slot_for(target, True, index_search.SMALLEST_UPPER_BOUND)
        if slot < 0:
            return None
        return self._parse_entry(slot)

    def append(self, offset: int, position: int) -> None:
        """Append ``(offset, position)``; ``offset`` must exceed the last entry's.

        Raises
        ------
        IndexFullError
            No free slot: the segment must roll.
        InvalidOffsetError
            ``offset`` is not larger than the last offset appended.
        OffsetOverflowError
            ``offset - base_offset`` is not in ``[0, 2**31 - 1]``.
        """
        with self._lock:
            self.append_unlocked(offset, position)

    def append_unlocked(self, offset: int, position: int) -> None:
        """:meth:`append` for an owner that already serializes every mutation of this index
        (a ``LogSegment``, under its log's write lock): the same checks, errors and effect,
        without taking the index's own lock. It runs once per append of a segment, where an
        uncontended lock costs about as much as the rest of the call."""
        # the checks of is_full, relative_offset and _pack_entry_at inlined, same order
        if self._closed or not self._writable:
            self._check_writable()
        offset = int(offset)
        position = int(position)
        entries = self._entries
        if entries >= self._max_entries:  # is_full()
            raise IndexFullError(
                f"attempt to append to a full index (size = {entries})",
                path=self._path,
                offset=offset,
            )
        if entries != 0 and offset <= self._last_offset:
            raise InvalidOffsetError(
                f"attempt to append an offset {offset} to position {entries} no larger "
                f"than the last offset appended ({self._last_offset})",
                path=self._path,
                offset=offset,
            )
        if not 0 <= position <= _INT32_MAX:
            raise ValueError(f"{self._path}: position {position} does not fit in an int32")
        rel = offset - self._base_offset
        if not 0 <= rel <= _INT32_MAX:
            self.relative_offset(offset)  # raises OffsetOverflowError
        # not full, so slot ``entries`` exists in the mapping
        _ENTRY.pack_into(self._mmap, entries * 8, rel, position)
        self._entries = entries + 1
        self._last_offset = offset

    def append_many_unlocked(self, offsets: np.ndarray, positions: np.ndarray) -> None:
        """:meth:`append_unlocked` of each ``(offsets[i], positions[i])`` in order (int64
        arrays), written with one vectorized store: the same bytes, checks and errors. When any
        entry would fail a check they are appended one by one instead, so the error comes from
        the same entry, after the same entries, as with sequential appends."""
        k = int(offsets.shape[0])
        if k == 0:
            return
        entries = self._entries
        if self._closed or not self._writable or entries + k > self._max_entries:
            written = 0  # the one-by-one path raises the precise error
        else:
            # the kernel checks every entry first and writes only when all pass
            written = index_append.pack_offset_entries(
                offsets, positions, self._base_offset, self._last_offset, entries,
                self._writable_slots(entries, k))
        if written != k:
            for o, p in zip(offsets.tolist(), positions.tolist()):
                self.append_unlocked(o, p)
            return
        self._entries = entries + k
        self._last_offset = int(offsets[-1])

    def truncate_to(self, offset: int) -> None:
        """Remove every entry with offset >= ``offset`` (Kafka's 3 cases).

        1. no entry <= ``offset``: remove everything;
        2. an entry for exactly ``offset``: remove it and everything after;
        3. otherwise keep up to the largest entry below ``offset``.
        """
        self._check_writable()
        offset = int(offset)
        with self._lock:
            slot = self._slot_for(offset, False, index_search.LARGEST_LOWER_BOUND)
            if slot < 0:
                new_entries = 0
            elif self._parse_entry(slot).offset == offset:
                new_entries = slot
            else:
                new_entries = slot + 1
            self._truncate_to_entries(new_entries, zero_removed=True)

    def sanity_check(self) -> None:
        """Kafka's checks: last offset >= base offset; length a multiple of 8.

        Raises
        ------
        CorruptIndexError
            With the file, what was found and what was expected.
        """
        if self._entries != 0 and self._last_offset < self._base_offset:
            raise CorruptIndexError(
                f"corrupt index: non-zero size but the last offset is {self._last_offset} which "
                f"is less than the base offset {self._base_offset} (expected >= "
                f"{self._base_offset}, found {self._last_offset})",
                path=self._path,
                position=(self._entries - 1) * self.ENTRY_SIZE,
                offset=self._last_offset,
            )
        self._check_length_multiple("index")
