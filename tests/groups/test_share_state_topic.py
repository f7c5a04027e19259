"""``__share_group_state`` records (:mod:`kafkalog.groups.share.state_topic`): snapshots,
updates written over them, tombstones, and the partition of a key."""

from __future__ import annotations

from kafkalog.decoders import share_group_state
from kafkalog.decoders.jvm_order import java_string_hash
from kafkalog.groups.share.state_topic import (
    ShareState,
    overlay,
    partition_for,
    replay,
    snapshot_record,
)

TID = "AAAAAAAAAAAAAAAAAAAAAQ"


def _update(start: int, batches: list[tuple[int, int, int, int]], epoch: int = 2):
    return share_group_state.encode_record(1, {"groupId": "g", "topicId": TID, "partition": 0}, {
        "snapshotEpoch": epoch, "leaderEpoch": 0, "startOffset": start,
        "stateBatches": [{"firstOffset": f, "lastOffset": last, "deliveryState": s,
                          "deliveryCount": d} for f, last, s, d in batches]})


def test_updates_over_a_snapshot_then_a_tombstone():
    snap = snapshot_record("g", TID, 0, epoch=1, leader_epoch=3, start_offset=10,
                           batches=[(10, 14, 0, 1), (15, 15, 2, 1)])
    recs = [snap, _update(-1, [(12, 12, 4, 2)]), _update(13, [(16, 17, 0, 1)], epoch=3)]
    st = replay(recs)[("g", TID, 0)]
    # the second update moved the start to 13: offsets below are done and forgotten
    assert st == ShareState(13, [(13, 14, 0, 1), (15, 15, 2, 1), (16, 17, 0, 1)], 3)
    key = share_group_state.encode_record(0, {"groupId": "g", "topicId": TID, "partition": 0},
                                          None)
    assert replay([*recs, key]) == {}
    # an unreadable record is skipped, the others still count
    assert replay([(b"\x00\x09junk", b"x"), snap])[("g", TID, 0)].start_offset == 10


def test_overlay_and_partition_for():
    assert overlay([(0, 9, 0, 1)], [(3, 4, 2, 1)]) == [(0, 2, 0, 1), (3, 4, 2, 1), (5, 9, 0, 1)]
    h = java_string_hash(f"grp:{TID}:7")
    assert partition_for("grp", TID, 7, 50) == abs(h) % 50
    assert {partition_for(f"g{i}", TID, 0, 4) for i in range(40)} == {0, 1, 2, 3}
