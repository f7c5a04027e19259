"""Big-endian integer reads and writes over ``uint8`` arrays (Kafka's byte order).

Every helper assumes the caller has bounds-checked ``p .. p+width``; they are inlined into the
kernels that do so.
"""

from __future__ import annotations

import numpy as np

from ._jit import inline


@inline
def read_u8(buf, p):
    return np.int64(buf[p])


@inline
def read_i16(buf, p):
    v = (np.int64(buf[p]) << 8) | np.int64(buf[p + 1])
    return v - 65536 if v >= 32768 else v


@inline
def read_i32(buf, p):
    v = (
        (np.int64(buf[p]) << 24)
        | (np.int64(buf[p + 1]) << 16)
        | (np.int64(buf[p + 2]) << 8)
        | np.int64(buf[p + 3])
    )
    return v - 4294967296 if v >= 2147483648 else v


@inline
def read_u32(buf, p):
    return (
        (np.int64(buf[p]) << 24)
        | (np.int64(buf[p + 1]) << 16)
        | (np.int64(buf[p + 2]) << 8)
        | np.int64(buf[p + 3])
    )


@inline
def read_i64(buf, p):
    # signed high word * 2**32 + unsigned low word never overflows int64
    return read_i32(buf, p) * np.int64(4294967296) + read_u32(buf, p + 4)


@inline
def write_i32(buf, p, v):
    u = np.uint32(np.int64(v) & 0xFFFFFFFF)
    buf[p] = np.uint8((u >> np.uint32(24)) & np.uint32(0xFF))
    buf[p + 1] = np.uint8((u >> np.uint32(16)) & np.uint32(0xFF))
    buf[p + 2] = np.uint8((u >> np.uint32(8)) & np.uint32(0xFF))
    buf[p + 3] = np.uint8(u & np.uint32(0xFF))


@inline
def write_i64(buf, p, v):
    x = np.int64(v)
    for i in range(8):
        # arithmetic shift of a signed value; the low byte is the same as a logical shift's
        buf[p + i] = np.uint8((x >> np.int64(56 - 8 * i)) & np.int64(0xFF))
