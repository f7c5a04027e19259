"""Producer state snapshots: layout, CRC, every error path and the real broker files."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalog.errors import CorruptCheckpointError
from kafkalog.producer_snapshot import (
    ENTRY_SIZE,
    ProducerSnapshotEntry,
    decode_snapshot,
    encode_snapshot,
    read_snapshot,
    snapshot_file,
    snapshot_offset,
    write_snapshot,
)
from tests.conftest import shared_fixture_path


def _crc32c_bitwise(data: bytes) -> int:
    """Independent CRC-32C (Castagnoli, reflected 0x82F63B78), bit by bit."""
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


ENTRY = ProducerSnapshotEntry(
    producer_id=4000,
    producer_epoch=3,
    last_sequence=9,
    last_offset=120,
    offset_delta=4,
    timestamp=1_700_000_000_123,
    coordinator_epoch=7,
    current_txn_first_offset=116,
)


def test_crc32c_vectors() -> None:
    assert _crc32c_bitwise(b"123456789") == 0xE3069283  # the CRC-32C check value
    # every real empty snapshot stores crc32c(count=0) = 1214729159 (EXPECTED.json)
    assert _crc32c_bitwise(b"\x00\x00\x00\x00") == 1214729159


def test_layout_hand_built() -> None:
    body = struct.pack(">i", 1) + struct.pack(
        ">qhiqiqiq", 4000, 3, 9, 120, 4, 1_700_000_000_123, 7, 116
    )
    expected = struct.pack(">hI", 1, _crc32c_bitwise(body)) + body
    assert len(body) - 4 == ENTRY_SIZE == 46
    assert encode_snapshot([ENTRY]) == expected
    assert decode_snapshot(expected) == [ENTRY]
    assert encode_snapshot([]) == struct.pack(">hIi", 1, 1214729159, 0)


def test_derived_fields() -> None:
    assert ENTRY.first_sequence == 5 and ENTRY.first_offset == 116 and ENTRY.has_batch_metadata
    assert ENTRY.current_txn_first_offset_or_none == 116 and ENTRY.last_timestamp == ENTRY.timestamp
    wrapped = ProducerSnapshotEntry(1, 0, 2, 10, 5, 0, -1, -1)
    assert wrapped.first_sequence == 2**31 - 3  # sequence wraps at Integer.MAX_VALUE
    none = ProducerSnapshotEntry(1, 0, -1, -1, 0, -1, -1, -1)
    assert not none.has_batch_metadata and none.current_txn_first_offset_or_none is None


def test_errors_name_file_and_values(tmp_path: Path) -> None:
    good = encode_snapshot([ENTRY, ENTRY])
    p = tmp_path / "00000000000000000010.snapshot"
    p.write_bytes(good[:9])
    with pytest.raises(CorruptCheckpointError, match="expected at least 10 bytes, found 9") as e:
        read_snapshot(p)
    assert e.value.path == str(p)
    bad_version = struct.pack(">h", 2) + good[2:]
    with pytest.raises(CorruptCheckpointError, match="expected 1, found 2"):
        decode_snapshot(bad_version)
    flipped = bytearray(good)
    flipped[40] ^= 0x10
    stored = struct.unpack_from(">I", good, 2)[0]
    with pytest.raises(CorruptCheckpointError, match=f"stored crc: {stored}, computed crc: ") as e:
        decode_snapshot(bytes(flipped), p)
    assert e.value.position == 2
    # a count larger than the file, with a CRC that matches (so only the length check fires)
    body = struct.pack(">i", 3) + good[10:]
    lying = struct.pack(">hI", 1, _crc32c_bitwise(body)) + body
    with pytest.raises(CorruptCheckpointError, match="declares 3 entries but .* only 2"):
        decode_snapshot(lying)
    body = struct.pack(">i", -1)
    negative = struct.pack(">hI", 1, _crc32c_bitwise(body)) + body
    with pytest.raises(CorruptCheckpointError, match="cannot be negative"):
        decode_snapshot(negative)
    with pytest.raises(ValueError, match="out of range"):
        ProducerSnapshotEntry(2**63, 0, 0, 0, 0, 0, 0, 0).to_bytes()


def test_trailing_bytes_covered_by_crc_are_ignored_like_kafka() -> None:
    body = encode_snapshot([ENTRY])[6:] + b"\x01\x02"
    data = struct.pack(">hI", 1, _crc32c_bitwise(body)) + body
    assert decode_snapshot(data) == [ENTRY]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.builds(
    ProducerSnapshotEntry,
    st.integers(-(2**63), 2**63 - 1), st.integers(-(2**15), 2**15 - 1),
    st.integers(-(2**31), 2**31 - 1), st.integers(-(2**63), 2**63 - 1),
    st.integers(-(2**31), 2**31 - 1), st.integers(-(2**63), 2**63 - 1),
    st.integers(-(2**31), 2**31 - 1), st.integers(-(2**63), 2**63 - 1),
), max_size=20))
def test_round_trip_property(entries) -> None:
    data = encode_snapshot(entries)
    assert len(data) == 10 + 46 * len(entries)
    assert struct.unpack_from(">I", data, 2)[0] == _crc32c_bitwise(data[6:])
    assert decode_snapshot(data) == entries


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=120))
def test_arbitrary_bytes_decode_or_raise_corrupt(data) -> None:
    try:
        decode_snapshot(data)
    except CorruptCheckpointError:
        pass


def test_write_read_file_and_names(tmp_path: Path) -> None:
    p = snapshot_file(tmp_path, 120)
    assert p.name == "00000000000000000120.snapshot" and snapshot_offset(p) == 120
    write_snapshot(p, [ENTRY])
    assert read_snapshot(p) == [ENTRY]
    assert not (tmp_path / "00000000000000000120.snapshot.tmp").exists()


def test_every_real_snapshot_rewrites_byte_for_byte(tmp_path: Path) -> None:
    root = shared_fixture_path("kafka-real")
    files = sorted(root.glob("VolodymyrZee-kafka/*/*.snapshot")) + sorted(
        root.glob("LDI-POC/*/*.snapshot")
    )
    assert len(files) == 10
    for f in files:
        folder = f.parent.parent
        expected = json.loads((folder / "EXPECTED.json").read_text())["files"][
            f"{f.parent.name}/{f.name}"
        ]
        entries = read_snapshot(f)
        assert len(entries) == expected["producer_entry_count"]
        assert struct.unpack_from(">I", f.read_bytes(), 2)[0] == expected["crc32c"]
        out = tmp_path / f.name
        write_snapshot(out, entries)
        assert out.read_bytes() == f.read_bytes(), f
