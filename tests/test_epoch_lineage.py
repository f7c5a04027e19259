"""Kafka's leader-epoch lineage rule for remote segments (``kafkalog.epoch_lineage``): the
cases of ``RemoteLogManagerTest`` (storage, Kafka 4.2) ``testBuildFilteredLeaderEpochMap``,
``testRemoteSegmentWithinLeaderEpochs`` and ``...ForOverlappingSegments``, one for one."""

from __future__ import annotations

import pytest

from kafkalog.epoch_lineage import build_filtered_leader_epoch_map, segment_outside_lineage


def test_build_filtered_leader_epoch_map() -> None:
    epochs = {0: 0, 1: 0, 2: 0, 3: 30, 4: 40, 5: 60, 6: 60, 7: 70, 8: 70}
    assert build_filtered_leader_epoch_map(epochs) == {2: 0, 3: 30, 4: 40, 6: 60, 8: 70}
    assert build_filtered_leader_epoch_map({0: 0, 1: 0, 2: 0}) == {2: 0}
    assert build_filtered_leader_epoch_map({}) == {}


LINEAGE = sorted({0: 0, 1: 10, 2: 20, 3: 30, 4: 40, 5: 50, 7: 70}.items())
LEO = 90


@pytest.mark.parametrize(("epochs", "start", "end", "within"), [
    ({1: 15, 2: 20, 3: 30}, 15, 35, True),    # several epochs within the range
    ({1: 15}, 15, 19, True),                  # one
    ({0: 0}, 0, 5, True),                     # starts where its epoch starts
    ({7: 70}, 70, 75, True),
    ({1: 15, 2: 20}, 15, 29, True),           # ends where epoch 2 ends
    ({5: 55, 6: 60, 7: 70}, 55, 85, False),   # epoch 6 is not in the lineage
    ({1: 15, 2: 20, 4: 40}, 15, 45, False),   # misses epoch 3
    (dict(LINEAGE), 15, 95, False),           # past the log end offset
    (dict(LINEAGE), 15, 90, False),           # at the log end offset
    ({1: 5, 2: 20}, 5, 25, False),            # starts before epoch 1 starts
    ({1: 15, 2: 20}, 15, 35, False),          # ends after epoch 2 ends
])
def test_remote_segment_within_leader_epochs(epochs, start, end, within) -> None:
    reason = segment_outside_lineage(epochs, end, LEO, LINEAGE)
    assert (reason is None) == within, reason


@pytest.mark.parametrize(("epochs", "end", "within"), [
    ({5: 14, 7: 15, 9: 100}, 150, True),      # the lineage lost epoch 5 (log start moved)
    ({2: 5, 3: 6}, 7, False),
    ({7: 15, 9: 100, 10: 200}, 250, False),
    ({8: 75}, 100, False),
    ({7: 15, 9: 101}, 150, False),
    ({9: 99}, 150, False),
])
def test_remote_segment_within_leader_epochs_for_overlapping_segments(epochs, end,
                                                                      within) -> None:
    reason = segment_outside_lineage(epochs, end, 210, [(7, 51), (9, 100)])
    assert (reason is None) == within, reason


def test_reasons_name_what_disagrees() -> None:
    assert segment_outside_lineage({5: 55, 6: 60, 7: 70}, 85, LEO, LINEAGE) == (
        "after epoch 5 it goes on with (6, 60), the lineage with (7, 70) (epoch, start offset)")
    assert segment_outside_lineage({6: 60, 7: 70}, 85, LEO, LINEAGE) == (
        "epoch 6 is not in the leader epoch lineage")
    assert segment_outside_lineage({1: 15, 2: 20}, 35, LEO, LINEAGE) == (
        "it ends at offset 35, past the end of its last epoch 2 in the lineage (29; epoch 3 "
        "starts at 30)")
    assert segment_outside_lineage({1: 15}, 15, LEO, []) == "the leader epoch lineage is empty"
