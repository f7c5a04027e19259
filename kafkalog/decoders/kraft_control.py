"""KRaft's control records: the values of ``SNAPSHOT_HEADER`` (3), ``SNAPSHOT_FOOTER`` (4),
``KRAFT_VERSION`` (5) and ``KRAFT_VOTERS`` (6) control records, which open and close every
KRaft snapshot (``bootstrap.checkpoint``, ``__cluster_metadata-0/*.checkpoint``) and carry a
dynamic quorum's voters (KIP-853).

A control record's key is ``int16 version (0), int16 type``; its value is the message itself at
version 0 (``ControlRecordUtils``), whose first field, ``Version``, is the version it was
written at. Schemas from Kafka 4.2's ``clients/src/main/resources/common/message/`` (all
flexible: each ends in an empty tagged-field section).

Example
-------
>>> from kafkalog.decoders import kraft_control as kc
>>> raw = kc.encode("SNAPSHOT_HEADER", {"version": 0, "lastContainedLogTimestamp": 0})
>>> raw.hex(), kc.decode("SNAPSHOT_HEADER", raw)
('0000000000000000000000', {'version': 0, 'lastContainedLogTimestamp': 0})
"""

from __future__ import annotations

from typing import Any

from . import message

__all__ = ["CONTROL_TYPES", "SCHEMAS", "SNAPSHOT_HEADER", "SNAPSHOT_FOOTER", "KRAFT_VERSION",
           "KRAFT_VOTERS", "encode", "decode"]

#: ``ControlRecordType`` ids of the KRaft control records
SNAPSHOT_HEADER, SNAPSHOT_FOOTER, KRAFT_VERSION, KRAFT_VOTERS = 3, 4, 5, 6
CONTROL_TYPES = {"SNAPSHOT_HEADER": SNAPSHOT_HEADER, "SNAPSHOT_FOOTER": SNAPSHOT_FOOTER,
                 "KRAFT_VERSION": KRAFT_VERSION, "KRAFT_VOTERS": KRAFT_VOTERS}


def _fld(name: str, type_: str, **kw: Any) -> dict[str, Any]:
    return {"name": name, "type": type_, "versions": "0+", **kw}


#: the JSON schemas (SnapshotHeaderRecord.json, SnapshotFooterRecord.json,
#: KRaftVersionRecord.json, VotersRecord.json), by control record type name
SPECS: dict[str, dict[str, Any]] = {
    "SNAPSHOT_HEADER": {
        "name": "SnapshotHeaderRecord",
        "validVersions": "0",
        "flexibleVersions": "0+",
        "fields": [_fld("Version", "int16"), _fld("LastContainedLogTimestamp", "int64")],
    },
    "SNAPSHOT_FOOTER": {
        "name": "SnapshotFooterRecord",
        "validVersions": "0",
        "flexibleVersions": "0+",
        "fields": [_fld("Version", "int16")],
    },
    "KRAFT_VERSION": {
        "name": "KRaftVersionRecord",
        "validVersions": "0",
        "flexibleVersions": "0+",
        "fields": [_fld("Version", "int16"), _fld("KRaftVersion", "int16")],
    },
    "KRAFT_VOTERS": {
        "name": "VotersRecord",
        "validVersions": "0",
        "flexibleVersions": "0+",
        "fields": [
            _fld("Version", "int16"),
            _fld("Voters", "[]Voter", fields=[
                _fld("VoterId", "int32"),
                _fld("VoterDirectoryId", "uuid"),
                _fld("Endpoints", "[]Endpoint", fields=[
                    _fld("Name", "string"), _fld("Host", "string"), _fld("Port", "uint16")]),
                _fld("KRaftVersionFeature", "KRaftVersionFeature", fields=[
                    _fld("MinSupportedVersion", "int16"),
                    _fld("MaxSupportedVersion", "int16")]),
            ]),
        ],
    },
}
SCHEMAS: dict[str, message.Struct] = {k: message.compile_schema(s) for k, s in SPECS.items()}


def encode(name: str, data: dict[str, Any]) -> bytes:
    """The value of a ``name`` control record (camelCase keys, as :func:`decode` returns)."""
    return message.write(SCHEMAS[name], data, 0)


def decode(name: str, value: bytes | memoryview) -> dict[str, Any]:
    """Decode a ``name`` control record value (raises
    :class:`~kafkalog.decoders.message.MessageDecodeError` on malformed bytes)."""
    return message.read(SCHEMAS[name], value, 0)
