"""``SkimpyOffsetMap``: the log cleaner's key -> latest offset map (Kafka's ``OffsetMap``).

storage/src/main/java/org/apache/kafka/storage/internals/log/SkimpyOffsetMap.java (3.9; 4.x
unchanged): a fixed block of memory holding ``memory // 24`` slots, each the 16-byte MD5 digest
of a key and the 8-byte offset of its latest record, open addressing with the probe sequence of
``positionOf`` (13 hash positions taken from the digest, then linear). Two keys with the same
digest share a slot: the map is a hash set of digests, as in Kafka (MD5 collisions are not a
practical concern). Memory per key is therefore 24 bytes per slot divided by the load factor
the cleaner fills it to (``log.cleaner.io.buffer.load.factor``, 0.9): 26.7 bytes.

The probing itself is the ``kafkalog.native.offset_map`` kernel; this class owns the table and
the statistics. Not thread-safe (one map per cleaner thread, as in Kafka).

>>> m = SkimpyOffsetMap(24 * 100)
>>> m.put(b"k1", 7); m.put(b"k2", 8); m.put(b"k1", 9)
>>> m.get(b"k1"), m.get(b"k2"), m.get(b"nope"), m.size, m.latest_offset
(9, 8, -1, 2, 9)
"""

from __future__ import annotations

import hashlib
from typing import Protocol

import numpy as np

from ..errors import ConfigError
from ..native import offset_map as _k
from .cleaner_config import HASH_ALGORITHM

__all__ = ["OffsetMap", "SkimpyOffsetMap", "BYTES_PER_ENTRY"]

BYTES_PER_ENTRY = _k.BYTES_PER_ENTRY


class OffsetMap(Protocol):
    """Kafka's ``OffsetMap`` interface."""

    @property
    def slots(self) -> int: ...

    def put(self, key: bytes, offset: int) -> None: ...

    def get(self, key: bytes) -> int: ...

    def update_latest_offset(self, offset: int) -> None: ...

    def clear(self) -> None: ...

    @property
    def size(self) -> int: ...

    @property
    def latest_offset(self) -> int: ...

    @property
    def utilization(self) -> float: ...


class SkimpyOffsetMap:
    """Kafka's ``SkimpyOffsetMap`` over ``memory`` bytes (see the module docstring).

    Parameters
    ----------
    memory:
        Bytes the map may use; it holds ``memory // 24`` slots.
    hash_algorithm:
        Only ``"MD5"`` (``CleanerConfig.HASH_ALGORITHM``; the kernels hash with MD5).

    Attributes
    ----------
    table:
        The ``uint8`` slots (read it, do not change it); ``state`` the ``int64`` counters the
        kernels update (entries, lookups, probes, latest offset).
    """

    bytes_per_entry = BYTES_PER_ENTRY

    def __init__(self, memory: int, hash_algorithm: str = HASH_ALGORITHM) -> None:
        if hash_algorithm.upper() != HASH_ALGORITHM:
            raise ConfigError(f"offset map hash algorithm: only MD5 is supported (expected MD5, "
                              f"found {hash_algorithm!r})")
        if memory < BYTES_PER_ENTRY:
            raise ConfigError(f"offset map memory too small for one slot (expected >= "
                              f"{BYTES_PER_ENTRY}, found {memory})")
        self.memory = int(memory)
        self._slots = self.memory // BYTES_PER_ENTRY
        # zeroed lazily by the OS: pages are only touched as slots fill
        self.table = np.zeros(self._slots * BYTES_PER_ENTRY, np.uint8)
        self.state = np.zeros(_k.STATE_SIZE, np.int64)
        self.state[_k.S_LAST_OFFSET] = -1
        self._digest = np.empty(16, np.uint8)

    @property
    def slots(self) -> int:
        """The maximum number of entries (``memory // 24``)."""
        return self._slots

    @property
    def size(self) -> int:
        """Entries put into the map (distinct digests)."""
        return int(self.state[_k.S_ENTRIES])

    @property
    def latest_offset(self) -> int:
        """The latest offset put (or set by :meth:`update_latest_offset`); -1 when empty."""
        return int(self.state[_k.S_LAST_OFFSET])

    @property
    def utilization(self) -> float:
        """``size / slots`` (Kafka's ``OffsetMap.utilization``)."""
        return self.size / self._slots

    @property
    def collision_rate(self) -> float:
        """``(probes - lookups) / lookups`` (Kafka's ``collisionRate``)."""
        lookups = int(self.state[_k.S_LOOKUPS])
        return (int(self.state[_k.S_PROBES]) - lookups) / lookups if lookups else 0.0

    def _hash(self, key: bytes | bytearray | memoryview) -> np.ndarray:
        self._digest[:] = np.frombuffer(hashlib.md5(key).digest(), np.uint8)
        return self._digest

    def put(self, key: bytes | bytearray | memoryview, offset: int) -> None:
        """Associate ``offset`` with ``key`` (the latest put for a key wins).

        Raises
        ------
        ValueError
            The map is full (``SkimpyOffsetMap.put``'s IllegalArgumentException).
        """
        if self.size >= self._slots:
            raise ValueError(f"attempted to add a new entry to a full offset map, entries: "
                             f"{self.size}, slots: {self._slots}")
        _k.map_put(self.table, self._slots, self.state, self._hash(key), int(offset))

    def put_digest(self, digest: np.ndarray, offset: int) -> None:
        """:meth:`put` of a key's 16-byte MD5 digest (``uint8`` array)."""
        if self.size >= self._slots:
            raise ValueError(f"attempted to add a new entry to a full offset map, entries: "
                             f"{self.size}, slots: {self._slots}")
        _k.map_put(self.table, self._slots, self.state, digest, int(offset))

    def get(self, key: bytes | bytearray | memoryview) -> int:
        """The offset held for ``key``, or -1."""
        return int(_k.map_get(self.table, self._slots, self.state, self._hash(key)))

    def update_latest_offset(self, offset: int) -> None:
        self.state[_k.S_LAST_OFFSET] = offset

    def clear(self) -> None:
        """Empty the map: zero-fill the table (``Arrays.fill``, as Kafka does: the memory stays
        mapped from one cleaning to the next) and reset the statistics."""
        self.table.fill(0)
        self.state[:] = 0
        self.state[_k.S_LAST_OFFSET] = -1

    def __repr__(self) -> str:
        return (f"SkimpyOffsetMap(memory={self.memory}, slots={self._slots}, size={self.size}, "
                f"latest_offset={self.latest_offset})")
