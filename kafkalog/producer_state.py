"""Producer state: idempotent deduplication, epoch fencing, transactions and the last stable offset.

Kafka's ``ProducerStateManager`` + ``ProducerAppendInfo`` + ``ProducerStateEntry``
(storage/src/main/java/org/apache/kafka/storage/internals/log/), for one partition:

* Per producer id: the epoch, the metadata of the last :data:`NUM_BATCHES_TO_RETAIN` (5) data
  batches (first/last sequence and offset), the coordinator epoch, the last timestamp and the
  first offset of its open transaction.
* **Duplicates.** A leader append (``origin="client"``) of a batch whose producer id, epoch and
  sequence range equal one of the retained batches is a retry: nothing is written and the original
  append's offsets are returned (:meth:`ProducerStateManager.prepare_append`).
* **Validation** (client appends): an epoch below the current one raises
  :class:`InvalidProducerEpochError`; a sequence that does not follow the last one (same epoch) or
  a non-zero first sequence in a new epoch raises :class:`OutOfOrderSequenceError`; a
  non-transactional batch inside an open transaction raises :class:`InvalidTxnStateError`; an
  end-transaction marker with an older coordinator epoch raises
  :class:`TransactionCoordinatorFencedError`. Replicated appends (``origin="replication"``) are
  not validated, as in Kafka.
* **Transactions.** The first transactional batch of a producer opens a transaction at its base
  offset; a COMMIT/ABORT marker closes it. Only transactions with data complete
  (:class:`CompletedTxn`); an aborted one becomes an :class:`~kafkalog.index.txn_index.AbortedTxn`
  in the ``.txnindex`` of the segment holding its marker, with the last stable offset at that
  moment (the first offset of the oldest other open transaction, else the marker offset + 1).
* **Last stable offset** = min(first offset of the oldest open transaction, high watermark).
* **Snapshots** (``<offset>.snapshot``, :mod:`kafkalog.producer_snapshot`): taken on roll (at the
  new segment's base offset) and on close (at the log end offset), loaded at open; the batches
  after the snapshot are replayed (:meth:`ProducerStateManager.replay`). Only the last batch of
  each producer is in a snapshot (Kafka's format), so after a restart only a retry of a producer's
  last batch is recognised as a duplicate, exactly as on a broker.

Threads: not thread-safe; the owning ``Log`` serializes every call under its write lock.

Deviations (documented): producer-id expiration (``producer.id.expiration.ms``) and the
transaction-verification state of KIP-890 are not implemented; transaction markers are validated
with the transaction-version 0/1 rule (marker epoch >= current epoch).

Example
-------
>>> import tempfile
>>> psm = ProducerStateManager(tempfile.mkdtemp())
>>> b = ProducerBatch(producer_id=7, producer_epoch=0, base_sequence=0, last_sequence=2,
...                   base_offset=0, last_offset=2, max_timestamp=1, is_transactional=False)
>>> psm.prepare_append([b]).duplicate is None
True
>>> _ = psm.apply([b])
>>> psm.prepare_append([b]).duplicate.first_offset   # a retry: same id, epoch, sequences
0
"""

from __future__ import annotations

import bisect
import logging
import os
import struct
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from . import files
from .errors import CorruptCheckpointError, KafkaLogError
from .index.txn_index import AbortedTxn, TransactionIndex
from .producer_snapshot import ProducerSnapshotEntry, read_snapshot, write_snapshot

__all__ = [
    "NUM_BATCHES_TO_RETAIN",
    "BatchMetadata",
    "ProducerStateEntry",
    "ProducerBatch",
    "CompletedTxn",
    "AppendPlan",
    "ProducerStateManager",
    "ProducerStateError",
    "OutOfOrderSequenceError",
    "InvalidProducerEpochError",
    "InvalidTxnStateError",
    "TransactionCoordinatorFencedError",
    "producer_batches",
    "append_aborted_txn",
]

logger = logging.getLogger(__name__)

#: ProducerStateEntry.NUM_BATCHES_TO_RETAIN: retries of the last 5 batches are detected
NUM_BATCHES_TO_RETAIN = 5
#: producer.id.expiration.ms (Kafka 3.4+): idle producers are forgotten after a day
PRODUCER_ID_EXPIRATION_MS = 86400000
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
INT32_MAX = 2**31 - 1

CLIENT = "client"
REPLICATION = "replication"
COORDINATOR = "coordinator"

_PID = struct.Struct(">q")
_ATTR_TRANSACTIONAL = 0x10
_ATTR_CONTROL = 0x20


# -- errors ------------------------------------------------------------------------------------


class ProducerStateError(KafkaLogError, ValueError):
    """An append refused by producer-state validation (nothing was written)."""


class OutOfOrderSequenceError(ProducerStateError):
    """Kafka's ``OutOfOrderSequenceException``: a sequence that does not follow the last one."""


class InvalidProducerEpochError(ProducerStateError):
    """Kafka's ``InvalidProducerEpochException``: an epoch below the producer's current epoch
    (the producer was fenced by a newer instance)."""


class InvalidTxnStateError(ProducerStateError):
    """Kafka's ``InvalidTxnStateException``: a non-transactional write inside a transaction."""


class TransactionCoordinatorFencedError(ProducerStateError):
    """Kafka's ``TransactionCoordinatorFencedException``: a marker from an older coordinator."""


# -- state ---------------------------------------------------------------------------------------


def _decrement_sequence(seq: int, delta: int) -> int:
    # DefaultRecordBatch.decrementSequence
    if seq < delta:
        return INT32_MAX - (delta - seq) + 1
    return seq - delta


@dataclass(frozen=True)
class BatchMetadata:
    """Kafka's ``BatchMetadata``: one retained data batch of a producer."""

    last_seq: int
    last_offset: int
    offset_delta: int
    timestamp: int

    @property
    def first_seq(self) -> int:
        return _decrement_sequence(self.last_seq, self.offset_delta)

    @property
    def first_offset(self) -> int:
        return self.last_offset - self.offset_delta


@dataclass
class ProducerStateEntry:
    """Kafka's ``ProducerStateEntry``: what the partition knows about one producer id."""

    producer_id: int
    producer_epoch: int = NO_PRODUCER_EPOCH
    batch_metadata: deque[BatchMetadata] = field(default_factory=deque)
    coordinator_epoch: int = -1
    last_timestamp: int = -1
    current_txn_first_offset: int | None = None

    def copy(self) -> ProducerStateEntry:
        return ProducerStateEntry(self.producer_id, self.producer_epoch,
                                  deque(self.batch_metadata), self.coordinator_epoch,
                                  self.last_timestamp, self.current_txn_first_offset)

    @property
    def is_empty(self) -> bool:
        return not self.batch_metadata

    @property
    def last_seq(self) -> int:
        return self.batch_metadata[-1].last_seq if self.batch_metadata else NO_SEQUENCE

    @property
    def first_seq(self) -> int:
        return self.batch_metadata[0].first_seq if self.batch_metadata else NO_SEQUENCE

    @property
    def last_data_offset(self) -> int:
        return self.batch_metadata[-1].last_offset if self.batch_metadata else -1

    def _maybe_update_epoch(self, epoch: int) -> None:
        if self.producer_epoch != epoch:
            self.batch_metadata.clear()
            self.producer_epoch = epoch

    def add_batch(self, epoch: int, last_seq: int, last_offset: int, offset_delta: int,
                  timestamp: int) -> None:
        self._maybe_update_epoch(epoch)
        if len(self.batch_metadata) == NUM_BATCHES_TO_RETAIN:
            self.batch_metadata.popleft()
        self.batch_metadata.append(BatchMetadata(last_seq, last_offset, offset_delta, timestamp))
        self.last_timestamp = timestamp

    def update(self, epoch: int, coordinator_epoch: int, timestamp: int) -> None:
        """After an end-transaction marker (Kafka's ``update``)."""
        self._maybe_update_epoch(epoch)
        self.coordinator_epoch = coordinator_epoch
        self.last_timestamp = timestamp
        self.current_txn_first_offset = None

    def find_duplicate_batch(self, epoch: int, first_seq: int, last_seq: int
                             ) -> BatchMetadata | None:
        """The retained batch with this epoch and sequence range (a retry), or None."""
        if epoch != self.producer_epoch:
            return None
        for m in self.batch_metadata:
            if m.first_seq == first_seq and m.last_seq == last_seq:
                return m
        return None

    def to_snapshot(self) -> ProducerSnapshotEntry:
        last = self.batch_metadata[-1] if self.batch_metadata else None
        return ProducerSnapshotEntry(
            producer_id=self.producer_id, producer_epoch=self.producer_epoch,
            last_sequence=last.last_seq if last else NO_SEQUENCE,
            last_offset=last.last_offset if last else -1,
            offset_delta=last.offset_delta if last else 0,
            timestamp=self.last_timestamp, coordinator_epoch=self.coordinator_epoch,
            current_txn_first_offset=-1 if self.current_txn_first_offset is None
            else self.current_txn_first_offset)

    @classmethod
    def from_snapshot(cls, e: ProducerSnapshotEntry) -> ProducerStateEntry:
        entry = cls(e.producer_id, e.producer_epoch, deque(), e.coordinator_epoch, e.timestamp,
                    e.current_txn_first_offset_or_none)
        if e.has_batch_metadata:
            entry.batch_metadata.append(
                BatchMetadata(e.last_sequence, e.last_offset, e.offset_delta, e.timestamp))
        return entry


class ProducerBatch(NamedTuple):
    """The header fields of one v2 batch with a producer id (what producer state needs).

    ``control`` is ``(is_commit, coordinator_epoch)`` for an end-transaction marker, else None.
    """

    producer_id: int
    producer_epoch: int
    base_sequence: int
    last_sequence: int
    base_offset: int
    last_offset: int
    max_timestamp: int
    is_transactional: bool
    control: tuple[bool, int] | None = None
    position: int = 0


@dataclass(frozen=True)
class CompletedTxn:
    """Kafka's ``CompletedTxn``: a transaction with data closed by a marker at ``last_offset``."""

    producer_id: int
    first_offset: int
    last_offset: int
    is_aborted: bool


@dataclass
class AppendPlan:
    """What :meth:`ProducerStateManager.prepare_append` found: the first duplicate batch."""

    duplicate: BatchMetadata | None = None
    duplicate_batch: ProducerBatch | None = None


# -- batch headers -----------------------------------------------------------------------------


def _be(buf: np.ndarray, positions: np.ndarray, offset: int, width: int, dtype: str
        ) -> np.ndarray:
    """Big-endian integers of ``width`` bytes at ``positions + offset`` (one gather, no loop)."""
    idx = (positions + offset)[:, None] + np.arange(width)
    return np.ascontiguousarray(buf[idx]).view(dtype).reshape(-1)


def producer_batch(producer_id: int, producer_epoch: int, base_sequence: int, base_offset: int,
                   last_offset: int, max_timestamp: int, is_transactional: bool = False,
                   control: tuple[bool, int] | None = None, position: int = 0) -> ProducerBatch:
    """The :class:`ProducerBatch` of one batch's header fields: its last sequence is the base
    sequence plus the offset span, wrapping past ``INT32_MAX`` to 0 (Kafka's
    ``DefaultRecordBatch.incrementSequence``)."""
    last_sequence = NO_SEQUENCE if base_sequence == NO_SEQUENCE \
        else (base_sequence + (last_offset - base_offset)) % (INT32_MAX + 1)
    return ProducerBatch(producer_id, producer_epoch, base_sequence, last_sequence, base_offset,
                         last_offset, max_timestamp, is_transactional, control, position)


def producer_batches(buf: Any, sc: dict, lo: int = 0, hi: int | None = None
                     ) -> list[ProducerBatch]:
    """The v2 batches of scan ``sc`` (over ``buf``) in ``[lo, hi)`` that carry a producer id.

    Header fields are gathered for all batches at once; only batches with a producer id (usually
    few: idempotent/transactional producers) are turned into objects. Control batches with a
    producer id are parsed for their end-transaction marker.
    """
    hi = int(sc["count"]) if hi is None else hi
    if hi <= lo:
        return []
    if hi - lo == 1 and sc["magics"][lo] == 2:
        # the common single-batch append: one struct read instead of numpy gathers
        if _PID.unpack_from(buf, int(sc["positions"][lo]) + 43)[0] < 0:
            return []
    arr = np.frombuffer(buf, np.uint8)
    sl = slice(lo, hi)
    v2 = np.flatnonzero(sc["magics"][sl] == 2) + lo
    if v2.size == 0:
        return []
    pos = sc["positions"][v2].astype(np.int64)
    pids = _be(arr, pos, 43, 8, ">i8")
    keep = np.flatnonzero(pids >= 0)
    if keep.size == 0:
        return []
    v2, pos, pids = v2[keep], pos[keep], pids[keep]
    epochs = _be(arr, pos, 51, 2, ">i2").tolist()
    seqs = _be(arr, pos, 53, 4, ">i4").tolist()
    attrs = sc["attributes"][v2].tolist()
    firsts = sc["base_offsets"][v2].tolist()
    lasts = sc["last_offsets"][v2].tolist()
    max_ts = sc["max_timestamps"][v2].tolist()
    sizes = sc["sizes"][v2].tolist()
    out = []
    for i, p in enumerate(pos.tolist()):
        control = None
        ts = max_ts[i]
        if attrs[i] & _ATTR_CONTROL:
            control, ts = _end_txn_marker(buf, p, sizes[i])
            if control is None:
                continue  # an empty control batch (cleaned) or a non-marker: no state change
        out.append(producer_batch(int(pids[i]), epochs[i], seqs[i], firsts[i], lasts[i], ts,
                                  bool(attrs[i] & _ATTR_TRANSACTIONAL), control, p))
    return out


def _end_txn_marker(buf: Any, position: int, size: int) -> tuple[tuple[bool, int] | None, int]:
    from .records.batch import RecordBatch

    batch = RecordBatch(buf, position, size)
    recs = batch.records()
    if not recs:
        return None, -1
    marker = batch.end_txn_marker()
    if marker is None:
        return None, -1
    return (marker.type == "COMMIT", marker.coordinator_epoch), int(recs[0].timestamp)


def append_aborted_txn(segment: Any, txn: AbortedTxn) -> None:
    """Append ``txn`` to ``segment``'s ``.txnindex`` (created on first use) and fsync it.

    Aborts are rare, so the file is opened per entry; the fsync keeps an entry of a segment
    below the recovery point durable (recovery only rebuilds the indexes of later segments).
    """
    idx = TransactionIndex(segment.txn_index_path, segment.base_offset)
    try:
        idx.append(txn)
        idx.flush()
    finally:
        idx.close()


# -- the manager -------------------------------------------------------------------------------


class ProducerStateManager:
    """Producer state of one partition directory (see the module docstring).

    Parameters
    ----------
    directory:
        The partition directory holding the ``.snapshot`` files.
    read_only:
        Never write or delete a snapshot.
    producer_id_expiration_ms:
        ``producer.id.expiration.ms``: a producer without an open transaction whose last
        timestamp is this much older than now is not loaded from a snapshot (Kafka's
        ``isProducerExpired``).
    """

    def __init__(self, directory: str | os.PathLike[str], *, read_only: bool = False,
                 producer_id_expiration_ms: int = PRODUCER_ID_EXPIRATION_MS) -> None:
        self.directory = Path(directory)
        self.read_only = read_only
        self.producer_id_expiration_ms = producer_id_expiration_ms
        self.producers: dict[int, ProducerStateEntry] = {}
        #: first offset of each open transaction -> producer id
        self.ongoing_txns: dict[int, int] = {}
        #: the offset up to which the state is built (exclusive)
        self.map_end_offset = 0
        #: batches replayed from the log by the last :meth:`replay` (for tests and operators)
        self.replayed_batches = 0
        self.replayed_segments: list[int] = []
        #: read-only logs load their state on first use (a reader may never need it)
        self._deferred: Any = None
        # Kafka's ``snapshots`` map: the offsets of the .snapshot files in the directory,
        # ascending, listed once (first use) and then kept by every method here that writes or
        # deletes one, so that a roll or a flush does not list the whole directory (it did:
        # ~2 ms per roll at 65 segments, growing with the directory). None: not listed yet.
        # A writable manager is the directory's only writer (the log's lock file); a read-only
        # one lists every time, as another process may be writing the directory.
        self._snapshots: list[int] | None = None

    def _ensure_loaded(self) -> None:
        fn, self._deferred = self._deferred, None
        if fn is not None:
            fn()

    # -- snapshots ------------------------------------------------------------------------------

    def snapshot_offsets(self) -> list[int]:
        """Offsets of the ``.snapshot`` files on disk, ascending."""
        if self._snapshots is not None:
            return list(self._snapshots)
        out = self._list_snapshots()
        if not self.read_only:
            self._snapshots = out
        return list(out)

    def _list_snapshots(self) -> list[int]:
        out = []
        for p in self.directory.iterdir():
            if files.is_producer_snapshot_file(p.name):
                try:
                    out.append(files.offset_from_filename(p.name))
                except ValueError:
                    continue
        return sorted(out)

    def delete_snapshot(self, offset: int) -> None:
        """Delete ``<offset>.snapshot`` if present (Kafka's ``removeAndDeleteSnapshot``)."""
        if self.read_only:
            return
        files.producer_snapshot_file(self.directory, offset).unlink(missing_ok=True)
        if self._snapshots is not None:
            i = bisect.bisect_left(self._snapshots, offset)
            if i < len(self._snapshots) and self._snapshots[i] == offset:
                del self._snapshots[i]

    @property
    def latest_snapshot_offset(self) -> int | None:
        offs = self.snapshot_offsets()
        return offs[-1] if offs else None

    def take_snapshot(self, sync: bool = True) -> Path | None:
        """Write ``<map_end_offset>.snapshot`` when ``map_end_offset`` is above the latest
        snapshot (above 0 without one): Kafka's "not worth taking another snapshot" rule, which
        also means a new, empty log gets no snapshot. Returns its path.

        ``sync=False`` (Kafka's ``takeSnapshot(false)`` in a roll): no fsync; the caller
        fsyncs the file and the directory later. A crash before that can leave a torn
        snapshot, which loading deletes before trying the next older one, as Kafka does."""
        if self.read_only or self.map_end_offset <= (self.latest_snapshot_offset or 0):
            return None
        path = files.producer_snapshot_file(self.directory, self.map_end_offset)
        write_snapshot(path, (e.to_snapshot() for e in self.producers.values()), sync=sync)
        if self._snapshots is not None and self.map_end_offset not in self._snapshots:
            bisect.insort(self._snapshots, self.map_end_offset)
        return path

    def delete_snapshots_before(self, offset: int) -> None:
        if self.read_only:
            return
        for off in self.snapshot_offsets():
            if off >= offset:
                break
            self.delete_snapshot(off)

    def clear(self) -> None:
        self.producers.clear()
        self.ongoing_txns.clear()

    def remove_out_of_range_snapshots(self, log_start_offset: int, log_end_offset: int) -> None:
        """Delete snapshots above the log end offset or at/below the log start offset (Kafka's
        ``truncateAndReload``: the state is then rebuilt from the log start offset)."""
        if self.read_only:
            return
        for off in self.snapshot_offsets():
            if off > log_end_offset or off <= log_start_offset:
                self.delete_snapshot(off)

    def remove_stray_snapshots(self, segment_base_offsets: Sequence[int]) -> None:
        """Kafka's ``removeStraySnapshots`` (at load): snapshots not at a segment base offset
        are deleted, except the latest one when it is above every base offset (the snapshot a
        clean shutdown wrote at the log end offset)."""
        if self.read_only:
            return
        bases = set(segment_base_offsets)
        strays = [off for off in self.snapshot_offsets() if off not in bases]
        if not strays:
            return
        keep = strays[-1] if not bases or strays[-1] > max(bases) else None
        for off in strays:
            if off != keep:
                self.delete_snapshot(off)

    def load_latest_snapshot(self, at_most: int, log_start_offset: int,
                             now_ms: int | None = None) -> int | None:
        """Replace the state by the latest readable snapshot in ``(log_start_offset, at_most]``
        (a corrupt one is deleted and the next older one tried); ``map_end_offset`` = its
        offset, or ``log_start_offset`` with empty state when there is none. With ``now_ms``,
        expired producers are left out (Kafka's ``loadFromSnapshot``). Returns the offset."""
        self.clear()
        for off in reversed(self.snapshot_offsets()):
            if off > at_most or off <= log_start_offset:
                continue
            path = files.producer_snapshot_file(self.directory, off)
            try:
                entries = read_snapshot(path)
            except (CorruptCheckpointError, OSError) as e:
                logger.warning("%s: ignoring unreadable producer snapshot: %s", path, e)
                self.delete_snapshot(off)
                continue
            for e in entries:
                if now_ms is not None and e.current_txn_first_offset < 0 \
                        and now_ms - e.timestamp >= self.producer_id_expiration_ms:
                    continue  # isProducerExpired
                entry = ProducerStateEntry.from_snapshot(e)
                self.producers[entry.producer_id] = entry
                if entry.current_txn_first_offset is not None:
                    self.ongoing_txns[entry.current_txn_first_offset] = entry.producer_id
            self.map_end_offset = off
            return off
        self.map_end_offset = log_start_offset
        return None

    # -- appends --------------------------------------------------------------------------------

    def prepare_append(self, batches: Sequence[ProducerBatch], origin: str = CLIENT) -> AppendPlan:
        """Validate ``batches`` against the state without changing it.

        Returns the first duplicate (client appends only); raises a
        :class:`ProducerStateError` subclass when a batch is refused.
        """
        plan = AppendPlan()
        if not batches:
            return plan
        working: dict[int, ProducerStateEntry] = {}
        for b in batches:
            entry = working.get(b.producer_id)
            if entry is None:
                cur = self.producers.get(b.producer_id)
                if origin == CLIENT and b.control is None and cur is not None:
                    dup = cur.find_duplicate_batch(b.producer_epoch, b.base_sequence,
                                                   b.last_sequence)
                    if dup is not None:
                        plan.duplicate, plan.duplicate_batch = dup, b
                        return plan
                entry = cur.copy() if cur is not None else ProducerStateEntry(b.producer_id)
                working[b.producer_id] = entry
            current = self.producers.get(b.producer_id) or ProducerStateEntry(b.producer_id)
            self._append(entry, current, b, origin, validate=True)
        return plan

    def apply(self, batches: Sequence[ProducerBatch], origin: str = REPLICATION
              ) -> list[CompletedTxn]:
        """Update the state with appended ``batches`` (already validated; Kafka's
        ``update``). Returns the transactions they completed, oldest first. Opened
        transactions are registered; completed ones stay open until :meth:`complete_txn`."""
        completed = []
        for b in batches:
            entry = self.producers.get(b.producer_id)
            if entry is None:
                entry = self.producers[b.producer_id] = ProducerStateEntry(b.producer_id)
            before = entry.current_txn_first_offset
            txn = self._append(entry, entry, b, origin, validate=False)
            if before is None and entry.current_txn_first_offset is not None:
                self.ongoing_txns[entry.current_txn_first_offset] = b.producer_id
            if txn is not None:
                completed.append(txn)
        if batches:
            self.map_end_offset = max(self.map_end_offset, batches[-1].last_offset + 1)
        return completed

    def last_stable_offset_for(self, txn: CompletedTxn) -> int:
        """LSO recorded with an aborted txn: first offset of the oldest other open transaction,
        else the marker offset + 1 (Kafka's ``lastStableOffset(completedTxn)``)."""
        others = [first for first, pid in self.ongoing_txns.items() if pid != txn.producer_id]
        return min(others) if others else txn.last_offset + 1

    def complete_txn(self, txn: CompletedTxn) -> None:
        self.ongoing_txns.pop(txn.first_offset, None)

    def update_map_end_offset(self, offset: int) -> None:
        self.map_end_offset = offset

    @staticmethod
    def _append(entry: ProducerStateEntry, current: ProducerStateEntry, b: ProducerBatch,
                origin: str, *, validate: bool) -> CompletedTxn | None:
        """Kafka's ``ProducerAppendInfo.append`` for one batch, mutating ``entry``."""
        pid = b.producer_id
        if validate and b.producer_epoch < entry.producer_epoch and origin != REPLICATION:
            raise InvalidProducerEpochError(
                f"epoch of producer {pid} is {b.producer_epoch}, which is smaller than the last "
                f"seen epoch {entry.producer_epoch} (expected >= {entry.producer_epoch}, found "
                f"{b.producer_epoch})", offset=b.base_offset, position=b.position)
        if b.control is not None:
            is_commit, coordinator_epoch = b.control
            if validate and entry.coordinator_epoch > coordinator_epoch \
                    and origin != REPLICATION:
                raise TransactionCoordinatorFencedError(
                    f"invalid coordinator epoch for producer {pid}: {coordinator_epoch} (zombie), "
                    f"{entry.coordinator_epoch} (current) (expected >= {entry.coordinator_epoch}, "
                    f"found {coordinator_epoch})", offset=b.base_offset, position=b.position)
            txn = None
            if entry.current_txn_first_offset is not None:
                txn = CompletedTxn(pid, entry.current_txn_first_offset, b.base_offset,
                                   not is_commit)
            entry.update(b.producer_epoch, coordinator_epoch, b.max_timestamp)
            return txn
        if validate and origin == CLIENT:
            _check_sequence(entry, current, b)
        entry.add_batch(b.producer_epoch, b.last_sequence, b.last_offset,
                        b.last_offset - b.base_offset, b.max_timestamp)
        if entry.current_txn_first_offset is not None and not b.is_transactional:
            if validate:
                raise InvalidTxnStateError(
                    f"expected a transactional write from producer {pid} (its transaction "
                    f"opened at offset {entry.current_txn_first_offset} is still open, found a "
                    f"non-transactional batch)", offset=b.base_offset, position=b.position)
        elif entry.current_txn_first_offset is None and b.is_transactional:
            entry.current_txn_first_offset = b.base_offset
        return None

    # -- queries --------------------------------------------------------------------------------

    @property
    def first_unstable_offset(self) -> int | None:
        """First offset of the oldest open transaction, None when none is open."""
        return min(self.ongoing_txns) if self.ongoing_txns else None

    def last_stable_offset(self, high_watermark: int) -> int:
        """min(first unstable offset, high watermark)."""
        self._ensure_loaded()
        fuo = self.first_unstable_offset
        return high_watermark if fuo is None else min(fuo, high_watermark)

    def active_producers(self) -> list[ProducerStateEntry]:
        """Copies of every producer's entry, by producer id (Kafka's ``activeProducers``)."""
        self._ensure_loaded()
        return [self.producers[pid].copy() for pid in sorted(self.producers)]

    def last_entry(self, producer_id: int) -> ProducerStateEntry | None:
        self._ensure_loaded()
        return self.producers.get(producer_id)

    # -- rebuilding from the log ------------------------------------------------------------------

    def replay(self, segments: Iterable[Any], from_offset: int, to_offset: int, *,
               txn_index_segments: set[int] | frozenset[int] = frozenset()) -> None:
        """Read the batches of ``[from_offset, to_offset)`` and update the state with them
        (Kafka's ``loadProducersFromRecords``, replication origin: no validation).

        Aborted transactions whose marker lies in a segment whose base offset is in
        ``txn_index_segments`` are appended to that segment's ``.txnindex`` (recovery rebuilds
        the transaction index of the segments it recovered).
        """
        self.replayed_batches = 0
        self.replayed_segments = []
        for seg in segments:
            if seg.base_offset >= to_offset:
                break
            start = seg._lookup_position(from_offset) if seg.base_offset < from_offset else 0
            self.replayed_segments.append(seg.base_offset)
            txn_seg = seg if seg.base_offset in txn_index_segments else None
            if not seg.read_only:
                # A writable segment lends a read-only mapping: one header scan over it and a
                # vectorised gather of the producer fields, no copy of the file (recovery
                # replays whole segments; a pread copy doubled its cost).
                with seg.mapped(start, seg.size) as view:
                    # right after recovery the segment still holds the scan it took: reused
                    # (it covers the same bytes, [0, size)), not taken twice
                    kept = seg.take_recovery_scan()
                    self._replay_chunk(view, from_offset, to_offset, txn_seg,
                                       kept if start == 0 else None)
                continue
            # a read-only segment (another process writes it): bounded pread chunks
            for _pos, chunk in seg.iter_chunks(start):
                if self._replay_chunk(chunk, from_offset, to_offset, txn_seg):
                    break
        self.map_end_offset = to_offset

    def _replay_chunk(self, chunk: Any, from_offset: int, to_offset: int,
                      txn_seg: Any | None, sc: dict | None = None) -> bool:
        """Apply the producer batches of ``chunk`` (whole batches) with offsets in
        ``[from_offset, to_offset)``; True when a batch at or past ``to_offset`` was met.
        ``sc``: a header scan of ``chunk`` already taken (else scanned here)."""
        from .native.scan import scan_entries

        if sc is None:
            sc = scan_entries(np.frombuffer(chunk, np.uint8))
        count = int(sc["count"])
        lasts = sc["last_offsets"][:count]
        lo = int(np.searchsorted(lasts, from_offset, side="left"))
        hi = int(np.searchsorted(lasts, to_offset, side="left"))
        batches = producer_batches(chunk, sc, lo, hi)
        self.replayed_batches += len(batches)
        for txn in self.apply(batches):
            self._on_completed(txn, txn_seg)
        return hi < count

    def _on_completed(self, txn: CompletedTxn, segment: Any | None) -> None:
        if txn.is_aborted and segment is not None and not self.read_only:
            append_aborted_txn(segment, AbortedTxn(txn.producer_id, txn.first_offset,
                                                   txn.last_offset,
                                                   self.last_stable_offset_for(txn)))
        self.complete_txn(txn)

    def complete(self, txns: Iterable[CompletedTxn], segments: Any) -> None:
        """Record completed transactions after an append: aborted ones go to the ``.txnindex``
        of the segment holding their marker (``segments.floor_segment``)."""
        for txn in txns:
            self._on_completed(txn, segments.floor_segment(txn.last_offset))

    def min_snapshot_offset_to_retain(self, segment_bases: Sequence[int],
                                      recovery_point: int) -> int:
        """Kafka's ``minSnapshotsOffsetToRetain``: the base offset of the segment before the
        active one, or lower when the recovery point lies below it."""
        if not segment_bases:
            return recovery_point
        active = segment_bases[-1]
        lower = [b for b in segment_bases if b < active]
        two_segments_min = lower[-1] if lower else active
        below_rp = [b for b in segment_bases if b < recovery_point]
        rp_offset = below_rp[-1] if below_rp else recovery_point
        return min(rp_offset, two_segments_min)

    def __repr__(self) -> str:
        return (f"ProducerStateManager({str(self.directory)!r}, producers={len(self.producers)}, "
                f"ongoing_txns={len(self.ongoing_txns)}, map_end_offset={self.map_end_offset})")


def _check_sequence(entry: ProducerStateEntry, current: ProducerStateEntry,
                    b: ProducerBatch) -> None:
    """Kafka's ``ProducerAppendInfo.checkSequence`` (client appends)."""
    seq, epoch = b.base_sequence, b.producer_epoch
    if epoch != entry.producer_epoch:
        if seq != 0 and entry.producer_epoch != NO_PRODUCER_EPOCH:
            raise OutOfOrderSequenceError(
                f"invalid sequence number for new epoch {epoch} of producer {b.producer_id} "
                f"(current epoch {entry.producer_epoch}) (expected 0, found {seq})",
                offset=b.base_offset, position=b.position)
        return
    if not entry.is_empty:
        last = entry.last_seq
    elif epoch == current.producer_epoch:
        last = current.last_seq
    else:
        last = NO_SEQUENCE
    # no current epoch (all of the producer's data deleted by retention): any sequence goes
    if current.producer_epoch == NO_PRODUCER_EPOCH:
        return
    if not (seq == last + 1 or (seq == 0 and last == INT32_MAX)):
        raise OutOfOrderSequenceError(
            f"out of order sequence number for producer {b.producer_id} (expected {last + 1}, "
            f"found {seq})", offset=b.base_offset, position=b.position)


def scan_producer_batches(data: Any) -> list[ProducerBatch]:
    """:func:`producer_batches` of a whole buffer of batches (tests, tools)."""
    from .native.scan import scan_entries

    return producer_batches(data, scan_entries(np.frombuffer(data, np.uint8)))



# -- Log hooks ---------------------------------------------------------------------------------
# Called from kafkalog.log.Log under its write lock; ``log`` is the Log. Kept here so that the
# producer-state rules live in one module and Log only holds one-line calls.


def load_for_log(log: Any, *, clean_shutdown: bool) -> None:
    """Kafka's ``rebuildProducerState`` at open.

    Snapshots outside ``[log start, log end]`` are deleted. After a clean shutdown without any
    snapshot (a directory from a broker that never saw an idempotent producer, or an old one) the
    log is not read: empty snapshots are taken instead, as Kafka does. Otherwise the latest
    snapshot is loaded and the batches after it replayed. Segments recovered by the loader get
    their ``.txnindex`` rebuilt: the replay then starts at a snapshot at or below the first of
    them, and the aborted transactions whose markers they hold are written again.
    """
    ps: ProducerStateManager = log._producer_state
    if ps.read_only:
        ps._deferred = lambda: _rebuild_for_log(log, clean_shutdown=clean_shutdown)
    else:
        _rebuild_for_log(log, clean_shutdown=clean_shutdown)


def _rebuild_for_log(log: Any, *, clean_shutdown: bool) -> None:
    ps: ProducerStateManager = log._producer_state
    lso, leo = log.log_start_offset, log.log_end_offset
    segments = log._segments
    recovered = sorted({b for b, _ in log.loaded.recovered_segments if b in segments})
    ps.remove_stray_snapshots(segments.base_offsets)
    ps.remove_out_of_range_snapshots(lso, leo)
    if ps.latest_snapshot_offset is None and clean_shutdown and not recovered:
        if not ps.read_only:
            for off in sorted({segments.active.base_offset, leo}):
                ps.update_map_end_offset(off)
                ps.take_snapshot()
        ps.update_map_end_offset(leo)
        return
    at_most = min([leo, *recovered])
    ps.load_latest_snapshot(at_most, lso, log._clock.milliseconds())
    if not ps.read_only:
        for base in recovered:
            seg = segments.get(base)
            if seg is not None and seg.txn_index_path.exists():
                TransactionIndex(seg.txn_index_path, base).reset()
    if ps.map_end_offset < leo:
        ps.replay(segments.values(ps.map_end_offset, leo), ps.map_end_offset, leo,
                  txn_index_segments=frozenset(recovered))
    ps.update_map_end_offset(leo)
    ps.take_snapshot()


def prepare_log_append(log: Any, data: Any, sc: dict, origin: str
                       ) -> tuple[list[ProducerBatch], BatchMetadata | None]:
    """Before an append writes anything: the producer batches in it, and the original
    metadata when it is a retry of a retained batch (client appends). Raises a
    :class:`ProducerStateError` subclass when the append is refused."""
    batches = producer_batches(data, sc)
    if not batches:
        return batches, None
    ps: ProducerStateManager = log._producer_state
    plan = ps.prepare_append(batches, origin)
    if plan.duplicate is None:
        # Transactions this append opens become unstable *before* the bytes are published:
        # a reader computing the LSO from another thread never sees their data as stable.
        open_now = {pid for pid, e in ps.producers.items()
                    if e.current_txn_first_offset is not None}
        for b in batches:
            if b.control is not None:
                open_now.discard(b.producer_id)
            elif b.is_transactional and b.producer_id not in open_now:
                open_now.add(b.producer_id)
                ps.ongoing_txns[b.base_offset] = b.producer_id
    return batches, plan.duplicate


def after_log_append(log: Any, batches: Sequence[ProducerBatch], start: int, end: int) -> None:
    """After one group of batches (byte range ``[start, end)`` of the appended data) was
    written: update the state, write aborted transactions to the ``.txnindex``."""
    ps: ProducerStateManager = log._producer_state
    if batches:  # none for plain (non-idempotent) data: nothing but the end offset to move
        group = [b for b in batches if start <= b.position < end]
        if group:
            ps.complete(ps.apply(group), log._segments)
    ps.update_map_end_offset(log._log_end_offset)


def on_roll(log: Any, new_offset: int) -> Path | None:
    """After a roll: snapshot at the new segment's base offset without an fsync (Kafka's
    ``takeSnapshot(false)``: the flush scheduled after the roll fsyncs it). Returns the
    snapshot written, if any."""
    ps: ProducerStateManager = log._producer_state
    ps.update_map_end_offset(new_offset)
    return ps.take_snapshot(sync=False)


def on_recovery_point_moved(log: Any) -> None:
    """After the flush scheduled by a roll moved the recovery point: delete the snapshots
    Kafka no longer keeps (``deleteSnapshotsAfterRecoveryPointCheckpoint``, which Kafka runs
    after checkpointing the recovery points)."""
    ps: ProducerStateManager = log._producer_state
    ps.delete_snapshots_before(ps.min_snapshot_offset_to_retain(
        log._segments.base_offsets, log._recovery_point))


def on_truncate(log: Any, offset: int) -> None:
    """After ``truncate_to(offset)``: truncate the active segment's ``.txnindex``, drop
    snapshots above ``offset`` and rebuild the state up to it."""
    ps: ProducerStateManager = log._producer_state
    seg = log._segments.active
    if seg.txn_index_path.exists():
        idx = TransactionIndex(seg.txn_index_path, seg.base_offset)
        try:
            idx.truncate_to(offset)
        finally:
            idx.close()
    leo = log._log_end_offset
    ps.remove_out_of_range_snapshots(log._log_start_offset, leo)
    ps.load_latest_snapshot(leo, log._log_start_offset, log._clock.milliseconds())
    if ps.map_end_offset < leo:
        ps.replay(log._segments.values(ps.map_end_offset, leo), ps.map_end_offset, leo)
    ps.update_map_end_offset(leo)


def on_truncate_fully(log: Any, offset: int) -> None:
    """After every segment was deleted and the log restarted at ``offset``."""
    ps: ProducerStateManager = log._producer_state
    ps.delete_snapshots_before(2**63 - 1)
    ps.clear()
    ps.update_map_end_offset(offset)


def on_close(log: Any) -> None:
    """Kafka's ``UnifiedLog.close``: a snapshot at the log end offset, so that a clean restart
    reads no batch."""
    ps: ProducerStateManager = log._producer_state
    ps.update_map_end_offset(log._log_end_offset)
    ps.take_snapshot()
