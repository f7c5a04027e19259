"""Regression tests for engine bugs the reliability scenarios found (one test per bug)."""

from __future__ import annotations

import os

from kafkalog.config import LogConfig
from kafkalog.log import Log
from kafkalog.records.record import Record
from tests.reliability.crash import verify_errors

T = 1_700_000_000_000


def _recs(lo: int, n: int) -> list[Record]:
    return [Record(b"k", b"v%d" % o, T + o) for o in range(lo, lo + n)]


def test_clean_shutdown_with_torn_last_batch_keeps_log_end_offset(tmp_path):
    """A torn last batch behind a clean-shutdown marker (media damage, or a marker written by a
    broken shutdown): the log end offset was computed by scanning from the last offset-index
    entry, which pointed at the torn batch, so the scan found nothing and the log end offset fell
    back to the segment's base offset; the next append then reused offsets already in the file.
    Found by the damage campaign (torn-every-byte/clean)."""
    cfg = LogConfig(index_interval_bytes=0)
    with Log.open(tmp_path, cfg) as log:
        for _ in range(3):
            log.append(_recs(log.log_end_offset, 5))
        end_of_third = log.active_segment.size
        log.append(_recs(15, 5))
        seg_path = log.active_segment.log_path
    size = os.path.getsize(seg_path)
    os.truncate(seg_path, size - 7)  # torn: the fourth batch lost its last 7 bytes
    with Log.open(tmp_path, cfg) as log:
        assert log.log_end_offset == 15
        assert log.active_segment.size == end_of_third
        info = log.append(_recs(15, 1))
        assert info.first_offset == 15
        assert [r.offset for r in log.records()] == list(range(16))
    assert verify_errors(tmp_path) == []
