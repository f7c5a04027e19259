"""``LogToClean``: a log, its dirty range and how dirty it is (Kafka's ``LogToClean``).

core/src/main/scala/kafka/log/LogCleaner.scala (3.9) / storage/.../log/LogToClean.java (4.x):
the clean bytes are the segments below the first dirty offset, the cleanable bytes those from
the segment holding the first dirty offset up to the first uncleanable *segment*
(:func:`calculate_cleanable_bytes`), the ratio their share of the total; logs compare by that
ratio (the dirtiest is cleaned first).

``log`` is a :class:`kafkalog.log.Log` (or anything with ``log_segments``,
``non_active_log_segments_from`` and ``active_segment``).

>>> import tempfile
>>> from kafkalog import Log, LogConfig, Record
>>> with Log.open(tempfile.mkdtemp(), LogConfig(cleanup_policy="compact")) as log:
...     _ = log.append([Record(b"k", b"v", 1)]); _ = log.roll()
...     ltc = LogToClean(("t", 0), log, 0, log.active_segment.base_offset)
...     (ltc.first_uncleanable_offset, ltc.cleanable_ratio)
(1, 1.0)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["LogToClean", "calculate_cleanable_bytes"]


def calculate_cleanable_bytes(log: Any, first_dirty_offset: int, uncleanable_offset: int
                              ) -> tuple[int, int]:
    """``(first uncleanable offset, cleanable bytes)``: Kafka's
    ``LogCleanerManager.calculateCleanableBytes``.

    The first uncleanable offset is the base offset of the segment holding
    ``uncleanable_offset`` (the active segment when it lies beyond); the cleanable bytes are the
    sizes of the segments from the one holding ``first_dirty_offset`` up to it.
    """
    non_active = log.non_active_log_segments_from(uncleanable_offset)
    first_uncleanable = non_active[0] if non_active else log.active_segment
    first_uncleanable_offset = first_uncleanable.base_offset
    cleanable = sum(s.size for s in log.log_segments(min(first_dirty_offset,
                                                         first_uncleanable_offset),
                                                     first_uncleanable_offset))
    return first_uncleanable_offset, cleanable


@dataclass
class LogToClean:
    """A compacted log with its dirty range (see the module docstring).

    Attributes
    ----------
    topic_partition:
        ``(topic, partition)`` (None for a standalone log).
    first_dirty_offset, uncleanable_offset:
        From :func:`~kafkalog.cleaner.log_cleaner_manager.cleanable_offsets`.
    need_compaction_now:
        ``max.compaction.lag.ms`` passed for some dirty record.
    clean_bytes, first_uncleanable_offset, cleanable_bytes, total_bytes, cleanable_ratio:
        Derived at construction, as Kafka does.
    """

    topic_partition: tuple[str, int] | None
    log: Any
    first_dirty_offset: int
    uncleanable_offset: int
    need_compaction_now: bool = False
    clean_bytes: int = field(init=False)
    first_uncleanable_offset: int = field(init=False)
    cleanable_bytes: int = field(init=False)
    total_bytes: int = field(init=False)
    cleanable_ratio: float = field(init=False)

    def __post_init__(self) -> None:
        self.clean_bytes = sum(s.size for s in self.log.log_segments(-1, self.first_dirty_offset))
        self.first_uncleanable_offset, self.cleanable_bytes = calculate_cleanable_bytes(
            self.log, self.first_dirty_offset, self.uncleanable_offset)
        self.total_bytes = self.clean_bytes + self.cleanable_bytes
        # Java double division: 0/0 is NaN (an empty log; callers skip total_bytes == 0)
        self.cleanable_ratio = (self.cleanable_bytes / self.total_bytes if self.total_bytes
                                else float("nan"))
