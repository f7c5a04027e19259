"""``__transaction_state`` records as ``kafka-dump-log.sh --transaction-log-decoder`` prints them.

The transaction coordinator keys each record by ``int16 record type`` (0) + ``TransactionLogKey``
(the transactional id) and stores ``int16 version`` + ``TransactionLogValue`` (producer id and
epoch, timeout, state, partitions, timestamps; version 1 is flexible and adds tagged fields), or
null when the transactional id expired.

Output shape from Kafka 4.1 (``TransactionLogMessageParser``, a ``CoordinatorRecordMessageParser``
over ``TransactionCoordinatorRecordSerde``, KAFKA-18207): key
``{"type":"0","data":{"transactionalId":…}}``, payload ``{"version":"<v>","data":{…}}`` or
``<DELETE>``. Kafka 0.11-4.0 printed text instead (``TransactionLog.formatRecordKeyAndValue``):
see :func:`format_text`.

Example
-------
>>> from kafkalog.decoders import transaction_log as tl
>>> k, v = tl.encode_record({"transactionalId": "tx"}, {
...     "producerId": 7, "producerEpoch": 0, "transactionTimeoutMs": 60000,
...     "transactionStatus": 1, "transactionPartitions": [{"topic": "t", "partitionIds": [0]}],
...     "transactionLastUpdateTimestampMs": 2, "transactionStartTimestampMs": 1}, version=0)
>>> tl.decode_record(k, v)[0]
'{"type":"0","data":{"transactionalId":"tx"}}'
>>> tl.decode_record_obj(k, v)["value"]["transactionPartitions"]
[{'topic': 't', 'partitionIds': [0]}]
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..errors import CorruptRecordError, KafkaLogError
from . import _schemas, jvm_order
from ._coordinator import (
    CoordinatorCodec,
    MissingKeyError,
    UnknownRecordTypeError,
    decode_for_text,
    dump_text,
    format_error,
)

__all__ = [
    "decode_record",
    "decode_record_obj",
    "encode_record",
    "format_for_dump",
    "format_legacy",
    "format_text",
    "replay",
    "TEXT_STYLES",
    "TombstoneNullPointer",
    "TRANSACTION_STATES",
    "UnknownRecordTypeError",
    "MissingKeyError",
]

CODEC = CoordinatorCodec("__transaction_state", _schemas.TXN_KEYS, _schemas.TXN_VALUES)

# TransactionState ids (transaction-coordinator TransactionState.java).
TRANSACTION_STATES = {
    0: "Empty", 1: "Ongoing", 2: "PrepareCommit", 3: "PrepareAbort", 4: "CompleteCommit",
    5: "CompleteAbort", 6: "Dead", 7: "PrepareEpochFence",
}


def decode_record_obj(key: bytes | None, value: bytes | None) -> dict[str, Any]:
    """Decode a ``__transaction_state`` record into Python values (see
    :func:`kafkalog.decoders.offsets.decode_record_obj` for the dict shape and errors)."""
    return CODEC.decode(key, value)


def decode_record(key: bytes | None, value: bytes | None) -> tuple[str | None, str | None]:
    """``(key text, payload text)`` exactly as Kafka's ``TransactionLogMessageParser``."""
    return dump_text(CODEC, key, value)


def format_for_dump(key: bytes | None, value: bytes | None, offset: int
                    ) -> tuple[str | None, str | None]:
    """As :func:`decode_record`, but decode failures become Kafka's error key text."""
    try:
        return decode_record(key, value)
    except MissingKeyError:
        raise
    except CorruptRecordError as e:
        return format_error(e, offset)


def replay(records: Iterable[tuple[int, bytes | None, bytes | None]]
           ) -> tuple[dict[str, dict[str, Any]], list[tuple[int, str]]]:
    """What a transaction coordinator loads from ``(offset, key, value)`` records
    (``TransactionStateManager.loadTransactionMetadata``): per transactional id the value of
    its last record, a tombstone removing the id; and the ``(offset, reason)`` of each record
    that does not decode (skipped, as the coordinator skips it). Each value gains
    ``"partitions"``: the transaction's ``(topic, partition)`` set.

    >>> k, v = encode_record({"transactionalId": "tx"}, {
    ...     "producerId": 7, "producerEpoch": 0, "transactionTimeoutMs": 60000,
    ...     "transactionStatus": 1, "transactionPartitions": [{"topic": "t", "partitionIds": [0]}],
    ...     "transactionLastUpdateTimestampMs": 2, "transactionStartTimestampMs": 1})
    >>> txns, skipped = replay([(0, k, v), (1, b"junk", b"")])
    >>> txns["tx"]["partitions"], [off for off, _ in skipped]
    ({('t', 0)}, [1])
    """
    txns: dict[str, dict[str, Any]] = {}
    skipped: list[tuple[int, str]] = []
    for offset, key, value in records:
        try:
            rec = decode_record_obj(key, value)
            txn_id = rec["key"]["transactionalId"]
        except (KafkaLogError, KeyError, TypeError) as e:
            skipped.append((offset, str(e)))
            continue
        v = rec["value"]
        if v is None:
            txns.pop(txn_id, None)
            continue
        v["partitions"] = {(t["topic"], int(q)) for t in (v["transactionPartitions"] or ())
                           for q in t["partitionIds"]}
        txns[txn_id] = v
    return txns, skipped


def encode_record(key: dict[str, Any], value: dict[str, Any] | None,
                  version: int | None = None) -> tuple[bytes, bytes | None]:
    """Encode a transaction-log record (record type 0); ``value`` None writes a tombstone."""
    return CODEC.encode(0, key, value, version)


#: ``--transaction-log-decoder`` text styles (see :func:`format_text`).
TEXT_STYLES = ("tool", "2.4.1", "2.5", "3.5")


class TombstoneNullPointer(CorruptRecordError):
    """Kafka 0.11-2.4.0's own transaction log parser on a tombstone: ``readTxnRecordValue``
    returned null and the parser dereferenced it (``java.lang.NullPointerException``)."""

    def __init__(self) -> None:
        self.kafka_message = ""
        super().__init__("transaction log tombstone (Kafka's tool threw a NullPointerException)")


def _partitions_in_set_order(value: dict[str, Any], scala: str) -> list[str]:
    """``txnMetadata.topicPartitions`` as ``TopicPartition.toString``s, in the iteration order of
    the Scala ``mutable.HashSet`` ``TransactionLog.readTxnRecordValue`` filled: one ``++=`` per
    topic entry of the record, of ``partitionIds.map(new TopicPartition(topic, _)).toSet``."""
    def tp_hash(tp: tuple[str, int]) -> int:
        return jvm_order.topic_partition_hash(*tp)

    groups = [
        [(p["topic"], i) for i in p["partitionIds"]] for p in value["transactionPartitions"] or []
    ]
    if scala in ("2.11", "2.12"):
        adds = [tp for g in groups for tp in jvm_order.scala212_immutable_set_order(g, tp_hash)]
        order = jvm_order.scala212_hash_set_order(adds, tp_hash)
    else:
        order = jvm_order.scala213_hash_set_order(groups, tp_hash)
    return [f"{t}-{i}" for t, i in order]


def format_text(
    key: bytes | None, value: bytes | None, *, style: str = "3.5", scala: str = "2.13"
) -> tuple[str | None, str | None]:
    """``(key, payload)`` as ``kafka-dump-log.sh --transaction-log-decoder`` printed them before
    4.1 (the JSON of :func:`decode_record`):

    * ``tool`` (0.11-2.4.0, the tool's own ``TransactionLogMessageParser``): key
      ``transactionalId=X``, payload ``producerId:P,producerEpoch:E,state=S,partitions=Set(t-0,
      t-1),txnLastUpdateTimestamp=T,txnTimeoutMs=M``; a tombstone raises
      :class:`TombstoneNullPointer` (the tool threw);
    * ``2.4.1`` (``TransactionLog.formatRecordKeyAndValue``): key
      ``transaction_metadata::transactionalId=X``, ``<DELETE>`` for a tombstone, partitions still
      ``Set(...)``;
    * ``2.5`` (2.5-3.4): partitions ``[t-0,t-1]``;
    * ``3.5`` (3.5-4.0): an unknown key version gives ``unknown::version=V`` and no payload.

    Partitions print in the iteration order of the Scala ``mutable.HashSet`` that held them
    (``scala``: the Kafka build's Scala version); an ``Empty`` transaction lists none.
    """
    if style not in TEXT_STYLES:
        raise ValueError(f"unknown transaction log text style {style!r}")
    if key is None:
        raise MissingKeyError("__transaction_state")
    rec = decode_for_text(CODEC, key, value, unknown_text=style == "3.5")
    if isinstance(rec, tuple):
        return rec
    txn_id = rec["key"]["transactionalId"]
    key_text = f"transactionalId={txn_id}" if style == "tool" else (
        f"transaction_metadata::transactionalId={txn_id}")
    v = rec["value"]
    if v is None:
        if style == "tool":
            raise TombstoneNullPointer()
        return key_text, "<DELETE>"
    state = TRANSACTION_STATES.get(v["transactionStatus"])
    if state is None:
        raise CorruptRecordError(f"Unknown transaction state id {v['transactionStatus']}")
    parts = [] if state == "Empty" else _partitions_in_set_order(v, scala)
    if style in ("tool", "2.4.1"):
        partitions = "Set(" + ", ".join(parts) + ")"  # Scala 2.11/2.12 mutable.HashSet.toString
    else:
        partitions = "[" + ",".join(parts) + "]"  # mkString("[", ",", "]")
    return key_text, (f"producerId:{v['producerId']},producerEpoch:{v['producerEpoch']},"
                      f"state={state},partitions={partitions},"
                      f"txnLastUpdateTimestamp={v['transactionLastUpdateTimestampMs']},"
                      f"txnTimeoutMs={v['transactionTimeoutMs']}")


def format_legacy(key: bytes | None, value: bytes | None) -> tuple[str, str | None]:
    """``(key, payload)`` as Kafka 3.5-4.0 printed them (``TransactionLog.formatRecordKeyAndValue``,
    Scala 2.13 build): ``format_text(key, value, style="3.5")``."""
    k, v = format_text(key, value, style="3.5", scala="2.13")
    return str(k), v  # the 3.5 style always has a key text
