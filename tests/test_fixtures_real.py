"""Real and peer-built segment files decode to their recorded expected values.

* ``kafka-real/**/*.log``: data directories written by real brokers (Kafka 2.4 .. 3.7, ZooKeeper
  and KRaft), checked against each folder's EXPECTED.json;
* ``kafka-real/*/derived/*.records.bin``: record sets served by real brokers, identical to the
  vectors.json entries (checked there) — here they are read through a path like a segment;
* ``peer-built/*/00000000000000000000.log``: segments written by kafka-python and aiokafka
  (every magic and codec, transactions, control batches, LogAppendTime) vs expected.json.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafkalog import iter_batches
from kafkalog.records.batch import RecordBatch
from tests.batch_expect import check_entry, check_record
from tests.conftest import SHARED_FIXTURES, shared_fixture_path


def _real_logs() -> list[tuple[str, str]]:
    base = SHARED_FIXTURES / "kafka-real"
    out = []
    for exp in sorted(base.glob("*/EXPECTED.json")):
        files = json.loads(exp.read_text())["files"]
        out.extend((exp.parent.name, name) for name in files if name.endswith(".log"))
    return out


REAL_LOGS = _real_logs()


@pytest.mark.parametrize(("folder", "name"), REAL_LOGS or [("<absent>", "<absent>")])
def test_real_segment(folder: str, name: str) -> None:
    root = shared_fixture_path("kafka-real", folder)
    exp = json.loads((root / "EXPECTED.json").read_text())["files"][name]
    path = root / name
    entries = list(iter_batches(path))  # validate=True: every CRC must check
    assert path.stat().st_size == exp["size"] == sum(e.size for e in entries)
    assert len(entries) == exp["batch_count"]
    records = [r for e in entries for r in e]
    assert len(records) == exp["record_count"]
    assert {e.magic for e in entries} == {exp["magic"]}
    assert {e.compression for e in entries} == {exp["codec"]}
    assert entries[0].base_offset == exp["first_offset"]
    assert entries[-1].last_offset == exp["last_offset"]
    assert all(e.is_valid for e in entries) is exp["all_crc_valid"]
    assert sum(e.is_control for e in entries) == exp["control_batches"]
    assert sum(e.is_transactional for e in entries) == exp["transactional_batches"]
    if "idempotent_batches" in exp:
        assert sum(e.producer_id >= 0 for e in entries) == exp["idempotent_batches"]
    assert sum(bool(r.headers) for r in records) == exp["records_with_headers"]
    assert sum(r.key is None for r in records) == exp["null_keys"]
    assert sum(r.value is None for r in records) == exp["null_values"]
    if "batches" in exp:
        assert len(exp["batches"]) == len(entries)
        for i, (e, eb) in enumerate(zip(entries, exp["batches"])):
            check_entry(e, eb, f"{folder}/{name} batch {i}")
    if "records" in exp:
        assert len(exp["records"]) == len(records)
        for i, (r, er) in enumerate(zip(records, exp["records"])):
            check_record(r, er, f"{folder}/{name} record {i}")
    for e in entries:
        if e.is_control:
            assert e.control_type() in {"ABORT", "COMMIT", "LEADER_CHANGE", "SNAPSHOT_HEADER",
                                        "SNAPSHOT_FOOTER", "KRAFT_VERSION", "KRAFT_VOTERS"}


def test_real_kraft_leader_change_control_batch() -> None:
    path = shared_fixture_path("kafka-real", "LDI-POC", "__cluster_metadata-0",
                               "00000000000000000000.log")
    controls = [e for e in iter_batches(path) if e.is_control]
    assert [c.control_type() for c in controls] == ["LEADER_CHANGE"]
    assert controls[0].end_txn_marker() is None and controls[0].coordinator_epoch is None


def _derived() -> list[Path]:
    return sorted((SHARED_FIXTURES / "kafka-real").glob("*/derived/*.records.bin"))


@pytest.mark.parametrize("path", _derived() or [Path("<absent>")], ids=lambda p: p.name)
def test_real_derived_record_sets_read_as_files(path: Path) -> None:
    shared_fixture_path("kafka-real")
    entries = list(iter_batches(path, validate=False))
    data = path.read_bytes()
    # same result reading the bytes, an mmap-backed path and a numpy view
    import numpy as np

    from_bytes = list(iter_batches(np.frombuffer(data, np.uint8), validate=False))
    assert [(e.position, e.size, e.crc) for e in entries] == [
        (e.position, e.size, e.crc) for e in from_bytes
    ]
    for e in entries:
        if e.is_valid and not (e.magic < 2 and e.compression == "zstd"):
            list(e)


# --- peer-built segments --------------------------------------------------------------------------


@pytest.mark.parametrize("lib", ["kafka-python", "aiokafka"])
def test_peer_built_segment(lib: str) -> None:
    root = shared_fixture_path("peer-built", lib)
    exp = json.loads((root / "expected.json").read_text())
    path = root / exp["segment"]
    entries = list(iter_batches(path))
    assert path.stat().st_size == exp["size"] == sum(e.size for e in entries)
    assert len(entries) == exp["batch_count"] == len(exp["batches"])
    for i, (e, eb) in enumerate(zip(entries, exp["batches"])):
        check_entry(e, eb, f"{lib} batch {i}")
    records = [r for e in entries for r in e]
    assert len(records) == exp["record_count"] == len(exp["records"])
    for i, (r, er) in enumerate(zip(records, exp["records"])):
        check_record(r, er, f"{lib} record {i}")
    assert entries[-1].next_offset == exp["next_offset"]
    # every v2 batch's derived values agree with its header
    for e in entries:
        if isinstance(e, RecordBatch):
            recs = list(e)
            if recs:
                assert recs[-1].offset == e.last_offset
                if e.timestamp_type == "LogAppendTime":
                    assert {r.timestamp for r in recs} == {e.max_timestamp}
                else:
                    assert max(r.timestamp for r in recs) == e.max_timestamp
