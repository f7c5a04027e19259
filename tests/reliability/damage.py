"""Torn writes and media damage: mutate a known log directory, reopen, judge the outcome.

Shared by ``tests/reliability/test_damage.py`` (CI budget) and ``tools/reliability.py damage``.

A base log is built once (several segments, every codec, leader epochs, record content a pure
function of the offset: :func:`tests.reliability.crash.expected_record`). Each trial copies it,
applies one mutation, and opens it in one of two states:

``clean``
    as a cleanly closed log (marker present): Kafka does not recover it, so damage below the
    recovery point is only found when read; reading must then raise a ``KafkaLogError``.
``unclean``
    marker removed and recovery point 0 (as after a crash): every segment is recovered, so the
    log must open to a **prefix** of what was written and read back without any error.

Outcome rules (both states): ``Log.open`` either succeeds or raises a ``KafkaLogError`` carrying
the file path; no other exception type ever. Everything read back (``records``, ``read_table``,
``read`` + ``iter_batches``, ``offset_for_timestamp``) is exactly what was written at that offset
(a record that differs would be a bad CRC accepted, or an index sending a read to the wrong
place), offsets contiguous from the log start offset; a read may instead raise a
``KafkaLogError``. After an unclean open, ``kafkalog verify`` finds no error and an append
continues at the log end offset.
"""

from __future__ import annotations

import os
import random
import shutil
import tempfile
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.reliability.crash import T0, expected_record, verify_errors

SEED = 4242
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")


def config() -> Any:
    from kafkalog.config import LogConfig

    return LogConfig(segment_bytes=60_000, index_interval_bytes=300,
                     segment_index_bytes=10_485_760)


def build_base(directory: Path) -> dict:
    """Write the base log; returns facts about it (log end offset, last batch bounds)."""
    from kafkalog.log import Log

    rnd = random.Random(SEED)
    log = Log.open(directory, config())
    epoch = 0
    while log.log_end_offset < 1500:
        leo = log.log_end_offset
        n = rnd.choice([1, 3, 10, 25])
        if rnd.random() < 0.1:
            epoch += 1
        log.append([expected_record(SEED, o) for o in range(leo, leo + n)],
                   compression=rnd.choice(CODECS), partition_leader_epoch=epoch)
    leo = log.log_end_offset
    last_pos = log.active_segment.size
    # a small last batch so that "truncate at every byte" stays a few hundred opens
    log.append([expected_record(SEED, o) for o in range(leo, leo + 3)],
               partition_leader_epoch=epoch)
    facts = {
        "leo": log.log_end_offset,
        "last_log": log.active_segment.log_path.name,
        "last_batch_start": last_pos,
        "last_batch_end": log.active_segment.size,
        "segments": len(log.segments),
    }
    log.close()
    return facts


_base_cache: dict[str, Any] = {}


def base() -> tuple[Path, dict]:
    if "dir" not in _base_cache:
        d = Path(tempfile.mkdtemp(prefix="kafkalog-damage-base-")) / "topic-0"
        _base_cache["facts"] = build_base(d)
        _base_cache["dir"] = d
    return _base_cache["dir"], _base_cache["facts"]


# -- mutations ---------------------------------------------------------------------------------


def _files(d: Path, suffix: str) -> list[Path]:
    return sorted(p for p in d.iterdir() if p.name.endswith(suffix))


def truncate_last_batch(d: Path, facts: dict, cut: int) -> str:
    p = d / facts["last_log"]
    os.truncate(p, cut)
    return f"truncate {p.name} at {cut}"


def zero_tail(d: Path, rnd: random.Random) -> str:
    p = _files(d, ".log")[-1]
    size = p.stat().st_size
    if rnd.random() < 0.5:  # zeros after the end (preallocated space, a lost metadata update)
        extra = rnd.choice([1, 11, 12, 61, 4096])
        with open(p, "ab") as f:
            f.write(b"\0" * extra)
        return f"append {extra} zero bytes to {p.name}"
    k = rnd.randint(1, min(size, 2048))  # the last k bytes never reached the disk
    with open(p, "r+b") as f:
        f.seek(size - k)
        f.write(b"\0" * k)
    return f"zero the last {k} bytes of {p.name}"


def flip_bits(d: Path, rnd: random.Random, kind: str) -> str:
    if kind in (".log", ".index", ".timeindex"):
        cands = [p for p in _files(d, kind) if p.stat().st_size > 0]
    else:
        cands = [d / kind] if (d / kind).exists() and (d / kind).stat().st_size else []
    if not cands:
        return f"no {kind} file to damage"
    p = rnd.choice(cands)
    data = bytearray(p.read_bytes())
    nbits = rnd.choice([1, 1, 2, 8])
    where = []
    for _ in range(nbits):
        i = rnd.randrange(len(data))
        data[i] ^= 1 << rnd.randrange(8)
        where.append(i)
    p.write_bytes(bytes(data))
    return f"flip {nbits} bit(s) of {p.name} at {sorted(where)}"


def damage_index(d: Path, rnd: random.Random) -> str:
    p = rnd.choice(_files(d, ".index") + _files(d, ".timeindex"))
    what = rnd.choice(["delete", "truncate", "truncate-odd", "empty"])
    if what == "delete":
        p.unlink()
    elif what == "empty":
        os.truncate(p, 0)
    else:
        size = p.stat().st_size
        cut = rnd.randrange(size + 1) if size else 0
        if what == "truncate" and size:
            cut -= cut % (8 if p.suffix == ".index" else 12)
        os.truncate(p, cut)
    return f"{what} {p.name}"


def garbage_tail(d: Path, rnd: random.Random) -> str:
    p = _files(d, ".log")[-1]
    n = rnd.choice([1, 5, 12, 61, 300])
    with open(p, "ab") as f:
        f.write(rnd.randbytes(n))
    return f"append {n} random bytes to {p.name}"


KINDS = (".log", ".index", ".timeindex", ".kafkalog-offsets", "leader-epoch-checkpoint")


def random_mutation(d: Path, facts: dict, rnd: random.Random) -> tuple[str, str]:
    """One mutation chosen at random; returns (family, description)."""
    family = rnd.choice(["torn", "zero", "flip", "flip", "flip", "index", "garbage"])
    if family == "torn":
        cut = rnd.randrange(facts["last_batch_start"], facts["last_batch_end"])
        return family, truncate_last_batch(d, facts, cut)
    if family == "zero":
        return family, zero_tail(d, rnd)
    if family == "flip":
        kind = rnd.choice(KINDS)
        return f"flip {kind}", flip_bits(d, rnd, kind)
    if family == "index":
        return family, damage_index(d, rnd)
    return family, garbage_tail(d, rnd)


# -- judging ------------------------------------------------------------------------------------


@dataclass
class Outcome:
    family: str
    mutation: str
    state: str
    opened: bool = False
    open_error: str | None = None
    read_error: str | None = None
    records: int = 0
    lost: int = 0  # records of the original log not readable after opening
    violations: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.violations


def _check_error(e: BaseException, out: Outcome, where: str) -> str:
    from kafkalog.errors import KafkaLogError

    if not isinstance(e, KafkaLogError):
        out.violations.append(f"{where}: {type(e).__name__} is not a KafkaLogError: {e}\n"
                              + "".join(traceback.format_exception(e))[-1500:])
    elif e.path is None:
        out.violations.append(f"{where}: {type(e).__name__} without a file: {e}")
    return f"{type(e).__name__}: {e}"


def judge(d: Path, facts: dict, state: str, family: str, mutation: str,
          rnd: random.Random) -> Outcome:
    from kafkalog.log import Log
    from kafkalog.records.batch import iter_batches

    out = Outcome(family, mutation, state)
    if state == "unclean":
        (d / ".kafka_cleanshutdown").unlink(missing_ok=True)
        if (d / ".kafkalog-offsets").exists() and family != "flip .kafkalog-offsets":
            (d / ".kafkalog-offsets").write_text("0\n2\nrecovery-point 0 0\nlog-start-offset 0 0\n")
    try:
        log = Log.open(d, config())
    except Exception as e:  # noqa: BLE001 - the point is to classify every exception
        out.open_error = _check_error(e, out, "open")
        out.lost = facts["leo"]
        return out
    out.opened = True
    try:
        lso, leo = log.log_start_offset, log.log_end_offset
        if leo > facts["leo"]:
            out.violations.append(f"log end offset {leo} above what was written {facts['leo']}")
        try:
            expect = lso
            for r in log.records():
                want = expected_record(SEED, r.offset)
                if r.offset != expect or tuple(r[:4]) != tuple(want[:4]):
                    out.violations.append(f"record at {r.offset} (expected offset {expect}) "
                                          f"differs from what was written: {r!r:.100}")
                    break
                expect += 1
                out.records += 1
            if not out.violations and expect != leo:
                out.violations.append(f"records stop at {expect}, log end offset {leo}")
            t = log.read_table()
            if t.num_rows != out.records or (
                    t.num_rows and t.column("offset").to_pylist() != list(range(lso, leo))):
                out.violations.append(f"read_table: {t.num_rows} rows, records(): {out.records}")
            for o in rnd.sample(range(lso, leo), min(20, leo - lso)) if leo > lso else []:
                batches = list(iter_batches(log.read(o, 2000)))
                if not batches or not (batches[0].base_offset <= o <= batches[0].last_offset):
                    out.violations.append(f"read({o}) starts at the wrong batch")
                found = log.offset_for_timestamp(T0 + o)
                if found != o:
                    out.violations.append(f"offset_for_timestamp({T0 + o}) = {found}, expected {o}")
                if out.violations:
                    break
        except Exception as e:  # noqa: BLE001
            out.read_error = _check_error(e, out, "read")
            if state == "unclean" and family != "flip .kafkalog-offsets":
                out.violations.append(f"unclean open recovered, yet reading failed: {e}")
        out.lost = facts["leo"] - (leo - lso) if out.read_error is None else facts["leo"]
        if state == "unclean" and out.read_error is None and not out.violations:
            info = log.append([expected_record(SEED, leo)])
            if info.first_offset != leo:
                out.violations.append(f"append after recovery at {info.first_offset}, "
                                      f"expected {leo}")
    finally:
        try:
            log.close()
        except Exception as e:  # noqa: BLE001
            _check_error(e, out, "close")
    if state == "unclean" and not out.violations and out.read_error is None:
        errs = verify_errors(d)
        if errs:
            out.violations.append(f"kafkalog verify after recovery: {errs[:3]}")
    return out


def run_one(workdir: Path, i: int, family: str | None, mutate: Any, state: str,
            rnd: random.Random) -> Outcome:
    src, facts = base()
    d = workdir / f"case-{i}" / "topic-0"
    shutil.copytree(src, d)
    fam, desc = mutate(d, facts, rnd)
    out = judge(d, facts, state, family or fam, desc, rnd)
    shutil.rmtree(d.parent, ignore_errors=True)
    return out


def torn_cases(stride: int = 1) -> list[int]:
    _, facts = base()
    return list(range(facts["last_batch_start"], facts["last_batch_end"], stride))


def run_campaign(trials: int, seed: int = 0, torn_stride: int = 1) -> dict:
    """Every byte of the last batch (both states) + ``trials`` random mutations per state."""
    rnd = random.Random(seed)
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="kafkalog-damage-") as w:
        wd = Path(w)
        i = 0
        for cut in torn_cases(torn_stride):
            for state in ("clean", "unclean"):
                def torn(d: Path, f: dict, r: random.Random, c: int = cut) -> tuple[str, str]:
                    return "torn", truncate_last_batch(d, f, c)

                outcomes.append(run_one(wd, i, "torn-every-byte", torn, state, rnd))
                i += 1
        for _ in range(trials):
            for state in ("clean", "unclean"):
                outcomes.append(run_one(wd, i, None, random_mutation, state, rnd))
                i += 1
    return summarize(outcomes)


def summarize(outcomes: list[Outcome]) -> dict:
    by: dict[str, Counter] = {}
    for o in outcomes:
        c = by.setdefault(f"{o.family}/{o.state}", Counter())
        c["cases"] += 1
        c["opened"] += o.opened
        c["open_error"] += o.open_error is not None
        c["read_error"] += o.read_error is not None
        c["records_lost"] += o.lost
        c["violations"] += not o.ok
        for err in (o.open_error, o.read_error):
            if err:
                c["raised " + err.split(":", 1)[0]] += 1
    failures = [{"mutation": o.mutation, "state": o.state, "violations": o.violations[:3]}
                for o in outcomes if not o.ok]
    return {"cases": len(outcomes), "failures": failures[:20],
            "failure_count": len(failures),
            "by_family": {k: dict(v) for k, v in sorted(by.items())}}
