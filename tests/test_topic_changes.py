"""Changing a topic after creation: its config (Kafka's ``LogManager.updateTopicConfig`` and
``UnifiedLog.updateConfig``) and its partition count (``ReplicationControlManager
.createPartitions``), in the engine: :meth:`LogDir.update_topic_config`,
:meth:`LogDir.create_partitions`, :meth:`Log.update_config`.

Topics created here and topics written by a real broker (shared fixtures) both.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kafkalog import files
from kafkalog.checkpoint import PartitionMetadataFile
from kafkalog.clock import ManualClock
from kafkalog.config import LogConfig
from kafkalog.errors import ConfigError, InvalidRecordError
from kafkalog.log import Log
from kafkalog.log_dir import (
    TOPICS_FILE,
    InvalidPartitionsError,
    LogDir,
    UnknownTopicOrPartitionError,
)
from kafkalog.records.record import Record
from tests.conftest import shared_fixture_path

T0 = 1_700_000_000_000


def _records(n: int, start: int = 0, size: int = 100) -> list[Record]:
    return [Record(b"k%d" % i, b"v" * size, T0 + i) for i in range(start, start + n)]


def _topics_file(root: Path) -> dict:
    return json.loads((root / TOPICS_FILE).read_text())["topics"]


# -- Log.update_config --------------------------------------------------------------------------


def test_lower_segment_bytes_rolls_the_active_segment_at_the_next_append(tmp_path):
    with Log.open(tmp_path / "t-0", LogConfig(index_interval_bytes=200)) as log:
        for i in range(20):  # one batch each (an index entry goes at a batch boundary)
            log.append(_records(1, i))
        assert len(log.segments) == 1
        size = log.active_segment.size
        old = log.update_config(LogConfig(segment_bytes=size + 50, index_interval_bytes=4096))
        assert old.index_interval_bytes == 200
        # the new segment.bytes applies now: the active segment cannot take another batch
        log.append(_records(1, 20))
        assert [s.base_offset for s in log.segments] == [0, 20]
        # the segment rolled away kept the index interval it was created with (an entry every
        # second batch of ~170 bytes; 4096 would give none in its 3.4 KB); the new active
        # segment takes the new interval
        first = log.segments[0]
        assert first.config.index_interval_bytes == 200
        assert log.active_segment.config.index_interval_bytes == 4096
        assert first.offset_index.entries >= 5
    # and a reopen reads everything back in order
    with Log.open(tmp_path / "t-0") as log:
        assert [r.offset for r in log.records()] == list(range(21))


def test_segment_ms_lowered_rolls_by_time_from_the_next_append(tmp_path):
    clock = ManualClock(T0)
    with Log.open(tmp_path / "t-0", LogConfig(), clock=clock) as log:
        log.append([Record(b"k", b"v", T0)])
        log.append([Record(b"k", b"v", T0 + 60_000)])
        assert len(log.segments) == 1  # 7 days by default
        log.update_config(LogConfig(segment_ms=30_000))
        log.append([Record(b"k", b"v", T0 + 61_000)])  # 61 s after the segment's first batch
        assert [s.base_offset for s in log.segments] == [0, 2]


def test_retention_and_cleanup_policy_take_effect_without_reopening(tmp_path):
    clock = ManualClock(T0 + 10_000_000)
    with Log.open(tmp_path / "t-0", LogConfig(segment_bytes=300), clock=clock) as log:
        for i in range(6):
            log.append([Record(b"k%d" % i, b"v" * 100, T0 + i)])
        before = len(log.segments)
        assert before > 2
        assert log.enforce_retention(clock.milliseconds()) == 0  # 7 days: nothing is old
        log.update_config(LogConfig(segment_bytes=300, retention_ms=1000))
        # every segment breached retention.ms: all go, the active one after a roll (Kafka)
        assert log.enforce_retention(clock.milliseconds()) == before
        assert log.log_start_offset == log.log_end_offset == 6
        log.update_config(LogConfig(segment_bytes=300, cleanup_policy=("compact",)))
        with pytest.raises(InvalidRecordError):
            log.append([Record(None, b"no key", T0)])  # compacted logs refuse keyless records


def test_update_config_refuses_what_is_not_a_log_config(tmp_path):
    with Log.open(tmp_path / "t-0") as log:
        with pytest.raises(TypeError):
            log.update_config({"segment.bytes": "1000"})  # type: ignore[arg-type]


# -- LogDir.update_topic_config ------------------------------------------------------------------


def test_update_topic_config_persists_applies_and_replaces_every_override(tmp_path):
    root = tmp_path / "logs"
    with LogDir.open(root) as d:
        d.create_topic("orders", 2, {"segment.bytes": "1048576", "retention.ms": "1000"})
        cfg = d.update_topic_config("orders", {"retention.ms": "60000",
                                               "cleanup.policy": "compact,delete"})
        assert cfg.retention_ms == 60000 and cfg.cleanup_policy == ("compact", "delete")
        # a replacement: segment.bytes is no longer overridden
        assert d.topic_overrides("orders") == {"retention.ms": "60000",
                                               "cleanup.policy": "compact,delete"}
        for p in (0, 1):
            assert d.log("orders", p).config == cfg
            assert d.log("orders", p).config.segment_bytes == LogConfig().segment_bytes
        assert _topics_file(root)["orders"]["config"] == d.topic_overrides("orders")
        assert _topics_file(root)["orders"]["partitions"] == 2
    with LogDir.open(root) as d:
        assert d.log("orders", 1).config.retention_ms == 60000
        assert d.log("orders", 1).config.cleanup_policy == ("compact", "delete")


def test_update_topic_config_bad_input_changes_nothing(tmp_path):
    root = tmp_path / "logs"
    with LogDir.open(root) as d:
        d.create_topic("orders", 1, {"retention.ms": "1000"})
        before = (root / TOPICS_FILE).read_bytes()
        with pytest.raises(ValueError, match="remote.storage.enable"):
            d.update_topic_config("orders", {"remote.storage.enable": "true"})
        with pytest.raises(ConfigError, match="compression.type"):
            d.update_topic_config("orders", {"compression.type": "ZSTD"})
        with pytest.raises(ConfigError, match="segment.bytes"):
            d.update_topic_config("orders", {"segment.bytes": "-1"})
        with pytest.raises(ConfigError, match="retention.ms: expected a value"):
            d.update_topic_config("orders", {"retention.ms": ""})
        with pytest.raises(UnknownTopicOrPartitionError, match="nope"):
            d.update_topic_config("nope", {"retention.ms": "1"})
        assert (root / TOPICS_FILE).read_bytes() == before
        assert d.log("orders", 0).config.retention_ms == 1000
        with pytest.raises(ConfigError):
            d.validate_topic_config({"min.cleanable.dirty.ratio": "2"})
        assert d.validate_topic_config({"retention.ms": "5"}).retention_ms == 5
    with LogDir.open(root, read_only=True) as d:
        with pytest.raises(PermissionError, match="read-only"):
            d.update_topic_config("orders", {"retention.ms": "5"})


def test_a_compacted_topic_turned_to_delete_and_back_with_the_cleaner(tmp_path):
    root = tmp_path / "logs"
    with LogDir.open(root) as d:
        d.create_topic("c", 1, {"cleanup.policy": "compact", "segment.bytes": "300"})
        log = d.log("c", 0)
        for i in range(40):
            log.append([Record(b"k%d" % (i % 3), b"v%d" % i, T0 + i)])
        assert d.cleaner is not None
        d.update_topic_config("c", {"cleanup.policy": "delete", "segment.bytes": "300"})
        assert not log.config.compact
        assert d.cleaner.clean_until_idle() == 0  # no compacted log left
        assert len(list(log.records())) == 40
        # the partition was not left paused by the abort: compacted again, it is cleaned
        d.update_topic_config("c", {"cleanup.policy": "compact", "segment.bytes": "300"})
        assert d.cleaner.clean_until_idle() >= 1
        kept = list(log.records())
        assert len(kept) < 40
        # and the latest value of each key survives
        assert {r.key: r.value for r in kept} == {b"k0": b"v39", b"k1": b"v37", b"k2": b"v38"}


# -- topics written by a broker ------------------------------------------------------------------


def _copy_real(tmp_path: Path, name: str) -> Path:
    dst = tmp_path / name
    shutil.copytree(shared_fixture_path("kafka-real", name), dst)
    return dst


def test_a_broker_topic_gets_overrides_and_partitions_keeping_its_id(tmp_path):
    root = _copy_real(tmp_path, "LDI-POC")
    topic = "TestTopicPatient"
    tid = PartitionMetadataFile(root / f"{topic}-0" / files.PARTITION_METADATA_FILE).read()
    with LogDir.open(root) as d:
        end = d.log(topic, 0).log_end_offset
        assert d.declared_partitions(topic) is None
        d.update_topic_config(topic, {"retention.bytes": "1048576"})
        entry = _topics_file(root)[topic]
        assert entry == {"topic_id": str(tid.topic_id), "partitions": None,
                         "config": {"retention.bytes": "1048576"}}
        assert d.declared_partitions(topic) is None  # still the broker's count, unknown
        assert d.create_partitions(topic, 3) == [1, 2]
        for p in (1, 2):
            meta = PartitionMetadataFile(root / f"{topic}-{p}" / files.PARTITION_METADATA_FILE)
            assert meta.read().topic_id == tid.topic_id
            assert d.log(topic, p).config.retention_bytes == 1048576
            assert d.log(topic, p).log_end_offset == 0
        d.log(topic, 2).append(_records(3))
    with LogDir.open(root) as d:
        assert [p for t, p in d.partitions() if t == topic] == [0, 1, 2]
        assert d.log(topic, 0).log_end_offset == end
        assert d.log(topic, 2).log_end_offset == 3
        assert d.log(topic, 0).config.retention_bytes == 1048576


def test_a_broker_topic_without_partition_metadata_and_a_partial_one(tmp_path):
    root = _copy_real(tmp_path, "VolodymyrZee-kafka")  # Kafka 2.4/2.5: no topic ids
    with LogDir.open(root) as d:
        d.update_topic_config("first_topic", {"retention.ms": "-1"})
        assert _topics_file(root)["first_topic"]["topic_id"] is None
        assert d.create_partitions("first_topic", 4) == [3]
        assert not (root / "first_topic-3" / files.PARTITION_METADATA_FILE).exists()
        # a dir holding only some partitions of a broker's topic cannot know the count
        shutil.rmtree(root / "first_topic-3")
    shutil.move(root / "first_topic-1", tmp_path / "elsewhere")
    with LogDir.open(root) as d:
        with pytest.raises(InvalidPartitionsError, match=r"holds partitions \[0, 2\]"):
            d.create_partitions("first_topic", 5)
        assert d.log("first_topic", 0).config.retention_ms == -1


# -- LogDir.create_partitions --------------------------------------------------------------------


def test_create_partitions_grows_a_topic_and_refuses_what_is_no_increase(tmp_path):
    root = tmp_path / "logs"
    with LogDir.open(root) as d:
        tid = d.create_topic("orders", 2, {"segment.bytes": "4096"})
        with pytest.raises(InvalidPartitionsError, match=r"Topic already has 2 partition\(s\)"):
            d.create_partitions("orders", 2)
        with pytest.raises(InvalidPartitionsError,
                           match=r"The topic orders currently has 2 partition\(s\); 1 would "
                                 r"not be an increase\."):
            d.create_partitions("orders", 1)
        with pytest.raises(UnknownTopicOrPartitionError):
            d.create_partitions("nope", 3)
        with pytest.raises(TypeError):
            d.create_partitions("orders", "3")  # type: ignore[arg-type]
        assert d.create_partitions("orders", 5) == [2, 3, 4]
        assert d.declared_partitions("orders") == 5
        for p in (2, 3, 4):
            meta = PartitionMetadataFile(root / f"orders-{p}" / files.PARTITION_METADATA_FILE)
            assert meta.read().topic_id == tid
            assert d.log("orders", p).config.segment_bytes == 4096
        d.log("orders", 4).append(_records(2))
    with LogDir.open(root) as d:
        assert d.declared_partitions("orders") == 5
        assert d.partitions() == [("orders", p) for p in range(5)]
        assert d.log("orders", 4).log_end_offset == 2
