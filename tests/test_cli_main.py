"""The `kafkalog` entry point dispatches every subcommand (cluster-state, demo) via main(argv)."""

from __future__ import annotations

import json
import subprocess
import sys

from kafkalog.cli import main
from tests.conftest import shared_fixture_path


def test_cluster_state_subcommand_on_real_kraft_dir(capsys) -> None:
    root = shared_fixture_path("kafka-real", "LDI-POC")
    assert main(["cluster-state", str(root), "--compact"]) == 0
    znodes = json.loads(capsys.readouterr().out)
    # node.id=1 in LDI-POC/meta.properties; TestTopicPatient-0 is a partition directory there.
    # The log ends with broker 1 fenced (no /brokers/ids znode); before offset 4871 it was up.
    assert "/brokers/ids/1" not in znodes
    assert znodes["/brokers/topics/TestTopicPatient"]["partitions"]["0"] == [1]
    assert main(["cluster-state", str(root), "--compact", "--at-offset", "4871"]) == 0
    assert "/brokers/ids/1" in json.loads(capsys.readouterr().out)


def test_cluster_state_usage_error() -> None:
    assert main(["cluster-state"]) == 2


def test_no_command_is_usage_error(capsys) -> None:
    assert main([]) == 2
    assert "cluster-state" in capsys.readouterr().err


def test_demo_without_spark(tmp_path, capsys) -> None:
    rc = main(["demo", str(tmp_path / "demo"), "--records", "3000", "--no-spark"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "wrote 3000 records to 3 partitions" in out
    assert "demo: OK" in out
    # the tree the demo wrote is a real log.dirs layout
    assert sorted(p.name for p in (tmp_path / "demo").iterdir() if p.is_dir()) == [
        "orders-0", "orders-1", "payments-0"]


def test_python_dash_m_runs() -> None:
    proc = subprocess.run([sys.executable, "-m", "kafkalog", "--help"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0
    assert "dump-segments" in proc.stdout
