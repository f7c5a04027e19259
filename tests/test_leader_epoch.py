"""LeaderEpochFileCache: Kafka's assign / truncate / endOffsetFor semantics and file format."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkalog.leader_epoch import LeaderEpochFileCache


def test_assign_keeps_monotonic_entries_and_file(tmp_path: Path) -> None:
    p = tmp_path / "leader-epoch-checkpoint"
    c = LeaderEpochFileCache(p)
    assert c.assign(0, 0)
    assert not c.assign(0, 5)  # same epoch, later offset: nothing to do
    assert c.assign(2, 10)
    assert c.assign(2, 8)  # same epoch, earlier start: replaced
    assert c.entries == [(0, 0), (2, 8)]
    assert c.assign(1, 9)  # lower epoch: entries with epoch >= 1 or start >= 9 removed
    assert c.entries == [(0, 0), (1, 9)]
    assert p.read_text() == "0\n2\n0 0\n1 9\n"
    assert LeaderEpochFileCache(p).entries == [(0, 0), (1, 9)]
    with pytest.raises(ValueError):
        c.assign(-1, 0)


def test_end_offset_for() -> None:
    c = LeaderEpochFileCache("/nonexistent/leader-epoch-checkpoint", read_only=True)
    assert c.end_offset_for(0, 100) == (-1, -1)
    for e, o in [(1, 0), (3, 10), (5, 20)]:
        c.assign(e, o, flush=False)
    assert c.end_offset_for(5, 100) == (5, 100)  # latest: log end offset
    assert c.end_offset_for(3, 100) == (3, 20)
    assert c.end_offset_for(4, 100) == (3, 20)  # unknown epoch: floor epoch, next start
    assert c.end_offset_for(0, 100) == (0, 0)  # below every epoch: the first start
    assert c.end_offset_for(6, 100) == (-1, -1)
    assert c.end_offset_for(-1, 100) == (-1, -1)


def test_truncations(tmp_path: Path) -> None:
    c = LeaderEpochFileCache(tmp_path / "leader-epoch-checkpoint")
    for e, o in [(1, 0), (3, 10), (5, 20)]:
        c.assign(e, o)
    c.truncate_from_end(20)
    assert c.entries == [(1, 0), (3, 10)]
    c.truncate_from_end(100)
    assert c.entries == [(1, 0), (3, 10)]
    c.truncate_from_start(12)
    assert c.entries == [(3, 12)]
    c.truncate_from_start(5)
    assert c.entries == [(3, 12)]
    c.assign_batches([-1, 3, 4, 4, 2], [12, 13, 14, 15, 16])
    assert c.entries == [(3, 12), (4, 14)]
    c.clear()
    assert c.entries == [] and (tmp_path / "leader-epoch-checkpoint").read_text() == "0\n0\n"
