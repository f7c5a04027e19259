"""MD5 of a byte range (RFC 1321), for the log cleaner's offset map.

Kafka's ``SkimpyOffsetMap`` keys its slots by the MD5 digest of the record key
(``CleanerConfig.HASH_ALGORITHM``); hashing every key twice (building the map, then filtering)
is the cleaner's hot loop, so the digest is computed here, inside the kernels that walk the
records, instead of through ``hashlib`` one Python call per key.

Why the arithmetic looks indirect: the kernel also runs as plain Python
(``NUMBA_DISABLE_JIT=1``) where integers never wrap, and numpy scalars warn on overflow. So the
32-bit words are kept in ``int64`` and masked with ``0xFFFFFFFF`` after every sum and rotation:
no intermediate value reaches 2**63 (a sum of four words is below 2**34, a rotated word below
2**55), and the results are identical in both modes. The reference is ``hashlib.md5``
(tests/reference/md5.py).
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import inline, kernel

MASK32 = 0xFFFFFFFF
DIGEST_SIZE = 16

#: per-round shift amounts (RFC 1321 §3.4)
SHIFTS = np.array([7, 12, 17, 22] * 4 + [5, 9, 14, 20] * 4 + [4, 11, 16, 23] * 4
                  + [6, 10, 15, 21] * 4, dtype=np.int64)
#: K[i] = floor(|sin(i + 1)| * 2**32)
SINES = np.array([int(abs(math.sin(i + 1)) * 2**32) & MASK32 for i in range(64)], dtype=np.int64)
#: message word used by round i
WORD_INDEX = np.array([i if i < 16 else (5 * i + 1) % 16 if i < 32 else (3 * i + 5) % 16
                       if i < 48 else (7 * i) % 16 for i in range(64)], dtype=np.int64)


#: int64 scratch a digest needs: 4 state words, 16 block words, a 128-byte tail
SCRATCH_SIZE = 4 + 16 + 128
_W = 4  # block words in the scratch
_T = 20  # tail bytes in the scratch


@inline
def _compress(s):
    """One 64-byte block: ``s[_W:_W + 16]`` holds its little-endian 32-bit words."""
    a = s[0]
    b = s[1]
    c = s[2]
    d = s[3]
    for i in range(64):
        if i < 16:
            f = (b & c) | ((~b & MASK32) & d)
        elif i < 32:
            f = (d & b) | ((~d & MASK32) & c)
        elif i < 48:
            f = b ^ c ^ d
        else:
            f = c ^ (b | (~d & MASK32))
        f = (f + a + SINES[i] + s[_W + WORD_INDEX[i]]) & MASK32
        a = d
        d = c
        c = b
        r = SHIFTS[i]
        b = (b + (((f << r) | (f >> (32 - r))) & MASK32)) & MASK32
    s[0] = (s[0] + a) & MASK32
    s[1] = (s[1] + b) & MASK32
    s[2] = (s[2] + c) & MASK32
    s[3] = (s[3] + d) & MASK32


@inline
def md5_digest_into(buf, start, length, out, out_pos, s):
    """Write the 16-byte MD5 digest of ``buf[start:start + length]`` to ``out[out_pos:]``.

    ``buf`` and ``out`` are ``uint8`` arrays, ``s`` an ``int64`` scratch of
    :data:`SCRATCH_SIZE` (no allocation per digest); the caller bounds-checks the range.
    """
    s[0] = 0x67452301
    s[1] = 0xEFCDAB89
    s[2] = 0x98BADCFE
    s[3] = 0x10325476
    n = np.int64(length)
    p = np.int64(start)
    full = n // 64
    for _blk in range(full):
        for j in range(16):
            q = p + 4 * j
            s[_W + j] = (np.int64(buf[q]) | (np.int64(buf[q + 1]) << 8)
                         | (np.int64(buf[q + 2]) << 16) | (np.int64(buf[q + 3]) << 24))
        _compress(s)
        p += 64
    # the tail, the 0x80 terminator, zero padding and the bit length (little-endian): one
    # block, or two when fewer than 9 bytes are left in the first
    rem = n - full * 64
    total = 64 if rem < 56 else 128
    for j in range(total):
        s[_T + j] = 0
    for j in range(rem):
        s[_T + j] = np.int64(buf[p + j])
    s[_T + rem] = 0x80
    bits = n * 8
    for j in range(8):
        s[_T + total - 8 + j] = (bits >> (8 * j)) & 0xFF
    for blk in range(total // 64):
        for j in range(16):
            q = _T + blk * 64 + 4 * j
            s[_W + j] = s[q] | (s[q + 1] << 8) | (s[q + 2] << 16) | (s[q + 3] << 24)
        _compress(s)
    for k in range(4):
        v = s[k]
        for j in range(4):
            out[out_pos + 4 * k + j] = np.uint8((v >> (8 * j)) & 0xFF)


@kernel
def md5_digest(buf, start, length, out, out_pos):
    """Kernel entry point of :func:`md5_digest_into` (for Python callers and tests)."""
    md5_digest_into(buf, start, length, out, out_pos, np.empty(SCRATCH_SIZE, np.int64))
