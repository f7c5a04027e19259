"""``CleanerConfig``: the log cleaner's broker settings (Kafka's ``CleanerConfig``).

Kafka keeps these apart from the topic configs: they size the cleaner itself, not a log
(storage/src/main/java/org/apache/kafka/storage/internals/log/CleanerConfig.java, 3.9 and 4.x,
unchanged). The per-log compaction settings (``cleanup.policy``, ``min.cleanable.dirty.ratio``,
``min.compaction.lag.ms``, ``max.compaction.lag.ms``, ``delete.retention.ms``) are
:class:`~kafkalog.config.LogConfig` fields.

=====================================  ============================  ==============================
Kafka name                             field                         default
=====================================  ============================  ==============================
``log.cleaner.threads``                ``num_threads``               1
``log.cleaner.dedupe.buffer.size``     ``dedupe_buffer_size``        134217728 (128 MiB)
``log.cleaner.io.buffer.load.factor``  ``dedupe_buffer_load_factor`` 0.9
``log.cleaner.io.buffer.size``         ``io_buffer_size``            524288 (512 KiB)
``message.max.bytes``                  ``max_message_size``          1048588
``log.cleaner.io.max.bytes.per.second``  ``max_io_bytes_per_second`` Double.MAX_VALUE (no limit)
``log.cleaner.backoff.ms``             ``backoff_ms``                15000
``log.cleaner.enable``                 ``enable_cleaner``            true
=====================================  ============================  ==============================

(``log.cleaner.io.buffer.load.factor`` is Kafka's own, odd, name for the dedupe map's load factor.)
A cleaner thread gets ``dedupe_buffer_size / num_threads`` bytes of offset map (at most 2 GiB) and
two I/O buffers of ``io_buffer_size / num_threads / 2`` bytes (``LogCleaner.CleanerThread``).

Deviation (documented): Kafka's ``KafkaConfig`` also requires at least 1 MiB of dedupe buffer per
thread; this dataclass only requires what ``Cleaner`` itself needs (room for one key at the load
factor), so that tests can exercise a full offset map with a few hundred bytes.

>>> c = CleanerConfig.from_properties({"log.cleaner.dedupe.buffer.size": "1048576"})
>>> c.offset_map_memory, c.cleaner_io_buffer_size
(1048576, 262144)
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError

__all__ = ["CleanerConfig", "HASH_ALGORITHM"]

#: CleanerConfig.HASH_ALGORITHM: the offset map keys are MD5 digests of the record keys
HASH_ALGORITHM = "MD5"
_INT_MAX = 2**31 - 1
_LONG_MAX = 2**63 - 1

# field -> (Kafka name, kind, minimum or None)
_FIELDS: dict[str, tuple[str, str, float | None]] = {
    "num_threads": ("log.cleaner.threads", "int", 0),
    "dedupe_buffer_size": ("log.cleaner.dedupe.buffer.size", "long", None),
    "dedupe_buffer_load_factor": ("log.cleaner.io.buffer.load.factor", "double", None),
    "io_buffer_size": ("log.cleaner.io.buffer.size", "int", 0),
    "max_message_size": ("message.max.bytes", "int", 0),
    "max_io_bytes_per_second": ("log.cleaner.io.max.bytes.per.second", "double", None),
    "backoff_ms": ("log.cleaner.backoff.ms", "long", 0),
    "enable_cleaner": ("log.cleaner.enable", "bool", None),
}


@dataclass(frozen=True)
class CleanerConfig:
    """The log cleaner's settings, Kafka's names and defaults (module table).

    Examples
    --------
    >>> CleanerConfig().dedupe_buffer_size
    134217728
    >>> CleanerConfig(dedupe_buffer_size=30)
    Traceback (most recent call last):
    ...
    kafkalog.errors.ConfigError: log.cleaner.dedupe.buffer.size: the offset map is too small to \
fit in even a single message (expected slots * 0.9 > 1, found 1 slots of 24 bytes)
    """

    num_threads: int = 1
    dedupe_buffer_size: int = 128 * 1024 * 1024
    dedupe_buffer_load_factor: float = 0.9
    io_buffer_size: int = 512 * 1024
    max_message_size: int = 1048588
    max_io_bytes_per_second: float = sys.float_info.max
    backoff_ms: int = 15 * 1000
    enable_cleaner: bool = True

    def __post_init__(self) -> None:
        for name, (key, kind, lo) in _FIELDS.items():
            value = getattr(self, name)
            if kind == "bool":
                if not isinstance(value, bool):
                    raise ConfigError(f"{key}: expected true or false, found {value!r}")
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or (
                    kind != "double" and not isinstance(value, int)):
                raise ConfigError(f"{key}: expected a number, found {type(value).__name__} "
                                  f"{value!r}")
            if lo is not None and value < lo:
                raise ConfigError(f"{key}: value {value} out of range (expected >= {lo}, "
                                  f"found {value})")
        if self.num_threads == 0 and self.enable_cleaner:
            raise ConfigError("log.cleaner.threads: a cleaner needs a thread (expected >= 1 "
                              "with log.cleaner.enable=true, found 0)")
        if self.enable_cleaner:
            # Cleaner's require(offsetMap.slots * dupBufferLoadFactor > 1)
            slots = self.offset_map_memory // 24
            if slots * self.dedupe_buffer_load_factor <= 1:
                raise ConfigError(
                    "log.cleaner.dedupe.buffer.size: the offset map is too small to fit in even "
                    f"a single message (expected slots * {self.dedupe_buffer_load_factor} > 1, "
                    f"found {slots} slots of 24 bytes)")

    @property
    def threads(self) -> int:
        return max(1, self.num_threads)

    @property
    def offset_map_memory(self) -> int:
        """Bytes of one cleaner thread's offset map: ``min(dedupe / threads, Int.MaxValue)``."""
        return min(self.dedupe_buffer_size // self.threads, _INT_MAX)

    @property
    def cleaner_io_buffer_size(self) -> int:
        """One cleaner's read (and write) buffer: ``io_buffer_size / threads / 2``."""
        return self.io_buffer_size // self.threads // 2

    @property
    def hash_algorithm(self) -> str:
        return HASH_ALGORITHM

    def replace(self, **changes: Any) -> CleanerConfig:
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_properties(cls, props: Mapping[str, Any]) -> CleanerConfig:
        """Read Kafka's broker names (``server.properties`` style; other keys are ignored).

        >>> CleanerConfig.from_properties({"log.cleaner.enable": "false"}).enable_cleaner
        False
        """
        values: dict[str, Any] = {}
        for name, (key, kind, _lo) in _FIELDS.items():
            raw = props.get(key)
            if raw is None or raw == "":
                continue
            values[name] = _parse(key, kind, raw)
        return cls(**values)


def _parse(key: str, kind: str, raw: Any) -> Any:
    text = str(raw).strip()
    if kind == "bool":
        if isinstance(raw, bool):
            return raw
        if text.lower() in ("true", "false"):
            return text.lower() == "true"
        raise ConfigError(f"{key}: expected true or false, found {raw!r}")
    try:
        if kind == "double":
            return float(raw) if isinstance(raw, (int, float)) and not isinstance(raw, bool) \
                else float(text)
        if isinstance(raw, bool):
            raise ValueError
        value = raw if isinstance(raw, int) else int(text)
    except ValueError:
        raise ConfigError(f"{key}: expected a number, found {raw!r}") from None
    hi = _INT_MAX if kind == "int" else _LONG_MAX
    if value > hi:
        raise ConfigError(f"{key}: value {value} out of range (expected <= {hi}, found {value})")
    return value
