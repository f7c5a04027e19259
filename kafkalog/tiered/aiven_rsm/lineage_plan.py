"""Which of a bucket's segments to restore: those in their partition's leader-epoch lineage.

After an unclean leader election a bucket can hold two uploads of the same offsets, one from
each leader. Kafka reads only the segments within the current leader's epoch lineage
(:func:`kafkalog.epoch_lineage.segment_outside_lineage`) and its retention deletes the rest.
Offline, the latest lineage known is the one uploaded with the partition's most recent segment:
each upload carries the uploader's leader-epoch cache up to the segment's end (its
``leaderEpoch`` index). :func:`plan_restore` takes, per partition, the segment with the highest
last epoch (then end offset, then upload time) as the reference, and its lineage and end + 1 as
the leader's; every segment outside that lineage is skipped with the reason.

A partition whose segments do not all carry their leader epochs (``segmentLeaderEpochs`` in the
manifest), or whose reference lineage cannot be read (no ``leaderEpoch`` index, an encrypted one
without its key), is restored whole, as before: overlapping segments are then refused by the
restore itself.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...checkpoint import LeaderEpochCheckpointFile
from ...epoch_lineage import build_filtered_leader_epoch_map, segment_outside_lineage
from ...errors import KafkaLogError
from .detransform import decrypt_data_key, read_index
from .manifest import INDEXES_SUFFIX, MANIFEST_SUFFIX, SegmentManifest, parse_manifest
from .restore import SegmentIdentity, segment_identity

__all__ = ["SkippedSegment", "plan_restore"]


@dataclass(frozen=True)
class SkippedSegment(SegmentIdentity):
    """A segment left out: outside the lineage of ``reference`` (a segment id)."""

    manifest: str
    reference: str | None
    reason: str


@dataclass
class _Candidate:
    path: Path
    manifest: SegmentManifest
    ident: SegmentIdentity
    epochs: dict[int, int] | None


def _epochs(manifest: SegmentManifest) -> dict[int, int] | None:
    raw = (manifest.segment_metadata or {}).get("segmentLeaderEpochs")
    if not isinstance(raw, dict) or not raw:
        return None
    try:
        return {int(e): int(o) for e, o in raw.items()}
    except (TypeError, ValueError):
        return None


def _lineage(c: _Candidate, private_keys: Mapping[str, Any]) -> list[tuple[int, int]] | None:
    """The reference's uploaded leader-epoch cache, None when it cannot be read."""
    stem = str(c.path)[:-len(MANIFEST_SUFFIX)]
    try:
        key = None
        if c.manifest.encryption is not None:
            key = decrypt_data_key(c.manifest.encryption, private_keys, path=str(c.path))
        data = read_index(c.manifest, Path(stem + INDEXES_SUFFIX).read_bytes(), "leaderEpoch",
                          key=key, path=stem + INDEXES_SUFFIX)
        if not data:
            return None
        entries = LeaderEpochCheckpointFile.parse_bytes(data, path=stem + INDEXES_SUFFIX)
    except (KafkaLogError, OSError):
        return None  # the restore of the segment itself reports what is wrong
    return [(e.epoch, e.start_offset) for e in entries]


def plan_restore(manifests: Iterable[str | os.PathLike[str]],
                 private_keys: Mapping[str, Any] | None = None
                 ) -> tuple[list[Path], list[SkippedSegment]]:
    """The manifests to restore (in the order given) and the segments skipped as outside
    their partition's leader-epoch lineage (see the module).

    Raises
    ------
    RemoteSegmentError
        A manifest that cannot be read or parsed (naming it).
    """
    keys = private_keys or {}
    candidates = []
    for m in map(Path, manifests):
        manifest = parse_manifest(m.read_bytes(), path=m)
        candidates.append(_Candidate(m, manifest, segment_identity(manifest, m),
                                     _epochs(manifest)))
    groups: dict[tuple[str, int, str | None], list[_Candidate]] = {}
    for c in candidates:
        groups.setdefault((c.ident.topic, c.ident.partition, c.ident.topic_id), []).append(c)
    skipped: dict[Path, SkippedSegment] = {}
    for group in groups.values():
        if any(c.epochs is None or c.ident.end_offset is None for c in group):
            continue
        ref = max(group, key=lambda c: (
            max(build_filtered_leader_epoch_map(c.epochs or {})), c.ident.end_offset,
            int((c.manifest.segment_metadata or {}).get("eventTimestampMs", -1))))
        lineage = _lineage(ref, keys)
        if lineage is None:
            continue
        log_end_offset = (ref.ident.end_offset or 0) + 1
        for c in group:
            reason = segment_outside_lineage(c.epochs or {}, c.ident.end_offset or 0,
                                             log_end_offset, lineage)
            if reason is not None:
                skipped[c.path] = SkippedSegment(
                    **c.ident.__dict__, manifest=str(c.path), reference=ref.ident.segment_id,
                    reason=reason)
    return ([c.path for c in candidates if c.path not in skipped],
            [skipped[c.path] for c in candidates if c.path in skipped])
