"""One partition as a share group consumes it (KIP-932's ``SharePartition``), sans I/O.

Kafka's share groups hand records to whichever member fetches next, each record locked to that
member for ``group.share.record.lock.duration.ms`` until it is acknowledged. The state of one
(group, partition) pair, as ``core/src/main/java/kafka/server/share/SharePartition.java``
(Kafka 4.1) keeps it:

* **Share-partition start offset** (SPSO, :attr:`SharePartition.start_offset`): every offset below
  it is done (acknowledged or archived). **End offset** (SPEO, :attr:`SharePartition.end_offset`):
  the next offset never acquired. The offsets in between are *in flight*, each in one
  :class:`RecordState` with a delivery count; offsets at or above the end offset are AVAILABLE
  with a delivery count of 0.
* **Acquire** (a ShareFetch): the AVAILABLE in-flight offsets first, in order, then new offsets
  from the end offset on, a log batch at a time (Kafka acquires whole batches, and may exceed
  ``max_records`` to finish one); each acquired offset gets its delivery count increased, the
  member's id and a lock deadline. No batch is started once ``max_records`` are taken or
  ``max_in_flight`` offsets are acquired (``group.share.partition.max.record.locks``; the batch
  started last may overshoot it, as ``max_records``).
* **Acknowledge** (ShareFetch or ShareAcknowledge): only offsets this member holds, with a live
  lock, may be acknowledged (else ``INVALID_RECORD_STATE``, nothing applied): ACCEPT ->
  ACKNOWLEDGED; RELEASE -> AVAILABLE again; REJECT and GAP -> ARCHIVED; RENEW -> a new lock
  deadline. A release (or an expired lock, or the member leaving) of an offset already delivered
  ``max_delivery_count`` times archives it instead (``group.share.delivery.count.limit``).
* The start offset then moves over the done prefix, which is forgotten.
* Records below the log start offset (retention, DeleteRecords) are archived
  (:meth:`SharePartition.update_log_start_offset`).

Locks expire lazily: every call takes ``now`` and first returns expired offsets to AVAILABLE,
which is when Kafka's timer task would have (no record can be observed between the deadline and
the next call).

Representation: one slot per in-flight offset in numpy arrays (state, delivery count, holder,
lock deadline), so that acquiring or acknowledging a batch of a thousand records is a few array
operations rather than a thousand Python ones (a share consumer's fetch acquires whole
batches). ``tests/groups/test_share_partition.py`` keeps the plain per-offset version of these
rules and checks the two agree on random operation sequences.

Example
-------
>>> sp = SharePartition(start_offset=0)
>>> sp.acquire("m1", [(0, 2), (3, 4)], now=0, max_records=4)
[(0, 4, 1)]
>>> sp.acknowledge("m1", [(0, 1, (1,)), (2, 4, (2,))], now=10)
>>> sp.start_offset, sp.acquire("m2", [(0, 2), (3, 4)], now=20, max_records=10)
(2, [(2, 4, 2)])
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence

import numpy as np

from ..errors import GroupError

__all__ = ["SharePartition", "RecordState", "AcknowledgeType", "InvalidRecordStateError",
           "DEFAULT_RECORD_LOCK_DURATION_MS", "DEFAULT_DELIVERY_COUNT_LIMIT",
           "DEFAULT_MAX_RECORD_LOCKS"]

#: group.share.record.lock.duration.ms default
DEFAULT_RECORD_LOCK_DURATION_MS = 30_000
#: group.share.delivery.count.limit default
DEFAULT_DELIVERY_COUNT_LIMIT = 5
#: group.share.partition.max.record.locks default (Kafka 4.1)
DEFAULT_MAX_RECORD_LOCKS = 2000


class RecordState(enum.IntEnum):
    """Kafka's ``RecordState`` ids (also the ``deliveryState`` of ``__share_group_state``)."""

    AVAILABLE = 0
    ACQUIRED = 1
    ACKNOWLEDGED = 2
    ARCHIVED = 4


class AcknowledgeType(enum.IntEnum):
    """The acknowledge types of ShareFetch/ShareAcknowledge (``AcknowledgeType`` plus GAP)."""

    GAP = 0
    ACCEPT = 1
    RELEASE = 2
    REJECT = 3
    RENEW = 4


class InvalidRecordStateError(GroupError):
    """An acknowledgement of offsets the member does not hold (Kafka's
    ``InvalidRecordStateException``: ``INVALID_RECORD_STATE``)."""


#: the holder slot of an offset nobody holds
_NO_MEMBER = -1


class SharePartition:
    """The share state of one partition for one share group (see the module docstring).

    Parameters
    ----------
    start_offset:
        The initial start offset (Kafka's ``share.auto.offset.reset``: the log end offset for
        ``latest``, the log start offset for ``earliest``; or the persisted one).
    lock_duration_ms, max_delivery_count, max_in_flight:
        ``group.share.record.lock.duration.ms``, ``group.share.delivery.count.limit``,
        ``group.share.partition.max.record.locks``.
    """

    def __init__(self, start_offset: int, *,
                 lock_duration_ms: int = DEFAULT_RECORD_LOCK_DURATION_MS,
                 max_delivery_count: int = DEFAULT_DELIVERY_COUNT_LIMIT,
                 max_in_flight: int = DEFAULT_MAX_RECORD_LOCKS) -> None:
        if start_offset < 0:
            raise ValueError(f"start offset must be >= 0 (found {start_offset})")
        self.start_offset = int(start_offset)
        self.end_offset = self.start_offset
        self.lock_duration_ms = lock_duration_ms
        self.max_delivery_count = max_delivery_count
        self.max_in_flight = max_in_flight
        # Invariant: slot i describes offset self._base + i; the slots of the in-flight offsets
        # [start_offset, end_offset) are valid, the others are garbage.
        self._base = self.start_offset
        self._state = np.zeros(64, np.int8)
        self._count = np.zeros(64, np.int16)
        self._holder = np.zeros(64, np.int32)
        self._deadline = np.zeros(64, np.int64)
        self._members: dict[str, int] = {}
        self._member_names: list[str] = []

    # -- slots -----------------------------------------------------------------------------------

    def _window(self) -> slice:
        return slice(self.start_offset - self._base, self.end_offset - self._base)

    def _slots(self, first: int, last: int) -> slice:
        """Slots of the in-flight offsets of ``[first, last]``."""
        lo = max(first, self.start_offset)
        hi = min(last + 1, self.end_offset)
        return slice(lo - self._base, max(lo, hi) - self._base)

    def _grow_to(self, end_offset: int) -> None:
        """Make room for slots up to ``end_offset`` (dropping those below the start offset)."""
        need = end_offset - self.start_offset
        live = self._window()
        cap = len(self._state)
        if end_offset - self._base <= cap:
            return
        new_cap = max(cap, 64)
        while new_cap < need:
            new_cap *= 2
        arrays = []
        for a in (self._state, self._count, self._holder, self._deadline):
            b = np.zeros(new_cap, a.dtype)
            n = live.stop - live.start
            b[:n] = a[live]
            arrays.append(b)
        self._state, self._count, self._holder, self._deadline = arrays
        self._base = self.start_offset

    def _member(self, member_id: str) -> int:
        idx = self._members.get(member_id)
        if idx is None:
            idx = self._members[member_id] = len(self._member_names)
            self._member_names.append(member_id)
        return idx

    # -- reading ---------------------------------------------------------------------------------

    def state_of(self, offset: int) -> tuple[RecordState, int]:
        """``(state, delivery count)`` of ``offset`` (below the start offset: done and
        forgotten, reported as ACKNOWLEDGED with count 0; at or above the end offset:
        AVAILABLE, 0)."""
        if offset < self.start_offset:
            return RecordState.ACKNOWLEDGED, 0
        if offset >= self.end_offset:
            return RecordState.AVAILABLE, 0
        i = offset - self._base
        return RecordState(int(self._state[i])), int(self._count[i])

    def acquired_count(self) -> int:
        return int(np.count_nonzero(self._state[self._window()] == RecordState.ACQUIRED))

    def next_fetch_offset(self, now: int) -> int:
        """Where the next fetch reads from: the first AVAILABLE in-flight offset, else the end
        offset (Kafka's ``nextFetchOffset``)."""
        self.expire_locks(now)
        w = self._window()
        free = np.flatnonzero(self._state[w] == RecordState.AVAILABLE)
        return int(free[0]) + self.start_offset if len(free) else self.end_offset

    def state_batches(self) -> list[tuple[int, int, int, int]]:
        """The in-flight offsets as ``(first, last, state, delivery count)`` runs (what
        ``__share_group_state``'s ShareSnapshotValue stores; ACQUIRED is stored as AVAILABLE,
        as Kafka persists it)."""
        w = self._window()
        n = w.stop - w.start
        if n <= 0:
            return []
        st = self._state[w].copy()
        st[st == RecordState.ACQUIRED] = RecordState.AVAILABLE
        dc = self._count[w]
        cut = np.flatnonzero((st[1:] != st[:-1]) | (dc[1:] != dc[:-1])) + 1
        starts = np.concatenate(([0], cut))
        ends = np.concatenate((cut, [n])) - 1
        off = self.start_offset
        return [(off + int(a), off + int(b), int(st[a]), int(dc[a]))
                for a, b in zip(starts, ends)]

    # -- changes -----------------------------------------------------------------------------------

    def restore(self, batches: Iterable[tuple[int, int, int, int]]) -> None:
        """Load in-flight state persisted as :meth:`state_batches` (after the start offset);
        offsets between them are AVAILABLE, never delivered."""
        for first, last, state, count in batches:
            first = max(first, self.start_offset)
            if last < first:
                continue
            if last + 1 > self.end_offset:
                self._grow_to(last + 1)
                gap = slice(self.end_offset - self._base, first - self._base)
                if gap.stop > gap.start:
                    self._set_available(gap, 0)
                self.end_offset = last + 1
            st = RecordState(state)
            sl = self._slots(first, last)
            if st == RecordState.ACQUIRED:
                st = RecordState.AVAILABLE
            self._state[sl] = st
            self._count[sl] = count
            self._holder[sl] = _NO_MEMBER
            self._deadline[sl] = 0
        self._advance_start()

    def _set_available(self, sl: slice, count: int) -> None:
        self._state[sl] = RecordState.AVAILABLE
        self._count[sl] = count
        self._holder[sl] = _NO_MEMBER
        self._deadline[sl] = 0

    def expire_locks(self, now: int) -> int:
        """Return every offset whose lock has expired to AVAILABLE (ARCHIVED past the delivery
        limit); returns how many."""
        w = self._window()
        st = self._state[w]
        mask = (st == RecordState.ACQUIRED) & (self._deadline[w] <= now)
        n = int(np.count_nonzero(mask))
        if n:
            self._release_mask(w, mask)
            self._advance_start()
        return n

    def acquire(self, member_id: str, batches: Sequence[tuple[int, int]], now: int,
                max_records: int) -> list[tuple[int, int, int]]:
        """Acquire for ``member_id`` among the offsets of ``batches`` (the ``(base offset, last
        offset)`` of the log batches a fetch read, in order); returns the acquired ranges
        ``(first, last, delivery count)``."""
        self.expire_locks(now)
        room = min(max_records, self.max_in_flight - self.acquired_count())
        taken = 0
        pieces: list[np.ndarray] = []
        deadline = now + self.lock_duration_ms
        mid = self._member(member_id)
        # redeliveries first: the AVAILABLE in-flight offsets of each batch read, a batch at a
        # time as new records are
        for base, last in batches:
            if taken >= room:
                break
            sl = self._slots(base, last)
            if sl.stop <= sl.start:
                continue
            hit = np.flatnonzero(self._state[sl] == RecordState.AVAILABLE) + sl.start
            if len(hit):
                self._state[hit] = RecordState.ACQUIRED
                self._count[hit] += 1
                self._holder[hit] = mid
                self._deadline[hit] = deadline
                pieces.append(hit + self._base)
                taken += len(hit)
        # then new records from the end offset, whole batches at a time
        for base, last in batches:
            if taken >= room:
                break
            if last < self.end_offset:
                continue
            first = max(base, self.end_offset)
            self._grow_to(last + 1)
            sl = slice(first - self._base, last + 1 - self._base)
            self._state[sl] = RecordState.ACQUIRED
            self._count[sl] = 1
            self._holder[sl] = mid
            self._deadline[sl] = deadline
            self.end_offset = last + 1
            pieces.append(np.arange(first, last + 1, dtype=np.int64))
            taken += last + 1 - first
        if not pieces:
            return []
        offs = np.sort(np.concatenate(pieces))
        counts = self._count[offs - self._base]
        cut = np.flatnonzero((np.diff(offs) != 1) | (counts[1:] != counts[:-1])) + 1
        starts = np.concatenate(([0], cut))
        ends = np.concatenate((cut, [len(offs)])) - 1
        return [(int(offs[a]), int(offs[b]), int(counts[a])) for a, b in zip(starts, ends)]

    def acknowledge(self, member_id: str,
                    batches: Sequence[tuple[int, int, Sequence[int]]], now: int) -> None:
        """Apply ``(first offset, last offset, acknowledge types)`` batches: one type for the
        whole range or one per offset. All are checked before any is applied.

        Raises
        ------
        InvalidRecordStateError
            An offset the member does not hold with a live lock, a bad type or type count.
        """
        self.expire_locks(now)
        mid = self._members.get(member_id, -2)
        plan: list[tuple[slice, np.ndarray]] = []
        valid = np.array(sorted(int(t) for t in AcknowledgeType), np.int64)
        for first, last, types in batches:
            if last < first:
                raise InvalidRecordStateError(
                    f"acknowledgement batch with last offset {last} below first offset {first}")
            n = last - first + 1
            if len(types) not in (1, n):
                raise InvalidRecordStateError(
                    f"acknowledgement batch {first}-{last} has {len(types)} types (expected 1 "
                    f"or {n})")
            kinds = np.asarray(types, np.int64)
            bad = np.flatnonzero(~np.isin(kinds, valid))
            if len(bad):
                off = first + (int(bad[0]) if len(types) > 1 else 0)
                raise InvalidRecordStateError(
                    f"unknown acknowledge type {int(kinds[bad[0]])} at offset {off}")
            if first < self.start_offset or last >= self.end_offset:
                off = first if first < self.start_offset else max(first, self.end_offset)
                raise InvalidRecordStateError(
                    f"offset {off} is not acquired by member {member_id} (state "
                    f"{self.state_of(off)[0].name})")
            sl = slice(first - self._base, last + 1 - self._base)
            held = (self._state[sl] == RecordState.ACQUIRED) & (self._holder[sl] == mid)
            if not held.all():
                off = first + int(np.flatnonzero(~held)[0])
                raise InvalidRecordStateError(
                    f"offset {off} is not acquired by member {member_id} (state "
                    f"{self.state_of(off)[0].name})")
            plan.append((sl, kinds if len(types) > 1 else np.full(n, kinds[0])))
        for sl, kinds in plan:
            idx = np.arange(sl.start, sl.stop)
            renew = idx[kinds == AcknowledgeType.RENEW]
            self._deadline[renew] = now + self.lock_duration_ms
            accept = idx[kinds == AcknowledgeType.ACCEPT]
            self._state[accept] = RecordState.ACKNOWLEDGED
            archive = idx[(kinds == AcknowledgeType.REJECT) | (kinds == AcknowledgeType.GAP)]
            self._state[archive] = RecordState.ARCHIVED
            release = idx[kinds == AcknowledgeType.RELEASE]
            self._state[release] = np.where(self._count[release] >= self.max_delivery_count,
                                            RecordState.ARCHIVED, RecordState.AVAILABLE)
            done = idx[kinds != AcknowledgeType.RENEW]
            self._holder[done] = _NO_MEMBER
            self._deadline[done] = 0
        self._advance_start()

    def archive_acquired(self, member_id: str, ranges: Iterable[tuple[int, int]]) -> int:
        """Archive what ``member_id`` holds within ``ranges`` (the records of aborted
        transactions a ``read_committed`` fetch just acquired: Kafka archives them instead of
        delivering them); returns how many."""
        mid = self._members.get(member_id)
        if mid is None:
            return 0
        n = 0
        for first, last in ranges:
            sl = self._slots(first, last)
            if sl.stop <= sl.start:
                continue
            idx = np.flatnonzero((self._state[sl] == RecordState.ACQUIRED)
                                 & (self._holder[sl] == mid)) + sl.start
            self._state[idx] = RecordState.ARCHIVED
            self._holder[idx] = _NO_MEMBER
            self._deadline[idx] = 0
            n += len(idx)
        if n:
            self._advance_start()
        return n

    def release_member(self, member_id: str) -> int:
        """Release every offset ``member_id`` holds (it left, or its share session closed);
        returns how many."""
        mid = self._members.get(member_id)
        if mid is None:
            return 0
        w = self._window()
        mask = (self._state[w] == RecordState.ACQUIRED) & (self._holder[w] == mid)
        n = int(np.count_nonzero(mask))
        if n:
            self._release_mask(w, mask)
            self._advance_start()
        return n

    def update_log_start_offset(self, log_start_offset: int) -> None:
        """Records below the log's start offset are gone: archived, and the start (and end)
        offsets move up to it (Kafka's ``updateCacheAndOffsets``)."""
        if log_start_offset <= self.start_offset:
            return
        if log_start_offset >= self.end_offset:
            self.start_offset = self.end_offset = self._base = log_start_offset
            return
        self.start_offset = log_start_offset
        self._advance_start()

    # -- internals -------------------------------------------------------------------------------

    def _release_mask(self, w: slice, mask: np.ndarray) -> None:
        idx = np.flatnonzero(mask) + w.start
        self._state[idx] = np.where(self._count[idx] >= self.max_delivery_count,
                                    RecordState.ARCHIVED, RecordState.AVAILABLE)
        self._holder[idx] = _NO_MEMBER
        self._deadline[idx] = 0

    def _advance_start(self) -> None:
        w = self._window()
        st = self._state[w]
        open_ = np.flatnonzero((st != RecordState.ACKNOWLEDGED) & (st != RecordState.ARCHIVED))
        self.start_offset = (self.start_offset + int(open_[0]) if len(open_)
                             else self.end_offset)
        if self.start_offset == self.end_offset:
            self._base = self.start_offset  # nothing in flight: slot 0 is the next offset

    def __repr__(self) -> str:
        return (f"SharePartition(start_offset={self.start_offset}, end_offset={self.end_offset}, "
                f"acquired={self.acquired_count()})")
