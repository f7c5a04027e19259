"""A bucket copy's segments against the ``__remote_log_metadata`` replay: what is missing, what
is left over, what disagrees.

Kafka's broker deletes a remote segment's objects (``DELETE_SEGMENT_STARTED`` ->
``DELETE_SEGMENT_FINISHED``) and the plugin removes them best effort; an upload that failed
leaves objects of a segment whose copy never finished. So a bucket and the metadata drift
apart, and an operator rescuing data wants to know, per partition:

* **missing**: a segment the metadata says is copied (``COPY_SEGMENT_FINISHED``) has no
  ``.rsm-manifest`` in the copy: its offsets cannot be read back from this copy;
* **orphan**: a manifest whose segment the metadata is deleting or never finished copying, or
  does not hold (a finished delete drops it, as Kafka's cache does; or it was never copied),
  for a partition the metadata holds: objects no broker will read;
* **mismatch**: a manifest whose offsets differ from the metadata's for the same segment id.

Example
-------
>>> from kafkalog.tiered.metadata_store import RemoteLogMetadataStore
>>> compare(RemoteLogMetadataStore(), [])
[]
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..metadata_cache import COPY_SEGMENT_FINISHED
from ..metadata_store import RemoteLogMetadataStore, TopicIdPartition
from .manifest import parse_manifest
from .restore import SegmentIdentity, find_manifests, segment_identity

__all__ = ["ObjectSegment", "ObjectFinding", "bucket_inventory", "compare", "unreadable"]


@dataclass(frozen=True)
class ObjectSegment(SegmentIdentity):
    """One segment of a bucket copy, as its ``.rsm-manifest`` names it."""

    manifest: str


@dataclass(frozen=True)
class ObjectFinding:
    """``kind`` is ``missing``, ``orphan`` or ``mismatch`` (see the module docstring)."""

    kind: str
    topic: str
    partition: int
    segment_id: str | None
    message: str

    def __str__(self) -> str:
        return f"{self.kind.capitalize()} object: {self.topic}-{self.partition} {self.message}"


def bucket_inventory(paths: Iterable[str | os.PathLike[str]]) -> list[ObjectSegment]:
    """Every manifest under ``paths`` (:func:`.restore.find_manifests`), parsed; a manifest
    that does not parse raises :class:`~.manifest.RemoteSegmentError` naming it."""
    out = []
    for m in find_manifests(paths):
        manifest = parse_manifest(Path(m).read_bytes(), path=m)
        ident = segment_identity(manifest, Path(m))
        out.append(ObjectSegment(**ident.__dict__, manifest=str(m)))
    return out


def compare(store: RemoteLogMetadataStore, objects: list[ObjectSegment],
            partitions: Iterable[TopicIdPartition] | None = None) -> list[ObjectFinding]:
    """The findings for ``partitions`` (default: every partition the metadata holds), in
    partition then offset order."""
    tips = sorted(store.caches if partitions is None else partitions)
    by_id: dict[str | None, list[ObjectSegment]] = {}
    for o in objects:
        by_id.setdefault(o.segment_id, []).append(o)
    findings: list[tuple[tuple, ObjectFinding]] = []
    for tip in tips:
        cache = store.caches.get(tip)
        segments = cache.list_remote_log_segments() if cache is not None else []
        known = {m.segment_id.id for m in segments}
        for m in segments:
            found = [o for o in by_id.get(m.segment_id.id, [])
                     if (o.topic, o.partition) == (tip.topic, tip.partition)]
            if m.state == COPY_SEGMENT_FINISHED and not found:
                findings.append(((tip, m.start_offset), ObjectFinding(
                    "missing", tip.topic, tip.partition, m.segment_id.id,
                    f"segment {m.segment_id.id} offsets {m.start_offset}..{m.end_offset} "
                    f"({m.state}): no .rsm-manifest in the copy")))
            for o in found:
                if m.state != COPY_SEGMENT_FINISHED:
                    findings.append(((tip, m.start_offset), ObjectFinding(
                        "orphan", tip.topic, tip.partition, m.segment_id.id,
                        f"{o.manifest}: segment {m.segment_id.id} is {m.state} in the "
                        f"metadata: no broker reads these objects")))
                elif (o.start_offset, o.end_offset) != (m.start_offset, m.end_offset) and \
                        o.end_offset is not None:
                    findings.append(((tip, m.start_offset), ObjectFinding(
                        "mismatch", tip.topic, tip.partition, m.segment_id.id,
                        f"{o.manifest}: offsets {o.start_offset}..{o.end_offset}, the "
                        f"metadata says {m.start_offset}..{m.end_offset}")))
        for o in objects:
            if (o.topic, o.partition) == (tip.topic, tip.partition) and \
                    o.segment_id not in known and (o.topic_id in (None, tip.topic_id)):
                findings.append(((tip, o.start_offset), ObjectFinding(
                    "orphan", tip.topic, tip.partition, o.segment_id,
                    f"{o.manifest}: segment {o.segment_id} offsets {o.start_offset}.."
                    f"{'-' if o.end_offset is None else o.end_offset} is not in the "
                    f"metadata: deleted (DELETE_SEGMENT_FINISHED drops it) or never copied")))
    findings.sort(key=lambda f: f[0])
    return [f for _k, f in findings]



def unreadable(store: RemoteLogMetadataStore, objects: list[ObjectSegment]
               ) -> tuple[dict[str, ObjectFinding], list[ObjectFinding]]:
    """What a restore guided by the metadata leaves out: the manifests (by path) of segments
    no broker reads (``orphan``: being deleted, never finished, not in the metadata) or whose
    offsets disagree with it (``mismatch``), with the finding; and the ``missing`` findings
    (copied segments the copy lacks, for the partitions the copy holds: their offsets will
    not be restored). Partitions the metadata does not hold are not judged."""
    skip: dict[str, ObjectFinding] = {}
    missing = []
    by_segment = {o.segment_id: o for o in objects}
    held = {(o.topic, o.partition) for o in objects}
    for f in compare(store, objects):
        if f.kind == "missing":
            if (f.topic, f.partition) in held:  # (a copy of some partitions only)
                missing.append(f)
            continue
        o = by_segment.get(f.segment_id)
        if o is not None:
            skip.setdefault(o.manifest, f)
    return skip, missing
