"""Torn writes and media damage (CI budget): every outcome is a consistent prefix or a clear
KafkaLogError naming the file; never another exception, never a record that differs from what
was written. Full budget: ``python tools/reliability.py damage`` (every byte of the last batch,
hundreds of random mutations)."""

from __future__ import annotations

import os

from tests.reliability.damage import run_campaign

FULL = os.environ.get("KAFKALOG_RELIABILITY_FULL") == "1"


def test_damage_campaign():
    res = run_campaign(trials=300 if FULL else 20, seed=7, torn_stride=1 if FULL else 37)
    assert res["failure_count"] == 0, res["failures"]
    fams = res["by_family"]
    # after a crash (unclean) a torn tail always recovers to a prefix that opens and reads
    torn = fams["torn-every-byte/unclean"]
    assert torn["opened"] == torn["cases"] and torn["read_error"] == 0
    assert res["cases"] >= 60
