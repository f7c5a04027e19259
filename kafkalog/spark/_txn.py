"""Aborted transactions of a segment's ``.txnindex`` (spec §5.4), for ``read_committed``.

Read through :class:`kafkalog.index.txn_index.TransactionIndex` in read-only mode (files that
are not ours are never modified).
"""

from __future__ import annotations

__all__ = ["read_aborted_txns"]


def read_aborted_txns(path: str, base_offset: int) -> list[tuple[int, int, int]]:
    """``[(producer_id, first_offset, last_offset)]``: records of that producer in
    ``[first_offset, last_offset)`` from transactional batches were aborted (``last_offset`` is
    the offset of the ABORT marker)."""
    from kafkalog.index.txn_index import TransactionIndex

    idx = TransactionIndex(path, base_offset, writable=False)
    try:
        return [(int(t.producer_id), int(t.first_offset), int(t.last_offset))
                for t in idx.all_aborted_txns()]
    finally:
        idx.close()
