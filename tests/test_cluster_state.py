"""``kafkalog cluster-state``: the real LDI-POC KRaft data directory, and synthetic log
directories written with the record builder exercising every replay rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafkalog.cluster import cluster_state as cs
from kafkalog.cluster import kraft
from kafkalog.decoders import cluster_metadata as cm
from kafkalog.decoders import offsets
from kafkalog.records.batch import iter_batches
from kafkalog.records.builder import encode_batch, encode_control_batch, encode_end_txn_marker

from .conftest import shared_fixture_path

T1 = "AAAAAAAAAAAAAAAAAAAAAQ"
T2 = "AAAAAAAAAAAAAAAAAAAAAg"


# --------------------------------------------------------------------------------------------
# The real LDI-POC data directory (Kafka 3.7, KRaft, one combined broker/controller)
# --------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def ldi() -> tuple[Path, dict]:
    root = shared_fixture_path("kafka-real", "LDI-POC")
    return root, cs.build(root)


def _props(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines()
                if "=" in line and not line.startswith("#"))


def test_ldi_brokers_and_cluster(ldi) -> None:
    root, z = ldi
    props = _props(root / "meta.properties")
    assert z["/cluster/id"] == {"version": "1", "id": props["cluster.id"]}
    # The broker shut down last (controlled shutdown at offset 4871, fenced at 4926): a fenced
    # broker holds no ZooKeeper session, so /brokers/ids is empty at the end of the log...
    assert [k for k in z if k.startswith("/brokers/ids/")] == []
    # ...and lists it while it was up (the state before the controlled shutdown).
    up = cs.ClusterState(kraft.read_log_dir(root, at_offset=4871)).znodes()
    assert [k for k in up if k.startswith("/brokers/ids/")] == [f"/brokers/ids/{props['node.id']}"]
    broker = up["/brokers/ids/1"]
    assert broker["endpoints"] == ["PLAINTEXT://kafka:9092"]
    assert (broker["host"], broker["port"], broker["version"]) == ("kafka", 9092, 5)
    assert broker["listener_security_protocol_map"] == {"PLAINTEXT": "PLAINTEXT"}
    quorum = json.loads((root / "__cluster_metadata-0" / "quorum-state").read_text())
    assert z["/controller"]["brokerid"] == quorum["leaderId"]
    assert z["/controller_epoch"] == quorum["leaderEpoch"]
    assert z["/feature"]["features"]["metadata.version"] == {"max_version_level": 19}


def test_ldi_topics_consistent_with_partition_dirs(ldi) -> None:
    root, z = ldi
    topics = {k.split("/")[3] for k in z if k.startswith("/brokers/topics/")}
    assert topics == {"__consumer_offsets", "TestTopicPatient", "Retry.TestTopicPatient",
                      "batch2.work.notification.SHR_PROD.persistence",
                      "subscription.matching.SHR_PROD.persistence"}
    for d in root.iterdir():
        if not d.is_dir() or d.name == "__cluster_metadata-0":
            continue
        topic, part = d.name.rsplit("-", 1)
        tz = z[f"/brokers/topics/{topic}"]
        meta = dict(line.split(": ", 1) for line in
                    (d / "partition.metadata").read_text().splitlines())
        assert tz["topic_id"] == meta["topic_id"]
        assert tz["partitions"][part] == [1]                     # the only broker hosts it
        state = z[f"/brokers/topics/{topic}/partitions/{part}/state"]
        # The broker shut down last (controlled shutdown): no leader, leader epoch bumped once.
        assert state == {"version": 1, "leader": -1, "leader_epoch": 1,
                         "controller_epoch": 1, "isr": [1]}
    assert len(z["/brokers/topics/__consumer_offsets"]["partitions"]) == 50
    assert z["/config/topics/__consumer_offsets"]["config"]["cleanup.policy"] == "compact"


def test_ldi_committed_offsets(ldi) -> None:
    root, z = ldi
    leo = max(r.offset for b in iter_batches(root / "TestTopicPatient-0" /
                                             "00000000000000000000.log") for r in b) + 1
    assert z["/consumers/DEVSmileCDR/offsets/TestTopicPatient/0"] == leo == 3
    assert z["/consumers/DEVSmileCDR/offsets/Retry.TestTopicPatient/0"] == 0


def test_main_prints_json_and_exit_codes(ldi, tmp_path, capsys) -> None:
    root, z = ldi
    assert cs.main([str(root), "--compact"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out) == z
    assert cs.main([str(tmp_path)]) == 1                 # neither log present
    assert "neither" in capsys.readouterr().err
    assert cs.main([str(tmp_path / "missing")]) == 1
    assert cs.main([]) == 2                              # usage error
    assert cs.main(["--help"]) == 0


# --------------------------------------------------------------------------------------------
# Synthetic log directories
# --------------------------------------------------------------------------------------------

def _meta(name: str, data: dict, version: int | None = None) -> tuple[None, bytes, int]:
    return (None, cm.encode_record(name, data, version), 1000)


def _write_log(d: Path, batches: list[bytes], base: int = 0) -> None:
    d.mkdir(parents=True, exist_ok=True)
    (d / f"{base:020d}.log").write_bytes(b"".join(batches))


class _Log:
    """Accumulates batches with consecutive offsets."""

    def __init__(self) -> None:
        self.batches: list[bytes] = []
        self.next = 0

    def add(self, records: list, epoch: int = 5, **kw) -> None:
        self.batches.append(encode_batch(records, base_offset=self.next,
                                         partition_leader_epoch=epoch, **kw))
        self.next += len(records)

    def marker(self, commit: bool, producer_id: int) -> None:
        self.batches.append(encode_end_txn_marker(commit, producer_id=producer_id,
                                                  producer_epoch=0, base_offset=self.next))
        self.next += 1


def _endpoint(name: str, host: str, port: int, proto: int) -> dict:
    return {"name": name, "host": host, "port": port, "securityProtocol": proto}


def _broker(bid: int, eps: list, rack: str | None = None) -> tuple:
    return _meta("RegisterBrokerRecord", {
        "brokerId": bid, "incarnationId": T1, "brokerEpoch": 10 + bid, "endPoints": eps,
        "features": [{"name": "metadata.version", "minSupportedVersion": 1,
                      "maxSupportedVersion": 20}], "rack": rack, "fenced": True}, 1)


def _partition(tid: str, pid: int, replicas: list[int], leader: int) -> tuple:
    return _meta("PartitionRecord", {
        "partitionId": pid, "topicId": tid, "replicas": replicas, "isr": replicas,
        "removingReplicas": [], "addingReplicas": [], "leader": leader, "leaderEpoch": 0,
        "partitionEpoch": 0})


def test_synthetic_replay(tmp_path: Path) -> None:
    (tmp_path / "meta.properties").write_text("version=1\nnode.id=1\ncluster.id=abc\n")
    log = _Log()
    # LEADER_CHANGE (type 2): LeaderChangeMessage v0 = Version, LeaderId 2, Voters [2],
    # GrantingVoters [2] (compact arrays, empty tagged sections)
    log.batches.append(encode_control_batch(
        2, value=b"\x00\x00" + b"\x00\x00\x00\x02" + b"\x02\x00\x00\x00\x02\x00"
        + b"\x02\x00\x00\x00\x02\x00\x00", base_offset=0, timestamp=777,
        partition_leader_epoch=5))
    log.next += 1
    log.add([_meta("FeatureLevelRecord", {"name": "metadata.version", "featureLevel": 20}),
             _broker(1, [_endpoint("INTERNAL", "h1", 9094, 1), _endpoint("PLAIN", "h1", 9092, 0)],
                     rack="r1"),
             _broker(2, [_endpoint("SSL", "::1", 9093, 1)]),
             _broker(3, [_endpoint("P", "h3", 1, 0)]),
             _meta("UnregisterBrokerRecord", {"brokerId": 3, "brokerEpoch": 13}),
             # brokers register fenced; 1 and 2 are unfenced (two record shapes), 4 stays
             # fenced and so holds no /brokers/ids znode
             _broker(4, [_endpoint("P", "h4", 1, 0)]),
             _meta("UnfenceBrokerRecord", {"id": 1, "epoch": 11}),
             _meta("BrokerRegistrationChangeRecord", {"brokerId": 2, "brokerEpoch": 12,
                                                      "fenced": -1}),
             _meta("TopicRecord", {"name": "orders", "topicId": T1}),
             _partition(T1, 0, [1, 2], 1),
             _partition(T1, 1, [2, 1], 2),
             _meta("ConfigRecord", {"resourceType": 2, "resourceName": "orders",
                                    "name": "retention.ms", "value": "1000"}),
             _meta("ConfigRecord", {"resourceType": 2, "resourceName": "orders",
                                    "name": "cleanup.policy", "value": "compact"}),
             _meta("ConfigRecord", {"resourceType": 2, "resourceName": "orders",
                                    "name": "cleanup.policy", "value": None}),
             _meta("ConfigRecord", {"resourceType": 4, "resourceName": "",
                                    "name": "log.retention.ms", "value": "5"}),
             _meta("TopicRecord", {"name": "gone", "topicId": T2}),
             _partition(T2, 0, [1], 1),
             _meta("ConfigRecord", {"resourceType": 2, "resourceName": "gone",
                                    "name": "x", "value": "y"}),
             _meta("RemoveTopicRecord", {"topicId": T2}),
             _meta("ProducerIdsRecord", {"brokerId": 2, "brokerEpoch": 12,
                                         "nextProducerId": 3000})], epoch=5)
    # leader change for p0 (epoch bump) + ISR shrink; p1 only ISR change (no epoch bump)
    log.add([_meta("PartitionChangeRecord", {"partitionId": 0, "topicId": T1, "leader": 2,
                                             "isr": [2]}),
             _meta("PartitionChangeRecord", {"partitionId": 1, "topicId": T1, "isr": [2],
                                             "leaderRecoveryState": 1}),
             _meta("PartitionChangeRecord", {"partitionId": 1, "topicId": T1,
                                             "addingReplicas": [3], "replicas": [2, 1, 3]})],
            epoch=6)
    # an aborted metadata transaction changes nothing; a committed one applies
    log.add([_meta("BeginTransactionRecord", {"name": "t1"}),
             _meta("TopicRecord", {"name": "never", "topicId": T2}),
             _meta("AbortTransactionRecord", {}),
             _meta("BeginTransactionRecord", {}),
             _meta("FeatureLevelRecord", {"name": "kraft.version", "featureLevel": 1}),
             _meta("EndTransactionRecord", {})], epoch=6)
    _write_log(tmp_path / "__cluster_metadata-0", log.batches)

    off = _Log()
    def commit(group: str, topic: str, part: int, value: int | None) -> tuple:
        k, v = offsets.encode_record(1, {"group": group, "topic": topic, "partition": part},
                                     None if value is None else
                                     {"offset": value, "metadata": "", "commitTimestamp": 1},
                                     version=3)
        return (k, v, 1)
    off.add([commit("g", "orders", 0, 5), commit("g", "orders", 1, 7),
             commit("h", "orders", 0, 1)])
    off.add([commit("g", "orders", 0, 9), commit("h", "orders", 0, None)])
    off.add([commit("g", "orders", 1, 100)], producer_id=42, producer_epoch=0,
            transactional=True)
    off.add([commit("t", "orders", 0, 55)], producer_id=43, producer_epoch=0,
            transactional=True)
    off.marker(False, 42)             # abort: offset 100 never applies
    off.marker(True, 43)
    _write_log(tmp_path / "__consumer_offsets-7", off.batches)

    state = cs.build_state(tmp_path)
    assert state.warnings == []
    z = state.znodes()
    assert z["/cluster/id"] == {"version": "1", "id": "abc"}
    assert sorted(k for k in z if k.startswith("/brokers/ids/")) == ["/brokers/ids/1",
                                                                      "/brokers/ids/2"]
    b1, b2 = z["/brokers/ids/1"], z["/brokers/ids/2"]
    assert b1["host"] == "h1" and b1["port"] == 9092 and b1["rack"] == "r1"
    assert b1["endpoints"] == ["INTERNAL://h1:9094", "PLAIN://h1:9092"]
    assert b1["listener_security_protocol_map"] == {"INTERNAL": "SSL", "PLAIN": "PLAINTEXT"}
    assert b1["features"] == {"metadata.version": {"min_version": 1, "max_version": 20}}
    assert b1["timestamp"] == "1000"
    assert b2["host"] is None and b2["port"] == -1 and "rack" not in b2
    assert b2["endpoints"] == ["SSL://[::1]:9093"]
    assert z["/brokers/topics/orders"] == {
        "version": 3, "partitions": {"0": [1, 2], "1": [2, 1, 3]},
        "adding_replicas": {"1": [3]}, "removing_replicas": {}, "topic_id": T1}
    assert z["/brokers/topics/orders/partitions/0/state"] == {
        "version": 1, "leader": 2, "leader_epoch": 1, "controller_epoch": 6, "isr": [2]}
    assert z["/brokers/topics/orders/partitions/1/state"] == {
        "version": 1, "leader": 2, "leader_epoch": 0, "controller_epoch": 6, "isr": [2],
        "leader_recovery_state": 1}
    assert not any("gone" in k or "never" in k for k in z)
    assert z["/config/topics/orders"] == {"version": 1, "config": {"retention.ms": "1000"}}
    assert z["/config/brokers/<default>"] == {"version": 1,
                                              "config": {"log.retention.ms": "5"}}
    assert z["/feature"]["features"] == {"metadata.version": {"max_version_level": 20},
                                         "kraft.version": {"max_version_level": 1}}
    assert z["/latest_producer_id_block"] == {"version": 1, "broker": 2,
                                              "block_start": "2000", "block_end": "2999"}
    consumers = {k: v for k, v in z.items() if k.startswith("/consumers/")}
    assert consumers == {"/consumers/g/offsets/orders/0": 9,
                         "/consumers/g/offsets/orders/1": 7,
                         "/consumers/t/offsets/orders/0": 55}
    assert z["/controller"] == {"version": 2, "brokerid": 2, "timestamp": "777",
                                "kraftControllerEpoch": 5}
    assert z["/controller_epoch"] == 5


def test_snapshot_then_log(tmp_path: Path) -> None:
    meta = tmp_path / "__cluster_metadata-0"
    meta.mkdir()
    snap = encode_batch([_meta("TopicRecord", {"name": "a", "topicId": T1}),
                         _partition(T1, 0, [1], 1)], base_offset=0, partition_leader_epoch=3)
    (meta / "00000000000000000002-0000000003.checkpoint").write_bytes(snap)
    # the log still holds offsets 0-1 (already in the snapshot: a conflicting name there must
    # be ignored) and continues at offset 2
    old = encode_batch([_meta("TopicRecord", {"name": "stale", "topicId": T2})] * 2,
                       base_offset=0, partition_leader_epoch=3)
    new = encode_batch([_meta("PartitionChangeRecord", {"partitionId": 0, "topicId": T1,
                                                        "leader": -1})],
                       base_offset=2, partition_leader_epoch=4)
    (meta / f"{0:020d}.log").write_bytes(old + new)
    z = cs.build(tmp_path)
    assert [k for k in z if k.startswith("/brokers/topics/") and k.count("/") == 3] == [
        "/brokers/topics/a"]
    assert z["/brokers/topics/a/partitions/0/state"]["leader"] == -1
    assert z["/brokers/topics/a/partitions/0/state"]["controller_epoch"] == 4


def test_corrupt_records_become_warnings(tmp_path: Path) -> None:
    good = encode_batch([_meta("TopicRecord", {"name": "a", "topicId": T1}),
                         (None, b"\x01\x02\x00\x7f", 1)], base_offset=0)
    bad = bytearray(encode_batch([_meta("TopicRecord", {"name": "b", "topicId": T2})],
                                 base_offset=2))
    bad[-1] ^= 0xFF                                   # CRC mismatch in the second batch
    _write_log(tmp_path / "__cluster_metadata-0", [good, bytes(bad)])
    state = cs.build_state(tmp_path)
    assert "/brokers/topics/a" in state.znodes()
    assert len(state.warnings) == 2
    assert "offset 1" in state.warnings[0]
    assert "stopped reading" in state.warnings[1]
    assert cs.main([str(tmp_path)]) == 1


def _ldi_with_snapshot(tmp_path: Path, end: int = 4871, body: bool = True) -> Path:
    """A copy of LDI-POC with a snapshot ending at ``end`` that holds the log's records below
    it (header, records, footer; ``body=False``: an empty file), as a node that took a
    snapshot writes one."""
    import shutil

    from kafkalog.decoders import kraft_control
    from kafkalog.storage import kraft_snapshot as ks

    src = shared_fixture_path("kafka-real", "LDI-POC")
    dst = tmp_path / "node"
    shutil.copytree(src, dst)
    for p in dst.rglob("*"):
        p.chmod(0o755 if p.is_dir() else 0o644)
    snap = dst / "__cluster_metadata-0" / f"{end:020d}-{1:010d}.checkpoint"
    if not body:
        snap.write_bytes(b"")
        return dst
    log = (src / "__cluster_metadata-0" / f"{0:020d}.log").read_bytes()
    values = [r.value for b in iter_batches(log) if not b.is_control for r in b.records()
              if r.offset < end]
    header = ks._control_batch(0, 1000, [(kraft_control.SNAPSHOT_HEADER, "SNAPSHOT_HEADER",
                                          {"version": 0, "lastContainedLogTimestamp": 1000})])
    records = encode_batch([(None, v, 1000) for v in values], base_offset=1,
                           partition_leader_epoch=1)
    snap.write_bytes(header + records + ks._footer(1 + len(values), 1000))
    return dst


def test_the_controller_behind_a_snapshot_comes_from_quorum_state(ldi, tmp_path) -> None:
    """The LeaderChange record is below the snapshot's end (not replayed): /controller and
    /controller_epoch are the quorum-state leader's, the election's time unknown (-1); the
    rest of the state is what the log alone gives."""
    _, full = ldi
    z = cs.build(_ldi_with_snapshot(tmp_path))
    assert z["/controller"] == {**full["/controller"], "timestamp": "-1"}
    assert z["/controller_epoch"] == full["/controller_epoch"]
    assert {k: v for k, v in z.items() if k != "/controller"} == \
        {k: v for k, v in full.items() if k != "/controller"}


def test_an_empty_snapshot_is_a_warning_naming_it(tmp_path) -> None:
    """Kafka's snapshot reader fails on a snapshot without its header; the state replayed
    without it misses every record below its end, so the file is named, not passed over."""
    from kafkalog.cluster.image.metadata_loader import load_metadata

    root = _ldi_with_snapshot(tmp_path, body=False)
    model = kraft.read_log_dir(root)
    snap = "00000000000000004871-0000000001.checkpoint"
    assert any(snap in w and "not a readable snapshot" in w for w in model.warnings)
    loaded = load_metadata(root)
    assert snap in loaded.faults[0] and "not a readable snapshot" in loaded.faults[0]
    # a log that starts after 0 with no snapshot: the gap is named too
    meta = root / "__cluster_metadata-0"
    (meta / snap).unlink()
    log = (meta / f"{0:020d}.log").read_bytes()
    tail = b"".join(log[b.position:b.position + b.size] for b in iter_batches(log)
                    if b.base_offset >= 4871)
    (meta / f"{0:020d}.log").unlink()
    (meta / f"{4871:020d}.log").write_bytes(tail)
    model = kraft.read_log_dir(root)
    assert any("the log starts at offset 4871 and no snapshot holds the records below it"
               in w for w in model.warnings)
    assert any("the log starts at offset 4871" in f for f in load_metadata(root).faults)
