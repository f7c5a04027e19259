"""``kafkalog groups`` over share groups (KIP-932): ``kafka-share-groups.sh``'s texts, offline.

The tree is written by a real server (its share service writes ``__share_group_state``; its
group coordinator ``__consumer_offsets``), then stopped; the command reads what is left.
"""

from __future__ import annotations

import json
from pathlib import Path

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
                   + verbose % ("grp", coord, "Empty", "-", "-", 0) + "\n")
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
    assert groups["grp"].group_epoch is None and groups["grp"].state == "Empty"


def test_offline_doctests() -> None:
    import doctest

    assert doctest.testmod(offline).failed == 0
