"""``kafkalog console-producer`` (kafkalog.console.console_producer) and its parts.

* The line reader: the cases of Kafka 4.2's ``LineMessageReaderTest.java``, ported one for one,
  then Java's line splitting and decoding.
* The options: the cases of ``ConsoleProducerTest.java`` that mean something offline.
* Partitioning: murmur2 and the keyed partition against kafka-python's (hypothesis), the sticky
  partitioner's switch rule.
* Batching: Java float arithmetic of the size estimate against a JVM, batch.size boundaries,
  ``--sync``, ``linger.ms``, a record above batch.size.
* End to end through ``kafkalog.cli.main``: a topic made with ``kafkalog topics``, lines with
  keys and headers in each codec, the ``.log`` files read back by aiokafka's record decoder and
  by kafka-python consuming from ``kafkalog serve``; refusals (a locked dir, an unknown topic,
  an internal topic, bad lines, records too large).
"""

from __future__ import annotations

import io
import random
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kafkalog import cli
from kafkalog.clock import ManualClock
from kafkalog.console import console_producer as cp
from kafkalog.console.line_message_reader import (
    LineMessageReader,
    LineReaderError,
    ProducerRecord,
    read_lines,
)
from kafkalog.console.partitioner import BuiltInPartitioner, partition_for_key
from kafkalog.log_dir import LogDir
from kafkalog.records.murmur2 import murmur2, to_positive
from kafkalog.records.record import Header

# kafka-python's protocol package warns on import
pytestmark = pytest.mark.filterwarnings("ignore:.* is deprecated. Use files:DeprecationWarning")

NOW = 1_700_000_000_000


# --------------------------------------------------------------------------------------------
# LineMessageReaderTest.java
# --------------------------------------------------------------------------------------------


def default_test_props() -> dict[str, str]:
    return {"topic": "topic", "parse.key": "true", "parse.headers": "true"}


def rec(key: str | None, value: str | None,
        headers: list[tuple[str, str | None]] | None = None) -> ProducerRecord:
    return ProducerRecord("topic", None if key is None else key.encode(),
                          None if value is None else value.encode(),
                          tuple(Header(k, None if v is None else v.encode())
                                for k, v in headers or ()))


def reader_for(props: dict[str, str], data: str):
    reader = LineMessageReader()
    reader.configure(props)
    return reader.read_records(io.BytesIO(data.encode()))


def run_test(props: dict[str, str], data: str, *expected: ProducerRecord) -> None:
    it = reader_for(props, data)
    for record in expected:
        assert next(it) == record
    with pytest.raises(StopIteration):
        next(it)


def assert_config_refused(props: dict[str, str], message: str) -> None:
    with pytest.raises(LineReaderError) as e:
        LineMessageReader().configure(props)
    assert str(e.value) == message


def test_line_reader() -> None:
    run_test({**default_test_props(), "parse.headers": "false"}, "key0\tvalue0\nkey1\tvalue1",
             rec("key0", "value0"), rec("key1", "value1"))


def test_line_reader_header() -> None:
    run_test(default_test_props(),
             "headerKey0:headerValue0,headerKey1:headerValue1\tkey0\tvalue0\n",
             rec("key0", "value0", [("headerKey0", "headerValue0"),
                                    ("headerKey1", "headerValue1")]))


def test_minimal_valid_input_with_header_key_and_value() -> None:
    run_test(default_test_props(), ":\t\t", rec("", "", [("", "")]))


def test_key_missing_value() -> None:
    run_test({**default_test_props(), "parse.headers": "false"}, "key\t", rec("key", ""))


def test_demarcations_longer_than_one() -> None:
    props = {**default_test_props(), "key.separator": "\t\t", "headers.delimiter": "\t\t",
             "headers.separator": "---", "headers.key.separator": "::::"}
    run_test(props, "headerKey0.0::::headerValue0.0---headerKey1.0::::\t\tkey\t\tvalue",
             rec("key", "value", [("headerKey0.0", "headerValue0.0"), ("headerKey1.0", "")]))


def test_line_reader_header_no_key() -> None:
    run_test({**default_test_props(), "parse.key": "false"}, "headerKey:headerValue\tvalue\n",
             rec(None, "value", [("headerKey", "headerValue")]))


def test_line_reader_only_value() -> None:
    run_test({**default_test_props(), "parse.key": "false", "parse.headers": "false"},
             "value\n", rec(None, "value"))


def test_parse_header_enabled_with_custom_delimiter_and_varying_number_of_pairs() -> None:
    props = {**default_test_props(), "key.separator": "#", "headers.delimiter": "!",
             "headers.separator": "&", "headers.key.separator": ":"}
    run_test(props, "headerKey0.0:headerValue0.0&headerKey0.1:headerValue0.1!key0#value0\n"
                    "headerKey1.0:headerValue1.0!key1#value1",
             rec("key0", "value0", [("headerKey0.0", "headerValue0.0"),
                                    ("headerKey0.1", "headerValue0.1")]),
             rec("key1", "value1", [("headerKey1.0", "headerValue1.0")]))


def test_missing_key_separator() -> None:
    it = reader_for(default_test_props(),
                    "headerKey0.0:headerValue0.0,headerKey0.1:headerValue0.1\tkey0\tvalue0\n"
                    "headerKey1.0:headerValue1.0\tkey1[MISSING-DELIMITER]value1")
    next(it)
    with pytest.raises(LineReaderError) as e:
        next(it)
    assert str(e.value) == ("No key separator found on line number 2: "
                            "'headerKey1.0:headerValue1.0\tkey1[MISSING-DELIMITER]value1'")


def test_missing_header_key_separator() -> None:
    it = reader_for(default_test_props(), "key[MISSING-DELIMITER]val\tkey0\tvalue0\n")
    with pytest.raises(LineReaderError) as e:
        next(it)
    assert str(e.value) == ("No header key separator found in pair 'key[MISSING-DELIMITER]val' "
                            "on line number 1")


def test_header_demarcation_collision() -> None:
    props = {**default_test_props(), "headers.delimiter": "\t", "headers.separator": "\t",
             "headers.key.separator": "\t"}
    assert_config_refused(props, "headers.delimiter and headers.separator may not be equal")
    props["headers.separator"] = ","
    assert_config_refused(props, "headers.delimiter and headers.key.separator may not be equal")
    props["headers.key.separator"] = ","
    assert_config_refused(props, "headers.separator and headers.key.separator may not be equal")


def test_ignore_error_in_input() -> None:
    data = ("headerKey0.0:headerValue0.0\tkey0\tvalue0\n"
            "headerKey1.0:headerValue1.0,headerKey1.1:headerValue1.1[MISSING-HEADER-DELIMITER]"
            "key1\tvalue1\n"
            "headerKey2.0:headerValue2.0\tkey2[MISSING-KEY-DELIMITER]value2\n"
            "headerKey3.0:headerValue3.0[MISSING-HEADER-DELIMITER]key3[MISSING-KEY-DELIMITER]"
            "value3\n")
    run_test({**default_test_props(), "ignore.error": "true"}, data,
             rec("key0", "value0", [("headerKey0.0", "headerValue0.0")]),
             rec(None, "value1", [
                 ("headerKey1.0", "headerValue1.0"),
                 ("headerKey1.1", "headerValue1.1[MISSING-HEADER-DELIMITER]key1")]),
             rec(None, "key2[MISSING-KEY-DELIMITER]value2", [("headerKey2.0", "headerValue2.0")]),
             rec(None, "headerKey3.0:headerValue3.0[MISSING-HEADER-DELIMITER]key3"
                       "[MISSING-KEY-DELIMITER]value3"))


def test_malformed_header_ignore_error() -> None:
    run_test({**default_test_props(), "ignore.error": "true"}, "key-val\tkey0\tvalue0\n",
             rec("key0", "value0", [("key-val", None)]))


def test_null_marker() -> None:
    data = "key\t\nkey\t<NULL>\nkey\t<NULL>value\n<NULL>\tvalue\n<NULL>\t<NULL>"
    props = {**default_test_props(), "null.marker": "<NULL>", "parse.headers": "false"}
    run_test(props, data, rec("key", ""), rec("key", None), rec("key", "<NULL>value"),
             rec(None, "value"), rec(None, None))
    del props["null.marker"]  # not set: the marker is text
    run_test(props, data, rec("key", ""), rec("key", "<NULL>"), rec("key", "<NULL>value"),
             rec("<NULL>", "value"), rec("<NULL>", "<NULL>"))


def test_null_marker_with_headers() -> None:
    data = ("h0:v0,h1:v1\t<NULL>\tvalue\n"
            "<NULL>\tkey\t<NULL>\n"
            "h0:,h1:v1\t<NULL>\t<NULL>\n"
            "h0:<NULL>,h1:v1\tkey\t<NULL>\n"
            "h0:<NULL>,h1:<NULL>value\tkey\t<NULL>\n")
    h1 = ("h1", "v1")
    props = {**default_test_props(), "null.marker": "<NULL>"}
    run_test(props, data,
             rec(None, "value", [("h0", "v0"), h1]),
             rec("key", None),
             rec(None, None, [("h0", ""), h1]),
             rec("key", None, [("h0", None), h1]),
             rec("key", None, [("h0", None), ("h1", "<NULL>value")]))
    del props["null.marker"]
    it = reader_for(props, data)
    assert next(it) == rec("<NULL>", "value", [("h0", "v0"), h1])
    with pytest.raises(LineReaderError) as e:  # line 2 is not valid any more
        next(it)
    assert str(e.value) == "No header key separator found in pair '<NULL>' on line number 2"
    # the iterator goes on with the next line, as Kafka's
    assert next(it) == rec("<NULL>", "<NULL>", [("h0", ""), h1])
    assert next(it) == rec("key", "<NULL>", [("h0", "<NULL>"), h1])
    assert next(it) == rec("key", "<NULL>", [("h0", "<NULL>"), ("h1", "<NULL>value")])


def test_null_marker_header_key_throws() -> None:
    data = "<NULL>:v0,h1:v1\tkey\tvalue\n"
    props = {**default_test_props(), "null.marker": "<NULL>"}
    with pytest.raises(LineReaderError) as e:
        next(reader_for(props, data))
    assert str(e.value) == ("Header keys should not be equal to the null marker '<NULL>' as "
                            "they can't be null")
    del props["null.marker"]
    run_test(props, data, rec("key", "value", [("<NULL>", "v0"), ("h1", "v1")]))


def test_invalid_null_marker() -> None:
    props = {**default_test_props(), "headers.delimiter": "-", "headers.separator": ":",
             "headers.key.separator": "/"}
    for marker, name in (("-", "headers.delimiter"), (":", "headers.separator"),
                         ("/", "headers.key.separator")):
        assert_config_refused({**props, "null.marker": marker},
                              f"null.marker and {name} may not be equal")
    assert_config_refused({**props, "null.marker": "\t"}, "null.marker and key.separator may "
                                                          "not be equal")


# -- beyond Kafka's cases: Java's readLine, UTF-8 decoding, Pattern.split, booleans ----------


def test_lines_split_as_java_readline() -> None:
    data = b"a\r\nb\rc\n\nd\r\r\ne\r"
    assert list(read_lines(io.BytesIO(data))) == [b"a", b"b", b"c", b"", b"d", b"", b"e"]
    assert list(read_lines(io.BytesIO(b""))) == []
    assert list(read_lines(io.BytesIO(b"\n"))) == [b""]


def test_malformed_utf8_is_replaced_as_java_decodes_it() -> None:
    props = {**default_test_props(), "parse.headers": "false"}
    it = LineMessageReader()
    it.configure(props)
    (r,) = it.read_records(io.BytesIO(b"k\xff\tv\xe2\x82\n"))
    assert r.key == "k\ufffd".encode() and r.value == "v\ufffd".encode()


def test_headers_split_as_java_pattern_split() -> None:
    # trailing empty pairs are dropped ("," -> no header at all); "" is one empty pair
    run_test(default_test_props(), "a:1,,\tk\tv\n,\tk\tv\n",
             rec("k", "v", [("a", "1")]), rec("k", "v"))
    with pytest.raises(LineReaderError, match="in pair '' on line number 1"):
        next(reader_for(default_test_props(), "\tk\tv\n"))
    # the separator is a regular expression
    run_test({**default_test_props(), "headers.separator": "[;|]"}, "a:1;b:2|c:3\tk\tv",
             rec("k", "v", [("a", "1"), ("b", "2"), ("c", "3")]))


def test_flags_are_trimmed_and_case_insensitive() -> None:
    reader = LineMessageReader()
    reader.configure({"topic": "t", "parse.key": " TRUE\t", "parse.headers": "yes"})
    assert reader.parse_key and not reader.parse_headers


# --------------------------------------------------------------------------------------------
# ConsoleProducerTest.java (the option cases)
# --------------------------------------------------------------------------------------------


def options(*argv: str) -> tuple[object, str]:
    """Parsed and checked options of ``argv`` (LOGDIR first), and what checking printed."""
    args = cp.build_parser().parse_args(["/nonexistent", *argv])
    out = io.StringIO()
    cp.check_args(args, out)
    return args, out.getvalue()


BOOTSTRAP_SERVER_VALID_ARGS = ["--bootstrap-server", "localhost:1003,localhost:1004", "--topic",
                               "t3", "--reader-property", "parse.key=true",
                               "--reader-property", "key.separator=#"]


def test_valid_configs_bootstrap_server() -> None:
    args, _ = options(*BOOTSTRAP_SERVER_VALID_ARGS)
    assert cp.producer_properties(args)["bootstrap.servers"] == "localhost:1003,localhost:1004"


def test_invalid_configs_are_a_usage_error(tmp_path: Path) -> None:
    err = io.StringIO()
    assert cp.main([str(tmp_path), "--t", "t3"], stdin=io.BytesIO(), stderr=err) == 2
    assert "ambiguous option: --t" in err.getvalue()


@pytest.mark.parametrize("flag", ["--property", "--reader-property"])
def test_parse_key_prop(flag: str) -> None:
    args, printed = options("--topic", "t3", flag, "parse.key=true", flag, "key.separator=#")
    reader = cp.message_reader(args)
    assert reader.key_separator == "#" and reader.parse_key
    assert ("Warning: --property is deprecated" in printed) == (flag == "--property")


@pytest.mark.parametrize("flag", ["--property", "--reader-property"])
def test_parse_reader_config_file(tmp_path: Path, flag: str) -> None:
    props = tmp_path / "reader.properties"
    props.write_bytes(b"parse.key=true\nkey.separator=|")
    args, _ = options("--topic", "test", flag, "key.separator=;", flag, "parse.headers=true",
                      "--reader-config", str(props))
    reader = cp.message_reader(args)
    assert reader.key_separator == ";"  # the property wins over the file
    assert reader.parse_key and reader.parse_headers


def test_default_client_id_and_overrides() -> None:
    args, _ = options(*BOOTSTRAP_SERVER_VALID_ARGS)
    assert cp.producer_properties(args)["client.id"] == "console-producer"
    for flag in ("--producer-property", "--command-property"):
        args, printed = options("--topic", "t3", flag, "client.id=producer-1")
        assert cp.producer_properties(args)["client.id"] == "producer-1"
        assert ("Warning: --producer-property is deprecated" in printed) == \
            (flag == "--producer-property")


@pytest.mark.parametrize("argv, batch_size", [
    (["--batch-size", "123", "--max-partition-memory-bytes", "456"], 456),
    (["--batch-size", "123"], 123),
    (["--max-partition-memory-bytes", "456"], 456),
    ([], 16 * 1024),
    (["--command-property", "batch.size=777"], 777),  # a property no option overrides
])
def test_batch_size(argv: list[str], batch_size: int) -> None:
    args, _ = options("--topic", "t3", *argv)
    config = cp.ProducerConfig.from_properties(cp.producer_properties(args))
    assert config.batch_size == batch_size


@pytest.mark.parametrize("argv, message", [
    (["--producer-property", "acks=all", "--command-property", "batch.size=16384"],
     "Options --command-property and --producer-property cannot be specified together."),
    (["--producer.config", "a", "--command-config", "b"],
     "Options --command-config and --producer.config cannot be specified together."),
    (["--property", "parse.key=true", "--reader-property", "parse.headers=true"],
     "Options --reader-property and --property cannot be specified together."),
    ([], 'Missing required argument "[topic]"'),
])
def test_exclusive_options_exit(tmp_path: Path, argv: list[str], message: str) -> None:
    if argv:
        argv = ["--topic", "test", *argv]
    err = io.StringIO()
    assert cp.main([str(tmp_path), *argv], stdin=io.BytesIO(), stderr=err) == 2
    assert err.getvalue() == f"kafkalog console-producer: error: {message}\n"


def test_producer_config_from_file_and_command_property_precedence(tmp_path: Path) -> None:
    conf = tmp_path / "producer.properties"
    conf.write_text("acks=1\nbatch.size=32768\n")
    args, _ = options("--topic", "test", "--command-config", str(conf))
    props = cp.producer_properties(args)
    # ConsoleProducer merges its --request-required-acks default only when acks is unset
    assert props["acks"] == "1" and props["batch.size"] == "32768"
    args, _ = options("--topic", "test", "--command-config", str(conf),
                      "--command-property", "acks=all")
    config = cp.ProducerConfig.from_properties(cp.producer_properties(args))
    assert config.acks == "all" and config.batch_size == 32768


def test_compression_codec_option() -> None:
    for argv, codec in (([], "none"), (["--compression-codec"], "gzip"),
                        (["--compression-codec", "zstd"], "zstd")):
        args, _ = options("--topic", "t", *argv)
        assert cp.ProducerConfig.from_properties(cp.producer_properties(args)).compression == codec
    # ConsoleProducer always sets compression.type from --compression-codec
    args, _ = options("--topic", "t", "--command-property", "compression.type=gzip")
    assert cp.producer_properties(args)["compression.type"] == "none"
    # --timeout is linger.ms, 1000 by default
    assert cp.ProducerConfig.from_properties(cp.producer_properties(args)).linger_ms == 1000


@pytest.mark.parametrize("argv, message", [
    (["--compression-codec", "GZIP"], "org.apache.kafka.common.config.ConfigException: Invalid "
     "value GZIP for configuration compression.type: String must be one of: none, gzip, "
     "snappy, lz4, zstd"),
    (["--batch-size", "-1"], "org.apache.kafka.common.config.ConfigException: Invalid value -1 "
     "for configuration batch.size: Value must be at least 0"),
    (["--command-property", "linger.ms=soon"], "org.apache.kafka.common.config.ConfigException"
     ": Invalid value soon for configuration linger.ms: Not a number of type LONG"),
    (["--command-property", "compression.zstd.level=23"], "org.apache.kafka.common.config."
     "ConfigException: Invalid value 23 for configuration compression.zstd.level: Value must "
     "be no more than 22"),
    (["--line-reader", "my.Reader"], "java.lang.ClassNotFoundException: my.Reader (only "
     "org.apache.kafka.tools.LineMessageReader is available offline: no Java class can be "
     "loaded)"),
    (["--reader-property", "headers.separator=\t"], "org.apache.kafka.common.KafkaException: "
     "headers.delimiter and headers.separator may not be equal"),
])
def test_refused_configuration_exits_1_before_opening_the_dir(tmp_path: Path, argv, message):
    err = io.StringIO()
    assert cp.main([str(tmp_path / "absent"), "--topic", "t", *argv], stdin=io.BytesIO(),
                   stderr=err) == 1
    assert err.getvalue() == f"kafkalog console-producer: error: {message}\n"


# --------------------------------------------------------------------------------------------
# Partitioning
# --------------------------------------------------------------------------------------------


def _kafka_python_cluster(topic: str, partitions: int):
    """kafka-python's ClusterMetadata, updated from a real (encoded, decoded) Metadata v0
    response listing ``partitions`` partitions led by broker 0."""
    from kafka.cluster import ClusterMetadata
    from kafka.protocol.metadata import MetadataResponse

    resp = MetadataResponse[0]
    part = resp.MetadataResponseTopic.MetadataResponsePartition
    data = resp(brokers=[resp.MetadataResponseBroker(node_id=0, host="h", port=9092)],
                topics=[resp.MetadataResponseTopic(
                    error_code=0, name=topic,
                    partitions=[part(error_code=0, partition_index=p, leader_id=0,
                                     replica_nodes=[0], isr_nodes=[0])
                                for p in range(partitions)])]).encode(version=0)
    cluster = ClusterMetadata()
    cluster.update_metadata(resp.decode(io.BytesIO(data), version=0))
    assert cluster.partitions_for_topic(topic) == set(range(partitions))
    return cluster


@settings(max_examples=300, deadline=None)
@given(key=st.binary(max_size=40), partitions=st.integers(1, 64))
def test_murmur2_and_keyed_partition_equal_kafka_python(key: bytes, partitions: int) -> None:
    from kafka.partitioner.default import DefaultPartitioner
    from kafka.partitioner.default import murmur2 as kafka_python_murmur2

    assert murmur2(key) & 0xFFFFFFFF == kafka_python_murmur2(key)
    assert -(2**31) <= murmur2(key) < 2**31
    cluster = _kafka_python_cluster("t", partitions)
    assert partition_for_key(key, partitions) == \
        DefaultPartitioner().partition("t", key, key, None, None, cluster)


def test_murmur2_known_values_and_the_tiered_reexport() -> None:
    from kafkalog.tiered import partitioner as tiered

    assert tiered.murmur2 is murmur2  # kept importable from its old place
    # Kafka's UtilsTest.testMurmur2 vectors (Utils.murmur2 of these strings' UTF-8 bytes)
    cases = {"21": -973932308, "foobar": -790332482, "a-little-bit-long-string": -985981536,
             "a-little-bit-longer-string": -1486304829,
             "lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
             "abc": 479470107}
    assert {k: murmur2(k.encode()) for k in cases} == cases
    assert to_positive(-(2**31)) == 0 and to_positive(-1) == 2**31 - 1


def test_sticky_partitioner_switch_rule() -> None:
    p = BuiltInPartitioner(5, sticky_batch_size=100, rng=random.Random(3))
    draws = random.Random(3)
    expected = [to_positive(draws.getrandbits(32)) % 5 for _ in range(4)]
    assert p.peek_current_partition() == expected[0]
    assert not p.update_partition_info(99, enable_switch=True)   # below batch.size
    assert not p.update_partition_info(50, enable_switch=False)  # batch not full: wait
    assert p.update_partition_info(0, enable_switch=True)        # full now: switch
    assert p.peek_current_partition() == expected[1] and p.produced_bytes == 0
    assert p.update_partition_info(200, enable_switch=False)     # 2 x batch.size regardless
    assert p.peek_current_partition() == expected[2]
    with pytest.raises(ValueError, match="stickyBatchSize must be >= 1 but got 0"):
        BuiltInPartitioner(1, 0)


# --------------------------------------------------------------------------------------------
# The size estimate in Java floats
# --------------------------------------------------------------------------------------------

_JAVA_ESTIMATE = r"""
public class E { public static void main(String[] a) {
  float ratio = 1.0f;
  for (int i = 0; i < a.length; i += 2) {
    int uncompressed = Integer.parseInt(a[i]); int written = Integer.parseInt(a[i + 1]);
    int estimate = 61 + (int) (uncompressed * ratio * 1.05f);   // estimatedBytesWritten
    float observed = (float) written / uncompressed;             // actualCompressionRatio
    if (observed > ratio) ratio = Math.max(ratio + 0.05f, observed);   // updateEstimation
    else if (observed < ratio) ratio = Math.max(ratio - 0.005f, observed);
    System.out.println(estimate + " " + Float.floatToIntBits(ratio));
  }
} }
"""


@pytest.mark.skipif(shutil.which("javac") is None, reason="needs a JDK (java runs the "
                    "single-file program only with the compiler: javac)")
def test_compression_estimate_in_java_floats(tmp_path: Path) -> None:
    rng = random.Random(11)
    pairs = [(rng.randrange(1, 1 << 24), 0) for _ in range(300)]
    pairs = [(u, rng.randrange(0, 2 * u)) for u, _ in pairs]
    src = tmp_path / "E.java"
    src.write_text(_JAVA_ESTIMATE)
    out = subprocess.run(["java", str(src), *(str(x) for p in pairs for x in p)],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    ratio, ours = 1.0, []
    for uncompressed, written in pairs:
        estimate = cp.estimated_bytes_written(uncompressed, ratio, True)
        ratio = cp.update_compression_ratio(
            ratio, cp.observed_compression_ratio(written + 61, uncompressed))
        ours.append(f"{estimate} {struct.unpack('<i', struct.pack('<f', ratio))[0]}")
    assert ours == out.split("\n")[:-1]


# --------------------------------------------------------------------------------------------
# End to end
# --------------------------------------------------------------------------------------------

CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


def create_topic(log_dir: Path, topic: str, partitions: int, *config: str) -> None:
    log_dir.mkdir(exist_ok=True)
    extra = [a for c in config for a in ("--config", c)]
    assert cli.main(["topics", str(log_dir), "--create", "--topic", topic, "--partitions",
                     str(partitions), *extra]) == 0


def produce(log_dir: Path, *argv: str, data: bytes, clock=None, rng=None
            ) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = cp.main([str(log_dir), *argv], stdin=io.BytesIO(data), stdout=out, stderr=err,
                     clock=clock if clock is not None else ManualClock(NOW), rng=rng)
    return status, out.getvalue(), err.getvalue()


def batches(log_dir: Path, topic: str, partition: int) -> list:
    """The partition's batches as aiokafka decodes them: (batch, [(key, value, headers, ts)])."""
    from aiokafka.record.memory_records import MemoryRecords

    found = []
    for seg in sorted((log_dir / f"{topic}-{partition}").glob("*.log")):
        records = MemoryRecords(seg.read_bytes())
        while (batch := records.next_batch()) is not None:
            assert batch.validate_crc()
            found.append((batch, [(r.key, r.value, [(k, bytes(v) if v is not None else None)
                                                    for k, v in r.headers], r.timestamp)
                                  for r in batch]))
    return found


def checkpoint(log_dir: Path, name: str = "replication-offset-checkpoint") -> dict:
    lines = (log_dir / name).read_text().splitlines()
    return {(t, int(p)): int(o) for t, p, o in (line.split() for line in lines[2:])}


@pytest.mark.parametrize("codec", list(CODECS))
def test_keys_headers_and_codecs_read_back_by_aiokafka(tmp_path: Path, codec: str) -> None:
    from aiokafka.partitioner import DefaultPartitioner

    d = tmp_path / "logs"
    create_topic(d, "t", 3)
    lines = [(f"h{i}:v{i},x:{'y' * i}", f"key{i % 7}", f"value-{i}-" + "z" * (i * 13))
             for i in range(60)]
    data = "".join(f"{h}\t{k}\t{v}\n" for h, k, v in lines).encode()
    status, out, err = produce(d, "--topic", "t", "--compression-codec", codec,
                               "--reader-property", "parse.key=true",
                               "--reader-property", "parse.headers=true", data=data)
    assert (status, out, err) == (0, "", "")
    expected: dict[int, list] = {0: [], 1: [], 2: []}
    for h, k, v in lines:
        p = DefaultPartitioner()(k.encode(), [0, 1, 2], [0, 1, 2])
        hdrs = [(pair.split(":")[0], pair.split(":")[1].encode()) for pair in h.split(",")]
        expected[p].append((k.encode(), v.encode(), hdrs, NOW))
    for p in range(3):
        found = batches(d, "t", p)
        assert [r for _, recs in found for r in recs] == expected[p]
        for batch, _ in found:
            assert batch.compression_type == CODECS[codec]
            assert batch.producer_id == -1 and batch.timestamp_type == 0  # CreateTime
    # the high watermark covers everything: the leader acknowledged at once
    assert checkpoint(d) == {("t", p): len(expected[p]) for p in range(3)}


def test_batch_size_boundaries(tmp_path: Path) -> None:
    d = tmp_path / "logs"
    create_topic(d, "t", 1)
    value = b"x" * 40
    size = cp.record_size_in_bytes(0, 0, None, value, ())  # every record's size here
    assert all(cp.record_size_in_bytes(i, 0, None, value, ()) == size for i in range(10))
    for batch_size, per_batch in ((61 + 3 * size, 3), (61 + 3 * size - 1, 2),
                                  (61 + 3 * size + size - 1, 3)):
        shutil.rmtree(d)
        create_topic(d, "t", 1)
        status, _, err = produce(d, "--topic", "t", "--batch-size", str(batch_size),
                                 data=(value + b"\n") * 10)
        assert status == 0, err
        counts = [len(recs) for _, recs in batches(d, "t", 0)]
        assert counts == [per_batch] * (10 // per_batch) + ([10 % per_batch] if 10 % per_batch
                                                             else [])


def test_a_record_above_batch_size_gets_its_own_batch(tmp_path: Path) -> None:
    d = tmp_path / "logs"
    create_topic(d, "t", 1)
    big = b"L" * 500
    status, _, _ = produce(d, "--topic", "t", "--batch-size", "200",
                           data=b"a\nb\n" + big + b"\n" + b"c" * 20 + b"\nd\n")
    assert status == 0
    assert [[r[1] for r in recs] for _, recs in batches(d, "t", 0)] == \
        [[b"a", b"b"], [big], [b"c" * 20, b"d"]]
    # its batch's limit is the record's upper-bound estimate (RecordAccumulator: max(batch.size,
    # estimateSizeInBytesUpperBound)), 21 bytes of record overhead where it takes 5: records
    # that fit in the difference join it, as in Kafka
    limit = cp.estimate_size_upper_bound(None, big, ())
    assert limit - (61 + cp.record_size_in_bytes(0, 0, None, big, ())) == 16
    shutil.rmtree(d)
    create_topic(d, "t", 1)
    status, _, _ = produce(d, "--topic", "t", "--batch-size", "200",
                           data=big + b"\nc\nd\ne\n")
    assert [[r[1] for r in recs] for _, recs in batches(d, "t", 0)] == \
        [[big, b"c", b"d"], [b"e"]]


def test_sync_writes_one_batch_per_record(tmp_path: Path) -> None:
    d = tmp_path / "logs"
    create_topic(d, "t", 2)
    status, _, _ = produce(d, "--topic", "t", "--sync", "--reader-property", "parse.key=true",
                           data=b"".join(b"k%d\tv%d\n" % (i, i) for i in range(12)))
    assert status == 0
    found = batches(d, "t", 0) + batches(d, "t", 1)
    assert len(found) == 12 and all(len(recs) == 1 for _, recs in found)


class SteppingClock(ManualClock):
    """A clock that moves ``step_ms`` forward each time it is read (a record a read)."""

    def __init__(self, start_ms: int, step_ms: int) -> None:
        super().__init__(start_ms)
        self.step_ms = step_ms

    def milliseconds(self) -> int:
        now = super().milliseconds()
        self.advance(self.step_ms)
        return now


def test_linger_ms_closes_a_batch(tmp_path: Path) -> None:
    d = tmp_path / "logs"
    create_topic(d, "t", 1)
    # records 400 ms apart, linger.ms 1000: a batch takes the records of its first second
    status, _, _ = produce(d, "--topic", "t", data=b"".join(b"%d\n" % i for i in range(7)),
                           clock=SteppingClock(NOW, 400))
    assert status == 0
    got = [[(r[1], r[3] - NOW) for r in recs] for _, recs in batches(d, "t", 0)]
    assert got == [[(b"0", 0), (b"1", 400), (b"2", 800)], [(b"3", 1200), (b"4", 1600),
                   (b"5", 2000)], [(b"6", 2400)]]


def test_keyless_records_stick_to_a_partition_until_its_batch_is_full(tmp_path: Path) -> None:
    d = tmp_path / "logs"
    create_topic(d, "t", 4)
    value = b"v" * 30
    size = cp.record_size_in_bytes(0, 0, None, value, ())
    status, _, _ = produce(d, "--topic", "t", "--batch-size", str(61 + 3 * size),
                           data=(value + b"\n") * 15, rng=random.Random(42))
    assert status == 0
    # each full batch of 3 switches the sticky partition to a fresh draw of the same rng
    draws = random.Random(42)
    partitions = [to_positive(draws.getrandbits(32)) % 4 for _ in range(5)]
    counts = {p: sum(len(recs) for _, recs in batches(d, "t", p)) for p in range(4)}
    assert counts == {p: 3 * partitions.count(p) for p in range(4)}
    assert all(len(recs) == 3 for p in range(4) for _, recs in batches(d, "t", p))


def test_compressed_batches_grow_as_the_ratio_is_learnt(tmp_path: Path) -> None:
    d = tmp_path / "logs"
    create_topic(d, "t", 1)
    status, _, _ = produce(d, "--topic", "t", "--compression-codec", "gzip",
                           data=(b"a" * 100 + b"\n") * 3000)
    assert status == 0
    counts = [len(recs) for _, recs in batches(d, "t", 0)]
    # the first batches are estimated at ratio 1.0 (times 1.05): records are added while
    # hasRoomFor (the batch estimate plus the record's uncompressed size within 16384)
    first, uncompressed = 0, 0
    while True:
        size = cp.record_size_in_bytes(first, 0, None, b"a" * 100, ())
        if first and cp.estimated_bytes_written(uncompressed, 1.0, True) + size > 16384:
            break
        first, uncompressed = first + 1, uncompressed + size
        if cp.estimated_bytes_written(uncompressed, 1.0, True) >= 16384:  # isFull
            break
    # the second batch starts before the first is written (the sender closes it later), so
    # it has the same estimate; then each batch lowers it by 0.005 (this data compresses
    # far better), and batches grow
    assert counts[:2] == [first, first]
    assert all(a <= b for a, b in zip(counts[:-1], counts[1:-1], strict=False))
    assert counts[-2] > first + 10
    assert sum(counts) == 3000


def test_a_bad_line_stops_after_writing_what_was_read(tmp_path: Path) -> None:
    d = tmp_path / "logs"
    create_topic(d, "t", 1)
    data = b"k1\tv1\nk2\tv2\nno separator\nk4\tv4\n"
    status, _, err = produce(d, "--topic", "t", "--reader-property", "parse.key=true",
                             data=data)
    assert status == 1
    assert err == ("kafkalog console-producer: error: org.apache.kafka.common.KafkaException: "
                   "No key separator found on line number 3: 'no separator'\n"
                   "kafkalog console-producer: 2 record(s) read before it were written to "
                   "topic t (kept)\n")
    assert [r[:2] for _, recs in batches(d, "t", 0) for r in recs] == \
        [(b"k1", b"v1"), (b"k2", b"v2")]
    assert checkpoint(d) == {("t", 0): 2}
    # with ignore.error the line is a keyless record
    status, _, err = produce(d, "--topic", "t", "--reader-property", "parse.key=true",
                             "--reader-property", "ignore.error=true", data=data)
    assert (status, err) == (0, "")
    assert [r[:2] for _, recs in batches(d, "t", 0) for r in recs][2:] == \
        [(b"k1", b"v1"), (b"k2", b"v2"), (None, b"no separator"), (b"k4", b"v4")]


def test_a_locked_dir_is_refused_and_nothing_written(tmp_path: Path) -> None:
    d = tmp_path / "logs"
    create_topic(d, "t", 1)
    with LogDir.open(d):  # a broker (or any writer) holding the dir
        status, _, err = produce(d, "--topic", "t", data=b"x\n")
    assert status == 1
    assert "the log directory is in use" in err and ".lock" in err
    assert batches(d, "t", 0) == []


def test_unknown_topic_is_refused_and_not_created(tmp_path: Path) -> None:
    d = tmp_path / "logs"
    create_topic(d, "t", 1)
    status, _, err = produce(d, "--topic", "nope", data=b"x\n")
    assert status == 1
    assert "topic 'nope' is not in this log dir" in err
    assert f"kafkalog topics {d} --create --topic nope" in err
    assert not (d / "nope-0").exists()
    status, _, err = produce(tmp_path / "absent", "--topic", "t", data=b"x\n")
    assert status == 1 and "no such log directory" in err


def test_a_topic_missing_partitions_is_refused(tmp_path: Path) -> None:
    d = tmp_path / "logs"
    create_topic(d, "t", 3)
    shutil.rmtree(d / "t-1")
    status, _, err = produce(d, "--topic", "t", "--reader-property", "parse.key=true",
                             data=b"k\tv\n")
    assert status == 1 and "holds only 0, 2 (missing 1)" in err
    assert batches(d, "t", 0) == batches(d, "t", 2) == []


def test_internal_topics_are_refused_as_the_broker_refuses_a_client(tmp_path: Path) -> None:
    d = tmp_path / "logs"
    d.mkdir()
    with LogDir.open(d) as logs:
        logs.create_topic("__consumer_offsets", 1)
    status, _, err = produce(d, "--topic", "__consumer_offsets", data=b"x\n")
    assert status == 1
    assert err == ("kafkalog console-producer: error: org.apache.kafka.common.errors."
                   "InvalidTopicException: Cannot append to internal topic __consumer_offsets\n")
    assert batches(d, "__consumer_offsets", 0) == []
    # KafkaApis lets the admin client's id through
    status, _, _ = produce(d, "--topic", "__consumer_offsets", "--command-property",
                           "client.id=__admin_client", data=b"x\n")
    assert status == 0 and len(batches(d, "__consumer_offsets", 0)) == 1


def test_records_too_large_for_the_producer(tmp_path: Path) -> None:
    d = tmp_path / "logs"
    create_topic(d, "t", 1)
    data = b"a\n" + b"B" * 300 + b"\nc\n"
    status, _, err = produce(d, "--topic", "t", "--command-property", "max.request.size=200",
                             data=data)
    # asynchronously Kafka's ErrorLoggingCallback logs the record and the producer goes on
    assert status == 0
    assert err == ("ERROR Error when sending message to topic t with key: null, value: 300 "
                   "bytes with error: org.apache.kafka.common.errors.RecordTooLargeException: "
                   "The message is 386 bytes when serialized which is larger than 200, which is "
                   "the value of the max.request.size configuration.\n")
    assert [r[1] for _, recs in batches(d, "t", 0) for r in recs] == [b"a", b"c"]
    # with --sync the send's get() throws: the producer stops
    status, _, err = produce(d, "--topic", "t", "--sync", "--command-property",
                             "max.request.size=200", data=data)
    assert status == 1
    assert err.startswith("kafkalog console-producer: error: java.util.concurrent."
                          "ExecutionException: org.apache.kafka.common.errors."
                          "RecordTooLargeException: The message is 386 bytes")
    assert [r[1] for _, recs in batches(d, "t", 0) for r in recs] == [b"a", b"c", b"a"]


def test_batches_above_max_message_bytes_are_split(tmp_path: Path) -> None:
    d = tmp_path / "logs"
    create_topic(d, "t", 1, "max.message.bytes=300")
    status, _, err = produce(d, "--topic", "t", data=b"".join(b"%02d" % i + b"x" * 40 + b"\n"
                                                             for i in range(20)))
    assert (status, err) == (0, "")
    found = batches(d, "t", 0)
    assert [r[1][:2] for _, recs in found for r in recs] == [b"%02d" % i for i in range(20)]
    assert len(found) > 1
    # a single record the topic cannot take fails alone
    status, _, err = produce(d, "--topic", "t", data=b"ok\n" + b"X" * 400 + b"\n")
    assert status == 0 and "The request included a message larger than the max message " \
        "size the server will accept." in err
    assert [r[1] for _, recs in batches(d, "t", 0) for r in recs][-1] == b"ok"


def test_keyless_records_in_a_compacted_topic_fail_their_batch(tmp_path: Path) -> None:
    d = tmp_path / "logs"
    create_topic(d, "c", 1, "cleanup.policy=compact")
    status, _, err = produce(d, "--topic", "c", "--reader-property", "parse.key=true",
                             "--reader-property", "ignore.error=true", "--sync",
                             data=b"k\tv\nkeyless\nk2\tv2\n")
    assert status == 1
    assert "org.apache.kafka.common.InvalidRecordException: " in err
    assert "compacted topic cannot accept message without key" in err
    assert [r[:2] for _, recs in batches(d, "c", 0) for r in recs] == [(b"k", b"v")]


def test_a_real_client_consumes_what_was_produced(tmp_path: Path) -> None:
    """The dir written offline, then served by ``kafkalog serve`` and read by kafka-python."""
    if sys.version_info < (3, 11):
        pytest.skip("the server needs kio, which needs Python >= 3.11")
    pytest.importorskip("kio", reason="the server extra (kio) is not installed")
    pytest.importorskip("kafka", reason="kafka-python is not installed")
    from kafka import KafkaConsumer, TopicPartition

    from kafkalog.server import KafkaServer, ServerConfig

    d = tmp_path / "logs"
    create_topic(d, "t", 3)
    lines = [(f"k{i % 5}", f"value {i}", f"n:{i}") for i in range(40)]
    data = "".join(f"{h}\t{k}\t{v}\n" for k, v, h in lines).encode()
    status, _, err = produce(d, "--topic", "t", "--compression-codec", "lz4",
                             "--reader-property", "parse.key=true",
                             "--reader-property", "parse.headers=true", data=data,
                             clock=ManualClock())
    assert (status, err) == (0, "")
    server = KafkaServer(d, "127.0.0.1", 0, config=ServerConfig(
        offsets_topic_num_partitions=4, transaction_state_num_partitions=4,
        group_initial_rebalance_delay_ms=0)).start()
    try:
        consumer = KafkaConsumer(bootstrap_servers=server.address, enable_auto_commit=False,
                                 auto_offset_reset="earliest", consumer_timeout_ms=30000)
        try:
            consumer.assign([TopicPartition("t", p) for p in range(3)])
            got = []
            for m in consumer:
                got.append((m.partition, m.key, m.value, m.headers))
                if len(got) == len(lines):
                    break
        finally:
            consumer.close()
    finally:
        server.stop()
    expected: dict[int, list] = {0: [], 1: [], 2: []}
    for k, v, h in lines:
        expected[partition_for_key(k.encode(), 3)].append((k.encode(), v.encode(),
                                                           [("n", h[2:].encode())]))
    by_partition: dict[int, list] = {0: [], 1: [], 2: []}
    for p, k, v, h in got:  # in offset order within a partition
        by_partition[p].append((k, v, h))
    assert by_partition == expected


def test_through_kafkalog_cli_with_stdin(tmp_path: Path, monkeypatch, capsys) -> None:
    d = tmp_path / "logs"
    create_topic(d, "t", 1)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"one\ntwo\n")))
    assert cli.main(["console-producer", str(d), "--topic", "t", "--bootstrap-server",
                     "localhost:9092"]) == 0
    assert capsys.readouterr().err == (f"Note: --bootstrap-server localhost:9092 is ignored: "
                                       f"records are appended to {d} directly.\n")
    assert [r[1] for _, recs in batches(d, "t", 0) for r in recs] == [b"one", b"two"]


class InterruptedInput(io.BytesIO):
    """Standard input whose reader is interrupted (Ctrl-C) after ``lines`` lines: a pipe
    giving a line a read, whether read a line (``readline``) or a block (``read1``) at a
    time."""

    def __init__(self, data: bytes, lines: int) -> None:
        super().__init__(data)
        self.lines = lines

    def readline(self, size: int | None = -1) -> bytes:
        if self.lines == 0:
            raise KeyboardInterrupt
        self.lines -= 1
        return super().readline(size)

    def read1(self, size: int = -1) -> bytes:
        return self.readline(size)


@pytest.mark.parametrize("sync", [False, True])
def test_an_interrupt_writes_what_was_read(tmp_path: Path, sync: bool) -> None:
    d = tmp_path / "logs"
    create_topic(d, "t", 1)
    err = io.StringIO()
    status = cp.main([str(d), "--topic", "t", *(["--sync"] if sync else [])],
                     stdin=InterruptedInput(b"a\nb\nc\n", 2), stderr=err,
                     clock=ManualClock(NOW))
    # Kafka's shutdown hook closes the producer, which sends what it holds
    assert (status, err.getvalue()) == (130, "")
    assert [r[1] for _, recs in batches(d, "t", 0) for r in recs] == [b"a", b"b"]
    assert checkpoint(d) == {("t", 0): 2}


def test_docstring_examples() -> None:
    import doctest

    from kafkalog.console import line_message_reader, partitioner
    from kafkalog.records import murmur2 as murmur2_module

    for mod in (cp, line_message_reader, partitioner, murmur2_module):
        result = doctest.testmod(mod, raise_on_error=False, verbose=False)
        assert result.failed == 0, mod.__name__
        assert result.attempted > 0, mod.__name__


class InterruptingClock(ManualClock):
    """A clock whose ``at``-th reading (one a record sent) delivers SIGINT to this process, as
    Ctrl-C does while the producer works through a block of lines."""

    def __init__(self, start_ms: int, at: int) -> None:
        super().__init__(start_ms)
        self.readings = 0
        self.at = at

    def milliseconds(self) -> int:
        import os
        import signal

        self.readings += 1
        if self.readings == self.at:
            os.kill(os.getpid(), signal.SIGINT)
        return super().milliseconds()


def test_an_interrupt_while_a_block_is_sent_writes_the_whole_block(tmp_path: Path) -> None:
    d = tmp_path / "logs"
    create_topic(d, "t", 2)
    data = b"".join(b"k%d\tv%d\n" % (i, i) for i in range(50))
    err = io.StringIO()
    status = cp.main([str(d), "--topic", "t", "--reader-property", "parse.key=true"],
                     stdin=io.BytesIO(data), stderr=err, clock=InterruptingClock(NOW, 20))
    # the 50 lines were read in one block: the signal takes effect once all are sent
    assert (status, err.getvalue()) == (130, "")
    got = sorted(r[1] for p in range(2) for _, recs in batches(d, "t", p) for r in recs)
    assert got == sorted(b"v%d" % i for i in range(50))


# -- block reading and sending: the same records and bytes as line by line --------------------

_LINE_PIECES = st.sampled_from([b"k", b"v", b"\t", b"\r", b"\r\n", b"\n", b"\xff", b"\xe2\x82",
                                b"\xe2\x82\xac", b"NULL", b"x" * 70, b"h:1,", b":"])


@settings(max_examples=300, deadline=None)
@given(data=st.lists(_LINE_PIECES, max_size=40).map(b"".join),
       block_size=st.integers(1, 9),
       props=st.fixed_dictionaries({}, optional={
           "parse.key": st.sampled_from(["true", "false"]),
           "parse.headers": st.sampled_from(["true", "false"]),
           "ignore.error": st.sampled_from(["true", "false"]),
           "null.marker": st.just("NULL"),
           "key.separator": st.sampled_from(["\t", "v", "\u20ac", ""])}))
def test_blocks_read_the_records_and_errors_of_line_by_line(data, block_size, props):
    one, blocks = LineMessageReader(), LineMessageReader()
    try:
        one.configure({"topic": "t", **props})
    except LineReaderError:
        return  # (a configuration Kafka refuses: both refuse it)
    blocks.configure({"topic": "t", **props})
    want: list = []
    want_error = None
    it = one.read_records(io.BytesIO(data))
    try:
        want.extend(it)
    except LineReaderError as e:
        want_error = str(e)
    got: list = []
    got_error = None
    try:
        for block in blocks.read_record_blocks(io.BytesIO(data), block_size):
            assert block  # (no empty blocks)
            got.extend(block)
    except LineReaderError as e:
        got_error = str(e)
    assert (got, got_error) == (want, want_error)
    assert blocks.line_number == one.line_number


@settings(max_examples=60, deadline=None)
@given(lines=st.lists(st.tuples(st.one_of(st.none(), st.binary(max_size=70)),
                                st.one_of(st.none(), st.binary(max_size=300))),
                      min_size=1, max_size=120),
       batch_size=st.integers(100, 3000), partitions=st.integers(1, 4),
       codec=st.sampled_from(["none", "gzip", "zstd"]), seed=st.integers(0, 9))
def test_send_many_writes_the_bytes_of_send_one_by_one(tmp_path_factory, lines, batch_size,
                                                        partitions, codec, seed):
    """Keyed and keyless records (the sticky partitioner's draws included), batch.size
    boundaries, compression ratio estimates: the same segment bytes."""
    config = cp.ProducerConfig.from_properties({"batch.size": str(batch_size),
                                                "compression.type": codec})
    records = [ProducerRecord("t", k, v) for k, v in lines]
    out = []
    for many in (False, True):
        d = tmp_path_factory.mktemp("send")
        create_topic(d, "t", partitions)
        with LogDir.open(d) as logs:
            producer = cp.LogDirProducer(logs, "t", config, clock=ManualClock(NOW),
                                         rng=random.Random(seed))
            if many:
                producer.send_many(records[:len(records) // 2])
                producer.send_many(records[len(records) // 2:])
            else:
                for r in records:
                    producer.send(r)
            producer.close()
        out.append({f.relative_to(d): f.read_bytes() for f in sorted(d.glob("t-*/*.log"))})
    assert out[0] == out[1]


@settings(max_examples=400, deadline=None)
@example(prior=64, delta=64, key=b"k" * 64, value=b"v" * 64)
@example(prior=8192, delta=-1, key=b"k" * 63, value=b"v" * 8192)
@example(prior=63, delta=63, key=None, value=b"v" * 8191)
@given(prior=st.integers(0, 9000), delta=st.integers(-(2**40), 2**40),
       key=st.one_of(st.none(), st.binary(max_size=200)),
       value=st.one_of(st.none(), st.binary(max_size=20000)))
def test_inlined_record_sizes_equal_the_reference(prior, delta, key, value):
    """The per-record steps inlined for speed (``_send``'s field size, the uncompressed
    ``try_append``'s record size) against ``_fields_size`` / ``_record_size``: offset deltas on
    both sides of 64 and 8192, negative and large timestamp deltas."""
    from kafkalog.records.record import Record

    fields = cp._fields_size(key, value, ())
    batch = cp._ProducerBatch(0, 1 << 40, 1.0, False, NOW)
    batch.records = [None] * prior  # (a batch already holding ``prior`` records)
    batch.base_timestamp = NOW
    size = batch.try_append(Record(key, value, NOW + delta), NOW + delta if prior else NOW,
                            fields)
    assert size == cp._record_size(prior, delta if prior else 0, fields)
    # _send's inline field size: the record it appends carries exactly that estimate
    d_fields: list[int] = []
    producer = cp.LogDirProducer.__new__(cp.LogDirProducer)
    producer._append = lambda p, rec, now, f, size: d_fields.append(f)  # type: ignore
    producer._clock = ManualClock(NOW)
    producer.config = cp.ProducerConfig.from_properties({"max.request.size": str(1 << 30),
                                                         "buffer.memory": str(1 << 40)})
    producer._closed_batches, producer._batches = [], {}
    producer._send(ProducerRecord("t", key, value), 0, False)
    assert d_fields == [fields]
