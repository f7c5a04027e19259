"""``CleanedTransactionMetadata``: transaction state while the cleaner walks a log.

Kafka's ``CleanedTransactionMetadata`` (core/src/main/scala/kafka/log/LogCleaner.scala 3.9;
storage/.../log/CleanedTransactionMetadata.java 4.x, same rules). It tracks, in log order, the
ongoing committed and aborted transactions and decides:

* a data batch of an aborted transaction can be discarded (:meth:`on_batch_read` True);
* an ABORT marker is kept while a batch of its transaction was seen in this pass (and its
  ``AbortedTxn`` is then written to the cleaned segment's ``.txnindex``); otherwise it may go;
* a COMMIT marker may go when no batch of its transaction was seen in this pass;
* a control batch with no record (already emptied by an earlier cleaning) may go.

"May go" means ``canDiscardBatch``: the marker still waits for its delete horizon like a tombstone
(the cleaner's filter decides). Aborted transactions come from the ``.txnindex`` files, collected
ahead of time (the cleaner never cleans beyond the last stable offset, so every transaction it
sees is decided). Not thread-safe.

>>> from kafkalog.index.txn_index import AbortedTxn
>>> m = CleanedTransactionMetadata()
>>> m.add_aborted_transactions([AbortedTxn(7, 0, 3, 4)])
>>> m.on_batch_read(producer_id=7, last_offset=1, transactional=True)  # aborted data
True
>>> m.on_control_batch_read(producer_id=7, last_offset=3, control_type="ABORT")  # kept
False
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from typing import Any

from ..index.txn_index import AbortedTxn

__all__ = ["CleanedTransactionMetadata"]


class _AbortedTransactionMetadata:
    __slots__ = ("aborted_txn", "last_observed_batch_offset")

    def __init__(self, aborted_txn: AbortedTxn) -> None:
        self.aborted_txn = aborted_txn
        self.last_observed_batch_offset: int | None = None


class CleanedTransactionMetadata:
    """See the module docstring. ``cleaned_index``: the ``TransactionIndex`` of the segment
    being written, or None while building the offset map."""

    def __init__(self) -> None:
        self._ongoing_committed: set[int] = set()
        self._ongoing_aborted: dict[int, _AbortedTransactionMetadata] = {}
        # min-heap of aborted transactions by first offset (ties: insertion order)
        self._aborted: list[tuple[int, int, AbortedTxn]] = []
        self._seq = 0
        self.cleaned_index: Any = None

    def add_aborted_transactions(self, aborted: Iterable[AbortedTxn]) -> None:
        """Aborted transactions of the range just reached (from the ``.txnindex`` files)."""
        for t in aborted:
            heapq.heappush(self._aborted, (t.first_offset, self._seq, t))
            self._seq += 1

    def _consume_aborted_txns_up_to(self, offset: int) -> None:
        while self._aborted and self._aborted[0][0] <= offset:
            _, _, txn = heapq.heappop(self._aborted)
            self._ongoing_aborted.setdefault(txn.producer_id, _AbortedTransactionMetadata(txn))

    def on_control_batch_read(self, *, producer_id: int, last_offset: int,
                              control_type: str | None) -> bool:
        """A control batch (``control_type``: ``"ABORT"``, ``"COMMIT"``, another type name,
        or None for a batch without records). True when it can be discarded."""
        self._consume_aborted_txns_up_to(last_offset)
        if control_type is None:
            return True  # an empty control batch was already cleaned
        if control_type == "ABORT":
            meta = self._ongoing_aborted.pop(producer_id, None)
            if meta is not None and meta.last_observed_batch_offset is not None:
                # retain the marker until all batches from the transaction have been removed
                if self.cleaned_index is not None:
                    self.cleaned_index.append(meta.aborted_txn)
                return False
            return True
        if control_type == "COMMIT":
            # eligible for deletion if no batch of the transaction was traversed
            if producer_id in self._ongoing_committed:
                self._ongoing_committed.discard(producer_id)
                return False
            return True
        return False

    def on_batch_read(self, *, producer_id: int, last_offset: int, transactional: bool) -> bool:
        """A data batch; True when it belongs to an aborted transaction (discardable)."""
        self._consume_aborted_txns_up_to(last_offset)
        if not transactional:
            return False
        meta = self._ongoing_aborted.get(producer_id)
        if meta is not None:
            meta.last_observed_batch_offset = last_offset
            return True
        self._ongoing_committed.add(producer_id)
        return False
