"""CRC-32 and CRC-32C of many small byte ranges of one buffer, in one call.

Kafka checksums every v2 batch with CRC-32C and every legacy message with CRC-32 (zlib's).
``kafkalog.records.crc`` computes them with the ``crc32c`` package and :func:`zlib.crc32`
(hardware CRC where the CPU has it, ~20 GB/s here), one call per range. For big ranges that is
the right tool. For small ones (a segment of one-record batches, a legacy segment of one message
per entry: 100-300 bytes each) the Python call per range costs more than the checksum, so
:func:`crc_ranges` computes them all in one kernel call: table-driven, eight bytes a step
("slicing-by-8", Intel's method as zlib's and the Linux kernel's software CRCs use), about
1-2 GB/s. Callers take this kernel only below :data:`SMALL_RANGE_BYTES` on average (measured
crossover: above it the library's per-call cost is amortised and its speed wins).

Both checksums are the reflected form with init and final XOR 0xFFFFFFFF; only the polynomial
differs (:data:`CRC32_TABLES`, :data:`CRC32C_TABLES`). Tests compare with both libraries.
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel

#: the average range size below which one kernel call beats a library call per range
SMALL_RANGE_BYTES = 512

#: reflected polynomials: CRC-32 (IEEE 802.3, zlib), CRC-32C (Castagnoli)
CRC32_POLY = 0xEDB88320
CRC32C_POLY = 0x82F63B78


def make_tables(poly: int) -> np.ndarray:
    """The 8 x 256 slicing-by-8 tables of the reflected polynomial ``poly``: row 0 is the
    byte-at-a-time table, row k the CRC of a byte followed by k zero bytes."""
    t = np.zeros((8, 256), np.uint32)
    for b in range(256):
        c = b
        for _ in range(8):
            c = (c >> 1) ^ (poly if c & 1 else 0)
        t[0, b] = c
    for k in range(1, 8):
        for b in range(256):
            prev = int(t[k - 1, b])
            t[k, b] = (prev >> 8) ^ int(t[0, prev & 0xFF])
    t.flags.writeable = False
    return t


CRC32_TABLES = make_tables(CRC32_POLY)
CRC32C_TABLES = make_tables(CRC32C_POLY)


@kernel
def crc_ranges(buf, starts, ends, tables, out):
    """``out[i]`` = the CRC (of ``tables``' polynomial) of ``buf[starts[i]:ends[i]]``. Returns
    the first range not inside ``buf`` (its ``out`` left unset, and none after it computed), or
    -1 when all were."""
    t0 = tables[0]
    t1 = tables[1]
    t2 = tables[2]
    t3 = tables[3]
    t4 = tables[4]
    t5 = tables[5]
    t6 = tables[6]
    t7 = tables[7]
    n = buf.shape[0]
    for i in range(starts.shape[0]):
        p = starts[i]
        e = ends[i]
        if p < 0 or e > n or p > e:
            return i
        c = np.uint32(0xFFFFFFFF)
        while e - p >= 8:
            lo = (np.uint32(buf[p]) | (np.uint32(buf[p + 1]) << np.uint32(8))
                  | (np.uint32(buf[p + 2]) << np.uint32(16))
                  | (np.uint32(buf[p + 3]) << np.uint32(24))) ^ c
            c = (t7[lo & np.uint32(0xFF)] ^ t6[(lo >> np.uint32(8)) & np.uint32(0xFF)]
                 ^ t5[(lo >> np.uint32(16)) & np.uint32(0xFF)] ^ t4[lo >> np.uint32(24)]
                 ^ t3[buf[p + 4]] ^ t2[buf[p + 5]] ^ t1[buf[p + 6]] ^ t0[buf[p + 7]])
            p += 8
        while p < e:
            c = t0[(c ^ np.uint32(buf[p])) & np.uint32(0xFF)] ^ (c >> np.uint32(8))
            p += 1
        out[i] = np.int64(c ^ np.uint32(0xFFFFFFFF))
    return -1
