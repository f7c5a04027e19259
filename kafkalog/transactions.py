"""Transaction markers and ``read_committed`` reading for :class:`kafkalog.log.Log`.

Writing: :func:`write_end_txn_marker` is what a partition leader does for a
``WriteTxnMarkers`` request: one COMMIT or ABORT control batch (transactional + control
attributes, base sequence -1, key ``(0, type)``, value ``(0, coordinator epoch)``) appended at the
log end offset with origin "coordinator" (producer epoch and coordinator epoch checked, no
sequence check). Producer state (:mod:`kafkalog.producer_state`) closes the producer's
transaction, writes the ``.txnindex`` entry of an aborted one and moves the last stable offset.

Reading (Kafka's fetch with ``IsolationLevel.READ_COMMITTED`` plus the consumer's filtering in
``Fetcher``/``CompletedFetch``): records are read only below the last stable offset; the
aborted transactions overlapping the read come from the ``.txnindex`` files (Kafka's
``collectAbortedTransactions``: from the segment holding the start offset upward until an entry's
last stable offset reaches the upper bound); a transactional data batch of producer P is dropped
when an aborted transaction of P has ``first_offset <= batch base offset <= last_offset`` (the
ABORT marker's offset). Control batches are never records.

Example
-------
>>> import tempfile
>>> from kafkalog import Log, Record
>>> with Log.open(tempfile.mkdtemp()) as log:
...     _ = log.append([Record(None, b"a", 1)], producer_id=1, producer_epoch=0,
...                    base_sequence=0, transactional=True)
...     _ = log.abort_transaction(1, 0)
...     _ = log.append([Record(None, b"b", 2)])
...     [r.value for r in log.records(isolation="read_committed")]
[b'b']
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .index.txn_index import TransactionIndex
from .producer_state import COORDINATOR
from .records.builder import encode_end_txn_marker

__all__ = ["READ_COMMITTED", "READ_UNCOMMITTED", "ReadCommitted", "write_end_txn_marker",
           "read_committed_filter"]

READ_UNCOMMITTED = "read_uncommitted"
READ_COMMITTED = "read_committed"


def write_end_txn_marker(log: Any, commit: bool, producer_id: int, producer_epoch: int,
                         coordinator_epoch: int = 0) -> Any:
    """Append a COMMIT (``commit=True``) or ABORT marker for ``producer_id`` to ``log``.

    The batch carries the latest leader epoch of the log (-1 without one) and the clock's time.
    Returns the ``LogAppendInfo`` of the one-record control batch.

    Raises
    ------
    InvalidProducerEpochError
        ``producer_epoch`` below the producer's current epoch.
    TransactionCoordinatorFencedError
        ``coordinator_epoch`` below the one of the producer's last marker.
    """
    if producer_id < 0 or producer_epoch < 0:
        raise ValueError(
            f"a transaction marker needs a producer id and epoch >= 0 (found {producer_id}, "
            f"{producer_epoch})")
    with log._write_lock:
        log._check_writable()
        epoch = log._cache.latest_epoch
        data = encode_end_txn_marker(
            commit, producer_id=producer_id, producer_epoch=producer_epoch,
            coordinator_epoch=coordinator_epoch, base_offset=log._log_end_offset,
            partition_leader_epoch=-1 if epoch is None else epoch,
            timestamp=log._clock.milliseconds())
        sc = log._scan_whole(data, "end transaction marker")
        return log._append_groups(data, sc, [(0, 1)], -1, origin=COORDINATOR)


class ReadCommitted:
    """Aborted transactions overlapping one read, and the bound of the read (the LSO).

    Build with :func:`read_committed_filter`; ``end_offset`` is the bound to read to; ``skip``
    says whether a batch is aborted data; ``filter_table`` drops aborted rows from a decoded table.
    """

    def __init__(self, end_offset: int, aborted: dict[int, list[tuple[int, int]]]) -> None:
        self.end_offset = end_offset
        #: producer id -> [(first offset, marker offset)] of its aborted transactions
        self.aborted = aborted
        self._ranges: list[tuple[int, int]] = []  # aborted batches' (base, last) seen in chunks

    def is_aborted(self, producer_id: int, base_offset: int) -> bool:
        for first, last in self.aborted.get(producer_id, ()):
            if first <= base_offset <= last:
                return True
        return False

    def skip(self, batch: Any) -> bool:
        """True for a transactional data batch of an aborted transaction."""
        return (bool(self.aborted) and batch.is_transactional and not batch.is_control
                and self.is_aborted(batch.producer_id, batch.base_offset))

    def note_chunk(self, chunk: Any) -> None:
        """Remember the offset ranges of the aborted batches in ``chunk`` (for
        :meth:`filter_table`); header fields are gathered vectorized, records untouched."""
        if not self.aborted:
            return
        from .producer_state import scan_producer_batches

        for b in scan_producer_batches(chunk):
            if b.is_transactional and b.control is None \
                    and self.is_aborted(b.producer_id, b.base_offset):
                self._ranges.append((b.base_offset, b.last_offset))

    def filter_table(self, table: Any, offsets: np.ndarray) -> Any:
        """``table`` without the rows whose offset (``offsets``, one per row) lies in an
        aborted batch noted by :meth:`note_chunk`."""
        if not self._ranges or len(offsets) == 0:
            return table
        import pyarrow as pa

        rng = np.array(sorted(self._ranges), dtype=np.int64)
        offs = np.asarray(offsets, dtype=np.int64)
        # batches never overlap: the candidate range of an offset is the last one starting <= it
        i = np.searchsorted(rng[:, 0], offs, side="right") - 1
        inside = (i >= 0) & (offs <= rng[np.maximum(i, 0), 1])
        return table.filter(pa.array(~inside))


def read_committed_filter(log: Any, start_offset: int | None, end_offset: int | None,
                          isolation: str) -> ReadCommitted | None:
    """None for ``read_uncommitted``; for ``read_committed`` the bound and aborted
    transactions of a read of ``[start_offset, end_offset)``.

    Raises
    ------
    ValueError
        An unknown isolation level.
    """
    if isolation == READ_UNCOMMITTED:
        return None
    if isolation != READ_COMMITTED:
        raise ValueError(
            f"isolation must be {READ_UNCOMMITTED!r} or {READ_COMMITTED!r} (found {isolation!r})")
    lso = log.last_stable_offset
    end = lso if end_offset is None else min(int(end_offset), lso)
    start = log.log_start_offset if start_offset is None else int(start_offset)
    aborted: dict[int, list[tuple[int, int]]] = {}
    if end > start:
        for seg in log._segments.values(start, None):
            if not seg.txn_index_path.exists():
                continue
            idx = TransactionIndex(seg.txn_index_path, seg.base_offset, writable=False)
            try:
                found, complete = idx.collect_aborted_txns(start, end)
            finally:
                idx.close()
            for t in found:
                aborted.setdefault(t.producer_id, []).append((t.first_offset, t.last_offset))
            if complete:
                break
    return ReadCommitted(end, aborted)
