"""Client peers run as processes (sarama in Go, kafkajs in JavaScript): records cross their
stdin and stdout as JSON lines, bytes in base64 (null for a null key); a group member runs until
its stdin closes, then leaves its group. Used by tests/server/test_sarama.py and
tests/server/test_kafkajs.py."""

from __future__ import annotations

import base64
import json
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kafkalog import Log, Record, iter_batches

DEADLINE_S = 60


def b64(b: bytes | None) -> str | None:
    return None if b is None else base64.b64encode(b).decode()


def unb64(s: str | None) -> bytes | None:
    return None if s is None else base64.b64decode(s)


def run_json_lines(argv: list[str], stdin: str = "") -> list[dict[str, Any]]:
    """Run a peer command to its end; its stdout's JSON lines (a failure fails the test)."""
    r = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"{' '.join(argv)} failed: {r.stderr}"
    return [json.loads(line) for line in r.stdout.splitlines()]


def wait_until(cond: Callable[[], bool], what: str, state: Callable[[], str]) -> None:
    """Poll ``cond`` until it holds; fail with ``state()`` after :data:`DEADLINE_S`."""
    deadline = time.monotonic() + DEADLINE_S
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}: {state()}"
        time.sleep(0.05)


class MemberProcess:
    """A consumer-group member in its own process, its events read by a thread.

    Subclasses handle their peer's events in :meth:`on_event`; ``"msg"`` events (``topic``,
    ``p``, ``o``, ``v``) and ``"closed"`` are common. The member leaves when :meth:`leave`
    closes its stdin."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.member_id = ""
        #: topic -> partitions held (sorted), as the member last reported them
        self.assignment: dict[str, list[int]] = {}
        self.values: list[tuple[str, int, int, bytes | None]] = []
        self.errors: list[str] = []
        self.closed = False
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            ev = json.loads(line)
            if ev["event"] == "msg":
                self.values.append((ev["topic"], ev["p"], ev["o"], unb64(ev["v"])))
            elif ev["event"] == "closed":
                self.closed = True
            else:
                self.on_event(ev)

    def on_event(self, ev: dict[str, Any]) -> None:
        raise NotImplementedError

    def assigned(self) -> set[tuple[str, int]]:
        return {(t, p) for t, ps in self.assignment.items() for p in ps}

    def leave(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._reader.join(10)

    def state(self) -> str:
        return (f"{self.member_id or '?'}: assignment {self.assignment}, {len(self.values)} "
                f"records, errors {self.errors[-2:]}, exit {self.proc.poll()}")


def fill(server: Any, topics: dict[str, int], per_partition: int, start: int = 0,
         compression: str = "snappy") -> None:
    """``per_partition`` records ``topic/partition/i`` appended to every partition (on the
    server's loop, which wakes waiting fetches)."""

    def append() -> None:
        for topic, n in topics.items():
            for p in range(n):
                log = server.broker.log(topic, p)
                log.append([Record(None, f"{topic}/{p}/{start + i}".encode(), 1_700_000_000_000)
                            for i in range(per_partition)], compression=compression)
                server.broker.notify((topic, p))

    server.call(append)


def produce_lines(records: list[tuple[bytes | None, bytes, list[tuple[str, bytes]]]],
                  partitions: int, t0: int) -> str:
    """Record i goes to partition i % partitions with timestamp t0 + i."""
    return "".join(json.dumps({"p": i % partitions, "k": b64(k), "v": b64(v),
                               "h": [[hk, b64(hv)] for hk, hv in h], "ts": t0 + i}) + "\n"
                   for i, (k, v, h) in enumerate(records))


def as_records(got: list[dict[str, Any]]) -> list[tuple[bytes | None, bytes | None, list]]:
    return [(unb64(g["k"]), unb64(g["v"]), [(k, unb64(v)) for k, v in g["h"]]) for g in got]


def engine_batches(log_dir: Path, topic: str, partition: int) -> list[Any]:
    """Every batch of the partition, segment after segment (one ``read`` stops at the end of
    a segment)."""
    out: list[Any] = []
    with Log.open(log_dir / f"{topic}-{partition}", read_only=True) as log:
        offset = log.log_start_offset
        while offset < log.log_end_offset:
            batches = list(iter_batches(log.read(offset, 1 << 30)))
            out += batches
            offset = batches[-1].next_offset
    return out


def engine_records(log_dir: Path, topic: str, partition: int) -> list[Any]:
    return [r for b in engine_batches(log_dir, topic, partition) for r in b]


def assert_columnar_agrees(log_dir: Path, topic: str, partition: int) -> None:
    """The columnar decoder (``Log.read_table``: numba kernels, chunk by chunk) gives the row
    path's records, field for field, on a client's bytes (its own compressor's frames)."""
    rows = engine_records(log_dir, topic, partition)
    with Log.open(log_dir / f"{topic}-{partition}", read_only=True) as log:
        table = log.read_table().to_pylist()
    assert [(t["offset"], t["timestamp"], t["key"], t["value"],
             [(h["key"], h["value"]) for h in t["headers"]]) for t in table] == \
        [(r.offset, r.timestamp, r.key, r.value, list(r.headers)) for r in rows]


def append_across_rolls(server: Any, topic: str, records: list[tuple[bytes | None, bytes,
                                                                     list[tuple[str, bytes]]]],
                        t0: int, codec: str, per_batch: int = 97) -> None:
    """Append ``records`` to partition 0 (timestamps ``t0 + i``) in batches of ``per_batch``,
    on the server's loop, into a topic created with small segments: they must roll more than
    3 times, so that a client's fetches cross segment ends. The high watermark follows."""

    def append() -> None:
        log = server.broker.log(topic, 0)
        for start in range(0, len(records), per_batch):
            log.append([Record(k, v, t0 + start + j, headers=h)
                        for j, (k, v, h) in enumerate(records[start:start + per_batch])],
                       compression=codec)
        assert len(log.segments) > 3
        server.broker.log_dir.set_high_watermark(topic, 0, log.log_end_offset)

    server.call(append)
