"""Concurrency (CI budget): a writer thread appending, rolling and deleting segments under
reader threads and reader processes; every record read is what was written, and the only error
a reader sees is OffsetOutOfRangeError. Full run: ``python tools/reliability.py concurrency``."""

from __future__ import annotations

import os

from tests.reliability.concurrency import run_concurrency

FULL = os.environ.get("KAFKALOG_RELIABILITY_FULL") == "1"


def test_writer_and_readers(tmp_path):
    res = run_concurrency(tmp_path, seconds=60 if FULL else 6, threads=3, processes=2, seed=3)
    assert res["violation_count"] == 0, (res["violation_kinds"], res["violations"][:3])
    # the counts (out_of_range_<op> among them) say where the reads went when these fail
    assert res["threads"]["records_checked"] > 1000, res["threads"]
    assert res["processes"].get("records_checked", 0) > 100, res["processes"]
    assert res["threads"].get("segments_deleted", 0) > 0  # retention really ran under readers
