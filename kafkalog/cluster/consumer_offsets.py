"""Committed consumer offsets from ``__consumer_offsets-N`` partitions, for the cluster model.

The group coordinator's load rules (``GroupMetadataManager.loadGroupsAndOffsets``, 3.x): the
latest OffsetCommit for a (group, topic, partition) wins, a tombstone deletes it, and a
transactional commit applies only when its producer's COMMIT marker follows (an ABORT drops
it). The result is ``ClusterModel.consumer_offsets`` (``group -> topic -> partition ->
offset``), which :mod:`kafkalog.cluster.znodes` renders as the old consumers' znodes
``/consumers/<group>/offsets/<topic>/<partition>``.

Example
-------
>>> from kafkalog.cluster.model import ClusterModel
>>> model = ClusterModel()
>>> for d in offsets_dirs("/path/to/log.dirs"):   # doctest: +SKIP
...     replay_offsets(d, model)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..decoders import offsets
from ..errors import KafkaLogError
from .log_reading import iter_batches_or_warn, segments
from .model import ClusterModel

__all__ = ["OFFSETS_PREFIX", "offsets_dirs", "replay_offsets"]

OFFSETS_PREFIX = "__consumer_offsets-"


def offsets_dirs(logdir: str | os.PathLike[str]) -> list[Path]:
    """The ``__consumer_offsets-N`` partition directories of a log dir, by partition."""
    root = Path(logdir)
    dirs = [p for p in root.iterdir()
            if p.is_dir() and p.name.startswith(OFFSETS_PREFIX)
            and p.name[len(OFFSETS_PREFIX):].isdigit()]
    return sorted(dirs, key=lambda p: int(p.name[len(OFFSETS_PREFIX):]))


def replay_offsets(directory: str | os.PathLike[str], model: ClusterModel) -> None:
    """Load the committed offsets of one ``__consumer_offsets`` partition into ``model``.

    A corrupt batch ends the file with a warning; an undecodable record is skipped with one.
    """
    pending: dict[int, list[tuple[Any, ...]]] = {}      # producer id -> uncommitted commits
    for path in segments(Path(directory)):
        for batch in iter_batches_or_warn(path, model.warnings):
            if batch.is_control:
                try:
                    marker = batch.end_txn_marker()
                except KafkaLogError as e:
                    model.warnings.append(f"{path}: {e}")
                    continue
                if marker is not None:
                    ops = pending.pop(batch.producer_id, [])
                    if marker.type == "COMMIT":
                        for op in ops:
                            _apply_offset(model, *op)
                continue
            for rec in batch:
                try:
                    obj = offsets.decode_record_obj(rec.key, rec.value)
                except KafkaLogError as e:
                    model.warnings.append(f"{path}: offset {rec.offset}: {e}")
                    continue
                if obj["type"] not in offsets.OFFSET_COMMIT_TYPES:
                    continue
                k = obj["key"]
                op = (k["group"], k["topic"], k["partition"],
                      None if obj["value"] is None else obj["value"]["offset"])
                if batch.is_transactional:
                    pending.setdefault(batch.producer_id, []).append(op)
                else:
                    _apply_offset(model, *op)


def _apply_offset(model: ClusterModel, group: str, topic: str, partition: int,
                  offset: int | None) -> None:
    committed = model.consumer_offsets
    if offset is None:                                   # tombstone: the commit was deleted
        parts = committed.get(group, {}).get(topic)
        if parts is not None:
            parts.pop(partition, None)
            if not parts:
                del committed[group][topic]
            if not committed[group]:
                del committed[group]
        return
    committed.setdefault(group, {}).setdefault(topic, {})[partition] = offset
