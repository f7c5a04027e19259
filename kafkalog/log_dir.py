"""``LogDir``: a Kafka log directory (one entry of ``log.dirs``) holding many partitions.

What a broker's ``LogManager`` does with one log dir (core/src/main/scala/kafka/log/LogManager.scala
``loadLogs``/``shutdown``/``checkpoint*``), without the network:

* **Layout** (spec §4.2): one directory ``<topic>-<partition>`` per partition; renamed forms
  (``…-delete``, ``…-future``, ``…-stray``), files and names that are not partitions are skipped.
  Root files in Kafka's formats: ``meta.properties`` (created when absent: version 1,
  ``cluster.id``, ``node.id``, ``directory.id``; an existing one is never rewritten),
  ``recovery-point-offset-checkpoint``, ``log-start-offset-checkpoint`` (only partitions whose log
  start offset is above their first segment's base offset, as Kafka writes it),
  ``replication-offset-checkpoint`` (high watermarks), ``cleaner-offset-checkpoint`` (the log
  cleaner's first dirty offsets, :mod:`kafkalog.cleaner`), ``.kafka_cleanshutdown`` (3.7+ JSON
  ``{"version":0,"brokerEpoch":N}``) and ``.lock``. Per partition: ``partition.metadata`` (the
  topic's Kafka ``Uuid``, one id for all partitions of a topic) and ``leader-epoch-checkpoint``,
  besides what :class:`~kafkalog.log.Log` writes (segments, indexes, ``.snapshot`` files).
  Every checkpoint is written atomically (tmp file, fsync, rename, fsync of the directory).
* **Open** (``loadLogs``): the clean-shutdown marker is read and deleted first (a crash while
  loading is then unclean); the recovery-point and log-start-offset checkpoints are read (a
  corrupt one is ignored with a warning, as Kafka does: everything is recovered); every
  partition is opened with those hints: after a clean shutdown nothing is recovered, otherwise
  each log recovers only from the segment holding its checkpointed recovery point (segments
  below it were flushed before the checkpoint was written and are trusted).
* **Close** (``shutdown``): logs closed (flushed), checkpoints written, then the marker.
* **Topic configs.** Kafka keeps topic configs in the cluster metadata, not in the log dir. We
  keep the per-topic overrides (Kafka topic config names, string values) and topic ids of the
  topics created here in ``.kafkalog-topics.json`` at the root, which a broker ignores (it only
  loads directories)::

      {"version": 1, "topics": {"orders": {"topic_id": "…22 chars…", "partitions": 3,
                                           "config": {"segment.bytes": "1048576"}}}}

  A topic written by a broker that is given overrides here (:meth:`LogDir.update_topic_config`)
  gets an entry with its ``partition.metadata`` id (or null) and ``"partitions": null``.

  ``__cluster_metadata`` (KRaft's log, managed by the raft layer, not by ``LogManager``) is
  listed and readable but left out of the root checkpoints, as a broker does.

* **Compaction.** :attr:`LogDir.cleaner` is the dir's
  :class:`~kafkalog.cleaner.log_cleaner.LogCleaner` (``log.cleaner.*`` settings from the
  properties given at open; None with ``log.cleaner.enable=false`` or read-only): it cleans the
  ``cleanup.policy=compact`` logs dirtiest first and applies their retention, as a broker's
  cleaner threads do; :meth:`LogDir.enforce_retention` (``cleanupLogs``) covers the others.

Threads: every method may be called from any thread (one lock guards the partition map and the
checkpoint writes); each ``Log`` serializes its own mutations. The optional maintenance thread
(:meth:`LogDir.start_maintenance`) runs retention, flushes, checkpoints and the log cleaner on
Kafka's intervals.

Example
-------
>>> import tempfile
>>> from kafkalog import Record
>>> with LogDir.open(tempfile.mkdtemp()) as d:
...     _ = d.create_topic("orders", 2)
...     _ = d.log("orders", 1).append([Record(b"k", b"v", 1700000000000)])
...     d.partitions(), d.log("orders", 1).log_end_offset
([('orders', 0), ('orders', 1)], 1)
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from . import files
from .checkpoint import (
    JsonStateFile,
    LeaderEpochCheckpointFile,
    MetaProperties,
    OffsetCheckpointFile,
    PartitionMetadataFile,
    Uuid,
    atomic_write,
)
from .clock import Clock, SystemClock
from .config import LogConfig
from .errors import ConfigError, CorruptCheckpointError, InvalidTopicError, KafkaLogError
from .lock import DirectoryLock
from .log import Log

__all__ = ["LogDir", "TopicExistsError", "UnknownTopicOrPartitionError", "InvalidPartitionsError",
           "colliding_topics", "TOPICS_FILE",
           "METADATA_TOPIC", "validate_topic_name"]

logger = logging.getLogger(__name__)

#: our per-topic config/id file at the log-dir root (ignored by a broker)
TOPICS_FILE = ".kafkalog-topics.json"
TOPICS_FILE_VERSION = 1
#: KafkaRaftServer.MetadataTopic: managed by the raft layer, not by LogManager
METADATA_TOPIC = "__cluster_metadata"
#: Kafka's ``Topic.MAX_NAME_LENGTH`` (the rule lives in :mod:`kafkalog.files`)
MAX_TOPIC_NAME_LENGTH = files.MAX_TOPIC_NAME_LENGTH
#: Kafka's ``Topic.validate``; re-exported: every name that becomes a path goes through
#: :func:`kafkalog.files.partition_dir`
validate_topic_name = files.validate_topic_name
#: ``offsets.topic.num.partitions`` default (Kafka's GroupCoordinatorConfig)
DEFAULT_OFFSETS_TOPIC_PARTITIONS = 50


class TopicExistsError(KafkaLogError, ValueError):
    """``create_topic`` of a topic that already has partitions here."""


def colliding_topics(topic: str, existing: Iterable[str]) -> list[str]:
    """``Topic.hasCollisionChars`` / ``unifyCollisionChars``: the topics of ``existing`` whose
    names equal ``topic`` once every ``.`` is ``_`` (sorted; empty when ``topic`` has
    neither character, as Kafka only looks then).

    >>> colliding_topics("a.b_c", ["a_b.c", "a_b", "x"])
    ['a_b.c']
    """
    if "." not in topic and "_" not in topic:
        return []
    unified = topic.replace(".", "_")
    return sorted(t for t in existing if t.replace(".", "_") == unified)


class UnknownTopicOrPartitionError(KafkaLogError, LookupError):
    """A partition this log dir does not hold."""


class InvalidPartitionsError(KafkaLogError, ValueError):
    """``create_partitions`` that would not add partitions (Kafka's
    ``InvalidPartitionsException``), or of a topic whose partition count is unknown here."""


def _format_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (tuple, list)):
        return ",".join(str(v) for v in value)
    return str(value)


def config_to_properties(config: LogConfig) -> dict[str, str]:
    """A ``LogConfig`` as Kafka topic config names and string values.

    >>> config_to_properties(LogConfig(segment_bytes=4096))["segment.bytes"]
    '4096'
    """
    return {f.name.replace("_", "."): _format_value(getattr(config, f.name))
            for f in dataclasses.fields(config)}


def _as_properties(config: LogConfig | Mapping[str, Any] | None) -> dict[str, str]:
    if config is None:
        return {}
    if isinstance(config, LogConfig):
        return config_to_properties(config)
    LogConfig.from_properties(config)  # validate now: a bad value fails the call, not a later open
    return {str(k): _format_value(v) for k, v in config.items()}


class LogDir:
    """An open log directory. Create with :meth:`LogDir.open`; close with :meth:`close`.

    See the module docstring for the files kept and the open/close sequence.
    """

    def __init__(self, root: Path, base_properties: dict[str, str], clock: Clock, *,
                 read_only: bool, broker_epoch: int) -> None:
        self.root = root
        self._base_properties = base_properties
        self._clock = clock
        self.read_only = read_only
        self.broker_epoch = broker_epoch
        self.clean_shutdown = False
        self.meta: MetaProperties | None = None
        self._logs: dict[tuple[str, int], Log] = {}
        self._topics: dict[str, dict[str, Any]] = {}
        self._high_watermarks: dict[tuple[str, int], int] = {}
        self._lock = threading.RLock()
        self._root_lock: DirectoryLock | None = None
        self._closed = False
        self._scheduler: Any = None
        self._cleaner: Any = None
        #: checkpoint entries of partitions found unreadable at open (kept for the operator)
        self.load_warnings: list[str] = []
        #: ``offsets.topic.num.partitions``: how many ``__consumer_offsets`` partitions groups
        #: hash over (Kafka's default 50)
        self.offsets_topic_num_partitions = DEFAULT_OFFSETS_TOPIC_PARTITIONS
        #: the group coordinator's broker settings given at open (``group.*``, ``offset.*``,
        #: ``offsets.*`` names, as strings), read by :mod:`kafkalog.groups`
        self.group_properties: dict[str, str] = {}

    # -- opening -------------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        root: str | os.PathLike[str],
        config: LogConfig | Mapping[str, Any] | None = None,
        *,
        clock: Clock | None = None,
        read_only: bool = False,
        node_id: int = 1,
        cluster_id: str | None = None,
        broker_epoch: int | None = None,
        cleaner_config: Any = None,
        partitions: Callable[[str, int], bool] | None = None,
    ) -> LogDir:
        """Open (or create) the log dir ``root`` and every partition in it.

        Parameters
        ----------
        root:
            The log directory (one entry of a broker's ``log.dirs``).
        config:
            Defaults for every topic: a ``LogConfig``, or Kafka property names (broker ``log.*``
            or topic names, as in ``server.properties``). Per-topic overrides come from
            :meth:`create_topic` (persisted in :data:`TOPICS_FILE`). The group coordinator's
            names (``offsets.topic.num.partitions``, ``offsets.retention.minutes``, ``group.*``)
            are kept in :attr:`group_properties` for :mod:`kafkalog.groups`.
        clock:
            Time source for every log (``ManualClock`` in tests).
        read_only:
            Write nothing (no marker deleted, no recovery, no checkpoint): for forensics on a
            directory a broker may still use. Reading needs no lock.
        node_id, cluster_id:
            Written into a new ``meta.properties`` (``cluster_id`` None: a random Kafka Uuid).
        broker_epoch:
            Written into ``.kafka_cleanshutdown`` on close (None: the one read from the marker at
            open, else -1).
        cleaner_config:
            The log cleaner's :class:`~kafkalog.cleaner.cleaner_config.CleanerConfig` (None: from
            the ``log.cleaner.*`` names of ``config`` when it is a mapping, else Kafka's
            defaults).
        partitions:
            Read-only opens only: load just the partitions ``partitions(topic, partition)``
            accepts (the others are not read at all: a tool that needs a few partitions of a
            broker with thousands). :meth:`partitions` then lists those.

        Raises
        ------
        LogLockedError
            Another writer holds the log dir.
        ValueError
            ``partitions`` with a writable open (the root checkpoints would lose the entries of
            the partitions not loaded).
        CorruptCheckpointError
            ``meta.properties`` or ``.kafkalog-topics.json`` does not parse.
        """
        root = Path(root)
        if partitions is not None and not read_only:
            raise ValueError("partitions= selects what a read-only open loads; a writable "
                             "LogDir must load every partition")
        if isinstance(config, LogConfig) or config is None:
            base = _as_properties(config)
        else:
            base = config_to_properties(LogConfig.from_properties(config))
        self = cls(root, base, clock if clock is not None else SystemClock(),
                   read_only=read_only, broker_epoch=-1)
        if config is not None and not isinstance(config, LogConfig):
            self._set_group_properties(config)
        if read_only:
            if not root.is_dir():
                raise FileNotFoundError(f"{root}: no such log directory")
        else:
            root.mkdir(parents=True, exist_ok=True)
            self._root_lock = DirectoryLock.acquire(root, files.LOCK_FILE)
        try:
            self._load(node_id, cluster_id, broker_epoch, partitions)
            if not read_only:
                self._start_cleaner(config, cleaner_config)
        except BaseException:
            self._release_all()
            raise
        return self

    def _start_cleaner(self, config: Any, cleaner_config: Any) -> None:
        from .cleaner.cleaner_config import CleanerConfig
        from .cleaner.log_cleaner import LogCleaner

        if cleaner_config is None:
            cleaner_config = (CleanerConfig.from_properties(config)
                              if isinstance(config, Mapping) else CleanerConfig())
        if cleaner_config.enable_cleaner:
            self._cleaner = LogCleaner(cleaner_config, [self.root], self._logs, self._clock)

    @property
    def cleaner(self) -> Any:
        """The dir's :class:`~kafkalog.cleaner.log_cleaner.LogCleaner` (None when disabled or
        read-only)."""
        return self._cleaner

    def _set_group_properties(self, config: Mapping[str, Any]) -> None:
        """Keep the group coordinator's settings; validate ``offsets.topic.num.partitions``
        (Kafka: an int >= 1)."""
        self.group_properties = {
            str(k): _format_value(v) for k, v in config.items()
            if str(k).startswith(("group.", "offset.", "offsets.")) and v is not None}
        raw = self.group_properties.get("offsets.topic.num.partitions", "").strip()
        if raw:
            try:
                n = int(raw)
            except ValueError:
                n = 0
            if n < 1 or n > (1 << 31) - 1:
                raise ConfigError(f"offsets.topic.num.partitions: expected an integer >= 1, "
                                  f"found {raw!r}")
            self.offsets_topic_num_partitions = n

    def _load(self, node_id: int, cluster_id: str | None, broker_epoch: int | None,
              wanted: Callable[[str, int], bool] | None = None) -> None:
        root = self.root
        self._load_meta(node_id, cluster_id)
        self._topics = self._read_topics_file()
        marker = root / files.CLEAN_SHUTDOWN_FILE
        self.clean_shutdown = marker.exists()
        epoch_found = _read_marker_epoch(marker) if self.clean_shutdown else None
        self.broker_epoch = broker_epoch if broker_epoch is not None else (
            epoch_found if epoch_found is not None else -1)
        if self.clean_shutdown and not self.read_only:
            # Kafka (KAFKA-10471): delete before loading, so a crash while loading is unclean
            marker.unlink()
            _fsync_dir(root)
        recovery_points = self._read_checkpoint(files.RECOVERY_POINT_CHECKPOINT_FILE)
        start_offsets = self._read_checkpoint(files.LOG_START_OFFSET_CHECKPOINT_FILE)
        high_watermarks = self._read_checkpoint(files.REPLICATION_OFFSET_CHECKPOINT_FILE)
        for tp, path in self._partition_dirs(wanted):
            self._open_log(tp, path, recovery_points.get(tp, 0), start_offsets.get(tp, 0))
        for tp, hw in high_watermarks.items():
            if tp in self._logs:
                self._high_watermarks[tp] = hw

    def _load_meta(self, node_id: int, cluster_id: str | None) -> None:
        path = self.root / files.META_PROPERTIES_FILE
        if path.exists():
            self.meta = MetaProperties.read(path)  # kept byte for byte: never rewritten
        elif not self.read_only:
            self.meta = MetaProperties(version=1, cluster_id=cluster_id or str(Uuid.random()),
                                       node_id=node_id, directory_id=Uuid.random())
            self.meta.write(path)

    def _read_checkpoint(self, name: str) -> dict[tuple[str, int], int]:
        path = self.root / name
        if not path.exists():
            return {}
        try:
            return OffsetCheckpointFile(path).read()
        except CorruptCheckpointError as e:
            # LogManager.loadLogs: "Error occurred while reading recovery-point-offset-checkpoint
            # file ..., resetting the recovery checkpoint to 0"
            msg = f"{e}: ignored (every partition treated as having no entry)"
            logger.warning("%s", msg)
            self.load_warnings.append(msg)
            return {}

    def _partition_dirs(self, wanted: Callable[[str, int], bool] | None = None
                        ) -> list[tuple[tuple[str, int], Path]]:
        out = []
        for p in self.root.iterdir():
            if not p.is_dir():
                continue
            if files.is_delete_dir(p) or files.is_future_dir(p) or files.is_stray_dir(p):
                continue  # Kafka deletes / loads as future / leaves stray logs: none is served
            try:
                tp = files.parse_topic_partition_name(p)
            except ValueError:
                logger.warning("%s: not a partition directory, skipped", p)
                continue
            if files.log_dir_name(*tp) != p.name:
                continue  # e.g. "t-01": Kafka would name it "t-1"
            if wanted is not None and not wanted(*tp):
                continue
            try:
                files.partition_dir(self.root, *tp)  # Kafka's name rule, inside the root
            except InvalidTopicError as e:
                logger.warning("%s: not loaded (%s)", p, e)
                self.load_warnings.append(f"{p}: not loaded ({e})")
                continue
            out.append((tp, p))
        return sorted(out)

    def _open_log(self, tp: tuple[str, int], path: Path, recovery_point: int,
                  log_start_offset: int) -> Log:
        log = Log.open(path, self.topic_config(tp[0]), clock=self._clock,
                       read_only=self.read_only, standalone=False,
                       clean_shutdown=self.clean_shutdown, recovery_point=recovery_point,
                       log_start_offset=log_start_offset)
        self._logs[tp] = log
        if not self.read_only:
            self._ensure_partition_files(tp, path)

            def truncated(active_base: int, tp: tuple[str, int] = tp) -> None:
                # LogManager.truncateTo: the cleaner checkpoint comes down to the active base
                cleaner = self._cleaner
                if cleaner is not None:
                    cleaner.maybe_truncate_checkpoint(self.root, tp, active_base)

            log.truncation_listener = truncated
        return log

    def _ensure_partition_files(self, tp: tuple[str, int], path: Path) -> None:
        """``leader-epoch-checkpoint`` (a broker creates it when it loads the log) and, for the
        topics created here, ``partition.metadata``. A partition written by a broker without a
        topic id keeps none: inventing one would contradict the cluster's metadata."""
        epochs = path / files.LEADER_EPOCH_CHECKPOINT_FILE
        if not epochs.exists():
            LeaderEpochCheckpointFile(epochs).write([])
        topic_id = self._topics.get(tp[0], {}).get("topic_id")
        meta = PartitionMetadataFile(path / files.PARTITION_METADATA_FILE)
        if topic_id is not None and not meta.exists():
            meta.write(Uuid.from_string(topic_id))

    # -- topics and partitions ---------------------------------------------------------------

    def partitions(self) -> list[tuple[str, int]]:
        """``(topic, partition)`` of every partition held, sorted."""
        with self._lock:
            return sorted(self._logs)

    def topics(self) -> list[str]:
        """Topics with at least one partition here, sorted."""
        return sorted({t for t, _ in self.partitions()})

    def log(self, topic: str, partition: int) -> Log:
        """The partition's open :class:`Log` (the same object on every call).

        Raises
        ------
        UnknownTopicOrPartitionError
            The partition is not held here (create it with :meth:`create_topic`).
        """
        with self._lock:
            self._check_open()
            log = self._logs.get((topic, int(partition)))
            if log is None:
                raise UnknownTopicOrPartitionError(
                    f"partition {files.log_dir_name(topic, partition)} is not in this log dir",
                    path=self.root)
            return log

    def create_topic(self, topic: str, partitions: int,
                     config: LogConfig | Mapping[str, Any] | None = None) -> Uuid:
        """Create ``partitions`` partition directories ``<topic>-0`` … with a new topic id.

        ``config`` holds the topic's overrides (Kafka topic config names, or a ``LogConfig``
        whose every field becomes an override); they are persisted in :data:`TOPICS_FILE` and
        apply on every later open. Returns the topic id written to each ``partition.metadata``.

        Raises
        ------
        TopicExistsError
            The topic already has partitions here.
        InvalidTopicError
            A name that differs from an existing topic's only in ``.`` and ``_`` (Kafka's
            collision rule: they are one character in metric names).
        ValueError
            An illegal topic name, ``partitions < 1``, or a bad config value.
        """
        validate_topic_name(topic)
        if isinstance(partitions, bool) or int(partitions) < 1:
            raise ValueError(f"partitions must be >= 1 (found {partitions})")
        overrides = _as_properties(config)
        _check_override_names(overrides)
        with self._lock:
            self._check_writable()
            existing = set(self.topics()) | set(self._topics)
            if topic in existing:
                raise TopicExistsError(f"topic {topic!r} already exists", path=self.root)
            colliding = colliding_topics(topic, existing)
            if colliding:
                # '.' and '_' are the same character in metric names: Kafka refuses a topic
                # whose name differs from an existing one only in them
                raise InvalidTopicError(f"Topic '{topic}' collides with existing topic: "
                                        f"{colliding[0]}", path=self.root)
            # every path first: validated, resolved, inside the root (a symlink out of it is
            # refused) before anything is written
            paths = [files.partition_dir(self.root, topic, p) for p in range(int(partitions))]
            topic_id = Uuid.random()
            self._topics[topic] = {"topic_id": str(topic_id), "partitions": int(partitions),
                                   "config": overrides}
            self._write_topics_file()
            for p, path in enumerate(paths):
                self._open_log((topic, p), path, 0, 0)
            _fsync_dir(self.root)
            return topic_id

    def load_partition(self, topic: str, partition: int) -> Log:
        """Load a partition directory made under the root after :meth:`open` (by a copy tool:
        ``kafkalog mirror`` makes its copies' directories as it finds new partitions on the
        source), as :meth:`open` loads a directory it finds: recovered as after an unclean
        shutdown (nothing is trusted), under its topic's config. Returns its :class:`Log`.

        >>> import tempfile
        >>> from pathlib import Path
        >>> root = Path(tempfile.mkdtemp())
        >>> with LogDir.open(root) as d:
        ...     (root / "late-0").mkdir()
        ...     d.load_partition("late", 0).log_end_offset, d.partitions()
        (0, [('late', 0)])

        Raises
        ------
        ValueError
            The partition is already loaded.
        UnknownTopicOrPartitionError
            No such directory under the root (or its name is not a partition's).
        """
        tp = (topic, int(partition))
        with self._lock:
            self._check_writable()
            if tp in self._logs:
                raise ValueError(f"partition {files.log_dir_name(*tp)} is already loaded")
            try:
                path = files.partition_dir(self.root, *tp)
            except InvalidTopicError as e:
                raise UnknownTopicOrPartitionError(str(e), path=self.root) from None
            if not path.is_dir():
                raise UnknownTopicOrPartitionError(
                    f"no partition directory {path.name} under the log dir", path=self.root)
            return self._open_log(tp, path, 0, 0)

    def delete_topic(self, topic: str) -> list[int]:
        """Delete every partition of ``topic`` (Kafka's ``LogManager.asyncDelete``): each log is
        closed, its directory renamed ``<topic>-<p>.<uuid>-delete`` (a crash from here on leaves
        a directory that :meth:`open` skips, as a broker does) and removed; the topic's entry
        leaves :data:`TOPICS_FILE` and the root checkpoints are rewritten. Returns the
        partitions deleted.

        Raises
        ------
        UnknownTopicOrPartitionError
            No partition of ``topic`` is held here.
        """
        import shutil

        with self._lock:
            self._check_writable()
            parts = sorted(p for t, p in self._logs if t == topic)
        if not parts:
            raise UnknownTopicOrPartitionError(
                f"topic {topic!r} is not in this log dir", path=self.root)
        cleaner = self._cleaner
        if cleaner is not None:
            # asyncDelete: a cleaning in progress stops first (waited for outside our lock: the
            # cleaner thread may need it to finish)
            for p in parts:
                cleaner.abort_and_pause_cleaning((topic, p))
        try:
            return self._delete_partitions(topic, parts, shutil.rmtree)
        finally:
            if cleaner is not None:
                for p in parts:
                    cleaner.update_checkpoints(self.root, partition_to_remove=(topic, p))
                cleaner.resume_cleaning([(topic, p) for p in parts])

    def _delete_partitions(self, topic: str, parts: list[int], rmtree: Any) -> list[int]:
        with self._lock:
            parts = [p for p in parts if (topic, p) in self._logs]
            renamed = []
            for p in parts:
                log = self._logs.pop((topic, p))
                self._high_watermarks.pop((topic, p), None)
                log.close()
                target = self.root / files.log_delete_dir_name(topic, p)
                log.directory.rename(target)
                renamed.append(target)
            if self._topics.pop(topic, None) is not None:
                self._write_topics_file()
            _fsync_dir(self.root)
            self.checkpoint()
            for target in renamed:
                rmtree(target, ignore_errors=True)
            return parts

    def create_partitions(self, topic: str, count: int) -> list[int]:
        """Grow ``topic`` to ``count`` partitions (Kafka's CreatePartitions): the new partition
        directories start empty, with the topic's id in ``partition.metadata`` and its config.
        Returns the partitions created. The current count is the one :meth:`create_topic`
        recorded, or for a topic written by a broker the partitions held, which must then be
        ``0 … n-1``.

        >>> import tempfile
        >>> with LogDir.open(tempfile.mkdtemp()) as d:
        ...     _ = d.create_topic("orders", 2)
        ...     d.create_partitions("orders", 4), d.declared_partitions("orders")
        ([2, 3], 4)

        Raises
        ------
        UnknownTopicOrPartitionError
            No partition of ``topic`` is held here.
        InvalidPartitionsError
            ``count`` is not above the current count (Kafka's messages), or the count of a
            topic written by a broker is unknown (partitions missing from the sequence).
        """
        if isinstance(count, bool) or not isinstance(count, int):
            raise TypeError(f"count must be an int, found {type(count).__name__}")
        with self._lock:
            self._check_writable()
            held = sorted(p for t, p in self._logs if t == topic)
            if not held:
                raise UnknownTopicOrPartitionError(
                    f"topic {topic!r} is not in this log dir", path=self.root)
            declared = self.declared_partitions(topic)
            if declared is None and held != list(range(len(held))):
                raise InvalidPartitionsError(
                    f"the partition count of topic {topic!r} is unknown: this log dir holds "
                    f"partitions {held}, not 0 to {len(held) - 1}", path=self.root)
            current = declared if declared is not None else len(held)
            if count == current:
                raise InvalidPartitionsError(f"Topic already has {current} partition(s).",
                                             path=self.root)
            if count < current:
                raise InvalidPartitionsError(
                    f"The topic {topic} currently has {current} partition(s); {count} would "
                    f"not be an increase.", path=self.root)
            added = list(range(current, count))
            paths = [files.partition_dir(self.root, topic, p) for p in added]
            topic_id = self.topic_id(topic)
            entry = self._topics.get(topic)
            if entry is not None and entry.get("partitions") is not None:
                entry["partitions"] = count
                self._write_topics_file()
            for p, path in zip(added, paths):
                self._open_log((topic, p), path, 0, 0)
                meta = PartitionMetadataFile(path / files.PARTITION_METADATA_FILE)
                if topic_id is not None and not meta.exists():
                    meta.write(topic_id)  # a broker's topic: the id its other partitions carry
            _fsync_dir(self.root)
            return added

    def update_topic_config(self, topic: str, overrides: Mapping[str, Any]) -> LogConfig:
        """Replace the topic's overrides with ``overrides`` (Kafka topic config names) and
        apply them to its open logs (Kafka's ``LogManager.updateTopicConfig``): persisted in
        :data:`TOPICS_FILE` first, then each log takes the new config
        (:meth:`Log.update_config`); a log that stops being compacted has its cleaning aborted,
        as Kafka does. Works for a topic written by a broker too (its entry then records no
        partition count). Returns the effective config.

        >>> import tempfile
        >>> with LogDir.open(tempfile.mkdtemp()) as d:
        ...     _ = d.create_topic("orders", 1, {"segment.bytes": "1048576"})
        ...     d.update_topic_config("orders", {"retention.ms": "60000"}).retention_ms
        ...     d.topic_overrides("orders"), d.log("orders", 0).config.segment_bytes
        60000
        ({'retention.ms': '60000'}, 1073741824)

        Raises
        ------
        UnknownTopicOrPartitionError
            The topic is not held here.
        ConfigError
            A bad value (nothing is changed).
        ValueError
            A name that is not a topic config kafkalog implements.
        """
        props = _as_properties(overrides)
        config = self.validate_topic_config(props)
        with self._lock:
            self._check_writable()
            parts = sorted(p for t, p in self._logs if t == topic)
            if not parts and topic not in self._topics:
                raise UnknownTopicOrPartitionError(
                    f"topic {topic!r} is not in this log dir", path=self.root)
            entry = self._topics.get(topic)
            if entry is None:
                tid = self.topic_id(topic)
                entry = {"topic_id": None if tid is None else str(tid), "partitions": None}
            self._topics[topic] = {**entry, "config": props}
            self._write_topics_file()
            stopped_compacting = []
            for p in parts:
                old = self._logs[(topic, p)].update_config(config)
                if old.compact and not config.compact:
                    stopped_compacting.append((topic, p))
        cleaner = self._cleaner
        if cleaner is not None and stopped_compacting:
            # LogManager.abortCleaning, outside our lock (the cleaner thread may need it)
            for tp in stopped_compacting:
                cleaner.abort_cleaning(tp)
        return config

    def validate_topic_config(self, overrides: Mapping[str, Any]) -> LogConfig:
        """The config a topic with ``overrides`` would have here (the dir's defaults with
        them), changing nothing.

        Raises
        ------
        ConfigError
            A bad value.
        ValueError
            A name that is not a topic config kafkalog implements.
        """
        props = _as_properties(overrides)
        _check_override_names(props)
        return LogConfig.from_properties({**self._base_properties, **props})

    def topic_id(self, topic: str) -> Uuid | None:
        """The topic's Kafka Uuid: ours, else the first ``partition.metadata`` found."""
        entry = self._topics.get(topic)
        if entry is not None and entry.get("topic_id") is not None:
            return Uuid.from_string(entry["topic_id"])
        for t, p in self.partitions():
            if t == topic:
                meta = PartitionMetadataFile(self.root / files.log_dir_name(t, p)
                                             / files.PARTITION_METADATA_FILE)
                if meta.exists():
                    return meta.read().topic_id
        return None

    def declared_partitions(self, topic: str) -> int | None:
        """The partition count :meth:`create_topic` gave ``topic`` (None for a topic written by
        a broker: a log dir may hold only some of its partitions)."""
        entry = self._topics.get(topic)
        return None if entry is None or entry.get("partitions") is None else int(
            entry["partitions"])

    def topic_config(self, topic: str) -> LogConfig:
        """The effective config of ``topic``: the log dir's defaults with its overrides."""
        overrides = self._topics.get(topic, {}).get("config", {})
        return LogConfig.from_properties({**self._base_properties, **overrides})

    def topic_overrides(self, topic: str) -> dict[str, str]:
        """The persisted per-topic overrides (Kafka topic config names)."""
        return dict(self._topics.get(topic, {}).get("config", {}))

    # -- high watermarks -----------------------------------------------------------------------

    def high_watermark(self, topic: str, partition: int) -> int:
        """The partition's high watermark: the value set (or read from
        ``replication-offset-checkpoint``), kept within [log start offset, log end offset] as
        Kafka's ``updateHighWatermark`` does; without one the log end offset (a single-replica
        leader commits every append at once)."""
        log = self.log(topic, partition)
        hw = self._high_watermarks.get((topic, int(partition)))
        leo = log.log_end_offset
        return leo if hw is None else max(min(hw, leo), log.log_start_offset)

    def set_high_watermark(self, topic: str, partition: int, offset: int | None) -> None:
        """Set the high watermark (Kafka's ``updateHighWatermark`` bounds: log start offset to
        log end offset); None goes back to following the log end offset.

        Raises
        ------
        OffsetOutOfRangeError
            ``offset`` outside ``[log start offset, log end offset]``.
        """
        from .errors import OffsetOutOfRangeError

        log = self.log(topic, partition)
        tp = (topic, int(partition))
        with self._lock:
            if offset is None:
                self._high_watermarks.pop(tp, None)
                return
            lso, leo = log.log_start_offset, log.log_end_offset
            if not lso <= offset <= leo:
                raise OffsetOutOfRangeError(
                    f"high watermark out of range (expected {lso}..{leo}, found {offset})",
                    path=log.directory, offset=offset)
            self._high_watermarks[tp] = int(offset)

    # -- maintenance ------------------------------------------------------------------------------

    def checkpoint(self) -> None:
        """Write ``recovery-point-offset-checkpoint``, ``log-start-offset-checkpoint`` and
        ``replication-offset-checkpoint`` from the open logs (atomically)."""
        self.checkpoint_recovery_points()
        self.checkpoint_log_start_offsets()
        self.checkpoint_high_watermarks()

    def _checkpointed(self) -> list[tuple[tuple[str, int], Log]]:
        return [(tp, log) for tp, log in sorted(self._logs.items()) if tp[0] != METADATA_TOPIC]

    def checkpoint_recovery_points(self) -> None:
        """Kafka's ``checkpointLogRecoveryOffsets`` (every 60 s on a broker)."""
        with self._lock:
            self._check_writable()
            OffsetCheckpointFile(self.root / files.RECOVERY_POINT_CHECKPOINT_FILE).write(
                {tp: log.recovery_point for tp, log in self._checkpointed()})

    def checkpoint_log_start_offsets(self) -> None:
        """Kafka's ``checkpointLogStartOffsets``: only logs whose start offset is above their
        first segment's base offset (the others are derived from the segments at open)."""
        with self._lock:
            self._check_writable()
            entries = {}
            for tp, log in self._checkpointed():
                segs = log.segments
                if segs and log.log_start_offset > segs[0].base_offset:
                    entries[tp] = log.log_start_offset
            OffsetCheckpointFile(self.root / files.LOG_START_OFFSET_CHECKPOINT_FILE).write(entries)

    def checkpoint_high_watermarks(self) -> None:
        """ReplicaManager's ``checkpointHighWatermarks`` (every 5 s on a broker)."""
        with self._lock:
            self._check_writable()
            OffsetCheckpointFile(self.root / files.REPLICATION_OFFSET_CHECKPOINT_FILE).write(
                {tp: self.high_watermark(*tp) for tp, _ in self._checkpointed()})

    def flush(self) -> None:
        """Flush every log (fsync; advances the recovery points)."""
        for log in self._open_logs():
            log.flush()

    def flush_dirty_logs(self, now: int | None = None) -> int:
        """Kafka's ``flushDirtyLogs``: flush the logs not flushed for their ``flush.ms``.
        Returns how many were flushed."""
        now = self._clock.milliseconds() if now is None else now
        n = 0
        for log in self._open_logs():
            if now - log._last_flush_ms >= log.config.flush_ms:
                log.flush()
                n += 1
        return n

    def enforce_retention(self, now: int | None = None) -> int:
        """Kafka's ``cleanupLogs``: retention on every non-compacted log; returns segments
        deleted. Compacted logs (``compact`` and ``compact,delete``) get theirs from the log
        cleaner (:attr:`cleaner`), after their cleaning, as on a broker."""
        return sum(log.enforce_retention(now) for log in self._open_logs()
                   if not log.config.compact)

    def _open_logs(self) -> list[Log]:
        with self._lock:
            if self.read_only:
                return []
            return [log for log in self._logs.values() if not log.closed]

    def start_maintenance(self, **intervals: int) -> Any:
        """Start the background maintenance thread (:class:`kafkalog.scheduler.LogDirScheduler`
        with Kafka's default intervals unless given); it stops on :meth:`close`."""
        from .scheduler import LogDirScheduler

        with self._lock:
            self._check_writable()
            if self._scheduler is None:
                self._scheduler = LogDirScheduler(self, clock=self._clock, **intervals)
                self._scheduler.start()
            return self._scheduler

    # -- closing -------------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._closed

    def _check_open(self) -> None:
        if self._closed:
            from .errors import LogClosedError

            raise LogClosedError("log dir is closed", path=self.root)

    def _check_writable(self) -> None:
        self._check_open()
        if self.read_only:
            raise PermissionError(f"{self.root}: log dir opened read-only")

    def close(self) -> None:
        """Kafka's ``LogManager.shutdown`` for this dir: stop maintenance, close every log,
        write the checkpoints, then ``.kafka_cleanshutdown``; release the lock. Idempotent."""
        sched, self._scheduler = self._scheduler, None
        if sched is not None:
            sched.stop()
        if self._cleaner is not None:
            self._cleaner.shutdown()
        with self._lock:
            if self._closed:
                return
            try:
                if not self.read_only:
                    for log in self._logs.values():
                        log.close()
                    self.checkpoint()  # the logs are closed: their final offsets
                    atomic_write(self.root / files.CLEAN_SHUTDOWN_FILE, json.dumps(
                        {"version": 0, "brokerEpoch": self.broker_epoch},
                        separators=(",", ":")).encode())
            finally:
                self._closed = True
                self._release_all()

    def _release_all(self) -> None:
        for log in self._logs.values():
            if not log.closed:
                try:
                    log.close()
                except Exception:  # noqa: BLE001 - closing after a failure: keep releasing
                    logger.exception("%s: closing failed", log.directory)
        if self._root_lock is not None:
            self._root_lock.release()
            self._root_lock = None

    def __enter__(self) -> LogDir:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"LogDir({str(self.root)!r}, partitions={len(self._logs)})"

    # -- our topics file ---------------------------------------------------------------------------

    def _topics_file(self) -> JsonStateFile:
        return JsonStateFile(self.root / TOPICS_FILE, "topics file", "topics",
                             version=TOPICS_FILE_VERSION, sort_keys=True)

    def _read_topics_file(self) -> dict[str, dict[str, Any]]:
        return self._topics_file().load(_parse_topics) or {}

    def _write_topics_file(self) -> None:
        self._topics_file().save(self._topics)


def _parse_topics(topics: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The ``topics`` body of the topics file, checked entry by entry (returned as stored)."""
    for name, entry in topics.items():
        # a broker's topic given overrides here has no id of ours and no count
        if entry["topic_id"] is not None:
            Uuid.from_string(entry["topic_id"])
        if entry.get("partitions") is not None:
            int(entry["partitions"])
        LogConfig.from_properties(entry.get("config", {}))
        validate_topic_name(name)
    return topics


def _check_override_names(overrides: Mapping[str, str]) -> None:
    unknown = sorted(set(overrides) - set(config_to_properties(LogConfig())))
    if unknown:
        raise ValueError(
            f"topic overrides take topic config names (expected e.g. segment.bytes, found "
            f"{', '.join(unknown)})")
    # LogConfig.from_properties reads "" as not set (a "key=" line of a properties file): an
    # empty override would be stored and silently mean the default
    empty = sorted(k for k, v in overrides.items() if not str(v).strip())
    if empty:
        raise ConfigError(f"{', '.join(empty)}: expected a value, found an empty string")


def _read_marker_epoch(path: Path) -> int | None:
    """``brokerEpoch`` of a 3.7+ marker; None for an empty (older) or unreadable one."""
    try:
        text = path.read_text("utf-8").strip()
        if not text:
            return None
        value = json.loads(text).get("brokerEpoch")
        return int(value) if isinstance(value, int) else None
    except (OSError, ValueError, AttributeError):
        return None


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
