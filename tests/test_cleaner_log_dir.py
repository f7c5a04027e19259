"""The log cleaner of a ``LogDir``: dirtiest first, ``cleaner-offset-checkpoint`` in Kafka's
format across restarts, compacted logs' retention on the cleaner's side, the maintenance
scheduler and the cleaner threads, uncleanable partitions, and ``__consumer_offsets`` staying
bounded under a million offset commits."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkalog import files
from kafkalog.checkpoint import OffsetCheckpointFile
from kafkalog.clock import ManualClock
from kafkalog.groups.metadata_manager import GroupMetadataManager
from kafkalog.log_dir import LogDir
from kafkalog.records.record import Record
from kafkalog.scheduler import LogDirScheduler

T0 = 1_700_000_000_000
COMPACT = {"cleanup.policy": "compact", "segment.bytes": "1024",
           "min.cleanable.dirty.ratio": "0.1"}
SMALL_CLEANER = {"log.cleaner.dedupe.buffer.size": str(1 << 20)}


def _fill(log, n: int, keys: int, start: int = 0) -> None:  # noqa: ANN001
    for i in range(start, start + n):
        log.append([Record(b"k%d" % (i % keys), b"v%d" % i, T0 + i)])


def _checkpoint(root: Path) -> dict:
    return OffsetCheckpointFile(root / files.CLEANER_OFFSET_CHECKPOINT_FILE).read()


def test_dirtiest_log_first_and_checkpoint_across_restarts(tmp_path: Path) -> None:
    root = tmp_path / "logs"
    clock = ManualClock(T0)
    with LogDir.open(root, SMALL_CLEANER, clock=clock) as d:
        d.create_topic("a", 1, config=COMPACT)
        d.create_topic("b", 1, config=COMPACT)
        d.create_topic("plain", 1, config={"segment.bytes": "1024"})
        for t in ("a", "b", "plain"):
            _fill(d.log(t, 0), 60, 5)
            d.log(t, 0).roll()
        cleaner = d.cleaner
        assert (root / files.CLEANER_OFFSET_CHECKPOINT_FILE).exists()
        # a's first half is clean already: b (all dirty) is the dirtier log
        a_mid = d.log("a", 0).segments[len(d.log("a", 0).segments) // 2].base_offset
        cleaner.cleaner_manager.update_checkpoints(root, update=(("a", 0), a_mid))
        assert cleaner.clean_filthiest_log()
        # the dirtiest first: b; its first dirty offset is now its active segment
        assert _checkpoint(root) == {("a", 0): a_mid,
                                     ("b", 0): d.log("b", 0).active_segment.base_offset}
        assert cleaner.clean_filthiest_log()
        cp = _checkpoint(root)
        assert cp[("a", 0)] == d.log("a", 0).active_segment.base_offset
        assert ("plain", 0) not in cp  # delete-policy logs are not the cleaner's
        assert not cleaner.clean_filthiest_log()  # nothing dirty any more
        a_records = [(r.offset, r.key, r.value) for r in d.log("a", 0).records()]
        assert [k for _, k, _ in a_records] == [b"k%d" % i for i in range(5)]
        plain_size = d.log("plain", 0).size
    # Kafka's text format at the root, read back at the next open
    text = (root / files.CLEANER_OFFSET_CHECKPOINT_FILE).read_text().splitlines()
    assert text[:2] == ["0", "2"] and sorted(text[2:]) == sorted(
        f"{t} 0 {o}" for (t, _), o in cp.items())
    with LogDir.open(root, SMALL_CLEANER, clock=clock) as d:
        assert d.cleaner.cleaner_manager.all_cleaner_checkpoints() == cp
        assert not d.cleaner.clean_filthiest_log()  # the checkpoint says: nothing dirty
        _fill(d.log("a", 0), 60, 5, start=1000)
        d.log("a", 0).roll()
        assert d.cleaner.clean_filthiest_log()
        assert [r.key for r in d.log("a", 0).records()] == [b"k%d" % i for i in range(5)]
        assert d.log("plain", 0).size == plain_size


def test_retention_of_compacted_logs_runs_on_the_cleaner(tmp_path: Path) -> None:
    root = tmp_path / "logs"
    clock = ManualClock(T0)
    with LogDir.open(root, SMALL_CLEANER, clock=clock) as d:
        cfg = {**COMPACT, "cleanup.policy": "compact,delete", "retention.ms": "1000",
               "file.delete.delay.ms": "0"}
        d.create_topic("cd", 1, config=cfg)
        d.create_topic("del", 1, config={"segment.bytes": "1024", "retention.ms": "1000",
                                         "file.delete.delay.ms": "0"})
        for t in ("cd", "del"):
            _fill(d.log(t, 0), 60, 60)  # unique keys: cleaning removes nothing
            d.log(t, 0).roll()
        clock.advance(10_000)
        # LogManager.cleanupLogs: the delete-only log
        assert d.enforce_retention() > 0
        assert d.log("del", 0).log_start_offset == 60
        assert d.log("cd", 0).log_start_offset == 0
        # the cleaner applies compact,delete's time retention after its pass
        d.cleaner.clean_until_idle()
        assert d.log("cd", 0).log_start_offset == 60


def test_scheduler_runs_the_cleaner(tmp_path: Path) -> None:
    root = tmp_path / "logs"
    clock = ManualClock(T0)
    with LogDir.open(root, {**SMALL_CLEANER, "log.cleaner.backoff.ms": "5000"},
                     clock=clock) as d:
        d.create_topic("t", 1, config=COMPACT)
        sched = LogDirScheduler(d, clock=clock)
        _fill(d.log("t", 0), 80, 3)
        d.log("t", 0).roll()
        sched.run_pending()
        assert sched.runs("kafka-log-cleaner") == 1
        assert sorted(r.key for r in d.log("t", 0).records()) == [b"k%d" % i for i in range(3)]
        _fill(d.log("t", 0), 80, 3, start=100)
        d.log("t", 0).roll()
        clock.advance(4999)
        sched.run_pending()
        assert sched.runs("kafka-log-cleaner") == 1  # log.cleaner.backoff.ms
        clock.advance(1)
        sched.run_pending()
        assert sched.runs("kafka-log-cleaner") == 2
        assert len(list(d.log("t", 0).records())) == 3
        assert sched.errors == {}


def test_cleaner_threads_clean_in_the_background(tmp_path: Path) -> None:
    root = tmp_path / "logs"
    with LogDir.open(root, {**SMALL_CLEANER, "log.cleaner.backoff.ms": "20"}) as d:
        d.create_topic("t", 2, config=COMPACT)
        for p in (0, 1):
            _fill(d.log("t", p), 100, 4)
            d.log("t", p).roll()
        d.cleaner.startup()
        for p in (0, 1):
            end = d.log("t", p).active_segment.base_offset
            assert d.cleaner.await_cleaned(("t", p), end, max_wait_ms=30_000)
        d.cleaner.shutdown()
        for p in (0, 1):
            assert len(list(d.log("t", p).records())) == 4


def test_a_failing_log_becomes_uncleanable_and_others_go_on(tmp_path: Path) -> None:
    root = tmp_path / "logs"
    clock = ManualClock(T0)
    with LogDir.open(root, SMALL_CLEANER, clock=clock) as d:
        d.create_topic("bad", 1, config=COMPACT)
        d.create_topic("good", 1, config=COMPACT)
        _fill(d.log("bad", 0), 200, 5)
        _fill(d.log("good", 0), 60, 5)
        for t in ("bad", "good"):
            d.log(t, 0).roll()
        # damage a record inside a batch of the dirtiest log (headers intact: the scan passes,
        # the record walk does not)
        seg = d.log("bad", 0).segments[1]
        with open(seg.log_path, "r+b") as f:
            f.seek(61)
            f.write(b"\x7f")  # a record length running past its batch
        assert not d.cleaner.try_clean_filthiest_log()
        assert d.cleaner.cleaner_manager.uncleanable_partitions(root) == {("bad", 0)}
        assert d.cleaner.try_clean_filthiest_log()  # the other log is cleaned
        assert [r.key for r in d.log("good", 0).records()] == [b"k%d" % i for i in range(5)]
        assert not [p for p in seg.log_path.parent.iterdir()
                    if p.name.endswith((".cleaned", ".swap"))]


def test_cleaner_disabled(tmp_path: Path) -> None:
    with LogDir.open(tmp_path / "logs", {"log.cleaner.enable": "false"}) as d:
        assert d.cleaner is None
    with LogDir.open(tmp_path / "logs", read_only=True) as d:
        assert d.cleaner is None


@pytest.mark.slow
def test_a_million_offset_commits_keep_consumer_offsets_bounded(tmp_path: Path) -> None:
    """The issue's test: ``GroupMetadataManager`` commits 1,000,000 offsets (100,000
    OffsetCommits of 10 partitions, one batch each, as the group coordinator writes them) to
    ``__consumer_offsets``, which it creates compacted (Kafka's offsets topic configs, with a
    1 MiB ``offsets.topic.segment.bytes``); the log dir's scheduler runs the log cleaner every
    ``log.cleaner.backoff.ms``. The partition stays bounded (peak and final size a few
    segments, whatever the number of commits), and a fresh manager replaying the cleaned log
    after a restart sees the last offset committed for every partition."""
    root = tmp_path / "logs"
    clock = ManualClock(T0)
    partitions = 10
    commits = 100_000
    segment_bytes = 1 << 20
    props = {**SMALL_CLEANER, "log.cleaner.backoff.ms": "15000",
             "offsets.topic.num.partitions": "1",
             "offsets.topic.segment.bytes": str(segment_bytes)}
    with LogDir.open(root, props, clock=clock) as d:
        manager = GroupMetadataManager(d)
        log = d.log("__consumer_offsets", 0)
        assert log.config.compact and log.config.segment_bytes == segment_bytes
        sched = LogDirScheduler(d, clock=clock)
        appended = peak = size_after_clean = 0
        for c in range(commits):
            manager.commit_offsets("g", {("orders", p): c for p in range(partitions)})
            if c % 2_000 == 1_999:
                appended += log.size - size_after_clean
                peak = max(peak, log.size)
                clock.advance(15_000)
                sched.run_pending()  # the cleaner every log.cleaner.backoff.ms
                size_after_clean = log.size
        assert log.log_end_offset == commits * partitions
        log.roll()
        d.cleaner.clean_until_idle()
        assert len(list(log.records())) == partitions
        assert log.size < 2 * segment_bytes, log.size
        # bounded: a few segments at any moment, while far more than that was written
        assert peak < 8 * segment_bytes, peak
        assert appended > 30 * segment_bytes, appended
    with LogDir.open(root, props, clock=clock) as d:
        assert (_checkpoint(root)[("__consumer_offsets", 0)]
                == d.log("__consumer_offsets", 0).log_end_offset)
        reloaded = GroupMetadataManager(d)
        assert reloaded.fetch_offsets("g") == {("orders", p): commits - 1
                                               for p in range(partitions)}
