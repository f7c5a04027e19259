"""The deep-iteration fast path (columnar ``RecordBlock``) against the record-object path.

``kafkalog.tools.dump._fast_deep_ok`` decides whether ``dump-segments --deep-iteration`` /
``--print-data-log`` decode v2 batches column-wise. These tests dump the same randomized logs
twice, once with the fast path and once with it switched off, and require byte-identical stdout,
stderr, findings and exit status: ordinary batches, headers, nulls, invalid UTF-8, compression,
sequences that wrap, LogAppendTime, control batches, legacy entries, CRC-broken batches, batches
whose records are malformed under a valid CRC, and partial tails.
"""

from __future__ import annotations

import io
import os
import struct

import crc32c
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkalog import cli
from kafkalog.records.builder import encode_batch, encode_end_txn_marker
from kafkalog.records.legacy import encode_legacy
from kafkalog.records.record import Record
from kafkalog.tools import dump as d

T = 1700000000000
INT_MAX = 2147483647

_bytes = st.one_of(st.none(), st.binary(max_size=12), st.sampled_from([b"\xff\xfe", b"k%d%%s"]))
_header = st.tuples(
    st.sampled_from(["a", "h,1", "\u00e9", ""]), st.one_of(st.none(), st.binary(max_size=4))
)
_record = st.builds(
    lambda k, v, dt, hs: (k, v, dt, hs),
    _bytes,
    _bytes,
    st.integers(0, 1000),
    st.lists(_header, max_size=2),
)


@st.composite
def _entry(draw: st.DrawFn, base_offset: int) -> tuple[bytes, int]:
    """One log entry starting at ``base_offset``: (bytes, number of offsets it takes)."""
    kind = draw(st.sampled_from(["v2"] * 6 + ["control", "legacy"]))
    if kind == "control":
        return encode_end_txn_marker(
            draw(st.booleans()),
            producer_id=7,
            producer_epoch=1,
            coordinator_epoch=3,
            base_offset=base_offset,
            timestamp=T,
        ), 1
    if kind == "legacy":
        return encode_legacy(
            [(b"lk", b"lv", T)], base_offset=base_offset, magic=draw(st.sampled_from([0, 1]))
        ), 1
    recs = draw(st.lists(_record, min_size=0, max_size=5))
    seq = draw(st.sampled_from([-1, 0, INT_MAX - 1, -5]))
    producer = {} if seq == -1 else {"producer_id": 9, "producer_epoch": 0}
    gap = draw(st.sampled_from([1, 1, 1, 3]))  # compaction-like gaps: non-consecutive offsets
    data = (
        encode_batch(
            [
                Record(k, v, T + dt, hs, offset=base_offset + i * gap)
                for i, (k, v, dt, hs) in enumerate(recs)
            ],
            base_offset=base_offset,
            compression=draw(st.sampled_from(["none", "none", "gzip", "lz4"])),
            timestamp_type=draw(st.sampled_from(["create", "create", "log_append"])),
            log_append_time=T + 5,
            base_sequence=seq,
            **producer,
        )
        if recs
        else b""
    )
    return data, max(1, len(recs) * gap)


def _set_crc(b: bytearray, pos: int, size: int) -> None:
    struct.pack_into(">I", b, pos + 17, crc32c.crc32c(bytes(b[pos + 21 : pos + size])))


@st.composite
def _log(draw: st.DrawFn) -> bytes:
    out = bytearray()
    offset = draw(st.sampled_from([0, 100]))
    for _ in range(draw(st.integers(1, 6))):
        data, used = draw(_entry(offset))
        if not data:
            continue
        pos = len(out)
        out += data
        offset += used
        damage = draw(st.sampled_from(["none"] * 5 + ["flip", "flip_recrc"]))
        if damage != "none" and len(data) > 62 and out[pos + 16] == 2:
            at = pos + draw(st.integers(61, len(data) - 1))
            out[at] ^= draw(st.integers(1, 255))
            if damage == "flip_recrc":  # malformed records under a valid CRC
                _set_crc(out, pos, len(data))
    cut = draw(st.integers(0, 20))
    return bytes(out[: len(out) - cut] if cut < len(out) else out)


def _dump(path: str, opts: d.DumpOptions) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    rc = cli.run_dump(opts, [path], stdout=out, stderr=err)
    return rc, out.getvalue(), err.getvalue()


def _both(path: str, opts: d.DumpOptions, monkeypatch) -> None:
    fast = _dump(path, opts)
    with monkeypatch.context() as m:
        m.setattr(d, "_fast_deep_ok", lambda o: False)
        slow = _dump(path, opts)
    assert fast == slow


_OPTS = st.sampled_from(
    [
        dict(deep_iteration=True),
        dict(deep_iteration=True, print_data_log=True),
        dict(
            deep_iteration=True,
            print_data_log=True,
            parser=d.DecoderParser(key_decoder="hex", value_decoder="base64"),
        ),
        dict(deep_iteration=True, shape=d.parse_kafka_version("2.7")),
        dict(deep_iteration=True, print_data_log=True, shape=d.parse_kafka_version("trunk")),
    ]
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=_log(), kw=_OPTS)
def test_fast_deep_matches_record_path(tmp_path, monkeypatch, data, kw):
    path = os.path.join(tmp_path, "00000000000000000000.log")
    with open(path, "wb") as f:
        f.write(data)
    _both(path, d.DumpOptions(**kw), monkeypatch)


def test_a_negative_base_sequence_gives_records_no_sequence(tmp_path, monkeypatch):
    """DefaultRecord.readFrom: ``baseSequence >= 0 ? incrementSequence(..) : NO_SEQUENCE``
    (a base sequence of -5 is not -1, yet its records have none); the batch's lastSequence
    only treats -1 as none (DefaultRecordBatch.lastSequence)."""
    path = os.path.join(tmp_path, "00000000000000000000.log")
    with open(path, "wb") as f:
        f.write(encode_batch([Record(b"k", b"v", T), Record(b"k", b"w", T)], producer_id=7,
                             producer_epoch=0, base_sequence=-5))
    for fast in (True, False):
        with monkeypatch.context() as m:
            if not fast:
                m.setattr(d, "_fast_deep_ok", lambda o: False)
            rc, out, _ = _dump(path, d.DumpOptions(deep_iteration=True))
        assert rc == 0
        assert "lastSequence: -4" in out
        assert out.count("sequence: -1 ") == 2, out


def test_fast_path_is_taken(tmp_path, monkeypatch):
    """The fast path really produces RecordBlocks for ordinary batches (else the test above
    would compare the slow path with itself)."""
    path = os.path.join(tmp_path, "00000000000000000000.log")
    with open(path, "wb") as f:
        f.write(
            encode_batch(
                [Record(b"k", b"v", T, [("h", b"1")])],
                producer_id=1,
                producer_epoch=0,
                base_sequence=INT_MAX,
            )
        )
        f.write(encode_batch([Record(None, b"\xff", T)], base_offset=1, compression="gzip"))
    opts = d.DumpOptions(deep_iteration=True, print_data_log=True)
    items = list(d.dump_file(path, opts))
    assert [type(i).__name__ for i in items].count("RecordBlock") == 2
    rc, out, _err = _dump(path, opts)
    assert rc == 0
    lines = out.splitlines()
    assert lines[3] == (
        "| offset: 0 CreateTime: 1700000000000 keySize: 1 valueSize: 1 sequence: 2147483647"
        " headerKeys: [h] key: k payload: v"
    )
    assert lines[5] == (
        "| offset: 1 CreateTime: 1700000000000 keySize: -1 valueSize: 1 sequence: -1"
        " headerKeys: [] payload: \ufffd"
    )
    _both(path, opts, monkeypatch)
