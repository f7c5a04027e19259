"""Crash consistency (CI budget): writers killed with SIGKILL, with and without a simulated
power loss; every flushed record survives recovery, in order, once, and appends continue.

The full budget (>= 200 trials) runs through ``python tools/reliability.py crash``; set
``KAFKALOG_RELIABILITY_FULL=1`` to run it here instead.
"""

from __future__ import annotations

import os

import pytest

from tests.reliability.crash import run_trial

FULL = os.environ.get("KAFKALOG_RELIABILITY_FULL") == "1"
SEEDS = range(200) if FULL else range(1000, 1006)


@pytest.mark.parametrize("seed", SEEDS)
def test_sigkill_keeps_every_flushed_record(tmp_path, seed):
    res = run_trial(tmp_path, seed, power_loss=seed % 2 == 1, max_wait=1.0 if FULL else 0.7)
    assert res.problems == []
    assert res.verify_errors == []
    assert res.mismatched == 0
    assert res.flushed_lost == 0
    assert res.recovered >= res.acked
    assert res.rounds == 2


def test_power_loss_model_drops_unsynced_tails(tmp_path):
    """The model itself: a file never fsynced loses everything, a synced one keeps its
    synced length (so the power-loss trials above really remove unflushed bytes)."""
    from tests.reliability.crash import apply_power_loss

    (tmp_path / "00000000000000000000.log").write_bytes(b"x" * 100)
    (tmp_path / "00000000000000000050.log").write_bytes(b"y" * 10)
    (tmp_path / "00000000000000000000.index").write_bytes(b"z" * 16)
    dropped = apply_power_loss(tmp_path, {"00000000000000000000.log": 60})
    assert (tmp_path / "00000000000000000000.log").stat().st_size == 60
    assert (tmp_path / "00000000000000000050.log").stat().st_size == 0
    assert (tmp_path / "00000000000000000000.index").stat().st_size == 16
    assert dropped == 50
