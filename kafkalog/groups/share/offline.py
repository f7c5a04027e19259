"""Share groups (KIP-932) of a ``log.dirs`` tree, offline: what ``kafkalog groups`` lists and
describes as Kafka's ``kafka-share-groups.sh`` would.

Two sources, both as Kafka writes them:

* ``__share_group_state`` (the share coordinator's topic), replayed by
  :func:`kafkalog.groups.share.state_topic.replay`: per (group, topic id, partition) the
  share-partition start offset (SPSO), the in-flight state batches, and (read here alongside)
  the leader epoch the state was written at.
* ``__consumer_offsets`` records of types 11 (``ShareGroupMetadata``: the group epoch) and 12
  (``ShareGroupTargetAssignmentMetadata``: the assignment epoch), which Kafka's group
  coordinator writes for a share group. :class:`~kafkalog.groups.GroupMetadataManager` skips
  them, so they are read here with a key-prefix filter over the columnar decode (only those
  records are decoded one by one). kafkalog's server writes the same records (and the
  membership ones, 10 and 12-14, which :func:`load_coordinator` replays for it).

A share group exists when its last ``ShareGroupMetadata`` record is not a tombstone, or, with no
such record at all, when it has live state records. Its members are those its membership
records (10 and 14, which Kafka 4.x's coordinator and kafkalog's server write) still name, as a
coordinator loading the tree has them until their sessions expire: a group with members is
*Stable*, one without *Empty*.

Writes (``kafkalog groups reset-offsets`` / ``delete`` of a share group) need to know where each
key lives: :class:`SharePartitionOffset` carries the ``__share_group_state`` partition its state
was read from and its snapshot epoch, and :func:`share_record_keys` gives the live
``ShareGroup*`` keys (types 9-15) a group has in ``__consumer_offsets``, which Kafka's
coordinator tombstones when it deletes the group.

LAG is Kafka's (KIP-1226, ``GroupCoordinatorService.computeShareGroupLagAndBuildResponse``):
``partition end offset - start offset - delivery complete count``, the end offset being the
partition's latest offset (its high watermark here) and the delivery complete count the number
of ACKNOWLEDGED or ARCHIVED records at or above the start offset. Kafka 4.2 persists that count
in the share-state values (tagged field ``DeliveryCompleteCount``); where the records lack it
(Kafka 4.0's and 4.1's) it is counted from the state batches, which is what ``SharePartition``
counts before writing it (Kafka itself reports a lag of -1 until it has written the count).

>>> delivery_complete_count([(3, 4, 0, 1), (5, 6, 2, 1), (7, 7, 4, 5), (8, 9, 0, 1)])
3
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ...decoders import share_group_state
from ...decoders.offsets import CODEC
from ...errors import KafkaLogError
from ..config import OFFSETS_TOPIC
from . import records as share_records
from . import state_topic
from .records import StoredShareGroup

__all__ = ["SharePartitionOffset", "ShareGroupInfo", "ShareMemberInfo", "CoordinatorState",
           "load_coordinator", "load", "delivery_complete_count",
           "share_record_keys", "SHARE_GROUP_METADATA", "SHARE_GROUP_TARGET_ASSIGNMENT_METADATA",
           "SHARE_GROUP_RECORD_TYPES"]

logger = logging.getLogger(__name__)

#: ``__consumer_offsets`` record types read here (``CoordinatorRecordType``)
SHARE_GROUP_METADATA = 11
SHARE_GROUP_TARGET_ASSIGNMENT_METADATA = 12
SHARE_GROUP_STATE_PARTITION_METADATA = 15
_KEY_PREFIXES = [t.to_bytes(2, "big") for t in (SHARE_GROUP_METADATA,
                                                SHARE_GROUP_TARGET_ASSIGNMENT_METADATA)]
#: every share-group record type of ``__consumer_offsets``, in the order Kafka's
#: ``ShareGroup.createGroupTombstoneRecords`` (4.1) tombstones them: current member assignments
#: (14), target assignment members (13), the target assignment epoch (12), member metadata
#: (10), partition metadata (9), state partition metadata (15), the group epoch (11) last
SHARE_GROUP_RECORD_TYPES = (14, 13, 12, 10, 9, 15, 11)
#: (defined with the records it is counted from; kept here, where the lag uses it)
delivery_complete_count = state_topic.delivery_complete_count


@dataclass(frozen=True)
class SharePartitionOffset:
    """One row of ``kafka-share-groups.sh --describe --offsets``."""

    topic: str
    """The topic's name, or its id (Kafka's base64) when no partition of the tree has it."""
    topic_id: str
    partition: int
    start_offset: int
    leader_epoch: int | None
    delivery_complete_count: int
    log_end_offset: int | None
    """The partition's high watermark; None when the partition is not in the tree."""
    snapshot_epoch: int = 0
    """The stored state's snapshot epoch (the next snapshot of the key takes this + 1)."""
    state_partition: int | None = None
    """The ``__share_group_state`` partition the state was read from."""
    layout: str | None = None
    """The shape of the stored records (``"4.0"`` for a Kafka 4.0 cluster's; None: 4.1+)."""

    @property
    def lag(self) -> int | None:
        """Kafka's share-partition lag (see the module docstring); None without an end
        offset."""
        if self.log_end_offset is None:
            return None
        return self.log_end_offset - self.start_offset - self.delivery_complete_count


@dataclass(frozen=True)
class ShareMemberInfo:
    """One row of ``kafka-share-groups.sh --describe --members``: a member as its records 10
    and 14 left it."""

    member_id: str
    client_id: str
    client_host: str
    member_epoch: int
    #: (topic, partition), sorted; a topic id no partition of the tree names stays an id
    assignment: tuple[tuple[str, int], ...]
    rack_id: str | None = None
    subscribed_topics: tuple[str, ...] = ()


@dataclass
class ShareGroupInfo:
    """A share group as the tree leaves it."""

    group_id: str
    group_epoch: int | None = None
    """``ShareGroupMetadata``'s epoch; None without that record (state records alone)."""
    assignment_epoch: int | None = None
    partitions: list[SharePartitionOffset] = field(default_factory=list)
    members: list[ShareMemberInfo] = field(default_factory=list)
    """The members the group's records still name (sorted by member id), as a coordinator
    loading the tree has them until their sessions time out."""

    @property
    def state(self) -> str:
        """*Stable* while its records name members (Kafka's ``ShareGroup.state``), else
        *Empty*."""
        return "Stable" if self.members else "Empty"


def _states(logs: Any) -> tuple[dict[state_topic.ShareKey, state_topic.ShareState],
                                dict[state_topic.ShareKey, int],
                                dict[state_topic.ShareKey, int]]:
    """``state_topic.load`` plus each key's leader epoch and ``__share_group_state`` partition,
    reading each partition once (a snapshot sets the epoch; an update sets it unless -1, as
    Kafka's share coordinator merges them; a tombstone drops the key)."""
    states: dict[state_topic.ShareKey, state_topic.ShareState] = {}
    epochs: dict[state_topic.ShareKey, int] = {}
    where: dict[state_topic.ShareKey, int] = {}
    for topic, p in logs.partitions():
        if topic != state_topic.SHARE_STATE_TOPIC:
            continue
        records = [(r.key, r.value) for r in logs.log(topic, p).records()]
        replayed = state_topic.replay(records, where=f"{topic}-{p}")
        states.update(replayed)
        where.update(dict.fromkeys(replayed, p))
        for key, value in records:
            try:
                rec = share_group_state.decode_record_obj(key, value)
            except KafkaLogError:
                continue            # replay has logged it
            k = rec["key"]
            sk = (k["groupId"], k["topicId"], k["partition"])
            v = rec["value"]
            if v is None:
                epochs.pop(sk, None)
            elif rec["type"] == 0 or v["leaderEpoch"] != -1:
                epochs[sk] = v["leaderEpoch"]
    return states, epochs, where


def _scan_share_records(logs: Any, prefixes: list[bytes], group_id: str | None = None
                        ) -> Iterator[tuple[int, bytes, bytes | None, dict[str, Any]]]:
    """``(partition, key, value, decoded record)`` of the ``__consumer_offsets`` records whose
    key starts with one of ``prefixes`` (only those are decoded; one group's only, with
    ``group_id``). A value our schema cannot read is decoded as ``{}`` (the key alone still
    names the group)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    wanted = pa.array(prefixes, pa.binary())
    for topic, p in logs.partitions():
        if topic != OFFSETS_TOPIC:
            continue
        t = logs.log(topic, p).read_table(columns=["key", "value"])
        if t.num_rows == 0:
            continue
        keys = t["key"]
        # Arrow's binary_slice needs a non-null input: a keyless record is no share record
        keep = pc.fill_null(pc.is_in(pc.binary_slice(keys, 0, 2), value_set=wanted), False)
        if not pc.any(keep).as_py():
            continue
        rows = t.filter(keep)
        for key, value in zip(rows["key"].to_pylist(), rows["value"].to_pylist()):
            try:
                rec = CODEC.decode(key, value)
            except KafkaLogError:
                # a newer value schema than ours: the key alone still names the group
                try:
                    rec = CODEC.decode(key, None)
                except KafkaLogError as e:
                    logger.warning("%s-%d: unreadable share group record: %s", topic, p, e)
                    continue
                rec["value"] = {} if value is not None else None
            if group_id is None or rec["key"]["groupId"] == group_id:
                yield p, key, value, rec


def _share_group_records(logs: Any) -> dict[str, dict[int, tuple[bool, int | None]]]:
    """group id -> {record type 11/12 -> (live, its epoch)}, from the last record of each kind
    in ``__consumer_offsets`` (a group lives in one partition; live False: a tombstone; epoch
    None: a value our schema cannot read)."""
    out: dict[str, dict[int, tuple[bool, int | None]]] = {}
    for _p, _key, _value, rec in _scan_share_records(logs, _KEY_PREFIXES):
        v = rec["value"]
        epoch = None if v is None else v.get(
            "epoch" if rec["type"] == SHARE_GROUP_METADATA else "assignmentEpoch")
        out.setdefault(rec["key"]["groupId"], {})[rec["type"]] = (v is not None, epoch)
    return out


class CoordinatorState(NamedTuple):
    """A share group's records 11 and 15 as last written (see :func:`coordinator_state`)."""

    #: record 11's group epoch (None: no live record 11)
    epoch: int | None
    #: record 15's initialized partitions: topic id -> partitions
    initialized: dict[str, set[int]]
    #: "4.0" when the records are in Kafka 4.0's shape, else None
    layout: str | None
    #: record 11's KIP-1101 metadata hash (0 in 4.0's shape)
    metadata_hash: int = 0


def coordinator_state(logs: Any) -> dict[str, CoordinatorState]:
    """group id -> :class:`CoordinatorState`: the last live ``ShareGroupMetadata`` (record
    11: its epoch and metadata hash) and ``ShareGroupStatePartitionMetadata`` (record 15:
    topic id -> initialized partitions) of each share group in ``__consumer_offsets``. A
    tombstone drops what it deletes."""
    return load_coordinator(logs)[0]


def load_coordinator(logs: Any) -> tuple[dict[str, CoordinatorState],
                                         dict[str, StoredShareGroup]]:
    """What a share coordinator loads from ``__consumer_offsets``, in one pass over its share
    records: :func:`coordinator_state`, and each group's membership (records 10, 12-14,
    replayed by :func:`kafkalog.groups.share.records.replay`)."""
    prefixes = [t.to_bytes(2, "big") for t in (SHARE_GROUP_METADATA,
                                               SHARE_GROUP_STATE_PARTITION_METADATA,
                                               *share_records.MEMBER_RECORD_TYPES)]
    epochs: dict[str, tuple[int, int]] = {}
    initialized: dict[str, dict[str, set[int]]] = {}
    layouts: dict[str, str | None] = {}
    members: dict[str, StoredShareGroup] = {}
    for _p, _key, _value, rec in _scan_share_records(logs, prefixes):
        group = rec["key"]["groupId"]
        v = rec["value"]
        if rec["type"] in share_records.MEMBER_RECORD_TYPES:
            if v == {}:
                continue            # a value our schemas cannot read (logged by the scan)
            share_records.replay(members, rec)
            continue
        if rec.get("layout") is not None:
            layouts[group] = rec["layout"]
        if rec["type"] == SHARE_GROUP_METADATA:
            if v is None:
                epochs.pop(group, None)
                members.pop(group, None)
            else:
                epochs[group] = (v.get("epoch"), v.get("metadataHash") or 0)
        elif v is None:
            initialized.pop(group, None)
        else:
            initialized[group] = {t["topicId"]: set(t["partitions"])
                                  for t in v.get("initializedTopics", ())}
    states = {g: CoordinatorState(epochs[g][0] if g in epochs else None,
                                  initialized.get(g, {}), layouts.get(g),
                                  epochs[g][1] if g in epochs else 0)
              for g in set(epochs) | set(initialized)}
    return states, members


def topic_names(logs: Any) -> dict[str, str]:
    """Topic id (Kafka's base64) -> name, for the tree's topics with a ``partition.metadata``
    id."""
    names: dict[str, str] = {}
    for topic in logs.topics():
        tid = logs.topic_id(topic)
        if tid is not None:
            names[str(tid)] = topic
    return names


def coordinator_records(group_id: str, previous: CoordinatorState | None,
                        epoch: int, initialized: dict[str, set[int]],
                        topic_names: dict[str, str], metadata_hash: int = 0
                        ) -> list[tuple[bytes, bytes | None]]:
    """The ``__consumer_offsets`` records that bring a share group's ``previous``
    :func:`coordinator_state` to ``epoch`` (record 11) and ``initialized`` (record 15): each
    one only when it changes, in the shape the group's records are in (4.2's unless they are
    Kafka 4.0's). Record 11 carries ``metadata_hash`` (KIP-1101; 4.0's shape has none).

    >>> recs = coordinator_records("g", None, 1, {"AAAAAAAAAAAAAAAAAAAAAQ": {0}}, {})
    >>> [CODEC.decode(k, v)["value_name"] for k, v in recs]
    ['ShareGroupMetadataValue', 'ShareGroupStatePartitionMetadataValue']
    """
    old_epoch, old_initialized, layout, old_hash = (
        previous if previous is not None else CoordinatorState(None, {}, None))
    records: list[tuple[bytes, bytes | None]] = []
    if epoch != old_epoch or (layout is None and metadata_hash != old_hash):
        value: dict[str, Any] = {"epoch": epoch}
        if layout is None:
            value["metadataHash"] = metadata_hash
        records.append(CODEC.encode(SHARE_GROUP_METADATA, {"groupId": group_id}, value,
                                    layout=layout))
    if initialized != old_initialized and (initialized or old_initialized):
        topics = [{"topicId": tid, "topicName": topic_names.get(tid, ""),
                   "partitions": sorted(ps)} for tid, ps in sorted(initialized.items())]
        value = {"initializedTopics": topics, "deletingTopics": []}
        if layout is None:
            value["initializingTopics"] = []
        records.append(CODEC.encode(SHARE_GROUP_STATE_PARTITION_METADATA,
                                    {"groupId": group_id}, value, layout=layout))
    return records


def share_record_keys(logs: Any, group_id: str) -> list[tuple[int, int, bytes]]:
    """``(__consumer_offsets partition, record type, key)`` of every ``ShareGroup*`` record key
    (types 9-15) of ``group_id`` whose last record is not a tombstone: what deleting the group
    tombstones, in the order of :data:`SHARE_GROUP_RECORD_TYPES` (keys of one type in the order
    first written)."""
    prefixes = [t.to_bytes(2, "big") for t in SHARE_GROUP_RECORD_TYPES]
    last: dict[bytes, tuple[int, int, bool]] = {}
    for p, key, value, rec in _scan_share_records(logs, prefixes, group_id):
        last[key] = (p, rec["type"], value is not None)
    order = {t: i for i, t in enumerate(SHARE_GROUP_RECORD_TYPES)}
    live = [(p, t, k) for k, (p, t, alive) in last.items() if alive]
    return sorted(live, key=lambda r: order[r[1]])


def load(logs: Any) -> dict[str, ShareGroupInfo]:
    """Every share group of an open :class:`~kafkalog.log_dir.LogDir` (group id ->
    :class:`ShareGroupInfo`, partitions sorted by topic then partition as Kafka prints them).

    Topic ids are named through the tree's ``partition.metadata`` files
    (:meth:`~kafkalog.log_dir.LogDir.topic_id`)."""
    states, epochs, where = _states(logs)
    meta = _share_group_records(logs)
    names = topic_names(logs)
    stored = load_coordinator(logs)[1]
    present = set(logs.partitions())
    groups: dict[str, ShareGroupInfo] = {}
    for group_id, kinds in meta.items():
        live, epoch = kinds.get(SHARE_GROUP_METADATA, (False, None))
        if live:
            assignment = kinds.get(SHARE_GROUP_TARGET_ASSIGNMENT_METADATA, (False, None))
            groups[group_id] = ShareGroupInfo(group_id, epoch,
                                              assignment[1] if assignment[0] else None)
    for (group_id, tid, partition), st in states.items():
        info = groups.get(group_id)
        if info is None:
            if SHARE_GROUP_METADATA in meta.get(group_id, {}):
                continue            # the group was deleted; its state outlived it
            info = groups[group_id] = ShareGroupInfo(group_id)
        topic = names.get(tid, tid)
        end = logs.high_watermark(topic, partition) if (topic, partition) in present else None
        key = (group_id, tid, partition)
        info.partitions.append(SharePartitionOffset(
            topic, tid, partition, st.start_offset, epochs.get(key),
            st.delivery_complete_count if st.delivery_complete_count >= 0
            else delivery_complete_count(st.batches), end, st.snapshot_epoch, where.get(key),
            st.layout))
    for info in groups.values():
        info.partitions.sort(key=lambda r: (r.topic, r.partition))
        sg = stored.get(info.group_id)
        if sg is None:
            continue
        for m in sorted(sg.members.values(), key=lambda m: m.member_id):
            if m.subscription is None:
                continue
            rack, client_id, host, topics = m.subscription
            info.members.append(ShareMemberInfo(
                m.member_id, client_id, host, m.member_epoch,
                tuple(sorted((names.get(tid, tid), p) for tid, ps in m.assigned.items()
                             for p in ps)), rack, topics))
    return groups
