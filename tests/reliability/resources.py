"""Resource faults: disk full (RLIMIT_FSIZE -> EFBIG; a small tmpfs -> ENOSPC), permission loss
mid-append, and the one-writer lock.

Shared by ``tests/reliability/test_resources.py`` and ``tools/reliability.py resources``.

Each fault runs in a child process (the limit, the mount or the lost privileges stay there). The
child appends, flushing now and then and recording acknowledged offsets in a side file, until
the fault hits; every later call must fail with an exception reaching the caller (never a
crash, never a silent success that was not written), the log end offset must not move on a
failed append, and reads must still work. The parent then reopens the directory without the
fault: every acknowledged record is there, intact, ``kafkalog verify`` finds no error, and
appends continue at the log end offset.
"""

from __future__ import annotations

import errno
import json
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import traceback
from pathlib import Path
from typing import Any

from tests.reliability.crash import REPO, expected_record, verify_errors


def config(**kw: Any) -> Any:
    from kafkalog.config import LogConfig

    base = dict(segment_bytes=120_000, segment_index_bytes=4096, index_interval_bytes=512)
    base.update(kw)
    return LogConfig(**base)


# -- child -----------------------------------------------------------------------------------


def child_main(mode: str, directory: str, seed: int, arg: int, side: str) -> None:
    """Append under ``mode`` ("fsize", "enospc", "eacces") until the fault; report JSON."""
    from kafkalog.errors import KafkaLogError
    from kafkalog.log import Log

    out: dict = {"mode": mode, "errors": [], "violations": [], "acked": 0}
    rnd = random.Random(seed)
    if mode == "fsize":
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # write() then fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (arg, arg))
    log = Log.open(directory, config())
    if mode == "eacces":
        # load every lazily imported module and kernel while numba can still write its cache
        # (as "nobody" it cannot, and a first import would fail for that reason instead)
        log.append([expected_record(seed, 0)] if log.log_end_offset == 0 else [])
        list(log.records(log.log_start_offset))
        log.read_table()
        for c in ("gzip", "zstd"):
            leo = log.log_end_offset
            log.append([expected_record(seed, leo)], compression=c)
        for _ in range(20):
            leo = log.log_end_offset
            log.append([expected_record(seed, o) for o in range(leo, leo + 50)])
        log.flush()  # acknowledged while still allowed to write: must survive what follows
        out["acked"] = log.log_end_offset
        with open(side, "w") as f:
            f.write(str(out["acked"]))
        os.setgid(65534)
        os.setuid(65534)  # nobody: the directory (root, 0755) is no longer writable
    failures = 0
    try:
        while failures < 6:
            leo = log.log_end_offset
            n = rnd.choice([1, 10, 50])
            try:
                if rnd.random() < 0.3:
                    log.flush()
                    out["acked"] = log.log_end_offset
                    with open(side, "w") as f:
                        f.write(str(out["acked"]))
                elif rnd.random() < 0.05:
                    log.roll()
                else:
                    log.append([expected_record(seed, o) for o in range(leo, leo + n)],
                               compression=rnd.choice(["none", "gzip", "zstd"]))
                    if mode == "eacces" and log.log_end_offset > 3000 and failures == 0:
                        log.roll()  # a new segment file: EACCES
            except (OSError, KafkaLogError) as e:
                failures += 1
                name = type(e).__name__
                code = errno.errorcode.get(getattr(e, "errno", 0) or 0, "")
                out["errors"].append(f"{name} {code}".strip())
                if log.log_end_offset != leo:
                    out["violations"].append(
                        f"failed call moved the log end offset {leo} -> {log.log_end_offset}")
                # reads still work after the fault, and see exactly what was written
                try:
                    for r in log.records(max(log.log_start_offset, leo - 20)):
                        if tuple(r[:4]) != tuple(expected_record(seed, r.offset)[:4]):
                            out["violations"].append(f"record {r.offset} differs after fault")
                            break
                except Exception as re_:  # noqa: BLE001
                    out["violations"].append(f"read after fault: {type(re_).__name__}: {re_}")
            except Exception as e:  # noqa: BLE001
                out["violations"].append(f"unexpected {type(e).__name__}: {e}\n"
                                         + "".join(traceback.format_exception(e))[-1500:])
                break
            if log.log_end_offset > 200_000:
                out["violations"].append("the fault never happened")
                break
    finally:
        try:
            log.close()
        except (OSError, KafkaLogError) as e:
            out["close_error"] = f"{type(e).__name__} {e}"[:300]
        out["leo_at_exit"] = log.log_end_offset
    print(json.dumps(out))


# -- parent ----------------------------------------------------------------------------------


def _run_child(mode: str, d: Path, seed: int, arg: int) -> dict:
    side = d.parent / f"{d.name}.acked"
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-m", "tests.reliability.resources", "child", mode,
                        str(d), str(seed), str(arg), str(side)],
                       capture_output=True, text=True, cwd=REPO, env=env, timeout=600)
    res: dict = {"returncode": p.returncode}
    if p.returncode != 0 or not p.stdout.strip():
        res["violations"] = [f"child exit {p.returncode}: {p.stderr[-1500:]}"]
        res["acked"] = int(side.read_text()) if side.exists() else 0
        return res
    res.update(json.loads(p.stdout.strip().splitlines()[-1]))
    return res


def _check_reopen(d: Path, seed: int, acked: int, res: dict) -> None:
    from kafkalog.log import Log

    try:
        with Log.open(d, config()) as log:
            leo = log.log_end_offset
            if leo < acked:
                res["violations"].append(f"reopened at {leo}, below the acknowledged {acked}")
            res["flushed_lost"] = max(0, acked - leo)
            expect = log.log_start_offset
            for r in log.records():
                if r.offset != expect or tuple(r[:4]) != tuple(expected_record(seed, r.offset)[:4]):
                    res["violations"].append(f"record at {r.offset} (expected {expect}) differs")
                    break
                expect += 1
            info = log.append([expected_record(seed, leo)])
            if info.first_offset != leo:
                res["violations"].append(f"append after reopen at {info.first_offset}")
        errs = verify_errors(d)
        if errs:
            res["violations"].append(f"verify: {errs[:2]}")
    except Exception as e:  # noqa: BLE001
        res["violations"].append(f"reopen failed: {type(e).__name__}: {e}")


def trial(workdir: Path, mode: str, seed: int) -> dict:
    rnd = random.Random(seed)
    d = workdir / f"{mode}-{seed}" / "topic-0"
    mount = None
    arg = 0
    if mode == "fsize":
        arg = rnd.choice([30_000, 60_000, 90_000, 119_000])
        d.mkdir(parents=True)
    elif mode == "enospc":
        mount = d.parent
        mount.mkdir(parents=True)
        size_kb = rnd.choice([256, 400, 700])
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kb}k", "tmpfs",
                            str(mount)], capture_output=True, text=True)
        if r.returncode != 0:
            return {"mode": mode, "skipped": f"cannot mount tmpfs: {r.stderr.strip()}"}
        d.mkdir()
        arg = size_kb
    else:
        d.mkdir(parents=True)
        os.chmod(d, 0o755)
    try:
        res = _run_child(mode, d, seed, arg)
        res.setdefault("violations", [])
        if mount is not None:
            # the fault is over: copy out of the full filesystem, as an operator would
            dst = workdir / f"{mode}-{seed}-copy" / "topic-0"
            shutil.copytree(d, dst)
        else:
            dst = d
        _check_reopen(dst, seed, res.get("acked", 0), res)
        res["arg"] = arg
        return res
    finally:
        if mount is not None:
            subprocess.run(["umount", str(mount)], capture_output=True)


def lock_checks(workdir: Path) -> dict:
    """A second writer (same process, another process) is refused; a reader is not."""
    from kafkalog.errors import LogLockedError
    from kafkalog.log import Log

    d = workdir / "lock" / "topic-0"
    out: dict = {"violations": []}
    with Log.open(d, config()) as log:
        log.append([expected_record(0, 0)])
        log.flush()
        try:
            Log.open(d, config()).close()
            out["violations"].append("second writer in the same process was not refused")
        except LogLockedError as e:
            out["same_process"] = str(e)[:200]
        code = ("from kafkalog.log import Log; from kafkalog.errors import LogLockedError\n"
                f"try:\n    Log.open({str(d)!r})\nexcept LogLockedError as e:\n"
                "    print('refused', e)\nelse:\n    print('OPENED')\n"
                f"r = Log.open({str(d)!r}, read_only=True); print('reader', r.log_end_offset)")
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           cwd=REPO)
        out["other_process"] = p.stdout.strip()[:300]
        if "refused" not in p.stdout or "OPENED" in p.stdout or "reader 1" not in p.stdout:
            out["violations"].append(f"other process: {p.stdout} {p.stderr[-500:]}")
    return out


def run_resources(workdir: Path, trials: int = 10) -> dict:
    results: dict = {}
    for mode in ("fsize", "enospc", "eacces"):
        rs = [trial(workdir, mode, s) for s in range(trials)]
        done = [r for r in rs if "skipped" not in r]
        results[mode] = {
            "trials": len(done),
            "skipped": len(rs) - len(done),
            "acked_records": sum(r.get("acked", 0) for r in done),
            "flushed_lost": sum(r.get("flushed_lost", 0) for r in done),
            "errors_seen": sorted({e for r in done for e in r.get("errors", [])}),
            "close_errors": sum(1 for r in done if r.get("close_error")),
            "violations": [v for r in done for v in r["violations"]][:10],
            "violation_count": sum(len(r["violations"]) for r in done),
        }
    results["lock"] = lock_checks(workdir)
    results["failures"] = sum(v.get("violation_count", 0) for k, v in results.items()
                              if k != "lock") + len(results["lock"]["violations"])
    return results


if __name__ == "__main__":
    if len(sys.argv) == 7 and sys.argv[1] == "child":
        child_main(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6])
    else:
        sys.exit("usage: python -m tests.reliability.resources child MODE DIR SEED ARG SIDE")
