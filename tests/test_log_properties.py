"""Hypothesis state machine: any sequence of appends, rolls, truncations, start-offset moves,
retention and reopenings (clean or after a crash) keeps ``records()`` equal to a list model."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from kafkalog import Record, encode_batch
from kafkalog.clock import ManualClock
from kafkalog.config import LONG_MAX, LogConfig
from kafkalog.files import CLEAN_SHUTDOWN_FILE
from kafkalog.log import Log

T0 = 1_700_000_000_000
CONFIGS = [
    LogConfig(segment_bytes=600, index_interval_bytes=100, segment_ms=LONG_MAX,
              file_delete_delay_ms=0, segment_index_bytes=96),
    LogConfig(segment_bytes=900, index_interval_bytes=0, segment_ms=LONG_MAX,
              file_delete_delay_ms=0, retention_bytes=1500),
]


class LogMachine(RuleBasedStateMachine):
    """Model: batches as (base offset, [values]); log start and end offsets."""

    @initialize(cfg=st.sampled_from(range(len(CONFIGS))))
    def open_log(self, cfg: int) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="kafkalog-sm-"))
        self.clock = ManualClock(T0)
        self.cfg = CONFIGS[cfg]
        self.log = Log.open(self.dir, self.cfg, clock=self.clock)
        self.batches: list[tuple[int, list[bytes]]] = []
        self.lso = 0
        self.leo = 0

    def teardown(self) -> None:
        if hasattr(self, "log"):
            self.log.close()
            shutil.rmtree(self.dir, ignore_errors=True)

    # -- model helpers --------------------------------------------------------------------

    def model_records(self) -> list[tuple[int, bytes]]:
        return [(b + i, v) for b, vals in self.batches for i, v in enumerate(vals)
                if b + i >= self.lso]

    # -- rules ----------------------------------------------------------------------------

    @rule(values=st.lists(st.binary(max_size=120), min_size=1, max_size=5))
    def append(self, values: list[bytes]) -> None:
        info = self.log.append([Record(None, v, T0) for v in values])
        assert info.first_offset == self.leo
        self.batches.append((self.leo, values))
        self.leo += len(values)

    @rule(values=st.lists(st.binary(max_size=60), min_size=1, max_size=3),
          gap=st.integers(0, 3))
    def append_as_follower(self, values: list[bytes], gap: int) -> None:
        base = self.leo + gap
        self.log.append_batches(encode_batch([Record(None, v, T0) for v in values],
                                             base_offset=base))
        self.batches.append((base, values))
        self.leo = base + len(values)

    @rule()
    def roll(self) -> None:
        self.log.roll()

    @rule(data=st.data())
    def truncate(self, data: st.DataObject) -> None:
        target = data.draw(st.integers(self.lso, self.leo))
        changed = self.log.truncate_to(target)
        assert changed == (target < self.leo)
        if changed:
            # Kafka drops the whole batch holding the target; the end offset is the kept data's
            # next offset, or the base offset of the (then empty) segment that held the target
            self.batches = [(b, v) for b, v in self.batches if b + len(v) - 1 < target]
            base = self.log.active_segment.base_offset
            assert base <= target
            kept_next = self.batches[-1][0] + len(self.batches[-1][1]) if self.batches else 0
            self.leo = max(kept_next, base)
            self.lso = min(self.lso, self.leo)

    @rule(data=st.data())
    def delete_records_before(self, data: st.DataObject) -> None:
        target = data.draw(st.integers(self.lso, self.leo))
        assert self.log.delete_records_before(target) == max(self.lso, target)
        self.lso = max(self.lso, target)

    @rule()
    def enforce_retention(self) -> None:
        self.log.enforce_retention()
        new_lso = self.log.log_start_offset
        assert self.lso <= new_lso <= self.leo
        if new_lso > self.lso:
            # only whole segments go, so the new start is a segment boundary
            assert new_lso == self.log.segments[0].base_offset
        self.lso = new_lso

    @rule(crash=st.booleans(), cfg=st.sampled_from(range(len(CONFIGS))))
    def reopen(self, crash: bool, cfg: int) -> None:
        self.log.close()
        if crash:
            (self.dir / CLEAN_SHUTDOWN_FILE).unlink()
        self.cfg = CONFIGS[cfg]
        self.log = Log.open(self.dir, self.cfg, clock=self.clock,
                            recovery_point=0 if crash else None)

    @precondition(lambda self: self.leo > self.lso)
    @rule(data=st.data())
    def read_from(self, data: st.DataObject) -> None:
        start = data.draw(st.integers(self.lso, self.leo))
        got = [(r.offset, r.value) for r in self.log.records(start)]
        assert got == [(o, v) for o, v in self.model_records() if o >= start]
        table = self.log.read_table(start)
        assert table.column("offset").to_pylist() == [o for o, _ in got]

    # -- invariants -------------------------------------------------------------------------

    @invariant()
    def offsets_agree(self) -> None:
        if hasattr(self, "log"):
            assert self.log.log_end_offset == self.leo
            assert self.log.log_start_offset == self.lso

    @invariant()
    def records_agree(self) -> None:
        if hasattr(self, "log"):
            assert [(r.offset, r.value) for r in self.log.records()] == self.model_records()


LogMachine.TestCase.settings = settings(
    max_examples=25, stateful_step_count=25, deadline=None,
    suppress_health_check=[HealthCheck.too_slow])
TestLogMachine = LogMachine.TestCase
