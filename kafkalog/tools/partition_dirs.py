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
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .. import files
from ..checkpoint import LeaderEpochCheckpointFile, MetaProperties
from ..errors import KafkaLogError

if TYPE_CHECKING:
    from .verify import Finding

__all__ = ["partition_dirs", "is_partition_dir", "topic_partition", "node_id", "LogDirWalk",
           "check_leader_epoch"]

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
    """A partition directory (:func:`kafkalog.files.is_partition_dir`: not a log dir, and
    holding a segment or one of the partition's own files) whose name parses."""
    return topic_partition(p) is not None and files.is_partition_dir(p)


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


@dataclass
class LogDirWalk:
    """The partition directories of ``paths`` with the broker each belongs to, as a
    cross-check against a cluster's view walks them (``prefix``: its checks' name prefix).

    Iterating yields ``(topic, partition, directory, broker id or None, log dir)``; meanwhile
    ``held`` collects each broker's partitions and ``whole_dirs`` the log dirs checked whole
    (only those can tell a replica is missing). A broker id comes from ``broker_id`` or the log
    dir's ``meta.properties``; an unknown one is an info finding.
    """

    paths: Iterable[str | os.PathLike[str]]
    prefix: str
    findings: list[Finding]
    broker_id: int | None = None
    held: dict[int, set[tuple[str, int]]] = field(default_factory=dict)
    whole_dirs: dict[int, list[str]] = field(default_factory=dict)

    def __iter__(self) -> Iterator[tuple[str, int, Path, int | None, Path]]:
        from .verify import Finding

        for raw in self.paths:
            path = Path(raw)
            is_log_dir = not is_partition_dir(path)
            log_dir = path if is_log_dir else path.parent
            bid, problem = node_id(log_dir)
            if problem is not None:
                self.findings.append(Finding(f"{self.prefix}_broker_id", "warning",
                                             str(log_dir / MetaProperties.FILE_NAME), problem))
            if self.broker_id is not None:
                bid = self.broker_id
            if bid is None:
                self.findings.append(Finding(
                    f"{self.prefix}_broker_id", "info", str(log_dir),
                    "broker id unknown (no meta.properties and no --broker-id): replica "
                    "placement not checked"))
            elif is_log_dir:
                self.whole_dirs.setdefault(bid, []).append(str(path))
            for topic, pid, d in partition_dirs(path):
                if bid is not None:
                    self.held.setdefault(bid, set()).add((topic, pid))
                yield topic, pid, d, bid, log_dir

    def missing(self, placed: Callable[[int], Iterable[tuple[str, int, list[int]]]]
                ) -> Iterator[tuple[str, int, int, list[int], str]]:
        """``(topic, partition, broker, replicas, log dirs)`` of each replica ``placed(broker)``
        names that no directory of that broker's whole log dirs holds."""
        for bid, dirs in self.whole_dirs.items():
            for topic, pid, replicas in placed(bid):
                if (topic, pid) not in self.held.get(bid, set()):
                    yield topic, pid, bid, replicas, ", ".join(dirs)

    def report_missing(self, partitions: Iterable[tuple[str, int, list[int]]],
                       source: str) -> None:
        """A ``<prefix>_replica_missing`` warning for each replica of ``partitions``
        (``(topic, partition, replicas)`` as the cluster's ``source`` places them) that the
        whole log dirs of its broker lack."""
        from .verify import Finding

        placed: dict[int, list[tuple[str, int, list[int]]]] = {}
        for topic, pid, replicas in partitions:
            for b in replicas:
                placed.setdefault(b, []).append((topic, pid, replicas))
        for topic, pid, bid, replicas, dirs in self.missing(lambda b: placed.get(b, [])):
            self.findings.append(Finding(
                f"{self.prefix}_replica_missing", "warning", dirs,
                f"{source} places {topic}-{pid} on broker {bid} (replicas {replicas}) but no "
                "such directory was found", expected=f"{files.log_dir_name(topic, pid)}/",
                found=None))


def check_leader_epoch(ckpt: Path, leader_epoch: int, check: str, what: str,
                       findings: list[Finding]) -> None:
    """A ``leader-epoch-checkpoint`` whose last epoch is above ``leader_epoch`` (``what``
    names it) is an error: no controller issued that epoch; an unreadable one a warning."""
    from .verify import Finding

    if not ckpt.is_file():
        return
    try:
        entries = LeaderEpochCheckpointFile(ckpt).read()
    except KafkaLogError as e:
        findings.append(Finding(check, "warning", str(ckpt), f"unreadable: {e}"))
        return
    if entries and entries[-1].epoch > leader_epoch:
        findings.append(Finding(
            check, "error", str(ckpt),
            f"leader epoch {entries[-1].epoch} (from offset {entries[-1].start_offset}) is "
            f"greater than {what} {leader_epoch}",
            offset=entries[-1].start_offset, expected=f"<= {leader_epoch}",
            found=entries[-1].epoch))
