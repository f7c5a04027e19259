"""Iteration order of the JVM hash collections whose contents Kafka's tools print.

Several lines of ``kafka-dump-log.sh`` list the contents of a hash collection in its iteration
order: the files of the end-of-run summaries (a Scala ``mutable.HashMap`` keyed by absolute path,
a ``java.util.HashMap`` in the Java rewrite), the partitions of a transaction (a Scala
``mutable.HashSet[TopicPartition]``) and the members of a classic group (a Scala
``mutable.HashMap[String, MemberMetadata]``). That order is a function of the elements' hash codes,
the table's capacity and, for some implementations, the insertion order; this module computes it
so that the text can match Kafka's byte for byte.

Which implementation ran depends on the Scala version of the Kafka build: Kafka's default build
(``gradle.properties`` ``scalaVersion``) was Scala 2.11 for 0.11-2.1, 2.12 for 2.2-2.5 and 2.13 from
2.6 (4.x ships 2.13 only). 2.11 and 2.12 share the collection implementations modelled here
(``scala/collection/mutable/HashTable.scala``, ``FlatHashTable.scala``,
``immutable/HashSet.scala`` at scala/scala tags v2.11.12 and v2.12.10); 2.13 rewrote them
(``mutable/HashMap.scala``, ``mutable/HashSet.scala`` at v2.13.5). All arithmetic is Java's
32-bit two's complement.

Example
-------
>>> java_string_hash("a")
97
>>> scala213_hash_map_order(["b", "a"], java_string_hash)
['a', 'b']
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TypeVar

__all__ = [
    "java_string_hash",
    "topic_partition_hash",
    "scala212_hash_map_order",
    "scala212_hash_set_order",
    "scala212_immutable_set_order",
    "scala213_hash_map_order",
    "scala213_hash_set_order",
    "java_hash_map_order",
    "scala_hash_map_order",
]

T = TypeVar("T", bound=Hashable)
_M32 = 0xFFFFFFFF


def _i32(x: int) -> int:
    """Wrap to a signed 32-bit int."""
    x &= _M32
    return x - (1 << 32) if x & 0x80000000 else x


def java_string_hash(s: str) -> int:
    """``String.hashCode()`` (over UTF-16 code units), a signed 32-bit int."""
    data = s.encode("utf-16-be")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & _M32
    return _i32(h)


def topic_partition_hash(topic: str, partition: int) -> int:
    """``TopicPartition.hashCode()``: ``31 * (31 + partition) + topic.hashCode()``."""
    return _i32(31 * (31 + partition) + java_string_hash(topic))


# --------------------------------------------------------------------------------------------
# Scala 2.11 / 2.12
# --------------------------------------------------------------------------------------------


def _byteswap32(v: int) -> int:
    """``scala.util.hashing.byteswap32``."""
    hc = (v * 0x9E3775CD) & _M32
    hc = int.from_bytes(hc.to_bytes(4, "big"), "little")  # Integer.reverseBytes
    return _i32(hc * 0x9E3775CD)


def _rotate_right(i: int, distance: int) -> int:
    u = i & _M32
    d = distance & 31
    return _i32((u >> d) | (u << (32 - d)))


def _improve212(hcode: int, seed: int) -> int:
    """``HashTable.improve`` / ``FlatHashTable.improve``: ``rotateRight(byteswap32(h), seed)``."""
    return _rotate_right(_byteswap32(hcode), seed)


def scala212_hash_map_order(puts: Iterable[T], hash_of: Callable[[T], int]) -> list[T]:
    """Key order of a Scala 2.11/2.12 ``mutable.HashMap`` after these ``put`` calls.

    ``HashTable``: 16 buckets, seed ``bitCount(15) = 4`` for the table's life (``resize`` does not
    change it), bucket ``(improve(hash, seed) >>> numberOfLeadingZeros(len - 1)) & (len - 1)``;
    a new entry is pushed on the front of its bucket's chain and the table doubles once the size
    exceeds 75% of it (``resize`` walks the old buckets from the last, pushing each chain's
    entries in order, which reverses them). Iteration walks the buckets from the last populated
    one down to 0, each chain front to back. A key put again keeps its place.
    """
    length = 16
    seed = 4  # tableSizeSeed of the initial table; never recomputed by resize
    threshold = length * 750 // 1000
    table: list[list[T]] = [[] for _ in range(length)]
    present: set[T] = set()

    def index(key: T, n: int) -> int:
        ones = n - 1
        shift = 32 - ones.bit_length()  # Integer.numberOfLeadingZeros(ones)
        return ((_improve212(hash_of(key), seed) & _M32) >> shift) & ones

    for key in puts:
        if key in present:
            continue
        present.add(key)
        table[index(key, length)].insert(0, key)
        if len(present) > threshold:
            new_len = length * 2
            new: list[list[T]] = [[] for _ in range(new_len)]
            for i in range(length - 1, -1, -1):
                for k in table[i]:
                    new[index(k, new_len)].insert(0, k)
            table, length = new, new_len
            threshold = length * 750 // 1000
    out: list[T] = []
    for i in range(length - 1, -1, -1):
        out.extend(table[i])
    return out


def scala212_hash_set_order(adds: Iterable[T], hash_of: Callable[[T], int]) -> list[T]:
    """Element order of a Scala 2.11/2.12 ``mutable.HashSet`` after these ``add`` calls.

    ``FlatHashTable``: open addressing over 32 slots with linear probing; slot
    ``(improve(hash, seed) >>> (32 - bitCount(len - 1))) & (len - 1)`` with ``seed =
    bitCount(len - 1)``; once the size reaches 45% (``loadFactor`` 450) the table doubles and the
    old slots are re-added in slot order. Iteration walks the slots in order.
    """
    length = 32
    table: list[T | None] = [None] * length
    size = 0

    def threshold(n: int) -> int:
        return n * 450 // 1000

    def add_entry(e: T) -> bool:
        nonlocal size
        ones = length - 1
        bits = bin(ones).count("1")
        h = ((_improve212(hash_of(e), bits) & _M32) >> (32 - bits)) & ones
        while table[h] is not None:
            if table[h] == e:
                return False
            h = (h + 1) % length
        table[h] = e
        size += 1
        return True

    for e in adds:
        if add_entry(e) and size >= threshold(length):
            old = table
            length *= 2
            table = [None] * length
            size = 0
            for x in old:
                if x is not None:
                    add_entry(x)
    return [x for x in table if x is not None]


def _improve212_immutable(hcode: int) -> int:
    """``immutable.HashSet.improve`` (2.11/2.12)."""
    h = _i32(hcode + ~_i32(hcode << 9))
    h = _i32(h ^ ((h & _M32) >> 14))
    h = _i32(h + _i32(h << 4))
    return _i32(h ^ ((h & _M32) >> 10))


def scala212_immutable_set_order(elems: Sequence[T], hash_of: Callable[[T], int]) -> list[T]:
    """Iteration order of ``elems.toSet`` (an immutable Set) in Scala 2.11/2.12.

    Up to four distinct elements it is a ``Set1``..``Set4`` (insertion order); beyond, a hash
    trie keyed by 5-bit chunks of the improved hash, least significant first, so its iteration
    order is the lexicographic order of those chunks.
    """
    distinct = list(dict.fromkeys(elems))
    if len(distinct) <= 4:
        return distinct

    def key(e: T) -> tuple[int, ...]:
        h = _improve212_immutable(hash_of(e)) & _M32
        return tuple((h >> (5 * level)) & 31 for level in range(7))

    return sorted(distinct, key=key)


# --------------------------------------------------------------------------------------------
# Scala 2.13
# --------------------------------------------------------------------------------------------


def _spread(h: int) -> int:
    """``h ^ (h >>> 16)``: Scala 2.13 ``improveHash`` and ``java.util.HashMap.hash``."""
    u = h & _M32
    return _i32(u ^ (u >> 16))


def _table_size_for_213(capacity: int) -> int:
    """``HashSet.tableSizeFor``: ``highestOneBit(max(capacity - 1, 4)) * 2``, at most 2^30."""
    c = max(capacity - 1, 4)
    return min((1 << (c.bit_length() - 1)) * 2, 1 << 30)


class _Scala213Table:
    """Bucket index and growth of a Scala 2.13 ``mutable.HashMap``/``HashSet``.

    16 buckets, load factor 0.75; ``put``/``add`` doubles the table *before* inserting when
    ``size + 1 >= threshold`` (also for an element already present); each bucket keeps its
    nodes sorted by (signed) improved hash, equal hashes in insertion order, and growing splits
    buckets without reordering them. Iteration walks the buckets in order.
    """

    def __init__(self, hash_of: Callable[[T], int]) -> None:
        self.hash_of = hash_of
        self.length = 16
        self.threshold = int(self.length * 0.75)
        self.seq: dict = {}  # element -> (improved hash, insertion number)

    def _grow(self, length: int) -> None:
        self.length = length
        self.threshold = int(length * 0.75)

    def size_hint(self, n: int) -> None:
        target = _table_size_for_213(int((n + 1) / 0.75))
        if target > self.length:
            self._grow(target)

    def add(self, e: Hashable, *, check_growth: bool = True) -> None:
        if check_growth and len(self.seq) + 1 >= self.threshold:
            self._grow(self.length * 2)
        if e not in self.seq:
            self.seq[e] = (_spread(self.hash_of(e)), len(self.seq))

    def order(self) -> list:
        ones = self.length - 1
        seq = self.seq
        return sorted(seq, key=lambda e: (seq[e][0] & ones, seq[e][0], seq[e][1]))


def scala213_hash_map_order(puts: Iterable[T], hash_of: Callable[[T], int]) -> list[T]:
    """Key order of a Scala 2.13 ``mutable.HashMap`` after these ``put`` calls (repeats count:
    every ``put`` runs the growth check)."""
    t = _Scala213Table(hash_of)
    for k in puts:
        t.add(k)
    return t.order()


def scala213_hash_set_order(
    add_alls: Iterable[Sequence[T]], hash_of: Callable[[T], int]
) -> list[T]:
    """Element order of a Scala 2.13 ``mutable.HashSet`` built by ``++=`` of these collections.

    Each ``++=`` (``addAll``) first calls ``sizeHint(knownSize)``; an immutable ``HashSet``
    (more than four elements) is then added without growth checks, a ``Set1``..``Set4`` element
    by element through ``add``.
    """
    t = _Scala213Table(hash_of)
    for batch in add_alls:
        distinct = list(dict.fromkeys(batch))
        t.size_hint(len(distinct))
        for e in distinct:
            t.add(e, check_growth=len(distinct) <= 4)
    return t.order()


# --------------------------------------------------------------------------------------------
# java.util.HashMap
# --------------------------------------------------------------------------------------------


def java_hash_map_order(
    puts: Iterable[T], hash_of: Callable[[T], int] = java_string_hash,
    initial_capacity: int = 16,
) -> list[T]:
    """Key order of a ``java.util.HashMap`` after inserting these keys.

    The table starts at ``tableSizeFor(initial_capacity)`` (``new HashMap<>(n)``; 16 for
    ``new HashMap<>()``) and doubles after an insertion that takes the size past
    ``0.75 * capacity``; iteration walks the buckets in order and each bucket in insertion order
    (resizes keep the relative order). Buckets longer than 8 become trees (not modelled: that
    many collisions).

    >>> java_hash_map_order(["version", "brokers"])
    ['brokers', 'version']
    """
    first_seen: dict[T, int] = {}
    cap = 1
    while cap < initial_capacity:
        cap *= 2
    for k in puts:
        if k not in first_seen:
            first_seen[k] = len(first_seen)
            if len(first_seen) > int(cap * 0.75):
                cap *= 2
    return sorted(first_seen, key=lambda k: (_spread(hash_of(k)) & (cap - 1), first_seen[k]))


def scala_hash_map_order(
    puts: Iterable[T], scala: str = "2.13", hash_of: Callable[[T], int] = java_string_hash
) -> list[T]:
    """Key order of a Scala ``mutable.HashMap`` of the given Scala version ("2.11", "2.12",
    "2.13") after these ``put`` calls."""
    if scala in ("2.11", "2.12"):
        return scala212_hash_map_order(puts, hash_of)
    return scala213_hash_map_order(puts, hash_of)
