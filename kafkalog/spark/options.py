"""Parse and validate the data source options (pure Python: no Spark needed).

Spark hands options over as a case-insensitive dict of strings. Names and meanings mirror
Spark's Kafka source (``KafkaSourceProvider``) so a DataFrame read with ``format("kafkalog")``
can replace one read with ``format("kafka")``; file-specific options are marked below.

=====================================  ============================================================
option                                  meaning
=====================================  ============================================================
``path`` / ``paths``                    a partition directory, a ``log.dirs`` root, or a list
                                        (``.load([a, b])`` arrives as ``paths``, a JSON list)
``topics`` / ``subscribe``              comma-separated topic names
``topicPattern`` / ``subscribePattern`` a regular expression (Python ``re``) matched against the
                                        whole topic name
``assign``                              JSON ``{"topicA":[0,1],"topicB":[2]}``
``includeInternal``                     also read ``__consumer_offsets``, ``__transaction_state``,
                                        ``__cluster_metadata``, ``__share_group_state`` (default
                                        false; an explicit topic name or ``assign`` also selects it)
``includeHeaders``                      add the ``headers`` column (default false)
``startingOffsets``                     ``earliest`` (batch default), ``latest`` (stream default)
                                        or JSON ``{"t":{"0":23,"1":-2}}`` (-2 earliest, -1 latest);
                                        partitions the JSON leaves out start at the default
                                        (Spark's Kafka source refuses JSON that does not name
                                        every assigned partition; a directory's partitions are
                                        what is on disk, so naming the ones to move is enough)
``endingOffsets``                       batch only: ``latest`` (default) or JSON (-1 latest;
                                        partitions left out end at the latest)
``startingTimestamp``                   ms; precedence over ``startingOffsetsByTimestamp`` over
                                        ``startingOffsets``
``startingOffsetsByTimestamp``          JSON ``{"t":{"0":1700000000000}}``
``startingOffsetsByTimestampStrategy``  ``error`` (default) or ``latest`` when no record matches
``startingOffsetsFromGroup``            file-specific: start at a consumer group's committed
                                        offsets, read from ``__consumer_offsets`` under the paths
                                        (partitions without one: earliest, or latest for streams)
``endingTimestamp``                     batch only, ms, over ``endingOffsetsByTimestamp``
``endingOffsetsByTimestamp``            batch only, JSON
``failOnDataLoss``                      default true: corrupt batches or deleted segments fail the
                                        query naming file and position; false skips and counts
``minPartitions``                       split large segments so there are about this many tasks
``maxBytesPerPartition``                file-specific: bytes of ``.log`` per task (default 128 MiB)
``maxRecordsPerPartition``              cap on offsets per task (estimated from ``.index``)
``isolationLevel``                      ``read_uncommitted`` (default) or ``read_committed``
                                        (alias ``kafka.isolation.level``): aborted records
                                        skipped (``.txnindex``), "latest" = last stable offset
``maxOffsetsPerTrigger``                stream only: offsets per micro-batch, split proportionally
``maxRecordsPerBatch``                  file-specific: rows per Arrow batch (default 100000)
``pushFilters``                         file-specific: ``auto`` (default), ``true``, ``false``
``kafka.check.crcs``                    the consumer setting: false skips batch CRC checks
                                        (default true, as Kafka's consumer)
``metricsDir``                          file-specific: each task appends one JSON line of read
                                        statistics (batches decoded, bytes read...) to a file here
=====================================  ============================================================

Every invalid value raises :class:`kafkalog.errors.ConfigError` naming the option.

>>> o = ReadOptions.parse({"path": "/data", "subscribe": "a,b", "startingOffsets": "earliest"})
>>> o.topics, o.starting.kind
(('a', 'b'), 'earliest')
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kafkalog.errors import ConfigError

__all__ = [
    "INTERNAL_TOPICS",
    "EARLIEST",
    "LATEST",
    "OffsetSpec",
    "ReadOptions",
    "WriteOptions",
    "parse_bool",
]

#: Kafka's internal topics: skipped unless ``includeInternal=true`` or named explicitly.
INTERNAL_TOPICS = frozenset(
    {"__consumer_offsets", "__transaction_state", "__cluster_metadata", "__share_group_state"}
)

#: Sentinels of Kafka's offsets JSON (``KafkaOffsetRangeLimit``).
EARLIEST = -2
LATEST = -1

DEFAULT_MAX_BYTES_PER_PARTITION = 128 * 1024 * 1024
DEFAULT_MAX_RECORDS_PER_BATCH = 100_000


def _get(options: Mapping[str, str], name: str) -> str | None:
    """Case-insensitive lookup (Spark's dict already is one; plain dicts in tests may not be)."""
    if name in options:
        return options[name]
    low = name.lower()
    for k, v in options.items():
        if k.lower() == low:
            return v
    return None


def parse_bool(name: str, value: str | None, default: bool) -> bool:
    """``true``/``false`` (any case) -> bool; anything else is a ConfigError."""
    if value is None:
        return default
    v = str(value).strip().lower()
    if v in ("true", "1", "yes"):
        return True
    if v in ("false", "0", "no"):
        return False
    raise ConfigError(f"option {name}: expected true or false, found {value!r}")


def _parse_int(name: str, value: str | None, default: int | None, *, minimum: int | None = None
               ) -> int | None:
    if value is None:
        return default
    try:
        out = int(str(value).strip())
    except ValueError:
        raise ConfigError(f"option {name}: expected an integer, found {value!r}") from None
    if minimum is not None and out < minimum:
        raise ConfigError(f"option {name}: expected an integer >= {minimum}, found {out}")
    return out


def _parse_json_object(name: str, value: str) -> dict[str, Any]:
    try:
        obj = json.loads(value)
    except json.JSONDecodeError as e:
        raise ConfigError(f"option {name}: expected JSON, found {value!r} ({e.msg})") from None
    if not isinstance(obj, dict):
        raise ConfigError(f"option {name}: expected a JSON object, found {value!r}")
    return obj


def _parse_partition_map(name: str, value: str) -> dict[tuple[str, int], int]:
    """``{"topic": {"0": n, ...}}`` -> ``{(topic, partition): n}`` (Kafka's JsonUtils)."""
    out: dict[tuple[str, int], int] = {}
    for topic, parts in _parse_json_object(name, value).items():
        if not isinstance(parts, dict):
            raise ConfigError(
                f"option {name}: expected {{\"partition\": number}} for topic {topic!r}, "
                f"found {parts!r}"
            )
        for p, n in parts.items():
            try:
                pi = int(p)
            except (TypeError, ValueError):
                raise ConfigError(
                    f"option {name}: expected a partition number for topic {topic!r}, found {p!r}"
                ) from None
            if isinstance(n, bool) or not isinstance(n, int):
                raise ConfigError(
                    f"option {name}: expected an integer for {topic}-{pi}, found {n!r}"
                )
            out[(topic, pi)] = n
    return out


@dataclass(frozen=True)
class OffsetSpec:
    """Where reading starts or ends, before it is resolved against the files.

    ``kind`` is one of ``earliest``, ``latest``, ``offsets`` (``per_partition`` holds offsets with
    -2/-1 sentinels), ``timestamp`` (``timestamp`` for all partitions), ``timestamps``
    (``per_partition`` holds timestamps) or ``group`` (a consumer group's committed offsets,
    resolved before use). Partitions absent from ``per_partition`` fall back to
    ``default`` (``earliest`` for a start, ``latest`` for an end).
    """

    kind: str
    per_partition: dict[tuple[str, int], int] = field(default_factory=dict)
    timestamp: int | None = None
    default: int = EARLIEST
    #: ``group``: the consumer group whose committed offsets start the read (resolved against
    #: the files by ``planning.resolve_group_start`` into an ``offsets`` spec)
    group: str | None = None

    def for_partition(self, topic: str, partition: int) -> tuple[str, int]:
        """``("offset", n)`` (n may be EARLIEST/LATEST) or ``("timestamp", ms)``."""
        if self.kind == "earliest":
            return "offset", EARLIEST
        if self.kind == "latest":
            return "offset", LATEST
        if self.kind == "timestamp":
            assert self.timestamp is not None
            return "timestamp", self.timestamp
        v = self.per_partition.get((topic, partition))
        if v is None:
            return "offset", self.default
        return ("timestamp", v) if self.kind == "timestamps" else ("offset", v)

    def to_json(self) -> str:
        """Kafka's JSON shape for ``offsets``/``timestamps`` specs (used in messages and tests)."""
        nested: dict[str, dict[str, int]] = {}
        for (t, p), v in sorted(self.per_partition.items()):
            nested.setdefault(t, {})[str(p)] = v
        return json.dumps(nested)


def _starting_spec(options: Mapping[str, str], *, streaming: bool) -> OffsetSpec:
    group = _get(options, "startingOffsetsFromGroup")
    if group not in (None, ""):
        others = [n for n in ("startingOffsets", "startingTimestamp",
                              "startingOffsetsByTimestamp") if _get(options, n) not in (None, "")]
        if others:
            raise ConfigError(f"option startingOffsetsFromGroup: give it alone, not with "
                              f"{', '.join(others)}")
        return OffsetSpec("group", default=LATEST if streaming else EARLIEST, group=group)
    ts = _get(options, "startingTimestamp")
    if ts is not None:
        return OffsetSpec("timestamp", timestamp=_parse_int("startingTimestamp", ts, None))
    by_ts = _get(options, "startingOffsetsByTimestamp")
    if by_ts is not None:
        return OffsetSpec(
            "timestamps", _parse_partition_map("startingOffsetsByTimestamp", by_ts)
        )
    raw = _get(options, "startingOffsets")
    default_kind = "latest" if streaming else "earliest"
    if raw is None or not raw.strip():
        return OffsetSpec(default_kind)
    low = raw.strip().lower()
    if low in ("earliest", "latest"):
        if low == "latest" and not streaming:
            raise ConfigError(
                "option startingOffsets: 'latest' is not allowed for batch queries "
                "(as in Spark's Kafka source); use 'earliest' or JSON offsets"
            )
        return OffsetSpec(low)
    per = _parse_partition_map("startingOffsets", raw)
    for (t, p), n in per.items():
        if n < EARLIEST:
            raise ConfigError(
                f"option startingOffsets: offset for {t}-{p} must be >= -2, found {n}"
            )
        if n == LATEST and not streaming:
            raise ConfigError(
                f"option startingOffsets: latest (-1) for {t}-{p} is not allowed for batch queries"
            )
    return OffsetSpec("offsets", per, default=EARLIEST)


def _ending_spec(options: Mapping[str, str]) -> OffsetSpec:
    ts = _get(options, "endingTimestamp")
    if ts is not None:
        return OffsetSpec("timestamp", timestamp=_parse_int("endingTimestamp", ts, None),
                          default=LATEST)
    by_ts = _get(options, "endingOffsetsByTimestamp")
    if by_ts is not None:
        return OffsetSpec(
            "timestamps", _parse_partition_map("endingOffsetsByTimestamp", by_ts), default=LATEST
        )
    raw = _get(options, "endingOffsets")
    if raw is None or not raw.strip() or raw.strip().lower() == "latest":
        return OffsetSpec("latest", default=LATEST)
    if raw.strip().lower() == "earliest":
        raise ConfigError("option endingOffsets: 'earliest' is not allowed (as in Spark's Kafka "
                          "source); use 'latest' or JSON offsets")
    per = _parse_partition_map("endingOffsets", raw)
    for (t, p), n in per.items():
        if n == EARLIEST:
            raise ConfigError(
                f"option endingOffsets: earliest (-2) for {t}-{p} is not allowed as an "
                "ending offset"
            )
        if n < LATEST:
            raise ConfigError(f"option endingOffsets: offset for {t}-{p} must be >= -1, found {n}")
    return OffsetSpec("offsets", per, default=LATEST)


def _parse_paths(options: Mapping[str, str]) -> tuple[str, ...]:
    paths: list[str] = []
    raw_many = _get(options, "paths")
    if raw_many:
        try:
            many = json.loads(raw_many)
        except json.JSONDecodeError:
            many = [raw_many]
        if isinstance(many, str):
            many = [many]
        if not isinstance(many, list) or not all(isinstance(p, str) for p in many):
            raise ConfigError(f"option paths: expected a JSON list of strings, found {raw_many!r}")
        paths.extend(many)
    one = _get(options, "path")
    if one:
        paths.insert(0, one)
    if not paths:
        raise ConfigError(
            "no path given: use spark.read.format('kafkalog').load(<log dir or partition dir>)"
        )
    return tuple(dict.fromkeys(paths))  # order-preserving de-duplication


@dataclass(frozen=True)
class ReadOptions:
    """Validated read options (batch and stream). Build with :meth:`parse`."""

    paths: tuple[str, ...]
    topics: tuple[str, ...] | None = None
    topic_pattern: str | None = None
    assign: dict[str, tuple[int, ...]] | None = None
    include_internal: bool = False
    include_headers: bool = False
    starting: OffsetSpec = field(default_factory=lambda: OffsetSpec("earliest"))
    ending: OffsetSpec = field(default_factory=lambda: OffsetSpec("latest", default=LATEST))
    starting_ts_strategy: str = "error"
    fail_on_data_loss: bool = True
    min_partitions: int | None = None
    max_bytes_per_partition: int = DEFAULT_MAX_BYTES_PER_PARTITION
    max_records_per_partition: int | None = None
    read_committed: bool = False
    max_offsets_per_trigger: int | None = None
    max_records_per_batch: int = DEFAULT_MAX_RECORDS_PER_BATCH
    push_filters: str = "auto"
    metrics_dir: str | None = None
    check_crcs: bool = True

    @classmethod
    def parse(cls, options: Mapping[str, str], *, streaming: bool = False) -> ReadOptions:
        """Validate ``options``; raise ConfigError naming the first bad option."""
        selectors = [
            n for n in ("topics", "subscribe", "topicPattern", "subscribePattern", "assign")
            if _get(options, n) not in (None, "")
        ]
        if len(selectors) > 1:
            raise ConfigError(
                f"options {', '.join(selectors)}: give at most one of topics/subscribe, "
                "topicPattern/subscribePattern and assign"
            )
        topics = None
        for n in ("topics", "subscribe"):
            raw = _get(options, n)
            if raw not in (None, ""):
                topics = tuple(t.strip() for t in raw.split(",") if t.strip())
                if not topics:
                    raise ConfigError(f"option {n}: expected topic names, found {raw!r}")
        pattern = None
        for n in ("topicPattern", "subscribePattern"):
            raw = _get(options, n)
            if raw not in (None, ""):
                try:
                    re.compile(raw)
                except re.error as e:
                    raise ConfigError(
                        f"option {n}: invalid regular expression {raw!r}: {e}") from None
                pattern = raw
        assign = None
        raw = _get(options, "assign")
        if raw not in (None, ""):
            obj = _parse_json_object("assign", raw)
            assign = {}
            for t, parts in obj.items():
                if not isinstance(parts, list) or not all(
                    isinstance(p, int) and not isinstance(p, bool) for p in parts
                ):
                    raise ConfigError(
                        f"option assign: expected a list of partition numbers for {t!r}, "
                        f"found {parts!r}"
                    )
                assign[t] = tuple(parts)
        if streaming:
            for n in ("endingOffsets", "endingTimestamp", "endingOffsetsByTimestamp"):
                if _get(options, n) is not None:
                    raise ConfigError(f"option {n} is for batch queries only")
        strategy = (_get(options, "startingOffsetsByTimestampStrategy") or "error").strip().lower()
        if strategy not in ("error", "latest"):
            raise ConfigError(
                "option startingOffsetsByTimestampStrategy: expected 'error' or 'latest', "
                f"found {strategy!r}"
            )
        iso = _get(options, "isolationLevel") or _get(options, "kafka.isolation.level")
        iso = (iso or "read_uncommitted").strip().lower()
        if iso not in ("read_uncommitted", "read_committed"):
            raise ConfigError(
                f"option isolationLevel: expected read_uncommitted or read_committed, found {iso!r}"
            )
        push = (_get(options, "pushFilters") or "auto").strip().lower()
        if push not in ("auto", "true", "false"):
            raise ConfigError(f"option pushFilters: expected auto, true or false, found {push!r}")
        return cls(
            paths=_parse_paths(options),
            topics=topics,
            topic_pattern=pattern,
            assign=assign,
            include_internal=parse_bool(
                "includeInternal", _get(options, "includeInternal"), False
            ),
            include_headers=parse_bool("includeHeaders", _get(options, "includeHeaders"), False),
            starting=_starting_spec(options, streaming=streaming),
            ending=OffsetSpec("latest", default=LATEST) if streaming else _ending_spec(options),
            starting_ts_strategy=strategy,
            fail_on_data_loss=parse_bool(
                "failOnDataLoss", _get(options, "failOnDataLoss"), True
            ),
            min_partitions=_parse_int(
                "minPartitions", _get(options, "minPartitions"), None, minimum=1
            ),
            max_bytes_per_partition=_parse_int(
                "maxBytesPerPartition", _get(options, "maxBytesPerPartition"),
                DEFAULT_MAX_BYTES_PER_PARTITION, minimum=1,
            ),
            max_records_per_partition=_parse_int(
                "maxRecordsPerPartition", _get(options, "maxRecordsPerPartition"), None, minimum=1
            ),
            read_committed=iso == "read_committed",
            max_offsets_per_trigger=_parse_int(
                "maxOffsetsPerTrigger", _get(options, "maxOffsetsPerTrigger"), None, minimum=1
            ),
            max_records_per_batch=_parse_int(
                "maxRecordsPerBatch", _get(options, "maxRecordsPerBatch"),
                DEFAULT_MAX_RECORDS_PER_BATCH, minimum=1,
            ),
            push_filters=push,
            metrics_dir=_get(options, "metricsDir") or None,
            check_crcs=parse_bool("kafka.check.crcs", _get(options, "kafka.check.crcs"), True),
        )

    def selects(self, topic: str, partition: int) -> bool:
        """Whether topic-partition passes topics/topicPattern/assign/includeInternal."""
        if self.assign is not None:
            return partition in self.assign.get(topic, ())
        if self.topics is not None:
            return topic in self.topics
        if topic in INTERNAL_TOPICS and not self.include_internal:
            return False
        if self.topic_pattern is not None:
            return re.fullmatch(self.topic_pattern, topic) is not None
        return True


@dataclass(frozen=True)
class WriteOptions:
    """Validated write options: ``compression`` plus Kafka topic configs (``segment.bytes``...).

    ``topic`` (optional) overrides the ``topic`` column, like Spark's Kafka sink.
    """

    path: str
    compression: str = "none"
    topic: str | None = None
    log_config: dict[str, str] = field(default_factory=dict)
    records_per_batch: int = 1000

    #: option names that are not topic configs
    _OWN = ("path", "paths", "compression", "compression.type", "topic", "recordsPerBatch")

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> WriteOptions:
        path = _get(options, "path")
        if not path:
            raise ConfigError("no path given: use df.write.format('kafkalog').mode('append')"
                              ".save(<log dir>)")
        compression = (
            _get(options, "compression") or _get(options, "compression.type") or "none"
        ).strip().lower()
        if compression not in ("none", "gzip", "snappy", "lz4", "zstd"):
            raise ConfigError(
                "option compression: expected none, gzip, snappy, lz4 or zstd, "
                f"found {compression!r}"
            )
        own = {n.lower() for n in cls._OWN}
        log_config = {
            k.lower(): str(v) for k, v in options.items()
            if k.lower() not in own and "." in k
        }
        return cls(
            path=path,
            compression=compression,
            # given but empty is a topic name Kafka rejects (the writer says so), not "unset"
            topic=_get(options, "topic"),
            log_config=log_config,
            records_per_batch=_parse_int(
                "recordsPerBatch", _get(options, "recordsPerBatch"), 1000, minimum=1
            ) or 1000,
        )
