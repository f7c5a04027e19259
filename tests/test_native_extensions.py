"""The optional C extensions (``native/*.c``) are optional for users, not for CI (aiokafka's
pattern): a build that silently failed would leave their tests exercising only the Python
twins. And ``optional_extension`` honours ``KAFKALOG_NO_EXTENSIONS``."""

from __future__ import annotations

import importlib
import os

import pytest
from kafkalog.native import OPTIONAL_EXTENSIONS, optional_extension


@pytest.mark.parametrize("name", OPTIONAL_EXTENSIONS)
def test_extension_is_built_and_used_unless_disabled(name: str) -> None:
    if os.environ.get("KAFKALOG_NO_EXTENSIONS"):
        assert optional_extension(name) is None
        pytest.skip("KAFKALOG_NO_EXTENSIONS is set: the pure-Python path is under test")
    try:
        module = importlib.import_module(f"kafkalog.native.{name}")
    except ImportError as e:  # pragma: no cover - the failure this test is for
        pytest.fail(f"kafkalog.native.{name} was not built (a C compiler is needed): {e}")
    assert optional_extension(name) is module


def test_every_c_source_is_listed() -> None:
    here = os.path.join(os.path.dirname(__file__), "..", "native")
    sources = sorted(f[:-2] for f in os.listdir(here) if f.endswith(".c"))
    assert sources == sorted(OPTIONAL_EXTENSIONS)
