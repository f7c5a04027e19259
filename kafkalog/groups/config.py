"""The group coordinator's broker settings (``GroupCoordinatorConfig``, group-coordinator/src/main/
java/org/apache/kafka/coordinator/group/GroupCoordinatorConfig.java, 4.0 defaults) and the
``__consumer_offsets`` topic configuration Kafka creates it with.

>>> GroupConfig.from_properties({"offsets.retention.minutes": "1"}).offsets_retention_ms
60000
>>> OFFSETS_TOPIC_CONFIG["cleanup.policy"], OFFSETS_TOPIC_CONFIG["segment.bytes"]
('compact', '104857600')
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from ..errors import ConfigError

__all__ = ["GroupConfig", "OFFSETS_TOPIC", "OFFSETS_TOPIC_CONFIG", "offsets_topic_config"]

#: Kafka's ``Topic.GROUP_METADATA_TOPIC_NAME``
OFFSETS_TOPIC = "__consumer_offsets"

_MINUTE_MS = 60_000


#: ``ConsumerGroupMigrationPolicy`` values (matched case-insensitively, as Kafka's validator)
MIGRATION_POLICIES = ("disabled", "upgrade", "downgrade", "bidirectional")


@dataclass(frozen=True)
class GroupConfig:
    """Group coordinator settings; every field has Kafka's default. Units in the names.

    ``offsets_topic_compression`` is ``offsets.topic.compression.codec`` (the codec of the
    batches the coordinator writes; Kafka's default: none).
    """

    offsets_topic_num_partitions: int = 50
    offsets_topic_segment_bytes: int = 100 * 1024 * 1024
    offsets_topic_compression: str = "none"
    offsets_retention_ms: int = 7 * 24 * 60 * _MINUTE_MS    # offsets.retention.minutes = 10080
    offsets_retention_check_interval_ms: int = 600_000
    offset_metadata_max_bytes: int = 4096
    group_min_session_timeout_ms: int = 6000
    group_max_session_timeout_ms: int = 1_800_000
    group_initial_rebalance_delay_ms: int = 3000
    group_max_size: int = (1 << 31) - 1
    #: GroupCoordinatorConfig.CLASSIC_GROUP_NEW_MEMBER_JOIN_TIMEOUT_MS (not configurable in Kafka)
    group_new_member_join_timeout_ms: int = 5 * _MINUTE_MS
    #: KIP-848 consumer groups (GroupCoordinatorConfig, 4.0 defaults)
    group_consumer_session_timeout_ms: int = 45_000
    group_consumer_heartbeat_interval_ms: int = 5_000
    group_consumer_max_size: int = (1 << 31) - 1
    #: ``group.consumer.migration.policy``: which online conversions between classic and
    #: consumer groups happen (disabled, upgrade, downgrade or bidirectional, Kafka 4's default)
    group_consumer_migration_policy: str = "bidirectional"

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name == "offsets_topic_compression":
                if v not in ("none", "gzip", "snappy", "lz4", "zstd"):
                    raise ConfigError(f"offsets.topic.compression.codec: expected none, gzip, "
                                      f"snappy, lz4 or zstd, found {v!r}")
                continue
            if f.name == "group_consumer_migration_policy":
                if v not in MIGRATION_POLICIES:
                    raise ConfigError(f"group.consumer.migration.policy: expected one of "
                                      f"{', '.join(MIGRATION_POLICIES)}, found {v!r}")
                continue
            if isinstance(v, bool) or not isinstance(v, int):
                raise ConfigError(f"{f.name}: expected an integer, found {v!r}")
            minimum = 0 if f.name in ("group_initial_rebalance_delay_ms",
                                      "offset_metadata_max_bytes") else 1
            if v < minimum:
                raise ConfigError(f"{f.name}: value {v} out of range (expected >= {minimum})")

    @classmethod
    def from_properties(cls, props: Mapping[str, Any] | None) -> GroupConfig:
        """From broker property names (``server.properties``); unknown names are ignored.

        Raises
        ------
        ConfigError
            A value that is not an integer or out of range, naming the property.
        """
        props = props or {}
        values: dict[str, Any] = {}
        names = {
            "offsets.topic.num.partitions": ("offsets_topic_num_partitions", 1),
            "offsets.topic.segment.bytes": ("offsets_topic_segment_bytes", 1),
            "offsets.retention.minutes": ("offsets_retention_ms", _MINUTE_MS),
            "offsets.retention.check.interval.ms": ("offsets_retention_check_interval_ms", 1),
            "offset.metadata.max.bytes": ("offset_metadata_max_bytes", 1),
            "group.min.session.timeout.ms": ("group_min_session_timeout_ms", 1),
            "group.max.session.timeout.ms": ("group_max_session_timeout_ms", 1),
            "group.initial.rebalance.delay.ms": ("group_initial_rebalance_delay_ms", 1),
            "group.max.size": ("group_max_size", 1),
            "group.consumer.session.timeout.ms": ("group_consumer_session_timeout_ms", 1),
            "group.consumer.heartbeat.interval.ms": ("group_consumer_heartbeat_interval_ms", 1),
            "group.consumer.max.size": ("group_consumer_max_size", 1),
        }
        for key, (name, mult) in names.items():
            raw = props.get(key)
            if raw is None or raw == "":
                continue
            try:
                values[name] = int(str(raw).strip()) * mult
            except ValueError:
                raise ConfigError(f"{key}: expected an integer, found {raw!r}") from None
        codec = props.get("offsets.topic.compression.codec")
        if codec not in (None, ""):
            by_id = {"0": "none", "1": "gzip", "2": "snappy", "3": "lz4", "4": "zstd"}
            values["offsets_topic_compression"] = by_id.get(str(codec).strip(),
                                                            str(codec).strip().lower())
        policy = props.get("group.consumer.migration.policy")
        if policy not in (None, ""):
            values["group_consumer_migration_policy"] = str(policy).strip().lower()
        try:
            return cls(**values)
        except ConfigError as e:
            key = next((k for k, (n, _) in names.items() if n in e.message), None)
            raise ConfigError(e.message if key is None else f"{key}: {e.message}") from None


def offsets_topic_config(config: GroupConfig | None = None) -> dict[str, str]:
    """The topic configs ``__consumer_offsets`` is created with
    (``GroupCoordinatorService.groupMetadataTopicConfigs``: compact, ``compression.type``
    producer, ``segment.bytes`` = ``offsets.topic.segment.bytes``). ``compression.type`` is not
    listed: ``producer`` is what a log dir does anyway (batches are stored as written)."""
    config = config or GroupConfig()
    return {"cleanup.policy": "compact", "segment.bytes": str(config.offsets_topic_segment_bytes)}


#: the defaults of :func:`offsets_topic_config`
OFFSETS_TOPIC_CONFIG = offsets_topic_config()
