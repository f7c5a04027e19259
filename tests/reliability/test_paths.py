"""Topic names never become paths outside the root (issue 16): ``..``, absolute paths, ``/``,
``.``, empty, 250 characters, NUL, non-ASCII and a ``<topic>-0`` symlink pointing out of the
root, through every path maker (``files.partition_dir``, ``LogDir.create_topic``, the Spark
writer's tasks, its ``topic`` option and its commit): refused with ``InvalidTopicError`` naming
Kafka's reason, nothing created outside the root. The real ``df.write`` case is in
tests/spark/test_spark_source.py. Figures: ``python tools/reliability.py paths``."""

from __future__ import annotations

import pytest

from kafkalog import files
from kafkalog.errors import InvalidTopicError
from kafkalog.log_dir import LogDir
from tests.reliability.paths import HOSTILE, run_paths


def test_every_path_maker_refuses_every_hostile_name(tmp_path):
    res = run_paths(tmp_path)
    assert res["failures"] == [], res["failures"][:3]
    assert res["cases"] == res["refused"] == 5 * len(HOSTILE)
    assert res["created_outside_root"] == 0
    reasons = {c["name"]: c["message"] for c in res["all"] if c["maker"] == "LogDir.create_topic"}
    assert "contains one or more characters other than ASCII" in reasons["parent"]
    assert "longer than the max allowed length 249" in reasons["250 characters"]
    assert "'..' is not allowed" in reasons["dotdot"]
    assert "outside the root" in reasons["symlink out of the root"]


def test_kafka_rule_boundaries(tmp_path):
    for ok in ("a", "x" * 249, "__consumer_offsets", "orders.v1-EU_2", "..."):
        assert files.partition_dir(tmp_path, ok, 7).name == f"{ok}-7"
    for bad_partition in (-1, 2**31):
        with pytest.raises(InvalidTopicError, match="partition"):
            files.partition_dir(tmp_path, "t", bad_partition)
    with pytest.raises(TypeError):
        files.partition_dir(tmp_path, "t", True)
    # a symlinked root is resolved first: its partitions stay inside the real directory
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "alias").symlink_to(real, target_is_directory=True)
    assert files.partition_dir(tmp_path / "alias", "t", 0) == real.resolve() / "t-0"
    # a symlink to a sibling inside the root stays inside: allowed
    (real / "other-0").mkdir()
    (real / "t-1").symlink_to(real / "other-0", target_is_directory=True)
    assert files.partition_dir(real, "t", 1) == real.resolve() / "t-1"


def test_log_dir_skips_a_partition_symlinked_out_of_the_root(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    with LogDir.open(root) as d:
        d.create_topic("t", 1)
    outside.mkdir()
    (root / "evil-0").symlink_to(outside, target_is_directory=True)
    with LogDir.open(root) as d:
        assert d.partitions() == [("t", 0)]
        assert any("evil-0" in w and "outside the root" in w for w in d.load_warnings)
    assert list(outside.iterdir()) == []
