"""Shared test fixtures: one way to find ../shared/fixtures, skipping cleanly when absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED_FIXTURES = Path(
    os.environ.get("KAFKALOG_SHARED_FIXTURES", ROOT.parent / "shared" / "fixtures")
)


def shared_fixture_path(*parts: str) -> Path:
    """Path under ../shared/fixtures; skips the calling test when it is not there."""
    p = SHARED_FIXTURES.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"shared fixture {p} not available")
    return p


def scala213_jar() -> Path | None:
    """Scala 2.13's library jar (pyspark ships one), to check JVM collection orders against a
    JVM; None when pyspark is not installed."""
    try:
        import pyspark
    except ImportError:
        return None
    jars = sorted((Path(pyspark.__file__).parent / "jars").glob("scala-library-2.13*.jar"))
    return jars[-1] if jars else None


@pytest.fixture(scope="session")
def shared_fixtures() -> Path:
    """The ../shared/fixtures directory (skips when absent)."""
    if not SHARED_FIXTURES.is_dir():
        pytest.skip(f"shared fixtures not found at {SHARED_FIXTURES}")
    return SHARED_FIXTURES
