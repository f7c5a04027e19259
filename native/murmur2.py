"""Kafka's ``Utils.murmur2`` (MurmurHash2, seed ``0x9747b28c``) of one byte array, as the
producer's partitioner hashes every keyed record: a kernel, because the plain-Python hash
(32-bit multiplies masked by hand) cost more than everything else a console producer does per
line. The result is the Java int (signed 32 bits)."""

from __future__ import annotations

from ._jit import kernel

_M = 0x5BD1E995
_MASK = 0xFFFFFFFF


@kernel
def murmur2(data):
    """``Utils.murmur2(data)`` of a ``uint8`` array, a signed 32-bit int."""
    length = data.shape[0]
    h = (0x9747B28C ^ length) & _MASK
    n4 = length // 4
    for i in range(n4):
        j = 4 * i
        # little-endian words, as Kafka's loop assembles them
        # (int(): a uint8 shifted stays uint8 in numpy's rules, when the kernel runs as
        # plain Python under NUMBA_DISABLE_JIT)
        k = int(data[j]) | (int(data[j + 1]) << 8) | (int(data[j + 2]) << 16) \
            | (int(data[j + 3]) << 24)
        k = (k * _M) & _MASK
        k ^= k >> 24
        k = (k * _M) & _MASK
        h = ((h * _M) & _MASK) ^ k
    rest = length - 4 * n4
    base = 4 * n4
    # the switch falls through: 3 bytes left xor the third, then the second, then the first
    if rest >= 3:
        h ^= int(data[base + 2]) << 16
    if rest >= 2:
        h ^= int(data[base + 1]) << 8
    if rest >= 1:
        h ^= int(data[base])
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h
