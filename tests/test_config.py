"""LogConfig: Kafka's defaults, dotted names (topic and broker), validation messages."""

from __future__ import annotations

import pytest

from kafkalog.config import LONG_MAX, LogConfig
from kafkalog.errors import ConfigError, KafkaLogError


def test_defaults_are_kafkas() -> None:
    c = LogConfig()
    assert c.segment_bytes == 1073741824
    assert c.segment_ms == 604800000
    assert c.segment_jitter_ms == 0
    assert c.segment_index_bytes == 10485760
    assert c.index_interval_bytes == 4096
    assert c.flush_messages == LONG_MAX and c.flush_ms == LONG_MAX
    assert c.retention_ms == 604800000 and c.retention_bytes == -1
    assert c.max_message_bytes == 1048588
    assert c.preallocate is False
    assert c.message_timestamp_type == "CreateTime"
    assert c.file_delete_delay_ms == 60000
    assert c.cleanup_policy == ("delete",) and c.delete


def test_topic_names() -> None:
    c = LogConfig.from_properties({
        "segment.bytes": "1048576", "segment.ms": "1000", "segment.jitter.ms": 10,
        "segment.index.bytes": "4096", "index.interval.bytes": "0", "flush.messages": "1",
        "flush.ms": "5", "retention.ms": "-1", "retention.bytes": "123",
        "max.message.bytes": "100", "preallocate": "true",
        "message.timestamp.type": "LogAppendTime", "file.delete.delay.ms": "0",
        "cleanup.policy": "compact,delete",
    }, strict=True)
    assert (c.segment_bytes, c.segment_ms, c.segment_jitter_ms) == (1048576, 1000, 10)
    assert (c.segment_index_bytes, c.index_interval_bytes) == (4096, 0)
    assert (c.flush_messages, c.flush_ms, c.retention_ms, c.retention_bytes) == (1, 5, -1, 123)
    assert (c.max_message_bytes, c.preallocate, c.file_delete_delay_ms) == (100, True, 0)
    assert c.log_append_time and c.cleanup_policy == ("compact", "delete")


def test_broker_names_and_unit_variants() -> None:
    c = LogConfig.from_properties({
        "log.segment.bytes": "2048", "log.roll.hours": "2", "log.roll.jitter.hours": "1",
        "log.index.size.max.bytes": "800", "log.index.interval.bytes": "10",
        "log.flush.interval.messages": "7", "log.flush.scheduler.interval.ms": "99",
        "log.retention.hours": "3", "log.retention.bytes": "5",
        "log.segment.delete.delay.ms": "1", "message.max.bytes": "77",
        "log.preallocate": "false", "log.message.timestamp.type": "CreateTime",
        "log.cleanup.policy": "delete", "broker.id": "1", "log.dirs": "/tmp/x",
    })
    assert (c.segment_bytes, c.segment_ms, c.segment_jitter_ms) == (2048, 7200000, 3600000)
    assert (c.segment_index_bytes, c.index_interval_bytes, c.flush_messages) == (800, 10, 7)
    assert (c.flush_ms, c.retention_ms, c.retention_bytes) == (99, 10800000, 5)
    assert (c.file_delete_delay_ms, c.max_message_bytes) == (1, 77)


def test_precedence() -> None:
    # topic beats broker; .ms beats .minutes beats .hours; flush.interval.ms beats scheduler
    c = LogConfig.from_properties({"retention.ms": "5", "log.retention.ms": "6"})
    assert c.retention_ms == 5
    c = LogConfig.from_properties({"log.retention.minutes": "2", "log.retention.hours": "1"})
    assert c.retention_ms == 120000
    c = LogConfig.from_properties({"log.retention.ms": "7", "log.retention.minutes": "2"})
    assert c.retention_ms == 7
    c = LogConfig.from_properties({"log.roll.ms": "9", "log.roll.hours": "1"})
    assert c.segment_ms == 9
    c = LogConfig.from_properties({"log.flush.interval.ms": "3",
                                   "log.flush.scheduler.interval.ms": "4"})
    assert c.flush_ms == 3
    c = LogConfig.from_properties({"log.retention.hours": "-1"})
    assert c.retention_ms == -1
    c = LogConfig.from_properties({"internal.segment.bytes": "100"})
    assert c.segment_bytes == 100


@pytest.mark.parametrize("props,needle", [
    ({"segment.bytes": "13"},
     "segment.bytes: value '13' out of range (expected in [14, 2147483647], found 13)"),
    ({"segment.ms": "0"}, "segment.ms"),
    ({"segment.index.bytes": "3"}, "segment.index.bytes"),
    ({"retention.ms": "-2"}, "retention.ms"),
    ({"segment.bytes": "2147483648"}, "in [14, 2147483647]"),
    ({"flush.messages": "0"}, "flush.messages"),
    ({"segment.bytes": "1e6"}, "expected an integer, found '1e6'"),
    ({"preallocate": "yes"}, "preallocate: expected true or false, found 'yes'"),
    ({"message.timestamp.type": "Now"}, "message.timestamp.type"),
    ({"cleanup.policy": "forever"}, "cleanup.policy"),
])
def test_bad_values_name_key_value_and_range(props: dict, needle: str) -> None:
    with pytest.raises(ConfigError) as e:
        LogConfig.from_properties(props)
    assert needle in str(e.value)
    assert isinstance(e.value, KafkaLogError) and isinstance(e.value, ValueError)


def test_direct_construction_is_validated_and_strict_mode() -> None:
    with pytest.raises(ConfigError, match="segment.jitter.ms"):
        LogConfig(segment_jitter_ms=-1)
    with pytest.raises(ConfigError, match="expected an integer"):
        LogConfig(segment_bytes="10")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="unknown log config name"):
        LogConfig.from_properties({"segment.bytez": "1"}, strict=True)
    assert LogConfig().replace(segment_bytes=99).segment_bytes == 99
    with pytest.raises(ConfigError):
        LogConfig().replace(segment_bytes=1)
