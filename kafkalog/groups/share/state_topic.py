"""``__share_group_state``: where share groups' partition states are kept (KIP-932's share
coordinator), read and written in Kafka's record format.

One record per change of a (group, topic id, partition)'s state: key ``ShareSnapshotKey`` (type
0) or ``ShareUpdateKey`` (type 1) = group id, topic id, partition; value ``ShareSnapshotValue`` /
``ShareUpdateValue`` = snapshot epoch, (state epoch,) leader epoch, start offset, and the state
batches ``(first offset, last offset, delivery state, delivery count)`` of the in-flight
records (:mod:`kafkalog.decoders.share_group_state` holds the schemas). A snapshot replaces the
state; an update (Kafka writes them between snapshots) changes the start offset when it gives one
(>= 0) and overwrites the offsets its batches cover. A tombstone deletes the key.

The partition of a key is Kafka's ``ShareCoordinatorService.partitionFor``:
``abs("group:topicId:partition".hashCode()) % share.coordinator.state.topic.num.partitions``.

>>> k, v = snapshot_record("g", "AAAAAAAAAAAAAAAAAAAAAQ", 0, epoch=1, leader_epoch=0,
...                        start_offset=5, batches=[(5, 6, 0, 1)])
>>> replay([(k, v)])[("g", "AAAAAAAAAAAAAAAAAAAAAQ", 0)]
ShareState(start_offset=5, batches=[(5, 6, 0, 1)], snapshot_epoch=1)
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ...decoders import share_group_state
from ...decoders.jvm_order import java_string_hash
from ...errors import KafkaLogError

__all__ = ["SHARE_STATE_TOPIC", "ShareState", "ShareKey", "partition_for", "snapshot_record",
           "tombstone_key", "replay", "load"]

logger = logging.getLogger(__name__)

SHARE_STATE_TOPIC = "__share_group_state"
#: (group id, topic id in Kafka's base64 form, partition)
ShareKey = tuple[str, str, int]
Batch = tuple[int, int, int, int]


@dataclass
class ShareState:
    """One share partition's stored state: its start offset and in-flight state batches."""

    start_offset: int
    batches: list[Batch] = field(default_factory=list)
    snapshot_epoch: int = 0


def partition_for(group_id: str, topic_id: str, partition: int, num_partitions: int) -> int:
    """The ``__share_group_state`` partition of a key (Kafka's ``partitionFor``).

    >>> partition_for("g", "AAAAAAAAAAAAAAAAAAAAAQ", 0, 50) in range(50)
    True
    """
    h = java_string_hash(f"{group_id}:{topic_id}:{partition}")
    return (0 if h == -(2**31) else abs(h)) % num_partitions


def snapshot_record(group_id: str, topic_id: str, partition: int, *, epoch: int,
                    leader_epoch: int, start_offset: int, batches: Iterable[Batch]
                    ) -> tuple[bytes, bytes]:
    """Key and value of a ``ShareSnapshot`` record (v0), as Kafka's share coordinator writes."""
    k, v = share_group_state.encode_record(0, {
        "groupId": group_id, "topicId": topic_id, "partition": partition}, {
        "snapshotEpoch": epoch & 0xFFFF, "stateEpoch": 0, "leaderEpoch": leader_epoch,
        "startOffset": start_offset,
        "stateBatches": [{"firstOffset": f, "lastOffset": last, "deliveryState": st,
                          "deliveryCount": dc} for f, last, st, dc in batches]})
    assert v is not None
    return k, v


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
        if rec["type"] == 0 or old is None:
            out[sk] = ShareState(max(v["startOffset"], 0), batches, v["snapshotEpoch"])
        else:
            start = v["startOffset"] if v["startOffset"] >= 0 else old.start_offset
            out[sk] = ShareState(start, overlay(old.batches, batches), v["snapshotEpoch"])
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
