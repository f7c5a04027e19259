"""``LeaderEpochFileCache``: epoch -> start offset, kept in ``leader-epoch-checkpoint``.

Kafka's ``LeaderEpochFileCache`` (storage/.../internals/epoch/LeaderEpochFileCache.java): the
cache maps each partition leader epoch to the first offset written in it, is fed by the
partition leader epoch of appended (and recovered) v2 batches, and answers
``OffsetsForLeaderEpoch`` (:meth:`end_offset_for`). Invariant: epochs and start offsets both
strictly increase from entry to entry; an assignment that breaks it removes the entries in the
way (``maybeTruncateNonMonotonicEntries``).

The file is Kafka's text checkpoint (version 0, count, ``<epoch> <start offset>`` lines), written
through :mod:`kafkalog.checkpoint` (``.tmp`` + fsync + rename).

>>> import tempfile, os
>>> cache = LeaderEpochFileCache(os.path.join(tempfile.mkdtemp(), "leader-epoch-checkpoint"))
>>> _ = cache.assign(0, 0); _ = cache.assign(3, 120)
>>> cache.end_offset_for(0, log_end_offset=200), cache.end_offset_for(3, log_end_offset=200)
((0, 120), (3, 200))
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path

from .checkpoint import EpochEntry as CheckpointEpochEntry
from .checkpoint import LeaderEpochCheckpointFile

__all__ = ["LeaderEpochFileCache", "EpochEntry", "UNDEFINED_EPOCH", "UNDEFINED_EPOCH_OFFSET",
           "end_offset_for"]

UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1

EpochEntry = tuple[int, int]  # (epoch, start_offset)


def end_offset_for(entries: Sequence[EpochEntry], requested_epoch: int,
                   log_end_offset: int) -> tuple[int, int]:
    """Kafka's ``LeaderEpochFileCache.endOffsetFor``: ``(epoch, end offset)`` for a follower
    asking about ``requested_epoch``, over ``entries`` (``(epoch, start offset)``, increasing).

    The latest epoch ends at the log end offset; an older epoch ends where the next higher
    epoch starts (reported with the largest known epoch <= the requested one, or the requested
    one itself when it is below every known epoch); an epoch above every known one, or -1,
    gives ``(-1, -1)``.

    >>> end_offset_for([(0, 0), (3, 120)], 2, 200), end_offset_for([(0, 0), (3, 120)], 4, 200)
    ((0, 120), (-1, -1))
    """
    if requested_epoch == UNDEFINED_EPOCH or not entries:
        return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
    if entries[-1][0] == requested_epoch:
        return requested_epoch, log_end_offset
    higher = next((e for e in entries if e[0] > requested_epoch), None)
    if higher is None:
        return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
    floor = None
    for e in entries:
        if e[0] <= requested_epoch:
            floor = e
    if floor is None:
        return requested_epoch, higher[1]
    return floor[0], higher[1]


class LeaderEpochFileCache:
    """Epoch -> start offset, persisted in ``path`` (Kafka's text checkpoint format).

    Parameters
    ----------
    path:
        The ``leader-epoch-checkpoint`` file; read if it exists.
    read_only:
        Never write the file (readers of a log owned by another process).
    """

    def __init__(self, path: str | os.PathLike[str], *, read_only: bool = False) -> None:
        self.path = Path(path)
        self._read_only = read_only
        self._lock = threading.RLock()
        self._entries: list[EpochEntry] = []
        # Kafka's constructor, checkpoint.read().forEach(this::assign): a damaged file whose
        # entries are not increasing loads monotonic (the entries in the way are dropped)
        read = _read_checkpoint(self.path) if self.path.exists() else []
        for epoch, start in read:
            self.assign(epoch, start, flush=False)
        if self._entries != read:
            self.flush()  # leave a monotonic file behind (a no-op when read-only)

    # -- queries ---------------------------------------------------------------------------

    @property
    def entries(self) -> list[EpochEntry]:
        """A copy of the ``(epoch, start_offset)`` entries in increasing order."""
        return list(self._entries)

    @property
    def latest_epoch(self) -> int | None:
        e = self._entries
        return e[-1][0] if e else None

    @property
    def earliest_entry(self) -> EpochEntry | None:
        e = self._entries
        return e[0] if e else None

    def end_offset_for(self, requested_epoch: int, log_end_offset: int) -> tuple[int, int]:
        """Kafka's ``endOffsetFor`` over this cache (see :func:`end_offset_for`)."""
        return end_offset_for(self._entries, requested_epoch, log_end_offset)

    # -- updates ---------------------------------------------------------------------------

    def assign(self, epoch: int, start_offset: int, *, flush: bool = True) -> bool:
        """Record that ``epoch`` starts at ``start_offset`` (Kafka's ``assign``).

        No-op when ``epoch`` is already the latest with an earlier or equal start. Entries with
        an epoch >= ``epoch`` or a start offset >= ``start_offset`` are removed first so the
        cache stays monotonic. Returns True when the cache changed.
        """
        if epoch < 0 or start_offset < 0:
            raise ValueError(f"invalid leader epoch entry (epoch {epoch}, offset {start_offset})")
        with self._lock:
            e = self._entries
            if e and e[-1][0] == epoch and start_offset >= e[-1][1]:
                return False
            while e and (e[-1][0] >= epoch or e[-1][1] >= start_offset):
                e.pop()
            e.append((epoch, start_offset))
            if flush:
                self.flush()
            return True

    def assign_batches(self, epochs: list[int], base_offsets: list[int], *,
                       only_newer: bool = True) -> bool:
        """Assign each batch's epoch in order, skipping epochs < 0; writes the file once at the
        end. ``only_newer`` (recovery, Kafka's ``LogSegment.recover``) also skips epochs not
        above the latest; appends (Kafka's ``UnifiedLog.append``) pass False: every epoch is
        assigned, and a lower one truncates the entries in its way."""
        changed = False
        with self._lock:
            for epoch, base in zip(epochs, base_offsets):
                if epoch < 0:
                    continue
                latest = self.latest_epoch
                if not only_newer or latest is None or epoch > latest:
                    changed |= self.assign(epoch, base, flush=False)
            if changed:
                self.flush()
        return changed

    def truncate_from_end(self, end_offset: int) -> None:
        """Remove entries starting at or after ``end_offset`` (log truncated to it)."""
        with self._lock:
            e = self._entries
            if end_offset >= 0 and e and e[-1][1] >= end_offset:
                self._entries = [x for x in e if x[1] < end_offset]
                self.flush()

    def truncate_from_start(self, start_offset: int) -> None:
        """Remove entries before ``start_offset`` (log start advanced); the last removed epoch
        is kept, moved to start at ``start_offset``."""
        with self._lock:
            e = self._entries
            if start_offset < 0 or not e or e[0][1] >= start_offset:
                return
            removed = [x for x in e if x[1] <= start_offset]
            kept = [x for x in e if x[1] > start_offset]
            self._entries = [(removed[-1][0], start_offset), *kept]
            self.flush()

    def clear(self) -> None:
        with self._lock:
            self._entries = []
            self.flush()

    def flush(self) -> None:
        """Write the checkpoint file (atomically)."""
        if self._read_only:
            return
        _write_checkpoint(self.path, list(self._entries))

    def __repr__(self) -> str:
        return f"LeaderEpochFileCache({str(self.path)!r}, entries={self._entries})"


def _read_checkpoint(path: Path) -> list[EpochEntry]:
    return [(e.epoch, e.start_offset) for e in LeaderEpochCheckpointFile(path).read()]


def _write_checkpoint(path: Path, entries: list[EpochEntry]) -> None:
    LeaderEpochCheckpointFile(path).write(
        [CheckpointEpochEntry(epoch, offset) for epoch, offset in entries])
