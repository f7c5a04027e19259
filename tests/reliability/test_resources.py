"""Resource faults (CI budget): disk full (RLIMIT_FSIZE -> EFBIG, a small tmpfs -> ENOSPC),
permissions lost mid-append, the one-writer lock. Errors reach the caller, nothing acknowledged
is lost, the log reopens. Full run: ``python tools/reliability.py resources``."""

from __future__ import annotations

import os

import pytest

from tests.reliability.resources import lock_checks, trial

FULL = os.environ.get("KAFKALOG_RELIABILITY_FULL") == "1"
ROOT = os.geteuid() == 0


@pytest.mark.parametrize("mode", ["fsize", "enospc", "eacces"])
def test_fault(tmp_path, mode):
    if mode in ("enospc", "eacces") and not ROOT:
        pytest.skip("needs root (tmpfs mount / dropping privileges)")
    for seed in range(10 if FULL else 1):
        res = trial(tmp_path, mode, seed)
        if "skipped" in res:
            pytest.skip(res["skipped"])
        assert res["violations"] == []
        assert res.get("flushed_lost", 0) == 0
        assert res["errors"], "the fault never reached the caller"
        assert res["acked"] > 0


def test_second_writer_is_refused(tmp_path):
    out = lock_checks(tmp_path)
    assert out["violations"] == []
