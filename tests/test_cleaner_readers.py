"""Every reader on compacted logs (offset gaps, emptied batches, rewritten batches with a delete
horizon): ``Log.read``/``records``/``read_table``, ``offset_for_timestamp``, the indexes,
``kafkalog dump-segments`` (checked against kafka-python's decoding, printed in Kafka's
``DumpLogSegments`` shape) and ``kafkalog verify`` (its compacted-partition checks too)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kafkalog.checkpoint import OffsetCheckpointFile
from kafkalog.cli import main
from kafkalog.clock import ManualClock
from kafkalog.config import LogConfig
from kafkalog.log import CLEANER_OFFSETS_FILE, Log
from kafkalog.records.builder import encode_batch
from kafkalog.records.record import Record
from kafkalog.tools.verify import verify_paths
from tests.cleaner_support import RETENTION_SHORT as RETENTION
from tests.cleaner_support import build_compacted_log

# kafka-python, a peer decoder (importorskip keeps its import-time warnings out)
MemoryRecords = pytest.importorskip("kafka.record.memory_records").MemoryRecords
DefaultRecordBatch = pytest.importorskip("kafka.record.default_records").DefaultRecordBatch

T0 = 1_700_000_000_000


@pytest.fixture(scope="module")
def compacted(tmp_path_factory: pytest.TempPathFactory):
    log, clock = build_compacted_log(tmp_path_factory.mktemp("readers") / "topic-0")
    yield log, clock
    log.close()


def _peer_batches(log: Log) -> list[DefaultRecordBatch]:
    """Every batch of the log as kafka-python decodes it (a peer, not our codec)."""
    out = []
    for seg in log.segments:
        mr = MemoryRecords(seg.pread(0, seg.size))
        while True:
            b = mr.next_batch()
            if b is None:
                break
            assert b.validate_crc()
            out.append(b)
    return out


def _peer_records(log: Log) -> list[tuple]:
    out = []
    for b in _peer_batches(log):
        for r in b:
            out.append((r.offset, r.key, r.value, r.timestamp, b.is_control_batch))
    return out


def test_the_log_is_compacted(compacted) -> None:
    log, _ = compacted
    offsets = [o for o, *_ in _peer_records(log)]
    gaps = sum(1 for a, b in zip(offsets, offsets[1:]) if b > a + 1)
    assert gaps > 20
    batches = _peer_batches(log)
    assert any(b.attributes & 0x40 for b in batches)  # delete horizons
    assert any(not list(b) for b in batches)  # emptied batches kept (producer state)


def test_records_and_read_table(compacted) -> None:
    log, _ = compacted
    peer = [(o, k, v, t) for o, k, v, t, control in _peer_records(log) if not control]
    assert [(r.offset, r.key, r.value, r.timestamp) for r in log.records()] == peer
    table = log.read_table()
    assert list(zip(table.column("offset").to_pylist(), table.column("key").to_pylist(),
                    table.column("value").to_pylist(),
                    table.column("timestamp").to_pylist())) == peer
    # reading from inside a gap starts at the next record
    offsets = [p[0] for p in peer]
    for o in range(log.log_start_offset, log.log_end_offset, 7):
        got = [r.offset for r in log.records(start_offset=o, end_offset=o + 30)]
        assert got == [x for x in offsets if o <= x < o + 30]
        t = log.read_table(o, o + 30)
        assert t.column("offset").to_pylist() == got


def test_fetch_from_any_offset(compacted) -> None:
    log, _ = compacted
    batches = _peer_batches(log)
    for o in range(log.log_start_offset, log.log_end_offset):
        data = log.read(o, max_bytes=1)
        first = MemoryRecords(data).next_batch()
        expect = next(b for b in batches if b.base_offset + b.last_offset_delta >= o)
        assert first.base_offset == expect.base_offset, o
    assert log.read(log.log_end_offset) == b""


def test_offset_for_timestamp(compacted) -> None:
    log, _ = compacted
    recs = _peer_records(log)
    last_ts = max(t for _o, _k, _v, t, _c in recs)
    for target in range(T0 - 5, last_ts + 20, 13):
        expect = min((o for o, _k, _v, t, _c in recs if t >= target), default=None)
        assert log.offset_for_timestamp(target) == expect, target
    targets = list(range(T0 - 5, last_ts + 20, 29))
    assert log.offsets_for_timestamps(targets) == \
        [log.offset_for_timestamp(t) for t in targets]


def test_indexes_point_at_batches(compacted) -> None:
    log, _ = compacted
    for seg in log.segments:
        data = seg.pread(0, seg.size)
        starts = {}
        mr = MemoryRecords(data)
        pos = 0
        while True:
            b = mr.next_batch()
            if b is None:
                break
            starts[pos] = b
            pos += b.size_in_bytes
        for i in range(seg.offset_index.entries):
            off, position = seg.offset_index.entry(i)
            assert position in starts and starts[position].base_offset <= off
        for o in range(seg.base_offset, seg.read_next_offset()):
            # a batch start with no offset >= o before it (o may lie in a gap)
            position = seg.lookup_position(o)
            assert position in starts
            assert all(b.base_offset + b.last_offset_delta < o
                       for p, b in starts.items() if p < position)


def test_verify_finds_nothing_wrong(compacted, tmp_path: Path) -> None:
    log, clock = compacted
    # a closed copy (an open log's active segment has a preallocated, zero-filled index)
    log.flush()
    copy = tmp_path / "topic-0"
    shutil.copytree(log.directory, copy, ignore=shutil.ignore_patterns(".kafkalog.lock"))
    Log.open(copy, log.config, clock=ManualClock(clock.milliseconds())).close()
    report = verify_paths([str(copy)], deep=True, now_ms=clock.milliseconds())
    assert [f for f in report.findings if f.severity != "info"] == []
    assert {f.check for f in report.findings} <= {"offset_gap", "index_cleaned_chunk",
                                                  "index_multi_batch_append"}


def test_dump_prints_cleaned_batches_as_kafka_does(compacted, capsys) -> None:
    log, _ = compacted
    # a segment holding a batch rewritten with a delete horizon
    seg = next(s for s in log.segments if any(b.attributes & 0x40 for b in _peer_batches_of(s)))
    capsys.readouterr()
    assert main(["dump-segments", "--files", str(seg.log_path), "--deep-iteration"]) == 0
    out = capsys.readouterr().out.splitlines()
    lines = [x for x in out if x.startswith(("baseOffset:", "| offset:"))]
    expected = []
    pos = 0
    for b in _peer_batches_of(seg):
        records = list(b)
        count = len(records)
        horizon = (f"OptionalLong[{b.first_timestamp}]" if b.attributes & 0x40
                   else "OptionalLong.empty")
        last_seq = -1 if b.base_sequence < 0 else b.base_sequence + b.last_offset_delta
        codec = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}[b.compression_type]
        ts_type = "LogAppendTime" if b.timestamp_type else "CreateTime"
        expected.append(
            f"baseOffset: {b.base_offset} lastOffset: {b.base_offset + b.last_offset_delta} "
            f"count: {count} baseSequence: {b.base_sequence} lastSequence: {last_seq} "
            f"producerId: {b.producer_id} producerEpoch: {b.producer_epoch} "
            f"partitionLeaderEpoch: {b.leader_epoch} "
            f"isTransactional: {str(bool(b.is_transactional)).lower()} "
            f"isControl: {str(bool(b.is_control_batch)).lower()} deleteHorizonMs: {horizon} "
            f"position: {pos} {ts_type}: {b.max_timestamp} size: {b.size_in_bytes} "
            f"magic: 2 compresscodec: {codec} crc: {b.crc} isvalid: true")
        for r in records:
            seq = -1 if b.base_sequence < 0 else b.base_sequence + (r.offset - b.base_offset)
            line = (f"| offset: {r.offset} {ts_type}: {r.timestamp} "
                    f"keySize: {-1 if r.key is None else len(r.key)} "
                    f"valueSize: {-1 if r.value is None else len(r.value)} "
                    f"sequence: {seq} headerKeys: [{','.join(k for k, _ in r.headers)}]")
            if b.is_control_batch:
                line = None  # control records carry their marker text: compared below
            expected.append(line)
        pos += b.size_in_bytes
    assert len(lines) == len(expected)
    for got, want in zip(lines, expected):
        if want is not None:
            assert got == want
        else:
            assert got.startswith("| offset:") and "endTxnMarker:" in got
    assert any("deleteHorizonMs: OptionalLong[" in x for x in lines)


def _peer_batches_of(seg) -> list:  # noqa: ANN001
    out = []
    mr = MemoryRecords(seg.pread(0, seg.size))
    while True:
        b = mr.next_batch()
        if b is None:
            return out
        out.append(b)


def test_verify_compacted_checks(tmp_path: Path) -> None:
    clock = ManualClock(T0)
    cfg = LogConfig(cleanup_policy="compact", segment_bytes=300,
                    delete_retention_ms=RETENTION)
    d = tmp_path / "c-0"
    log = Log.open(d, cfg, clock=clock)
    for i in range(10):
        log.append([Record(b"k%d" % (i % 3), b"v%d" % i, T0 + i)])
    log.append([Record(b"k0", None, T0 + 20)])
    log.roll()
    log.clean()
    log.close()

    def findings(now: int) -> set[str]:
        return {f.check for f in verify_paths([str(d)], now_ms=now).findings
                if f.severity != "info"}

    assert findings(T0) == set()
    # the tombstone's horizon passed: the next cleaning removes it
    assert findings(T0 + RETENTION) == {"tombstone_past_horizon"}
    # a checkpoint outside the log
    OffsetCheckpointFile(d / CLEANER_OFFSETS_FILE).write({("cleaner-offset", 0): 10**6})
    assert "cleaner_checkpoint_range" in findings(T0)
    # a key twice below the checkpoint, and a keyless record (a follower append)
    log = Log.open(d, cfg, clock=clock)
    log.append_batches(encode_batch([Record(b"k1", b"again", T0), Record(None, b"x", T0)],
                                    base_offset=log.log_end_offset))
    leo = log.log_end_offset
    log.close()
    OffsetCheckpointFile(d / CLEANER_OFFSETS_FILE).write({("cleaner-offset", 0): leo})
    assert findings(T0) == {"duplicate_key_in_clean_section", "compacted_keyless"}
    # a plain (delete) partition is not held to compaction rules
    p = tmp_path / "p-0"
    plain = Log.open(p, LogConfig(segment_bytes=300), clock=clock)
    plain.append([Record(None, b"x", T0)])
    plain.close()
    assert {f.check for f in verify_paths([str(p)], now_ms=T0).findings
            if f.severity != "info"} == set()
