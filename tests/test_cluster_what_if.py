"""What-if elections: Kafka's controller test cases, the real KRaft fixtures, hand checks.

1. KRaft controller reactions, ported from Kafka 3.9 ``metadata/src/test/java/org/apache/
   kafka/controller/ReplicationControlManagerTest.java`` (testRemoveLeaderships,
   testFenceMultipleBrokers, testElectUncleanLeaders_WithoutElr,
   testPreferredElectionDoesNotTriggerUncleanElection, testElectPreferredLeaders,
   testEligibleLeaderReplicas_BrokerFence). Kafka's test context creates a topic with every
   active replica in the ISR and the first as leader, and fences brokers in id order; so do
   the helpers here.
2. ZooKeeper-mode controller reactions, ported from Kafka 3.9 ``core/src/test/scala/unit/
   kafka/controller/PartitionStateMachineTest.scala`` and ``ReplicaStateMachineTest.scala``.
3. The real LDI-POC KRaft log (Kafka 3.7, one broker): the what-if of its broker going down,
   checked by hand and against the records Kafka's own controller wrote when that broker
   really shut down (offsets 4871-4926).
4. The CodeCrafters sample metadata log, and a synthetic three-broker cluster whose outcome is
   worked out by hand in the test, under both controllers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafkalog.cluster import replication_control as rc
from kafkalog.cluster import zk_controller as zk
from kafkalog.cluster.command import main
from kafkalog.cluster.kraft import read_log_dir, replay_metadata_dir
from kafkalog.cluster.model import (
    NO_LEADER,
    RECOVERED,
    RECOVERING,
    Broker,
    ClusterModel,
    PartitionChangeRecord,
    PartitionRegistration,
    Topic,
)
from kafkalog.cluster.what_if import apply_scenario, parse_scenario, what_if
from kafkalog.decoders import cluster_metadata as cm
from kafkalog.records.batch import iter_batches

from .conftest import shared_fixture_path

# --------------------------------------------------------------------------------------------
# helpers: Kafka's ReplicationControlTestContext in miniature
# --------------------------------------------------------------------------------------------


def _cluster(brokers: list[int], *, source: str = "kraft", level: int | None = None,
             elr: bool = False) -> ClusterModel:
    m = ClusterModel(source=source, brokers={b: Broker(b) for b in brokers})
    if level is not None:
        m.features["metadata.version"] = level
    if elr:
        m.features["eligible.leader.replicas.version"] = 1
    return m


def _create_topic(m: ClusterModel, name: str, assignments: list[list[int]]) -> None:
    """``createTestTopic``: ISR = the active replicas, leader = the first of them."""
    t = Topic(name, f"id-{name}")
    for pid, replicas in enumerate(assignments):
        isr = [r for r in replicas if m.brokers.get(r) is not None and m.brokers[r].is_active]
        t.partitions[pid] = PartitionRegistration(list(replicas), isr,
                                                  isr[0] if isr else NO_LEADER)
    m.topics[name] = t


def _fence(m: ClusterModel, brokers: set[int]) -> None:
    """``fenceBrokers``: the brokers not listed are (re)unfenced, the listed ones fenced in
    id order."""
    for b in sorted(set(m.brokers) - brokers):
        if m.brokers[b].fenced:
            rc.handle_broker_unfenced(m, b)
    for b in sorted(brokers):
        if not m.brokers[b].fenced:
            rc.handle_broker_fenced(m, b)


def _leader_and_isr(m: ClusterModel, topic: str, pid: int) -> tuple[int, list[int]]:
    p = m.topics[topic].partitions[pid]
    return p.leader, p.isr


# --------------------------------------------------------------------------------------------
# 1. ReplicationControlManagerTest (KRaft)
# --------------------------------------------------------------------------------------------


def test_remove_leaderships() -> None:
    m = _cluster([0, 1, 2, 3])
    _create_topic(m, "foo", [[0, 1, 2], [1, 2, 3], [2, 3, 0], [0, 2, 1]])
    assert {p for _, p, part in m.partitions() if part.leader == 0} == {0, 3}
    rc.handle_broker_fenced(m, 0)
    assert {p for _, p, part in m.partitions() if part.leader == 0} == set()
    assert all(0 not in part.isr for _, _, part in m.partitions())


def test_fence_multiple_brokers() -> None:
    m = _cluster([0, 1, 2, 3, 4])
    _create_topic(m, "foo", [[1, 2, 3], [2, 3, 4], [0, 2, 1]])
    _fence(m, {2, 3})
    p0, p1, p2 = (m.topics["foo"].partitions[i] for i in range(3))
    assert (p0.replicas, p0.isr, p0.leader) == ([1, 2, 3], [1], 1)
    assert (p1.replicas, p1.isr, p1.leader) == ([2, 3, 4], [4], 4)
    assert (p2.replicas, p2.isr) == ([0, 2, 1], [0, 1]) and p2.leader != 2


@pytest.mark.parametrize("elect_all", [True, False])
def test_elect_unclean_leaders_without_elr(elect_all: bool) -> None:
    m = _cluster([0, 1, 2, 3, 4], level=13)                 # MetadataVersion.IBP_3_6_IV1
    _create_topic(m, "foo", [[1, 2, 3], [2, 3, 4], [0, 2, 1]])
    _fence(m, {2, 3})
    _fence(m, {1, 2, 3})
    assert _leader_and_isr(m, "foo", 0) == (NO_LEADER, [1])
    assert _leader_and_isr(m, "foo", 1) == (4, [4])
    assert _leader_and_isr(m, "foo", 2) == (0, [0])
    targets = None if elect_all else [("foo", 0), ("foo", 1), ("foo", 2)]
    # no election yet: no replica of partition 0 is available
    changes, errors = rc.elect_leaders(m, "unclean", targets)
    assert changes == []
    assert {(e.partition, e.error) for e in errors} == {
        (0, "ELIGIBLE_LEADERS_NOT_AVAILABLE"), (1, "ELECTION_NOT_NEEDED"),
        (2, "ELECTION_NOT_NEEDED")}
    # broker 2 comes back and rejoins partition 1's ISR (an AlterPartition from leader 4)
    rc.handle_broker_unfenced(m, 2)
    p1 = m.topics["foo"].partitions[1]
    m.topics["foo"].partitions[1] = p1.merge(PartitionChangeRecord(isr=[2, 4]))
    changes, errors = rc.elect_leaders(m, "unclean", targets)
    assert len(changes) == 1
    record = changes[0].record
    assert (record.partition_id, record.leader, record.isr) == (0, 2, [2])
    assert record.leader_recovery_state == RECOVERING
    assert changes[0].unclean
    assert _leader_and_isr(m, "foo", 0) == (2, [2])
    assert _leader_and_isr(m, "foo", 1) == (4, [2, 4])      # no preferred election happened
    assert _leader_and_isr(m, "foo", 2) == (0, [0])
    assert {(e.partition, e.error) for e in errors} == {
        (1, "ELECTION_NOT_NEEDED"), (2, "ELECTION_NOT_NEEDED")}


def test_preferred_election_does_not_trigger_unclean_election() -> None:
    m = _cluster([1, 2, 3, 4])
    _create_topic(m, "foo", [[1, 2, 3]])
    _fence(m, {2, 3})
    _fence(m, {1, 2, 3})
    rc.handle_broker_unfenced(m, 2)
    assert _leader_and_isr(m, "foo", 0) == (NO_LEADER, [1])
    m.configs[("topics", "foo")] = {"unclean.leader.election.enable": "true"}
    changes, errors = rc.elect_leaders(m, "preferred", [("foo", 0)])
    assert changes == []
    assert [(e.partition, e.error) for e in errors] == [(0, "PREFERRED_LEADER_NOT_AVAILABLE")]


def test_elect_preferred_leaders() -> None:
    m = _cluster([0, 1, 2, 3, 4])
    m.brokers[0].fenced = True                              # registered, never unfenced
    m.brokers[1].in_controlled_shutdown = True
    _create_topic(m, "foo", [[1, 2, 3], [2, 3, 4], [0, 2, 1]])
    changes, errors = rc.elect_leaders(m, "preferred")
    assert changes == []
    assert {(e.partition, e.error) for e in errors} == {
        (0, "PREFERRED_LEADER_NOT_AVAILABLE"), (1, "ELECTION_NOT_NEEDED"),
        (2, "PREFERRED_LEADER_NOT_AVAILABLE")}
    # broker 1 registers again and 0 is unfenced; leader 2 expands the ISRs (AlterPartition)
    m.brokers[1] = Broker(1)
    m.brokers[0].fenced = False
    for pid, isr in ((0, [1, 2, 3]), (2, [0, 2, 1])):
        part = m.topics["foo"].partitions[pid]
        m.topics["foo"].partitions[pid] = part.merge(PartitionChangeRecord(isr=isr))
    changes, errors = rc.elect_leaders(m, "preferred")
    assert [c.record for c in changes] == [
        PartitionChangeRecord(topic_id="id-foo", partition_id=0, leader=1),
        PartitionChangeRecord(topic_id="id-foo", partition_id=2, leader=0)]
    assert [(e.partition, e.error) for e in errors] == [(1, "ELECTION_NOT_NEEDED")]


def test_eligible_leader_replicas_broker_fence() -> None:
    m = _cluster([0, 1, 2, 3], elr=True)
    _create_topic(m, "foo", [[0, 1, 2, 3]])
    m.configs[("topics", "foo")] = {"min.insync.replicas": "3"}
    _fence(m, {2, 3})
    part = m.topics["foo"].partitions[0]
    assert (part.elr, part.last_known_elr) == ([3], [])
    _fence(m, {1, 2, 3})
    part = m.topics["foo"].partitions[0]
    assert (part.elr, part.last_known_elr) == ([1, 3], [])
    for b in (0, 1, 2, 3):
        rc.handle_broker_unfenced(m, b)
    part = m.topics["foo"].partitions[0]
    assert (part.elr, part.last_known_elr) == ([1, 3], [])


def test_eligible_leader_replicas_unclean_shutdown() -> None:
    """ReplicationControlManagerTest.testEligibleLeaderReplicas_UncleanShutdown: an unclean
    shutdown takes an ELR member out of the ELR, and makes the last ISR member the last
    known leader."""
    m = _cluster([0, 1, 2, 3], elr=True)
    _create_topic(m, "foo", [[0, 1, 2, 3]])
    m.configs[("topics", "foo")] = {"min.insync.replicas": "3"}
    _fence(m, {1, 2, 3})
    part = m.topics["foo"].partitions[0]
    assert (part.elr, part.last_known_elr) == ([2, 3], [])
    rc.handle_broker_shutdown(m, 3, clean=False)
    part = m.topics["foo"].partitions[0]
    assert (part.elr, part.last_known_elr) == ([2], [])
    rc.handle_broker_shutdown(m, 0, clean=False)
    part = m.topics["foo"].partitions[0]
    assert (part.elr, part.last_known_elr) == ([2], [0])


def test_what_if_a_crashed_elr_member_that_restarts_is_not_elected() -> None:
    """``broker N up`` after ``down`` is a restart after an unclean shutdown: with ELR the
    controller first takes the broker out of the ELR (handleBrokerShutdown at its
    re-registration), so it cannot lead; after a controlled shutdown it can."""
    for stop, leader in (("broker 3 down", NO_LEADER),
                         ("controlled shutdown of broker 3", 3)):
        m = _cluster([1, 2, 3], elr=True, level=27)
        _create_topic(m, "orders", [[1, 2, 3]])
        m.configs[("topics", "orders")] = {"min.insync.replicas": "2"}
        apply_scenario(m, f"broker 1 down; broker 2 down; {stop}; broker 3 up",
                       min_insync_default=2)
        part = m.topics["orders"].partitions[0]
        assert part.leader == leader, (stop, part)


# --------------------------------------------------------------------------------------------
# 2. PartitionStateMachineTest / ReplicaStateMachineTest (ZooKeeper mode)
# --------------------------------------------------------------------------------------------

BROKER = 5
CONTROLLER_EPOCH = 7


def _zk(brokers: list[int], replicas: list[int], leader: int, isr: list[int]) -> ClusterModel:
    m = _cluster(brokers, source="zookeeper")
    m.controller_epoch = CONTROLLER_EPOCH
    m.topics["t"] = Topic("t", None, {0: PartitionRegistration(
        replicas, isr, leader, leader_epoch=0, partition_epoch=1, controller_epoch=1)})
    return m


def test_online_partition_to_online_transition_for_controlled_shutdown() -> None:
    other = BROKER + 1
    m = _zk([BROKER, other], [BROKER, other], BROKER, [BROKER, other])
    changes = zk.controlled_shutdown(m, BROKER)
    after = m.topics["t"].partitions[0]
    assert (after.leader, after.isr, after.leader_epoch) == (other, [other], 1)
    assert (after.partition_epoch, after.controller_epoch) == (2, CONTROLLER_EPOCH)
    assert len(changes) == 1


def test_offline_partition_to_online_partition_transition() -> None:
    m = _zk([BROKER], [BROKER], NO_LEADER, [BROKER])
    zk.on_broker_startup(m, BROKER)
    after = m.topics["t"].partitions[0]
    assert (after.leader, after.isr, after.leader_epoch) == (BROKER, [BROKER], 1)


@pytest.mark.parametrize("leader_recovery_supported", [True, False])
def test_offline_partition_to_unclean_online_partition_transition(
        leader_recovery_supported: bool) -> None:
    leader = BROKER + 1                 # Leader X, ISR [X], replicas [X, Y], live [Y]
    m = _zk([BROKER], [leader, BROKER], leader, [leader])
    changes, _ = zk.elect_leaders(m, "unclean",
                                  leader_recovery_supported=leader_recovery_supported)
    after = m.topics["t"].partitions[0]
    assert (after.leader, after.isr, after.leader_epoch) == (BROKER, [BROKER], 1)
    assert after.leader_recovery_state == (RECOVERING if leader_recovery_supported
                                           else RECOVERED)
    assert changes[0].unclean


def test_online_replica_to_offline_replica_transition() -> None:
    other = BROKER + 1
    m = _zk([BROKER, other], [BROKER, other], BROKER, [BROKER, other])
    zk.remove_replica_from_isr(m, BROKER, [("t", 0)])
    after = m.topics["t"].partitions[0]
    assert (after.leader, after.isr, after.leader_epoch) == (NO_LEADER, [other], 1)
    assert after.partition_epoch == 2


def test_remove_replica_from_isr_keeps_the_last_member() -> None:
    m = _zk([BROKER], [BROKER], BROKER, [BROKER])
    zk.remove_replica_from_isr(m, BROKER, [("t", 0)])
    assert _leader_and_isr(m, "t", 0) == (NO_LEADER, [BROKER])


# --------------------------------------------------------------------------------------------
# 3. The real LDI-POC metadata log (Kafka 3.7.0, KRaft, one combined broker/controller)
# --------------------------------------------------------------------------------------------

SHUTDOWN_OFFSET = 4871      # BrokerRegistrationChangeRecord inControlledShutdown=1 for broker 1


@pytest.fixture(scope="module")
def ldi() -> Path:
    return shared_fixture_path("kafka-real", "LDI-POC")


def _real_change_records(root: Path) -> list[dict]:
    """The PartitionChangeRecords Kafka's controller wrote, as ``to_dict`` shapes."""
    out = []
    path = root / "__cluster_metadata-0" / "00000000000000000000.log"
    for batch in iter_batches(path):
        if batch.is_control or batch.base_offset < SHUTDOWN_OFFSET:
            continue
        for rec in batch:
            obj = cm.decode_record_obj(rec.key, rec.value)
            if obj["name"] == "PartitionChangeRecord":
                out.append(PartitionChangeRecord.from_record(obj["data"]).to_dict())
    return out


def test_ldi_each_broker_down_at_the_end_of_the_log(ldi: Path) -> None:
    """Hand check: the log ends after broker 1 (the only broker) shut down and was fenced;
    all 54 partitions already have no leader (ISR [1], leader epoch 1). A broker going down
    changes nothing: there is no leader left to move and KRaft never empties an ISR."""
    model = read_log_dir(ldi)
    assert sorted(model.brokers) == [1] and model.live_brokers() == set()
    for broker in sorted(model.brokers):
        report = what_if(model, f"broker {broker} down")
        assert report.outcomes == []
        assert len(report.offline_before) == 54
        assert report.leader_changes == report.offline == report.under_min_isr == []


def test_ldi_broker_down_before_the_shutdown(ldi: Path) -> None:
    """Hand check, before offset 4871 (broker 1 up, leading every partition with ISR [1]):
    broker 1 down leaves all 54 partitions without a leader; each ISR keeps its last member
    [1]; leader epoch 0 -> 1 and partition epoch 0 -> 1; no leader change anywhere and nothing
    "under min ISR" (a partition without a leader is offline, not under-replicated)."""
    model = read_log_dir(ldi, at_offset=SHUTDOWN_OFFSET)
    assert model.live_brokers() == {1}
    expected = {(t, p) for t, p, _ in model.partitions()}
    assert len(expected) == 54
    for broker in sorted(model.brokers):
        report = what_if(model, f"broker {broker} down")
        assert {(o.topic, o.partition) for o in report.offline} == expected
        for o in report.outcomes:
            assert (o.before.leader, o.before.isr, o.before.leader_epoch) == (1, [1], 0)
            assert (o.after.leader, o.after.isr, o.after.leader_epoch) == (-1, [1], 1)
            assert o.after.partition_epoch == o.before.partition_epoch + 1
        assert report.leader_changes == report.under_min_isr == report.unclean == []
        assert report.live_brokers_after == []


def test_ldi_controlled_shutdown_matches_what_kafka_wrote(ldi: Path) -> None:
    """The what-if of broker 1's controlled shutdown, run on the state before it, writes the
    very PartitionChangeRecords Kafka 3.7's controller wrote (offsets 4872-4925, one per
    partition: leader -1, nothing else), none at the fence (4926), and ends in the state the
    full log replays to."""
    before = read_log_dir(ldi, at_offset=SHUTDOWN_OFFSET)
    report = what_if(before, "controlled shutdown of broker 1")
    ours = [c.record.to_dict() for s in report.steps for c in s.changes]
    real = _real_change_records(ldi)
    assert len(real) == 54
    assert sorted(ours, key=json.dumps) == sorted(real, key=json.dumps)
    assert all(r == {"partitionId": r["partitionId"], "topicId": r["topicId"], "leader": -1}
               for r in real)
    final = read_log_dir(ldi)
    after = before.copy()
    apply_scenario(after, "controlled shutdown of broker 1")
    assert [(t, p, part) for t, p, part in after.partitions()] == \
        [(t, p, part) for t, p, part in final.partitions()]
    assert (after.brokers[1].fenced, after.brokers[1].in_controlled_shutdown) == (True, True)
    assert (final.brokers[1].fenced, final.brokers[1].in_controlled_shutdown) == (True, True)


def test_ldi_broker_back_and_elections(ldi: Path) -> None:
    model = read_log_dir(ldi)
    back = what_if(model, "broker 1 up")
    assert len(back.back_online) == 54 and back.offline == []
    assert all((o.after.leader, o.after.leader_epoch) == (1, 2) for o in back.outcomes)
    # with the broker fenced nobody can lead: an unclean election finds no eligible leader
    unclean = what_if(model, "unclean leader election")
    assert unclean.outcomes == []
    assert {e.error for e in unclean.steps[0].errors} == {"ELIGIBLE_LEADERS_NOT_AVAILABLE"}
    # while it was up, every partition was led by its preferred (only) replica
    pref = what_if(read_log_dir(ldi, at_offset=SHUTDOWN_OFFSET), "preferred leader election")
    assert {e.error for e in pref.steps[0].errors} == {"ELECTION_NOT_NEEDED"}


def test_ldi_what_if_cli(ldi: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(ldi), "--at-offset", str(SHUTDOWN_OFFSET), "--what-if",
                 "broker 1 down", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["offline"]) == 54 and doc["leader_changes"] == []
    assert doc["live_brokers_before"] == [1] and doc["live_brokers_after"] == []
    assert main([str(ldi), "--what-if", "broker 1 up"]) == 0
    text = capsys.readouterr().out
    assert "leader changes (54):" in text and "TestTopicPatient-0: leader none -> 1" in text
    assert main([str(ldi), "--what-if", "broker 9 down"]) == 2
    assert "broker 9 is not registered" in capsys.readouterr().err
    assert main([str(ldi), "--what-if", "make it rain"]) == 2


def test_codecrafters_sample_log() -> None:
    """Hand check of the CodeCrafters sample (topic 'saz', partitions 0 and 1 on broker 1,
    no broker registration in the log): nothing to elect, and broker 1 cannot go down
    because it never registered (Kafka: "Can't find broker registration")."""
    root = shared_fixture_path("kafka-real", "kafka-gleam-codecrafters")
    meta = Path(root)
    model = ClusterModel()
    replay_metadata_dir(meta, model)
    assert [(t, p, part.leader, part.isr) for t, p, part in model.partitions()] == [
        ("saz", 0, 1, [1]), ("saz", 1, 1, [1])]
    pref = what_if(model, "preferred leader election")
    assert {e.error for e in pref.steps[0].errors} == {"ELECTION_NOT_NEEDED"}
    assert what_if(model, "unclean election").outcomes == []
    with pytest.raises(ValueError, match="broker 1 is not registered"):
        what_if(model, "broker 1 down")


# --------------------------------------------------------------------------------------------
# 4. A three-broker cluster, worked by hand under both controllers
# --------------------------------------------------------------------------------------------


def _three(source: str) -> ClusterModel:
    m = _cluster([1, 2, 3], source=source, level=19)        # 3.7-IV4: no epoch bump on shrink
    m.controller_epoch = 9
    m.topics["orders"] = Topic("orders", "id-orders", {
        0: PartitionRegistration([1, 2, 3], [1, 2, 3], 1, 5),
        1: PartitionRegistration([2, 3, 1], [2, 3, 1], 2, 5),
        2: PartitionRegistration([3, 1, 2], [3, 1], 3, 5),
        3: PartitionRegistration([1, 2], [1, 2], 1, 5)})
    m.topics["logs"] = Topic("logs", "id-logs", {0: PartitionRegistration([2], [2], 2, 5)})
    m.topics["audit"] = Topic("audit", "id-audit", {0: PartitionRegistration([2, 3], [2], 2, 5)})
    m.configs[("topics", "orders")] = {"min.insync.replicas": "2"}
    m.configs[("topics", "audit")] = {"unclean.leader.election.enable": "true"}
    return m


def _net(report) -> dict[str, tuple]:
    return {f"{o.topic}-{o.partition}": (o.after.leader, o.after.isr, o.after.leader_epoch)
            for o in report.outcomes}


def test_hand_checked_broker_down_kraft() -> None:
    """KRaft, broker 2 fenced:
    orders-0 keeps leader 1, ISR [1,3] (no epoch bump from 3.6); orders-1 led by 2 moves to 3
    (first target replica in the ISR), epoch 6; orders-2 does not have 2 in its ISR;
    orders-3 keeps leader 1 with ISR [1] < min.insync 2; logs-0 (only replica 2) goes offline
    with ISR [2] kept; audit-0 (ISR [2], unclean allowed) elects 3 uncleanly: ISR [3],
    RECOVERING."""
    report = what_if(_three("kraft"), "broker 2 down")
    assert _net(report) == {"orders-0": (1, [1, 3], 5), "orders-1": (3, [3, 1], 6),
                            "orders-3": (1, [1], 5), "logs-0": (-1, [2], 6),
                            "audit-0": (3, [3], 6)}
    assert [(o.topic, o.partition) for o in report.leader_changes] == [("audit", 0),
                                                                       ("orders", 1)]
    assert [(o.topic, o.partition) for o in report.offline] == [("logs", 0)]
    assert [(o.topic, o.partition) for o in report.under_min_isr] == [("orders", 3)]
    assert [(o.topic, o.partition) for o in report.unclean] == [("audit", 0)]
    assert report.outcomes[0].after.leader_recovery_state == RECOVERING
    records = {(r["topicId"], r["partitionId"]): r for r in report.to_dict()["steps"][0]["records"]}
    assert records[("id-orders", 0)] == {"topicId": "id-orders", "partitionId": 0, "isr": [1, 3]}
    assert records[("id-logs", 0)] == {"topicId": "id-logs", "partitionId": 0, "leader": -1}


def test_hand_checked_broker_down_zookeeper() -> None:
    """The ZooKeeper controller, broker 2's session expired: the same leaders, but every
    write bumps the leader epoch (orders-0 and orders-3 too), and logs-0 is taken offline by
    the replica state machine (leader -1, ISR [2] kept)."""
    report = what_if(_three("zookeeper"), "broker 2 down")
    assert _net(report) == {"orders-0": (1, [1, 3], 6), "orders-1": (3, [3, 1], 6),
                            "orders-3": (1, [1], 6), "logs-0": (-1, [2], 6),
                            "audit-0": (3, [3], 6)}
    assert all(o.after.controller_epoch == 9 for o in report.outcomes)


def test_hand_checked_controlled_shutdown_zookeeper_keeps_single_replica_until_exit() -> None:
    """ZooKeeper-mode controlled shutdown acts only on partitions with more than one replica:
    logs-0 is untouched by the shutdown step and goes offline when the broker exits."""
    m = _three("zookeeper")
    only_shutdown = zk.controlled_shutdown(m.copy(), 2)
    assert ("logs", 0) not in {(c.topic, c.partition) for c in only_shutdown}
    report = what_if(_three("zookeeper"), "controlled shutdown of broker 2")
    assert _net(report)["logs-0"] == (-1, [2], 6)
    assert _net(report)["orders-1"] == (3, [3, 1], 6)


def test_hand_checked_back_and_preferred_kraft() -> None:
    """Broker 2 down then up: logs-0 elects 2 again (its ISR is still [2]); orders-1 stays
    with 3 because 2 has not rejoined the ISR, so a preferred election cannot pick it
    (PREFERRED_LEADER_NOT_AVAILABLE)."""
    report = what_if(_three("kraft"), "broker 2 down; broker 2 up; preferred leader election")
    net = _net(report)
    assert net["logs-0"] == (2, [2], 7)
    assert net["orders-1"] == (3, [3, 1], 6)
    errors = {(e.topic, e.partition): e.error for e in report.steps[2].errors}
    assert errors[("orders", 1)] == "PREFERRED_LEADER_NOT_AVAILABLE"
    assert errors[("orders", 0)] == "ELECTION_NOT_NEEDED"


def test_scenario_parsing() -> None:
    assert [(s.action, s.brokers) for s in parse_scenario(
        "Broker 2 down; controlled shutdown of broker 3 then brokers 4 and 5 up")] == [
        ("down", (2,)), ("controlled_shutdown", (3,)), ("up", (4, 5))]
    steps = parse_scenario("unclean leader election for Orders-0, Logs")
    assert steps[0].partitions == (("Orders", 0), ("Logs", None))
    assert parse_scenario("kill broker 1")[0].action == "down"
    assert parse_scenario("preferred replica election")[0].partitions is None
    with pytest.raises(ValueError, match="not understood"):
        parse_scenario("broker two down")
    with pytest.raises(ValueError, match="unknown topic"):
        what_if(_three("kraft"), "preferred election for nope")
