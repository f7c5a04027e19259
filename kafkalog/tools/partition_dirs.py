"""The partition directories a cross-check of log dirs against a cluster's metadata reads.

``partition_dirs(path)``: ``path`` itself when it is a partition directory, else the partition
directories it holds (a log dir): live ones only (renamed ``-delete``, ``-future`` and
``-stray`` directories are not the broker's logs) and never KRaft's ``__cluster_metadata``.
``node_id(log_dir)``: the broker's id from the log dir's ``meta.properties``.

Example
-------
>>> partition_dirs("/data/kafka-logs")            # doctest: +SKIP
[('orders', 0, PosixPath('/data/kafka-logs/orders-0'))]
"""

from __future__ import annotations

import os
from pathlib import Path

from .. import files
from ..checkpoint import MetaProperties, PartitionMetadataFile
from ..errors import KafkaLogError

__all__ = ["partition_dirs", "is_partition_dir", "topic_partition", "node_id"]

_INTERNAL_KRAFT = "__cluster_metadata"


def topic_partition(p: Path) -> tuple[str, int] | None:
    """``(topic, partition)`` of a live partition directory name (renamed delete, future and
    stray directories excluded), else ``None``."""
    if not p.is_dir() or files.is_delete_dir(p) or files.is_future_dir(p) or files.is_stray_dir(p):
        return None
    try:
        return files.parse_topic_partition_name(p)
    except ValueError:
        return None


def is_partition_dir(p: Path) -> bool:
    """A partition directory: its name parses, it is not a log dir (no ``meta.properties``)
    and it holds a segment or one of the partition's own files."""
    if topic_partition(p) is None or (p / MetaProperties.FILE_NAME).exists():
        return False
    own = (files.LEADER_EPOCH_CHECKPOINT_FILE, PartitionMetadataFile.FILE_NAME)
    return any(files.is_log_file(c) or c.name in own for c in p.iterdir())


def partition_dirs(path: str | os.PathLike[str]) -> list[tuple[str, int, Path]]:
    """``(topic, partition, dir)`` for ``path`` if it is a partition directory, else for its
    partition subdirectories (KRaft's ``__cluster_metadata`` excluded)."""
    path = Path(path)
    if is_partition_dir(path):
        tp = topic_partition(path)
        return [(tp[0], tp[1], path)] if tp else []
    out = []
    for child in sorted(path.iterdir()):
        tp = topic_partition(child)
        if tp is not None and tp[0] != _INTERNAL_KRAFT:
            out.append((tp[0], tp[1], child))
    return out


def node_id(log_dir: Path) -> tuple[int | None, str | None]:
    """``(broker id, None)`` from ``meta.properties``; ``(None, None)`` without the file;
    ``(None, problem)`` when it cannot be read."""
    meta = log_dir / MetaProperties.FILE_NAME
    if not meta.is_file():
        return None, None
    try:
        return MetaProperties.read(meta).node_id, None
    except KafkaLogError as e:
        return None, f"unreadable: {e}"
