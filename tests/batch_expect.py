"""Compare decoded entries/records with the expected values of ../shared/fixtures.

The fixture files describe bytes three ways (vectors.json, peer-built/*/expected.json,
kafka-real/*/EXPECTED.json); this module maps their field names onto kafkalog's attributes so the
three test files share one comparison. Every expected field present is checked; unknown fields
fail loudly so a new fixture field is never silently ignored.
"""

from __future__ import annotations

from typing import Any

from kafkalog.records.batch import RecordBatch
from kafkalog.records.legacy import LegacyEntry


def expected_bytes(v: Any) -> bytes | None:
    """Value in the fixtures' forms: None, {"utf8": s}, {"hex": h}, or a bare hex string."""
    if v is None:
        return None
    if isinstance(v, str):
        return bytes.fromhex(v)
    if "hex" in v:
        return bytes.fromhex(v["hex"])
    return v["utf8"].encode("utf-8")


def _ts(v: int | None) -> int:
    return -1 if v is None else v


# fields that describe provenance or generation, not decoded values
_IGNORED_BATCH = {"patched", "requested_codec", "inner_compressed", "inner_uncompressed_len",
                  "inner_crc_valid", "inner_offsets_raw"}


def check_entry(entry: RecordBatch | LegacyEntry, exp: dict[str, Any], where: str) -> None:
    """Assert every field of the expected batch/entry description ``exp``."""
    for k, v in exp.items():
        if k in _IGNORED_BATCH:
            continue
        ctx = f"{where}: field {k}"
        if k == "crc_valid":
            assert entry.is_valid is v, ctx
        elif k == "codec":
            assert entry.compression == v, ctx
        elif k == "timestamp_type":
            assert entry.timestamp_type == (v or "NoTimestampType"), ctx
        elif k == "offset":
            assert isinstance(entry, LegacyEntry), ctx
            assert entry.offset == v, ctx
            assert entry.last_offset == v, ctx
        elif k == "timestamp":
            assert isinstance(entry, LegacyEntry), ctx
            assert entry.timestamp == _ts(v), ctx
            assert entry.max_timestamp == _ts(v), ctx
        elif k in ("key", "value"):
            assert getattr(entry, k) == expected_bytes(v), ctx
        elif k == "inner_count":
            assert entry.record_count == v, ctx
        elif k == "control_type":
            assert entry.control_type() == v, ctx
        elif k in (
            "position", "size", "magic", "crc", "attributes", "base_offset", "last_offset",
            "last_offset_delta", "partition_leader_epoch", "is_transactional", "is_control",
            "base_timestamp", "max_timestamp", "producer_id", "producer_epoch", "base_sequence",
            "record_count",
        ):
            assert getattr(entry, k) == v, f"{ctx}: {getattr(entry, k)!r} != {v!r}"
        else:  # pragma: no cover - a fixture field this comparison does not know
            raise AssertionError(f"{where}: unknown expected batch field {k!r}")


def check_record(rec: Any, exp: dict[str, Any], where: str) -> None:
    """Assert every field of an expected record description."""
    for k, v in exp.items():
        ctx = f"{where}: field {k}"
        if k == "offset":
            assert rec.offset == v, f"{ctx}: {rec.offset} != {v}"
        elif k == "timestamp":
            assert rec.timestamp == _ts(v), f"{ctx}: {rec.timestamp} != {v}"
        elif k in ("key", "value"):
            assert getattr(rec, k) == expected_bytes(v), ctx
        elif k in ("key_hex", "value_hex"):
            assert getattr(rec, k[:-4]) == (None if v is None else bytes.fromhex(v)), ctx
        elif k == "headers":
            got = [(hk, hv) for hk, hv in rec.headers]
            want = [(hk, expected_bytes(hv)) for hk, hv in v]
            assert got == want, f"{ctx}: {got!r} != {want!r}"
        elif k in ("record_attributes", "control", "control_type"):
            # record attributes are unused by Kafka and not part of Record; control info is
            # checked at the batch level (control_type()/control_record()) by the callers
            pass  # checked at the batch level (control_type()) by the callers
        else:  # pragma: no cover
            raise AssertionError(f"{where}: unknown expected record field {k!r}")
