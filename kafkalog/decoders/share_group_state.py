"""``__share_group_state`` records as ``kafka-dump-log.sh --share-group-state-decoder`` prints
them (KIP-932's share coordinator, Kafka 4.0 onwards).

The share coordinator keys records by ``int16 record type`` (0 ``ShareSnapshotKey``, 1
``ShareUpdateKey``: group id, topic id, partition) and stores ``int16 version`` + value
(``ShareSnapshotValue``/``ShareUpdateValue``: epochs, start offset, state batches; from 4.1
the snapshot's create and write timestamps, from 4.2 the tagged delivery complete count). The
output shape is the coordinator one: key ``{"type":"<t>","data":{…}}``, payload
``{"version":"<v>","data":{…}}`` or ``<DELETE>`` (4.1 onwards; 4.0 wrote ``{"type":"<v>",…}``
for the payload too: ``DumpLogSegments.scala`` @4.0.0, ``ShareGroupStateMessageParser``'s
``jsonString``).

Kafka 4.1 changed both values without a new version number (``SnapshotEpoch`` uint16 ->
int32, the timestamps added): 4.0's bytes are recognised as the module
:mod:`kafkalog.decoders._coordinator` describes and read in 4.0's shape (``"layout": "4.0"``).

Example
-------
>>> from kafkalog.decoders import share_group_state as sgs
>>> k, v = sgs.encode_record(1, {"groupId": "g", "topicId": "AAAAAAAAAAAAAAAAAAAAAQ",
...     "partition": 0}, {"snapshotEpoch": 1, "leaderEpoch": 2, "startOffset": -1,
...     "stateBatches": []})
>>> sgs.decode_record(k, v)[1]
'{"version":"0","data":{"snapshotEpoch":1,"leaderEpoch":2,"startOffset":-1,"stateBatches":[]}}'
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

CODEC = CoordinatorCodec("__share_group_state", _schemas.SHARE_KEYS, _schemas.SHARE_VALUES,
                         _schemas.SHARE_VALUES_4_0)


def decode_record_obj(key: bytes | None, value: bytes | None, *, prefer_older: bool = False
                      ) -> dict[str, Any]:
    """Decode a ``__share_group_state`` record into Python values (shape and errors as
    :func:`kafkalog.decoders.offsets.decode_record_obj`; ``"layout"`` is ``"4.0"`` for a
    value in Kafka 4.0's shape, else None)."""
    return CODEC.decode(key, value, prefer_older=prefer_older)


def decode_record(key: bytes | None, value: bytes | None, *, value_label: str = "version",
                  prefer_older: bool = False) -> tuple[str | None, str | None]:
    """``(key text, payload text)`` as Kafka's ``ShareGroupStateMessageParser``.

    ``value_label``: ``"version"`` (4.1 onwards) or ``"type"`` (4.0, whose parser labelled the
    value version as it did the key's record type). ``prefer_older``: try 4.0's value shape
    first (files from a 4.0 cluster)."""
    return dump_text(CODEC, key, value, value_label=value_label, prefer_older=prefer_older)


def format_for_dump(key: bytes | None, value: bytes | None, offset: int, *,
                    value_label: str = "version", prefer_older: bool = False
                    ) -> tuple[str | None, str | None]:
    """As :func:`decode_record`, but decode failures become Kafka's error key text."""
    try:
        return decode_record(key, value, value_label=value_label, prefer_older=prefer_older)
    except MissingKeyError:
        raise
    except CorruptRecordError as e:
        return format_error(e, offset)


def encode_record(record_type: int, key: dict[str, Any], value: dict[str, Any] | None,
                  version: int | None = None, *, layout: str | None = None
                  ) -> tuple[bytes, bytes | None]:
    """Encode a share-group-state record (``value`` None writes a tombstone) in the newest
    shape, or in Kafka 4.0's with ``layout="4.0"``."""
    return CODEC.encode(record_type, key, value, version, layout=layout)
