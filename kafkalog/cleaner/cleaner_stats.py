"""``CleanerStats`` and ``PreCleanStats``: what one cleaning did (Kafka's classes of the same
names, storage/.../log/CleanerStats.java and PreCleanStats.java in 4.x, LogCleaner.scala in 3.9).

Times come from the clock the cleaner was given (milliseconds); byte and message counts are the
log cleaner's own: bytes read while filtering every segment of the cleaned range (the clean
section is recopied too), bytes written to the ``.cleaned`` segments, and the same for the map.

>>> s = CleanerStats(start_ms=0)
>>> s.read_messages(10, 1000); s.recopy_messages(1, 100); s.all_done(2000)
>>> (s.bytes_read, s.bytes_written, s.elapsed_secs)
(1000, 100, 2.0)
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CleanerStats", "PreCleanStats"]


@dataclass
class CleanerStats:
    """Counters of one cleaning (Kafka's ``CleanerStats``)."""

    start_ms: int = 0
    map_complete_ms: int = -1
    end_ms: int = -1
    bytes_read: int = 0
    bytes_written: int = 0
    map_bytes_read: int = 0
    map_messages_read: int = 0
    messages_read: int = 0
    invalid_messages_read: int = 0
    messages_written: int = 0
    buffer_utilization: float = 0.0

    def read_messages(self, messages: int, nbytes: int) -> None:
        self.messages_read += messages
        self.bytes_read += nbytes

    def invalid_message(self, n: int = 1) -> None:
        self.invalid_messages_read += n

    def recopy_messages(self, messages: int, nbytes: int) -> None:
        self.messages_written += messages
        self.bytes_written += nbytes

    def index_messages_read(self, n: int) -> None:
        self.map_messages_read += n

    def index_bytes_read(self, n: int) -> None:
        self.map_bytes_read += n

    def index_done(self, now_ms: int) -> None:
        self.map_complete_ms = now_ms

    def all_done(self, now_ms: int) -> None:
        self.end_ms = now_ms

    @property
    def elapsed_secs(self) -> float:
        return (self.end_ms - self.start_ms) / 1000.0

    @property
    def elapsed_index_secs(self) -> float:
        return (self.map_complete_ms - self.start_ms) / 1000.0


@dataclass
class PreCleanStats:
    """What choosing the log to clean saw (Kafka's ``PreCleanStats``)."""

    max_compaction_delay_ms: int = 0
    delayed_partitions: int = 0
    cleanable_partitions: int = 0

    def update_max_compaction_delay(self, delay_ms: int) -> None:
        self.max_compaction_delay_ms = max(self.max_compaction_delay_ms, delay_ms)
        if delay_ms > 0:
            self.delayed_partitions += 1

    def record_cleanable_partitions(self, n: int) -> None:
        self.cleanable_partitions = n
