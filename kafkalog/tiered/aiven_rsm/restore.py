"""Remote segments copied out of a bucket -> Kafka partition directories.

Given the objects of Aiven's plugin (``.rsm-manifest``, ``.log``, ``.indexes``, side by side as
``aws s3 sync``/``gsutil rsync`` leave them), :func:`restore_segment` writes, in
``<output>/<topic>-<partition>/``, what the broker had before it uploaded the segment:

* ``<start offset>.log`` (written chunk by chunk: one chunk decoded at a time), ``.index``,
  ``.timeindex`` and ``.txnindex`` (when the segment had one), named by the segment's start
  offset as Kafka names them;
* ``<end offset + 1>.snapshot``: the producer snapshot Kafka uploads with the segment (taken at
  the next segment's base offset, which is the end offset + 1: a tiered topic is never compacted);
* ``leader-epoch-checkpoint``: the uploaded leader-epoch index of the segment with the highest
  start offset restored into the directory (each upload carries the epochs up to its segment);
* ``partition.metadata`` with the topic id, when the manifest names it.

The topic, partition, topic id and offsets come from the manifest's ``remoteLogSegmentMetadata``,
else from the object key (``<topic>-<topic id>/<partition>/<offset>-<segment id>``). The restored
``.log`` must start with a batch at the segment's start offset, pass Kafka's recovery checks
(every entry whole, CRCs, offsets increasing) and end at the manifest's end offset; otherwise
nothing is written for it. Of two uploads of the same offsets under different leader epochs
(after an unclean election), :mod:`.lineage_plan` keeps the one in the partition's leader-epoch
lineage, as Kafka reads it; a segment whose offsets overlap one already in the directory is
refused, naming both. Existing files are never overwritten.

Example
-------
>>> import tempfile
>>> restore_paths([tempfile.mkdtemp()], tempfile.mkdtemp())
[]
"""

from __future__ import annotations

import mmap
import os
import re
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ...checkpoint import Uuid
from ...native import scan as native_scan
from ...segment import validate_entries
from .detransform import DataKey, decrypt_data_key, iter_chunks, read_index
from .manifest import (
    INDEXES_SUFFIX,
    LOG_SUFFIX,
    MANIFEST_SUFFIX,
    RemoteSegmentError,
    SegmentManifest,
    parse_manifest,
)

__all__ = ["SegmentIdentity", "segment_identity", "RestoredSegment", "restore_segment",
           "restore_paths", "check_segment", "find_manifests"]

#: ``<topic>-<topic id>/<partition>/<20-digit offset>-<segment id>`` (``ObjectKeyFactory``)
_KEY = re.compile(r"(?P<topic>[A-Za-z0-9._-]+)-(?P<tid>[A-Za-z0-9_-]{22})/(?P<partition>\d+)/"
                  r"(?P<offset>\d{20})-(?P<sid>[A-Za-z0-9_-]{22})$")


@dataclass(frozen=True)
class SegmentIdentity:
    """Which remote segment a manifest is of (:func:`segment_identity`)."""

    topic: str
    partition: int
    topic_id: str | None
    segment_id: str | None
    start_offset: int
    #: None when the manifest has no ``remoteLogSegmentMetadata`` (its name gives the rest)
    end_offset: int | None


@dataclass(frozen=True)
class RestoredSegment(SegmentIdentity):
    """One segment written back (what ``kafkalog tiered-restore`` prints)."""

    directory: str
    files: tuple[str, ...]
    size: int
    chunks: int
    compressed: bool
    encrypted: bool
    #: whole batches (log entries) in the restored ``.log``, each CRC-checked
    batches: int = 0
    #: the last offset the restored ``.log`` holds
    last_offset: int = -1


def find_manifests(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """Every ``.rsm-manifest`` among ``paths`` (files, or directories searched recursively),
    sorted by directory then start offset."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(sorted(p.rglob("*" + MANIFEST_SUFFIX)))
        else:
            out.append(p)
    return sorted(dict.fromkeys(out), key=lambda m: (str(m.parent), m.name))


def segment_identity(manifest: SegmentManifest, path: Path) -> SegmentIdentity:
    """The manifest's ``remoteLogSegmentMetadata``, else what its object key says."""
    meta = manifest.segment_metadata or {}
    try:
        sid = meta["remoteLogSegmentId"]
        tip = sid["topicIdPartition"]
        return SegmentIdentity(tip["topicPartition"]["topic"],
                               int(tip["topicPartition"]["partition"]), tip.get("topicId"),
                               sid.get("id"), int(meta["startOffset"]), int(meta["endOffset"]))
    except (KeyError, TypeError, ValueError):
        pass
    stem = path.as_posix()[:-len(MANIFEST_SUFFIX)]
    m = _KEY.search(stem)
    if m is None:
        raise RemoteSegmentError(
            "the manifest has no remoteLogSegmentMetadata and its name is not "
            "<topic>-<topic id>/<partition>/<offset>-<segment id>.rsm-manifest: topic, "
            "partition and offsets unknown", path=str(path))
    return SegmentIdentity(m["topic"], int(m["partition"]), m["tid"], m["sid"],
                           int(m["offset"]), None)


def _scan_segment(path: Path, base_offset: int, *, check: bool
                  ) -> tuple[int, int, int, int, str | None]:
    """(entries, last offset, stop position, file size, why the entries are not all valid or
    None) of a segment file, through the native batch scan over an mmap; ``check`` adds
    Kafka's recovery checks (CRCs, increasing offsets from ``base_offset``)."""
    size = path.stat().st_size
    if size == 0:
        return 0, base_offset - 1, 0, 0, None
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        buf = np.frombuffer(mm, np.uint8)
        try:
            scan = native_scan.scan_entries(buf)
            n = int(scan["count"])
            reason = None
            if check:
                valid, reason = validate_entries(buf, scan, base_offset)
                if reason is None and valid < n:     # (validate_entries names every stop)
                    reason = f"entry {valid} is not valid"
        finally:
            del buf
    last = int(scan["last_offsets"][n - 1]) if n else base_offset - 1
    return n, last, int(scan["stop_position"]), size, reason


def _last_offset(path: Path) -> int:
    """The last offset of a segment file already in an output directory."""
    return _scan_segment(path, int(path.name[:20]), check=False)[1]


#: (path, size, mtime) -> last offset: each segment already in a directory is walked once per
#: process, however many segments a run restores next to it
_LAST_OFFSETS: dict[tuple[str, int, int], int] = {}


def _occupied(directory: Path) -> list[tuple[int, int, str]]:
    """(first, last offset, file) of the segments already in ``directory``."""
    out = []
    for p in sorted(directory.glob("[0-9]" * 20 + ".log")):
        st = p.stat()
        key = (str(p), st.st_size, st.st_mtime_ns)
        last = _LAST_OFFSETS.get(key)
        if last is None:
            last = _LAST_OFFSETS[key] = _last_offset(p)
        out.append((int(p.name[:20]), last, p.name))
    return out


def restore_segment(manifest_path: str | os.PathLike[str], output: str | os.PathLike[str],
                    private_keys: Mapping[str, Any] | None = None) -> RestoredSegment:
    """Restore the segment of one ``.rsm-manifest`` (its ``.log`` and ``.indexes`` objects
    beside it) under ``output`` (see the module docstring)."""
    mpath = Path(manifest_path)
    manifest = parse_manifest(mpath.read_bytes(), path=mpath)
    stem = str(mpath)[:-len(MANIFEST_SUFFIX)] if str(mpath).endswith(MANIFEST_SUFFIX) \
        else str(mpath)
    log_path, idx_path = Path(stem + LOG_SUFFIX), Path(stem + INDEXES_SUFFIX)
    for needed in (log_path, idx_path):
        if not needed.exists():
            raise RemoteSegmentError("object missing beside its manifest", path=str(needed))
    ident = segment_identity(manifest, mpath)
    topic, partition, topic_id = ident.topic, ident.partition, ident.topic_id
    start, end = ident.start_offset, ident.end_offset
    key: DataKey | None = None
    if manifest.encryption is not None:
        key = decrypt_data_key(manifest.encryption, private_keys or {}, path=str(mpath))
    directory = Path(output) / f"{topic}-{partition}"
    directory.mkdir(parents=True, exist_ok=True)
    name = f"{start:020d}"
    # (without the manifest's end offset the segment is known to hold its start offset only)
    last = end if end is not None else start
    targets = {".log": directory / f"{name}.log"}
    indexes = read_index_objects(manifest, idx_path, key)
    for kind, suffix in (("offset", ".index"), ("timestamp", ".timeindex"),
                         ("transaction", ".txnindex")):
        # (an empty offset/time index is a file Kafka keeps; an empty transaction index is
        # one the segment never had)
        if indexes.get(kind) is not None and (kind != "transaction" or indexes[kind]):
            targets[suffix] = directory / f"{name}{suffix}"
    if indexes.get("producerSnapshot") and end is not None:
        targets[".snapshot"] = directory / f"{end + 1:020d}.snapshot"
    for t in targets.values():
        if t.exists():
            raise RemoteSegmentError("already exists: not overwritten", path=str(t))
    for first, other_last, other in _occupied(directory):
        if first <= last and start <= other_last:
            raise RemoteSegmentError(
                f"offsets {start}..{last} overlap {other} ({first}..{other_last}) already "
                f"restored there: two uploads of the same offsets (leader epochs differ after "
                f"an unclean election?); restore one of them", path=str(mpath))
    size = 0
    tmp = targets[".log"].with_name(targets[".log"].name + ".restoring")
    try:
        with open(log_path, "rb") as f, open(tmp, "wb") as out:
            for i, chunk in enumerate(iter_chunks(manifest, f, key=key, path=log_path)):
                if i == 0 and len(chunk) >= 8:
                    (base,) = struct.unpack_from(">q", chunk)
                    if base != start:
                        raise RemoteSegmentError(
                            f"the first batch has base offset {base} (the segment starts at "
                            f"{start})", path=str(log_path), position=0)
                out.write(chunk)
                size += len(chunk)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    try:
        if size != manifest.original_file_size:
            raise RemoteSegmentError(f"{size} bytes restored (the manifest says "
                                     f"{manifest.original_file_size})", path=str(log_path))
        batches, restored_last = _check_restored(tmp, start, end, log_path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, targets[".log"])
    written = [targets[".log"].name]
    for kind, suffix in (("offset", ".index"), ("timestamp", ".timeindex"),
                         ("transaction", ".txnindex"), ("producerSnapshot", ".snapshot")):
        if suffix in targets:
            targets[suffix].write_bytes(indexes[kind])
            written.append(targets[suffix].name)
    epochs = indexes.get("leaderEpoch")
    if epochs and start >= max((f for f, _l, _n in _occupied(directory)),
                                           default=-1):
        (directory / "leader-epoch-checkpoint").write_bytes(epochs)
        written.append("leader-epoch-checkpoint")
    if topic_id and not (directory / "partition.metadata").exists():
        Uuid.from_string(topic_id)      # a valid id, or the error names it
        (directory / "partition.metadata").write_text(f"version: 0\ntopic_id: {topic_id}\n")
        written.append("partition.metadata")
    return RestoredSegment(**ident.__dict__, directory=str(directory), files=tuple(written),
                           size=size, chunks=len(manifest.chunks),
                           compressed=manifest.compression,
                           encrypted=manifest.encryption is not None, batches=batches,
                           last_offset=restored_last)


def _check_restored(path: Path, start: int, end: int | None, log_path: Path
                    ) -> tuple[int, int]:
    """Kafka's recovery checks over the restored file (every entry whole, its CRC, offsets
    increasing from ``start``), and its last offset against the manifest's end offset.
    Returns (entries, last offset)."""
    n, last, stop, size, reason = _scan_segment(path, start, check=True)
    where = f"the restored segment (from {log_path})"
    if reason is not None:
        raise RemoteSegmentError(f"{where}: {reason}", path=str(path))
    if stop != size:
        raise RemoteSegmentError(f"{where}: no whole batch at position {stop} of {size}",
                                 path=str(path), position=stop)
    if end is not None and last != end:
        raise RemoteSegmentError(f"{where} ends at offset {last} (the manifest's endOffset is "
                                 f"{end})", path=str(path))
    return n, last


def check_segment(manifest_path: str | os.PathLike[str],
                  private_keys: Mapping[str, Any] | None = None,
                  scratch: str | os.PathLike[str] | None = None) -> RestoredSegment:
    """Every check of :func:`restore_segment`, the result written to a scratch directory
    (``scratch``, else the system's temporary directory) and removed: whether the objects
    would restore, without keeping the files."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="kafkalog-check-", dir=scratch) as tmp:
        r = restore_segment(manifest_path, tmp, private_keys)
    return RestoredSegment(**{**r.__dict__, "directory": "", "files": ()})


def read_index_objects(manifest: SegmentManifest, path: Path, key: DataKey | None
                       ) -> dict[str, bytes | None]:
    """Every index of the ``.indexes`` object (type -> bytes, None when absent)."""
    data = path.read_bytes()
    return {kind: read_index(manifest, data, kind, key=key, path=path)
            for kind in ("offset", "timestamp", "producerSnapshot", "leaderEpoch",
                         "transaction")}


def restore_paths(paths: Iterable[str | os.PathLike[str]], output: str | os.PathLike[str],
                  private_keys: Mapping[str, Any] | None = None, *,
                  all_segments: bool = False) -> list[RestoredSegment]:
    """:func:`restore_segment` of every manifest :func:`find_manifests` finds, in offset
    order per partition; segments outside their partition's leader-epoch lineage are left
    out (:func:`~kafkalog.tiered.aiven_rsm.lineage_plan.plan_restore`) unless
    ``all_segments``."""
    manifests = find_manifests(paths)
    if not all_segments:
        from .lineage_plan import plan_restore

        manifests, _ = plan_restore(manifests, private_keys)
    return [restore_segment(m, output, private_keys) for m in manifests]
