"""`kafkalog topics`, `kafkalog configs`, `kafkalog delete-records` (kafkalog.admin) on real log
dirs: Kafka's texts, the effect on disk after reopening, the error paths and the lock."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kafkalog import LogDir, Record
from kafkalog.checkpoint import PartitionMetadataFile
from kafkalog.cli import main

TS = 1700000000000


def _records(n: int) -> list[Record]:
    return [Record(b"k%d" % i, b"v%d" % i, TS + i) for i in range(n)]


@pytest.fixture
def logdir(tmp_path: Path) -> Path:
    """A log dir of node 3: orders (2 partitions, retention.ms override, 30 records in
    partition 0), compacted (cleanup.policy=compact, 5 records), __consumer_offsets (1)."""
    root = tmp_path / "logs"
    with LogDir.open(root, node_id=3) as logs:
        logs.create_topic("orders", 2, {"retention.ms": "60000"})
        logs.log("orders", 0).append(_records(30))
        logs.create_topic("compacted", 1, {"cleanup.policy": "compact"})
        logs.log("compacted", 0).append(_records(5))
        logs.create_topic("__consumer_offsets", 1)
    return root


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


# -- topics ---------------------------------------------------------------------------------

def test_topics_list_sorted_and_exclude_internal(logdir: Path, capsys) -> None:
    assert _run(capsys, "topics", str(logdir), "--list") == (
        0, "__consumer_offsets\ncompacted\norders\n", "")
    assert _run(capsys, "topics", str(logdir), "--list", "--exclude-internal") == (
        0, "compacted\norders\n", "")
    rc, out, _ = _run(capsys, "topics", str(logdir), "--list", "--json")
    assert rc == 0 and json.loads(out) == {"topics": ["__consumer_offsets", "compacted",
                                                      "orders"]}


def test_topics_describe_kafka_text(logdir: Path, capsys) -> None:
    with LogDir.open(logdir, read_only=True) as logs:
        tid = logs.topic_id("orders")
    rc, out, err = _run(capsys, "topics", str(logdir), "--describe", "--topic", "orders")
    assert (rc, err) == (0, "")
    # Kafka 3.9 against a KRaft broker: ELR lists present and empty; the replica is node.id 3
    assert out == (
        f"Topic: orders\tTopicId: {tid}\tPartitionCount: 2\tReplicationFactor: 1"
        "\tConfigs: retention.ms=60000\n"
        "\tTopic: orders\tPartition: 0\tLeader: 3\tReplicas: 3\tIsr: 3\tElr: \tLastKnownElr: \n"
        "\tTopic: orders\tPartition: 1\tLeader: 3\tReplicas: 3\tIsr: 3\tElr: \tLastKnownElr: \n")


def test_topics_describe_all_and_with_overrides(logdir: Path, capsys) -> None:
    rc, out, _ = _run(capsys, "topics", str(logdir), "--describe", "--exclude-internal")
    assert rc == 0
    assert [line.split("\t")[0] for line in out.splitlines() if line.startswith("Topic:")] == [
        "Topic: compacted", "Topic: orders"]
    rc, out, _ = _run(capsys, "topics", str(logdir), "--describe", "--topics-with-overrides")
    assert rc == 0
    lines = out.splitlines()
    assert len(lines) == 2       # topic lines only, no partition lines
    assert lines[0].endswith("\tConfigs: cleanup.policy=compact")
    assert lines[1].endswith("\tConfigs: retention.ms=60000")


def test_topics_describe_json(logdir: Path, capsys) -> None:
    rc, out, _ = _run(capsys, "topics", str(logdir), "--describe", "--topic", "orders", "--json")
    assert rc == 0
    doc = json.loads(out)
    (topic,) = doc["topics"]
    assert topic["topic"] == "orders" and topic["partition_count"] == 2
    assert topic["configs"] == {"retention.ms": "60000"}
    assert topic["partitions"][0] == {"partition": 0, "leader": 3, "replicas": [3], "isr": [3],
                                      "log_start_offset": 0, "log_end_offset": 30,
                                      "high_watermark": 30}


def test_topics_describe_of_one_topic_ignores_a_damaged_other(logdir: Path, capsys) -> None:
    """Only the partitions of the topics asked for are loaded: a partition of another topic
    that cannot be opened (its segments gone) does not stop --describe/--list --topic."""
    for f in (logdir / "compacted-0").glob("*.log"):
        f.unlink()
    rc, out, err = _run(capsys, "topics", str(logdir), "--describe", "--topic", "ord.*")
    assert (rc, err) == (0, "") and out.startswith("Topic: orders\t")
    assert _run(capsys, "topics", str(logdir), "--list", "--topic", "orders") == (
        0, "orders\n", "")
    rc, _, err = _run(capsys, "topics", str(logdir), "--describe", "--topic", "compacted")
    assert rc == 1 and "compacted-0" in err
    assert _run(capsys, "topics", str(logdir), "--describe", "--topic", "(") == (
        1, "", "Error while executing topic command : ( is an invalid regex.\n")


def test_topics_describe_unknown_topic(logdir: Path, capsys) -> None:
    assert _run(capsys, "topics", str(logdir), "--describe", "--topic", "nope") == (
        1, "", "Error while executing topic command : Topic 'Optional[nope]' does not exist as "
               "expected\n")
    assert _run(capsys, "topics", str(logdir), "--describe", "--topic", "nope",
                "--if-exists") == (0, "", "")


def test_topics_create_persists_overrides(logdir: Path, capsys) -> None:
    rc, out, err = _run(capsys, "topics", str(logdir), "--create", "--topic", "payments",
                        "--partitions", "3", "--config", "segment.bytes=1048576",
                        "--config", "cleanup.policy=compact,delete")
    assert (rc, out, err) == (0, "Created topic payments.\n", "")
    with LogDir.open(logdir, read_only=True) as logs:
        assert [p for t, p in logs.partitions() if t == "payments"] == [0, 1, 2]
        assert logs.topic_overrides("payments") == {"segment.bytes": "1048576",
                                                    "cleanup.policy": "compact,delete"}
        assert logs.log("payments", 2).config.segment_bytes == 1048576
        assert logs.log("payments", 2).config.cleanup_policy == ("compact", "delete")


def test_topics_create_warning_and_errors(logdir: Path, capsys) -> None:
    rc, out, _ = _run(capsys, "topics", str(logdir), "--create", "--topic", "a.b")
    assert rc == 0 and out == (
        "WARNING: Due to limitations in metric names, topics with a period ('.') or underscore "
        "('_') could collide. To avoid issues it is best to use either, but not both.\n"
        "Created topic a.b.\n")
    rc, _, err = _run(capsys, "topics", str(logdir), "--create", "--topic", "a_b")
    assert (rc, err.splitlines()[-1]) == (
        1, "Error while executing topic command : Topic 'a_b' collides with existing topic: a.b")
    assert _run(capsys, "topics", str(logdir), "--create", "--topic", "orders") == (
        1, "", "Error while executing topic command : Topic 'orders' already exists.\n")
    assert _run(capsys, "topics", str(logdir), "--create", "--topic", "orders",
                "--if-not-exists") == (0, "", "")
    assert _run(capsys, "topics", str(logdir), "--create", "--topic", "x",
                "--replication-factor", "3") == (
        1, "", "Error while executing topic command : Unable to replicate the partition 3 "
               "time(s): The target replication factor of 3 cannot be reached because only 1 "
               "broker(s) are registered.\n")
    rc, _, err = _run(capsys, "topics", str(logdir), "--create", "--topic", "x", "--config",
                      "segment.bytes=ten")
    assert rc == 1 and "segment.bytes" in err and "'ten'" in err
    rc, _, err = _run(capsys, "topics", str(logdir), "--create", "--topic", "x", "--config",
                      "no.such.config=1")
    assert (rc, err) == (1, "Error while executing topic command : Unknown topic config name: "
                            "no.such.config\n")
    with LogDir.open(logdir, read_only=True) as logs:
        assert "x" not in logs.topics()


def test_topics_alter_adds_partitions_with_topic_id(logdir: Path, capsys) -> None:
    assert _run(capsys, "topics", str(logdir), "--alter", "--topic", "orders",
                "--partitions", "4") == (0, "", "")
    with LogDir.open(logdir, read_only=True) as logs:
        tid = logs.topic_id("orders")
        assert [p for t, p in logs.partitions() if t == "orders"] == [0, 1, 2, 3]
        assert logs.declared_partitions("orders") == 4
        assert logs.log("orders", 3).config.retention_ms == 60000
    for p in (2, 3):
        meta = PartitionMetadataFile(logdir / f"orders-{p}" / "partition.metadata")
        assert meta.read().topic_id == tid


def test_topics_alter_refuses_shrink_and_unknown(logdir: Path, capsys) -> None:
    assert _run(capsys, "topics", str(logdir), "--alter", "--topic", "orders",
                "--partitions", "1") == (
        1, "", "Error while executing topic command : The topic orders currently has 2 "
               "partition(s); 1 would not be an increase.\n")
    assert _run(capsys, "topics", str(logdir), "--alter", "--topic", "orders",
                "--partitions", "2") == (
        1, "", "Error while executing topic command : Topic already has 2 partition(s).\n")
    assert _run(capsys, "topics", str(logdir), "--alter", "--topic", "nope",
                "--partitions", "2")[0] == 1
    with LogDir.open(logdir, read_only=True) as logs:
        assert [p for t, p in logs.partitions() if t == "orders"] == [0, 1]


def test_topics_delete(logdir: Path, capsys) -> None:
    assert _run(capsys, "topics", str(logdir), "--delete", "--topic", "orders") == (0, "", "")
    with LogDir.open(logdir, read_only=True) as logs:
        assert "orders" not in logs.topics()
    assert not (logdir / "orders-0").exists()
    assert _run(capsys, "topics", str(logdir), "--delete", "--topic", "orders")[0] == 1


def test_topics_usage_errors(logdir: Path, capsys) -> None:
    rc, _, err = _run(capsys, "topics", str(logdir), "--list", "--describe")
    assert rc == 2 and "Command must include exactly one action" in err
    rc, _, err = _run(capsys, "topics", str(logdir), "--alter", "--topic", "orders")
    assert rc == 2 and 'Missing required argument "[partitions]"' in err
    rc, _, err = _run(capsys, "topics", str(logdir), "--list", "--partitions", "2")
    assert rc == 2 and 'Option "[partitions]" can\'t be used with option "[list]"' in err


def test_topics_missing_dir_is_not_created(tmp_path: Path, capsys) -> None:
    missing = tmp_path / "nowhere"
    rc, _, err = _run(capsys, "topics", str(missing), "--create", "--topic", "t")
    assert rc == 1 and str(missing) in err and "no such log directory" in err
    assert not missing.exists()


# -- configs --------------------------------------------------------------------------------

def test_configs_describe_kafka_text(logdir: Path, capsys) -> None:
    assert _run(capsys, "configs", str(logdir), "--entity-type", "topics", "--entity-name",
                "orders", "--describe") == (
        0, "Dynamic configs for topic orders are:\n"
           "  retention.ms=60000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms="
           "60000}\n", "")
    rc, out, _ = _run(capsys, "configs", str(logdir), "--entity-type", "topics",
                      "--entity-name", "compacted", "--describe", "--all")
    lines = out.splitlines()
    assert rc == 0 and lines[0] == "All configs for topic compacted are:"
    assert len(lines) == 27      # every topic config kafkalog implements
    assert ("  cleanup.policy=compact sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:"
            "cleanup.policy=compact, DEFAULT_CONFIG:log.cleanup.policy=delete}") in lines
    assert ("  segment.bytes=1073741824 sensitive=false synonyms={DEFAULT_CONFIG:"
            "log.segment.bytes=1073741824}") in lines
    assert "  retention.ms=604800000 sensitive=false synonyms={}" in lines


def test_configs_describe_json(logdir: Path, capsys) -> None:
    rc, out, _ = _run(capsys, "configs", str(logdir), "--entity-type", "topics",
                      "--entity-name", "orders", "--describe", "--json")
    assert rc == 0
    assert json.loads(out) == {"topics": [{"topic": "orders", "configs": [{
        "name": "retention.ms", "value": "60000", "source": "DYNAMIC_TOPIC_CONFIG",
        "sensitive": False, "synonyms": [{"source": "DYNAMIC_TOPIC_CONFIG",
                                          "name": "retention.ms", "value": "60000"}]}]}]}


def test_configs_alter_add_and_delete_persist(logdir: Path, capsys) -> None:
    assert _run(capsys, "configs", str(logdir), "--entity-type", "topics", "--entity-name",
                "orders", "--alter", "--add-config",
                "segment.bytes=1048576,cleanup.policy=[compact,delete]",
                "--delete-config", "retention.ms") == (
        0, "Completed updating config for topic orders.\n", "")
    with LogDir.open(logdir, read_only=True) as logs:
        assert logs.topic_overrides("orders") == {"segment.bytes": "1048576",
                                                  "cleanup.policy": "compact,delete"}
        config = logs.log("orders", 1).config
        assert config.cleanup_policy == ("compact", "delete")
        assert config.retention_ms == 7 * 24 * 3600 * 1000     # back to the default
    rc, out, _ = _run(capsys, "configs", str(logdir), "--entity-type", "topics",
                      "--entity-name", "orders", "--describe")
    assert out.splitlines()[1] == (
        "  cleanup.policy=compact,delete sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:"
        "cleanup.policy=compact,delete, DEFAULT_CONFIG:log.cleanup.policy=delete}")


@pytest.mark.parametrize("add, names", [
    ("segment.bytes=ten", "segment.bytes"),
    ("retention.ms=1000,cleanup.policy=[shred]", "cleanup.policy"),
    ("no.such.config=1", "Unknown topic config name: no.such.config"),
    ("remote.storage.enable=true", "remote.storage.enable is not implemented by kafkalog"),
    ("min.insync.replicas=0", "min.insync.replicas"),
    ("compression.type=brotli", "compression.type"),
    ("compression.type=lz4,compression.zstd.level=23", "compression.zstd.level"),
])
def test_configs_alter_bad_config_changes_nothing(logdir: Path, capsys, add: str,
                                                  names: str) -> None:
    rc, out, err = _run(capsys, "configs", str(logdir), "--entity-type", "topics",
                        "--entity-name", "orders", "--alter", "--add-config", add)
    assert (rc, out) == (1, "")
    assert err.startswith("Error while executing config command with args '") and names in err
    with LogDir.open(logdir, read_only=True) as logs:
        assert logs.topic_overrides("orders") == {"retention.ms": "60000"}


def test_configs_errors(logdir: Path, capsys) -> None:
    assert _run(capsys, "configs", str(logdir), "--entity-type", "topics", "--entity-name",
                "orders", "--alter", "--delete-config", "segment.bytes") == (
        1, "", "Invalid config(s): segment.bytes\n")
    assert _run(capsys, "configs", str(logdir), "--entity-type", "topics", "--entity-name",
                "orders", "--alter", "--add-config", "segment.bytes") == (
        1, "", 'requirement failed: Invalid entity config: all configs to be added must be in '
               'the format "key=val".\n')
    rc, _, err = _run(capsys, "configs", str(logdir), "--entity-type", "topics",
                      "--entity-name", "nope", "--describe")
    assert rc == 1 and "'nope' is not in this log dir" in err and str(logdir) in err
    rc, _, err = _run(capsys, "configs", str(logdir), "--entity-type", "brokers",
                      "--entity-name", "1", "--describe")
    assert rc == 2 and "Invalid entity type brokers" in err and "topics" in err
    rc, _, err = _run(capsys, "configs", str(logdir), "--entity-type", "topics", "--alter",
                      "--add-config", "a=1")
    assert rc == 2 and "an entity name must be specified with --alter of topics" in err


# -- delete-records ---------------------------------------------------------------------------

def _offsets_file(tmp_path: Path, partitions: list[dict]) -> str:
    path = tmp_path / "offsets.json"
    path.write_text(json.dumps({"partitions": partitions, "version": 1}))
    return str(path)


def test_delete_records_advances_log_start_offset(logdir: Path, tmp_path: Path,
                                                  capsys) -> None:
    spec = _offsets_file(tmp_path, [{"topic": "orders", "partition": 0, "offset": 20},
                                    {"topic": "orders", "partition": 1, "offset": -1}])
    assert _run(capsys, "delete-records", str(logdir), "--offset-json-file", spec) == (
        0, "Executing records delete operation\n"
           "Records delete operation completed:\n"
           "partition: orders-0\tlow_watermark: 20\n"
           "partition: orders-1\tlow_watermark: 0\n", "")
    with LogDir.open(logdir) as logs:
        log = logs.log("orders", 0)
        assert log.log_start_offset == 20
        readable = list(log.records())
        assert [r.offset for r in readable] == list(range(20, 30))
        assert readable[0].value == b"v20"


def test_delete_records_to_high_watermark(logdir: Path, tmp_path: Path, capsys) -> None:
    spec = _offsets_file(tmp_path, [{"topic": "orders", "partition": 0, "offset": -1}])
    rc, out, _ = _run(capsys, "delete-records", str(logdir), "--offset-json-file", spec)
    assert rc == 0 and out.endswith("partition: orders-0\tlow_watermark: 30\n")
    with LogDir.open(logdir, read_only=True) as logs:
        assert logs.log("orders", 0).log_start_offset == 30
        assert list(logs.log("orders", 0).records()) == []


def test_delete_records_refusals(logdir: Path, tmp_path: Path, capsys) -> None:
    spec = _offsets_file(tmp_path, [
        {"topic": "orders", "partition": 0, "offset": 31},
        {"topic": "orders", "partition": 1, "offset": -2},
        {"topic": "compacted", "partition": 0, "offset": 2},
        {"topic": "__consumer_offsets", "partition": 0, "offset": 0},
        {"topic": "orders", "partition": 7, "offset": 0},
        {"topic": "nope", "partition": 0, "offset": 0},
        {"topic": "compacted", "partition": 1, "offset": 0},
    ])
    rc, out, err = _run(capsys, "delete-records", str(logdir), "--offset-json-file", spec)
    e = "org.apache.kafka.common.errors."
    assert rc == 1
    assert out == (
        "Executing records delete operation\n"
        "Records delete operation completed:\n"
        f"partition: orders-0\terror: {e}OffsetOutOfRangeException: The requested offset is "
        "not within the range of offsets maintained by the server.\n"
        f"partition: orders-1\terror: {e}OffsetOutOfRangeException: The requested offset is "
        "not within the range of offsets maintained by the server.\n"
        f"partition: compacted-0\terror: {e}PolicyViolationException: Request parameters do "
        "not satisfy the configured policy.\n"
        f"partition: __consumer_offsets-0\terror: {e}InvalidTopicException: The request "
        "attempted to perform an operation on an invalid topic.\n"
        f"partition: orders-7\terror: {e}UnknownTopicOrPartitionException: This server does "
        "not host this topic-partition.\n"
        f"partition: nope-0\terror: {e}UnknownTopicOrPartitionException: Failed to fetch "
        "metadata for partition nope-0 because metadata for topic `nope` could not be found\n"
        f"partition: compacted-1\terror: {e}UnknownTopicOrPartitionException: This server "
        "does not host this topic-partition.\n")
    # the broker's reasons, on stderr
    assert ("Cannot increment the log start offset to 31 of partition orders-0 since it is "
            "larger than the high watermark 30") in err
    assert "Records of partition compacted-0 can not be deleted due to the configured policy" \
        in err
    assert "Cannot delete records of internal topic __consumer_offsets" in err
    with LogDir.open(logdir, read_only=True) as logs:
        assert logs.log("orders", 0).log_start_offset == 0
        assert logs.log("compacted", 0).log_start_offset == 0


def test_delete_records_partial_failure_still_applies_the_rest(logdir: Path, tmp_path: Path,
                                                               capsys) -> None:
    spec = _offsets_file(tmp_path, [{"topic": "orders", "partition": 0, "offset": 10},
                                    {"topic": "compacted", "partition": 0, "offset": 2}])
    rc, out, _ = _run(capsys, "delete-records", str(logdir), "--offset-json-file", spec)
    assert rc == 1 and "partition: orders-0\tlow_watermark: 10\n" in out
    with LogDir.open(logdir, read_only=True) as logs:
        assert logs.log("orders", 0).log_start_offset == 10


def test_delete_records_duplicate_partition(logdir: Path, tmp_path: Path, capsys) -> None:
    spec = _offsets_file(tmp_path, [{"topic": "orders", "partition": 0, "offset": 5},
                                    {"topic": "orders", "partition": 1, "offset": 0},
                                    {"topic": "orders", "partition": 0, "offset": 6}])
    assert _run(capsys, "delete-records", str(logdir), "--offset-json-file", spec) == (
        1, "", "Offset json file contains duplicate topic partitions: orders-0\n")
    with LogDir.open(logdir, read_only=True) as logs:
        assert logs.log("orders", 0).log_start_offset == 0


def test_delete_records_bad_files(logdir: Path, tmp_path: Path, capsys) -> None:
    path = tmp_path / "bad.json"
    for text, message in (("{not json", "The input string is not a valid JSON"),
                          ('{"version": 2, "partitions": []}',
                           "Not supported version field value 2"),
                          ('{"version": 1}', "Missing partitions field"),
                          ('{"partitions": [{"topic": "t", "offset": 1}]}',
                           "No such field exists: `partition`")):
        path.write_text(text)
        assert _run(capsys, "delete-records", str(logdir), "--offset-json-file",
                    str(path)) == (1, "", message + "\n")


# -- the lock ---------------------------------------------------------------------------------

def test_write_commands_refuse_a_locked_dir(logdir: Path, tmp_path: Path, capsys) -> None:
    spec = _offsets_file(tmp_path, [{"topic": "orders", "partition": 0, "offset": 20}])
    with LogDir.open(logdir):        # a writer holds the dir (its .lock)
        for argv in (["topics", str(logdir), "--create", "--topic", "new"],
                     ["topics", str(logdir), "--alter", "--topic", "orders", "--partitions", "3"],
                     ["topics", str(logdir), "--delete", "--topic", "orders"],
                     ["configs", str(logdir), "--entity-type", "topics", "--entity-name",
                      "orders", "--alter", "--add-config", "retention.ms=1"],
                     ["delete-records", str(logdir), "--offset-json-file", spec]):
            rc, out, err = _run(capsys, *argv)
            assert (rc, out) == (1, ""), argv
            assert str(logdir / ".lock") in err and "the log directory is in use" in err
        # reading takes no lock
        rc, out, _ = _run(capsys, "topics", str(logdir), "--list")
        assert rc == 0 and "orders" in out
    with LogDir.open(logdir, read_only=True) as logs:
        assert "new" not in logs.topics() and "orders" in logs.topics()
        assert logs.topic_overrides("orders") == {"retention.ms": "60000"}
        assert logs.log("orders", 0).log_start_offset == 0


def test_locked_by_another_process(logdir: Path, capsys) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys; from kafkalog import LogDir\n"
         f"d = LogDir.open({str(logdir)!r}); print('ready', flush=True); sys.stdin.read(); "
         "d.close()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        cwd=Path(__file__).resolve().parents[1])
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        rc, _, err = _run(capsys, "topics", str(logdir), "--create", "--topic", "new")
        assert rc == 1
        assert f"locked by another writer (pid {holder.pid})" in err
    finally:
        holder.communicate("", timeout=60)
    assert _run(capsys, "topics", str(logdir), "--create", "--topic", "new")[0] == 0


def test_topics_describe_zookeeper_era_dir(tmp_path: Path, capsys) -> None:
    # meta.properties version 0 (a ZooKeeper-mode broker's): Kafka 3.9's admin client gets no
    # ELR lists from such a broker and prints N/A; the replica is its broker.id
    root = tmp_path / "zk"
    root.mkdir()
    (root / "meta.properties").write_text("version=0\nbroker.id=5\n")
    with LogDir.open(root) as logs:
        logs.create_topic("t", 1)
        tid = logs.topic_id("t")
    assert _run(capsys, "topics", str(root), "--describe") == (
        0, f"Topic: t\tTopicId: {tid}\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: \n"
           "\tTopic: t\tPartition: 0\tLeader: 5\tReplicas: 5\tIsr: 5\tElr: N/A"
           "\tLastKnownElr: N/A\n", "")


def test_topics_partitions_per_request_are_capped(logdir: Path, capsys) -> None:
    """At most 10,000 partitions per request, as Kafka's controller refuses more (CreateTopics:
    POLICY_VIOLATION's text; CreatePartitions: its records overflow, UnknownServerException's
    text); nothing is created."""
    assert _run(capsys, "topics", str(logdir), "--create", "--topic", "huge",
                "--partitions", "10001") == (
        1, "", "Error while executing topic command : Excessively large number of partitions "
               "per request.\n")
    assert _run(capsys, "topics", str(logdir), "--alter", "--topic", "compacted",
                "--partitions", "10002") == (
        1, "", "Error while executing topic command : The server experienced an unexpected "
               "error when processing the request.\n")
    with LogDir.open(logdir, read_only=True) as logs:
        assert "huge" not in logs.topics()
        assert [p for t, p in logs.partitions() if t == "compacted"] == [0]
