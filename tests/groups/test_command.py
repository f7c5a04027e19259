"""``kafkalog groups``: text as ConsumerGroupCommand prints it, JSON, writes, exit codes."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from kafkalog import LogDir, ManualClock, Record
from kafkalog.cli import main as cli_main
from kafkalog.groups import GroupMetadataManager
from kafkalog.groups import consumer_protocol as cp
from kafkalog.groups.command import main
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


@pytest.mark.parametrize("how, expected", [
    (["--to-earliest"], {0: 0, 1: 0}),
    (["--to-latest"], {0: 10, 1: 5}),
    (["--to-offset", "7"], {0: 7, 1: 5}),          # beyond the end: the log end offset
    (["--shift-by", "-3"], {0: 1, 1: 2}),
    (["--to-datetime", "2023-11-14T22:13:25.000"], {0: 5, 1: 5}),   # T0 + 5 s
    (["--by-duration", "PT0S"], {0: 10, 1: 5}),
])
def test_reset_offsets_dry_run_then_execute(tree: Path, how: list[str], expected: dict) -> None:
    code, out, _ = run("reset-offsets", str(tree), "--group", "idle", "--topic", "orders", *how)
    assert code == 0
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
    assert code == 1 and "could not be deleted due to: NON_EMPTY_GROUP" in err
    code, _, err = run("delete", str(tree), "--group", "idle")
    assert code == 1 and "GROUP_ID_NOT_FOUND" in err
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
