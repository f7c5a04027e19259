"""Which remote segments belong to a partition's leader-epoch lineage.

After an unclean leader election two leaders may both have uploaded segments for the same
offsets; only the segments whose leader epochs agree with the current leader's epoch cache are
ever read (and Kafka's retention deletes the others). The rule is
``RemoteLogManager.isRemoteSegmentWithinLeaderEpochs`` with ``buildFilteredLeaderEpochMap``
(storage, Kafka 4.2), ported here with its reasons spelled out instead of debug logs.

>>> lineage = [(5, 10), (7, 15), (9, 100)]
>>> segment_outside_lineage({5: 10, 7: 15}, 50, 150, lineage) is None
True
>>> segment_outside_lineage({6: 12}, 13, 150, lineage)
'epoch 6 is not in the leader epoch lineage'
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence

__all__ = ["build_filtered_leader_epoch_map", "segment_outside_lineage"]


def build_filtered_leader_epoch_map(epochs: Mapping[int, int]) -> dict[int, int]:
    """``buildFilteredLeaderEpochMap``: the epochs that hold records (an epoch followed by one
    with the same start offset has none), in epoch order.

    >>> build_filtered_leader_epoch_map({0: 0, 1: 5, 2: 5, 3: 9})
    {0: 0, 2: 5, 3: 9}
    """
    out: dict[int, int] = {}
    previous: tuple[int, int] | None = None
    for epoch, offset in sorted(epochs.items()):
        if previous is not None and previous[1] != offset:
            out[previous[0]] = previous[1]
        previous = (epoch, offset)
    if previous is not None:
        out[previous[0]] = previous[1]
    return out


def segment_outside_lineage(segment_epochs: Mapping[int, int], end_offset: int,
                            log_end_offset: int, lineage: Sequence[tuple[int, int]]
                            ) -> str | None:
    """Why a remote segment is outside the leader-epoch ``lineage`` (``(epoch, start offset)``
    entries, ascending), or None when it is within it (``isRemoteSegmentWithinLeaderEpochs``).

    ``segment_epochs`` is the segment's own ``segmentLeaderEpochs`` (epoch -> first offset of
    the epoch in the segment), ``end_offset`` its last offset, ``log_end_offset`` the end of
    the log the lineage is of.
    """
    if not lineage:
        return "the leader epoch lineage is empty"
    leader = dict(lineage)
    keys = sorted(leader)
    seg = build_filtered_leader_epoch_map(segment_epochs)
    if not seg:
        return "the segment has no leader epochs"
    seg_keys = list(seg)
    last_epoch = seg_keys[-1]
    if last_epoch < keys[0] or last_epoch > keys[-1]:
        return (f"its last epoch {last_epoch} is outside the lineage's epochs "
                f"{keys[0]}..{keys[-1]}")
    # the first segment epoch at or after the lineage's first (the lineage may have lost its
    # early epochs when the log start moved past them)
    i = bisect.bisect_left(seg_keys, keys[0])
    if i == len(seg_keys):
        return f"no epoch at or after the lineage's first epoch {keys[0]}"
    first_epoch = seg_keys[i]

    def higher(entries: Sequence[int], table: Mapping[int, int], epoch: int
               ) -> tuple[int, int] | None:
        j = bisect.bisect_right(entries, epoch)
        return (entries[j], table[entries[j]]) if j < len(entries) else None

    for epoch in seg_keys[i:]:
        offset = seg[epoch]
        if epoch not in leader:
            return f"epoch {epoch} is not in the leader epoch lineage"
        if epoch == first_epoch and keys[0] < epoch and offset < leader[epoch]:
            return (f"its first epoch {epoch} starts at offset {offset}, before the lineage's "
                    f"start of that epoch ({leader[epoch]})")
        if epoch == last_epoch:
            nxt = higher(keys, leader, epoch)
            if nxt is not None and end_offset > nxt[1] - 1:
                return (f"it ends at offset {end_offset}, past the end of its last epoch "
                        f"{epoch} in the lineage ({nxt[1] - 1}; epoch {nxt[0]} starts at "
                        f"{nxt[1]})")
        elif higher(keys, leader, epoch) != higher(seg_keys, seg, epoch):
            return (f"after epoch {epoch} it goes on with {higher(seg_keys, seg, epoch)}, the "
                    f"lineage with {higher(keys, leader, epoch)} (epoch, start offset)")
    if end_offset >= log_end_offset:
        return f"it ends at offset {end_offset}, at or past the log end offset {log_end_offset}"
    return None
