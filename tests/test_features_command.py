"""``kafkalog features`` (Kafka 4.2's ``kafka-features.sh``, offline): ``describe`` from the
node's registration and the metadata image, on Kafka 3.7's real files and synthetic logs."""

from __future__ import annotations

import io
from pathlib import Path

from kafkalog.admin import features_command
from kafkalog.cli import main as cli_main
from kafkalog.decoders import cluster_metadata as cm
from kafkalog.decoders import kraft_control
from kafkalog.records.builder import encode_batch, encode_control_batch

from .conftest import shared_fixture_path


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = features_command.main(list(argv), stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def test_describe_real_kafka_37_node():
    """LDI-POC's broker 1 (Kafka 3.7) registered metadata.version 1-19; Kafka 4.2's tool names
    level 1 UNKNOWN (below 3.3-IV3). Epoch: the offset the metadata image ends at."""
    root = shared_fixture_path("kafka-real", "LDI-POC")
    assert run(str(root), "describe") == (0, (
        "Feature: metadata.version\tSupportedMinVersion: UNKNOWN 1\tSupportedMaxVersion: "
        "3.7-IV4\tFinalizedVersionLevel: 3.7-IV4\tEpoch: 4928\n"), "")
    status, _, err = run(str(root), "describe", "--node-id", "7")
    assert status == 1 and "node 7 is not registered in the metadata" in err
    assert run(str(root), "describe", "--node-id", "-1")[2] == (
        "Error: Invalid node id -1: must be non-negative.\n")


def test_describe_finalized_levels_and_kraft_version(tmp_path: Path):
    """Features sorted by name; finalized levels from the image (0 when not finalized),
    kraft.version from the KRaft version control record; a controller's registration."""
    part = tmp_path / "logs" / "__cluster_metadata-0"
    part.mkdir(parents=True)
    feats = [{"name": n, "minSupportedVersion": lo, "maxSupportedVersion": hi}
             for n, lo, hi in (("transaction.version", 0, 2), ("metadata.version", 7, 29),
                               ("kraft.version", 0, 1), ("group.version", 0, 1))]
    records = [("FeatureLevelRecord", {"name": "metadata.version", "featureLevel": 21}),
               ("FeatureLevelRecord", {"name": "group.version", "featureLevel": 1}),
               ("RegisterControllerRecord", {
                   "controllerId": 3, "incarnationId": "AAAAAAAAAAAAAAAAAAAAAQ",
                   "zkMigrationReady": False, "endPoints": [], "features": feats})]
    data = encode_control_batch(kraft_control.KRAFT_VERSION, value=kraft_control.encode(
        "KRAFT_VERSION", {"version": 0, "kRaftVersion": 1}), base_offset=0)
    data += encode_batch([(None, cm.encode_record(n, d), 1) for n, d in records],
                         base_offset=1)
    (part / "00000000000000000000.log").write_bytes(data)
    status, out, err = run(str(tmp_path / "logs"), "describe", "--node-id", "3")
    assert (status, err) == (0, "")
    assert out.splitlines() == [
        "Feature: group.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\t"
        "FinalizedVersionLevel: 1\tEpoch: 3",
        "Feature: kraft.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\t"
        "FinalizedVersionLevel: 1\tEpoch: 3",
        "Feature: metadata.version\tSupportedMinVersion: 3.3-IV3\tSupportedMaxVersion: "
        "4.2-IV1\tFinalizedVersionLevel: 3.9-IV0\tEpoch: 3",
        "Feature: transaction.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 2\t"
        "FinalizedVersionLevel: 0\tEpoch: 3"]
    # --metadata names the metadata when the log dir does not hold it
    other = tmp_path / "broker"
    other.mkdir()
    assert run(str(other), "--metadata", str(part), "describe", "--node-id", "3")[1] == out


def test_other_subcommands_and_refusals(tmp_path: Path):
    root = shared_fixture_path("kafka-real", "LDI-POC")
    status, out, _ = run(str(root), "version-mapping", "--release-version", "3.9-IV0")
    assert status == 0 and out.startswith("metadata.version=21 (3.9-IV0)\n")
    status, out, _ = run(str(root), "feature-dependencies", "--feature", "group.version=1")
    assert status == 0 and "group.version=1" in out
    for write in ("upgrade", "downgrade", "disable"):
        status, out, err = run(str(root), write, "--feature", "group.version=1")
        assert (status, out) == (1, "") and "controller quorum" in err
    assert run(str(tmp_path), "describe")[2].endswith("no meta.properties: give --node-id\n")
    assert run()[0] == 2
    assert cli_main(["features", str(root), "describe"]) == 0
