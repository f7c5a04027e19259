"""Consumer groups: the offsets store, Kafka's assignors and the classic rebalance protocol.

* :func:`offsets_partition` - a group's ``__consumer_offsets`` partition.
* :class:`GroupMetadataManager` - committed offsets and group metadata in ``__consumer_offsets``
  of a :class:`~kafkalog.LogDir`, byte for byte as Kafka writes them; rebuilt by replay.
* :func:`assign` - Kafka's partition assignors (``range``, ``roundrobin``, ``sticky``,
  ``cooperative-sticky``, and the KIP-848 server-side ``uniform`` and ``server-range``).
* :class:`GroupCoordinator` - a sans-IO classic group coordinator (JoinGroup, SyncGroup,
  Heartbeat, LeaveGroup, offsets, ...) driven by method calls and an injected clock.

Submodules are imported on first use.

>>> from kafkalog.groups import offsets_partition, assign
>>> offsets_partition("DEVSmileCDR")
6
>>> assign("range", {"c1": ["t"], "c2": ["t"]}, {"t": 3})
{'c1': [('t', 0), ('t', 1)], 'c2': [('t', 2)]}
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "offsets_partition",
    "GroupMetadataManager",
    "assign",
    "STRATEGIES",
    "GroupCoordinator",
    "GroupConfig",
    "ErrorCode",
    "OffsetAndMetadata",
    "GroupMetadata",
    "MemberMetadata",
    "GroupError",
    "GroupIdNotFoundError",
    "NonEmptyGroupError",
    "NotCoordinatorError",
    "AssignmentError",
]

_LAZY = {
    "offsets_partition": "kafkalog.groups.partitioner",
    "GroupMetadataManager": "kafkalog.groups.metadata_manager",
    "assign": "kafkalog.groups.assignors",
    "STRATEGIES": "kafkalog.groups.assignors",
    "GroupCoordinator": "kafkalog.groups.coordinator",
    "GroupConfig": "kafkalog.groups.config",
    "ErrorCode": "kafkalog.groups.error_codes",
    "OffsetAndMetadata": "kafkalog.groups.records",
    "GroupMetadata": "kafkalog.groups.records",
    "MemberMetadata": "kafkalog.groups.records",
    "GroupError": "kafkalog.groups.errors",
    "GroupIdNotFoundError": "kafkalog.groups.errors",
    "NonEmptyGroupError": "kafkalog.groups.errors",
    "NotCoordinatorError": "kafkalog.groups.errors",
    "AssignmentError": "kafkalog.groups.errors",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'kafkalog.groups' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
