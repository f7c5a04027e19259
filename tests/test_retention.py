"""Retention rules as pure functions over segment lists (Kafka's deleteOldSegments rules)."""

from __future__ import annotations

from dataclasses import dataclass

from kafkalog.retention import (
    deletable_segments,
    log_start_offset_breached,
    retention_ms_breached,
    retention_size_breached,
)


@dataclass
class Seg:
    base_offset: int
    size: int
    largest_timestamp: int = 0


SEGS = [Seg(0, 100, 10), Seg(10, 100, 30), Seg(20, 100, 20), Seg(30, 50, 40), Seg(40, 0, -1)]


def bases(segs: list) -> list[int]:
    return [s.base_offset for s in segs]


def test_deletable_stops_at_first_failure_and_high_watermark() -> None:
    assert bases(deletable_segments(SEGS, lambda s, n: True, high_watermark=40,
                                    log_end_offset=40)) == [0, 10, 20, 30]  # not empty active
    assert bases(deletable_segments(SEGS, lambda s, n: True, high_watermark=25,
                                    log_end_offset=40)) == [0, 10]  # upper bounds <= 25
    assert bases(deletable_segments(SEGS, lambda s, n: s.base_offset != 10,
                                    high_watermark=40, log_end_offset=40)) == [0]


def test_time_rule_is_a_prefix_of_expired_segments() -> None:
    # segment 20 is old enough but comes after 10, which is not: only 0 goes
    assert bases(retention_ms_breached(SEGS, now=45, retention_ms=20, high_watermark=40,
                                       log_end_offset=40)) == [0]
    assert bases(retention_ms_breached(SEGS, now=100, retention_ms=20, high_watermark=40,
                                       log_end_offset=40)) == [0, 10, 20, 30]
    assert retention_ms_breached(SEGS, now=10**9, retention_ms=-1, high_watermark=40,
                                 log_end_offset=40) == []


def test_size_rule() -> None:
    # total 350; keep <= 150 -> diff 200: 0 (100) and 10 (100) go, 20 would overshoot
    assert bases(retention_size_breached(SEGS, retention_bytes=150, high_watermark=40,
                                         log_end_offset=40)) == [0, 10]
    assert bases(retention_size_breached(SEGS, retention_bytes=149, high_watermark=40,
                                         log_end_offset=40)) == [0, 10]
    assert bases(retention_size_breached(SEGS, retention_bytes=50, high_watermark=40,
                                         log_end_offset=40)) == [0, 10, 20]
    assert retention_size_breached(SEGS, retention_bytes=351, high_watermark=40,
                                   log_end_offset=40) == []
    assert retention_size_breached(SEGS, retention_bytes=-1, high_watermark=40,
                                   log_end_offset=40) == []


def test_log_start_offset_rule() -> None:
    assert bases(log_start_offset_breached(SEGS, log_start_offset=20, high_watermark=40,
                                           log_end_offset=40)) == [0, 10]
    assert bases(log_start_offset_breached(SEGS, log_start_offset=19, high_watermark=40,
                                           log_end_offset=40)) == [0]
    assert log_start_offset_breached(SEGS, log_start_offset=0, high_watermark=40,
                                     log_end_offset=40) == []
