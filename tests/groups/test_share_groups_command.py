"""``kafkalog groups`` over share groups (KIP-932): ``kafka-share-groups.sh``'s texts, offline.

The tree is written by a real server (its share service writes ``__share_group_state``; its
group coordinator ``__consumer_offsets``), then stopped; the command reads what is left.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kafkalog import LogDir, Record
from kafkalog.cli import main as cli_main
from kafkalog.decoders.offsets import CODEC
from kafkalog.groups import GroupMetadataManager
from kafkalog.groups import consumer_protocol as cp
from kafkalog.groups.records import GroupMetadata, MemberMetadata
from kafkalog.groups.share import offline
from kafkalog.server import KafkaServer, ServerConfig

T0 = 1_700_000_000_000
ACCEPT, RELEASE, REJECT = 1, 2, 3
LONG = "a-share-group-with-a-long-id"          # 28 characters: GROUP grows past 15
OFFSETS = "\n%-15s %-15s %-10s %-13s %s"        # printOffsets, GROUP and TOPIC at 15
TYPE_25 = "%-25s %-20s\n"                       # printGroupInfo's GROUP TYPE, ids <= 15


def _config() -> ServerConfig:
    return ServerConfig(offsets_topic_num_partitions=4, transaction_state_num_partitions=4,
                        group_initial_rebalance_delay_ms=0, share_auto_offset_reset="earliest",
                        share_coordinator_state_topic_num_partitions=4)


def _share_records(group: str, *, epoch: int | None, assignment_epoch: int | None = None
                   ) -> list[tuple[bytes, bytes | None]]:
    """``ShareGroupMetadata`` (type 11) and ``ShareGroupTargetAssignmentMetadata`` (type 12)
    records as Kafka's group coordinator writes them (epoch None: a tombstone)."""
    recs = [CODEC.encode(11, {"groupId": group}, None if epoch is None else {"epoch": epoch})]
    if assignment_epoch is not None:
        recs.append(CODEC.encode(12, {"groupId": group}, {"assignmentEpoch": assignment_epoch}))
    return recs


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """jobs-0 (10 records) and jobs-1 (4); a share group 'grp' on both; LONG on jobs-1;
    'meta-only' known from its ShareGroupMetadata records alone; 'deleted' with state left
    behind a ShareGroupMetadata tombstone; a classic group 'classic-app' with offsets."""
    path = tmp_path_factory.mktemp("share-tree")
    s = KafkaServer(path, "127.0.0.1", 0, config=_config()).start()
    try:
        s.broker.create_topic("jobs", 2)
        for p, n in ((0, 10), (1, 4)):
            s.broker.log("jobs", p).append(
                [Record(b"k", b"v%d" % i, T0 + i) for i in range(n)])
        shares = s.broker.shares
        _, acquired = shares.acquire("grp", "member-1", "jobs", 0, max_records=100,
                                     max_bytes=1 << 20)
        assert acquired == [(0, 9, 1)]
        # 0-1 accepted, 2 rejected: the start offset moves to 3; 3 released (AVAILABLE again);
        # 5 accepted behind it: one delivery-complete record in the window; 4, 6-9 still held
        for first, last, kind in ((0, 1, ACCEPT), (2, 2, REJECT), (3, 3, RELEASE),
                                  (5, 5, ACCEPT)):
            assert shares.acknowledge("grp", "member-1", "jobs", 0,
                                      [(first, last, (kind,))])[0] == 0
        shares.acquire("grp", "member-1", "jobs", 1, max_records=100, max_bytes=1 << 20)
        assert shares.acknowledge("grp", "member-1", "jobs", 1, [(0, 3, (ACCEPT,))])[0] == 0
        shares.acquire(LONG, "m", "jobs", 1, max_records=100, max_bytes=1 << 20)
        assert shares.acknowledge(LONG, "m", "jobs", 1, [(0, 1, (ACCEPT,))])[0] == 0
        shares.acquire("deleted", "m", "jobs", 0, max_records=100, max_bytes=1 << 20)
        assert shares.acknowledge("deleted", "m", "jobs", 0, [(0, 0, (ACCEPT,))])[0] == 0

        manager = s.broker.groups.coordinator.manager
        manager.write_records("meta-only", _share_records("meta-only", epoch=3,
                                                          assignment_epoch=2))
        manager.write_records("deleted", _share_records("deleted", epoch=1))
        manager.write_records("deleted", _share_records("deleted", epoch=None))
        manager.commit_offsets("classic-app", {("jobs", 0): 4})
        sub = cp.encode_subscription(cp.Subscription(["jobs"]))
        manager.store_group(GroupMetadata("classic-app", "consumer", 1, "range", "c-1", T0, (
            MemberMetadata("c-1", "client-1", "/10.0.0.1", 300000, 45000, sub,
                           cp.encode_assignment(cp.Assignment([("jobs", 0)]))),)))
    finally:
        s.stop()
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = cli_main(["groups", *argv])
    out, err = capsys.readouterr()
    return code, out, err


# -- list -------------------------------------------------------------------------------------

def test_list_includes_share_groups(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "list", str(tree)) == (
        0, f"{LONG}\nclassic-app\ngrp\nmeta-only\n", "")
    code, out, _ = run(capsys, "list", str(tree), "--json")
    assert json.loads(out) == {"groups": [LONG, "classic-app", "grp", "meta-only"]}


def test_list_type_and_state(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    both = "%-38s %-20s %-20s\n"         # printGroupInfo: max(15, 28) + 10
    assert run(capsys, "list", str(tree), "--type", "--state") == (0, (
        both % ("GROUP", "TYPE", "STATE") + both % (LONG, "Share", "Empty")
        + both % ("classic-app", "Classic", "Stable") + both % ("grp", "Share", "Empty")
        + both % ("meta-only", "Share", "Empty")), "")
    narrow = "%-38s %-20s\n"
    assert run(capsys, "list", str(tree), "--type", "share") == (0, (
        narrow % ("GROUP", "TYPE") + narrow % (LONG, "Share") + narrow % ("grp", "Share")
        + narrow % ("meta-only", "Share")), "")
    assert run(capsys, "list", str(tree), "--type", "classic")[1] == (
        TYPE_25 % ("GROUP", "TYPE") + TYPE_25 % ("classic-app", "Classic"))
    code, out, _ = run(capsys, "list", str(tree), "--type", "share", "--state", "stable",
                       "--json")
    assert json.loads(out) == {"groups": []}
    code, out, _ = run(capsys, "list", str(tree), "--type", "SHARE", "--state", "empty",
                       "--json")
    assert json.loads(out) == {"groups": [
        {"group": g, "type": "share", "state": "Empty"} for g in (LONG, "grp", "meta-only")]}


# -- describe: offsets ------------------------------------------------------------------------

def test_describe_offsets_as_kafka_prints_them(tree: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    # jobs-0: 10 - 3 - 1 (offset 5 accepted above the start offset); jobs-1: 4 - 4 - 0
    expected = (OFFSETS % ("GROUP", "TOPIC", "PARTITION", "START-OFFSET", "LAG")
                + OFFSETS % ("grp", "jobs", 0, 3, 6) + OFFSETS % ("grp", "jobs", 1, 4, 0) + "\n")
    assert run(capsys, "describe", str(tree), "--group", "grp") == (0, expected, "")
    assert run(capsys, "describe", str(tree), "--group", "grp", "--offsets") == (0, expected, "")


def test_describe_offsets_verbose_has_the_leader_epoch(
        tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fmt = "\n%-15s %-15s %-10s %-13s %-13s %s"
    assert run(capsys, "describe", str(tree), "--group", "grp", "--verbose") == (0, (
        fmt % ("GROUP", "TOPIC", "PARTITION", "LEADER-EPOCH", "START-OFFSET", "LAG")
        + fmt % ("grp", "jobs", 0, 0, 3, 6) + fmt % ("grp", "jobs", 1, 0, 4, 0) + "\n"), "")


def test_describe_offsets_of_a_long_group_id(tree: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    fmt = "\n%-28s %-15s %-10s %-13s %s"
    assert run(capsys, "describe", str(tree), "--group", LONG) == (0, (
        fmt % ("GROUP", "TOPIC", "PARTITION", "START-OFFSET", "LAG")
        + fmt % (LONG, "jobs", 1, 2, 2) + "\n"), "")


def test_describe_offsets_json(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "describe", str(tree), "--group", "grp", "--json")
    assert code == 0 and err == ""
    doc = json.loads(out)
    with LogDir.open(tree, read_only=True) as logs:
        tid = str(logs.topic_id("jobs"))
    assert doc == {"group": "grp", "type": "share", "state": "Empty", "partitions": [
        {"topic": "jobs", "topic_id": tid, "partition": 0, "leader_epoch": 0,
         "start_offset": 3, "delivery_complete_count": 1, "log_end_offset": 10, "lag": 6},
        {"topic": "jobs", "topic_id": tid, "partition": 1, "leader_epoch": 0,
         "start_offset": 4, "delivery_complete_count": 0, "log_end_offset": 4, "lag": 0}],
        "partitions_not_in_tree": []}


def test_describe_a_group_without_offsets(tree: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "describe", str(tree), "--group", "meta-only") == (
        0, "\nShare group 'meta-only' has no offset information.\n", "")


def test_a_partition_not_in_the_tree_has_no_lag(tmp_path: Path, tree: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    copy = tmp_path / "copy"
    import shutil

    shutil.copytree(tree, copy)
    shutil.rmtree(copy / "jobs-1")
    code, out, err = run(capsys, "describe", str(copy), "--group", "grp")
    assert code == 0
    assert out == (OFFSETS % ("GROUP", "TOPIC", "PARTITION", "START-OFFSET", "LAG")
                   + OFFSETS % ("grp", "jobs", 0, 3, 6) + OFFSETS % ("grp", "jobs", 1, 4, "-")
                   + "\n")
    assert err == f"note: jobs-1 not in {copy}: no log end offset or lag for them\n"
    # no partition of the topic left: its id stands for the name
    shutil.rmtree(copy / "jobs-0")
    with LogDir.open(tree, read_only=True) as logs:
        tid = str(logs.topic_id("jobs"))
    code, out, err = run(capsys, "describe", str(copy), "--group", "grp")
    fmt = "\n%-15s %-22s %-10s %-13s %s"
    assert out == (fmt % ("GROUP", "TOPIC", "PARTITION", "START-OFFSET", "LAG")
                   + fmt % ("grp", tid, 0, 3, "-") + fmt % ("grp", tid, 1, 4, "-") + "\n")
    assert err == f"note: {tid}-0, {tid}-1 not in {copy}: no log end offset or lag for them\n"


# -- describe: state and members ----------------------------------------------------------------

def test_describe_state(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    manager_partition = _offsets_partition(tree, "grp")
    coord = f"__consumer_offsets-{manager_partition}"
    fmt = "\n%-15s %-25s %-15s %s"
    assert run(capsys, "describe", str(tree), "--group", "grp", "--state",
               "--offsets-topic-partitions", "4") == (0, (
        fmt % ("GROUP", "COORDINATOR (ID)", "STATE", "#MEMBERS")
        + fmt % ("grp", coord, "Empty", 0) + "\n"), "\nShare group 'grp' has no active members.\n")
    verbose = "\n%-15s %-25s %-15s %-12s %-17s %s"
    code, out, _ = run(capsys, "describe", str(tree), "--group", "grp", "--state", "--verbose",
                       "--offsets-topic-partitions", "4")
    assert out == (verbose % ("GROUP", "COORDINATOR (ID)", "STATE", "GROUP-EPOCH",
                              "ASSIGNMENT-EPOCH", "#MEMBERS")
                   + verbose % ("grp", coord, "Empty", 1, "-", 0) + "\n")
    # the epochs of the group's ShareGroupMetadata / ShareGroupTargetAssignmentMetadata records
    coord = f"__consumer_offsets-{_offsets_partition(tree, 'meta-only')}"
    code, out, _ = run(capsys, "describe", str(tree), "--group", "meta-only", "--state",
                       "--verbose", "--offsets-topic-partitions", "4")
    assert out == (verbose % ("GROUP", "COORDINATOR (ID)", "STATE", "GROUP-EPOCH",
                              "ASSIGNMENT-EPOCH", "#MEMBERS")
                   + verbose % ("meta-only", coord, "Empty", 3, 2, 0) + "\n")
    code, out, _ = run(capsys, "describe", str(tree), "--group", "meta-only", "--state",
                       "--json", "--offsets-topic-partitions", "4")
    assert json.loads(out) == {"group": "meta-only", "type": "share", "coordinator": coord,
                               "offsets_partition": int(coord.rsplit("-", 1)[1]),
                               "state": "Empty", "group_epoch": 3, "assignment_epoch": 2,
                               "num_members": 0}


def _offsets_partition(tree: Path, group: str) -> int:
    with LogDir.open(tree, {"offsets.topic.num.partitions": "4"}, read_only=True) as logs:
        return GroupMetadataManager(logs).partition_for(group)


def test_describe_members(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for flags in ([], ["--verbose"]):
        assert run(capsys, "describe", str(tree), "--group", "grp", "--members", *flags) == (
            0, "", "\nShare group 'grp' has no active members.\n")
    code, out, _ = run(capsys, "describe", str(tree), "--group", "grp", "--members", "--json")
    assert json.loads(out) == {"group": "grp", "type": "share", "state": "Empty",
                               "members": []}


# -- other groups, unknown groups, trees without share groups -----------------------------------

def test_a_classic_group_is_described_as_before(tree: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    fmt = "\n%-15s %-15s %-10s %-15s %-15s %-15s %-15s %-15s %s"
    assert run(capsys, "describe", str(tree), "--group", "classic-app") == (0, (
        fmt % ("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG",
               "CONSUMER-ID", "HOST", "CLIENT-ID")
        + fmt % ("classic-app", "jobs", 0, 4, 10, 6, "c-1", "/10.0.0.1", "client-1") + "\n"),
        "")
    # --verbose still goes with --members only for it (ConsumerGroupCommand's check)
    assert run(capsys, "describe", str(tree), "--group", "classic-app", "--verbose") == (
        2, "", "kafkalog groups describe: error: Option(s) [verbose] are unavailable given "
               "other options on the command line\n")


@pytest.mark.parametrize("group", ["nope", "deleted"])
def test_unknown_or_deleted_share_group(tree: Path, capsys: pytest.CaptureFixture[str],
                                        group: str) -> None:
    # 'deleted' has state records, but its last ShareGroupMetadata record is a tombstone
    for flags in ([], ["--state"], ["--members"]):
        assert run(capsys, "describe", str(tree), "--group", group, *flags) == (
            1, "", f"Error: Consumer group '{group}' does not exist.\n")


def test_a_tree_without_share_group_state(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    s = KafkaServer(tmp_path, "127.0.0.1", 0, config=_config()).start()
    try:
        s.broker.create_topic("jobs", 1)
        s.broker.log("jobs", 0).append([Record(b"k", b"v", T0)])
        s.broker.groups.coordinator.manager.commit_offsets("app", {("jobs", 0): 1})
    finally:
        s.stop()
    assert not any(p.name.startswith("__share_group_state") for p in tmp_path.iterdir())
    assert run(capsys, "list", str(tmp_path), "--type") == (
        0, TYPE_25 % ("GROUP", "TYPE") + TYPE_25 % ("app", "Classic"), "")
    assert run(capsys, "list", str(tmp_path), "--type", "share") == (
        0, TYPE_25 % ("GROUP", "TYPE"), "")
    assert run(capsys, "describe", str(tmp_path), "--group", "grp") == (
        1, "", "Error: Consumer group 'grp' does not exist.\n")


def test_offline_load(tree: Path) -> None:
    with LogDir.open(tree, read_only=True) as logs:
        groups = offline.load(logs)
    assert sorted(groups) == [LONG, "grp", "meta-only"]
    assert [(r.topic, r.partition, r.start_offset, r.delivery_complete_count, r.lag)
            for r in groups["grp"].partitions] == [("jobs", 0, 3, 1, 6), ("jobs", 1, 4, 0, 0)]
    assert (groups["meta-only"].group_epoch, groups["meta-only"].assignment_epoch) == (3, 2)
    # the server wrote the group's ShareGroupMetadata (epoch 1: no member ever heartbeated;
    # the test acquired directly) and no target assignment
    assert (groups["grp"].group_epoch, groups["grp"].assignment_epoch) == (1, None)
    assert groups["grp"].state == "Empty"


def test_offline_doctests() -> None:
    import doctest

    assert doctest.testmod(offline).failed == 0


# -- reset-offsets (ShareGroupCommand.resetOffsets) ---------------------------------------------

RESET = "\n%-15s %-15s %-10s %s"                # printOffsetsToReset, GROUP and TOPIC at 15


def _copy(tree: Path, tmp_path: Path) -> Path:
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(tree, copy)
    return copy


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def _state(tree: Path, group: str) -> dict[tuple[str, int], tuple[int, int, int | None]]:
    """(topic, partition) -> (start offset, delivery complete count, snapshot epoch)."""
    with LogDir.open(tree, read_only=True) as logs:
        info = offline.load(logs).get(group)
    return {} if info is None else {(r.topic, r.partition): (
        r.start_offset, r.delivery_complete_count, r.snapshot_epoch) for r in info.partitions}


@pytest.mark.parametrize(("how", "expected"), [
    (["--to-earliest"], {0: 0, 1: 0}),
    (["--to-latest"], {0: 10, 1: 4}),
    (["--to-earliest", "--dry-run"], {0: 0, 1: 0}),
])
def test_reset_dry_run_changes_nothing(tree: Path, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str], how: list[str],
                                       expected: dict[int, int]) -> None:
    copy = _copy(tree, tmp_path)
    before = _files(copy)
    table = (RESET % ("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET")
             + RESET % ("grp", "jobs", 0, expected[0]) + RESET % ("grp", "jobs", 1, expected[1])
             + "\n")
    assert run(capsys, "reset-offsets", str(copy), "--group", "grp", "--all-topics",
               *how) == (0, table, "")
    assert run(capsys, "reset-offsets", str(copy), "--group", "grp", "--topic", "jobs",
               *how) == (0, table, "")
    code, out, _ = run(capsys, "reset-offsets", str(copy), "--group", "grp", "--topic",
                       "jobs:1", *how, "--json")
    assert json.loads(out) == {"group": "grp", "type": "share", "executed": False, "offsets": [
        {"topic": "jobs", "partition": 1, "new_offset": expected[1]}]}
    assert _files(copy) == before


def test_reset_execute_then_describe_and_a_restarted_server(
        tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = _copy(tree, tmp_path)
    assert _state(copy, "grp") == {("jobs", 0): (3, 1, 3), ("jobs", 1): (4, 0, 0)}
    assert run(capsys, "reset-offsets", str(copy), "--group", "grp", "--topic", "jobs:0",
               "--to-earliest", "--execute") == (
        0, RESET % ("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET") + RESET % ("grp", "jobs", 0, 0)
        + "\n", "")
    # the snapshot epoch goes up by one; the reset forgets what was in flight (no batches)
    assert _state(copy, "grp") == {("jobs", 0): (0, 0, 4), ("jobs", 1): (4, 0, 0)}
    fmt = "\n%-15s %-15s %-10s %-13s %-13s %s"
    assert run(capsys, "describe", str(copy), "--group", "grp", "--verbose") == (0, (
        fmt % ("GROUP", "TOPIC", "PARTITION", "LEADER-EPOCH", "START-OFFSET", "LAG")
        + fmt % ("grp", "jobs", 0, 0, 0, 10) + fmt % ("grp", "jobs", 1, 0, 4, 0) + "\n"), "")
    # LONG has no state for jobs-0: a new key, in Kafka's partitionFor partition
    long_fmt = "\n%-28s %-15s %-10s %s"
    assert run(capsys, "reset-offsets", str(copy), "--group", LONG, "--topic", "jobs:0",
               "--to-latest", "--execute") == (
        0, long_fmt % ("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET")
        + long_fmt % (LONG, "jobs", 0, 10) + "\n", "")
    from kafkalog.groups.share import state_topic

    with LogDir.open(copy, read_only=True) as logs:
        tid = str(logs.topic_id("jobs"))
        where = state_topic.partition_for(LONG, tid, 0, 4)
        last = list(logs.log("__share_group_state", where).records())[-1]
        assert last.key == state_topic.snapshot_record(
            LONG, tid, 0, epoch=0, leader_epoch=0, start_offset=10, batches=[])[0]
    assert _state(copy, LONG) == {("jobs", 0): (10, 0, 0), ("jobs", 1): (2, 0, 0)}

    # a server started on the tree resumes there: grp's records 0-9 are all available again
    # (0-1 had been accepted, 4 and 6-9 were in flight), and LONG starts jobs-0 at 10, not at
    # share.auto.offset.reset=earliest
    s = KafkaServer(copy, "127.0.0.1", 0, config=_config()).start()
    try:
        shares = s.broker.shares
        assert shares.share_partition("grp", "jobs", 0).start_offset == 0
        assert shares.share_partition("grp", "jobs", 1).start_offset == 4
        assert shares.share_partition(LONG, "jobs", 0).start_offset == 10
        _, acquired = shares.acquire("grp", "m", "jobs", 0, max_records=100, max_bytes=1 << 20)
        assert acquired == [(0, 9, 1)]
    finally:
        s.stop()


def test_reset_to_datetime(tree: Path, tmp_path: Path,
                           capsys: pytest.CaptureFixture[str]) -> None:
    # jobs-0 holds T0 .. T0+9 ms, jobs-1 T0 .. T0+3 ms (T0 = 2023-11-14T22:13:20Z)
    copy = _copy(tree, tmp_path)
    header = RESET % ("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET")
    assert run(capsys, "reset-offsets", str(copy), "--group", "grp", "--all-topics",
               "--to-datetime", "2023-11-14T22:13:20.002") == (
        0, header + RESET % ("grp", "jobs", 0, 2) + RESET % ("grp", "jobs", 1, 2) + "\n", "")
    # none at or after the time in jobs-1: its latest offset, with Kafka's warning
    assert run(capsys, "reset-offsets", str(copy), "--group", "grp", "--all-topics",
               "--to-datetime", "2023-11-14T23:13:20.005+01:00", "--execute") == (
        0, header + RESET % ("grp", "jobs", 0, 5) + RESET % ("grp", "jobs", 1, 4) + "\n",
        "\nWarn: Partition 1 from topic jobs is empty. Falling back to latest known offset.\n")
    assert _state(copy, "grp") == {("jobs", 0): (5, 0, 4), ("jobs", 1): (4, 0, 1)}
    # before every record: the log start offset (no clamping needed, none done)
    assert run(capsys, "reset-offsets", str(copy), "--group", "grp", "--topic", "jobs:1",
               "--to-datetime", "2020-01-01T00:00:00.000")[1] == (
        header + RESET % ("grp", "jobs", 1, 0) + "\n")


@pytest.mark.parametrize(("flags", "message"), [
    (["--to-offset", "3"], "to-offset"),
    (["--to-current"], "to-current"),
    (["--shift-by", "-1"], "shift-by"),
    (["--by-duration", "PT1H"], "by-duration"),
])
def test_reset_refuses_what_kafka_share_tool_lacks(
        tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str],
        message: str) -> None:
    copy = _copy(tree, tmp_path)
    before = _state(copy, "grp")
    assert run(capsys, "reset-offsets", str(copy), "--group", "grp", "--topic", "jobs",
               *flags, "--execute") == (
        2, "", f"kafkalog groups reset-offsets: error: {message} is not a recognized option "
               "(share group 'grp': Option [reset-offsets] takes one of these options: "
               "[to-datetime], [to-earliest], [to-latest])\n")
    assert _state(copy, "grp") == before


def test_reset_errors(tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = _copy(tree, tmp_path)
    before = _state(copy, "grp")
    failed = "Error: Executing share group command failed due to "
    assert run(capsys, "reset-offsets", str(copy), "--group", "grp", "--topic", "nope",
               "--to-earliest", "--execute") == (
        1, "", failed + "This server does not host this topic-partition.\n")
    assert run(capsys, "reset-offsets", str(copy), "--group", "grp", "--topic", "jobs:0,7",
               "--topic", "other:1", "--to-latest", "--execute") == (
        1, "", failed + 'The partitions "jobs-7,other-1" do not exist\n')
    usage = "kafkalog groups reset-offsets: error: "
    assert run(capsys, "reset-offsets", str(copy), "--group", "grp", "--topic", "jobs:0:1",
               "--to-latest") == (
        2, "", usage + "Invalid topic arg 'jobs:0:1', expected topic name and partitions\n")
    assert run(capsys, "reset-offsets", str(copy), "--group", "grp", "--topic", "jobs:0,x",
               "--to-latest") == (
        2, "", usage + "Invalid partition 'x' specified in topic arg 'jobs:0,x''\n")
    assert _state(copy, "grp") == before
    # a partition with state but not in the tree cannot be reset
    import shutil

    shutil.rmtree(copy / "jobs-1")
    assert run(capsys, "reset-offsets", str(copy), "--group", "grp", "--all-topics",
               "--to-earliest") == (1, "", failed + 'The partitions "jobs-1" do not exist\n')


def test_reset_of_other_groups_is_unchanged(tree: Path, capsys: pytest.CaptureFixture[str]
                                            ) -> None:
    # a classic group keeps kafka-consumer-groups.sh's reset (its --to-offset too), and a
    # group id whose share state outlived its deletion is no share group
    code, out, err = run(capsys, "reset-offsets", str(tree), "--group", "classic-app",
                         "--topic", "jobs:0", "--to-offset", "7", "--force")
    assert (code, err) == (0, "")
    consumer = "%-30s %-30s %-10s %-15s\n"     # ConsumerGroupCommand's
    assert out == "\n" + consumer % ("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET") + consumer % (
        "classic-app", "jobs", 0, 7)
    assert run(capsys, "reset-offsets", str(tree), "--group", "deleted", "--topic", "jobs:0",
               "--to-offset", "7")[0] == 0


def test_a_share_group_without_state(tree: Path, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    copy = _copy(tree, tmp_path)
    header = RESET % ("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET")
    # --all-topics: no state, nothing to reset (Kafka prints the header alone)
    assert run(capsys, "reset-offsets", str(copy), "--group", "meta-only", "--all-topics",
               "--to-earliest", "--execute") == (0, header + "\n", "")
    assert run(capsys, "reset-offsets", str(copy), "--group", "meta-only", "--topic", "jobs",
               "--to-latest", "--execute") == (
        0, header + RESET % ("meta-only", "jobs", 0, 10) + RESET % ("meta-only", "jobs", 1, 4)
        + "\n", "")
    assert _state(copy, "meta-only") == {("jobs", 0): (10, 0, 0), ("jobs", 1): (4, 0, 0)}


# -- delete (ShareGroupService.deleteShareGroups) -----------------------------------------------

def _last_records(tree: Path, topic: str, partition: int, n: int) -> list[tuple[bytes, Any]]:
    with LogDir.open(tree, {"offsets.topic.num.partitions": "4"}, read_only=True) as logs:
        return [(r.key, r.value) for r in list(logs.log(topic, partition).records())[-n:]]


def test_delete_then_describe_and_a_restarted_server(
        tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = _copy(tree, tmp_path)
    # LONG gets Kafka's ShareGroupMetadata / ...TargetAssignmentMetadata records too
    with LogDir.open(copy, {"offsets.topic.num.partitions": "4"}) as logs:
        GroupMetadataManager(logs).write_records(LONG, _share_records(LONG, epoch=5,
                                                                       assignment_epoch=4))
    assert run(capsys, "delete", str(copy), "--group", "grp") == (
        0, "Deletion of requested share groups ('grp') was successful.\n", "")
    assert run(capsys, "describe", str(copy), "--group", "grp") == (
        1, "", "Error: Consumer group 'grp' does not exist.\n")
    code, out, _ = run(capsys, "delete", str(copy), "--group", LONG, "--json")
    assert json.loads(out) == {"deleted": [LONG], "type": "share", "state_tombstones": 1,
                               "group_record_tombstones": 3}
    # the group's records in Kafka's order: the assignment epoch's tombstone, the state
    # partition metadata's (the server wrote it), then the group epoch's
    from kafkalog.decoders.offsets import encode_record

    assert _last_records(copy, "__consumer_offsets", _offsets_partition(copy, LONG), 3) == [
        (encode_record(12, {"groupId": LONG}, None)[0], None),
        (encode_record(15, {"groupId": LONG}, None)[0], None),
        (encode_record(11, {"groupId": LONG}, None)[0], None)]
    code, out, _ = run(capsys, "delete", str(copy), "--group", "meta-only", "--json")
    assert json.loads(out)["group_record_tombstones"] == 2
    assert run(capsys, "list", str(copy)) == (0, "classic-app\n", "")
    # deleted: no share group of that id any more (kafka-consumer-groups.sh's text)
    assert run(capsys, "delete", str(copy), "--group", "grp") == (
        1, "", "Error: Deletion of some consumer groups failed:\n* Group 'grp' could not be "
               "deleted due to: org.apache.kafka.common.errors.GroupIdNotFoundException: The "
               "group id does not exist.\n")

    s = KafkaServer(copy, "127.0.0.1", 0, config=_config()).start()
    try:
        shares = s.broker.shares
        assert shares.group_offsets("grp") == {}
        assert shares.group_offsets(LONG) == {}
        # a new share partition of the old id starts afresh (share.auto.offset.reset=earliest)
        assert shares.share_partition("grp", "jobs", 0).start_offset == 0
    finally:
        s.stop()


def test_a_locked_tree_is_refused(tree: Path, tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    copy = _copy(tree, tmp_path)
    s = KafkaServer(copy, "127.0.0.1", 0, config=_config()).start()
    try:
        for argv in (["reset-offsets", str(copy), "--group", "grp", "--all-topics",
                      "--to-earliest", "--execute"], ["delete", str(copy), "--group", "grp"]):
            code, out, err = run(capsys, *argv)
            assert (code, out) == (1, "")
            assert err.startswith(f"kafkalog groups {argv[0]}: ") and "locked" in err
        # a dry run only reads
        assert run(capsys, "reset-offsets", str(copy), "--group", "grp", "--all-topics",
                   "--to-earliest")[0] == 0
    finally:
        s.stop()
    assert _state(copy, "grp") == _state(tree, "grp")


# -- a Kafka 4.0 cluster's tree ----------------------------------------------------------------

def _to_kafka_4_0(tree: Path) -> None:
    """Rewrite ``__share_group_state`` in Kafka 4.0's value shape (uint16 snapshot epoch, no
    timestamps, no delivery complete count), as a 4.0 cluster's share coordinator wrote it."""
    from kafkalog.decoders import share_group_state

    with LogDir.open(tree) as logs:
        for topic, p in list(logs.partitions()):
            if topic != "__share_group_state":
                continue
            log = logs.log(topic, p)
            old = list(log.records())
            records = []
            for r in old:
                rec = share_group_state.decode_record_obj(r.key, r.value)
                value = rec["value"]
                if value is not None:
                    for name in ("deliveryCompleteCount", "createTimestamp", "writeTimestamp"):
                        value.pop(name, None)
                k, v = share_group_state.encode_record(rec["type"], rec["key"], value,
                                                       layout="4.0" if value else None)
                records.append(Record(k, v, r.timestamp))
            log.truncate_to(0)
            for rec in records:
                log.append([rec])


def _layouts(tree: Path) -> list[str | None]:
    from kafkalog.decoders import share_group_state

    with LogDir.open(tree, read_only=True) as logs:
        return [share_group_state.decode_record_obj(r.key, r.value)["layout"]
                for topic, p in logs.partitions() if topic == "__share_group_state"
                for r in logs.log(topic, p).records() if r.value is not None]


def test_a_kafka_4_0_tree_is_described_reset_and_served_in_4_0s_shape(
        tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = _copy(tree, tmp_path)
    assert set(_layouts(copy)) == {None}                  # kafkalog writes 4.2's shape
    _to_kafka_4_0(copy)
    assert set(_layouts(copy)) == {"4.0"}
    # the same lags: the count, absent from 4.0's records, is counted from the state batches
    expected = (OFFSETS % ("GROUP", "TOPIC", "PARTITION", "START-OFFSET", "LAG")
                + OFFSETS % ("grp", "jobs", 0, 3, 6) + OFFSETS % ("grp", "jobs", 1, 4, 0) + "\n")
    assert run(capsys, "describe", str(copy), "--group", "grp") == (0, expected, "")
    # a reset writes the key (and LONG's new key) in 4.0's shape: a 4.0 broker reads them
    assert run(capsys, "reset-offsets", str(copy), "--group", "grp", "--topic", "jobs:0",
               "--to-earliest", "--execute")[0] == 0
    assert run(capsys, "reset-offsets", str(copy), "--group", LONG, "--topic", "jobs:0",
               "--to-latest", "--execute")[0] == 0
    assert set(_layouts(copy)) == {"4.0"}
    assert _state(copy, "grp")[("jobs", 0)] == (0, 0, 4)
    assert _state(copy, LONG)[("jobs", 0)] == (10, 0, 0)
    # and so does a server started on the tree
    s = KafkaServer(copy, "127.0.0.1", 0, config=_config()).start()
    try:
        shares = s.broker.shares
        shares.acquire("grp", "m", "jobs", 0, max_records=2, max_bytes=1 << 20)
        assert shares.acknowledge("grp", "m", "jobs", 0, [(0, 1, (ACCEPT,))])[0] == 0
    finally:
        s.stop()
    layouts = _layouts(copy)
    assert set(layouts) == {"4.0"} and len(layouts) > 4
    assert _state(copy, "grp")[("jobs", 0)][:2] == (2, 0)


# -- the group records the server writes (records 11 and 15) ----------------------------------

def _group_records(tree: Path) -> dict:
    """group -> (epoch, initialized, layout) of its records 11/15 (the hash is checked by the
    membership tests)."""
    with LogDir.open(tree, read_only=True) as logs:
        return {g: tuple(s[:3]) for g, s in offline.coordinator_state(logs).items()}


def test_the_server_writes_kafkas_share_group_records(tree: Path, tmp_path: Path) -> None:
    """ShareGroupMetadata (11: the group epoch) and ShareGroupStatePartitionMetadata (15: the
    partitions with initialized state) in Kafka 4.2's shape, so that a Kafka broker taking the
    directory over does not initialize those partitions again; rewritten as they change."""
    with LogDir.open(tree, read_only=True) as logs:
        tid = str(logs.topic_id("jobs"))
    state = _group_records(tree)
    assert state["grp"] == (1, {tid: {0, 1}}, None)
    assert state[LONG] == (1, {tid: {1}}, None)
    # 'deleted': the test tombstoned its record 11 (Kafka's deleted group); 15 was the server's
    assert state["deleted"] == (None, {tid: {0}}, None)
    # the bytes are Kafka 4.2's record 15 (InitializingTopics first, empty)
    key = CODEC.encode(15, {"groupId": "grp"}, None)[0]
    with LogDir.open(tree, read_only=True) as logs:
        recs = [r for r in logs.log("__consumer_offsets",
                                    _offsets_partition(tree, "grp")).records() if r.key == key]
    rec = CODEC.decode(recs[-1].key, recs[-1].value)
    assert rec["layout"] is None and rec["value"]["initializingTopics"] == []
    assert rec["value"]["initializedTopics"] == [
        {"topicId": tid, "topicName": "jobs", "partitions": [0, 1]}]

    copy = _copy(tree, tmp_path)
    s = KafkaServer(copy, "127.0.0.1", 0, config=_config()).start()
    try:
        shares = s.broker.shares
        # a member joins: the group epoch goes up and record 11 follows it
        r = shares.heartbeat("grp", "m-1", 0, ["jobs"])
        assert r.error_code == 0
        epoch = shares.coordinator.group("grp").group_epoch
        assert epoch >= 2
        shares.heartbeat("grp", r.member_id, -1, None)           # leaves: the epoch moves on
        epoch = shares.coordinator.group("grp").group_epoch
        # DeleteShareGroupOffsets of the topic: 15 no longer lists it
        shares.delete_offsets(LONG, "jobs")
        # a new group's first state: 11 and 15 appear
        shares.share_partition("fresh", "jobs", 0)
        shares.acquire("fresh", "m", "jobs", 0, max_records=1, max_bytes=1 << 20)
        assert shares.acknowledge("fresh", "m", "jobs", 0, [(0, 0, (ACCEPT,))])[0] == 0
        assert shares.delete_group("deleted") == 0
    finally:
        s.stop()
    state = _group_records(copy)
    assert state["grp"] == (epoch, {tid: {0, 1}}, None)
    assert state[LONG] == (1, {}, None)
    assert state["fresh"] == (1, {tid: {0}}, None)
    assert "deleted" not in state                       # its live record 15: tombstoned


def test_an_offline_reset_records_the_partitions_as_initialized(tree: Path, tmp_path: Path,
                                                                  capsys) -> None:
    """``reset-offsets --execute`` leaves what Kafka's alterShareGroupOffsets leaves: the
    partitions in record 15's initialized topics (the group's epoch kept)."""
    copy = _copy(tree, tmp_path)
    with LogDir.open(copy, read_only=True) as logs:
        tid = str(logs.topic_id("jobs"))
    # 'meta-only': Kafka's records 11/12 (epoch 3) and no state yet
    assert _group_records(copy)["meta-only"] == (3, {}, None)
    assert run(capsys, "reset-offsets", str(copy), "--group", "meta-only", "--topic", "jobs",
               "--to-earliest", "--execute")[0] == 0
    assert _group_records(copy)["meta-only"] == (3, {tid: {0, 1}}, None)
    # LONG had jobs-1 only: jobs-0 joins it
    assert run(capsys, "reset-offsets", str(copy), "--group", LONG, "--topic", "jobs:0",
               "--to-latest", "--execute")[0] == 0
    assert _group_records(copy)[LONG] == (1, {tid: {0, 1}}, None)


# -- members stored in __consumer_offsets (records 10 and 14) ---------------------------------

def test_stored_members_are_described_and_guard_reset_and_delete(tree: Path, tmp_path: Path,
                                                                 capsys) -> None:
    """Members a server stored (records 10/14, as Kafka 4.x stores them) are the group's
    members offline, as a KIP-848 group's are: Stable, printMembers' table, and reset-offsets
    and delete refused as Kafka refuses them unless --force."""
    copy = _copy(tree, tmp_path)
    s = KafkaServer(copy, "127.0.0.1", 0, config=_config()).start()
    try:
        shares = s.broker.shares
        assert shares.heartbeat("grp", "member-b", 0, ["jobs"], client_id="cli-b",
                                client_host="/10.0.0.2").error_code == 0
        assert shares.heartbeat("grp", "member-a", 0, ["jobs"], client_id="cli-a",
                                client_host="/10.0.0.1").error_code == 0
        live = {m.member_id: (m.member_epoch, sorted(m.assignment["jobs"]))
                for m in shares.coordinator.group("grp").members.values()}
    finally:
        s.stop()
    g = str(copy)
    # member-b joined first and took both partitions; member-a's join split them (the simple
    # assignor), and member-b's record 14 still says what it was last given: both, at its
    # epoch (its next heartbeat would take the new target)
    assert live["member-b"] == (2, [0, 1]) and live["member-a"][0] == 3
    assert len(live["member-a"][1]) == 1

    def cell(member: str) -> tuple[int, str]:
        ps = live[member][1]
        return len(ps), "jobs:" + ",".join(map(str, ps))

    fmt = "\n%-15s %-15s %-15s %-15s %-12s %s"
    assert run(capsys, "describe", g, "--group", "grp", "--members") == (0, (
        fmt % ("GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS", "ASSIGNMENT")
        + fmt % ("grp", "member-a", "/10.0.0.1", "cli-a", *cell("member-a"))
        + fmt % ("grp", "member-b", "/10.0.0.2", "cli-b", *cell("member-b")) + "\n"), "")
    fmt = "\n%-15s %-15s %-15s %-15s %-12s %-13s %s"
    code, out, _ = run(capsys, "describe", g, "--group", "grp", "--members", "--verbose")
    assert out == (fmt % ("GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS",
                          "MEMBER-EPOCH", "ASSIGNMENT")
                   + fmt % ("grp", "member-a", "/10.0.0.1", "cli-a", cell("member-a")[0],
                            3, cell("member-a")[1])
                   + fmt % ("grp", "member-b", "/10.0.0.2", "cli-b", 2, 2, "jobs:0,1")
                   + "\n")
    code, out, _ = run(capsys, "describe", g, "--group", "grp", "--members", "--json")
    members = json.loads(out)["members"]
    assert [(m["member_id"], m["client_id"], m["subscribed_topics"]) for m in members] == [
        ("member-a", "cli-a", ["jobs"]), ("member-b", "cli-b", ["jobs"])]
    code, out, err = run(capsys, "describe", g, "--group", "grp", "--state")
    assert "Stable" in out and out.rstrip().endswith("2") and err == ""
    assert "grp" in run(capsys, "list", g, "--state", "Stable")[1]
    # Kafka's refusals: nothing written (opening the tree for writing may tidy producer
    # snapshots, as a broker's log loading does; the records stay as they were)
    def logs_of(root: Path) -> dict[str, bytes]:
        return {k: v for k, v in _files(root).items() if k.endswith(".log")}

    before = logs_of(copy)
    assert run(capsys, "reset-offsets", g, "--group", "grp", "--all-topics", "--to-earliest",
               "--execute") == (1, "", "Share group 'grp' is not empty.\n")
    code, out, err = run(capsys, "delete", g, "--group", "grp")
    assert (code, out) == (1, "") and err == (
        "Error: Deletion of some share groups failed:\n* Group 'grp' could not be deleted due "
        "to: org.apache.kafka.common.errors.GroupNotEmptyException: Share group 'grp' is not "
        "EMPTY.\n")
    assert logs_of(copy) == before
    # --force: the consumers are known to be gone
    assert run(capsys, "reset-offsets", g, "--group", "grp", "--all-topics", "--to-earliest",
               "--execute", "--force")[0] == 0
    assert run(capsys, "delete", g, "--group", "grp", "--force")[0] == 0
    with LogDir.open(copy, read_only=True) as logs:
        assert offline.share_record_keys(logs, "grp") == []     # members' records too
        assert "grp" not in offline.load(logs)
    s = KafkaServer(copy, "127.0.0.1", 0, config=_config()).start()
    try:
        assert s.broker.shares.coordinator.group("grp") is None
    finally:
        s.stop()


def test_delete_offsets_of_a_share_group(tree: Path, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """kafka-share-groups.sh --delete-offsets (ShareGroupService.deleteOffsets): the group's
    state of the topic goes (ShareSnapshot tombstones), the topic leaves its record 15; a
    server started on the tree initializes the partitions again (share.auto.offset.reset).
    """
    copy = _copy(tree, tmp_path)
    fmt = "\n%-15s %s"
    assert run(capsys, "delete-offsets", str(copy), "--group", "grp", "--topic", "jobs",
               "--topic", "nosuch") == (1, fmt % ("TOPIC", "STATUS") + fmt % (
                   "jobs", "Successful") + fmt % (
                   "nosuch", "Error: This server does not host this topic-partition.") + "\n",
                   "")
    assert _state(copy, "grp") == {}
    assert _state(copy, LONG) == {("jobs", 1): (2, 0, 0)}          # another group's stays
    with LogDir.open(copy, read_only=True) as logs:
        state = offline.coordinator_state(logs)
    assert "grp" not in state or not state["grp"][1]    # nothing initialized any more
    code, _, err = run(capsys, "delete-offsets", str(copy), "--group", "grp", "--topic",
                       "jobs:0")
    assert code == 2 and "takes topics, not partitions" in err
    s = KafkaServer(copy, "127.0.0.1", 0, config=_config()).start()
    try:
        # share.auto.offset.reset=earliest here: from 0, every record available, where the
        # deleted state started at 3 with 5 accepted
        _, acquired = s.broker.shares.acquire("grp", "m", "jobs", 0, max_records=100,
                                              max_bytes=1 << 20)
        assert acquired == [(0, 9, 1)]
        assert s.broker.shares.share_partition("grp", "jobs", 0).start_offset == 0
    finally:
        s.stop()
