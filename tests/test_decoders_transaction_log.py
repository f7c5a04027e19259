"""The ``__transaction_state`` decoder: exact output for hand-built records of both value
versions, tombstones, Kafka's error texts, fuzzing."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalog.decoders import transaction_log as tl
from kafkalog.errors import KafkaLogError

VALUE = {"producerId": 4000, "producerEpoch": 3, "transactionTimeoutMs": 60000,
         "transactionStatus": 1,
         "transactionPartitions": [{"topic": "orders", "partitionIds": [0, 2]}],
         "transactionLastUpdateTimestampMs": 1700000000123,
         "transactionStartTimestampMs": 1700000000000}


def test_version_0_bytes_and_text() -> None:
    k, v = tl.encode_record({"transactionalId": "tx-1"}, VALUE, version=0)
    assert k == b"\x00\x00\x00\x04tx-1"
    assert v == (b"\x00\x00" + (4000).to_bytes(8, "big") + b"\x00\x03"
                 + (60000).to_bytes(4, "big") + b"\x01"
                 + b"\x00\x00\x00\x01" + b"\x00\x06orders" + b"\x00\x00\x00\x02"
                 + b"\x00\x00\x00\x00\x00\x00\x00\x02"
                 + (1700000000123).to_bytes(8, "big") + (1700000000000).to_bytes(8, "big"))
    assert tl.decode_record(k, v) == (
        '{"type":"0","data":{"transactionalId":"tx-1"}}',
        '{"version":"0","data":{"producerId":4000,"producerEpoch":3,'
        '"transactionTimeoutMs":60000,"transactionStatus":1,"transactionPartitions":'
        '[{"topic":"orders","partitionIds":[0,2]}],"transactionLastUpdateTimestampMs":'
        '1700000000123,"transactionStartTimestampMs":1700000000000}}')
    assert tl.TRANSACTION_STATES[tl.decode_record_obj(k, v)["value"]["transactionStatus"]] \
        == "Ongoing"


def test_version_1_tagged_fields() -> None:
    value = dict(VALUE, previousProducerId=3999, clientTransactionVersion=2,
                 transactionPartitions=None, transactionStatus=0)
    k, v = tl.encode_record({"transactionalId": "t"}, value, version=1)
    # nextProducerId keeps its default (-1) so it is neither written nor printed
    assert v.endswith(b"\x02" + b"\x00\x08" + (3999).to_bytes(8, "big")
                      + b"\x02\x02\x00\x02")
    assert tl.decode_record(k, v)[1] == (
        '{"version":"1","data":{"producerId":4000,"previousProducerId":3999,'
        '"producerEpoch":3,"transactionTimeoutMs":60000,"transactionStatus":0,'
        '"transactionPartitions":null,"transactionLastUpdateTimestampMs":1700000000123,'
        '"transactionStartTimestampMs":1700000000000,"clientTransactionVersion":2}}')


def test_tombstone_and_errors() -> None:
    k, v = tl.encode_record({"transactionalId": "t"}, VALUE, version=0)
    assert tl.decode_record(k, None)[1] == "<DELETE>"
    assert tl.format_for_dump(b"\x00\x01\x00\x01t", v, 4) == (
        "Unknown record type 1 at offset 4, skipping.", None)
    assert tl.format_for_dump(k, b"\x00\x02" + v[2:], 5) == (
        "Error at offset 5, skipping. Could not read record with version 2 from value's "
        "buffer due to: Can't read version 2 of TransactionLogValue.", None)
    with pytest.raises(tl.MissingKeyError):
        tl.decode_record(None, v)


@settings(max_examples=200, deadline=None)
@given(key=st.binary(max_size=20), value=st.one_of(st.none(), st.binary(max_size=60)))
def test_garbage_raises_only_kafkalog_errors(key, value) -> None:
    for k in (key, b"\x00\x00" + key):
        try:
            tl.decode_record(k, value)
        except KafkaLogError:
            pass


def test_legacy_text() -> None:
    k, v = tl.encode_record({"transactionalId": "tx-1"}, VALUE, version=0)
    assert tl.format_legacy(k, v) == (
        "transaction_metadata::transactionalId=tx-1",
        "producerId:4000,producerEpoch:3,state=Ongoing,partitions=[orders-0,orders-2],"
        "txnLastUpdateTimestamp=1700000000123,txnTimeoutMs=60000")
    assert tl.format_legacy(k, None)[1] == "<DELETE>"
    assert tl.format_legacy(b"\x00\x05\x00\x00", v) == ("unknown::version=5", None)
