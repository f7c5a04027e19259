"""What the benchmark modules share: a best-of timer and the script entry that prints rows.

(Not a ``bench_*`` module, so ``run_all.py`` does not take it for an area; the modules import
it as ``timing``: their directory is on ``sys.path`` whether run as scripts or by
``run_all.py``.)
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any


def best_of(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """``(best seconds, last result)`` of ``repeat`` calls of ``fn``."""
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def script_main(run: Callable[[bool], list[dict]], doc: str | None) -> None:
    """``python benchmarks/bench_<area>.py [--quick]``: run and print each row with its
    baseline and ratio."""
    parser = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    for r in run(parser.parse_args().quick):
        baseline = "" if r.get("baseline") is None else f"  baseline {r['baseline']:>12,.0f}"
        ratio = "" if r.get("ratio") is None else f"  ratio {r['ratio']:.2f}x"
        print(f"{r['name']:48} {r['value']:>12,.0f} {r['unit']}{baseline}{ratio}")
