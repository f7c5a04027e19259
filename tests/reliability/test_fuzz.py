"""Decoder fuzzing (CI budget): for any bytes, iter_batches, decode_columns, decompress and the
index and checkpoint readers return or raise a KafkaLogError; hostile inputs (decompression
bombs, huge declared lengths and counts) stay within a memory bound. The long run is
``python tools/fuzz_decode.py`` (atheris when installed), recorded in RELIABILITY.md."""

from __future__ import annotations

import json
import pickle
import random
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.reliability import fuzz
from tests.reliability.crash import REPO

CORPUS = fuzz.corpus()
SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("target", sorted(fuzz.TARGETS))
def test_seed_corpus_decodes(target):
    for data in CORPUS[fuzz.TARGETS[target][0]]:
        assert fuzz.run_target(target, data) is None


@pytest.mark.parametrize("target", sorted(fuzz.TARGETS))
@SETTINGS
@given(data=st.binary(max_size=400))
def test_random_bytes(target, data):
    assert fuzz.run_target(target, data) is None


@pytest.mark.parametrize("target", sorted(fuzz.TARGETS))
@SETTINGS
@given(seed=st.integers(0, 2**32 - 1))
def test_mutated_valid_inputs(target, seed):
    rnd = random.Random(seed)
    seeds = CORPUS[fuzz.TARGETS[target][0]]
    data = fuzz.mutate(rnd, rnd.choice(seeds), seeds)
    assert fuzz.run_target(target, data) is None


def test_hostile_inputs_bounded_memory(tmp_path):
    """All hostile inputs in one child process (a crash there fails the test instead of the
    run; the full run gives each input its own process): no violation, and the resident set
    grows by less than 200 MiB over the warmed-up baseline (the bombs expand to 64 MiB here,
    1 GiB in the full run; the decoders stop at 1 MiB)."""
    inputs = fuzz.hostile_inputs(64 << 20)
    f = tmp_path / "cases.pkl"
    f.write_bytes(pickle.dumps(list(inputs.values())))
    p = subprocess.run([sys.executable, "-m", "tests.reliability.fuzz", "hostile", str(f)],
                       capture_output=True, text=True, cwd=REPO, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    outs = [json.loads(line) for line in p.stdout.strip().splitlines()]
    assert len(outs) == len(inputs)
    for name, out in zip(inputs, outs):
        assert out["violation"] is None, (name, out)
        assert out["maxrss_growth_mib"] < 200, (name, out)
