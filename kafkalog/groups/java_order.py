"""Java's hashing and ordering, where Kafka's results depend on them.

Several of Kafka's group rules are defined by Java library behaviour rather than by a spec:

* ``offsets.topic`` partition of a group: ``Utils.abs(groupId.hashCode()) % partitions``, with
  ``String.hashCode`` computed over UTF-16 code units (:func:`string_hash`).
* Sorting member ids or topic names uses ``String.compareTo``, which compares UTF-16 code units,
  not code points: a character outside the BMP (a surrogate pair, 0xD800-0xDBFF first) sorts
  *before* U+E000..U+FFFF in Java and after them in Python (:func:`java_string_key`).
* Iteration over a ``java.util.HashMap``/``HashSet``: the classic group's member map decides the
  member order of a ``GroupMetadataValue`` record, the next leader when the leader leaves and the
  winner of a protocol vote tie; the sticky assignors iterate ``HashMap``s of member ids and
  ``HashSet``s of ``TopicPartition``; the KIP-848 uniform assignor numbers members in the order
  of a ``HashMap`` of member ids. :class:`JavaHashMap` reproduces that order.

How ``HashMap`` iterates (``java.util.HashMap``, JDK 8-21): a table of ``capacity`` buckets
(a power of two, 16 when constructed without a size, doubled when ``size`` exceeds
``0.75 * capacity``, never shrunk); a key goes to bucket ``spread(hashCode) & (capacity - 1)``
with ``spread(h) = h ^ (h >>> 16)``; iteration walks buckets in index order and, within a bucket,
entries in list order: ``put`` appends a new key to its bucket's list (and doubles the table
after the insertion that makes ``size > threshold``), ``computeIfAbsent`` prepends it (and
doubles the table *before* inserting, when ``size > threshold`` already); a resize splits a
bucket keeping relative order; removing an entry keeps the others' order. Not reproduced: the
red-black tree bins Java builds when one bucket holds 8 or more keys in a table of 64 or more
buckets (new keys then sit next to their tree parent); with string and partition keys that takes
a deliberately colliding key set.

>>> string_hash("DEVSmileCDR")
551467806
>>> JavaHashMap.ordered(["consumer-10", "consumer-2", "consumer-1"], string_hash)
['consumer-10', 'consumer-2', 'consumer-1']
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import Any, Generic, TypeVar

__all__ = [
    "string_hash",
    "java_string_key",
    "java_sorted",
    "topic_partition_hash",
    "uuid_hash",
    "uuid_key",
    "int_hash",
    "table_size_for",
    "JavaHashMap",
]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

_MASK32 = 0xFFFFFFFF
_MAXIMUM_CAPACITY = 1 << 30
_LOAD_FACTOR = 0.75


def _int32(h: int) -> int:
    h &= _MASK32
    return h - (1 << 32) if h & 0x80000000 else h


def string_hash(s: str) -> int:
    """Java's ``String.hashCode``: ``s[0]*31^(n-1) + ... + s[n-1]`` over UTF-16 code units,
    in 32-bit two's complement.

    >>> string_hash(""), string_hash("a"), string_hash("\\U0001F600") == 31 * 0xD83D + 0xDE00
    (0, 97, True)
    """
    h = 0
    if s.isascii():
        for ch in s.encode("ascii"):
            h = (31 * h + ch) & _MASK32
    else:
        data = s.encode("utf-16-be", "surrogatepass")
        for i in range(0, len(data), 2):
            h = (31 * h + ((data[i] << 8) | data[i + 1])) & _MASK32
    return h - (1 << 32) if h & 0x80000000 else h


def java_string_key(s: str) -> bytes:
    """A sort key ordering strings as Java's ``String.compareTo``: the UTF-16BE bytes, whose
    byte order is the order of UTF-16 code units. :func:`java_sorted` avoids the encoding when
    no string has a character at or above U+E000 (Java and Python then agree)."""
    return s.encode("utf-16-be", "surrogatepass")


def java_sorted(items: Iterable[str]) -> list[str]:
    """``items`` sorted as Java sorts strings (``Collections.sort`` / ``TreeSet``).

    >>> java_sorted(["\\uffff", "\\U0001F600", "a"])  # Java: the surrogate pair sorts first
    ['a', '\\U0001f600', '\\uffff']
    """
    items = list(items)
    if all(max(s, default="\0") < "\ue000" for s in items):
        return sorted(items)
    return sorted(items, key=java_string_key)


def int_hash(i: int) -> int:
    """``Integer.hashCode``: the value itself."""
    return _int32(i)


def topic_partition_hash(topic: str, partition: int) -> int:
    """Kafka's ``TopicPartition.hashCode``: ``31 * (31 + partition) + topic.hashCode()``."""
    return _int32(31 * (31 + partition) + string_hash(topic))


def uuid_hash(most: int, least: int) -> int:
    """Kafka's ``Uuid.hashCode``: ``h = msb ^ lsb; (int)(h >> 32) ^ (int) h``."""
    h = (most ^ least) & 0xFFFFFFFFFFFFFFFF
    return _int32((h >> 32) ^ h)


def uuid_key(most: int, least: int) -> tuple[int, int]:
    """Sort key of Kafka's ``Uuid.compareTo``: signed most, then signed least significant bits."""
    return (most, least)


def table_size_for(cap: int) -> int:
    """``HashMap.tableSizeFor``: the smallest power of two >= ``cap`` (at least 1)."""
    n = 1
    while n < cap and n < _MAXIMUM_CAPACITY:
        n <<= 1
    return n


def _spread(h: int) -> int:
    h &= _MASK32
    return h ^ (h >> 16)


class JavaHashMap(Generic[K, V]):
    """A dict that iterates in the order a ``java.util.HashMap`` with the same history would.

    ``hash_fn`` is the keys' Java ``hashCode``. ``initial_capacity`` as in
    ``new HashMap<>(initialCapacity)``; None as ``new HashMap<>()`` (16 buckets). Lookups cost
    what a dict costs; iteration sorts the keys (cached until the next insertion or removal).

    >>> m = JavaHashMap(string_hash)
    >>> for k in ["zeta", "alpha", "mid"]:
    ...     m[k] = len(k)
    >>> list(m), m.first_key()     # java.util.HashMap prints [zeta, alpha, mid] too
    (['zeta', 'alpha', 'mid'], 'zeta')
    """

    __slots__ = ("_hash", "_data", "_seq", "_bucket", "_next_seq", "_capacity", "_threshold",
                 "_order")

    def __init__(self, hash_fn: Callable[[K], int], initial_capacity: int | None = None) -> None:
        self._hash = hash_fn
        self._data: dict[K, V] = {}
        self._seq: dict[K, int] = {}
        self._bucket: dict[K, int] = {}       # spread hash (bucket = spread & (capacity - 1))
        self._next_seq = 0
        if initial_capacity is None:
            self._capacity = 16
        else:
            if initial_capacity < 0:
                raise ValueError(f"Illegal initial capacity: {initial_capacity}")
            self._capacity = table_size_for(max(initial_capacity, 1))
        self._threshold = int(self._capacity * _LOAD_FACTOR)
        self._order: list[K] | None = []

    @classmethod
    def ordered(cls, keys: Iterable[K], hash_fn: Callable[[K], int],
                initial_capacity: int | None = None, *, compute: bool = False) -> list[K]:
        """The iteration order of a fresh map into which ``keys`` were put in this order
        (``compute``: inserted with ``computeIfAbsent``, as ``CollectionUtils.
        groupPartitionsByTopic`` does)."""
        m: JavaHashMap[K, None] = cls(hash_fn, initial_capacity)
        for k in keys:
            if compute:
                m.compute_if_absent(k, None)
            else:
                m[k] = None
        return list(m)

    @classmethod
    def copy_of_map(cls, keys: Iterable[K], hash_fn: Callable[[K], int]) -> list[K]:
        """Iteration order of ``new HashMap<>(m)`` whose source iterates ``keys``
        (``putMapEntries``: a table for ``size / 0.75 + 1`` entries)."""
        keys = list(keys)
        cap = table_size_for(int(len(keys) / _LOAD_FACTOR + 1.0)) if keys else 16
        return cls.ordered(keys, hash_fn, cap)

    @classmethod
    def copy_of_set(cls, keys: Iterable[K], hash_fn: Callable[[K], int]) -> list[K]:
        """Iteration order of ``new HashSet<>(collection)`` whose source iterates ``keys``
        (``new HashMap<>(max((int) (size / .75f) + 1, 16))``, then ``addAll``)."""
        keys = list(keys)
        return cls.ordered(keys, hash_fn, max(int(len(keys) / _LOAD_FACTOR) + 1, 16))

    # -- mapping protocol ------------------------------------------------------------------

    def __setitem__(self, key: K, value: V) -> None:
        """``put``: a new key goes to the tail of its bucket; resize after inserting."""
        if key not in self._data:
            self._next_seq += 1
            self._seq[key] = self._next_seq
            self._bucket[key] = _spread(self._hash(key))
            if len(self._data) + 1 > self._threshold:
                self._grow()
            self._order = None
        self._data[key] = value

    def compute_if_absent(self, key: K, value: V) -> V:
        """``computeIfAbsent``: a new key goes to the head of its bucket; resize before
        inserting (when the map is already above its threshold). Returns the mapped value."""
        if len(self._data) > self._threshold:
            self._grow()            # checked first: even a key already present triggers it
            self._order = None
        if key in self._data:
            return self._data[key]
        self._next_seq += 1
        self._seq[key] = -self._next_seq           # before every key already in the bucket
        self._bucket[key] = _spread(self._hash(key))
        self._order = None
        self._data[key] = value
        return value

    def _grow(self) -> None:
        if self._capacity < _MAXIMUM_CAPACITY:
            self._capacity <<= 1
            self._threshold = int(self._capacity * _LOAD_FACTOR)

    def __getitem__(self, key: K) -> V:
        return self._data[key]

    def __delitem__(self, key: K) -> None:
        del self._data[key]
        del self._seq[key]
        del self._bucket[key]
        self._order = None

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __len__(self) -> int:
        return len(self._data)

    def __iter__(self) -> Iterator[K]:
        return iter(self._keys())

    def __repr__(self) -> str:
        return "JavaHashMap({" + ", ".join(f"{k!r}: {self._data[k]!r}" for k in self) + "})"

    def get(self, key: K, default: Any = None) -> Any:
        return self._data.get(key, default)

    def pop(self, key: K, *default: Any) -> Any:
        if key in self._data:
            value = self._data[key]
            del self[key]
            return value
        if default:
            return default[0]
        raise KeyError(key)

    def keys(self) -> list[K]:
        return list(self._keys())

    def values(self) -> list[V]:
        return [self._data[k] for k in self._keys()]

    def items(self) -> list[tuple[K, V]]:
        return [(k, self._data[k]) for k in self._keys()]

    def clear(self) -> None:
        """``HashMap.clear``: empties the map; the table keeps its capacity."""
        self._data.clear()
        self._seq.clear()
        self._bucket.clear()
        self._order = []

    @property
    def capacity(self) -> int:
        """The current number of buckets."""
        return self._capacity

    def shares_buckets(self) -> bool:
        """Whether two keys share a bucket: when none do, the iteration order is the buckets'
        and the same whatever order the keys were inserted in.

        >>> m = JavaHashMap(string_hash)
        >>> m["a"] = m["b"] = None
        >>> m.shares_buckets()
        False
        """
        mask = self._capacity - 1
        return len({b & mask for b in self._bucket.values()}) < len(self._bucket)

    def first_key(self) -> K:
        """``keySet().iterator().next()`` without sorting everything."""
        if self._order is not None:
            return self._order[0]
        mask = self._capacity - 1
        bucket, seq = self._bucket, self._seq
        return min(self._data, key=lambda k: ((bucket[k] & mask), seq[k]))

    def _keys(self) -> list[K]:
        if self._order is None:
            mask = self._capacity - 1
            bucket, seq = self._bucket, self._seq
            self._order = sorted(self._data, key=lambda k: ((bucket[k] & mask), seq[k]))
        return self._order
