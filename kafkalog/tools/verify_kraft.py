"""``kafkalog verify DIR --metadata PATH``: log directories against a KRaft cluster's metadata.

A KRaft broker loads its log dirs against the metadata image (``BrokerMetadataPublisher``
starting ``LogManager``): a partition directory the image does not give this broker is a
*stray* and is renamed ``<topic>-<partition>.<id>-stray`` at startup, its data no longer
served (``LogManager.isStrayKraftReplica``, Kafka 4.2). This cross-check reads the image
(:func:`kafkalog.cluster.image.load_metadata`: a metadata log, snapshot, partition dir or a log
dir holding one) and compares each partition directory with it, read-only:

==========================  ====================================================================
``kraft_stray``             a broker with this metadata would move the directory aside as a
                            stray (warning): no topic id in ``partition.metadata``, a topic id
                            the image does not hold (deleted, or the topic recreated under
                            another id: named when so), no such partition, or replicas without
                            this broker
``kraft_leader_epoch``      ``leader-epoch-checkpoint`` holds an epoch greater than the
                            partition's leader epoch in the image (error: no controller issued
                            it)
``kraft_directory``         the image assigns this replica to another log directory than this
                            one's ``directory.id`` (warning, KIP-858: the broker reports the
                            move to the controller)
``kraft_replica_missing``   a replica the image places on this broker is in none of the given
                            log directories (warning; only when whole log dirs are checked)
``kraft_broker_id``         this broker's id is unknown (info: placement is not checked)
``kraft_metadata``          the metadata could not be read (error), or a record of it was a
                            fault (warning, file and offset)
==========================  ====================================================================

"This broker" is ``node.id`` in the log dir's ``meta.properties`` unless ``broker_id`` is
given.

Example
-------
>>> findings = cross_check_kraft(["/data/kafka-logs"], "/data/kafka-logs")   # doctest: +SKIP
>>> sorted({f.check for f in findings})                                       # doctest: +SKIP
['kraft_stray']
"""

from __future__ import annotations

import os
from pathlib import Path

from .. import files
from ..checkpoint import MetaProperties, PartitionMetadataFile
from ..cluster.image import MetadataImage, load_metadata
from ..cluster.model import LOST_DIR, MIGRATING_DIR, UNASSIGNED_DIR
from ..errors import KafkaLogError
from .partition_dirs import LogDirWalk, check_leader_epoch
from .verify import Finding

__all__ = ["cross_check_image", "cross_check_kraft"]

_RESERVED_DIRS = frozenset({MIGRATING_DIR, UNASSIGNED_DIR, LOST_DIR})
_STRAY = "a broker with this metadata moves it aside as a stray at startup"


def _directory_id(log_dir: Path) -> str | None:
    meta = log_dir / MetaProperties.FILE_NAME
    try:
        found = MetaProperties.read(meta).directory_id if meta.is_file() else None
    except KafkaLogError:
        return None                          # (reported by the walk as kraft_broker_id)
    return None if found is None else str(found)


def cross_check_image(paths: list[str | os.PathLike[str]], image: MetadataImage, *,
                      broker_id: int | None = None) -> list[Finding]:
    """Compare partition directories (or log dirs holding them) with a metadata image."""
    findings: list[Finding] = []
    walk = LogDirWalk(paths, "kraft", findings, broker_id)
    dir_ids: dict[Path, str | None] = {}
    for topic, pid, d, bid, log_dir in walk:
        if log_dir not in dir_ids:
            dir_ids[log_dir] = _directory_id(log_dir)
        _check_partition(image, topic, pid, d, bid, dir_ids[log_dir], findings)
    walk.report_missing(((name, pid, part.replicas)
                         for name, topic in sorted(image.topics_by_name.items())
                         for pid, part in sorted(topic.partitions.items())), "the metadata")
    return findings


def _check_partition(image: MetadataImage, topic: str, pid: int, d: Path, bid: int | None,
                     dir_id: str | None, findings: list[Finding]) -> None:
    meta = d / PartitionMetadataFile.FILE_NAME
    topic_id = None
    if meta.is_file():
        try:
            topic_id = str(PartitionMetadataFile(meta).read().topic_id)
        except KafkaLogError as e:
            findings.append(Finding("kraft_stray", "warning", str(meta),
                                    f"unreadable ({e}): {_STRAY} (no topic id)"))
            return
    if topic_id is None:
        findings.append(Finding("kraft_stray", "warning", str(d),
                                f"no topic id in partition.metadata: {_STRAY}"))
        return
    known = image.topics_by_id.get(topic_id)
    if known is None:
        named = image.topics_by_name.get(topic)
        why = (f"the topic {topic!r} now has id {named.id} (recreated)" if named is not None
               else f"no topic {topic!r} in the metadata (deleted?)")
        findings.append(Finding("kraft_stray", "warning", str(d),
                                f"topic id {topic_id} is not in the metadata, {why}: {_STRAY}",
                                expected=named.id if named is not None else None,
                                found=topic_id))
        return
    part = known.partitions.get(pid)
    if part is None:
        findings.append(Finding("kraft_stray", "warning", str(d),
                                f"topic {known.name!r} has no partition {pid} in the metadata "
                                f"(partitions {sorted(known.partitions)}): {_STRAY}"))
        return
    if bid is not None and bid not in part.replicas:
        findings.append(Finding(
            "kraft_stray", "warning", str(d),
            f"the replicas {part.replicas} do not include broker {bid}: {_STRAY}",
            expected=part.replicas, found=bid))
        return
    if bid is not None and dir_id is not None and len(part.directories) == len(part.replicas):
        assigned = part.directories[part.replicas.index(bid)]
        if assigned not in _RESERVED_DIRS and assigned != dir_id:
            findings.append(Finding(
                "kraft_directory", "warning", str(d),
                f"the metadata assigns this replica to log directory {assigned}, this log "
                f"dir is {dir_id}", expected=assigned, found=dir_id))
    check_leader_epoch(d / files.LEADER_EPOCH_CHECKPOINT_FILE, part.leader_epoch,
                       "kraft_leader_epoch", "the partition's leader epoch in the metadata",
                       findings)


def cross_check_kraft(paths: list[str | os.PathLike[str]], metadata: str | os.PathLike[str],
                      *, broker_id: int | None = None) -> list[Finding]:
    """Read the image at ``metadata`` and :func:`cross_check_image` ``paths`` against it.

    Unreadable metadata is one ``kraft_metadata`` error; each fault of the replay a warning.
    """
    try:
        loaded = load_metadata(metadata)
    except (OSError, KafkaLogError) as e:
        return [Finding("kraft_metadata", "error", str(metadata), str(e))]
    out = [Finding("kraft_metadata", "warning", str(metadata), f) for f in loaded.faults]
    return out + cross_check_image(paths, loaded.image, broker_id=broker_id)
