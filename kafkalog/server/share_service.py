"""Share groups (KIP-932) on the server: the share partitions, the share sessions, and what
ShareFetch and ShareAcknowledge do with them.

The sans-IO parts are :class:`kafkalog.groups.share.ShareGroupCoordinator` (membership) and
:class:`kafkalog.groups.share.SharePartition` (record states); this module is the broker side,
as Kafka's ``SharePartitionManager`` + ``ShareSessionCache`` (core, 4.1) are:

* **Share partitions** are created on a group's first fetch of a partition, starting at the log
  end offset (``share.auto.offset.reset=latest``, Kafka's default) or the log start offset
  (``earliest``), and follow the log start offset up (retention, DeleteRecords).
* **Share sessions**, one per (group, member): epoch 0 opens one with the partitions asked
  (replacing an old one; acknowledgements are refused then, ``INVALID_REQUEST``), each next
  request must carry the session's epoch (``INVALID_SHARE_SESSION_EPOCH``, or
  ``SHARE_SESSION_NOT_FOUND`` without a session), adds the partitions it names and drops the
  forgotten ones; epoch -1 acknowledges, fetches nothing and closes the session, releasing what
  the member still holds. A session also ends when the connection that opened it closes. A
  member leaving the group keeps its session until then (its last acknowledgements may come
  after its leave heartbeat), as in Kafka.
* **Fetch**: acknowledgements first (per partition: ``INVALID_RECORD_STATE`` when the member
  does not hold an offset), then, over the session's partitions in order and within
  ``max_records``, each partition reads whole batches from where its next fetch starts (up to
  the high watermark: isolation read_uncommitted) and acquires what it can; the batches that
  hold acquired offsets go back as they are stored, with the acquired ranges and their delivery
  counts. With nothing acquired the fetch waits (``max_wait_ms``) for a produce to one of its
  partitions, then tries once more.

* **Durability** (Kafka's share coordinator): after every change that survives a restart (an
  acknowledgement, a release, the log start offset moving) the partition's state is written to
  ``__share_group_state`` as Kafka's ``ShareSnapshotKey``/``ShareSnapshotValue`` record (v0):
  group, topic id, partition -> snapshot epoch, leader epoch, start offset and the in-flight
  state batches (held records written as AVAILABLE, as Kafka does). The partition is Kafka's
  ``abs("group:topicId:partition".hashCode) % share.coordinator.state.topic.num.partitions``.
  At start the topic is replayed (the last snapshot of a key wins; ``ShareUpdate`` records, which
  Kafka writes between snapshots, are applied on top) and a group resumes where it was.
  ``kafkalog dump-segments --share-group-state-decoder`` prints these records.

* **Isolation** (the group config ``share.isolation.level``): ``read_uncommitted`` (Kafka's
  default) reads up to the high watermark; ``read_committed`` up to the last stable offset,
  and the records of aborted transactions it acquires are archived at once, never delivered
  (Kafka's ``filterAbortedTransactionalAcquiredRecords``).

* **Group records** (Kafka's group coordinator, ``__consumer_offsets``), as Kafka 4.2 writes
  them: the group's epoch and KIP-1101 metadata hash (``ShareGroupMetadata``, record 11), the
  members (``ShareGroupMemberMetadata``, 10), each target assignment (13 per changed member,
  then 12) and each member's current assignment (14), written where they changed after every
  heartbeat, a member's tombstones (14, 13, 10) and a new epoch when it leaves or times out
  (:mod:`kafkalog.groups.share.records`); and the share partitions whose state is initialized
  (``ShareGroupStatePartitionMetadata``, record 15: topic id, name and partitions of every key
  with state in ``__share_group_state``, rewritten when that set changes; 4.2's shapes, 4.0's
  kept for a 4.0 cluster's group). A restart replays them: the group is back with its members,
  whose session timeouts start again (Kafka's ``onLoaded``), and a member that carries on at
  its epoch keeps its assignment. A Kafka 4.1+ broker taking the directory over finds the same
  group with its partitions initialized, so it goes on from the stored start offsets instead of
  initializing them again (Kafka's ``InitializeShareGroupState`` would overwrite the state with
  ``share.auto.offset.reset``'s offset). Deleting the group tombstones its share records.

Threads: everything runs on the server's loop thread.
"""

from __future__ import annotations

import asyncio
import logging
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..checkpoint import Uuid
from ..decoders.offsets import CODEC
from ..errors import KafkaLogError
from ..groups.share import InvalidRecordStateError, SharePartition, state_topic
from ..groups.share import records as share_records
from ..groups.share.offline import (
    CoordinatorState,
    coordinator_records,
    load_coordinator,
    share_record_keys,
)
from ..groups.share.share_group import ShareGroupCoordinator
from ..producer_state import scan_producer_batches
from ..records.record import Record
from ..transactions import READ_COMMITTED, read_committed_filter
from .broker import SHARE_STATE_TOPIC, Broker
from .group_configs import GroupConfigStore, parse_reset

__all__ = ["ShareService", "ShareSession", "batch_spans"]

logger = logging.getLogger("kafkalog.server")

#: per partition and fetch, at most this many bytes are read from the log (a fetch's
#: max_bytes bounds the total)
PARTITION_READ_BYTES = 1 << 20
INITIAL_EPOCH, FINAL_EPOCH = 0, -1

_HEAD = struct.Struct(">qi")  # base offset, batch length
_LAST_OFFSET_DELTA = struct.Struct(">i")


def batch_spans(data: bytes | memoryview) -> list[tuple[int, int, int, int]]:
    """``(base offset, last offset, start, end)`` of each whole v2 batch in ``data`` (a
    partial tail batch, as a fetch may return, is left out).

    >>> batch_spans(b"")
    []
    """
    out = []
    pos, n = 0, len(data)
    while pos + 12 <= n:
        base, length = _HEAD.unpack_from(data, pos)
        end = pos + 12 + length
        if length < 49 or end > n:  # 49: the smallest v2 batch after the length field
            break
        (delta,) = _LAST_OFFSET_DELTA.unpack_from(data, pos + 23)
        out.append((base, base + delta, pos, end))
        pos = end
    return out


@dataclass
class ShareSession:
    """One member's share session (Kafka's ``ShareSession``): its epoch (the one the next
    request must carry) and its partitions, in the order they joined."""

    group_id: str
    member_id: str
    #: "host:port" of the connection that opened it
    peer: str = ""
    epoch: int = 1
    partitions: dict[tuple[str, int], None] = field(default_factory=dict)


class ShareService:
    """The share groups of a :class:`~kafkalog.server.broker.Broker` (see the module
    docstring)."""

    def __init__(self, broker: Broker, other_group_type: Any = None) -> None:
        self.broker = broker
        c = broker.config
        #: per-group overrides of the share settings (kafka-configs.sh --entity-type groups):
        #: the broker's store (one per log dir), made here when the broker has none
        if broker.group_configs is None:
            broker.group_configs = GroupConfigStore(broker.log_dir.root, c)
        self.configs = broker.group_configs
        self.coordinator = ShareGroupCoordinator(
            session_timeout_ms=c.group_share_session_timeout_ms,
            heartbeat_interval_ms=c.group_share_heartbeat_interval_ms,
            max_size=c.group_share_max_size, other_group_type=other_group_type,
            on_member_removed=self._member_removed,
            group_timeouts=lambda g: (self.configs.value(g, "share.session.timeout.ms"),
                                      self.configs.value(g, "share.heartbeat.interval.ms")))
        self.partitions: dict[tuple[str, str, int], SharePartition] = {}
        self.sessions: dict[tuple[str, str], ShareSession] = {}
        self._rearm: asyncio.Event | None = None
        #: the states read from __share_group_state at start, taken when a share partition
        #: is first used
        self._stored = state_topic.load(broker.log_dir)
        self._snapshot_epochs = {k: st.snapshot_epoch for k, st in self._stored.items()}
        #: group -> its records 11 and 15 as last written (epoch, initialized partitions,
        #: layout, metadata hash), and its membership records (10, 12-14) replayed, from
        #: __consumer_offsets at start
        self._group_records, self._stored_groups = load_coordinator(broker.log_dir)
        # the groups come back with their stored members (Kafka's coordinator replays their
        # records the same way); each member's session timeout starts again now, and the
        # subscribed topics are hashed again at the next heartbeat
        now = broker.clock.milliseconds()
        names = {tid: name for name, tid in self._topic_ids().items()}
        for gid, state in self._group_records.items():
            if state.epoch and self.coordinator.group(gid) is None:
                stored = self._stored_groups.get(gid, share_records.StoredShareGroup(gid))
                group = stored.to_live(state.epoch, names, now)
                group.metadata_hash = state.metadata_hash
                group.metadata_refresh_needed = True
                self.coordinator.groups[gid] = group
        #: the shape each key's records are written in: its stored one (a Kafka 4.0 cluster's
        #: keys stay readable by 4.0), for a new key :func:`state_topic.layout_for_new_keys`
        self._layouts = {k: st.layout for k, st in self._stored.items()}
        self._new_key_layout = state_topic.layout_for_new_keys(self._layouts.values())
        self.topics_changed()

    # -- durability ----------------------------------------------------------------------------

    def _persist(self, group_id: str, topic: str, partition: int, sp: SharePartition) -> None:
        broker = self.broker
        tid = str(broker.topic_id(topic))
        key = (group_id, tid, partition)
        epoch = self._snapshot_epochs.get(key, -1) + 1
        self._snapshot_epochs[key] = epoch
        k, v = state_topic.snapshot_record(
            group_id, tid, partition, epoch=epoch,
            leader_epoch=broker.leader_epoch(topic, partition), start_offset=sp.start_offset,
            batches=sp.state_batches(), timestamp_ms=broker.clock.milliseconds(),
            layout=self._layouts.get(key, self._new_key_layout))
        self._write_state_record(key, (k, v))
        recorded = self._group_records.get(group_id)
        self._write_group_records(group_id, partitions_changed=recorded is None or partition
                                  not in recorded[1].get(tid, ()))

    def _write_state_record(self, key: tuple[str, str, int],
                            record: tuple[bytes, bytes] | None) -> None:
        """Append a state record (None: the key's tombstone) to its partition."""
        broker = self.broker
        group_id, tid, partition = key
        if record is None:
            record = (state_topic.tombstone_key(group_id, tid, partition), None)
        try:
            broker.ensure_internal_topic(SHARE_STATE_TOPIC)
            target = state_topic.partition_for(group_id, tid, partition,
                                               len(broker.partitions_of(SHARE_STATE_TOPIC)))
            broker.log(SHARE_STATE_TOPIC, target).append(
                [Record(record[0], record[1], broker.clock.milliseconds())])
        except (KafkaLogError, OSError) as e:
            logger.error("share group %s: state of %s-%d not written: %s", group_id, tid,
                         partition, e)

    # -- membership --------------------------------------------------------------------------

    def _topic_ids(self) -> dict[str, str]:
        """Topic name -> id (Kafka's base64 form) of every topic."""
        broker = self.broker
        return {t: str(broker.topic_id(t)) for t in broker.partition_counts()}

    def topics_changed(self) -> None:
        """Topic created, grown or deleted: new partition counts for the assignments; share
        partitions of deleted partitions are dropped."""
        broker = self.broker
        counts = broker.partition_counts()
        rack = broker.config.broker_rack
        self.coordinator.update_metadata(
            counts, self._topic_ids(),
            # KIP-1101 hashes each partition's replica racks: this broker's, where it has one
            {t: [(rack,)] * n for t, n in counts.items()} if rack else None)
        held = set(broker.log_dir.partitions())
        for key in [k for k in self.partitions if (k[1], k[2]) not in held]:
            del self.partitions[key]

    def heartbeat(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("now", self.broker.clock.milliseconds())
        out = self.coordinator.heartbeat(*args, **kwargs)
        if self._rearm is not None:
            self._rearm.set()
        group_id = kwargs.get("group_id", args[0] if args else None)
        if isinstance(group_id, str) and self.coordinator.group(group_id) is not None:
            self._write_group_records(group_id, partitions_changed=False)
        return out

    # -- the group's records in __consumer_offsets -------------------------------------------

    def _initialized_now(self, group_id: str) -> dict[str, set[int]]:
        """Topic id -> partitions of the group's keys with state (stored or written since)."""
        out: dict[str, set[int]] = {}
        for g, tid, p in self._snapshot_epochs:
            if g == group_id:
                out.setdefault(tid, set()).add(p)
        return out

    def _write_group_records(self, group_id: str, *, partitions_changed: bool) -> None:
        """The group's records where they changed since last written, in one batch: its
        membership (10, 12-14: :func:`kafkalog.groups.share.records.delta`) around records
        11 and 15 (see the module docstring); ``partitions_changed``: whether the keys with
        state may have (else record 15 is not looked at: a heartbeat costs no walk over
        every key)."""
        known = self._group_records.get(group_id)
        epoch, initialized, layout, _hash = known if known is not None \
            else CoordinatorState(None, {}, None)
        group = self.coordinator.group(group_id)
        target_epoch = group.group_epoch if group is not None and group.group_epoch > 0 \
            else (epoch or 1)
        metadata_hash = group.metadata_hash if group is not None else (
            known.metadata_hash if known is not None else 0)
        now = self._initialized_now(group_id) if partitions_changed else initialized
        names = {tid: self.broker.topic_by_id(Uuid.from_string(tid)) or ""
                 for tid in now} if now != initialized else {}
        records = coordinator_records(group_id, known, target_epoch, now, names,
                                      metadata_hash)
        stored = self._stored_groups.get(group_id) or share_records.StoredShareGroup(group_id)
        if group is not None:
            records = share_records.delta(stored, group, self.coordinator.topic_ids,
                                          group_records=records)
        if not records:
            return
        try:
            self.broker.groups.coordinator.manager.write_records(group_id, records)
        except (KafkaLogError, OSError) as e:
            logger.error("share group %s: group records not written: %s", group_id, e)
            return
        self._group_records[group_id] = CoordinatorState(target_epoch, now, layout,
                                                         metadata_hash)
        groups = {group_id: stored}
        for k, v in records:
            rec = CODEC.decode(k, v)
            if rec["type"] in share_records.MEMBER_RECORD_TYPES:
                share_records.replay(groups, rec)
        if group_id in groups:
            self._stored_groups[group_id] = groups[group_id]

    def _member_removed(self, group_id: str, member_id: str) -> None:
        # As in Kafka, leaving the group (or timing out) does not touch the member's records
        # or share session: a closing consumer sends its last acknowledgements (share session
        # epoch -1) after, or at the same time as, its leave heartbeat. The records it still
        # holds come back when its session closes, its connection drops or their locks expire.
        logger.info("share group %s: member %s left", group_id, member_id)
        # its records' tombstones and the group's new epoch (shareGroupFenceMember)
        self._write_group_records(group_id, partitions_changed=False)

    def connection_closed(self, peer: str) -> None:
        """A client connection closed: the share sessions opened on it end, releasing their
        records (Kafka's ``ShareSessionCache`` connection-disconnect listener)."""
        for session in list(self.sessions.values()):
            if session.peer == peer:
                self.close_session(session)

    def _notify(self, tps: Iterable[tuple[str, int]]) -> None:
        # released records are available again: wake the fetches waiting on them
        for tp in tps:
            self.broker.notify(tp)

    async def run_timers(self) -> None:
        """Remove members whose session timed out, at their deadlines, until cancelled."""
        self._rearm = asyncio.Event()
        clock = self.broker.clock
        while True:
            deadline = self.coordinator.next_deadline()
            timeout = None if deadline is None else max(
                0.0, (deadline - clock.milliseconds()) / 1000 + 0.001)
            self._rearm.clear()
            try:
                async with asyncio.timeout(timeout):
                    await self._rearm.wait()
                continue
            except TimeoutError:
                pass
            for g, m in self.coordinator.expire_sessions(clock.milliseconds()):
                logger.info("share group %s: member %s timed out", g, m)

    # -- share partitions --------------------------------------------------------------------

    def share_partition(self, group_id: str, topic: str, partition: int) -> SharePartition:
        """The group's state of the partition (created at ``share.auto.offset.reset``)."""
        key = (group_id, topic, partition)
        sp = self.partitions.get(key)
        if sp is None:
            log = self.broker.log(topic, partition)
            cfg = self.configs
            strategy, back_ms = parse_reset(cfg.value(group_id, "share.auto.offset.reset"))
            hw = self.broker.high_watermark(topic, partition)
            if strategy == "earliest":
                start = log.log_start_offset
            elif strategy == "by_duration":
                found = log.offset_for_timestamp(self.broker.clock.milliseconds() - back_ms)
                start = hw if found is None else min(found, hw)
            else:
                start = hw
            stored = self._stored.pop((group_id, str(self.broker.topic_id(topic)), partition),
                                      None)
            if stored is not None:
                start = max(stored.start_offset, log.log_start_offset)
            sp = self.partitions[key] = SharePartition(start)
            self._apply_config(group_id, sp)
            if stored is not None:
                sp.restore(stored.batches)
        return sp

    def _apply_config(self, group_id: str, sp: SharePartition) -> None:
        cfg = self.configs
        sp.lock_duration_ms = cfg.value(group_id, "share.record.lock.duration.ms")
        sp.max_delivery_count = cfg.value(group_id, "share.delivery.count.limit")
        sp.max_in_flight = cfg.value(group_id, "share.partition.max.record.locks")

    def set_group_config(self, group_id: str, overrides: dict[str, str]) -> None:
        """Replace the group's config overrides (persisted) and apply them: its share
        partitions take the new lock duration, delivery limit and lock limit for what they
        acquire from now on (records already held keep their deadlines), its members the new
        session timeout and heartbeat interval; ``share.auto.offset.reset`` applies to the
        partitions the group has not consumed yet, as in Kafka."""
        self.configs.set(group_id, overrides)
        for (g, _t, _p), sp in self.partitions.items():
            if g == group_id:
                self._apply_config(group_id, sp)
        if self._rearm is not None:
            self._rearm.set()  # the session deadlines may have moved

    def acknowledge(self, group_id: str, member_id: str, topic: str, partition: int,
                    batches: list[tuple[int, int, tuple[int, ...]]]) -> tuple[int, str | None]:
        """Apply one partition's acknowledgements: ``(error code, message)``."""
        from .protocol import ErrorCode

        if partition not in self.broker.partitions_of(topic):
            return ErrorCode.unknown_topic_or_partition, None
        sp = self.share_partition(group_id, topic, partition)
        try:
            sp.acknowledge(member_id, batches, self.broker.clock.milliseconds())
        except InvalidRecordStateError as e:
            return ErrorCode.invalid_record_state, str(e)
        self._persist(group_id, topic, partition, sp)
        self._notify([(topic, partition)])  # released records may be taken by another fetch
        return ErrorCode.none, None

    def acquire(self, group_id: str, member_id: str, topic: str, partition: int,
                max_records: int, max_bytes: int) -> tuple[bytes, list[tuple[int, int, int]]]:
        """Acquire up to ``max_records`` of the partition for the member: the stored batches
        holding them, and the acquired ``(first, last, delivery count)`` ranges."""
        broker = self.broker
        log = broker.log(topic, partition)
        sp = self.share_partition(group_id, topic, partition)
        if log.log_start_offset > sp.start_offset:
            sp.update_log_start_offset(log.log_start_offset)
            self._persist(group_id, topic, partition, sp)
        now = broker.clock.milliseconds()
        offset = sp.next_fetch_offset(now)
        committed = self.configs.value(group_id, "share.isolation.level") == READ_COMMITTED
        # read_committed reads up to the last stable offset, as a read_committed fetch does
        bound = (log.last_stable_offset if committed
                 else broker.high_watermark(topic, partition))
        if offset >= bound or max_records <= 0:
            return b"", []
        data = log.read(offset, min(max_bytes, PARTITION_READ_BYTES), max_offset=bound)
        spans = batch_spans(data)
        acquired = sp.acquire(member_id, [(b, last) for b, last, _s, _e in spans], now,
                              max_records)
        if acquired and committed:
            acquired = self._drop_aborted(group_id, member_id, topic, partition, sp, data,
                                          acquired)
        if not acquired:
            return b"", []
        lo, hi = acquired[0][0], max(r[1] for r in acquired)
        held = [(s, e) for b, last, s, e in spans if last >= lo and b <= hi]
        return bytes(data[held[0][0]:held[-1][1]]), acquired

    def _drop_aborted(self, group_id: str, member_id: str, topic: str, partition: int,
                      sp: SharePartition, data: bytes | memoryview,
                      acquired: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
        """``read_committed``: the records of aborted transactions among those just acquired
        are archived, not delivered (Kafka's ``filterAbortedTransactionalAcquiredRecords``);
        returns the acquired ranges left."""
        log = self.broker.log(topic, partition)
        lo, hi = acquired[0][0], max(r[1] for r in acquired)
        rc = read_committed_filter(log, lo, hi + 1, READ_COMMITTED)
        if rc is None or not rc.aborted:
            return acquired
        aborted = [(b.base_offset, b.last_offset) for b in scan_producer_batches(data)
                   if b.is_transactional and b.control is None
                   and rc.is_aborted(b.producer_id, b.base_offset)]
        if not aborted or not sp.archive_acquired(member_id, aborted):
            return acquired
        self._persist(group_id, topic, partition, sp)
        out = []
        for first, last, count in acquired:
            cuts = sorted((max(a, first), min(b, last)) for a, b in aborted
                          if a <= last and b >= first)
            at = first
            for a, b in cuts:
                if a > at:
                    out.append((at, a - 1, count))
                at = b + 1
            if at <= last:
                out.append((at, last, count))
        return out

    # -- sessions ----------------------------------------------------------------------------

    def open_session(self, group_id: str, member_id: str, epoch: int,
                     add: Iterable[tuple[str, int]], forget: Iterable[tuple[str, int]],
                     peer: str = "") -> tuple[int, ShareSession | None]:
        """Kafka's ``SharePartitionManager.newContext``: ``(error code, session)`` for a
        request at ``epoch`` (the session's epoch is moved on here)."""
        from .protocol import ErrorCode

        key = (group_id, member_id)
        if epoch == INITIAL_EPOCH:
            old = self.sessions.pop(key, None)
            if old is not None:
                self._release(old)
            session = self.sessions[key] = ShareSession(group_id, member_id, peer)
            session.partitions.update(dict.fromkeys(add))
            return ErrorCode.none, session
        session = self.sessions.get(key)
        if session is None:
            return ErrorCode.share_session_not_found, None
        if epoch == FINAL_EPOCH:
            return ErrorCode.none, session
        if epoch != session.epoch:
            return ErrorCode.invalid_share_session_epoch, None
        session.epoch += 1
        for tp in forget:
            session.partitions.pop(tp, None)
        session.partitions.update(dict.fromkeys(add))
        return ErrorCode.none, session

    def close_session(self, session: ShareSession) -> None:
        """The final request was answered: release what the member holds, drop the session."""
        self.sessions.pop((session.group_id, session.member_id), None)
        self._release(session)

    def _release(self, session: ShareSession) -> None:
        for topic, p in session.partitions:
            sp = self.partitions.get((session.group_id, topic, p))
            if sp is not None and sp.release_member(session.member_id):
                if p in self.broker.partitions_of(topic):
                    self._persist(session.group_id, topic, p, sp)
                self._notify([(topic, p)])

    def group_offsets(self, group_id: str) -> dict[tuple[str, int], tuple[int, int]]:
        """``(topic, partition) -> (start offset, delivery-complete count)`` of every partition
        the group has state for (in use here, or stored and not used since the start); the
        count is the acknowledged and archived records at or above the start offset (KIP-1226:
        lag = high watermark - start offset - that count)."""
        out: dict[tuple[str, int], tuple[int, int]] = {}
        for (g, t, p), sp in self.partitions.items():
            if g == group_id:
                done = sum(last - first + 1 for first, last, state, _dc in sp.state_batches()
                           if state in (2, 4))  # ACKNOWLEDGED, ARCHIVED
                out[(t, p)] = (sp.start_offset, done)
        names = {str(self.broker.topic_id(t)): t for t in self.broker.topics()}
        for (g, tid, p), st in self._stored.items():
            topic = names.get(tid)
            if g == group_id and topic is not None and (topic, p) not in out:
                done = sum(last - first + 1 for first, last, state, _dc in st.batches
                           if state in (2, 4))
                out[(topic, p)] = (st.start_offset, done)
        return out

    def alter_offset(self, group_id: str, topic: str, partition: int, start_offset: int
                     ) -> tuple[int, str | None]:
        """AlterShareGroupOffsets of one partition (``kafka-share-groups.sh --reset-offsets``):
        the group's state of it starts again at ``start_offset`` (raised to the log start
        offset), with nothing in flight; persisted. ``(error code, message)``; the caller
        refuses a group with members first."""
        from .protocol import ErrorCode

        if partition not in self.broker.partitions_of(topic):
            return ErrorCode.unknown_topic_or_partition, None
        log = self.broker.log(topic, partition)
        if start_offset < 0:
            return ErrorCode.invalid_request, f"start offset {start_offset} is negative"
        if start_offset > log.log_end_offset:
            return (ErrorCode.offset_out_of_range, f"start offset {start_offset} is above the "
                    f"log end offset {log.log_end_offset} of {topic}-{partition}")
        self._stored.pop((group_id, str(self.broker.topic_id(topic)), partition), None)
        sp = self.partitions[(group_id, topic, partition)] = SharePartition(
            max(start_offset, log.log_start_offset))
        self._apply_config(group_id, sp)
        self._persist(group_id, topic, partition, sp)
        return ErrorCode.none, None

    def delete_offsets(self, group_id: str, topic: str) -> None:
        """DeleteShareGroupOffsets of one topic: the group's state of its partitions goes
        (tombstones), and the topic leaves the group's record 15; the caller refuses a group
        with members first."""
        tid = str(self.broker.topic_id(topic))
        keys = {(g, tid, p) for (g, t, p) in self.partitions if g == group_id and t == topic}
        keys |= {k for k in self._stored if k[0] == group_id and k[1] == tid}
        for g, _tid, p in keys:
            self.partitions.pop((g, topic, p), None)
            self._stored.pop((g, tid, p), None)
            self._snapshot_epochs.pop((g, tid, p), None)
            self._write_state_record((g, tid, p), None)
        self._write_group_records(group_id, partitions_changed=True)

    def delete_group(self, group_id: str) -> int:
        """DeleteGroups of a share group (Kafka's ``deleteShareGroups`` and the persister's
        ``deleteState``): refused with ``NON_EMPTY_GROUP`` while it has members; otherwise the
        group, its share partitions and its stored state go (tombstones in
        ``__share_group_state``). Returns the error code."""
        from .protocol import ErrorCode

        group = self.coordinator.group(group_id)
        if group is not None and group.members:
            return ErrorCode.non_empty_group
        keys = {(g, str(self.broker.topic_id(t)), p) for (g, t, p) in self.partitions
                if g == group_id}
        keys |= {k for k in self._stored if k[0] == group_id}
        if group is None and not keys:
            return ErrorCode.group_id_not_found
        for key in [k for k in self.partitions if k[0] == group_id]:
            del self.partitions[key]
        for key in keys:
            self._stored.pop(key, None)
            self._snapshot_epochs.pop(key, None)
            self._write_state_record(key, None)
        self.coordinator.groups.pop(group_id, None)
        # the group's share records in __consumer_offsets (ShareGroup.createGroupTombstone-
        # Records: every live one, ours and any a Kafka broker wrote before)
        live = share_record_keys(self.broker.log_dir, group_id)
        if live:
            try:
                self.broker.groups.coordinator.manager.write_records(
                    group_id, [(key, None) for _p, _t, key in live])
            except (KafkaLogError, OSError) as e:
                logger.error("share group %s: group records not deleted: %s", group_id, e)
        self._group_records.pop(group_id, None)
        self._stored_groups.pop(group_id, None)
        return ErrorCode.none

    def describe_partition_state(self) -> list[tuple[str, str, int, int, int]]:
        """``(group, topic, partition, start offset, acquired)`` of every share partition."""
        return [(g, t, p, sp.start_offset, sp.acquired_count())
                for (g, t, p), sp in sorted(self.partitions.items())]

