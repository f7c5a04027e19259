"""The ``--topic`` values of Kafka's group tools: ``T`` (every partition of T) or ``T:P,P``
(those partitions), parsed as ``OffsetsUtils.parseTopicPartitionsToReset`` parses them, with
its usage errors.

>>> parse_topic_spec("orders:0,2"), parse_topic_spec("orders")
(('orders', [0, 2]), ('orders', None))
"""

from __future__ import annotations

from ..usage import UsageError, java_split

__all__ = ["parse_topic_spec"]


def parse_topic_spec(spec: str) -> tuple[str, list[int] | None]:
    """``(topic, partitions)``; partitions None for a bare topic name.

    Raises
    ------
    kafkalog.usage.UsageError
        ``T:`` without a partition list or with more colons, or a partition that is not an
        integer (Kafka's texts).
    """
    if ":" not in spec:
        return spec, None
    parts = java_split(spec, ":")
    if len(parts) != 2:
        raise UsageError(f"Invalid topic arg '{spec}', expected topic name and partitions")
    partitions = []
    for part in java_split(parts[1], ","):
        try:
            partitions.append(int(part))
        except ValueError:
            raise UsageError(f"Invalid partition '{part}' specified in topic arg "
                             f"'{spec}''") from None
    return parts[0], partitions
