"""Timestamp searches over a ``.timeindex`` damaged behind a clean-shutdown marker.

Kafka loads such a segment without recovery: its sanity check reads the last entry only, so
an index that lost its last entries, or whose entries were changed while staying plausible,
is trusted, and a search answers a later offset. Here every answer must be the reference
(the first offset whose record's timestamp is >= the target) or a ``KafkaLogError`` naming
the file; the damage is random (hypothesis), the log holds several segments, batches of
several records and timestamps out of order. Spark's planning, which reads the same files
without the engine, must resolve the same timestamps to the same offsets.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkalog.config import LogConfig
from kafkalog.errors import KafkaLogError
from kafkalog.log import Log
from kafkalog.records.record import Record
from kafkalog.spark.layout import describe_partition
from kafkalog.spark.planning import offset_for_timestamp as planning_offset_for_timestamp

T = 1_700_000_000_000
CFG = LogConfig(index_interval_bytes=200, segment_bytes=4000)


def _stamps(n: int) -> list[int]:
    rnd = random.Random(11)
    # mostly increasing, with records up to 40 ms late (several producers' clocks)
    return [T + 10 * o - rnd.choice([0, 0, 0, 5, 40]) for o in range(n)]


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> tuple[Path, list[int]]:
    d = tmp_path_factory.mktemp("time-index-damage") / "topic-0"
    stamps = _stamps(400)
    rnd = random.Random(3)
    with Log.open(d, CFG) as log:
        o = 0
        while o < len(stamps):
            n = min(rnd.choice([1, 3, 7]), len(stamps) - o)
            log.append([Record(b"k%d" % i, b"v" * 20, stamps[i]) for i in range(o, o + n)])
            o += n
        assert len(log.segments) >= 3
    return d, stamps


def _reference(stamps: list[int], target: int) -> int | None:
    return next((o for o, t in enumerate(stamps) if t >= target), None)


def _damage(d: Path, data: st.DataObject) -> str:
    files = sorted(d.glob("*.timeindex"))
    p = files[data.draw(st.integers(0, len(files) - 1), label="file")]
    raw = bytearray(p.read_bytes())
    entries = len(raw) // 12
    how = data.draw(st.sampled_from(["truncate", "flip", "entry"]), label="how")
    if how == "truncate" or entries == 0:
        keep = data.draw(st.integers(0, max(entries - 1, 0)), label="keep")
        p.write_bytes(bytes(raw[:12 * keep]))
        return f"{p.name}: kept {keep} of {entries} entries"
    if how == "flip":
        flips = data.draw(st.lists(st.tuples(st.integers(0, len(raw) - 1), st.integers(0, 7)),
                                   min_size=1, max_size=4), label="flips")
        for pos, bit in flips:
            raw[pos] ^= 1 << bit
        p.write_bytes(bytes(raw))
        return f"{p.name}: flipped {flips}"
    # one entry rewritten to plausible values: its timestamp and offset moved a little, so
    # the index may stay monotonic and pass the sanity check
    k = data.draw(st.integers(0, entries - 1), label="entry")
    ts = int.from_bytes(raw[12 * k:12 * k + 8], "big") + data.draw(st.integers(-60, 60))
    off = max(0, int.from_bytes(raw[12 * k + 8:12 * k + 12], "big") + data.draw(
        st.integers(-6, 6)))
    raw[12 * k:12 * k + 12] = ts.to_bytes(8, "big") + off.to_bytes(4, "big")
    p.write_bytes(bytes(raw))
    return f"{p.name}: entry {k} set to ({ts}, +{off})"


@settings(max_examples=120, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data(), read_only=st.booleans())
def test_damaged_time_index_answers_match_reference(template, tmp_path_factory, data,
                                                    read_only):
    src, stamps = template
    d = tmp_path_factory.mktemp("case") / "topic-0"
    shutil.copytree(src, d)
    what = _damage(d, data)
    targets = list(range(T - 50, T + 10 * len(stamps) + 20, 7))
    want = [_reference(stamps, t) for t in targets]
    # Spark's planning reads the same files its own way (before a writer's open recovers)
    info = describe_partition("topic", 0, str(d))
    assert [planning_offset_for_timestamp(info, t) for t in targets[::3]] == want[::3], what
    try:
        with Log.open(d, CFG, read_only=read_only) as log:
            got_many = log.offsets_for_timestamps(targets)
            got_one = [log.offset_for_timestamp(t) for t in targets[::5]]
            max_at = log.offset_for_timestamp(-3)
    except KafkaLogError as e:  # a clear error naming the file is an allowed outcome
        assert e.path is not None, what
        return
    assert got_many == want, what
    assert got_one == want[::5], what
    top = max(stamps)
    assert max_at == stamps.index(top), what
    shutil.rmtree(d.parent, ignore_errors=True)


def test_real_kafka_time_index_is_trusted(tmp_path, caplog):
    """The checks hold on files a Kafka broker wrote (no false alarm, the index stays in use):
    the real ``__consumer_offsets`` segment of the shared fixtures, opened by a writer and by a
    read-only reader, and described by Spark's planning; every timestamp search answers as
    the reference over its records."""
    import os

    from tests.conftest import shared_fixture_path

    src = shared_fixture_path("kafka-real", "LDI-POC", "__consumer_offsets-6")
    d = tmp_path / src.name
    shutil.copytree(src, d)
    for f in d.iterdir():
        os.chmod(f, 0o644)
    with Log.open(d, read_only=True) as view:
        stamps = [r.timestamp for r in view.records()]
        base = view.log_start_offset
    assert len(stamps) > 3
    targets = sorted({t + dt for t in stamps for dt in (-1, 0, 1)})
    want = [next((base + o for o, t in enumerate(stamps) if t >= x), None) for x in targets]
    info = describe_partition("__consumer_offsets", 6, str(d))
    assert info.segments[0].time_timestamps.size == 3  # kept: the entries hold
    assert [planning_offset_for_timestamp(info, x) for x in targets] == want
    with caplog.at_level("INFO", logger="kafkalog.segment"):
        for read_only in (True, False):
            with Log.open(d, read_only=read_only) as log:
                assert log.offsets_for_timestamps(targets) == want
                assert all(s.check_time_index() for s in log.segments)
                assert log.segments[0].searched_max_timestamp().timestamp == max(stamps)
    assert not [r for r in caplog.records if "disagrees" in r.getMessage()]


def test_entry_moved_below_an_earlier_record(template, tmp_path):
    """A case hypothesis found: one entry rewritten 25 ms earlier and one offset later stays
    monotonic, and the batch holding its new offset happens to have exactly that max
    timestamp; but a record before it is later, so the search started at the entry answered
    past the first record at or after the target. The batches from the previous entry to the
    entry's are now checked too."""
    src, stamps = template
    d = tmp_path / "topic-0"
    shutil.copytree(src, d)
    p = sorted(d.glob("*.timeindex"))[1]
    raw = bytearray(p.read_bytes())
    k = 6
    ts = int.from_bytes(raw[12 * k:12 * k + 8], "big") - 25
    off = int.from_bytes(raw[12 * k + 8:12 * k + 12], "big") + 1
    raw[12 * k:12 * k + 12] = ts.to_bytes(8, "big") + off.to_bytes(4, "big")
    p.write_bytes(bytes(raw))
    targets = list(range(T - 50, T + 10 * len(stamps) + 20, 7))
    want = [_reference(stamps, t) for t in targets]
    for read_only in (False, True):
        with Log.open(d, CFG, read_only=read_only) as log:
            assert log.offsets_for_timestamps(targets) == want
            assert [log.offset_for_timestamp(t) for t in targets] == want
