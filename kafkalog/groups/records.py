"""The classic group coordinator's records in ``__consumer_offsets``, as Python values.

Built and read through the project's coordinator-record codec
(:data:`kafkalog.decoders.offsets.CODEC`, driven by Kafka's message schemas), so the bytes are
the ones Kafka's ``GroupCoordinatorRecordSerde`` writes:

* offset commit: key type 1 (``OffsetCommitKey`` v1) -> ``OffsetCommitValue`` **v3**, or **v1**
  when the commit carries an explicit expire timestamp (OffsetCommit v2-v4 retention time);
  group-coordinator ``GroupCoordinatorRecordHelpers.newOffsetCommitRecord`` (4.x) and
  ``MetadataVersion.offsetCommitValueVersion`` (3.x, IBP >= 2.1). Reading accepts key types 0/1
  and values v0-v4.
* group metadata: key type 2 (``GroupMetadataKey`` v2) -> ``GroupMetadataValue`` **v3**
  (``MetadataVersion.groupMetadataValueVersion`` for IBP >= 2.3, unchanged in 4.x); reading
  accepts v0-v4 (v0 has no rebalance timeout: the session timeout stands in, v0-v1 no state
  timestamp).
* a null value is a tombstone (offset deleted or expired, group deleted).

Record types 3-16 (KIP-848 consumer and share groups) are recognised and skipped by
:func:`decode`.

>>> key, value = offset_commit_record("g", "t", 0, OffsetAndMetadata(42, commit_timestamp=5))
>>> decode(key, value)
OffsetCommit(group='g', topic='t', partition=0, value=OffsetAndMetadata(offset=42, \
leader_epoch=-1, metadata='', commit_timestamp=5, expire_timestamp=None, record_offset=-1))
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import cast

from ..decoders import message
from ..decoders.offsets import CODEC, GROUP_METADATA_TYPE, OFFSET_COMMIT_TYPES
from ..java_utf8 import JAVA_REPLACE

__all__ = [
    "OffsetAndMetadata",
    "MemberMetadata",
    "GroupMetadata",
    "OffsetCommit",
    "GroupMetadataRecord",
    "offset_commit_record",
    "offset_commit_tombstone",
    "group_metadata_record",
    "group_metadata_tombstone",
    "decode",
    "OFFSET_COMMIT_KEY_TYPE",
    "GROUP_METADATA_VALUE_VERSION",
]

#: key record type (= OffsetCommitKey version) Kafka 2.x-4.x writes
OFFSET_COMMIT_KEY_TYPE = 1
#: GroupMetadataValue version Kafka writes (IBP >= 2.3 and every 4.x)
GROUP_METADATA_VALUE_VERSION = 3
#: OffsetCommitValue versions: without / with an expire timestamp. Kafka 2.1-4.0 write v3;
#: 4.1+ write v4 (KAFKA-19141: v3's fields, flexible, with a tagged ``topicId`` set only by
#: OffsetCommit v10, which is not served here). v3 is kept because every broker from 2.1 to 4.2
#: loads it, while a 4.0 coordinator fails to load a partition holding a v4 value
#: (``CoordinatorRecordSerde.deserialize`` throws ``UnknownRecordVersionException``, which 4.0's
#: ``CoordinatorLoaderImpl`` does not skip). v4 is read.
OFFSET_COMMIT_VALUE_VERSION = 3
OFFSET_COMMIT_VALUE_VERSION_WITH_EXPIRE = 1
NO_TIMESTAMP = -1


@dataclass(frozen=True)
class OffsetAndMetadata:
    """A committed offset (Kafka's ``OffsetAndMetadata``).

    ``leader_epoch`` -1 when unknown; ``expire_timestamp`` None unless the commit asked for its
    own retention (OffsetCommit v2-v4); ``record_offset`` the offset of the record in
    ``__consumer_offsets`` (-1 before it is written): with transactional commits the most recent
    record wins (``OffsetMetadataManager.replayEndTransactionMarker``).
    """

    offset: int
    leader_epoch: int = -1
    metadata: str = ""
    commit_timestamp: int = NO_TIMESTAMP
    expire_timestamp: int | None = None
    record_offset: int = -1


@dataclass(frozen=True)
class MemberMetadata:
    """One member of a classic group as ``GroupMetadataValue.MemberMetadata`` stores it."""

    member_id: str
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    subscription: bytes
    assignment: bytes
    group_instance_id: str | None = None


@dataclass(frozen=True)
class GroupMetadata:
    """A classic group as its ``GroupMetadataValue`` stores it.

    ``protocol_type`` is "" for a group without one (a "simple" group: offsets only);
    ``current_state_timestamp`` None before v2.
    """

    group_id: str
    protocol_type: str
    generation: int
    protocol: str | None
    leader: str | None
    current_state_timestamp: int | None
    members: tuple[MemberMetadata, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class OffsetCommit:
    """A decoded offset commit record (``value`` None: tombstone)."""

    group: str
    topic: str
    partition: int
    value: OffsetAndMetadata | None


@dataclass(frozen=True)
class GroupMetadataRecord:
    """A decoded group metadata record (``value`` None: tombstone)."""

    group: str
    value: GroupMetadata | None


@lru_cache(maxsize=1 << 16)
def _offset_commit_key(group: str, topic: str, partition: int) -> bytes:
    """Consumers commit the same partitions over and over: their keys are cached."""
    return offset_commit_tombstone(group, topic, partition)[0]


#: ``OffsetCommitValue`` v3 up to the metadata's bytes: version, offset, leaderEpoch, metadata
#: length (a non-flexible version: int16 string length); then the bytes and commitTimestamp
_VALUE_V3_HEAD = struct.Struct(">hqih")
_VALUE_V3_TAIL = struct.Struct(">q")
#: the second byte of an offset commit key (record types 0 and 1)
_COMMIT_KEYS = (b"\x00", b"\x01")


def offset_commit_record(group: str, topic: str, partition: int, om: OffsetAndMetadata
                         ) -> tuple[bytes, bytes]:
    """Key and value bytes of an offset commit, at the versions Kafka writes."""
    expire = om.expire_timestamp
    if expire is None and type(om.metadata) is str:
        # the value v3 of nearly every commit, packed directly (a consumer commits thousands
        # of partitions at once; tests hold it equal to the schema-driven writer below, which
        # also gives the errors: out-of-range fields, metadata over 32767 bytes)
        raw_metadata = om.metadata.encode("utf-8")
        if len(raw_metadata) <= 0x7FFF:
            try:
                raw = (_VALUE_V3_HEAD.pack(OFFSET_COMMIT_VALUE_VERSION, om.offset,
                                           om.leader_epoch, len(raw_metadata))
                       + raw_metadata + _VALUE_V3_TAIL.pack(om.commit_timestamp))
            except struct.error:
                pass
            else:
                return _offset_commit_key(group, topic, partition), raw
    version = OFFSET_COMMIT_VALUE_VERSION if expire is None \
        else OFFSET_COMMIT_VALUE_VERSION_WITH_EXPIRE
    value = CODEC.values[OFFSET_COMMIT_KEY_TYPE]
    raw = struct.pack(">h", version) + message.write(
        value, {"offset": om.offset, "leaderEpoch": om.leader_epoch, "metadata": om.metadata,
                "commitTimestamp": om.commit_timestamp,
                "expireTimestamp": NO_TIMESTAMP if expire is None else expire}, version)
    return _offset_commit_key(group, topic, partition), raw


def offset_commit_tombstone(group: str, topic: str, partition: int) -> tuple[bytes, None]:
    """Key bytes of the tombstone deleting one committed offset."""
    key, _ = CODEC.encode(OFFSET_COMMIT_KEY_TYPE,
                          {"group": group, "topic": topic, "partition": partition}, None)
    return key, None


def group_metadata_record(gm: GroupMetadata, version: int = GROUP_METADATA_VALUE_VERSION
                          ) -> tuple[bytes, bytes]:
    """Key and value bytes of a group's metadata (members in ``gm.members`` order)."""
    ts = gm.current_state_timestamp
    value = {
        "protocolType": gm.protocol_type,
        "generation": gm.generation,
        "protocol": gm.protocol,
        "leader": gm.leader,
        "currentStateTimestamp": NO_TIMESTAMP if ts is None else ts,
        "members": [{
            "memberId": m.member_id,
            "groupInstanceId": m.group_instance_id,
            "clientId": m.client_id,
            "clientHost": m.client_host,
            "rebalanceTimeout": m.rebalance_timeout_ms,
            "sessionTimeout": m.session_timeout_ms,
            "subscription": m.subscription,
            "assignment": m.assignment,
        } for m in gm.members],
    }
    key, raw = CODEC.encode(GROUP_METADATA_TYPE, {"group": gm.group_id}, value, version)
    return key, cast(bytes, raw)


def group_metadata_tombstone(group: str) -> tuple[bytes, None]:
    """Key bytes of the tombstone deleting a group's metadata."""
    key, _ = CODEC.encode(GROUP_METADATA_TYPE, {"group": group}, None)
    return key, None


def _offset_value(v: dict, record_offset: int) -> OffsetAndMetadata:
    expire = v.get("expireTimestamp", NO_TIMESTAMP)
    return OffsetAndMetadata(
        offset=v["offset"], leader_epoch=v.get("leaderEpoch", -1), metadata=v["metadata"] or "",
        commit_timestamp=v["commitTimestamp"],
        expire_timestamp=None if expire == NO_TIMESTAMP else expire,
        record_offset=record_offset)


def _group_value(group: str, v: dict) -> GroupMetadata:
    members = []
    for m in v["members"]:
        rebalance = m.get("rebalanceTimeout", -1)
        members.append(MemberMetadata(
            member_id=m["memberId"], client_id=m["clientId"], client_host=m["clientHost"],
            # GroupMetadataManager.replay: no rebalance timeout (v0) -> the session timeout
            rebalance_timeout_ms=m["sessionTimeout"] if rebalance == -1 else rebalance,
            session_timeout_ms=m["sessionTimeout"], subscription=m["subscription"] or b"",
            assignment=m["assignment"] or b"", group_instance_id=m.get("groupInstanceId")))
    ts = v.get("currentStateTimestamp", NO_TIMESTAMP)
    return GroupMetadata(group, v["protocolType"] or "", v["generation"], v["protocol"],
                         v["leader"], None if ts == NO_TIMESTAMP else ts, tuple(members))


@lru_cache(maxsize=1 << 16)
def _offset_commit_key_fields(key: bytes) -> tuple[str, str, int] | None:
    """``(group, topic, partition)`` of an offset commit key, None for another record type.
    Cached: a reload meets the same keys over and over (one per group and partition)."""
    rec = CODEC.decode(key, None)
    if rec["type"] not in OFFSET_COMMIT_TYPES:
        return None
    k = rec["key"]
    return k["group"], k["topic"], k["partition"]


def _packed_offset_commit(key: bytes, value: bytes, record_offset: int) -> OffsetCommit | None:
    """An offset commit whose value is exactly a v3 ``OffsetCommitValue`` (what Kafka writes
    for nearly every commit), read without the schema-driven reader; None for anything else
    (the reader then decides, raising its precise errors). Tests hold the two equal."""
    n = len(value)
    if n < _VALUE_V3_HEAD.size + _VALUE_V3_TAIL.size:
        return None
    version, offset, leader_epoch, size = _VALUE_V3_HEAD.unpack_from(value)
    end = _VALUE_V3_HEAD.size + size
    if version != OFFSET_COMMIT_VALUE_VERSION or size < 0 or end + _VALUE_V3_TAIL.size != n:
        return None  # (the reader ignores trailing bytes, as Kafka does: it reads those)
    fields = _offset_commit_key_fields(bytes(key))
    if fields is None:
        return None
    metadata = bytes(value[_VALUE_V3_HEAD.size:end]).decode("utf-8", JAVA_REPLACE)
    (commit_timestamp,) = _VALUE_V3_TAIL.unpack_from(value, end)
    return OffsetCommit(*fields, OffsetAndMetadata(offset, leader_epoch, metadata,
                                                   commit_timestamp, None, record_offset))


def decode(key: bytes | None, value: bytes | None, record_offset: int = -1
           ) -> OffsetCommit | GroupMetadataRecord | None:
    """Decode one ``__consumer_offsets`` record; None for the KIP-848/share record types.

    Raises
    ------
    kafkalog.errors.CorruptRecordError
        (``MissingKeyError``, ``UnknownRecordTypeError``, ``MessageDecodeError``) for a record
        without a key, of an unknown type, or malformed.
    """
    if key is not None and value is not None and key[:1] == b"\x00" and key[1:2] in _COMMIT_KEYS:
        # (a cheap filter on the key's type; _packed_offset_commit decides)
        packed = _packed_offset_commit(key, value, record_offset)
        if packed is not None:
            return packed
    rec = CODEC.decode(key, value)
    t = rec["type"]
    k = rec["key"]
    v = rec["value"]
    if t in OFFSET_COMMIT_TYPES:
        return OffsetCommit(k["group"], k["topic"], k["partition"],
                            None if v is None else _offset_value(v, record_offset))
    if t == GROUP_METADATA_TYPE:
        return GroupMetadataRecord(k["group"], None if v is None else _group_value(k["group"], v))
    return None


def with_record_offset(om: OffsetAndMetadata, record_offset: int) -> OffsetAndMetadata:
    """``om`` located at ``record_offset`` in ``__consumer_offsets``."""
    return replace(om, record_offset=record_offset)
