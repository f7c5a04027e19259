"""The README's Python tour runs as written (paths moved under a temporary directory).

The Spark example is exercised by tests/spark/test_spark_source.py::test_readme_example.
"""

from __future__ import annotations

import contextlib
import io
import re

import pytest

from tests.conftest import ROOT

BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
TOUR = [b for b in BLOCKS if "pyspark" not in b and "spark." not in b]


def test_readme_has_a_tour() -> None:
    assert len(TOUR) >= 3


@pytest.mark.parametrize("block", TOUR, ids=lambda b: b.strip().splitlines()[0][:40])
def test_readme_block_runs(block: str, tmp_path) -> None:
    code = block.replace('"/data/', f'"{tmp_path}/')
    server = None
    if '"broker1:9092"' in code:
        # the mirror example: its broker is a kafkalog serve holding the topic it names
        pytest.importorskip("kio", reason="kafkalog mirror and serve need kio (server extra)")
        from kafkalog import LogDir, Record
        from tests.server.conftest import start_server

        with LogDir.open(tmp_path / "source") as d:
            d.create_topic("orders", 1)
            d.log("orders", 0).append([Record(b"k", b"v")])
        server = start_server(tmp_path / "source")
        code = code.replace('"broker1:9092"', f'"{server.address}"').replace(
            '"/backup/', f'"{tmp_path}/backup/')
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(code, "README.md", "exec"), {})
    finally:
        if server is not None:
            server.stop()
    if "read_committed" in code:
        # the aborted record must not be read back
        assert out.getvalue().splitlines()[-1] == "[]"
