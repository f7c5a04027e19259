"""Aborted transactions of a segment's ``.txnindex`` (spec §5.4), for ``read_committed``.

Uses :class:`kafkalog.index.txn_index.TransactionIndex` when present; otherwise reads the
34-byte big-endian entries directly (version int16, producerId, firstOffset, lastOffset,
lastStableOffset; a trailing partial entry is ignored, as Kafka does).
"""

from __future__ import annotations

import numpy as np

__all__ = ["read_aborted_txns"]

_DTYPE = np.dtype([("version", ">i2"), ("producer_id", ">i8"), ("first_offset", ">i8"),
                   ("last_offset", ">i8"), ("last_stable_offset", ">i8")])


def read_aborted_txns(path: str, base_offset: int) -> list[tuple[int, int, int]]:
    """``[(producer_id, first_offset, last_offset)]``: records of that producer in
    ``[first_offset, last_offset)`` from transactional batches were aborted."""
    try:
        from kafkalog.index.txn_index import TransactionIndex
    except ImportError:
        TransactionIndex = None  # noqa: N806
    if TransactionIndex is not None:
        idx = TransactionIndex(path, base_offset)
        try:
            return [(int(t.producer_id), int(t.first_offset), int(t.last_offset))
                    for t in idx.all_aborted_txns()]
        finally:
            idx.close()
    raw = np.fromfile(path, dtype=np.uint8)
    n = raw.size // _DTYPE.itemsize
    arr = np.frombuffer(raw[: n * _DTYPE.itemsize].tobytes(), dtype=_DTYPE)
    return [(int(a["producer_id"]), int(a["first_offset"]), int(a["last_offset"])) for a in arr]
