"""Bad input at every public entry point: a clear error, and no partial write.

Shared by ``tests/reliability/test_badinput.py`` and ``tools/reliability.py badinput``.

The rule we hold the engine to (documented in RELIABILITY.md):

* an argument of the wrong Python **type** (a string offset, an int where records are
  expected, a ``str`` key) raises ``TypeError``;
* a value of the right type that is **out of range or malformed** (negative or too large
  offsets, unknown codec names, oversize records, bad config values, corrupt batch bytes) raises
  a ``KafkaLogError`` subclass (the value errors among them are also ``ValueError``s);
* a failed call writes nothing: the log end offset and every file's size are unchanged, and the
  log keeps working (a valid append afterwards lands at the old log end offset).
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

T0 = 1_700_000_000_000

TYPE = "TypeError"
VALUE = "KafkaLogError"
EITHER = "TypeError or KafkaLogError"
#: accepted as a Kafka broker accepts it (documented in RELIABILITY.md)
OK = "accepted"

#: found by this scenario and not fixed: (call, reason). The CI test marks each strict xfail.
KNOWN: dict[str, str] = {}


def _sizes(d: Path) -> dict[str, int]:
    return {p.name: p.stat().st_size for p in sorted(d.iterdir()) if p.is_file()
            and p.name != ".kafkalog.lock"}


def cases() -> list[tuple[str, str, Callable[[Any], Any]]]:
    """``(description, expected kind, call(log))``."""
    from kafkalog.log import Log
    from kafkalog.records.builder import encode_batch
    from kafkalog.records.record import Record

    r = Record(b"k", b"v", T0)
    big = Record(None, b"x" * 1_100_000, T0)
    good = encode_batch([r], base_offset=10_000)
    c: list[tuple[str, str, Callable[[Any], Any]]] = [
        # append
        ("append(5)", TYPE, lambda log: log.append(5)),
        ("append([5])", TYPE, lambda log: log.append([5])),
        ("append(['abc'])", TYPE, lambda log: log.append(["abc"])),
        ("append: str key", TYPE, lambda log: log.append([Record("k", b"v", T0)])),
        ("append: str value", TYPE, lambda log: log.append([Record(b"k", "v", T0)])),
        ("append: str timestamp", TYPE, lambda log: log.append([Record(b"k", b"v", "now")])),
        ("append: float timestamp", TYPE, lambda log: log.append([Record(b"k", b"v", 1.5)])),
        ("append: header value str", TYPE,
         lambda log: log.append([Record(b"k", b"v", T0, [("h", "x")])])),
        ("append: header key bytes", TYPE,
         lambda log: log.append([Record(b"k", b"v", T0, [(b"h", b"x")])])),
        ("append: malformed header", TYPE,
         lambda log: log.append([Record(b"k", b"v", T0, [("h",)])])),
        ("append: third record bad (no partial write)", TYPE,
         lambda log: log.append([r, r, Record(b"k", 7, T0)])),
        ("append: timestamp beyond int64", VALUE,
         lambda log: log.append([Record(b"k", b"v", 2**63)])),
        ("append: timestamp below -1", OK,
         lambda log: log.append([Record(b"k", b"v", -5)])),
        ("append: unknown codec 'brotli'", VALUE,
         lambda log: log.append([r], compression="brotli")),
        ("append: codec id 9", VALUE, lambda log: log.append([r], compression=9)),
        ("append: codec None", EITHER, lambda log: log.append([r], compression=None)),
        ("append: record above max.message.bytes", VALUE, lambda log: log.append([big])),
        ("append: producer_id 'x'", TYPE, lambda log: log.append([r], producer_id="x")),
        ("append: producer_epoch 70000", VALUE, lambda log: log.append([r], producer_epoch=70000)),
        ("append: partition_leader_epoch 2**31", VALUE,
         lambda log: log.append([r], partition_leader_epoch=2**31)),
        ("append: base_sequence -5", OK, lambda log: log.append([r], base_sequence=-5)),
        ("append: records_per_batch 0 (columnar)", VALUE,
         lambda log: log.append(_table(), records_per_batch=0)),
        ("append: table without value column", VALUE,
         lambda log: log.append(_table(drop="value"))),
        # append_batches
        ("append_batches('abc')", TYPE, lambda log: log.append_batches("abc")),
        ("append_batches(123)", TYPE, lambda log: log.append_batches(123)),
        ("append_batches(garbage)", VALUE, lambda log: log.append_batches(b"\x01" * 100)),
        ("append_batches(torn batch)", VALUE, lambda log: log.append_batches(good[:-3])),
        ("append_batches(bad crc)", VALUE,
         lambda log: log.append_batches(good[:-1] + bytes([good[-1] ^ 1]))),
        ("append_batches(offset below log end)", VALUE,
         lambda log: log.append_batches(encode_batch([r], base_offset=0))),
        ("append_batches(good + garbage: no partial write)", VALUE,
         lambda log: log.append_batches(good + b"\x00" * 30)),
        # reads
        ("read(-1)", VALUE, lambda log: log.read(-1)),
        ("read(log end + 1)", VALUE, lambda log: log.read(log.log_end_offset + 1)),
        ("read(2**63)", VALUE, lambda log: log.read(2**63)),
        ("read('0')", TYPE, lambda log: log.read("0")),
        ("read(0.5)", TYPE, lambda log: log.read(0.5)),
        ("read(0, max_bytes=-1)", VALUE, lambda log: log.read(0, -1)),
        ("read(0, max_bytes='x')", TYPE, lambda log: log.read(0, "x")),
        ("records(-1)", VALUE, lambda log: list(log.records(-1))),
        ("records(log end + 5)", VALUE, lambda log: list(log.records(log.log_end_offset + 5))),
        ("records('a')", TYPE, lambda log: list(log.records("a"))),
        ("records(0, 'b')", TYPE, lambda log: list(log.records(0, "b"))),
        ("read_table(-1)", VALUE, lambda log: log.read_table(-1)),
        ("read_table(columns=['nope'])", VALUE, lambda log: log.read_table(columns=["nope"])),
        ("read_table('x')", TYPE, lambda log: log.read_table("x")),
        ("offset_for_timestamp('x')", TYPE, lambda log: log.offset_for_timestamp("x")),
        ("offset_for_timestamp(None)", TYPE, lambda log: log.offset_for_timestamp(None)),
        ("offset_for_timestamp(-7)", OK, lambda log: log.offset_for_timestamp(-7)),
        ("end_offset_for_epoch('x')", TYPE, lambda log: log.end_offset_for_epoch("x")),
        # truncation, start offset, retention
        ("truncate_to(-1)", VALUE, lambda log: log.truncate_to(-1)),
        ("truncate_to('3')", TYPE, lambda log: log.truncate_to("3")),
        ("truncate_to(None)", TYPE, lambda log: log.truncate_to(None)),
        ("delete_records_before(log end + 10)", VALUE,
         lambda log: log.delete_records_before(log.log_end_offset + 10)),
        ("delete_records_before(-3)", OK, lambda log: log.delete_records_before(-3)),
        ("delete_records_before('1')", TYPE, lambda log: log.delete_records_before("1")),
        ("enforce_retention(now='x')", TYPE, lambda log: log.enforce_retention("x")),
        # opening and configuration
        ("Log.open(123)", TYPE, lambda log: Log.open(123)),
        ("Log.open(config='x')", TYPE,
         lambda log: Log.open(log.directory.parent / "other-0", "x")),
        ("Log.open(same dir, second writer)", VALUE, lambda log: Log.open(log.directory)),
    ]
    from kafkalog.config import LogConfig

    for kw in ({"segment_bytes": -1}, {"segment_bytes": "big"}, {"segment_bytes": 10},
               {"index_interval_bytes": -4}, {"max_message_bytes": 2**40},
               {"retention_ms": "7d"}, {"message_timestamp_type": "Whenever"},
               {"cleanup_policy": ("shred",)}, {"segment_bytes": True},
               {"segment_index_bytes": 3}, {"file_delete_delay_ms": -1}):
        c.append((f"LogConfig({kw})", VALUE, lambda log, kw=kw: LogConfig(**kw)))
    for props in ({"segment.bytes": "abc"}, {"segment.bytes": "-1"},
                  {"retention.ms": "1e3"}, {"cleanup.policy": "shred"},
                  {"message.timestamp.type": "Whenever"}, {"max.message.bytes": "99999999999"}):
        c.append((f"LogConfig.from_properties({props})", VALUE,
                  lambda log, props=props: LogConfig.from_properties(props)))
    # decoders
    from kafkalog.records.batch import iter_batches
    from kafkalog.records.columnar import decode_columns
    from kafkalog.records.compression import compress, decompress

    c += [
        ("iter_batches(123)", TYPE, lambda log: list(iter_batches(123))),
        ("iter_batches(b'\\xff' * 70)", VALUE, lambda log: list(iter_batches(b"\xff" * 70))),
        ("decode_columns(1.5)", TYPE, lambda log: decode_columns(1.5)),
        ("decompress('brotli', b'')", VALUE, lambda log: decompress("brotli", b"")),
        ("decompress('gzip', 'text')", TYPE, lambda log: decompress("gzip", "text")),
        ("decompress('zstd', data, magic=1)", VALUE,
         lambda log: decompress("zstd", compress("zstd", b"abc"), magic=1)),
        ("compress('lz5', b'')", VALUE, lambda log: compress("lz5", b"")),
        ("encode_batch(magic=7)", VALUE, lambda log: encode_batch([r], magic=7)),
        ("encode_batch(compression='brotli')", VALUE,
         lambda log: encode_batch([r], compression="brotli")),
    ]
    return c


def _table(drop: str | None = None) -> Any:
    import pyarrow as pa

    t = pa.table({"key": pa.array([b"a", b"b"]), "value": pa.array([b"1", b"2"]),
                  "timestamp": pa.array([T0, T0 + 1], pa.int64())})
    return t.drop_columns([drop]) if drop else t


def run_badinput(workdir: Path) -> dict:
    from kafkalog.errors import KafkaLogError
    from kafkalog.log import Log
    from kafkalog.records.record import Record

    d = workdir / "topic-0"
    log = Log.open(d)
    log.append([Record(b"k%d" % i, b"v%d" % i, T0 + i) for i in range(20)])
    log.flush()
    rows = []
    violations = []
    for desc, expected, call in cases():
        before_leo, before = log.log_end_offset, _sizes(d)
        got = "returned"
        try:
            res = call(log)
            if isinstance(res, Log) and res is not log:
                res.close()
        except TypeError as e:
            got = "TypeError"
            detail = str(e)
        except KafkaLogError as e:
            got = type(e).__name__
            detail = str(e)
        except Exception as e:  # noqa: BLE001 - classifying is the point
            got = f"{type(e).__name__} (not a KafkaLogError)"
            detail = "".join(traceback.format_exception(e))[-800:]
        else:
            detail = repr(res)[:100]
        is_kle = got not in ("returned", "TypeError") and "not a KafkaLogError" not in got
        ok_kind = {TYPE: got == "TypeError", VALUE: is_kle, EITHER: got == "TypeError" or is_kle,
                   OK: got == "returned" or is_kle}[expected]
        if expected == OK:
            changed = False  # an accepted append writes, by definition
        else:
            changed = log.log_end_offset != before_leo or _sizes(d) != before
        row = {"call": desc, "expected": expected, "got": got, "detail": detail[:300],
               "partial_write": changed, "ok": ok_kind and not changed}
        rows.append(row)
        if not row["ok"]:
            violations.append(row)
        # the log keeps working after every failure
        leo = log.log_end_offset
        info = log.append([Record(b"ok", b"ok", T0)])
        if info.first_offset != leo:
            violations.append({"call": desc, "got": f"next append at {info.first_offset}"})
    log.close()
    unknown = [v for v in violations if v["call"] not in KNOWN]
    return {"entry_points_tried": len(rows), "violations": violations,
            "known_unfixed": len(violations) - len(unknown),
            "failures": len(unknown), "rows": rows}
