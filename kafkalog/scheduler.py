"""Background maintenance for an embedded log dir: one optional thread, Kafka's intervals.

A broker's ``LogManager.startup`` schedules, on its ``KafkaScheduler``, after
``log.initial.task.delay.ms`` (30000):

=====================================  ======================================  ============
task                                   Kafka setting                           default (ms)
=====================================  ======================================  ============
retention (``cleanupLogs``)            ``log.retention.check.interval.ms``     300000
flush dirty logs (``flushDirtyLogs``)  ``log.flush.scheduler.interval.ms``     Long.MAX
recovery-point checkpoint              ``log.flush.offset.checkpoint.interval.ms``  60000
log-start-offset checkpoint            ``log.flush.start.offset.checkpoint.interval.ms``  60000
high-watermark checkpoint              ``replica.high.watermark.checkpoint.interval.ms``  5000
log cleaner (``CleanerThread.doWork``)  ``log.cleaner.backoff.ms``              15000
=====================================  ======================================  ============

(the high-watermark one is ReplicaManager's; the log cleaner runs from the start, as a broker's
cleaner threads do, when the log dir has one). :class:`Scheduler` runs such periodic tasks
against an injectable :class:`~kafkalog.clock.Clock`: :meth:`Scheduler.run_pending` runs what
is due at the clock's time (deterministic: tests drive a ``ManualClock`` and call it), and
:meth:`start` runs the same loop on one daemon thread that sleeps until the next task is due
(or :meth:`wake`).
:meth:`stop` ends the thread cleanly: a task in progress finishes, none starts after.

A failing task is logged and kept (Kafka's scheduler does the same); the last error of each task
is in :attr:`Scheduler.errors`.

Example
-------
>>> from kafkalog.clock import ManualClock
>>> clock = ManualClock(0)
>>> s = Scheduler(clock)
>>> runs = []
>>> s.schedule("tick", lambda: runs.append(clock.milliseconds()), period_ms=100, delay_ms=50)
>>> s.run_pending(); clock.advance(50); s.run_pending(); clock.advance(250); s.run_pending()
0
1
1
>>> runs
[50, 300]
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .clock import Clock, SystemClock
from .config import LONG_MAX

__all__ = [
    "Scheduler",
    "LogDirScheduler",
    "RETENTION_CHECK_INTERVAL_MS",
    "FLUSH_OFFSET_CHECKPOINT_INTERVAL_MS",
    "FLUSH_START_OFFSET_CHECKPOINT_INTERVAL_MS",
    "FLUSH_SCHEDULER_INTERVAL_MS",
    "HIGH_WATERMARK_CHECKPOINT_INTERVAL_MS",
    "INITIAL_TASK_DELAY_MS",
]

logger = logging.getLogger(__name__)

#: log.retention.check.interval.ms
RETENTION_CHECK_INTERVAL_MS = 300000
#: log.flush.offset.checkpoint.interval.ms
FLUSH_OFFSET_CHECKPOINT_INTERVAL_MS = 60000
#: log.flush.start.offset.checkpoint.interval.ms
FLUSH_START_OFFSET_CHECKPOINT_INTERVAL_MS = 60000
#: log.flush.scheduler.interval.ms (Long.MAX_VALUE: the flush task never runs by default)
FLUSH_SCHEDULER_INTERVAL_MS = LONG_MAX
#: replica.high.watermark.checkpoint.interval.ms
HIGH_WATERMARK_CHECKPOINT_INTERVAL_MS = 5000
#: log.initial.task.delay.ms
INITIAL_TASK_DELAY_MS = 30000

#: the longest the thread sleeps in one go (seconds): bounds the reaction to a clock that is
#: moved by someone else (a ManualClock) without a wake()
_MAX_SLEEP_S = 1.0


@dataclass
class _Task:
    name: str
    fn: Callable[[], Any]
    period_ms: int
    next_ms: int
    runs: int = 0


class Scheduler:
    """Periodic tasks on one clock, run by :meth:`run_pending` or by one background thread.

    Parameters
    ----------
    clock:
        Time source (``SystemClock`` when None).
    name:
        Name of the background thread.
    """

    def __init__(self, clock: Clock | None = None, *, name: str = "kafkalog-scheduler") -> None:
        self.clock = clock if clock is not None else SystemClock()
        self.name = name
        self._tasks: list[_Task] = []
        self._lock = threading.Lock()  # guards the task list
        self._run_lock = threading.Lock()  # one run_pending at a time
        self._wakeup = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        #: task name -> last exception it raised
        self.errors: dict[str, BaseException] = {}

    def schedule(self, name: str, fn: Callable[[], Any], *, period_ms: int,
                 delay_ms: int = 0) -> None:
        """Run ``fn`` every ``period_ms`` from ``delay_ms`` after now. A period of Kafka's
        Long.MAX_VALUE (or more) means the task never runs (as ``log.flush.scheduler.interval.ms``
        by default)."""
        if period_ms <= 0 or delay_ms < 0:
            raise ValueError(
                f"period must be > 0 and delay >= 0 (found {period_ms}, {delay_ms})")
        with self._lock:
            self._tasks.append(_Task(name, fn, period_ms, self.clock.milliseconds() + delay_ms))
        self._wakeup.set()

    def runs(self, name: str) -> int:
        """How many times task ``name`` ran."""
        with self._lock:
            return sum(t.runs for t in self._tasks if t.name == name)

    def next_due_ms(self) -> int | None:
        """Clock time at which the next task is due (None without tasks that ever run)."""
        with self._lock:
            due = [t.next_ms for t in self._tasks if t.period_ms < LONG_MAX]
        return min(due) if due else None

    def run_pending(self) -> int:
        """Run every task due at the clock's time (each once, oldest due first); a task that
        fell several periods behind runs once and is rescheduled from now, as a fixed-rate
        scheduler that skips missed runs. Returns the number of tasks run."""
        return self._run(stoppable=False)

    def _run(self, *, stoppable: bool) -> int:
        with self._run_lock:
            now = self.clock.milliseconds()
            with self._lock:
                due = sorted((t for t in self._tasks
                              if t.period_ms < LONG_MAX and t.next_ms <= now),
                             key=lambda t: t.next_ms)
            n = 0
            for t in due:
                if stoppable and self._stopping.is_set():
                    break  # stop(): the task in progress finished, no other starts
                try:
                    t.fn()
                except Exception as e:  # noqa: BLE001 - a broker's scheduler logs and goes on
                    logger.exception("scheduled task %s failed", t.name)
                    self.errors[t.name] = e
                t.runs += 1
                n += 1
                nxt = t.next_ms + t.period_ms
                t.next_ms = nxt if nxt > now else now + t.period_ms
            return n

    # -- the thread ----------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Start the background thread (idempotent)."""
        if self.running:
            return
        self._stopping.clear()
        self._thread = threading.Thread(target=self._loop, name=self.name, daemon=True)
        self._thread.start()

    def wake(self) -> None:
        """Make the thread look at the clock now (after moving a ManualClock)."""
        self._wakeup.set()

    def stop(self, timeout: float | None = 30.0) -> None:
        """Stop the thread: the task in progress finishes, no other starts. Idempotent."""
        self._stopping.set()
        self._wakeup.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def _loop(self) -> None:
        while not self._stopping.is_set():
            self._run(stoppable=True)
            nxt = self.next_due_ms()
            if nxt is None:
                sleep = _MAX_SLEEP_S
            else:
                sleep = min(max(0.0, (nxt - self.clock.milliseconds()) / 1000.0), _MAX_SLEEP_S)
            self._wakeup.wait(sleep)
            self._wakeup.clear()


class LogDirScheduler(Scheduler):
    """The maintenance tasks of a :class:`~kafkalog.log_dir.LogDir` on Kafka's intervals
    (module table). Each interval can be overridden by keyword (milliseconds)."""

    def __init__(
        self,
        log_dir: Any,
        *,
        clock: Clock | None = None,
        retention_check_interval_ms: int = RETENTION_CHECK_INTERVAL_MS,
        flush_scheduler_interval_ms: int = FLUSH_SCHEDULER_INTERVAL_MS,
        flush_offset_checkpoint_interval_ms: int = FLUSH_OFFSET_CHECKPOINT_INTERVAL_MS,
        flush_start_offset_checkpoint_interval_ms: int = FLUSH_START_OFFSET_CHECKPOINT_INTERVAL_MS,
        high_watermark_checkpoint_interval_ms: int = HIGH_WATERMARK_CHECKPOINT_INTERVAL_MS,
        initial_task_delay_ms: int = INITIAL_TASK_DELAY_MS,
    ) -> None:
        super().__init__(clock, name=f"kafkalog-maintenance-{log_dir.root.name}")
        d = initial_task_delay_ms
        self.schedule("kafka-log-retention", log_dir.enforce_retention,
                      period_ms=retention_check_interval_ms, delay_ms=d)
        self.schedule("kafka-log-flusher", log_dir.flush_dirty_logs,
                      period_ms=flush_scheduler_interval_ms, delay_ms=d)
        self.schedule("kafka-recovery-point-checkpoint", log_dir.checkpoint_recovery_points,
                      period_ms=flush_offset_checkpoint_interval_ms, delay_ms=d)
        self.schedule("kafka-log-start-offset-checkpoint", log_dir.checkpoint_log_start_offsets,
                      period_ms=flush_start_offset_checkpoint_interval_ms, delay_ms=d)
        self.schedule("highwatermark-checkpoint", log_dir.checkpoint_high_watermarks,
                      period_ms=high_watermark_checkpoint_interval_ms)  # ReplicaManager: delay 0
        cleaner = getattr(log_dir, "cleaner", None)
        if cleaner is not None:
            # the cleaner thread: clean while a log qualifies, then back off
            # log.cleaner.backoff.ms (LogCleaner starts with the broker: no initial delay)
            self.schedule("kafka-log-cleaner", cleaner.clean_until_idle,
                          period_ms=cleaner.config.backoff_ms or 1)
