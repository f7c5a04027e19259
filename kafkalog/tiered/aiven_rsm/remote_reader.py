"""Remote segments read from a copy of their bucket, for the searches a broker makes in them.

:class:`BucketCopy` finds each segment's ``.rsm-manifest`` by its segment id (the object key's
``<offset>-<segment id>``, or the manifest's metadata), restores a segment into a scratch
directory the first time it is needed (every check of ``kafkalog tiered-restore`` applies) and
answers ``RemoteLogManager.lookupTimestamp`` on it: the first record whose timestamp and offset
reach the target and the starting offset, scanning the batches as Kafka does.

>>> import tempfile
>>> with BucketCopy([tempfile.mkdtemp()]) as copy:
...     len(copy)
0
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ...list_offsets import RemoteSegment, TimestampAndOffset
from ...records.batch import iter_batches
from .manifest import parse_manifest
from .restore import find_manifests, restore_segment, segment_identity

__all__ = ["BucketCopy"]


class BucketCopy:
    """The segments of a bucket copy (``paths``: files or directories holding
    ``.rsm-manifest`` objects), by segment id; a context manager (the scratch directory goes
    at exit)."""

    def __init__(self, paths: Iterable[str | os.PathLike[str]],
                 private_keys: Mapping[str, Any] | None = None) -> None:
        self._keys = dict(private_keys or {})
        self._manifests: dict[str, Path] = {}
        for m in find_manifests(paths):
            ident = segment_identity(parse_manifest(m.read_bytes(), path=m), m)
            if ident.segment_id is not None:
                self._manifests.setdefault(ident.segment_id, m)
        self._scratch: str | None = None
        self._restored: dict[str, Path] = {}

    def __len__(self) -> int:
        return len(self._manifests)

    def __enter__(self) -> BucketCopy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Remove the restored segments."""
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None
            self._restored.clear()

    def manifest(self, segment_id: str) -> Path | None:
        """The manifest of ``segment_id`` in the copy, None when it holds none."""
        return self._manifests.get(segment_id)

    def _log_file(self, segment: RemoteSegment) -> Path:
        from ...errors import KafkaLogError

        path = self._restored.get(segment.segment_id)
        if path is not None:
            return path
        manifest = self._manifests.get(segment.segment_id)
        if manifest is None:
            raise KafkaLogError(
                f"remote segment {segment.segment_id} (offsets {segment.start_offset}-"
                f"{segment.end_offset}) has no .rsm-manifest in the bucket copy given",
                offset=segment.start_offset)
        if self._scratch is None:
            self._scratch = tempfile.mkdtemp(prefix="kafkalog-remote-")
        where = Path(self._scratch) / segment.segment_id
        r = restore_segment(manifest, where, self._keys)
        path = Path(r.directory) / f"{r.start_offset:020d}.log"
        self._restored[segment.segment_id] = path
        return path

    def lookup_timestamp(self, segment: RemoteSegment, timestamp: int, starting_offset: int
                         ) -> TimestampAndOffset | None:
        """``RemoteLogManager.lookupTimestamp``: the first record of ``segment`` at or after
        both ``timestamp`` and ``starting_offset`` (with its batch's leader epoch), None when
        it holds none.

        Raises
        ------
        KafkaLogError
            The copy has no objects of the segment, or they do not restore (naming the object,
            chunk and position).
        """
        path = self._log_file(segment)
        for batch in iter_batches(path):
            if batch.max_timestamp >= timestamp and batch.last_offset >= starting_offset:
                epoch = getattr(batch, "partition_leader_epoch", -1)
                for r in batch:
                    if r.timestamp >= timestamp and r.offset >= starting_offset:
                        return TimestampAndOffset(r.timestamp, r.offset, epoch)
        return None
