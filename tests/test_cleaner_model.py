"""The log cleaner against a plain model, on random workloads.

Seeded random workloads of keyed overwrites, tombstones, idempotent producers and transactions
(committed and aborted, some left open across cleanings), compressed and not, rolls and clock
jumps, cleaned at random moments with a ``ManualClock`` (``Log.clean``), sometimes reopened.
After every cleaning:

* **exactly the records the model keeps remain**: below the cleaning's end offset a data record
  stays iff it is not aborted, no later non-aborted record of its key lies below the end offset,
  and it has a value or is a tombstone whose batch's delete horizon (set to cleaning time +
  ``delete.retention.ms`` by the first cleaning that kept it) has not passed; at and above the
  end offset nothing changes;
* **offsets are unchanged**: every record read at an offset is the one appended there (key,
  value, timestamp, headers), and every batch keeps its base and last offset;
* **the latest value of every key** read with ``read_committed`` is the dict model's (a
  key whose latest is a tombstone shows the tombstone or nothing);
* **tombstones disappear exactly at their horizon** (the batch's delete-horizon attribute is
  the model's, and the tombstone is gone at the first cleaning at or past it);
* **indexes equal the Kafka index model** (tests/reference/kafka_index_model.py): the offset
  and time index of each new segment are the model's for the appends the cleaner makes (one per
  source segment here: the I/O buffer exceeds a segment), the other segments' unchanged;
* **idempotent state survives**: each producer's last data batch is still in the log, and a
  reopened log accepts the next sequence (and detects a retry of the last batch).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from kafkalog.cleaner.cleaner import Cleaner
from kafkalog.cleaner.cleaner_config import CleanerConfig
from kafkalog.clock import ManualClock
from kafkalog.config import LogConfig
from kafkalog.errors import InvalidRecordError
from kafkalog.log import Log
from kafkalog.records.batch import iter_batches
from kafkalog.records.record import Record
from tests.reference.kafka_index_model import Append, model_live_appends

T0 = 1_700_000_000_000
RETENTION = 10_000
CODECS = ("none", "none", "none", "gzip", "lz4", "zstd", "snappy")


@dataclass
class MRec:
    key: bytes
    value: bytes | None
    ts: int
    headers: tuple
    batch: int  # base offset of its batch
    txn: int | None = None  # transaction id (None: not transactional)


@dataclass
class Model:
    records: dict[int, MRec] = field(default_factory=dict)
    batches: dict[int, list[int]] = field(default_factory=dict)  # base -> record offsets
    horizon: dict[int, int] = field(default_factory=dict)  # batch base -> delete horizon
    txn_state: dict[int, str] = field(default_factory=dict)  # txn id -> open|commit|abort
    open_txn: dict[int, int] = field(default_factory=dict)  # producer id -> txn id
    txn_first: dict[int, int] = field(default_factory=dict)  # txn id -> first offset
    sequences: dict[int, int] = field(default_factory=dict)  # producer id -> next sequence
    removed: set[int] = field(default_factory=set)

    def aborted(self, o: int) -> bool:
        t = self.records[o].txn
        return t is not None and self.txn_state[t] == "abort"

    def lso(self, leo: int) -> int:
        firsts = [self.txn_first[t] for t in self.open_txn.values()]
        return min(firsts) if firsts else leo

    def live(self) -> list[int]:
        return sorted(o for o in self.records if o not in self.removed)


def _records(rng: random.Random, n: int, now: int, keys: int) -> list[Record]:
    out = []
    for _ in range(n):
        key = b"k%02d" % rng.randrange(keys)
        value = None if rng.random() < 0.15 else rng.randbytes(rng.choice([0, 3, 20, 90]))
        headers = (("h", rng.randbytes(2)),) if rng.random() < 0.2 else ()
        out.append(Record(key, value, now + rng.randint(-50, 50), headers))
    return out


def _append(log: Log, model: Model, recs: list[Record], **kw: object) -> None:
    info = log.append(recs, **kw)
    base = info.first_offset
    txn = None
    pid = kw.get("producer_id", -1)
    if kw.get("transactional"):
        txn = model.open_txn[pid]  # type: ignore[index]
        model.txn_first.setdefault(txn, base)
    offs = list(range(base, info.last_offset + 1))
    model.batches[base] = offs
    for o, r in zip(offs, recs):
        model.records[o] = MRec(r.key, r.value, r.timestamp, tuple(r.headers), base, txn)


def _snapshot(log: Log) -> dict:
    # the rolled segments' files as they stay: their trims are done by the flush each roll
    # scheduled (LogSegment.on_become_inactive(trim=False))
    log.await_scheduled_flushes(timeout=60)
    segs = list(log.segments)
    batches = {}
    for s in segs:
        data = s.pread(0, s.size)
        for b in iter_batches(data):
            batches[b.base_offset] = bytes(data[b.position:b.position + b.size])
    index = {id(s): (s.index_path.read_bytes(), s.time_index_path.read_bytes())
             for s in segs[:-1]}
    return {"segments": segs, "batches": batches, "index": index}


def _expected_end(log: Log, model: Model, first_dirty: int) -> int:
    u = min(model.lso(log.log_end_offset), log.active_segment.base_offset)
    non_active = log.non_active_log_segments_from(u)
    first_uncleanable = non_active[0].base_offset if non_active else \
        log.active_segment.base_offset
    cleanable = sum(s.size for s in log.log_segments(min(first_dirty, first_uncleanable),
                                                     first_uncleanable))
    return first_uncleanable if cleanable else first_dirty


def _apply_clean_to_model(model: Model, end: int, now: int) -> None:
    """The records a cleaning with end offset ``end`` at ``now`` removes (module docstring)."""
    latest: dict[bytes, int] = {}
    for o in sorted(model.records):
        if o >= end or o in model.removed or model.aborted(o):
            continue
        latest[model.records[o].key] = o
    tomb_batches = set()
    for o in sorted(model.records):
        if o >= end or o in model.removed:
            continue
        r = model.records[o]
        if model.aborted(o) or latest[r.key] != o:
            model.removed.add(o)
            continue
        if r.value is None:
            h = model.horizon.get(r.batch)
            if h is not None and now >= h:
                model.removed.add(o)
            elif h is None:
                tomb_batches.add(r.batch)
    for b in tomb_batches:
        model.horizon[b] = now + RETENTION


def _check_indexes(log: Log, before: dict, cfg: LogConfig) -> None:
    after = list(log.segments)
    old_ids = {id(s) for s in before["segments"]}
    bases_before = [s.base_offset for s in before["segments"]]
    for k, seg in enumerate(after[:-1]):
        if id(seg) in old_ids:  # untouched: same index bytes
            assert (seg.index_path.read_bytes(), seg.time_index_path.read_bytes()) == \
                before["index"][id(seg)]
            continue
        nxt = after[k + 1].base_offset
        sources = [b for b in bases_before if seg.base_offset <= b < nxt]
        data = seg.pread(0, seg.size)
        batches = list(iter_batches(data))
        appends = []
        for j, src in enumerate(sources):
            hi = sources[j + 1] if j + 1 < len(sources) else nxt
            chunk = [b for b in batches if src <= b.base_offset < hi]
            if not chunk:
                continue
            size = sum(b.size for b in chunk)
            max_ts, shallow, max_off = -1, -1, -1
            for b in chunk:
                raw = bytes(data[b.position:b.position + b.size])
                original = before["batches"].get(b.base_offset) == raw
                offsets = [r.offset for r in b]
                if original or not offsets:
                    b_off, b_ts, b_sh = b.last_offset, b.max_timestamp, b.last_offset
                else:  # rebuilt (MemoryRecordsBuilder.info())
                    b_off = max(offsets)
                    b_ts = b.max_timestamp
                    b_sh = b.last_offset if b_ts != -1 else -1
                if b_ts > max_ts:
                    max_ts, shallow = b_ts, b_sh
                max_off = max(max_off, b_off)
            appends.append(Append(chunk[0].base_offset, max_off, size, max_ts, shallow))
        model = model_live_appends(appends, segment_bytes=2**31 - 1,
                                   index_interval=cfg.index_interval_bytes,
                                   index_bytes=cfg.segment_index_bytes,
                                   start_offset=seg.base_offset)
        assert len(model) == 1
        assert seg.index_path.read_bytes() == model[0].index_file(), seg
        assert seg.time_index_path.read_bytes() == model[0].time_index_file(), seg


def _check_log(log: Log, model: Model, before: dict, end: int | None) -> None:
    data_records = {}
    for seg in log.segments:
        for b in iter_batches(seg.pread(0, seg.size)):
            assert b.is_valid
            if b.base_offset in before.get("batches", {}) or not before:
                pass
            if not b.is_control:
                for r in b:
                    data_records[r.offset] = (r, b)
            # offsets never rewritten: a batch keeps its base and last offset
            if b.base_offset in model.batches:
                assert b.last_offset == model.batches[b.base_offset][-1]
    assert sorted(data_records) == model.live()
    for o, (r, b) in data_records.items():
        m = model.records[o]
        assert (r.key, r.value, r.timestamp, tuple(r.headers)) == \
            (m.key, m.value, m.ts, m.headers), o
        # the delete horizon of the batch is the model's
        assert b.delete_horizon_ms == model.horizon.get(b.base_offset), (o, b)
    # read_committed: the latest value per key is the dict model's
    lso = model.lso(log.log_end_offset)
    assert log.last_stable_offset == lso
    expect: dict[bytes, tuple[int, bytes | None]] = {}
    for o in sorted(model.records):
        if o < lso and not model.aborted(o):
            expect[model.records[o].key] = (o, model.records[o].value)
    got = {}
    for r in log.records(isolation="read_committed"):
        got[r.key] = (r.offset, r.value)
    for k, (o, v) in expect.items():
        if v is None:
            assert k not in got or got[k] == (o, None), k
        else:
            assert got[k] == (o, v), k
    assert set(got) <= set(expect)
    # the columnar reader agrees with the record reader on the compacted log
    table = log.read_table()
    assert table.column("offset").to_pylist() == [r.offset for r in log.records()]


def _check_producers(log: Log) -> None:
    lasts = {b.last_offset for s in log.segments for b in iter_batches(s.pread(0, s.size))}
    for pid, e in log.producer_state.producers.items():
        if e.last_data_offset >= 0:
            assert e.last_data_offset in lasts, pid


def _run(seed: int, tmp_path: Path) -> int:
    rng = random.Random(seed)
    clock = ManualClock(T0)
    cfg = LogConfig(cleanup_policy="compact", segment_bytes=rng.choice([500, 900, 1600]),
                    index_interval_bytes=rng.choice([0, 64, 300]),
                    segment_index_bytes=rng.choice([96, 4096]), delete_retention_ms=RETENTION,
                    file_delete_delay_ms=0)
    cleaner_cfg = CleanerConfig(dedupe_buffer_size=1 << 20,
                                io_buffer_size=cfg.segment_bytes * 8)
    keys = rng.choice([4, 12, 40])
    directory = tmp_path / f"seed{seed}-0"
    log = Log.open(directory, cfg, clock=clock)
    cleaner = Cleaner.from_config(cleaner_cfg, clock)
    model = Model()
    next_txn = [0]
    cleanings = 0
    for _step in range(rng.choice([120, 200])):
        op = rng.random()
        now = clock.milliseconds()
        codec = rng.choice(CODECS)
        if op < 0.40:
            _append(log, model, _records(rng, rng.randint(1, 4), now, keys), compression=codec)
        elif op < 0.50:  # idempotent producer
            pid = rng.choice([100, 101])
            if pid in model.open_txn:
                continue
            recs = _records(rng, rng.randint(1, 3), now, keys)
            seq = model.sequences.get(pid, 0)
            _append(log, model, recs, producer_id=pid, producer_epoch=0, base_sequence=seq,
                    compression=codec)
            model.sequences[pid] = seq + len(recs)
        elif op < 0.62:  # transactional data
            pid = rng.choice([200, 201, 202])
            if pid not in model.open_txn:
                model.open_txn[pid] = next_txn[0]
                model.txn_state[next_txn[0]] = "open"
                next_txn[0] += 1
            recs = _records(rng, rng.randint(1, 3), now, keys)
            seq = model.sequences.get(pid, 0)
            _append(log, model, recs, producer_id=pid, producer_epoch=0, base_sequence=seq,
                    transactional=True, compression=codec)
            model.sequences[pid] = seq + len(recs)
        elif op < 0.70 and model.open_txn:  # end a transaction
            pid = rng.choice(sorted(model.open_txn))
            txn = model.open_txn.pop(pid)
            if rng.random() < 0.5:
                log.commit_transaction(pid, 0)
                model.txn_state[txn] = "commit"
            else:
                log.abort_transaction(pid, 0)
                model.txn_state[txn] = "abort"
        elif op < 0.74:
            with pytest.raises(InvalidRecordError):
                log.append([Record(None, b"keyless", now)])
        elif op < 0.80:
            log.roll()
        elif op < 0.88:
            clock.advance(rng.choice([0, 1, RETENTION // 3, RETENTION, RETENTION + 1]))
        elif op < 0.97:
            before = _snapshot(log)
            first = log.cleaner_checkpoint
            first = log.log_start_offset if first is None else first
            expected_end = _expected_end(log, model, first)
            result = log.clean(cleaner=cleaner)
            assert result.first_dirty_offset == first
            assert result.end_offset == expected_end
            if result.stats is not None:
                _apply_clean_to_model(model, result.end_offset, clock.milliseconds())
                cleanings += 1
                _check_indexes(log, before, cfg)
            _check_log(log, model, before, result.end_offset)
            _check_producers(log)
        else:  # clean shutdown and reopen
            states = {pid: (e.producer_epoch, e.last_seq, e.last_data_offset)
                      for pid, e in log.producer_state.producers.items()}
            log.close()
            log = Log.open(directory, cfg, clock=clock)
            assert {pid: (e.producer_epoch, e.last_seq, e.last_data_offset)
                    for pid, e in log.producer_state.producers.items()} == states
            _check_log(log, model, {}, None)
    # the idempotent producers go on after all that: the next sequence is accepted
    for pid in (100, 101):
        if pid in model.sequences:
            log.append([Record(b"k00", b"after", clock.milliseconds())], producer_id=pid,
                       producer_epoch=0, base_sequence=model.sequences[pid])
    log.close()
    return cleanings


@pytest.mark.parametrize("seed", range(24))
def test_cleaner_matches_the_model(seed: int, tmp_path: Path) -> None:
    cleanings = _run(seed, tmp_path)
    assert cleanings >= 1


def test_tombstone_disappears_exactly_at_its_horizon(tmp_path: Path) -> None:
    clock = ManualClock(T0)
    cfg = LogConfig(cleanup_policy="compact", segment_bytes=400, delete_retention_ms=RETENTION)
    log = Log.open(tmp_path / "t-0", cfg, clock=clock)
    log.append([Record(b"a", b"1", T0), Record(b"b", b"2", T0)])
    log.append([Record(b"a", None, T0)])
    log.roll()
    log.clean()  # the tombstone's batch gets horizon T0 + RETENTION
    horizon = [b for s in log.segments for b in iter_batches(s.pread(0, s.size))
               if b.base_offset == 2][0].delete_horizon_ms
    assert horizon == T0 + RETENTION
    log.append([Record(b"c", b"3", T0)])
    log.roll()
    clock.set(horizon - 1)
    log.clean(first_dirty_offset=0)
    assert [(r.offset, r.value) for r in log.records()] == [(1, b"2"), (2, None), (3, b"3")]
    clock.set(horizon)
    log.clean(first_dirty_offset=0)
    assert [(r.offset, r.value) for r in log.records()] == [(1, b"2"), (3, b"3")]
    log.close()
