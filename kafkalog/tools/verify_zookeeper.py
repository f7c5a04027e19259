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
from ..checkpoint import LeaderEpochCheckpointFile, MetaProperties, PartitionMetadataFile
from ..cluster.model import ClusterModel
from ..errors import KafkaLogError
from .partition_dirs import is_partition_dir, node_id, partition_dirs
from .verify import Finding

__all__ = ["cross_check", "cross_check_zookeeper"]

def _broker_id(log_dir: Path, findings: list[Finding]) -> int | None:
    bid, problem = node_id(log_dir)
    if problem is not None:
        findings.append(Finding("zk_broker_id", "warning",
                                str(log_dir / MetaProperties.FILE_NAME), problem))
    return bid


def cross_check(paths: list[str | os.PathLike[str]], model: ClusterModel, *,
                broker_id: int | None = None) -> list[Finding]:
    """Compare partition directories (or log dirs holding them) with a ZooKeeper model."""
    findings: list[Finding] = []
    held: dict[int, set[tuple[str, int]]] = {}          # broker -> partitions found on disk
    whole_dirs: dict[int, list[str]] = {}               # broker -> log dirs checked whole
    for raw in paths:
        path = Path(raw)
        is_log_dir = not is_partition_dir(path)
        log_dir = path if is_log_dir else path.parent
        bid = broker_id if broker_id is not None else _broker_id(log_dir, findings)
        if bid is None:
            findings.append(Finding("zk_broker_id", "info", str(log_dir),
                                    "broker id unknown (no meta.properties and no --broker-id):"
                                    " replica placement not checked"))
        elif is_log_dir:
            whole_dirs.setdefault(bid, []).append(str(path))
        for topic, pid, d in partition_dirs(path):
            if bid is not None:
                held.setdefault(bid, set()).add((topic, pid))
            _check_partition(model, topic, pid, d, bid, findings)
    for bid, dirs in whole_dirs.items():
        for topic, pid, part in model.partitions():
            if (topic, pid) in held.get(bid, set()):
                continue
            if bid in part.replicas:
                findings.append(Finding(
                    "zk_replica_missing", "warning", ", ".join(dirs),
                    f"ZooKeeper places {topic}-{pid} on broker {bid} (replicas "
                    f"{part.replicas}) but no such directory was found",
                    expected=f"{files.log_dir_name(topic, pid)}/", found=None))
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
    ckpt = d / files.LEADER_EPOCH_CHECKPOINT_FILE
    if ckpt.is_file() and part.isr:              # a state znode was read (its ISR is never empty)
        try:
            entries = LeaderEpochCheckpointFile(ckpt).read()
        except KafkaLogError as e:
            findings.append(Finding("zk_leader_epoch", "warning", str(ckpt),
                                    f"unreadable: {e}"))
            return
        if entries and entries[-1].epoch > part.leader_epoch:
            findings.append(Finding(
                "zk_leader_epoch", "error", str(ckpt),
                f"leader epoch {entries[-1].epoch} (from offset {entries[-1].start_offset}) is "
                f"greater than the partition state's leader_epoch {part.leader_epoch}",
                offset=entries[-1].start_offset, expected=f"<= {part.leader_epoch}",
                found=entries[-1].epoch))


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
