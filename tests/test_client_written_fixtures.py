"""Segments four real clients wrote with their own compressors (tests/golden/client_written,
made by tools/client_written_fixtures.py through ``kafkalog serve``): sarama's Go codecs
(including its default zstd level, -1000: frames of barely compressed blocks), kafkajs's
JavaScript and wasm ones (raw snappy, LZ4 frames over lz4js), librdkafka's (batches it stored
uncompressed when gzip did not shrink them) and aiokafka's.

Every reader of the engine gives the records each client was given, at the offsets it was told:
the row path (``iter_batches``), the columnar kernels (``decode_table``), a log opened on the
directory (recovery rebuilds the indexes; ``Log.read_table``), ``dump-segments
--deep-iteration`` and ``verify --deep``. The Spark readers are checked on the same files in
tests/spark/test_spark_jvm.py.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from kafkalog import Log, decode_table, iter_batches
from kafkalog.cli import main as cli_main

FIXTURES = Path(__file__).parent / "golden" / "client_written"
DOC = json.loads((FIXTURES / "expected.json").read_text())
PARTITIONS = sorted(DOC["partitions"])


def _bytes(s: str | None) -> bytes | None:
    return None if s is None else base64.b64decode(s)


def expected_rows() -> list[tuple[int, int, bytes | None, bytes | None, list]]:
    return [(r["offset"], r["timestamp"], _bytes(r["key"]), _bytes(r["value"]),
             [(k, _bytes(v)) for k, v in r["headers"]]) for r in DOC["records"]]


def table_rows(table: Any) -> list[tuple[int, int, bytes | None, bytes | None, list]]:
    return [(t["offset"], t["timestamp"], t["key"], t["value"],
             [(h["key"], h["value"]) for h in t["headers"]]) for t in table.to_pylist()]


def test_the_fixture_covers_every_client_and_codec():
    assert {(p["client"], p["codec"]) for p in DOC["partitions"].values()} == {
        (c, k) for c in ("sarama", "kafkajs", "librdkafka", "aiokafka")
        for k in ("none", "gzip", "snappy", "lz4", "zstd")}


@pytest.mark.parametrize("name", PARTITIONS)
def test_every_reader_gives_the_records_the_client_sent(name, tmp_path):
    part = DOC["partitions"][name]
    segment = FIXTURES / name / "00000000000000000000.log"
    want = expected_rows()
    batches = list(iter_batches(str(segment)))
    assert all(b.is_valid for b in batches)
    codecs = {b.compression for b in batches}
    # librdkafka stores a batch uncompressed when compressing it would not shrink it
    assert part["codec"] in codecs and codecs <= {part["codec"], "none"}, codecs
    assert [(r.offset, r.timestamp, r.key, r.value, list(r.headers))
            for b in batches for r in b] == want
    assert table_rows(decode_table(str(segment))) == want
    d = tmp_path / name
    shutil.copytree(FIXTURES / name, d)
    with Log.open(d) as log:  # no index files: recovered from the segment
        assert log.log_end_offset == len(want)
        assert table_rows(log.read_table()) == want
        assert log.offset_for_timestamp(want[100][1]) == 100


@pytest.mark.parametrize("name", PARTITIONS)
def test_dump_and_verify(name, tmp_path):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = cli_main(["dump-segments", "--deep-iteration", "--files",
                           str(FIXTURES / name / "00000000000000000000.log")])
    assert status == 0
    offsets = [line.split()[2] for line in out.getvalue().splitlines()
               if line.startswith("| offset:")]
    assert offsets == [str(o) for o in range(len(DOC["records"]))]
    assert "isvalid: false" not in out.getvalue()
    shutil.copytree(FIXTURES / name, tmp_path / name)
    with contextlib.redirect_stdout(io.StringIO()):
        assert cli_main(["verify", "--deep", str(tmp_path / name)]) == 0
