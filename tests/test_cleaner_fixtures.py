"""The real compacted ``__consumer_offsets`` segments written by Kafka brokers (shared fixtures:
LDI-POC 3.7.0, VolodymyrZee 2.4/2.5, KAIPASUBHASH): they read, verify, and re-clean to the same
latest offset per key; kafka-python decodes the cleaned batches (delete horizon included) and
``dump-segments --offsets-decoder`` prints them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kafkalog.cli import main
from kafkalog.clock import ManualClock
from kafkalog.config import LogConfig
from kafkalog.decoders import offsets as offsets_codec
from kafkalog.log import Log
from kafkalog.tools.verify import verify_paths

from .conftest import SHARED_FIXTURES

MemoryRecords = pytest.importorskip("kafka.record.memory_records").MemoryRecords

NOW = 1_800_000_000_000
DIRS = sorted(p.relative_to(SHARED_FIXTURES / "kafka-real")
              for p in (SHARED_FIXTURES / "kafka-real").glob("*/__consumer_offsets-*")) \
    if (SHARED_FIXTURES / "kafka-real").is_dir() else []
# __consumer_offsets: cleanup.policy=compact (GroupCoordinator's offsets topic configs)
CONFIG = LogConfig(cleanup_policy="compact", segment_bytes=100 * 1024 * 1024)


def _peer(data: bytes) -> list[tuple[int, bytes | None, bytes | None, bool, int]]:
    """(offset, key, value, control, batch attributes) per record, decoded by kafka-python."""
    out = []
    mr = MemoryRecords(data)
    while True:
        b = mr.next_batch()
        if b is None:
            return out
        assert b.validate_crc()
        for r in b:
            out.append((r.offset, r.key, r.value, b.is_control_batch, b.attributes))


def _latest(records: list) -> dict[bytes, int]:
    latest = {}
    for o, k, _v, control, _a in records:
        if not control and k is not None:
            latest[k] = o
    return latest


@pytest.mark.skipif(not DIRS, reason="shared fixtures (kafka-real) not available")
@pytest.mark.parametrize("rel", DIRS, ids=str)
def test_real_consumer_offsets_read_verify_and_reclean(tmp_path: Path, rel: Path,
                                                        capsys) -> None:
    src = SHARED_FIXTURES / "kafka-real" / rel
    d = tmp_path / "logs" / rel.name
    shutil.copytree(src, d)
    original = b"".join(p.read_bytes() for p in sorted(d.glob("*.log")))
    peer = _peer(original)
    values = {o: v for o, _k, v, _c, _a in peer}
    latest_before = _latest(peer)
    assert latest_before
    # read: the engine's records are the peer's
    clock = ManualClock(NOW)
    log = Log.open(d, CONFIG, clock=clock)
    assert [(r.offset, r.key, r.value) for r in log.records()] == \
        [(o, k, v) for o, k, v, c, _a in peer if not c]
    log.close()
    # verify: no errors on the broker's files
    report = verify_paths([str(tmp_path / "logs")], now_ms=NOW)
    assert [f for f in report.findings if f.severity == "error"] == []
    # re-clean the whole partition: the same latest offset (and bytes) per key
    log = Log.open(d, CONFIG, clock=clock)
    log.roll()
    result = log.clean(first_dirty_offset=0)
    assert result.end_offset == log.active_segment.base_offset
    cleaned = b"".join(s.pread(0, s.size) for s in log.segments)
    after = _peer(cleaned)
    assert _latest(after) == latest_before
    for o, _k, v, control, attrs in after:
        assert v == values[o]  # offsets and payloads unchanged
        if not control and v is None:
            assert attrs & 0x40  # a kept tombstone's batch carries its delete horizon
    # every offset commit / group record still decodes as Kafka's offsets decoder prints it
    for _o, k, v, control, _a in after:
        if not control:
            offsets_codec.decode_record(k, v)
    log.close()
    assert verify_paths([str(d)], now_ms=NOW).count("error") == 0
    capsys.readouterr()
    seg = sorted(d.glob("*.log"))[0]
    assert main(["dump-segments", "--files", str(seg), "--offsets-decoder"]) == 0
    out = capsys.readouterr().out
    first = [r for r in after if r[0] < int(seg.name.split(".")[0]) + 2**31
             and r[0] < log.segments[1].base_offset]
    assert out.count("| offset: ") == len(first)


def test_reclean_is_stable(tmp_path: Path) -> None:
    """Cleaning a cleaned fixture again changes nothing (an idempotent fixed point)."""
    rel = next((r for r in DIRS if r.name == "__consumer_offsets-18"), None)
    if rel is None:
        pytest.skip("VolodymyrZee __consumer_offsets-18 fixture not available")
    d = tmp_path / rel.name
    shutil.copytree(SHARED_FIXTURES / "kafka-real" / rel, d)
    log = Log.open(d, CONFIG, clock=ManualClock(NOW))
    log.roll()
    log.clean(first_dirty_offset=0)
    once = [(r.offset, r.key, r.value) for r in log.records()]
    log.clean(first_dirty_offset=0)
    assert [(r.offset, r.key, r.value) for r in log.records()] == once
    assert len(once) < 499  # the fixture had overwritten offsets to remove
    log.close()
