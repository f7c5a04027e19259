"""DescribeQuorum (55) served from a KRaft node's files, asked by kafka-python's admin client
(``describe_metadata_quorum``, a client we did not write) and on the wire for the errors.

The served dirs: a copy of the real LDI-POC broker directory (Kafka 3.7, combined node 1, a
static quorum of itself) from ../shared/fixtures, and a three-controller dynamic quorum's
node written with ``kafkalog storage format --initial-controllers`` plus a log.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kafkalog.records.builder import encode_batch, encode_control_batch
from kafkalog.server.protocol import ErrorCode as E

from ..test_metadata_quorum import DIRS, INITIAL, _leader_change, _noop
from .conftest import start_server
from .wire import WireClient

kafka = pytest.importorskip("kafka", reason="kafka-python is not installed")
from kafka.admin import KafkaAdminClient  # noqa: E402

LDI = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "kafka-real" / "LDI-POC"


def _describe(server) -> dict:
    admin = KafkaAdminClient(bootstrap_servers=server.address)
    try:
        return admin.describe_metadata_quorum()
    finally:
        admin.close()


def _partition(result: dict) -> dict:
    (topic,) = result["topics"]
    assert topic["topic_name"] == "__cluster_metadata"
    (part,) = topic["partitions"]
    return part


@pytest.mark.skipif(not LDI.is_dir(), reason="../shared/fixtures/kafka-real/LDI-POC is absent")
def test_a_served_kraft_node_answers_from_its_files(tmp_path: Path) -> None:
    root = tmp_path / "ldi"
    shutil.copytree(LDI, root)
    for p in root.rglob("*"):
        p.chmod(0o755 if p.is_dir() else 0o644)
    server = start_server(root)
    try:
        part = _partition(_describe(server))
    finally:
        server.stop()
    assert part["error"] is None
    assert (part["leader_id"], part["leader_epoch"], part["high_watermark"]) == (1, 1, 4929)
    assert part["observers"] == []
    (voter,) = part["current_voters"]
    assert (voter["replica_id"], voter["log_end_offset"], voter["last_fetch_timestamp"],
            voter["last_caught_up_timestamp"]) == (1, 4929, -1, -1)


def test_a_dynamic_quorum_node(tmp_path: Path) -> None:
    """Node 2 of a three-controller quorum, following node 1 in epoch 3: its own end offset,
    the voters' endpoints (v2 Nodes) and directory ids; the others' end offsets are not in its
    files (-1), so no majority is known to hold anything (high watermark -1)."""
    import io

    from kafkalog.storage import command as storage

    root = tmp_path / "c2"
    cfg = tmp_path / "c2.properties"
    cfg.write_text(f"process.roles=controller\nnode.id=2\ncontroller.listener.names=CONTROLLER\n"
                   f"listeners=CONTROLLER://c2:9093\nlog.dirs={root}\n"
                   "controller.quorum.bootstrap.servers=c1:9093\n")
    assert storage.main(["format", "--cluster-id", "MkU3OEVBNTcwNTJENDM2Qg", "--config",
                         str(cfg), "--initial-controllers", INITIAL],
                        stdout=io.StringIO(), stderr=io.StringIO()) == 0
    server = start_server(root)
    try:
        # formatted, never started: no file names a leader (Kafka: NOT_LEADER_OR_FOLLOWER)
        part = _partition(_describe(server))
        assert "[Error 6]" in part["error"] and "no leader is known" in part["error"]
    finally:
        server.stop()
    part_dir = root / "__cluster_metadata-0"
    batches = [encode_control_batch(2, value=_leader_change(1), base_offset=0,
                                    partition_leader_epoch=3, timestamp=1)]
    batches += [encode_batch([_noop()], base_offset=o, partition_leader_epoch=3)
                for o in range(1, 5)]
    (part_dir / "00000000000000000000.log").write_bytes(b"".join(batches))
    (part_dir / "quorum-state").write_text(json.dumps(
        {"leaderId": 1, "leaderEpoch": 3, "votedId": -1,
         "votedDirectoryId": "AAAAAAAAAAAAAAAAAAAAAA", "data_version": 1}))
    server = start_server(root)
    try:
        result = _describe(server)
        with WireClient(server.address) as w:
            bad = w.request(55, 2, {"topics": [{"topic_name": "orders",
                                                 "partitions": [{"partition_index": 0}]}]})
        # a file that changes is read again (an election wrote a new quorum-state)
        (part_dir / "quorum-state").write_text(json.dumps(
            {"leaderId": 3, "leaderEpoch": 4, "votedId": 3,
             "votedDirectoryId": DIRS[3], "data_version": 1}))
        again = _partition(_describe(server))
        assert (again["leader_id"], again["leader_epoch"]) == (3, 4)
    finally:
        server.stop()
    part = _partition(result)
    assert (part["leader_id"], part["leader_epoch"], part["high_watermark"]) == (1, 3, -1)
    assert [(v["replica_id"], str(v["replica_directory_id"]), v["log_end_offset"])
            for v in part["current_voters"]] == [(1, _uuid(DIRS[1]), -1),
                                                 (2, _uuid(DIRS[2]), 5),
                                                 (3, _uuid(DIRS[3]), -1)]
    assert sorted((n["node_id"], [(lis["name"], lis["host"], lis["port"])
                                  for lis in n["listeners"]]) for n in result["nodes"]) == [
        (i, [("CONTROLLER", f"c{i}", 9093)]) for i in (1, 2, 3)]
    # RaftUtil.hasValidTopicPartition: another topic is not the metadata partition
    assert bad.error_code == E.none
    assert bad.topics[0].partitions[0].error_code == E.unknown_topic_or_partition


def _uuid(text: str) -> str:
    """A Kafka Uuid as kafka-python prints it (a Python UUID)."""
    import base64
    import uuid

    return str(uuid.UUID(bytes=base64.urlsafe_b64decode(text + "==")))


def test_a_log_dir_without_a_metadata_log(tmp_path: Path) -> None:
    server = start_server(tmp_path / "plain")
    try:
        part = _partition(_describe(server))
        with WireClient(server.address) as w:
            v0 = w.request(55, 0, {"topics": [{"topic_name": "__cluster_metadata",
                                                "partitions": [{"partition_index": 0}]}]})
    finally:
        server.stop()
    assert "UnknownTopicOrPartition" in part["error"]
    assert "holds no __cluster_metadata-0" in part["error"]
    assert v0.topics[0].partitions[0].error_code == E.unknown_topic_or_partition


def test_cluster_describe_is_required(tmp_path: Path) -> None:
    """Without DESCRIBE on the cluster: the top-level CLUSTER_AUTHORIZATION_FAILED and no
    topics (DescribeQuorumRequest.getErrorResponse)."""
    import dataclasses

    from kafkalog.server.broker import AUTHORIZER_CLASSES

    from .conftest import TEST_CONFIG

    cfg = dataclasses.replace(TEST_CONFIG, authorizer_class_name=AUTHORIZER_CLASSES[0])
    server = start_server(tmp_path / "acl", config=cfg)
    try:
        with WireClient(server.address) as w:
            r = w.request(55, 2, {"topics": [{"topic_name": "__cluster_metadata",
                                               "partitions": [{"partition_index": 0}]}]})
    finally:
        server.stop()
    assert r.error_code == E.cluster_authorization_failed
    assert r.error_message == "Cluster authorization failed." and r.topics == ()
