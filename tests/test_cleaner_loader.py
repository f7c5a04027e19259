"""The loader's swap recovery (Kafka's ``LogLoader`` passes) after a crash at each step of a
cleaning's swap: Kafka's ``LogCleanerTest.testRecoveryAfterCrash`` ported, plus the
``.cleaned``/``.swap`` rules of ``LogLoader.removeTempFilesAndCollectSwapFiles``."""

from __future__ import annotations

import os
from pathlib import Path

from kafkalog.cleaner.cleaner import Cleaner
from kafkalog.cleaner.cleaner_config import CleanerConfig
from kafkalog.clock import ManualClock
from kafkalog.log import Log
from kafkalog.records.builder import encode_batch
from kafkalog.records.record import Record
from tests.cleaner_support import (
    LONG_MAX,
    T0,
    clean_segments,
    config,
    fake_map,
    key,
    keys_in_log,
    make_cleaner,
    record,
)

SUFFIXES = (".cleaned", ".swap", ".deleted")


def _restore_deleted(d: Path) -> None:
    for p in d.iterdir():
        if p.name.endswith(".deleted"):
            os.replace(p, p.with_name(p.name[: -len(".deleted")]))


def _rename_head(log: Log, old: str, new: str) -> None:
    seg = log.segments[0]
    seg.change_file_suffixes(old, new)


def _recover_and_check(d: Path, cfg: object, clock: ManualClock, expected: list[int]) -> Log:
    """LogTestUtils.recoverAndCheck: an unclean reopen leaves no temporary file and the
    expected keys."""
    (d / ".kafka_cleanshutdown").unlink(missing_ok=True)
    log = Log.open(d, cfg, clock=clock)  # type: ignore[arg-type]
    clock.advance(11)
    left = [p.name for p in d.iterdir() if p.name.endswith(SUFFIXES)]
    assert left == []
    assert keys_in_log(log) == expected
    return log


def test_recovery_after_crash(tmp_path: Path) -> None:
    cfg = config(segment_bytes=300, index_interval_bytes=1, file_delete_delay_ms=10)
    clock = ManualClock(T0)
    d = tmp_path / "t-0"
    log = Log.open(d, cfg, clock=clock)
    count = [0]

    def fill() -> None:
        while len(log.segments) < 10:
            record(log, log.log_end_offset, log.log_end_offset)
            count[0] += 1

    def clean() -> list[int]:
        m = fake_map({k: LONG_MAX for k in range(1, count[0], 2)})  # pretend odd keys
        clean_segments(make_cleaner(clock=clock), log, log.segments[:9], m, 0)
        return keys_in_log(log)

    fill()
    all_keys = keys_in_log(log)
    cleaned = clean()
    log.close()
    # 1) a crash after the .cleaned files were written, before the rename to .swap: the
    #    cleaning is abandoned, every record is there
    _rename_head(log, "", ".cleaned")
    _restore_deleted(d)
    log = _recover_and_check(d, cfg, clock, all_keys)
    cleaned = clean()
    log.close()
    # 2) the same, with a subset of the files already renamed to .swap
    _rename_head(log, "", ".cleaned")
    seg = log.segments[0]
    os.replace(seg.log_path, seg.log_path.with_name(seg.log_path.name[:-8] + ".swap"))
    _restore_deleted(d)
    log = _recover_and_check(d, cfg, clock, all_keys)
    cleaned = clean()
    log.close()
    # 3) the .swap files written, the old segments not yet renamed .deleted: completed
    _rename_head(log, "", ".swap")
    _restore_deleted(d)
    log = _recover_and_check(d, cfg, clock, cleaned)
    fill()
    cleaned = clean()
    # 4) the .swap files written and the old segments renamed .deleted: completed
    log.close()
    _rename_head(log, "", ".swap")
    log = _recover_and_check(d, cfg, clock, cleaned)
    fill()
    cleaned = clean()
    log.close()
    # 5) some .swap files already renamed to their final names: completed
    seg = log.segments[0]
    os.replace(seg.time_index_path, seg.time_index_path.with_name(
        seg.time_index_path.name + ".swap"))
    log = _recover_and_check(d, cfg, clock, cleaned)
    fill()
    cleaned = clean()
    log.close()
    # 6) the swap complete, the asynchronous deletion not done yet
    log = _recover_and_check(d, cfg, clock, cleaned)
    log.close()


def test_swap_files_at_or_above_a_cleaned_offset_are_deleted(tmp_path: Path) -> None:
    # KAFKA-6264: a .swap at or above the lowest .cleaned offset is an incomplete split
    d = tmp_path / "t-0"
    cfg = config(segment_bytes=200)
    log = Log.open(d, cfg, clock=ManualClock(T0))
    for i in range(12):
        log.append([Record(key(i), b"v", T0)])
    log.close()
    segs = sorted(p.name for p in d.iterdir() if p.name.endswith(".log"))
    second = int(segs[1].split(".")[0])
    # a stray .cleaned at the second segment, a .swap above it: both go, data intact
    (d / f"{second:020d}.log.cleaned").write_bytes(b"junk")
    junk = encode_batch([Record(b"x", b"y", T0)], base_offset=second + 1)
    (d / f"{second + 1:020d}.log.swap").write_bytes(junk)
    (d / ".kafka_cleanshutdown").unlink(missing_ok=True)
    log = Log.open(d, cfg, clock=ManualClock(T0))
    assert [p.name for p in d.iterdir() if p.name.endswith(SUFFIXES)] == []
    assert [int(r.key) for r in log.records()] == list(range(12))
    log.close()


def test_swap_of_an_empty_cleaned_segment(tmp_path: Path) -> None:
    # a cleaning that emptied its group: the empty .swap replaces the old segment file at its
    # base offset (its next offset is its base: no other file is in the [min, max) range)
    d = tmp_path / "t-0"
    cfg = config(segment_bytes=400)  # one segment per cleaning group
    clock = ManualClock(T0)
    log = Log.open(d, cfg, clock=clock)
    for i in range(5):
        record(log, i, i)
    log.roll()
    for i in range(5):
        record(log, i, i + 10)  # every earlier key overwritten
    log.roll()
    cleaner = Cleaner.from_config(CleanerConfig(dedupe_buffer_size=1 << 16), clock)
    log.clean(cleaner=cleaner)
    assert log.segments[0].size == 0
    log.close()
    log.segments[0].change_file_suffixes("", ".swap")
    _restore_deleted(d)  # the old first segment is back: the swap must win
    log = _recover_and_check(d, cfg, clock, [0, 1, 2, 3, 4])
    assert [(r.offset, r.value) for r in log.records()] == \
        [(5 + i, str(i + 10).encode()) for i in range(5)]
    log.close()
