"""``kafkalog groups``: text as ConsumerGroupCommand prints it, JSON, writes, exit codes."""

from __future__ import annotations

import doctest
import io
import json
import shutil
from pathlib import Path

import pytest

from kafkalog import LogDir, ManualClock, Record
from kafkalog.cli import main as cli_main
from kafkalog.groups import GroupMetadataManager, command
from kafkalog.groups import consumer_protocol as cp
from kafkalog.groups.command import main
from kafkalog.groups.coordinator import GroupCoordinator
from kafkalog.groups.records import GroupMetadata, MemberMetadata

from ..conftest import shared_fixture_path

T0 = 1_700_000_000_000


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """orders-0/1 with 10 and 5 records; group 'idle' (Empty) with offsets 4 and 5; group
    'busy' (Stable, 2 members) with offset 7 on orders-0; 'gone' committed to a topic not here."""
    clock = ManualClock(T0)
    with LogDir.open(tmp_path, {"offsets.topic.num.partitions": "2"}, clock=clock) as logs:
        logs.create_topic("orders", 2)
        for p, n in ((0, 10), (1, 5)):
            for i in range(n):
                logs.log("orders", p).append([Record(None, b"x", T0 + i * 1000)])
        m = GroupMetadataManager(logs)
        m.commit_offsets("idle", {("orders", 0): 4, ("orders", 1): 5})
        m.store_group(GroupMetadata("idle", "consumer", 3, None, None, T0, ()))
        sub = cp.encode_subscription(cp.Subscription(["orders"]))
        m.store_group(GroupMetadata("busy", "consumer", 1, "range", "consumer-1-aaa", T0, (
            MemberMetadata("consumer-1-aaa", "consumer-1", "/10.0.0.1", 300000, 45000, sub,
                           cp.encode_assignment(cp.Assignment([("orders", 0)]))),
            MemberMetadata("consumer-2-bbb", "consumer-2", "/10.0.0.2", 300000, 45000, sub,
                           cp.encode_assignment(cp.Assignment([("orders", 1)]))))))
        m.commit_offsets("busy", {("orders", 0): 7})
        m.commit_offsets("gone", {("elsewhere", 0): 3})
    return tmp_path


def test_list(tree: Path) -> None:
    assert run("list", str(tree)) == (0, "busy\ngone\nidle\n", "")
    code, out, _ = run("list", str(tree), "--json")
    assert json.loads(out) == {"groups": ["busy", "gone", "idle"]}


def test_describe_as_kafka_prints_it(tree: Path) -> None:
    code, out, err = run("describe", str(tree), "--group", "busy")
    assert code == 0 and err == ""
    fmt = "\n%-15s %-15s %-10s %-15s %-15s %-15s %-15s %-15s %s"
    expected = (fmt % ("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG",
                       "CONSUMER-ID", "HOST", "CLIENT-ID")
                + fmt % ("busy", "orders", 0, 7, 10, 3, "consumer-1-aaa", "/10.0.0.1",
                         "consumer-1")
                + fmt % ("busy", "orders", 1, "-", 5, "-", "consumer-2-bbb", "/10.0.0.2",
                         "consumer-2") + "\n")
    assert out == expected


def test_describe_empty_group_and_missing_partitions(tree: Path) -> None:
    code, out, err = run("describe", str(tree), "--group", "gone")
    assert code == 0
    assert "gone            elsewhere       0          3               -               -" in out
    assert "Consumer group 'gone' has no active members." in err
    assert "elsewhere-0 not in" in err
    code, out, _ = run("describe", str(tree), "--group", "idle", "--json")
    doc = json.loads(out)
    assert doc["state"] == "Empty" and doc["generation"] == 3
    assert [(r["partition"], r["current_offset"], r["log_end_offset"], r["lag"])
            for r in doc["partitions"]] == [(0, 4, 10, 6), (1, 5, 5, 0)]


def test_describe_unknown_group(tree: Path) -> None:
    assert run("describe", str(tree), "--group", "nope") == (
        1, "", "Error: Consumer group 'nope' does not exist.\n")


@pytest.mark.parametrize("how, expected, empty", [
    (["--to-earliest"], {0: 0, 1: 0}, []),
    (["--to-latest"], {0: 10, 1: 5}, []),
    (["--to-offset", "7"], {0: 7, 1: 5}, []),          # beyond the end: the log end offset
    (["--shift-by", "-3"], {0: 1, 1: 2}, []),
    # T0 + 5 s: orders-1's records end at T0 + 4 s, so Kafka warns and takes its end
    (["--to-datetime", "2023-11-14T22:13:25.000"], {0: 5, 1: 5}, [1]),
    (["--by-duration", "PT0S"], {0: 10, 1: 5}, [0, 1]),
])
def test_reset_offsets_dry_run_then_execute(tree: Path, how: list[str], expected: dict,
                                            empty: list[int]) -> None:
    code, out, err = run("reset-offsets", str(tree), "--group", "idle", "--topic", "orders",
                         *how)
    assert code == 0
    # getLogTimestampOffsets' warnings (Kafka's stdout; this command's notes go to stderr)
    assert err == "".join(f"\nWarn: Partition {p} from topic orders is empty. Falling back to "
                          "latest known offset.\n" for p in empty)
    lines = out.strip("\n").split("\n")
    assert lines[0] == f"{'GROUP':<30} {'TOPIC':<30} {'PARTITION':<10} {'NEW-OFFSET':<15}"
    assert [int(x.split()[3]) for x in lines[1:]] == [expected[0], expected[1]]
    with LogDir.open(tree, read_only=True) as logs:     # a dry run writes nothing
        assert GroupMetadataManager(logs).fetch_offsets("idle") == {("orders", 0): 4,
                                                                    ("orders", 1): 5}
    code, out, _ = run("reset-offsets", str(tree), "--group", "idle", "--topic", "orders:1",
                       *how, "--execute", "--json")
    assert code == 0 and json.loads(out)["offsets"] == [
        {"topic": "orders", "partition": 1, "new_offset": expected[1]}]
    with LogDir.open(tree, read_only=True) as logs:
        assert GroupMetadataManager(logs).fetch_offsets("idle") == {("orders", 0): 4,
                                                                    ("orders", 1): expected[1]}


def test_reset_scope_and_shift_by_need_committed_offsets(tree: Path) -> None:
    """Kafka's getPartitionsToReset: --all-topics is the partitions the group committed, not
    every partition of their topics; --shift-by of a partition without a committed offset is
    prepareOffsetsToReset's usage error, and nothing is written."""
    run("reset-offsets", str(tree), "--group", "part", "--topic", "orders:0", "--to-offset",
        "3", "--execute")
    code, out, _ = run("reset-offsets", str(tree), "--group", "part", "--all-topics",
                       "--to-earliest", "--json")
    assert code == 0 and [(o["topic"], o["partition"]) for o in json.loads(out)["offsets"]] == [
        ("orders", 0)]
    code, out, err = run("reset-offsets", str(tree), "--group", "part", "--topic", "orders",
                         "--shift-by", "1", "--execute")
    assert code == 2 and out == ""
    assert ("Cannot shift offset for partition orders-1 since there is no current committed "
            "offset") in err
    with LogDir.open(tree, read_only=True) as logs:
        assert GroupMetadataManager(logs).fetch_offsets("part") == {("orders", 0): 3}


def test_reset_refused_for_a_group_with_members(tree: Path) -> None:
    code, out, err = run("reset-offsets", str(tree), "--group", "busy", "--all-topics",
                         "--to-earliest", "--execute")
    assert code == 1 and out == ""
    assert err == ("Error: Assignments can only be reset if the group 'busy' is inactive, but "
                   "the current state is Stable.\n")
    assert run("reset-offsets", str(tree), "--group", "busy", "--all-topics", "--to-earliest",
               "--execute", "--force")[0] == 0


def test_delete(tree: Path) -> None:
    assert run("delete", str(tree), "--group", "idle") == (
        0, "Deletion of requested consumer groups ('idle') was successful.\n", "")
    code, _, err = run("delete", str(tree), "--group", "busy")
    assert code == 1 and ("could not be deleted due to: org.apache.kafka.common.errors."
                          "GroupNotEmptyException: The group is not empty.") in err
    code, _, err = run("delete", str(tree), "--group", "idle")
    assert code == 1 and ("org.apache.kafka.common.errors.GroupIdNotFoundException: The group "
                          "id does not exist.") in err
    assert run("list", str(tree))[1] == "busy\ngone\n"


def test_plan() -> None:
    assert run("plan", "--strategy", "roundrobin", "--members", "c1,c2,c3",
               "--topics", "t:6") == (0, "c1 t-0,t-3\nc2 t-1,t-4\nc3 t-2,t-5\n", "")
    code, out, _ = run("plan", "--strategy", "range", "--members", "a=x+y,b=x",
                       "--topics", "x:3,y:1", "--json")
    assert json.loads(out)["assignment"] == {"a": [["x", 0], ["x", 1], ["y", 0]],
                                             "b": [["x", 2]]}
    code, out, _ = run("plan", "--strategy", "sticky", "--members", "c1,c2",
                       "--topics", "t:6", "--owned", "c1=t:0+t:1", "--owned", "c2=t:2+t:3")
    assert out == "c1 t-0,t-1,t-4\nc2 t-2,t-3,t-5\n"


def test_plan_from_a_tree(tree: Path) -> None:
    code, out, _ = run("plan", "--strategy", "uniform", "--members", "a=orders,b=orders",
                       "--log-dir", str(tree), "--json")
    assert code == 0
    got = json.loads(out)["assignment"]
    assert sorted(tp for v in got.values() for tp in v) == [["orders", 0], ["orders", 1]]
    assert [len(v) for v in got.values()] == [1, 1]


def test_usage_errors(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run()[0] == 2
    assert run("describe", str(tree))[0] == 2                      # --group missing
    assert run("reset-offsets", str(tree), "--group", "g", "--topic", "t")[0] == 2
    assert run("reset-offsets", str(tree), "--group", "idle", "--topic", "orders",
               "--by-duration", "1h")[0] == 2
    assert run("plan", "--strategy", "range", "--members", "a")[0] == 2
    code, _, err = run("plan", "--strategy", "range", "--members", "a=zz", "--topics", "t:1")
    assert code == 2 and "'zz'" in err
    assert run("list", str(tree / "missing"))[0] == 1


def test_cli_delegates(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["groups", "list", str(tree)]) == 0
    assert capsys.readouterr().out == "busy\ngone\nidle\n"


def test_real_tree(tmp_path: Path) -> None:
    src = shared_fixture_path("kafka-real", "LDI-POC")
    shutil.copytree(src, tmp_path / "t")
    code, out, err = run("describe", str(tmp_path / "t"), "--group", "DEVSmileCDR", "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["generation"] == 6 and doc["state"] == "Stable"
    assert {(r["topic"], r["current_offset"], r["log_end_offset"]) for r in doc["partitions"]
            if r["topic"] == "TestTopicPatient"} == {("TestTopicPatient", 3, 3)}


# -- describe --members / --state, list --state / --type --------------------------------------

LONG_ID = "consumer-static-1-5f0c6a4e-8a3b-4f7e-9d2a-2b1c3d4e5f60"     # 54 characters
LONG_GROUP = "payments-reconciliation-service"                          # 31 characters


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    """One ``__consumer_offsets`` partition holding
    * KIP-848 'app' (Reconciling: m1 holds orders-0..5, m2 joined and waits for m1 to revoke),
    * KIP-848 'solo' (Empty: its one member left),
    * classic 'static' (Stable, protocol cooperative-sticky: static member LONG_ID with
      events-0..11 and orders-3, dynamic member consumer-2-bbb with nothing),
    * classic 'idle' and LONG_GROUP (Empty, offsets only)."""
    clock = ManualClock(T0)
    path = tmp_path / "mixed"
    logs = LogDir.open(path, {"offsets.topic.num.partitions": "1"}, clock=clock)
    try:
        c = GroupCoordinator(GroupMetadataManager(logs), clock=clock)
        c.update_metadata({"orders": 6})
        hb = {"rebalance_timeout_ms": 30000, "subscribed_topic_names": ["orders"],
              "topic_partitions": []}
        r = c.consumer_group_heartbeat("app", "m1", 0, client_id="c1",
                                       client_host="/127.0.0.1", **hb)
        assert r.error_code == 0 and r.member_epoch == 1
        assert [ps for _, ps in r.assignment] == [[0, 1, 2, 3, 4, 5]]
        r = c.consumer_group_heartbeat("app", "m2", 0, client_id="c2",
                                       client_host="/127.0.0.2", **hb)
        assert r.error_code == 0 and r.assignment == []
        c.consumer_group_heartbeat("solo", "s1", 0, client_id="c3", client_host="/127.0.0.3",
                                   **hb)
        assert c.consumer_group_heartbeat("solo", "s1", -1).error_code == 0
        sub = cp.encode_subscription(cp.Subscription(["events", "orders"]))
        c.manager.store_group(GroupMetadata(
            "static", "consumer", 4, "cooperative-sticky", LONG_ID, T0, (
                MemberMetadata(LONG_ID, "consumer-1", "/10.0.0.1", 300000, 45000, sub,
                               cp.encode_assignment(cp.Assignment(
                                   [("events", p) for p in range(12)] + [("orders", 3)])),
                               "instance-1"),
                MemberMetadata("consumer-2-bbb", "consumer-2", "/10.0.0.2", 300000, 45000,
                               sub, cp.encode_assignment(cp.Assignment([]))))))
        c.manager.commit_offsets("idle", {("orders", 0): 1})
        c.manager.commit_offsets(LONG_GROUP, {("orders", 1): 2})
    finally:
        logs.close()
    return path


def test_the_fixture_as_the_manager_sees_it(mixed: Path) -> None:
    with LogDir.open(mixed, read_only=True) as logs:
        m = GroupMetadataManager(logs)
        assert m.list_groups() == ["app", "idle", LONG_GROUP, "solo", "static"]
        assert [m.describe_group(g).state for g in m.list_groups()] == [
            "Reconciling", "Empty", "Empty", "Empty", "Stable"]
        assert m.consumer_group("app") is not None and m.consumer_group("static") is None


# printMembers: format1 = "%-GROUPs %-CONSUMER-IDs %-HOSTs %-CLIENT-IDs %-15s ", format0 with
# GROUP-INSTANCE-ID (at least 17) after CONSUMER-ID; every width at least 15
MEMBERS_15 = "%-15s %-15s %-15s %-15s %-15s "


def test_describe_members_of_a_consumer_group(mixed: Path) -> None:
    code, out, err = run("describe", str(mixed), "--group", "app", "--members")
    assert code == 0
    assert err == "\nWarning: Consumer group 'app' is rebalancing.\n"
    assert out == ("\n" + MEMBERS_15 % ("GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID",
                                       "#PARTITIONS") + "\n"
                   + MEMBERS_15 % ("app", "m1", "/127.0.0.1", "c1", 6) + "\n"
                   + MEMBERS_15 % ("app", "m2", "/127.0.0.2", "c2", 0) + "\n")
    assert out.split("\n")[1] == ("GROUP           CONSUMER-ID     HOST            CLIENT-ID      "
                                  " #PARTITIONS     ")
    code, out, err = run("describe", str(mixed), "--group", "app", "--members", "--verbose")
    assert code == 0 and err == "\nWarning: Consumer group 'app' is rebalancing.\n"
    assert out == ("\n" + MEMBERS_15 % ("GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID",
                                       "#PARTITIONS") + "ASSIGNMENT\n"
                   + MEMBERS_15 % ("app", "m1", "/127.0.0.1", "c1", 6) + "(0,1,2,3,4,5)\n"
                   + MEMBERS_15 % ("app", "m2", "/127.0.0.2", "c2", 0) + "-\n")


def test_describe_members_verbose_of_a_classic_group_with_a_static_member(mixed: Path) -> None:
    code, out, err = run("describe", str(mixed), "--group", "static", "--members", "--verbose")
    assert code == 0 and err == ""
    fmt0 = "%-15s %-54s %-17s %-15s %-15s %-15s "
    # per topic the partitions sorted as strings, the topics' groups sorted, no topic names
    assert out == ("\n" + fmt0 % ("GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST",
                                  "CLIENT-ID", "#PARTITIONS") + "ASSIGNMENT\n"
                   + fmt0 % ("static", LONG_ID, "instance-1", "/10.0.0.1", "consumer-1", 13)
                   + "(0,1,10,11,2,3,4,5,6,7,8,9), (3)\n"
                   + fmt0 % ("static", "consumer-2-bbb", "", "/10.0.0.2", "consumer-2", 0)
                   + "-\n")
    code, out, _ = run("describe", str(mixed), "--group", "static", "--members")
    assert out.split("\n")[2] == fmt0 % ("static", LONG_ID, "instance-1", "/10.0.0.1",
                                         "consumer-1", 13)


def test_describe_members_of_an_empty_group_prints_the_header_only(mixed: Path) -> None:
    # Kafka: shouldPrintMemberState is false (no rows), the header is printed anyway
    for group in ("idle", "solo"):
        assert run("describe", str(mixed), "--group", group, "--members") == (
            0, "\n" + MEMBERS_15 % ("GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS")
            + "\n", f"\nConsumer group '{group}' has no active members.\n")


def test_describe_members_json(mixed: Path) -> None:
    code, out, err = run("describe", str(mixed), "--group", "app", "--members", "--json")
    assert code == 0 and err == ""
    assert json.loads(out) == {"group": "app", "state": "Reconciling", "members": [
        {"consumer_id": "m1", "group_instance_id": None, "host": "/127.0.0.1",
         "client_id": "c1", "num_partitions": 6},
        {"consumer_id": "m2", "group_instance_id": None, "host": "/127.0.0.2",
         "client_id": "c2", "num_partitions": 0}]}
    code, out, _ = run("describe", str(mixed), "--group", "static", "--members", "--verbose",
                       "--json")
    members = json.loads(out)["members"]
    assert members[0]["group_instance_id"] == "instance-1"
    assert members[0]["assignment"] == [["events", p] for p in range(12)] + [["orders", 3]]
    assert members[1]["assignment"] == []
    code, out, _ = run("describe", str(mixed), "--group", "app", "--members", "--verbose",
                       "--json")
    assert [m["assignment"] for m in json.loads(out)["members"]] == [
        [["orders", p] for p in range(6)], []]


# printStates: "\n%-<max(25, len(coordinator))>s %-25s %-20s %-15s %s", header then the row
STATE_25 = "\n%-25s %-25s %-20s %-15s %s"


@pytest.mark.parametrize("group, row, note", [
    ("app", ("app", "__consumer_offsets-0", "uniform", "Reconciling", 2),
     "\nWarning: Consumer group 'app' is rebalancing.\n"),
    ("static", ("static", "__consumer_offsets-0", "cooperative-sticky", "Stable", 2), ""),
    ("solo", ("solo", "__consumer_offsets-0", "uniform", "Empty", 0),
     "\nConsumer group 'solo' has no active members.\n"),
    ("idle", ("idle", "__consumer_offsets-0", "", "Empty", 0),
     "\nConsumer group 'idle' has no active members.\n"),
])
def test_describe_state(mixed: Path, group: str, row: tuple, note: str) -> None:
    assert run("describe", str(mixed), "--group", group, "--state") == (
        0, STATE_25 % ("GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS")
        + STATE_25 % row + "\n", note)


def test_describe_state_json_and_a_2_partition_tree(mixed: Path, tree: Path) -> None:
    code, out, err = run("describe", str(mixed), "--group", "app", "--state", "--json")
    assert code == 0 and err == ""
    assert json.loads(out) == {"group": "app", "coordinator": "__consumer_offsets-0",
                               "offsets_partition": 0, "assignment_strategy": "uniform",
                               "state": "Reconciling", "num_members": 2}
    # the `tree` fixture has 2 partitions: "busy" is in partition 1 (abs(hashCode) % 2)
    code, out, _ = run("describe", str(tree), "--group", "busy", "--state")
    assert out == (STATE_25 % ("GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE",
                               "#MEMBERS")
                   + STATE_25 % ("busy", "__consumer_offsets-1", "range", "Stable", 2) + "\n")


def test_describe_offsets_is_the_default(mixed: Path) -> None:
    assert run("describe", str(mixed), "--group", "app", "--offsets") == \
        run("describe", str(mixed), "--group", "app")


@pytest.mark.parametrize("flags, message", [
    (["--members", "--state"], "Option [describe] takes at most one of these options: "
                               "[members], [offsets], [state]"),
    (["--members", "--offsets"], "Option [describe] takes at most one of these options: "
                                 "[members], [offsets], [state]"),
    (["--offsets", "--state"], "Option [describe] takes at most one of these options: "
                               "[members], [offsets], [state]"),
    (["--state", "stable"], "Option [describe] does not take a value for [state]"),
    (["--verbose"], "Option(s) [verbose] are unavailable given other options on the command "
                    "line"),
    (["--offsets", "--verbose"], "Option(s) [verbose] are unavailable given other options on "
                                 "the command line"),
    (["--state", "--verbose"], "Option(s) [verbose] are unavailable given other options on "
                               "the command line"),
])
def test_describe_sub_action_usage_errors(mixed: Path, flags: list[str], message: str) -> None:
    assert run("describe", str(mixed), "--group", "app", *flags) == (
        2, "", f"kafkalog groups describe: error: {message}\n")


def test_describe_members_or_state_of_an_unknown_group(mixed: Path) -> None:
    for flag in ("--members", "--state"):
        assert run("describe", str(mixed), "--group", "nope", flag) == (
            1, "", "Error: Consumer group 'nope' does not exist.\n")


# printGroupInfo: "%-<max(15, longest id) + 10>s" then " %-20s" for TYPE and for STATE
def test_list_with_state_and_type(mixed: Path) -> None:
    both = "%-41s %-20s %-20s\n"          # LONG_GROUP: 31 + 10
    assert run("list", str(mixed), "--type", "--state") == (0, (
        both % ("GROUP", "TYPE", "STATE") + both % ("app", "Consumer", "Reconciling")
        + both % ("idle", "Classic", "Empty") + both % (LONG_GROUP, "Classic", "Empty")
        + both % ("solo", "Consumer", "Empty") + both % ("static", "Classic", "Stable")), "")
    # the order of the options does not matter: TYPE comes first
    assert run("list", str(mixed), "--state", "--type")[1] == run("list", str(mixed), "--type",
                                                                  "--state")[1]
    one = "%-41s %-20s\n"
    assert run("list", str(mixed), "--state", "EMPTY, stable") == (0, (
        one % ("GROUP", "STATE") + one % ("idle", "Empty") + one % (LONG_GROUP, "Empty")
        + one % ("solo", "Empty") + one % ("static", "Stable")), "")
    narrow = "%-25s %-20s\n"              # the longest listed id is shorter than 15: 15 + 10
    assert run("list", str(mixed), "--type", "consumer") == (0, (
        narrow % ("GROUP", "TYPE") + narrow % ("app", "Consumer")
        + narrow % ("solo", "Consumer")), "")
    narrow_both = "%-25s %-20s %-20s\n"
    assert run("list", str(mixed), "--type", "Classic", "--state", "reconciling,stable") == (
        0, narrow_both % ("GROUP", "TYPE", "STATE")
        + narrow_both % ("static", "Classic", "Stable"), "")
    assert run("list", str(mixed), "--type", "share") == (0, narrow % ("GROUP", "TYPE"), "")
    assert run("list", str(mixed), "--state", "Assigning,PreparingRebalance") == (
        0, narrow % ("GROUP", "STATE"), "")


def test_list_with_state_and_type_json(mixed: Path) -> None:
    code, out, _ = run("list", str(mixed), "--type", "--state", "empty", "--json")
    assert code == 0 and json.loads(out) == {"groups": [
        {"group": "idle", "type": "classic", "state": "Empty"},
        {"group": LONG_GROUP, "type": "classic", "state": "Empty"},
        {"group": "solo", "type": "consumer", "state": "Empty"}]}
    code, out, _ = run("list", str(mixed), "--type", "consumer", "--json")
    assert json.loads(out) == {"groups": [{"group": "app", "type": "consumer"},
                                          {"group": "solo", "type": "consumer"}]}
    assert run("list", str(mixed))[1] == "app\nidle\n" + LONG_GROUP + "\nsolo\nstatic\n"


@pytest.mark.parametrize("flags, message", [
    # Kafka's texts, with the streams groups' NotReady state and Streams type (one command
    # here for what Kafka splits between kafka-consumer-groups.sh and kafka-streams-groups.sh)
    (["--state", "stable,bogus"], "Invalid state list 'stable,bogus'. Valid states are: "
     "PreparingRebalance, CompletingRebalance, Stable, Dead, Empty, Assigning, Reconciling, "
     "NotReady"),
    (["--state", "stable,,empty"], "Invalid state list 'stable,,empty'. Valid states are: "
     "PreparingRebalance, CompletingRebalance, Stable, Dead, Empty, Assigning, Reconciling, "
     "NotReady"),
    (["--type", "Bogus"], "Invalid types list 'Bogus'. Valid types are: Consumer, "
     "Classic, Share, Streams"),
])
def test_list_usage_errors(mixed: Path, flags: list[str], message: str) -> None:
    assert run("list", str(mixed), *flags) == (2, "", f"kafkalog groups list: error: {message}\n")


def test_list_trailing_comma_is_dropped_as_java_splits(mixed: Path) -> None:
    narrow = "%-25s %-20s\n"
    assert run("list", str(mixed), "--state", "stable,")[1] == (
        narrow % ("GROUP", "STATE") + narrow % ("static", "Stable"))


def test_module_doctests() -> None:
    assert doctest.testmod(command).failed == 0


def test_delete_offsets_as_kafka_prints_it(tree: Path) -> None:
    """ConsumerGroupCommand.deleteOffsets over OffsetDelete as the coordinator answers it."""
    code, out, err = run("delete-offsets", str(tree), "--group", "idle", "--topic", "orders")
    fmt = "\n%-15s %-10s %-15s"
    assert (code, err) == (0, "")
    assert out == ("Request succeeded for deleting offsets from group idle.\n"
                   + fmt % ("TOPIC", "PARTITION", "STATUS") + fmt % ("orders", 0, "Successful")
                   + fmt % ("orders", 1, "Successful") + "\n")
    with LogDir.open(tree, read_only=True) as logs:
        assert GroupMetadataManager(logs).fetch_offsets("idle") == {}
    # a Stable consumer-protocol group subscribed to the topic: refused per partition
    code, out, err = run("delete-offsets", str(tree), "--group", "busy", "--topic", "orders:0")
    assert code == 1
    assert err == "\nError: Encountered some partition-level error, see the follow-up details.\n"
    assert out == (fmt % ("TOPIC", "PARTITION", "STATUS") + fmt % (
        "orders", 0, "Error: org.apache.kafka.common.errors.GroupSubscribedToTopicException: "
        "Deleting offsets of a topic is forbidden while the consumer group is actively "
        "subscribed to it.") + "\n")
    # a topic the tree does not hold: describeTopics' error, a row without partition
    code, out, err = run("delete-offsets", str(tree), "--group", "gone", "--topic", "nosuch",
                         "--topic", "elsewhere:0")
    assert code == 0 and out.startswith("Request succeeded for deleting offsets from group gone")
    assert fmt % ("elsewhere", 0, "Successful") in out
    assert fmt % ("nosuch", "-", "Error: org.apache.kafka.common.errors."
                  "UnknownTopicOrPartitionException: This server does not host this "
                  "topic-partition.") in out
    code, out, err = run("delete-offsets", str(tree), "--group", "nobody", "--topic", "orders")
    assert code == 1 and err == "\nError: The group id does not exist.\n"
    code, _, err = run("delete-offsets", str(tree), "--group", "idle", "--all-input-topics")
    assert code == 2 and "is not a streams group" in err


def test_reset_offsets_export_and_from_file(tree: Path, tmp_path: Path) -> None:
    """--export writes the plan as Kafka's CSV (exportOffsetsToCsv, then println);
    --from-file applies one (parseResetPlan, resetFromFile, checkOffsetsRange)."""
    code, out, _ = run("reset-offsets", str(tree), "--group", "idle", "--all-topics",
                       "--to-earliest", "--export")
    assert (code, out) == (0, "orders,0,0\norders,1,0\n\n")
    plan = tmp_path / "plan.csv"
    plan.write_text("orders,0,7\norders,1,99\n")
    code, out, _ = run("reset-offsets", str(tree), "--group", "idle", "--from-file", str(plan),
                       "--execute")
    fmt = "\n%-30s %-30s %-10s %-15s"
    assert (code, out) == (0, fmt % ("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET")
                           + fmt % ("idle", "orders", 0, 7)
                           + fmt % ("idle", "orders", 1, 5) + "\n")   # 99: the log end, 5
    with LogDir.open(tree, read_only=True) as logs:
        assert GroupMetadataManager(logs).fetch_offsets("idle") == {("orders", 0): 7,
                                                                    ("orders", 1): 5}
    # the several-groups format: this group's lines only; none for it, Kafka's error
    plan.write_text("idle,orders,0,2\nother,orders,1,1\n")
    code, out, _ = run("reset-offsets", str(tree), "--group", "idle", "--from-file", str(plan),
                       "--json")
    assert json.loads(out)["offsets"] == [{"topic": "orders", "partition": 0, "new_offset": 2}]
    code, out, err = run("reset-offsets", str(tree), "--group", "gone", "--from-file",
                         str(plan))
    assert (code, out) == (0, "\n") and "No reset plan for group gone found" in err
    plan.write_text("orders,0,1\norders,x,2\n")
    code, _, err = run("reset-offsets", str(tree), "--group", "idle", "--from-file", str(plan))
    assert code == 1 and f"{plan}:2: not a reset plan line" in err
    code, _, err = run("reset-offsets", str(tree), "--group", "idle", "--to-earliest")
    assert code == 2 and "--topic --all-topics is required" in err


def test_describe_all_groups(tree: Path) -> None:
    """--all-groups: every group's table, one after another, as --group prints each."""
    code, out, err = run("describe", str(tree), "--all-groups")
    assert code == 0
    each = [run("describe", str(tree), "--group", g) for g in ("busy", "gone", "idle")]
    assert out == "".join(o for _, o, _ in each)
    assert err == "".join(e for _, _, e in each)
    code, out, _ = run("describe", str(tree), "--all-groups", "--state", "--json")
    assert [json.loads(line)["group"] for line in out.splitlines()] == ["busy", "gone", "idle"]
    code, _, err = run("describe", str(tree), "--all-groups", "--group", "busy")
    assert code == 2 and "not allowed with argument" in err
