"""Which partition the producer sends a record to: Kafka 4.2's built-in partitioning.

Sources (Kafka 4.2): ``clients/.../producer/KafkaProducer.java`` (``partition()``),
``clients/.../producer/internals/BuiltInPartitioner.java`` and the way
``clients/.../producer/internals/RecordAccumulator.java`` (``append``, ``partitionChanged``)
drives it.

* A record with a key (and ``partitioner.ignore.keys=false``, the default) goes to
  ``toPositive(murmur2(key)) % numPartitions`` (:func:`partition_for_key`); an empty key is a
  key (its hash is murmur2 of no bytes).
* A record without a key goes to the *sticky* partition (:class:`BuiltInPartitioner`): one
  partition is used until ``batch.size`` bytes have been produced to it *and* its last batch is
  full (or ``2 * batch.size`` bytes regardless), then another one is drawn at random. The
  accumulator tells it how many bytes each append took and whether the batch is full
  (:mod:`.console_producer` does what ``RecordAccumulator.append`` does).

Adaptive partitioning (``partitioner.adaptive.partitioning.enable``, KIP-794) weighs the draw by
the length of each partition's queue of unacknowledged batches. Offline every batch is
acknowledged as soon as it is written, so every queue is empty, and Kafka itself then uses no
load statistics (``updatePartitionLoadStats``: "All queue lengths are the same"): the draw is
uniform over the partitions, which is what is done here. Kafka draws with
``ThreadLocalRandom``; here the random source is given (a seeded ``random.Random`` makes the
choice reproducible in tests).

>>> partition_for_key(b"kafka", 3)
1
>>> import random
>>> p = BuiltInPartitioner(3, sticky_batch_size=100, rng=random.Random(7))
>>> first = p.peek_current_partition()
>>> p.update_partition_info(60, enable_switch=True)   # 60 < 100: stay
False
>>> p.update_partition_info(60, enable_switch=False)  # 120: the batch is not full yet
False
>>> p.update_partition_info(0, enable_switch=True)    # now it is: switch (maybe to first)
True
"""

from __future__ import annotations

import random

from ..records.murmur2 import murmur2, to_positive

__all__ = ["BuiltInPartitioner", "partition_for_key"]


def partition_for_key(key: bytes, num_partitions: int) -> int:
    """``BuiltInPartitioner.partitionForKey``: the partition of a keyed record.

    >>> partition_for_key(b"", 6)
    3

    Raises ``ValueError`` when ``num_partitions`` is below 1.
    """
    if num_partitions < 1:
        raise ValueError(f"a topic has at least one partition (found {num_partitions})")
    return to_positive(murmur2(key)) % num_partitions


class BuiltInPartitioner:
    """The sticky partition of one topic's keyless records (Kafka's ``BuiltInPartitioner``
    without load statistics, see the module docstring). Not thread-safe: one producer loop.

    Parameters
    ----------
    num_partitions:
        The topic's partition count (all of them available: a log dir's partitions have their
        single replica as leader).
    sticky_batch_size:
        Bytes to produce to a partition before switching (the producer's ``batch.size``,
        at least 1).
    rng:
        The random source of the switches (``random.Random()`` when None).

    Raises
    ------
    ValueError
        ``sticky_batch_size`` below 1 (Kafka's text) or ``num_partitions`` below 1.
    """

    def __init__(self, num_partitions: int, sticky_batch_size: int,
                 rng: random.Random | None = None) -> None:
        if sticky_batch_size < 1:
            raise ValueError(f"stickyBatchSize must be >= 1 but got {sticky_batch_size}")
        if num_partitions < 1:
            raise ValueError(f"a topic has at least one partition (found {num_partitions})")
        self.num_partitions = num_partitions
        self.sticky_batch_size = sticky_batch_size
        self._rng = rng if rng is not None else random.Random()
        self._partition: int | None = None
        self._produced_bytes = 0

    def random_partition(self) -> int:
        """``randomPartition``: ``toPositive(nextInt())``, a Java int drawn from ``rng``."""
        return to_positive(self._rng.getrandbits(32))

    def next_partition(self) -> int:
        """``nextPartition`` without load stats: ``availablePartitions[random % size]``, the
        partitions listed by id."""
        return self.random_partition() % self.num_partitions

    def peek_current_partition(self) -> int:
        """``peekCurrentPartitionInfo``: the sticky partition, drawn on first use."""
        if self._partition is None:
            self._partition = self.next_partition()
            self._produced_bytes = 0
        return self._partition

    @property
    def produced_bytes(self) -> int:
        """Bytes produced to the current sticky partition since it was chosen."""
        return self._produced_bytes

    def update_partition_info(self, appended_bytes: int, *, enable_switch: bool) -> bool:
        """``updatePartitionInfo``: count ``appended_bytes`` and switch partition once
        ``batch.size`` bytes went to it and switching is enabled (its last batch is full), or
        once ``2 * batch.size`` went regardless. Returns whether the partition changed."""
        if self._partition is None:
            self.peek_current_partition()
        self._produced_bytes += appended_bytes
        if (self._produced_bytes >= self.sticky_batch_size and enable_switch) or \
                self._produced_bytes >= self.sticky_batch_size * 2:
            # Kafka creates a new StickyPartitionInfo: the count starts again, and the draw may
            # pick the same partition
            self._partition = self.next_partition()
            self._produced_bytes = 0
            return True
        return False
