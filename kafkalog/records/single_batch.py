"""The header of one whole v2 batch, checked for a log's single-batch append path.

:func:`single_v2_batch` returns ``(base_offset, last_offset, partition_leader_epoch,
max_timestamp, records_count)`` when ``data`` is exactly one whole v2 record batch that a log
may append without its general path (no producer id, neither transactional nor control, a
``lastOffsetDelta`` that is not negative and, with ``check_crc``, a valid CRC-32C), and
``None`` for anything else: the general path then checks the bytes and raises the precise
error. It is the C function of ``native/_append.c`` when that extension is built (and
``KAFKALOG_NO_EXTENSIONS`` is not set), else :func:`single_v2_batch_py`, its reference.

>>> from kafkalog import Record, encode_batch
>>> single_v2_batch(encode_batch([Record(b"k", b"v", 5)], base_offset=7), True)
(7, 7, -1, 5, 1)
>>> single_v2_batch(b"not a batch", True) is None
True
"""

from __future__ import annotations

import struct
from typing import Any

from ..native import optional_extension
from .crc import _crc32c

__all__ = ["single_v2_batch", "single_v2_batch_py", "single_producer_v2_batch",
           "V2_HEADER_SIZE"]

#: the whole 61-byte v2 batch header: baseOffset, batchLength, partitionLeaderEpoch, magic,
#: crc, attributes, lastOffsetDelta, baseTimestamp, maxTimestamp, producerId, producerEpoch,
#: baseSequence, recordsCount
_V2_FULL_HEADER = struct.Struct(">qiibIhiqqqhii")
V2_HEADER_SIZE = _V2_FULL_HEADER.size
_ATTR_TXN_OR_CONTROL = 0x30
_ATTR_TRANSACTIONAL = 0x10
_ATTR_CONTROL = 0x20


def _whole_v2_header(data: Any) -> tuple[memoryview, tuple] | None:
    """``data`` as bytes and its unpacked header when it is exactly one v2 batch with a
    ``lastOffsetDelta`` that is not negative, else None."""
    try:
        view = memoryview(data)
    except TypeError:
        return None
    if not view.c_contiguous or view.ndim > 1 or view.itemsize != 1:
        return None  # (one dimension of single bytes: len(data) is then the byte count)
    if len(view) < V2_HEADER_SIZE:
        return None
    h = _V2_FULL_HEADER.unpack_from(view)
    # magic, batchLength covering exactly the bytes, lastOffsetDelta
    if h[3] != 2 or h[1] + 12 != len(view) or h[6] < 0:
        return None
    return view, h


def single_v2_batch_py(data: Any, check_crc: bool) -> tuple[int, int, int, int, int] | None:
    """Reference of :func:`single_v2_batch` (the fallback when the C extension is absent)."""
    whole = _whole_v2_header(data)
    if whole is None:
        return None
    view, (base, _length, epoch, _magic, crc, attrs, last_delta, _base_ts, max_ts,
           producer_id, _producer_epoch, _base_sequence, count) = whole
    if producer_id != -1 or attrs & _ATTR_TXN_OR_CONTROL:
        return None  # producer state (idempotence, transactions) needs the general path
    if check_crc and _crc32c(view[21:]) != crc:
        return None
    return base, base + last_delta, epoch, max_ts, count


_append = optional_extension("_append")
#: ``single_v2_batch(data, check_crc)``: the C function when built, else the reference.
single_v2_batch = _append.single_v2_batch if _append is not None else single_v2_batch_py


def single_producer_v2_batch(data: Any, check_crc: bool
                             ) -> tuple[int, int, int, int, int, int, int, int, bool] | None:
    """The other common single batch: one whole v2 data batch of an idempotent or
    transactional producer (a producer id, not a control batch; Java producers are idempotent
    by default since Kafka 3.0). Returns ``(base_offset, last_offset, partition_leader_epoch,
    max_timestamp, records_count, producer_id, producer_epoch, base_sequence,
    is_transactional)``, or None for anything else (including a batch :func:`single_v2_batch`
    takes, and, with ``check_crc``, a bad CRC).

    >>> from kafkalog import Record, encode_batch
    >>> single_producer_v2_batch(encode_batch([Record(None, b"v", 5)], producer_id=9,
    ...                                       producer_epoch=1, base_sequence=4), True)
    (0, 0, -1, 5, 1, 9, 1, 4, False)
    """
    whole = _whole_v2_header(data)
    if whole is None:
        return None
    view, (base, _length, epoch, _magic, crc, attrs, last_delta, _base_ts, max_ts,
           producer_id, producer_epoch, base_sequence, count) = whole
    if producer_id < 0 or attrs & _ATTR_CONTROL:
        return None
    if check_crc and _crc32c(view[21:]) != crc:
        return None
    return (base, base + last_delta, epoch, max_ts, count, producer_id, producer_epoch,
            base_sequence, bool(attrs & _ATTR_TRANSACTIONAL))
