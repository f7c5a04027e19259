"""``GroupMetadataManager``: the group coordinator's storage in ``__consumer_offsets`` of a log dir.

What Kafka's ``GroupMetadataManager`` (core, 3.x) and ``GroupCoordinatorShard`` /
``OffsetMetadataManager`` (group-coordinator, 4.x) keep, without the network:

* **Where.** A group lives in partition ``offsets_partition(group_id, N)`` of
  ``__consumer_offsets``, ``N`` being the topic's partition count when it was created here, else
  ``offsets.topic.num.partitions`` (the log dir's setting; Kafka's default 50). The
  topic is created when absent with Kafka's topic configs (``cleanup.policy=compact``,
  ``segment.bytes`` = ``offsets.topic.segment.bytes``, 100 MiB); compaction itself is the log
  cleaner's business. Every partition present is loaded; a write for a group whose partition
  is not in this log dir raises :class:`~kafkalog.groups.errors.NotCoordinatorError`.
* **Load = replay.** At open each partition is read from its log start to its end and every
  record is applied in offset order, as the broker's loader does: an offset commit stores the
  offset (a tombstone deletes it); a group metadata record replaces the group (a tombstone
  removes it); a commit in a *transactional* batch waits, per producer id, for the transaction's
  end marker: COMMIT makes it visible (unless a later plain commit of the same partition was
  written after it: the higher record offset wins), ABORT drops it
  (``OffsetMetadataManager.replay`` / ``replayEndTransactionMarker``). Offsets committed for a
  group without metadata make a "simple" group (no protocol type).
* **Writes** append one batch per operation, built as Kafka 4.x's coordinator runtime builds it
  (``CoordinatorRuntime``: CreateTime = now on every record, base sequence 0, the producer id and
  epoch and the transactional flag of a TxnOffsetCommit, the partition's leader epoch stamped as
  a leader does, ``offsets.topic.compression.codec``), then replay what they wrote: memory never
  differs from what a reload would build. ``record_format="3.x"`` writes group metadata batches
  without a base sequence, as the 3.x (Scala) coordinator did; record bytes are the same.
* **Catch-up.** Records appended by someone else (transaction markers written by a
  transaction coordinator) are replayed by :meth:`refresh`, which every read calls for the
  group's partition.
* **Expiry** (:meth:`expire_offsets`): Kafka's ``cleanupGroupMetadata`` with
  ``offsets.retention.minutes`` (see the method).

Threads: not thread-safe; one owner (a coordinator, a CLI command) drives it.

Example
-------
>>> import tempfile
>>> from kafkalog import LogDir, ManualClock
>>> with LogDir.open(tempfile.mkdtemp(), {"offsets.topic.num.partitions": "3"},
...                  clock=ManualClock(1_700_000_000_000)) as d:
...     m = GroupMetadataManager(d)
...     _ = m.commit_offsets("app", {("orders", 0): 42, ("orders", 1): 7})
...     m.fetch_offsets("app"), m.list_groups(), m.partition_for("app")
({('orders', 0): 42, ('orders', 1): 7}, ['app'], 0)
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..clock import Clock
from ..decoders.offsets import CODEC
from ..errors import CorruptRecordError
from ..log import Log
from ..log_dir import LogDir
from ..native.scan import scan_entries
from ..records.batch import CONTROL_FLAG_MASK, TRANSACTIONAL_FLAG_MASK, iter_batches
from ..records.builder import encode_batch
from ..records.columnar import decode_columns
from ..records.record import Record
from . import consumer_protocol as cp
from .config import OFFSETS_TOPIC, GroupConfig, offsets_topic_config
from .errors import GroupIdNotFoundError, NonEmptyGroupError, NotCoordinatorError
from .modern import records as cgr
from .modern.consumer_group import ConsumerGroup
from .partitioner import offsets_partition
from .records import (
    GroupMetadata,
    GroupMetadataRecord,
    MemberMetadata,
    OffsetAndMetadata,
    OffsetCommit,
    decode,
    group_metadata_record,
    group_metadata_tombstone,
    offset_commit_record,
    offset_commit_tombstone,
)
from .streams import records as sgr
from .streams.streams_group import StreamsGroup

__all__ = ["GroupMetadataManager", "GroupDescription", "MemberDescription", "ExpirationView",
           "OffsetsTopicMetadataError", "committed_offsets"]

logger = logging.getLogger(__name__)

TopicPartition = tuple[str, int]

#: ``Log.read`` chunk when replaying
_READ_BYTES = 8 << 20


@functools.cache
def _consumer_group_keys() -> Any:
    import pyarrow as pa

    return pa.array([t.to_bytes(2, "big") for t in sorted(_ORDERED_TYPES)], pa.binary())


#: record types applied one by one in offset order (KIP-848 consumer groups, KIP-1071 streams
#: groups): their effect is not a function of each key's last record alone
_ORDERED_TYPES = cgr.CONSUMER_GROUP_TYPES | sgr.STREAMS_GROUP_TYPES


@functools.lru_cache(maxsize=1 << 16)
def _partition_of(group_id: str, num_partitions: int) -> int:
    # (memoised: every request of a group asks several times, and Java's String.hashCode
    # costs microseconds in Python)
    return offsets_partition(group_id, num_partitions)


#: stretches of other records between consumer group records shorter than this are applied
#: record by record rather than folded
_FOLD_MIN_ROWS = 256
#: runs of plain batches smaller than this are applied record by record: the column-wise fold
#: costs ~1 ms of fixed overhead (Arrow's group-by), what a coordinator's single write replays
_FOLD_MIN_BYTES = 64 * 1024


class OffsetsTopicMetadataError(CorruptRecordError):
    """A ``__consumer_offsets`` record that does not decode (file, offset and reason given)."""


@dataclass(frozen=True)
class MemberDescription:
    """One member of a described group; ``subscription``/``assignment`` decoded when the group
    uses the consumer protocol and the bytes parse (else None, the raw bytes kept)."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    subscription: cp.Subscription | None
    assignment: cp.Assignment | None
    raw_subscription: bytes
    raw_assignment: bytes


@dataclass(frozen=True)
class GroupDescription:
    """A group as its last metadata record describes it (``state`` ``Stable`` with members,
    ``Empty`` without, as Kafka's loader sets it)."""

    group_id: str
    state: str
    protocol_type: str
    protocol: str | None
    generation: int
    leader: str | None
    current_state_timestamp: int | None
    members: tuple[MemberDescription, ...]


@dataclass(frozen=True)
class ExpirationView:
    """What offset expiry needs to know of a group (``ClassicGroup.offsetExpirationCondition``).

    ``state`` a classic group state name; ``protocol_type`` None for a simple group;
    ``subscribed_topics`` None when unknown.
    """

    state: str
    protocol_type: str | None
    current_state_timestamp: int | None
    subscribed_topics: frozenset[str] | None
    #: a KIP-848 consumer or KIP-1071 streams group: retention counts from the commit time in
    #: every state (``ConsumerGroup``/``StreamsGroup.offsetExpirationCondition``), and the
    #: group subscribes to ``subscribed_topics`` exactly
    modern: bool = False

    def expiry_base(self) -> Callable[[OffsetAndMetadata], int] | None:
        """The timestamp retention counts from, or None when the group's offsets never expire
        in this state."""
        if self.protocol_type is None or self.modern:
            return lambda om: om.commit_timestamp
        if self.state == "Empty":
            ts = self.current_state_timestamp
            return (lambda om: om.commit_timestamp) if ts is None else (lambda om: ts)
        if self.protocol_type == cp.PROTOCOL_TYPE and self.subscribed_topics is not None \
                and self.state == "Stable":
            return lambda om: om.commit_timestamp
        return None

    def is_subscribed(self, topic: str) -> bool:
        """``ClassicGroup.isSubscribedToTopic`` (a modern group: its topics)."""
        if self.modern:
            return topic in (self.subscribed_topics or ())
        if self.subscribed_topics is None:
            return self.protocol_type == cp.PROTOCOL_TYPE
        return topic in self.subscribed_topics


def subscribed_topics(gm: GroupMetadata | None) -> frozenset[str] | None:
    """``ClassicGroup.computeSubscribedTopics`` from the persisted members."""
    if gm is None:
        return None
    return cp.group_subscribed_topics(gm.protocol_type, gm.protocol,
                                      [m.subscription for m in gm.members])


def metadata_too_large(metadata: str, config: GroupConfig) -> bool:
    """``OffsetMetadataManager.isMetadataInvalid``: Java's ``String.length()`` (UTF-16 units)
    above ``offset.metadata.max.bytes``."""
    units = len(metadata) if metadata.isascii() else \
        len(metadata.encode("utf-16-le", "surrogatepass")) // 2
    return units > config.offset_metadata_max_bytes


def _decode_at(key: bytes | None, value: bytes | None, offset: int, log: Log
               ) -> OffsetCommit | GroupMetadataRecord | None:
    try:
        return decode(key, value, offset)
    except CorruptRecordError as e:
        raise OffsetsTopicMetadataError(
            f"record does not decode as a group coordinator record: {e.message}",
            path=log.directory, offset=offset) from None


def persisted_view(gm: GroupMetadata | None) -> ExpirationView:
    """The view of a group as loaded (members -> Stable, none -> Empty)."""
    if gm is None:
        return ExpirationView("Empty", None, None, None)
    return ExpirationView("Stable" if gm.members else "Empty", gm.protocol_type or None,
                          gm.current_state_timestamp, subscribed_topics(gm))


class GroupMetadataManager:
    """The groups and committed offsets of a log dir's ``__consumer_offsets``.

    Parameters
    ----------
    log_dir:
        An open :class:`~kafkalog.log_dir.LogDir` (read-only is fine for reading).
    config:
        Group coordinator settings (:class:`GroupConfig` or broker property names); default:
        the log dir's ``group_properties`` (``offsets.topic.num.partitions`` ...).
    clock:
        Time source for commit timestamps and expiry (default: the log dir's clock).
    record_format:
        ``"4.x"`` (default) or ``"3.x"``: the batch framing of group metadata (see the module
        docstring). Record keys and values are the same in both.
    """

    def __init__(self, log_dir: LogDir, *, config: GroupConfig | Mapping[str, Any] | None = None,
                 clock: Clock | None = None, record_format: str = "4.x") -> None:
        if config is None:
            props = dict(log_dir.group_properties)
            props.setdefault("offsets.topic.num.partitions",
                             str(log_dir.offsets_topic_num_partitions))
            config = GroupConfig.from_properties(props)
        self._setup(config, clock if clock is not None else log_dir._clock, record_format)
        self.log_dir: LogDir | None = log_dir
        # Kafka hashes over the existing topic's partition count (the setting only sizes a new
        # topic); a broker-written tree may hold only some partitions: the setting applies
        declared = log_dir.declared_partitions(OFFSETS_TOPIC)
        if declared is not None:
            self.num_partitions = declared
        self._ensure_topic()
        for p, log in sorted(self._logs.items()):
            self._replay_log(p, log)

    @classmethod
    def over_logs(cls, logs: Mapping[int, Log], *,
                  config: GroupConfig | Mapping[str, Any] | None = None) -> GroupMetadataManager:
        """A manager over already-open ``__consumer_offsets`` partition logs (partition number
        -> ``Log``), without a log dir: for readers that found partition directories
        themselves. Writes need the group's partition among ``logs``."""
        self = cls.__new__(cls)
        from ..clock import SystemClock

        self._setup(config, SystemClock(), "4.x")
        self.log_dir = None
        self._logs = dict(logs)
        for p, log in sorted(self._logs.items()):
            self._replay_log(p, log)
        return self

    def _setup(self, config: GroupConfig | Mapping[str, Any] | None, clock: Clock,
               record_format: str) -> None:
        if record_format not in ("3.x", "4.x"):
            raise ValueError(f"record_format must be '3.x' or '4.x' (found {record_format!r})")
        if not isinstance(config, GroupConfig):
            config = GroupConfig.from_properties(config)
        self.config = config
        self.clock: Clock = clock
        self.record_format = record_format
        self.num_partitions = config.offsets_topic_num_partitions
        #: group id -> its last metadata (None: a simple group, known from offsets only)
        self._groups: dict[str, GroupMetadata | None] = {}
        self._offsets: dict[str, dict[TopicPartition, OffsetAndMetadata]] = {}
        #: producer id -> group -> partition -> pending transactional commit
        self._pending: dict[int, dict[str, dict[TopicPartition, OffsetAndMetadata]]] = {}
        self._open_txns: dict[str, set[int]] = {}
        #: __consumer_offsets partition -> next offset to replay
        self._applied: dict[int, int] = {}
        self._logs: dict[int, Log] = {}
        #: KIP-848 consumer groups, as their records (types 3-8) left them
        self._consumer_groups: dict[str, ConsumerGroup] = {}
        #: KIP-1071 streams groups, as their records (types 17, 19-23) left them
        self._streams_groups: dict[str, StreamsGroup] = {}

    # -- topic ----------------------------------------------------------------------------------

    def _ensure_topic(self) -> None:
        log_dir = self.log_dir
        if log_dir is None:
            return
        present = [p for t, p in log_dir.partitions() if t == OFFSETS_TOPIC]
        if not present and not log_dir.read_only:
            log_dir.create_topic(OFFSETS_TOPIC, self.num_partitions,
                                 offsets_topic_config(self.config))
            present = list(range(self.num_partitions))
        for p in present:
            self._logs[p] = log_dir.log(OFFSETS_TOPIC, p)

    @property
    def _root(self) -> Any:
        return None if self.log_dir is None else self.log_dir.root

    def partition_for(self, group_id: str) -> int:
        """The group's ``__consumer_offsets`` partition (:func:`offsets_partition`)."""
        return _partition_of(group_id, self.num_partitions)

    def partitions(self) -> list[int]:
        """The ``__consumer_offsets`` partitions of this log dir."""
        return sorted(self._logs)

    def owns(self, group_id: str) -> bool:
        """Whether the group's partition is in this log dir (Kafka: this broker coordinates)."""
        return self.partition_for(group_id) in self._logs

    def _log_for(self, group_id: str) -> tuple[int, Log]:
        p = self.partition_for(group_id)
        log = self._logs.get(p)
        if log is None:
            raise NotCoordinatorError(
                f"group {group_id!r} belongs to {OFFSETS_TOPIC}-{p}, which is not in this log dir",
                path=self._root)
        return p, log

    # -- replay ---------------------------------------------------------------------------------

    def refresh(self, partition: int | None = None) -> None:
        """Replay what was appended to ``__consumer_offsets`` since the last replay (one
        partition, or all): records written by another writer, e.g. transaction markers."""
        for p in ([partition] if partition is not None else sorted(self._logs)):
            log = self._logs.get(p)
            if log is not None and log.log_end_offset != self._applied.get(p, 0):
                self._replay_log(p, log)

    def _replay_log(self, partition: int, log: Log) -> None:
        """Apply ``[applied, log end)`` of one partition, in offset order.

        Runs of plain batches (v2, neither transactional nor control) are decoded column-wise
        and folded per key (last value, any tombstone, last non-null offset) with Arrow's
        group-by: applying that summary is what applying the records one by one does, since
        within such a run every record's effect depends only on the last record of its key (and
        a group's existence on the order of its metadata records and commits, which the summary
        keeps). Transactional and control batches, and legacy entries, go record by record.
        """
        start = max(self._applied.get(partition, 0), log.log_start_offset)
        end = log.log_end_offset
        offset = start
        while offset < end:
            data = log.read(offset, _READ_BYTES)
            if not data:
                break
            buf = np.frombuffer(data, np.uint8)
            sc = scan_entries(buf)
            n = sc["count"]
            if n == 0:
                break
            plain = (sc["magics"][:n] == 2) & (
                (sc["attributes"][:n] & (TRANSACTIONAL_FLAG_MASK | CONTROL_FLAG_MASK)) == 0)
            i = 0
            while i < n:
                j = i
                while j < n and plain[j] == plain[i]:
                    j += 1
                p0 = int(sc["positions"][i])
                p1 = int(sc["positions"][j - 1] + sc["sizes"][j - 1])
                if plain[i] and p1 - p0 >= _FOLD_MIN_BYTES:
                    self._replay_plain(data, p0, p1, offset, log)
                else:
                    for batch in iter_batches(data[p0:p1]):
                        if batch.last_offset >= offset:
                            self._replay_batch(batch, log, offset)
                i = j
            last = int(sc["last_offsets"][n - 1]) + 1
            if last <= offset:
                break
            offset = last
        self._applied[partition] = end

    def _replay_plain(self, data: bytes, p0: int, p1: int, start: int, log: Log) -> None:
        """Fold a run of plain batches into the state (see :meth:`_replay_log`)."""
        import pyarrow.compute as pc

        cols = decode_columns(data, start=p0, end=p1, start_offset=start, skip_control=True)
        if not cols.record_count:
            return
        t = cols.to_arrow(["key", "value", "offset"])
        if t["key"].null_count:
            first = int(pc.min(pc.filter(t["offset"], pc.is_null(t["key"]))).as_py())
            raise OffsetsTopicMetadataError(
                "record has no key (every group coordinator record has one)",
                path=log.directory, offset=first)
        # KIP-848 consumer group records are applied one by one, in offset order: their effect
        # is not a function of each key's last record alone (a member's first record creates
        # the group, whatever its later tombstones say). The stretches of other records
        # between them (offset commits, the bulk of a log) are folded when long, else applied
        # one by one too: the order between the two kinds is kept exactly.
        modern_rows = pc.is_in(pc.binary_slice(t["key"], 0, 2), value_set=_consumer_group_keys())
        if not pc.any(modern_rows).as_py():
            self._fold(t, log)
            return
        flags = modern_rows.to_numpy(zero_copy_only=False)
        n = len(flags)
        i = 0
        while i < n:
            j = i
            while j < n and flags[j] == flags[i]:
                j += 1
            part = t.slice(i, j - i)
            if flags[i] or j - i < _FOLD_MIN_ROWS:
                for key, value, off in zip(part["key"].to_pylist(), part["value"].to_pylist(),
                                           part["offset"].to_pylist()):
                    self._replay_record(key, value, off, -1, log)
            else:
                self._fold(part, log)
            i = j

    def _fold(self, t: Any, log: Log) -> None:
        """Apply a table of plain records (key, value, offset), none of them a consumer group
        record, by their per-key summary (see :meth:`_replay_log`)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        nn = pc.if_else(pc.is_null(t["value"]), pa.scalar(None, pa.int64()), t["offset"])
        summary = t.append_column("nn", nn).group_by("key", use_threads=False).aggregate([
            ("value", "last", pc.ScalarAggregateOptions(skip_nulls=False)),
            ("offset", "max"), ("nn", "max"),
            ("value", "count", pc.CountOptions(mode="only_null"))])
        gm_last: dict[str, tuple[GroupMetadataRecord, int]] = {}
        commit_nn: dict[str, int] = {}
        for key, value, off, nn_off, nulls in zip(
                summary["key"].to_pylist(), summary["value_last"].to_pylist(),
                summary["offset_max"].to_pylist(), summary["nn_max"].to_pylist(),
                summary["value_count"].to_pylist()):
            rec = _decode_at(key, value, off, log)
            if isinstance(rec, OffsetCommit):
                group, tp = rec.group, (rec.topic, rec.partition)
                if nulls:
                    # a tombstone in the run dropped any pending transactional commit of it
                    for pid in self._open_txns.get(group, ()):
                        self._pending.get(pid, {}).get(group, {}).pop(tp, None)
                mine = self._offsets.get(group)
                if rec.value is not None:
                    self._offsets.setdefault(group, {})[tp] = rec.value
                elif mine is not None:
                    mine.pop(tp, None)
                    if not mine:
                        del self._offsets[group]
                if nn_off is not None:
                    commit_nn[group] = max(nn_off, commit_nn.get(group, -1))
            elif isinstance(rec, GroupMetadataRecord):
                gm_last[rec.group] = (rec, off)
        # a group exists after the run as it would after its records one by one: its last
        # metadata record decides, unless a commit came after a tombstone (a simple group)
        for group in set(gm_last) | set(commit_nn):
            last = gm_last.get(group)
            if last is None:
                self._groups.setdefault(group, None)
            elif last[0].value is not None:
                self._groups[group] = last[0].value
            elif commit_nn.get(group, -1) > last[1]:
                self._groups[group] = None
            else:
                self._groups.pop(group, None)

    def _replay_batch(self, batch: Any, log: Log, start: int) -> None:
        if batch.is_control:
            marker = batch.end_txn_marker() if batch.magic >= 2 else None
            if marker is not None:
                self._end_transaction(batch.producer_id, marker.type == "COMMIT")
            return
        transactional = batch.magic >= 2 and batch.is_transactional
        pid = batch.producer_id if transactional else -1
        for r in batch:
            if r.offset >= start:      # a read starts at the batch holding ``start``
                self._replay_record(r.key, r.value, r.offset, pid, log)

    def _replay_record(self, key: bytes | None, value: bytes | None, offset: int,
                       producer_id: int, log: Log) -> None:
        if key is not None and len(key) >= 2 \
                and int.from_bytes(key[:2], "big", signed=True) in _ORDERED_TYPES:
            # a consumer or streams group record: decoded once, there (decode() would decode
            # it only to answer None)
            self._replay_consumer_group(key, value, offset, log)
            return
        rec = _decode_at(key, value, offset, log)
        if isinstance(rec, OffsetCommit):
            self._replay_offset(rec, producer_id)
        elif isinstance(rec, GroupMetadataRecord):
            if rec.value is None:
                self._groups.pop(rec.group, None)
            else:
                self._groups[rec.group] = rec.value
        elif rec is None:
            self._replay_consumer_group(key, value, offset, log)

    def _replay_consumer_group(self, key: bytes | None, value: bytes | None, offset: int,
                               log: Log) -> None:
        """A record of a type :func:`decode` skips: KIP-848 consumer group and KIP-1071
        streams group records are applied, the rest (share groups, regular expressions)
        ignored."""
        rtype = None if key is None or len(key) < 2 else \
            int.from_bytes(key[:2], "big", signed=True)
        if rtype not in _ORDERED_TYPES:
            return
        try:
            rec = CODEC.decode(bytes(key), None if value is None else bytes(value))
        except CorruptRecordError as e:
            raise OffsetsTopicMetadataError(
                f"record does not decode as a group coordinator record: {e.message}",
                path=log.directory, offset=offset) from None
        group_id = rec["key"]["groupId"]
        if rtype in sgr.STREAMS_GROUP_TYPES:
            try:
                sgr.replay(self._streams_groups, rec)
            except sgr.StreamsReplayError as e:
                raise OffsetsTopicMetadataError(
                    f"streams group record refused by Kafka's replay: {e}",
                    path=log.directory, offset=offset) from None
            deleted = rtype == sgr.METADATA and rec["value"] is None
        else:
            cgr.replay(self._consumer_groups, rec)
            deleted = rec["type"] == cgr.GROUP_EPOCH and rec["value"] is None
        if deleted and self._groups.get(group_id, 0) is None \
                and not self._offsets.get(group_id):
            # the deleted group's offsets made a "simple" group entry: gone with it
            del self._groups[group_id]

    def _replay_offset(self, rec: OffsetCommit, producer_id: int) -> None:
        self._put_offset(rec.group, (rec.topic, rec.partition), rec.value, producer_id)

    def _put_offset(self, group: str, tp: TopicPartition, value: OffsetAndMetadata | None,
                    producer_id: int) -> None:
        """One offset commit record (``value`` None: a tombstone) applied to the state."""
        if value is not None:
            self._groups.setdefault(group, None)          # a simple group, if new
            if producer_id < 0:
                self._offsets.setdefault(group, {})[tp] = value
            else:
                self._pending.setdefault(producer_id, {}).setdefault(group, {})[tp] = value
                self._open_txns.setdefault(group, set()).add(producer_id)
            return
        offsets = self._offsets.get(group)
        if offsets is not None:
            offsets.pop(tp, None)
            if not offsets:
                del self._offsets[group]
        for pid in self._open_txns.get(group, ()):
            self._pending.get(pid, {}).get(group, {}).pop(tp, None)

    def _end_transaction(self, producer_id: int, commit: bool) -> None:
        pending = self._pending.pop(producer_id, None)
        if pending is None:
            return
        for group in pending:
            txns = self._open_txns.get(group)
            if txns is not None:
                txns.discard(producer_id)
                if not txns:
                    del self._open_txns[group]
        if not commit:
            return
        for group, offsets in pending.items():
            mine = self._offsets.setdefault(group, {})
            for tp, om in offsets.items():
                cur = mine.get(tp)
                if cur is None or om.record_offset > cur.record_offset:
                    mine[tp] = om
            if not mine:
                del self._offsets[group]

    # -- writes -------------------------------------------------------------------------------

    def _leader_epoch(self, log: Log) -> int:
        entries = log.leader_epoch_entries
        return entries[-1][0] if entries else 0

    def _append(self, group_id: str, records: list[tuple[bytes, bytes | None]], *,
                producer_id: int = -1, producer_epoch: int = -1, base_sequence: int = 0,
                offsets: Sequence[tuple[TopicPartition, OffsetAndMetadata]] | None = None
                ) -> int:
        """Append ``records`` as one batch to the group's partition and apply it; return the
        base offset. ``offsets``, when the records are ``group_id``'s offset commits (their
        values, in order), spares decoding them back: they are applied as replay would apply
        the bytes."""
        partition, log = self._log_for(group_id)
        self.refresh(partition)
        now = self.clock.milliseconds()
        base = log.log_end_offset
        data = encode_batch(
            [Record(k, v, now) for k, v in records], base_offset=base,
            compression=self.config.offsets_topic_compression, producer_id=producer_id,
            producer_epoch=producer_epoch, base_sequence=base_sequence,
            transactional=producer_id >= 0, partition_leader_epoch=self._leader_epoch(log))
        log.append_batches(data)
        if offsets is None or self._applied.get(partition) != base:
            self.refresh(partition)
            return base
        for i, (tp, v) in enumerate(offsets):
            # (positional: dataclasses.replace costs 4x more, and a consumer commits
            # thousands of partitions at once)
            self._put_offset(group_id, tp, OffsetAndMetadata(
                v.offset, v.leader_epoch, v.metadata, v.commit_timestamp, v.expire_timestamp,
                base + i), producer_id)
        self._applied[partition] = log.log_end_offset
        return base

    def commit_offsets(
        self,
        group_id: str,
        offsets: Mapping[TopicPartition, int | OffsetAndMetadata],
        *,
        metadata: str = "",
        leader_epoch: int = -1,
        commit_timestamp: int | None = None,
        expire_timestamp: int | None = None,
        producer_id: int = -1,
        producer_epoch: int = -1,
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        """Commit offsets for ``group_id`` (one batch; Kafka's OffsetCommit storage).

        ``offsets`` maps ``(topic, partition)`` to an offset (``metadata``, ``leader_epoch``,
        ``expire_timestamp`` apply to all) or to an :class:`OffsetAndMetadata` (its own fields;
        its ``commit_timestamp`` when set). ``commit_timestamp`` defaults to the clock's now.
        ``producer_id >= 0`` makes it a TxnOffsetCommit: the offsets stay pending until the
        producer's transaction marker (:meth:`end_transaction`). Returns what was written.

        Raises
        ------
        NotCoordinatorError
            The group's ``__consumer_offsets`` partition is not in this log dir.
        ValueError
            A negative offset, metadata longer than ``offset.metadata.max.bytes``, a bad key.
        """
        now = self.clock.milliseconds()
        ts = now if commit_timestamp is None else int(commit_timestamp)
        written: dict[TopicPartition, OffsetAndMetadata] = {}
        records = []
        for tp, v in offsets.items():
            try:
                topic, partition = tp
            except (TypeError, ValueError):
                raise ValueError(f"offset keys must be (topic, partition) pairs (found {tp!r})"
                                 ) from None
            if isinstance(v, OffsetAndMetadata):
                om = v if v.commit_timestamp != -1 else _with(v, commit_timestamp=ts)
            else:
                if isinstance(v, bool) or not isinstance(v, int):
                    raise ValueError(f"offset of {topic}-{partition} must be an integer "
                                     f"(found {v!r})")
                om = OffsetAndMetadata(v, leader_epoch, metadata, ts, expire_timestamp)
            if om.offset < 0:
                raise ValueError(f"offset of {topic}-{partition} must be >= 0 (found {om.offset})")
            if metadata_too_large(om.metadata, self.config):
                raise ValueError(
                    f"metadata of {topic}-{partition} is {len(om.metadata)} characters (expected "
                    f"at most offset.metadata.max.bytes = {self.config.offset_metadata_max_bytes})")
            written[(topic, partition)] = om
            records.append(offset_commit_record(group_id, topic, partition, om))
        if records:
            self._append(group_id, records, producer_id=producer_id, producer_epoch=producer_epoch,
                         offsets=list(written.items()))
        return written

    def end_transaction(self, producer_id: int, producer_epoch: int, commit: bool, *,
                        coordinator_epoch: int = 0) -> list[int]:
        """Write the COMMIT/ABORT marker of ``producer_id`` to every ``__consumer_offsets``
        partition where it has pending offsets (what the transaction coordinator's
        WriteTxnMarkers does), and apply it. Returns the partitions written."""
        written = []
        groups = list(self._pending.get(producer_id, {}))
        parts = sorted({self.partition_for(g) for g in groups} & set(self._logs))
        for p in parts:
            log = self._logs[p]
            self.refresh(p)
            if commit:
                log.commit_transaction(producer_id, producer_epoch, coordinator_epoch)
            else:
                log.abort_transaction(producer_id, producer_epoch, coordinator_epoch)
            self.refresh(p)
            written.append(p)
        return written

    def store_group(self, metadata: GroupMetadata) -> int:
        """Persist a classic group's metadata record (what JoinGroup/SyncGroup completion and
        static member replacement write). Returns the record's offset."""
        key, value = group_metadata_record(metadata)
        return self._append(metadata.group_id, [(key, value)],
                            base_sequence=-1 if self.record_format == "3.x" else 0)

    def delete_group(self, group_id: str, *, force: bool = False) -> int:
        """Delete a group: tombstones for its committed (and pending transactional) offsets,
        then for its metadata, in one batch (``GroupCoordinatorShard.deleteGroups``). Returns
        the number of tombstones written.

        Raises
        ------
        GroupIdNotFoundError
            No such group.
        NonEmptyGroupError
            The group's last metadata lists members (Kafka refuses to delete a group that is
            not Empty); ``force=True`` deletes it anyway (an offline tree whose members are gone).
        """
        self.refresh(self.partition_for(group_id) if self.owns(group_id) else None)
        modern = self._consumer_groups.get(group_id) or self._streams_groups.get(group_id)
        if modern is not None:
            # (Consumer/StreamsGroup.validateDeleteGroup: only an Empty group)
            if modern.members and not force:
                raise NonEmptyGroupError(
                    f"group {group_id!r} is not empty ({len(modern.members)} members at group "
                    f"epoch {modern.group_epoch})", path=self._root)
            records = self._delete_records(group_id)[:-1] \
                + self.modern_group_tombstones(group_id)
            self._append(group_id, records)
            return len(records)
        if group_id not in self._groups:
            raise GroupIdNotFoundError(f"group {group_id!r} does not exist",
                                       path=self._root)
        gm = self._groups[group_id]
        if gm is not None and gm.members and not force:
            raise NonEmptyGroupError(
                f"group {group_id!r} is not empty ({len(gm.members)} members in generation "
                f"{gm.generation})", path=self._root)
        records = self._delete_records(group_id)
        self._append(group_id, records, base_sequence=-1 if self.record_format == "3.x" else 0)
        return len(records)

    def modern_group_tombstones(self, group_id: str) -> list[tuple[bytes, bytes | None]]:
        """The tombstones that delete the KIP-848 consumer or KIP-1071 streams group
        ``group_id`` (its ``createGroupTombstoneRecords``; its offsets not included); [] for
        another group."""
        consumer = self._consumer_groups.get(group_id)
        if consumer is not None:
            return cgr.group_tombstones(consumer)
        streams = self._streams_groups.get(group_id)
        return [] if streams is None else sgr.group_tombstones(streams)

    def _delete_records(self, group_id: str) -> list[tuple[bytes, bytes | None]]:
        records: list[tuple[bytes, bytes | None]] = []
        committed = self._offsets.get(group_id, {})
        for t, p in sorted(committed):
            records.append(offset_commit_tombstone(group_id, t, p))
        pending: set[TopicPartition] = set()
        for pid in sorted(self._open_txns.get(group_id, ())):
            pending.update(self._pending.get(pid, {}).get(group_id, {}))
        for t, p in sorted(pending - set(committed)):
            records.append(offset_commit_tombstone(group_id, t, p))
        records.append(group_metadata_tombstone(group_id))
        return records

    def delete_offsets(self, group_id: str, partitions: Iterable[TopicPartition]) -> int:
        """Tombstones for some committed offsets (OffsetDelete; the caller checks that the
        group does not subscribe to their topics). Returns the number written."""
        self.refresh(self.partition_for(group_id) if self.owns(group_id) else None)
        records = []
        for t, p in partitions:
            if (t, p) in self._offsets.get(group_id, {}) or self.has_pending(group_id, t, p):
                records.append(offset_commit_tombstone(group_id, t, p))
        if records:
            self._append(group_id, records)
        return len(records)

    def expire_offsets(self, now: int | None = None, *,
                       views: Callable[[str], ExpirationView | None] | None = None,
                       ) -> list[tuple[str, str, int]]:
        """Kafka's periodic ``cleanupGroupMetadata`` with ``offsets.retention.minutes``.

        For each group, offsets of topics the group does not subscribe to expire when
        ``now >= expire_timestamp`` (commits that set one) or when ``offsets.retention.ms``
        passed since the base time: the time the group became Empty (or the commit time with
        no state timestamp) for an Empty group, the commit time for a Stable consumer group and
        a simple group; other states expire nothing. A KIP-848 consumer group or KIP-1071
        streams group counts from the commit time in any state and keeps the offsets of the
        topics it subscribes to (a streams group: its topology's source topics, unless Empty).
        An offset with a pending transactional commit is kept. A group left Empty, without
        offsets nor open transaction, is deleted (a classic group's metadata tombstone, a
        modern group's records' tombstones). ``views`` gives a coordinator's live view of a
        classic group (default: as loaded). Returns the expired ``(group, topic, partition)``.
        """
        now = self.clock.milliseconds() if now is None else now
        self.refresh()
        retention = self.config.offsets_retention_ms
        expired: list[tuple[str, str, int]] = []
        for group_id in sorted(set(self._groups) | set(self._consumer_groups)
                               | set(self._streams_groups)):
            if not self.owns(group_id):
                continue
            view = self._modern_expiration_view(group_id)
            if view is None and views is not None:
                view = views(group_id)
            if view is None:
                view = persisted_view(self._groups.get(group_id))
            records: list[tuple[bytes, bytes | None]] = []
            offsets = self._offsets.get(group_id)
            all_expired = True
            base = view.expiry_base()
            if offsets:
                if base is None:
                    all_expired = False
                else:
                    for (t, p), om in sorted(offsets.items()):
                        if view.is_subscribed(t):
                            all_expired = False
                            continue
                        is_expired = now >= om.expire_timestamp \
                            if om.expire_timestamp is not None else now - base(om) >= retention
                        if is_expired and not self.has_pending(group_id, t, p):
                            records.append(offset_commit_tombstone(group_id, t, p))
                            expired.append((group_id, t, p))
                        else:
                            all_expired = False
            if all_expired and group_id not in self._open_txns and view.state == "Empty":
                records.extend(self.modern_group_tombstones(group_id) if view.modern
                               else [group_metadata_tombstone(group_id)])
            if records:
                self._append(group_id, records,
                             base_sequence=-1 if self.record_format == "3.x" else 0)
        return expired

    def _modern_expiration_view(self, group_id: str) -> ExpirationView | None:
        """A KIP-848 consumer group's or KIP-1071 streams group's view for offset expiry
        (``isSubscribedToTopic``: a consumer group's subscribed topics, a streams group's
        topology source topics unless it is Empty); None for another group."""
        consumer = self._consumer_groups.get(group_id)
        if consumer is not None:
            return ExpirationView("Stable" if consumer.members else "Empty", "consumer", None,
                                  frozenset(consumer.subscribed_topics_with(None, None)),
                                  modern=True)
        streams = self._streams_groups.get(group_id)
        if streams is None:
            return None
        return ExpirationView("Stable" if streams.members else "Empty", "streams", None,
                              streams.subscribed_topics(), modern=True)

    # -- reads ----------------------------------------------------------------------------------

    def _fresh(self, group_id: str) -> None:
        if self.owns(group_id):
            self.refresh(self.partition_for(group_id))

    def list_groups(self) -> list[str]:
        """Every group known here (with metadata or committed offsets), sorted."""
        self.refresh()
        return sorted(set(self._groups) | set(self._consumer_groups) | set(self._streams_groups))

    def has_group(self, group_id: str) -> bool:
        self._fresh(group_id)
        return group_id in self._groups or group_id in self._consumer_groups \
            or group_id in self._streams_groups

    def group_type(self, group_id: str) -> str:
        """``classic``, ``consumer`` (KIP-848) or ``streams`` (KIP-1071), as ListGroups
        reports it (an unknown group: ``classic``)."""
        self._fresh(group_id)
        if group_id in self._streams_groups:
            return "streams"
        return "consumer" if group_id in self._consumer_groups else "classic"

    def streams_group(self, group_id: str) -> StreamsGroup | None:
        """The KIP-1071 streams group as its records left it, or None."""
        self._fresh(group_id)
        return self._streams_groups.get(group_id)

    def streams_groups(self) -> dict[str, StreamsGroup]:
        """Every streams group of the loaded partitions (group id -> group)."""
        self.refresh()
        return dict(self._streams_groups)

    def consumer_group(self, group_id: str) -> ConsumerGroup | None:
        """The KIP-848 consumer group as its records left it (live: :meth:`write_records`
        changes it), or None."""
        self._fresh(group_id)
        return self._consumer_groups.get(group_id)

    def consumer_groups(self) -> dict[str, ConsumerGroup]:
        """Every KIP-848 consumer group of the loaded partitions (group id -> live group)."""
        self.refresh()
        return dict(self._consumer_groups)

    def write_records(self, group_id: str, records: Sequence[tuple[bytes, bytes | None]]
                      ) -> int:
        """Append coordinator records of ``group_id`` as one batch and replay them (a
        consumer group's state changes only this way). Returns the base offset."""
        return self._append(group_id, list(records))

    def group_metadata(self, group_id: str) -> GroupMetadata | None:
        """The group's last metadata record (None for a simple or unknown group)."""
        self._fresh(group_id)
        return self._groups.get(group_id)

    def fetch_offsets(self, group_id: str) -> dict[TopicPartition, int]:
        """The committed offsets of ``group_id`` (pending transactional commits excluded),
        sorted by topic and partition; ``{}`` for an unknown group."""
        return {tp: om.offset for tp, om in self.fetch_offset_metadata(group_id).items()}

    def fetch_offset_metadata(self, group_id: str) -> dict[TopicPartition, OffsetAndMetadata]:
        """As :meth:`fetch_offsets`, with metadata, leader epoch and timestamps."""
        self._fresh(group_id)
        return dict(sorted(self._offsets.get(group_id, {}).items()))

    def has_pending(self, group_id: str, topic: str, partition: int) -> bool:
        """Whether a transaction has an uncommitted offset for this partition
        (``hasPendingTransactionalOffsets``)."""
        for pid in self._open_txns.get(group_id, ()):
            if (topic, partition) in self._pending.get(pid, {}).get(group_id, {}):
                return True
        return False

    def open_transactions(self, group_id: str) -> set[int]:
        """Producer ids with pending offsets for ``group_id``."""
        self._fresh(group_id)
        return set(self._open_txns.get(group_id, ()))

    def describe_group(self, group_id: str) -> GroupDescription:
        """The group as its last metadata record stands (Kafka's loader view).

        Raises
        ------
        GroupIdNotFoundError
            No such group.
        """
        self._fresh(group_id)
        modern = self._consumer_groups.get(group_id)
        if modern is not None:
            return _describe_consumer_group(modern)
        streams = self._streams_groups.get(group_id)
        if streams is not None:
            return _describe_streams_group(streams)
        if group_id not in self._groups:
            raise GroupIdNotFoundError(f"group {group_id!r} does not exist",
                                       path=self._root)
        gm = self._groups[group_id]
        if gm is None:
            return GroupDescription(group_id, "Empty", "", None, 0, None, None, ())
        consumer = gm.protocol_type == cp.PROTOCOL_TYPE
        return GroupDescription(
            group_id, "Stable" if gm.members else "Empty", gm.protocol_type, gm.protocol,
            gm.generation, gm.leader, gm.current_state_timestamp,
            tuple(_describe_member(m, consumer) for m in gm.members))


def committed_offsets(partition_dirs: Iterable[str | os.PathLike[str]], group_id: str
                      ) -> dict[TopicPartition, int]:
    """``group_id``'s committed offsets, read (read-only) from the given
    ``__consumer_offsets-<n>`` partition directories; ``{}`` when the group has none.

    Raises
    ------
    OffsetsTopicMetadataError
        A record that does not decode.
    """
    logs: dict[int, Log] = {}
    try:
        for d in partition_dirs:
            path = Path(d)
            partition = int(path.name.rsplit("-", 1)[1])
            logs[partition] = Log.open(path, read_only=True)
        return GroupMetadataManager.over_logs(logs).fetch_offsets(group_id)
    finally:
        for log in logs.values():
            log.close()


def _describe_consumer_group(group: ConsumerGroup) -> GroupDescription:
    """A KIP-848 consumer group in the classic description's shape: ``protocol_type``
    "consumer", the server assignor as the protocol, the group epoch as the generation, each
    member's current assignment by topic name (from the group's subscription metadata), no
    session timeout for a consumer-protocol member (-1: the coordinator's
    ``group.consumer.session.timeout.ms``), a classic-protocol member's own."""
    names = {m.topic_id: t for t, m in group.subscription_metadata.items()}
    members = []
    for m in group.members.values():
        parts = sorted((names.get(tid, tid), p) for tid, ps in m.assigned_partitions.items()
                       for p in ps)
        classic = m.classic_member_metadata
        members.append(MemberDescription(
            m.member_id, m.instance_id, m.client_id, m.client_host, m.rebalance_timeout_ms,
            -1 if classic is None else classic.session_timeout_ms,
            cp.Subscription(sorted(m.subscribed_topic_names), rack_id=m.rack_id),
            cp.Assignment(parts), b"", b""))
    return GroupDescription(group.group_id, group.state.capitalize(), "consumer",
                            group.preferred_server_assignor(None, None) or "uniform",
                            group.group_epoch, None, None, tuple(members))


def _describe_streams_group(group: StreamsGroup) -> GroupDescription:
    """A streams group in the classic description's shape: ``protocol_type`` "streams" (its
    ListGroups protocol type), no protocol, the group epoch as the generation, each member's
    metadata (no subscription or assignment in the consumer protocol's terms: tasks are not
    partitions; see :meth:`GroupMetadataManager.streams_group`)."""
    members = tuple(MemberDescription(m.member_id, m.instance_id, m.client_id, m.client_host,
                                      m.rebalance_timeout_ms, -1, None, None, b"", b"")
                    for m in group.members.values())
    return GroupDescription(group.group_id, group.state, "streams", None, group.group_epoch,
                            None, None, members)


def _describe_member(m: MemberMetadata, consumer: bool) -> MemberDescription:
    sub = asg = None
    if consumer:
        try:
            sub = cp.decode_subscription(m.subscription)
        except CorruptRecordError:
            sub = None
        try:
            asg = cp.decode_assignment(m.assignment) if m.assignment else cp.Assignment([])
        except CorruptRecordError:
            asg = None
    return MemberDescription(m.member_id, m.group_instance_id, m.client_id, m.client_host,
                             m.rebalance_timeout_ms, m.session_timeout_ms, sub, asg,
                             m.subscription, m.assignment)


def _with(om: OffsetAndMetadata, **changes: Any) -> OffsetAndMetadata:
    from dataclasses import replace

    return replace(om, **changes)
