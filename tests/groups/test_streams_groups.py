"""KIP-1071 streams groups: replay of their ``__consumer_offsets`` records (Kafka 4.2's
``GroupMetadataManager.replay`` and ``StreamsGroup`` state rules, ``StreamsGroupTest`` ported)
and ``kafkalog groups`` over them (``kafka-streams-groups.sh``'s text, ``StreamsGroupCommandTest``
ported where it checks behaviour rather than mocks)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from kafkalog import LogDir, ManualClock, Record
from kafkalog.decoders.offsets import CODEC, decode_record
from kafkalog.groups import GroupMetadataManager
from kafkalog.groups.command import main
from kafkalog.groups.metadata_manager import OffsetsTopicMetadataError
from kafkalog.groups.streams import (
    StreamsGroup,
    StreamsGroupMember,
    StreamsReplayError,
    StreamsTopology,
    Subtopology,
    TasksTuple,
    TopicInfo,
    matches_internal_topic_format,
    replay,
)
from kafkalog.groups.streams import records as sgr

T0 = 1_700_000_000_000


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def apply(groups: dict, *records: tuple[bytes, bytes | None]) -> None:
    for key, value in records:
        replay(groups, CODEC.decode(key, value))


def member(member_id: str, epoch: int, state: str = "STABLE", **kw) -> StreamsGroupMember:
    return StreamsGroupMember(member_id, epoch, epoch - 1, state, client_id=f"{member_id}-c",
                              client_host="/127.0.0.1", process_id=f"{member_id}-process", **kw)


TOPOLOGY = StreamsTopology(1, {
    "0": Subtopology("0", ("input",), (), (TopicInfo("app-store-changelog", 0, 0),),
                     ("app-KSTREAM-REPARTITION-0000000003-repartition",), ()),
    "1": Subtopology("1", (), (), (),
                     (), (TopicInfo("app-KSTREAM-REPARTITION-0000000003-repartition", 0, 0),)),
})


# -- replay and state -----------------------------------------------------------------------------

def test_group_state_as_kafka_computes_it() -> None:
    """StreamsGroupTest.testGroupState, driven by records as a loading coordinator sees them."""
    g: dict[str, StreamsGroup] = {}
    apply(g, sgr.metadata_record("foo", 0))
    assert g["foo"].state == "Empty"
    apply(g, sgr.current_assignment_record("foo", member("member1", 1)),
          sgr.metadata_record("foo", 1))
    assert g["foo"].state == "NotReady"        # no topology
    apply(g, sgr.topology_record("foo", StreamsTopology(1, {})))
    assert g["foo"].state == "NotReady"        # a topology, not validated (4.1 records: -1)
    apply(g, sgr.metadata_record("foo", 1, validated_topology_epoch=1))
    assert g["foo"].state == "Assigning"       # group epoch 1 > target assignment epoch 0
    apply(g, sgr.current_assignment_record("foo", member("member2", 1)),
          sgr.metadata_record("foo", 2, validated_topology_epoch=1))
    assert g["foo"].state == "Assigning"
    apply(g, sgr.target_assignment_epoch_record("foo", 2))
    assert g["foo"].state == "Reconciling"
    apply(g, sgr.current_assignment_record("foo", member("member1", 2)))
    assert g["foo"].state == "Reconciling"
    apply(g, sgr.current_assignment_record("foo", member("member2", 2, "UNREVOKED_TASKS")))
    assert g["foo"].state == "Reconciling"     # member2 not stable
    apply(g, sgr.current_assignment_record("foo", member("member2", 2)))
    assert g["foo"].state == "Stable"
    apply(g, *[r for m in ("member1", "member2") for r in (
        sgr.current_assignment_tombstone("foo", m), sgr.member_tombstone("foo", m))])
    assert g["foo"].state == "Empty"


def test_records_round_trip_every_field() -> None:
    m = StreamsGroupMember(
        "m1", 5, 4, "UNRELEASED_TASKS", "inst", "rack-a", "client", "/10.0.0.1", 30000, 1,
        "proc-1", ("app.example", 8080), {"zone": "b", "az": "1"},
        TasksTuple({"0": frozenset({0, 2}), "1": frozenset({1})}, {"1": frozenset({0})},
                   {"0": frozenset({3})}, {"0": {0: 3, 2: 5}, "1": {1: 4}}),
        TasksTuple({"1": frozenset({2})}, active_epochs={"1": {2: 2}}))
    target = TasksTuple({"0": frozenset({0})}, {}, {"1": frozenset({1})})
    g: dict[str, StreamsGroup] = {}
    apply(g, sgr.metadata_record("app", 7, 123456789, 1, {"num.standby.replicas": "1"}),
          sgr.topology_record("app", TOPOLOGY), sgr.member_record("app", m),
          sgr.current_assignment_record("app", m), sgr.target_assignment_epoch_record("app", 6),
          sgr.target_assignment_record("app", "m1", target))
    got = g["app"]
    assert (got.group_epoch, got.metadata_hash, got.validated_topology_epoch,
            got.target_assignment_epoch) == (7, 123456789, 1, 6)
    assert got.last_assignment_configs == {"num.standby.replicas": "1"}
    assert got.topology == TOPOLOGY
    assert got.members["m1"] == m
    assert got.target_assignment["m1"].active == target.active
    assert got.target_assignment["m1"].warmup == target.warmup


def test_legacy_current_assignment_takes_the_member_epoch() -> None:
    """A 4.1 record has no AssignmentEpochs: every active task takes the member epoch
    (TasksTupleWithEpochs.fromCurrentAssignmentRecord)."""
    key, value = CODEC.encode(sgr.CURRENT_ASSIGNMENT, {"groupId": "g", "memberId": "m"}, {
        "memberEpoch": 9, "previousMemberEpoch": 8, "state": 1,
        "activeTasks": [{"subtopologyId": "0", "partitions": [1, 2]}],
        "standbyTasks": [], "warmupTasks": [], "activeTasksPendingRevocation": [],
        "standbyTasksPendingRevocation": [], "warmupTasksPendingRevocation": []}, 0)
    g: dict[str, StreamsGroup] = {}
    apply(g, (key, value))
    assert g["g"].members["m"].assigned_tasks.active_epochs == {"0": {1: 9, 2: 9}}
    bad = CODEC.encode(sgr.CURRENT_ASSIGNMENT, {"groupId": "g", "memberId": "m"}, {
        "memberEpoch": 9, "previousMemberEpoch": 8, "state": 1,
        "activeTasks": [{"subtopologyId": "0", "partitions": [1, 2], "assignmentEpochs": [3]}],
        "standbyTasks": [], "warmupTasks": [], "activeTasksPendingRevocation": [],
        "standbyTasksPendingRevocation": [], "warmupTasksPendingRevocation": []}, 0)
    with pytest.raises(StreamsReplayError, match="has 2 partitions but 1 epochs"):
        apply(g, bad)


@pytest.mark.parametrize("records, message", [
    # a group tombstone while a member is still there
    ([sgr.metadata_tombstone("g")], "still has 1 members"),
    # a member tombstone before its current assignment tombstone
    ([sgr.member_tombstone("g", "m")], "did not receive StreamsGroupCurrentMemberAssignment"),
    # the target assignment epoch tombstone while a member has a target
    ([sgr.target_assignment_epoch_tombstone("g")], "assignment still has 1 members"),
])
def test_out_of_order_tombstones_are_refused_as_kafka_refuses_them(records, message) -> None:
    g: dict[str, StreamsGroup] = {}
    apply(g, sgr.metadata_record("g", 1), sgr.member_record("g", member("m", 1)),
          sgr.current_assignment_record("g", member("m", 1)),
          sgr.target_assignment_record("g", "m", TasksTuple({"0": frozenset({0})})))
    with pytest.raises(StreamsReplayError, match=message):
        apply(g, *records)


def test_group_tombstones_delete_the_group_and_unknown_tombstones_are_ignored() -> None:
    g: dict[str, StreamsGroup] = {}
    group_records = [sgr.metadata_record("g", 1), sgr.topology_record("g", TOPOLOGY),
                     sgr.member_record("g", member("m", 1)),
                     sgr.current_assignment_record("g", member("m", 1)),
                     sgr.target_assignment_epoch_record("g", 1),
                     sgr.target_assignment_record("g", "m", TasksTuple())]
    apply(g, *group_records)
    apply(g, *sgr.group_tombstones(g["g"]))
    assert g == {}
    apply(g, sgr.member_tombstone("g", "m"), sgr.topology_tombstone("other"))
    assert g == {}


def test_dump_segments_decodes_what_we_write() -> None:
    """The builders' bytes read back through the DumpLogSegments offsets decoder (Kafka's
    JSON text)."""
    key, value = sgr.member_record("app", member("m", 1, user_endpoint=("h", 9)))
    k, v = decode_record(key, value)
    assert json.loads(k) == {"type": "19", "data": {"groupId": "app", "memberId": "m"}}
    assert json.loads(v)["data"]["userEndpoint"] == {"host": "h", "port": 9}


def test_internal_topics_as_kafka_infers_them() -> None:
    """StreamsGroupCommandTest.testRetrieveInternalTopics and matchesInternalTopicFormat."""
    gid = "foo-group"
    sub = Subtopology(
        "subtopology1", ("source-topic1", "source-topic2"), (),
        tuple(TopicInfo(n, 0, 0) for n in (f"{gid}-1-changelog", "some-pre-fix-changelog",
                                           f"{gid}-2-changelog")),
        ("rep-sink-topic1", "rep-sink-topic2"),
        tuple(TopicInfo(n, 0, 0) for n in (f"{gid}-1-repartition", f"{gid}-some-thing",
                                           f"{gid}-2-repartition")))
    g = StreamsGroup(gid, topology=StreamsTopology(0, {"subtopology1": sub}))
    assert set(g.internal_topics()) == {f"{gid}-1-changelog", f"{gid}-2-changelog",
                                        f"{gid}-1-repartition", f"{gid}-2-repartition"}
    assert matches_internal_topic_format("x-KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-12-topic")
    assert matches_internal_topic_format("x-KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-0-topic")
    assert not matches_internal_topic_format("x-KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-a-topic")
    assert not matches_internal_topic_format("x-changelog-2")


# -- over a log dir -------------------------------------------------------------------------------

def write_group(m: GroupMetadataManager, gid: str, members: list[StreamsGroupMember],
                epoch: int = 3, target_epoch: int | None = None) -> None:
    records = [sgr.metadata_record(gid, epoch, 42, TOPOLOGY.epoch),
               sgr.topology_record(gid, TOPOLOGY)]
    for mem in members:
        records += [sgr.member_record(gid, mem), sgr.current_assignment_record(gid, mem),
                    sgr.target_assignment_record(gid, mem.member_id, mem.assigned_tasks)]
    records.append(sgr.target_assignment_epoch_record(gid, epoch if target_epoch is None
                                                      else target_epoch))
    m.write_records(gid, records)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """input-0/1/2 with 30, 20, 10 records (input-0 starts at 10); 'app' (Stable, two members,
    offsets 12 and 15 on input-0/1 and one on its repartition topic); 'stopped' (Empty, offsets
    on input); 'plain' a classic group."""
    clock = ManualClock(T0)
    with LogDir.open(tmp_path, {"offsets.topic.num.partitions": "3"}, clock=clock) as logs:
        logs.create_topic("input", 3)
        logs.create_topic("app-store-changelog", 3)
        logs.create_topic("app-KSTREAM-REPARTITION-0000000003-repartition", 3)
        for p, n in ((0, 30), (1, 20), (2, 10)):
            for i in range(n):
                logs.log("input", p).append([Record(None, b"x", T0 + i * 1000)])
        logs.log("input", 0).delete_records_before(10)
        m = GroupMetadataManager(logs)
        a = StreamsGroupMember(
            "member-a", 3, 2, "STABLE", client_id="app-a-StreamThread-1-consumer",
            client_host="/10.0.0.1", process_id="proc-a",
            assigned_tasks=TasksTuple({"0": frozenset({0, 1}), "1": frozenset({0})},
                                      {"0": frozenset({2})}))
        b = StreamsGroupMember(
            "member-b", 3, 2, "STABLE", client_id="app-b-StreamThread-1-consumer",
            client_host="/10.0.0.2", process_id="proc-b",
            assigned_tasks=TasksTuple({"0": frozenset({2}), "1": frozenset({1, 2})}))
        write_group(m, "app", [a, b])
        m.commit_offsets("app", {("input", 0): 12, ("input", 1): 15,
                                 ("app-KSTREAM-REPARTITION-0000000003-repartition", 0): 1})
        write_group(m, "stopped", [])
        m.commit_offsets("stopped", {("input", 0): 20, ("input", 2): 4})
        m.commit_offsets("plain", {("input", 0): 1})
    return tmp_path


def test_manager_knows_the_streams_groups(tree: Path) -> None:
    with LogDir.open(tree, read_only=True) as logs:
        m = GroupMetadataManager(logs)
        assert m.list_groups() == ["app", "plain", "stopped"]
        assert [m.group_type(g) for g in m.list_groups()] == ["streams", "classic", "streams"]
        assert m.streams_group("app").state == "Stable"
        assert m.streams_group("stopped").state == "Empty"
        desc = m.describe_group("app")
        assert (desc.state, desc.protocol_type, desc.generation, len(desc.members)) == \
            ("Stable", "streams", 3, 2)


def test_list_with_type_and_state(tree: Path) -> None:
    code, out, _ = run("list", str(tree), "--type", "--state")
    fmt = "%-25s %-20s %-20s\n"
    assert code == 0 and out == (fmt % ("GROUP", "TYPE", "STATE") + fmt % ("app", "Streams",
                                 "Stable") + fmt % ("plain", "Classic", "Empty")
                                 + fmt % ("stopped", "Streams", "Empty"))
    code, out, _ = run("list", str(tree), "--type", "streams", "--json")
    assert json.loads(out) == {"groups": [{"group": "app", "type": "streams"},
                                          {"group": "stopped", "type": "streams"}]}
    code, out, _ = run("list", str(tree), "--state", "notready")
    assert code == 0 and out.splitlines()[1:] == []


def test_describe_offsets_as_kafka_prints_them(tree: Path) -> None:
    """printOffsets: the partitions of the members' active tasks (source and repartition
    source topics of each task's subtopology), in getOffsets' HashMap order; lag = log end -
    committed, or log end - log start when nothing is committed
    (testDescribeStreamsGroupsGetOffsets: start 10, end 30, committed 12 -> 18)."""
    code, out, err = run("describe", str(tree), "--group", "app")
    assert code == 0 and err == ""
    rep = "app-KSTREAM-REPARTITION-0000000003-repartition"
    fmt = f"%-15s %-{len(rep)}s %-10s %s\n"
    lines = out.splitlines(keepends=True)
    assert lines[0] == fmt % ("GROUP", "TOPIC", "PARTITION", "OFFSET-LAG")
    rows = {(line.split()[1], int(line.split()[2])): line for line in lines[1:]}
    assert rows[("input", 0)] == fmt % ("app", "input", 0, 18)
    assert rows[("input", 1)] == fmt % ("app", "input", 1, 5)
    assert rows[("input", 2)] == fmt % ("app", "input", 2, 10)        # nothing committed
    # getCommittedOffsets keeps source topics only: the repartition topic's commit (1) is not
    # the current offset, the empty partition lags by its length, 0
    assert rows[(rep, 0)] == fmt % ("app", rep, 0, 0)
    assert set(rows) == {("input", 0), ("input", 1), ("input", 2), (rep, 0), (rep, 1), (rep, 2)}
    # Kafka's HashMap order: by bucket of TopicPartition.hashCode
    from kafkalog.decoders.jvm_order import java_hash_map_order, topic_partition_hash
    assert list(rows) == java_hash_map_order(sorted(rows), lambda tp: topic_partition_hash(*tp))
    code, out, _ = run("describe", str(tree), "--group", "app", "--verbose")
    fmt = f"%-15s %-{len(rep)}s %-10s %-15s %-15s %-15s %-15s\n"
    assert out.splitlines(keepends=True)[0] == fmt % (
        "GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LEADER-EPOCH", "LOG-END-OFFSET",
        "OFFSET-LAG")
    assert fmt % ("app", "input", 0, 12, "-", 30, 18) in out
    assert fmt % ("app", "input", 2, "-", "-", 10, 10) in out


def test_describe_a_stopped_application_shows_its_committed_offsets(tree: Path) -> None:
    code, out, err = run("describe", str(tree), "--group", "stopped", "--verbose")
    assert code == 0
    assert "Streams group 'stopped' has no active members." in err
    fmt = "%-15s %-15s %-10s %-15s %-15s %-15s %-15s\n"
    assert fmt % ("stopped", "input", 0, 20, "-", 30, 10) in out
    assert fmt % ("stopped", "input", 2, 4, "-", 10, 6) in out
    code, out, _ = run("describe", str(tree), "--group", "stopped", "--json")
    doc = json.loads(out)
    assert doc["state"] == "Empty" and doc["source_topics"] == ["input"]
    # its topology's topics are named for the application id "app": not inferred as its own
    assert doc["internal_topics"] == []
    rep = "app-KSTREAM-REPARTITION-0000000003-repartition"
    assert doc["topology"] == {"epoch": 1, "subtopologies": [
        {"subtopology_id": "0", "source_topics": ["input"], "source_topic_regex": [],
         "repartition_sink_topics": [rep], "repartition_source_topics": [],
         "state_changelog_topics": [{"name": "app-store-changelog", "partitions": 0,
                                     "replication_factor": 0, "topic_configs": {}}]},
        {"subtopology_id": "1", "source_topics": [], "source_topic_regex": [],
         "repartition_sink_topics": [], "state_changelog_topics": [],
         "repartition_source_topics": [{"name": rep, "partitions": 0,
                                        "replication_factor": 0, "topic_configs": {}}]}]}


def test_describe_members_as_kafka_prints_them(tree: Path) -> None:
    code, out, err = run("describe", str(tree), "--group", "app", "--members")
    assert code == 0 and err == ""
    fmt = "%-15s %-15s %-15s %-29s %s\n"
    assert out == (
        fmt % ("GROUP", "MEMBER", "PROCESS", "CLIENT-ID", "ASSIGNMENTS")
        + fmt % ("app", "member-a", "proc-a", "app-a-StreamThread-1-consumer",
                 "ACTIVE: 0:[0,1]; 1:[0]; STANDBY: 0:[2]; ")
        + fmt % ("app", "member-b", "proc-b", "app-b-StreamThread-1-consumer",
                 "ACTIVE: 0:[2]; 1:[1,2]; "))
    code, out, _ = run("describe", str(tree), "--group", "app", "--members", "--verbose")
    fmt = "%-15s %-25s %-15s%-15s %-15s %-15s %-15s %-29s %s\n"
    assert out.splitlines(keepends=True)[:2] == [
        fmt % ("GROUP", "TARGET-ASSIGNMENT-EPOCH", "TOPOLOGY-EPOCH", "MEMBER",
               "MEMBER-PROTOCOL", "MEMBER-EPOCH", "PROCESS", "CLIENT-ID", "ASSIGNMENTS"),
        fmt % ("app", 3, 1, "member-a", "streams", 3, "proc-a",
               "app-a-StreamThread-1-consumer",
               "ACTIVE: 0:[0,1]; 1:[0]; STANDBY: 0:[2]; TARGET-ACTIVE: 0:[0,1]; 1:[0]; "
               "TARGET-STANDBY: 0:[2]; ")]
    # a group without members prints nothing (isGroupStateValid)
    assert run("describe", str(tree), "--group", "stopped", "--members")[1] == ""


def test_describe_state_as_kafka_prints_it(tree: Path) -> None:
    with LogDir.open(tree, read_only=True) as logs:
        coordinator = f"__consumer_offsets-{GroupMetadataManager(logs).partition_for('app')}"
    code, out, _ = run("describe", str(tree), "--group", "app", "--state", "--verbose")
    fmt = "%-15s %-25s %-25s %-15s %-25s %s\n"
    assert out == (fmt % ("GROUP", "COORDINATOR (ID)", "STATE", "GROUP-EPOCH",
                          "TARGET-ASSIGNMENT-EPOCH", "#MEMBERS")
                   + fmt % ("app", coordinator, "Stable", 3, 3, 2))


def test_reset_offsets_only_for_an_inactive_group(tree: Path) -> None:
    code, _, err = run("reset-offsets", str(tree), "--group", "app", "--all-input-topics",
                       "--to-earliest")
    assert code == 1
    assert ("Assignments can only be reset if the group 'app' is inactive, but the current "
            "state is Stable.") in err
    code, out, _ = run("reset-offsets", str(tree), "--group", "stopped", "--all-input-topics",
                       "--to-earliest")
    fmt = "\n%-30s %-30s %-10s %-15s"
    assert code == 0 and out == (fmt % ("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET")
                                 + fmt % ("stopped", "input", 0, 10)
                                 + fmt % ("stopped", "input", 2, 0) + "\n")
    with LogDir.open(tree, read_only=True) as logs:      # a dry run wrote nothing
        assert GroupMetadataManager(logs).fetch_offsets("stopped") == {("input", 0): 20,
                                                                       ("input", 2): 4}


def test_reset_offsets_execute_and_scope(tree: Path) -> None:
    # a partition without a committed offset is not part of the group: nothing is reset
    code, _, err = run("reset-offsets", str(tree), "--group", "stopped", "--input-topic",
                       "input:1", "--to-latest", "--execute")
    assert code == 1 and "One or more topics are not part of the group 'stopped'." in err
    code, out, _ = run("reset-offsets", str(tree), "--group", "stopped", "--input-topic",
                       "input", "--shift-by", "-3", "--execute", "--json")
    assert code == 0
    assert json.loads(out)["offsets"] == [
        {"topic": "input", "partition": 0, "new_offset": 17},
        {"topic": "input", "partition": 2, "new_offset": 1}]
    with LogDir.open(tree, read_only=True) as logs:
        m = GroupMetadataManager(logs)
        assert m.fetch_offsets("stopped") == {("input", 0): 17, ("input", 2): 1}
        assert m.streams_group("stopped").state == "Empty"     # the group itself unchanged


def test_delete_refuses_an_active_group_and_deletes_an_empty_one(tree: Path) -> None:
    code, _, err = run("delete", str(tree), "--group", "app")
    assert code == 1 and "Streams group 'app' is not EMPTY." in err
    code, out, _ = run("delete", str(tree), "--group", "stopped")
    assert code == 0
    assert out == "Deletion of requested streams groups ('stopped') was successful.\n"
    with LogDir.open(tree, read_only=True) as logs:
        m = GroupMetadataManager(logs)
        assert m.list_groups() == ["app", "plain"]
        assert m.fetch_offsets("stopped") == {}


def test_delete_with_its_internal_topics(tree: Path) -> None:
    code, out, err = run("delete", str(tree), "--group", "app", "--force",
                         "--delete-all-internal-topics")
    assert code == 0, err
    assert "Deletion of associated internal topics of the streams groups ('app') was " \
        "successful." in out
    with LogDir.open(tree, read_only=True) as logs:
        topics = {t for t, _ in logs.partitions()}
        assert topics == {"input", "__consumer_offsets"}
        assert GroupMetadataManager(logs).list_groups() == ["plain", "stopped"]
    # the option is for streams groups only
    code, _, err = run("delete", str(tree), "--group", "plain", "--delete-all-internal-topics")
    assert code == 2 and "is not a streams group" in err


def test_a_refused_tombstone_names_the_file_and_offset(tmp_path: Path) -> None:
    with LogDir.open(tmp_path, {"offsets.topic.num.partitions": "1"}) as logs:
        m = GroupMetadataManager(logs)
        m.write_records("g", [sgr.metadata_record("g", 1),
                              sgr.current_assignment_record("g", member("m", 1))])
        with pytest.raises(OffsetsTopicMetadataError) as e:
            m.write_records("g", [sgr.metadata_tombstone("g")])
    assert "still has 1 members" in str(e.value)
    assert e.value.offset == 2 and "__consumer_offsets-0" in str(e.value.path)


# -- the group coordinator (kafkalog serve) over streams groups -----------------------------------

@pytest.fixture
def coord(tree: Path):
    from kafkalog.groups.coordinator import GroupCoordinator

    logs = LogDir.open(tree, clock=ManualClock(T0))
    c = GroupCoordinator(GroupMetadataManager(logs), clock=ManualClock(T0))
    yield c
    logs.close()


def test_coordinator_lists_streams_groups_and_describes_them_as_dead(coord) -> None:
    listed = {(g.group_id, g.protocol_type, g.group_state) for g in coord.list_groups().groups}
    assert ("app", "streams", "Stable") in listed and ("stopped", "streams", "Empty") in listed
    assert {g.group_id for g in coord.list_groups(types_filter=["Streams"]).groups} == \
        {"app", "stopped"}
    assert {g.group_id for g in coord.list_groups(types_filter=["classic"]).groups} == {"plain"}
    assert {g.group_id for g in coord.list_groups(states_filter=["stable"]).groups} == {"app"}
    # DescribeGroups looks the id up as a classic group (Kafka: Dead, no error)
    assert coord.describe_groups(["app"]).groups[0].group_state == "Dead"
    assert coord.group_state("app") == "Stable"


def test_classic_join_refused_by_an_active_streams_group_and_takes_an_empty_one(coord) -> None:
    from kafkalog.groups.error_codes import ErrorCode

    protocols = [("range", b"")]
    h = coord.join_group("app", "", "consumer", protocols, session_timeout_ms=30000)
    assert dict(coord.take_responses())[h].error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    assert coord.manager.streams_group("app") is not None
    coord.join_group("stopped", "", "consumer", protocols, session_timeout_ms=30000)
    coord.take_responses()
    # maybeDeleteEmptyStreamsGroup: the streams group's records are gone, its offsets stay
    assert coord.manager.streams_group("stopped") is None
    assert coord.manager.group_type("stopped") == "classic"
    assert coord.manager.fetch_offsets("stopped") == {("input", 0): 20, ("input", 2): 4}


def test_offset_commit_rules_of_a_streams_group(coord) -> None:
    """StreamsGroup.validateOffsetCommit (StreamsGroupTest.testValidateOffsetCommit and the
    older-epoch cases)."""
    from kafkalog.groups.error_codes import ErrorCode

    def code(group: str, offsets: dict, **kw) -> set[int]:
        resp = coord.offset_commit(group, offsets, **kw)
        return {p.error_code for t in resp.topics for p in t.partitions}

    # the admin client (epoch -1): only while the group is Empty
    assert code("stopped", {("input", 1): 3}) == {ErrorCode.NONE}
    assert code("app", {("input", 1): 3}) == {ErrorCode.UNKNOWN_MEMBER_ID}
    assert code("app", {("input", 1): 3}, member_id="nobody", generation_id=3) == \
        {ErrorCode.UNKNOWN_MEMBER_ID}
    assert code("app", {("input", 0): 13}, member_id="member-a", generation_id=3,
                api_version=8) == {ErrorCode.UNSUPPORTED_VERSION}
    assert code("app", {("input", 0): 13}, member_id="member-a", generation_id=3) == \
        {ErrorCode.NONE}
    assert code("app", {("input", 0): 13}, member_id="member-a", generation_id=4) == \
        {ErrorCode.STALE_MEMBER_EPOCH}
    # an older epoch: fine for a task assigned at or before it (member-a's tasks: epoch 3)
    assert code("app", {("input", 0): 14}, member_id="member-a", generation_id=2) == \
        {ErrorCode.STALE_MEMBER_EPOCH}
    # a topic outside the topology, or a task the member does not have
    assert code("app", {("other", 0): 1}, member_id="member-a", generation_id=2) == \
        {ErrorCode.STALE_MEMBER_EPOCH}
    assert coord.manager.fetch_offsets("app")[("input", 0)] == 13
    assert coord.manager.fetch_offsets("stopped")[("input", 1)] == 3


def test_older_epoch_commit_checks_each_task_assignment_epoch(tmp_path: Path) -> None:
    from kafkalog.groups.coordinator import GroupCoordinator
    from kafkalog.groups.error_codes import ErrorCode

    with LogDir.open(tmp_path, {"offsets.topic.num.partitions": "1"}) as logs:
        m = GroupMetadataManager(logs)
        mem = StreamsGroupMember(
            "m", 5, 4, "STABLE", process_id="p",
            assigned_tasks=TasksTuple({"0": frozenset({0, 1})},
                                      active_epochs={"0": {0: 2, 1: 5}}),
            tasks_pending_revocation=TasksTuple({"0": frozenset({2})},
                                                active_epochs={"0": {2: 3}}))
        write_group(m, "g", [mem], epoch=5)
        c = GroupCoordinator(m)

        def code(tp: tuple[str, int], epoch: int, txn: bool = False) -> int:
            if txn:
                resp = c.txn_offset_commit("tx", "g", 1, 0, {tp: 1}, member_id="m",
                                           generation_id=epoch)
            else:
                resp = c.offset_commit("g", {tp: 1}, member_id="m", generation_id=epoch)
            return resp.topics[0].partitions[0].error_code

        assert code(("input", 0), 3) == ErrorCode.NONE          # assigned at 2 <= 3
        assert code(("input", 1), 3) == ErrorCode.STALE_MEMBER_EPOCH     # assigned at 5
        assert code(("input", 2), 3) == ErrorCode.NONE          # pending revocation, at 3
        assert code(("input", 3), 4) == ErrorCode.STALE_MEMBER_EPOCH     # not its task
        # TxnOffsetCommit: a stale epoch is ILLEGAL_GENERATION
        assert code(("input", 1), 3, txn=True) == ErrorCode.ILLEGAL_GENERATION
        # OffsetFetch (v9 members): the member at its epoch
        assert c.offset_fetch("g", member_id="m", member_epoch=5).error_code == ErrorCode.NONE
        assert c.offset_fetch("g", member_id="m", member_epoch=4).error_code == \
            ErrorCode.STALE_MEMBER_EPOCH
        assert c.offset_fetch("g", member_id="x", member_epoch=5).error_code == \
            ErrorCode.UNKNOWN_MEMBER_ID


def test_offset_delete_and_delete_groups(coord) -> None:
    from kafkalog.groups.error_codes import ErrorCode

    # an active group keeps the offsets of its topology's topics (isSubscribedToTopic); an
    # Empty one subscribes to nothing
    resp = coord.offset_delete("app", [("input", 0)])
    assert resp.topics[0].partitions[0].error_code == ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC
    resp = coord.offset_delete("stopped", [("input", 0)])
    assert resp.error_code == ErrorCode.NONE and ("input", 0) not in \
        coord.manager.fetch_offsets("stopped")
    results = {r.group_id: r.error_code for r in coord.delete_groups(["app", "stopped"]).results}
    assert results == {"app": ErrorCode.NON_EMPTY_GROUP, "stopped": ErrorCode.NONE}
    assert coord.manager.streams_group("stopped") is None


def test_consumer_group_heartbeat_does_not_take_a_streams_group_id(coord) -> None:
    from kafkalog.groups.error_codes import ErrorCode

    resp = coord.consumer_group_heartbeat("stopped", "member-x", 0,
                                          subscribed_topic_names=["input"], topic_partitions=[],
                                          rebalance_timeout_ms=30000)
    assert resp.error_code == ErrorCode.GROUP_ID_NOT_FOUND
    assert resp.error_message == "Group stopped is not a consumer group."


def test_offset_expiry_of_streams_and_consumer_groups(tmp_path: Path) -> None:
    """cleanupGroupMetadata over modern groups: retention counts from the commit time in any
    state; an active streams group keeps its source topics' offsets, a KIP-848 group its
    subscribed topics'; an Empty group whose offsets all expired is deleted with its own
    records' tombstones (StreamsGroup/ConsumerGroup.createGroupTombstoneRecords)."""
    from kafkalog.groups.modern import records as cgr
    from kafkalog.groups.modern.consumer_group import ConsumerGroupMember

    clock = ManualClock(T0)
    conf = {"offsets.topic.num.partitions": "1", "offsets.retention.minutes": "10"}
    with LogDir.open(tmp_path, conf, clock=clock) as logs:
        m = GroupMetadataManager(logs)
        write_group(m, "active", [member("m", 3, assigned_tasks=TasksTuple(
            {"0": frozenset({0})}))])
        write_group(m, "idle", [])
        m.write_records("kip848", [
            cgr.group_epoch_record("kip848", 1), cgr.member_subscription_record(
                "kip848", ConsumerGroupMember("c", subscribed_topic_names=("orders",)))])
        for g in ("active", "idle", "kip848"):
            m.commit_offsets(g, {("input", 0): 1, ("orders", 0): 2})
        clock.advance(9 * 60_000)
        assert m.expire_offsets() == []
        clock.advance(2 * 60_000)
        expired = m.expire_offsets()
        assert sorted(expired) == [("active", "orders", 0), ("idle", "input", 0),
                                   ("idle", "orders", 0), ("kip848", "input", 0)]
        assert m.fetch_offsets("active") == {("input", 0): 1}
        assert m.fetch_offsets("kip848") == {("orders", 0): 2}
        assert m.streams_group("idle") is None and m.streams_group("active") is not None
        assert m.list_groups() == ["active", "kip848"]
    with LogDir.open(tmp_path, read_only=True) as logs:      # as a reloading broker sees it
        assert GroupMetadataManager(logs).list_groups() == ["active", "kip848"]


def test_delete_offsets_of_a_streams_group(tree: Path) -> None:
    """kafka-streams-groups.sh --delete-offsets: an active group's source and repartition
    source topics are refused (isSubscribedToTopic), an Empty group's deleted."""
    code, out, err = run("delete-offsets", str(tree), "--group", "app", "--all-input-topics")
    assert code == 1 and "partition-level error" in err
    assert "GroupSubscribedToTopicException" in out and "input" in out
    code, out, _ = run("delete-offsets", str(tree), "--group", "app", "--input-topic",
                       "app-KSTREAM-REPARTITION-0000000003-repartition:0")
    assert code == 1 and "GroupSubscribedToTopicException" in out
    code, out, err = run("delete-offsets", str(tree), "--group", "stopped",
                         "--all-input-topics", "--json")
    assert code == 0, err
    assert json.loads(out) == {"group": "stopped", "error": None, "partitions": [
        {"topic": "input", "partition": 0, "error": None},
        {"topic": "input", "partition": 2, "error": None}]}
    with LogDir.open(tree, read_only=True) as logs:
        m = GroupMetadataManager(logs)
        assert m.fetch_offsets("stopped") == {}
        assert m.streams_group("stopped") is not None     # the group stays


def test_verify_reports_a_partition_the_coordinator_would_not_load(tmp_path: Path) -> None:
    """kafkalog verify's group_replay: Kafka's load of the partition fails at the refused
    tombstone (its groups stay unavailable); a sound partition gets no such finding."""
    from kafkalog.tools.verify import verify_paths

    with LogDir.open(tmp_path, {"offsets.topic.num.partitions": "2"}) as logs:
        m = GroupMetadataManager(logs)
        for g in ("g", "h"):
            write_group(m, g, [member("m", 1)])
        bad = m.partition_for("g")
        with pytest.raises(OffsetsTopicMetadataError):    # appended, then refused on replay
            m.write_records("g", [sgr.metadata_tombstone("g")])
    report = verify_paths([str(tmp_path)])
    found = [f for f in report.findings if f.check == "group_replay"]
    assert len(found) == 1 and found[0].severity == "error"
    assert f"__consumer_offsets-{bad}" in found[0].file
    assert "still has 1 members" in found[0].message
    assert found[0].offset == 6     # after the group's six records


def test_reset_offsets_of_a_streams_group_from_an_exported_plan(tree: Path,
                                                                 tmp_path: Path) -> None:
    code, out, _ = run("reset-offsets", str(tree), "--group", "stopped", "--all-input-topics",
                       "--to-latest", "--export")
    assert (code, out) == (0, "input,0,30\ninput,2,10\n\n")
    plan = tmp_path / "plan.csv"
    plan.write_text(out.replace("input,0,30", "input,0,25").strip() + "\n")
    code, _, err = run("reset-offsets", str(tree), "--group", "stopped", "--from-file",
                       str(plan), "--execute")
    assert code == 0, err
    with LogDir.open(tree, read_only=True) as logs:
        assert GroupMetadataManager(logs).fetch_offsets("stopped") == {("input", 0): 25,
                                                                       ("input", 2): 10}


def test_key_bytes_agree_with_another_implementation() -> None:
    """Key bytes a Rust broker's tests pin against Kafka's schemas (i16 apiKey, non-flexible
    i16-length strings): b"\\x00\\x11\\x00\\x02g1" and b"\\x00\\x13\\x00\\x02g1\\x00\\x02m1"."""
    assert sgr.metadata_tombstone("g1") == (b"\x00\x11\x00\x02g1", None)
    assert sgr.member_tombstone("g1", "m1") == (b"\x00\x13\x00\x02g1\x00\x02m1", None)


def test_as_described_group() -> None:
    """StreamsGroupTest.testAsDescribedGroup (the plain topology: epoch 1, no subtopologies)."""
    from kafkalog.groups.streams.describe import described_group

    g: dict[str, StreamsGroup] = {}
    apply(g, sgr.metadata_record("group-id-1", 1, validated_topology_epoch=1),
          sgr.topology_record("group-id-1", StreamsTopology(1, {})),
          sgr.target_assignment_epoch_record("group-id-1", 1))
    for n in (1, 2):
        m = StreamsGroupMember(f"member{n}", 1, 0, "STABLE", f"instance{n}", f"rack{n}",
                               f"client{n}", f"host{n}", 1000, 1, f"process{n}",
                               (f"host{n}", 9092), {f"tag{n}": f"value{n}"})
        apply(g, sgr.member_record("group-id-1", m), sgr.current_assignment_record("group-id-1",
                                                                                  m))
    no_tasks = {"active_tasks": [], "standby_tasks": [], "warmup_tasks": []}
    assert described_group(g["group-id-1"]) == {
        "error_code": 0, "error_message": None, "group_id": "group-id-1",
        "group_state": "Stable", "group_epoch": 1, "assignment_epoch": 1,
        "topology": {"epoch": 1, "subtopologies": []},
        "members": [{
            "member_id": f"member{n}", "member_epoch": 1, "instance_id": f"instance{n}",
            "rack_id": f"rack{n}", "client_id": f"client{n}", "client_host": f"host{n}",
            "topology_epoch": 1, "process_id": f"process{n}",
            "user_endpoint": {"host": f"host{n}", "port": 9092},
            "client_tags": [{"key": f"tag{n}", "value": f"value{n}"}],
            "task_offsets": [], "task_end_offsets": [], "assignment": no_tasks,
            "target_assignment": no_tasks, "is_classic": False} for n in (1, 2)],
        "authorized_operations": -(1 << 31)}


def test_reset_offsets_deleting_internal_topics(tree: Path) -> None:
    """--delete-all-internal-topics / --delete-internal-topic with reset-offsets: only with
    --execute (StreamsGroupCommandOptions.checkDeleteInternalTopicsArgs); a named topic must be
    one of the group's internal topics, checked before anything is written."""
    base = ["reset-offsets", str(tree), "--group", "app", "--force", "--all-input-topics",
            "--to-earliest"]
    code, _, err = run(*base, "--delete-all-internal-topics")
    assert code == 2 and "Option [delete-all-internal-topics] takes [execute] when " \
        "[reset-offsets] is used." in err
    code, _, err = run(*base, "--delete-internal-topic", "input", "--execute")
    assert code == 1 and "input is not an internal topic of streams group 'app'" in err
    with LogDir.open(tree, read_only=True) as logs:
        assert GroupMetadataManager(logs).fetch_offsets("app")[("input", 0)] == 12
    code, _, err = run(*base, "--delete-internal-topic", "app-store-changelog", "--execute")
    assert code == 0, err
    with LogDir.open(tree, read_only=True) as logs:
        assert {t for t, _ in logs.partitions()} == {
            "input", "__consumer_offsets", "app-KSTREAM-REPARTITION-0000000003-repartition"}
        assert GroupMetadataManager(logs).fetch_offsets("app")[("input", 0)] == 10
