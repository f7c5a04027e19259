"""Run every benchmark module and rewrite ``benchmarks/RESULTS.md``.

Convention for ``benchmarks/bench_<area>.py`` modules (one per area: codec, index, log, spark):

* the module defines ``run(quick: bool = False) -> list[dict]``; each dict is one row with keys
  ``name`` (str, dotted, e.g. ``decode.lz4.vs_aiokafka``), ``value`` (float, our figure),
  ``unit`` (str: ``records/s``, ``bytes/s``, ``s``...), ``baseline`` (float or None: the peer's
  figure measured in the same run, same unit), ``ratio`` (float or None, oriented so that
  **> 1 means kafkalog is better**: ``value / baseline`` for rates, ``baseline / value`` for
  times) and ``note`` (str: workload, peer and version, anything needed to read the row);
* ``quick=True`` must finish in well under a minute (smaller inputs, fewer repeats);
* JIT warm-up happens outside the timed region; nothing is asserted about timings;
* the module is also runnable as a script (``python benchmarks/bench_<area>.py [--quick]``).

This runner imports each module, calls ``run(quick)``, and writes RESULTS.md: the exact
command, the machine (CPU model, cores, Python, library versions), then one section per module
with its rows. Sections of modules not run this time (``--only``) are kept from the previous
file, each still under the header of the run that produced it.

Usage::

    python benchmarks/run_all.py [--quick] [--only codec,index] [--output benchmarks/RESULTS.md]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import re
import sys
import time
import traceback
from importlib import metadata
from pathlib import Path

HERE = Path(__file__).resolve().parent
LIBRARIES = ["kafkalog", "numpy", "numba", "llvmlite", "pyarrow", "crc32c", "cramjam",
             "zstandard", "lz4", "python-snappy", "kafka-python", "aiokafka", "pyspark"]
SECTION = re.compile(r"<!-- bench:(?P<name>[\w-]+) -->\n(?P<body>.*?)<!-- /bench:(?P=name) -->",
                     re.S)


def discover() -> dict[str, Path]:
    """bench_<area>.py modules next to this file, by area name."""
    return {p.stem[len("bench_"):]: p for p in sorted(HERE.glob("bench_*.py"))}


def load(path: Path):
    if str(path.parent) not in sys.path:  # the modules import their shared helpers (timing)
        sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> list[str]:
    versions = []
    for lib in LIBRARIES:
        try:
            versions.append(f"{lib} {metadata.version(lib)}")
        except metadata.PackageNotFoundError:
            continue
    try:
        import aiokafka.record.memory_records as amr

        compiled = "_crecords" in amr.MemoryRecords.__module__
    except ImportError:
        compiled = None
    aio = ("n/a" if compiled is None else "active" if compiled else "NOT active")
    try:
        load_avg = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        load_avg = "n/a"
    return [
        f"- CPU: {cpu_model()}, {os.cpu_count()} logical cores "
        f"({platform.system()} {platform.release()}, {platform.machine()})",
        f"- Python {platform.python_version()} ({platform.python_implementation()})",
        f"- Libraries: {', '.join(versions)}",
        f"- aiokafka compiled extension (_crecords): {aio}"
        + (f" (AIOKAFKA_NO_EXTENSIONS={os.environ['AIOKAFKA_NO_EXTENSIONS']})"
           if "AIOKAFKA_NO_EXTENSIONS" in os.environ else ""),
        f"- Load average at start (1/5/15 min): {load_avg}",
    ]


def format_rows(rows: list[dict]) -> str:
    def fmt(x: object) -> str:
        if x is None:
            return "-"
        if isinstance(x, float):
            return f"{x:,.3g}" if abs(x) < 1000 else f"{x:,.0f}"
        return str(x)

    lines = ["| name | value | unit | baseline | ratio (>1 = kafkalog better) | note |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        ratio = "-" if r.get("ratio") is None else f"{r['ratio']:.2f}x"
        lines.append(f"| {r['name']} | {fmt(r.get('value'))} | {r.get('unit', '')} | "
                     f"{fmt(r.get('baseline'))} | {ratio} | {r.get('note', '')} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run kafkalog benchmarks, rewrite RESULTS.md")
    parser.add_argument("--quick", action="store_true", help="small inputs (smoke run)")
    parser.add_argument("--only", default="", help="comma-separated areas (default: all)")
    parser.add_argument("--output", default=str(HERE / "RESULTS.md"))
    args = parser.parse_args(argv)
    modules = discover()
    wanted = [a for a in args.only.split(",") if a] or list(modules)
    unknown = [a for a in wanted if a not in modules]
    if unknown:
        parser.error(f"unknown area(s) {unknown}; found {sorted(modules)}")
    command = "python benchmarks/run_all.py" + (" --quick" if args.quick else "") + (
        f" --only {args.only}" if args.only else "")
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    header = [f"Run `{command}` on {stamp}:", "", *machine()]
    out_path = Path(args.output)
    previous = {}
    if out_path.exists():
        previous = {m["name"]: m.group(0) for m in SECTION.finditer(out_path.read_text())}
    sections = dict(previous)
    failed = 0
    for area in wanted:
        print(f"== bench_{area} ==", flush=True)
        try:
            module = load(modules[area])
            if not callable(getattr(module, "run", None)):
                raise TypeError(f"bench_{area}.py defines no run(quick) -> list[dict] "
                                "(see the convention at the top of run_all.py)")
            rows = module.run(quick=args.quick)
            table = format_rows(rows)
        except Exception:  # a broken module must not hide the others' results
            failed += 1
            table = "Failed:\n\n```\n" + traceback.format_exc() + "```"
        print(table, flush=True)
        body = "\n".join([f"## {area}", "", *header, "", table, ""])
        sections[area] = f"<!-- bench:{area} -->\n{body}<!-- /bench:{area} -->"
    doc = [
        "# Benchmark results",
        "",
        "Written by `benchmarks/run_all.py` (do not edit by hand: rerun it). Every ratio compares "
        "figures measured in the same process and run; > 1 means kafkalog is better. The "
        "machine is shared, so figures vary by tens of percent between runs.",
        "",
    ]
    for area in sorted(sections):
        doc += [sections[area], ""]
    out_path.write_text("\n".join(doc))
    print(f"wrote {out_path}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
