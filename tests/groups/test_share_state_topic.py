"""``__share_group_state`` records (:mod:`kafkalog.groups.share.state_topic`): snapshots,
updates written over them, tombstones, and the partition of a key."""

from __future__ import annotations

from kafkalog.decoders import share_group_state
from kafkalog.decoders.jvm_order import java_string_hash
from kafkalog.groups.share.state_topic import (
    LAYOUT_4_0,
    ShareState,
    layout_for_new_keys,
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


def test_snapshot_record_in_kafka_4_2s_shape():
    # the count: ACKNOWLEDGED (2) and ARCHIVED (4) offsets at or above the start offset, a
    # batch straddling the start counted from it
    k, v = snapshot_record("g", TID, 0, epoch=70_000, leader_epoch=3, start_offset=12,
                           batches=[(10, 14, 2, 1), (15, 15, 0, 1), (16, 17, 4, 5)],
                           timestamp_ms=1_700_000_000_000)
    rec = share_group_state.decode_record_obj(k, v)
    assert rec["layout"] is None
    assert rec["value"]["snapshotEpoch"] == 70_000          # int32 from 4.1 on
    assert rec["value"]["deliveryCompleteCount"] == 3 + 2
    assert rec["value"]["createTimestamp"] == rec["value"]["writeTimestamp"] == 1_700_000_000_000
    st = replay([(k, v)])[("g", TID, 0)]
    assert (st.delivery_complete_count, st.layout) == (5, None)
    assert st.batches == [(12, 14, 2, 1), (15, 15, 0, 1), (16, 17, 4, 5)]


def test_snapshot_record_in_kafka_4_0s_shape():
    k, v = snapshot_record("g", TID, 0, epoch=70_000, leader_epoch=3, start_offset=12,
                           batches=[(12, 14, 2, 1)], layout=LAYOUT_4_0)
    rec = share_group_state.decode_record_obj(k, v)
    assert rec["layout"] == LAYOUT_4_0
    assert rec["value"] == {"snapshotEpoch": 70_000 & 0xFFFF, "stateEpoch": 0, "leaderEpoch": 3,
                            "startOffset": 12, "stateBatches": [
                                {"firstOffset": 12, "lastOffset": 14, "deliveryState": 2,
                                 "deliveryCount": 1}]}
    st = replay([(k, v)])[("g", TID, 0)]
    assert (st.delivery_complete_count, st.layout, st.snapshot_epoch) == (
        -1, LAYOUT_4_0, 70_000 & 0xFFFF)


def test_an_update_replaces_the_stored_count_as_kafka_merges():
    snap = snapshot_record("g", TID, 0, epoch=1, leader_epoch=0, start_offset=0,
                           batches=[(0, 3, 2, 1)], timestamp_ms=1)
    with_count = share_group_state.encode_record(
        1, {"groupId": "g", "topicId": TID, "partition": 0},
        {"snapshotEpoch": 1, "leaderEpoch": 0, "startOffset": -1, "deliveryCompleteCount": 6,
         "stateBatches": [{"firstOffset": 4, "lastOffset": 5, "deliveryState": 2,
                           "deliveryCount": 1}]})
    assert replay([snap])[("g", TID, 0)].delivery_complete_count == 4
    assert replay([snap, with_count])[("g", TID, 0)].delivery_complete_count == 6
    # an update without the tag (a 4.1 broker's) leaves -1: ShareCoordinatorShard takes the
    # new record's count
    assert replay([snap, with_count, _update(-1, [])])[("g", TID, 0)] \
        .delivery_complete_count == -1


def test_layout_for_new_keys():
    assert layout_for_new_keys([]) is None
    assert layout_for_new_keys([LAYOUT_4_0]) == LAYOUT_4_0
    assert layout_for_new_keys([LAYOUT_4_0, None]) is None
