"""``kafkalog compare-replicas --zookeeper``: the leader from a real ZooKeeper (Debian's
``zookeeper`` package, started on 127.0.0.1), as a ZooKeeper-mode controller left the
partition state znode."""

from __future__ import annotations

import io
import json

import pytest

from kafkalog.replication import command
from kafkalog.replication.compare import compare_replicas

from ..test_cluster_zookeeper import Cluster, cluster, zookeeper  # noqa: F401 - fixtures
from .test_compare import _unclean


def _state(c: Cluster, leader: int, isr: list[int], replicas: list[int]) -> None:
    c.put("/brokers/topics/t", json.dumps({"version": 1, "partitions": {"0": replicas}}))
    c.put("/brokers/topics/t/partitions/0/state", json.dumps(
        {"controller_epoch": 7, "leader": leader, "version": 1, "leader_epoch": 4,
         "isr": isr}))


def test_zookeepers_leader_leads(tmp_path, cluster):  # noqa: F811
    _unclean(tmp_path)
    _state(cluster, 1, [1], [1, 2])
    [r] = compare_replicas([tmp_path / "b1", tmp_path / "b2"], zookeeper=cluster.connect)
    assert (r.leader, r.problems) == ("1", [])
    assert r.leader_reason == "ZooKeeper's leader (leader epoch 4, ISR [1])"
    assert r.candidates[0].leader_epoch == 5
    [f] = r.candidates[0].followers
    assert (f.replica, f.outcome.truncated_to, f.discarded) == ("2", 100, 30)


@pytest.mark.parametrize(("isr", "elected"), [([3, 2], "2"), ([3], "1")])
def test_a_leader_not_given_is_replaced_by_kafkas_election(tmp_path, cluster, isr,  # noqa: F811
                                                            elected):
    _unclean(tmp_path)
    _state(cluster, 3, isr, [3, 1, 2])
    out = io.StringIO()
    command.main([str(tmp_path / "b1"), str(tmp_path / "b2"), "--zookeeper", cluster.connect],
                 stdout=out)
    text = out.getvalue()
    assert f"Leader: {elected} (" in text
    assert "Problem: ZooKeeper's leader 3 (leader epoch 4) is not among the replicas " \
           "given" in text


def test_unreachable_zookeeper_and_exclusive_options(tmp_path):
    _unclean(tmp_path)
    err = io.StringIO()
    assert command.main([str(tmp_path / "b1"), str(tmp_path / "b2"), "--zookeeper",
                         "127.0.0.1:1"], stdout=io.StringIO(), stderr=err) == 1
    assert "kafkalog compare-replicas:" in err.getvalue()
    assert command.main([str(tmp_path / "b1"), "--zookeeper", "x:1", "--metadata", "m"],
                        stdout=io.StringIO(), stderr=io.StringIO()) == 2
