"""Tiered storage's ``__remote_log_metadata`` records as ``kafka-dump-log.sh
--remote-log-metadata-decoder`` prints them (Kafka 3.9 onwards, KIP-405/KIP-1057).

The topic-based remote log metadata manager (``TopicBasedRemoteLogMetadataManager``) writes one
event per record, keyless; the value is framed as KRaft records are
(:mod:`~kafkalog.decoders.api_message_frame`: frame version 1, api key, version) around one of
four messages (``storage/src/main/resources/message``):

=======  ==========================================  =========================================
api key  message                                     event (``RemoteLogMetadataSerde``)
=======  ==========================================  =========================================
0        ``RemoteLogSegmentMetadataRecord``          a segment copy started (all its metadata)
1        ``RemoteLogSegmentMetadataUpdateRecord``    a segment's state changed
2        ``RemotePartitionDeleteMetadataRecord``     a partition's deletion state changed
3        ``RemoteLogSegmentMetadataSnapshotRecord``  a segment in a metadata snapshot file
=======  ==========================================  =========================================

DumpLogSegments prints no key and, as payload, the ``toString()`` of the Java object the serde
builds (``RemoteLogSegmentMetadata{...}``, ``RemoteLogSegmentMetadataUpdate{...}``,
``RemotePartitionDeleteMetadata{...}``, ``RemoteLogSegmentMetadataSnapshot{...}``). Building it
runs the Java constructors' checks (an unknown state, a negative start offset, no leader
epochs...), whose exception message is printed as ``Error at offset <o>, skipping. <msg>``.
Kafka 4.0 (KAFKA-16780) added the tagged field ``TxnIndexEmpty`` to segment records and
``txnIdxEmpty=`` to their text; 3.9 reads the field as an unknown tag and does not print it.

Example
-------
>>> from kafkalog.decoders import remote_log_metadata as rlmm
>>> raw = rlmm.encode_record("RemotePartitionDeleteMetadataRecord", {
...     "topicIdPartition": {"name": "orders", "id": "AAAAAAAAAAAAAAAAAAAAyg", "partition": 7},
...     "brokerId": 42, "eventTimestampMs": 789, "remotePartitionDeleteState": 0})
>>> rlmm.decode_record(None, raw)[1]
'RemotePartitionDeleteMetadata{topicPartition=AAAAAAAAAAAAAAAAAAAAyg:orders-7, \
state=DELETE_PARTITION_MARKED, eventTimestampMs=789, brokerId=42}'
"""

from __future__ import annotations

from typing import Any

from ..errors import CorruptRecordError
from . import _schemas, api_message_frame, message
from .message import MessageDecodeError

__all__ = [
    "SCHEMAS",
    "SEGMENT_STATES",
    "PARTITION_DELETE_STATES",
    "RemoteLogMetadataError",
    "decode_record",
    "decode_record_obj",
    "encode_record",
    "format_for_dump",
    "to_java_string",
    "validate",
]

SCHEMAS: dict[int, message.Struct] = {
    k: message.compile_schema(s) for k, s in _schemas.REMOTE_LOG_METADATA.items()}
_BY_NAME = {s.name: k for k, s in SCHEMAS.items()}

# RemoteLogSegmentState / RemotePartitionDeleteState: id -> enum name (forId answers null for
# any other id, which the constructors then reject)
SEGMENT_STATES = {0: "COPY_SEGMENT_STARTED", 1: "COPY_SEGMENT_FINISHED",
                  2: "DELETE_SEGMENT_STARTED", 3: "DELETE_SEGMENT_FINISHED"}
PARTITION_DELETE_STATES = {0: "DELETE_PARTITION_MARKED", 1: "DELETE_PARTITION_STARTED",
                           2: "DELETE_PARTITION_FINISHED"}


class RemoteLogMetadataError(MessageDecodeError):
    """The message decoded, but Kafka's serde rejects it when it builds the Java object (an
    unknown state id, offsets out of order, no leader epochs); ``kafka_message`` is the
    exception's message."""


def decode_record_obj(key: bytes | None, value: bytes | None) -> dict[str, Any]:
    """Decode a ``__remote_log_metadata`` record's message: ``{"api_key": 2, "name":
    "RemotePartitionDeleteMetadataRecord", "version": 0, "data": {...}}`` (camelCase field
    names, uuids as Kafka ``Uuid`` strings, ``customMetadata`` as bytes or None). ``key`` is
    ignored (the manager writes none). Only the bytes are checked here; :func:`to_java_string`
    applies the serde's object checks.

    Raises :class:`~kafkalog.decoders.message.MessageDecodeError` (a
    :class:`~kafkalog.errors.CorruptRecordError`) for a null value, a bad frame, an unknown
    api key or version, malformed bytes, or trailing bytes after the message.
    """
    if value is None:
        # Kafka: record.value.remaining throws a NullPointerException (JDK 11's message)
        raise MessageDecodeError("remote log metadata record has a null value",
                                 kafka_message="null")
    api_key, version, schema, data = api_message_frame.read(value, SCHEMAS,
                                                            "remote log metadata")
    return {"api_key": api_key, "name": schema.name, "version": version, "data": data}


def _reject(message_: str, java_message: str) -> RemoteLogMetadataError:
    return RemoteLogMetadataError(message_, kafka_message=java_message)


def _topic_id_partition(tip: dict[str, Any]) -> str:
    # TopicIdPartition.toString: <topic id>:<topic>-<partition>
    return f"{tip['id']}:{tip['name']}-{tip['partition']}"


def _segment_id(entry: dict[str, Any]) -> str:
    return (f"RemoteLogSegmentId{{topicIdPartition={_topic_id_partition(entry['topicIdPartition'])}"
            f", id={entry['id']}}}")


def _custom(raw: bytes | None) -> str:
    # Optional<CustomMetadata>: Optional.ofNullable(record.customMetadata())
    return "Optional.empty" if raw is None else f"Optional[CustomMetadata{{{len(raw)} bytes}}]"


def _segment_state(state_id: int) -> str:
    name = SEGMENT_STATES.get(state_id)
    if name is None:
        raise _reject(f"unknown remote log segment state {state_id}", "state can not be null")
    return name


def _leader_epochs(entries: list[dict[str, Any]]) -> list[tuple[int, int]]:
    """The epochs as the ``TreeMap`` the transform fills from a ``HashMap`` holds them (a
    repeated epoch keeps its last offset; keys in signed order)."""
    epochs: dict[int, int] = {}
    for e in entries:
        epochs[e["leaderEpoch"]] = e["offset"]
    if not epochs:
        raise _reject("a remote segment without leader epochs",
                      "segmentLeaderEpochs can not be null or empty")
    return sorted(epochs.items())


def validate(rec: dict[str, Any]) -> list[tuple[int, int]] | None:
    """Run the checks ``RemoteLogMetadataSerde.deserialize`` runs when it builds the Java
    object from a :func:`decode_record_obj` result, in Java's order; return a segment's (or
    snapshot's) leader epochs as ``[(epoch, start offset)]`` by epoch, else None.

    Raises :class:`RemoteLogMetadataError` (``kafka_message`` = the exception's message).
    """
    d, key = rec["data"], rec["api_key"]
    if key == 0:
        start, end = d["startOffset"], d["endOffset"]
        # the 8-argument constructor's checks run first (RemoteLogSegmentMetadataTransform),
        # then the update's (the state), then the full constructor's again (passed by then)
        if start < 0:
            raise _reject(f"negative start offset {start}",
                          f"Unexpected start offset = {start}. StartOffset for a remote "
                          "segment cannot be negative")
        if end < start:
            raise _reject(f"end offset {end} below start offset {start}",
                          f"Unexpected end offset = {end}. EndOffset for a remote segment "
                          f"cannot be less than startOffset = {start}")
        epochs = _leader_epochs(d["segmentLeaderEpochs"])
        _segment_state(d["remoteLogSegmentState"])
        return epochs
    if key == 1:
        _segment_state(d["remoteLogSegmentState"])
        return None
    if key == 2:
        if d["remotePartitionDeleteState"] not in PARTITION_DELETE_STATES:
            # Objects.requireNonNull(state) without a message: getMessage() is null
            raise _reject(f"unknown remote partition delete state "
                          f"{d['remotePartitionDeleteState']}", "null")
        return None
    # a snapshot: no offset checks in this constructor; the state is checked before the epochs
    _segment_state(d["remoteLogSegmentState"])
    return _leader_epochs(d["segmentLeaderEpochs"])


def to_java_string(rec: dict[str, Any], *, txn_idx_empty: bool = True) -> str:
    """The ``toString()`` of the object ``RemoteLogMetadataSerde.deserialize`` builds from a
    :func:`decode_record_obj` result. ``txn_idx_empty``: print segments' ``txnIdxEmpty``
    (Kafka 4.0 onwards; False for 3.9's text).

    Raises :class:`RemoteLogMetadataError` where the Java constructors throw (:func:`validate`).
    """
    epochs = validate(rec)
    d, key = rec["data"], rec["api_key"]
    if key == 1:
        return (f"RemoteLogSegmentMetadataUpdate{{remoteLogSegmentId="
                f"{_segment_id(d['remoteLogSegmentId'])}, customMetadata="
                f"{_custom(d['customMetadata'])}, state="
                f"{SEGMENT_STATES[d['remoteLogSegmentState']]}, eventTimestampMs="
                f"{d['eventTimestampMs']}, brokerId={d['brokerId']}}}")
    if key == 2:
        # (the label is "topicPartition", the value the TopicIdPartition)
        return (f"RemotePartitionDeleteMetadata{{topicPartition="
                f"{_topic_id_partition(d['topicIdPartition'])}, state="
                f"{PARTITION_DELETE_STATES[d['remotePartitionDeleteState']]}"
                f", eventTimestampMs={d['eventTimestampMs']}, brokerId={d['brokerId']}}}")
    tree_map = "{" + ", ".join(f"{e}={o}" for e, o in epochs or ()) + "}"
    state = SEGMENT_STATES[d["remoteLogSegmentState"]]
    if key == 0:
        text = (f"RemoteLogSegmentMetadata{{remoteLogSegmentId="
                f"{_segment_id(d['remoteLogSegmentId'])}, startOffset={d['startOffset']}"
                f", endOffset={d['endOffset']}, brokerId={d['brokerId']}"
                f", maxTimestampMs={d['maxTimestampMs']}"
                f", eventTimestampMs={d['eventTimestampMs']}, segmentLeaderEpochs={tree_map}"
                f", segmentSizeInBytes={d['segmentSizeInBytes']}"
                f", customMetadata={_custom(d['customMetadata'])}, state={state}")
    else:
        text = (f"RemoteLogSegmentMetadataSnapshot{{segmentId={d['segmentId']}"
                f", startOffset={d['startOffset']}, endOffset={d['endOffset']}"
                f", maxTimestampMs={d['maxTimestampMs']}, segmentLeaderEpochs={tree_map}"
                f", segmentSizeInBytes={d['segmentSizeInBytes']}"
                f", customMetadata={_custom(d['customMetadata'])}, state={state}")
    if txn_idx_empty:
        text += f", txnIdxEmpty={'true' if d['txnIndexEmpty'] else 'false'}"
    return text + "}"


def decode_record(key: bytes | None, value: bytes | None, *, txn_idx_empty: bool = True
                  ) -> tuple[None, str]:
    """``(None, payload text)`` exactly as DumpLogSegments' ``RemoteMetadataLogMessageParser``
    prints a record it can decode; raises as :func:`decode_record_obj` and
    :func:`to_java_string` otherwise."""
    return None, to_java_string(decode_record_obj(key, value), txn_idx_empty=txn_idx_empty)


def format_for_dump(key: bytes | None, value: bytes | None, offset: int, *,
                    txn_idx_empty: bool = True) -> tuple[None, str]:
    """What ``--remote-log-metadata-decoder`` prints: the payload, or for a record that does
    not decode ``Error at offset <offset>, skipping. <msg>`` as the payload."""
    try:
        return decode_record(key, value, txn_idx_empty=txn_idx_empty)
    except CorruptRecordError as e:
        kafka = getattr(e, "kafka_message", None) or e.message
        return None, f"Error at offset {offset}, skipping. {kafka}"


def encode_record(record: str | int, data: dict[str, Any], version: int | None = None) -> bytes:
    """Frame and encode a ``__remote_log_metadata`` record value (``record`` = message name or
    api key; ``data`` in :func:`decode_record_obj`'s shape, omitted fields take the schema's
    defaults). ``version`` defaults to 0, the only one Kafka defines."""
    api_key = _BY_NAME[record] if isinstance(record, str) else record
    schema = SCHEMAS[api_key]
    if version is None:
        version = schema.versions[0]  # type: ignore[index]
    return api_message_frame.write(api_key, version, message.write(schema, data, version))
