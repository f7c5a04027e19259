"""``LogConfig``: Kafka's topic-level log settings as one frozen dataclass.

Field names are Kafka's topic config names in snake_case with the unit in the name
(``segment.bytes`` -> ``segment_bytes``), defaults are the 4.0 code line's
(``storage/.../log/LogConfig.java``, ``server-common/.../config/ServerLogConfigs.java``).

Deliberate choice on ``segment_bytes``: the default is Kafka's 1073741824 (1 GiB, unchanged in
4.0). Kafka 4.0 (KIP-1030) validates the public ``segment.bytes`` at >= 1048576 and lets tests use
smaller segments through ``internal.segment.bytes``; an embedded engine is tested with tiny
segments all the time, so the dataclass accepts Kafka's historical lower bound (14 bytes,
``LegacyRecord.RECORD_OVERHEAD_V0``) and ``from_properties`` accepts both names.

>>> cfg = LogConfig.from_properties({"segment.bytes": "1048576", "log.retention.hours": "1"})
>>> cfg.segment_bytes, cfg.retention_ms
(1048576, 3600000)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from .errors import ConfigError

__all__ = ["LogConfig", "LONG_MAX", "INT_MAX"]

LONG_MAX = 9223372036854775807
INT_MAX = 2147483647
LONG_MIN = -9223372036854775808

_HOUR_MS = 3600000
_MINUTE_MS = 60000

# field -> (kind, minimum, maximum). Ranges are Kafka's ConfigDef validators.
_RULES: dict[str, tuple[str, int, int]] = {
    "segment_bytes": ("int", 14, INT_MAX),
    "segment_ms": ("long", 1, LONG_MAX),
    "segment_jitter_ms": ("long", 0, LONG_MAX),
    "segment_index_bytes": ("int", 4, INT_MAX),
    "index_interval_bytes": ("int", 0, INT_MAX),
    "flush_messages": ("long", 1, LONG_MAX),
    "flush_ms": ("long", 0, LONG_MAX),
    "retention_ms": ("long", -1, LONG_MAX),
    "retention_bytes": ("long", LONG_MIN, LONG_MAX),
    "max_message_bytes": ("int", 0, INT_MAX),
    "file_delete_delay_ms": ("long", 0, LONG_MAX),
    "min_compaction_lag_ms": ("long", 0, LONG_MAX),
    "max_compaction_lag_ms": ("long", 1, LONG_MAX),
    "delete_retention_ms": ("long", 0, LONG_MAX),
    # KIP-390 (CompressionType.*.levelValidator): gzip is [1, 9] or -1, checked apart
    "compression_gzip_level": ("int", -1, 9),
    "compression_lz4_level": ("int", 1, 17),
    "compression_zstd_level": ("int", -131072, 22),
    "message_timestamp_before_max_ms": ("long", 0, LONG_MAX),
    "message_timestamp_after_max_ms": ("long", 0, LONG_MAX),
    "min_insync_replicas": ("int", 1, INT_MAX),
}
#: double-valued fields -> (minimum, maximum) (Kafka's ``between`` validators)
_DOUBLE_RULES: dict[str, tuple[float, float]] = {
    "min_cleanable_dirty_ratio": (0.0, 1.0),
}

_TIMESTAMP_TYPES = ("CreateTime", "LogAppendTime")
#: BrokerCompressionType names: a codec the log stores batches in, or "producer" (as sent)
COMPRESSION_TYPES = ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")
_CODEC_IDS = {"uncompressed": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
_CLEANUP_POLICIES = ("delete", "compact")


@dataclass(frozen=True)
class LogConfig:
    """Kafka's per-partition log settings (topic configs) with Kafka's defaults.

    Parameters
    ----------
    segment_bytes:
        ``segment.bytes``: roll when the active segment cannot take the next append.
    segment_ms:
        ``segment.ms``: roll when the active segment's data spans longer than this (7 days).
    segment_jitter_ms:
        ``segment.jitter.ms``: a random amount (drawn once per segment) subtracted from
        ``segment_ms``.
    segment_index_bytes:
        ``segment.index.bytes``: preallocated size of each ``.index``/``.timeindex``.
    index_interval_bytes:
        ``index.interval.bytes``: bytes appended between offset-index entries.
    flush_messages, flush_ms:
        ``flush.messages``/``flush.ms``: fsync after this many unflushed records / this long
        since the last flush (both effectively off by default).
    retention_ms, retention_bytes:
        ``retention.ms``/``retention.bytes``: delete old segments past these (-1 disables).
    max_message_bytes:
        ``max.message.bytes``: largest batch accepted, 12-byte log overhead included.
    preallocate:
        ``preallocate``: create new ``.log`` files at ``segment_bytes`` length.
    message_timestamp_type:
        ``message.timestamp.type``: ``"CreateTime"`` or ``"LogAppendTime"``.
    file_delete_delay_ms:
        ``file.delete.delay.ms``: wait between the ``.deleted`` rename and removal.
    cleanup_policy:
        ``cleanup.policy``: tuple of ``"delete"``/``"compact"``; time and size retention apply
        only with ``"delete"``, the log cleaner (:mod:`kafkalog.cleaner`) only with
        ``"compact"``.
    min_cleanable_dirty_ratio:
        ``min.cleanable.dirty.ratio``: the dirty share of a log's bytes above which the log
        cleaner picks it (0.5).
    min_compaction_lag_ms, max_compaction_lag_ms:
        ``min.compaction.lag.ms``: a segment whose largest timestamp is younger is not cleaned
        yet (0); ``max.compaction.lag.ms``: a log whose oldest dirty record is older is cleaned
        regardless of the ratio, and a compacted log's active segment rolls after it
        (``maxSegmentMs``).
    delete_retention_ms:
        ``delete.retention.ms``: how long a tombstone (and an empty transaction's marker) stays
        after the cleaning that first kept it (1 day; KIP-534's delete horizon).
    compression_type:
        ``compression.type``: the codec batches are stored in (``uncompressed``, ``gzip``,
        ``snappy``, ``lz4``, ``zstd``), a batch sent in another one being recompressed as a
        broker recompresses it; ``producer`` (default) keeps the producer's codec.
    message_timestamp_before_max_ms, message_timestamp_after_max_ms:
        ``message.timestamp.before.max.ms``/``after.max.ms`` (KIP-937): how far a produced
        record's CreateTime may lie before/after the broker's clock; others are refused with
        :class:`~kafkalog.errors.InvalidTimestampError`. Both unbounded, Kafka 3.9's defaults
        (Kafka 4.x bounds ``after`` to one hour).
    min_insync_replicas, unclean_leader_election_enable:
        ``min.insync.replicas`` and ``unclean.leader.election.enable``: validated and kept; with
        one replica they change nothing, as in Kafka (``Partition.effectiveMinIsr`` is
        ``min(min.insync.replicas, replicas)``; the one replica is always the leader).
    compression_gzip_level, compression_lz4_level, compression_zstd_level:
        ``compression.<codec>.level`` (KIP-390): the level of that codec when
        ``compression.type`` names it (-1 for gzip is zlib's default, 9 for lz4, 3 for zstd).

    Examples
    --------
    >>> LogConfig(segment_bytes=4096).segment_bytes
    4096
    >>> LogConfig(segment_ms=0)
    Traceback (most recent call last):
    ...
    kafkalog.errors.ConfigError: segment.ms: value 0 out of range (expected >= 1, found 0)
    """

    segment_bytes: int = 1073741824
    segment_ms: int = 7 * 24 * _HOUR_MS
    segment_jitter_ms: int = 0
    segment_index_bytes: int = 10485760
    index_interval_bytes: int = 4096
    flush_messages: int = LONG_MAX
    flush_ms: int = LONG_MAX
    retention_ms: int = 7 * 24 * _HOUR_MS
    retention_bytes: int = -1
    max_message_bytes: int = 1048588
    preallocate: bool = False
    message_timestamp_type: str = "CreateTime"
    file_delete_delay_ms: int = 60000
    cleanup_policy: tuple[str, ...] = ("delete",)
    min_cleanable_dirty_ratio: float = 0.5
    min_compaction_lag_ms: int = 0
    max_compaction_lag_ms: int = LONG_MAX
    delete_retention_ms: int = 24 * _HOUR_MS
    compression_type: str = "producer"
    compression_gzip_level: int = -1
    compression_lz4_level: int = 9
    compression_zstd_level: int = 3
    message_timestamp_before_max_ms: int = LONG_MAX
    message_timestamp_after_max_ms: int = LONG_MAX
    min_insync_replicas: int = 1
    unclean_leader_election_enable: bool = False

    def __post_init__(self) -> None:
        for name, (_kind, lo, hi) in _RULES.items():
            value = getattr(self, name)
            key = _topic_key(name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ConfigError(
                    f"{key}: expected an integer, found {type(value).__name__} {value!r}"
                )
            if not lo <= value <= hi:
                bound = _range_text(lo, hi)
                raise ConfigError(
                    f"{key}: value {value} out of range (expected {bound}, found {value})"
                )
        for name, (lo_f, hi_f) in _DOUBLE_RULES.items():
            value = getattr(self, name)
            key = _topic_key(name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ConfigError(f"{key}: expected a number, found {type(value).__name__} "
                                  f"{value!r}")
            if not lo_f <= value <= hi_f:
                raise ConfigError(f"{key}: value {value} out of range (expected in "
                                  f"[{lo_f}, {hi_f}], found {value})")
            object.__setattr__(self, name, float(value))
        if self.min_compaction_lag_ms > self.max_compaction_lag_ms:
            # LogConfig.validateValues (InvalidConfigurationException)
            raise ConfigError(
                f"conflict topic config setting min.compaction.lag.ms "
                f"({self.min_compaction_lag_ms}) > max.compaction.lag.ms "
                f"({self.max_compaction_lag_ms})")
        if self.compression_gzip_level == 0:
            # GZIP.levelValidator: "Value must be between 1 and 9 or equal to -1"
            raise ConfigError("compression.gzip.level: value 0 out of range (expected in "
                              "[1, 9] or -1, found 0)")
        if self.compression_type not in COMPRESSION_TYPES:
            raise ConfigError(
                f"compression.type: expected one of {', '.join(COMPRESSION_TYPES)}, found "
                f"{self.compression_type!r}")
        if not isinstance(self.unclean_leader_election_enable, bool):
            raise ConfigError("unclean.leader.election.enable: expected true or false, found "
                              f"{self.unclean_leader_election_enable!r}")
        if not isinstance(self.preallocate, bool):
            raise ConfigError(f"preallocate: expected true or false, found {self.preallocate!r}")
        if self.message_timestamp_type not in _TIMESTAMP_TYPES:
            raise ConfigError(
                "message.timestamp.type: expected one of CreateTime, LogAppendTime, "
                f"found {self.message_timestamp_type!r}"
            )
        policy = self.cleanup_policy
        if isinstance(policy, str):
            policy = tuple(p.strip() for p in policy.split(",") if p.strip())
            object.__setattr__(self, "cleanup_policy", policy)
        if not policy or any(p not in _CLEANUP_POLICIES for p in policy):
            raise ConfigError(
                f"cleanup.policy: expected a list of delete, compact, found {self.cleanup_policy!r}"
            )

    # -- derived values -------------------------------------------------------------------

    @cached_property
    def delete(self) -> bool:
        """True when ``cleanup.policy`` includes ``delete`` (time/size retention applies)."""
        return "delete" in self.cleanup_policy

    @cached_property
    def compact(self) -> bool:
        """True when ``cleanup.policy`` includes ``compact`` (the log cleaner applies, and
        appends of records without a key are refused)."""
        return "compact" in self.cleanup_policy

    @cached_property
    def max_segment_ms(self) -> int:
        """Kafka's ``LogConfig.maxSegmentMs``: a compacted log rolls after
        ``min(max.compaction.lag.ms, segment.ms)`` so that its records become cleanable."""
        if self.compact and self.max_compaction_lag_ms > 0:
            return min(self.max_compaction_lag_ms, self.segment_ms)
        return self.segment_ms

    def target_compression(self, producer_codec: int) -> tuple[int, int | None]:
        """The codec id and level a batch sent with ``producer_codec`` is stored in (Kafka's
        ``BrokerCompressionType.targetCompression``): the producer's codec at its default
        level under ``compression.type=producer``, else the topic's codec and level.

        >>> LogConfig(compression_type="zstd", compression_zstd_level=9).target_compression(3)
        (4, 9)
        >>> LogConfig().target_compression(3)
        (3, None)
        """
        if self.compression_type == "producer":
            return producer_codec, None
        codec = _CODEC_IDS[self.compression_type]
        level = {1: self.compression_gzip_level, 3: self.compression_lz4_level,
                 4: self.compression_zstd_level}.get(codec)
        return codec, level

    @cached_property
    def log_append_time(self) -> bool:
        """True when the broker stamps batches with its clock (``LogAppendTime``)."""
        return self.message_timestamp_type == "LogAppendTime"

    def replace(self, **changes: Any) -> LogConfig:
        """A copy with some fields changed (validated again).

        >>> LogConfig().replace(segment_bytes=1024).segment_bytes
        1024
        """
        return dataclasses.replace(self, **changes)

    # -- from Kafka property names --------------------------------------------------------

    @classmethod
    def from_properties(cls, props: Mapping[str, Any], *, strict: bool = False,
                        applied: set[str] | None = None) -> LogConfig:
        """Build a config from Kafka's dotted names (topic or broker ``log.`` names).

        Values may be strings as in a ``.properties`` file. Topic names win over broker names
        (a topic override beats the broker default); among broker time settings ``.ms`` wins over
        ``.minutes`` over ``.hours`` as in ``KafkaConfig``. Unknown keys are ignored (a
        ``server.properties`` holds many unrelated settings) unless ``strict`` is true;
        ``applied``, when given, receives the keys that were applied.

        Raises
        ------
        ConfigError
            naming the key, the value and the allowed range.

        Examples
        --------
        >>> LogConfig.from_properties({"log.roll.hours": "1", "segment.jitter.ms": 5}).segment_ms
        3600000
        >>> LogConfig.from_properties({"segment.bytes": "ten"})
        Traceback (most recent call last):
        ...
        kafkalog.errors.ConfigError: segment.bytes: expected an integer, found 'ten'
        """
        values: dict[str, Any] = {}
        used: set[str] = set()

        def take(field: str, keys: tuple[tuple[str, int], ...], kind: str = "int") -> None:
            # keys in decreasing precedence: (name, multiplier)
            for key, mult in keys:
                if key in props and props[key] is not None and props[key] != "":
                    used.add(key)
                    raw = props[key]
                    if kind == "bool":
                        values[field] = _parse_bool(key, raw)
                    elif kind == "str":
                        values[field] = str(raw).strip()
                    elif kind == "list":
                        values[field] = _parse_list(raw)
                    elif kind == "double":
                        values[field] = _parse_double(key, raw)
                    else:
                        n = _parse_int(key, raw)
                        lo, hi = _RULES[field][1], _RULES[field][2]
                        if mult != 1 and n < 0 and field == "retention_ms":
                            n = -1  # log.retention.hours=-1 means infinite, as in Kafka
                        else:
                            n *= mult
                        if not lo <= n <= hi:
                            bound = _range_text(lo, hi)
                            raise ConfigError(
                                f"{key}: value {raw!r} out of range (expected {bound}, found {n})"
                            )
                        values[field] = n
                    break
            # names of lower precedence that were also given count as used
            for key, _ in keys:
                if key in props:
                    used.add(key)

        take("segment_bytes", (("segment.bytes", 1), ("internal.segment.bytes", 1),
                               ("log.segment.bytes", 1)))
        take("segment_ms", (("segment.ms", 1), ("log.roll.ms", 1), ("log.roll.hours", _HOUR_MS)))
        take("segment_jitter_ms", (("segment.jitter.ms", 1), ("log.roll.jitter.ms", 1),
                                   ("log.roll.jitter.hours", _HOUR_MS)))
        take("segment_index_bytes", (("segment.index.bytes", 1),
                                     ("log.index.size.max.bytes", 1)))
        take("index_interval_bytes", (("index.interval.bytes", 1),
                                      ("log.index.interval.bytes", 1)))
        take("flush_messages", (("flush.messages", 1), ("log.flush.interval.messages", 1)))
        take("flush_ms", (("flush.ms", 1), ("log.flush.interval.ms", 1),
                          ("log.flush.scheduler.interval.ms", 1)))
        take("retention_ms", (("retention.ms", 1), ("log.retention.ms", 1),
                              ("log.retention.minutes", _MINUTE_MS),
                              ("log.retention.hours", _HOUR_MS)))
        take("retention_bytes", (("retention.bytes", 1), ("log.retention.bytes", 1)))
        take("max_message_bytes", (("max.message.bytes", 1), ("message.max.bytes", 1)))
        take("file_delete_delay_ms", (("file.delete.delay.ms", 1),
                                      ("log.segment.delete.delay.ms", 1)))
        take("preallocate", (("preallocate", 1), ("log.preallocate", 1)), "bool")
        take("message_timestamp_type", (("message.timestamp.type", 1),
                                        ("log.message.timestamp.type", 1)), "str")
        take("cleanup_policy", (("cleanup.policy", 1), ("log.cleanup.policy", 1)), "list")
        # ServerTopicConfigSynonyms: the log cleaner's broker names
        take("min_cleanable_dirty_ratio", (("min.cleanable.dirty.ratio", 1),
                                           ("log.cleaner.min.cleanable.ratio", 1)), "double")
        take("min_compaction_lag_ms", (("min.compaction.lag.ms", 1),
                                       ("log.cleaner.min.compaction.lag.ms", 1)))
        take("max_compaction_lag_ms", (("max.compaction.lag.ms", 1),
                                       ("log.cleaner.max.compaction.lag.ms", 1)))
        take("delete_retention_ms", (("delete.retention.ms", 1),
                                     ("log.cleaner.delete.retention.ms", 1)))
        # ServerTopicConfigSynonyms: the broker's names are the topic's
        take("message_timestamp_before_max_ms", (("message.timestamp.before.max.ms", 1),
                                                 ("log.message.timestamp.before.max.ms", 1)))
        take("message_timestamp_after_max_ms", (("message.timestamp.after.max.ms", 1),
                                                ("log.message.timestamp.after.max.ms", 1)))
        take("min_insync_replicas", (("min.insync.replicas", 1),))
        take("unclean_leader_election_enable", (("unclean.leader.election.enable", 1),), "bool")
        take("compression_type", (("compression.type", 1),), "str")
        take("compression_gzip_level", (("compression.gzip.level", 1),))
        take("compression_lz4_level", (("compression.lz4.level", 1),))
        take("compression_zstd_level", (("compression.zstd.level", 1),))
        if strict:
            unknown = sorted(set(props) - used)
            if unknown:
                raise ConfigError(f"unknown log config name(s): {', '.join(unknown)}")
        if applied is not None:
            applied |= used
        return cls(**values)


def _range_text(lo: int, hi: int) -> str:
    # longs are unbounded above in practice; ints (Java int fields) state both ends
    return f">= {lo}" if hi == LONG_MAX else f"in [{lo}, {hi}]"


def _topic_key(field: str) -> str:
    return field.replace("_", ".")


def _parse_int(key: str, raw: Any) -> int:
    if isinstance(raw, bool):
        raise ConfigError(f"{key}: expected an integer, found {raw!r}")
    if isinstance(raw, int):
        return raw
    try:
        return int(str(raw).strip())
    except ValueError:
        raise ConfigError(f"{key}: expected an integer, found {raw!r}") from None


def _parse_double(key: str, raw: Any) -> float:
    if isinstance(raw, bool):
        raise ConfigError(f"{key}: expected a number, found {raw!r}")
    if isinstance(raw, (int, float)):
        return float(raw)
    try:
        return float(str(raw).strip())
    except ValueError:
        raise ConfigError(f"{key}: expected a number, found {raw!r}") from None


def _parse_bool(key: str, raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in ("true", "false"):
        return text == "true"
    raise ConfigError(f"{key}: expected true or false, found {raw!r}")


def _parse_list(raw: Any) -> tuple[str, ...]:
    if isinstance(raw, (list, tuple)):
        return tuple(str(p).strip() for p in raw)
    return tuple(p.strip() for p in str(raw).split(",") if p.strip())
