"""Kafka's topic-partition filters of its tools (``tools/filter/TopicFilter.java``,
``PartitionFilter.java``, ``TopicPartitionFilter.java`` and ``GetOffsetShell``'s rule parser,
Kafka 4.2): ``--topic-partitions`` rules ``TOPIC_REGEX[:PARTITIONS]`` and ``--topic`` /
``--partitions``, with Java's matching, splitting and number parsing.

>>> f = topic_partition_filter("orders:0-2,audit")
>>> [f.is_topic_partition_allowed(t, p) for t, p in [("orders", 1), ("orders", 2), ("audit", 9)]]
[True, False, True]
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from ..usage import java_split
from . import INTERNAL_TOPICS, CommandFailed

__all__ = ["TOPIC_PARTITION_PATTERN", "TopicPartitionFilter", "topic_partition_filter",
           "topic_and_partitions_filter"]

#: GetOffsetShell.TOPIC_PARTITION_PATTERN (Java's ``matches``: the whole rule)
TOPIC_PARTITION_PATTERN = re.compile(r"([^:,]*)(?::(?:([0-9]*)|(?:([0-9]*)-([0-9]*))))?")
_INT_MAX = (1 << 31) - 1
_JAVA_INT = re.compile(r"[+-]?[0-9]+")
# the class of the exception a rule's TerseException is wrapped in (its toString)
_TERSE = "org.apache.kafka.tools.TerseException"


class TopicPartitionFilter(Protocol):
    """Kafka's ``TopicPartitionFilter``."""

    def is_topic_allowed(self, topic: str) -> bool: ...

    def is_topic_partition_allowed(self, topic: str, partition: int) -> bool: ...


@dataclass(frozen=True)
class _IncludeList:
    """``TopicFilter.IncludeList``: a topic regex (commas as alternatives, spaces and
    surrounding quotes dropped), matched against the whole name."""

    pattern: re.Pattern[str]

    @classmethod
    def of(cls, raw: str) -> _IncludeList:
        regex = raw.strip().replace(",", "|").replace(" ", "")
        regex = re.sub(r"""^["']+""", "", regex)
        regex = re.sub(r"""["']+$""", "", regex)
        try:
            return cls(re.compile(regex))
        except re.error:
            raise CommandFailed(f"{regex} is an invalid regex.") from None

    def is_topic_allowed(self, topic: str, exclude_internal_topics: bool = False) -> bool:
        return (self.pattern.fullmatch(topic) is not None
                and not (exclude_internal_topics and topic in INTERNAL_TOPICS))


@dataclass(frozen=True)
class _TopicAndPartitions:
    """``TopicFilterAndPartitionFilter``: a topic regex and a partition rule
    (``allowed(partition)``)."""

    topics: _IncludeList
    lower: int = 0                 # PartitionRangeFilter: lower <= p < upper
    upper: int = _INT_MAX + 1
    ids: frozenset[int] | None = None   # PartitionsSetFilter (empty: every partition)

    def is_topic_allowed(self, topic: str) -> bool:
        return self.topics.is_topic_allowed(topic, False)

    def is_topic_partition_allowed(self, topic: str, partition: int) -> bool:
        if not self.is_topic_allowed(topic):
            return False
        if self.ids is not None:
            return not self.ids or partition in self.ids
        return self.lower <= partition < self.upper


@dataclass(frozen=True)
class _Composite:
    """``CompositeTopicPartitionFilter``: any of the rules."""

    rules: tuple[_TopicAndPartitions, ...]

    def is_topic_allowed(self, topic: str) -> bool:
        return any(r.is_topic_allowed(topic) for r in self.rules)

    def is_topic_partition_allowed(self, topic: str, partition: int) -> bool:
        return any(r.is_topic_partition_allowed(topic, partition) for r in self.rules)


def _parse_int(text: str) -> int:
    """``Integer.parseInt`` (ValueError as its NumberFormatException)."""
    if not _JAVA_INT.fullmatch(text) or not -_INT_MAX - 1 <= int(text) <= _INT_MAX:
        raise ValueError(text)
    return int(text)


def _parse_rule(rule: str) -> _TopicAndPartitions:
    m = TOPIC_PARTITION_PATTERN.fullmatch(rule)
    if m is None:
        # parseRuleSpec's TerseException, wrapped in a RuntimeException by the caller
        raise CommandFailed(f"{_TERSE}: Invalid rule specification: {rule}")

    def group(g: int) -> str | None:
        return m.group(g) or None

    topics = _IncludeList.of(group(1) or ".*")
    try:
        if group(2) is not None:
            p = _parse_int(group(2) or "")
            return _TopicAndPartitions(topics, p, p + 1)
        lower = _parse_int(group(3) or "") if group(3) is not None else 0
        upper = _parse_int(group(4) or "") if group(4) is not None else _INT_MAX
    except ValueError as e:  # digits past Integer.MAX_VALUE
        raise CommandFailed(f'For input string: "{e}"') from None
    return _TopicAndPartitions(topics, lower, upper)


def topic_partition_filter(topic_partitions: str) -> TopicPartitionFilter:
    """``createTopicPartitionFilterWithPatternList``: the ``--topic-partitions`` rules.

    >>> f = topic_partition_filter("test.*:0,__consumer_offsets:1-2,.*:3")
    >>> [f.is_topic_partition_allowed(t, p) for t, p in
    ...  [("test1", 0), ("test1", 1), ("custom", 3), ("__consumer_offsets", 2)]]
    [True, False, True, False]

    Raises
    ------
    CommandFailed
        A rule that is not ``TOPIC_REGEX[:PARTITIONS]``, or a regex that does not compile.
    """
    return _Composite(tuple(_parse_rule(r) for r in java_split(topic_partitions)))


def topic_and_partitions_filter(topic: str | None, partitions: str | None
                                ) -> TopicPartitionFilter:
    """``createTopicPartitionFilterWithTopicAndPartitionPattern``: ``--topic`` (a regex,
    default every topic) and ``--partitions`` (ids, default every partition).

    >>> f = topic_and_partitions_filter("topic", "1,3,5")
    >>> f.is_topic_partition_allowed("topic", 3), f.is_topic_partition_allowed("topic", 2)
    (True, False)
    """
    ids: frozenset[int] = frozenset()
    if partitions:
        try:
            ids = frozenset(_parse_int(p) for p in java_split(partitions))
        except ValueError:
            raise CommandFailed("--partitions expects a comma separated list of numeric "
                                f"partition ids, but received: {partitions}") from None
    return _TopicAndPartitions(_IncludeList.of(topic if topic is not None else ".*"), ids=ids)
