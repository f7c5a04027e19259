"""``__share_group_state``: where share groups' partition states are kept (KIP-932's share
coordinator), read and written in Kafka's record format.

One record per change of a (group, topic id, partition)'s state: key ``ShareSnapshotKey`` (type
0) or ``ShareUpdateKey`` (type 1) = group id, topic id, partition; value ``ShareSnapshotValue`` /
``ShareUpdateValue`` = snapshot epoch, (state epoch,) leader epoch, start offset, the delivery
complete count (4.2, tagged), (the snapshot's create and write timestamps,) and the state
batches ``(first offset, last offset, delivery state, delivery count)`` of the in-flight
records (:mod:`kafkalog.decoders.share_group_state` holds the schemas). A snapshot replaces the
state; an update (Kafka writes them between snapshots) changes the start offset when it gives one
(>= 0), replaces the delivery complete count and overwrites the offsets its batches cover. A
tombstone deletes the key.

Records are written in Kafka 4.2's shape (which 4.1 reads: the count is a tagged field), or in
4.0's (``layout="4.0"``) for the keys of a 4.0 cluster's files: Kafka 4.1 changed the values
without a new version, so a 4.0 broker cannot read the newer bytes. ``replay`` notes each key's
shape in :attr:`ShareState.layout`, and kafkalog's writers keep it.

The partition of a key is Kafka's ``ShareCoordinatorService.partitionFor``:
``abs("group:topicId:partition".hashCode()) % share.coordinator.state.topic.num.partitions``.

>>> k, v = snapshot_record("g", "AAAAAAAAAAAAAAAAAAAAAQ", 0, epoch=1, leader_epoch=0,
...                        start_offset=5, batches=[(5, 6, 2, 1)], timestamp_ms=1_000)
>>> st = replay([(k, v)])[("g", "AAAAAAAAAAAAAAAAAAAAAQ", 0)]
>>> st.start_offset, st.batches, st.snapshot_epoch, st.delivery_complete_count, st.layout
(5, [(5, 6, 2, 1)], 1, 2, None)
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ...decoders import share_group_state
from ...decoders.jvm_order import java_string_hash
from ...errors import KafkaLogError

__all__ = ["SHARE_STATE_TOPIC", "ShareState", "ShareKey", "partition_for", "snapshot_record",
           "tombstone_key", "replay", "load", "delivery_complete_count", "LAYOUT_4_0",
           "layout_for_new_keys"]

logger = logging.getLogger(__name__)

SHARE_STATE_TOPIC = "__share_group_state"
#: (group id, topic id in Kafka's base64 form, partition)
ShareKey = tuple[str, str, int]
Batch = tuple[int, int, int, int]


#: the ``layout`` of Kafka 4.0's share-state values (see the module docstring)
LAYOUT_4_0 = "4.0"
#: delivery states that count as delivery complete (Kafka's ``SharePartition``: ACKNOWLEDGED
#: and ARCHIVED, :class:`~kafkalog.groups.share.share_partition.RecordState` 2 and 4)
_COMPLETE = (2, 4)


@dataclass
class ShareState:
    """One share partition's stored state: its start offset and in-flight state batches."""

    start_offset: int
    batches: list[Batch] = field(default_factory=list)
    snapshot_epoch: int = 0
    delivery_complete_count: int = -1
    """As stored (Kafka 4.2's KIP-1226 count); -1 when the records do not carry it."""
    layout: str | None = None
    """The shape of the key's last record: None (4.1+) or :data:`LAYOUT_4_0`."""


def delivery_complete_count(batches: Iterable[Batch]) -> int:
    """The ACKNOWLEDGED and ARCHIVED offsets of state batches ``(first, last, delivery state,
    delivery count)`` that are at or above the start offset (as :func:`replay` leaves them).

    >>> delivery_complete_count([(3, 4, 0, 1), (5, 6, 2, 1), (7, 7, 4, 5), (8, 9, 0, 1)])
    3
    """
    return sum(last - first + 1 for first, last, st, _ in batches if st in _COMPLETE)


def partition_for(group_id: str, topic_id: str, partition: int, num_partitions: int) -> int:
    """The ``__share_group_state`` partition of a key (Kafka's ``partitionFor``).

    >>> partition_for("g", "AAAAAAAAAAAAAAAAAAAAAQ", 0, 50) in range(50)
    True
    """
    h = java_string_hash(f"{group_id}:{topic_id}:{partition}")
    return (0 if h == -(2**31) else abs(h)) % num_partitions


def snapshot_record(group_id: str, topic_id: str, partition: int, *, epoch: int,
                    leader_epoch: int, start_offset: int, batches: Iterable[Batch],
                    timestamp_ms: int | None = None, layout: str | None = None
                    ) -> tuple[bytes, bytes]:
    """Key and value of a ``ShareSnapshot`` record (v0), as Kafka's share coordinator writes.

    In 4.2's shape (None) the delivery complete count is counted from ``batches`` (what
    Kafka's ``SharePartition`` counts and writes) and the create and write timestamps are both
    ``timestamp_ms`` (now when None), as Kafka stamps a new snapshot. ``layout="4.0"``: 4.0's
    shape (uint16 snapshot epoch, no count, no timestamps)."""
    batches = list(batches)
    value: dict[str, Any] = {
        "snapshotEpoch": epoch, "stateEpoch": 0, "leaderEpoch": leader_epoch,
        "startOffset": start_offset,
        "stateBatches": [{"firstOffset": f, "lastOffset": last, "deliveryState": st,
                          "deliveryCount": dc} for f, last, st, dc in batches]}
    if layout == LAYOUT_4_0:
        value["snapshotEpoch"] = epoch & 0xFFFF
    else:
        now = time.time_ns() // 1_000_000 if timestamp_ms is None else timestamp_ms
        value["deliveryCompleteCount"] = delivery_complete_count(
            (max(f, start_offset), last, st, dc) for f, last, st, dc in batches
            if last >= start_offset)
        value["createTimestamp"] = value["writeTimestamp"] = now
    k, v = share_group_state.encode_record(0, {
        "groupId": group_id, "topicId": topic_id, "partition": partition}, value,
        layout=layout)
    assert v is not None
    return k, v


def layout_for_new_keys(layouts: Iterable[str | None]) -> str | None:
    """The shape to write a key that has no stored state in: 4.0's when every stored key
    (their ``layouts``) is in 4.0's shape (a 4.0 cluster's topic), else the newest.

    >>> layout_for_new_keys(["4.0", "4.0"]), layout_for_new_keys(["4.0", None])
    ('4.0', None)
    """
    seen = set(layouts)
    return LAYOUT_4_0 if seen == {LAYOUT_4_0} else None


def tombstone_key(group_id: str, topic_id: str, partition: int) -> bytes:
    """The key of a ``ShareSnapshot`` tombstone (a deleted share group's state)."""
    k, _ = share_group_state.encode_record(0, {
        "groupId": group_id, "topicId": topic_id, "partition": partition}, None)
    return k


def replay(records: Iterable[tuple[bytes | None, bytes | None]], *, where: str = ""
           ) -> dict[ShareKey, ShareState]:
    """The states a sequence of ``(key, value)`` records leaves (unreadable records are
    logged, naming ``where``, and skipped, as Kafka's loader skips what it cannot read)."""
    out: dict[ShareKey, ShareState] = {}
    for i, (key, value) in enumerate(records):
        try:
            rec = share_group_state.decode_record_obj(key, value)
        except KafkaLogError as e:
            logger.warning("%s record %d: unreadable share state record: %s", where, i, e)
            continue
        k = rec["key"]
        sk: ShareKey = (k["groupId"], k["topicId"], k["partition"])
        v: dict[str, Any] | None = rec["value"]
        if v is None:
            out.pop(sk, None)
            continue
        batches = [(b["firstOffset"], b["lastOffset"], b["deliveryState"], b["deliveryCount"])
                   for b in v["stateBatches"]]
        old = out.get(sk)
        # (an update replaces the count, -1 too: ShareCoordinatorShard.merge)
        count = v.get("deliveryCompleteCount", -1)
        if rec["type"] == 0 or old is None:
            out[sk] = ShareState(max(v["startOffset"], 0), batches, v["snapshotEpoch"], count,
                                 rec["layout"])
        else:
            start = v["startOffset"] if v["startOffset"] >= 0 else old.start_offset
            out[sk] = ShareState(start, overlay(old.batches, batches), v["snapshotEpoch"],
                                 count, rec["layout"])
    for st in out.values():  # offsets below the start offset are done: forgotten
        st.batches = [(max(f, st.start_offset), last, s, d) for f, last, s, d in st.batches
                      if last >= st.start_offset]
    return out


def load(log_dir: Any) -> dict[ShareKey, ShareState]:
    """Replay every ``__share_group_state`` partition of an open
    :class:`~kafkalog.log_dir.LogDir` (partitions in order; a key lives in one partition)."""
    out: dict[ShareKey, ShareState] = {}
    for topic, p in log_dir.partitions():
        if topic != SHARE_STATE_TOPIC:
            continue
        log = log_dir.log(topic, p)
        out.update(replay(((r.key, r.value) for r in log.records()),
                          where=f"{SHARE_STATE_TOPIC}-{p}"))
    return out


def overlay(base: Iterable[Batch], top: Iterable[Batch]) -> list[Batch]:
    """State batches ``top`` written over ``base``, offset by offset."""
    per: dict[int, tuple[int, int]] = {}
    for batches in (base, top):
        for first, last, state, count in batches:
            for off in range(first, last + 1):
                per[off] = (state, count)
    out: list[list[int]] = []
    for off in sorted(per):
        st, dc = per[off]
        if out and out[-1][1] == off - 1 and out[-1][2:] == [st, dc]:
            out[-1][1] = off
        else:
            out.append([off, off, st, dc])
    return [(a, b, c, d) for a, b, c, d in out]
