"""``kafkalog get-offsets`` (Kafka's ``GetOffsetShell``, offline) and the ListOffsets rules of
``kafkalog.list_offsets``.

The filter cases are Kafka's ``GetOffsetShellParsingTest`` (4.2) ported one for one; the
scenarios are its ``GetOffsetShellTest`` run on a log dir holding what that test's cluster
holds: ``topicN`` with N partitions and N*N records spread round-robin (each partition ends at
offset N), and the tiered ``topicRLSN`` (one partition, N one-record segments, all but the last
copied to remote storage and deleted locally, described by ``__remote_log_metadata`` records).
The real broker fixtures in ``../shared/fixtures/kafka-real`` are checked against their
checkpoints and their records decoded by kafka-python.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from kafkalog import Log, LogDir, Record
from kafkalog.admin import CommandFailed
from kafkalog.admin.get_offsets_command import (
    parse_offset_spec,
    topic_and_partitions_filter,
    topic_partition_filter,
)
from kafkalog.cli import main
from kafkalog.decoders import remote_log_metadata as rlmm
from kafkalog.list_offsets import (
    RemoteLogState,
    RemoteRecordsUnavailableError,
    RemoteSegment,
    TimestampAndOffset,
    epoch_for_offset,
    fetch_offset_for_timestamp,
)
from kafkalog.tiered import metadata_partition

NOW = int(time.time() * 1000)
FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "kafka-real"


# -- GetOffsetShellParsingTest ----------------------------------------------------------------

def _allowed(spec: str, *tps: tuple[str, int]) -> list[bool]:
    f = topic_partition_filter(spec)
    return [f.is_topic_partition_allowed(t, p) for t, p in tps]


def _topics(spec: str, *topics: str) -> list[bool]:
    f = topic_partition_filter(spec)
    return [f.is_topic_allowed(t) for t in topics]


def test_topic_partition_filter_for_topic_name() -> None:
    assert _topics("test", "test", "test1", "__consumer_offsets") == [True, False, False]
    assert _allowed("test", ("test", 0), ("test", 1), ("test1", 0),
                    ("__consumer_offsets", 0)) == [True, True, False, False]


def test_topic_partition_filter_for_internal_topic_name() -> None:
    assert _topics("__consumer_offsets", "__consumer_offsets", "test1", "test2") == [
        True, False, False]
    assert _allowed("__consumer_offsets", ("__consumer_offsets", 0), ("__consumer_offsets", 1),
                    ("test1", 0), ("test2", 0)) == [True, True, False, False]


def test_topic_partition_filter_for_topic_name_list() -> None:
    spec = "test,test1,__consumer_offsets"
    assert _topics(spec, "test", "test1", "__consumer_offsets", "test2") == [
        True, True, True, False]
    assert _allowed(spec, ("test", 0), ("test1", 1), ("__consumer_offsets", 0),
                    ("test2", 0)) == [True, True, True, False]


def test_topic_partition_filter_for_regex() -> None:
    assert _topics("test.*", "test", "test1", "test2", "__consumer_offsets") == [
        True, True, True, False]
    assert _allowed("test.*", ("test", 0), ("test1", 1), ("test2", 0),
                    ("__consumer_offsets", 0)) == [True, True, True, False]


def test_topic_partition_filter_for_partition_index_spec() -> None:
    assert _topics(":0", "test", "test1", "test2", "__consumer_offsets") == [True] * 4
    assert _allowed(":0", ("test", 0), ("test1", 0), ("test2", 1), ("__consumer_offsets", 0),
                    ("__consumer_offsets", 1)) == [True, True, False, True, False]


def test_topic_partition_filter_for_partition_range_spec() -> None:
    assert _topics(":1-3", "test", "test1", "__consumer_offsets", "test2") == [True] * 4
    assert _allowed(":1-3", ("test", 1), ("test1", 2), ("__consumer_offsets", 2), ("test2", 0),
                    ("test2", 3), ("__consumer_offsets", 3)) == [True, True, True, False, False,
                                                                 False]


def test_topic_partition_filter_for_partition_lower_bound_spec() -> None:
    assert _topics(":1-", "test", "test1", "test2", "__consumer_offsets") == [True] * 4
    assert _allowed(":1-", ("test", 1), ("test1", 2), ("__consumer_offsets", 2), ("test2", 0),
                    ("__consumer_offsets", 0)) == [True, True, True, False, False]


def test_topic_partition_filter_for_partition_upper_bound_spec() -> None:
    assert _topics(":-3", "test", "test1", "test2", "test3", "__consumer_offsets") == [True] * 5
    assert _allowed(":-3", ("test", 0), ("test1", 1), ("test2", 2), ("__consumer_offsets", 2),
                    ("test3", 3), ("__consumer_offsets", 3)) == [True, True, True, True, False,
                                                                 False]


def test_topic_partition_filter_complex() -> None:
    spec = "test.*:0,__consumer_offsets:1-2,.*:3"
    assert _topics(spec, "test", "test1", "custom", "__consumer_offsets") == [True] * 4
    assert _allowed(spec, ("test", 0), ("test1", 0), ("test", 1), ("test1", 1)) == [
        True, True, False, False]
    assert _allowed(spec, ("custom", 3), ("custom", 0)) == [True, False]
    assert _allowed(spec, ("__consumer_offsets", 1), ("__consumer_offsets", 3),
                    ("__consumer_offsets", 0), ("__consumer_offsets", 2)) == [
        True, True, False, False]


@pytest.mark.parametrize(("spec", "allowed"), [
    (":1", [False, True, False, False, False, False]),
    (":1-3", [False, True, True, False, False, False]),
    (":3-", [False, False, False, True, True, True]),
    (":-3", [True, True, True, False, False, False]),
])
def test_partition_filters(spec: str, allowed: list[bool]) -> None:
    assert _allowed(spec, *[("test", p) for p in range(6)]) == allowed


def test_partitions_set_filter() -> None:
    f = topic_and_partitions_filter("topic", "1,3,5")
    assert [f.is_topic_partition_allowed("topic", p) for p in range(6)] == [
        False, True, False, True, False, True]
    assert not f.is_topic_partition_allowed("topic1", 1)
    assert not f.is_topic_allowed("topic1") and f.is_topic_allowed("topic")


def test_invalid_offset() -> None:
    with pytest.raises(CommandFailed) as e:
        parse_offset_spec("foo")
    assert str(e.value) == (
        "Malformed time argument foo. Please use -1 or latest / -2 or earliest / -3 or "
        "max-timestamp / -4 or earliest-local / -5 or latest-tiered / -6 or "
        "earliest-pending-upload, or a specified long format timestamp")


@pytest.mark.parametrize(("text", "value"), [
    ("latest", -1), ("-1", -1), ("earliest", -2), ("max-timestamp", -3), ("earliest-local", -4),
    ("latest-tiered", -5), ("earliest-pending-upload", -6), ("+12", 12),
    ("9223372036854775807", 2**63 - 1)])
def test_offset_specs(text: str, value: int) -> None:
    assert parse_offset_spec(text) == value


@pytest.mark.parametrize("text", ["9223372036854775808", "1.5", " 1", "1_000", ""])
def test_offset_specs_java_refuses(text: str) -> None:
    with pytest.raises(CommandFailed):
        parse_offset_spec(text)


def test_rule_and_regex_errors_name_the_rule() -> None:
    with pytest.raises(CommandFailed, match="Invalid rule specification: t:1:2"):
        topic_partition_filter("t:1:2")
    with pytest.raises(CommandFailed, match=r"^\(unclosed is an invalid regex\.$"):
        topic_partition_filter("(unclosed")
    with pytest.raises(CommandFailed, match="--partitions expects a comma separated list of "
                                            "numeric partition ids, but received: 1,x"):
        topic_and_partitions_filter(None, "1,x")


def test_java_split_rules() -> None:
    # String.split drops trailing empty strings: "a," is one rule; ",," none at all; an empty
    # leading rule matches every topic
    assert _topics("a,", "a", "b") == [True, False]
    assert _topics(",,", "a") == [False]
    assert _topics(",a", "b") == [True]


# -- GetOffsetShellTest ---------------------------------------------------------------------

TOPIC_COUNT = 4


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """topicN (N = 1..4): N partitions, N*N records, record i to partition i % N;
    __consumer_offsets with 4 empty partitions (a consumer's group coordinator made it)."""
    root = tmp_path_factory.mktemp("get-offsets") / "logs"
    with LogDir.open(root, node_id=0) as logs:
        for n in range(1, TOPIC_COUNT + 1):
            logs.create_topic(f"topic{n}", n)
            for i in range(n * n):
                logs.log(f"topic{n}", i % n).append(
                    [Record(None, b"val%d" % i, NOW + i)], partition_leader_epoch=0)
        logs.create_topic("__consumer_offsets", 4)
    return root


def _rows(capsys: pytest.CaptureFixture[str], root: Path, *args: str) -> list[tuple]:
    assert main(["get-offsets", str(root), *args]) == 0
    out = capsys.readouterr().out
    rows = []
    for line in out.splitlines():
        t, p, o = line.split(":")
        rows.append((t, int(p), int(o)))
    return rows


def _expected(*topics: int) -> list[tuple]:
    return [(f"topic{n}", p, n) for n in topics for p in range(n)]


def test_no_filter_options(cluster: Path, capsys) -> None:
    internal = [("__consumer_offsets", p, 0) for p in range(4)]
    assert _rows(capsys, cluster) == internal + _expected(1, 2, 3, 4)


def test_internal_excluded(cluster: Path, capsys) -> None:
    assert _rows(capsys, cluster, "--exclude-internal-topics") == _expected(1, 2, 3, 4)


def test_topic_name_arg(cluster: Path, capsys) -> None:
    for n in range(1, TOPIC_COUNT + 1):
        assert _rows(capsys, cluster, "--topic", f"topic{n}") == _expected(n)


def test_topic_pattern_arg(cluster: Path, capsys) -> None:
    assert _rows(capsys, cluster, "--topic", "topic.*") == _expected(1, 2, 3, 4)


def test_partitions_arg(cluster: Path, capsys) -> None:
    expected = [r for r in [("__consumer_offsets", p, 0) for p in range(4)]
                + _expected(1, 2, 3, 4) if r[1] <= 1]
    assert _rows(capsys, cluster, "--partitions", "0,1") == expected
    assert _rows(capsys, cluster, "--topic", "topic.*", "--partitions", "0,1") == [
        r for r in _expected(1, 2, 3, 4) if r[1] <= 1]


def test_topic_partitions_arg(cluster: Path, capsys) -> None:
    spec = "topic1:0,topic2:1,topic(3|4):2,__.*:3"
    assert _rows(capsys, cluster, "--topic-partitions", spec) == [
        ("__consumer_offsets", 3, 0), ("topic1", 0, 1), ("topic2", 1, 2), ("topic3", 2, 3),
        ("topic4", 2, 4)]
    assert _rows(capsys, cluster, "--topic-partitions", spec, "--exclude-internal-topics") == [
        ("topic1", 0, 1), ("topic2", 1, 2), ("topic3", 2, 3), ("topic4", 2, 4)]
    assert _rows(capsys, cluster, "--topic-partitions", "__.*:0") == [
        ("__consumer_offsets", 0, 0)]


@pytest.mark.parametrize("time_", ["-1", "latest"])
def test_get_latest_offsets(cluster: Path, capsys, time_: str) -> None:
    assert _rows(capsys, cluster, "--topic-partitions", "topic.*:0", "--time", time_) == [
        ("topic1", 0, 1), ("topic2", 0, 2), ("topic3", 0, 3), ("topic4", 0, 4)]


@pytest.mark.parametrize("time_", ["-2", "earliest"])
def test_get_earliest_offsets(cluster: Path, capsys, time_: str) -> None:
    assert _rows(capsys, cluster, "--topic-partitions", "topic.*:0", "--time", time_) == [
        (f"topic{n}", 0, 0) for n in range(1, 5)]


@pytest.mark.parametrize("time_", ["-3", "max-timestamp"])
def test_get_offsets_by_max_timestamp(cluster: Path, capsys, time_: str) -> None:
    rows = _rows(capsys, cluster, "--topic-partitions", "topic.*", "--time", time_)
    # every partition's last record carries its largest timestamp (record i at NOW + i)
    assert rows == [(f"topic{n}", p, n - 1) for n in range(1, 5) for p in range(n)]


def test_get_offsets_by_timestamp(cluster: Path, capsys) -> None:
    assert _rows(capsys, cluster, "--topic-partitions", "topic.*:0", "--time",
                 str(NOW // 2)) == [(f"topic{n}", 0, 0) for n in range(1, 5)]
    # topic4 partition 1 holds records 1, 5, 9, 13 (NOW + i): the first at or after NOW + 6
    assert _rows(capsys, cluster, "--topic-partitions", "topic4:1", "--time",
                 str(NOW + 6)) == [("topic4", 1, 2)]


def test_no_offset_if_timestamp_greater_than_latest_record(cluster: Path, capsys) -> None:
    assert _rows(capsys, cluster, "--topic-partitions", "topic.*", "--time",
                 str(NOW * 2)) == []


@pytest.mark.parametrize("time_", ["-4", "earliest-local"])
def test_earliest_local_without_remote_storage_is_earliest(cluster: Path, capsys,
                                                           time_: str) -> None:
    assert _rows(capsys, cluster, "--topic-partitions", r"topic\d+.*:0", "--time", time_) == [
        (f"topic{n}", 0, 0) for n in range(1, 5)]


@pytest.mark.parametrize("time_", ["-5", "latest-tiered", "-6", "earliest-pending-upload"])
def test_tiered_specs_without_remote_storage_print_nothing(cluster: Path, capsys,
                                                          time_: str) -> None:
    assert _rows(capsys, cluster, "--topic-partitions", r"topic\d+:0", "--time", time_) == []


@pytest.mark.parametrize("args", [
    ["--topic", "some_nonexistent_topic"],
    ["--topic", "some_nonexistent_topic:*"],
    ["--topic-partitions", "__consumer_offsets", "--exclude-internal-topics"],
])
def test_topic_partitions_not_found(cluster: Path, capsys, args: list[str]) -> None:
    assert main(["get-offsets", str(cluster), *args]) == 1
    assert capsys.readouterr().err == (
        "Error occurred: Could not match any topic-partitions with the specified filters\n")


@pytest.mark.parametrize("args", [
    ["--topic-partitions", "__consumer_offsets", "--topic", "topic1"],
    ["--topic-partitions", "__consumer_offsets", "--partitions", "0"],
])
def test_topic_partitions_flag_with_topic_or_partitions_flag(cluster: Path, capsys,
                                                             args: list[str]) -> None:
    assert main(["get-offsets", str(cluster), *args]) == 1
    assert capsys.readouterr().err == (
        "Error occurred: --topic-partitions cannot be used with --topic or --partitions\n")


def test_invalid_time_value(cluster: Path, capsys) -> None:
    assert main(["get-offsets", str(cluster), "--time", "invalid"]) == 1
    assert capsys.readouterr().err.startswith("Error occurred: Malformed time argument invalid.")


def test_output_sorts_as_topic_partition_strings(tmp_path: Path, capsys) -> None:
    root = tmp_path / "logs"
    with LogDir.open(root) as logs:
        logs.create_topic("t", 12)
    # TreeMap by TopicPartition.toString: "t-10" < "t-2"
    assert [p for _, p, _ in _rows(capsys, root)] == [0, 1, 10, 11, 2, 3, 4, 5, 6, 7, 8, 9]


# -- isolation, high watermark, leader epochs, JSON -------------------------------------------

def test_latest_is_the_high_watermark_and_read_committed_the_last_stable_offset(
        tmp_path: Path, capsys) -> None:
    root = tmp_path / "logs"
    with LogDir.open(root) as logs:
        logs.create_topic("t", 1)
        log = logs.log("t", 0)
        log.append([Record(None, b"a", NOW), Record(None, b"b", NOW + 1)],
                   partition_leader_epoch=3)
        # an open transaction from offset 2 (producer 7), then a committed high watermark of 3
        log.append([Record(None, b"c", NOW + 2)], producer_id=7, producer_epoch=0,
                   base_sequence=0, transactional=True, partition_leader_epoch=3)
        log.append([Record(None, b"d", NOW + 3)], partition_leader_epoch=3)
        logs.set_high_watermark("t", 0, 3)
        logs.checkpoint()
    assert _rows(capsys, root) == [("t", 0, 3)]
    assert _rows(capsys, root, "--isolation", "read_committed") == [("t", 0, 2)]
    # answers at or past the last fetchable offset are no answer
    assert _rows(capsys, root, "--time", str(NOW + 3)) == []
    assert _rows(capsys, root, "--time", str(NOW + 2)) == [("t", 0, 2)]
    assert _rows(capsys, root, "--time", str(NOW + 2), "--isolation", "read_committed") == []
    assert main(["get-offsets", str(root), "--json", "--time", str(NOW + 1)]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "offsets": [{"topic": "t", "partition": 0, "offset": 1, "timestamp": NOW + 1,
                     "leaderEpoch": 3}], "skipped": []}


def test_epoch_for_offset_is_kafkas() -> None:
    entries = [(1, 5), (4, 9), (6, 20)]
    assert [epoch_for_offset(entries, o) for o in (0, 4, 5, 8, 9, 19, 20, 99)] == [
        None, None, 1, 1, 4, 4, 6, 6]
    assert epoch_for_offset([], 3) is None


# -- tiered storage ---------------------------------------------------------------------------

def _uuid_str(n: int) -> str:
    from kafkalog.decoders import message

    return message.uuid_to_str(n.to_bytes(16, "big"))


@pytest.fixture(scope="module")
def tiered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """topicRLSN (N = 1..4), one partition: N records in N segments (epoch 0); the first N - 1
    segments copied to remote storage (COPY_SEGMENT_FINISHED events) and deleted locally, as
    GetOffsetShellTest's cluster leaves them; plus the untiered topicN of ``cluster``."""
    root = tmp_path_factory.mktemp("get-offsets-tiered") / "logs"
    events: dict[int, list[bytes]] = {}
    with LogDir.open(root, node_id=0) as logs:
        logs.create_topic("topic1", 1)
        logs.log("topic1", 0).append([Record(None, b"x", NOW)], partition_leader_epoch=0)
        for n in range(1, TOPIC_COUNT + 1):
            topic = f"topicRLS{n}"
            topic_id = str(logs.create_topic(topic, 1))
            log = logs.log(topic, 0)
            for i in range(n):
                log.append([Record(None, b"val%d" % i, NOW + 1000 * i)],
                           partition_leader_epoch=0)
                if i < n - 1:
                    log.roll()
            tip = {"name": topic, "id": topic_id, "partition": 0}
            for k in range(n - 1):
                seg = {"topicIdPartition": tip, "id": _uuid_str(100 * n + k)}
                events.setdefault(metadata_partition(topic_id, 0), []).extend([
                    rlmm.encode_record(0, {
                        "remoteLogSegmentId": seg, "startOffset": k, "endOffset": k,
                        "brokerId": 0, "maxTimestampMs": NOW + 1000 * k,
                        "eventTimestampMs": NOW, "segmentLeaderEpochs": [
                            {"leaderEpoch": 0, "offset": k}],
                        "segmentSizeInBytes": 80, "remoteLogSegmentState": 0}),
                    rlmm.encode_record(1, {"remoteLogSegmentId": seg, "brokerId": 0,
                                           "eventTimestampMs": NOW,
                                           "remoteLogSegmentState": 1})])
    for n in range(1, TOPIC_COUNT + 1):
        d = root / f"topicRLS{n}-0"
        for k in range(n - 1):  # local retention deleted the copied segments
            for ext in (".log", ".index", ".timeindex"):
                (d / f"{k:020d}{ext}").unlink(missing_ok=True)
    for part, values in events.items():
        with Log.open(root / f"__remote_log_metadata-{part}") as log:
            log.append([Record(None, v, NOW) for v in values])
    return root


@pytest.mark.parametrize("time_", ["-4", "earliest-local"])
def test_get_offsets_by_earliest_local_spec(tiered: Path, capsys, time_: str) -> None:
    assert _rows(capsys, tiered, "--topic-partitions", r"topic\d+.*:0", "--time", time_) == [
        ("topic1", 0, 0)]
    assert _rows(capsys, tiered, "--topic-partitions", "topicRLS.*:0", "--time", time_) == [
        ("topicRLS1", 0, 0), ("topicRLS2", 0, 1), ("topicRLS3", 0, 2), ("topicRLS4", 0, 3)]


@pytest.mark.parametrize("time_", ["-5", "latest-tiered"])
def test_get_offsets_by_latest_tiered_spec(tiered: Path, capsys, time_: str) -> None:
    assert _rows(capsys, tiered, "--topic-partitions", r"topic\d+:0", "--time", time_) == []
    # topicRLS1 has nothing uploaded (and no metadata at all: untiered here, also no answer)
    assert _rows(capsys, tiered, "--topic-partitions", "topicRLS.*:0", "--time", time_) == [
        ("topicRLS2", 0, 0), ("topicRLS3", 0, 1), ("topicRLS4", 0, 2)]


@pytest.mark.parametrize("time_", ["-6", "earliest-pending-upload"])
def test_get_offsets_by_earliest_pending_upload_spec(tiered: Path, capsys, time_: str) -> None:
    assert _rows(capsys, tiered, "--topic-partitions", r"topic\d+:0", "--time", time_) == []
    rows = _rows(capsys, tiered, "--topic-partitions", "topicRLS.*:0", "--time", time_)
    # Kafka's test expects topicRLS1 at 0 too: its broker knows the topic is tiered from its
    # config, which a log dir does not hold; with no metadata event it reads as untiered here
    assert rows == [("topicRLS2", 0, 1), ("topicRLS3", 0, 2), ("topicRLS4", 0, 3)]


def test_earliest_of_a_tiered_partition_is_the_remote_log_start(tiered: Path, capsys) -> None:
    # the local logs start at N - 1 (what an untiered log's earliest would be); the remote log
    # starts at 0 (findLogStartOffset: the first remote segment of the earliest epoch)
    assert _rows(capsys, tiered, "--topic-partitions", "topicRLS.*:0", "--time",
                 "earliest") == [(f"topicRLS{n}", 0, 0) for n in range(1, 5)]


def test_a_timestamp_in_a_remote_segment_is_skipped_with_the_segment_named(
        tiered: Path, capsys) -> None:
    # topicRLS4's record 1 (NOW + 1000) is remote; record 3 (NOW + 3000) is local
    assert main(["get-offsets", str(tiered), "--topic-partitions", "topicRLS4", "--time",
                 str(NOW + 500)]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(
        "Skip getting offsets for topic-partition topicRLS4-0 due to error: ")
    assert f"remote segment {_uuid_str(401)} (offsets 1-1" in captured.err
    assert "kafkalog tiered-restore" in captured.err
    assert _rows(capsys, tiered, "--topic-partitions", "topicRLS4", "--time",
                 str(NOW + 2500)) == [("topicRLS4", 0, 3)]


def test_remote_state_rules_on_a_log(tmp_path: Path) -> None:
    """fetch_offset_for_timestamp with a RemoteLogState: Kafka's UnifiedLog branches."""
    d = tmp_path / "t-0"
    with Log.open(d) as log:  # offsets 0-2 (epoch 2) uploaded and deleted locally, 3-5 local
        for i in range(6):
            log.append([Record(None, b"v", NOW + 10 * i)], partition_leader_epoch=2)
            if i == 2:
                log.roll()
    for ext in (".log", ".index", ".timeindex"):
        (d / f"{0:020d}{ext}").unlink()
    with Log.open(d, read_only=True) as log:
        assert (log.log_start_offset, log.leader_epoch_entries) == (3, [(2, 0)])
        args = {"last_fetchable_offset": 6, "leader_epoch": 2}
        nothing = RemoteLogState(3, -1)
        # nothing uploaded, the local log is the whole log: pending upload is the earliest
        assert fetch_offset_for_timestamp(log, -6, remote=nothing, **args).offset == 3
        assert fetch_offset_for_timestamp(log, -5, remote=nothing, **args) is None
        unknown = RemoteLogState(0, -1)  # the leader has not found the uploaded segments
        assert fetch_offset_for_timestamp(log, -6, remote=unknown, **args) is None
        seg = RemoteSegment("s", 0, 2, NOW + 20, ((2, 0),))
        up = RemoteLogState(0, 2, (seg,))
        assert fetch_offset_for_timestamp(log, -2, remote=up, **args).offset == 0
        assert fetch_offset_for_timestamp(log, -4, remote=up, **args).offset == 3
        assert fetch_offset_for_timestamp(log, -6, remote=up, **args).offset == 3
        assert fetch_offset_for_timestamp(log, -5, remote=up, **args).offset == 2
        # a target past every remote segment's max timestamp is searched locally
        assert fetch_offset_for_timestamp(log, NOW + 21, remote=up, **args).offset == 3
        with pytest.raises(RemoteRecordsUnavailableError) as e:
            fetch_offset_for_timestamp(log, NOW + 5, remote=up, **args)
        assert e.value.offset == 0 and "remote segment s" in str(e.value)
        # with a reader, the remote segment answers (RemoteLogManager.lookupTimestamp)
        calls = []

        def reader(segment, ts, starting):
            calls.append((segment.segment_id, ts, starting))
            return TimestampAndOffset(NOW + 10, 1, 2)

        found = fetch_offset_for_timestamp(log, NOW + 5, remote=up._replace(reader=reader),
                                           **args)
        assert found == TimestampAndOffset(NOW + 10, 1, 2) and calls == [("s", NOW + 5, 0)]
        # a remote segment outside the lineage (epoch 1 is not in it) is never read
        stray = RemoteLogState(0, 2, (RemoteSegment("x", 0, 2, NOW + 20, ((1, 0),)),), reader)
        assert fetch_offset_for_timestamp(log, NOW + 5, remote=stray, **args).offset == 3
        # not a special value: Kafka searches any other negative timestamp as a time
        assert fetch_offset_for_timestamp(log, -7, **args).offset == 3


# -- real brokers' dirs -----------------------------------------------------------------------

def _real(name: str) -> Path:
    d = FIXTURES / name
    if not d.is_dir():
        pytest.skip(f"{d} absent (the shared fixtures are not on this machine)")
    return d


@pytest.mark.parametrize("name", ["VolodymyrZee-kafka", "KAIPASUBHASH-kafka-logs", "LDI-POC"])
def test_real_broker_dirs_against_their_checkpoints_and_kafka_python(
        name: str, tmp_path: Path, capsys) -> None:
    """Latest is each partition's replication-offset-checkpoint entry (a broker that shut down
    cleanly: high watermark = log end offset); earliest the first offset; max-timestamp the
    first record carrying the largest timestamp, as kafka-python decodes the .log files."""
    import shutil
    import warnings

    from kafkalog.checkpoint import OffsetCheckpointFile

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from kafka.record import MemoryRecords

    root = tmp_path / name
    shutil.copytree(_real(name), root)
    hw = OffsetCheckpointFile(root / "replication-offset-checkpoint").read()
    held = {}
    for d in sorted(root.iterdir()):
        if not d.is_dir() or d.name.startswith("__cluster_metadata"):
            continue
        topic, _, p = d.name.rpartition("-")
        records = []
        for seg in sorted(d.glob("*.log")):
            batches = MemoryRecords(seg.read_bytes())
            while batches.has_next():
                batch = batches.next_batch()
                records += [(r.offset, r.timestamp) for r in batch]
        held[(topic, int(p))] = records
    latest = _rows(capsys, root)
    assert {(t, p): o for t, p, o in latest} == {tp: hw[tp] for tp in held}
    earliest = _rows(capsys, root, "--time", "earliest")
    assert {(t, p): o for t, p, o in earliest} == {
        tp: (recs[0][0] if recs else hw[tp]) for tp, recs in held.items()}
    max_ts = _rows(capsys, root, "--time", "max-timestamp")
    expected = {}
    for tp, recs in held.items():
        if recs:
            top = max(ts for _, ts in recs)
            expected[tp] = next(o for o, ts in recs if ts == top)
    assert {(t, p): o for t, p, o in max_ts} == expected


# -- a timestamp in a remote segment, read from the objects Aiven's plugin uploaded -----------

GOLDEN = Path(__file__).parent / "golden" / "aiven_tiered_storage"


@pytest.fixture(scope="module")
def tiered_orders(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[tuple]]:
    """orders-0 as a broker leaves it after tiering: offsets 0-1999 only in remote storage
    (the golden segment the plugin uploaded, COPY_SEGMENT_FINISHED in __remote_log_metadata),
    2000-2009 local; and (offset, timestamp, epoch) of every record of the uploaded segment, as
    kafka-python decodes the broker's original .log."""
    import warnings

    from kafkalog.checkpoint import PartitionMetadataFile

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from kafka.record import MemoryRecords

    seg = json.loads((GOLDEN / "expected.json").read_text())["segment"]
    original = []
    batches = MemoryRecords((GOLDEN / "input" / "orders-0" / f"{0:020d}.log").read_bytes())
    while batches.has_next():
        b = batches.next_batch()
        original += [(r.offset, r.timestamp, b.leader_epoch) for r in b]
    root = tmp_path_factory.mktemp("tiered-orders") / "logs"
    part = root / "orders-0"
    with Log.open(part, standalone=False) as log:
        log.truncate_fully_and_start_at(2000)
        log.append([Record(None, b"local%d" % i, original[-1][1] + 1000 + i)
                    for i in range(10)], partition_leader_epoch=0)
    # the broker's leader-epoch cache covers the remote offsets (it is truncated from the
    # start only at the log start offset, which is remote)
    (part / "leader-epoch-checkpoint").write_bytes(
        (GOLDEN / "input" / "orders-0" / "leader-epoch-checkpoint").read_bytes())
    from kafkalog.checkpoint import Uuid

    PartitionMetadataFile(part / "partition.metadata").write(Uuid.from_string(seg["topic_id"]))
    tip = {"name": "orders", "id": seg["topic_id"], "partition": 0}
    sid = {"topicIdPartition": tip, "id": seg["segment_id"]}
    with Log.open(root / f"__remote_log_metadata-{metadata_partition(seg['topic_id'], 0)}",
                  standalone=False) as log:
        log.append([Record(None, v, NOW) for v in (
            rlmm.encode_record(0, {
                "remoteLogSegmentId": sid, "startOffset": 0, "endOffset": seg["end_offset"],
                "brokerId": 0, "maxTimestampMs": seg["max_timestamp_ms"],
                "eventTimestampMs": seg["event_timestamp_ms"],
                "segmentLeaderEpochs": [{"leaderEpoch": 0, "offset": 0}],
                "segmentSizeInBytes": seg["segment_size_in_bytes"],
                "remoteLogSegmentState": 0}),
            rlmm.encode_record(1, {"remoteLogSegmentId": sid, "brokerId": 0,
                                   "eventTimestampMs": seg["event_timestamp_ms"] + 1,
                                   "remoteLogSegmentState": 1}))])
    return root, original


@pytest.mark.parametrize("variant", ["plain", "zstd", "encrypted"])
def test_a_timestamp_in_a_remote_segment_is_read_from_the_plugins_objects(
        tiered_orders, variant: str, capsys) -> None:
    root, original = tiered_orders
    args = ["--topic", "orders", "--objects", str(GOLDEN / variant / "objects")]
    if variant == "encrypted":
        args += ["--private-key", f"key1={GOLDEN / variant / 'private.pem'}"]
    for target in (original[0][1], original[777][1] + 1, original[1500][1], NOW // 2):
        want = next(((o, ts, e) for o, ts, e in original if ts >= target), None)
        assert main(["get-offsets", str(root), "--time", str(target), "--json", *args]) == 0
        (row,) = json.loads(capsys.readouterr().out)["offsets"]
        assert (row["offset"], row["timestamp"], row["leaderEpoch"]) == want
    # earliest is the remote log start, earliest-local the local one, latest-tiered the end
    # of the uploaded segment, earliest-pending-upload the offset after it
    assert [_rows(capsys, root, "--topic", "orders", "--time", t)
            for t in ("-2", "-4", "-5", "-6")] == [
        [("orders", 0, 0)], [("orders", 0, 2000)], [("orders", 0, 1999)], [("orders", 0, 2000)]]
    # past the remote segment's max timestamp: answered from the local log, no object read
    assert _rows(capsys, root, "--topic", "orders", "--time", str(original[-1][1] + 1005),
                 "--objects", str(root / "orders-0")) == [("orders", 0, 2005)]


def test_a_remote_segment_missing_from_the_copy_is_named(tiered_orders, tmp_path,
                                                         capsys) -> None:
    root, original = tiered_orders
    assert main(["get-offsets", str(root), "--topic", "orders", "--time", str(original[5][1]),
                 "--objects", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert ("Skip getting offsets for topic-partition orders-0 due to error: offset 0: remote "
            "segment XmXmXmXmXmUAAAAAAAAAAQ (offsets 0-1999) has no .rsm-manifest in the bucket "
            "copy given") in captured.err
