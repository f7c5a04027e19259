"""LogDir (issue 7): a broker's log dir, its root files, clean and unclean restarts.

Kafka sources followed: core/src/main/scala/kafka/log/LogManager.scala (loadLogs, shutdown,
checkpointLogRecoveryOffsets, checkpointLogStartOffsets), storage/.../LogLoader.java,
server-common/.../CheckpointFile.java, metadata/.../MetaProperties.java.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kafkalog import files
from kafkalog.checkpoint import (
    LeaderEpochCheckpointFile,
    MetaProperties,
    OffsetCheckpointFile,
    PartitionMetadataFile,
)
from kafkalog.clock import ManualClock
from kafkalog.errors import CorruptCheckpointError, LogLockedError, OffsetOutOfRangeError
from kafkalog.index.txn_index import TransactionIndex
from kafkalog.log_dir import (
    TOPICS_FILE,
    LogDir,
    TopicExistsError,
    UnknownTopicOrPartitionError,
)
from kafkalog.producer_snapshot import read_snapshot
from kafkalog.records.record import Record
from kafkalog.segment import LogSegment
from kafkalog.tools.verify import verify_paths
from tests.conftest import shared_fixture_path

REAL = ["LDI-POC", "VolodymyrZee-kafka", "KAIPASUBHASH-kafka-logs"]
T0 = 1_700_000_000_000
#: files a broker's loader leaves alone that we add: our per-partition writer lock
OUR_PARTITION_FILES = {".kafkalog.lock"}
KRAFT_FILES = {"quorum-state"}


def copy_real(tmp_path: Path, name: str) -> Path:
    src = shared_fixture_path("kafka-real", name)
    dst = tmp_path / name
    shutil.copytree(src, dst)
    return dst


def tree_digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def count_recovery(monkeypatch):
    """Every ``LogSegment.recover`` call, as (partition dir name, base offset)."""
    calls: list[tuple[str, int]] = []
    real = LogSegment.recover

    def counting(self, *a, **kw):
        calls.append((self.directory.name, self.base_offset))
        return real(self, *a, **kw)

    monkeypatch.setattr(LogSegment, "recover", counting)
    return calls


# -- the rules real Kafka log dirs satisfy -------------------------------------------------------


def broker_file_rules(root: Path) -> list[str]:
    """Problems a broker would have with ``root``; the same rules hold for the real fixtures."""
    problems = []
    meta = root / files.META_PROPERTIES_FILE
    if not meta.exists():
        problems.append("meta.properties missing")
    else:
        MetaProperties.read(meta)
    for name in (files.RECOVERY_POINT_CHECKPOINT_FILE, files.REPLICATION_OFFSET_CHECKPOINT_FILE,
                 files.LOG_START_OFFSET_CHECKPOINT_FILE, files.CLEANER_OFFSET_CHECKPOINT_FILE):
        if (root / name).exists():
            OffsetCheckpointFile(root / name).read()
    for d in sorted(p for p in root.iterdir() if p.is_dir()):
        topic, part = files.parse_topic_partition_name(d)
        if files.log_dir_name(topic, part) != d.name:
            problems.append(f"{d.name}: not Kafka's directory name")
        names = {p.name for p in d.iterdir()}
        if files.LEADER_EPOCH_CHECKPOINT_FILE not in names:
            problems.append(f"{d.name}: no leader-epoch-checkpoint")
        else:
            LeaderEpochCheckpointFile(d / files.LEADER_EPOCH_CHECKPOINT_FILE).read()
        if files.PARTITION_METADATA_FILE in names:
            PartitionMetadataFile(d / files.PARTITION_METADATA_FILE).read()
        for n in names:
            p = d / n
            if files.is_log_file(n) or files.is_index_file(n) or files.is_time_index_file(n) \
                    or files.is_txn_index_file(n) or files.is_producer_snapshot_file(n):
                files.offset_from_filename(n)
                if len(n.split(".")[0]) != 20:
                    problems.append(f"{d.name}/{n}: not a 20-digit name")
                if files.is_producer_snapshot_file(n):
                    read_snapshot(p)
                if files.is_txn_index_file(n):
                    idx = TransactionIndex(p, files.offset_from_filename(n), writable=False)
                    idx.sanity_check()
                    idx.close()
            elif n in (files.LEADER_EPOCH_CHECKPOINT_FILE, files.PARTITION_METADATA_FILE) \
                    or n in OUR_PARTITION_FILES or n in KRAFT_FILES \
                    or files.parse_kraft_snapshot_file_name(n) is not None:
                continue
            else:
                problems.append(f"{d.name}/{n}: a file a broker does not know")
    report = verify_paths([str(root)])
    problems += [f"verify: {f.file}: {f.message}" for f in report.findings
                 if f.severity == "error"]
    return problems


@pytest.mark.parametrize("name", REAL)
def test_real_fixtures_satisfy_the_broker_rules(tmp_path: Path, name: str) -> None:
    assert broker_file_rules(copy_real(tmp_path, name)) == []


# -- real log.dirs trees -------------------------------------------------------------------------


@pytest.mark.parametrize("name", REAL)
def test_real_log_dirs_open_list_read_and_round_trip(tmp_path: Path, name: str,
                                                     count_recovery) -> None:
    root = copy_real(tmp_path, name)
    expected = json.loads((root / "EXPECTED.json").read_text())["files"]
    partition_dirs = sorted(p.name for p in root.iterdir() if p.is_dir())
    hw_before = OffsetCheckpointFile(root / files.REPLICATION_OFFSET_CHECKPOINT_FILE).read()
    kept = {n: (root / n).read_bytes() for n in ("meta.properties", "cleaner-offset-checkpoint")
            if (root / n).exists()}
    kept.update({str(p.relative_to(root)): p.read_bytes()
                 for p in root.glob("*/partition.metadata")})
    with LogDir.open(root, clock=ManualClock(T0)) as d:
        assert not d.clean_shutdown  # the fixtures hold no marker: everything is recovered
        assert [files.log_dir_name(t, p) for t, p in d.partitions()] == partition_dirs
        for t, p in d.partitions():
            log = d.log(t, p)
            assert d.log(t, p) is log  # opened once
            exp = expected[f"{files.log_dir_name(t, p)}/00000000000000000000.log"]
            got = list(log.records(include_control=True))
            assert len(got) == exp["record_count"]
            assert log.log_end_offset == exp["last_offset"] + 1
            assert d.high_watermark(t, p) == min(hw_before.get((t, p), log.log_end_offset),
                                                 log.log_end_offset)
        assert sorted({dn for dn, _ in count_recovery}) == partition_dirs
        partitions = d.partitions()
    for rel, data in kept.items():  # files we must not touch are byte-identical
        assert (root / rel).read_bytes() == data, rel
    rp = OffsetCheckpointFile(root / files.RECOVERY_POINT_CHECKPOINT_FILE).read()
    assert rp == {tp: expected[f"{files.log_dir_name(*tp)}/00000000000000000000.log"]
                  ["last_offset"] + 1 for tp in partitions if tp[0] != "__cluster_metadata"}
    assert OffsetCheckpointFile(root / files.LOG_START_OFFSET_CHECKPOINT_FILE).read() == {}
    assert json.loads((root / files.CLEAN_SHUTDOWN_FILE).read_text()) == {
        "version": 0, "brokerEpoch": -1}
    assert broker_file_rules(root) == []
    count_recovery.clear()
    with LogDir.open(root, clock=ManualClock(T0)) as d:
        assert d.clean_shutdown and count_recovery == []
        assert d.partitions() == partitions


@pytest.mark.parametrize("name", REAL)
def test_real_checkpoint_files_round_trip_byte_for_byte(tmp_path: Path, name: str) -> None:
    root = copy_real(tmp_path, name)
    out = tmp_path / "out"
    out.mkdir()
    checked = 0
    for p in sorted(root.rglob("*")):
        if p.name in (files.RECOVERY_POINT_CHECKPOINT_FILE,
                      files.REPLICATION_OFFSET_CHECKPOINT_FILE,
                      files.LOG_START_OFFSET_CHECKPOINT_FILE,
                      files.CLEANER_OFFSET_CHECKPOINT_FILE):
            f = OffsetCheckpointFile(p)
            OffsetCheckpointFile(out / p.name).write(dict(
                ((t, q), o) for t, q, o in f.read_entries()))
        elif p.name == files.LEADER_EPOCH_CHECKPOINT_FILE:
            LeaderEpochCheckpointFile(out / p.name).write(LeaderEpochCheckpointFile(p).read())
        elif p.name == files.PARTITION_METADATA_FILE:
            PartitionMetadataFile(out / p.name).write(PartitionMetadataFile(p).read().topic_id)
        elif p.name == files.META_PROPERTIES_FILE:
            props, comments = MetaProperties.read_raw(p)
            MetaProperties.read(p).write(out / p.name, date=comments[-1], jdk="jdk9")
            if (out / p.name).read_bytes() != p.read_bytes():  # JDK 8 key order
                MetaProperties.read(p).write(out / p.name, date=comments[-1], jdk="jdk8")
        elif files.is_producer_snapshot_file(p.name):
            from kafkalog.producer_snapshot import write_snapshot

            write_snapshot(out / p.name, read_snapshot(p))
        else:
            continue
        assert (out / p.name).read_bytes() == p.read_bytes(), p
        checked += 1
    assert checked >= 5


def test_read_only_open_changes_nothing(tmp_path: Path) -> None:
    root = copy_real(tmp_path, "VolodymyrZee-kafka")
    before = tree_digest(root)
    with LogDir.open(root, read_only=True) as d:
        assert len(d.partitions()) == 9
        assert sum(1 for _ in d.log("first_topic", 2).records()) == 18
        with pytest.raises(PermissionError):
            d.create_topic("x", 1)
    assert tree_digest(root) == before


def test_partitions_skip_renamed_and_foreign_entries(tmp_path: Path) -> None:
    root = tmp_path / "logs"
    with LogDir.open(root) as d:
        d.create_topic("a-b", 2)
    for name in ("a-b-0.0123456789abcdef0123456789abcdef-delete",
                 "a-b-1.0123456789abcdef0123456789abcdef-future",
                 "c-0.0123456789abcdef0123456789abcdef-stray", "lost+found", "t-01"):
        (root / name).mkdir()
    (root / "x-3").write_text("a file, not a partition")
    with LogDir.open(root) as d:
        assert d.partitions() == [("a-b", 0), ("a-b", 1)]
        assert d.topics() == ["a-b"]


# -- a multi-topic directory written here ---------------------------------------------------------


def write_multi_topic(root: Path) -> dict[tuple[str, int], int]:
    with LogDir.open(root, {"log.segment.bytes": "1048576"}, clock=ManualClock(T0)) as d:
        orders = d.create_topic("orders", 3, {"segment.bytes": "1024", "retention.ms": "-1"})
        events = d.create_topic("events", 2)
        assert orders != events
        for i in range(60):
            d.log("orders", i % 3).append([Record(b"k%d" % i, b"v" * 100, T0 + i)],
                                          producer_id=1000 + i % 3, producer_epoch=0,
                                          base_sequence=i // 3)
            d.log("events", i % 2).append([Record(None, b"e%d" % i, T0 + i)])
        d.log("events", 0).append([Record(None, b"t", T0)], producer_id=7, producer_epoch=0,
                                  base_sequence=0, transactional=True)
        d.log("events", 0).abort_transaction(7, 0)
        assert len(d.log("orders", 0).segments) > 2
        return {tp: d.log(*tp).log_end_offset for tp in d.partitions()}


def test_multi_topic_written_closed_cleanly_and_every_broker_file_present(tmp_path: Path,
                                                                          capsys) -> None:
    from kafkalog.cli import main

    root = tmp_path / "kafka-logs"
    ends = write_multi_topic(root)
    assert broker_file_rules(root) == []
    assert main(["verify", str(root)]) == 0  # the `kafkalog verify` command
    assert "0 errors, 0 warnings" in capsys.readouterr().out
    meta = MetaProperties.read(root / "meta.properties")
    assert (meta.version, meta.node_id) == (1, 1) and meta.cluster_id and meta.directory_id
    assert json.loads((root / ".kafka_cleanshutdown").read_text()) == {
        "version": 0, "brokerEpoch": -1}
    for name in ("recovery-point-offset-checkpoint", "replication-offset-checkpoint"):
        assert OffsetCheckpointFile(root / name).read() == ends
    assert OffsetCheckpointFile(root / "log-start-offset-checkpoint").read() == {}
    ids = {}
    for (t, p), end in ends.items():
        d = root / files.log_dir_name(t, p)
        topic_id = PartitionMetadataFile(d / "partition.metadata").read().topic_id
        ids.setdefault(t, set()).add(topic_id)
        assert (d / "partition.metadata").read_bytes().startswith(b"version: 0\ntopic_id: ")
        assert LeaderEpochCheckpointFile(d / "leader-epoch-checkpoint").read() == []
        for seg in sorted(d.glob("*.log")):
            base = files.offset_from_filename(seg.name)
            assert files.offset_index_file(d, base).exists()
            assert files.time_index_file(d, base).exists()
        if t == "orders":
            [entry] = read_snapshot(files.producer_snapshot_file(d, end))
            assert (entry.producer_id, entry.last_sequence) == (1000 + p, 19)
    assert all(len(v) == 1 for v in ids.values()) and len(set.union(*ids.values())) == 2
    topics = json.loads((root / TOPICS_FILE).read_text())
    assert topics["topics"]["orders"]["config"] == {"segment.bytes": "1024", "retention.ms": "-1"}


def test_clean_reopen_recovers_and_rereads_nothing(tmp_path: Path, count_recovery) -> None:
    root = tmp_path / "kafka-logs"
    ends = write_multi_topic(root)
    logs_before = {p: (p.stat().st_ino, p.stat().st_mtime_ns, p.stat().st_size)
                   for p in root.glob("*/*") if p.suffix in (".log", ".snapshot", ".txnindex")}
    count_recovery.clear()
    with LogDir.open(root, clock=ManualClock(T0)) as d:
        assert d.clean_shutdown
        assert not (root / ".kafka_cleanshutdown").exists()  # deleted while open, as Kafka does
        assert count_recovery == []
        for tp in d.partitions():
            log = d.log(*tp)
            assert log.loaded.recovered_segments == []
            assert log.producer_state.replayed_batches == 0
            assert log.log_end_offset == ends[tp] == log.recovery_point
        assert d.topic_config("orders").segment_bytes == 1024
        assert d.topic_config("orders").retention_ms == -1
        # broker-level settings are the caller's (server.properties), not persisted: defaults
        assert d.topic_config("events").segment_bytes == 1073741824
        assert d.log("orders", 1).append([Record(None, b"x", T0)], producer_id=1001,
                                         producer_epoch=0, base_sequence=19).duplicate
        assert [r.value for r in d.log("events", 0).records(isolation="read_committed")
                ][-1] == b"e58"
        after = {p: (p.stat().st_ino, p.stat().st_mtime_ns, p.stat().st_size)
                 for p in logs_before}
    assert after == logs_before


def test_topic_errors_lock_and_high_watermark(tmp_path: Path) -> None:
    root = tmp_path / "logs"
    with LogDir.open(root, clock=ManualClock(T0)) as d:
        d.create_topic("t", 1)
        with pytest.raises(TopicExistsError):
            d.create_topic("t", 2)
        for bad in ("", ".", "..", "a b", "x" * 250, "é"):
            with pytest.raises(ValueError):
                d.create_topic(bad, 1)
        with pytest.raises(ValueError, match="partitions must be >= 1"):
            d.create_topic("u", 0)
        with pytest.raises(ValueError, match="segment.bytes"):
            d.create_topic("u", 1, {"segment.bytes": "ten"})
        with pytest.raises(ValueError, match="found log.segment.bytes"):
            d.create_topic("u", 1, {"log.segment.bytes": "1024"})
        assert "u" not in d.topics()
        with pytest.raises(UnknownTopicOrPartitionError):
            d.log("t", 1)
        with pytest.raises(LogLockedError):
            LogDir.open(root)
        log = d.log("t", 0)
        log.append([Record(None, b"%d" % i, T0) for i in range(10)])
        assert d.high_watermark("t", 0) == 10
        d.set_high_watermark("t", 0, 4)
        with pytest.raises(OffsetOutOfRangeError):
            d.set_high_watermark("t", 0, 11)
        log.delete_records_before(3)
    assert OffsetCheckpointFile(root / files.REPLICATION_OFFSET_CHECKPOINT_FILE).read() == {
        ("t", 0): 4}
    assert OffsetCheckpointFile(root / files.LOG_START_OFFSET_CHECKPOINT_FILE).read() == {
        ("t", 0): 3}
    with LogDir.open(root, clock=ManualClock(T0)) as d:
        assert d.high_watermark("t", 0) == 4
        assert d.log("t", 0).log_start_offset == 3
        d.set_high_watermark("t", 0, None)
        assert d.high_watermark("t", 0) == 10


def test_corrupt_topics_file_and_corrupt_checkpoint(tmp_path: Path, count_recovery) -> None:
    root = tmp_path / "logs"
    with LogDir.open(root) as d:
        d.create_topic("t", 1)
        d.log("t", 0).append([Record(None, b"a", T0)])
    (root / files.RECOVERY_POINT_CHECKPOINT_FILE).write_text("0\n2\nt 0 1\n")  # count != lines
    os.unlink(root / files.CLEAN_SHUTDOWN_FILE)
    count_recovery.clear()
    with LogDir.open(root) as d:  # the bad checkpoint is ignored: recovery from offset 0
        assert "recovery-point-offset-checkpoint" in d.load_warnings[0]
        assert count_recovery == [("t-0", 0)]
    (root / TOPICS_FILE).write_text('{"version": 1, "topics": {"t": {"topic_id": "nope"}}}')
    with pytest.raises(CorruptCheckpointError, match="unreadable topics file"):
        LogDir.open(root)


# -- unclean shutdown --------------------------------------------------------------------------

_CHILD = textwrap.dedent("""
    import sys
    from kafkalog.log_dir import LogDir
    from kafkalog.records.record import Record
    root = sys.argv[1]
    d = LogDir.open(root, {"segment.bytes": "1024"})
    d.create_topic("a", 2)
    d.create_topic("b", 1)
    seq = 0
    for i in range(40):
        for t, p in d.partitions():
            kw = {}
            if (t, p) == ("b", 0):
                kw = dict(producer_id=99, producer_epoch=0, base_sequence=seq)
            d.log(t, p).append([Record(None, b"x" * 60, 1700000000000 + i)], **kw)
        seq += 1
    d.flush()
    d.checkpoint()  # the recovery points on disk: everything so far
    for t, p in d.partitions():  # more, in the active segments only, never flushed
        d.log(t, p).append([Record(None, b"late", 1700000000999)])
    print("ready", flush=True)
    sys.stdin.readline()
""")


def test_sigkill_then_recovery_from_recovery_points_only(tmp_path: Path, count_recovery) -> None:
    root = tmp_path / "kafka-logs"
    child = subprocess.Popen([sys.executable, "-c", _CHILD, str(root)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert not (root / ".kafka_cleanshutdown").exists()
    rps = OffsetCheckpointFile(root / files.RECOVERY_POINT_CHECKPOINT_FILE).read()
    assert set(rps) == {("a", 0), ("a", 1), ("b", 0)}
    below, at_or_above = {}, {}
    for (t, p), rp in rps.items():
        d = root / files.log_dir_name(t, p)
        bases = sorted(files.offset_from_filename(x.name) for x in d.glob("*.log"))
        assert len(bases) > 3
        floor = max(b for b in bases if b <= rp)
        below[d.name] = [b for b in bases if b < floor]
        at_or_above[d.name] = [b for b in bases if b >= floor]
    trusted = {p: (p.stat().st_mtime_ns, p.stat().st_size) for name, bases in below.items()
               for b in bases for p in (files.log_file(root / name, b),
                                        files.offset_index_file(root / name, b),
                                        files.time_index_file(root / name, b))}
    count_recovery.clear()
    with LogDir.open(root, clock=ManualClock(T0)) as d:
        assert not d.clean_shutdown
        assert sorted(count_recovery) == sorted(
            (name, b) for name, bases in at_or_above.items() for b in bases)
        for (t, p), rp in rps.items():
            log = d.log(t, p)
            assert log.log_end_offset == 41  # page cache survived the kill: nothing lost
            assert [r.value for r in log.records(40)] == [b"late"]
            assert log.recovery_point == rp  # min(checkpoint, log end offset)
            replayed = log.producer_state.replayed_segments
            assert all(b >= min(at_or_above[log.directory.name]) for b in replayed)
        again = d.log("b", 0).append([Record(None, b"x" * 60, 1)], producer_id=99,
                                     producer_epoch=0, base_sequence=39)
        assert again.duplicate and again.first_offset == 39
    assert {p: (p.stat().st_mtime_ns, p.stat().st_size) for p in trusted} == trusted
    assert broker_file_rules(root) == []


def test_maintenance_tasks_run_on_kafka_intervals(tmp_path: Path) -> None:
    from kafkalog.scheduler import LogDirScheduler

    clock = ManualClock(T0)
    root = tmp_path / "logs"
    with LogDir.open(root, clock=clock) as d:
        d.create_topic("t", 1)
        d.log("t", 0).append([Record(None, b"a", T0)])
        d.log("t", 0).flush()
        sched = LogDirScheduler(d, clock=clock)  # not started: driven by run_pending
        # delay 0: ReplicaManager's high-watermark checkpoint and the log cleaner (its threads
        # start with the broker)
        assert sched.run_pending() == 2
        assert OffsetCheckpointFile(root / files.REPLICATION_OFFSET_CHECKPOINT_FILE).read() == {
            ("t", 0): 1}
        clock.advance(29_999)
        # 5 s and 15 s periods; the others wait log.initial.task.delay
        assert sched.run_pending() == 2
        assert not (root / files.RECOVERY_POINT_CHECKPOINT_FILE).exists()
        clock.advance(1)
        # retention, the two offset checkpoints, and the cleaner's next 15 s period
        assert sched.run_pending() == 4
        assert OffsetCheckpointFile(root / files.RECOVERY_POINT_CHECKPOINT_FILE).read() == {
            ("t", 0): 1}
        assert sched.runs("kafka-log-retention") == 1
        assert sched.runs("kafka-log-flusher") == 0  # log.flush.scheduler.interval.ms: never
        clock.advance(60_000)
        sched.run_pending()
        assert sched.runs("kafka-recovery-point-checkpoint") == 2
        assert sched.runs("kafka-log-retention") == 1  # every 300 s
        assert sched.errors == {}


def test_maintenance_thread_runs_and_stops_with_the_log_dir(tmp_path: Path) -> None:
    import time

    clock = ManualClock(T0)
    root = tmp_path / "logs"
    d = LogDir.open(root, clock=clock)
    try:
        d.create_topic("t", 1)
        d.log("t", 0).append([Record(None, b"a", T0)])
        sched = d.start_maintenance(flush_scheduler_interval_ms=1000)
        assert sched.running and d.start_maintenance() is sched
        clock.advance(31_000)
        sched.wake()
        deadline = time.monotonic() + 10
        while sched.runs("kafka-recovery-point-checkpoint") == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert sched.runs("kafka-log-flusher") == 1
        assert (root / files.RECOVERY_POINT_CHECKPOINT_FILE).exists()
    finally:
        d.close()
    assert not sched.running
    assert json.loads((root / files.CLEAN_SHUTDOWN_FILE).read_text())["version"] == 0


@pytest.mark.parametrize("content, epoch", [(b"", -1), (b'{"version":0,"brokerEpoch":42}', 42)])
def test_clean_shutdown_marker_of_any_kafka_version(tmp_path: Path, content: bytes, epoch: int,
                                                    count_recovery) -> None:
    """Before 3.7 the marker is an empty file; 3.7+ writes JSON with the broker epoch."""
    root = tmp_path / "logs"
    with LogDir.open(root) as d:
        d.create_topic("t", 1)
        d.log("t", 0).append([Record(None, b"a", T0)])
    (root / files.CLEAN_SHUTDOWN_FILE).write_bytes(content)
    count_recovery.clear()
    with LogDir.open(root) as d:
        assert d.clean_shutdown and d.broker_epoch == epoch and count_recovery == []
    assert json.loads((root / files.CLEAN_SHUTDOWN_FILE).read_text()) == {
        "version": 0, "brokerEpoch": epoch}


def test_delete_topic_removes_its_partitions_and_entry(tmp_path):
    root = tmp_path / "logs"
    with LogDir.open(root) as d:
        d.create_topic("gone", 2)
        d.create_topic("kept", 1)
        d.log("gone", 1).append([Record(b"k", b"v", 1)])
        assert d.delete_topic("gone") == [0, 1]
        assert d.partitions() == [("kept", 0)]
        assert not any(p.name.startswith("gone") for p in root.iterdir())
        assert "gone" not in json.loads((root / TOPICS_FILE).read_text())["topics"]
        with pytest.raises(UnknownTopicOrPartitionError):
            d.delete_topic("gone")
        d.create_topic("gone", 1)  # the name is free again, with a new id
        assert d.log("gone", 0).log_end_offset == 0
    with LogDir.open(root) as d:
        assert d.partitions() == [("gone", 0), ("kept", 0)]


def test_delete_topic_of_a_compacted_topic_with_the_cleaner_running(tmp_path):
    root = tmp_path / "logs"
    with LogDir.open(root) as d:
        d.create_topic("compacted", 1, {"cleanup.policy": "compact", "segment.bytes": "200"})
        log = d.log("compacted", 0)
        for i in range(30):
            log.append([Record(b"k%d" % (i % 3), b"v%d" % i, 1700000000000 + i)])
        if d.cleaner is not None:
            d.cleaner.startup()
        assert d.delete_topic("compacted") == [0]
        assert d.partitions() == []
    with LogDir.open(root) as d:
        assert d.partitions() == []


def test_a_read_only_open_may_load_only_some_partitions(tmp_path) -> None:
    """``partitions=``: the others are not read at all (a damaged one does not matter), and a
    writable open refuses it (its root checkpoints would lose the other partitions)."""
    root = tmp_path / "logs"
    with LogDir.open(root) as logs:
        logs.create_topic("a", 3)
        logs.create_topic("b", 2)
        logs.log("a", 1).append([Record(None, b"x", 1)] * 4)
    (root / "b-0" / "00000000000000000000.index").write_bytes(b"\xff" * 7)  # never read
    with LogDir.open(root, read_only=True, partitions=lambda t, p: t == "a" and p >= 1) as logs:
        assert logs.partitions() == [("a", 1), ("a", 2)]
        assert logs.log("a", 1).log_end_offset == 4
        with pytest.raises(UnknownTopicOrPartitionError):
            logs.log("b", 0)
    with pytest.raises(ValueError, match="read-only"):
        LogDir.open(root, partitions=lambda t, p: True)


def test_load_partition_takes_in_a_directory_made_while_open(tmp_path: Path) -> None:
    from kafkalog.log_dir import UnknownTopicOrPartitionError

    other = tmp_path / "other"
    with LogDir.open(other) as d:
        d.create_topic("late", 1)
        d.log("late", 0).append([Record(b"k", b"v%d" % i, 1000 + i) for i in range(3)])
    root = tmp_path / "root"
    with LogDir.open(root) as d:
        with pytest.raises(UnknownTopicOrPartitionError, match="no partition directory late-0"):
            d.load_partition("late", 0)
        # a copy tool puts a partition's files under the open dir (no checkpoint knows it)
        shutil.copytree(other / "late-0", root / "late-0")
        log = d.load_partition("late", 0)
        assert (log.log_start_offset, log.log_end_offset) == (0, 3)
        assert d.log("late", 0) is log and d.partitions() == [("late", 0)]
        with pytest.raises(ValueError, match="late-0 is already loaded"):
            d.load_partition("late", 0)
        log.append([Record(b"k", b"after", 2000)])
    # closed like every other partition: in the checkpoints, clean shutdown
    from kafkalog.checkpoint import OffsetCheckpointFile

    recovery = OffsetCheckpointFile(root / files.RECOVERY_POINT_CHECKPOINT_FILE).read()
    assert recovery[("late", 0)] == 4
    assert (root / ".kafka_cleanshutdown").exists()
    with LogDir.open(root, read_only=True) as d:
        assert [r.value for r in d.log("late", 0).records()] == [b"v0", b"v1", b"v2", b"after"]


def test_create_topic_refuses_a_name_colliding_with_an_existing_one(tmp_path: Path) -> None:
    """Kafka's Topic.hasCollision: '.' and '_' are one character in metric names, so a topic
    differing from an existing one only in them is refused (ReplicationControlManager)."""
    from kafkalog.errors import InvalidTopicError
    from kafkalog.log_dir import colliding_topics

    assert colliding_topics("a.b_c", ["a_b.c", "a_b", "x", "a.b.c"]) == ["a.b.c", "a_b.c"]
    assert colliding_topics("abc", ["abc"]) == []
    with LogDir.open(tmp_path) as d:
        d.create_topic("a_b.c", 1)
        with pytest.raises(InvalidTopicError, match=r"Topic 'a\.b_c' collides with existing "
                           r"topic: a_b\.c"):
            d.create_topic("a.b_c", 1)
        assert not (tmp_path / "a.b_c-0").exists()
        d.create_topic("abc", 1)  # no '.' or '_': nothing to collide
        assert sorted(d.topics()) == ["a_b.c", "abc"]
