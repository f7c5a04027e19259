"""Do remote and local storage together still hold every offset of a tiered partition?

With tiered storage a partition's offsets live in two places:
- below the *local log start offset* (the first local segment's base offset), in remote
  segments that reached ``COPY_SEGMENT_FINISHED``;
- from it on, in the local segments.

Consumers fetching an offset in neither place fail. This happens after a failed copy whose
local segment was deleted anyway, after a remote segment was deleted by hand, or after a bad
restore. :func:`coverage` compares the replayed metadata (:mod:`~kafkalog.tiered.metadata_store`)
with a local partition directory. It reports each range of offsets at or above the log start
offset that no copied remote segment and no local segment holds. Offsets below the log start
offset (from ``log-start-offset-checkpoint``, when the tree has one) were deleted by retention
and are not gaps; a gap below every copied offset may be retention that ran after the
checkpoint was written (:meth:`Coverage.below_remote`).

Example
-------
>>> from kafkalog.tiered.metadata_cache import RemoteLogSegmentId, RemoteLogSegmentMetadata
>>> seg = RemoteLogSegmentId("AAAAAAAAAAAAAAAAAAAAyg", "orders", 7, "AAAAAAAAAAAAAAAAAAAA_g")
>>> copied = [RemoteLogSegmentMetadata(seg, 0, 99, -1, 1, 0, 1, ((0, 0),), None,
...                                    "COPY_SEGMENT_FINISHED")]
>>> coverage(copied, local_start=150, local_end=200, log_start=0).gaps
((100, 149),)
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from .. import files
from ..checkpoint import OffsetCheckpointFile, PartitionMetadataFile
from ..epoch_lineage import build_filtered_leader_epoch_map, segment_outside_lineage
from ..errors import KafkaLogError
from ..log import Log
from .metadata_cache import COPY_SEGMENT_FINISHED, RemoteLogSegmentMetadata
from .metadata_store import RemoteLogMetadataStore, TopicIdPartition

__all__ = ["Coverage", "LocalPartition", "coverage", "local_partitions", "tree_coverage"]


@dataclass(frozen=True)
class LocalPartition:
    """A partition directory of the tree: its topic id (``partition.metadata``, None when
    absent or unreadable), local log start and end offsets, and the log start offset the
    tree's ``log-start-offset-checkpoint`` holds for it (None when absent)."""

    path: Path
    topic_id: str | None
    local_start: int
    local_end: int
    log_start: int | None
    #: its ``leader-epoch-checkpoint``: (epoch, start offset) ascending
    leader_epochs: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class Coverage:
    """Where a partition's offsets are: the copied remote range (None without copies), the
    local range, and the ``gaps`` (inclusive ``(first, last)`` ranges held nowhere)."""

    remote: tuple[int, int] | None
    local: tuple[int, int] | None
    gaps: tuple[tuple[int, int], ...]
    #: copied segments outside the local log's leader-epoch lineage, with the reason: Kafka
    #: never reads them (nor counts them here) and its retention deletes them
    unreachable: tuple[tuple[RemoteLogSegmentMetadata, str], ...] = ()

    def below_remote(self, gap: tuple[int, int]) -> bool:
        """True for a gap below every copied offset (or any gap when nothing is copied): it
        starts at the log start offset of ``log-start-offset-checkpoint``, which remote
        retention may have passed since the checkpoint was written (Kafka writes it every
        minute). A gap above the first copy cannot be explained that way: Kafka deletes
        remote segments oldest first, and local ones only once copied."""
        return self.remote is None or gap[1] < self.remote[0]


def coverage(segments: Iterable[RemoteLogSegmentMetadata], *, local_start: int | None,
             local_end: int | None, log_start: int | None) -> Coverage:
    """The gaps of one partition. ``segments``: its remote segments (only those in
    ``COPY_SEGMENT_FINISHED`` count: a copy in progress or a deletion is not readable);
    ``local_start``/``local_end``: the local log start and end offsets (None: no local copy
    in the tree, so only holes between remote segments are gaps); ``log_start``: the log start
    offset (None: the first copied offset)."""
    ranges = sorted((m.start_offset, m.end_offset) for m in segments
                    if m.state == COPY_SEGMENT_FINISHED)
    gaps: list[tuple[int, int]] = []
    floor = log_start if log_start is not None else (ranges[0][0] if ranges else None)
    covered = None if floor is None else floor - 1  # every offset <= covered is held somewhere
    for start, end in ranges:
        if covered is not None and start > covered + 1:
            gaps.append((covered + 1, start - 1))
        covered = end if covered is None else max(covered, end)
    if local_start is not None:
        # (an empty local log too: the offsets before its start are missing all the same)
        if covered is not None and local_start > covered + 1:
            gaps.append((covered + 1, local_start - 1))
        # offsets from the local log start on are local, whatever the remote side says
        gaps = [(a, min(b, local_start - 1)) for a, b in gaps if a < local_start]
    remote = (ranges[0][0], max(e for _, e in ranges)) if ranges else None
    local = (local_start, local_end - 1) if local_start is not None and local_end is not None \
        and local_end > local_start else None
    return Coverage(remote, local, tuple(gaps))


def local_partitions(log_dirs: Iterable[str | os.PathLike[str]],
                     wanted: set[tuple[str, int]] | None = None
                     ) -> dict[tuple[str, int], list[LocalPartition]]:
    """The partition directories under ``log_dirs`` (``log.dirs`` entries), by (topic,
    partition): a topic partition may sit in several (copies of several brokers' trees).
    ``wanted``: only these (the others are not opened).
    Directories that are not partitions, internal topics and deleted/future ones are left
    out; a directory that does not open read-only is left out too (``kafkalog verify`` says
    why)."""
    out: dict[tuple[str, int], list[LocalPartition]] = {}
    for d in log_dirs:
        root = Path(d)
        if not root.is_dir():
            continue
        try:
            starts = OffsetCheckpointFile(root / files.LOG_START_OFFSET_CHECKPOINT_FILE).read()
        except (KafkaLogError, OSError):
            starts = {}
        for p in sorted(root.iterdir()):
            # (internal topics are never tiered; renamed directories hold no live log)
            if not p.is_dir() or p.name.startswith("__") or \
                    p.name.endswith(("-delete", "-future", "-stray")):
                continue
            try:
                topic, partition = files.parse_topic_partition_name(p)
            except (ValueError, KafkaLogError):
                continue
            if wanted is not None and (topic, partition) not in wanted:
                continue
            try:
                meta = PartitionMetadataFile(p / files.PARTITION_METADATA_FILE)
                topic_id = str(meta.read().topic_id) if meta.exists() else None
            except (KafkaLogError, OSError):
                topic_id = None
            try:
                with Log.open(p, read_only=True) as log:
                    first = min((s.base_offset for s in log.segments), default=None)
                    end = log.log_end_offset
                    epochs = tuple(log.leader_epoch_entries)
            except (KafkaLogError, OSError):
                continue
            if first is None:
                continue
            out.setdefault((topic, partition), []).append(
                LocalPartition(p, topic_id, max(first, starts.get((topic, partition), first)),
                               end, starts.get((topic, partition)), epochs))
    return out


def tree_coverage(store: RemoteLogMetadataStore, log_dirs: Iterable[str | os.PathLike[str]],
                  tips: Iterable[TopicIdPartition] | None = None
                  ) -> tuple[dict[TopicIdPartition, tuple[LocalPartition | None, Coverage]],
                             list[str]]:
    """Each partition's coverage (``tips``: those, else every partition the store knows)
    against its directory in the tree, and notes on directories set aside.

    The directory compared is one with this topic id (one of another incarnation of the
    topic, recreated under the same name, is set aside with a note) that starts lowest, when
    there are several (copies of several brokers' trees)."""
    chosen = sorted(set(store.caches) | set(store.partition_deletes)) if tips is None \
        else list(tips)
    local = local_partitions(log_dirs, {(t.topic, t.partition) for t in chosen})
    out: dict[TopicIdPartition, tuple[LocalPartition | None, Coverage]] = {}
    notes: list[str] = []
    for t in chosen:
        mine = []
        for lp in local.get((t.topic, t.partition), []):
            if lp.topic_id is not None and lp.topic_id != t.topic_id:
                notes.append(f"{lp.path} holds topic id {lp.topic_id}, not {t.topic_id}: "
                             "another incarnation of the topic, not compared")
            else:
                mine.append(lp)
        lp = min(mine, key=lambda x: x.local_start) if mine else None
        segments = store.caches[t].list_remote_log_segments() if t in store.caches else []
        unreachable = _outside_lineage(segments, lp) if lp is not None else []
        left_out = {id(m) for m, _ in unreachable}
        cov = coverage([m for m in segments if id(m) not in left_out],
                       local_start=lp.local_start if lp else None,
                       local_end=lp.local_end if lp else None,
                       log_start=lp.log_start if lp else None)
        out[t] = (lp, replace(cov, unreachable=tuple(unreachable)))
    return out, notes


def _outside_lineage(segments: Iterable[RemoteLogSegmentMetadata], lp: LocalPartition
                     ) -> list[tuple[RemoteLogSegmentMetadata, str]]:
    """The copied segments outside ``lp``'s leader-epoch lineage (Kafka's
    ``isRemoteSegmentWithinLeaderEpochs`` against its filtered epoch cache), with why; none
    when the local log has no leader epochs (nothing to judge by)."""
    if not lp.leader_epochs:
        return []
    lineage = sorted(build_filtered_leader_epoch_map(dict(lp.leader_epochs)).items())
    out = []
    for m in segments:
        if m.state != COPY_SEGMENT_FINISHED:
            continue
        reason = segment_outside_lineage(dict(m.segment_leader_epochs), m.end_offset,
                                         lp.local_end, lineage)
        if reason is not None:
            out.append((m, reason))
    return out
