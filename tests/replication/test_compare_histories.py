"""End to end over random replication histories written by the engine: after the follower
does on disk what ``compare_replicas`` says Kafka's fetcher does (truncate to the simulated
offset, then append the leader's batches from the simulated fetch offset), the two replicas
hold the same records, and the records the report calls lost are exactly the follower's
records the leader's log does not hold.

A history is a sequence of leadership terms with increasing epochs between two brokers: the
term's leader appends batches in its epoch; the other broker, when online, follows as Kafka's
replication leaves a follower: its log is its common prefix with the leader's plus some more
of the leader's batches (a follower never holds another epoch's records past the point where
its history and the leader's split).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalog import Log, LogDir, Record, encode_batch
from kafkalog.replication.compare import compare_replicas

# a term: (leader 0/1, batch sizes the leader appends, follower online?, how many of the
# leader's batches beyond the common prefix it copies)
_term = st.tuples(st.integers(0, 1), st.lists(st.integers(1, 3), max_size=3), st.booleans(),
                  st.integers(0, 6))


def _histories(terms: list) -> list[list[tuple[int, int, int, bytes]]]:
    """Each broker's batches: ``(base offset, epoch, records, tag)``."""
    logs: list[list[tuple[int, int, int, bytes]]] = [[], []]
    for epoch, (leader, sizes, online, extra) in enumerate(terms):
        mine = logs[leader]
        for n in sizes:
            base = mine[-1][0] + mine[-1][2] if mine else 0
            mine.append((base, epoch, n, b"%d-%d" % (leader, base)))
        if online:
            other = logs[1 - leader]
            common = 0
            while common < min(len(other), len(mine)) and other[common] == mine[common]:
                common += 1
            logs[1 - leader] = mine[:min(len(mine), common + extra)]
    return logs


def _write(root: Path, bid: int, batches: list) -> None:
    with LogDir.open(root / f"b{bid}", node_id=bid) as d:
        d.create_topic("t", 1)
        log = d.log("t", 0)
        for base, epoch, n, tag in batches:
            log.append_batches(encode_batch(
                [Record(b"k", tag + b"/%d" % i, 1000 + base + i) for i in range(n)],
                base_offset=base, partition_leader_epoch=epoch))


def _records(d: Path) -> dict[int, tuple]:
    with Log.open(d, read_only=True, standalone=False) as log:
        return {r.offset: tuple(r[:4]) for r in log.records()}


@settings(max_examples=40, deadline=None)
@given(terms=st.lists(_term, min_size=1, max_size=5))
def test_reconciling_as_reported_makes_the_replicas_agree(terms):
    logs = _histories(terms)
    root = Path(tempfile.mkdtemp())
    try:
        for bid in (0, 1):
            _write(root, bid + 1, logs[bid])
        [r] = compare_replicas([root / "b1", root / "b2"]) or [None]
        if r is None:
            return
        chosen = r.candidates[0]
        [f] = chosen.followers
        leader_dir = root / f"b{chosen.leader}" / "t-0"
        follower_dir = root / f"b{f.replica}" / "t-0"
        before_leader, before = _records(leader_dir), _records(follower_dir)
        lost = {o for o, rec in before.items()
                if o >= min(before_leader, default=0) and before_leader.get(o) != rec}
        assert sorted(lost) == f.lost_offsets.tolist()
        assert chosen.kept_differences == 0 and not chosen.stuck
        with Log.open(leader_dir, read_only=True, standalone=False) as leader, \
                Log.open(follower_dir, standalone=False) as follower:
            if f.outcome.truncated_fully:
                follower.truncate_fully_and_start_at(f.outcome.fetch_offset)
            else:
                follower.truncate_to(f.outcome.follower.log_end_offset)
            assert follower.log_end_offset == f.outcome.fetch_offset
            while follower.log_end_offset < leader.log_end_offset:
                follower.append_batches(leader.read(follower.log_end_offset, 1 << 20))
        assert _records(follower_dir) == before_leader
        [again] = compare_replicas([root / "b1", root / "b2"], leader=chosen.leader)
        assert again.candidates[0].lost == 0
        settled = again.candidates[0].followers[0].outcome
        assert settled.truncated_to is None and not settled.truncated_fully
        assert settled.fetch_offset == settled.follower.log_end_offset
    finally:
        shutil.rmtree(root)
