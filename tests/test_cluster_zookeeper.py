"""A real ZooKeeper: znodes written as ZooKeeper-mode Kafka brokers write them, read back.

A session fixture starts a standalone ZooKeeper server (Debian's ``zookeeper`` package, see
tests/zookeeper_server.py) on 127.0.0.1. Each test writes, with kazoo and under its own chroot,
the JSON Kafka writes (``ZkData.scala``; the documented znodes among them; broker and
controller registrations as ephemeral nodes of their own sessions) and reads it back through
kafkalog: ``read_cluster``, ``kafkalog cluster-state --zookeeper`` and ``kafkalog verify
--zookeeper``. Read-side cases of Kafka 3.9 ``KafkaZkClientTest`` are ported (consumer
offsets, topic assignments, partition states, controller epoch, cluster id, reassignments,
preferred replica election, chroot).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafkalog.checkpoint import (
    LeaderEpochCheckpointFile,
    PartitionMetadataFile,
    Uuid,
)
from kafkalog.cli import main as cli_main
from kafkalog.cluster import command
from kafkalog.cluster.what_if import what_if
from kafkalog.cluster.znodes import ZnodeFormat, render
from kafkalog.cluster.zookeeper import ZooKeeperError, read_cluster
from kafkalog.log import Log
from kafkalog.records.record import Record

from .zookeeper_server import ZooKeeperServer, find_zookeeper

kazoo_client = pytest.importorskip("kazoo.client", reason="kazoo (pip install kazoo) reads "
                                   "ZooKeeper; it is in the dev extra")


@pytest.fixture(scope="session")
def zookeeper(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ZooKeeperServer]:
    install, why = find_zookeeper()
    if install is None:
        pytest.skip(why)
    server = ZooKeeperServer(install, tmp_path_factory.mktemp("zookeeper"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


class Cluster:
    """Writes znodes under a chroot; ephemeral registrations get their own sessions."""

    def __init__(self, server: ZooKeeperServer) -> None:
        self.chroot = f"/kafka-{uuid.uuid4().hex[:8]}"
        self.connect = server.connect + self.chroot
        self.admin = kazoo_client.KazooClient(hosts=server.connect)
        self.admin.start(timeout=15)
        self.admin.ensure_path(self.chroot)
        self.sessions: dict[str, object] = {}
        self.written: dict[str, str | None] = {}

    def session(self, name: str):  # noqa: ANN201 - a KazooClient
        if name not in self.sessions:
            c = kazoo_client.KazooClient(hosts=self.connect)
            c.start(timeout=15)
            self.sessions[name] = c
        return self.sessions[name]

    def put(self, path: str, data: str | None, *, ephemeral_of: str | None = None) -> None:
        client = self.session(ephemeral_of) if ephemeral_of else self.session("controller")
        value = b"" if data is None else data.encode()
        client.create(path, value, ephemeral=ephemeral_of is not None, makepath=True)
        self.written[path] = data

    def set(self, path: str, data: str) -> None:
        self.session("controller").set(path, data.encode())
        self.written[path] = data

    def close(self, name: str) -> None:
        c = self.sessions.pop(name)
        c.stop()
        c.close()

    def shutdown(self) -> None:
        for name in list(self.sessions):
            self.close(name)
        self.admin.delete(self.chroot, recursive=True)
        self.admin.stop()
        self.admin.close()


@pytest.fixture
def cluster(zookeeper: ZooKeeperServer) -> Iterator[Cluster]:
    c = Cluster(zookeeper)
    try:
        yield c
    finally:
        c.shutdown()


EVENTS_ID = "B3_HiNPgSQ6oxG9ZZ6ED5A"
BROKER_V5 = ('{"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT",'
             '"SSL":"SSL"},"endpoints":["PLAINTEXT://h%d:9092","SSL://h%d:9093"],"jmx_port":-1,'
             '"port":9092,"host":"h%d","version":5,"timestamp":"170000000000%d"}')
BROKER_V4 = ('{"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"endpoints":'
             '["PLAINTEXT://h%d:9092"],"rack":"r%d","jmx_port":9999,"host":"h%d",'
             '"timestamp":"170000000000%d","port":9092,"version":4}')


def write_cluster(c: Cluster) -> None:
    """A three-broker ZooKeeper-mode cluster as its brokers and controller left it."""
    c.put("/cluster/id", '{"version":"1","id":"7ZmHbVxLTBKtrsI3mQqJeQ"}')
    c.put("/controller_epoch", "7")
    c.put("/controller", '{"version":1,"brokerid":3,"timestamp":"1403061802981"}',
          ephemeral_of="broker-3")
    for b in (1, 2):
        c.put(f"/brokers/ids/{b}", BROKER_V5 % (b, b, b, b), ephemeral_of=f"broker-{b}")
    c.put("/brokers/ids/3", BROKER_V4 % (3, 3, 3, 3), ephemeral_of="broker-3")
    # the documented shapes: a v1 topic znode and its partition state
    c.put("/brokers/topics/orders", '{"version":1,"partitions":{"0":[1,2],"1":[2,1],"2":[1,2]}}')
    c.put("/brokers/topics/orders/partitions/0/state",
          '{"controller_epoch":7,"leader":1,"version":1,"leader_epoch":0,"isr":[1]}')
    c.put("/brokers/topics/orders/partitions/1/state",
          '{"controller_epoch":7,"leader":2,"version":1,"leader_epoch":3,"isr":[2,1]}')
    c.put("/brokers/topics/orders/partitions/2/state",
          '{"controller_epoch":6,"leader":1,"version":1,"leader_epoch":2,"isr":[2]}')
    # the ISR of orders-2 grew back: the controller rewrote the state (ZooKeeper version 1)
    c.set("/brokers/topics/orders/partitions/2/state",
          '{"controller_epoch":7,"leader":1,"version":1,"leader_epoch":2,"isr":[1,2]}')
    # a v3 topic with a reassignment in flight (target [3, 1]: 3 joins, 2 leaves)
    c.put("/brokers/topics/events", '{"removing_replicas":{"0":[2]},"partitions":{"0":[3,1,2]},'
          f'"topic_id":"{EVENTS_ID}","adding_replicas":{{"0":[3]}},"version":3}}')
    c.put("/brokers/topics/events/partitions/0/state",
          '{"controller_epoch":7,"leader":1,"version":1,"leader_epoch":5,"isr":[1,2],'
          '"leader_recovery_state":1}')
    c.put("/admin/reassign_partitions",
          '{"version":1,"partitions":[{"topic":"events","partition":0,"replicas":[3,1]}]}')
    c.put("/brokers/topics/metrics", '{"version":2,"partitions":{"0":[2,3]},'
          '"adding_replicas":{},"removing_replicas":{}}')
    c.put("/brokers/topics/metrics/partitions/0/state",
          '{"controller_epoch":7,"leader":2,"version":1,"leader_epoch":0,"isr":[2,3]}')
    # a topic being deleted
    c.put("/brokers/topics/gone", '{"version":1,"partitions":{"0":[1]}}')
    c.put("/brokers/topics/gone/partitions/0/state",
          '{"controller_epoch":7,"leader":1,"version":1,"leader_epoch":0,"isr":[1]}')
    c.put("/admin/delete_topics/gone", None)
    c.put("/config/topics/orders", '{"version":1,"config":{"min.insync.replicas":"2"}}')
    c.put("/config/brokers/<default>",
          '{"version":1,"config":{"unclean.leader.election.enable":"false"}}')
    c.put("/config/changes/config_change_0000000000", '{"version":2,"entity_path":"topics/orders"}')
    c.put("/feature", '{"version":2,"status":1,"features":{}}')
    c.put("/latest_producer_id_block",
          '{"version":1,"broker":2,"block_start":"0","block_end":"999"}')
    c.put("/consumers/old-group/offsets/orders/0", "42")
    c.put("/consumers/old-group/offsets/orders/1", "7")
    for path in ("/isr_change_notification", "/log_dir_event_notification", "/brokers/seqid"):
        c.put(path, None)


# --------------------------------------------------------------------------------------------
# Reading the cluster
# --------------------------------------------------------------------------------------------


def test_read_cluster_model(cluster: Cluster) -> None:
    write_cluster(cluster)
    m = read_cluster(cluster.connect)
    assert m.source == "zookeeper" and m.warnings == []
    assert m.cluster_id == "7ZmHbVxLTBKtrsI3mQqJeQ"
    assert (m.controller.id, m.controller.kraft, m.controller_epoch) == (3, False, 7)
    assert sorted(m.brokers) == [1, 2, 3] and m.live_brokers() == {1, 2, 3}
    assert [e.connection_string() for e in m.brokers[1].endpoints] == [
        "PLAINTEXT://h1:9092", "SSL://h1:9093"]
    assert (m.brokers[3].rack, m.brokers[3].jmx_port) == ("r3", 9999)
    # the broker epoch is the registration's creation zxid (KIP-380): distinct, increasing
    assert 0 < m.brokers[1].epoch < m.brokers[2].epoch < m.brokers[3].epoch
    o0, o1, o2 = (m.topics["orders"].partitions[i] for i in range(3))
    assert (o0.replicas, o0.leader, o0.isr, o0.leader_epoch, o0.controller_epoch) == (
        [1, 2], 1, [1], 0, 7)
    assert (o1.leader, o1.isr, o1.leader_epoch) == (2, [2, 1], 3)
    assert (o2.isr, o2.partition_epoch, o0.partition_epoch) == ([1, 2], 1, 0)
    assert m.topics["orders"].topic_id is None
    ev = m.topics["events"]
    assert ev.topic_id == EVENTS_ID
    e0 = ev.partitions[0]
    assert (e0.replicas, e0.adding_replicas, e0.removing_replicas, e0.target_replicas) == (
        [3, 1, 2], [3], [2], [3, 1])
    assert e0.leader_recovery_state == 1
    assert m.reassignments == {("events", 0): [3, 1]}
    assert m.topics_being_deleted == ["gone"]
    assert m.configs[("topics", "orders")] == {"min.insync.replicas": "2"}
    assert m.min_insync_replicas("orders") == 2
    assert m.configs[("brokers", "")] == {"unclean.leader.election.enable": "false"}
    assert (m.feature_znode_version, m.features) == (2, {})
    assert m.producer_id_block == {"broker": 2, "block_start": 0, "block_end": 999}
    assert m.consumer_offsets == {"old-group": {"orders": {0: 42, 1: 7}}}


def test_znodes_round_trip_through_kafkalog(cluster: Cluster) -> None:
    """Every znode written above comes back byte-for-byte equal (as JSON) when rendered in
    the shape it was written in."""
    write_cluster(cluster)
    m = read_cluster(cluster.connect)
    shapes = {  # path -> the znode format it was written in
        "/brokers/topics/orders": "topic=1", "/brokers/topics/gone": "topic=1",
        "/brokers/topics/metrics": "topic=2", "/brokers/topics/events": "topic=3",
        "/brokers/ids/1": "broker=5", "/brokers/ids/2": "broker=5", "/brokers/ids/3": "broker=4",
        "/controller": "controller=1",
    }
    checked = 0
    for path, data in cluster.written.items():
        fmt = ZnodeFormat.for_zk_version(shapes.get(path, "3"))
        rendered = render(m, fmt)
        if path.startswith("/config/changes") or path in (
                "/isr_change_notification", "/log_dir_event_notification", "/brokers/seqid"):
            assert path not in rendered                  # notifications are not state
            continue
        assert path in rendered, path
        expected = None if data is None else json.loads(data)
        assert rendered[path] == expected, path
        checked += 1
    assert checked == len(cluster.written) - 4 == 24    # all but the 4 notification paths


def test_cluster_state_cli_reads_zookeeper(cluster: Cluster,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    write_cluster(cluster)
    assert cli_main(["cluster-state", "--zookeeper", cluster.connect, "--compact",
                     "--zk-version", "1"]) == 0
    z = json.loads(capsys.readouterr().out)
    assert z["/brokers/topics/orders"] == {"version": 1,
                                           "partitions": {"0": [1, 2], "1": [2, 1], "2": [1, 2]}}
    assert z["/brokers/topics/orders/partitions/0/state"] == {
        "controller_epoch": 7, "leader": 1, "version": 1, "leader_epoch": 0, "isr": [1]}
    # 3.9's shapes by default: v3 topic znodes, v5 registrations, v2 controller
    assert command.main(["--zookeeper", cluster.connect, "--compact"]) == 0
    z = json.loads(capsys.readouterr().out)
    assert z["/brokers/ids/3"]["version"] == 5
    assert z["/controller"] == {"version": 2, "brokerid": 3, "timestamp": "1403061802981",
                                "kraftControllerEpoch": -1}
    assert z["/brokers/topics/events"]["topic_id"] == EVENTS_ID
    # an old cluster's shapes: 0.10.2 (no topic ids, no features, v4 registrations)
    assert command.main(["--zookeeper", cluster.connect, "--compact",
                         "--kafka-version", "0.10.2"]) == 0
    z = json.loads(capsys.readouterr().out)
    assert z["/brokers/ids/1"]["version"] == 4 and "/feature" not in z
    assert "topic_id" not in z["/brokers/topics/events"]


def test_fenced_broker_has_no_registration(cluster: Cluster,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """Registrations are ephemeral: when broker 3's session ends (and with it the controller
    it hosted) its znodes are gone, and kafkalog lists only brokers 1 and 2."""
    write_cluster(cluster)
    cluster.close("broker-3")
    assert command.main(["--zookeeper", cluster.connect, "--compact"]) == 0
    z = json.loads(capsys.readouterr().out)
    assert sorted(k for k in z if k.startswith("/brokers/ids/")) == ["/brokers/ids/1",
                                                                      "/brokers/ids/2"]
    assert "/controller" not in z


def test_what_if_over_a_zookeeper_cluster(cluster: Cluster,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Hand check, broker 1 down (ZooKeeper controller, orders has min.insync.replicas=2):
    orders-0 (ISR [1]) cannot elect and goes offline, ISR [1] kept, epoch 0 -> 1;
    orders-1 keeps leader 2, ISR [2] (under min ISR), epoch 3 -> 4;
    orders-2 elects 2 (first live ISR member), ISR [2] (under min ISR), epoch 2 -> 3;
    events-0 (replicas [3,1,2], ISR [1,2]) elects 2 -- 3 is live but not in the ISR;
    metrics-0 has no replica on 1; gone-0 is being deleted and is left alone."""
    write_cluster(cluster)
    m = read_cluster(cluster.connect)
    r = what_if(m, "broker 1 down")
    net = {f"{o.topic}-{o.partition}": (o.after.leader, o.after.isr, o.after.leader_epoch)
           for o in r.outcomes}
    assert net == {"orders-0": (-1, [1], 1), "orders-1": (2, [2], 4), "orders-2": (2, [2], 3),
                   "events-0": (2, [2], 6)}
    assert [f"{o.topic}-{o.partition}" for o in r.offline] == ["orders-0"]
    assert [f"{o.topic}-{o.partition}" for o in r.under_min_isr] == ["orders-1", "orders-2"]
    assert all(o.after.controller_epoch == 7 for o in r.outcomes)
    assert command.main(["--zookeeper", cluster.connect, "--what-if", "broker 1 down",
                         "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["controller"] == "ZooKeeper-mode controller"
    assert [(x["topic"], x["partition"]) for x in doc["offline"]] == [("orders", 0)]


# --------------------------------------------------------------------------------------------
# KafkaZkClientTest (read side), against the real server
# --------------------------------------------------------------------------------------------


def test_set_and_get_consumer_offset(cluster: Cluster) -> None:
    assert read_cluster(cluster.connect).consumer_offsets == {}
    cluster.put("/consumers/my-group/offsets/topic1/0", "123")
    assert read_cluster(cluster.connect).consumer_offsets == {"my-group": {"topic1": {0: 123}}}
    cluster.set("/consumers/my-group/offsets/topic1/0", "125")
    assert read_cluster(cluster.connect).consumer_offsets == {"my-group": {"topic1": {0: 125}}}


def test_get_consumer_offset_no_data(cluster: Cluster) -> None:
    cluster.put("/consumers/my-group/offsets/topic1/0", None)     # createRecursive: no data
    m = read_cluster(cluster.connect)
    assert m.consumer_offsets == {}
    assert all("no /brokers znode" in w for w in m.warnings)    # no decode warning for it


def test_topic_assignment_methods(cluster: Cluster) -> None:
    tid = str(Uuid.random())
    cluster.put("/brokers/topics/topic1", json.dumps(
        {"version": 3, "partitions": {"0": [0, 1], "1": [0, 1], "2": [1, 2, 3]},
         "adding_replicas": {}, "removing_replicas": {}, "topic_id": tid}))
    m = read_cluster(cluster.connect)
    t = m.topics["topic1"]
    assert (t.topic_id, sorted(t.partitions)) == (tid, [0, 1, 2])
    assert t.partitions[2].replicas == [1, 2, 3]
    assert all(p.adding_replicas == [] and p.removing_replicas == [] for p in t.partitions.values())
    cluster.set("/brokers/topics/topic1", json.dumps(
        {"version": 3, "partitions": {"0": [0, 1], "1": [0, 1]}, "adding_replicas": {},
         "removing_replicas": {}, "topic_id": tid}))
    cluster.put("/brokers/topics/topic2", '{"version":3,"partitions":{"0":[0,1],"1":[0,1]},'
                '"adding_replicas":{},"removing_replicas":{}}')
    m = read_cluster(cluster.connect)
    assert sorted(m.topics) == ["topic1", "topic2"] and len(m.topics["topic1"].partitions) == 2


def test_get_topic_partition_states(cluster: Cluster) -> None:
    cluster.put("/brokers/topics/topic1", '{"version":1,"partitions":{"0":[1,2],"1":[2,1]}}')
    cluster.put("/brokers/topics/topic1/partitions/0/state",
                '{"version":1,"leader":1,"leader_epoch":1,"controller_epoch":2,"isr":[1,2]}')
    m = read_cluster(cluster.connect)
    p0, p1 = m.topics["topic1"].partitions[0], m.topics["topic1"].partitions[1]
    assert (p0.leader, p0.isr, p0.leader_epoch, p0.controller_epoch) == (1, [1, 2], 1, 2)
    # a partition without a state znode has no leader yet
    assert (p1.leader, p1.isr) == (-1, [])
    assert any("topic1/partitions/1/state" in n for n in m.notes)


def test_controller_epoch_and_cluster_id(cluster: Cluster) -> None:
    assert read_cluster(cluster.connect).controller_epoch is None
    cluster.put("/controller_epoch", "0")
    assert read_cluster(cluster.connect).controller_epoch == 0
    cluster.set("/controller_epoch", "1")
    cluster.put("/cluster/id", '{"version":"1","id":"aGVsbG8td29ybGQtY2x1cw"}')
    m = read_cluster(cluster.connect)
    assert (m.controller_epoch, m.cluster_id) == (1, "aGVsbG8td29ybGQtY2x1cw")


def test_partition_reassignment_and_preferred_election(cluster: Cluster) -> None:
    reassignment = {("topic_a", 0): [0, 1, 3], ("topic_a", 1): [2, 1, 3],
                    ("topic_b", 0): [4, 5], ("topic_c", 0): [5, 3]}
    cluster.put("/admin/reassign_partitions", json.dumps({"version": 1, "partitions": [
        {"topic": t, "partition": p, "replicas": r} for (t, p), r in reassignment.items()]}))
    cluster.put("/admin/preferred_replica_election", '{"version":1,"partitions":['
                '{"topic":"topic1","partition":0},{"topic":"topic1","partition":1}]}')
    m = read_cluster(cluster.connect)
    assert m.reassignments == reassignment
    assert m.preferred_replica_election == [("topic1", 0), ("topic1", 1)]


def test_chroot_and_bad_znodes(cluster: Cluster, zookeeper: ZooKeeperServer) -> None:
    write_cluster(cluster)
    cluster.put("/brokers/ids/9", '{"version":4,"endpoints":["PLAINTEXT://h9:1"]}',
                ephemeral_of="broker-9")                            # no jmx_port
    cluster.put("/brokers/topics/bad", "not json")
    m = read_cluster(cluster.connect)
    assert sorted(m.brokers) == [1, 2, 3] and "bad" not in m.topics
    assert any(w.startswith("/brokers/ids/9:") and "jmx_port" in w for w in m.warnings)
    assert any(w.startswith("/brokers/topics/bad:") for w in m.warnings)
    # the root of the server is not a Kafka cluster: said, not guessed
    root = read_cluster(zookeeper.connect)
    assert root.topics == {} and "no /brokers znode" in root.warnings[0]
    assert command.main(["--zookeeper", cluster.connect]) == 1      # warnings -> exit 1


def test_unreachable_zookeeper(capsys: pytest.CaptureFixture[str]) -> None:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]                  # nothing listens here once closed
    with pytest.raises(ZooKeeperError, match="no ZooKeeper server answered"):
        read_cluster(f"127.0.0.1:{port}", timeout_s=1)
    assert command.main(["--zookeeper", f"127.0.0.1:{port}", "--timeout", "1"]) == 1
    assert "no ZooKeeper server answered" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------
# kafkalog verify DIR --zookeeper
# --------------------------------------------------------------------------------------------


def _partition(root: Path, name: str, *, epoch: int = 0, topic_id: str | None = None) -> Path:
    """A real partition directory written by the engine: one batch stamped with leader
    ``epoch`` (the leader-epoch checkpoint then holds ``epoch`` from offset 0)."""
    d = root / name
    log = Log.open(d)
    try:
        log.append([Record(b"k", b"v", timestamp=1)], partition_leader_epoch=epoch)
        log.flush()
    finally:
        log.close()
    assert [e.epoch for e in LeaderEpochCheckpointFile(LeaderEpochCheckpointFile.new_file(d))
            .read()] == [epoch]
    if topic_id is not None:
        PartitionMetadataFile(d / PartitionMetadataFile.FILE_NAME).write(Uuid.from_string(topic_id))
    return d


def test_verify_against_zookeeper(cluster: Cluster, tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Broker 1's log dir, checked against the cluster: orders-0 and gone-0 agree; orders-1
    holds leader epoch 4 where ZooKeeper says 3 (error); events-0's partition.metadata names
    another topic id (error); metrics-0 is not assigned to broker 1 (warning); stray-0's
    topic does not exist (warning); orders-2 is assigned to broker 1 but absent (warning)."""
    write_cluster(cluster)
    logdir = tmp_path / "kafka-logs"
    logdir.mkdir()
    (logdir / "meta.properties").write_text("version=0\nbroker.id=1\n")
    _partition(logdir, "orders-0", epoch=0)
    _partition(logdir, "orders-1", epoch=4)
    _partition(logdir, "events-0", epoch=5, topic_id="AAAAAAAAAAAAAAAAAAAAAg")
    _partition(logdir, "metrics-0", epoch=0)
    _partition(logdir, "stray-0", epoch=0)
    _partition(logdir, "gone-0", epoch=0)
    assert cli_main(["verify", str(logdir), "--zookeeper", cluster.connect, "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    zk = sorted((f["check"], f["severity"], Path(f["file"]).parent.name
                 if f["file"].endswith(("checkpoint", "metadata")) else Path(f["file"]).name)
                for f in report["findings"] if f["check"].startswith("zk_"))
    assert zk == [
        ("zk_leader_epoch", "error", "orders-1"),
        ("zk_replica_missing", "warning", "kafka-logs"),
        ("zk_replica_placement", "warning", "metrics-0"),
        ("zk_topic_id", "error", "events-0"),
        ("zk_topic_missing", "warning", "stray-0"),
    ]
    by_check = {f["check"]: f for f in report["findings"]}
    assert by_check["zk_topic_id"]["expected"] == EVENTS_ID
    assert by_check["zk_topic_id"]["found"] == "AAAAAAAAAAAAAAAAAAAAAg"
    assert (by_check["zk_leader_epoch"]["found"], by_check["zk_leader_epoch"]["expected"]) == (
        4, "<= 3")
    assert "orders-2" in by_check["zk_replica_missing"]["message"]
    # the same partition checked alone as broker 2: placement agrees, epoch still too high
    assert cli_main(["verify", str(logdir / "orders-1"), "--zookeeper", cluster.connect,
                     "--broker-id", "2", "--json"]) == 1
    checks = {f["check"] for f in json.loads(capsys.readouterr().out)["findings"]}
    assert "zk_leader_epoch" in checks and "zk_replica_placement" not in checks


def test_verify_zookeeper_unreachable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import socket
    d = _partition(tmp_path, "t-0")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    from kafkalog.tools.verify_zookeeper import cross_check_zookeeper
    findings = cross_check_zookeeper([d], f"127.0.0.1:{port}", timeout_s=1)
    assert [(f.check, f.severity) for f in findings] == [("zk_unreachable", "error")]
