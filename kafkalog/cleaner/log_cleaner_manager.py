"""``LogCleanerManager``: which compacted log to clean next, and the cleaner checkpoints.

Kafka's ``LogCleanerManager`` (core/src/main/scala/kafka/log/LogCleanerManager.scala 3.9,
storage/.../log/LogCleanerManager.java 4.x; the rules below are the same in both):

* **Checkpoint.** ``cleaner-offset-checkpoint`` at the root of each log dir, Kafka's offset
  checkpoint format (``0``, the count, ``<topic> <partition> <offset>`` lines): the first dirty
  offset of every compacted partition, i.e. where the last cleaning stopped. Created empty at
  start-up, rewritten (atomically) after each cleaning, keeping only partitions still held.
* **Cleanable range** (:func:`cleanable_offsets`): from the checkpoint (reset to the log start
  offset when it is below it or beyond the log end, and the checkpoint then rewritten) to the
  first uncleanable offset = min(last stable offset, active segment base, base of the first
  dirty segment whose largest timestamp is within ``min.compaction.lag.ms`` of now).
* **Choice** (:meth:`LogCleanerManager.grab_filthiest_compacted_log`): among compacted logs not
  in progress and not marked uncleanable, with bytes, those whose cleanable ratio is above
  ``min.cleanable.dirty.ratio`` or that must be compacted now (``max.compaction.lag.ms`` passed
  for a dirty segment's first batch) and have cleanable bytes: the dirtiest.
* **States** per partition: in progress, aborted, paused(n) (``abort_and_pause_cleaning`` waits
  until the cleaner has given up; ``resume_cleaning`` undoes one pause).
* **Uncleanable partitions**: a log whose cleaning raised is skipped until it is removed.

Threads: every method may be called from any thread (one lock).

>>> import tempfile
>>> from pathlib import Path
>>> root = Path(tempfile.mkdtemp())
>>> m = LogCleanerManager([root], {})
>>> (root / "cleaner-offset-checkpoint").exists(), m.all_cleaner_checkpoints()
(True, {})
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import files
from ..checkpoint import OffsetCheckpointFile
from ..errors import CorruptCheckpointError, KafkaLogError, LogCleaningAbortedError
from .cleaner_stats import PreCleanStats
from .log_to_clean import LogToClean, calculate_cleanable_bytes

__all__ = [
    "LogCleanerManager",
    "LogCleaningState",
    "OffsetsToClean",
    "cleanable_offsets",
    "calculate_cleanable_bytes",
    "max_compaction_delay",
    "LogCleaningError",
]

logger = logging.getLogger(__name__)

LONG_MAX = 2**63 - 1
TopicPartition = tuple[str, int]


class LogCleaningError(KafkaLogError):
    """Cleaning (or choosing) a log failed unexpectedly: the partition becomes uncleanable
    (Kafka's ``LogCleaningException``, carrying the log)."""

    def __init__(self, log: Any, message: str) -> None:
        super().__init__(message, path=log.directory)
        self.log = log


@dataclass(frozen=True)
class LogCleaningState:
    """``in_progress``, ``aborted`` or ``paused`` (with how many pauses are pending)."""

    kind: str
    paused_count: int = 0


IN_PROGRESS = LogCleaningState("in_progress")
ABORTED = LogCleaningState("aborted")


def _paused(n: int) -> LogCleaningState:
    return LogCleaningState("paused", n)


@dataclass(frozen=True)
class OffsetsToClean:
    """Kafka's ``OffsetsToClean``: ``[first_dirty_offset, first_uncleanable_dirty_offset)``
    and whether the checkpoint must be reset to ``first_dirty_offset``."""

    first_dirty_offset: int
    first_uncleanable_dirty_offset: int
    force_update_checkpoint: bool = False


def _is_compact_and_delete(log: Any) -> bool:
    return log.config.compact and log.config.delete


def max_compaction_delay(log: Any, first_dirty_offset: int, now: int) -> int:
    """How long ago the oldest dirty non-active segment's first batch passed
    ``max.compaction.lag.ms`` (0 when none did): Kafka's ``maxCompactionDelay``."""
    dirty = log.non_active_log_segments_from(first_dirty_offset)
    stamps = [t for t in (s.first_batch_timestamp() for s in dirty) if t > 0]
    earliest = min(stamps) if stamps else LONG_MAX
    clean_until = now - max(log.config.max_compaction_lag_ms, 0)
    return clean_until - earliest if earliest < clean_until else 0


def cleanable_offsets(log: Any, last_clean_offset: int | None, now: int) -> OffsetsToClean:
    """The range of dirty offsets that can be cleaned (Kafka's ``cleanableOffsets``).

    Examples
    --------
    >>> import tempfile
    >>> from kafkalog import Log, LogConfig, Record
    >>> with Log.open(tempfile.mkdtemp(), LogConfig(cleanup_policy="compact")) as log:
    ...     _ = log.append([Record(b"k", b"v", 1)]); _ = log.roll()
    ...     cleanable_offsets(log, None, 0)
    OffsetsToClean(first_dirty_offset=0, first_uncleanable_dirty_offset=1, \
force_update_checkpoint=False)
    """
    log_start = log.log_start_offset
    checkpoint = log_start if last_clean_offset is None else last_clean_offset
    if checkpoint < log_start:
        if not _is_compact_and_delete(log):
            logger.warning("Resetting first dirty offset of %s to log start offset %d since the "
                           "checkpointed offset %d is invalid.", log.directory, log_start,
                           checkpoint)
        first_dirty, force = log_start, True
    elif checkpoint > log.log_end_offset:
        # data corruption at the end of the log: assume the full log needs cleaning
        logger.warning("The last checkpoint dirty offset for partition %s is %d, which is larger "
                       "than the log end offset %d. Resetting to the log start offset %d.",
                       log.directory, checkpoint, log.log_end_offset, log_start)
        first_dirty, force = log_start, True
    else:
        first_dirty, force = checkpoint, False
    min_lag = max(log.config.min_compaction_lag_ms, 0)
    # not beyond the last stable offset, never the active segment, not a segment younger than
    # the minimum compaction lag
    candidates = [log.last_stable_offset, log.active_segment.base_offset]
    if min_lag > 0:
        for s in log.non_active_log_segments_from(first_dirty):
            # (checked against the batches: a damaged time index must not make it look
            # older than its records and get it compacted before the lag has passed)
            if log.segment_largest_timestamp(s) > now - min_lag:
                candidates.append(s.base_offset)
                break
    first_uncleanable = min(candidates)
    return OffsetsToClean(first_dirty, max(first_dirty, first_uncleanable), force)


class LogCleanerManager:
    """The cleaner's bookkeeping over the logs of some log dirs (module docstring).

    Parameters
    ----------
    log_dirs:
        The log dir roots: each gets its ``cleaner-offset-checkpoint``.
    logs:
        The live ``(topic, partition) -> Log`` mapping of those dirs (read, never changed);
        a log's dir is its directory's parent.
    read_only:
        Never create or write a checkpoint.
    """

    offset_checkpoint_file = files.CLEANER_OFFSET_CHECKPOINT_FILE

    def __init__(self, log_dirs: Iterable[str | os.PathLike[str]],
                 logs: Mapping[TopicPartition, Any], *, read_only: bool = False) -> None:
        self.logs = logs
        self.read_only = read_only
        self._lock = threading.RLock()
        self._paused_cond = threading.Condition(self._lock)
        self._in_progress: dict[TopicPartition, LogCleaningState] = {}
        self._uncleanable: dict[str, set[TopicPartition]] = {}
        self._checkpoints: dict[Path, OffsetCheckpointFile] = {}
        for d in log_dirs:
            path = Path(d) / self.offset_checkpoint_file
            if not read_only and not path.exists():
                path.touch()  # CheckpointFile creates the file if it does not exist
            self._checkpoints[Path(d)] = OffsetCheckpointFile(path)
        #: ratio of the dirtiest log at the last choice (Kafka's max-dirty-percent gauge)
        self.dirtiest_log_cleanable_ratio = 0.0
        self.time_of_last_run = 0

    @staticmethod
    def _log_dir(log: Any) -> Path:
        return Path(log.directory).parent

    # -- checkpoints ---------------------------------------------------------------------------

    def all_cleaner_checkpoints(self) -> dict[TopicPartition, int]:
        """Every partition's checkpointed first dirty offset (unreadable files: none)."""
        with self._lock:
            out: dict[TopicPartition, int] = {}
            for cp in self._checkpoints.values():
                try:
                    out.update(cp.read())
                except (CorruptCheckpointError, OSError) as e:
                    logger.error("Failed to access checkpoint file %s: %s", cp.path, e)
            return out

    def update_checkpoints(self, data_dir: str | os.PathLike[str], *,
                           update: tuple[TopicPartition, int] | None = None,
                           remove: TopicPartition | None = None) -> None:
        """Rewrite ``data_dir``'s checkpoint: entries of partitions no longer held dropped,
        ``remove`` dropped, ``update`` added or replaced."""
        with self._lock:
            cp = self._checkpoints.get(Path(data_dir))
            if cp is None or self.read_only:
                return
            try:
                current = {tp: o for tp, o in cp.read().items() if tp in self.logs}
            except (CorruptCheckpointError, OSError) as e:
                logger.error("Failed to access checkpoint file %s: %s", cp.path, e)
                return
            if remove is not None:
                current.pop(remove, None)
            if update is not None:
                current[update[0]] = update[1]
            cp.write(current)

    def maybe_truncate_checkpoint(self, data_dir: str | os.PathLike[str], tp: TopicPartition,
                                  offset: int) -> None:
        """After a truncation below it: lower the partition's checkpoint to ``offset``."""
        with self._lock:
            log = self.logs.get(tp)
            cp = self._checkpoints.get(Path(data_dir))
            if log is None or not log.config.compact or cp is None or self.read_only:
                return
            existing = cp.read()
            if existing.get(tp, 0) > offset:
                existing[tp] = offset
                cp.write(existing)

    # -- choosing ------------------------------------------------------------------------------

    def grab_filthiest_compacted_log(self, now: int,
                                     pre_clean_stats: PreCleanStats | None = None
                                     ) -> LogToClean | None:
        """The dirtiest cleanable compacted log, marked in progress; None when none qualifies.

        Raises
        ------
        LogCleaningError
            Computing a log's range failed (the caller marks it uncleanable).
        """
        stats = pre_clean_stats if pre_clean_stats is not None else PreCleanStats()
        with self._lock:
            self.time_of_last_run = now
            last_clean = self.all_cleaner_checkpoints()
            dirty: list[LogToClean] = []
            for tp, log in list(self.logs.items()):
                if log.closed or not log.config.compact:
                    continue
                if tp in self._in_progress or self._is_uncleanable(log, tp):
                    continue
                try:
                    offsets = cleanable_offsets(log, last_clean.get(tp), now)
                    if offsets.force_update_checkpoint:
                        self.update_checkpoints(self._log_dir(log),
                                                update=(tp, offsets.first_dirty_offset))
                    delay = max_compaction_delay(log, offsets.first_dirty_offset, now)
                    stats.update_max_compaction_delay(delay)
                    ltc = LogToClean(tp, log, offsets.first_dirty_offset,
                                     offsets.first_uncleanable_dirty_offset, delay > 0)
                except Exception as e:  # noqa: BLE001 - Kafka wraps any Throwable
                    raise LogCleaningError(
                        log, f"Failed to calculate log cleaning stats for partition "
                             f"{tp[0]}-{tp[1]}: {e}") from e
                if ltc.total_bytes > 0:  # skip empty logs
                    dirty.append(ltc)
            self.dirtiest_log_cleanable_ratio = max((x.cleanable_ratio for x in dirty),
                                                    default=0.0)
            cleanable = [x for x in dirty
                         if (x.need_compaction_now and x.cleanable_bytes > 0)
                         or x.cleanable_ratio > x.log.config.min_cleanable_dirty_ratio]
            if not cleanable:
                return None
            stats.record_cleanable_partitions(len(cleanable))
            filthiest = max(cleanable, key=lambda x: x.cleanable_ratio)
            self._in_progress[filthiest.topic_partition] = IN_PROGRESS  # type: ignore[index]
            return filthiest

    def deletable_logs(self) -> list[tuple[TopicPartition, Any]]:
        """Compacted logs not in progress nor uncleanable, marked in progress: the cleaner
        applies their retention (``deleteOldSegments``) itself."""
        with self._lock:
            out = [(tp, log) for tp, log in list(self.logs.items())
                   if tp not in self._in_progress and not log.closed and log.config.compact
                   and not self._is_uncleanable(log, tp)]
            for tp, _ in out:
                self._in_progress[tp] = IN_PROGRESS
            return out

    def pause_cleaning_for_non_compacted_partitions(self) -> list[tuple[TopicPartition, Any]]:
        """Non-compacted logs not in progress, marked paused (retention's share)."""
        with self._lock:
            out = [(tp, log) for tp, log in list(self.logs.items())
                   if not log.config.compact and tp not in self._in_progress]
            for tp, _ in out:
                self._in_progress[tp] = _paused(1)
            return out

    # -- states --------------------------------------------------------------------------------

    def cleaning_state(self, tp: TopicPartition) -> LogCleaningState | None:
        with self._lock:
            return self._in_progress.get(tp)

    def set_cleaning_state(self, tp: TopicPartition, state: LogCleaningState) -> None:
        with self._lock:
            self._in_progress[tp] = state

    def abort_cleaning(self, tp: TopicPartition) -> None:
        """Abort a cleaning in progress (waiting for it to stop), leaving the partition
        cleanable afterwards."""
        with self._lock:
            self.abort_and_pause_cleaning(tp)
            self.resume_cleaning([tp])

    def abort_and_pause_cleaning(self, tp: TopicPartition) -> None:
        """Abort the cleaning of ``tp`` if in progress and pause it (waits until paused)."""
        with self._lock:
            state = self._in_progress.get(tp)
            if state is None:
                self._in_progress[tp] = _paused(1)
            elif state == IN_PROGRESS:
                self._in_progress[tp] = ABORTED
            elif state.kind == "paused":
                self._in_progress[tp] = _paused(state.paused_count + 1)
            else:
                raise RuntimeError(f"Compaction for partition {tp[0]}-{tp[1]} cannot be aborted "
                                   f"and paused since it is in {state.kind} state.")
            while not self._is_paused(tp):
                self._paused_cond.wait(0.1)

    def resume_cleaning(self, tps: Iterable[TopicPartition]) -> None:
        """Undo one pause of each partition."""
        with self._lock:
            for tp in tps:
                state = self._in_progress.get(tp)
                if state is None:
                    raise RuntimeError(f"Compaction for partition {tp[0]}-{tp[1]} cannot be "
                                       "resumed since it is not paused.")
                if state.kind != "paused":
                    raise RuntimeError(f"Compaction for partition {tp[0]}-{tp[1]} cannot be "
                                       f"resumed since it is in {state.kind} state.")
                if state.paused_count == 1:
                    del self._in_progress[tp]
                else:
                    self._in_progress[tp] = _paused(state.paused_count - 1)

    def _is_paused(self, tp: TopicPartition) -> bool:
        state = self._in_progress.get(tp)
        return state is not None and state.kind == "paused"

    def check_cleaning_aborted(self, tp: TopicPartition) -> None:
        """Raise :class:`LogCleaningAbortedError` when ``tp``'s cleaning was aborted."""
        with self._lock:
            if self._in_progress.get(tp) == ABORTED:
                raise LogCleaningAbortedError(f"cleaning of {tp[0]}-{tp[1]} aborted")

    def done_cleaning(self, tp: TopicPartition, data_dir: str | os.PathLike[str],
                      end_offset: int) -> None:
        """Save ``end_offset`` as the checkpoint and leave the in-progress state (an aborted
        cleaning becomes paused instead, without touching the checkpoint)."""
        with self._lock:
            self._leave_in_progress(
                tp, lambda: self.update_checkpoints(data_dir, update=(tp, end_offset)))

    def done_deleting(self, tps: Iterable[TopicPartition]) -> None:
        """Leave the in-progress state of ``tps`` after a retention pass (an aborted one
        becomes paused)."""
        with self._lock:
            for tp in tps:
                self._leave_in_progress(tp)

    def _leave_in_progress(self, tp: TopicPartition,
                           on_done: Callable[[], None] | None = None) -> None:
        """The transition Kafka's ``doneCleaning`` and ``doneDeleting`` share (lock held):
        IN_PROGRESS ends (after ``on_done``), ABORTED becomes paused once; any other state is
        a bug."""
        state = self._in_progress.get(tp)
        if state is None:
            raise RuntimeError(f"State for partition {tp[0]}-{tp[1]} should exist.")
        if state == IN_PROGRESS:
            if on_done is not None:
                on_done()
            del self._in_progress[tp]
        elif state == ABORTED:
            self._in_progress[tp] = _paused(1)
            self._paused_cond.notify_all()
        else:
            raise RuntimeError(f"In-progress partition {tp[0]}-{tp[1]} cannot be in "
                               f"{state.kind} state.")

    # -- uncleanable partitions -----------------------------------------------------------------

    def uncleanable_partitions(self, log_dir: str | os.PathLike[str]) -> set[TopicPartition]:
        with self._lock:
            return set(self._uncleanable.get(str(Path(log_dir)), set()))

    def mark_partition_uncleanable(self, log_dir: str | os.PathLike[str],
                                   tp: TopicPartition) -> None:
        with self._lock:
            self._uncleanable.setdefault(str(Path(log_dir)), set()).add(tp)

    def _is_uncleanable(self, log: Any, tp: TopicPartition) -> bool:
        return tp in self._uncleanable.get(str(self._log_dir(log)), set())

    def maintain_uncleanable_partitions(self) -> None:
        """Forget uncleanable partitions that are no longer held."""
        with self._lock:
            for d in list(self._uncleanable):
                self._uncleanable[d] = {tp for tp in self._uncleanable[d] if tp in self.logs}
                if not self._uncleanable[d]:
                    del self._uncleanable[d]
