"""The time index (``.timeindex``): sparse map from timestamps to offsets.

On disk (spec §5.3, Kafka's ``TimeIndex``): 12-byte big-endian entries, int64 timestamp then
int32 relative offset. An entry ``(T, O)`` means "the largest timestamp of any message up to
offset O is T": a message with a timestamp above T comes after O. Timestamps strictly increase
from entry to entry (an entry is only written when its timestamp is above the last one, so
``-1``, "no timestamp", is never indexed and v0-only segments have an empty time index); offsets
never decrease. The last slot is kept free (:meth:`TimeIndex.is_full` is ``entries >=
max_entries - 1``) for the entry written when the segment rolls or closes.

Example
-------
>>> import tempfile, os
>>> d = tempfile.mkdtemp()
>>> idx = TimeIndex(os.path.join(d, "00000000000000000000.timeindex"), 0, max_index_size=1200)
>>> idx.maybe_append(1000, 5); idx.maybe_append(1000, 6); idx.maybe_append(2000, 9)
>>> idx.entries, idx.lookup(1500), idx.lookup(10)
(2, TimestampOffset(timestamp=1000, offset=5), TimestampOffset(timestamp=-1, offset=0))
>>> idx.close()
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

__all__ = ["TimeIndex", "TimestampOffset", "NO_TIMESTAMP"]

#: RecordBatch.NO_TIMESTAMP
NO_TIMESTAMP = -1

_ENTRY = struct.Struct(">qi")
_INT32_MAX = 2**31 - 1


class TimestampOffset(NamedTuple):
    """A timestamp and the offset up to which it is the largest timestamp."""

    timestamp: int
    offset: int


# TimestampOffset from a 2-tuple without NamedTuple.__new__'s argument parsing
_timestamp_offset = partial(tuple.__new__, TimestampOffset)
_time_index_lookup = index_search.time_index_lookup
_NOT_FOUND = index_search.NOT_FOUND
_PLAIN_PYTHON = bool(numba.config.DISABLE_JIT)


class TimeIndex(AbstractIndex):
    """Kafka's ``TimeIndex`` over an mmapped ``.timeindex`` file.

    Parameters
    ----------
    path, base_offset, max_index_size, writable:
        See :class:`~kafkalog.index.abstract_index.AbstractIndex`.

    Notes
    -----
    :meth:`lookup` of a timestamp before the first entry (or on an empty index) is
    ``(NO_TIMESTAMP, base_offset)`` = ``(-1, base_offset)``, as in Kafka.
    """

    ENTRY_SIZE = 12
    KEY_POS, KEY_SIZE = 0, 8
    VALUE_POS, VALUE_SIZE = 8, 4
    ENTRY_DTYPE = np.dtype([("timestamp", ">i8"), ("relative_offset", ">i4")])

    def __init__(
        self,
        path: str | os.PathLike[str],
        base_offset: int,
        max_index_size: int = DEFAULT_MAX_INDEX_SIZE,
        writable: bool = True,
    ) -> None:
        self._last_entry = TimestampOffset(NO_TIMESTAMP, int(base_offset))
        super().__init__(path, base_offset, max_index_size, writable)
        self._reload_last_entry()

    # key = timestamp, value = absolute offset
    def _key_base(self) -> int:
        return 0

    def _value_base(self) -> int:
        return self._base_offset

    def _parse_entry(self, slot: int) -> TimestampOffset:
        ts, rel = _ENTRY.unpack_from(self._buf, slot * self.ENTRY_SIZE)
        return _timestamp_offset((ts, self._base_offset + rel))

    def _reload_last_entry(self) -> None:
        if self._entries == 0:
            self._last_entry = TimestampOffset(NO_TIMESTAMP, self._base_offset)
        else:
            self._last_entry = self._parse_entry(self._entries - 1)

    def is_full(self) -> bool:
        """True when only the reserved last slot is free (``entries >= max_entries - 1``)."""
        return self._entries >= self._max_entries - 1

    @property
    def last_entry(self) -> TimestampOffset:
        """The last entry, or ``(-1, base_offset)`` when empty."""
        return self._last_entry

    def lookup(self, target_timestamp: int) -> TimestampOffset:
        """Entry with the largest timestamp <= ``target_timestamp``, else ``(-1, base_offset)``."""
        slot, timestamp, offset = _time_index_lookup(
            self._buf, self._entries, self._base_offset, target_timestamp
        )
        if slot < _NOT_FOUND:  # entries <= length // 12 by construction: a bug
            raise self._search_error("search", slot)
        if _PLAIN_PYTHON:  # NUMBA_DISABLE_JIT returns numpy scalars: hand out ints
            timestamp, offset = int(timestamp), int(offset)
        return _timestamp_offset((timestamp, offset))

    def lookup_many(self, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`lookup` of every target timestamp (one search, one decode kernel call).

        Returns
        -------
        (timestamps, offsets) : tuple of int64 arrays, same length as ``targets``
            ``(-1, base_offset)`` where no entry is <= the target.
        """
        slots = self._slots_for_many(targets, False, index_search.LARGEST_LOWER_BOUND)
        return self._gather(slots, NO_TIMESTAMP, self._base_offset)

    def maybe_append(self, timestamp: int, offset: int, skip_full_check: bool = False) -> None:
        """Append ``(timestamp, offset)`` if ``timestamp`` is above the last entry's.

        The same timestamp again (a segment closed or rolled twice) is silently ignored, as
        is any timestamp <= -1 on an empty index. ``skip_full_check`` is only for the final
        entry written on roll/close, which uses the reserved last slot.

        Raises
        ------
        IndexFullError
            The index is full (and ``skip_full_check`` is False), or no slot at all is left.
        InvalidOffsetError
            ``offset`` below the last entry's offset, or ``timestamp`` below its timestamp
            (Kafka throws ``IllegalStateException`` for the latter).
        OffsetOverflowError
            ``offset - base_offset`` is not in ``[0, 2**31 - 1]``.
        """
        with self._lock:
            self.maybe_append_unlocked(timestamp, offset, skip_full_check)

    def maybe_append_unlocked(self, timestamp: int, offset: int,
                              skip_full_check: bool = False) -> None:
        """:meth:`maybe_append` for an owner that already serializes every mutation of this
        index (a ``LogSegment``, under its log's write lock): the same checks, errors and
        effect, without taking the index's own lock (it runs once per append of a segment,
        where an uncontended lock costs about as much as the rest of the call)."""
        # is_full, relative_offset and _pack_entry_at inlined, same order, same errors
        if self._closed or not self._writable:
            self._check_writable()
        timestamp = int(timestamp)
        offset = int(offset)
        entries = self._entries
        if not skip_full_check and entries >= self._max_entries - 1:  # is_full()
            raise IndexFullError(
                f"attempt to append to a full time index (size = {entries})",
                path=self._path,
                offset=offset,
            )
        last_ts, last_offset = self._last_entry
        # the same entry as the last one is not an error: it happens when a segment is
        # closed, or rolled, after its last entry was already written
        if entries != 0 and offset < last_offset:
            raise InvalidOffsetError(
                f"attempt to append an offset ({offset}) to slot {entries} no larger "
                f"than the last offset appended ({last_offset})",
                path=self._path,
                offset=offset,
            )
        if entries != 0 and timestamp < last_ts:
            raise InvalidOffsetError(
                f"attempt to append a timestamp ({timestamp}) to slot {entries} no "
                f"larger than the last timestamp appended ({last_ts})",
                path=self._path,
                offset=offset,
            )
        if timestamp > last_ts:
            if entries >= self._max_entries:
                # Kafka would overflow its buffer (BufferOverflowException) here
                raise IndexFullError(
                    f"no slot left in the time index (size = {entries})",
                    path=self._path,
                    offset=offset,
                )
            rel = offset - self._base_offset
            if not 0 <= rel <= _INT32_MAX:
                self.relative_offset(offset)  # raises OffsetOverflowError
            # entries < max_entries, so slot ``entries`` exists in the mapping
            _ENTRY.pack_into(self._mmap, entries * 12, timestamp, rel)
            self._entries = entries + 1
            self._last_entry = _timestamp_offset((timestamp, offset))

    def maybe_append_many_unlocked(self, timestamps: np.ndarray, offsets: np.ndarray) -> None:
        """:meth:`maybe_append_unlocked` of each ``(timestamps[i], offsets[i])`` in order
        (int64 arrays), the kept entries written with one vectorized store: the same bytes,
        checks and errors. When any call would fail a check (a full index, a decreasing offset
        or timestamp, an offset out of range) the calls are made one by one instead, so the
        error comes from the same call as with sequential calls."""
        k = int(timestamps.shape[0])
        if k == 0:
            return
        entries = self._entries
        last_ts, last_offset = self._last_entry
        # every call checks is_full() first, whether or not it writes: with entries + k below
        # max_entries - 1 no call can see a full index
        if self._closed or not self._writable or entries + k >= self._max_entries - 1:
            written = -1  # the one-by-one path raises the precise error
        else:
            # the kernel checks every call first and writes only when all pass
            written = index_append.pack_time_entries(
                timestamps, offsets, self._base_offset, last_ts, last_offset, entries,
                self._writable_slots(entries, k))
        if written < 0:
            self._maybe_append_each(timestamps, offsets)
            return
        if written:
            self._entries = entries + written
            self._reload_last_entry()

    def _maybe_append_each(self, timestamps: np.ndarray, offsets: np.ndarray) -> None:
        for t, o in zip(timestamps.tolist(), offsets.tolist()):
            self.maybe_append_unlocked(t, o)

    def truncate_to(self, offset: int) -> None:
        """Remove every entry with offset >= ``offset`` (searches the offset column)."""
        self._check_writable()
        offset = int(offset)
        with self._lock:
            slot = self._slot_for(offset, True, index_search.LARGEST_LOWER_BOUND)
            if slot < 0:
                new_entries = 0
            elif self._parse_entry(slot).offset == offset:
                new_entries = slot
            else:
                new_entries = slot + 1
            self._truncate_to_entries(new_entries, zero_removed=True)

    def sanity_check(self) -> None:
        """Kafka's checks: last timestamp >= first, last offset >= base, length % 12 == 0.

        Raises
        ------
        CorruptIndexError
            With the file, what was found and what was expected.
        """
        last = self._last_entry
        if self._entries != 0:
            first_ts = self._parse_entry(0).timestamp
            last_pos = (self._entries - 1) * self.ENTRY_SIZE
            if last.timestamp < first_ts:
                raise CorruptIndexError(
                    f"corrupt time index: non-zero size but the last timestamp is "
                    f"{last.timestamp} which is less than the first timestamp {first_ts} "
                    f"(expected >= {first_ts}, found {last.timestamp})",
                    path=self._path,
                    position=last_pos,
                )
            if last.offset < self._base_offset:
                raise CorruptIndexError(
                    f"corrupt time index: non-zero size but the last offset is {last.offset} "
                    f"which is less than the first offset {self._base_offset} (expected >= "
                    f"{self._base_offset}, found {last.offset})",
                    path=self._path,
                    position=last_pos,
                    offset=last.offset,
                )
        self._check_length_multiple("time index")
