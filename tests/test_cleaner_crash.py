"""SIGKILL during every phase of a cleaning, in real subprocesses (tests/cleaner_crash.py):
building the offset map, writing the ``.cleaned`` segment, renaming it to ``.swap``, renaming
the old segments to ``.deleted``, dropping the ``.swap`` suffixes. Reopening recovers (Kafka's
``LogLoader`` swap passes) and loses no record the model says must survive:

* every record read is the one appended at its offset (nothing invented or moved);
* the latest record of every key is there (this first cleaning keeps tombstones: their horizon
  is a day away), and no aborted record is visible to ``read_committed``;
* the log end offset is unchanged, no ``.cleaned``/``.swap`` file is left, and a cleaning
  after the restart reaches the same content as a cleaning that was never interrupted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kafkalog.cleaner.cleaner import Cleaner
from kafkalog.clock import ManualClock
from kafkalog.log import Log
from tests import cleaner_crash

REPO = Path(__file__).resolve().parent.parent
SEED = 11


def _content(log: Log) -> list[tuple[int, bytes | None, bytes | None]]:
    return [(r.offset, r.key, r.value) for r in log.records()]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> list:
    d = tmp_path_factory.mktemp("ref") / "t-0"
    cleaner_crash.workload(d, SEED)
    log = Log.open(d, cleaner_crash.config(), clock=ManualClock(cleaner_crash.T0 + 1000))
    log.clean(cleaner=Cleaner.from_config(cleaner_crash.cleaner_config(), log._clock))
    content = _content(log)
    log.close()
    return content


PHASES = [("map", k) for k in (1, 2)] + [("write", k) for k in (1, 3, 6)] + \
    [("swap", k) for k in (1, 2, 3, 5)] + [("delete", k) for k in (1, 4, 9)] + \
    [("final", k) for k in (1, 2, 3, 5)]


@pytest.mark.parametrize(("phase", "k"), PHASES)
def test_sigkill_during_cleaning_loses_nothing(tmp_path: Path, phase: str, k: int,
                                               uninterrupted: list) -> None:
    d = tmp_path / "t-0"
    proc = subprocess.run([sys.executable, "-m", "tests.cleaner_crash", str(d), phase, str(k),
                           str(SEED)], cwd=REPO, capture_output=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == -9, proc.stderr.decode()[-2000:]  # killed where we asked
    model = json.loads((tmp_path / "t-0.model.json").read_text())
    records = {int(o): v for o, v in model["records"].items()}
    leftovers = sorted(p.name for p in d.iterdir() if p.name.endswith((".cleaned", ".swap")))
    log = Log.open(d, cleaner_crash.config(), clock=ManualClock(cleaner_crash.T0 + 2000))
    try:
        assert not [p for p in d.iterdir() if p.name.endswith((".cleaned", ".swap"))], \
            leftovers
        assert log.log_end_offset == model["leo"]
        seen = _content(log)
        offsets = [o for o, _, _ in seen]
        assert offsets == sorted(set(offsets))
        for o, key, value in seen:  # every record is the one appended there
            mk, mv, _aborted = records[o]
            assert (key, value) == (mk.encode(), None if mv is None else mv.encode()), o
        latest: dict[str, int] = {}
        for o in sorted(records):
            if not records[o][2]:
                latest[records[o][0]] = o
        present = set(offsets)
        for key, o in latest.items():
            assert o in present, (key, o)  # the latest record of each key survived
        committed = {r.offset for r in log.records(isolation="read_committed")}
        assert not [o for o in committed if records[o][2]]  # no aborted record visible
        # a cleaning after the restart converges to the uninterrupted result
        log.clean(first_dirty_offset=0,
                  cleaner=Cleaner.from_config(cleaner_crash.cleaner_config(), log._clock))
        assert _content(log) == uninterrupted
    finally:
        log.close()
    if phase in ("delete", "final"):
        # past the swap: the crash left the cleaned data in place, not the old one
        assert leftovers or phase == "final"
