"""Bad input at every public entry point: TypeError for a wrong type, a KafkaLogError for a bad
value, and no partial write. Cases found and not fixed are strict xfails (badinput.KNOWN)."""

from __future__ import annotations

import pytest

from tests.reliability import badinput


@pytest.fixture(scope="module")
def outcome(tmp_path_factory):
    return {r["call"]: r for r in badinput.run_badinput(tmp_path_factory.mktemp("bad"))["rows"]}


@pytest.mark.parametrize("call", [
    pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=badinput.KNOWN[c]))
    if c in badinput.KNOWN else c
    for c, _, _ in badinput.cases()])
def test_entry_point(outcome, call):
    row = outcome[call]
    assert row["ok"], row
