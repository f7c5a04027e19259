"""The background flush after a roll: Kafka's ``flush-log`` task.

``UnifiedLog.roll`` does not fsync the segment it rolled: it schedules
``flushUptoOffsetExclusive(newSegment.baseOffset)`` on the broker's scheduler, because an fsync
under the log's lock "could block subsequent produces in the meantime" (its comment). The flush
fsyncs the segments below the new one and the directory outside the lock, then advances the
recovery point under it (``markFlushed``). The recovery point therefore trails the roll by one
fsync: a crash in between recovers the rolled segment too, which is what recovery is for.

Measured on this machine (``benchmarks/bench_log.py``, row ``append.roll_call.segment_64MiB``):
the fsync of a 64 MiB segment takes 110-320 ms, a 256 MiB one ~1 s; that was the cost of the
append that rolled.

This module holds the process's flusher: one worker thread (started on first use, again in a
forked child) that runs the tasks :class:`~kafkalog.log.Log` hands it in order. At interpreter
exit the pending tasks still run (``concurrent.futures`` joins its workers), so what was
scheduled is fsynced unless the process is killed.

>>> from kafkalog.log_flusher import fsync_all
>>> import os, tempfile
>>> fsync_all([os.open(tempfile.mkdtemp(), os.O_RDONLY)])  # fsyncs and closes
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

__all__ = ["schedule", "fsync_all"]

_lock = threading.Lock()
_executor: ThreadPoolExecutor | None = None
_executor_pid = -1


def schedule(task: Callable[[], None]) -> Future:
    """Run ``task`` on the flusher thread; returns its future (the task's own errors stay in
    it). Tasks run one at a time, in the order scheduled."""
    global _executor, _executor_pid
    with _lock:
        # a forked child inherits the executor object but not its thread: it gets its own
        if _executor is None or _executor_pid != os.getpid():
            _executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kafkalog-flush-log")
            _executor_pid = os.getpid()
        return _executor.submit(task)


def fsync_all(descriptors: list[int]) -> None:
    """fsync every descriptor, then close them all (also when one fsync fails: the first error
    is raised after the rest were closed)."""
    try:
        for fd in descriptors:
            os.fsync(fd)
    finally:
        for fd in descriptors:
            os.close(fd)
