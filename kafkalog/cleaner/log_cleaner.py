"""``LogCleaner``: compaction of the compacted logs of a log dir, dirtiest first.

Kafka's ``LogCleaner`` + ``CleanerThread`` (core/src/main/scala/kafka/log/LogCleaner.scala 3.9,
storage/.../log/LogCleaner.java 4.x): a pool of cleaner threads, each owning a
:class:`~kafkalog.cleaner.cleaner.Cleaner` (offset map and I/O buffers); one unit of work
(:meth:`LogCleaner.do_work`) is

1. choose the dirtiest compacted log
   (:class:`~kafkalog.cleaner.log_cleaner_manager.LogCleanerManager`) and clean it
   (:meth:`kafkalog.log.Log.clean`); the new first dirty offset goes to
   ``cleaner-offset-checkpoint``; a log whose cleaning raised is marked uncleanable;
2. apply retention to every compacted log (``deleteOldSegments``): for them, the cleaner thread
   is where retention runs (``LogManager.cleanupLogs`` leaves them out; ``compact,delete`` logs
   get time and size retention this way);
3. forget uncleanable partitions no longer held.

A thread repeats that, pausing ``log.cleaner.backoff.ms`` when nothing was cleaned. A
:class:`~kafkalog.log_dir.LogDir` owns one ``LogCleaner`` (``LogDir.cleaner``) and its
maintenance scheduler runs :meth:`LogCleaner.clean_until_idle` every backoff period; or call
:meth:`startup` for Kafka's own threads.

Threads: every public method may be called from any thread.

>>> import tempfile
>>> from kafkalog import LogDir, Record
>>> with LogDir.open(tempfile.mkdtemp()) as d:
...     _ = d.create_topic("t", 1, config={"cleanup.policy": "compact"})
...     log = d.log("t", 0)
...     for v in (b"1", b"2", b"3"):
...         _ = log.append([Record(b"k", v, 1)])
...     _ = log.roll()
...     d.cleaner.clean_filthiest_log(), [r.value for r in log.records()]
(True, [b'3'])
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .. import files
from ..errors import LogCleaningAbortedError
from .cleaner import Cleaner
from .cleaner_config import CleanerConfig
from .cleaner_stats import CleanerStats, PreCleanStats
from .log_cleaner_manager import LogCleanerManager, LogCleaningError
from .log_to_clean import LogToClean

__all__ = ["LogCleaner"]

logger = logging.getLogger(__name__)

TopicPartition = tuple[str, int]


class _ThreadShutdown(Exception):
    """The cleaner thread is stopping (Kafka's ``ThreadShutdownException``)."""


class LogCleaner:
    """The log cleaner of some log dirs (module docstring).

    Parameters
    ----------
    config:
        Its :class:`~kafkalog.cleaner.cleaner_config.CleanerConfig`.
    log_dirs:
        The log dir roots (their ``cleaner-offset-checkpoint`` files).
    logs:
        The live ``(topic, partition) -> Log`` mapping of those dirs.
    clock:
        Time source of the cleanings (a ``ManualClock`` in tests).
    """

    def __init__(self, config: CleanerConfig, log_dirs: Iterable[str | os.PathLike[str]],
                 logs: Mapping[TopicPartition, Any], clock: Any) -> None:
        self.config = config
        self.log_dirs = [Path(d) for d in log_dirs]
        self.logs = logs
        self.clock = clock
        self.cleaner_manager = LogCleanerManager(self.log_dirs, logs)
        self._running = threading.Event()
        self._running.set()
        self._threads: list[threading.Thread] = []
        self._wake = threading.Event()
        self._cleaners = [Cleaner.from_config(config, clock, check_done=self._check_done, id=i)
                          for i in range(config.threads)]
        self._cleaner_lock = threading.Lock()  # do_work callers share cleaner 0
        #: the last cleaning's stats and pre-clean stats (Kafka's lastStats/lastPreCleanStats)
        self.last_stats: CleanerStats | None = None
        self.last_pre_clean_stats = PreCleanStats()
        self._current: dict[int, TopicPartition] = {}  # id(log) -> partition being cleaned

    # -- one unit of work ------------------------------------------------------------------------

    def _check_done(self, log: Any) -> None:
        """Kafka's ``checkDone``: stop when shutting down or when the partition's cleaning was
        aborted."""
        if not self._running.is_set():
            raise _ThreadShutdown()
        tp = self._current.get(id(log))
        if tp is not None:
            self.cleaner_manager.check_cleaning_aborted(tp)

    def clean_filthiest_log(self, cleaner: Cleaner | None = None) -> bool:
        """Clean the dirtiest cleanable log, then apply the compacted logs' retention.
        Returns whether a log was cleaned.

        Raises
        ------
        LogCleaningError
            A log's cleaning failed (:meth:`try_clean_filthiest_log` marks it uncleanable).
        """
        if cleaner is None:
            with self._cleaner_lock:
                return self.clean_filthiest_log(self._cleaners[0])
        pre = PreCleanStats()
        ltc = self.cleaner_manager.grab_filthiest_compacted_log(self.clock.milliseconds(), pre)
        cleaned = False
        if ltc is not None:
            self.last_pre_clean_stats = pre
            try:
                self._clean_log(ltc, cleaner)
                cleaned = True
            except _ThreadShutdown:
                raise
            except Exception as e:  # noqa: BLE001 - Kafka wraps any exception
                raise LogCleaningError(ltc.log, f"{type(e).__name__}: {e}") from e
        deletable = self.cleaner_manager.deletable_logs()
        try:
            for _tp, log in deletable:
                try:
                    log.enforce_retention()
                except Exception as e:  # noqa: BLE001
                    raise LogCleaningError(log, f"{type(e).__name__}: {e}") from e
        finally:
            self.cleaner_manager.done_deleting([tp for tp, _ in deletable])
        return cleaned

    def _clean_log(self, ltc: LogToClean, cleaner: Cleaner) -> None:
        tp = ltc.topic_partition
        assert tp is not None
        log = ltc.log
        end = ltc.first_dirty_offset
        self._current[id(log)] = tp
        try:
            result = log.clean(first_dirty_offset=ltc.first_dirty_offset, cleaner=cleaner)
            end = result.end_offset
            if result.stats is not None:
                self.last_stats = result.stats
                s = result.stats
                logger.info(
                    "Log cleaner thread %d cleaned log %s (dirty section = [%d, %d]): %d bytes "
                    "read, %d written (%d messages read, %d written) in %.1f s",
                    cleaner.id, log.directory, ltc.first_dirty_offset, end, s.bytes_read,
                    s.bytes_written, s.messages_read, s.messages_written, s.elapsed_secs)
        except LogCleaningAbortedError:
            pass  # the task can be aborted, let it go
        finally:
            self._current.pop(id(log), None)
            self.cleaner_manager.done_cleaning(tp, Path(log.directory).parent, end)

    def try_clean_filthiest_log(self, cleaner: Cleaner | None = None) -> bool:
        """:meth:`clean_filthiest_log`; a failing log is marked uncleanable (and skipped until
        it goes away) instead of raising."""
        try:
            return self.clean_filthiest_log(cleaner)
        except LogCleaningError as e:
            log = e.log
            tp = files.parse_topic_partition_name(Path(log.directory))
            logger.warning("Unexpected exception thrown when cleaning log %s. Marking its "
                           "partition (%s-%d) as uncleanable: %s", log.directory, tp[0], tp[1],
                           e)
            self.cleaner_manager.mark_partition_uncleanable(Path(log.directory).parent, tp)
            return False

    def do_work(self, cleaner: Cleaner | None = None) -> bool:
        """One iteration of a cleaner thread: clean if a log qualifies, then forget
        uncleanable partitions that are gone. Returns whether a log was cleaned."""
        cleaned = self.try_clean_filthiest_log(cleaner)
        self.cleaner_manager.maintain_uncleanable_partitions()
        return cleaned

    def clean_until_idle(self, max_rounds: int = 10_000) -> int:
        """Work until no log qualifies (what a cleaner thread does between its backoffs);
        returns the number of logs cleaned. Used by ``LogDir``'s maintenance scheduler."""
        n = 0
        while n < max_rounds and self._running.is_set():
            try:
                if not self.do_work():
                    break
            except _ThreadShutdown:
                break
            n += 1
        return n

    # -- threads ---------------------------------------------------------------------------------

    def startup(self) -> None:
        """Start ``log.cleaner.threads`` cleaner threads (idempotent)."""
        if self._threads:
            return
        self._running.set()
        for c in self._cleaners:
            t = threading.Thread(target=self._thread_loop, args=(c,),
                                 name=f"kafka-log-cleaner-thread-{c.id}", daemon=True)
            self._threads.append(t)
            t.start()

    def _thread_loop(self, cleaner: Cleaner) -> None:
        while self._running.is_set():
            try:
                cleaned = self.do_work(cleaner)
            except _ThreadShutdown:
                return
            except Exception:  # noqa: BLE001 - a cleaner thread logs and goes on
                logger.exception("log cleaner thread %d failed", cleaner.id)
                cleaned = False
            if not cleaned:
                self._wake.wait(self.config.backoff_ms / 1000.0)
                self._wake.clear()

    def wake(self) -> None:
        """End the current backoff pause of the threads."""
        self._wake.set()

    def shutdown(self, timeout: float | None = 30.0) -> None:
        """Stop the threads (a cleaning in progress is abandoned at its next check)."""
        self._running.clear()
        self._wake.set()
        threads, self._threads = self._threads, []
        for t in threads:
            if t is not threading.current_thread():
                t.join(timeout)

    # -- partition states ------------------------------------------------------------------------

    def abort_cleaning(self, tp: TopicPartition) -> None:
        self.cleaner_manager.abort_cleaning(tp)

    def abort_and_pause_cleaning(self, tp: TopicPartition) -> None:
        self.cleaner_manager.abort_and_pause_cleaning(tp)

    def resume_cleaning(self, tps: Iterable[TopicPartition]) -> None:
        self.cleaner_manager.resume_cleaning(tps)

    def update_checkpoints(self, data_dir: str | os.PathLike[str],
                           partition_to_remove: TopicPartition | None = None) -> None:
        self.cleaner_manager.update_checkpoints(data_dir, remove=partition_to_remove)

    def maybe_truncate_checkpoint(self, data_dir: str | os.PathLike[str], tp: TopicPartition,
                                  offset: int) -> None:
        self.cleaner_manager.maybe_truncate_checkpoint(data_dir, tp, offset)

    def await_cleaned(self, tp: TopicPartition, offset: int, max_wait_ms: int = 60000) -> bool:
        """Wait (real time) until ``tp``'s cleaner checkpoint reaches ``offset``."""
        deadline = time.monotonic() + max_wait_ms / 1000.0
        while True:
            if self.cleaner_manager.all_cleaner_checkpoints().get(tp, -1) >= offset:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(min(0.1, max(0.0, deadline - time.monotonic())))
