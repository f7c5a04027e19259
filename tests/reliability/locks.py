"""``kafkalog repair --in-place`` against directories someone holds (issue 16).

Shared by ``tests/reliability/test_locks.py`` and ``tools/reliability.py locks``. Run as
``python -m tests.reliability.locks hold KIND PATH READY STOP`` for the holder processes.

Holders (each a separate process, as in production):

``log``
    ``Log.open(partition)``, idle: a kafkalog writer between appends.
``live``
    ``Log.open(partition)`` appending small batches into 16 KB segments (a roll every few
    appends) until told to stop, then checking every record it wrote: the issue's reproducer
    (repair rewrote the active segment's indexes under it and it died of SIGBUS).
``logdir``
    ``LogDir.open(root)``: the root's ``.lock`` and every partition's lock.
``broker``
    What a Kafka broker holds: the ``fcntl`` record lock ``FileChannel.tryLock`` takes on the
    root's ``.lock`` (``LogManager.lockLogDirs``), nothing else.

For every holder and every repair mode (the partition directory or the whole log dir, with and
without ``--keep-later-segments``), the repair must exit with status 3 (refused), say so on
stderr, and leave every byte of every file under the log dir as it was (SHA-256 of each file
before and after, lock files included). With the holder gone, the same command must then run
(status 0 or 1) and change the damaged files.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.reliability.crash import REPO, expected_record

EXIT_LOCKED = 3


def _config() -> Any:
    from kafkalog.config import LogConfig

    return LogConfig(segment_bytes=16_000, index_interval_bytes=256,
                     segment_index_bytes=1 << 20)


def build_root(root: Path, seed: int = 0) -> list[Path]:
    """A log dir with two partitions written through ``LogDir`` (closed cleanly)."""
    from kafkalog.log_dir import LogDir

    with LogDir.open(root, _config()) as d:
        d.create_topic("t", 2)
        for p in range(2):
            log = d.log("t", p)
            for o in range(0, 300, 2):
                log.append([expected_record(seed, i) for i in range(o, o + 2)])
    return [root / "t-0", root / "t-1"]


def hashes(directory: Path) -> dict[str, str]:
    out = {}
    for p in sorted(directory.rglob("*")):
        if p.is_file():
            out[str(p.relative_to(directory))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


# -- holders ---------------------------------------------------------------------------------


def hold_main(kind: str, path: str, ready: str, stop: str) -> None:
    """Hold ``path`` as ``kind`` (see the module notes) until ``stop`` exists."""
    target = Path(path)
    result: dict[str, Any] = {}
    if kind == "broker":
        fd = os.open(target / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # Java's FileChannel.tryLock
        holder: Any = fd
    elif kind == "logdir":
        from kafkalog.log_dir import LogDir

        holder = LogDir.open(target, _config())
    else:
        from kafkalog.log import Log

        holder = Log.open(target, _config())
    Path(ready).write_text("ready")
    appended = 0
    while not os.path.exists(stop):
        if kind == "live":
            leo = holder.log_end_offset
            holder.append([expected_record(1, o) for o in range(leo, leo + 2)])
            appended += 2
            time.sleep(0.002)
        else:
            time.sleep(0.02)
    if kind == "live":
        # every record the writer wrote reads back (its mapped indexes were not rewritten)
        bad = sum(1 for r in holder.records() if r.value != expected_record(1, r.offset).value)
        result = {"appended": appended, "rolls": len(holder.segments), "bad_records": bad}
    if kind == "broker":
        os.close(holder)
    else:
        holder.close()
    Path(ready).write_text(json.dumps(result))


class Holder:
    """A holder process (context manager): started, waited for, stopped."""

    def __init__(self, kind: str, path: Path, workdir: Path) -> None:
        self.kind, self.path = kind, path
        n = len(list(workdir.glob("hold-*.ready")))
        self.ready = workdir / f"hold-{n}.ready"
        self.stop_file = workdir / f"hold-{n}.stop"
        self.proc: subprocess.Popen | None = None
        self.result: dict | None = None
        self.returncode: int | None = None

    def __enter__(self) -> Holder:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.reliability.locks", "hold", self.kind, str(self.path),
             str(self.ready), str(self.stop_file)], cwd=REPO, env=_child_env(),
            stderr=subprocess.PIPE)
        deadline = time.time() + 60
        while not self.ready.exists():
            if self.proc.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"holder {self.kind} failed: "
                                   f"{self.proc.stderr.read().decode()[-1500:]}")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.proc is not None
        self.stop_file.write_text("stop")
        _, err = self.proc.communicate(timeout=120)
        self.returncode = self.proc.returncode
        text = self.ready.read_text()
        self.result = json.loads(text) if text.startswith("{") else None
        self.stderr = err.decode(errors="replace")


def _child_env() -> dict:
    return dict(os.environ,
                PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def repair(directory: Path, keep_later: bool, *, subprocess_cli: bool = True
           ) -> subprocess.CompletedProcess:
    """``kafkalog repair DIR --in-place``: the real command line in its own process, or the
    CLI's ``main`` in this one (the holder is another process either way)."""
    args = ["repair", str(directory), "--in-place"]
    if keep_later:
        args.append("--keep-later-segments")
    if subprocess_cli:
        return subprocess.run([sys.executable, "-m", "kafkalog", *args], cwd=REPO,
                              env=_child_env(), capture_output=True, text=True, check=False)
    import contextlib
    import io

    from kafkalog import cli

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli.main(args)
    return subprocess.CompletedProcess(args, status, out.getvalue(), err.getvalue())


# -- the matrix ---------------------------------------------------------------------------------

#: (holder, what it holds: "root" or the partition "t-1")
HOLDERS = (("log", "t-1"), ("broker", "root"), ("logdir", "root"))
#: (repair target: the partition "t-1" or the log dir "root", --keep-later-segments)
TARGETS = (("t-1", False), ("t-1", True), ("root", False), ("root", True))


def _damage(partition: Path) -> None:
    """A torn tail on the last segment: something an in-place repair would change."""
    last = sorted(partition.glob("*.log"))[-1]
    with open(last, "ab") as f:
        f.write(b"\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x02\x00torn")


def run_locks(workdir: Path, seed: int = 0) -> dict:
    """Every holder against every in-place repair mode, then the live-writer reproducer.

    A ``log`` holder of ``t-1`` against a repair of the root is a standalone writer of one
    partition of a log dir. Per holder, the first repair is the real command line in its own
    process, the others the CLI's ``main`` in this process (the holder is another process
    either way); after the holder stops, one more real run must go through.
    """
    cases = []
    for n, (holder_kind, held) in enumerate(HOLDERS):
        root = workdir / f"root{n}"
        parts = build_root(root, seed)
        for p in parts:
            _damage(p)
        with Holder(holder_kind, root if held == "root" else root / held, workdir):
            for i, (target_name, keep_later) in enumerate(TARGETS):
                target = root if target_name == "root" else root / target_name
                before = hashes(root)
                p = repair(target, keep_later, subprocess_cli=i == 0)
                after = hashes(root)
                cases.append({
                    "holder": holder_kind, "held": held, "target": target_name,
                    "keep_later_segments": keep_later, "cli_process": i == 0,
                    "status": p.returncode, "stderr": p.stderr.strip()[-300:],
                    "files": len(before),
                    "changed_files": sorted(k for k in set(before) | set(after)
                                            if before.get(k) != after.get(k)),
                })
        # the holder gone, the same command goes through: the refusal was the lock's
        again = repair(root, False)
        cases[-1]["status_after_release"] = again.returncode
        cases[-1]["changed_after_release"] = hashes(root) != before
    live = _live_writer(workdir / "live-0")
    refused = [c for c in cases if c["status"] == EXIT_LOCKED and not c["changed_files"]
               and "locked" in c["stderr"]]
    released = [c for c in cases if "status_after_release" in c]
    return {
        "cases": cases,
        "repairs_refused": len(cases),
        "refused_with_no_byte_changed": len(refused),
        "files_hashed_per_case": max(c["files"] for c in cases),
        "failures": ([c for c in cases if c not in refused]
                     + [c for c in released if c["status_after_release"] not in (0, 1)
                        or not c["changed_after_release"]]
                     + ([live] if not live["ok"] else [])),
        "live_writer": live,
    }


def _live_writer(directory: Path) -> dict:
    """The issue's reproducer: repair --in-place --keep-later-segments, repeatedly, under a
    writer rolling every few appends."""
    directory.mkdir(parents=True)
    statuses = []
    h = Holder("live", directory, directory.parent)
    with h:
        for i in range(4):
            statuses.append(repair(directory, True, subprocess_cli=i == 0).returncode)
            time.sleep(0.1)
    from kafkalog.tools.verify import verify_partition

    errors = verify_partition(directory).count("error")
    ok = (h.returncode == 0 and statuses == [EXIT_LOCKED] * 4 and h.result is not None
          and h.result["bad_records"] == 0 and errors == 0)
    return {"repair_statuses": statuses, "writer_exit": h.returncode,
            "writer_signal": (signal.Signals(-h.returncode).name
                              if h.returncode is not None and h.returncode < 0 else None),
            "writer": h.result, "verify_errors_after": errors, "ok": ok}


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "hold":
        hold_main(*sys.argv[2:6])
    else:
        sys.exit("usage: python -m tests.reliability.locks hold KIND PATH READY STOP")
