"""The maintenance scheduler (issue 7): deterministic runs on a ManualClock, a clean stop."""

from __future__ import annotations

import threading
import time

import pytest

from kafkalog.clock import ManualClock, SystemClock
from kafkalog.config import LONG_MAX
from kafkalog.scheduler import (
    FLUSH_OFFSET_CHECKPOINT_INTERVAL_MS,
    FLUSH_START_OFFSET_CHECKPOINT_INTERVAL_MS,
    HIGH_WATERMARK_CHECKPOINT_INTERVAL_MS,
    RETENTION_CHECK_INTERVAL_MS,
    Scheduler,
)


def wait_for(cond, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


def test_kafka_default_intervals() -> None:
    assert RETENTION_CHECK_INTERVAL_MS == 300000
    assert FLUSH_OFFSET_CHECKPOINT_INTERVAL_MS == 60000
    assert FLUSH_START_OFFSET_CHECKPOINT_INTERVAL_MS == 60000
    assert HIGH_WATERMARK_CHECKPOINT_INTERVAL_MS == 5000


def test_due_tasks_run_in_due_order_and_missed_periods_are_skipped() -> None:
    clock = ManualClock(0)
    s = Scheduler(clock)
    log: list[tuple[str, int]] = []
    s.schedule("a", lambda: log.append(("a", clock.milliseconds())), period_ms=100, delay_ms=20)
    s.schedule("b", lambda: log.append(("b", clock.milliseconds())), period_ms=30, delay_ms=10)
    s.schedule("never", lambda: log.append(("never", 0)), period_ms=LONG_MAX)
    assert s.next_due_ms() == 10
    assert s.run_pending() == 0
    clock.advance(25)
    assert s.run_pending() == 2
    assert log == [("b", 25), ("a", 25)]  # b was due first
    clock.advance(15)  # 40: b due at 40
    s.run_pending()
    clock.advance(1000)  # far behind: each runs once, then from now
    s.run_pending()
    assert [n for n, _ in log] == ["b", "a", "b", "b", "a"]
    assert s.next_due_ms() == 1040 + 30
    assert s.runs("never") == 0 and s.runs("b") == 3


def test_failing_task_is_recorded_and_others_keep_running() -> None:
    clock = ManualClock(0)
    s = Scheduler(clock)
    ran = []

    def boom() -> None:
        raise OSError("disk gone")

    s.schedule("boom", boom, period_ms=10)
    s.schedule("ok", lambda: ran.append(1), period_ms=10)
    assert s.run_pending() == 2
    assert isinstance(s.errors["boom"], OSError) and ran == [1]
    clock.advance(10)
    assert s.run_pending() == 2 and s.runs("boom") == 2


@pytest.mark.parametrize("period, delay", [(0, 0), (-1, 0), (10, -1)])
def test_bad_arguments(period: int, delay: int) -> None:
    with pytest.raises(ValueError, match="period must be > 0"):
        Scheduler(ManualClock(0)).schedule("x", lambda: None, period_ms=period, delay_ms=delay)


def test_thread_with_system_clock_runs_periodically_and_stops() -> None:
    s = Scheduler(SystemClock())
    count = []
    s.schedule("tick", lambda: count.append(1), period_ms=5)
    s.start()
    try:
        assert wait_for(lambda: len(count) >= 3)
    finally:
        s.stop()
    assert not s.running
    n = len(count)
    time.sleep(0.05)
    assert len(count) == n  # nothing runs after stop
    s.stop()  # idempotent


def test_thread_follows_a_manual_clock_on_wake() -> None:
    clock = ManualClock(0)
    s = Scheduler(clock)
    s.schedule("t", lambda: None, period_ms=60000, delay_ms=30000)
    s.start()
    try:
        time.sleep(0.02)
        assert s.runs("t") == 0
        clock.advance(30000)
        s.wake()
        assert wait_for(lambda: s.runs("t") == 1)
    finally:
        s.stop()


def test_stop_lets_the_running_task_finish_and_starts_no_other() -> None:
    clock = ManualClock(0)
    s = Scheduler(clock)
    started, release, done = threading.Event(), threading.Event(), []

    def slow() -> None:
        started.set()
        release.wait(10)
        done.append("slow")

    s.schedule("slow", slow, period_ms=10)
    s.schedule("after", lambda: done.append("after"), period_ms=10, delay_ms=0)
    s.start()
    assert started.wait(10)
    stopper = threading.Thread(target=s.stop)
    stopper.start()
    time.sleep(0.02)
    release.set()
    stopper.join(10)
    assert not stopper.is_alive() and not s.running
    assert done == ["slow"]
