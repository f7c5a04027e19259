"""Checksums of Kafka's log formats.

* v2 record batches (magic 2) use CRC-32C (Castagnoli) over attributes .. end of batch.
* Legacy messages (magic 0/1) use CRC-32 (IEEE, zlib's) over magic .. end of value.

Both functions take any contiguous bytes-like object (``bytes``, ``bytearray``, ``memoryview``,
``mmap`` or a contiguous ``numpy.uint8`` array) and read it through the buffer protocol, so a
slice of an mmapped segment is checksummed without a copy. ``crc32c`` is the ``crc32c`` package
(hardware accelerated where the CPU allows); ``crc32`` is :func:`zlib.crc32`.
:func:`crc_of_ranges` checksums many ranges of one buffer at once (a segment's batches or
messages), in one kernel call where they are small.

>>> crc32c(b"123456789")
3808858755
>>> crc32(b"123456789")
3421780262
"""

from __future__ import annotations

import zlib

import numpy as np
from crc32c import crc32c as _crc32c

from ..native import crc_ranges as _cr
from ..native._jit import kernel_input

__all__ = ["crc32c", "crc32", "crc_of_ranges", "entry_crc"]


def crc32c(data: object, value: int = 0) -> int:
    """CRC-32C (Castagnoli) of ``data`` as an unsigned 32-bit int, continuing from ``value``."""
    return _crc32c(data, value)


def crc32(data: object, value: int = 0) -> int:
    """CRC-32 (IEEE, zlib) of ``data`` as an unsigned 32-bit int, continuing from ``value``."""
    return zlib.crc32(data, value)  # type: ignore[arg-type]


def entry_crc(entry: object, magic: int) -> int:
    """The CRC a whole log entry's header should hold: v2 batches CRC-32C from the attributes
    (byte 21) on, v0/v1 messages CRC-32 from the magic byte (byte 16) on.

    >>> from kafkalog import Record, encode_batch
    >>> b = encode_batch([Record(b"k", b"v", 1)])
    >>> entry_crc(b, 2) == int.from_bytes(b[17:21], "big")
    True
    """
    mv = memoryview(entry).cast("B")  # type: ignore[arg-type]
    return crc32c(mv[21:]) if magic == 2 else crc32(mv[16:])


def crc_of_ranges(buf: object, starts: np.ndarray, ends: np.ndarray, *,
                  castagnoli: bool) -> np.ndarray:
    """CRC-32C (``castagnoli``) or CRC-32 of each range ``buf[starts[i]:ends[i]]``, as int64.

    Small ranges on average (below ``native.crc_ranges.SMALL_RANGE_BYTES``) are computed by
    one kernel call; bigger ones by one library call each (the hardware CRC wins there).

    >>> import numpy as np
    >>> crc_of_ranges(b"123456789123456789", np.array([0, 9]), np.array([9, 18]),
    ...               castagnoli=False).tolist()
    [3421780262, 3421780262]
    """
    n = starts.shape[0]
    if n == 0:
        return np.zeros(0, np.int64)
    arr = buf if isinstance(buf, np.ndarray) else np.frombuffer(buf, np.uint8)  # type: ignore[call-overload]
    if int((ends - starts).sum()) < n * _cr.SMALL_RANGE_BYTES:
        out = np.empty(n, np.int64)
        bad = _cr.crc_ranges(kernel_input(arr, np.uint8), kernel_input(starts, np.int64),
                             kernel_input(ends, np.int64),
                             _cr.CRC32C_TABLES if castagnoli else _cr.CRC32_TABLES, out)
        if bad >= 0:
            raise IndexError(f"range {bad} [{int(starts[bad])}, {int(ends[bad])}) is outside "
                             f"the buffer of {arr.shape[0]} bytes")
        return out
    fn = _crc32c if castagnoli else zlib.crc32
    mv = memoryview(arr)
    return np.fromiter([fn(mv[a:b]) for a, b in zip(starts.tolist(), ends.tolist())],
                       np.int64, n)
