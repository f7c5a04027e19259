"""Helpers shared by the log-cleaner tests, after the helpers of Kafka's ``LogCleanerTest``
(``record``, ``appendIdempotentAsLeader``, ``keysInLog``, ``offsetsInLog``...).

Keys and values are decimal strings of ints, as in Kafka's tests (``key(7) == b"7"``).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from kafkalog.cleaner.cleaned_transaction_metadata import CleanedTransactionMetadata
from kafkalog.cleaner.cleaner import Cleaner
from kafkalog.cleaner.cleaner_stats import CleanerStats
from kafkalog.cleaner.log_to_clean import LogToClean
from kafkalog.cleaner.offset_map import SkimpyOffsetMap
from kafkalog.clock import ManualClock
from kafkalog.config import LogConfig
from kafkalog.log import Log
from kafkalog.records.batch import iter_batches
from kafkalog.records.record import Record

TOMBSTONE_RETENTION_MS = 86400000
LARGE_TIMESTAMP = 2**63 - 1 - TOMBSTONE_RETENTION_MS - 1
LONG_MAX = 2**63 - 1
T0 = 1_700_000_000_000
#: delete.retention.ms of build_compacted_log
RETENTION_SHORT = 1000

#: LogCleanerTest's logConfig: 1 KiB segments and indexes, compacted
BASE_CONFIG = {"segment.bytes": "1024", "segment.index.bytes": "1024",
               "cleanup.policy": "compact"}


def key(k: int) -> bytes:
    return str(k).encode()


def config(**props: Any) -> LogConfig:
    merged = dict(BASE_CONFIG)
    merged.update({k.replace("_", "."): str(v) for k, v in props.items()})
    return LogConfig.from_properties(merged)


def make_log(directory: Path, cfg: LogConfig | None = None, clock: ManualClock | None = None,
             **kw: Any) -> Log:
    return Log.open(directory, cfg if cfg is not None else config(),
                    clock=clock if clock is not None else ManualClock(T0), **kw)


def make_cleaner(capacity: int = 100_000, *, clock: ManualClock | None = None,
                 max_message_size: int = 64 * 1024,
                 check_done: Callable[[Any], None] | None = None) -> Cleaner:
    """LogCleanerTest.makeCleaner: a map of ``capacity`` slots, load factor 0.75, I/O buffers of
    ``max_message_size``."""
    return Cleaner(offset_map=SkimpyOffsetMap(capacity * 24), io_buffer_size=max_message_size,
                   max_io_buffer_size=max_message_size, dup_buffer_load_factor=0.75,
                   clock=clock if clock is not None else ManualClock(T0), check_done=check_done)


def record(log: Log, k: int, v: int | bytes | None, **kw: Any) -> Any:
    value = v if v is None or isinstance(v, bytes) else str(v).encode()
    return log.append([Record(key(k), value, log._clock.milliseconds())], **kw)


def write_to_log(log: Log, pairs: Iterable[tuple[int, int]]) -> list[int]:
    return [record(log, k, v).first_offset for k, v in pairs]


def append_idempotent(log: Log, producer_id: int, epoch: int = 0,
                      transactional: bool = False) -> Callable[..., Any]:
    """appendIdempotentAsLeader: each call appends one batch of keys (value = key)."""
    seq = [0]

    def append(*keys: int) -> Any:
        now = log._clock.milliseconds()
        recs = [Record(key(k), key(k), now) for k in keys]
        info = log.append(recs, producer_id=producer_id, producer_epoch=epoch,
                          base_sequence=seq[0], transactional=transactional)
        seq[0] += len(keys)
        return info

    return append


def append_transactional(log: Log, producer_id: int, epoch: int = 0) -> Callable[..., Any]:
    return append_idempotent(log, producer_id, epoch, transactional=True)


def batches(log: Log) -> list[Any]:
    out = []
    for seg in log.segments:
        out.extend(iter_batches(seg.pread(0, seg.size)))
    return out


def keys_in_log(log: Log) -> list[int]:
    """LogTestUtils.keysInLog: keys of the data records with a value."""
    return [int(r.key) for b in batches(log) if not b.is_control for r in b
            if r.value is not None]


def offsets_in_log(log: Log) -> list[int]:
    """offsetsInLog: offsets of every record (markers included)."""
    return [r.offset for b in batches(log) for r in b]


def last_offsets_per_batch(log: Log) -> list[int]:
    return [b.last_offset for b in batches(log)]


def batch_base_offsets(log: Log) -> list[int]:
    return [b.base_offset for b in batches(log)]


def last_sequences_in_log(log: Log) -> dict[int, int]:
    out: dict[int, int] = {}
    for b in batches(log):
        if not b.is_control and b.producer_id >= 0:
            out[b.producer_id] = b.last_sequence
    return out


def ltc(log: Log, first_dirty: int, uncleanable: int | None = None) -> LogToClean:
    return LogToClean(("test", 0), log, first_dirty,
                      log.active_segment.base_offset if uncleanable is None else uncleanable)


def do_clean(cleaner: Cleaner, log: Log, first_dirty: int, now: int) -> int:
    """Cleaner.doClean under the log's cleaning lock (as Log.clean runs it).

    Kafka's tests call ``doClean`` again with a first dirty offset at the active segment (no
    dirty data) to re-clean a log: their ``FakeOffsetMap`` keeps its latest offset across
    ``clear()``, so the round covers the whole log again. A ``SkimpyOffsetMap`` forgets it and
    such a round cleans nothing; the re-cleaning those tests mean is a round from 0, which is
    what this helper runs when nothing is dirty.
    """
    if first_dirty >= log.active_segment.base_offset:
        first_dirty = 0
    with log._clean_lock:
        return cleaner.do_clean(ltc(log, first_dirty), now)[0]


def run_two_pass_clean(cleaner: Cleaner, log: Log, first_dirty: int, now: int,
                       retention_ms: int = TOMBSTONE_RETENTION_MS) -> int:
    """LogCleanerTest.runTwoPassClean: the first pass sets delete horizons, the second runs
    past them."""
    do_clean(cleaner, log, first_dirty, now)
    return do_clean(cleaner, log, first_dirty, now + retention_ms + 1)


def clean_segments(cleaner: Cleaner, log: Log, segments: list[Any], offset_map: SkimpyOffsetMap,
                   now: int, *, legacy_horizon: int = -1, upper: int | None = None
                   ) -> CleanerStats:
    stats = CleanerStats()
    with log._clean_lock:
        cleaner.clean_segments(log, segments, offset_map, now, stats,
                               CleanedTransactionMetadata(), legacy_horizon,
                               segments[-1].read_next_offset() if upper is None else upper)
    return stats


def fake_map(keys_to_offsets: dict[int, int], slots: int = 100_000) -> SkimpyOffsetMap:
    """A map holding the given keys (Kafka's tests fill a FakeOffsetMap by hand)."""
    m = SkimpyOffsetMap(slots * 24)
    for k, off in keys_to_offsets.items():
        m.put(key(k), off)
    return m


def build_compacted_log(directory: Path) -> tuple[Log, ManualClock]:
    """A log cleaned twice: records removed (gaps), tombstones kept (horizon) and removed,
    aborted transactions gone, an idempotent producer's emptied last batch, codecs mixed."""
    clock = ManualClock(T0)
    cfg = LogConfig(cleanup_policy="compact", segment_bytes=900, index_interval_bytes=60,
                    delete_retention_ms=RETENTION_SHORT)
    log = Log.open(directory, cfg, clock=clock)
    rng = random.Random(7)
    seq = 0
    for i in range(260):
        ts = T0 + 10 * i
        clock.set(ts)
        codec = rng.choice(["none", "none", "gzip", "lz4", "zstd", "snappy"])
        recs = [Record(b"k%d" % rng.randrange(25),
                       None if rng.random() < 0.1 else b"v%d" % i, ts + j,
                       (("h", b"x"),) if j == 1 else ())
                for j in range(rng.randint(1, 4))]
        op = rng.random()
        if op < 0.1:
            pid = 1000 + i
            log.append(recs, producer_id=pid, producer_epoch=0, base_sequence=0,
                       transactional=True, compression=codec)
            if rng.random() < 0.5:
                log.abort_transaction(pid, 0)
            else:
                log.commit_transaction(pid, 0)
        elif op < 0.2:
            log.append(recs, producer_id=7, producer_epoch=0, base_sequence=seq,
                       compression=codec)
            seq += len(recs)
        else:
            log.append(recs, compression=codec)
        if i in (150, 259):
            log.roll()
            log.clean()
    clock.advance(RETENTION_SHORT)
    log.clean(first_dirty_offset=0)  # past the first horizons
    return log, clock
