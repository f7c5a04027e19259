#!/usr/bin/env python
"""Long decoder fuzz run: coverage-guided with atheris (libFuzzer) when it is installed, else
the structure-unaware mutator of ``tests/reliability/fuzz.py`` in a loop; then every hostile
input (decompression bombs, huge declared lengths/counts) in its own process for its memory.

The fuzzing itself runs in child processes: a child that dies by a signal (a crash in a
compiled kernel or codec library) is counted and replaced, so the run goes on::

    python tools/fuzz_decode.py --seconds 600 --out /tmp/fuzz.json
    python tools/fuzz_decode.py --seconds 60 --engine mutate     # without atheris

Targets (tests/reliability/fuzz.py ``TARGETS``): iter_batches, decode_columns, decompress (every
codec and magic), OffsetIndex, TimeIndex, TransactionIndex, offset and leader-epoch checkpoint
readers. Contract: every input returns or raises a ``KafkaLogError``; anything else is counted
with its traceback in the report.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.reliability import fuzz  # noqa: E402

NAMES = list(fuzz.TARGETS)


# -- child: atheris --------------------------------------------------------------------------


def child_atheris(findings: str, corpus_dir: str, seconds: int, rss_mb: int) -> None:
    import atheris

    # numba kernels must stay uninstrumented (atheris' bytecode hooks break nopython typing):
    # import them first, and exclude them
    import kafkalog.native.index_search  # noqa: F401
    import kafkalog.native.records_decode  # noqa: F401
    import kafkalog.native.scan  # noqa: F401
    import kafkalog.native.varint  # noqa: F401

    with atheris.instrument_imports(include=["kafkalog"], exclude=["kafkalog.native"]):
        import kafkalog.checkpoint  # noqa: F401
        import kafkalog.index.offset_index  # noqa: F401
        import kafkalog.index.time_index  # noqa: F401
        import kafkalog.index.txn_index  # noqa: F401
        import kafkalog.records.batch  # noqa: F401
        import kafkalog.records.columnar  # noqa: F401
        import kafkalog.records.compression  # noqa: F401
    fd = os.open(findings, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def one(data: bytes) -> None:
        if not data:
            return
        name = NAMES[data[0] % len(NAMES)]
        v = fuzz.run_target(name, data[1:])
        if v is not None:
            os.write(fd, (json.dumps({"violation": v, "input": data.hex()}) + "\n").encode())

    atheris.Setup([sys.argv[0], corpus_dir, f"-max_total_time={seconds}", f"-rss_limit_mb={rss_mb}",
                   "-timeout=20", "-print_final_stats=1", "-max_len=65536"], one)
    atheris.Fuzz()


def write_seed_corpus(corpus_dir: Path) -> None:
    c = fuzz.corpus()
    for i, name in enumerate(NAMES):
        for j, data in enumerate(c[fuzz.TARGETS[name][0]]):
            (corpus_dir / f"seed-{name}-{j}").write_bytes(bytes([i]) + data[:65535])


# -- child: mutation loop ----------------------------------------------------------------------


def child_mutate(findings: str, seconds: float, seed: int, stats: str) -> None:
    c = fuzz.corpus()
    rnd = random.Random(seed)
    fd = os.open(findings, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    n, t_end = 0, time.time() + seconds
    while time.time() < t_end:
        for _ in range(100):
            name = rnd.choice(NAMES)
            seeds = c[fuzz.TARGETS[name][0]]
            data = fuzz.mutate(rnd, rnd.choice(seeds), seeds) if rnd.random() < 0.9 \
                else rnd.randbytes(rnd.randrange(200))
            v = fuzz.run_target(name, data)
            n += 1
            if v is not None:
                os.write(fd, (json.dumps({"violation": v, "input": data.hex()}) + "\n").encode())
        Path(stats).write_text(json.dumps({"runs": n, "maxrss_mib": fuzz.maxrss_mib()}))


# -- parent --------------------------------------------------------------------------------------


def run_fuzz(seconds: float, engine: str, rss_mb: int, workdir: Path) -> dict:
    findings = workdir / "findings.jsonl"
    corpus_dir = workdir / "corpus"
    corpus_dir.mkdir()
    write_seed_corpus(corpus_dir)
    runs = crashes = ooms = timeouts = 0
    peak_rss = 0.0
    crash_notes: list[str] = []
    t_end = time.time() + seconds
    seed = 0
    while time.time() < t_end - 1:
        left = max(1, int(t_end - time.time()))
        stats = workdir / "stats.json"
        stats.unlink(missing_ok=True)
        cmd = [sys.executable, __file__, "--child", engine, "--findings", str(findings),
               "--corpus", str(corpus_dir), "--seconds", str(left), "--rss-mb", str(rss_mb),
               "--seed", str(seed), "--stats", str(stats)]
        p = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
        seed += 1
        err = p.stderr
        if engine == "atheris":
            m = re.findall(r"stat::number_of_executed_units: (\d+)", err)
            if m:
                runs += int(m[-1])
            else:
                done = re.findall(r"#(\d+)\s", err)
                runs += int(done[-1]) if done else 0
            rss = re.findall(r"rss: (\d+)Mb", err) + re.findall(r"stat::peak_rss_mb: (\d+)", err)
            if rss:
                peak_rss = max(peak_rss, max(float(x) for x in rss))
            if "out-of-memory" in err:
                ooms += 1
                crash_notes.append(err[-1500:])
            elif "ERROR: libFuzzer: timeout" in err:
                timeouts += 1
                crash_notes.append(err[-1500:])
            elif "deadly signal" in err or p.returncode < 0 or (
                    p.returncode != 0 and "ERROR: libFuzzer" in err):
                crashes += 1
                crash_notes.append(err[-1500:])
            elif p.returncode != 0:
                crash_notes.append(f"child exit {p.returncode}: {err[-1500:]}")
                crashes += 1
        else:
            if stats.exists():
                st = json.loads(stats.read_text())
                runs += st["runs"]
                peak_rss = max(peak_rss, st["maxrss_mib"])
            if p.returncode != 0:
                crashes += 1
                sig = -p.returncode if p.returncode < 0 else None
                crash_notes.append(f"child exit {p.returncode} "
                                   f"({signal.Signals(sig).name if sig else ''}): {err[-1500:]}")
    violations = []
    if findings.exists():
        violations = [json.loads(line) for line in findings.read_text().splitlines() if line]
    distinct: dict[str, dict] = {}
    for v in violations:
        distinct.setdefault(v["violation"].split("\n")[0][:200], v)
    return {
        "engine": engine, "seconds": seconds, "inputs_tried": runs,
        "non_kafkalog_exceptions": len(violations),
        "distinct_non_kafkalog_exceptions": list(distinct.values())[:20],
        "kernel_crashes": crashes, "out_of_memory": ooms, "timeouts": timeouts,
        "child_restarts": seed - 1, "peak_rss_mib": peak_rss, "crash_notes": crash_notes[:5],
        "corpus_files": len(list(corpus_dir.iterdir())),
    }


def run_hostile_all(bomb_mib: int) -> dict:
    results = {}
    for name, (target, data) in fuzz.hostile_inputs(bomb_mib << 20).items():
        with tempfile.NamedTemporaryFile(delete=False) as f:
            pickle.dump((target, data), f)
        try:
            p = subprocess.run([sys.executable, "-m", "tests.reliability.fuzz", "hostile",
                                f.name], capture_output=True, text=True, cwd=REPO)
        finally:
            os.unlink(f.name)
        if p.returncode != 0 or not p.stdout.strip():
            results[name] = {"violation": f"child exit {p.returncode}: {p.stderr[-800:]}"}
        else:
            results[name] = json.loads(p.stdout.strip().splitlines()[-1])
    worst = max((r.get("maxrss_growth_mib", 0) for r in results.values()), default=0)
    return {"bomb_mib": bomb_mib, "inputs": results,
            "violations": sum(1 for r in results.values() if r.get("violation")),
            "max_maxrss_growth_mib": worst,
            "max_maxrss_mib": max((r.get("maxrss_mib", 0) for r in results.values()),
                                  default=0)}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seconds", type=float, default=600)
    p.add_argument("--engine", choices=["atheris", "mutate"], default=None)
    p.add_argument("--rss-mb", type=int, default=2048)
    p.add_argument("--bomb-mib", type=int, default=1024)
    p.add_argument("--skip-hostile", action="store_true")
    p.add_argument("--out")
    p.add_argument("--child", choices=["atheris", "mutate"], help=argparse.SUPPRESS)
    p.add_argument("--findings", help=argparse.SUPPRESS)
    p.add_argument("--corpus", help=argparse.SUPPRESS)
    p.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--stats", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child == "atheris":
        child_atheris(a.findings, a.corpus, int(a.seconds), a.rss_mb)
        return 0
    if a.child == "mutate":
        child_mutate(a.findings, a.seconds, a.seed, a.stats)
        return 0
    engine = a.engine
    if engine is None:
        try:
            import atheris  # noqa: F401

            engine = "atheris"
        except ImportError:
            engine = "mutate"
    with tempfile.TemporaryDirectory(prefix="kafkalog-fuzz-") as w:
        out = {"fuzz": run_fuzz(a.seconds, engine, a.rss_mb, Path(w))}
    if not a.skip_hostile:
        out["hostile"] = run_hostile_all(a.bomb_mib)
    text = json.dumps(out, indent=2)
    print(text)
    if a.out:
        Path(a.out).write_text(text + "\n")
    f = out["fuzz"]
    bad = f["non_kafkalog_exceptions"] or f["kernel_crashes"] or f["out_of_memory"] or (
        out.get("hostile", {}).get("violations"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
