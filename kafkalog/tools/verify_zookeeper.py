"""``kafkalog verify DIR --zookeeper HOST:PORT[/chroot]``: log directories against ZooKeeper.

A ZooKeeper-mode broker trusts ZooKeeper for what its log directories should hold. This
cross-check reads the cluster (:func:`kafkalog.cluster.zookeeper.read_cluster`) and compares each
partition directory with it, read-only:

==========================  ====================================================================
``zk_topic_id``             ``partition.metadata`` names another topic id than the topic znode
                            (error: the broker refuses the log, ``InconsistentTopicIdException``;
                            the directory belongs to an earlier incarnation of the topic)
``zk_leader_epoch``         ``leader-epoch-checkpoint`` holds an epoch greater than the
                            partition state's ``leader_epoch`` (error: no controller ever issued
                            it; a lower one is normal, no data was written since)
``zk_topic_missing``        the topic has no ``/brokers/topics`` znode (warning: deleted topic)
``zk_partition_missing``    the topic znode has no such partition (warning)
``zk_replica_placement``    this broker is not among the partition's replicas (warning: a
                            stray replica the broker will not serve)
``zk_replica_missing``      a replica ZooKeeper places on this broker is in none of the given
                            log directories (warning; only when whole log dirs are checked)
``zk_broker_id``            this broker's id is unknown (info: placement is not checked)
``zk_unreachable``          ZooKeeper could not be read (error)
==========================  ====================================================================

"This broker" is ``broker.id``/``node.id`` in the log dir's ``meta.properties`` unless
``broker_id`` is given.

Example
-------
>>> findings = cross_check_zookeeper(["/data/kafka-logs"], "zk:2181/kafka")  # doctest: +SKIP
>>> [f.check for f in findings if f.severity == "error"]                     # doctest: +SKIP
['zk_topic_id']
"""

from __future__ import annotations

import os
from pathlib import Path

from .. import files
from ..checkpoint import PartitionMetadataFile
from ..cluster.model import ClusterModel
from ..errors import KafkaLogError
from .partition_dirs import LogDirWalk, check_leader_epoch
from .verify import Finding

__all__ = ["cross_check", "cross_check_zookeeper"]

def cross_check(paths: list[str | os.PathLike[str]], model: ClusterModel, *,
                broker_id: int | None = None) -> list[Finding]:
    """Compare partition directories (or log dirs holding them) with a ZooKeeper model."""
    findings: list[Finding] = []
    walk = LogDirWalk(paths, "zk", findings, broker_id)
    for topic, pid, d, bid, _ in walk:
        _check_partition(model, topic, pid, d, bid, findings)
    walk.report_missing(((topic, pid, part.replicas) for topic, pid, part in model.partitions()),
                        "ZooKeeper")
    return findings


def _check_partition(model: ClusterModel, topic: str, pid: int, d: Path, bid: int | None,
                     findings: list[Finding]) -> None:
    t = model.topics.get(topic)
    if t is None:
        findings.append(Finding("zk_topic_missing", "warning", str(d),
                                f"topic {topic!r} has no /brokers/topics znode (deleted?)"))
        return
    meta = d / PartitionMetadataFile.FILE_NAME
    if meta.is_file() and t.topic_id is not None:
        try:
            on_disk = str(PartitionMetadataFile(meta).read().topic_id)
        except KafkaLogError as e:
            findings.append(Finding("zk_topic_id", "warning", str(meta), f"unreadable: {e}"))
        else:
            if on_disk != t.topic_id:
                findings.append(Finding(
                    "zk_topic_id", "error", str(meta),
                    f"topic id differs from /brokers/topics/{topic}: the log belongs to "
                    "another incarnation of the topic", expected=t.topic_id, found=on_disk))
    part = t.partitions.get(pid)
    if part is None:
        findings.append(Finding("zk_partition_missing", "warning", str(d),
                                f"/brokers/topics/{topic} has no partition {pid} "
                                f"(partitions {sorted(t.partitions)})"))
        return
    if bid is not None and bid not in part.replicas and bid not in part.adding_replicas:
        findings.append(Finding(
            "zk_replica_placement", "warning", str(d),
            f"broker {bid} holds {topic}-{pid} but ZooKeeper assigns it to {part.replicas}",
            expected=part.replicas, found=bid))
    if part.isr:                                 # a state znode was read (its ISR is never empty)
        check_leader_epoch(d / files.LEADER_EPOCH_CHECKPOINT_FILE, part.leader_epoch,
                           "zk_leader_epoch", "the partition state's leader_epoch", findings)


def cross_check_zookeeper(paths: list[str | os.PathLike[str]], connect_string: str, *,
                          broker_id: int | None = None,
                          timeout_s: float = 10.0) -> list[Finding]:
    """Read the cluster from ZooKeeper and :func:`cross_check` ``paths`` against it.

    An unreachable ZooKeeper is one ``zk_unreachable`` error finding; znodes that do not
    decode are warnings.
    """
    from ..cluster.zookeeper import read_cluster

    try:
        model = read_cluster(connect_string, timeout_s=timeout_s)
    except KafkaLogError as e:
        return [Finding("zk_unreachable", "error", connect_string, str(e))]
    out = [Finding("zk_znode", "warning", connect_string, w) for w in model.warnings]
    return out + cross_check(paths, model, broker_id=broker_id)
