"""``__transaction_state`` records as ``kafka-dump-log.sh --transaction-log-decoder`` prints them.

The transaction coordinator keys each record by ``int16 record type`` (0) + ``TransactionLogKey``
(the transactional id) and stores ``int16 version`` + ``TransactionLogValue`` (producer id and
epoch, timeout, state, partitions, timestamps; version 1 is flexible and adds tagged fields), or
null when the transactional id expired.

Output shape (Kafka's ``TransactionLogMessageParser``, a ``CoordinatorRecordMessageParser``):
key ``{"type":"0","data":{"transactionalId":…}}``, payload ``{"version":"<v>","data":{…}}`` or
``<DELETE>``.

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

from typing import Any

from ..errors import CorruptRecordError
from . import _schemas
from ._coordinator import (
    CoordinatorCodec,
    MissingKeyError,
    UnknownRecordTypeError,
    format_error,
)

__all__ = [
    "decode_record",
    "decode_record_obj",
    "encode_record",
    "format_for_dump",
    "format_legacy",
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
    return CODEC.format(CODEC.decode(key, value))


def format_for_dump(key: bytes | None, value: bytes | None, offset: int
                    ) -> tuple[str | None, str | None]:
    """As :func:`decode_record`, but decode failures become Kafka's error key text."""
    try:
        return decode_record(key, value)
    except MissingKeyError:
        raise
    except CorruptRecordError as e:
        return format_error(e, offset)


def encode_record(key: dict[str, Any], value: dict[str, Any] | None,
                  version: int | None = None) -> tuple[bytes, bytes | None]:
    """Encode a transaction-log record (record type 0); ``value`` None writes a tombstone."""
    return CODEC.encode(0, key, value, version)


def format_legacy(key: bytes | None, value: bytes | None) -> tuple[str, str | None]:
    """``(key, payload)`` as Kafka 2.x-3.x printed them before the JSON decoder
    (``TransactionLog.formatRecordKeyAndValue``): ``transaction_metadata::transactionalId=X``
    and ``producerId:P,producerEpoch:E,state=S,partitions=[t-0,t-1],txnLastUpdateTimestamp=T,
    txnTimeoutMs=M`` or ``<DELETE>``; an unknown key version gives
    ``unknown::version=V`` and no payload.

    Kafka kept the partitions in a hash set; they are printed here in record order.
    """
    if key is None:
        raise MissingKeyError("__transaction_state")
    try:
        rec = CODEC.decode(key, value)
    except UnknownRecordTypeError as e:
        return f"unknown::version={e.record_type}", None
    key_text = f"transaction_metadata::transactionalId={rec['key']['transactionalId']}"
    v = rec["value"]
    if v is None:
        return key_text, "<DELETE>"
    state = TRANSACTION_STATES.get(v["transactionStatus"])
    if state is None:
        raise CorruptRecordError(f"Unknown transaction state id {v['transactionStatus']}")
    parts = [] if state == "Empty" else [
        f"{p['topic']}-{i}" for p in v["transactionPartitions"] or [] for i in p["partitionIds"]]
    return key_text, (f"producerId:{v['producerId']},producerEpoch:{v['producerEpoch']},"
                      f"state={state},partitions=[{','.join(parts)}],"
                      f"txnLastUpdateTimestamp={v['transactionLastUpdateTimestampMs']},"
                      f"txnTimeoutMs={v['transactionTimeoutMs']}")
