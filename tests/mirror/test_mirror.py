"""``kafkalog mirror`` against a real ``kafkalog serve`` fed by librdkafka and the engine: the copy
holds the source's batches byte for byte (offsets, producer ids, transactions and markers,
compression), resumes, truncates as Kafka's follower would after an unclean election on the
source, reports gaps left by the source's retention, refuses corrupt bytes, and fails cleanly on
bad input."""

from __future__ import annotations

import io
import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from kafkalog import Log, LogDir, Record, iter_batches
from kafkalog.checkpoint import PartitionMetadataFile
from kafkalog.cli import main as cli_main
from kafkalog.errors import KafkaLogError
from kafkalog.mirror import Mirror, mirror
from kafkalog.mirror.command import main
from kafkalog.replication.fetcher import ReplicaLog, follow

from .conftest import start_server

ck = pytest.importorskip("confluent_kafka", reason="confluent-kafka is not installed")
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]


# -- helpers -----------------------------------------------------------------------------------

def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def batch_bytes(part: Path) -> list[bytes]:
    """Every batch of a partition directory, in order across segments, as stored."""
    out = []
    for f in sorted(part.glob("*.log")):
        out += [bytes(b.entry_bytes()) for b in iter_batches(f)]
    return out


def log_files(part: Path) -> dict[str, bytes]:
    return {f.name: f.read_bytes() for f in sorted(part.glob("*.log"))}


def state(part: Path) -> tuple[int, int, list]:
    """Log start offset (from the log dir's checkpoint), log end offset, leader epochs."""
    topic, _, p = part.name.rpartition("-")
    with LogDir.open(part.parent, read_only=True,
                     partitions=lambda t, n: (t, n) == (topic, int(p))) as d:
        log = d.log(topic, int(p))
        return log.log_start_offset, log.log_end_offset, log.leader_epoch_entries


def topic_id(part: Path) -> object:
    return PartitionMetadataFile(part / "partition.metadata").read().topic_id


def produce(address: str, topic: str, values: list[bytes], partitions: int = 1,
            **conf: object) -> None:
    errors: list = []
    p = ck.Producer({"bootstrap.servers": address, "linger.ms": 5, **conf})
    for i, v in enumerate(values):
        p.produce(topic, key=b"k%d" % i, value=v, headers=[("h", b"%d" % i)],
                  partition=i % partitions, on_delivery=lambda e, m: e and errors.append(e))
    assert p.flush(30) == 0
    assert errors == []


def consume(address: str, topic: str, partitions: int, isolation: str) -> list[bytes]:
    c = ck.Consumer({"bootstrap.servers": address, "group.id": "mirror-reader",
                     "enable.auto.commit": False, "isolation.level": isolation,
                     "enable.partition.eof": True})
    c.assign([ck.TopicPartition(topic, p, ck.OFFSET_BEGINNING) for p in range(partitions)])
    got: list[bytes] = []
    eof: set[int] = set()
    deadline = time.monotonic() + 30
    try:
        while len(eof) < partitions and time.monotonic() < deadline:
            for m in c.consume(1000, 0.2):
                if m.error():
                    assert m.error().code() == ck.KafkaError._PARTITION_EOF, m.error()
                    eof.add(m.partition())
                    continue
                got.append(m.value())
    finally:
        c.close()
    return got


def engine_topic(root: Path, topic: str, batches: list[tuple[int, int]], **config: str) -> None:
    """Append ``(leader epoch, records)`` batches to a new one-partition topic of ``root``."""
    with LogDir.open(root) as d:
        d.create_topic(topic, 1, config=config or None)
        log = d.log(topic, 0)
        for i, (epoch, n) in enumerate(batches):
            log.append([Record(b"k", b"%s-%d-%d" % (topic.encode(), i, j), 1000 + i)
                        for j in range(n)], partition_leader_epoch=epoch,
                       compression=CODECS[i % len(CODECS)])


# -- 1 + 2: byte-exact copy of librdkafka's and the engine's batches, served again; resume -------

def test_mirror_is_byte_exact_served_again_and_resumes(tmp_path):
    src, dst = tmp_path / "src", tmp_path / "dst"
    # the engine's topic rolls small segments (the copy is given the same segment.bytes)
    engine_topic(src, "eng", [(0, 1 + i % 4) for i in range(60)], **{"segment.bytes": "2048"})
    server = start_server(src)
    try:
        admin = AdminClient({"bootstrap.servers": server.address})
        for f in admin.create_topics([NewTopic("ck", 2, 1), NewTopic("tx", 1, 1)]).values():
            f.result(30)
        for codec in CODECS:
            produce(server.address, "ck", [b"%s-%d" % (codec.encode(), i) for i in range(40)],
                    2, **{"compression.type": codec})
        produce(server.address, "ck", [b"idem-%d" % i for i in range(40)], 2,
                **{"enable.idempotence": True, "compression.type": "zstd"})
        p = ck.Producer({"bootstrap.servers": server.address, "transactional.id": "mirror-tx"})
        p.init_transactions(30)
        for kind in ("committed", "aborted", "committed-again"):
            p.begin_transaction()
            for i in range(5):
                p.produce("tx", value=b"%s-%d" % (kind.encode(), i), partition=0)
            if kind == "aborted":
                p.flush(30)
                p.abort_transaction(30)
            else:
                p.commit_transaction(30)

        # the librdkafka topics with the command (one segment each: the .log files compare),
        # the engine's with the Python API and the source's small segment.bytes
        status, out, err = run("--bootstrap-server", server.address, str(dst), "--json",
                               "--topic", "ck", "--topic", "t.")
        assert status == 0, err
        doc = json.loads(out)
        assert doc["ok"] and not doc["errors"]
        eng = mirror(server.address, dst, topics=["eng"], config={"segment.bytes": "2048"})
        assert eng.ok and [r.batches for r in eng.partitions] == [60]
        got = {(r["topic"], r["partition"]): r for r in doc["partitions"]}
        assert sorted(got) == [("ck", 0), ("ck", 1), ("tx", 0)]
        got[("eng", 0)] = eng.to_json()["partitions"][0]
        for (topic, p_), r in got.items():
            s, m = src / f"{topic}-{p_}", dst / f"{topic}-{p_}"
            assert batch_bytes(m) == batch_bytes(s)
            assert r["batches"] == len(batch_bytes(s)) and r["truncations"] == r["gaps"] == []
            assert state(m) == state(s)  # log start, log end, leader-epoch entries
            assert topic_id(m) == topic_id(s)
            assert r["high_watermark"] == r["log_end_offset"] == state(s)[1]
        for part in ("ck-0", "ck-1", "tx-0"):  # one segment each: the files are identical
            assert log_files(dst / part) == log_files(src / part)
        assert len(log_files(dst / "eng-0")) > 3  # the batches were compared across segments
        # control batches and the aborted transaction came as they were
        with Log.open(dst / "tx-0", read_only=True, standalone=False) as log:
            assert len([b for b in log.batches(include_control=True)
                        if b.batch.is_control]) == 3
        assert cli_main(["verify", str(dst)]) == 0

        # 2. resume: only the new batches are fetched and appended
        before = {k: len(batch_bytes(dst / f"{k[0]}-{k[1]}")) for k in got}
        produce(server.address, "ck", [b"more-%d" % i for i in range(30)], 2,
                **{"compression.type": "gzip"})
        again = mirror(server.address, dst)  # every topic but the internal ones
        assert again.ok
        assert sorted((r.topic, r.partition) for r in again.partitions) == sorted(got)
        assert not list(dst.glob("__*"))
        for r in again.partitions:
            m, s = dst / f"{r.topic}-{r.partition}", src / f"{r.topic}-{r.partition}"
            assert batch_bytes(m) == batch_bytes(s)
            assert r.batches == len(batch_bytes(s)) - before[(r.topic, r.partition)]
        assert sum(r.batches for r in again.partitions if r.topic == "ck") > 0
        assert [r.batches for r in again.partitions if r.topic != "ck"] == [0, 0]
    finally:
        server.stop()

    # a second server over the copy serves the same records (read_committed skips the abort)
    copy = start_server(dst)
    try:
        values = consume(copy.address, "tx", 1, "read_committed")
        assert values == [b"committed-%d" % i for i in range(5)] + [
            b"committed-again-%d" % i for i in range(5)]
        assert len(consume(copy.address, "tx", 1, "read_uncommitted")) == 15
        assert len(consume(copy.address, "ck", 2, "read_uncommitted")) == 6 * 40 + 30
    finally:
        copy.stop()


# -- 3: an unclean leader election on the source -----------------------------------------------

def test_divergent_source_truncates_the_copy_as_kafkas_follower(tmp_path):
    src, dst = tmp_path / "src", tmp_path / "dst"
    engine_topic(src, "d", [(0, 2)] * 3 + [(1, 2)] * 2)  # epoch 0: 0..5, epoch 1: 6..9
    server = start_server(src)
    try:
        assert mirror(server.address, dst).ok
    finally:
        server.stop()
    assert state(dst / "d-0") == (0, 10, [(0, 0), (1, 6)])
    # unclean election: a replica that never got epoch 1 leads in epoch 2 and writes 6..8
    with LogDir.open(src) as d:
        log = d.log("d", 0)
        log.truncate_to(6)
        for i in range(3):
            log.append([Record(b"k", b"epoch2-%d" % i, 5000 + i)], partition_leader_epoch=2)
    leader = ReplicaLog(*state(src / "d-0")[:2], tuple(state(src / "d-0")[2]))
    follower = ReplicaLog(*state(dst / "d-0")[:2], tuple(state(dst / "d-0")[2]))
    expected = follow(leader.as_leader(2), follower)
    assert expected.truncated_to == 6
    server = start_server(src)
    try:
        status, out, err = run("--bootstrap-server", server.address, str(dst))
    finally:
        server.stop()
    assert status == 0, err
    assert f"truncated 10 -> {expected.truncated_to}: diverging epoch 0 ending at offset 6" in out
    assert batch_bytes(dst / "d-0") == batch_bytes(src / "d-0")
    assert state(dst / "d-0") == state(src / "d-0") == (0, 9, [(0, 0), (2, 6)])


def test_source_truncated_without_epochs_is_out_of_range_and_truncates(tmp_path):
    # batches without a partition leader epoch (an old message format's history): no
    # last_fetched_epoch, so the source answers OFFSET_OUT_OF_RANGE past its log end
    src, dst = tmp_path / "src", tmp_path / "dst"
    engine_topic(src, "o", [(-1, 2)] * 5)
    server = start_server(src)
    try:
        assert mirror(server.address, dst).ok
    finally:
        server.stop()
    with LogDir.open(src) as d:
        d.log("o", 0).truncate_to(6)
    expected = follow(ReplicaLog(0, 6), ReplicaLog(0, 10, (), 10))
    server = start_server(src)
    try:
        result = mirror(server.address, dst)
    finally:
        server.stop()
    [r] = result.partitions
    assert result.ok and [(t.from_offset, t.to_offset) for t in r.truncations] == [
        (10, expected.truncated_to)]
    assert "offset out of range" in r.truncations[0].reason
    assert batch_bytes(dst / "o-0") == batch_bytes(src / "o-0")
    assert r.high_watermark == r.log_end_offset == 6


def test_source_log_start_inside_a_batch(tmp_path):
    # DeleteRecords left the source's log start in the middle of a batch: the first fetch
    # returns that batch whole; the empty copy restarts at its base offset, as Kafka's
    # follower does (Partition.appendRecordsToFollowerOrFutureReplica), keeping log start 5
    src, dst = tmp_path / "src", tmp_path / "dst"
    engine_topic(src, "m", [(0, 2)] * 5)
    with LogDir.open(src) as d:
        d.log("m", 0).delete_records_before(5)
    server = start_server(src)
    try:
        result = mirror(server.address, dst)
    finally:
        server.stop()
    assert result.ok and result.partitions[0].batches == 3
    assert state(dst / "m-0")[:2] == state(src / "m-0")[:2] == (5, 10)
    assert batch_bytes(dst / "m-0") == batch_bytes(src / "m-0")[2:]


# -- 4: the source's retention deleted what the copy had not fetched yet -------------------------

def test_gap_after_source_retention_is_reported_and_the_copy_restarts(tmp_path):
    src, dst = tmp_path / "src", tmp_path / "dst"
    engine_topic(src, "r", [(0, 3)] * 4, **{"segment.bytes": "300", "retention.bytes": "400"})
    server = start_server(src)
    try:
        first = mirror(server.address, dst)
    finally:
        server.stop()
    assert first.ok and state(dst / "r-0")[1] == 12
    with LogDir.open(src) as d:
        log = d.log("r", 0)
        for i in range(12):
            log.append([Record(b"k", b"late-%d" % i, 9000 + i)] * 3, partition_leader_epoch=0)
        d.enforce_retention()
    start = state(src / "r-0")[0]
    assert start > 12  # the source's log now starts past the copy's end
    server = start_server(src)
    try:
        status, out, err = run("--bootstrap-server", server.address, str(dst))
    finally:
        server.stop()
    assert status == 0, err  # a gap is a warning
    assert f"GAP: r-0: offsets 12..{start - 1} were deleted on the source" in err
    assert f"GAP: offsets 12..{start - 1}" in out
    assert state(dst / "r-0")[:2] == state(src / "r-0")[:2]
    assert batch_bytes(dst / "r-0") == batch_bytes(src / "r-0")


# -- corrupt bytes on the source are never appended ---------------------------------------------

def test_a_bad_crc_is_refused_with_topic_partition_and_offset(tmp_path):
    src, dst = tmp_path / "src", tmp_path / "dst"
    engine_topic(src, "c", [(0, 2)] * 5)
    sound = batch_bytes(src / "c-0")
    seg = src / "c-0" / "00000000000000000000.log"
    data = bytearray(seg.read_bytes())
    data[-3] ^= 0xFF  # a byte of the last batch's (offsets 8..9) last record
    seg.write_bytes(bytes(data))
    server = start_server(src)
    try:
        status, out, err = run("--bootstrap-server", server.address, str(dst))
    finally:
        server.stop()
    assert status == 1
    assert "c-0: " in err and "offset 8" in err and "CRC" in err.upper()
    assert state(dst / "c-0")[1] == 8  # the good batches before it were kept
    assert batch_bytes(dst / "c-0") == sound[:4]


# -- --follow until stopped ---------------------------------------------------------------------

def copied_up_to(part: Path, offset: int) -> bool:
    """Whether the copy being written reached ``offset`` (read-only: the mirror holds it)."""
    try:
        with Log.open(part, read_only=True, standalone=False) as log:
            return log.log_end_offset >= offset
    except (OSError, KafkaLogError):
        return False  # (not created yet)


def test_follow_until_stopped_closes_cleanly(tmp_path):
    src, dst = tmp_path / "src", tmp_path / "dst"
    engine_topic(src, "f", [(0, 1)] * 3)
    server = start_server(src)
    try:
        m = Mirror(server.address, dst, follow=True, max_wait_ms=100)
        results: list = []
        t = threading.Thread(target=lambda: results.append(m.run()))
        t.start()
        produce(server.address, "f", [b"live-%d" % i for i in range(10)])
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not copied_up_to(dst / "f-0", 13):
            time.sleep(0.05)
        # the progress another thread reads while the run follows: the 13 records, no lag
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and m.progress().lag:
            time.sleep(0.05)
        p = m.progress()
        assert (p.partitions, p.records, p.lag) == (1, 13, 0), p
        m.stop()
        t.join(10)
        assert not t.is_alive()
    finally:
        server.stop()
    [result] = results
    assert result.ok and result.interrupted
    assert (dst / ".kafka_cleanshutdown").exists()
    assert batch_bytes(dst / "f-0") == batch_bytes(src / "f-0")
    assert result.partitions[0].high_watermark == 13


def test_ctrl_c_ends_a_follow_cleanly(tmp_path):
    src, dst = tmp_path / "src", tmp_path / "dst"
    engine_topic(src, "f", [(0, 1)] * 3)
    server = start_server(src)
    try:
        proc = subprocess.Popen([sys.executable, "-m", "kafkalog", "mirror", "--follow",
                                 "--progress-interval", "0.2",
                                 "--bootstrap-server", server.address, str(dst)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            produce(server.address, "f", [b"live-%d" % i for i in range(5)])
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and not copied_up_to(dst / "f-0", 8):
                time.sleep(0.05)
            time.sleep(0.6)  # a few progress lines (every 0.2 s) once all 8 are copied
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
    finally:
        server.stop()
    assert proc.returncode == 0, err
    assert " batches, 8 records" in out and out.rstrip().endswith("; interrupted")
    assert "kafkalog mirror: progress: 1 partitions, 8 records (" in err
    assert "; 0 records behind the source's high watermarks" in err
    assert (dst / ".kafka_cleanshutdown").exists()
    assert "f 0 8" in (dst / "replication-offset-checkpoint").read_text()
    assert batch_bytes(dst / "f-0") == batch_bytes(src / "f-0")


# -- 5: bad input --------------------------------------------------------------------------------

def test_unreachable_bootstrap_server_writes_nothing(tmp_path):
    status, out, err = run("--bootstrap-server", "127.0.0.1:1", str(tmp_path / "dst"))
    assert status == 1
    assert "cannot connect to 127.0.0.1:1" in err
    assert not (tmp_path / "dst").exists()


def test_unknown_topic_writes_nothing(tmp_path):
    src, dst = tmp_path / "src", tmp_path / "dst"
    engine_topic(src, "known", [(0, 1)])
    server = start_server(src)
    try:
        status, out, err = run("--bootstrap-server", server.address, str(dst), "--topic",
                               "unknown")
    finally:
        server.stop()
    assert status == 1
    assert "unknown topic 'unknown'" in err
    assert not dst.exists()


def test_usage_errors_exit_2(tmp_path):
    assert run(str(tmp_path))[0] == 2  # no --bootstrap-server
    assert run("--bootstrap-server", "h:1", str(tmp_path), "--start-offset", "x")[0] == 2
    assert cli_main(["mirror", "--bootstrap-server"]) == 2
    status, _, err = run("--bootstrap-server", "h:1", str(tmp_path / "c"), "--config", "nope")
    assert status == 2 and "--config expects KEY=VALUE, found 'nope'" in err
    assert not (tmp_path / "c").exists()


def test_module_doctests():
    import doctest
    import importlib

    for name in ("client", "command", "mirror", "retry"):
        module = importlib.import_module(f"kafkalog.mirror.{name}")
        assert doctest.testmod(module).failed == 0


# -- real bytes: a Kafka broker's data dir and the peer-built logs of every format ------------

def test_mirror_copies_real_broker_and_legacy_format_logs(tmp_path):
    """A real broker's partitions (../shared/fixtures/kafka-real) and the peer-built segments
    (magic 0, 1 and 2 one after another, legacy compressed wrappers, transactions and markers)
    served by ``kafkalog serve`` and mirrored: the copy's entries are the source's, byte for
    byte, message sets of the old formats included."""
    import shutil

    from tests.conftest import shared_fixture_path

    real = shared_fixture_path("kafka-real", "VolodymyrZee-kafka")
    src, dst = tmp_path / "src", tmp_path / "dst"
    shutil.copytree(real, src, ignore=shutil.ignore_patterns("*.json", "*.md"))
    for builder in ("kafka-python", "aiokafka"):
        part = src / f"peer-{builder}-0"
        part.mkdir()
        shutil.copy(shared_fixture_path("peer-built", builder) / "00000000000000000000.log",
                    part)
    sources = sorted(p for p in src.iterdir() if p.is_dir() and not p.name.startswith("__")
                     and any(p.glob("*.log")))
    assert len(sources) >= 5
    server = start_server(src)
    try:
        status, out, err = run("--bootstrap-server", server.address, str(dst))
    finally:
        server.stop()
    assert status == 0, (out, err)
    for part in sources:
        assert batch_bytes(dst / part.name) == batch_bytes(part), part.name
        assert batch_bytes(part), part.name


# -- the source topics' own configs -------------------------------------------------------------

def test_the_copy_gets_the_source_topics_configs(tmp_path):
    """DescribeConfigs' topic overrides go to the copy's topics before any batch: segment.bytes
    rolls the copy's segments where the source's rolled, cleanup.policy makes it compacted;
    a later change on the source follows on the next run; --no-topic-configs leaves them."""
    src, dst, bare = tmp_path / "src", tmp_path / "dst", tmp_path / "bare"
    # (records of now and a day's compaction lag: the source's cleaner and retention leave
    # the source as written while the test runs)
    overrides = {"segment.bytes": "2048", "cleanup.policy": "compact",
                 "retention.ms": "86400000", "min.compaction.lag.ms": "86400000"}
    now = int(time.time() * 1000)
    with LogDir.open(src) as d:
        d.create_topic("cfg", 1, config=overrides)
        log = d.log("cfg", 0)
        for i in range(40):
            log.append([Record(b"k%d" % j, b"cfg-%d-%d" % (i, j), now) for j in range(1 + i % 4)],
                       partition_leader_epoch=0, compression=CODECS[i % len(CODECS)])
    engine_topic(src, "plain", [(0, 2)] * 3)
    server = start_server(src)
    try:
        status, out, err = run("--bootstrap-server", server.address, str(dst))
        assert status == 0, err
        assert "cfg  topic configs copied: cleanup.policy=compact, " \
               "min.compaction.lag.ms=86400000, retention.ms=86400000, segment.bytes=2048" in out
        assert "plain  topic configs" not in out  # no overrides: nothing to say
        with LogDir.open(dst, read_only=True) as d:
            assert d.topic_overrides("cfg") == overrides
            assert d.topic_overrides("plain") == {}
            assert d.log("cfg", 0).config.compact
        # same segment.bytes: the copy rolled where the source rolled, file for file
        assert log_files(dst / "cfg-0") == log_files(src / "cfg-0")
        assert len(log_files(src / "cfg-0")) >= 3
        # an online change on the source reaches the copy on the next run
        admin = AdminClient({"bootstrap.servers": server.address})
        from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource
        res = ConfigResource(ConfigResource.Type.TOPIC, "cfg", incremental_configs=[
            ConfigEntry("retention.ms", "3600000",
                        incremental_operation=AlterConfigOpType.SET)])
        for f in admin.incremental_alter_configs([res]).values():
            f.result(30)
        result = mirror(server.address, dst, topics=["cfg"])
        assert result.ok
        assert result.topic_configs["cfg"].copied["retention.ms"] == "3600000"
        with LogDir.open(dst, read_only=True) as d:
            assert d.topic_overrides("cfg")["retention.ms"] == "3600000"
        status, out, err = run("--bootstrap-server", server.address, str(bare),
                               "--no-topic-configs", "--json")
    finally:
        server.stop()
    assert status == 0, err
    assert json.loads(out)["topic_configs"] == {}
    with LogDir.open(bare, read_only=True) as d:
        assert d.topic_overrides("cfg") == {}
    assert batch_bytes(bare / "cfg-0") == batch_bytes(src / "cfg-0")


# -- consumer groups' positions go with the copy ------------------------------------------------

def test_mirroring_consumer_offsets_carries_the_groups_positions(tmp_path):
    """``__consumer_offsets`` named on the command line is mirrored like any topic (internal
    topics only when named): the copy's coordinator records are the source's, so the groups'
    committed offsets read from the copy are the ones librdkafka committed on the source."""
    from kafkalog.groups import GroupMetadataManager

    src, dst = tmp_path / "src", tmp_path / "dst"
    server = start_server(src)
    try:
        server.broker.create_topic("orders", 2)
        produce(server.address, "orders", [b"v%d" % i for i in range(10)], partitions=2)
        c = ck.Consumer({"bootstrap.servers": server.address, "group.id": "billing",
                         "enable.auto.commit": False})
        c.assign([ck.TopicPartition("orders", 0, 3), ck.TopicPartition("orders", 1, 4)])
        c.commit(offsets=[ck.TopicPartition("orders", 0, 3), ck.TopicPartition("orders", 1, 4)],
                 asynchronous=False)
        c.close()
        status, out, err = run("--bootstrap-server", server.address, str(dst), "--topic",
                               "orders", "--topic", "__consumer_offsets")
        assert status == 0, err
        # not named: internal topics stay out
        status2, out2, _ = run("--bootstrap-server", server.address, str(tmp_path / "only"))
    finally:
        server.stop()
    assert status2 == 0 and "__consumer_offsets" not in out2
    for p in range(4):
        part = f"__consumer_offsets-{p}"
        assert batch_bytes(dst / part) == batch_bytes(src / part), part
    with LogDir.open(dst, read_only=True) as d:
        assert GroupMetadataManager(d).fetch_offsets("billing") == {("orders", 0): 3,
                                                                    ("orders", 1): 4}
