"""Checksums of Kafka's log formats.

* v2 record batches (magic 2) use CRC-32C (Castagnoli) over attributes .. end of batch.
* Legacy messages (magic 0/1) use CRC-32 (IEEE, zlib's) over magic .. end of value.

Both functions take any contiguous bytes-like object (``bytes``, ``bytearray``, ``memoryview``,
``mmap`` or a contiguous ``numpy.uint8`` array) and read it through the buffer protocol, so a
slice of an mmapped segment is checksummed without a copy. ``crc32c`` is the ``crc32c`` package
(hardware accelerated where the CPU allows); ``crc32`` is :func:`zlib.crc32`.

>>> crc32c(b"123456789")
3808858755
>>> crc32(b"123456789")
3421780262
"""

from __future__ import annotations

import zlib

from crc32c import crc32c as _crc32c

__all__ = ["crc32c", "crc32", "crc32c_raw"]

#: the crc32c package's function itself, for per-batch loops where the wrapper's call is a
#: measurable share (same result as :func:`crc32c`)
crc32c_raw = _crc32c


def crc32c(data: object, value: int = 0) -> int:
    """CRC-32C (Castagnoli) of ``data`` as an unsigned 32-bit int, continuing from ``value``."""
    return _crc32c(data, value)


def crc32(data: object, value: int = 0) -> int:
    """CRC-32 (IEEE, zlib) of ``data`` as an unsigned 32-bit int, continuing from ``value``."""
    return zlib.crc32(data, value)  # type: ignore[arg-type]
