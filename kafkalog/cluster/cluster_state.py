"""``kafkalog cluster-state`` as it was first published: KRaft metadata as ZooKeeper znodes.

Kept for existing callers. The work is done by :mod:`kafkalog.cluster.kraft` (replay),
:mod:`kafkalog.cluster.znodes` (the layout) and :mod:`kafkalog.cluster.command` (the CLI, which
also reads a real ZooKeeper and runs what-if elections).

Example
-------
>>> import kafkalog.cluster.cluster_state as cs
>>> state = cs.build_state("/path/to/log.dirs")       # doctest: +SKIP
>>> state.znodes()["/brokers/topics/orders"]["partitions"]   # doctest: +SKIP
{'0': [1, 2], '1': [2, 1]}
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from .command import main
from .kraft import read_log_dir
from .model import SECURITY_PROTOCOLS, ClusterModel
from .znodes import ZnodeFormat, render

__all__ = ["ClusterState", "build", "build_state", "main", "SECURITY_PROTOCOLS"]


@dataclass
class ClusterState:
    """A replayed log directory: the :class:`ClusterModel` and its znode view."""

    model: ClusterModel

    @property
    def warnings(self) -> list[str]:
        """Records or files that could not be read (file, position/offset, what was wrong)."""
        return self.model.warnings

    @property
    def notes(self) -> list[str]:
        """Informational messages (e.g. no metadata log)."""
        return self.model.notes

    def znodes(self, fmt: ZnodeFormat | None = None) -> dict[str, Any]:
        """The cluster as ZooKeeper znodes: ``{path: decoded znode JSON}``, paths sorted."""
        return render(self.model, fmt)


def build_state(logdir: str | os.PathLike[str]) -> ClusterState:
    """Replay ``logdir``'s metadata log and consumer-offsets partitions
    (``FileNotFoundError`` when ``logdir`` is not a directory)."""
    return ClusterState(read_log_dir(logdir))


def build(logdir: str | os.PathLike[str]) -> dict[str, Any]:
    """The cluster in ``logdir`` as ZooKeeper znodes (Kafka 3.9's shapes)."""
    return build_state(logdir).znodes()
