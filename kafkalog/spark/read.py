"""Executor side: read the chunks of one task into ``pyarrow.RecordBatch``es.

Per chunk the chunk's ``.log`` bytes are copied *here* with ``pread`` (never mapped: a writer in
another process may cut the file while a task reads it; see :mod:`kafkalog.file_copy`), its batch
headers are scanned once (:func:`kafkalog.native.scan.scan_entries`, no record bytes touched),
and only the batches that can hold wanted rows are handed to the columnar decoder
(:func:`kafkalog.records.columnar.decode_columns`):

* control batches never (their records never become rows);
* batches entirely outside ``[start_offset, end_offset)`` or, with ``offset IN (...)``, holding
  none of the wanted offsets;
* batches whose ``maxTimestamp`` is below a pushed ``timestamp >=`` bound;
* with ``read_committed``, transactional batches of a producer inside one of its aborted
  transactions (from ``.txnindex``, collected at planning).

Kept batches are decoded in runs of consecutive batches of about ``maxRecordsPerBatch`` records,
so each yielded RecordBatch holds about 100,000 rows and memory stays bounded.

Corruption (``failOnDataLoss``): with true, the first bad batch raises
:class:`~kafkalog.errors.CorruptRecordError` naming the ``.log`` and byte position. With false,
a batch with a bad CRC or bad records is skipped; a bad batch header (size or magic) skips to the
next ``.index`` position; a segment deleted since planning is skipped. Skips are counted in the
task's statistics (``metricsDir``) and logged.

A live segment its writer cut back and rewrote since planning (``truncate_to``, then appends with
other batch boundaries) is not corruption: when a read meets bad bytes, the file as it is *now*
is walked from the ``.index`` position before them, and a planned boundary inside a whole batch,
or a whole batch there with other bytes than the copy's, ends the chunk with
:class:`~kafkalog.errors.OffsetOutOfRangeError` ("rewritten since planning": plan again), skipped
and counted as ``rewritten_chunks_skipped`` with ``failOnDataLoss=false``. Bytes bad in the file
too stay ``CorruptRecordError``.
"""

from __future__ import annotations

import json
import logging
import os
import time
import uuid
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from kafkalog.errors import CorruptRecordError, KafkaLogError, OffsetOutOfRangeError
from kafkalog.file_copy import FileCopy

from .arrow import columns_to_batch
from .planning import Chunk

__all__ = ["ReadSettings", "ReadStats", "read_chunks"]

log = logging.getLogger("kafkalog.spark")

_ATTR_TRANSACTIONAL = 0x10
_ATTR_CONTROL = 0x20


@dataclass(frozen=True)
class ReadSettings:
    """What every task of a query needs besides its chunks (pickled once with the reader)."""

    columns: tuple[str, ...]
    fail_on_data_loss: bool = True
    max_records_per_batch: int = 100_000
    timestamp_lo_ms: int | None = None
    offset_in: tuple[int, ...] | None = None
    offsets_excluded: tuple[int, ...] = ()
    metrics_dir: str | None = None
    check_crcs: bool = True


@dataclass
class ReadStats:
    """Counters of one task (written to ``metricsDir`` when set)."""

    chunks: int = 0
    batches_scanned: int = 0
    batches_decoded: int = 0
    batches_skipped: int = 0
    bytes_decoded: int = 0
    rows: int = 0
    corrupt_batches_skipped: int = 0
    corrupt_bytes_skipped: int = 0
    missing_segments_skipped: int = 0
    rewritten_chunks_skipped: int = 0  # segments cut and rewritten by their writer since planning
    seconds: float = 0.0  # wall time inside read(), excluding time Spark spends between batches

    def write(self, directory: str, task: int | None) -> None:
        os.makedirs(directory, exist_ok=True)
        rec = {"task": task, **asdict(self)}
        path = os.path.join(directory, f"task-{uuid.uuid4().hex}.json")
        with open(path, "w") as f:
            json.dump(rec, f)


def _producer_ids(buf: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """The v2 header's producerId (int64 big-endian at byte 43) of each batch."""
    idx = positions[:, None] + np.arange(43, 51)
    return buf[idx].copy().view(">i8").reshape(-1).astype(np.int64)


def _select(scan: dict, buf: np.ndarray, chunk: Chunk, settings: ReadSettings,
            in_sorted: np.ndarray | None) -> np.ndarray:
    """Bool mask of the scanned batches worth decoding."""
    magics = scan["magics"]
    attrs = scan["attributes"].astype(np.int64)
    base, last = scan["base_offsets"], scan["last_offsets"]
    v2 = magics == 2
    keep = last >= chunk.start_offset
    keep &= ~v2 | (base < chunk.end_offset)
    keep &= ~(v2 & ((attrs & _ATTR_CONTROL) != 0))
    if settings.timestamp_lo_ms is not None:
        keep &= scan["max_timestamps"] >= settings.timestamp_lo_ms
    if in_sorted is not None:
        lo = np.searchsorted(in_sorted, base, side="left")
        hi = np.searchsorted(in_sorted, last, side="right")
        keep &= ~v2 | (hi > lo)
    if chunk.aborted:
        txn = v2 & ((attrs & _ATTR_TRANSACTIONAL) != 0) & keep
        if txn.any():
            where = np.flatnonzero(txn)
            pids = _producer_ids(buf, scan["positions"][where])
            aborted = np.zeros(where.size, dtype=bool)
            for pid, first, marker in chunk.aborted:
                aborted |= (pids == pid) & (base[where] >= first) & (last[where] < marker)
            keep[where[aborted]] = False
    return keep


#: bound on the .log bytes decoded in one call (keeps a RecordBatch well under 2 GiB and memory
#: bounded when records are large: 100,000 records of 1 MiB would otherwise be one call)
MAX_BYTES_PER_DECODE = 64 * 1024 * 1024


def _runs(keep: np.ndarray, counts: np.ndarray, sizes: np.ndarray, limit: int,
          max_bytes: int = MAX_BYTES_PER_DECODE) -> list[tuple[int, int]]:
    """``[a, b)`` index runs of consecutive kept batches holding about ``limit`` records (and at
    most ``max_bytes`` bytes, a single larger batch excepted) each."""
    out = []
    idx = np.flatnonzero(keep)
    if idx.size == 0:
        return out
    breaks = np.flatnonzero(np.diff(idx) != 1) + 1
    for run in np.split(idx, breaks):
        a = 0
        csum = np.cumsum(counts[run].astype(np.int64))
        bsum = np.cumsum(sizes[run].astype(np.int64))
        while a < run.size:
            before = csum[a - 1] if a else 0
            bytes_before = bsum[a - 1] if a else 0
            b = min(int(np.searchsorted(csum, before + limit, side="right")),
                    int(np.searchsorted(bsum, bytes_before + max_bytes, side="right")))
            b = max(b, a + 1)
            out.append((int(run[a]), int(run[b - 1]) + 1))
            a = b
    return out


class _ChunkRewritten(Exception):
    """Internal: the chunk's segment was rewritten since planning (carries the error)."""

    def __init__(self, err: KafkaLogError) -> None:
        super().__init__(str(err))
        self.err = err


class _ChunkReader:
    def __init__(self, chunk: Chunk, settings: ReadSettings, stats: ReadStats,
                 schema: pa.Schema) -> None:
        self.chunk = chunk
        self.settings = settings
        self.stats = stats
        self.schema = schema
        self.in_sorted = (np.asarray(sorted(settings.offset_in), dtype=np.int64)
                          if settings.offset_in is not None else None)
        self.excluded = (np.asarray(sorted(settings.offsets_excluded), dtype=np.int64)
                         if settings.offsets_excluded else None)
        self._copy: FileCopy | None = None

    def _fail_or_skip(self, err: KafkaLogError) -> None:
        if self.settings.fail_on_data_loss:
            raise err
        log.warning("kafkalog: skipping corrupt data (failOnDataLoss=false): %s", err)

    def _index_positions(self) -> np.ndarray:
        """The ``.index`` positions of the chunk's segment as the file is now (empty when it
        cannot be read)."""
        from kafkalog import files
        from kafkalog.index.offset_index import OffsetIndex

        path = self.chunk.log_path
        base = files.offset_from_filename(os.path.basename(path))
        idx_path = files.offset_index_file(os.path.dirname(path), base)
        try:
            idx = OffsetIndex(idx_path, base, writable=False)
        except (OSError, KafkaLogError, ValueError):
            return np.zeros(0, np.int64)
        try:
            return idx.entries_array()["position"].astype(np.int64)
        finally:
            idx.close()

    def _next_index_position(self, after: int) -> int | None:
        """First ``.index`` position past ``after`` (to resume after a corrupt header)."""
        pos = self._index_positions()
        later = pos[pos > after]
        return int(later.min()) if later.size else None

    def _rewritten_since_planning(self, position: int) -> bool:
        """Whether the bad bytes this read found at ``position`` (where the plan, or the
        scan, had a batch start) come from the writer cutting the segment and writing other
        batches since planning (``truncate_to``, then appends: other batch boundaries), not
        from damage.

        Damage stays put; a rewrite shows in the file as it is now (a second copy): the name
        holds another file, or a walk over whole batches from the last ``.index`` position at
        or before ``position`` (else from the segment start) passes *through* ``position``, or
        finds a whole batch starting there whose bytes are not the ones this read copied."""
        from .layout import entry_crc_matches

        copy = self._copy
        if copy is None:
            return False
        if not copy.is_at_path():
            return True
        try:
            now = FileCopy(self.chunk.log_path)
        except OSError:
            return True  # gone since this read opened it
        with now:
            idx = self._index_positions()
            before = idx[idx <= position]
            for start in sorted({0, int(before.max()) if before.size else 0}, reverse=True):
                for sc in now.scan_chunks(start):  # (stops at bad bytes: next start)
                    n = int(sc["count"])
                    firsts = sc["positions"][:n].astype(np.int64)
                    ends = firsts + sc["sizes"][:n]
                    if np.any((firsts < position) & (ends > position)):
                        return True
                    at = np.flatnonzero(firsts == position)
                    if at.size:
                        k = int(at[0])
                        size = int(sc["sizes"][k])
                        if not entry_crc_matches(now, position, size, int(sc["magics"][k]),
                                                 int(sc["crcs"][k])):
                            return False  # still bad now: damage
                        # a whole batch here now: the read saw other bytes, or the plan had a
                        # batch boundary (the chunk's end) inside it
                        return (copy.read(position, position + size).tobytes()
                                != now.read(position, position + size).tobytes()
                                or position + size > self.chunk.end_pos)
                    if n and int(ends[-1]) > position:
                        break
                    now.release(int(sc["stop_position"]))  # a walk: nothing kept behind it
        return False

    def _rewritten_error(self, position: int) -> KafkaLogError:
        chunk = self.chunk
        return OffsetOutOfRangeError(
            f"segment rewritten since planning: its writer cut it and wrote other batches "
            f"(truncate_to), so the planned batch at this position is gone; offsets "
            f"[{chunk.start_offset}, {chunk.end_offset}) of {chunk.topic}-{chunk.partition} "
            f"from here were not read (plan the read again)",
            path=chunk.log_path, position=position)

    def _decode(self, buf: np.ndarray, scan: dict, a: int, b: int) -> Iterator[pa.RecordBatch]:
        from kafkalog.records.columnar import decode_columns

        chunk = self.chunk
        positions, sizes = scan["positions"], scan["sizes"]
        start = int(positions[a])
        end = int(positions[b - 1] + sizes[b - 1])
        try:
            cols = decode_columns(buf, start=start, end=end, start_offset=chunk.start_offset,
                                  end_offset=chunk.end_offset, skip_control=True,
                                  validate=self.settings.check_crcs)
        except KafkaLogError as e:
            err = e.with_location(path=chunk.log_path)
            if self.settings.fail_on_data_loss or b - a == 1:
                # the batch the error is in (a decode error may point inside one): damage, or
                # the writer rewrote the segment since planning (the chunk ends there)
                at = e.position if e.position is not None else start
                i = a + max(0, int(np.searchsorted(positions[a:b], at, side="right")) - 1)
                if self._rewritten_since_planning(int(positions[i])):
                    raise _ChunkRewritten(self._rewritten_error(int(positions[i]))) from e
                self._fail_or_skip(err)
                self.stats.corrupt_batches_skipped += 1
                self.stats.corrupt_bytes_skipped += end - start
                return
            for i in range(a, b):  # find the bad batch(es): decode one by one
                yield from self._decode(buf, scan, i, i + 1)
            return
        self.stats.batches_decoded += b - a
        self.stats.bytes_decoded += end - start
        n = len(cols)
        if n == 0:
            return
        keep = None
        offs = np.asarray(cols.offsets)
        if self.in_sorted is not None:
            keep = np.isin(offs, self.in_sorted)
        if self.excluded is not None:
            ex = ~np.isin(offs, self.excluded)
            keep = ex if keep is None else keep & ex
        batch = columns_to_batch(cols, chunk.topic, chunk.partition, self.schema, keep)
        self.stats.rows += batch.num_rows
        if batch.num_rows:
            yield batch

    def read(self) -> Iterator[pa.RecordBatch]:
        chunk = self.chunk
        try:
            # a private copy of the chunk's bytes, never a mapping: the writer may cut the file
            # (roll trim with preallocate, truncate_to, recovery) while the task reads it
            copy = FileCopy(chunk.log_path)
        except FileNotFoundError:
            err = KafkaLogError(
                "segment deleted before it could be read (retention?); offsets "
                f"[{chunk.start_offset}, {chunk.end_offset}) of {chunk.topic}-{chunk.partition} "
                "are lost", path=chunk.log_path)
            self._fail_or_skip(err)
            self.stats.missing_segments_skipped += 1
            return
        self.stats.chunks += 1
        self._copy = copy
        try:
            yield from self._read(copy)
        except _ChunkRewritten as rewritten:
            self._fail_or_skip(rewritten.err)
            self.stats.rewritten_chunks_skipped += 1
        finally:
            self._copy = None
            copy.close()

    def _read(self, copy: FileCopy) -> Iterator[pa.RecordBatch]:
        from kafkalog.native.scan import STOP_END, STOP_LIMIT, STOP_PARTIAL, STOP_REASONS

        chunk = self.chunk
        end = chunk.end_pos
        pos = chunk.start_pos
        released = pos
        while pos < end:
            # the copy is filled a window ahead of the scan; decoded columns are new arrays
            # (nothing yielded points into the copy), so what is behind is released
            scan = copy.scan(pos, end, max_entries=1 << 16)
            buf = copy.buf
            n = scan["count"]
            self.stats.batches_scanned += n
            if n:
                keep = _select(scan, buf, chunk, self.settings, self.in_sorted)
                self.stats.batches_skipped += int(n - keep.sum())
                for a, b in _runs(keep, scan["record_counts"], scan["sizes"],
                                  self.settings.max_records_per_batch):
                    yield from self._decode(buf, scan, a, b)
            stop, reason = int(scan["stop_position"]), int(scan["stop_reason"])
            if stop - released > _RELEASE_EVERY:
                copy.release(stop)
                released = stop
            if reason == STOP_LIMIT:
                pos = stop
                continue
            if copy.size < end:
                # cut since planning (truncate_to or recovery by its writer): the planned
                # batches past the new end are gone
                self._fail_or_skip(KafkaLogError(
                    f"segment shrank to {copy.size} bytes since planning (truncated by its "
                    f"writer); offsets of [{chunk.start_offset}, {chunk.end_offset}) of "
                    f"{chunk.topic}-{chunk.partition} stored past it are lost",
                    path=chunk.log_path, position=copy.size))
                self.stats.missing_segments_skipped += 1
                break
            if reason == STOP_END or stop >= end:
                break
            if reason == STOP_PARTIAL and end >= copy.length:
                break  # torn tail of an active segment: not (yet) data
            # planning already ended the range before a zero-filled preallocated tail, so
            # anything else that stops the walk inside the range is corruption, or the
            # writer rewrote the segment since planning
            if self._rewritten_since_planning(stop):
                raise _ChunkRewritten(self._rewritten_error(stop))
            err = CorruptRecordError(
                f"{STOP_REASONS[reason]} in {chunk.topic}-{chunk.partition}",
                path=chunk.log_path, position=stop)
            self._fail_or_skip(err)
            resume = self._next_index_position(stop)
            skipped_to = resume if resume is not None and resume < end else end
            self.stats.corrupt_batches_skipped += 1
            self.stats.corrupt_bytes_skipped += skipped_to - stop
            pos = skipped_to


#: bytes a task's copy of a chunk may hold behind its scan before they are released (about
#: every scan window: released pages are reused for the next window, see kafkalog.page_pool)
_RELEASE_EVERY = 2 * 1024 * 1024


def read_chunks(chunks: list[Chunk], settings: ReadSettings, schema: pa.Schema,
                task: int | None = None) -> Iterator[pa.RecordBatch]:
    """All rows of a task's chunks, as RecordBatches with exactly ``schema``."""
    stats = ReadStats()
    try:
        for chunk in chunks:
            it = _ChunkReader(chunk, settings, stats, schema).read()
            while True:
                t0 = time.perf_counter()
                batch = next(it, None)
                stats.seconds += time.perf_counter() - t0
                if batch is None:
                    break
                yield batch
    finally:
        if settings.metrics_dir:
            stats.write(settings.metrics_dir, task)
        if stats.corrupt_batches_skipped or stats.missing_segments_skipped:
            log.warning("kafkalog: task %s skipped %d corrupt batches (%d bytes) and %d missing "
                        "segments", task, stats.corrupt_batches_skipped,
                        stats.corrupt_bytes_skipped, stats.missing_segments_skipped)


def read_task_value(value: Any, settings: ReadSettings, schema: pa.Schema
                    ) -> Iterator[pa.RecordBatch]:
    """Entry point for an InputPartition's payload (``None`` for Spark's empty placeholder)."""
    if value is None:
        return iter(())
    return read_chunks(value.chunks, settings, schema, value.index)
