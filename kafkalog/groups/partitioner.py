"""Which ``__consumer_offsets`` partition holds a group (the group's coordinator partition).

Kafka: ``GroupCoordinator.partitionFor(groupId) = Utils.abs(groupId.hashCode()) %
groupMetadataTopicPartitionCount`` (core/src/main/scala/kafka/coordinator/group/
GroupMetadataManager.scala ``partitionFor`` in 3.x; group-coordinator
``GroupCoordinatorService.partitionFor`` in 4.x), where ``String.hashCode`` runs over UTF-16 code
units and ``Utils.abs(Integer.MIN_VALUE)`` is 0 (``clients/.../common/utils/Utils.java``: ``n ==
Integer.MIN_VALUE ? 0 : Math.abs(n)``).

>>> offsets_partition("console-consumer-1")
24
>>> offsets_partition("polygenelubricants")    # String.hashCode == Integer.MIN_VALUE
0
"""

from __future__ import annotations

from .java_order import string_hash

__all__ = ["offsets_partition", "java_abs", "DEFAULT_OFFSETS_TOPIC_PARTITIONS"]

#: ``offsets.topic.num.partitions`` default (``GroupCoordinatorConfig``)
DEFAULT_OFFSETS_TOPIC_PARTITIONS = 50

_INT_MIN = -(1 << 31)


def java_abs(n: int) -> int:
    """Kafka's ``Utils.abs``: ``Math.abs`` except that ``Integer.MIN_VALUE`` maps to 0."""
    return 0 if n == _INT_MIN else abs(n)


def offsets_partition(group_id: str, num_partitions: int = DEFAULT_OFFSETS_TOPIC_PARTITIONS
                      ) -> int:
    """The ``__consumer_offsets`` partition of ``group_id``.

    Raises
    ------
    ValueError
        ``num_partitions`` below 1, or ``group_id`` not a string.

    Examples
    --------
    >>> [offsets_partition(g) for g in ("DEVSmileCDR", "\\u7ec4", "g\\U0001F600")]
    [6, 2, 32]
    """
    if not isinstance(group_id, str):
        raise ValueError(f"group id must be a string (found {type(group_id).__name__})")
    if isinstance(num_partitions, bool) or not isinstance(num_partitions, int) \
            or num_partitions < 1:
        raise ValueError(
            f"offsets.topic.num.partitions must be an integer >= 1 (found {num_partitions!r})")
    return java_abs(string_hash(group_id)) % num_partitions
