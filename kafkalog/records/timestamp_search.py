"""The first record at or after a timestamp in a run of whole batches (Kafka's
``FileRecords.searchForTimestamp`` once a batch whose max timestamp reaches the target has
been found by its header).

A timestamp search reads one batch this way; decoding its records as :class:`Record` objects
to look at two fields cost ~100 us for 100 records, most of a search. v2 batches go through
one kernel (``native.records_decode.first_record_at_or_after``) over the records area, in
place when uncompressed; legacy entries (magic 0/1) through their records.

Every record of a batch is validated as a decode would, those after the answer too, and a bad
batch raises the :class:`~kafkalog.errors.CorruptRecordError` its decode raises.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..native import records_decode as _rd
from .batch import TIMESTAMP_TYPE_MASK, RecordBatch, iter_batches

__all__ = ["first_record_at_or_after"]

_INT64_MIN = -(2**63)


def first_record_at_or_after(batches: Any, timestamp: int, min_offset: int = _INT64_MIN
                             ) -> tuple[int, int] | None:
    """``(timestamp, offset)`` of the first record of ``batches`` (whole batches, CRC checked)
    whose timestamp is >= ``timestamp`` and offset >= ``min_offset``; None when none is.

    Examples
    --------
    >>> from kafkalog import Record, encode_batch
    >>> data = encode_batch([Record(None, b"a", 100), Record(None, b"b", 200)], base_offset=7)
    >>> first_record_at_or_after(data, 150), first_record_at_or_after(data, 201)
    ((200, 8), None)
    """
    for b in iter_batches(batches):
        if not isinstance(b, RecordBatch):  # a legacy entry (magic 0/1): its records
            for r in b:
                if r.timestamp >= timestamp and r.offset >= min_offset:
                    return r.timestamp, r.offset
            continue
        count = b.record_count
        if count <= 0:
            b.records()  # (nothing to search; a negative count raises there)
            continue
        area = np.frombuffer(b.records_bytes(), np.uint8)
        err, _, index, offset, ts = _rd.first_record_at_or_after(
            area, 0, area.shape[0], count, b.base_offset, b.base_timestamp,
            bool(b.attributes & TIMESTAMP_TYPE_MASK), b.max_timestamp, timestamp, min_offset)
        if err != _rd.ERR_OK:
            b.records()  # raises the decode's precise error (position, what was wrong)
            raise AssertionError("the kernel refused records the decoder accepted")
        if index >= 0:
            return int(ts), int(offset)
    return None
