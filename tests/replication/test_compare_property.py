"""``compare_pair`` against a plain reference (every record of both replicas in a dict by
offset), over random replica pairs: a replicated prefix, then batches that differ in content,
in batching (the same records cut otherwise), in headers or timestamps, with compaction-like
holes, and run windows small enough that every run is cut several times."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkalog import Log, Record, encode_batch
from kafkalog.replication import compare as compare_mod
from kafkalog.replication.compare import compare_pair, open_replicas

_record = st.tuples(
    st.sampled_from([None, b"k1", b"k2", b""]),
    st.sampled_from([None, b"v", b"w", b"x" * 40]),
    st.sampled_from([1000, 1001]),
    st.sampled_from([(), (("h", b"1"),), (("h", b"2"),), (("h", None), ("i", b""))]),
)

# one step of a side's history after the common prefix: records at the next offsets, the same
# as the other side's (same) or not, in batches of a given size, with offsets skipped (holes)
_step = st.tuples(st.lists(_record, min_size=1, max_size=6), st.integers(1, 4),
                  st.integers(0, 2))


def _write(d: Path, prefix: list[bytes], steps: list, epoch: int, base: int) -> None:
    with Log.open(d) as log:
        for data in prefix:
            log.append_batches(data)
        offset = base
        for records, per_batch, hole in steps:
            offset += hole
            for i in range(0, len(records), per_batch):
                chunk = [Record(k, v, t, h) for k, v, t, h in records[i:i + per_batch]]
                log.append_batches(encode_batch(chunk, base_offset=offset,
                                                partition_leader_epoch=epoch))
                offset += len(chunk)


def _reference(a: Path, b: Path, start: int, end: int) -> tuple[int, int, int, list[int]]:
    def records(d: Path) -> dict[int, tuple]:
        with Log.open(d, read_only=True) as log:
            return {r.offset: tuple(r[:4]) for r in log.records(start, end,
                                                                 include_control=True)}
    ra, rb = records(a), records(b)
    common = sorted(set(ra) & set(rb))
    differing = [o for o in common if ra[o] != rb[o]]
    return (len(common) - len(differing), len(ra) - len(common), len(rb) - len(common),
            differing)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(prefix=st.lists(st.lists(_record, min_size=1, max_size=4), max_size=4),
       steps_a=st.lists(_step, max_size=4), steps_b=st.lists(_step, max_size=4),
       share=st.booleans(), tweak=st.integers(-1, 8),
       run_bytes=st.sampled_from([1, 200, 16 << 20]))
def test_compare_pair_matches_the_reference(monkeypatch, prefix, steps_a, steps_b, share,
                                            tweak, run_bytes):
    monkeypatch.setattr(compare_mod, "_RUN_BYTES", run_bytes)
    root = Path(tempfile.mkdtemp())
    try:
        shared, off = [], 0
        for records in prefix:
            shared.append(encode_batch([Record(*r) for r in records], base_offset=off,
                                       partition_leader_epoch=0))
            off += len(records)
        if share:  # the same records in other batches, one of them with other headers
            copied = [list(records) for records, _, _ in steps_a]
            flat = [(i, j) for i, rs in enumerate(copied) for j in range(len(rs))]
            if 0 <= tweak < len(flat):
                i, j = flat[tweak]
                k, v, t, h = copied[i][j]
                copied[i][j] = (k, v, t, (("h", b"other"),) if h != (("h", b"other"),) else ())
            steps_b = [(copied[n], per_batch + 1, hole)
                       for n, (_, per_batch, hole) in enumerate(steps_a)] + steps_b
        _write(root / "a" / "t-0", shared, steps_a, 1, off)
        _write(root / "b" / "t-0", shared, steps_b, 2, off)
        reps = {r.name: r for r in open_replicas([root / "a" / "t-0", root / "b" / "t-0"])[
            ("t", 0)]}
        a, b = reps[str(root / "a")], reps[str(root / "b")]
        got = compare_pair(a, b)
        want = _reference(a.directory, b.directory, got.start, got.end)
        assert (got.same, got.only_a, got.only_b, got.differing.tolist()) == want
        if want[3]:
            assert got.first is not None and got.first.offset == want[3][0]
            assert got.first.a != got.first.b
        else:
            assert got.first is None
    finally:
        shutil.rmtree(root)


@pytest.mark.parametrize("run_bytes", [1, 16 << 20])
def test_first_difference_names_the_field(tmp_path, monkeypatch, run_bytes):
    monkeypatch.setattr(compare_mod, "_RUN_BYTES", run_bytes)
    for side, rec in (("a", Record(b"k", b"v", 5, [("h", b"1")])),
                      ("b", Record(b"k", b"v", 5, [("h", b"2")]))):
        with Log.open(tmp_path / side / "t-0") as log:
            log.append_batches(encode_batch([Record(b"k", b"v", 5)]))
            log.append_batches(encode_batch([rec], base_offset=1))
    reps = open_replicas([tmp_path / "a" / "t-0", tmp_path / "b" / "t-0"])[("t", 0)]
    got = compare_pair(*reps)
    assert (got.same, got.differing.tolist()) == (1, [1])
    assert (got.first.field, got.first.a, got.first.b) == ("headers", (("h", b"1"),),
                                                           (("h", b"2"),))
