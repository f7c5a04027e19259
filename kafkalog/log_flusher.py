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

The task also does the rolled segment's trims (its index files cut to their entries, its
reserved blocks given back: ``LogSegment.on_become_inactive(trim=False)``), under the log's lock
and before the fsync: an ``ftruncate`` waits 40-110 ms on ext4 while another file's fsync is
committed, which the previous roll's flush often is; the flusher runs one task at a time, so by
then that fsync is over. (Kafka trims in the roll itself.)

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
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as futures_wait
from typing import Any

__all__ = ["schedule", "wait", "fsync_all"]

_lock = threading.Lock()
_executor: ThreadPoolExecutor | None = None
_executor_pid = -1


def schedule(task: Callable[[], Any]) -> Future:
    """Run ``task`` on the flusher thread; returns its future (the task's own errors stay in
    it). Tasks run one at a time, in the order scheduled. During interpreter shutdown, when
    no new thread may start, the task runs in the calling thread before this returns."""
    global _executor, _executor_pid
    with _lock:
        # a forked child inherits the executor object but not its thread: it gets its own
        if _executor is None or _executor_pid != os.getpid():
            _executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kafkalog-flush-log")
            _executor_pid = os.getpid()
        try:
            fut = _executor.submit(task)
        except RuntimeError:  # "cannot schedule new futures after interpreter shutdown"
            fut = None
    if fut is None:
        fut = Future()
        try:
            fut.set_result(task())
        except BaseException as e:  # noqa: BLE001  (kept in the future, as a worker does)
            fut.set_exception(e)
    fut.kafkalog_pid = os.getpid()  # type: ignore[attr-defined]
    return fut


def wait(futures: Iterable[Future], timeout: float | None = None) -> int:
    """Wait for the futures this process scheduled (a forked child's copy of a parent's
    pending flush never completes in the child, so it is skipped); returns how many are still
    not done after ``timeout`` seconds."""
    pid = os.getpid()
    mine = [f for f in futures if getattr(f, "kafkalog_pid", pid) == pid]
    if not mine:
        return 0
    return len(futures_wait(mine, timeout=timeout).not_done)


def fsync_all(descriptors: list[int]) -> None:
    """fsync every descriptor, then close them all (also when one fsync fails: the first error
    is raised after the rest were closed)."""
    try:
        for fd in descriptors:
            os.fsync(fd)
    finally:
        for fd in descriptors:
            os.close(fd)
