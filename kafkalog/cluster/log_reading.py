"""Reading the partition directories the cluster model is replayed from.

A replay reads what a broker would recover: segments in base-offset order, each up to its first
corrupt batch. A corrupt batch is not an exception here but a warning on the model (naming file
and position), because an operator still wants the state up to that point.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .. import files
from ..errors import KafkaLogError

__all__ = ["segments", "snapshots", "iter_batches_or_warn", "lone_noops_or_batches"]


def segments(directory: str | os.PathLike[str]) -> list[Path]:
    """The ``.log`` segments of a partition directory, in base-offset order."""
    logs = (p for p in Path(directory).iterdir() if p.is_file() and files.is_log_file(p))
    return sorted(logs, key=files.offset_from_file)


def snapshots(directory: str | os.PathLike[str]) -> list[tuple[int, Path]]:
    """KRaft snapshots ``(end offset, path)`` of a metadata partition directory, by offset."""
    out = []
    for p in Path(directory).iterdir():
        snap = files.parse_kraft_snapshot_file_name(p)
        if snap is not None:
            out.append((snap[0], p))
    return sorted(out)


def iter_batches_or_warn(path: Path, warnings: list[str]) -> Iterator[Any]:
    """Batches of one file; a corrupt batch ends the file with a warning (as recovery would)."""
    from ..records.batch import iter_batches

    try:
        yield from iter_batches(str(path))
    except KafkaLogError as e:
        warnings.append(f"{path}: stopped reading: {e}")


def lone_noops_or_batches(path: Path, warnings: list[str]) -> Iterator[Any]:
    """:func:`iter_batches_or_warn`, except that a batch holding one NoOpRecord comes as
    ``(base offset, leader epoch, max timestamp)`` (found in bulk, see
    :func:`kafkalog.cluster.image.metadata_loader.entries`)."""
    from .image.metadata_loader import entries

    try:
        yield from entries(path)
    except KafkaLogError as e:
        warnings.append(f"{path}: stopped reading: {e}")
