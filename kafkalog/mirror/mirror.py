"""The follower loop of ``kafkalog mirror``: partitions of a live Kafka endpoint copied batch for
batch into a Kafka-format log dir, as a follower replica copies its leader.

Kafka's replica fetcher (``AbstractFetcherThread``, Kafka 4.2) from outside the cluster: it
fetches as a consumer (replica id -1, read_uncommitted, so aborted records and control batches
come too) and appends the batches as they came (:meth:`kafkalog.log.Log.append_batches`, which
keeps offsets, producer ids, sequences, epochs, timestamps and compression, and checks each
CRC). Per partition:

1. ``DIR/<topic>-<partition>`` holds the source's topic id in ``partition.metadata``; a new
   partition starts at the source's log start offset (ListOffsets EARLIEST), or its high
   watermark with ``start_offset="latest"``;
2. each fetch is at the local log end offset with ``last_fetched_epoch`` = the local latest
   leader epoch (none for an empty log): KIP-595's truncation on fetch;
3. a ``diverging_epoch`` answer truncates the local log where Kafka's follower would
   (:func:`kafkalog.replication.fetcher.offset_truncation_state`), then it fetches again;
   OFFSET_OUT_OF_RANGE: a local log end offset above the source's (latest) truncates to it; one
   below the source's log start offset is a *gap* (the source deleted those records before they
   were copied): reported, and the local log restarts at the source's log start
   (``truncate_fully_and_start_at``, as Kafka's follower does);
4. only whole batches are appended (a fetch may end with a partial one, KIP-74);
5. the local high watermark is min(source high watermark, local log end offset), checkpointed
   in ``replication-offset-checkpoint``, so read_committed readers of the copy see only what
   the source committed.

Without ``follow`` it stops once every partition reached the high watermark the source had when
the run started; with it, it runs until :meth:`Mirror.stop` (or Ctrl-C), and every
``metadata.max.age.ms`` (5 minutes, Kafka's consumer default: how often a pattern subscription
looks) takes in partitions the source gained: topics created that the topic names or patterns
match, partitions added to a mirrored topic, each mirrored from its log start offset. The log
dir is closed cleanly either way (checkpoints and ``.kafka_cleanshutdown`` written).

A partition whose fetch fails with an error Kafka's fetchers retry (its leader moved, a broker
restarting: :mod:`kafkalog.mirror.retry`) waits Kafka's exponential backoff, has its leader
looked up again and is fetched from it; a source topic recreated under the copy (another topic
id) fails its partitions instead.

Every connection (the bootstrap broker's and each leader's) is secured alike, as the Kafka client
properties of ``client_config`` say (TLS, SASL PLAIN/SCRAM: :mod:`kafkalog.mirror.security`).

Unlike a follower, the copy does not advance its log start offset when the source deletes old
records (retention, DeleteRecords): it is a backup, and keeps them until a gap forces a restart.

Example
-------
>>> result = mirror("127.0.0.1:9092", "/backup/kafka-logs", topics=["orders"])  # doctest: +SKIP
>>> [(p.topic, p.partition, p.log_end_offset, p.records)
...  for p in result.partitions]                                        # doctest: +SKIP
[('orders', 0, 1200, 1200)]
"""

from __future__ import annotations

import os
import re
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import files
from ..checkpoint import PartitionMetadataFile, Uuid
from ..cleaner.cleaner_config import CleanerConfig
from ..config import LogConfig
from ..errors import ConfigError, KafkaLogError
from ..log import Log
from ..log_dir import LogDir, config_to_properties
from ..native import scan as native_scan
from ..replication.fetcher import DivergingEpoch, ReplicaLog, offset_truncation_state
from .client import (
    EARLIEST,
    LATEST,
    BrokerNode,
    BrokerUnavailableError,
    FetchedPartition,
    FetchPartition,
    KafkaClient,
    MirrorError,
    TopicInfo,
    error_name,
)
from .retry import (
    DEFAULT_RETRY_BACKOFF_MAX_MS,
    DEFAULT_RETRY_BACKOFF_MS,
    RETRY_BACKOFF_EXP_BASE,
    RETRY_BACKOFF_JITTER,
    ExponentialBackoff,
    error_is_retriable,
)
from .security import client_security

__all__ = ["mirror", "Mirror", "MirrorResult", "MirrorProgress", "PartitionReport",
           "TopicConfigReport",
           "Truncation", "Gap", "MirrorError", "split_topic_overrides"]

_OFFSET_OUT_OF_RANGE = 1
_UNKNOWN_TOPIC_OR_PARTITION = 3
# rounds of OFFSET_OUT_OF_RANGE or diverging epochs that change nothing before the partition is
# given up (Kafka's fetcher would retry forever: e.g. the source does not know the last epoch)
_MAX_IDLE_ROUNDS = 3
#: how long a partition may keep failing with retriable errors before a run that stops at the
#: high watermark gives it up (a ``follow`` retries as long as it runs, as Kafka's fetcher)
DEFAULT_RETRY_TIMEOUT = 60.0
#: the Kafka client properties the mirror applies itself (the rest of ``client_config`` is
#: security's): the retries' backoff, and how often a follow looks for new partitions
_CLIENT_PROPERTIES = ("retry.backoff.ms", "retry.backoff.max.ms", "metadata.max.age.ms")
#: Kafka's consumer default of ``metadata.max.age.ms``: how often a pattern subscription
#: looks for new topics
DEFAULT_METADATA_MAX_AGE_MS = 300_000


@dataclass
class Truncation:
    """The local log cut from ``from_offset`` (its log end offset then) to ``to_offset``."""

    from_offset: int
    to_offset: int
    reason: str


@dataclass
class Gap:
    """Offsets ``from_offset`` .. ``to_offset - 1`` the source deleted before they were copied
    (a warning: the copy restarts at ``to_offset``)."""

    from_offset: int
    to_offset: int


@dataclass
class TopicConfigReport:
    """A topic's own configs on the source (its overrides), as given to the copy: ``copied``
    the ones applied, ``skipped`` the names kafkalog does not implement (broker-side settings
    such as ``message.downconversion.enable``), ``error`` why none could be read or applied."""

    copied: dict[str, str] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    error: str | None = None


def split_topic_overrides(overrides: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """``(applicable, skipped names)``: a source topic's overrides split by whether kafkalog
    implements the topic config.

    >>> split_topic_overrides({"cleanup.policy": "compact", "message.downconversion.enable":
    ...                        "false"})
    ({'cleanup.policy': 'compact'}, ['message.downconversion.enable'])
    """
    implemented = set(config_to_properties(LogConfig()))
    return ({k: v for k, v in overrides.items() if k in implemented},
            sorted(k for k in overrides if k not in implemented))


@dataclass
class PartitionReport:
    """What one partition's mirroring did, and where its copy ends."""

    topic: str
    partition: int
    topic_id: str | None = None
    directory: str = ""
    batches: int = 0
    records: int = 0
    bytes: int = 0
    truncations: list[Truncation] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)
    log_start_offset: int = -1
    log_end_offset: int = -1
    high_watermark: int = -1
    #: the source's high watermark when the run started (where a run without follow stops)
    target_offset: int = -1
    source_log_start_offset: int = -1
    source_high_watermark: int = -1
    #: the source broker (node id) leading the partition when it was last fetched
    leader: int = -1
    #: fetches (or metadata refreshes) that failed with a retriable error and were retried
    retries: int = 0
    #: the topic was deleted on the source during the run: the copy keeps what it holds
    source_deleted: bool = False
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class MirrorProgress:
    """Where a run stands (:meth:`Mirror.progress`): partitions being mirrored, what was copied
    so far, and ``lag``, the records between the copies' log end offsets and the source's last
    known high watermarks."""

    partitions: int
    batches: int
    records: int
    bytes: int
    lag: int
    #: partitions waiting to retry (their leader moved or unreachable)
    retrying: int = 0


@dataclass
class MirrorResult:
    """Every partition's report; ``interrupted`` when :meth:`Mirror.stop` or Ctrl-C ended it."""

    bootstrap_server: str
    directory: str
    partitions: list[PartitionReport]
    interrupted: bool = False
    #: per topic mirrored, its configs as copied (empty with ``copy_topic_configs=False``)
    topic_configs: dict[str, TopicConfigReport] = field(default_factory=dict)

    @property
    def errors(self) -> list[str]:
        return [f"{p.topic}-{p.partition}: {p.error}" for p in self.partitions if p.error]

    @property
    def gaps(self) -> list[tuple[str, int, Gap]]:
        return [(p.topic, p.partition, g) for p in self.partitions for g in p.gaps]

    @property
    def ok(self) -> bool:
        """No partition failed (gaps are warnings)."""
        return not self.errors

    def to_json(self) -> dict[str, Any]:
        return {"bootstrap_server": self.bootstrap_server, "directory": self.directory,
                "ok": self.ok, "interrupted": self.interrupted, "errors": self.errors,
                "topic_configs": {t: asdict(c) for t, c in self.topic_configs.items()},
                "partitions": [p.to_json() for p in self.partitions]}


class _Partition:
    """A mirrored partition's fetch state."""

    __slots__ = ("report", "topic_id", "leader", "leader_epoch", "log", "done", "idle",
                 "max_bytes", "new", "stale", "retry_at", "attempts", "failing_since",
                 "last_failure")

    def __init__(self, report: PartitionReport, topic_id: uuid.UUID | None, leader: int,
                 leader_epoch: int, max_bytes: int) -> None:
        self.report = report
        self.topic_id = topic_id
        self.leader = report.leader = leader
        self.leader_epoch = leader_epoch
        self.log: Log | None = None
        self.done = False
        self.idle = 0
        self.max_bytes = max_bytes
        self.new = False
        # retrying: the leader is to be looked up again (Metadata) before the next fetch, not
        # before ``retry_at`` (time.monotonic()); ``failing_since`` the first failure of the
        # current run of failures, None when the last fetch succeeded
        self.stale = False
        self.retry_at = 0.0
        self.attempts = 0
        self.failing_since: float | None = None
        self.last_failure = ""

    @property
    def tp(self) -> tuple[str, int]:
        return self.report.topic, self.report.partition


class Mirror:
    """One mirroring run; :meth:`run` it (from another thread :meth:`stop` ends a ``follow``).

    Parameters
    ----------
    bootstrap_server:
        ``HOST:PORT`` of a broker of the source cluster (or ``kafkalog serve``), or a comma
        separated list of them, tried in order (at the start and whenever no known broker
        answers a metadata request).
    directory:
        The local log dir (created if needed; a log dir written by an earlier run resumes).
    topics:
        Topic names or regular expressions (whole-name match); None: every topic but internal
        ones (``__consumer_offsets``...).
    partitions:
        Only these partition numbers (None: all).
    follow:
        Keep fetching until stopped instead of stopping at the starting high watermark.
    start_offset:
        ``"earliest"`` (the source's log start) or ``"latest"`` (its high watermark): where a
        partition new to ``directory`` starts.
    config:
        Defaults of the local log dir (Kafka topic config names, e.g. ``segment.bytes``).
    copy_topic_configs:
        Give each topic of the copy the source topic's own configs (DescribeConfigs: its
        overrides, e.g. ``cleanup.policy``, ``retention.ms``, ``segment.bytes``), so that the
        copy, served or cleaned later, behaves as the source topic does. Settings kafkalog does
        not implement are listed as skipped; a source that does not answer leaves the copy
        with the defaults (reported, not an error).
    client_config:
        Kafka client properties securing every connection: ``security.protocol``,
        ``ssl.truststore.location``, ``ssl.keystore.location``,
        ``ssl.endpoint.identification.algorithm``, ``sasl.mechanism``, ``sasl.jaas.config``,
        ``client.id`` (:mod:`kafkalog.mirror.security`); None: PLAINTEXT. Checked (and the
        stores read) here: a :class:`~kafkalog.errors.ConfigError` for what is not valid or
        not supported. ``retry.backoff.ms`` and ``retry.backoff.max.ms`` set the backoff
        between retries (Kafka's defaults 100 and 1000), ``metadata.max.age.ms`` how often a
        ``follow`` looks for new partitions (300000). Other keys are named in one warning.
    retry_timeout:
        Seconds a partition may keep failing with retriable errors (its leader moved or
        unreachable, a broker restarting: :mod:`kafkalog.mirror.retry`) before it is given up
        with the last error. None: 60 s, and no limit with ``follow`` (Kafka's fetcher retries
        for as long as it runs). Between attempts the leader is looked up again (Metadata
        from any broker known or given) and the partition waits Kafka's exponential backoff.
    warn:
        Called with each warning as it happens (gaps, a partition failing and fetched again),
        e.g. to print it at once.

    Example
    -------
    >>> m = Mirror("127.0.0.1:9092", "/backup", topics=["orders.*"], follow=True)  # doctest: +SKIP
    >>> threading.Timer(60, m.stop).start(); result = m.run()                  # doctest: +SKIP
    """

    def __init__(self, bootstrap_server: str, directory: str | os.PathLike[str], *,
                 topics: Sequence[str] | None = None, partitions: Sequence[int] | None = None,
                 follow: bool = False, start_offset: str = "earliest",
                 config: Mapping[str, Any] | None = None, copy_topic_configs: bool = True,
                 partition_max_bytes: int = 8 << 20, fetch_max_bytes: int = 64 << 20,
                 max_wait_ms: int = 500, timeout: float = 30.0,
                 client_config: Mapping[str, str] | None = None,
                 retry_timeout: float | None = None,
                 warn: Callable[[str], None] | None = None) -> None:
        if start_offset not in ("earliest", "latest"):
            raise ValueError(f"start_offset must be 'earliest' or 'latest' "
                             f"(found {start_offset!r})")
        if retry_timeout is not None and not retry_timeout >= 0:
            raise ValueError(f"retry_timeout must be >= 0 seconds (found {retry_timeout!r})")
        self.bootstrap_server = bootstrap_server
        self._bootstrap = [a.strip() for a in bootstrap_server.split(",") if a.strip()]
        if not self._bootstrap:
            raise ValueError(f"no bootstrap server in {bootstrap_server!r} (expected "
                             f"HOST:PORT[,HOST:PORT...])")
        self.directory = Path(directory)
        self.topics = list(topics) if topics else None
        self.partitions = None if partitions is None else {int(p) for p in partitions}
        self.follow = follow
        self.start_offset = start_offset
        self.config = dict(config or {})
        self.copy_topic_configs = copy_topic_configs
        self._topic_configs: dict[str, TopicConfigReport] = {}
        self.partition_max_bytes = partition_max_bytes
        self.fetch_max_bytes = fetch_max_bytes
        self.max_wait_ms = max_wait_ms
        self.timeout = timeout
        self.warn = warn or (lambda msg: None)
        props = dict(client_config or {})
        retry = {k: props.pop(k) for k in _CLIENT_PROPERTIES if k in props}
        self.security = client_security(props)
        if self.security.ignored:
            self.warn(f"client properties not applied by kafkalog mirror: "
                      f"{', '.join(self.security.ignored)}")
        self.retry_timeout = retry_timeout if retry_timeout is not None else (
            None if follow else DEFAULT_RETRY_TIMEOUT)
        self._backoff = ExponentialBackoff(
            _ms_property(retry, "retry.backoff.ms", DEFAULT_RETRY_BACKOFF_MS),
            RETRY_BACKOFF_EXP_BASE,
            _ms_property(retry, "retry.backoff.max.ms", DEFAULT_RETRY_BACKOFF_MAX_MS),
            RETRY_BACKOFF_JITTER)
        self.metadata_max_age_ms = _ms_property(retry, "metadata.max.age.ms",
                                                DEFAULT_METADATA_MAX_AGE_MS)
        self._next_discovery = 0.0
        self._stop = threading.Event()
        self._parts: list[_Partition] = []
        # one connection per broker address; the source's brokers as Metadata last listed them
        self._conns: dict[str, KafkaClient] = {}
        self._brokers: dict[int, BrokerNode] = {}
        # a one-broker source whose advertised address is not the one it was reached at
        # (a container's host name): its connections go to the address that worked
        self._alias: dict[str, str] = {}

    def progress(self) -> MirrorProgress:
        """The run's progress so far (safe from another thread: it only reads counters)."""
        parts = [st for st in self._parts if not st.report.error]
        lag = 0
        for st in parts:
            log = st.log
            if log is not None and st.report.source_high_watermark >= 0:
                lag += max(0, st.report.source_high_watermark - log.log_end_offset)
        return MirrorProgress(len(parts), sum(st.report.batches for st in parts),
                              sum(st.report.records for st in parts),
                              sum(st.report.bytes for st in parts), lag,
                              sum(st.failing_since is not None for st in parts))

    def stop(self) -> None:
        """End the run after the fetch in flight (thread-safe)."""
        self._stop.set()

    # -- setup -----------------------------------------------------------------------------------

    def _select(self, topics: Mapping[str, TopicInfo], strict: bool = True
                ) -> list[TopicInfo]:
        """The topics to mirror; ``strict``: a name or pattern matching none is an error
        (at the start; later a topic may have been deleted)."""
        if self.topics is None:
            return [t for n, t in sorted(topics.items())
                    if not t.is_internal and not n.startswith("__")]
        chosen: dict[str, TopicInfo] = {}
        for pattern in self.topics:
            if pattern in topics:
                chosen[pattern] = topics[pattern]
                continue
            try:
                rx = re.compile(pattern)
            except re.error:
                rx = None
            found = [] if rx is None else [n for n in topics if rx.fullmatch(n)]
            if not found and strict:
                raise MirrorError(f"unknown topic {pattern!r} on {self.bootstrap_server} (no "
                                  f"topic of that name, nor matching it as a regular "
                                  f"expression)")
            for n in found:
                chosen[n] = topics[n]
        return [chosen[n] for n in sorted(chosen)]

    # -- connections -----------------------------------------------------------------------------

    def _connect(self, address: str) -> KafkaClient:
        """The connection to ``address`` (opened if there is none)."""
        address = self._alias.get(address, address)
        c = self._conns.get(address)
        if c is None:
            c = KafkaClient(address, timeout=self.timeout, security=self.security)
            self._conns[address] = c
        return c

    def _drop(self, client: KafkaClient) -> None:
        """Forget a broken connection (the next request to its broker opens a new one)."""
        if self._conns.get(client.address) is client:
            del self._conns[client.address]
        client.close()

    def _leader_client(self, node_id: int) -> KafkaClient:
        node = self._brokers.get(node_id)
        if node is None:
            raise BrokerUnavailableError(f"leader node {node_id} is not among the brokers "
                                         f"Metadata listed")
        return self._connect(node.address)

    def _metadata(self, topics: Sequence[str] | None
                  ) -> tuple[KafkaClient, dict[int, BrokerNode], dict[str, TopicInfo]]:
        """Metadata from the first broker that answers: a connected one, then the bootstrap
        servers in order, then the other brokers last listed (Kafka's clients ask the least
        loaded known node, and the bootstrap servers when none is left)."""
        candidates = list(self._conns) + self._bootstrap + [
            n.address for n in self._brokers.values()]
        failures: list[str] = []
        for address in dict.fromkeys(candidates):
            try:
                client = self._connect(address)
            except BrokerUnavailableError as e:
                failures.append(str(e))
                continue
            try:
                brokers, info = client.metadata(topics)
            except BrokerUnavailableError as e:
                self._drop(client)
                failures.append(str(e))
                continue
            self._brokers = brokers
            if len(brokers) == 1:
                node = next(iter(brokers.values()))
                if node.address != client.address:
                    self._alias[node.address] = client.address
            # connections to addresses no broker has any more (a broker moved) are closed
            held = {self._alias.get(n.address, n.address) for n in brokers.values()}
            for c in list(self._conns.values()):
                if c is not client and c.address not in held:
                    self._drop(c)
            return client, brokers, info
        if len(failures) == 1:
            raise BrokerUnavailableError(failures[0])
        raise BrokerUnavailableError("no broker answered Metadata: " + "; ".join(failures))

    def _plan(self) -> list[_Partition]:
        """Metadata and offsets from the source; nothing written locally yet (so a bad
        address or topic leaves nothing behind)."""
        boot, _, topics = self._metadata(None)
        selected = self._select(topics)
        if not selected:
            raise MirrorError(f"no topic to mirror on {self.bootstrap_server}")
        parts = self._partitions_of(selected, boot, set(), strict=True)
        if not parts:
            raise MirrorError(f"no partition {sorted(self.partitions or [])} in the topics "
                              f"selected")
        return parts

    def _partitions_of(self, selected: Sequence[TopicInfo], boot: KafkaClient,
                       known: set[tuple[str, int]], strict: bool) -> list[_Partition]:
        """The states of the ``selected`` topics' partitions not in ``known``, with the source's
        offsets (from their leaders); the configs of topics not described yet are read.
        ``strict``: a topic's Metadata error, or no partition matching ``partitions``, is an
        error (at the start); else the topic is left for a later look."""
        if self.copy_topic_configs:
            for name, (code, message, overrides) in boot.topic_overrides(
                    [t.name for t in selected if t.name not in self._topic_configs]).items():
                copied, skipped = split_topic_overrides(overrides)
                self._topic_configs[name] = TopicConfigReport(
                    copied, skipped, None if code == 0 else
                    f"DescribeConfigs: {error_name(code)}" + (f" ({message})" if message
                                                             else ""))
        parts: list[_Partition] = []
        for t in selected:
            if t.error:
                if not strict:
                    continue
                raise MirrorError(f"topic {t.name!r}: Metadata error {error_name(t.error)}")
            wanted = [p for p in t.partitions
                      if (self.partitions is None or p.partition in self.partitions)
                      and (t.name, p.partition) not in known]
            if strict and self.partitions is not None and self.topics is not None \
                    and not wanted:
                raise MirrorError(f"topic {t.name!r} has no partition "
                                  f"{sorted(self.partitions)} (it has "
                                  f"{[p.partition for p in t.partitions]})")
            for p in wanted:
                if not strict and (p.error or p.leader < 0):
                    continue  # (no leader yet: looked at again next time)
                rep = PartitionReport(t.name, p.partition,
                                      None if t.topic_id is None else str(
                                          Uuid.from_bytes(t.topic_id.bytes)))
                st = _Partition(rep, t.topic_id, p.leader, p.leader_epoch,
                                self.partition_max_bytes)
                if p.error or p.leader < 0:
                    rep.error = f"no leader on the source (Metadata: {error_name(p.error)})"
                parts.append(st)
        for leader, group in _by_leader(parts).items():
            client = self._leader_client(leader)
            want = {st.tp: EARLIEST for st in group}
            earliest = client.list_offsets(want)
            latest = client.list_offsets({tp: LATEST for tp in want})
            for st in group:
                (e1, lo), (e2, hi) = earliest.get(st.tp, (3, -1)), latest.get(st.tp, (3, -1))
                if e1 or e2:
                    st.report.error = f"ListOffsets error {error_name(e1 or e2)}"
                    continue
                st.report.source_log_start_offset = lo
                st.report.source_high_watermark = st.report.target_offset = hi
        return parts

    def _open(self, parts: list[_Partition]) -> LogDir:
        root = self.directory
        root.mkdir(parents=True, exist_ok=True)
        self._make_directories(parts)
        # no log cleaner on the copy while it is written: the copy holds the batches as the
        # source served them (a compacted topic is cleaned by whatever serves the copy later,
        # under the cleanup.policy copied from the source)
        logs = LogDir.open(root, self.config or None,
                           cleaner_config=CleanerConfig(enable_cleaner=False))
        try:
            self._start_logs(parts, logs, self.start_offset)
        except BaseException:
            logs.close()
            raise
        return logs

    def _make_directories(self, parts: list[_Partition]) -> None:
        """The copies' partition directories, made as a broker holds them (nothing loaded)."""
        root = self.directory
        for st in parts:
            if st.report.error:
                continue
            path = files.partition_dir(root, *st.tp)
            st.report.directory = str(path)
            meta = PartitionMetadataFile(path / files.PARTITION_METADATA_FILE)
            if not path.exists():
                # a partition directory as a broker holds it: the source's topic id (LogDir
                # loads it as one a broker wrote), so the copy can go back into a broker
                path.mkdir()
                st.new = True
                if st.topic_id is not None:
                    meta.write(Uuid.from_bytes(st.topic_id.bytes))
            elif st.topic_id is not None and meta.exists():
                local, remote = meta.read().topic_id, Uuid.from_bytes(st.topic_id.bytes)
                if local != remote:
                    st.report.error = (f"{path} holds topic id {local}, the source's topic has "
                                       f"{remote} (recreated on the source?): not mirrored")

    def _start_logs(self, parts: list[_Partition], logs: LogDir, start_offset: str) -> None:
        """Each partition's log (loaded when its directory is newer than ``logs``); a new one
        starts at the source's log start offset (``start_offset`` earliest) or high watermark;
        then the topics' configs."""
        held = set(logs.partitions())
        for st in parts:
            if st.report.error:
                continue
            st.log = log = logs.log(*st.tp) if st.tp in held else logs.load_partition(*st.tp)
            if st.new:
                start = st.report.source_log_start_offset if start_offset == "earliest" \
                    else st.report.source_high_watermark
                if start != log.log_end_offset:
                    log.truncate_fully_and_start_at(start)
        self._apply_topic_configs(parts, logs)

    def _apply_topic_configs(self, parts: list[_Partition], logs: LogDir) -> None:
        """The source topics' overrides on the copy's topics (replacing the copy's: the
        source's are the truth), before any batch is appended (``segment.bytes`` and the
        like take effect from the first append)."""
        held = {st.report.topic for st in parts if st.log is not None}
        for topic, rep in self._topic_configs.items():
            if topic not in held or rep.error is not None:
                continue
            if logs.topic_overrides(topic) == rep.copied:
                continue
            try:
                logs.update_topic_config(topic, rep.copied)
            except (ConfigError, ValueError) as e:
                rep.error = f"not applied: {e}"
                rep.copied = {}

    # -- the loop --------------------------------------------------------------------------------

    def run(self) -> MirrorResult:
        """Mirror until done (or stopped); the log dir is closed before returning.

        Raises
        ------
        MirrorError
            The bootstrap server unreachable, an unknown topic, or no partition to mirror:
            nothing is written then. Errors of one partition are in its report instead.
        """
        try:
            parts = self._plan()
            self._parts = parts
            result = MirrorResult(self.bootstrap_server, str(self.directory), [],
                                  topic_configs=self._topic_configs)
            logs = self._open(parts)
            try:
                self._loop(parts, logs)
            except KeyboardInterrupt:
                result.interrupted = True
            finally:
                # (parts grows when a follow finds new partitions on the source)
                result.partitions[:] = [st.report for st in parts]
                for st in parts:
                    if st.log is not None:
                        self._finish_report(st, logs)
                logs.close()
            # stopped before the end: a follow always is; a run that reached its high
            # watermarks everywhere is complete however it was asked to stop
            result.interrupted = result.interrupted or (self._stop.is_set() and any(
                st.log is not None and not st.report.error and not st.done for st in parts))
            return result
        finally:
            for c in list(self._conns.values()):
                c.close()
            self._conns.clear()

    def _loop(self, parts: list[_Partition], logs: LogDir) -> None:
        self._next_discovery = time.monotonic() + self.metadata_max_age_ms / 1000.0
        while not self._stop.is_set():
            now = time.monotonic()
            if self.follow and now >= self._next_discovery:
                self._discover(parts, logs)
                self._next_discovery = now + self.metadata_max_age_ms / 1000.0
            active = [st for st in parts if st.log is not None and not st.report.error
                      and not st.done]
            if not active:
                return
            ready = [st for st in active if st.retry_at <= now]
            if not ready:
                # every partition is backing off: sleep until the first is due (or a stop, or
                # the next look for new partitions)
                due = min(st.retry_at for st in active)
                if self.follow:
                    due = min(due, self._next_discovery)
                self._stop.wait(max(0.0, due - now))
                continue
            stale = [st for st in ready if st.stale]
            if stale:
                self._refresh_leaders(stale)
                ready = [st for st in ready if not st.stale and not st.report.error]
            for leader, group in _by_leader(ready).items():
                self._fetch(leader, group, logs)
                if self._stop.is_set():
                    return

    def _fetch(self, leader: int, group: list[_Partition], logs: LogDir) -> None:
        """One fetch of the partitions ``leader`` leads, and its answers handled."""
        # a run that stops at the starting high watermark has nothing to wait for; a follow
        # long-polls as Kafka's fetcher does (replica.fetch.wait.max.ms)
        wait = self.max_wait_ms if self.follow else 0
        client = None
        try:
            client = self._leader_client(leader)
            answers = client.fetch(
                [FetchPartition(st.report.topic, st.topic_id, st.report.partition,
                                st.log.log_end_offset,  # type: ignore[union-attr]
                                _latest_epoch(st.log), st.max_bytes, st.leader_epoch)
                 for st in group],
                max_wait_ms=wait, max_bytes=self.fetch_max_bytes)
        except BrokerUnavailableError as e:
            # AbstractFetcherThread: a failed fetch request puts all its partitions in
            # partitionsWithError, retried after the backoff
            if client is not None:
                self._drop(client)
            for st in group:
                self._retry(st, str(e))
            return
        except MirrorError as e:
            for st in group:
                st.report.error = str(e)
            return
        by_tp = {(a.topic, a.partition): a for a in answers}
        for st in group:
            a = by_tp.get(st.tp)
            if a is None:
                st.report.error = "the source's fetch response left the partition out"
                continue
            try:
                self._handle(st, a, client, logs)
            except BrokerUnavailableError as e:  # (ListOffsets after OFFSET_OUT_OF_RANGE)
                self._drop(client)
                self._retry(st, str(e))
            except KafkaLogError as e:
                st.report.error = str(e)

    def _discover(self, parts: list[_Partition], logs: LogDir) -> None:
        """A follow's periodic look for partitions the source gained (new topics matching
        :attr:`topics`, partitions added to a topic): each is mirrored from its log start
        offset (every record of a partition that appeared during the run is new), as a
        consumer's pattern subscription picks topics up every ``metadata.max.age.ms``.
        A source that does not answer is asked again at the next look."""
        try:
            boot, _, topics = self._metadata(None)
            known = {st.tp for st in parts}
            new = self._partitions_of(self._select(topics, strict=False), boot, known,
                                      strict=False)
        except MirrorError as e:
            self.warn(f"looking for new partitions on the source failed: {e} (tried again in "
                      f"{self.metadata_max_age_ms / 1000:g} s)")
            return
        # (a partition whose offsets the source did not give is looked at again next time)
        new = [st for st in new if not st.report.error]
        if not new:
            return
        self._make_directories(new)
        self._start_logs(new, logs, "earliest")
        for st in new:
            rep = st.report
            self.warn(f"{rep.topic}-{rep.partition}: new on the source"
                      + (f" (topic id {rep.topic_id})" if rep.topic_id else "")
                      + (f", not mirrored: {rep.error}" if rep.error else
                         f": mirrored from its log start offset "
                         f"{rep.source_log_start_offset}"))
        parts.extend(new)

    # -- retries ---------------------------------------------------------------------------------

    def _retry(self, st: _Partition, why: str) -> None:
        """A retriable failure of ``st`` (:mod:`kafkalog.mirror.retry`): look its leader up
        again and fetch after the backoff, or give it up once it failed for longer than the
        retry timeout."""
        rep = st.report
        now = time.monotonic()
        rep.retries += 1
        st.last_failure = why
        if st.failing_since is None:
            st.failing_since = now
            self.warn(f"{rep.topic}-{rep.partition}: {why}; retrying (fetch offset "
                      f"{_log_end(st)})")
        failing = now - st.failing_since
        if self.retry_timeout is not None and failing >= self.retry_timeout:
            rep.error = (f"{why} (retried {st.attempts + 1} times for {failing:.1f} s; "
                         f"retry timeout {self.retry_timeout:g} s)")
            return
        st.stale = True
        st.retry_at = now + self._backoff.backoff(st.attempts) / 1000.0
        st.attempts += 1

    def _recovered(self, st: _Partition) -> None:
        """A fetch of ``st`` succeeded: the end of a run of failures, if there was one."""
        if st.failing_since is None:
            return
        rep = st.report
        node = self._brokers.get(st.leader)
        self.warn(f"{rep.topic}-{rep.partition}: fetching again from node {st.leader}"
                  + (f" ({node.address})" if node else "")
                  + f" at offset {_log_end(st)} after "
                  f"{time.monotonic() - st.failing_since:.1f} s")
        st.failing_since = None
        st.attempts = 0
        st.last_failure = ""

    def _refresh_leaders(self, stale: list[_Partition]) -> None:
        """Look up the leaders of the ``stale`` partitions (Kafka's consumer: a metadata update
        after a retriable fetch error). A topic whose id changed was deleted and recreated on
        the source: its partitions fail (the copy must not continue one topic's history with
        another's records)."""
        try:
            _, brokers, topics = self._metadata(sorted({st.report.topic for st in stale}))
        except MirrorError as e:
            for st in stale:
                self._retry(st, f"{st.last_failure}; then {e}" if st.last_failure
                            else str(e))
            return
        for st in stale:
            rep = st.report
            t = topics.get(rep.topic)
            if t is None or t.error == _UNKNOWN_TOPIC_OR_PARTITION:
                # deleted on the source (a consumer's pattern subscription drops it): the copy
                # keeps its records, a backup of what the topic held
                st.stale = False
                st.done = rep.source_deleted = True
                self.warn(f"{rep.topic}-{rep.partition}: the topic was deleted on the source; "
                          f"the copy keeps its records up to offset {_log_end(st)}")
                continue
            if not t.error and t.topic_id is not None \
                    and st.topic_id is not None and t.topic_id != st.topic_id:
                rep.error = (f"the source's topic {rep.topic!r} now has topic id "
                             f"{Uuid.from_bytes(t.topic_id.bytes)}, the copy holds "
                             f"{Uuid.from_bytes(st.topic_id.bytes)}: it was deleted and "
                             f"recreated on the source; not mirrored further (the copy keeps "
                             f"the old topic's records up to offset {_log_end(st)})")
                continue
            p = None if t.error else next(
                (p for p in t.partitions if p.partition == rep.partition), None)
            if p is None or p.error or p.leader < 0 or p.leader not in brokers:
                why = (f"Metadata: {error_name(t.error)}" if t.error else
                       "Metadata: the partition is unknown on the source" if p is None else
                       f"Metadata: no leader ({error_name(p.error)})" if p.error
                       or p.leader < 0 else
                       f"Metadata: leader node {p.leader} is not among the brokers listed")
                self._retry(st, why)
                continue
            st.stale = False
            st.leader = rep.leader = p.leader
            st.leader_epoch = p.leader_epoch

    def _handle(self, st: _Partition, a: FetchedPartition, client: KafkaClient,
                logs: LogDir) -> None:
        log = st.log
        assert log is not None
        rep = st.report
        if a.error == _OFFSET_OUT_OF_RANGE:
            self._out_of_range(st, client)
            return
        if a.error:
            why = (f"fetch at offset {log.log_end_offset}: {error_name(a.error)} from "
                   f"{client.address}")
            if error_is_retriable(a.error):
                self._retry(st, why)
            else:
                rep.error = why
            return
        self._recovered(st)
        rep.source_high_watermark = a.high_watermark
        rep.source_log_start_offset = a.log_start_offset
        if a.diverging_epoch is not None:
            self._diverged(st, DivergingEpoch(*a.diverging_epoch))
            return
        if a.records:
            self._append(st, a.records)
        st.idle = 0
        self._update_high_watermark(st, logs)
        if not self.follow and log.log_end_offset >= min(rep.target_offset, a.high_watermark):
            st.done = True

    def _diverged(self, st: _Partition, diverging: DivergingEpoch) -> None:
        log = st.log
        assert log is not None
        leo = log.log_end_offset
        local = ReplicaLog(log.log_start_offset, leo, tuple(log.leader_epoch_entries))
        state = offset_truncation_state(local, diverging, leo)
        reason = (f"diverging epoch {diverging.epoch} ending at offset {diverging.end_offset} "
                  f"(fetch at {leo} with last fetched epoch {local.latest_epoch}): "
                  f"OffsetTruncationState(offset={state.offset}, "
                  f"truncationCompleted={str(state.completed).lower()})")
        if state.offset < leo and log.truncate_to(state.offset):
            st.report.truncations.append(Truncation(leo, log.log_end_offset, reason))
            st.idle = 0
            return
        st.idle += 1
        if st.idle >= _MAX_IDLE_ROUNDS:
            st.report.error = f"the source keeps answering a {reason} that truncates nothing"

    def _out_of_range(self, st: _Partition, client: KafkaClient) -> None:
        """Kafka's ``fetchOffsetAndTruncate`` for a consumer: the source's offsets by
        ListOffsets (LATEST is its high watermark)."""
        log = st.log
        assert log is not None
        rep = st.report
        offsets = client.list_offsets({st.tp: EARLIEST})
        (e1, start), = offsets.values()
        (e2, end), = client.list_offsets({st.tp: LATEST}).values()
        if e1 or e2:
            why = f"ListOffsets error {error_name(e1 or e2)} from {client.address}"
            if error_is_retriable(e1 or e2):
                self._retry(st, why)
            else:
                rep.error = why
            return
        self._recovered(st)
        rep.source_log_start_offset, rep.source_high_watermark = start, end
        leo = log.log_end_offset
        if leo > end:
            log.truncate_to(end)
            rep.truncations.append(Truncation(
                leo, log.log_end_offset, f"offset out of range: the source's log ends at {end} "
                                         f"(its high watermark), below the local log end "
                                         f"offset {leo}"))
            st.idle = 0
        elif leo < start:
            gap = Gap(leo, start)
            rep.gaps.append(gap)
            self.warn(f"GAP: {rep.topic}-{rep.partition}: offsets {leo}..{start - 1} were "
                      f"deleted on the source before they were mirrored; the copy restarts at "
                      f"the source's log start offset {start}")
            if log.log_start_offset < leo:
                rep.truncations.append(Truncation(
                    leo, start, f"gap: the source's log starts at {start}, above the local log "
                                f"end offset {leo}: truncated fully, restarted at {start}"))
            log.truncate_fully_and_start_at(start)
            st.idle = 0
        else:
            st.idle += 1
            if st.idle >= _MAX_IDLE_ROUNDS:
                rep.error = (f"offset out of range fetching at {leo} with last fetched epoch "
                             f"{_latest_epoch(log)} though the source's log is {start}..{end}: "
                             f"the source does not know that epoch's end (Kafka's follower "
                             f"would retry forever)")

    def _append(self, st: _Partition, records: bytes) -> None:
        """Append the whole batches of a fetch answer (a partial last one is dropped: the next
        fetch starts at it)."""
        log = st.log
        assert log is not None
        rep = st.report
        sc = native_scan.scan_entries(np.frombuffer(records, np.uint8))
        n = sc["count"]
        leo = log.log_end_offset
        if n == 0:
            if len(records) >= st.max_bytes:
                # a batch larger than the partition limit and a broker that does not return
                # the first one whole (KIP-74): ask for more
                st.max_bytes = min(st.max_bytes * 2, 1 << 30)
            return
        last = sc["last_offsets"]
        # the batch holding the fetch offset comes whole: batches wholly below the log end
        # offset are not ours to append again (none unless the log start is mid-batch)
        i = int(np.searchsorted(last, leo, side="left"))
        if i == n:
            return
        begin = int(sc["positions"][i])
        end = int(sc["positions"][n - 1] + sc["sizes"][n - 1])
        first = int(sc["base_offsets"][i])
        if first < leo and log.log_start_offset == leo and log.size == 0:
            # Partition.appendRecordsToFollowerOrFutureReplica: the source's log start is in
            # the middle of a batch (DeleteRecords); the empty log restarts at the batch's base
            # offset, keeping the source's log start offset
            log.truncate_fully_and_start_at(first)
            keep_start = leo
        else:
            keep_start = None
        view = memoryview(records)
        try:
            log.append_batches(view[begin:end])
            appended = n
        except KafkaLogError:
            # the engine checks every batch before writing any; Kafka's follower then drops the
            # whole fetch, a backup keeps the sound batches before the bad one
            appended = i
            for j in range(i, n):
                pos = int(sc["positions"][j])
                try:
                    log.append_batches(view[pos:pos + int(sc["sizes"][j])])
                except KafkaLogError as e:
                    self._count(rep, sc, i, j)
                    offset = int(sc["base_offsets"][j])
                    raise MirrorError(
                        f"{rep.topic}-{rep.partition}: the fetched batch at offset {offset} "
                        f"was not appended (nothing from it on): {e.message}",
                        path=log.directory, offset=offset) from None
        if keep_start is not None:
            log.delete_records_before(keep_start)
        self._count(rep, sc, i, appended)

    @staticmethod
    def _count(rep: PartitionReport, sc: dict, i: int, j: int) -> None:
        """Batches ``i`` .. ``j - 1`` of the scan ``sc`` were appended."""
        if j <= i:
            return
        rep.batches += j - i
        rep.records += int(sc["record_counts"][i:j].sum())
        rep.bytes += int(sc["positions"][j - 1] + sc["sizes"][j - 1] - sc["positions"][i])

    def _update_high_watermark(self, st: _Partition, logs: LogDir) -> None:
        log = st.log
        assert log is not None
        hw = max(log.log_start_offset, min(st.report.source_high_watermark, log.log_end_offset))
        logs.set_high_watermark(*st.tp, hw)

    def _finish_report(self, st: _Partition, logs: LogDir) -> None:
        log = st.log
        assert log is not None
        rep = st.report
        rep.log_start_offset = log.log_start_offset
        rep.log_end_offset = log.log_end_offset
        rep.high_watermark = logs.high_watermark(*st.tp)


def _ms_property(props: Mapping[str, str], name: str, default: int) -> int:
    raw = props.get(name)
    if raw is None:
        return default
    try:
        value = int(str(raw).strip())
    except ValueError:
        value = -1
    if value < 0:
        raise ConfigError(f"{name}: expected a number of milliseconds >= 0, found {raw!r}")
    return value


def _log_end(st: _Partition) -> int:
    return -1 if st.log is None else st.log.log_end_offset


def _latest_epoch(log: Log | None) -> int:
    assert log is not None
    entries = log.leader_epoch_entries
    return entries[-1][0] if entries else -1


def _by_leader(parts: Sequence[_Partition]) -> dict[int, list[_Partition]]:
    out: dict[int, list[_Partition]] = {}
    for st in parts:
        if not st.report.error:
            out.setdefault(st.leader, []).append(st)
    return out


def mirror(bootstrap_server: str, directory: str | os.PathLike[str], **kw: Any
           ) -> MirrorResult:
    """Mirror topics of ``bootstrap_server`` into the log dir ``directory`` (see :class:`Mirror`
    for the keywords) and return the per-partition reports.

    >>> r = mirror("127.0.0.1:9092", "/backup", topics=["orders"])  # doctest: +SKIP
    >>> r.ok, r.gaps                                                # doctest: +SKIP
    (True, [])
    """
    return Mirror(bootstrap_server, directory, **kw).run()
