"""Time as an injected dependency (Kafka's ``Time``), so rolling and retention are testable.

``Log`` never reads the wall clock directly: it asks its ``Clock``. ``SystemClock`` is the real
one; ``ManualClock`` only moves when a test moves it.

>>> c = ManualClock(1_000)
>>> c.advance(500)
>>> c.milliseconds()
1500
"""

from __future__ import annotations

import time
from typing import Protocol, runtime_checkable

__all__ = ["Clock", "SystemClock", "ManualClock"]


@runtime_checkable
class Clock(Protocol):
    """What the log needs from time: wall-clock milliseconds and a monotonic nanosecond count."""

    def milliseconds(self) -> int:
        """Wall-clock time in ms since the epoch (record timestamps, segment age)."""
        ...

    def nanoseconds(self) -> int:
        """Monotonic time in ns (durations only)."""
        ...


class SystemClock:
    """The real clock.

    >>> SystemClock().milliseconds() > 1_600_000_000_000
    True
    """

    def milliseconds(self) -> int:
        return time.time_ns() // 1_000_000

    def nanoseconds(self) -> int:
        return time.monotonic_ns()

    def __repr__(self) -> str:
        return "SystemClock()"


class ManualClock:
    """A clock that only moves when told to (Kafka's ``MockTime``).

    Parameters
    ----------
    start_ms:
        Initial wall-clock reading in milliseconds.

    >>> c = ManualClock(0)
    >>> c.set(42); c.milliseconds()
    42
    """

    def __init__(self, start_ms: int = 1_700_000_000_000) -> None:
        self._ms = int(start_ms)
        self._ns = 0

    def milliseconds(self) -> int:
        return self._ms

    def nanoseconds(self) -> int:
        return self._ns

    def advance(self, ms: int) -> None:
        """Move both readings forward by ``ms`` milliseconds (negative values are refused)."""
        if ms < 0:
            raise ValueError(f"a clock cannot go backwards (advance by {ms} ms)")
        self._ms += int(ms)
        self._ns += int(ms) * 1_000_000

    def set(self, ms: int) -> None:
        """Set the wall-clock reading (may move backwards, as a real wall clock can)."""
        self._ms = int(ms)

    def __repr__(self) -> str:
        return f"ManualClock({self._ms})"
