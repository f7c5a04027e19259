"""``kafkalog verify --metadata``: partition directories against a KRaft metadata image
(``kafkalog.tools.verify_kraft``, Kafka 4.2's ``LogManager.isStrayKraftReplica``)."""

from __future__ import annotations

import io
import json
import sys
from contextlib import redirect_stdout
from pathlib import Path

from kafkalog import LogDir
from kafkalog.checkpoint import (
    EpochEntry,
    LeaderEpochCheckpointFile,
    MetaProperties,
    PartitionMetadataFile,
)
from kafkalog.cli import main as cli_main
from kafkalog.decoders import cluster_metadata as cm
from kafkalog.records.builder import encode_batch
from kafkalog.tools.verify_kraft import cross_check_kraft

from .conftest import shared_fixture_path

OTHER_DIR = "JsnDDNVyTL289kYk6sPzig"


def _topic(name: str, tid: str, replicas: list[int], dirs: list[str] | None = None,
           leader_epoch: int = 0, partitions: int = 1) -> list[tuple[str, dict]]:
    out = [("TopicRecord", {"name": name, "topicId": tid})]
    for p in range(partitions):
        out.append(("PartitionRecord", {
            "partitionId": p, "topicId": tid, "replicas": replicas, "isr": replicas,
            "leader": replicas[0], "leaderEpoch": leader_epoch, "partitionEpoch": 0,
            "directories": dirs or []}))
    return out


def _write_metadata(root: Path, records: list[tuple[str, dict]]) -> Path:
    part = root / "__cluster_metadata-0"
    part.mkdir(parents=True)
    (part / "00000000000000000000.log").write_bytes(encode_batch(
        [(None, cm.encode_record(n, d, 1 if n == "PartitionRecord" else None), 1000)
         for n, d in records], partition_leader_epoch=1))   # (PartitionRecord v1: directories)
    return part


def test_strays_epochs_directories_and_missing_replicas(tmp_path):
    root = tmp_path / "logs"
    with LogDir.open(root) as d:
        ids = {t: str(d.create_topic(t, 1)) for t in ("ok", "recreated", "deleted", "moved",
                                                        "epoch", "elsewhere", "noid")}
    meta = MetaProperties.read(root / "meta.properties")
    here = str(meta.directory_id)
    assert meta.node_id == 1
    (root / "noid-0" / PartitionMetadataFile.FILE_NAME).unlink()
    LeaderEpochCheckpointFile(root / "epoch-0" / "leader-epoch-checkpoint").write(
        [EpochEntry(9, 0)])
    records = [("FeatureLevelRecord", {"name": "metadata.version", "featureLevel": 21})]
    records += _topic("ok", ids["ok"], [1], [here], leader_epoch=3)
    records += _topic("recreated", "AAAAAAAAAAAAAAAAAAAAAQ", [1])
    records += _topic("moved", ids["moved"], [2, 3])
    records += _topic("epoch", ids["epoch"], [1], leader_epoch=3)
    records += _topic("elsewhere", ids["elsewhere"], [1], [OTHER_DIR])
    records += _topic("noid", ids["noid"], [1])
    records += _topic("absent", "AAAAAAAAAAAAAAAAAAAAAg", [1, 2], partitions=2)
    records += [("FenceBrokerRecord", {"id": 5, "epoch": 1})]          # a fault of the log
    metadata = _write_metadata(tmp_path / "controller", records)

    findings = cross_check_kraft([root], metadata)
    by = {(f.check, Path(f.file).name): f for f in findings}
    assert set(by) == {
        ("kraft_metadata", "__cluster_metadata-0"),
        ("kraft_stray", "recreated-0"), ("kraft_stray", "deleted-0"),
        ("kraft_stray", "moved-0"), ("kraft_stray", "noid-0"),
        ("kraft_leader_epoch", "leader-epoch-checkpoint"),
        ("kraft_directory", "elsewhere-0"),
        ("kraft_replica_missing", "logs")}
    assert "Tried to fence broker 5" in by[("kraft_metadata", "__cluster_metadata-0")].message
    assert "now has id AAAAAAAAAAAAAAAAAAAAAQ (recreated)" in by[("kraft_stray",
                                                                   "recreated-0")].message
    assert "no topic 'deleted' in the metadata" in by[("kraft_stray", "deleted-0")].message
    assert "do not include broker 1" in by[("kraft_stray", "moved-0")].message
    assert "no topic id in partition.metadata" in by[("kraft_stray", "noid-0")].message
    epoch = by[("kraft_leader_epoch", "leader-epoch-checkpoint")]
    assert (epoch.severity, epoch.found, epoch.expected) == ("error", 9, "<= 3")
    assert by[("kraft_directory", "elsewhere-0")].expected == OTHER_DIR
    missing = [f.message for f in findings if f.check == "kraft_replica_missing"]
    assert len(missing) == 2 and all("absent-" in m for m in missing)
    # the command: the findings in the report, exit 1 for the error
    out = io.StringIO()
    with redirect_stdout(out):
        status = cli_main(["verify", str(root), "--metadata", str(tmp_path / "controller"),
                           "--json"])
    assert status == 1
    report = json.loads(out.getvalue())
    assert {f["check"] for f in report["log_dir_findings"]} >= {"kraft_stray",
                                                                 "kraft_leader_epoch"}


def test_another_broker_id_and_unreadable_metadata(tmp_path):
    root = tmp_path / "logs"
    with LogDir.open(root) as d:
        tid = str(d.create_topic("t", 1))
    metadata = _write_metadata(tmp_path / "c", _topic("t", tid, [1]))
    assert cross_check_kraft([root], metadata) == []
    strays = cross_check_kraft([root], metadata, broker_id=2)
    assert [f.check for f in strays] == ["kraft_stray"]
    bad = cross_check_kraft([root], tmp_path / "nothing")
    assert [(f.check, f.severity) for f in bad] == [("kraft_metadata", "error")]


def test_real_kafka_37_log_dir_against_its_own_metadata():
    """Kafka 3.7's LDI-POC: the two partition directories copied (TestTopicPatient-0 and
    __consumer_offsets-6) are what the broker's metadata gives it, in this log directory: no
    stray, epoch or directory finding; the other 52 partitions it was given are missing."""
    from kafkalog.cluster.image import load_metadata_image

    root = shared_fixture_path("kafka-real", "LDI-POC")
    findings = cross_check_kraft([root], root)
    assert {f.check for f in findings} == {"kraft_replica_missing"}
    image = load_metadata_image(root)
    expected = {f"{t}-{p}" for t, topic in image.topics_by_name.items()
                for p in topic.partitions} - {"TestTopicPatient-0", "__consumer_offsets-6"}
    assert {f.expected.rstrip("/") for f in findings} == expected and len(expected) == 52


def test_cli_help_names_metadata(capsys):
    try:
        cli_main(["verify", "--help"])
    except SystemExit:
        pass
    out = capsys.readouterr().out
    assert "--metadata PATH" in out
    assert sys.modules["kafkalog.tools.verify"] is not None
