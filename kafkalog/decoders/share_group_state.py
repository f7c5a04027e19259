"""``__share_group_state`` records as ``kafka-dump-log.sh --share-group-state-decoder`` prints
them (Kafka 4.0 line, KIP-932 early access).

The share coordinator keys records by ``int16 record type`` (0 ``ShareSnapshotKey``, 1
``ShareUpdateKey``: group id, topic id, partition) and stores ``int16 version`` + value
(``ShareSnapshotValue``/``ShareUpdateValue``: epochs, start offset, state batches). The output
shape is the coordinator one: key ``{"type":"<t>","data":{…}}``, payload
``{"version":"<v>","data":{…}}`` or ``<DELETE>`` (4.1 onwards; 4.0 wrote ``{"type":"<v>",…}``
for the payload too: ``DumpLogSegments.scala`` @4.0.0, ``ShareGroupStateMessageParser``'s
``jsonString``). Kafka marks these schemas as still changing.

Example
-------
>>> from kafkalog.decoders import share_group_state as sgs
>>> k, v = sgs.encode_record(1, {"groupId": "g", "topicId": "AAAAAAAAAAAAAAAAAAAAAQ",
...     "partition": 0}, {"snapshotEpoch": 1, "leaderEpoch": 2, "startOffset": -1,
...     "stateBatches": []})
>>> sgs.decode_record(k, v)[0]
'{"type":"1","data":{"groupId":"g","topicId":"AAAAAAAAAAAAAAAAAAAAAQ","partition":0}}'
"""

from __future__ import annotations

from typing import Any

from ..errors import CorruptRecordError
from . import _schemas
from ._coordinator import (
    CoordinatorCodec,
    MissingKeyError,
    UnknownRecordTypeError,
    dump_text,
    format_error,
)

__all__ = ["decode_record", "decode_record_obj", "encode_record", "format_for_dump",
           "UnknownRecordTypeError", "MissingKeyError"]

CODEC = CoordinatorCodec("__share_group_state", _schemas.SHARE_KEYS, _schemas.SHARE_VALUES)


def decode_record_obj(key: bytes | None, value: bytes | None) -> dict[str, Any]:
    """Decode a ``__share_group_state`` record into Python values (shape and errors as
    :func:`kafkalog.decoders.offsets.decode_record_obj`)."""
    return CODEC.decode(key, value)


def decode_record(key: bytes | None, value: bytes | None, *, value_label: str = "version"
                  ) -> tuple[str | None, str | None]:
    """``(key text, payload text)`` as Kafka's ``ShareGroupStateMessageParser``.

    ``value_label``: ``"version"`` (4.1 onwards) or ``"type"`` (4.0, whose parser labelled the
    value version as it did the key's record type)."""
    return dump_text(CODEC, key, value, value_label=value_label)


def format_for_dump(key: bytes | None, value: bytes | None, offset: int, *,
                    value_label: str = "version") -> tuple[str | None, str | None]:
    """As :func:`decode_record`, but decode failures become Kafka's error key text."""
    try:
        return decode_record(key, value, value_label=value_label)
    except MissingKeyError:
        raise
    except CorruptRecordError as e:
        return format_error(e, offset)


def encode_record(record_type: int, key: dict[str, Any], value: dict[str, Any] | None,
                  version: int | None = None) -> tuple[bytes, bytes | None]:
    """Encode a share-group-state record (``value`` None writes a tombstone)."""
    return CODEC.encode(record_type, key, value, version)
