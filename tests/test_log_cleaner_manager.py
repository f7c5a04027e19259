"""Kafka's ``LogCleanerManagerTest`` scenarios, ported (core/src/test/scala/unit/kafka/log/
LogCleanerManagerTest.scala 3.9), against real logs and the real ``cleaner-offset-checkpoint``
file (Kafka's tests override the checkpoint accessors with a map; we read and write the file)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkalog.checkpoint import OffsetCheckpointFile
from kafkalog.cleaner.log_cleaner_manager import (
    ABORTED,
    IN_PROGRESS,
    LogCleanerManager,
    LogCleaningError,
    LogCleaningState,
    cleanable_offsets,
)
from kafkalog.clock import ManualClock
from kafkalog.config import LogConfig
from kafkalog.errors import LogCleaningAbortedError
from kafkalog.log import Log
from kafkalog.records.record import Record

T0 = 1_700_000_000_000


def _low_retention(segment_bytes: int, policy: str) -> LogConfig:
    return LogConfig.from_properties({"segment.bytes": segment_bytes, "retention.ms": 1,
                                      "cleanup.policy": policy,
                                      "min.cleanable.dirty.ratio": 0.05})


def _append(log: Log, n: int, clock: ManualClock) -> None:
    start = log.log_end_offset
    log.append([Record(b"key-%d" % o, b"value-%d" % o, clock.milliseconds())
                for o in range(start, start + n)])


def _write_records(log: Log, batches: int, per_batch: int, per_segment: int,
                   clock: ManualClock) -> None:
    for i in range(batches):
        _append(log, per_batch, clock)
        if i % per_segment == 0:
            log.roll()
    log.roll()


class _Logs:
    """Logs under one log dir root, as LogCleanerManagerTest creates them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.clock = ManualClock(T0)
        self.logs: dict[tuple[str, int], Log] = {}

    def create(self, tp: tuple[str, int], cfg: LogConfig) -> Log:
        log = Log.open(self.root / f"{tp[0]}-{tp[1]}", cfg, clock=self.clock, standalone=False)
        self.logs[tp] = log
        return log

    def increasingly_filthy(self, tps: list[tuple[str, int]], start: int = 20,
                            increment: int = 5) -> None:
        n = start
        for tp in tps:
            log = self.create(tp, _low_retention(2048, "compact"))
            _write_records(log, n, 1, 5, self.clock)
            n += increment

    def manager(self) -> LogCleanerManager:
        return LogCleanerManager([self.root], self.logs)

    def close(self) -> None:
        for log in self.logs.values():
            log.close()


@pytest.fixture
def env(tmp_path: Path):
    e = _Logs(tmp_path)
    yield e
    e.close()


WELL = [("wishing-well", 0), ("wishing-well", 1), ("wishing-well", 2)]


def _checkpoint_all(m: LogCleanerManager, root: Path, tps: list, offset: int) -> None:
    for tp in tps:
        m.update_checkpoints(root, update=(tp, offset))


def test_grab_filthiest_compacted_log_throws_exception(env: _Logs) -> None:
    tp = ("A", 1)
    log = env.create(tp, _low_retention(500, "compact"))
    _write_records(log, 4, 10, 2, env.clock)

    def broken(_from: int) -> list:
        raise RuntimeError("Error!")

    log.non_active_log_segments_from = broken  # type: ignore[method-assign]
    m = env.manager()
    m.update_checkpoints(env.root, update=(tp, 1))
    with pytest.raises(LogCleaningError) as e:
        m.grab_filthiest_compacted_log(env.clock.milliseconds())
    assert e.value.log is log
    assert isinstance(e.value.__cause__, RuntimeError)


def test_grab_filthiest_compacted_log_returns_log_with_dirtiest_ratio(env: _Logs) -> None:
    env.increasingly_filthy(WELL)  # cleanable ranges [20, 20], [20, 25], [20, 30]
    m = env.manager()
    _checkpoint_all(m, env.root, WELL, 20)
    ltc = m.grab_filthiest_compacted_log(env.clock.milliseconds())
    assert ltc is not None and ltc.topic_partition == WELL[2] and ltc.log is env.logs[WELL[2]]
    assert m.cleaning_state(WELL[2]) == IN_PROGRESS


def test_grab_filthiest_compacted_log_ignores_uncleanable_partitions(env: _Logs) -> None:
    env.increasingly_filthy(WELL)
    m = env.manager()
    _checkpoint_all(m, env.root, WELL, 20)
    m.mark_partition_uncleanable(env.root, WELL[2])
    assert m.grab_filthiest_compacted_log(env.clock.milliseconds()).topic_partition == WELL[1]


def test_grab_filthiest_compacted_log_ignores_in_progress_partitions(env: _Logs) -> None:
    env.increasingly_filthy(WELL)
    m = env.manager()
    _checkpoint_all(m, env.root, WELL, 20)
    m.set_cleaning_state(WELL[2], IN_PROGRESS)
    assert m.grab_filthiest_compacted_log(env.clock.milliseconds()).topic_partition == WELL[1]


def test_grab_filthiest_ignores_both_in_progress_and_uncleanable(env: _Logs) -> None:
    env.increasingly_filthy(WELL)
    m = env.manager()
    _checkpoint_all(m, env.root, WELL, 20)
    m.set_cleaning_state(WELL[2], IN_PROGRESS)
    m.mark_partition_uncleanable(env.root, WELL[1])
    assert m.grab_filthiest_compacted_log(env.clock.milliseconds()) is None


def test_dirty_offset_reset_if_larger_than_end_offset(env: _Logs) -> None:
    tp = ("foo", 0)
    env.increasingly_filthy([tp])
    m = env.manager()
    m.update_checkpoints(env.root, update=(tp, 200))
    assert m.grab_filthiest_compacted_log(env.clock.milliseconds()).first_dirty_offset == 0


def test_dirty_offset_reset_if_smaller_than_start_offset(env: _Logs) -> None:
    tp = ("foo", 0)
    env.increasingly_filthy([tp])
    env.logs[tp].delete_records_before(10)
    m = env.manager()
    m.update_checkpoints(env.root, update=(tp, 0))
    assert m.grab_filthiest_compacted_log(env.clock.milliseconds()).first_dirty_offset == 10


def test_log_start_offset_larger_than_active_segment_base_offset(env: _Logs) -> None:
    tp = ("foo", 0)
    log = env.create(tp, _low_retention(2048, "compact"))
    for _ in range(3):
        _append(log, 3, env.clock)
    assert len(log.segments) == 1
    log.delete_records_before(2)
    m = env.manager()
    m.update_checkpoints(env.root, update=(tp, 0))
    # the active segment is uncleanable: not filthy
    assert m.grab_filthiest_compacted_log(env.clock.milliseconds()) is None


def test_dirty_offset_larger_than_active_segment_base_offset(env: _Logs) -> None:
    tp = ("foo", 0)
    log = env.create(tp, _low_retention(2048, "compact"))
    _append(log, 3, env.clock)
    _append(log, 3, env.clock)
    assert len(log.segments) == 1 and log.active_segment.base_offset == 0
    m = env.manager()
    m.update_checkpoints(env.root, update=(tp, 3))
    assert m.grab_filthiest_compacted_log(env.clock.milliseconds()) is None


@pytest.mark.parametrize(("policy", "expected"), [("delete", 0), ("compact,delete", 1),
                                                  ("compact", 1)])
def test_logs_with_segments_to_delete(env: _Logs, policy: str, expected: int) -> None:
    # delete-only logs are LogManager's; compacted ones (compact,delete too) the cleaner's
    env.create(("log", 0), _low_retention(300, policy))
    assert len(env.manager().deletable_logs()) == expected


def test_update_checkpoints_should_add_offset_to_partition(env: _Logs) -> None:
    tp = ("log", 0)
    env.create(tp, _low_retention(300, "compact"))
    m = env.manager()
    assert m.all_cleaner_checkpoints().get(tp, 0) != 107
    m.update_checkpoints(env.root, update=(tp, 107))
    assert m.all_cleaner_checkpoints()[tp] == 107
    # Kafka's file format at the root
    assert (env.root / "cleaner-offset-checkpoint").read_text() == "0\n1\nlog 0 107\n"


def test_update_checkpoints_should_remove_partition_data(env: _Logs) -> None:
    tp = ("log", 0)
    env.create(tp, _low_retention(300, "compact"))
    m = env.manager()
    m.update_checkpoints(env.root, update=(tp, 107))
    assert m.all_cleaner_checkpoints()[tp] == 107
    m.update_checkpoints(env.root, remove=tp)
    assert tp not in m.all_cleaner_checkpoints()


def test_update_checkpoints_drops_partitions_no_longer_held(env: _Logs) -> None:
    tp = ("log", 0)
    env.create(tp, _low_retention(300, "compact"))
    OffsetCheckpointFile(env.root / "cleaner-offset-checkpoint").write({("gone", 3): 9})
    m = env.manager()
    assert m.all_cleaner_checkpoints() == {("gone", 3): 9}
    m.update_checkpoints(env.root, update=(tp, 5))
    assert m.all_cleaner_checkpoints() == {tp: 5}


def test_maybe_truncate_checkpoint_should_truncate_data(env: _Logs) -> None:
    tp = ("log", 0)
    env.create(tp, _low_retention(300, "compact"))
    m = env.manager()
    m.update_checkpoints(env.root, update=(tp, 107))
    m.maybe_truncate_checkpoint(env.root, tp, 100)
    assert m.all_cleaner_checkpoints()[tp] == 100
    m.maybe_truncate_checkpoint(env.root, tp, 200)  # only ever lowered
    assert m.all_cleaner_checkpoints()[tp] == 100


def _eight_segments(env: _Logs, **props: object) -> Log:
    cfg = LogConfig.from_properties({"segment.bytes": 1024, "cleanup.policy": "compact",
                                     **props})
    log = env.create(("log", 0), cfg)
    while len(log.segments) < 8:
        log.append([Record(b"%d" % log.log_end_offset, b"%d" % log.log_end_offset,
                           env.clock.milliseconds())])
    return log


def test_cleanable_offsets_active_segment(env: _Logs) -> None:
    log = _eight_segments(env)
    o = cleanable_offsets(log, 0, env.clock.milliseconds())
    assert o.first_dirty_offset == 0
    assert o.first_uncleanable_dirty_offset == log.active_segment.base_offset


def test_cleanable_offsets_for_time(env: _Logs) -> None:
    lag = 60 * 60 * 1000
    cfg = LogConfig.from_properties({"segment.bytes": 1024, "cleanup.policy": "compact",
                                     "min.compaction.lag.ms": lag})
    log = env.create(("log", 0), cfg)
    t0 = env.clock.milliseconds()
    while len(log.segments) < 4:
        log.append([Record(b"%d" % log.log_end_offset, b"v", t0)])
    active_at_t0 = log.active_segment
    env.clock.advance(lag + 1)
    t1 = env.clock.milliseconds()
    while len(log.segments) < 8:
        log.append([Record(b"%d" % log.log_end_offset, b"v", t1)])
    o = cleanable_offsets(log, 0, env.clock.milliseconds())
    assert o.first_dirty_offset == 0
    assert o.first_uncleanable_dirty_offset == active_at_t0.base_offset


def test_cleanable_offsets_for_short_time(env: _Logs) -> None:
    lag = 60 * 60 * 1000
    log = _eight_segments(env, **{"min.compaction.lag.ms": lag})
    env.clock.advance(lag + 1)
    o = cleanable_offsets(log, 0, env.clock.milliseconds())
    assert (o.first_dirty_offset, o.first_uncleanable_dirty_offset) == \
        (0, log.active_segment.base_offset)


def test_cleanable_offsets_needs_checkpoint_reset(env: _Logs) -> None:
    tp = ("foo", 0)
    env.increasingly_filthy([tp])
    log = env.logs[tp]
    log.delete_records_before(10)
    now = env.clock.milliseconds()
    assert not cleanable_offsets(log, 15, now).force_update_checkpoint
    log.delete_records_before(20)
    assert cleanable_offsets(log, 15, now).force_update_checkpoint  # below the log start
    assert cleanable_offsets(log, 25, now).force_update_checkpoint  # beyond the log end


def test_undecided_transactional_data_not_cleanable(env: _Logs) -> None:
    lag = 60 * 60 * 1000
    cfg = LogConfig.from_properties({"segment.bytes": 1024, "cleanup.policy": "compact",
                                     "min.compaction.lag.ms": lag})
    log = env.create(("log", 0), cfg)
    now = env.clock.milliseconds()
    log.append([Record(b"1", b"a", now), Record(b"2", b"b", now)], producer_id=15,
               producer_epoch=0, base_sequence=0, transactional=True)
    log.append([Record(b"3", b"c", now)], producer_id=15, producer_epoch=0, base_sequence=2,
               transactional=True)
    log.roll()
    env.clock.advance(lag + 1)
    # the compaction lag passed, but the undecided data is not cleanable
    o = cleanable_offsets(log, 0, env.clock.milliseconds())
    assert (o.first_dirty_offset, o.first_uncleanable_dirty_offset) == (0, 0)
    log.abort_transaction(15, 0, 15)
    log.roll()
    o = cleanable_offsets(log, 0, env.clock.milliseconds())
    assert (o.first_dirty_offset, o.first_uncleanable_dirty_offset) == (0, 3)
    env.clock.advance(lag + 1)
    o = cleanable_offsets(log, 0, env.clock.milliseconds())
    assert (o.first_dirty_offset, o.first_uncleanable_dirty_offset) == (0, 4)


def test_done_cleaning(env: _Logs) -> None:
    log = _eight_segments(env)
    tp = ("log", 0)
    m = env.manager()
    with pytest.raises(RuntimeError):
        m.done_cleaning(tp, log.directory.parent, 1)
    m.set_cleaning_state(tp, LogCleaningState("paused", 1))
    with pytest.raises(RuntimeError):
        m.done_cleaning(tp, log.directory.parent, 1)
    m.set_cleaning_state(tp, IN_PROGRESS)
    m.done_cleaning(tp, log.directory.parent, 1)
    assert m.cleaning_state(tp) is None
    assert m.all_cleaner_checkpoints()[tp] == 1
    m.set_cleaning_state(tp, ABORTED)
    m.done_cleaning(tp, log.directory.parent, 1)
    assert m.cleaning_state(tp) == LogCleaningState("paused", 1)
    assert tp in m.all_cleaner_checkpoints()


def test_done_deleting(env: _Logs) -> None:
    env.create(("log", 0), _low_retention(300, "compact,delete"))
    m = env.manager()
    tp = ("log", 0)
    with pytest.raises(RuntimeError):
        m.done_deleting([tp])
    m.set_cleaning_state(tp, LogCleaningState("paused", 1))
    with pytest.raises(RuntimeError):
        m.done_deleting([tp])
    m.set_cleaning_state(tp, IN_PROGRESS)
    m.done_deleting([tp])
    assert m.cleaning_state(tp) is None
    m.set_cleaning_state(tp, ABORTED)
    m.done_deleting([tp])
    assert m.cleaning_state(tp) == LogCleaningState("paused", 1)


def test_checkpoint_updated_for_invalid_offset_no_cleaning(env: _Logs) -> None:
    tp = ("foo", 0)
    env.increasingly_filthy([tp])
    env.logs[tp].delete_records_before(20)
    m = env.manager()
    m.update_checkpoints(env.root, update=(tp, 15))
    assert m.grab_filthiest_compacted_log(env.clock.milliseconds()) is None
    assert m.all_cleaner_checkpoints()[tp] == 20


def test_checkpoint_updated_for_invalid_offset_not_selected(env: _Logs) -> None:
    tp0, tp1 = ("foo", 0), ("foo", 1)
    env.increasingly_filthy([tp0, tp1])
    env.logs[tp0].delete_records_before(15)
    m = env.manager()
    m.update_checkpoints(env.root, update=(tp0, 10))
    m.update_checkpoints(env.root, update=(tp1, 5))
    assert m.grab_filthiest_compacted_log(env.clock.milliseconds()).topic_partition == tp1
    assert m.all_cleaner_checkpoints()[tp0] == 15


def test_abort_and_pause_resume_states(env: _Logs) -> None:
    tp = ("log", 0)
    env.create(tp, _low_retention(300, "compact"))
    m = env.manager()
    m.abort_and_pause_cleaning(tp)  # not in progress: paused at once
    assert m.cleaning_state(tp) == LogCleaningState("paused", 1)
    m.abort_and_pause_cleaning(tp)
    assert m.cleaning_state(tp) == LogCleaningState("paused", 2)
    m.resume_cleaning([tp])
    m.resume_cleaning([tp])
    assert m.cleaning_state(tp) is None
    with pytest.raises(RuntimeError):
        m.resume_cleaning([tp])
    m.set_cleaning_state(tp, ABORTED)
    with pytest.raises(LogCleaningAbortedError):
        m.check_cleaning_aborted(tp)


def test_max_compaction_lag_makes_a_log_cleanable_below_the_ratio(env: _Logs) -> None:
    cfg = LogConfig.from_properties({"segment.bytes": 1024, "cleanup.policy": "compact",
                                     "min.cleanable.dirty.ratio": 0.99,
                                     "max.compaction.lag.ms": 1000})
    log = env.create(("lag", 0), cfg)
    for i in range(30):
        log.append([Record(b"%d" % i, b"v", env.clock.milliseconds())])
    log.roll()
    m = env.manager()
    m.update_checkpoints(env.root, update=(("lag", 0), log.log_end_offset - 5))
    assert m.grab_filthiest_compacted_log(env.clock.milliseconds()) is None
    env.clock.advance(2000)  # the oldest dirty record passed max.compaction.lag.ms
    ltc = m.grab_filthiest_compacted_log(env.clock.milliseconds())
    assert ltc is not None and ltc.need_compaction_now
