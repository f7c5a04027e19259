"""``Cleaner``: compaction of one log, exactly as Kafka's ``Cleaner`` does it.

Ported from core/src/main/scala/kafka/log/LogCleaner.scala (class ``Cleaner``, 3.9) with the
4.x rule change noted below (storage/.../log/Cleaner.java), and from ``MemoryRecords.filterTo``
(clients/.../common/record/MemoryRecords.java) for the per-batch rewrite. A log is split into a
*clean* section (below the cleaner checkpoint) and a *dirty* one; a cleaning:

1. **Builds the offset map** (:meth:`Cleaner.build_offset_map`) over the dirty section
   ``[first dirty offset, first uncleanable offset)``: for every record with a key, MD5(key) ->
   its offset, the latest winning; records of aborted transactions and control batches are not
   put. The map is filled to ``slots * load factor`` entries at most; when it fills up the
   cleaning stops at the last offset mapped (the next cleaning continues from there). After
   each segment the map's latest offset moves to the next segment's base offset minus one
   (offset gaps are already compacted).
2. **Groups** the segments of ``[0, end offset)`` (:meth:`Cleaner.group_segments_by_size`) so
   that each group's log bytes fit ``segment.bytes`` and its offset and time index bytes fit
   ``segment.index.bytes``, with offsets relative to the group's first base offset.
3. **Cleans each group** into one new segment named ``<base>.log.cleaned`` (and indexes):
   every batch of every segment is filtered in chunks of the cleaner's I/O buffer
   (:meth:`Cleaner.clean_into`; each chunk's output is one append, so index entries fall where
   Kafka's fall):

   * a record whose key has a later offset in the map is dropped; so is a record without a key;
     a tombstone (null value) is kept until its batch's delete horizon has passed: the first
     cleaning that keeps it rewrites its batch with the delete-horizon attribute (bit 6) and
     ``baseTimestamp = now + delete.retention.ms`` (KIP-534), record timestamp deltas
     recomputed against it;
   * records of aborted transactions are dropped at once; COMMIT/ABORT markers stay until no
     batch of their transaction is left, then wait for a delete horizon like tombstones
     (:class:`~kafkalog.cleaner.cleaned_transaction_metadata.CleanedTransactionMetadata`);
   * the batch holding each active producer's last data offset (or its last marker) is kept,
     emptied of its records if need be (a 61-byte header), so that idempotent sequence and
     epoch state survives; so is (4.0+, KAFKA-17076) the batch that ends the cleaning round;
   * offsets are never rewritten: a rebuilt batch keeps its base offset, last offset delta,
     producer fields and codec (the same codec at its default level), its records their offset
     deltas; a fully kept batch is copied byte for byte.

   The new segment is flushed, given the last source segment's mtime, then swapped in
   (:meth:`kafkalog.log.Log.replace_segments`: ``.cleaned`` -> ``.swap``, old segments renamed
   ``.deleted``, ``.swap`` suffix dropped; :mod:`kafkalog.loader` completes or discards an
   interrupted swap at the next open).

Rule changes after 3.9 (checked against apache/kafka trunk): KAFKA-17076 (PR #17193, in 4.0 and
backported to 3.9 by PR #20535) keeps the last batch of each cleaning round even when empty; this
is ported. KAFKA-20452 (PR #22089, April 2026) narrows that to the batch ending at the high
watermark; not ported (an embedded log's high watermark is its end offset, which the cleaned
range never reaches unless the active segment is empty).

Deviations (documented): a legacy (v0/v1) batch emptied at the end of a cleaning round is dropped
(Kafka 4.0 throws ``IllegalStateException("Empty batches are only supported for magic v2")``
there); a segment whose offsets overflow the relative index is not split (Kafka's
``splitOverflowedSegment``): our loader never leaves such a segment; the cleaning is aborted.

Hot loops run in numba kernels (:mod:`kafkalog.native.offset_map`,
:mod:`kafkalog.native.record_filter`, :mod:`kafkalog.native.md5`) over the segment bytes, mapped
read-only; compressed batches are decompressed and recompressed around the same kernels.

Threads: a ``Cleaner`` is used by one thread at a time (it owns its offset map).

>>> import tempfile
>>> from kafkalog import Log, LogConfig, Record
>>> with Log.open(tempfile.mkdtemp(), LogConfig(cleanup_policy="compact")) as log:
...     for i in range(4):
...         _ = log.append([Record(b"k%d" % (i % 2), b"v%d" % i, i)])
...     _ = log.roll()
...     result = log.clean()
...     [(r.offset, r.key, r.value) for r in log.records()]
[(2, b'k0', b'v2'), (3, b'k1', b'v3')]
"""

from __future__ import annotations

import logging
import struct
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from ..errors import CorruptRecordError, LogCleaningAbortedError, OffsetOverflowError
from ..index.txn_index import TransactionIndex
from ..native import offset_map as _om
from ..native import record_filter as _rf
from ..native import scan as _scan
from ..records import compression as _compression
from ..records.batch import (
    CONTROL_FLAG_MASK,
    DELETE_HORIZON_FLAG_MASK,
    HEADER_STRUCT,
    RECORD_BATCH_OVERHEAD,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
    RecordBatch,
    iter_batches,
    records_bytes,
)
from ..records.crc import crc32c
from .cleaned_transaction_metadata import CleanedTransactionMetadata
from .cleaner_config import CleanerConfig
from .cleaner_stats import CleanerStats
from .log_to_clean import LogToClean
from .offset_map import SkimpyOffsetMap

__all__ = ["Cleaner", "CleanResult", "LastRecord", "Throttler", "BatchRetention"]

logger = logging.getLogger(__name__)

INT32_MAX = 2**31 - 1
NO_TIMESTAMP = -1
_CRC = struct.Struct(">I")
_SCAN_PIECE = 65536  # entries per header scan of a segment while building the map
#: bytes of a segment filtered per step (then cut in Kafka's read-buffer chunks)
_WINDOW = 16 * 1024 * 1024


class BatchRetention:
    """``MemoryRecords.RecordFilter.BatchRetention``."""

    DELETE = 0  # delete the batch without inspecting records
    RETAIN_EMPTY = 1  # retain the batch even if it is empty
    DELETE_EMPTY = 2  # delete the batch if it is empty


class LastRecord(NamedTuple):
    """Kafka's ``LastRecord``: an active producer's last data offset (None when its last entry
    is a marker) and epoch."""

    last_data_offset: int | None
    producer_epoch: int


class CleanResult(NamedTuple):
    """What :meth:`kafkalog.log.Log.clean` did.

    Attributes
    ----------
    first_dirty_offset:
        Where the dirty section began (the cleaner checkpoint used).
    end_offset:
        The first offset not cleaned: the new cleaner checkpoint (Kafka's ``endOffset``);
        equal to ``first_dirty_offset`` when nothing was cleanable.
    stats:
        :class:`~kafkalog.cleaner.cleaner_stats.CleanerStats` (None when nothing was cleaned).
    """

    first_dirty_offset: int
    end_offset: int
    stats: CleanerStats | None


class Throttler:
    """Kafka's ``Throttler`` (``log.cleaner.io.max.bytes.per.second``): sleep when the bytes
    observed over at least 300 ms exceed the rate. A rate of ``Double.MAX_VALUE`` never
    sleeps."""

    CHECK_INTERVAL_S = 0.3

    def __init__(self, desired_rate_per_sec: float) -> None:
        self.desired = float(desired_rate_per_sec)
        self._lock = threading.Lock()
        self._period_start = time.monotonic()
        self._observed = 0.0

    def maybe_throttle(self, observed: float) -> None:
        if self.desired >= 1e300:
            return
        with self._lock:
            self._observed += observed
            now = time.monotonic()
            elapsed = now - self._period_start
            if elapsed > self.CHECK_INTERVAL_S and self._observed > 0:
                if self._observed / elapsed > self.desired:
                    sleep = self._observed / self.desired - elapsed
                    if sleep > 0:
                        time.sleep(sleep)
                self._period_start = time.monotonic()
                self._observed = 0.0


@dataclass
class _Filter:
    """The state of one ``cleanInto`` filter (Kafka's anonymous ``RecordFilter``)."""

    current_time: int
    delete_retention_ms: int
    retain_legacy_deletes: bool
    txn: CleanedTransactionMetadata
    last_records: dict[int, LastRecord]
    upper_bound_offset: int


class _Window:
    """Per-batch results of one window of batches (``filterTo``'s work before chunking):
    source position and size, deleted (``BatchRetention.DELETE``: no early return after it),
    output place in ``out``, and ``FilterResult``'s metadata."""

    __slots__ = ("in_pos", "in_size", "deleted", "out", "out_pos", "out_len", "max_ts",
                 "shallow", "max_off", "messages_read", "messages_retained")

    def __init__(self, in_pos: np.ndarray, in_size: np.ndarray, deleted: np.ndarray,
                 out: np.ndarray, out_pos: np.ndarray, out_len: np.ndarray, max_ts: np.ndarray,
                 shallow: np.ndarray, max_off: np.ndarray, messages_read: np.ndarray,
                 messages_retained: np.ndarray) -> None:
        self.in_pos, self.in_size, self.deleted = in_pos, in_size, deleted
        self.out, self.out_pos, self.out_len = out, out_pos, out_len
        self.max_ts, self.shallow, self.max_off = max_ts, shallow, max_off
        self.messages_read, self.messages_retained = messages_read, messages_retained


class _Chunker:
    """Kafka's read buffer over the stream of filtered batches (``cleanInto``'s loop).

    A chunk is read at a position: the whole batches within ``capacity`` bytes of it; it is
    cut short after a kept batch that makes its output exceed ``capacity`` (the write buffer
    had to grow, KAFKA-5316). Its output is one ``dest.append(maxOffset, maxTimestamp,
    shallowOffsetOfMaxTimestamp, bytes)``. A batch larger than the buffer grows it
    (``growBuffersOrFail``) until the end of the segment.
    """

    def __init__(self, cleaner: Cleaner, dest: Any, source: Any, size: int,
                 max_log_message_size: int) -> None:
        self.cleaner, self.dest, self.source, self.size = cleaner, dest, source, size
        self.max_log_message_size = max_log_message_size
        self.open = False
        self.start = 0
        self._reset()

    def _reset(self) -> None:
        self.parts: list[Any] = []
        self.out_bytes = 0
        self.max_ts = NO_TIMESTAMP
        self.shallow = -1
        self.max_off = -1

    def _emit(self) -> None:
        if self.out_bytes:
            data = self.parts[0] if len(self.parts) == 1 else b"".join(self.parts)
            self.dest.append(self.max_off, self.max_ts, self.shallow, data)
            self.cleaner.throttler.maybe_throttle(self.out_bytes)
        self._reset()
        self.open = False

    def feed(self, sc: dict, w: _Window) -> None:
        cleaner = self.cleaner
        in_pos, in_size = w.in_pos.tolist(), w.in_size.tolist()
        deleted, out_len = w.deleted.tolist(), w.out_len.tolist()
        out_pos = w.out_pos.tolist()
        max_ts, shallow, max_off = w.max_ts.tolist(), w.shallow.tolist(), w.max_off.tolist()
        mv = memoryview(w.out)
        run_start = run_end = -1  # a run of consecutive outputs of this window in the chunk
        for i in range(len(in_pos)):
            pos, size = in_pos[i], in_size[i]
            if self.open and pos + size > self.start + cleaner._capacity:
                if run_start >= 0:
                    self.parts.append(mv[run_start:run_end])
                    run_start = -1
                self._emit()
            if not self.open:
                self.open = True
                self.start = pos
                while size > cleaner._capacity:
                    cleaner._grow_buffers_or_fail(self.source, pos, self.size, size,
                                                  self.max_log_message_size)
            if deleted[i]:
                continue  # filterTo: a deleted batch never ends a chunk early
            n = out_len[i]
            if n:
                if run_start < 0:
                    run_start = out_pos[i]
                run_end = out_pos[i] + n
                self.out_bytes += n
                if max_ts[i] > self.max_ts:
                    self.max_ts, self.shallow = max_ts[i], shallow[i]
                self.max_off = max(self.max_off, max_off[i])
            if self.out_bytes > cleaner._capacity:
                if run_start >= 0:
                    self.parts.append(mv[run_start:run_end])
                    run_start = -1
                self._emit()
        if run_start >= 0:
            self.parts.append(bytes(mv[run_start:run_end]))  # the window's buffer goes away

    def finish(self) -> None:
        self.parts = [bytes(p) if isinstance(p, memoryview) else p for p in self.parts]
        self._emit()


def _gather(buf: np.ndarray, positions: np.ndarray, offset: int, dtype: str) -> np.ndarray:
    """A big-endian header field of every batch at ``positions`` (int64)."""
    width = np.dtype(dtype).itemsize
    if positions.size == 0:
        return np.zeros(0, np.int64)
    idx = positions[:, None] + np.arange(offset, offset + width)
    return np.ascontiguousarray(buf[idx]).view(dtype).reshape(-1).astype(np.int64)


def _header(base_offset: int, size: int, leader_epoch: int, attributes: int,
            last_offset_delta: int, base_ts: int, max_ts: int, producer_id: int,
            producer_epoch: int, base_sequence: int, count: int, records: Any) -> bytes:
    """A whole v2 batch: the 61-byte header (CRC-32C from the attributes on) + ``records``."""
    head = bytearray(HEADER_STRUCT.pack(base_offset, size - 12, leader_epoch, 2, 0, attributes,
                                        last_offset_delta, base_ts, max_ts, producer_id,
                                        producer_epoch, base_sequence, count))
    crc = crc32c(records, crc32c(memoryview(head)[21:]))
    _CRC.pack_into(head, 17, crc)
    return bytes(head)


class Cleaner:
    """The cleaning logic for one log at a time (module docstring).

    Parameters
    ----------
    offset_map:
        The map used for deduplication (reused across cleanings).
    io_buffer_size:
        Bytes of each of the read and write buffers (they grow for a larger batch).
    max_io_buffer_size:
        The largest batch the buffers may grow to (``message.max.bytes``).
    dup_buffer_load_factor:
        The share of the map's slots a cleaning may fill.
    clock:
        Time source (the cleaning's ``currentTime``, stats).
    check_done:
        ``(log) -> None`` called between segments and chunks; raises
        :class:`~kafkalog.errors.LogCleaningAbortedError` to give up (the log's own abort
        check is always made too).
    throttler:
        Limits the I/O rate (none by default).
    """

    def __init__(self, *, offset_map: SkimpyOffsetMap, io_buffer_size: int,
                 max_io_buffer_size: int, dup_buffer_load_factor: float, clock: Any,
                 check_done: Callable[[Any], None] | None = None, id: int = 0,  # noqa: A002
                 throttler: Throttler | None = None) -> None:
        if offset_map.slots * dup_buffer_load_factor <= 1:
            raise ValueError("offset map is too small to fit in even a single message, so log "
                             "cleaning will never make progress. You can increase "
                             "log.cleaner.dedupe.buffer.size or decrease log.cleaner.threads")
        self.id = id
        self.offset_map = offset_map
        self.io_buffer_size = int(io_buffer_size)
        self.max_io_buffer_size = int(max_io_buffer_size)
        self.dup_buffer_load_factor = float(dup_buffer_load_factor)
        self.clock = clock
        self._check_done_fn = check_done
        self.throttler = throttler if throttler is not None else Throttler(float("inf"))
        self._capacity = self.io_buffer_size

    @classmethod
    def from_config(cls, config: CleanerConfig, clock: Any, *,
                    check_done: Callable[[Any], None] | None = None, id: int = 0  # noqa: A002
                    ) -> Cleaner:
        """A cleaner sized as ``LogCleaner.CleanerThread`` sizes one."""
        return cls(offset_map=SkimpyOffsetMap(config.offset_map_memory),
                   io_buffer_size=config.cleaner_io_buffer_size,
                   max_io_buffer_size=config.max_message_size,
                   dup_buffer_load_factor=config.dedupe_buffer_load_factor, clock=clock,
                   check_done=check_done, id=id,
                   throttler=Throttler(config.max_io_bytes_per_second))

    def _check_done(self, log: Any) -> None:
        check = getattr(log, "_check_cleaning_aborted", None)
        if check is not None:
            check()
        if self._check_done_fn is not None:
            self._check_done_fn(log)

    # -- cleaning --------------------------------------------------------------------------

    def clean(self, cleanable: LogToClean) -> tuple[int, CleanerStats]:
        """Clean ``cleanable.log`` now; ``(first offset not cleaned, stats)``."""
        return self.do_clean(cleanable, self.clock.milliseconds())

    def do_clean(self, cleanable: LogToClean, current_time: int) -> tuple[int, CleanerStats]:
        """Kafka's ``doClean``: map the dirty section, clean ``[0, end)`` group by group."""
        log = cleanable.log
        logger.info("Beginning cleaning of log %s", log.directory)
        config = log.config
        # the delete horizon of legacy (v0/v1) tombstones: the last clean segment's mtime
        clean_segs = log.log_segments(0, cleanable.first_dirty_offset)
        legacy_delete_horizon_ms = (clean_segs[-1].last_modified_ms - config.delete_retention_ms
                                    if clean_segs else 0)
        stats = CleanerStats(start_ms=self.clock.milliseconds())
        upper_bound = cleanable.first_uncleanable_offset
        self.build_offset_map(log, cleanable.first_dirty_offset, upper_bound, self.offset_map,
                              stats)
        end_offset = self.offset_map.latest_offset + 1
        stats.index_done(self.clock.milliseconds())
        txn = CleanedTransactionMetadata()
        groups = self.group_segments_by_size(log.log_segments(0, end_offset),
                                             config.segment_bytes, config.segment_index_bytes,
                                             cleanable.first_uncleanable_offset)
        for group in groups:
            self.clean_segments(log, group, self.offset_map, current_time, stats, txn,
                                legacy_delete_horizon_ms, upper_bound)
        stats.buffer_utilization = self.offset_map.utilization
        stats.all_done(self.clock.milliseconds())
        return end_offset, stats

    def clean_segments(self, log: Any, segments: Sequence[Any], offset_map: SkimpyOffsetMap,
                       current_time: int, stats: CleanerStats,
                       transaction_metadata: CleanedTransactionMetadata,
                       legacy_delete_horizon_ms: int, upper_bound_offset: int) -> None:
        """Clean a group of segments into one ``.cleaned`` segment and swap it in."""
        cleaned = log.create_new_cleaned_segment(segments[0].base_offset)
        txn_index = TransactionIndex(cleaned.txn_index_path, cleaned.base_offset)
        transaction_metadata.cleaned_index = txn_index
        try:
            last_records = log.last_records_of_active_producers()
            for k, seg in enumerate(segments):
                nxt = segments[k + 1] if k + 1 < len(segments) else None
                # aborted transactions of the whole segment: the cleaned .txnindex is rebuilt
                # from the ones whose markers are kept
                upper = nxt.base_offset if nxt is not None else seg.read_next_offset()
                transaction_metadata.add_aborted_transactions(
                    log.collect_aborted_transactions(seg.base_offset, upper))
                retain_legacy = seg.last_modified_ms > legacy_delete_horizon_ms
                flt = _Filter(current_time, log.config.delete_retention_ms, retain_legacy,
                              transaction_metadata, last_records, upper_bound_offset)
                try:
                    self.clean_into(log, seg, cleaned, offset_map, flt,
                                    log.config.max_message_bytes, stats)
                except OffsetOverflowError as e:
                    raise LogCleaningAbortedError(
                        f"segment {seg.base_offset} overflows the relative offsets of the "
                        f"cleaned segment {cleaned.base_offset}: {e.message}",
                        path=seg.log_path) from e
            cleaned.on_become_inactive()
            cleaned.flush()  # before the swap
            txn_index.flush()
            txn_index.close()
            # keep the mtime of the last original segment (time retention, legacy horizon)
            cleaned.set_last_modified(segments[-1].last_modified_ms)
            logger.info("Swapping in cleaned segment %s for segment(s) %s in log %s", cleaned,
                        [s.base_offset for s in segments], log.directory)
            log.replace_segments([cleaned], list(segments))
        except BaseException:
            txn_index.close()
            cleaned.delete()
            raise

    # -- filtering one segment ---------------------------------------------------------------

    def clean_into(self, log: Any, source: Any, dest: Any, offset_map: SkimpyOffsetMap,
                   flt: _Filter, max_log_message_size: int, stats: CleanerStats) -> None:
        """Copy the batches of ``source`` worth keeping to ``dest`` (Kafka's ``cleanInto``).

        Batches are filtered a window (:data:`_WINDOW`) at a time, in log order; their outputs
        then go to ``dest`` grouped as Kafka's read buffer groups them (:class:`_Chunker`):
        one ``dest.append`` per buffer of ``io_buffer_size`` bytes of whole source batches,
        cut short when the output outgrows the buffer, the buffer grown for a larger batch. So
        the cleaned segment's index entries fall where Kafka's fall.
        """
        size = source.size
        chunker = _Chunker(self, dest, source, size, max_log_message_size)
        position = 0
        with source.mapped(0, size) as view:
            buf = np.frombuffer(view, np.uint8) if len(view) else np.zeros(0, np.uint8)
            try:
                while position < size:
                    self._check_done(log)
                    sc = _scan.scan_entries(buf, position, min(position + _WINDOW, size))
                    if sc["count"] == 0:
                        # one batch larger than the window: scan exactly it
                        need = _batch_size_at(buf, position, size)
                        if sc["stop_reason"] != _scan.STOP_PARTIAL or need is None \
                                or position + need > size:
                            raise CorruptRecordError(
                                f"log segment may be corrupt: "
                                f"{_scan.STOP_REASONS[sc['stop_reason']]} while cleaning",
                                path=source.log_path, position=position)
                        sc = _scan.scan_entries(buf, position, position + need)
                        if sc["count"] == 0:
                            raise CorruptRecordError(
                                "log segment may be corrupt: no whole batch while cleaning",
                                path=source.log_path, position=position)
                    stop = int(sc["stop_position"])
                    self.throttler.maybe_throttle(stop - position)
                    window = self._filter_window(view, buf, sc, offset_map, flt, stats,
                                                 source)
                    stats.read_messages(int(window.messages_read.sum()),
                                        int(sc["sizes"].sum()))
                    stats.recopy_messages(int(window.messages_retained.sum()),
                                          int(window.out_len.sum()))
                    chunker.feed(sc, window)
                    position = stop
                    if sc["stop_reason"] not in (_scan.STOP_END, _scan.STOP_PARTIAL):
                        raise CorruptRecordError(
                            f"log segment may be corrupt: "
                            f"{_scan.STOP_REASONS[sc['stop_reason']]} while cleaning",
                            path=source.log_path, position=position)
                chunker.finish()
            finally:
                del buf
        self._capacity = self.io_buffer_size  # restoreBuffers

    def _grow_buffers_or_fail(self, source: Any, position: int, size: int, next_size: int,
                              max_log_message_size: int) -> None:
        """Kafka's ``growBuffersOrFail``: the batch at ``position`` does not fit the buffer."""
        if self._capacity >= max_log_message_size:
            if next_size <= self._capacity:
                raise CorruptRecordError(
                    f"batch size {next_size} < buffer size {self._capacity}, but not processed",
                    path=source.log_path, position=position)
            if next_size > size - position:
                raise CorruptRecordError(
                    f"log segment may be corrupt, batch size {next_size} > "
                    f"{size - position} bytes left in segment", path=source.log_path,
                    position=position)
            max_size = next_size
        else:
            max_size = max_log_message_size
        max_buffer = max(max_size, self.max_io_buffer_size)
        if self._capacity >= max_buffer:
            raise CorruptRecordError(
                f"this log contains a message larger than maximum allowable size of "
                f"{max_buffer}", path=source.log_path, position=position)
        self._capacity = min(self._capacity * 2, max_buffer)
        logger.info("Growing cleaner I/O buffers to %d bytes.", self._capacity)

    def _batch_retention(self, sc: dict, fields: dict, i: int, flt: _Filter,
                         control_type: Callable[[int], str | None]
                         ) -> tuple[int, bool, bool]:
        """Kafka's ``checkBatchRetention`` for batch ``i``: ``(retention, discard records,
        contains marker for empty txn)``."""
        pid = int(fields["producer_id"][i])
        last = int(sc["last_offsets"][i])
        attrs = int(sc["attributes"][i])
        v2 = int(sc["magics"][i]) == 2
        control = v2 and bool(attrs & CONTROL_FLAG_MASK)
        if control:
            can_discard = flt.txn.on_control_batch_read(producer_id=pid, last_offset=last,
                                                        control_type=control_type(i))
            horizon = fields["horizon"][i]
            discard = can_discard and horizon >= 0 and horizon <= flt.current_time
        else:
            can_discard = flt.txn.on_batch_read(
                producer_id=pid, last_offset=last,
                transactional=v2 and bool(attrs & TRANSACTIONAL_FLAG_MASK))
            discard = can_discard
        lr = flt.last_records.get(pid)
        is_last = False
        if lr is not None:
            if lr.last_data_offset is not None:
                is_last = last == lr.last_data_offset
            else:
                is_last = control and int(fields["producer_epoch"][i]) == lr.producer_epoch
        if pid >= 0 and is_last:
            retention = BatchRetention.RETAIN_EMPTY
        elif last + 1 == flt.upper_bound_offset:
            # KAFKA-17076 (4.0): keep the last batch of the round so that the log end offset
            # survives compaction
            retention = BatchRetention.RETAIN_EMPTY
        elif discard:
            retention = BatchRetention.DELETE
        else:
            retention = BatchRetention.DELETE_EMPTY
        return retention, discard, can_discard and control

    def _filter_window(self, view: Any, buf: np.ndarray, sc: dict,
                       offset_map: SkimpyOffsetMap, flt: _Filter, stats: CleanerStats,
                       source: Any) -> _Window:
        """``MemoryRecords.filterTo``'s per-batch work for the whole batches of ``sc``, in
        order: what each batch becomes (dropped, kept whole, rebuilt, emptied) and its bytes."""
        n = int(sc["count"])
        positions, sizes = sc["positions"], sc["sizes"]
        magics, attrs = sc["magics"], sc["attributes"].astype(np.int64)
        lasts, bases = sc["last_offsets"], sc["base_offsets"]
        max_ts = sc["max_timestamps"]
        counts = sc["record_counts"].astype(np.int64)
        v2 = magics == 2
        fields = {"producer_id": np.full(n, -1, np.int64),
                  "producer_epoch": np.full(n, -1, np.int64),
                  "base_sequence": np.full(n, -1, np.int64),
                  "base_timestamp": np.full(n, -1, np.int64),
                  "horizon": np.full(n, -1, np.int64)}
        if v2.any():
            p2 = positions[v2]
            fields["producer_id"][v2] = _gather(buf, p2, 43, ">i8")
            fields["producer_epoch"][v2] = _gather(buf, p2, 51, ">i2")
            fields["base_sequence"][v2] = _gather(buf, p2, 53, ">i4")
            fields["base_timestamp"][v2] = _gather(buf, p2, 27, ">i8")
            has_h = v2 & ((attrs & DELETE_HORIZON_FLAG_MASK) != 0)
            fields["horizon"][has_h] = fields["base_timestamp"][has_h]
        codec = np.where(v2, attrs & 0x07, 0)
        control = v2 & ((attrs & CONTROL_FLAG_MASK) != 0)
        special = (v2 & ((attrs & (CONTROL_FLAG_MASK | TRANSACTIONAL_FLAG_MASK)) != 0)) \
            | (fields["producer_id"] >= 0)
        # plain batches (no producer, no transaction): DELETE_EMPTY, or RETAIN_EMPTY when they
        # end the cleaning round; the others go through checkBatchRetention in log order
        retention = np.where(lasts + 1 == flt.upper_bound_offset,
                             BatchRetention.RETAIN_EMPTY, BatchRetention.DELETE_EMPTY)
        discard = np.zeros(n, bool)
        empty_txn_marker = np.zeros(n, bool)

        def control_type(i: int) -> str | None:
            return RecordBatch(view, int(positions[i]), int(sizes[i])).control_type()

        for i in np.flatnonzero(special).tolist():
            retention[i], discard[i], empty_txn_marker[i] = self._batch_retention(
                sc, fields, i, flt, control_type)
        horizon = fields["horizon"]
        retain_deletes = (horizon < 0) | (flt.current_time < horizon)
        deleted = retention == BatchRetention.DELETE
        mode = np.where(discard, _rf.MODE_KEEP_NONE,
                        np.where(control, _rf.MODE_KEEP_ALL, _rf.MODE_FILTER))
        mode[deleted] = _rf.MODE_SKIP
        # the kernels run over the uncompressed v2 batches in place; compressed and legacy ones
        # are filtered one by one (decompressed) into the side buffer
        in_place = v2 & (codec == 0) & (mode != _rf.MODE_SKIP) & (mode != _rf.MODE_KEEP_NONE)
        log_append = np.where(v2 & ((attrs & TIMESTAMP_TYPE_MASK) != 0), max_ts, -1)
        k_counts = np.where(in_place, counts, 0)
        first_record = np.zeros(n, np.int64)
        if n:
            first_record[1:] = np.cumsum(k_counts)[:-1]
        rec = _records_arrays(int(k_counts.sum()))
        info = np.zeros((n, _rf.INFO_COLUMNS), np.int64)
        err = np.zeros(2, np.int64)
        rc = _rf.filter_batches(buf, positions + RECORD_BATCH_OVERHEAD, positions + sizes,
                                k_counts, bases, fields["base_timestamp"], log_append,
                                np.where(in_place, mode, _rf.MODE_SKIP).astype(np.int64),
                                retain_deletes.astype(np.uint8), first_record, offset_map.table,
                                offset_map.slots, offset_map.state, offset_map.latest_offset,
                                rec["keep"], rec["start"], rec["end"], rec["ts"], rec["offset"],
                                info, err)
        if rc != _om.OK:
            raise CorruptRecordError("record does not parse while cleaning",
                                     path=source.log_path, position=int(err[1]))
        kept = info[:, _rf.I_KEPT]
        read = np.where(mode == _rf.MODE_KEEP_NONE, counts, info[:, _rf.I_READ])
        invalid = int(info[:, _rf.I_INVALID].sum())
        # what becomes of each in-place batch (filterTo's tail)
        need_horizon = v2 & ((info[:, _rf.I_TOMBSTONES] != 0) | empty_txn_marker) & (horizon < 0)
        whole = (kept == counts) & (read == counts) & ~need_horizon
        new_horizon = np.where(need_horizon,
                               _wrap64(flt.current_time + flt.delete_retention_ms), horizon)
        action = np.full(n, _rf.A_DROP, np.int64)
        action[(kept > 0) & whole] = _rf.A_COPY
        action[(kept > 0) & ~whole] = _rf.A_REBUILD
        action[(kept == 0) & (retention == BatchRetention.RETAIN_EMPTY) & v2] = _rf.A_EMPTY
        action[deleted] = _rf.A_DROP
        lat = (attrs & TIMESTAMP_TYPE_MASK) != 0
        base_ts = np.where(new_horizon >= 0, new_horizon, info[:, _rf.I_FIRST_KEPT_TS])
        keep_attrs = attrs & (0x07 | TIMESTAMP_TYPE_MASK | TRANSACTIONAL_FLAG_MASK
                              | CONTROL_FLAG_MASK)
        out_attrs = np.where(action == _rf.A_EMPTY,
                             attrs & (TIMESTAMP_TYPE_MASK | TRANSACTIONAL_FLAG_MASK
                                      | CONTROL_FLAG_MASK),
                             keep_attrs | np.where(new_horizon >= 0,
                                                   DELETE_HORIZON_FLAG_MASK, 0))
        max_off = np.where(action == _rf.A_REBUILD, info[:, _rf.I_MAX_KEPT_OFFSET], lasts)
        # compressed and legacy batches: built here, copied by the kernel
        side = bytearray()
        side_pos = np.zeros(n, np.int64)
        side_len = np.zeros(n, np.int64)
        ext_meta: dict[int, tuple[int, int, int]] = {}
        for i in np.flatnonzero(~in_place & ~deleted).tolist():
            p, s = int(positions[i]), int(sizes[i])
            if not v2[i]:
                built, meta, nread, nkept, bad = self._filter_legacy(
                    view, p, s, offset_map, flt)
            elif mode[i] == _rf.MODE_KEEP_NONE:
                read[i] = counts[i]
                if retention[i] == BatchRetention.RETAIN_EMPTY:
                    action[i] = _rf.A_EMPTY
                    out_attrs[i] = attrs[i] & (TIMESTAMP_TYPE_MASK | TRANSACTIONAL_FLAG_MASK
                                               | CONTROL_FLAG_MASK)
                continue
            else:
                built, meta, nread, nkept, bad = self._filter_compressed(
                    view, sc, fields, i, int(mode[i]), int(retention[i]),
                    bool(empty_txn_marker[i]), bool(retain_deletes[i]), offset_map, flt)
            read[i] = nread
            kept[i] = nkept
            invalid += bad
            if built is None:
                action[i] = _rf.A_DROP
            elif built is True:
                action[i] = _rf.A_COPY
            else:
                action[i] = _rf.A_EXTERNAL
                side_pos[i] = len(side)
                side_len[i] = len(built)
                side += built
                ext_meta[i] = meta
        if invalid:
            stats.invalid_message(invalid)
        # the output bytes of the window, one kernel call
        out = np.empty(int(np.where(action == _rf.A_EMPTY, RECORD_BATCH_OVERHEAD,
                                    np.where(action == _rf.A_DROP, 0, sizes)).sum()
                           + 16 * int(k_counts.sum()) + len(side) + 16), np.uint8)
        out_pos = np.zeros(n, np.int64)
        out_len = np.zeros(n, np.int64)
        out_max_ts = np.zeros(n, np.int64)
        side_arr = np.frombuffer(side, np.uint8) if side else np.zeros(0, np.uint8)
        total = _rf.assemble_batches(
            buf, positions, sizes, action, first_record, k_counts, rec["keep"], rec["start"],
            rec["end"], rec["ts"], bases, lasts, sc["leader_epochs"].astype(np.int64),
            out_attrs, base_ts, max_ts, (~lat).astype(np.uint8), fields["producer_id"],
            fields["producer_epoch"], fields["base_sequence"], kept, side_arr, side_pos,
            side_len, out, out_pos, out_len, out_max_ts)
        if total < 0:
            raise CorruptRecordError("record does not parse while cleaning",
                                     path=source.log_path)
        # CRC-32C of the rebuilt and emptied batches (attributes .. end)
        mv = memoryview(out)
        for i in np.flatnonzero((action == _rf.A_REBUILD) | (action == _rf.A_EMPTY)).tolist():
            p, s = int(out_pos[i]), int(out_len[i])
            _CRC.pack_into(mv, p + 17, crc32c(mv[p + 21:p + s]))
        # FilterResult's per-batch metadata (updateRetainedBatchMetadata)
        b_ts = np.where(action == _rf.A_REBUILD, out_max_ts, max_ts)
        b_shallow = np.where((action == _rf.A_REBUILD) & ~lat & (out_max_ts == NO_TIMESTAMP),
                             -1, lasts)
        for i, (m_ts, m_sh, m_off) in ext_meta.items():
            b_ts[i], b_shallow[i], max_off[i] = m_ts, m_sh, m_off
        return _Window(sc["positions"], sc["sizes"], deleted, out, out_pos, out_len, b_ts,
                       b_shallow, max_off, read, np.where(action == _rf.A_DROP, 0, kept))

    def _filter_compressed(self, view: Any, sc: dict, fields: dict, i: int, mode: int,
                           retention: int, empty_txn_marker: bool, retain_deletes: bool,
                           offset_map: SkimpyOffsetMap, flt: _Filter
                           ) -> tuple[Any, tuple[int, int, int], int, int, int]:
        """A compressed v2 batch: the same kernels over its decompressed records; the kept
        records recompressed with its codec (at the codec's default level, as Kafka's
        ``Compression.of(type).build()``). Returns ``(bytes | True (kept whole) | None
        (dropped), (max timestamp, shallow offset, max offset), read, kept, invalid)``."""
        pos, size = int(sc["positions"][i]), int(sc["sizes"][i])
        count = int(sc["record_counts"][i])
        attrs = int(sc["attributes"][i])
        base, last = int(sc["base_offsets"][i]), int(sc["last_offsets"][i])
        max_ts = int(sc["max_timestamps"][i])
        lat = bool(attrs & TIMESTAMP_TYPE_MASK)
        area = np.frombuffer(records_bytes(view, pos, size), np.uint8)
        rec = _records_arrays(count)
        info = np.zeros((1, _rf.INFO_COLUMNS), np.int64)
        err = np.zeros(2, np.int64)
        rc = _rf.filter_batches(area, np.zeros(1, np.int64), np.array([area.shape[0]], np.int64),
                                np.array([count], np.int64), np.array([base], np.int64),
                                fields["base_timestamp"][i:i + 1],
                                np.array([max_ts if lat else -1], np.int64),
                                np.array([mode], np.int64),
                                np.array([1 if retain_deletes else 0], np.uint8),
                                np.zeros(1, np.int64), offset_map.table, offset_map.slots,
                                offset_map.state, offset_map.latest_offset, rec["keep"],
                                rec["start"], rec["end"], rec["ts"], rec["offset"], info, err)
        if rc != _om.OK:
            raise CorruptRecordError("record does not parse while cleaning", position=pos)
        kept, read = int(info[0, _rf.I_KEPT]), int(info[0, _rf.I_READ])
        invalid = int(info[0, _rf.I_INVALID])
        horizon = int(fields["horizon"][i])
        if kept == 0:
            if retention == BatchRetention.RETAIN_EMPTY:
                empty_attrs = attrs & (TIMESTAMP_TYPE_MASK | TRANSACTIONAL_FLAG_MASK
                                       | CONTROL_FLAG_MASK)
                # DefaultRecordBatch.writeEmptyHeader: baseTimestamp NO_TIMESTAMP
                built = _header(base, RECORD_BATCH_OVERHEAD, int(sc["leader_epochs"][i]),
                                empty_attrs, last - base, NO_TIMESTAMP, max_ts,
                                int(fields["producer_id"][i]), int(fields["producer_epoch"][i]),
                                int(fields["base_sequence"][i]), 0, b"")
                return built, (max_ts, last, last), read, 0, invalid
            return None, (0, 0, 0), read, 0, invalid
        need_horizon = (bool(info[0, _rf.I_TOMBSTONES]) or empty_txn_marker) and horizon < 0
        if kept == count and read == count and not need_horizon:
            return True, (max_ts, last, last), read, kept, invalid
        new_horizon = _wrap64(flt.current_time + flt.delete_retention_ms) if need_horizon \
            else horizon
        base_ts = new_horizon if new_horizon >= 0 else int(info[0, _rf.I_FIRST_KEPT_TS])
        out = np.empty(area.shape[0] + 16 * count + 16, np.uint8)
        res = np.zeros(2, np.int64)
        _rf.rewrite_records(area, rec["keep"], rec["start"], rec["end"], rec["ts"], 0, count,
                            base_ts, out, 0, res)
        records = _compression.compress(attrs & 0x07, memoryview(out)[:int(res[0])], magic=2)
        new_attrs = attrs & (0x07 | TIMESTAMP_TYPE_MASK | TRANSACTIONAL_FLAG_MASK
                             | CONTROL_FLAG_MASK)
        if new_horizon >= 0:
            new_attrs |= DELETE_HORIZON_FLAG_MASK
        header_max = max_ts if lat else int(res[1])
        built = _header(base, RECORD_BATCH_OVERHEAD + len(records), int(sc["leader_epochs"][i]),
                        new_attrs, last - base, base_ts, header_max,
                        int(fields["producer_id"][i]), int(fields["producer_epoch"][i]),
                        int(fields["base_sequence"][i]), kept, records) + records
        max_kept = int(info[0, _rf.I_MAX_KEPT_OFFSET])
        # MemoryRecordsBuilder.info(): (maxTimestamp, lastOffset), or (-1, -1) without one
        if not lat and header_max == NO_TIMESTAMP:
            return built, (NO_TIMESTAMP, -1, max_kept), read, kept, invalid
        return built, (header_max, last, max_kept), read, kept, invalid

    def _filter_legacy(self, view: Any, pos: int, size: int, offset_map: SkimpyOffsetMap,
                       flt: _Filter) -> tuple[Any, tuple[int, int, int], int, int, int]:
        """A v0/v1 entry (a message, or a compressed wrapper of messages); same return shape
        as :meth:`_filter_compressed`."""
        from ..records.builder import encode_batch

        entry = next(iter_batches(view[pos:pos + size], validate=False))
        latest = offset_map.latest_offset
        kept = []
        read = 0
        invalid = 0
        for r in entry:
            read += 1
            if r.offset > latest:
                kept.append(r)
            elif r.key is not None:
                found = offset_map.get(r.key)
                if r.offset >= found and (r.value is not None or flt.retain_legacy_deletes):
                    kept.append(r)
            else:
                invalid += 1
        if not kept:
            return None, (0, 0, 0), read, 0, invalid  # never an empty legacy batch (module doc)
        if len(kept) == read:
            return True, (entry.max_timestamp, entry.last_offset, entry.last_offset), read, \
                read, invalid
        log_append = entry.timestamp_type == "LogAppendTime"
        data = encode_batch([(r.key, r.value, r.timestamp, (), r.offset) for r in kept],
                            magic=entry.magic, base_offset=kept[0].offset,
                            compression=entry.compression,
                            timestamp_type="log_append" if log_append else "create",
                            log_append_time=entry.max_timestamp if log_append else None)
        last = kept[-1].offset
        max_ts = entry.max_timestamp if log_append else max(r.timestamp for r in kept)
        return data, (max_ts, last if max_ts >= 0 else -1, last), read, len(kept), invalid

    # -- grouping --------------------------------------------------------------------------

    @staticmethod
    def group_segments_by_size(segments: Sequence[Any], max_size: int, max_index_size: int,
                               first_uncleanable_offset: int) -> list[list[Any]]:
        """Kafka's ``groupSegmentsBySize``: consecutive segments whose log bytes, offset index
        bytes and time index bytes each stay within the limits, and whose offsets fit the
        first segment's relative offsets (an empty segment is always taken)."""
        grouped: list[list[Any]] = []
        segs = list(segments)
        while segs:
            group = [segs[0]]
            log_size = segs[0].size
            index_size = segs[0].offset_index.size_in_bytes
            time_index_size = segs[0].time_index.size_in_bytes
            segs = segs[1:]
            while segs:
                nxt = segs[0]
                if not (log_size + nxt.size <= max_size
                        and index_size + nxt.offset_index.size_in_bytes <= max_index_size
                        and time_index_size + nxt.time_index.size_in_bytes <= max_index_size
                        # every offset of the group within 2^31 of the cleaned segment's base:
                        # the group's first segment (Kafka builds the group with add(0, seg),
                        # so its get(size - 1) is that one)
                        and (nxt.size == 0
                             or _last_offset_for_first_segment(segs, first_uncleanable_offset)
                             - group[0].base_offset <= INT32_MAX)):
                    break
                group.append(nxt)
                log_size += nxt.size
                index_size += nxt.offset_index.size_in_bytes
                time_index_size += nxt.time_index.size_in_bytes
                segs = segs[1:]
            grouped.append(group)
        return grouped

    # -- the offset map --------------------------------------------------------------------

    def build_offset_map(self, log: Any, start: int, end: int, offset_map: SkimpyOffsetMap,
                         stats: CleanerStats) -> None:
        """Kafka's ``buildOffsetMap``: key -> latest offset over ``[start, end)``."""
        offset_map.clear()
        dirty = log.log_segments(start, end)
        next_starts = [s.base_offset for s in dirty[1:]] + ([end] if dirty else [])
        logger.info("Building offset map for log %s for %d segments in offset range [%d, %d).",
                    log.directory, len(dirty), start, end)
        txn = CleanedTransactionMetadata()
        txn.add_aborted_transactions(log.collect_aborted_transactions(start, end))
        for seg, next_start in zip(dirty, next_starts):
            self._check_done(log)
            if self._build_offset_map_for_segment(log, seg, offset_map, start, next_start,
                                                  txn, stats):
                logger.debug("Offset map is full, segment with base offset %d is partially "
                             "mapped", seg.base_offset)
                break
        logger.info("Offset map for log %s complete.", log.directory)

    def _build_offset_map_for_segment(self, log: Any, seg: Any, offset_map: SkimpyOffsetMap,
                                      start: int, next_segment_start: int,
                                      txn: CleanedTransactionMetadata, stats: CleanerStats
                                      ) -> bool:
        """Add the keys of one segment; True when the map filled up here."""
        max_desired = int(offset_map.slots * self.dup_buffer_load_factor)
        position = seg.lookup_position(start)
        size = seg.size
        with seg.mapped(0, size) as view:
            buf = np.frombuffer(view, np.uint8) if len(view) else np.zeros(0, np.uint8)
            try:
                while position < size:
                    self._check_done(log)
                    sc = _scan.scan_entries(buf, position, size, max_entries=_SCAN_PIECE)
                    n = int(sc["count"])
                    if n == 0:
                        raise CorruptRecordError(
                            f"failed to read from segment while loading the offset map: "
                            f"{_scan.STOP_REASONS[sc['stop_reason']]}", path=seg.log_path,
                            position=position)
                    self.throttler.maybe_throttle(int(sc["stop_position"]) - position)
                    if self._map_batches(view, buf, sc, offset_map, start, max_desired, txn,
                                         stats, seg):
                        return True
                    stats.index_bytes_read(int(sc["stop_position"]) - position)
                    position = int(sc["stop_position"])
                    if sc["stop_reason"] not in (_scan.STOP_END, _scan.STOP_LIMIT,
                                                 _scan.STOP_PARTIAL):
                        raise CorruptRecordError(
                            f"failed to read from segment while loading the offset map: "
                            f"{_scan.STOP_REASONS[sc['stop_reason']]}", path=seg.log_path,
                            position=position)
                    if sc["stop_reason"] == _scan.STOP_PARTIAL:
                        break
            finally:
                del buf
        # offset gaps: fast forward to the latest offset this segment may hold
        offset_map.update_latest_offset(next_segment_start - 1)
        return False

    def _map_batches(self, view: Any, buf: np.ndarray, sc: dict, offset_map: SkimpyOffsetMap,
                     start: int, max_desired: int, txn: CleanedTransactionMetadata,
                     stats: CleanerStats, seg: Any) -> bool:
        n = int(sc["count"])
        positions, sizes = sc["positions"], sc["sizes"]
        magics, attrs = sc["magics"], sc["attributes"]
        lasts = sc["last_offsets"]
        v2 = magics == 2
        control = v2 & ((attrs & CONTROL_FLAG_MASK) != 0)
        transactional = v2 & ((attrs & TRANSACTIONAL_FLAG_MASK) != 0)
        # 1 = put in the kernel (uncompressed v2 data), 2 = put here (compressed or legacy),
        # 0 = not put (control batches, aborted transactions)
        kind = np.where(v2 & ((attrs & 0x07) == 0), 1, 2).astype(np.int64)
        kind[control] = 0
        special = np.flatnonzero(control | transactional)
        if special.size:
            pids = _gather(buf, positions[special], 43, ">i8")
            for j, i in enumerate(special.tolist()):
                last = int(lasts[i])
                if control[i]:
                    ctype = RecordBatch(view, int(positions[i]), int(sizes[i])).control_type()
                    txn.on_control_batch_read(producer_id=int(pids[j]), last_offset=last,
                                              control_type=ctype)
                    stats.index_messages_read(1)
                elif txn.on_batch_read(producer_id=int(pids[j]), last_offset=last,
                                       transactional=True):
                    kind[i] = 0  # aborted: not put
                    stats.index_messages_read(int(sc["record_counts"][i]))
        out = np.zeros(3, np.int64)
        first = 0
        while first < n:
            rc = _om.put_batches(buf, positions, sizes, sc["base_offsets"], lasts,
                                 sc["record_counts"].astype(np.int64), kind, first, start,
                                 offset_map.table, offset_map.slots, offset_map.state,
                                 max_desired, out)
            stats.index_messages_read(int(out[1]))
            if rc == _om.FULL:
                return True
            if rc != _om.OK:
                raise CorruptRecordError("record does not parse while building the offset map",
                                         path=seg.log_path, position=int(out[2]))
            i = int(out[0])
            if i >= n:
                break
            # compressed or legacy batch i
            if self._map_batch_slow(view, int(positions[i]), int(sizes[i]), bool(v2[i]),
                                    int(sc["base_offsets"][i]),
                                    int(sc["record_counts"][i]), offset_map, start,
                                    max_desired, stats, seg):
                return True
            if lasts[i] >= start:
                offset_map.update_latest_offset(int(lasts[i]))
            first = i + 1
        return False

    def _map_batch_slow(self, view: Any, pos: int, size: int, v2: bool, base_offset: int,
                        count: int, offset_map: SkimpyOffsetMap, start: int, max_desired: int,
                        stats: CleanerStats, seg: Any) -> bool:
        if v2:
            area = np.frombuffer(records_bytes(view, pos, size), np.uint8)
            out = np.zeros(2, np.int64)
            rc = _om.put_records(area, 0, area.shape[0], count, base_offset, start,
                                 offset_map.table, offset_map.slots, offset_map.state,
                                 max_desired, out)
            stats.index_messages_read(int(out[0]))
            if rc == _om.ERR_CORRUPT:
                raise CorruptRecordError("record does not parse while building the offset map",
                                         path=seg.log_path, position=pos)
            return rc == _om.FULL
        entry = next(iter_batches(view[pos:pos + size], validate=False))
        for r in entry:
            if r.key is not None and r.offset >= start:
                if offset_map.size >= max_desired:
                    return True
                offset_map.put(r.key, r.offset)
            stats.index_messages_read(1)
        return False


def _batch_size_at(buf: np.ndarray, position: int, size: int) -> int | None:
    """The whole size of the entry at ``position`` (12 + its size field), None when cut."""
    if size - position < 12:
        return None
    return int(buf[position + 8:position + 12].view(">i4")[0]) + 12


def _wrap64(v: int) -> int:
    return ((v + 2**63) % 2**64) - 2**63


def _records_arrays(n: int) -> dict[str, np.ndarray]:
    return {"keep": np.zeros(n, np.uint8), "start": np.zeros(n, np.int64),
            "end": np.zeros(n, np.int64), "ts": np.zeros(n, np.int64),
            "offset": np.zeros(n, np.int64)}


def _last_offset_for_first_segment(segs: Sequence[Any], first_uncleanable_offset: int) -> int:
    """Kafka's ``lastOffsetForFirstSegment``: the next segment's base offset - 1 (or the first
    uncleanable offset - 1 for the last one): a bound that needs no scan."""
    if len(segs) > 1:
        return segs[1].base_offset - 1
    return first_uncleanable_offset - 1
