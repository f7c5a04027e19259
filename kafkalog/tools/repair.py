"""``kafkalog repair``: write a repaired copy of a partition directory (or of a whole log dir).

Repair is the engine's recovery after an unclean shutdown, applied to a copy with every segment
treated as unflushed: ``Log.open(copy, clean_shutdown=False, recovery_point=0)`` then ``close``
(:mod:`kafkalog.loader` + :mod:`kafkalog.producer_state`, Kafka's ``LogLoader`` and
``rebuildProducerState``), and a report of exactly what was lost:

1. the directory is copied to ``--output`` (the original is never touched unless ``--in-place``);
2. leftovers go (``.deleted``/``.cleaned`` files, index files without a ``.log``);
3. each segment, in base-offset order, is validated batch by batch (size, CRC, offsets increasing
   and indexable); the ``.log`` is truncated after the last valid batch and its ``.index`` and
   ``.timeindex`` are rebuilt from the batches (Kafka's per-batch rule, §5.2);
4. as in Kafka, once a segment was truncated every later segment is deleted (its data follows a
   hole); ``--keep-later-segments`` keeps them instead (offsets then have a gap, which Kafka
   tolerates as it does after compaction; this mode recovers segment by segment);
5. state follows the new log end offset: leader epochs at or past it are dropped, producer
   state is rebuilt from the batches (``.txnindex`` of every segment rewritten from the ABORT
   markers, snapshots past the end removed, one written at the end); in a log dir, recovery
   points and high watermarks past a partition's new log end offset are lowered to it.

Before anything is written the same validation runs read-only to plan the report: per segment
the bytes kept and lost, each lost batch whose header still parses (position, size, offsets,
whether its CRC was intact), the bytes after it that could not be parsed and, inside them, any
intact batch a resynchronising search finds; then the merged ranges of lost offsets. The plan
is checked against what the engine did (an error if they disagree).

In place (``--in-place``), the directory locks are taken before anything is read and held to the
end: every kafkalog writer's partition lock and, for a log dir (or a partition inside one), the
log dir's ``.lock`` that a ``LogDir`` or a Kafka broker holds (Kafka's ``FileLock``). A held
directory is refused and nothing changes.

Exit status: 0 when nothing had to be repaired, 1 when something was repaired (data or state
changed), 2 for usage errors, 3 when ``--in-place`` was refused because a writer holds the
directory.

Example
-------
>>> report = repair_partition("/data/t-0", "/tmp/t-0")  # doctest: +SKIP
>>> report.lost_offset_ranges  # doctest: +SKIP
[(1042, 1050)]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import stat
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .. import files
from ..errors import KafkaLogError, LogLockedError

__all__ = [
    "EXIT_LOCKED",
    "LostBatch",
    "SegmentRepair",
    "PartitionRepair",
    "repair_partition",
    "repair_path",
    "add_arguments",
    "run",
]


#: exit status of ``--in-place`` on a directory a writer holds (nothing changed)
EXIT_LOCKED = 3


@dataclass
class LostBatch:
    """A whole entry that was cut off (its header still parsed)."""

    position: int
    size: int
    first_offset: int
    last_offset: int
    intact: bool = True  # the CRC matched: good data cut off because of what precedes it


@dataclass
class SegmentRepair:
    """What happened to one segment."""

    log_file: str
    base_offset: int
    original_bytes: int
    kept_bytes: int
    lost_bytes: int
    reason: str | None = None  # why validation stopped (None: the segment was whole)
    deleted: bool = False  # the whole segment was removed (follows a truncated one)
    lost_batches: list[LostBatch] = field(default_factory=list)
    unparsed_bytes: int = 0  # lost bytes after the last parseable entry
    unparsed_position: int | None = None
    salvaged_batches: list[LostBatch] = field(default_factory=list)  # intact batches found
    # in the unparseable bytes by a resynchronising search (offsets we can name)
    indexes_rebuilt: bool = False


@dataclass
class PartitionRepair:
    """The repair report of one partition directory."""

    source: str
    output: str
    segments: list[SegmentRepair] = field(default_factory=list)
    log_end_offset_before: int | None = None
    log_end_offset_after: int | None = None
    removed_files: list[str] = field(default_factory=list)
    created_files: list[str] = field(default_factory=list)
    txn_index_entries_removed: int = 0
    txn_index_entries_added: int = 0
    leader_epochs_removed: list[tuple[int, int]] = field(default_factory=list)

    @property
    def lost_bytes(self) -> int:
        return sum(s.lost_bytes for s in self.segments)

    @property
    def lost_offset_ranges(self) -> list[tuple[int, int]]:
        """Merged inclusive ranges of the offsets of every lost whole batch."""
        spans = sorted(
            (b.first_offset, b.last_offset)
            for s in self.segments
            for b in (*s.lost_batches, *s.salvaged_batches)
        )
        merged: list[tuple[int, int]] = []
        for a, b in spans:
            if merged and a <= merged[-1][1] + 1:
                merged[-1] = (merged[-1][0], max(merged[-1][1], b))
            else:
                merged.append((a, b))
        return merged

    @property
    def changed(self) -> bool:
        """Data or state changed (rebuilt indexes and the close-time snapshot do not count)."""
        return bool(
            self.lost_bytes
            or self.removed_files
            or self.txn_index_entries_removed
            or self.txn_index_entries_added
            or self.leader_epochs_removed
        )

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["lost_bytes"] = self.lost_bytes
        d["lost_offset_ranges"] = [list(r) for r in self.lost_offset_ranges]
        d["leader_epochs_removed"] = [list(e) for e in self.leader_epochs_removed]
        return d


def _scan_file(path: Path) -> tuple[dict, Any]:
    """Native header scan of a whole ``.log`` and its bytes (the caller closes the copy).

    A private copy (:class:`~kafkalog.file_copy.FileCopy`), never a mapping: an in-place repair
    holds the directory lock, but a copy's source may be a live directory.
    """
    from ..file_copy import FileCopy
    from ..native import scan as ns

    mf = FileCopy(path)
    try:
        mf.ensure(0, mf.size)
        return ns.scan_entries(mf.buf[: mf.size]), mf
    except BaseException:
        mf.close()
        raise


def _plan_segment(path: Path, base: int, prev_last: int) -> tuple[SegmentRepair, int]:
    """Validate like recovery does, without writing: what would be kept and lost."""
    from ..segment import validate_entries

    sc, mf = _scan_file(path)
    try:
        count, reason = validate_entries(mf.buf, sc, base, prev_last_offset=prev_last)
        n = int(sc["count"])
        kept = int(sc["positions"][count - 1] + sc["sizes"][count - 1]) if count else 0
        rep = SegmentRepair(str(path), base, mf.size, kept, mf.size - kept, reason)
        if reason is None and mf.size > kept:
            from ..native import scan as ns

            rep.reason = (
                f"{ns.STOP_REASONS[int(sc['stop_reason'])]} at position {int(sc['stop_position'])}"
            )
        rep.lost_batches = _lost_batches(mf.buf, sc, count, n)
        parsed_end = int(sc["stop_position"])
        if mf.size > parsed_end:
            rep.unparsed_bytes = mf.size - parsed_end
            rep.unparsed_position = parsed_end
            rep.salvaged_batches = _resync(mf.buf, parsed_end)
        last = int(sc["last_offsets"][count - 1]) if count else prev_last
        return rep, max(last, prev_last)
    finally:
        mf.close()


def _entry_crc_ok(buf: Any, p: int, size: int, magic: int) -> bool:
    from ..records.crc import crc32, crc32c

    stored_at = p + 17 if magic == 2 else p + 12
    stored = int.from_bytes(bytes(buf[stored_at : stored_at + 4]), "big")
    mv = memoryview(buf)
    computed = crc32c(mv[p + 21 : p + size]) if magic == 2 else crc32(mv[p + 16 : p + size])
    return computed == stored


def _lost_batches(buf: Any, sc: dict, start: int, end: int) -> list[LostBatch]:
    out = []
    for i in range(start, end):
        p, size, magic = int(sc["positions"][i]), int(sc["sizes"][i]), int(sc["magics"][i])
        first = int(sc["base_offsets"][i]) if magic == 2 else int(sc["last_offsets"][i])
        out.append(
            LostBatch(
                p, size, first, int(sc["last_offsets"][i]), _entry_crc_ok(buf, p, size, magic)
            )
        )
    return out


#: resynchronising search: at most this many bytes after a corrupt point are searched
RESYNC_LIMIT = 64 * 1024 * 1024


def _resync(buf: Any, start: int) -> list[LostBatch]:
    """Find intact v2 batches in bytes no header scan could walk (after a corrupt header).

    A candidate position has magic 2 at byte 16, a size that fits, and a CRC-32C that
    matches its bytes: a random match is a 1 in 2**32 event per candidate. Searching stops
    after ``RESYNC_LIMIT`` bytes. The batches found are lost data (Kafka cannot read past the
    corrupt point); they are reported so the operator knows which offsets they held.
    """
    import numpy as np

    from ..native import scan as ns

    end = min(len(buf), start + RESYNC_LIMIT)
    found: list[LostBatch] = []
    region = np.asarray(buf[start:end])
    candidates = np.flatnonzero(region[16:] == 2) + start if len(region) > 16 else []
    next_free = start
    for p in (int(c) for c in candidates):
        if p < next_free or end - p < ns.RECORD_BATCH_OVERHEAD:
            continue
        size = int.from_bytes(bytes(buf[p + 8 : p + 12]), "big", signed=True) + 12
        if size < ns.RECORD_BATCH_OVERHEAD or p + size > len(buf):
            continue
        if not _entry_crc_ok(buf, p, size, 2):
            continue
        base = int.from_bytes(bytes(buf[p : p + 8]), "big", signed=True)
        delta = int.from_bytes(bytes(buf[p + 23 : p + 27]), "big", signed=True)
        found.append(LostBatch(p, size, base, base + delta, True))
        next_free = p + size
    return found


def _whole_segment_lost(path: Path, base: int) -> SegmentRepair:
    sc, mf = _scan_file(path)
    try:
        rep = SegmentRepair(
            str(path), base, mf.size, 0, mf.size, "follows a truncated segment", deleted=True
        )
        rep.lost_batches = _lost_batches(mf.buf, sc, 0, int(sc["count"]))
        if mf.size > int(sc["stop_position"]):
            rep.unparsed_bytes = mf.size - int(sc["stop_position"])
            rep.unparsed_position = int(sc["stop_position"])
            rep.salvaged_batches = _resync(mf.buf, int(sc["stop_position"]))
        return rep
    finally:
        mf.close()


def _make_writable(root: Path) -> None:
    for dirpath, _dirs, names in os.walk(root):
        os.chmod(dirpath, os.stat(dirpath).st_mode | stat.S_IWUSR | stat.S_IXUSR | stat.S_IRUSR)
        for n in names:
            p = os.path.join(dirpath, n)
            os.chmod(p, os.stat(p).st_mode | stat.S_IWUSR | stat.S_IRUSR)




def _log_end(d: Path, bases: list[int]) -> int | None:
    """Kafka's log end offset: after the last batch of the last segment, or that segment's base
    offset when it holds no whole batch (an empty active segment starts at the log end)."""
    if not bases:
        return None
    sc, mf = _scan_file(files.log_file(d, bases[-1]))
    try:
        n = int(sc["count"])
        return int(sc["last_offsets"][:n].max()) + 1 if n else bases[-1]
    finally:
        mf.close()


def _in_place_locks(directory: Path) -> list[tuple[Path, str]]:
    """The locks an in-place repair of partition ``directory`` must hold: the partition's own
    (every kafkalog writer takes it) and, when the parent is a log dir with a ``.lock`` file,
    that one too (a Kafka broker holds only it)."""
    from ..lock import KAFKA_LOCK_FILE_NAME, LOCK_FILE_NAME

    targets = [(directory, LOCK_FILE_NAME)]
    if (directory.parent / KAFKA_LOCK_FILE_NAME).is_file():
        targets.append((directory.parent, KAFKA_LOCK_FILE_NAME))
    return targets


def repair_partition(
    source: str | os.PathLike[str],
    output: str | os.PathLike[str] | None,
    *,
    keep_later_segments: bool = False,
    lock: Any = None,
) -> PartitionRepair:
    """Repair a copy of partition directory ``source`` into ``output`` (None: in place).

    By default the repair *is* the engine's recovery after an unclean shutdown:
    ``Log.open(..., clean_shutdown=False, recovery_point=0)`` (``kafkalog.loader.LogLoader``:
    stray files, every segment validated/truncated/re-indexed, later segments deleted after a
    truncation, leader epochs truncated; then producer state rebuilt with the ``.txnindex`` of
    recovered segments rewritten and snapshots past the end dropped) followed by a clean
    ``close``. The report is planned first, read-only, with the same per-batch validation
    (``kafkalog.segment.validate_entries``), and checked against what the loader did.
    ``keep_later_segments`` cannot be Kafka's recovery (which deletes them): it recovers
    segment by segment with ``LogSegment.recover`` and truncates the state files itself.

    In place (``output`` None), the directory's lock is taken first and held to the end (also
    the parent log dir's ``.lock`` when there is one): a directory a writer holds is refused
    with :class:`~kafkalog.errors.LogLockedError` before anything is read or written. ``lock``
    is the partition's lock when the caller already holds it (:func:`repair_path`).
    """
    from ..lock import acquire_all

    src = Path(source)
    if output is None and lock is None:
        held = acquire_all(_in_place_locks(src))
        try:
            return repair_partition(src, None, keep_later_segments=keep_later_segments,
                                    lock=held[0])
        finally:
            for h in held:
                h.release()
    dst = Path(output) if output is not None else src
    if output is not None:
        shutil.copytree(src, dst)
        _make_writable(dst)
    report = PartitionRepair(str(src), str(dst))
    bases = files.segment_base_offsets(dst)
    report.log_end_offset_before = _log_end(dst, bases)
    before = _state(dst)
    planned: dict[int, SegmentRepair] = {}
    prev_last = -1
    truncated = False
    for base in bases:
        path = files.log_file(dst, base)
        if truncated and not keep_later_segments:
            seg_rep = _whole_segment_lost(path, base)
        else:
            seg_rep, prev_last = _plan_segment(path, base, prev_last)
            seg_rep.indexes_rebuilt = True
            truncated = truncated or seg_rep.lost_bytes > 0
        seg_rep.log_file = str(files.log_file(src, base))
        planned[base] = seg_rep
        report.segments.append(seg_rep)
    if keep_later_segments:
        _recover_each_segment(dst, bases, report)
    else:
        _recover_with_engine(dst, planned, lock)
    bases_after = files.segment_base_offsets(dst)
    leo = _log_end(dst, bases_after)
    report.log_end_offset_after = leo
    if keep_later_segments and leo is not None:
        _truncate_state(dst, bases_after, leo, report)
    _report_state_changes(before, _state(dst), report)
    return report


def _recover_with_engine(dst: Path, planned: dict[int, SegmentRepair], lock: Any) -> None:
    """``lock``: the directory's lock held by the caller (in place), None for a copy."""
    from ..config import LogConfig
    from ..lock import LOCK_FILE_NAME
    from ..log import Log

    had_lock = lock is not None or (dst / LOCK_FILE_NAME).exists()
    # the loader logs each recovery step as a warning; the repair report says the same, exactly
    quiet = logging.getLogger("kafkalog")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        log = Log.open(dst, LogConfig(), standalone=False, clean_shutdown=False, recovery_point=0,
                       lock=lock)
        try:
            loaded = log.loaded
        finally:
            log.close()
    finally:
        quiet.setLevel(level)
    if not had_lock:
        (dst / LOCK_FILE_NAME).unlink(missing_ok=True)
    # the plan (what the report says) and the engine's recovery must agree
    for base, result in loaded.recovered_segments:
        plan = planned.get(base)
        if plan is not None and not plan.deleted and result.valid_bytes != plan.kept_bytes:
            raise KafkaLogError(
                f"recovery kept {result.valid_bytes} bytes where validation planned "
                f"{plan.kept_bytes}",
                path=plan.log_file,
            )
    planned_deleted = {b for b, p in planned.items() if p.deleted}
    if set(loaded.deleted_segments) != planned_deleted:
        raise KafkaLogError(
            f"recovery deleted segments {sorted(loaded.deleted_segments)} where validation "
            f"planned {sorted(planned_deleted)}",
            path=dst,
        )


def _recover_each_segment(dst: Path, bases: list[int], report: PartitionRepair) -> None:
    from ..clock import SystemClock
    from ..config import LogConfig
    from ..segment import LogSegment

    _remove_leftovers(dst, bases)
    config, clock = LogConfig(), SystemClock()
    for seg_rep in report.segments:
        seg = LogSegment.open(dst, seg_rep.base_offset, config, clock, file_already_exists=True)
        try:
            result = seg.recover()
        finally:
            seg.close()
        if result.valid_bytes != seg_rep.kept_bytes:
            raise KafkaLogError(
                f"recovery kept {result.valid_bytes} bytes where validation planned "
                f"{seg_rep.kept_bytes}",
                path=seg_rep.log_file,
            )


@dataclass
class _DirState:
    files: set[str]
    txn_entries: int
    epochs: list[tuple[int, int]]


def _state(d: Path) -> _DirState:
    """What the report compares before and after: files, aborted txns, leader epochs."""
    from ..checkpoint import LeaderEpochCheckpointFile
    from ..index.txn_index import TransactionIndex

    names = {p.name for p in d.iterdir() if p.is_file()}
    txn = 0
    for p in sorted(d.glob("*.txnindex")):
        try:
            idx = TransactionIndex(p, files.offset_from_filename(p.name), writable=False)
            try:
                txn += len(idx.all_aborted_txns())
            finally:
                idx.close()
        except (ValueError, KafkaLogError):
            continue
    epochs: list[tuple[int, int]] = []
    lec = d / files.LEADER_EPOCH_CHECKPOINT_FILE
    if lec.exists():
        try:
            epochs = [(e.epoch, e.start_offset) for e in LeaderEpochCheckpointFile(lec).read()]
        except KafkaLogError:
            epochs = []
    return _DirState(names, txn, epochs)


def _report_state_changes(before: _DirState, after: _DirState, report: PartitionRepair) -> None:
    from ..lock import LOCK_FILE_NAME

    report.removed_files = sorted(before.files - after.files - {LOCK_FILE_NAME})
    report.created_files = sorted(after.files - before.files - {LOCK_FILE_NAME})
    report.txn_index_entries_removed = max(0, before.txn_entries - after.txn_entries)
    report.txn_index_entries_added = max(0, after.txn_entries - before.txn_entries)
    kept = set(after.epochs)
    report.leader_epochs_removed = [e for e in before.epochs if e not in kept]


def _remove_leftovers(d: Path, bases: list[int]) -> None:
    """What the loader's first step removes: state-suffixed leftovers and orphan indexes."""
    known = set(bases)
    for p in sorted(d.iterdir()):
        if not p.is_file():
            continue
        if p.name.endswith(
            (files.DELETED_FILE_SUFFIX, files.CLEANED_FILE_SUFFIX, files.TMP_FILE_SUFFIX)
        ):
            p.unlink()
        elif files.is_index_file(p):
            try:
                off = files.offset_from_filename(p.name)
            except (ValueError, KafkaLogError):
                continue
            if off not in known:
                p.unlink()


def _truncate_state(d: Path, bases: list[int], leo: int, report: PartitionRepair) -> None:
    """``--keep-later-segments``: drop state past the new log end (``.txnindex`` entries,
    producer snapshots, leader epochs), as the loader does for a truncated log."""
    from ..checkpoint import LeaderEpochCheckpointFile
    from ..index.txn_index import TransactionIndex

    for base in bases:
        p = files.transaction_index_file(d, base)
        if p.exists():
            idx = TransactionIndex(p, base)
            try:
                idx.truncate_to(leo)
            finally:
                idx.close()
    for p in sorted(d.glob("*.snapshot")):
        try:
            off = files.offset_from_filename(p.name)
        except (ValueError, KafkaLogError):
            continue
        if off > leo:
            p.unlink()
    lec = d / files.LEADER_EPOCH_CHECKPOINT_FILE
    if lec.exists():
        cp = LeaderEpochCheckpointFile(lec)
        try:
            entries = cp.read()
        except KafkaLogError:
            return
        keep = [e for e in entries if e.start_offset < leo]
        if len(keep) != len(entries):
            cp.write(keep)


def repair_path(
    source: str, output: str | None, *, keep_later_segments: bool = False
) -> tuple[list[PartitionRepair], list[str]]:
    """Repair a partition directory or every partition of a log dir.

    Returns the partition reports and the log-dir checkpoint changes (text lines).

    In place, a log dir's ``.lock`` and every partition's lock are taken first, all or none
    (:func:`kafkalog.lock.acquire_all`), and held to the end: a log dir that a broker, a
    ``LogDir`` or any partition's writer holds is refused with
    :class:`~kafkalog.errors.LogLockedError`, nothing read or written.
    """
    from ..lock import KAFKA_LOCK_FILE_NAME, LOCK_FILE_NAME, acquire_all

    src = Path(source)
    if files.is_partition_dir(src):
        return [repair_partition(src, output, keep_later_segments=keep_later_segments)], []
    parts = [p for p in sorted(src.iterdir()) if files.is_partition_dir(p)]
    held: list[Any] = []
    if output is None:
        held = acquire_all([(src, KAFKA_LOCK_FILE_NAME)] + [(p, LOCK_FILE_NAME) for p in parts])
    try:
        dst = Path(output) if output is not None else src
        if output is not None:
            dst.mkdir(parents=True)
            for p in src.iterdir():
                if p.is_file():
                    shutil.copy2(p, dst / p.name)
            _make_writable(dst)
        reports = []
        for i, p in enumerate(parts):
            reports.append(
                repair_partition(
                    p,
                    None if output is None else dst / p.name,
                    keep_later_segments=keep_later_segments,
                    lock=held[i + 1] if held else None,
                )
            )
        return reports, _clamp_log_dir_checkpoints(dst, reports)
    finally:
        for h in held:
            h.release()


def _clamp_log_dir_checkpoints(d: Path, reports: list[PartitionRepair]) -> list[str]:
    from ..checkpoint import OffsetCheckpointFile

    leos = {Path(r.output).name: r.log_end_offset_after for r in reports}
    changes = []
    for name in (files.RECOVERY_POINT_CHECKPOINT_FILE, files.REPLICATION_OFFSET_CHECKPOINT_FILE):
        p = d / name
        if not p.exists():
            continue
        cp = OffsetCheckpointFile(p)
        try:
            offsets = cp.read()
        except KafkaLogError:
            continue
        changed = False
        for (topic, part), off in list(offsets.items()):
            leo = leos.get(f"{topic}-{part}")
            if leo is not None and off > leo:
                offsets[(topic, part)] = leo
                changes.append(f"{name}: {topic}-{part} {off} -> {leo}")
                changed = True
        if changed:
            cp.write(offsets)
    return changes


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("dir", metavar="DIR", help="a partition directory or a log dir")
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument(
        "--output", metavar="NEWDIR", help="write the repaired copy here (must not exist)"
    )
    where.add_argument("--in-place", action="store_true", help="repair DIR itself")
    p.add_argument(
        "--keep-later-segments",
        action="store_true",
        help="keep the segments after a truncated one (Kafka deletes them)",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")


def run(args: argparse.Namespace) -> int:
    src = Path(args.dir)
    if not src.is_dir():
        sys.stderr.write(f"kafkalog repair: error: {args.dir} is not a directory\n")
        return 2
    if args.output is not None:
        out = Path(args.output)
        if out.exists():
            sys.stderr.write(f"kafkalog repair: error: {args.output} already exists\n")
            return 2
        if out.resolve() == src.resolve() or src.resolve() in out.resolve().parents:
            sys.stderr.write("kafkalog repair: error: --output must be outside DIR\n")
            return 2
    try:
        reports, changes = repair_path(
            args.dir,
            None if args.in_place else args.output,
            keep_later_segments=args.keep_later_segments,
        )
    except LogLockedError as e:
        sys.stderr.write(
            f"kafkalog repair: error: {e}: nothing was changed; stop the writer first, or "
            "repair a copy with --output\n")
        return EXIT_LOCKED
    except KafkaLogError as e:
        sys.stderr.write(f"kafkalog repair: {e}\n")
        return 1
    if args.json:
        doc = {
            "partitions": [r.to_dict() for r in reports],
            "checkpoint_changes": changes,
            "lost_bytes": sum(r.lost_bytes for r in reports),
        }
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    else:
        _print(reports, changes)
    return 1 if any(r.changed for r in reports) or changes else 0


def _print(reports: list[PartitionRepair], changes: list[str]) -> None:
    w = sys.stdout.write
    for r in reports:
        w(f"Partition {r.source} -> {r.output}\n")
        w(f"  log end offset: {r.log_end_offset_before} -> {r.log_end_offset_after}\n")
        for s in r.segments:
            state = "deleted" if s.deleted else ("truncated" if s.lost_bytes else "ok")
            w(
                f"  {Path(s.log_file).name}: {state}, kept {s.kept_bytes} of {s.original_bytes} "
                f"bytes, lost {s.lost_bytes}"
            )
            w(f" ({s.reason})\n" if s.reason and s.lost_bytes else "\n")
            for b in s.lost_batches:
                crc = "" if b.intact else ", CRC mismatch"
                w(
                    f"    lost batch at position {b.position} ({b.size} bytes{crc}): offsets "
                    f"{b.first_offset}..{b.last_offset}\n"
                )
            if s.unparsed_bytes:
                w(
                    f"    lost {s.unparsed_bytes} unparseable bytes from position "
                    f"{s.unparsed_position}\n"
                )
            for b in s.salvaged_batches:
                w(
                    f"      of which an intact batch at position {b.position} ({b.size} bytes): "
                    f"offsets {b.first_offset}..{b.last_offset}\n"
                )
            if s.indexes_rebuilt:
                w("    .index and .timeindex rebuilt\n")
        ranges = ", ".join(f"{a}..{b}" for a, b in r.lost_offset_ranges) or "none"
        w(f"  lost offsets: {ranges}; lost bytes: {r.lost_bytes}\n")
        if r.removed_files:
            w(f"  removed: {', '.join(r.removed_files)}\n")
        if r.created_files:
            w(f"  created: {', '.join(r.created_files)}\n")
        if r.txn_index_entries_added:
            w(f"  transaction index entries rebuilt: {r.txn_index_entries_added}\n")
        if r.txn_index_entries_removed:
            w(f"  transaction index entries removed: {r.txn_index_entries_removed}\n")
        if r.leader_epochs_removed:
            w(
                "  leader epochs removed: "
                + ", ".join(f"{e}@{o}" for e, o in r.leader_epochs_removed)
                + "\n"
            )
    for c in changes:
        w(f"checkpoint {c}\n")
