"""Kafka's windowed rate and the throttle time a quota violation costs.

Ported from ``clients/.../common/metrics/stats/Rate.java``, ``SampledStat.java`` and
``WindowedSum.java``, with ``server-common/.../server/quota/QuotaUtils.java`` (Kafka 4.1.1): the
exact arithmetic a broker's ``ClientQuotaManager`` does, so that a client is throttled here for
as long as a Kafka broker would throttle it.

Invariants (SampledStat):

* at most ``samples + 1`` samples are kept (one extra for the sample overlapping the start of
  the monitored window); each covers ``window_ms`` from its start time;
* a sample whose last event is ``samples * window_ms`` or more in the past is reset (purged)
  before any measurement;
* the rate is the sum of the kept samples over the elapsed time since the oldest sample
  started, where fewer than ``samples - 1`` full windows count as ``samples - 1`` (a burst at
  start-up is spread over the whole window, not divided by a few milliseconds).

>>> r = SampledRate(samples=11, window_ms=1000)
>>> r.record(10_000, now_ms=0)
>>> r.measure(now_ms=0)   # 10,000 bytes over the 10 s minimum window
1000.0
>>> throttle_time_ms(r, bound=500.0, now_ms=0)  # (1000 - 500) / 500 * 10 s
10000
"""

from __future__ import annotations

import math

__all__ = ["SampledRate", "throttle_time_ms"]


class _Sample:
    __slots__ = ("value", "event_count", "start_ms", "last_event_ms")

    def __init__(self, now_ms: int) -> None:
        self.reset(now_ms)

    def reset(self, now_ms: int) -> None:
        self.value = 0.0
        self.event_count = 0
        self.start_ms = now_ms
        self.last_event_ms = now_ms


class SampledRate:
    """Kafka's ``Rate`` over a ``WindowedSum`` (values per second).

    Parameters
    ----------
    samples:
        ``quota.window.num`` (Kafka's default 11).
    window_ms:
        ``quota.window.size.seconds`` in milliseconds (default 1000).
    """

    __slots__ = ("samples", "window_ms", "_samples", "_current")

    def __init__(self, samples: int = 11, window_ms: int = 1000) -> None:
        if samples < 1 or window_ms < 1:
            raise ValueError(f"samples and window must be positive (found {samples}, "
                             f"{window_ms} ms)")
        self.samples = samples
        self.window_ms = window_ms
        self._samples: list[_Sample] = []
        self._current = 0

    def _current_sample(self, now_ms: int) -> _Sample:
        if not self._samples:
            self._samples.append(_Sample(now_ms))
        return self._samples[self._current]

    def record(self, value: float, now_ms: int) -> None:
        """Add ``value`` at ``now_ms`` (SampledStat.record: a complete sample advances)."""
        sample = self._current_sample(now_ms)
        if now_ms - sample.start_ms >= self.window_ms:
            # advance: one extra slot beyond `samples` for the overlapping sample
            self._current = (self._current + 1) % (self.samples + 1)
            if self._current >= len(self._samples):
                sample = _Sample(now_ms)
                self._samples.append(sample)
            else:
                sample = self._samples[self._current]
                sample.reset(now_ms)
        sample.value += value
        sample.event_count += 1
        sample.last_event_ms = now_ms

    def observe(self, now_ms: int) -> tuple[float, int]:
        """``(total, window)`` at ``now_ms``: the kept samples' sum and ``Rate.windowSize``
        (the elapsed time the rate divides by, at least 1 ms), after the purge both begin
        with; one pass (this runs for every request of a client with a quota)."""
        expire_age = self.samples * self.window_ms
        if not self._samples:
            self._samples.append(_Sample(now_ms))
        total = 0.0
        oldest = now_ms
        for s in self._samples:
            if now_ms - s.last_event_ms >= expire_age:
                s.reset(now_ms)
            total += s.value
            if s.start_ms < oldest:
                oldest = s.start_ms
        elapsed = now_ms - oldest
        full = elapsed // self.window_ms
        if full < self.samples - 1:
            elapsed += (self.samples - 1 - full) * self.window_ms
        return total, max(elapsed, 1)

    def window_size_ms(self, now_ms: int) -> int:
        """``Rate.windowSize``: the elapsed time the rate divides by (at least 1 ms)."""
        return self.observe(now_ms)[1]

    def measure(self, now_ms: int) -> float:
        """The rate per second at ``now_ms`` (``Rate.measure``)."""
        total, window = self.observe(now_ms)
        return total / (window / 1000.0)


def throttle_time_ms(rate: SampledRate, bound: float, now_ms: int,
                     max_ms: int | None = None) -> int:
    """``QuotaUtils.throttleTime``: how long the client must stay silent for the observed rate
    ``O`` to fall to the quota ``T`` over the window ``W``: ``(O - T) / T * W``, rounded; 0 when
    the rate is within the quota (``Quota.acceptable``: ``O <= T``). ``max_ms`` caps it
    (``boundedThrottleTime``, the request quota's cap)."""
    total, window = rate.observe(now_ms)
    observed = total / (window / 1000.0)
    if observed <= bound:
        return 0
    ms = _java_round((observed - bound) / bound * window)
    return ms if max_ms is None else min(ms, max_ms)


def _java_round(x: float) -> int:
    """``Math.round``: half up (Python's round is half to even)."""
    return math.floor(x + 0.5)
