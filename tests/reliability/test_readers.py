"""Readers in other processes under a writer that rolls every few appends, trims, truncates and
recovers (issue 16): no reader is killed by a signal, every record a reader returns is what the
writer wrote at its offset. Full run: ``python tools/reliability.py readers --seconds 120``.

The deterministic part cuts each reader's files in the middle of its work, in a child process
per reader, as a roll or ``truncate_to`` does: a reader that mapped them dies of SIGBUS (five of
these six did before ``kafkalog.file_copy``).
"""

from __future__ import annotations

import os

from tests.reliability.readers import SHRINK_SCENARIOS, run_readers, run_shrink

FULL = os.environ.get("KAFKALOG_RELIABILITY_FULL") == "1"


def test_every_reader_survives_its_files_being_cut(tmp_path):
    res = run_shrink(tmp_path)
    assert set(res) == set(SHRINK_SCENARIOS)
    assert res == dict.fromkeys(SHRINK_SCENARIOS, "ok"), res


def test_reader_processes_survive_a_rolling_writer(tmp_path):
    res = run_readers(tmp_path, seconds=120 if FULL else 30, seed=5)
    assert res["readers_killed_by_signal"] == 0, res["killed"]
    assert res["readers_died_otherwise"] == [], res["readers_died_otherwise"]
    assert res["violation_count"] == 0, (res["violation_kinds"], res["violations"][:3])
    assert res["writer_errors"] == [], res["writer_errors"][:1]
    w = res["writer"]
    # the writer really did what cuts files under readers
    assert w["rolls"] >= 20 and w.get("truncations", 0) > 0, w
    assert w["exits"].get("SIGKILL", 0) >= 1, w  # a crashed round: the next open recovered
    r = res["readers"]
    assert r["dump"].get("op_dump_index", 0) > 0 and r["dump"].get("op_dump_log", 0) > 0, r
    assert r["dump"].get("records_checked", 0) > 0, r["dump"]
    assert r["verify"].get("op_verify", 0) > 0, r["verify"]
    assert r["log"].get("records_checked", 0) > 1000, r["log"]
    assert r["spark"].get("op_plan", 0) > 0 and r["spark"].get("records_checked", 0) > 0, r
