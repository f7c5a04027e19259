"""Every in-place repair respects the directory locks (issue 16): against an idle kafkalog
writer, a ``LogDir``, a Kafka broker's ``fcntl`` lock on ``.lock`` and a standalone writer of
one partition of a log dir, ``kafkalog repair --in-place`` in every mode exits with status 3 and
changes no byte; with the holder gone it runs. Under a live writer rolling every few appends
(the issue's reproducer: the writer died of SIGBUS) it is refused and the writer goes on.
Full figures: ``python tools/reliability.py locks``."""

from __future__ import annotations

from tests.reliability.locks import EXIT_LOCKED, HOLDERS, TARGETS, run_locks


def test_in_place_repair_refused_on_held_directories(tmp_path):
    res = run_locks(tmp_path)
    assert res["failures"] == [], res["failures"][:2]
    cases = res["cases"]
    assert len(cases) == len(HOLDERS) * len(TARGETS)
    for c in cases:
        assert c["status"] == EXIT_LOCKED and c["changed_files"] == [], c
        assert "locked" in c["stderr"] and "nothing was changed" in c["stderr"], c
    assert res["files_hashed_per_case"] > 20
    live = res["live_writer"]
    assert live["ok"], live
    assert live["writer"]["rolls"] > 5 and live["writer"]["bad_records"] == 0
