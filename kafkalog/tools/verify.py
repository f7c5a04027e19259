"""``kafkalog verify``: read-only consistency checks of partition directories or a log.dirs tree.

Nothing is written. Every check produces :class:`Finding` objects (file, byte position, offset,
what was expected and what was found) with a severity:

``error``
    Corruption or an inconsistency Kafka would act on (recovery truncates, rebuilds or deletes):
    batch CRC mismatch, offsets not increasing, torn or zero-filled ``.log`` tail, an index entry
    not pointing at a batch, a time-index entry disagreeing with the batch it names, an aborted
    transaction missing from (or invented in) the ``.txnindex``, a recovery point or log start
    offset beyond the log end, a KRaft ``quorum-state`` file Kafka cannot read (the node would
    not start: ``quorum_state``).
``warning``
    Legal but suspicious states an operator wants to know about (a missing index Kafka will
    rebuild, a zero-filled index tail in an inactive segment, a producer snapshot past the log end,
    a high watermark past the log end, a leader-epoch cache whose epochs disagree with the
    batches in a way Kafka's own rules cannot produce, a ``quorum-state`` epoch below the
    metadata log's last epoch: ``quorum_state_epoch``, which Kafka's ``QuorumState.initialize``
    logs before starting unattached in the log's epoch).
``info``
    Normal facts that look odd (offset gaps from compaction, an index entry keyed by the last
    offset of a multi-batch append).

The per-batch checks are the broker's own recovery checks (``kafkalog.segment.validate_entries``
rules: CRC, offsets increasing and indexable), applied to every batch instead of stopping at the
first bad one, so that the report lists everything that is wrong.

Exit status of the command: 0 without errors, 1 with at least one error, 2 for usage errors.

Example
-------
>>> report = verify_paths(["/data/kafka-logs"])  # doctest: +SKIP
>>> [f.check for f in report.findings if f.severity == "error"]  # doctest: +SKIP
['batch_crc']
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import files
from ..errors import KafkaLogError
from ..file_copy import FileCopy

__all__ = [
    "CompactionContext",
    "compaction_context",
    "verify_compacted_partition",
    "Finding",
    "PartitionReport",
    "VerifyReport",
    "verify_partition",
    "verify_log_dir",
    "verify_paths",
    "add_arguments",
    "run",
]

INT32_MAX = 2**31 - 1
_EMPTY_I64 = np.zeros(0, dtype=np.int64)
_LOG_DIR_CHECKPOINTS = (
    files.RECOVERY_POINT_CHECKPOINT_FILE,
    files.REPLICATION_OFFSET_CHECKPOINT_FILE,
    files.LOG_START_OFFSET_CHECKPOINT_FILE,
    files.CLEANER_OFFSET_CHECKPOINT_FILE,
)


@dataclass
class Finding:
    """One thing found wrong (or worth knowing) about one file."""

    check: str
    severity: str  # "error" | "warning" | "info"
    file: str
    message: str
    position: int | None = None
    offset: int | None = None
    expected: Any = None
    found: Any = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class PartitionReport:
    """What was read from one partition directory."""

    directory: str
    segments: int = 0
    batches: int = 0
    bytes: int = 0
    log_start_offset: int | None = None
    log_end_offset: int | None = None
    findings: list[Finding] = field(default_factory=list)

    def count(self, severity: str) -> int:
        return sum(1 for f in self.findings if f.severity == severity)


@dataclass
class VerifyReport:
    """The whole run: partitions and log-dir-level findings."""

    partitions: list[PartitionReport] = field(default_factory=list)
    log_dir_findings: list[Finding] = field(default_factory=list)

    @property
    def findings(self) -> list[Finding]:
        out = list(self.log_dir_findings)
        for p in self.partitions:
            out.extend(p.findings)
        return out

    def count(self, severity: str) -> int:
        return sum(1 for f in self.findings if f.severity == severity)

    def to_dict(self) -> dict[str, Any]:
        return {
            "partitions": [
                {
                    "directory": p.directory,
                    "segments": p.segments,
                    "batches": p.batches,
                    "bytes": p.bytes,
                    "log_start_offset": p.log_start_offset,
                    "log_end_offset": p.log_end_offset,
                    "errors": p.count("error"),
                    "warnings": p.count("warning"),
                    "findings": [f.to_dict() for f in p.findings],
                }
                for p in self.partitions
            ],
            "log_dir_findings": [f.to_dict() for f in self.log_dir_findings],
            "findings": [f.to_dict() for f in self.findings],
            "errors": self.count("error"),
            "warnings": self.count("warning"),
            "infos": self.count("info"),
        }


# --------------------------------------------------------------------------------------------
# One segment's .log
# --------------------------------------------------------------------------------------------


@dataclass
class _SegmentScan:
    """The valid-looking entries of one ``.log`` (header fields as numpy arrays)."""

    base_offset: int
    path: Path
    size: int
    positions: np.ndarray
    sizes: np.ndarray
    base_offsets: np.ndarray
    last_offsets: np.ndarray
    max_timestamps: np.ndarray
    magics: np.ndarray
    attributes: np.ndarray
    leader_epochs: np.ndarray
    valid_end: int  # byte position after the last whole entry
    aborts: list[tuple[int, int]] = field(default_factory=list)  # (producer id, marker offset)
    txn_expect: list[tuple[int, int, int]] = field(default_factory=list)  # (pid, first, last)


def _concat(chunks: list[dict], key: str, dtype: Any) -> np.ndarray:
    if not chunks:
        return np.zeros(0, dtype)
    return np.concatenate([c[key][: c["count"]] for c in chunks]).astype(dtype, copy=False)


def _scan_log(
    path: Path,
    base_offset: int,
    rep: PartitionReport,
    prev_last: int,
    ongoing: dict[int, int],
    deep: bool,
    active: bool = False,
) -> _SegmentScan:
    """Walk one ``.log``: per-entry checks, tail classification, transaction bookkeeping."""
    from ..records.crc import crc32, crc32c
    from .dump import RELEASE_EVERY

    f = str(path)
    # A private copy filled as the walk goes (never a mapping: a writer in another process may
    # cut the file under us; see kafkalog.file_copy). Each window of batches is checked right
    # after it is scanned and released behind, so every byte is copied once and the resident
    # set stays flat.
    with FileCopy(f) as mf:
        buf = mf.buf
        mv = memoryview(buf)
        chunks = []
        prev = prev_last
        released = 0
        empty = _EMPTY_I64
        seg = _SegmentScan(base_offset, path, mf.size, positions=empty, sizes=empty,
                           base_offsets=empty, last_offsets=empty, max_timestamps=empty,
                           magics=empty, attributes=empty, leader_epochs=empty, valid_end=0)
        for out in mf.scan_chunks(0, max_entries=65536):
            chunks.append(out)
            n = int(out["count"])
            rep.batches += n
            positions, sizes, magics = out["positions"], out["sizes"], out["magics"]
            bases, lasts, crcs = out["base_offsets"], out["last_offsets"], out["crcs"]
            attributes = out["attributes"]
            for i in range(n):
                p, s, magic = int(positions[i]), int(sizes[i]), int(magics[i])
                first = int(bases[i]) if magic == 2 else int(lasts[i])
                last = int(lasts[i])
                computed = crc32c(mv[p + 21 : p + s]) if magic == 2 else crc32(mv[p + 16 : p + s])
                if computed != int(crcs[i]):
                    rep.findings.append(
                        Finding(
                            "batch_crc",
                            "error",
                            f,
                            "batch CRC does not match its bytes",
                            position=p,
                            offset=first,
                            expected=int(crcs[i]),
                            found=int(computed),
                        )
                    )
                if first < base_offset:
                    rep.findings.append(
                        Finding(
                            "offset_below_base",
                            "error",
                            f,
                            "batch offset below the segment base offset",
                            position=p,
                            offset=first,
                            expected=f">= {base_offset}",
                            found=first,
                        )
                    )
                if first <= prev:
                    rep.findings.append(
                        Finding(
                            "offset_order",
                            "error",
                            f,
                            "offsets not increasing",
                            position=p,
                            offset=first,
                            expected=f"> {prev}",
                            found=first,
                        )
                    )
                elif prev >= 0 and first > prev + 1:
                    rep.findings.append(
                        Finding(
                            "offset_gap",
                            "info",
                            f,
                            "offset gap (normal after compaction or deleted records)",
                            position=p,
                            offset=first,
                            expected=prev + 1,
                            found=first,
                        )
                    )
                if last < first or last - base_offset > INT32_MAX:
                    rep.findings.append(
                        Finding(
                            "offset_range",
                            "error",
                            f,
                            "last offset before the first, or not indexable from the base offset",
                            position=p,
                            offset=last,
                            expected=f"{first}..{base_offset + INT32_MAX}",
                            found=last,
                        )
                    )
                prev = max(prev, last)
                if magic == 2:
                    attrs = int(attributes[i])
                    _track_transactions(buf, p, s, first, attrs, ongoing, rep, f, seg)
                    if deep and not attrs & 0x20:
                        _deep_check(buf, p, s, f, first, rep)
                elif deep:
                    _deep_check(buf, p, s, f, first, rep, legacy=True)
                if p + s - released > RELEASE_EVERY:
                    mf.release(p + s)  # keep the resident set flat on big segments
                    released = p + s
        seg.positions = _concat(chunks, "positions", np.int64)
        seg.sizes = _concat(chunks, "sizes", np.int64)
        seg.base_offsets = _concat(chunks, "base_offsets", np.int64)
        seg.last_offsets = _concat(chunks, "last_offsets", np.int64)
        seg.max_timestamps = _concat(chunks, "max_timestamps", np.int64)
        seg.magics = _concat(chunks, "magics", np.int8)
        seg.attributes = _concat(chunks, "attributes", np.int16)
        seg.leader_epochs = _concat(chunks, "leader_epochs", np.int32)
        seg.valid_end = int(chunks[-1]["stop_position"])
        seg.size = mf.size  # lower when the file shrank while we read it
        rep.bytes += mf.size
        stop_reason = int(chunks[-1]["stop_reason"])
        mf.ensure(seg.valid_end, mf.size)
        _classify_tail(buf[: mf.size], seg, stop_reason, rep, f, active)
        del mv, buf
    return seg


def _track_transactions(
    buf: np.ndarray,
    p: int,
    s: int,
    offset: int,
    attrs: int,
    ongoing: dict[int, int],
    rep: PartitionReport,
    f: str,
    seg: _SegmentScan,
) -> None:
    """Follow transactions so the ``.txnindex`` can be checked against the control markers
    (the v2 batch at ``p``, ``s`` bytes, base offset ``offset``)."""
    import struct

    if not attrs & 0x10:
        return
    pid = struct.unpack_from(">q", buf, p + 43)[0]
    if not attrs & 0x20:
        ongoing.setdefault(pid, offset)
        return
    from ..records.batch import RecordBatch

    try:
        marker = RecordBatch(buf, p, s).end_txn_marker()
    except KafkaLogError as e:
        rep.findings.append(
            Finding("control_record", "error", f, e.message, position=p, offset=offset)
        )
        return
    if marker is None:
        return
    first = ongoing.pop(pid, None)
    if marker.type == "ABORT":
        seg.aborts.append((pid, offset))
        if first is not None:
            seg.txn_expect.append((pid, first, offset))


def _deep_check(
    buf: np.ndarray, p: int, s: int, f: str, offset: int, rep: PartitionReport, legacy: bool = False
) -> None:
    """Decode every record (decompressing): what a consumer would do with this batch."""
    from ..records.batch import RecordBatch
    from ..records.legacy import LegacyEntry

    try:
        b = LegacyEntry(buf, p, s) if legacy else RecordBatch(buf, p, s)
        b.records()
    except KafkaLogError as e:
        rep.findings.append(
            Finding("record_decode", "error", f, e.message, position=p, offset=offset)
        )


def _classify_tail(
    buf: np.ndarray, seg: _SegmentScan, reason: int, rep: PartitionReport, f: str, active: bool
) -> None:
    from ..native import scan as ns

    end = seg.valid_end
    left = seg.size - end
    if left <= 0:
        return
    tail = buf[end:]
    if not tail.any():
        # The active segment of a broker with log.preallocate=true has this tail while it runs
        # (and after a crash, recovery truncates it without losing data): a warning there. An
        # inactive segment was trimmed on roll, so zeros there mean damage.
        rep.findings.append(
            Finding(
                "zero_filled_tail",
                "warning" if active else "error",
                f,
                "zero-filled tail (preallocated space or a crash); recovery truncates it",
                position=end,
                expected="end of file",
                found=f"{left} zero bytes",
            )
        )
        return
    what = {
        ns.STOP_PARTIAL: (
            "torn_tail",
            "partial trailing batch (torn write); recovery truncates it",
        ),
        ns.STOP_CORRUPT_SIZE: (
            "corrupt_entry_size",
            "entry size below the 14-byte minimum (corrupt header)",
        ),
        ns.STOP_BAD_MAGIC: ("bad_magic", "unknown magic byte"),
        ns.STOP_SHORT_V2: ("short_batch", "v2 batch shorter than its 61-byte header"),
    }.get(reason, ("torn_tail", "unreadable bytes at the end"))
    rep.findings.append(
        Finding(
            what[0],
            "error",
            f,
            what[1],
            position=end,
            expected="a whole batch",
            found=f"{left} bytes",
        )
    )


# --------------------------------------------------------------------------------------------
# Index files
# --------------------------------------------------------------------------------------------


def _check_offset_index(seg: _SegmentScan, active: bool, rep: PartitionReport) -> None:
    from ..index.offset_index import OffsetIndex
    from .dump import kafka_sanity_message

    path = files.offset_index_file(seg.path.parent, seg.base_offset)
    f = str(path)
    if not path.exists():
        if len(seg.positions):
            rep.findings.append(
                Finding(
                    "index_missing",
                    "warning",
                    f,
                    "offset index missing: Kafka rebuilds it at startup",
                )
            )
        return
    idx = OffsetIndex(path, seg.base_offset, writable=False)
    try:
        try:
            idx.sanity_check()
        except KafkaLogError as e:
            rep.findings.append(
                Finding(
                    "index_sanity", "error", f, kafka_sanity_message("offset", idx, f) or e.message
                )
            )
        arr = idx.entries_array()
        rel = arr["relative_offset"].astype(np.int64)
        pos = arr["position"].astype(np.int64)
        del arr
    finally:
        idx.close()
    n = _entries_before_zero_tail(rel, path, active, rep, 8)
    pos_to_batch = {int(p): i for i, p in enumerate(seg.positions)}
    lasts = seg.last_offsets
    prev = None
    for i in range(n):
        off, p = seg.base_offset + int(rel[i]), int(pos[i])
        if prev is not None and off <= prev:
            rep.findings.append(
                Finding(
                    "index_order",
                    "error",
                    f,
                    "index offsets not increasing",
                    position=i * 8,
                    offset=off,
                    expected=f"> {prev}",
                    found=off,
                )
            )
        prev = off
        j = pos_to_batch.get(p)
        if j is None:
            rep.findings.append(
                Finding(
                    "index_position",
                    "error",
                    f,
                    "index entry does not point at a batch start",
                    position=i * 8,
                    offset=off,
                    expected="a batch position in the .log",
                    found=p,
                )
            )
            continue
        if int(lasts[j]) == off:
            continue
        later = np.flatnonzero(lasts[j:] == off)
        within = np.flatnonzero((seg.base_offsets[j:] <= off) & (lasts[j:] >= off))
        if not later.size and within.size:
            # the log cleaner's appends are keyed by the largest offset kept in the chunk
            # (FilterResult.maxOffset): inside a rebuilt batch whose last records went
            kind, severity, message = (
                "index_cleaned_chunk", "info",
                "entry keyed by the largest offset kept in a cleaned chunk (cleaner rule)")
        elif later.size:
            kind, severity, message = (
                "index_multi_batch_append", "info",
                "entry keyed by the last offset of a multi-batch append (live append rule)")
        else:
            kind, severity, message = (
                "index_offset_mismatch", "error",
                "index entry offset is not the last offset of the batch it points at")
        rep.findings.append(Finding(kind, severity, f, message, position=i * 8, offset=off,
                                    expected=int(lasts[j]), found=off))


def _entries_before_zero_tail(
    rel: np.ndarray, path: Path, active: bool, rep: PartitionReport, entry_size: int
) -> int:
    """Entries up to the first slot i > 0 with relative offset 0 (DumpLogSegments' stop rule)."""
    zeros = np.flatnonzero(rel[1:] == 0)
    if not zeros.size:
        return len(rel)
    n = int(zeros[0]) + 1
    if not active:
        rep.findings.append(
            Finding(
                "index_zero_tail",
                "warning",
                str(path),
                "zero-filled slots after the entries of an inactive segment (not trimmed: unclean "
                "shutdown)",
                position=n * entry_size,
                expected=f"{n} entries",
                found=f"{len(rel)} slots",
            )
        )
    return n


def _check_time_index(seg: _SegmentScan, active: bool, rep: PartitionReport) -> None:
    from ..index.time_index import TimeIndex
    from .dump import kafka_sanity_message

    path = files.time_index_file(seg.path.parent, seg.base_offset)
    f = str(path)
    if not path.exists():
        return  # Kafka creates a missing .timeindex empty: nothing lost
    idx = TimeIndex(path, seg.base_offset, writable=False)
    try:
        try:
            idx.sanity_check()
        except KafkaLogError as e:
            rep.findings.append(
                Finding(
                    "timeindex_sanity",
                    "error",
                    f,
                    kafka_sanity_message("time", idx, f) or e.message,
                )
            )
        arr = idx.entries_array()
        ts = arr["timestamp"].astype(np.int64)
        rel = arr["relative_offset"].astype(np.int64)
        del arr
    finally:
        idx.close()
    n = _entries_before_zero_tail(rel, path, active, rep, 12)
    if not active:
        _check_time_index_max(seg, ts, n, f, rep)
    lasts, maxts = seg.last_offsets, seg.max_timestamps
    prev_ts = -1
    for i in range(n):
        t, off = int(ts[i]), seg.base_offset + int(rel[i])
        if t <= prev_ts:
            rep.findings.append(
                Finding(
                    "timeindex_order",
                    "error",
                    f,
                    "time index timestamps not increasing",
                    position=i * 12,
                    offset=off,
                    expected=f"> {prev_ts}",
                    found=t,
                )
            )
        prev_ts = max(prev_ts, t)
        j = int(np.searchsorted(lasts, off, side="left")) if len(lasts) else 0
        if j >= len(lasts):
            rep.findings.append(
                Finding(
                    "timeindex_offset",
                    "error",
                    f,
                    "time index offset beyond the log end",
                    position=i * 12,
                    offset=off,
                    expected=f"<= {int(lasts[-1]) if len(lasts) else -1}",
                    found=off,
                )
            )
            continue
        if int(lasts[j]) != off:
            # 2.x-3.7 leaders could index the exact record offset inside a batch (KAFKA-16310)
            sev = "warning" if int(maxts[j]) == t else "error"
            rep.findings.append(
                Finding(
                    "timeindex_offset",
                    sev,
                    f,
                    "time index offset is not a batch's last offset",
                    position=i * 12,
                    offset=off,
                    expected=int(lasts[j]),
                    found=off,
                )
            )
            continue
        if int(maxts[j]) != t:
            rep.findings.append(
                Finding(
                    "timeindex_timestamp",
                    "error",
                    f,
                    "indexed timestamp differs from the batch max timestamp",
                    position=i * 12,
                    offset=off,
                    expected=int(maxts[j]),
                    found=t,
                )
            )


def _check_time_index_max(seg: _SegmentScan, ts: np.ndarray, n: int, f: str,
                          rep: PartitionReport) -> None:
    """A rolled segment's last time-index entry is its max timestamp (Kafka appends it at roll
    and close, ``onBecomeInactiveSegment``), and Kafka takes the segment's largest timestamp
    from it: one that lost its last entries passes every per-entry check, yet a timestamp
    search in Kafka skips the segment and retention deletes it early (the engine's searches
    check it: ``LogSegment.check_time_index``)."""
    maxts = seg.max_timestamps
    if not len(maxts):
        return
    top = int(maxts.max())
    last = int(ts[n - 1]) if n else -1
    if top >= 0 and last < top:
        j = int(np.argmax(maxts))
        rep.findings.append(
            Finding(
                "timeindex_max",
                "warning",
                f,
                "the last time index entry is below the segment's max timestamp (entries "
                "lost?): Kafka's timestamp searches skip this segment for later timestamps "
                "and retention.ms deletes it early",
                position=(n - 1) * 12 if n else 0,
                offset=int(seg.last_offsets[j]),
                expected=top,
                found=last,
            )
        )


def _check_txn_index(seg: _SegmentScan, rep: PartitionReport) -> None:
    from ..index.txn_index import TransactionIndex

    path = files.transaction_index_file(seg.path.parent, seg.base_offset)
    f = str(path)
    entries = []
    if path.exists():
        idx = TransactionIndex(path, seg.base_offset, writable=False)
        try:
            try:
                idx.sanity_check()
            except KafkaLogError as e:
                rep.findings.append(Finding("txnindex_sanity", "error", f, e.message))
            entries = idx.all_aborted_txns()
        finally:
            idx.close()
    aborts = set(seg.aborts)
    prev_last = None
    have = set()
    for i, t in enumerate(entries):
        have.add((t.producer_id, t.last_offset))
        if (t.producer_id, t.last_offset) not in aborts:
            rep.findings.append(
                Finding(
                    "txnindex_marker",
                    "error",
                    f,
                    "aborted transaction without an ABORT marker of that producer at its "
                    "last offset",
                    position=i * 34,
                    offset=t.last_offset,
                    expected="an ABORT control record",
                    found=f"producer {t.producer_id}",
                )
            )
        if t.first_offset > t.last_offset:
            rep.findings.append(
                Finding(
                    "txnindex_range",
                    "error",
                    f,
                    "first offset after last offset",
                    position=i * 34,
                    offset=t.first_offset,
                    expected=f"<= {t.last_offset}",
                    found=t.first_offset,
                )
            )
        if prev_last is not None and t.last_offset <= prev_last:
            rep.findings.append(
                Finding(
                    "txnindex_order",
                    "error",
                    f,
                    "last offsets not increasing",
                    position=i * 34,
                    offset=t.last_offset,
                    expected=f"> {prev_last}",
                    found=t.last_offset,
                )
            )
        prev_last = t.last_offset
    by_key = {(t.producer_id, t.last_offset): t for t in entries}
    for pid, first, last in seg.txn_expect:
        t = by_key.get((pid, last))
        if t is None:
            rep.findings.append(
                Finding(
                    "txnindex_missing",
                    "error",
                    f,
                    "aborted transaction with data is not in the transaction index",
                    offset=last,
                    expected=f"producer {pid} firstOffset {first} lastOffset {last}",
                    found=None,
                )
            )
        elif t.first_offset != first:
            rep.findings.append(
                Finding(
                    "txnindex_first_offset",
                    "warning",
                    f,
                    "first offset differs from the first data batch seen",
                    offset=last,
                    expected=first,
                    found=t.first_offset,
                )
            )


# --------------------------------------------------------------------------------------------
# Partition and log dir
# --------------------------------------------------------------------------------------------




def verify_partition(directory: str | os.PathLike[str], *, deep: bool = False) -> PartitionReport:
    """Check every segment, index and state file of one partition directory (read-only)."""
    from ..lock import LOCK_FILE_NAME, lock_holder

    d = Path(directory)
    rep = PartitionReport(str(d))
    holder = lock_holder(d, LOCK_FILE_NAME)
    if holder is not None:
        # verify reads each file at its own moment (private copies, never mappings: nothing
        # the writer does can crash it), so a live writer's rolls and truncations between two
        # reads show up as transient inconsistencies
        rep.findings.append(Finding(
            "live_writer", "warning", str(d / LOCK_FILE_NAME),
            f"a writer (pid {holder}) holds this directory: files are read while it changes "
            "them, so errors below may be transient; verify a directory no writer holds for a "
            "verdict"))
    bases = files.segment_base_offsets(d)
    rep.segments = len(bases)
    for entry in sorted(d.iterdir()):
        if entry.name.endswith(files.LOG_FILE_SUFFIX) and not entry.is_file():
            # Kafka's loader lists files only: a segment that became something else is passed
            # over there, its records with it
            rep.findings.append(Finding(
                "segment_not_a_file", "error", str(entry),
                "a segment's name on something that is not a file (Kafka's loader passes it "
                "over, and the records of that segment with it)"))
    if not bases:
        rep.findings.append(Finding(
            "no_segments", "warning", str(d),
            "no .log segment: Kafka's loader starts the partition empty at its log start "
            "offset (the log dir's checkpoints tell whether records were lost)"))
    prev_last = -1
    ongoing: dict[int, int] = {}
    scans: list[_SegmentScan] = []
    for k, base in enumerate(bases):
        path = files.log_file(d, base)
        try:
            seg = _scan_log(path, base, rep, prev_last, ongoing, deep, k == len(bases) - 1)
        except OSError as e:
            rep.findings.append(Finding("io", "error", str(path), str(e)))
            continue
        scans.append(seg)
        if len(seg.last_offsets):
            prev_last = max(prev_last, int(seg.last_offsets.max()))
        if (
            k + 1 < len(bases)
            and len(seg.last_offsets)
            and int(seg.last_offsets.max()) >= bases[k + 1]
        ):
            rep.findings.append(
                Finding(
                    "segment_overlap",
                    "error",
                    str(path),
                    "segment holds offsets at or past the next segment's base offset",
                    offset=int(seg.last_offsets.max()),
                    expected=f"< {bases[k + 1]}",
                    found=int(seg.last_offsets.max()),
                )
            )
        active = k == len(bases) - 1
        for check in (_check_offset_index, _check_time_index):
            try:
                check(seg, active, rep)
            except (OSError, KafkaLogError) as e:
                rep.findings.append(Finding("index_read", "error", str(path), str(e)))
        try:
            _check_txn_index(seg, rep)
        except (OSError, KafkaLogError) as e:
            rep.findings.append(Finding("txnindex_read", "error", str(path), str(e)))
    if bases:
        rep.log_start_offset = bases[0]
        rep.log_end_offset = prev_last + 1 if prev_last >= 0 else bases[-1]
    _check_orphans(d, bases, rep)
    _check_partition_state(d, rep, scans)
    return rep


def _check_orphans(d: Path, bases: list[int], rep: PartitionReport) -> None:
    known = set(bases)
    for p in sorted(d.iterdir()):
        name = p.name
        if files.is_index_file(p):
            try:
                off = files.offset_from_filename(name)
            except (ValueError, KafkaLogError):
                continue
            if off not in known:
                rep.findings.append(
                    Finding(
                        "orphan_index",
                        "warning",
                        str(p),
                        "index file without its .log (Kafka deletes it)",
                    )
                )
        elif name.endswith((".deleted", ".cleaned", ".swap", ".tmp")):
            rep.findings.append(
                Finding(
                    "stray_file",
                    "info",
                    str(p),
                    "leftover of an interrupted delete/clean/swap/checkpoint",
                )
            )


def _check_partition_state(d: Path, rep: PartitionReport, scans: list[_SegmentScan]) -> None:
    from ..checkpoint import LeaderEpochCheckpointFile, PartitionMetadataFile
    from .dump import _SnapshotCorrupt, read_producer_snapshot

    leo = rep.log_end_offset
    for p in sorted(d.glob("*.snapshot")):
        try:
            data = p.read_bytes()
        except FileNotFoundError:
            # a live writer deletes snapshots (roll keeps the newest two; retention drops those
            # below the log start): one listed a moment ago and gone now is not damage
            continue
        try:
            read_producer_snapshot(data)
        except _SnapshotCorrupt as e:
            rep.findings.append(Finding("snapshot_corrupt", "error", str(p), str(e)))
            continue
        try:
            off = files.offset_from_filename(p.name)
        except (ValueError, KafkaLogError):
            continue
        if leo is not None and off > leo:
            rep.findings.append(
                Finding(
                    "snapshot_beyond_end",
                    "warning",
                    str(p),
                    "producer snapshot past the log end offset",
                    offset=off,
                    expected=f"<= {leo}",
                    found=off,
                )
            )
    lec = d / files.LEADER_EPOCH_CHECKPOINT_FILE
    if lec.exists():
        try:
            entries = LeaderEpochCheckpointFile(lec).read()
        except KafkaLogError as e:
            rep.findings.append(
                Finding("checkpoint_parse", "error", str(lec), e.message, position=e.position)
            )
            entries = []
        _check_epochs(lec, entries, rep, scans)
    pm = d / files.PARTITION_METADATA_FILE
    if pm.exists():
        try:
            PartitionMetadataFile(pm).read()
        except KafkaLogError as e:
            rep.findings.append(
                Finding("checkpoint_parse", "error", str(pm), e.message, position=e.position)
            )
    _check_quorum_state(d, rep, scans)


def _check_quorum_state(d: Path, rep: PartitionReport, scans: list[_SegmentScan]) -> None:
    """A KRaft metadata partition's ``quorum-state`` (FileQuorumStateStore): unreadable, the
    node does not start; an epoch below the log's last one, Kafka warns and starts unattached
    in the log's epoch (QuorumState.initialize, Kafka 4.1)."""
    from ..cluster.quorum import QUORUM_STATE_FILE, read_quorum_state

    qs = d / QUORUM_STATE_FILE
    if not qs.exists():
        return
    try:
        state = read_quorum_state(qs)
    except (KafkaLogError, OSError) as e:
        rep.findings.append(Finding(
            "quorum_state", "error", str(qs),
            f"{getattr(e, 'message', e)}: Kafka's FileQuorumStateStore cannot read it, so the "
            "node would not start"))
        return
    epochs = [int(s.leader_epochs.max()) for s in scans if len(s.leader_epochs)]
    last = max(epochs, default=-1)
    if state.leader_epoch < last:
        rep.findings.append(Finding(
            "quorum_state_epoch", "warning", str(qs),
            f"Epoch from quorum store file is {state.leader_epoch}, which is smaller than last "
            f"written epoch {last} in the log: Kafka starts this node unattached in epoch "
            f"{last}", expected=f">= {last}", found=state.leader_epoch))


def _check_epochs(
    path: Path, entries: list, rep: PartitionReport, scans: list[_SegmentScan]
) -> None:
    f = str(path)
    prev = None
    for i, e in enumerate(entries):
        if prev is not None and (e.epoch <= prev.epoch or e.start_offset < prev.start_offset):
            rep.findings.append(
                Finding(
                    "epoch_order",
                    "error",
                    f,
                    "epochs or start offsets not increasing",
                    position=i,
                    offset=e.start_offset,
                    expected=f"epoch > {prev.epoch}, start >= {prev.start_offset}",
                    found=f"epoch {e.epoch}, start {e.start_offset}",
                )
            )
        if rep.log_end_offset is not None and e.start_offset > rep.log_end_offset:
            rep.findings.append(
                Finding(
                    "epoch_beyond_end",
                    "warning",
                    f,
                    "epoch starts past the log end offset",
                    offset=e.start_offset,
                    expected=f"<= {rep.log_end_offset}",
                    found=e.start_offset,
                )
            )
        prev = e
    if any(f.check == "epoch_order" for f in rep.findings):
        return  # the cache is not a sorted map: its epochs cannot be checked against the log
    _check_epochs_against_log(f, entries, rep, scans)


def _check_epochs_against_log(
    f: str, entries: list, rep: PartitionReport, scans: list[_SegmentScan]
) -> None:
    """Warn where the leader-epoch cache disagrees with the epochs stamped on the batches, in a
    way Kafka's own rules cannot produce.

    ``LeaderEpochFileCache`` (storage/.../epoch/LeaderEpochFileCache.java) maps each offset to
    the epoch of the last entry starting at or before it: that is what it answers followers
    with (``endOffsetFor``), so every batch must carry the epoch its offsets map to. Kafka's rules
    keep that true while they remove data or entries:

    * ``assign(epoch, baseOffset)`` on every appended batch (leader and follower) and
      ``assign(epoch, logEndOffset)`` when a replica becomes leader: an epoch starts at or
      before its first batch, after every batch of an earlier epoch;
    * the cleaner removes records and whole batches but never touches the cache: an epoch's
      entry may start before its first *remaining* batch (a gap), which still maps right;
    * ``truncateFromStart(logStartOffset)`` (DeleteRecords, retention, and again at load) drops
      the entries below the new log start and moves the last of them to start there, possibly
      inside a batch, and the checkpoint is flushed asynchronously, so the file may hold the old
      or the new first entry; the batches below the log start (still in the first segment after
      DeleteRecords) then lie below the first cached start or straddle it;
    * ``truncateFromEnd`` (follower truncation, load) removes entries at or past the log end;
      an entry at the log end is a leader that has not written yet.

    So a batch of epoch E is consistent when the entry covering its last offset is E's and
    begins at or before the batch (or it is the first entry, moved by the log start), or when the
    batch lies entirely below the first cached start with an epoch no later than the first
    entry's. Anything else is reported once per epoch: ``epoch_missing`` (E not in the cache),
    ``epoch_start`` (E's entry starts after a batch of E, or a later epoch's entry starts at or
    before the end of a batch of E).
    """
    # a sentinel entry (epoch -1) below every offset stands for "not covered by the cache"
    starts = np.array([-1] + [e.start_offset for e in entries], np.int64)
    epochs_cached = np.array([-1] + [e.epoch for e in entries], np.int64)
    first_epoch = entries[0].epoch if entries else -1
    start_of = {e.epoch: e.start_offset for e in entries}
    reported: set[tuple[str, int]] = set()

    def report(
        check: str, epoch: int, offset: int, message: str, expected: Any, found: Any
    ) -> None:
        if (check, epoch) in reported:
            return
        reported.add((check, epoch))
        rep.findings.append(
            Finding(check, "warning", f, message, offset=offset, expected=expected, found=found)
        )

    for s in scans:
        keep = (s.magics == 2) & (s.leader_epochs >= 0)
        if not keep.any():
            continue
        bases = s.base_offsets[keep]
        lasts = s.last_offsets[keep]
        epochs = s.leader_epochs[keep].astype(np.int64)
        # index of the entry covering each batch's last offset (0: the sentinel, none)
        cover = np.searchsorted(starts, lasts, side="right") - 1
        cached = epochs_cached[cover]
        ok = (cover > 0) & (cached == epochs) & ((bases >= starts[cover]) | (cover == 1))
        # entirely below the cache: deleted records, or a log start DeleteRecords moved
        ok |= (cover == 0) & (epochs <= first_epoch)
        for j in np.flatnonzero(~ok).tolist():
            epoch, base, last = int(epochs[j]), int(bases[j]), int(lasts[j])
            if epoch not in start_of:
                report(
                    "epoch_missing",
                    epoch,
                    base,
                    "leader epoch seen in the log but not in the checkpoint",
                    expected=f"epoch {epoch} start <= {base}",
                    found=None,
                )
            elif start_of[epoch] > base:
                report(
                    "epoch_start",
                    epoch,
                    base,
                    f"epoch start offset differs from its first batch: the checkpoint starts "
                    f"epoch {epoch} at {start_of[epoch]}, after a batch of it at {base}",
                    expected=f"<= {base}",
                    found=start_of[epoch],
                )
            else:
                later = int(cached[j])
                report(
                    "epoch_start",
                    later,
                    base,
                    f"epoch start offset differs from the log: the checkpoint starts epoch "
                    f"{later} at {start_of.get(later)}, before the end of a batch of epoch "
                    f"{epoch} ({base}..{last})",
                    expected=f"> {last}",
                    found=start_of.get(later),
                )


def _verify_bootstrap(d: Path) -> list[Finding]:
    """A KRaft metadata directory's ``bootstrap.checkpoint``: a controller reads it at its
    first start (``BootstrapDirectory.read``) and cannot start when it does not decode or has
    no ``metadata.version``."""
    from ..storage.bootstrap_metadata import read_bootstrap_directory
    from ..storage.kraft_snapshot import BOOTSTRAP_FILE_NAME

    path = d / BOOTSTRAP_FILE_NAME
    if not path.exists():
        return []
    try:
        read_bootstrap_directory(d)
    except KafkaLogError as e:
        return [Finding("bootstrap", "error", str(path), e.message, position=e.position,
                        offset=e.offset)]
    return []


def verify_log_dir(
    directory: str | os.PathLike[str], partitions: dict[str, PartitionReport]
) -> list[Finding]:
    """Check the log-dir checkpoint files against the partitions found (read-only)."""
    from ..checkpoint import MetaProperties, OffsetCheckpointFile

    d = Path(directory)
    out: list[Finding] = []
    meta = d / files.META_PROPERTIES_FILE
    if meta.exists():
        try:
            MetaProperties.read(meta)
        except KafkaLogError as e:
            out.append(Finding("checkpoint_parse", "error", str(meta), e.message))
    out.extend(_verify_bootstrap(d))
    parsed: dict[str, list[tuple[str, int, int]]] = {}
    for name in _LOG_DIR_CHECKPOINTS:
        p = d / name
        if not p.exists():
            continue
        try:
            parsed[name] = OffsetCheckpointFile(p).read_entries()
        except KafkaLogError as e:
            out.append(Finding("checkpoint_parse", "error", str(p), e.message, position=e.position))
    recovery_points = {
        f"{t}-{n}": off for t, n, off in parsed.get(files.RECOVERY_POINT_CHECKPOINT_FILE, [])
    }
    log_starts = {
        f"{t}-{n}": off for t, n, off in parsed.get(files.LOG_START_OFFSET_CHECKPOINT_FILE, [])
    }
    for name, entries in parsed.items():
        p = d / name
        unknown = []
        for topic, part, off in entries:
            rep = partitions.get(f"{topic}-{part}")
            if rep is None:
                unknown.append(f"{topic}-{part}")
                continue
            leo, start = rep.log_end_offset, rep.log_start_offset
            if leo is None:
                # no segment: LogLoader opens an empty one at the checkpointed log start
                # offset, which is then the log end offset the other checkpoints must not pass
                leo = log_starts.get(f"{topic}-{part}", 0)
                if name == files.LOG_START_OFFSET_CHECKPOINT_FILE:
                    continue
            if name == files.RECOVERY_POINT_CHECKPOINT_FILE and off > leo:
                out.append(
                    Finding(
                        "checkpoint_beyond_end",
                        "error",
                        str(p),
                        f"{topic}-{part}: recovery point {off} is past the log end offset {leo}: "
                        f"offsets {leo}..{off - 1} were recorded as flushed but are not in the "
                        "log (lost after the flush, or truncated after this checkpoint was "
                        "written)",
                        offset=off,
                        expected=f"<= {leo}",
                        found=off,
                    )
                )
            elif name == files.REPLICATION_OFFSET_CHECKPOINT_FILE and off > leo:
                # LogManager checkpoints the high watermark; LogLoader/Partition clamp it to the
                # log end on load. A replica's unflushed tail is lost in a power failure by
                # design (Kafka relies on replication, not fsync): only the recovery point says
                # whether these offsets were ever flushed here.
                rp = recovery_points.get(f"{topic}-{part}")
                if rp is None:
                    flushed = "; no recovery point says they were ever flushed here"
                elif rp <= leo:
                    flushed = (
                        f"; the recovery point ({rp}) shows they were never flushed here "
                        "(an unflushed tail lost in a crash: Kafka lowers the high watermark "
                        "and fetches them again)"
                    )
                else:
                    flushed = f"; the recovery point ({rp}) says some were flushed here"
                out.append(
                    Finding(
                        "checkpoint_beyond_end",
                        "warning",
                        str(p),
                        f"{topic}-{part}: high watermark {off} is past the log end offset {leo}: "
                        f"offsets {leo}..{off - 1} were replicated but are not in this "
                        f"replica's log{flushed}",
                        offset=off,
                        expected=f"<= {leo}",
                        found=off,
                    )
                )
            elif name == files.LOG_START_OFFSET_CHECKPOINT_FILE and off > leo:
                out.append(
                    Finding(
                        "checkpoint_beyond_end",
                        "error",
                        str(p),
                        f"{topic}-{part}: log start offset past the log end offset "
                        "(Kafka deletes every segment)",
                        offset=off,
                        expected=f"<= {leo}",
                        found=off,
                    )
                )
            elif (
                name == files.LOG_START_OFFSET_CHECKPOINT_FILE and start is not None and off < start
            ):
                out.append(
                    Finding(
                        "checkpoint_start",
                        "warning",
                        str(p),
                        f"{topic}-{part}: log start offset before the first segment",
                        offset=off,
                        expected=f">= {start}",
                        found=off,
                    )
                )
            elif name == files.CLEANER_OFFSET_CHECKPOINT_FILE and off > leo:
                out.append(
                    Finding(
                        "checkpoint_beyond_end",
                        "warning",
                        str(p),
                        f"{topic}-{part}: cleaner offset past the log end offset",
                        offset=off,
                        expected=f"<= {leo}",
                        found=off,
                    )
                )
        if unknown:
            out.append(
                Finding(
                    "checkpoint_unknown_partition",
                    "info",
                    str(p),
                    f"{len(unknown)} partitions listed have no directory here: "
                    + ", ".join(unknown[:5])
                    + (" ..." if len(unknown) > 5 else ""),
                )
            )
    return out


def verify_paths(paths: list[str], *, deep: bool = False,
                 now_ms: int | None = None) -> VerifyReport:
    """Verify partition directories and/or log dirs (directories holding partition dirs).

    Compacted partitions also get :func:`verify_compacted_partition` (``now_ms``: the time
    tombstone horizons are compared with; the wall clock when None)."""
    report = VerifyReport()
    for raw in paths:
        d = Path(raw)
        if files.is_partition_dir(d):
            r = verify_partition(d, deep=deep)
            report.partitions.append(r)
            _verify_compaction(d, d.parent, r, now_ms)
            _verify_group_records(d, r)
            continue
        subs = sorted(c for c in d.iterdir() if files.is_partition_dir(c))
        reps = {}
        for c in subs:
            r = verify_partition(c, deep=deep)
            report.partitions.append(r)
            reps[c.name] = r
            _verify_compaction(c, d, r, now_ms)
            _verify_group_records(c, r)
        report.log_dir_findings.extend(verify_log_dir(d, reps))
    report.log_dir_findings.extend(verify_tiered(paths))
    return report


def verify_tiered(paths: list[str]) -> list[Finding]:
    """Tiered storage, where the given log dirs hold ``__remote_log_metadata`` partitions
    (:mod:`kafkalog.tiered`): an error per gap (offsets at or above a partition's log start
    offset that neither a copied remote segment nor the local log holds; a warning below every
    copied offset, see ``Coverage.below_remote``), a warning per event
    Kafka's metadata manager would drop, a warning per copied segment outside the local log's
    leader-epoch lineage (``tiered_unreachable``: a divergent leader's upload, which no broker
    reads), and an info per local directory of another incarnation of a topic (not compared)."""
    from ..tiered.coverage import tree_coverage
    from ..tiered.metadata_store import METADATA_TOPIC, metadata_partition_dirs, read_log_dirs

    roots = [p for p in paths if not files.is_partition_dir(Path(p))]
    dirs = metadata_partition_dirs(roots) if roots else []
    if not dirs:
        return []
    store = read_log_dirs(roots)
    dir_of = {int(d.name.rpartition("-")[2]): str(d) for d in reversed(dirs)}  # (first wins)
    out = [Finding("tiered_metadata", "warning",
                   dir_of.get(f.partition, f"{METADATA_TOPIC}-{f.partition}"), f.message,
                   offset=f.offset) for f in store.findings]
    covs, notes = tree_coverage(store, roots)
    for t, (lp, cov) in covs.items():
        for a, b in cov.gaps:
            where = f"the local log starts at {lp.local_start}" if lp else \
                "no local copy of the partition in the given log dirs"
            # below every copy it may be remote retention run after the checkpoint: a warning
            retention = cov.below_remote((a, b))
            out.append(Finding(
                "tiered_gap", "warning" if retention else "error",
                str(lp.path) if lp else f"{t.topic}-{t.partition}",
                f"offsets {a}..{b} of {t.topic}-{t.partition} (topic id {t.topic_id}) are in no "
                f"copied remote segment and not local ({where})"
                + ("; below every copied offset: remote retention may have deleted them after "
                   "log-start-offset-checkpoint was written" if retention else ""), offset=a))
        for m, reason in cov.unreachable:
            out.append(Finding(
                "tiered_unreachable", "warning", str(lp.path) if lp else f"{t.topic}-{t.partition}",
                f"remote segment {m.segment_id.id} (offsets {m.start_offset}..{m.end_offset}) of "
                f"{t.topic}-{t.partition} is outside the local log's leader epoch lineage: "
                f"{reason}; no broker reads it", offset=m.start_offset))
    out += [Finding("tiered_incarnation", "info", note.split(" holds ")[0], note)
            for note in notes]
    return out


# --------------------------------------------------------------------------------------------
# Compacted partitions (the log cleaner's invariants)
# --------------------------------------------------------------------------------------------

#: Kafka's internal topics, always compacted
_COMPACTED_INTERNAL_TOPICS = ("__consumer_offsets", "__transaction_state", "__share_group_state")


@dataclass
class CompactionContext:
    """What verify knows of a partition's compaction: whether it is compacted (its topic
    config, an internal topic, a cleaner checkpoint entry or a batch carrying a delete
    horizon), its cleaner checkpoint and ``delete.retention.ms`` when known."""

    compacted: bool
    cleaner_checkpoint: int | None = None
    delete_retention_ms: int | None = None


def compaction_context(partition_dir: str | os.PathLike[str],
                       log_dir: str | os.PathLike[str] | None = None) -> CompactionContext:
    """Read what says a partition is compacted: the log dir's ``cleaner-offset-checkpoint``
    and ``.kafkalog-topics.json``, a standalone log's cleaner checkpoint, the topic name."""
    from ..checkpoint import OffsetCheckpointFile
    from ..log import CLEANER_OFFSETS_FILE
    from ..log_dir import TOPICS_FILE

    d = Path(partition_dir)
    root = Path(log_dir) if log_dir is not None else d.parent
    try:
        topic, partition = files.parse_topic_partition_name(d)
    except (ValueError, KafkaLogError):
        topic, partition = d.name, -1
    compacted = topic in _COMPACTED_INTERNAL_TOPICS
    checkpoint = None
    retention = None
    for path, entry in ((root / files.CLEANER_OFFSET_CHECKPOINT_FILE, (topic, partition)),
                        (d / CLEANER_OFFSETS_FILE, ("cleaner-offset", 0))):
        if path.exists():
            try:
                value = OffsetCheckpointFile(path).read().get(entry)
            except KafkaLogError:
                continue
            if value is not None:
                checkpoint, compacted = value, True
    topics = root / TOPICS_FILE
    if topics.exists():
        try:
            conf = json.loads(topics.read_text("utf-8"))["topics"].get(topic, {}).get(
                "config", {})
            if "compact" in str(conf.get("cleanup.policy", "")):
                compacted = True
            if "delete.retention.ms" in conf:
                retention = int(conf["delete.retention.ms"])
        except (ValueError, KeyError, TypeError, AttributeError):
            pass
    return CompactionContext(compacted, checkpoint, retention)


def _verify_group_records(d: Path, rep: PartitionReport) -> None:
    """``group_replay`` (error): what a broker's group coordinator does when it loads a
    ``__consumer_offsets`` partition, replay every record in offset order; a record it cannot
    decode or refuses (a streams group's tombstones out of order, Kafka's
    ``IllegalStateException``) fails the load, and the partition's groups stay unavailable
    (``COORDINATOR_LOAD_IN_PROGRESS`` to every client). Skipped when the partition's files
    have errors of their own (reported above)."""
    from ..groups.metadata_manager import GroupMetadataManager, OffsetsTopicMetadataError
    from ..log import Log

    try:
        topic, partition = files.parse_topic_partition_name(d)
    except (ValueError, KafkaLogError):
        return
    if topic != "__consumer_offsets" or d.name != f"{topic}-{partition}" \
            or any(f.severity == "error" for f in rep.findings):
        return
    try:
        log = Log.open(d, read_only=True)
    except (OSError, KafkaLogError) as e:
        rep.findings.append(Finding("group_replay", "error", str(d), f"cannot open: {e}"))
        return
    try:
        GroupMetadataManager.over_logs({partition: log})
    except OffsetsTopicMetadataError as e:
        rep.findings.append(Finding(
            "group_replay", "error", str(e.path or d), f"the group coordinator's load of this "
            f"partition fails here: {e.message}", offset=e.offset))
    except (OSError, KafkaLogError) as e:
        rep.findings.append(Finding("group_replay", "error", str(d), str(e)))
    finally:
        log.close()


def _verify_compaction(d: Path, root: Path, rep: PartitionReport, now_ms: int | None) -> None:
    try:
        ctx = compaction_context(d, root)
        verify_compacted_partition(d, rep, ctx, now_ms=now_ms)
    except (OSError, KafkaLogError) as e:
        rep.findings.append(Finding("compaction_read", "error", str(d), str(e)))


def verify_compacted_partition(directory: str | os.PathLike[str], rep: PartitionReport,
                               ctx: CompactionContext, *, now_ms: int | None = None) -> None:
    """The log cleaner's invariants on a compacted partition (findings added to ``rep``).

    Offset gaps are normal here (``offset_gap`` stays info). Checked:

    ``compacted_keyless`` (warning)
        a data record without a key: Kafka refuses them at append in a compacted topic
        (``Compacted topic cannot accept message without key``) and the cleaner drops them;
    ``tombstone_past_horizon`` (warning)
        a tombstone in a batch whose delete horizon (KIP-534) is at or before now: the next
        cleaning removes it;
    ``delete_horizon_future`` (warning)
        a delete horizon further than ``delete.retention.ms`` ahead of now (a clock jump);
    ``duplicate_key_in_clean_section`` (warning)
        a key twice below the cleaner checkpoint: a cleaning keeps one record per key there;
    ``cleaner_checkpoint_range`` (warning)
        the cleaner checkpoint below the log start offset or beyond the log end offset (Kafka
        resets it to the log start offset).

    A partition is examined only when ``ctx`` says it is compacted, or when a batch carries a
    delete horizon (only the cleaner sets one).
    """
    import time

    from ..records.batch import iter_batches

    d = Path(directory)
    now = int(time.time() * 1000) if now_ms is None else now_ms
    checkpoint = ctx.cleaner_checkpoint
    seen: dict[bytes, int] = {}
    findings: list[Finding] = []
    saw_horizon = False
    for base in files.segment_base_offsets(d):
        path = files.log_file(d, base)
        f = str(path)
        try:
            batches = iter_batches(path, validate=False)
            for b in batches:
                if b.magic < 2 or b.is_control:
                    continue
                horizon = b.delete_horizon_ms
                if horizon is not None:
                    saw_horizon = True
                    if ctx.delete_retention_ms is not None and \
                            horizon > now + ctx.delete_retention_ms:
                        findings.append(Finding(
                            "delete_horizon_future", "warning", f,
                            "delete horizon further ahead than delete.retention.ms",
                            position=b.position, offset=b.base_offset,
                            expected=f"<= {now + ctx.delete_retention_ms}", found=horizon))
                for r in b:
                    if r.key is None:
                        findings.append(Finding(
                            "compacted_keyless", "warning", f,
                            "record without a key in a compacted partition",
                            position=b.position, offset=r.offset))
                        continue
                    if r.value is None and horizon is not None and horizon <= now:
                        findings.append(Finding(
                            "tombstone_past_horizon", "warning", f,
                            "tombstone past its delete horizon (the next cleaning removes it)",
                            position=b.position, offset=r.offset,
                            expected=f"gone at or after {horizon}", found=now))
                    if checkpoint is not None and r.offset < checkpoint:
                        prev = seen.get(r.key)
                        if prev is not None:
                            findings.append(Finding(
                                "duplicate_key_in_clean_section", "warning", f,
                                "a key twice below the cleaner checkpoint",
                                position=b.position, offset=r.offset,
                                expected=f"one record per key below {checkpoint}",
                                found=f"also at offset {prev}"))
                        seen[r.key] = r.offset
        except KafkaLogError:
            continue  # corrupt bytes are reported by the segment checks
    if not (ctx.compacted or saw_horizon):
        return
    rep.findings.extend(findings)
    if checkpoint is not None and rep.log_start_offset is not None and \
            rep.log_end_offset is not None and \
            not rep.log_start_offset <= checkpoint <= rep.log_end_offset:
        rep.findings.append(Finding(
            "cleaner_checkpoint_range", "warning", str(d),
            "cleaner checkpoint outside the log (Kafka resets it to the log start offset)",
            offset=checkpoint, expected=f"{rep.log_start_offset}..{rep.log_end_offset}",
            found=checkpoint))


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "dirs",
        nargs="+",
        metavar="DIR",
        help="partition directories or log dirs (a log.dirs entry)",
    )
    p.add_argument("--json", action="store_true", help="print the report as one JSON document")
    p.add_argument(
        "--deep", action="store_true", help="also decode every record (decompressing batches)"
    )
    p.add_argument("--show-info", action="store_true", help="list info findings too")
    p.add_argument("--zookeeper", metavar="HOST:PORT[/chroot]",
                   help="also cross-check against a ZooKeeper-mode cluster (topic ids, leader "
                   "epochs, replica placement; see kafkalog.tools.verify_zookeeper)")
    p.add_argument("--metadata", metavar="PATH",
                   help="also cross-check against a KRaft cluster's metadata: a "
                   "__cluster_metadata-0 directory (or a log dir holding one), segment or "
                   "snapshot; which partition directories a broker would move aside as strays, "
                   "leader epochs, log directory assignment (see kafkalog.tools.verify_kraft)")
    p.add_argument("--broker-id", type=int, metavar="ID",
                   help="this broker's id for --zookeeper and --metadata (default: "
                   "meta.properties)")


def run(args: argparse.Namespace) -> int:
    for raw in args.dirs:
        if not Path(raw).is_dir():
            sys.stderr.write(f"kafkalog verify: error: {raw} is not a directory\n")
            return 2
    report = verify_paths(args.dirs, deep=args.deep)
    if getattr(args, "zookeeper", None):
        from .verify_zookeeper import cross_check_zookeeper

        report.log_dir_findings.extend(
            cross_check_zookeeper(args.dirs, args.zookeeper, broker_id=args.broker_id))
    if getattr(args, "metadata", None):
        from .verify_kraft import cross_check_kraft

        report.log_dir_findings.extend(
            cross_check_kraft(args.dirs, args.metadata, broker_id=args.broker_id))
    if args.json:
        sys.stdout.write(json.dumps(report.to_dict(), indent=2) + "\n")
    else:
        _print_report(report, show_info=args.show_info)
    return 1 if report.count("error") else 0


def _print_report(report: VerifyReport, *, show_info: bool) -> None:
    from rich.console import Console
    from rich.table import Table

    # Wide enough that no partition's path is folded inside its cell (a path cut over several
    # lines cannot be copied or grepped; output piped to a file is 80 columns by default): the
    # table is still only as wide as its content, and a narrower terminal wraps whole lines.
    longest = max((len(p.directory) for p in report.partitions), default=0)
    console = Console(file=sys.stdout, width=max(100, Console().width, longest + 100),
                      soft_wrap=True)
    table = Table(title="kafkalog verify", show_lines=False)
    for col in ("partition", "segments", "batches", "bytes", "offsets", "errors", "warnings"):
        table.add_column(
            col, justify="left" if col in ("partition", "offsets") else "right", overflow="fold"
        )
    for p in report.partitions:
        offsets = (
            "-"
            if p.log_start_offset is None
            else f"{p.log_start_offset}..{(p.log_end_offset or 0) - 1}"
        )
        table.add_row(
            p.directory,
            str(p.segments),
            str(p.batches),
            str(p.bytes),
            offsets,
            str(p.count("error")),
            str(p.count("warning")),
        )
    console.print(table)
    shown = [f for f in report.findings if show_info or f.severity != "info"]
    for f in shown:
        where = []
        if f.position is not None:
            where.append(f"position {f.position}")
        if f.offset is not None:
            where.append(f"offset {f.offset}")
        loc = (" (" + ", ".join(where) + ")") if where else ""
        ef = ""
        if f.expected is not None or f.found is not None:
            ef = f" expected {f.expected}, found {f.found}"
        console.print(
            f"{f.severity.upper()} {f.check}: {f.file}{loc}: {f.message}{ef}",
            markup=False,
            highlight=False,
        )
    console.print(
        f"{report.count('error')} errors, {report.count('warning')} warnings, "
        f"{report.count('info')} infos",
        markup=False,
        highlight=False,
    )
