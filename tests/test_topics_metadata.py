"""``kafkalog topics --list/--describe --metadata``: the cluster's topics from its KRaft metadata
image, as ``kafka-topics.sh --describe`` (Kafka 4.2's TopicCommand) prints them."""

from __future__ import annotations

import io
import json
from pathlib import Path

from kafkalog import LogDir
from kafkalog.admin import topics_command
from kafkalog.decoders import cluster_metadata as cm
from kafkalog.records.builder import encode_batch

from .conftest import shared_fixture_path

T1, T2 = "AAAAAAAAAAAAAAAAAAAAAQ", "AAAAAAAAAAAAAAAAAAAAAg"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = topics_command.main(list(argv), stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def test_real_kafka_37_cluster_view():
    """LDI-POC's metadata ends with broker 1 fenced after a controlled shutdown: every
    partition has no leader ("none"); __consumer_offsets has its 50 partitions and configs,
    though the dir holds one of them."""
    root = str(shared_fixture_path("kafka-real", "LDI-POC"))
    status, out, _ = run(root, "--list", "--metadata", root)
    assert (status, out.splitlines()) == (0, [
        "Retry.TestTopicPatient", "TestTopicPatient", "__consumer_offsets",
        "batch2.work.notification.SHR_PROD.persistence",
        "subscription.matching.SHR_PROD.persistence"])
    status, out, _ = run(root, "--describe", "--metadata", root, "--topic", "TestTopicPatient")
    assert out == ("Topic: TestTopicPatient\tTopicId: B3_HiNPgSQ6oxG9ZZ6ED5A\tPartitionCount: 1"
                   "\tReplicationFactor: 1\tConfigs: \n"
                   "\tTopic: TestTopicPatient\tPartition: 0\tLeader: none\tReplicas: 1\tIsr: 1"
                   "\tElr: \tLastKnownElr: \n")
    status, out, _ = run(root, "--describe", "--metadata", root, "--topic", "__consumer_offsets")
    lines = out.splitlines()
    assert lines[0] == ("Topic: __consumer_offsets\tTopicId: gSnfpEbtQfSDpxM2lhEn9A\t"
                        "PartitionCount: 50\tReplicationFactor: 1\tConfigs: cleanup.policy="
                        "compact,compression.type=producer,segment.bytes=104857600")
    assert len(lines) == 51 and lines[50].startswith("\tTopic: __consumer_offsets\tPartition: 49")


def test_leaders_reassignments_elr_and_json(tmp_path: Path):
    logs = tmp_path / "logs"
    with LogDir.open(logs) as d:
        d.create_topic("local-only", 1)
    part = tmp_path / "meta" / "__cluster_metadata-0"
    part.mkdir(parents=True)
    records = [("TopicRecord", {"name": "orders", "topicId": T1}),
               ("PartitionRecord", {"partitionId": 0, "topicId": T1, "replicas": [1, 2, 3],
                                    "isr": [1, 2], "leader": 2, "leaderEpoch": 4,
                                    "partitionEpoch": 7, "addingReplicas": [3],
                                    "removingReplicas": []}),
               ("PartitionRecord", {"partitionId": 1, "topicId": T1, "replicas": [2, 1],
                                    "isr": [2], "leader": 2, "leaderEpoch": 0,
                                    "partitionEpoch": 0, "eligibleLeaderReplicas": [1],
                                    "lastKnownElr": [3]}),
               ("ConfigRecord", {"resourceType": 2, "resourceName": "orders",
                                 "name": "retention.ms", "value": "1000"}),
               ("TopicRecord", {"name": "plain", "topicId": T2})]
    (part / "00000000000000000000.log").write_bytes(encode_batch(
        [(None, cm.encode_record(n, d, 2 if n == "PartitionRecord" else None), 1)
         for n, d in records]))
    status, out, err = run(str(logs), "--describe", "--metadata", str(part), "--topic", "orders")
    assert (status, err) == (0, "")
    assert out.splitlines() == [
        f"Topic: orders\tTopicId: {T1}\tPartitionCount: 2\tReplicationFactor: 2\t"
        "Configs: retention.ms=1000",
        "\tTopic: orders\tPartition: 0\tLeader: 2\tReplicas: 1,2,3\tIsr: 1,2\t"
        "Adding Replicas: 3\tRemoving Replicas: \tElr: \tLastKnownElr: ",
        "\tTopic: orders\tPartition: 1\tLeader: 2\tReplicas: 2,1\tIsr: 2\tElr: 1\t"
        "LastKnownElr: 3"]
    status, out, _ = run(str(logs), "--describe", "--metadata", str(part),
                         "--topics-with-overrides")
    assert out.splitlines() == [f"Topic: orders\tTopicId: {T1}\tPartitionCount: 2\t"
                                "ReplicationFactor: 2\tConfigs: retention.ms=1000"]
    status, out, _ = run(str(logs), "--describe", "--metadata", str(part), "--json")
    doc = json.loads(out)
    assert [t["topic"] for t in doc["topics"]] == ["orders", "plain"]
    assert doc["topics"][0]["partitions"][1]["elr"] == [1]
    assert doc["topics"][1]["partition_count"] == 0
    # the dir's own view is unchanged without --metadata; --metadata is for list/describe
    assert run(str(logs), "--list")[1] == "local-only\n"
    status, _, err = run(str(logs), "--delete", "--topic", "x", "--metadata", str(part))
    assert status == 2 and "Option \"[metadata]\" can't be used with option \"[delete]\"" in err
    status, _, err = run(str(logs), "--describe", "--metadata", str(part), "--topic", "nope")
    assert status == 1 and "Topic 'Optional[nope]' does not exist as expected" in err
