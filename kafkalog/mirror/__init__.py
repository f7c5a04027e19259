"""``kafkalog mirror``: a byte-exact, follower-style backup of topics from a live Kafka endpoint
into a Kafka-format log dir (:mod:`kafkalog.mirror.mirror`), over a small blocking protocol
client (:mod:`kafkalog.mirror.client`).

Example
-------
>>> from kafkalog.mirror import mirror
>>> result = mirror("127.0.0.1:9092", "/backup/kafka-logs")   # doctest: +SKIP
"""

from .client import KafkaClient, MirrorError
from .mirror import (
    Gap,
    Mirror,
    MirrorProgress,
    MirrorResult,
    PartitionReport,
    TopicConfigReport,
    Truncation,
    mirror,
)

__all__ = ["mirror", "Mirror", "MirrorResult", "MirrorProgress", "PartitionReport",
           "TopicConfigReport", "Truncation", "Gap", "MirrorError", "KafkaClient"]
