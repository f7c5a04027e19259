"""The plain-Python reference of :class:`kafkalog.groups.share.SharePartition`: the same rules
with one Python object per in-flight offset (the package's version keeps numpy arrays).
``test_share_partition.py`` runs both on random operation sequences and compares them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kafkalog.groups.share import AcknowledgeType, InvalidRecordStateError, RecordState
from kafkalog.groups.share.share_partition import (
    DEFAULT_DELIVERY_COUNT_LIMIT,
    DEFAULT_MAX_RECORD_LOCKS,
    DEFAULT_RECORD_LOCK_DURATION_MS,
)


@dataclass
class _InFlight:
    """One in-flight offset. Invariant: ``member_id`` and ``lock_deadline`` are set exactly
    while ``state`` is ACQUIRED."""

    state: RecordState
    delivery_count: int
    member_id: str | None = None
    lock_deadline: int = 0


class ReferenceSharePartition:
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
        #: offset -> state, for every offset in [start_offset, end_offset) (insertion order is
        #: offset order: offsets are only ever added at the end)
        self._in_flight: dict[int, _InFlight] = {}

    # -- reading ---------------------------------------------------------------------------------

    def state_of(self, offset: int) -> tuple[RecordState, int]:
        """``(state, delivery count)`` of ``offset`` (below the start offset: ARCHIVED or
        ACKNOWLEDGED are forgotten and reported as ACKNOWLEDGED)."""
        if offset < self.start_offset:
            return RecordState.ACKNOWLEDGED, 0
        rec = self._in_flight.get(offset)
        return (RecordState.AVAILABLE, 0) if rec is None else (rec.state, rec.delivery_count)

    def acquired_count(self) -> int:
        return sum(1 for r in self._in_flight.values() if r.state == RecordState.ACQUIRED)

    def next_fetch_offset(self, now: int) -> int:
        """Where the next fetch reads from: the first AVAILABLE in-flight offset, else the end
        offset (Kafka's ``nextFetchOffset``)."""
        self.expire_locks(now)
        for off, rec in self._in_flight.items():
            if rec.state == RecordState.AVAILABLE:
                return off
        return self.end_offset

    def state_batches(self) -> list[tuple[int, int, int, int]]:
        """The in-flight offsets as ``(first, last, state, delivery count)`` runs (what
        ``__share_group_state``'s ShareSnapshotValue stores; ACQUIRED is stored as AVAILABLE,
        as Kafka persists it)."""
        out: list[list[int]] = []
        for off, rec in self._in_flight.items():
            st = RecordState.AVAILABLE if rec.state == RecordState.ACQUIRED else rec.state
            if out and out[-1][1] == off - 1 and out[-1][2:] == [st, rec.delivery_count]:
                out[-1][1] = off
            else:
                out.append([off, off, int(st), rec.delivery_count])
        return [tuple(b) for b in out]  # type: ignore[misc]

    # -- changes -----------------------------------------------------------------------------------

    def restore(self, batches: Iterable[tuple[int, int, int, int]]) -> None:
        """Load in-flight state persisted as :meth:`state_batches` (after the start offset)."""
        for first, last, state, count in batches:
            for off in range(max(first, self.start_offset), last + 1):
                st = RecordState(state)
                if st == RecordState.ACQUIRED:
                    st = RecordState.AVAILABLE
                self._in_flight[off] = _InFlight(st, count)
                self.end_offset = max(self.end_offset, off + 1)
        for off in range(self.start_offset, self.end_offset):
            self._in_flight.setdefault(off, _InFlight(RecordState.AVAILABLE, 0))
        self._in_flight = dict(sorted(self._in_flight.items()))
        self._advance_start()

    def expire_locks(self, now: int) -> int:
        """Return every offset whose lock has expired to AVAILABLE (ARCHIVED past the delivery
        limit); returns how many."""
        n = 0
        for rec in self._in_flight.values():
            if rec.state == RecordState.ACQUIRED and rec.lock_deadline <= now:
                self._release(rec)
                n += 1
        if n:
            self._advance_start()
        return n

    def acquire(self, member_id: str, batches: Sequence[tuple[int, int]], now: int,
                max_records: int) -> list[tuple[int, int, int]]:
        """Acquire for ``member_id`` among the offsets of ``batches`` (the ``(base offset, last
        offset)`` of the log batches a fetch read, in order); returns the acquired ranges
        ``(first, last, delivery count)``."""
        self.expire_locks(now)
        room = min(max_records, self.max_in_flight - self.acquired_count())
        taken: list[int] = []
        deadline = now + self.lock_duration_ms
        # redeliveries first: the AVAILABLE in-flight offsets of each batch read, a batch at a
        # time as new records are
        for base, last in batches:
            if len(taken) >= room:
                break
            for off in range(max(base, self.start_offset), min(last + 1, self.end_offset)):
                rec = self._in_flight[off]
                if rec.state == RecordState.AVAILABLE:
                    self._acquire(rec, member_id, deadline)
                    taken.append(off)
        # then new records from the end offset, whole batches at a time
        for base, last in batches:
            if len(taken) >= room:
                break
            if last < self.end_offset:
                continue
            for off in range(max(base, self.end_offset), last + 1):
                rec = _InFlight(RecordState.AVAILABLE, 0)
                self._in_flight[off] = rec
                self._acquire(rec, member_id, deadline)
                taken.append(off)
            self.end_offset = last + 1
        return self._ranges(taken)

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
        plan: list[tuple[_InFlight, AcknowledgeType]] = []
        for first, last, types in batches:
            if last < first:
                raise InvalidRecordStateError(
                    f"acknowledgement batch with last offset {last} below first offset {first}")
            n = last - first + 1
            if len(types) not in (1, n):
                raise InvalidRecordStateError(
                    f"acknowledgement batch {first}-{last} has {len(types)} types (expected 1 "
                    f"or {n})")
            for i, off in enumerate(range(first, last + 1)):
                t = types[0] if len(types) == 1 else types[i]
                try:
                    kind = AcknowledgeType(t)
                except ValueError:
                    raise InvalidRecordStateError(
                        f"unknown acknowledge type {t} at offset {off}") from None
                rec = self._in_flight.get(off)
                if rec is None or rec.state != RecordState.ACQUIRED or rec.member_id != member_id:
                    raise InvalidRecordStateError(
                        f"offset {off} is not acquired by member {member_id} (state "
                        f"{self.state_of(off)[0].name})")
                plan.append((rec, kind))
        for rec, kind in plan:
            if kind == AcknowledgeType.ACCEPT:
                self._done(rec, RecordState.ACKNOWLEDGED)
            elif kind == AcknowledgeType.RELEASE:
                self._release(rec)
            elif kind == AcknowledgeType.RENEW:
                rec.lock_deadline = now + self.lock_duration_ms
            else:  # REJECT, GAP
                self._done(rec, RecordState.ARCHIVED)
        self._advance_start()

    def release_member(self, member_id: str) -> int:
        """Release every offset ``member_id`` holds (it left, or its share session closed);
        returns how many."""
        n = 0
        for rec in self._in_flight.values():
            if rec.state == RecordState.ACQUIRED and rec.member_id == member_id:
                self._release(rec)
                n += 1
        if n:
            self._advance_start()
        return n

    def update_log_start_offset(self, log_start_offset: int) -> None:
        """Records below the log's start offset are gone: archived, and the start (and end)
        offsets move up to it (Kafka's ``updateCacheAndOffsets``)."""
        if log_start_offset <= self.start_offset:
            return
        for off in range(self.start_offset, min(log_start_offset, self.end_offset)):
            self._in_flight.pop(off, None)
        self.start_offset = log_start_offset
        self.end_offset = max(self.end_offset, log_start_offset)
        self._advance_start()

    # -- internals -------------------------------------------------------------------------------

    def _acquire(self, rec: _InFlight, member_id: str, deadline: int) -> None:
        rec.state = RecordState.ACQUIRED
        rec.delivery_count += 1
        rec.member_id = member_id
        rec.lock_deadline = deadline

    def _release(self, rec: _InFlight) -> None:
        self._done(rec, RecordState.ARCHIVED if rec.delivery_count >= self.max_delivery_count
                   else RecordState.AVAILABLE)

    @staticmethod
    def _done(rec: _InFlight, state: RecordState) -> None:
        rec.state = state
        rec.member_id = None
        rec.lock_deadline = 0

    def _advance_start(self) -> None:
        inf = self._in_flight
        start = self.start_offset
        while start < self.end_offset:
            rec = inf.get(start)
            if rec is not None and rec.state not in (RecordState.ACKNOWLEDGED,
                                                     RecordState.ARCHIVED):
                break
            inf.pop(start, None)
            start += 1
        self.start_offset = start

    def _ranges(self, offsets: list[int]) -> list[tuple[int, int, int]]:
        out: list[list[int]] = []
        for off in sorted(offsets):
            count = self._in_flight[off].delivery_count
            if out and out[-1][1] == off - 1 and out[-1][2] == count:
                out[-1][1] = off
            else:
                out.append([off, off, count])
        return [tuple(r) for r in out]  # type: ignore[misc]

