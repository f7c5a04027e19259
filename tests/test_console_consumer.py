"""``kafkalog console-consumer``: Kafka 4.2's formatters (their own test cases, ported from
``tools/src/test/java/org/apache/kafka/tools/consumer/*FormatterTest.java``), its options
(``ConsoleConsumerOptionsTest``) and the command over real log dirs."""

from __future__ import annotations

import io
import re
import struct
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkalog import Record
from kafkalog.console import console_consumer
from kafkalog.console.deserializers import SerializationError, deserializer
from kafkalog.console.message_formatters import (
    ConsumerRecord,
    DefaultMessageFormatter,
    formatter,
)
from kafkalog.decoders import offsets, transaction_log
from kafkalog.log_dir import LogDir

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures"


def _write(f, rec: ConsumerRecord) -> bytes:
    out = io.BytesIO()
    f.write_to(rec, out)
    return out.getvalue()


# -- DefaultMessageFormatterTest.testDefaultMessageFormatter -------------------------------------

def test_default_message_formatter_kafka_cases():
    record = ConsumerRecord("topic", 0, 123, -1, "NoTimestampType", b"key", b"value")
    f = DefaultMessageFormatter()
    configs: dict[str, str] = {}
    f.configure(configs)
    assert _write(f, record) == b"value\n"
    steps = [
        ("print.key", "true", b"key\tvalue\n"),
        ("print.partition", "true", b"Partition:0\tkey\tvalue\n"),
        ("print.timestamp", "true", b"NO_TIMESTAMP\tPartition:0\tkey\tvalue\n"),
        ("print.offset", "true", b"NO_TIMESTAMP\tPartition:0\tOffset:123\tkey\tvalue\n"),
        ("print.headers", "true",
         b"NO_TIMESTAMP\tPartition:0\tOffset:123\tNO_HEADERS\tkey\tvalue\n"),
        ("print.delivery", "true",
         b"NO_TIMESTAMP\tPartition:0\tOffset:123\tDelivery:NOT_PRESENT\tNO_HEADERS\tkey\tvalue\n"),
        ("print.epoch", "true",
         b"NO_TIMESTAMP\tPartition:0\tOffset:123\tDelivery:NOT_PRESENT\tEpoch:NOT_PRESENT\t"
         b"NO_HEADERS\tkey\tvalue\n"),
    ]
    for k, v, expected in steps:
        configs[k] = v
        f.configure(configs)
        assert _write(f, record) == expected, k
    headers = (("h1", b"v1"), ("h2", b"v2"))
    record = ConsumerRecord("topic", 0, 123, 123, "CreateTime", b"key", b"value", headers,
                            leader_epoch=58, delivery_count=1)
    assert _write(f, record) == \
        b"CreateTime:123\tPartition:0\tOffset:123\tDelivery:1\tEpoch:58\th1:v1,h2:v2\tkey\tvalue\n"
    steps = [
        ("print.value", "false",
         b"CreateTime:123\tPartition:0\tOffset:123\tDelivery:1\tEpoch:58\th1:v1,h2:v2\tkey\n"),
        ("key.separator", "<sep>",
         b"CreateTime:123<sep>Partition:0<sep>Offset:123<sep>Delivery:1<sep>Epoch:58<sep>"
         b"h1:v1,h2:v2<sep>key\n"),
        ("print.delivery", "false",
         b"CreateTime:123<sep>Partition:0<sep>Offset:123<sep>Epoch:58<sep>h1:v1,h2:v2<sep>key\n"),
        ("print.epoch", "false",
         b"CreateTime:123<sep>Partition:0<sep>Offset:123<sep>h1:v1,h2:v2<sep>key\n"),
        ("line.separator", "<end>",
         b"CreateTime:123<sep>Partition:0<sep>Offset:123<sep>h1:v1,h2:v2<sep>key<end>"),
        ("headers.separator", "|",
         b"CreateTime:123<sep>Partition:0<sep>Offset:123<sep>h1:v1|h2:v2<sep>key<end>"),
    ]
    for k, v, expected in steps:
        configs[k] = v
        f.configure(configs)
        assert _write(f, record) == expected, k
    # Kafka's UpperCaseDeserializer (a test class): set as the functions a class name gives
    record = ConsumerRecord("topic", 0, 123, 123, "CreateTime", b"key", b"value", headers)

    def upper(b: bytes) -> str:
        return b.decode().upper()
    f.key_deserializer = upper
    assert _write(f, record) == \
        b"CreateTime:123<sep>Partition:0<sep>Offset:123<sep>h1:v1|h2:v2<sep>KEY<end>"
    f.headers_deserializer = upper
    assert _write(f, record) == \
        b"CreateTime:123<sep>Partition:0<sep>Offset:123<sep>h1:V1|h2:V2<sep>KEY<end>"
    record = ConsumerRecord("topic", 0, 123, 123, "CreateTime", b"key", None, headers)
    configs["print.value"] = "true"
    configs["null.literal"] = "<null>"
    f.configure(configs)
    f.key_deserializer = f.headers_deserializer = upper
    assert _write(f, record) == \
        b"CreateTime:123<sep>Partition:0<sep>Offset:123<sep>h1:V1|h2:V2<sep>KEY<sep><null><end>"


def test_boolean_properties_are_true_only_for_true():
    f = formatter("DefaultMessageFormatter", {"print.key": " TRUE ", "print.offset": "yes"})
    assert _write(f, ConsumerRecord("t", 0, 1, 5, "CreateTime", b"k", b"v")) == b"k\tv\n"


def test_logging_formatter_logs_a_line():
    f = formatter("org.apache.kafka.tools.consumer.LoggingMessageFormatter", {})
    rec = ConsumerRecord("t", 0, 1, 5, "CreateTime", None, b"v")
    assert _write(f, rec) == b"v\n"
    assert f.log_line(rec) == "CreateTime:5, key:null value:v"
    assert f.log_line(ConsumerRecord("t", 0, 1, -1, "NoTimestampType", b"k", None)) == \
        "key:k, value:null"


def test_noop_formatter_prints_nothing():
    f = formatter("org.apache.kafka.tools.consumer.NoOpMessageFormatter")
    assert _write(f, ConsumerRecord("t", 0, 1, 5, "CreateTime", b"k", b"v")) == b""


def test_unknown_formatter_and_deserializer_are_refused():
    with pytest.raises(ValueError):
        formatter("com.example.Mine")
    with pytest.raises(ValueError, match="identity"):
        formatter("DefaultMessageFormatter", {
            "key.deserializer": "org.apache.kafka.common.serialization.ByteArrayDeserializer"})


# -- deserializers --------------------------------------------------------------------------------

@pytest.mark.parametrize("name,data,text", [
    ("IntegerDeserializer", struct.pack(">i", -7), "-7"),
    ("LongDeserializer", struct.pack(">q", 1 << 40), "1099511627776"),
    ("ShortDeserializer", struct.pack(">h", -2), "-2"),
    ("DoubleDeserializer", struct.pack(">d", 1e-4), "1.0E-4"),
    ("DoubleDeserializer", struct.pack(">d", 123.5), "123.5"),
    ("FloatDeserializer", struct.pack(">f", 0.1), "0.1"),
    ("FloatDeserializer", struct.pack(">f", 1e10), "1.0E10"),
    ("BooleanDeserializer", b"\x01", "true"),
    ("BooleanDeserializer", b"\x00", "false"),
    ("UUIDDeserializer", b"0F14D0AB-9605-4A62-A9E4-5ED26688389B",
     "0f14d0ab-9605-4a62-a9e4-5ed26688389b"),
    ("StringDeserializer", "ü".encode(), "ü"),
    ("StringDeserializer", b"\xff", "\ufffd"),
    ("BytesDeserializer", b"a\\b\x00\x7f~", "a\\x5Cb\\x00\\x7F~"),
    ("ByteBufferDeserializer", b"abc", "java.nio.HeapByteBuffer[pos=0 lim=3 cap=3]"),
    # the formatter hands "null" (null.literal) for a missing key: 4 bytes, an int
    ("IntegerDeserializer", b"null", str(struct.unpack(">i", b"null")[0])),
])
def test_deserializers_print_what_java_prints(name, data, text):
    assert deserializer("org.apache.kafka.common.serialization." + name)(data) == text


@pytest.mark.parametrize("name,data,message", [
    ("IntegerDeserializer", b"abc", "Size of data received by IntegerDeserializer is not 4"),
    ("LongDeserializer", b"abc", "Size of data received by LongDeserializer is not 8"),
    ("FloatDeserializer", b"abc", "Size of data received by Deserializer is not 4"),
    ("DoubleDeserializer", b"abc", "Size of data received by Deserializer is not 8"),
    ("BooleanDeserializer", b"\xfe", "Unexpected byte received by BooleanDeserializer: -2"),
    ("UUIDDeserializer", b"not-a-uuid", "Error parsing data into UUID"),
    ("VoidDeserializer", b"null", "Data should be null for a VoidDeserializer."),
])
def test_deserializer_errors_carry_kafkas_text(name, data, message):
    with pytest.raises(SerializationError) as e:
        deserializer(name)(data)
    assert e.value.message == message


@given(st.floats(width=32, allow_nan=False))
def test_float_deserializer_reads_back_the_float32(x):
    text = deserializer("FloatDeserializer")(struct.pack(">f", x))
    assert struct.pack(">f", float(text.replace("Infinity", "inf"))) == struct.pack(">f", x)


# -- coordinator formatters (OffsetMessageFormatterTest, GroupMetadataMessageFormatterTest,
#    TransactionLogMessageFormatterTest) ---------------------------------------------------------

def _prefixed(codec, record_type: int, key: dict, value: dict | None, version: int):
    return codec.encode(record_type, key, value, version)


def _squash(s: str) -> bytes:
    return re.sub(r"\s+", "", s).encode()


_OC_KEY = {"group": "group-id", "topic": "foo", "partition": 1}
_OC_VALUE = {"offset": 100, "leaderEpoch": 10, "metadata": "metadata", "commitTimestamp": 1234,
             "expireTimestamp": 5678, "topicId": "MKXx1fIkQy2J9jXHhK8m1w"}


@pytest.mark.parametrize("key_type,version,expected", [
    (0, 0, '{"key":{"type":0,"data":{"group":"group-id","topic":"foo","partition":1}},'
           '"value":{"version":0,"data":{"offset":100,"metadata":"metadata",'
           '"commitTimestamp":1234}}}'),
    (1, 1, '{"key":{"type":1,"data":{"group":"group-id","topic":"foo","partition":1}},'
           '"value":{"version":1,"data":{"offset":100,"metadata":"metadata",'
           '"commitTimestamp":1234,"expireTimestamp":5678}}}'),
    (1, 3, '{"key":{"type":1,"data":{"group":"group-id","topic":"foo","partition":1}},'
           '"value":{"version":3,"data":{"offset":100,"leaderEpoch":10,"metadata":"metadata",'
           '"commitTimestamp":1234}}}'),
    (1, 4, '{"key":{"type":1,"data":{"group":"group-id","topic":"foo","partition":1}},'
           '"value":{"version":4,"data":{"offset":100,"leaderEpoch":10,"metadata":"metadata",'
           '"commitTimestamp":1234,"topicId":"MKXx1fIkQy2J9jXHhK8m1w"}}}'),
])
def test_offsets_message_formatter_kafka_cases(key_type, version, expected):
    k, v = offsets.CODEC.encode(key_type, _OC_KEY, _OC_VALUE, version)
    f = formatter("org.apache.kafka.tools.consumer.OffsetsMessageFormatter")
    assert _write(f, ConsumerRecord("TOPIC", 0, 0, 0, "CreateTime", k, v)) == _squash(expected)
    # a tombstone; no key; a group metadata record (not shown by this formatter)
    assert _write(f, ConsumerRecord("TOPIC", 0, 0, 0, "CreateTime", k, None)) == _squash(
        expected.split(',"value"')[0] + ',"value":null}')
    assert _write(f, ConsumerRecord("TOPIC", 0, 0, 0, "CreateTime", None, v)) == b""


_MEMBER = {"memberId": "member-1", "groupInstanceId": "group-instance-1",
           "clientId": "client-1", "clientHost": "host-1", "rebalanceTimeout": 1000,
           "sessionTimeout": 1500, "subscription": b"\x00\x01", "assignment": b"\x01\x02"}
_GM_VALUE = {"protocolType": "consumer", "generation": 1, "protocol": "range",
             "leader": "leader", "currentStateTimestamp": 1234, "members": [_MEMBER]}


@pytest.mark.parametrize("version,expected", [
    (0, '{"key":{"type":2,"data":{"group":"group-id"}},"value":{"version":0,"data":{'
        '"protocolType":"consumer","generation":1,"protocol":"range","leader":"leader",'
        '"members":[{"memberId":"member-1","clientId":"client-1","clientHost":"host-1",'
        '"sessionTimeout":1500,"subscription":"AAE=","assignment":"AQI="}]}}}'),
    (3, '{"key":{"type":2,"data":{"group":"group-id"}},"value":{"version":3,"data":{'
        '"protocolType":"consumer","generation":1,"protocol":"range","leader":"leader",'
        '"currentStateTimestamp":1234,"members":[{"memberId":"member-1",'
        '"groupInstanceId":"group-instance-1","clientId":"client-1","clientHost":"host-1",'
        '"rebalanceTimeout":1000,"sessionTimeout":1500,"subscription":"AAE=",'
        '"assignment":"AQI="}]}}}'),
])
def test_group_metadata_message_formatter_kafka_cases(version, expected):
    k, v = offsets.CODEC.encode(2, {"group": "group-id"}, _GM_VALUE, version)
    f = formatter("org.apache.kafka.tools.consumer.GroupMetadataMessageFormatter")
    assert _write(f, ConsumerRecord("TOPIC", 0, 0, 0, "CreateTime", k, v)) == _squash(expected)
    ok, ov = offsets.CODEC.encode(0, _OC_KEY, _OC_VALUE, 0)
    assert _write(f, ConsumerRecord("TOPIC", 0, 0, 0, "CreateTime", ok, ov)) == b""
    unknown = struct.pack(">h", 0x7FFF) + ok[2:]
    assert _write(f, ConsumerRecord("TOPIC", 0, 0, 0, "CreateTime", unknown, ov)) == b""


def test_transaction_log_message_formatter_kafka_cases():
    value = {"producerId": 100, "producerEpoch": 50, "transactionStatus": 4,
             "transactionStartTimestampMs": 750, "transactionLastUpdateTimestampMs": 1000,
             "transactionTimeoutMs": 500, "transactionPartitions": []}
    k, v = transaction_log.CODEC.encode(0, {"transactionalId": "TXNID"}, value, 1)
    f = formatter("org.apache.kafka.tools.consumer.TransactionLogMessageFormatter")
    assert _write(f, ConsumerRecord("T", 0, 0, 0, "CreateTime", k, v)) == _squash(
        '{"key":{"type":0,"data":{"transactionalId":"TXNID"}},"value":{"version":1,"data":{'
        '"producerId":100,"producerEpoch":50,"transactionTimeoutMs":500,'
        '"transactionStatus":4,"transactionPartitions":[],'
        '"transactionLastUpdateTimestampMs":1000,"transactionStartTimestampMs":750}}}')
    assert _write(f, ConsumerRecord("T", 0, 0, 0, "CreateTime", k, None)) == _squash(
        '{"key":{"type":0,"data":{"transactionalId":"TXNID"}},"value":null}')
    for key_type in (1, 10, 0x7FFF):  # record types Kafka 4.2 does not know: nothing
        other = struct.pack(">h", key_type) + k[2:]
        assert _write(f, ConsumerRecord("T", 0, 0, 0, "CreateTime", other, v)) == b""


def test_coordinator_formatter_error_names_the_offset():
    k, _ = offsets.CODEC.encode(1, _OC_KEY, _OC_VALUE, 3)
    f = formatter("OffsetsMessageFormatter")
    with pytest.raises(Exception, match="^Could not read record at offset 42 due to: "):
        _write(f, ConsumerRecord("T", 0, 42, 0, "CreateTime", k, b"\x00\x03\x00"))


# -- the command over log dirs --------------------------------------------------------------------

def prints(*fields: str) -> list[str]:
    """``--formatter-property print.<field>=true`` for each field."""
    return [a for f in fields for a in ("--formatter-property", f"print.{f}=true")]


def committed(root: Path, group: str) -> dict:
    """The group's committed offsets in the dir (read-only)."""
    from kafkalog.groups.metadata_manager import GroupMetadataManager

    with LogDir.open(root, read_only=True) as d:
        return GroupMetadataManager(d).fetch_offsets(group)


def run(*argv: str) -> tuple[int, bytes, str]:
    out, err = io.BytesIO(), io.StringIO()
    status = console_consumer.main(list(argv), stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "logs"
    with LogDir.open(root) as d:
        d.create_topic("orders", 2)
        d.log("orders", 0).append([Record(b"k%d" % i, b"v%d" % i, 1000 + i) for i in range(3)],
                                  partition_leader_epoch=4)
        d.log("orders", 1).append([Record(None, b"w", 2000, [("h", None), ("g", b"1")])],
                                  compression="lz4")
        d.create_topic("audit", 1, {"message.timestamp.type": "LogAppendTime"})
        d.log("audit", 0).append([Record(b"a", b"b", 5)])
    return root


def test_reads_every_partition_from_the_beginning(tree):
    status, out, err = run(str(tree), "--topic", "orders", "--from-beginning",
                           *prints("key", "partition", "headers", "epoch"))
    assert status == 0, err
    assert out.decode().splitlines() == [
        f"Partition:0\tEpoch:NOT_PRESENT\tNO_HEADERS\tk{i}\tv{i}" for i in range(3)] + [
        "Partition:1\tEpoch:NOT_PRESENT\th:null,g:1\tnull\tw"]
    assert err.endswith("Processed a total of 4 messages\n")


def test_without_from_beginning_it_starts_at_the_end(tree):
    status, out, err = run(str(tree), "--topic", "orders")
    assert (status, out) == (0, b"")
    assert "Processed a total of 0 messages" in err


def test_partition_offset_and_max_messages(tree):
    status, out, _ = run(str(tree), "--topic", "orders", "--partition", "0", "--offset", "1")
    assert out == b"v1\nv2\n"
    status, out, err = run(str(tree), "--topic", "orders", "--from-beginning",
                           "--max-messages", "2")
    assert out == b"v0\nv1\n" and "total of 2 messages" in err
    # an offset past the end: OFFSET_OUT_OF_RANGE, reset to latest (nothing)
    assert run(str(tree), "--topic", "orders", "--partition", "0", "--offset", "99")[1] == b""
    assert run(str(tree), "--topic", "orders", "--partition", "0", "--offset", "99",
               "--command-property", "auto.offset.reset=earliest")[1] == b"v0\nv1\nv2\n"


def test_log_append_time_and_include_regex(tree):
    status, out, _ = run(str(tree), "--include", "a.*", "--from-beginning",
                         *prints("timestamp"))
    assert status == 0
    line = out.decode().strip()
    assert re.fullmatch(r"LogAppendTime:\d+\tb", line) and line != "LogAppendTime:5\tb"


def test_include_leaves_internal_topics_out(tmp_path):
    root = tmp_path / "logs"
    with LogDir.open(root) as d:
        d.create_topic("__consumer_offsets", 1)
        k, v = offsets.CODEC.encode(1, _OC_KEY, _OC_VALUE, 3)
        d.log("__consumer_offsets", 0).append([Record(k, v, 7)])
        d.create_topic("_x", 1)
    assert run(str(root), "--include", "_.*", "--from-beginning")[1] == b""
    status, out, _ = run(str(root), "--include", "_.*", "--from-beginning",
                         "--command-property", "exclude.internal.topics=false",
                         "--formatter", "org.apache.kafka.tools.consumer.OffsetsMessageFormatter")
    assert status == 0
    assert out == _squash(
        '{"key":{"type":1,"data":{"group":"group-id","topic":"foo","partition":1}},'
        '"value":{"version":3,"data":{"offset":100,"leaderEpoch":10,"metadata":"metadata",'
        '"commitTimestamp":1234}}}')


def test_read_committed_skips_aborted_and_open_transactions(tmp_path):
    root = tmp_path / "logs"
    with LogDir.open(root) as d:
        d.create_topic("t", 1)
        log = d.log("t", 0)
        log.append([Record(None, b"plain", 1)])
        log.append([Record(None, b"aborted", 2)], producer_id=7, producer_epoch=0,
                   base_sequence=0, transactional=True)
        log.abort_transaction(7, 0)
        log.append([Record(None, b"committed", 3)], producer_id=8, producer_epoch=0,
                   base_sequence=0, transactional=True)
        log.commit_transaction(8, 0)
        log.append([Record(None, b"open", 4)], producer_id=9, producer_epoch=0,
                   base_sequence=0, transactional=True)
    assert run(str(root), "--topic", "t", "--from-beginning")[1] == \
        b"plain\naborted\ncommitted\nopen\n"
    assert run(str(root), "--topic", "t", "--from-beginning",
               "--isolation-level", "read_committed")[1] == b"plain\ncommitted\n"


def test_group_starts_at_its_commits_and_commits_on_exit(tree):
    status, out, err = run(str(tree), "--topic", "orders", "--from-beginning", "--group", "g",
                           "--max-messages", "2")
    assert (status, out) == (0, b"v0\nv1\n"), err
    assert committed(tree, "g") == {("orders", 0): 2, ("orders", 1): 0}
    # the next run resumes there (--from-beginning only applies without a commit)
    assert run(str(tree), "--topic", "orders", "--from-beginning", "--group", "g")[1] == \
        b"v2\nw\n"
    assert run(str(tree), "--topic", "orders", "--group", "g")[1] == b""
    # enable.auto.commit=false: read from the commits, write nothing
    assert run(str(tree), "--topic", "orders", "--group", "h", "--from-beginning",
               "--command-property", "enable.auto.commit=false")[1] == b"v0\nv1\nv2\nw\n"
    assert committed(tree, "h") == {}


def test_a_locked_dir_is_read_but_not_committed_to(tree):
    with LogDir.open(tree):  # holds the .lock, as a broker would
        status, out, _ = run(str(tree), "--topic", "orders", "--partition", "1",
                             "--offset", "earliest")
        assert (status, out) == (0, b"w\n")
        status, out, err = run(str(tree), "--topic", "orders", "--group", "g")
        assert status == 1 and "in use" in err


def test_formatter_errors_stop_or_are_skipped(tree):
    status, out, err = run(str(tree), "--topic", "orders", "--from-beginning",
                           "--value-deserializer",
                           "org.apache.kafka.common.serialization.IntegerDeserializer")
    assert (status, out) == (1, b"")
    assert "SerializationException: Size of data received by IntegerDeserializer is not 4" \
        in err and "Processed a total of 1 messages" in err
    # "v0".."v2" are 2 bytes (shorts), "w" is not; the key printed before the value's error
    # stays printed, and the next record goes on from there (Kafka writes field by field)
    status, out, err = run(str(tree), "--topic", "orders", "--from-beginning",
                           "--value-deserializer", "ShortDeserializer",
                           *prints("key"),
                           "--skip-message-on-error")
    assert status == 0 and err.count("skipping this message") == 1
    assert out == b"".join(b"k%d\t%d\n" % (i, struct.unpack(">h", b"v%d" % i)[0])
                           for i in range(3)) + b"null\t"


def test_corrupt_bytes_are_reported_with_file_and_position(tree):
    seg = tree / "orders-0" / "00000000000000000000.log"
    data = bytearray(seg.read_bytes())
    data[-3] ^= 0xFF
    seg.write_bytes(bytes(data))
    status, out, err = run(str(tree), "--topic", "orders", "--from-beginning")
    assert status == 1 and out == b""
    assert str(seg) in err and "CRC" in err.upper()


@pytest.mark.parametrize("extra, lines, status", [((), 39, 1),
                                                (("--max-messages", "5"), 5, 0)])
def test_the_records_before_a_corrupt_batch_are_printed(tmp_path: Path, extra: tuple,
                                                        lines: int, status: int) -> None:
    """Kafka's consumer hands out the records it read before a corrupt batch
    (CompletedFetch.fetchRecords) and fails only then: the columnar path, which decodes
    thousands of offsets at once, must not lose the good ones with the bad batch."""
    root = tmp_path / "logs"
    with LogDir.open(root) as d:
        d.create_topic("t", 1)
        for i in range(40):
            d.log("t", 0).append([Record(None, b"%d" % i, 1000 + i)])
    seg = root / "t-0" / "00000000000000000000.log"
    data = bytearray(seg.read_bytes())
    data[-2] ^= 0xFF
    seg.write_bytes(bytes(data))
    got, out, err = run(str(root), "--topic", "t", "--from-beginning", *extra)
    assert out.decode().splitlines() == [str(i) for i in range(lines)]
    assert got == status
    assert ("offset 39" in err and str(seg) in err) == (status == 1)
    assert f"Processed a total of {lines} messages" in err


@pytest.mark.parametrize("argv,message", [
    (["--from-beginning"], "Exactly one of the following arguments is required: [topic], "
                           "[include]"),
    (["--topic", "t", "--include", "x"], "Exactly one of the following arguments is "
                                         "required: [topic], [include]"),
    (["--include", "t", "--partition", "0"], "The topic is required when partition is "
                                             "specified."),
    (["--topic", "t", "--partition", "0", "--offset", "1", "--from-beginning"],
     "Options from-beginning and offset cannot be specified together."),
    (["--topic", "t", "--offset", "1"], "The partition is required when offset is specified."),
    (["--topic", "t", "--partition", "0", "--offset", "-1"],
     "The provided offset value '-1' is incorrect. Valid values are 'earliest', 'latest', or a "
     "non-negative long."),
    (["--topic", "t", "--group", "a", "--command-property", "group.id=b"],
     "Detected group ids: 'a', 'b'"),
    (["--topic", "t", "--group", "a", "--partition", "0"],
     "Options group and partition cannot be specified together."),
    (["--topic", "t", "--from-beginning", "--command-property", "auto.offset.reset=latest"],
     "Can't simultaneously specify --from-beginning and 'auto.offset.reset=latest', please "
     "remove one option"),
    (["--topic", "t", "--property", "print.key=true", *prints("key")],
     "Options --property and --formatter-property cannot be specified together."),
    (["--topic", "t", "--consumer-property", "a=b", "--command-property", "a=b"],
     "Options --consumer-property and --command-property cannot be specified together."),
    (["--topic", "t", "--formatter", "com.example.Formatter"], "com.example.Formatter"),
    (["--topic", "t", "--max-messages", "2147483648"],
     "Cannot parse argument '2147483648' of option max-messages"),
])
def test_option_errors_are_kafkas(tree, argv, message):
    status, out, err = run(str(tree), *argv)
    assert status == 2 and message in err


def test_deprecated_options_still_work_and_say_so(tree):
    status, out, err = run(str(tree), "--topic", "orders", "--partition", "0",
                           "--offset", "2", "--property", "print.key=true")
    assert status == 0
    assert out == (b"Option --property is deprecated and will be removed in a future version. "
                   b"Use --formatter-property instead.\nk2\tv2\n")


@pytest.mark.filterwarnings("ignore:.* is deprecated. Use files:DeprecationWarning")
def test_v0_messages_kafka_python_wrote_print_no_timestamp(tmp_path):
    from kafka.record.legacy_records import LegacyRecordBatchBuilder

    builder = LegacyRecordBatchBuilder(magic=0, compression_type=0, batch_size=1 << 20)
    for i in range(3):
        builder.append(i, timestamp=None, key=b"k%d" % i, value=b"v%d" % i)
    part = tmp_path / "logs" / "old-0"
    part.mkdir(parents=True)
    (part / "00000000000000000000.log").write_bytes(bytes(builder.build()))
    status, out, err = run(str(tmp_path / "logs"), "--topic", "old", "--from-beginning",
                           *prints("timestamp", "key"))
    assert status == 0, err
    assert out == b"".join(b"NO_TIMESTAMP\tk%d\tv%d\n" % (i, i) for i in range(3))


# -- real files a broker wrote (../shared/fixtures/kafka-real), checked with kafka-python -----

REAL = SHARED / "kafka-real" / "VolodymyrZee-kafka"


@pytest.mark.skipif(not REAL.is_dir(), reason="../shared/fixtures not present")
@pytest.mark.filterwarnings("ignore:.* is deprecated. Use files:DeprecationWarning")
def test_real_broker_files_print_as_kafka_python_reads_them():
    from kafka.record.memory_records import MemoryRecords

    expected = []
    for p in range(3):
        data = (REAL / f"first_topic-{p}" / "00000000000000000000.log").read_bytes()
        records = MemoryRecords(data)
        while records.has_next():
            for r in records.next_batch():
                expected.append(f"CreateTime:{r.timestamp}\tPartition:{p}\tOffset:{r.offset}\t"
                                f"{'null' if r.key is None else r.key.decode()}\t"
                                f"{r.value.decode()}")
    status, out, err = run(str(REAL), "--topic", "first_topic", "--from-beginning",
                           *prints("timestamp", "partition", "offset", "key"))
    assert status == 0, err
    assert out.decode().splitlines() == expected and len(expected) == 41


@pytest.mark.skipif(not REAL.is_dir(), reason="../shared/fixtures not present")
def test_real_group_commits_are_where_a_group_consumer_starts():
    # the real broker's last commits of the group, as the offsets formatter prints them
    status, out, _ = run(str(REAL), "--topic", "__consumer_offsets", "--from-beginning",
                         "--formatter", "OffsetsMessageFormatter")
    assert status == 0
    import json

    decoder = json.JSONDecoder()
    text, i, last = out.decode(), 0, {}
    while i < len(text):  # one JSON object after another, no separator (Kafka 4.2)
        obj, i = decoder.raw_decode(text, i)
        k = obj["key"]["data"]
        if k["group"] == "my-second-application" and obj["value"] is not None:
            last[k["partition"]] = obj["value"]["data"]["offset"]
    assert set(last) == {0, 1, 2}
    # read-only (enable.auto.commit=false): the fixture directory is not written
    status, out, err = run(str(REAL), "--topic", "first_topic", "--group",
                           "my-second-application", "--command-property",
                           "enable.auto.commit=false", *prints("offset", "partition"))
    assert status == 0, err
    firsts: dict[int, int] = {}
    for line in out.decode().splitlines():
        part, off = (int(f.split(":")[1]) for f in line.split("\t")[:2])
        firsts.setdefault(part, off)
    ends = {0: 11, 1: 12, 2: 18}
    for p in range(3):
        if last[p] < ends[p]:
            assert firsts[p] == last[p]
        else:
            assert p not in firsts


# -- the columnar path (DefaultMessageFormatter.format_table) against write_to -------------------

_PRINTS = ("timestamp", "key", "value", "partition", "offset", "delivery", "epoch", "headers")
_opt_bytes = st.none() | st.binary(max_size=12)
_records = st.lists(st.tuples(_opt_bytes, _opt_bytes,
                              st.lists(st.tuples(st.text(max_size=4), _opt_bytes), max_size=3)),
                    min_size=1, max_size=25)


@given(records=_records,
       prints=st.fixed_dictionaries({p: st.sampled_from(["true", "false"]) for p in _PRINTS}),
       seps=st.fixed_dictionaries({
           "key.separator": st.sampled_from(["\t", "<sep>", ""]),
           "line.separator": st.sampled_from(["\n", "<end>", "\r\n"]),
           "headers.separator": st.sampled_from([",", "|"]),
           "null.literal": st.sampled_from(["null", "", "<null>"])}),
       log_append=st.booleans(), codec=st.sampled_from(["none", "zstd", "gzip"]),
       split=st.integers(0, 25))
def test_format_table_writes_what_write_to_writes(records, prints, seps, log_append, codec,
                                                  split):
    import tempfile

    configs = {f"print.{k}": v for k, v in prints.items()} | seps
    f = formatter("DefaultMessageFormatter", configs)
    assert f.formats_tables
    with tempfile.TemporaryDirectory() as tmp:
        with LogDir.open(Path(tmp) / "logs") as d:
            d.create_topic("t", 4, {"message.timestamp.type": "LogAppendTime"} if log_append
                           else None)
            log = d.log("t", 3)
            rows = [Record(k, v, 1000 + i, h) for i, (k, v, h) in enumerate(records)]
            for part in (rows[:split], rows[split:]):
                if part:
                    log.append(part, compression=codec)
            table = log.read_table()
            one_by_one = io.BytesIO()
            for fetched in log.batches():
                ttype = fetched.batch.timestamp_type
                for r in fetched.records:
                    f.write_to(ConsumerRecord("t", 3, r.offset, r.timestamp, ttype, r.key,
                                              r.value, tuple(r.headers)), one_by_one)
            assert bytes(f.format_table(table, 3)) == one_by_one.getvalue()
            # a slice of the table (the command's max-messages cut) as well
            cut = table.slice(1, max(0, table.num_rows - 2))
            assert bytes(f.format_table(cut, 3)) == b"".join(
                bytes(f.format_table(cut.slice(i, 1), 3)) for i in range(cut.num_rows))


def test_both_paths_of_the_command_print_and_commit_the_same(tmp_path):
    root = tmp_path / "logs"
    with LogDir.open(root) as d:
        d.create_topic("t", 2)
        log = d.log("t", 0)
        log.append([Record(b"a", b"1", 1), Record(None, None, 2, [("h", None)])])
        log.append([Record(b"x", b"aborted", 3)], producer_id=5, producer_epoch=0,
                   base_sequence=0, transactional=True)
        log.abort_transaction(5, 0)
        log.append([Record(b"b", b"2", 4)], compression="snappy")
        d.log("t", 1).append([Record(b"c", b"3", 5)])
    common = ["--topic", "t", "--from-beginning", "--isolation-level", "read_committed",
              *prints("key", "headers", "offset")]
    for max_messages in (["--max-messages", "2"], []):
        outs = []
        for i, fmt in enumerate(("DefaultMessageFormatter", "LoggingMessageFormatter")):
            status, out, err = run(str(root), *common, *max_messages, "--formatter", fmt,
                                   "--group", f"g{i}{len(max_messages)}")
            assert status == 0, err
            outs.append((out, committed(root, f"g{i}{len(max_messages)}")))
        assert outs[0] == outs[1]
    assert outs[0][0] == b"Offset:0\tNO_HEADERS\ta\t1\nOffset:1\th:null\tnull\tnull\n" \
        b"Offset:4\tNO_HEADERS\tb\t2\nOffset:0\tNO_HEADERS\tc\t3\n"
    assert outs[0][1] == {("t", 0): 5, ("t", 1): 1}


def test_a_partition_in_two_dirs_is_refused(tmp_path):
    for name in ("d1", "d2"):
        with LogDir.open(tmp_path / name) as d:
            d.create_topic("t", 1)
            d.log("t", 0).append([Record(None, name.encode(), 1)])
    status, out, err = run(str(tmp_path / "d1"), str(tmp_path / "d2"), "--topic", "t",
                           "--from-beginning")
    assert (status, out) == (1, b"")
    assert "Duplicate log directories for t-0 are found in both" in err


_WRITER = """
import sys, time
from kafkalog import Record
from kafkalog.log_dir import LogDir
with LogDir.open(sys.argv[1], {"segment.bytes": 100_000}) as d:
    d.create_topic("t", 1)
    log = d.log("t", 0)
    print("ready", flush=True)
    i, end = 0, time.monotonic() + float(sys.argv[2])
    while time.monotonic() < end:
        log.append([Record(b"k%d" % j, b"v%d" % j, 1000 + j) for j in range(i, i + 50)])
        d.set_high_watermark("t", 0, log.log_end_offset)
        d.checkpoint_high_watermarks()
        i += 50
"""


def test_reads_a_dir_another_process_is_writing(tmp_path):
    """A broker (here: a kafkalog process holding the dir's lock) appends and rolls while
    the console consumer reads: each run prints a gapless prefix of what was written."""
    import subprocess
    import sys

    root = tmp_path / "live"
    writer = subprocess.Popen([sys.executable, "-c", _WRITER, str(root), "4"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"
        counts = []
        while writer.poll() is None and len(counts) < 40:
            status, out, err = run(str(root), "--topic", "t", "--from-beginning",
                                   *prints("offset"))
            assert status == 0, err
            lines = out.splitlines()
            assert lines == [b"Offset:%d\tv%d" % (i, i) for i in range(len(lines))]
            counts.append(len(lines))
    finally:
        writer.wait(30)
    assert writer.returncode == 0
    assert len(counts) >= 2 and counts[-1] > counts[0] and counts == sorted(counts)
    with LogDir.open(root, read_only=True) as d:
        assert len(d.log("t", 0).segments) > 1  # it rolled while being read


def test_columnar_chunks_stay_bounded_with_large_records(tmp_path, monkeypatch):
    """The first chunk is sized from the log's bytes per offset and later ones from what the
    previous decoded to: 1 MiB records are not decoded 4096 at a time."""
    import os

    from kafkalog.log import Log

    root = tmp_path / "logs"
    value = os.urandom(1 << 20)
    with LogDir.open(root) as d:
        d.create_topic("t", 1, {"max.message.bytes": 2_000_000})
        for i in range(60):
            d.log("t", 0).append([Record(b"k%d" % i, value, i)])
    sizes = []
    read_table = Log.read_table

    def spy(self, *args, **kwargs):
        table = read_table(self, *args, **kwargs)
        sizes.append(table.nbytes)
        return table
    monkeypatch.setattr(Log, "read_table", spy)
    out = io.BytesIO()
    assert console_consumer.main([str(root), "--topic", "t", "--from-beginning"], stdout=out,
                                 stderr=io.StringIO()) == 0
    assert out.getvalue() == (value + b"\n") * 60
    assert len(sizes) > 3 and max(sizes) <= 16 * (1 << 20) + (1 << 20)


@pytest.mark.parametrize("codec", ["none", "zstd"])
def test_console_producer_lines_come_back_from_the_console_consumer(tmp_path, codec):
    """What one console tool writes the other prints the same (Kafka's defaults match: the
    consumer's ``h:v,h:v<TAB>key<TAB>value`` is what the producer's reader parses)."""
    from kafkalog.console import console_producer

    root = tmp_path / "logs"
    with LogDir.open(root) as d:
        d.create_topic("t", 3)
    lines = [f"h{i % 3}:x{i},z:<NULL>\tkey-{i % 17}\tvalue {i} ü" if i % 5 else
             f"h:{i}\tkey-{i % 17}\t<NULL>" for i in range(400)]
    status = console_producer.main(
        [str(root), "--topic", "t", "--compression-codec", codec,
         "--reader-property", "parse.key=true", "--reader-property", "parse.headers=true",
         "--reader-property", "null.marker=<NULL>"],
        stdin=io.BytesIO("\n".join(lines).encode() + b"\n"), stdout=io.StringIO(),
        stderr=io.StringIO())
    assert status == 0
    status, out, err = run(str(root), "--topic", "t", "--from-beginning",
                           *prints("partition", "headers", "key"),
                           "--formatter-property", "null.literal=<NULL>")
    assert status == 0, err
    printed: dict[str, list[str]] = {}
    for line in out.decode().splitlines():
        partition, rest = line.split("\t", 1)
        printed.setdefault(partition, []).append(rest)
    assert sorted(r for rs in printed.values() for r in rs) == sorted(lines)
    for rows in printed.values():  # each partition in the order the lines came
        assert rows == [line for line in lines if line in set(rows)]


def test_a_group_commit_creates_the_offsets_topic_as_a_broker_would(tree):
    assert not any(p.name.startswith("__consumer_offsets-") for p in tree.iterdir())
    status, out, _ = run(str(tree), "--topic", "orders", "--group", "g", "--from-beginning")
    assert (status, out) == (0, b"v0\nv1\nv2\nw\n")
    with LogDir.open(tree, read_only=True) as d:
        assert d.declared_partitions("__consumer_offsets") == 50
    assert committed(tree, "g") == {("orders", 0): 3, ("orders", 1): 1}


_SLOW_WRITER = """
import sys, time
from kafkalog import Record
from kafkalog.log_dir import LogDir
with LogDir.open(sys.argv[1]) as d:
    log = d.log("t", 0)
    print("ready", flush=True)
    for i in range(int(sys.argv[2]), int(sys.argv[3])):
        time.sleep(0.05)
        log.append([Record(None, b"v%d" % i, 1000 + i)])
        d.set_high_watermark("t", 0, log.log_end_offset)
        d.checkpoint_high_watermarks()
"""


@pytest.mark.parametrize("formatter_args", [(), ("--value-deserializer",
                                                  "org.apache.kafka.common.serialization."
                                                  "StringDeserializer")])
def test_timeout_ms_follows_appends_until_idle(tmp_path, formatter_args):
    """``--timeout-ms``: what another process appends while the consumer runs is printed,
    in order and once, and the consumer exits after the timeout with Kafka's TimeoutException
    line, the total and status 0 (Kafka's receive() loop); a group commits where it got."""
    import subprocess
    import sys
    import threading

    root = tmp_path / "logs"
    with LogDir.open(root) as d:
        d.create_topic("t", 1)
        d.log("t", 0).append([Record(None, b"v%d" % i, 1000 + i) for i in range(5)])
    writer = subprocess.Popen([sys.executable, "-c", _SLOW_WRITER, str(root), "5", "25"],
                              stdout=subprocess.PIPE, text=True)
    assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"
    result: list = []
    reader = threading.Thread(target=lambda: result.append(run(
        str(root), "--topic", "t", "--from-beginning", "--timeout-ms", "1500",
        *formatter_args)))
    reader.start()
    writer.wait(60)
    reader.join(60)
    assert writer.returncode == 0 and not reader.is_alive()
    status, out, err = result[0]
    assert status == 0
    assert out.splitlines() == [b"v%d" % i for i in range(25)]
    assert err.splitlines() == [
        "ERROR Error processing message, terminating consumer process: "
        "org.apache.kafka.common.errors.TimeoutException",
        "Processed a total of 25 messages"]


def test_timeout_ms_with_max_messages_and_a_group(tmp_path):
    """``--max-messages`` ends a following run as soon as it is reached; nothing new within
    ``--timeout-ms`` ends it with the TimeoutException line; a group resumes where it got."""
    root = tmp_path / "logs"
    with LogDir.open(root) as d:
        d.create_topic("t", 1)
        d.log("t", 0).append([Record(None, b"v%d" % i, 1000 + i) for i in range(4)])
    assert run(str(root), "--topic", "t", "--from-beginning", "--timeout-ms", "100",
               "--max-messages", "3", "--group", "g")[:2] == (0, b"v0\nv1\nv2\n")
    status, out, err = run(str(root), "--topic", "t", "--timeout-ms", "100", "--group", "g")
    assert (status, out) == (0, b"v3\n")
    assert "TimeoutException" in err and "Processed a total of 1 messages" in err
    status, out, err = run(str(root), "--topic", "t", "--timeout-ms", "100", "--group", "g")
    assert (status, out) == (0, b"")
    assert run(str(root), "--topic", "t", "--timeout-ms", "x")[0] == 2


_TOPIC_CREATOR = """
import sys, time
from kafkalog import Record
from kafkalog.log_dir import LogDir
print("ready", flush=True)
sys.stdin.readline()
time.sleep(0.3)
with LogDir.open(sys.argv[1]) as d:
    d.create_topic("orders-eu", 1)
    d.log("orders-eu", 0).append([Record(None, b"eu%d" % i, 1000 + i) for i in range(3)])
    d.log("orders-us", 0).append([Record(None, b"us-late", 2000)])
    for t in ("orders-eu", "orders-us"):
        d.set_high_watermark(t, 0, d.log(t, 0).log_end_offset)
    d.checkpoint_high_watermarks()
"""


def test_timeout_ms_picks_up_topics_created_meanwhile(tmp_path):
    """An ``--include`` consumer that follows gets a topic created while it runs (its
    metadata refresh), from ``auto.offset.reset`` (earliest with --from-beginning)."""
    import subprocess
    import sys

    root = tmp_path / "logs"
    with LogDir.open(root) as d:
        d.create_topic("orders-us", 1)
        d.log("orders-us", 0).append([Record(None, b"us0", 1000)])
    import threading

    writer = subprocess.Popen([sys.executable, "-c", _TOPIC_CREATOR, str(root)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"
    result: list = []
    reader = threading.Thread(target=lambda: result.append(run(
        str(root), "--include", "orders-.*", "--from-beginning", "--timeout-ms", "2500")))
    reader.start()
    assert writer.stdin is not None
    writer.stdin.write("go\n")
    writer.stdin.close()
    writer.wait(30)
    reader.join(60)
    status, out, err = result[0]
    assert writer.returncode == 0 and status == 0
    assert sorted(out.splitlines()) == [b"eu0", b"eu1", b"eu2", b"us-late", b"us0"]
    assert out.splitlines()[0] == b"us0"
    assert "Processed a total of 5 messages" in err
