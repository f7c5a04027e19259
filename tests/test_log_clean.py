"""``Log.clean`` and the compaction configs: Kafka's names and defaults, the standalone cleaner
checkpoint, ``compact,delete`` retention, ``max.compaction.lag.ms`` rolls, key-less records."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kafkalog.checkpoint import OffsetCheckpointFile
from kafkalog.cleaner.cleaner_config import CleanerConfig
from kafkalog.clock import ManualClock
from kafkalog.config import LONG_MAX, LogConfig
from kafkalog.errors import ConfigError, InvalidRecordError
from kafkalog.log import CLEANER_OFFSETS_FILE, Log
from kafkalog.log_dir import config_to_properties
from kafkalog.records.record import Record

T0 = 1_700_000_000_000


def test_log_config_compaction_keys_have_kafkas_names_and_defaults() -> None:
    c = LogConfig()
    # storage/.../LogConfig.java DEFAULT_* (3.9 and 4.x)
    assert (c.min_cleanable_dirty_ratio, c.min_compaction_lag_ms, c.max_compaction_lag_ms,
            c.delete_retention_ms) == (0.5, 0, LONG_MAX, 86400000)
    assert not c.compact and c.delete
    props = {"cleanup.policy": "compact,delete", "min.cleanable.dirty.ratio": "0.25",
             "min.compaction.lag.ms": "10", "max.compaction.lag.ms": "20",
             "delete.retention.ms": "30"}
    c = LogConfig.from_properties(props)
    assert c.compact and c.delete
    assert (c.min_cleanable_dirty_ratio, c.min_compaction_lag_ms, c.max_compaction_lag_ms,
            c.delete_retention_ms) == (0.25, 10, 20, 30)
    # written back under the same topic config names
    out = config_to_properties(c)
    assert {k: out[k] for k in props} == {**props, "cleanup.policy": "compact,delete"}
    # the broker's log.cleaner.* synonyms (ServerTopicConfigSynonyms)
    b = LogConfig.from_properties({"log.cleaner.min.cleanable.ratio": "0.1",
                                   "log.cleaner.delete.retention.ms": "5",
                                   "log.cleaner.min.compaction.lag.ms": "1",
                                   "log.cleaner.max.compaction.lag.ms": "2"})
    assert (b.min_cleanable_dirty_ratio, b.delete_retention_ms, b.min_compaction_lag_ms,
            b.max_compaction_lag_ms) == (0.1, 5, 1, 2)


@pytest.mark.parametrize(("props", "message"), [
    ({"min.cleanable.dirty.ratio": "1.5"}, "min.cleanable.dirty.ratio: value 1.5 out of range"),
    ({"min.cleanable.dirty.ratio": "x"}, "min.cleanable.dirty.ratio: expected a number"),
    ({"max.compaction.lag.ms": "0"}, "max.compaction.lag.ms: value '0' out of range"),
    ({"delete.retention.ms": "-1"}, "delete.retention.ms: value '-1' out of range"),
    ({"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"},
     r"conflict topic config setting min.compaction.lag.ms \(10\) > max.compaction.lag.ms"),
])
def test_log_config_compaction_validation(props: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        LogConfig.from_properties(props)


def test_cleaner_config_names_and_defaults() -> None:
    c = CleanerConfig()
    # storage/.../CleanerConfig.java
    assert (c.num_threads, c.dedupe_buffer_size, c.dedupe_buffer_load_factor, c.io_buffer_size,
            c.backoff_ms, c.enable_cleaner, c.max_io_bytes_per_second) == \
        (1, 134217728, 0.9, 524288, 15000, True, sys.float_info.max)
    c = CleanerConfig.from_properties({
        "log.cleaner.threads": "2", "log.cleaner.dedupe.buffer.size": "4194304",
        "log.cleaner.io.buffer.load.factor": "0.5", "log.cleaner.io.buffer.size": "1024",
        "log.cleaner.backoff.ms": "7", "log.cleaner.enable": "false",
        "message.max.bytes": "2048", "log.cleaner.io.max.bytes.per.second": "1e6",
        "unrelated.broker.setting": "x"})
    assert (c.num_threads, c.dedupe_buffer_size, c.dedupe_buffer_load_factor, c.io_buffer_size,
            c.backoff_ms, c.enable_cleaner, c.max_message_size, c.max_io_bytes_per_second) == \
        (2, 4194304, 0.5, 1024, 7, False, 2048, 1e6)
    # LogCleaner.CleanerThread: the buffers are shared out between the threads
    assert (c.offset_map_memory, c.cleaner_io_buffer_size) == (2097152, 256)
    with pytest.raises(ConfigError, match="log.cleaner.io.buffer.size: value -1"):
        CleanerConfig(io_buffer_size=-1)
    with pytest.raises(ConfigError, match="log.cleaner.enable: expected true or false"):
        CleanerConfig.from_properties({"log.cleaner.enable": "yes"})


def _compacted(tmp_path: Path, **kw: object) -> tuple[Log, ManualClock]:
    clock = ManualClock(T0)
    cfg = LogConfig(cleanup_policy="compact", segment_bytes=400, **kw)  # type: ignore[arg-type]
    return Log.open(tmp_path / "t-0", cfg, clock=clock), clock


def test_standalone_checkpoint_in_kafkas_format(tmp_path: Path) -> None:
    log, clock = _compacted(tmp_path)
    assert log.cleaner_checkpoint is None
    for i in range(30):
        log.append([Record(b"k%d" % (i % 4), b"v%d" % i, T0)])
    log.roll()
    res = log.clean()
    assert (res.first_dirty_offset, res.end_offset) == (0, 30)
    assert log.cleaner_checkpoint == 30
    assert OffsetCheckpointFile(tmp_path / "t-0" / CLEANER_OFFSETS_FILE).read() == \
        {("cleaner-offset", 0): 30}
    log.close()
    log = Log.open(tmp_path / "t-0", log.config, clock=clock)
    res = log.clean()  # nothing dirty: no work, the checkpoint unchanged
    assert (res.first_dirty_offset, res.end_offset, res.stats) == (30, 30, None)
    for i in range(30, 40):
        log.append([Record(b"k%d" % (i % 4), b"v%d" % i, T0)])
    log.roll()
    res = log.clean()
    assert (res.first_dirty_offset, res.end_offset) == (30, 40)
    assert [r.value for r in log.records()] == [b"v36", b"v37", b"v38", b"v39"]
    log.close()


def test_clean_requires_compact(tmp_path: Path) -> None:
    log = Log.open(tmp_path / "t-0", LogConfig(), clock=ManualClock(T0))
    with pytest.raises(ConfigError, match="cleanup.policy must include compact"):
        log.clean()
    log.close()


def test_keyless_records_rejected_in_compacted_logs(tmp_path: Path) -> None:
    log, _ = _compacted(tmp_path)
    log.append([Record(b"k", b"v", T0)])
    with pytest.raises(InvalidRecordError) as e:
        log.append([Record(b"a", b"1", T0), Record(None, b"2", T0)])
    assert "record 1: Compacted topic cannot accept message without key in topic " \
           "partition t-0." in str(e.value)
    assert log.log_end_offset == 1  # nothing of the append written
    with pytest.raises(InvalidRecordError):
        log.append(iter([(None, b"x")]))  # tuples and iterators too
    log.close()


def test_compact_delete_applies_time_retention_and_compact_alone_does_not(
        tmp_path: Path) -> None:
    for policy, expected_start in (("compact,delete", 20), ("compact", 0)):
        d = tmp_path / policy.replace(",", "_")
        clock = ManualClock(T0)
        log = Log.open(d / "t-0", LogConfig(cleanup_policy=policy, segment_bytes=400,
                                            retention_ms=1000, file_delete_delay_ms=0),
                       clock=clock)
        for i in range(20):
            log.append([Record(b"k%d" % i, b"v", T0)])
        log.roll()
        clock.advance(5000)
        log.enforce_retention()
        assert log.log_start_offset == expected_start, policy
        log.close()


def test_compacted_logs_roll_after_max_compaction_lag(tmp_path: Path) -> None:
    # LogConfig.maxSegmentMs: min(max.compaction.lag.ms, segment.ms) for compacted logs
    log, clock = _compacted(tmp_path, max_compaction_lag_ms=1000)
    assert log.config.max_segment_ms == 1000
    log.append([Record(b"a", b"1", T0)])
    clock.advance(500)
    log.append([Record(b"a", b"2", T0 + 500)])
    assert len(log.segments) == 1
    log.append([Record(b"a", b"3", T0 + 1001)])  # more than 1000 ms after the first batch
    assert len(log.segments) == 2
    log.close()
    assert LogConfig(max_compaction_lag_ms=1000).max_segment_ms == LogConfig().segment_ms


def test_close_aborts_a_cleaning_in_progress(tmp_path: Path) -> None:
    import threading

    from kafkalog.cleaner.cleaner import Cleaner

    log, clock = _compacted(tmp_path)
    for i in range(60):
        log.append([Record(b"k%d" % (i % 3), b"v%d" % i, T0)])
    log.roll()
    entered, release = threading.Event(), threading.Event()

    def check_done(_log: object) -> None:
        entered.set()
        release.wait(5)

    cleaner = Cleaner.from_config(CleanerConfig(dedupe_buffer_size=1 << 16), clock,
                                  check_done=check_done)
    errors: list[BaseException] = []

    def run() -> None:
        try:
            log.clean(cleaner=cleaner)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    t = threading.Thread(target=run)
    t.start()
    entered.wait(5)
    closer = threading.Thread(target=log.close)
    closer.start()
    release.set()
    t.join(10)
    closer.join(10)
    assert log.closed and errors and type(errors[0]).__name__ == "LogCleaningAbortedError"
    log = Log.open(tmp_path / "t-0", log.config, clock=clock)
    assert len(list(log.records())) == 60  # nothing swapped in
    assert not [p for p in (tmp_path / "t-0").iterdir() if p.name.endswith(".cleaned")]
    log.close()


@pytest.mark.parametrize("in_log_dir", [False, True])
def test_truncation_lowers_the_cleaner_checkpoint(tmp_path: Path, in_log_dir: bool) -> None:
    """LogManager.truncateTo lowers the cleaner checkpoint to the active segment's base
    offset: without it, data appended after a truncation below the checkpoint counts as
    clean, and a key deleted there comes back once its tombstone expires."""
    from kafkalog import LogDir

    cfg = {"cleanup.policy": "compact", "delete.retention.ms": "1000"}
    if in_log_dir:
        ld = LogDir.open(tmp_path, {"log.cleaner.dedupe.buffer.size": "1048576"},
                         clock=ManualClock(1000))
        ld.create_topic("t", 1, config=cfg)
        log = ld.log("t", 0)

        def clean(now: int) -> None:
            ld._clock.set(now)
            ld.cleaner.do_work()
    else:
        ld = None
        log = Log.open(tmp_path / "t-0", LogConfig.from_properties(cfg))

        def clean(now: int) -> None:
            log.clean(now=now)

    try:
        log.append([Record(b"K", b"old", 1000)])
        for i in range(1, 80):
            log.append([Record(b"f%d" % i, b"x", 1000)])
        log.roll()
        clean(10_000)
        log.truncate_to(50)
        log.append([Record(b"K", None, 2000)])            # offset 50: K deleted
        for i in range(51, 100):
            log.append([Record(b"g%d" % i, b"y", 2000)])
        log.roll()
        clean(20_000)
        log.append([Record(b"z", b"z", 3000)])
        log.roll()
        clean(40_000)
        # the deleted key's old value is gone (the tombstone itself may still be there: a
        # LogDir cleans a log again only when it is dirty enough)
        assert [(r.offset, r.value) for r in log.records() if r.key == b"K"] in ([], [(50, None)])
    finally:
        (ld or log).close()
