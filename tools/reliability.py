#!/usr/bin/env python
"""Run the reliability scenarios at their full budget and print the figures (JSON).

The CI runs small budgets of the same scenarios (``pytest tests/reliability``); this runner is
what RELIABILITY.md's figures come from::

    python tools/reliability.py crash --trials 200          # SIGKILL (+ power-loss) trials
    python tools/reliability.py damage --trials 300         # torn writes and media damage
    python tools/reliability.py concurrency --seconds 60    # writer + thread/process readers
    python tools/reliability.py resources                   # disk full, EACCES, lock
    python tools/reliability.py badinput                    # every public entry point
    python tools/reliability.py readers --seconds 120       # reader processes vs a rolling writer
    python tools/reliability.py locks                       # repair --in-place on held dirs
    python tools/reliability.py paths                       # hostile topic names, every path maker
    python tools/fuzz_decode.py --seconds 600               # decoder fuzzing (separate tool)

Each prints one JSON document (and writes it to ``--out`` when given).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def cmd_crash(a: argparse.Namespace) -> dict:
    from tests.reliability.crash import run_trial, summarize

    results = []
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="kafkalog-crash-") as w:
        for i in range(a.trials):
            seed = a.seed + i
            # odd seeds simulate a power loss on top of the SIGKILL
            r = run_trial(Path(w), seed, power_loss=seed % 2 == 1, max_wait=a.max_wait)
            results.append(r)
            if not r.ok:
                print(f"trial {seed} FAILED: {r}", file=sys.stderr)
            if a.verbose:
                print(f"trial {seed}: acked {r.acked} appended {r.appended} recovered "
                      f"{r.recovered} lost(flushed) {r.flushed_lost} lost(unflushed) "
                      f"{r.unflushed_lost}", file=sys.stderr)
    out = summarize(results)
    out["sigkill_only"] = summarize(r for r in results if not r.power_loss)
    out["with_power_loss"] = summarize(r for r in results if r.power_loss)
    out["seconds"] = round(time.time() - t0, 1)
    return out


def cmd_damage(a: argparse.Namespace) -> dict:
    from tests.reliability.damage import run_campaign

    return run_campaign(trials=a.trials, seed=a.seed)


def cmd_concurrency(a: argparse.Namespace) -> dict:
    from tests.reliability.concurrency import run_concurrency

    with tempfile.TemporaryDirectory(prefix="kafkalog-conc-") as w:
        return run_concurrency(Path(w), seconds=a.seconds, threads=a.threads,
                               processes=a.processes, seed=a.seed)


def cmd_resources(a: argparse.Namespace) -> dict:
    from tests.reliability.resources import run_resources

    with tempfile.TemporaryDirectory(prefix="kafkalog-res-") as w:
        return run_resources(Path(w), trials=a.trials)


def cmd_badinput(a: argparse.Namespace) -> dict:
    from tests.reliability.badinput import run_badinput

    with tempfile.TemporaryDirectory(prefix="kafkalog-bad-") as w:
        return run_badinput(Path(w))


def cmd_readers(a: argparse.Namespace) -> dict:
    from tests.reliability.readers import run_readers, run_shrink

    with tempfile.TemporaryDirectory(prefix="kafkalog-readers-") as w:
        shrink = run_shrink(Path(w) / "shrink", seed=a.seed)
        out = run_readers(Path(w) / "stress", seconds=a.seconds, seed=a.seed,
                          round_seconds=a.round_seconds)
    out["files_cut_under_each_reader"] = shrink
    out["failures"] = (out["readers_killed_by_signal"] + out["violation_count"]
                       + sum(v != "ok" for v in shrink.values()))
    return out


def cmd_locks(a: argparse.Namespace) -> dict:
    from tests.reliability.locks import run_locks

    with tempfile.TemporaryDirectory(prefix="kafkalog-locks-") as w:
        return run_locks(Path(w), seed=a.seed)


def cmd_paths(a: argparse.Namespace) -> dict:
    from tests.reliability.paths import run_paths

    with tempfile.TemporaryDirectory(prefix="kafkalog-paths-") as w:
        out = run_paths(Path(w))
    out["all"] = [f"{c['maker']} / {c['name']}: {c['outcome']}: {c['message'][:120]}"
                  for c in out["all"]]
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", help="also write the JSON figures to this file")
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("crash")
    c.add_argument("--trials", type=int, default=200)
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--max-wait", type=float, default=1.5)
    c.add_argument("-v", "--verbose", action="store_true")
    c.set_defaults(fn=cmd_crash)
    d = sub.add_parser("damage")
    d.add_argument("--trials", type=int, default=300)
    d.add_argument("--seed", type=int, default=0)
    d.set_defaults(fn=cmd_damage)
    k = sub.add_parser("concurrency")
    k.add_argument("--seconds", type=float, default=60)
    k.add_argument("--threads", type=int, default=3)
    k.add_argument("--processes", type=int, default=2)
    k.add_argument("--seed", type=int, default=0)
    k.set_defaults(fn=cmd_concurrency)
    r = sub.add_parser("resources")
    r.add_argument("--trials", type=int, default=50)
    r.set_defaults(fn=cmd_resources)
    b = sub.add_parser("badinput")
    b.set_defaults(fn=cmd_badinput)
    rd = sub.add_parser("readers")
    rd.add_argument("--seconds", type=float, default=120)
    rd.add_argument("--round-seconds", type=float, default=4.0)
    rd.add_argument("--seed", type=int, default=0)
    rd.set_defaults(fn=cmd_readers)
    lk = sub.add_parser("locks")
    lk.add_argument("--seed", type=int, default=0)
    lk.set_defaults(fn=cmd_locks)
    pa = sub.add_parser("paths")
    pa.set_defaults(fn=cmd_paths)
    a = p.parse_args(argv)
    out = a.fn(a)
    text = json.dumps(out, indent=2, default=str)
    print(text)
    if a.out:
        Path(a.out).write_text(text + "\n")
    failed = (out.get("flushed_lost") or out.get("failures") or out.get("failed_trials")
              or out.get("mismatched"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
