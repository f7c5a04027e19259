"""Kafka's ``Utils.murmur2`` (MurmurHash2, seed ``0x9747b28c``) of one byte array, as the
producer's partitioner hashes every keyed record: a kernel, because the plain-Python hash
(32-bit multiplies masked by hand) cost more than everything else a console producer does per
line. The result is the Java int (signed 32 bits). :func:`key_partitions` hashes many keys in
one call (one dispatch instead of one a key) and gives each key's partition."""

from __future__ import annotations

import numpy as np

from ._jit import inline, kernel

_M = 0x5BD1E995
_MASK = 0xFFFFFFFF


@kernel
def murmur2(data):
    """``Utils.murmur2(data)`` of a ``uint8`` array, a signed 32-bit int."""
    return _murmur2_span(data, 0, data.shape[0])


@kernel
def key_partitions(data, offsets, num_partitions):
    """``toPositive(murmur2(key)) % num_partitions`` of each key: key ``i`` is
    ``data[offsets[i]:offsets[i + 1]]`` (``offsets``: int64, one more than the keys; each span
    within ``data``). An int32 array, one partition a key."""
    n = offsets.shape[0] - 1
    out = np.empty(max(n, 0), np.int32)
    for i in range(n):
        h = _murmur2_span(data, offsets[i], offsets[i + 1])
        out[i] = (h & 0x7FFFFFFF) % num_partitions
    return out


@inline
def _murmur2_span(data, start, end):
    """``Utils.murmur2`` of ``data[start:end]``."""
    length = end - start
    h = (0x9747B28C ^ length) & _MASK
    n4 = length // 4
    for i in range(n4):
        j = start + 4 * i
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
    base = start + 4 * n4
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
