"""Every package of the source tree is one the wheel ships (``[tool.setuptools] packages`` in
pyproject.toml lists them by hand: a new package left out installs fine in editable mode and is
missing from a built wheel)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_is_listed_in_pyproject() -> None:
    if sys.version_info < (3, 11):
        pytest.skip("tomllib needs Python >= 3.11")
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
                 ["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts)
             for p in (ROOT / "kafkalog").rglob("__init__.py")
             if "jvm" not in p.parts and "__pycache__" not in p.parts}
    # native/ (the numba kernels) is installed as kafkalog.native (package-dir)
    found |= {"kafkalog.native"} if (ROOT / "native" / "__init__.py").exists() else set()
    assert found - listed == set(), "packages missing from pyproject.toml"
    assert listed - found == set(), "pyproject.toml lists packages that do not exist"
