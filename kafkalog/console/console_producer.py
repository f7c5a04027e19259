"""``kafkalog console-producer``: Kafka's ``kafka-console-producer.sh``, offline, over a log dir.

Sources (Kafka 4.2): ``tools/src/main/java/org/apache/kafka/tools/ConsoleProducer.java`` (the
options, their defaults, checks and texts, and the producer properties they become), the
line reader (:mod:`.line_message_reader`), the producer's partitioning (:mod:`.partitioner`),
``clients/.../producer/KafkaProducer.java`` (``doSend``: the record size checks),
``clients/.../producer/internals/RecordAccumulator.java``, ``ProducerBatch.java`` and
``clients/.../common/record/MemoryRecordsBuilder.java`` / ``CompressionRatioEstimator.java``
(how records become batches), and the broker's produce path (``KafkaApis.handleProduceRequest``:
"Cannot append to internal topic").

::

    kafkalog console-producer /var/lib/kafka/data --topic orders \\
        --reader-property parse.key=true --compression-codec zstd < orders.txt

Each line of stdin becomes a record, appended to the topic's partitions in ``LOGDIR`` as a
broker leading them would write what Kafka's console producer sends:

* **Batches** are built as the producer's accumulator builds them: per partition, records are
  added while the batch's estimated size stays within ``batch.size`` (``--batch-size``, default
  16384; a record larger than that gets a batch of its own); with compression the estimate is
  the uncompressed size times the compression ratio learnt from the batches written so far
  (times 1.05), as ``MemoryRecordsBuilder`` estimates it. A batch is written when it is full,
  when a record arrives ``linger.ms`` (``--timeout``, default 1000) after the batch was
  started, and at the end of the input. ``--sync`` waits for each record: one batch a record.
  Each batch is encoded with ``--compression-codec`` (none by default; the bare option means
  gzip) at ``compression.<codec>.level`` and appended as the leader appends a producer's
  batch (:meth:`kafkalog.log.Log.append_as_leader`: offsets assigned, the partition's leader
  epoch stamped). The batches are not idempotent (producer id -1): Kafka 4.2's producer is
  idempotent by default and gets its producer id from a broker (``InitProducerId``); offline
  there is no broker to hand one out.
* **Partitions**: a keyed record goes to ``toPositive(murmur2(key)) % partitions``, a keyless
  one to the sticky partition, switched at random once ``batch.size`` bytes went to it
  (:class:`~kafkalog.console.partitioner.BuiltInPartitioner`; ``rng`` makes it reproducible).
* **Timestamps**: CreateTime, the clock's now (milliseconds) when the record is sent.
* After each batch the partition's **high watermark** is its log end offset (a single-replica
  leader commits at once); closing the dir writes the checkpoints.
* **Reading**: input not typed at a prompt (a file, a pipe) is read a block at a time (what a
  pipe has, up to 1 MiB: :meth:`~.line_message_reader.LineMessageReader.read_record_blocks`)
  and the keys of a block are hashed in one kernel call (:meth:`LogDirProducer.send_many`);
  each record is still sent on its own, at its own clock reading, so batches, timestamps and
  ``linger.ms`` are what a line-by-line read gives. Ctrl-C takes effect once the block being
  sent is sent. At a prompt, and with ``--sync``, lines are read one at a time.
* **The input**: with ``ignore.error=false`` (default) a bad line stops the producer as Kafka's
  does: the records read before it are written (Kafka's shutdown hook closes the producer,
  which sends them), the line's error is printed, exit status 1. Nothing is written half: a
  batch is appended whole or not at all.
* **Refused records** (Kafka's async producer logs them and goes on; with ``--sync`` it stops,
  exit 1): a record above ``max.request.size`` or ``buffer.memory`` (the producer's check), a
  batch the log refuses (above the topic's ``max.message.bytes``: split in halves and retried,
  as the producer splits on MESSAGE_TOO_LARGE; a single record then fails; keyless records in
  a compacted topic).

The log dir is opened for writing (its ``.lock``): a dir a broker or another kafkalog process
holds is refused and nothing is written. The topic must exist in it with all its partitions (a
broker may auto-create a topic on first produce; offline nothing is created: ``kafkalog topics
LOGDIR --create --topic T`` makes it). Internal topics (``__consumer_offsets``,
``__transaction_state``, ``__share_group_state``) are refused as the broker refuses a client
("Cannot append to internal topic"; Kafka's async producer logs that per record and exits 0,
here nothing is read and the exit status is 1), unless ``client.id`` is ``__admin_client``,
which the broker lets through.

Options are Kafka 4.2's, with its defaults and checks (``--property``/``--reader-property``,
``--producer-property``/``--command-property`` and ``--producer.config``/``--command-config``
cannot be combined; the deprecated ones print Kafka's warning on stdout). ``LOGDIR`` replaces
``--bootstrap-server``, which is accepted and ignored (a note on stderr); ``--broker-list`` is
not an option of Kafka 4.2 either. Options that only tune the network
(``--message-send-max-retries``, ``--retry-backoff-ms``, ``--request-required-acks``,
``--request-timeout-ms``, ``--metadata-expiry-ms``, ``--max-block-ms``,
``--socket-buffer-size``) are accepted, become the producer properties Kafka sets, and have no
effect. Of the producer properties (``--command-property``, ``--command-config``) these are
used: ``batch.size``, ``linger.ms``, ``compression.{gzip,lz4,zstd}.level``,
``max.request.size``, ``buffer.memory``, ``partitioner.ignore.keys``, ``client.id``; they are
validated with ``ProducerConfig``'s texts. ``partitioner.class`` (a Java class) and
``transactional.id`` (the console producer never starts a transaction: Kafka's send fails)
are refused; the rest are accepted without effect. ``--line-reader`` takes only Kafka's
``org.apache.kafka.tools.LineMessageReader`` (no Java class can be loaded). A topic whose
``compression.type`` names a codec stores its batches in that codec (the log recompresses
them, as a broker does).

Exit status: 0 done, 1 an error (Kafka's exception text on stderr after
``kafkalog console-producer: error:``), 2 usage, 130 interrupted (what was read is written).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import signal
import struct
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

from ..admin import INTERNAL_TOPICS, listed_topics, open_error_text, open_log_dir
from ..clock import Clock, SystemClock
from ..errors import (
    InvalidRecordError,
    InvalidTopicError,
    KafkaLogError,
    RecordBatchTooLargeError,
)
from ..records.builder import encode_batch
from ..records.murmur2 import partitions_for_keys
from ..records.record import Record
from ..records.varint import size_of_varlong
from ..usage import ArgumentParser, UsageError, java_trim, parse_args
from .command_line import java_number_arg, load_props, parse_key_value_args
from .line_message_reader import (
    LINE_MESSAGE_READER_CLASS,
    LineMessageReader,
    LineReaderError,
    ProducerRecord,
)
from .partitioner import BuiltInPartitioner, partition_for_key

if TYPE_CHECKING:
    from ..log_dir import LogDir

__all__ = ["ProducerConfig", "ProducerConfigError", "LogDirProducer", "SendFailed",
           "build_parser", "check_args", "producer_properties", "reader_properties",
           "message_reader", "estimate_size_upper_bound", "estimated_bytes_written",
           "observed_compression_ratio", "record_size_in_bytes", "update_compression_ratio",
           "main"]

PROG = "kafkalog console-producer"
EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130

#: DefaultRecordBatch.RECORD_BATCH_OVERHEAD, DefaultRecord.MAX_RECORD_OVERHEAD
RECORD_BATCH_OVERHEAD = 61
MAX_RECORD_OVERHEAD = 21
#: the client id the broker lets append to internal topics (KafkaApis: "__admin_client")
ADMIN_CLIENT_ID = "__admin_client"


# -- Java float arithmetic -------------------------------------------------------------------
# MemoryRecordsBuilder and CompressionRatioEstimator compute in Java floats: each operation is
# rounded to binary32. A double holds the exact result of +, -, * of two floats and one
# rounding to binary32 then gives the float result (for / as well: 53 >= 2 * 24 + 2 bits).

_F32 = struct.Struct("<f")


def _f32(x: float) -> float:
    return float(_F32.unpack(_F32.pack(x))[0])


#: MemoryRecordsBuilder.COMPRESSION_RATE_ESTIMATION_FACTOR (1.05f)
COMPRESSION_RATE_ESTIMATION_FACTOR = _f32(1.05)
#: CompressionRatioEstimator.COMPRESSION_RATIO_IMPROVING_STEP / _DETERIORATE_STEP
COMPRESSION_RATIO_IMPROVING_STEP = _f32(0.005)
COMPRESSION_RATIO_DETERIORATE_STEP = _f32(0.05)


def estimated_bytes_written(uncompressed_size: int, ratio: float, compressed: bool) -> int:
    """``MemoryRecordsBuilder.estimatedBytesWritten``: a batch's header and its records, their
    uncompressed size scaled by the estimated compression ratio times 1.05 when compressed
    (Java float arithmetic, truncated to an int).

    >>> estimated_bytes_written(1000, 1.0, False), estimated_bytes_written(1000, 0.5, True)
    (1061, 586)
    """
    if not compressed:
        return RECORD_BATCH_OVERHEAD + uncompressed_size
    scaled = _f32(_f32(_f32(uncompressed_size) * ratio) * COMPRESSION_RATE_ESTIMATION_FACTOR)
    return RECORD_BATCH_OVERHEAD + int(scaled)


def observed_compression_ratio(batch_size: int, uncompressed_size: int) -> float:
    """``MemoryRecordsBuilder.close``'s ``actualCompressionRatio``: the written records area
    (the batch without its header) over the records' uncompressed size, a Java float.

    >>> observed_compression_ratio(61 + 250, 1000)
    0.25
    """
    return _f32(_f32(batch_size - RECORD_BATCH_OVERHEAD) / _f32(uncompressed_size))


def update_compression_ratio(current: float, observed: float) -> float:
    """``CompressionRatioEstimator.updateEstimation``: worse than expected moves up by at least
    0.05, better moves down by at most 0.005 (in Java floats).

    >>> update_compression_ratio(1.0, 0.5)
    0.9950000047683716
    """
    if observed > current:
        return max(_f32(current + COMPRESSION_RATIO_DETERIORATE_STEP), observed)
    if observed < current:
        return max(_f32(current - COMPRESSION_RATIO_IMPROVING_STEP), observed)
    return current


# -- record sizes (DefaultRecord) ------------------------------------------------------------


def _length_size(n: int) -> int:
    """``size_of_varint(n)`` for a length (``n >= 0``: its zig-zag form is ``2n``), without
    the range checks: this runs several times per record."""
    return 1 if n < 64 else (n.bit_length() + 7) // 7


def _fields_size(key: bytes | None, value: bytes | None,
                 headers: Sequence[tuple[str, bytes | None]]) -> int:
    # DefaultRecord.sizeOf: key, value, header count and headers (a null is varint -1: 1 byte)
    size = 1 if key is None else _length_size(len(key)) + len(key)
    size += 1 if value is None else _length_size(len(value)) + len(value)
    size += _length_size(len(headers))
    for hkey, hvalue in headers:
        n = len(hkey.encode("utf-8"))
        size += _length_size(n) + n
        size += 1 if hvalue is None else _length_size(len(hvalue)) + len(hvalue)
    return size


def record_size_in_bytes(offset_delta: int, timestamp_delta: int, key: bytes | None,
                         value: bytes | None, headers: Sequence[tuple[str, bytes | None]]
                         ) -> int:
    """``DefaultRecord.sizeInBytes``: a v2 record's bytes, its length varint included.

    >>> record_size_in_bytes(0, 0, None, b"v", ())
    8
    """
    return _record_size(offset_delta, timestamp_delta, _fields_size(key, value, headers))


def _record_size(offset_delta: int, timestamp_delta: int, fields_size: int) -> int:
    # record_size_in_bytes with the fields' size known (the producer computes it once a
    # record; the deltas are lengths in the common case: offset deltas always)
    body = 1 + _length_size(offset_delta) + fields_size + (
        _length_size(timestamp_delta) if timestamp_delta >= 0
        else size_of_varlong(timestamp_delta))
    return body + _length_size(body)


def estimate_size_upper_bound(key: bytes | None, value: bytes | None,
                              headers: Sequence[tuple[str, bytes | None]]) -> int:
    """``AbstractRecords.estimateSizeInBytesUpperBound`` (magic 2): a batch of this one record
    at most (the producer's record size check, and a new batch's minimum buffer).

    >>> estimate_size_upper_bound(None, b"v", ())
    86
    """
    return _upper_bound(_fields_size(key, value, headers))


def _upper_bound(fields_size: int) -> int:
    # estimate_size_upper_bound with the fields' size known
    return RECORD_BATCH_OVERHEAD + MAX_RECORD_OVERHEAD + fields_size


# -- producer configuration ------------------------------------------------------------------


class ProducerConfigError(ValueError):
    """A producer property ``ProducerConfig`` would refuse (Kafka's ``ConfigException`` text)."""

    java_class = "org.apache.kafka.common.config.ConfigException"


def _config_error(name: str, value: object, message: str) -> ProducerConfigError:
    return ProducerConfigError(f"Invalid value {value} for configuration {name}: {message}")


_JAVA_NUMBER = re.compile(r"[+-]?[0-9]+")


def _number(props: Mapping[str, str], name: str, default: int, bits: int,
            low: int | None = None, high: int | None = None) -> int:
    # ConfigDef.parseType INT/LONG (the string trimmed, Integer.parseInt/Long.parseLong), then
    # its Range validator
    raw = props.get(name)
    if raw is None:
        return default
    text = java_trim(raw)
    value = int(text) if _JAVA_NUMBER.fullmatch(text) else None
    if value is None or not -(1 << (bits - 1)) <= value < (1 << (bits - 1)):
        raise _config_error(name, raw, f"Not a number of type {'INT' if bits == 32 else 'LONG'}")
    if low is not None and value < low:
        raise _config_error(name, value, f"Value must be at least {low}")
    if high is not None and value > high:
        raise _config_error(name, value, f"Value must be no more than {high}")
    return value


def _boolean(props: Mapping[str, str], name: str, default: bool) -> bool:
    raw = props.get(name)
    if raw is None:
        return default
    text = java_trim(raw).lower()
    if text not in ("true", "false"):
        raise _config_error(name, raw, "Expected value to be either true or false")
    return text == "true"


_CODECS = ("none", "gzip", "snappy", "lz4", "zstd")


@dataclass(frozen=True)
class ProducerConfig:
    """The producer properties that decide what is written (Kafka's ``ProducerConfig``
    definitions, defaults and checks for them); see :func:`producer_properties` for how the
    console producer's options become properties.

    >>> ProducerConfig.from_properties({"batch.size": "0"}).batch_size
    1
    """

    #: ``batch.size`` as the accumulator uses it (``max(1, batch.size)``)
    batch_size: int = 16384
    linger_ms: int = 5
    compression: str = "none"
    compression_level: int | None = None
    max_request_size: int = 1024 * 1024
    buffer_memory: int = 32 * 1024 * 1024
    ignore_keys: bool = False
    client_id: str = ""
    acks: str = "all"

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> ProducerConfig:
        """Validate ``props`` as ``ProducerConfig`` does for the properties used here.

        Raises
        ------
        ProducerConfigError
            A value ``ProducerConfig`` refuses (its text), ``partitioner.class`` or
            ``transactional.id`` (not available offline, see the module docstring).
        """
        codec = java_trim(props.get("compression.type", "none"))
        if codec not in _CODECS:
            raise _config_error("compression.type", codec,
                                "String must be one of: " + ", ".join(_CODECS))
        gzip_level = _number(props, "compression.gzip.level", -1, 32)
        if gzip_level > 9 or (gzip_level < 1 and gzip_level != -1):
            raise _config_error("compression.gzip.level", gzip_level,
                                "Value must be between 1 and 9 or equal to -1")
        lz4_level = _number(props, "compression.lz4.level", 9, 32, 1, 17)
        zstd_level = _number(props, "compression.zstd.level", 3, 32, -131072, 22)
        acks = java_trim(props.get("acks", "all"))
        if acks not in ("all", "-1", "0", "1"):
            raise _config_error("acks", acks, "String must be one of: all, -1, 0, 1")
        for name in ("partitioner.class", "transactional.id"):
            if java_trim(props.get(name, "")):
                raise ProducerConfigError(
                    f"{name}={props[name]} is not supported offline: "
                    + ("no Java partitioner can be loaded" if name == "partitioner.class" else
                       "the console producer never calls initTransactions, so Kafka's send "
                       "fails with a transactional.id"))
        level = {"gzip": gzip_level, "lz4": lz4_level, "zstd": zstd_level}.get(codec)
        return cls(
            batch_size=max(1, _number(props, "batch.size", 16384, 32, 0)),
            # RecordAccumulator keeps linger.ms as an int
            linger_ms=min(_number(props, "linger.ms", 5, 64, 0), (1 << 31) - 1),
            compression=codec,
            compression_level=level,
            max_request_size=_number(props, "max.request.size", 1024 * 1024, 32, 0),
            buffer_memory=_number(props, "buffer.memory", 32 * 1024 * 1024, 64, 0),
            ignore_keys=_boolean(props, "partitioner.ignore.keys", False),
            client_id=java_trim(props.get("client.id", "")),
            acks=acks,
        )


# -- the accumulator and the sender over a log dir -------------------------------------------


class SendFailed(Exception):
    """A record the producer or the broker refused; ``java_text`` is Kafka's exception line."""

    def __init__(self, java_text: str) -> None:
        super().__init__(java_text)
        self.java_text = java_text


class _ProducerBatch:
    """One partition's open batch: ``ProducerBatch`` + ``MemoryRecordsBuilder``'s size rules."""

    __slots__ = ("partition", "records", "created_ms", "base_timestamp", "uncompressed_size",
                 "write_limit", "ratio", "compressed", "closed")

    def __init__(self, partition: int, write_limit: int, ratio: float, compressed: bool,
                 now_ms: int) -> None:
        self.partition = partition
        self.records: list[Record] = []
        self.created_ms = now_ms
        self.base_timestamp = 0
        self.uncompressed_size = 0  # records' bytes before compression, header excluded
        self.write_limit = write_limit
        self.ratio = ratio  # the estimation when the batch was created
        self.compressed = compressed
        self.closed = False

    def estimated_size(self) -> int:
        """``estimatedBytesWritten``."""
        if not self.compressed:  # (its first case, inline: this runs several times a record)
            return RECORD_BATCH_OVERHEAD + self.uncompressed_size
        return estimated_bytes_written(self.uncompressed_size, self.ratio, True)

    def is_full(self) -> bool:
        """``isFull``: closed for appends, or the write limit reached (after one record)."""
        if not self.compressed:  # (estimated_size inline)
            return self.closed or (bool(self.records) and self.write_limit
                                   <= RECORD_BATCH_OVERHEAD + self.uncompressed_size)
        return self.closed or (bool(self.records)
                               and self.write_limit <= self.estimated_size())

    def try_append(self, record: Record, timestamp: int, fields_size: int) -> int | None:
        """``tryAppend``: add ``record`` (its ``timestamp``; ``fields_size``: its key, value
        and headers' bytes, :func:`_fields_size`) when ``hasRoomFor`` (the first always
        fits); the estimated bytes it added, or None (no room)."""
        n = len(self.records)
        if not self.compressed:
            # (the same steps with estimatedBytesWritten inline: this runs once a record)
            before = RECORD_BATCH_OVERHEAD + self.uncompressed_size
            if self.closed or (n and self.write_limit <= before):
                return None
            if n == 0:
                self.base_timestamp = timestamp
            delta = timestamp - self.base_timestamp
            # (_record_size inline: attributes, offset delta, fields, timestamp delta, then
            # the length of all that)
            body = 2 + fields_size if n < 64 else 1 + (n.bit_length() + 7) // 7 + fields_size
            body += 1 if 0 <= delta < 64 else (
                _length_size(delta) if delta >= 0 else size_of_varlong(delta))
            size = body + (1 if body < 64 else (body.bit_length() + 7) // 7)
            if n and self.write_limit < before + size:
                return None
            self.records.append(record)
            self.uncompressed_size += size
            return size
        if self.is_full():
            return None
        if n == 0:
            self.base_timestamp = timestamp
        size = _record_size(n, timestamp - self.base_timestamp, fields_size)
        before = self.estimated_size()
        # hasRoomFor does not count the new record's compression ("be conservative")
        if n and self.write_limit < before + size:
            return None
        self.records.append(record)
        self.uncompressed_size += size
        return self.estimated_size() - before


@dataclass
class ProduceStats:
    """What a :class:`LogDirProducer` did: records and batches written per partition, records
    refused."""

    records: dict[int, int]
    batches: dict[int, int]
    failed: int = 0


#: "no open batch" for LogDirProducer._oldest_batch_ms (above any clock)
_NO_BATCH_MS = 1 << 63


class LogDirProducer:
    """Kafka's producer for one topic of an open, writable :class:`~kafkalog.log_dir.LogDir`:
    the accumulator's batching and partitioning, and the sender's appends as the partition's
    leader would make them (see the module docstring). Not thread-safe.

    Parameters
    ----------
    logs:
        The log dir, opened for writing.
    topic:
        A topic of ``logs`` with all its partitions.
    config:
        The producer properties (:class:`ProducerConfig`).
    clock:
        Record timestamps and ``linger.ms`` (SystemClock when None).
    rng:
        The sticky partitioner's random source.
    on_error:
        Called with Kafka's log line for each record refused asynchronously (as Kafka's
        ``ErrorLoggingCallback`` logs it); None: ignored.

    Raises
    ------
    UnknownTopicOrPartitionError
        The topic is not in the dir, or some of its partitions are not.
    InvalidTopicError
        An internal topic (and ``client.id`` is not ``__admin_client``).

    Examples
    --------
    >>> import tempfile
    >>> from kafkalog.log_dir import LogDir
    >>> from kafkalog.clock import ManualClock
    >>> with LogDir.open(tempfile.mkdtemp()) as logs:
    ...     _ = logs.create_topic("t", 2)
    ...     producer = LogDirProducer(logs, "t", ProducerConfig(), clock=ManualClock(0))
    ...     producer.send(ProducerRecord("t", b"k", b"v"))
    ...     producer.close()
    ...     [([r.value for r in logs.log("t", p).records()], logs.high_watermark("t", p))
    ...      for p in (0, 1)]
    [([b'v'], 1), ([], 0)]
    """

    def __init__(self, logs: LogDir, topic: str, config: ProducerConfig, *,
                 clock: Clock | None = None, rng: random.Random | None = None,
                 on_error: Callable[[str], None] | None = None) -> None:
        from ..log_dir import UnknownTopicOrPartitionError

        if topic in INTERNAL_TOPICS and config.client_id != ADMIN_CLIENT_ID:
            # ReplicaManager.appendToLocalLog for a client other than the admin client
            raise InvalidTopicError(f"Cannot append to internal topic {topic}", path=logs.root)
        if topic not in listed_topics(logs):
            raise UnknownTopicOrPartitionError(
                f"topic '{topic}' is not in this log dir (a broker may auto-create a topic on "
                f"first produce; offline it is not: create it with `kafkalog topics "
                f"{logs.root} --create --topic {topic}`)", path=logs.root)
        held = sorted(p for t, p in logs.partitions() if t == topic)
        declared = logs.declared_partitions(topic)
        count = declared if declared is not None else len(held)
        if held != list(range(count)):
            missing = sorted(set(range(max(count, max(held, default=-1) + 1))) - set(held))
            raise UnknownTopicOrPartitionError(
                f"topic '{topic}' has {count} partitions but this log dir holds only "
                f"{', '.join(map(str, held))} (missing {', '.join(map(str, missing))}): the "
                "producer would send records to the others' leaders", path=logs.root)
        self.logs = logs
        self.topic = topic
        self.config = config
        self.num_partitions = count
        self._clock = clock if clock is not None else SystemClock()
        self._sticky = BuiltInPartitioner(count, config.batch_size, rng)
        self._on_error = on_error
        self._batches: dict[int, _ProducerBatch] = {}
        self._oldest_batch_ms = _NO_BATCH_MS
        self._closed_batches: list[_ProducerBatch] = []
        self._ratio = 1.0  # CompressionType.rate of every codec
        self._epochs: dict[int, int] = {}
        self.stats = ProduceStats({}, {})

    # -- KafkaProducer.send ----------------------------------------------------------------

    def send(self, record: ProducerRecord, *, sync: bool = False) -> None:
        """Send one record (``KafkaProducer.send``; with ``sync``, ``send().get()``: the record
        is written before this returns).

        Raises
        ------
        SendFailed
            ``sync`` and the record was refused (asynchronously it goes to ``on_error``).
        KafkaLogError, OSError
            Writing failed (the dir's own errors: disk full, a corrupt segment...).
        """
        self._send(record, self._key_partition(record), sync)

    def send_many(self, records: Sequence[ProducerRecord], *, sync: bool = False) -> None:
        """:meth:`send` each of ``records`` in order, their keys hashed in one kernel call.

        Ctrl-C (SIGINT, when called from the main thread) takes effect once every record is
        sent: what was read is written, and no record is left half sent. The handler in place
        before then gets the signal (the default one raises ``KeyboardInterrupt``)."""
        if self.config.ignore_keys or all(r.key is None for r in records):
            partitions: list[int | None] = [None] * len(records)
        else:
            keyed = [r.key for r in records if r.key is not None]
            hashed = iter(partitions_for_keys(keyed, self.num_partitions).tolist())
            partitions = [None if r.key is None else next(hashed) for r in records]
        interrupted: list[Any] = []
        # (a handler not set from Python, None here, could not be put back: left in place)
        previous = signal.getsignal(signal.SIGINT)
        if previous is not None:
            try:
                signal.signal(signal.SIGINT, lambda signum, frame: interrupted.append(frame))
            except ValueError:  # not the main thread: signals go to the main thread's handler
                previous = None
        try:
            for record, partition in zip(records, partitions):
                self._send(record, partition, sync)
        finally:
            if previous is not None:
                signal.signal(signal.SIGINT, previous)
        if interrupted:
            if callable(previous):
                previous(signal.SIGINT, interrupted[0])
            elif previous == signal.SIG_DFL:
                os.kill(os.getpid(), signal.SIGINT)

    def _key_partition(self, record: ProducerRecord) -> int | None:
        """The partition of a keyed record (None: the sticky partition's)."""
        if record.key is None or self.config.ignore_keys:
            return None
        return partition_for_key(record.key, self.num_partitions)

    def _send(self, record: ProducerRecord, partition: int | None, sync: bool) -> None:
        """:meth:`send` with the record's :meth:`_key_partition` known."""
        now = self._clock.milliseconds()
        config = self.config
        if self._closed_batches or (self._batches and now - self._oldest_batch_ms
                                    >= config.linger_ms):
            self._drain_lingered(now)
        key, value, headers = record.key, record.value, record.headers
        if headers:
            fields = _fields_size(key, value, headers)
        else:  # (_fields_size inline: key, value, header count)
            fields = 2 if key is None else 1 + len(key) + (
                1 if len(key) < 64 else (len(key).bit_length() + 7) // 7)
            fields += 1 if value is None else len(value) + (
                1 if len(value) < 64 else (len(value).bit_length() + 7) // 7)
        size = _upper_bound(fields)
        if size > config.max_request_size or size > config.buffer_memory:
            if size > config.max_request_size:
                refusal = (f"The message is {size} bytes when serialized which is larger "
                           f"than {config.max_request_size}, which is the value of the "
                           "max.request.size configuration.")
            else:
                refusal = (f"The message is {size} bytes when serialized which is larger "
                           "than the total memory buffer you have configured with the "
                           "buffer.memory configuration.")
            self._fail([record], "org.apache.kafka.common.errors.RecordTooLargeException: "
                       + refusal, sync)
            return
        self._append(partition, Record(key, value, now, headers), now, fields, size)
        if self._closed_batches:
            self._drain_closed(sync)
        if sync:
            self.flush(sync=True)

    def flush(self, *, sync: bool = False) -> None:
        """Write every open batch (``KafkaProducer.flush``), in partition order."""
        for p in sorted(self._batches):
            self._closed_batches.append(self._batches.pop(p))
        self._drain_closed(sync)

    def close(self) -> None:
        """``KafkaProducer.close``: flush; the producer can be used again (offline it holds
        nothing but open batches)."""
        self.flush()

    # -- RecordAccumulator.append ----------------------------------------------------------

    def _all_batches_full(self, partition: int) -> bool:
        batch = self._batches.get(partition)
        return batch is None or batch.is_full()

    def _append(self, partition: int | None, record: Record, now: int, fields: int,
                upper_bound: int) -> None:
        sticky = self._sticky
        while True:
            p = sticky.peek_current_partition() if partition is None else partition
            # partitionChanged: a switch disabled while the batch was not full happens now
            if partition is None and self._all_batches_full(p) and \
                    sticky.update_partition_info(0, enable_switch=True):
                continue
            batch = self._batches.get(p)
            if batch is not None:
                appended = batch.try_append(record, now, fields)
                if appended is not None:
                    full = batch.is_full()
                    if partition is None:
                        sticky.update_partition_info(appended, enable_switch=full)
                    if full:  # the sender takes a full batch
                        self._closed_batches.append(self._batches.pop(p))
                    return
                # no room: closed for appends, the sender takes it
                batch.closed = True
                self._closed_batches.append(self._batches.pop(p))
                if partition is None and sticky.update_partition_info(0, enable_switch=True):
                    continue  # the partition switched: the record goes to the new one
            batch = _ProducerBatch(p, max(self.config.batch_size, upper_bound), self._ratio,
                                   self.config.compression != "none", now)
            batch.try_append(record, now, fields)
            self._batches[p] = batch
            self._oldest_batch_ms = min(self._oldest_batch_ms, now)
            if partition is None:
                sticky.update_partition_info(batch.estimated_size(),
                                             enable_switch=batch.is_full())
            if batch.is_full():
                self._closed_batches.append(self._batches.pop(p))
            return

    # -- Sender ----------------------------------------------------------------------------

    def _drain_lingered(self, now: int) -> None:
        # a batch is ready once linger.ms passed since it was created: the sender has sent it
        # before this record arrives. (_oldest_batch_ms is at most every open batch's
        # creation time, so a record with none ready skips the scan.)
        if self._batches and now - self._oldest_batch_ms >= self.config.linger_ms:
            for p in sorted(self._batches):
                if now - self._batches[p].created_ms >= self.config.linger_ms:
                    self._closed_batches.append(self._batches.pop(p))
            self._oldest_batch_ms = min((b.created_ms for b in self._batches.values()),
                                        default=_NO_BATCH_MS)
        self._drain_closed(False)

    def _drain_closed(self, sync: bool) -> None:
        # the closed batches are written after the record that closed them started its new
        # batch: that one took the compression ratio estimation before these update it (the
        # sender thread closes a batch after the append that made it ready)
        while self._closed_batches:
            batch = self._closed_batches.pop(0)
            data = self._encode(batch.records)
            self._ratio = update_compression_ratio(
                self._ratio, observed_compression_ratio(len(data), batch.uncompressed_size))
            self._write(batch.partition, batch.records, data, sync)

    def _encode(self, records: Sequence[Record]) -> bytes:
        # as the producer encodes it: no producer id, no leader epoch (the broker stamps it)
        return encode_batch(records, compression=self.config.compression,
                            compression_level=self.config.compression_level)

    def _leader_epoch(self, partition: int) -> int:
        # the leader's epoch as `kafkalog serve` takes it: the latest in the epoch cache, else 0
        epoch = self._epochs.get(partition)
        if epoch is None:
            entries = self.logs.log(self.topic, partition).leader_epoch_entries
            epoch = self._epochs[partition] = entries[-1][0] if entries else 0
        return epoch

    def _write(self, partition: int, records: Sequence[Record], data: bytes,
               sync: bool) -> None:
        log = self.logs.log(self.topic, partition)
        try:
            log.append_as_leader(data, partition_leader_epoch=self._leader_epoch(partition))
        except RecordBatchTooLargeError as e:
            if len(records) > 1:
                # Sender.completeBatch: MESSAGE_TOO_LARGE with more than one record splits
                # the batch and sends the parts (here: halves, until each fits)
                half = len(records) // 2
                for part in (records[:half], records[half:]):
                    self._write(partition, part, self._encode(part), sync)
                return
            self._fail(records, "org.apache.kafka.common.errors.RecordTooLargeException: The "
                       "request included a message larger than the max message size the "
                       f"server will accept. ({e.message})", sync)
            return
        except InvalidRecordError as e:  # INVALID_RECORD: the whole batch fails
            self._fail(records, f"org.apache.kafka.common.InvalidRecordException: {e.message}",
                       sync)
            return
        self.logs.set_high_watermark(self.topic, partition, log.log_end_offset)
        stats = self.stats
        stats.records[partition] = stats.records.get(partition, 0) + len(records)
        stats.batches[partition] = stats.batches.get(partition, 0) + 1

    def _fail(self, records: Iterable[Record | ProducerRecord], java_text: str,
              sync: bool) -> None:
        records = list(records)
        self.stats.failed += len(records)
        if sync:
            raise SendFailed(f"java.util.concurrent.ExecutionException: {java_text}")
        if self._on_error is None:
            return
        for r in records:
            key = "null" if r.key is None else f"{len(r.key)} bytes"
            value = "null" if r.value is None else f"{len(r.value)} bytes"
            # ErrorLoggingCallback.onCompletion (logAsString=false)
            self._on_error(f"ERROR Error when sending message to topic {self.topic} with key: "
                           f"{key}, value: {value} with error: {java_text}")


# -- options ---------------------------------------------------------------------------------


_DEFAULTS: dict[str, object] = {
    # option dest -> ConsoleProducer's default (what maybeMergeOptions merges when unset)
    "message_send_max_retries": 3, "retry_backoff_ms": 100, "timeout": 1000,
    "request_required_acks": "-1", "request_timeout_ms": 1500,
    "metadata_expiry_ms": 5 * 60 * 1000, "max_block_ms": 60 * 1000,
    "max_memory_bytes": 32 * 1024 * 1024, "max_partition_memory_bytes": 16 * 1024,
    "batch_size": 16 * 1024, "socket_buffer_size": 1024 * 100,
}

_READER_PROPERTIES_HELP = (
    "Default properties include: parse.key=false parse.headers=false ignore.error=false "
    "key.separator=\\t headers.delimiter=\\t headers.separator=, headers.key.separator=: "
    "null.marker= (when set, any fields (key, value and headers) equal to this will be "
    "replaced by null). Default parsing pattern when parse.headers=true and parse.key=true: "
    "\"h1:v1,h2:v2...\\tkey\\tvalue\"")


def build_parser() -> argparse.ArgumentParser:
    """The options of Kafka 4.2's ``ConsoleProducer`` (``LOGDIR`` for
    ``--bootstrap-server``)."""
    p = ArgumentParser(prog=PROG, description=(
        "This tool helps to read data from standard input and publish it to Kafka: here, "
        "append it to a topic of a log dir, offline."))
    p.add_argument("log_dir", metavar="LOGDIR", help="the log.dirs entry holding the topic")
    p.add_argument("--topic", help="REQUIRED: The topic name to produce messages to.")
    p.add_argument("--bootstrap-server", help="Accepted and ignored: LOGDIR is written.")
    p.add_argument("--sync", action="store_true",
                   help="Send each record alone and wait for it (one batch a record).")
    p.add_argument("--compression-codec", nargs="?", const="", metavar="compression-codec",
                   help="The compression codec: either 'none', 'gzip', 'snappy', 'lz4', or "
                        "'zstd'. If specified without value, then it defaults to 'gzip'")
    p.add_argument("--batch-size", type=java_number_arg(32, "batch-size"), metavar="size",
                   help="batch.size: the bytes of a partition's batch (default 16384). "
                        "Replaced by --max-partition-memory-bytes when set.")
    p.add_argument("--message-send-max-retries", type=java_number_arg(32,
                   "message-send-max-retries"), help="retries (no effect offline)")
    p.add_argument("--retry-backoff-ms", type=java_number_arg(64, "retry-backoff-ms"),
                   help="retry.backoff.ms (no effect offline)")
    p.add_argument("--timeout", type=java_number_arg(64, "timeout"), metavar="timeout_ms",
                   help="linger.ms: how long a batch waits for more records (default 1000)")
    p.add_argument("--request-required-acks", metavar="request required acks",
                   help="acks (no effect offline: a single replica)")
    p.add_argument("--request-timeout-ms", type=java_number_arg(32, "request-timeout-ms"),
                   help="request.timeout.ms (no effect offline)")
    p.add_argument("--metadata-expiry-ms", type=java_number_arg(64, "metadata-expiry-ms"),
                   help="metadata.max.age.ms (no effect offline)")
    p.add_argument("--max-block-ms", type=java_number_arg(64, "max-block-ms"),
                   help="max.block.ms (no effect offline)")
    p.add_argument("--max-memory-bytes", type=java_number_arg(64, "max-memory-bytes"),
                   help="buffer.memory: a larger record is refused (default 33554432)")
    p.add_argument("--max-partition-memory-bytes",
                   type=java_number_arg(32, "max-partition-memory-bytes"),
                   help="(Deprecated) batch.size; use --batch-size")
    p.add_argument("--line-reader", metavar="reader_class",
                   help=f"Only {LINE_MESSAGE_READER_CLASS} (the default).")
    p.add_argument("--socket-buffer-size", type=java_number_arg(32, "socket-buffer-size"),
                   help="send.buffer.bytes (no effect offline)")
    p.add_argument("--property", action="append", metavar="prop",
                   help="(DEPRECATED) Use --reader-property.")
    p.add_argument("--reader-property", action="append", metavar="prop",
                   help="A reader property key=value. " + _READER_PROPERTIES_HELP)
    p.add_argument("--reader-config", metavar="config file",
                   help="Reader properties file; --reader-property takes precedence.")
    p.add_argument("--producer-property", action="append", metavar="producer_prop",
                   help="(DEPRECATED) Use --command-property.")
    p.add_argument("--command-property", action="append", metavar="producer_prop",
                   help="Producer config properties in the form key=value.")
    p.add_argument("--producer.config", dest="producer_config", metavar="config file",
                   help="(DEPRECATED) Use --command-config.")
    p.add_argument("--command-config", metavar="config file",
                   help="Producer config properties file; --command-property takes "
                        "precedence.")
    p.add_argument("--version", action="store_true", help="Display Kafka version.")
    return p


def check_args(args: argparse.Namespace, out: IO[str]) -> None:
    """``ConsoleProducerOptions.checkArgs``: required ``--topic``, the deprecated options and
    their replacements not together (Kafka's texts), the deprecation warnings (on ``out``, as
    Kafka prints them); folds the deprecated options into their replacements.

    Raises
    ------
    UsageError
        A check failed.
    """
    def usage(message: str) -> UsageError:
        return UsageError(f"{PROG}: error: {message}")

    if args.topic is None:
        raise usage('Missing required argument "[topic]"')
    if args.command_config is not None and args.producer_config is not None:
        raise usage("Options --command-config and --producer.config cannot be specified "
                    "together.")
    if args.command_property and args.producer_property:
        raise usage("Options --command-property and --producer-property cannot be specified "
                    "together.")
    if args.reader_property and args.property:
        raise usage("Options --reader-property and --property cannot be specified together.")
    if args.producer_property:
        out.write("Warning: --producer-property is deprecated and will be removed in a future "
                  "version. Use --command-property instead.\n")
        args.command_property = args.producer_property
    if args.producer_config is not None:
        out.write("Warning: --producer.config is deprecated and will be removed in a future "
                  "version. Use --command-config instead.\n")
        args.command_config = args.producer_config
    if args.property:
        out.write("Warning: --property is deprecated and will be removed in a future version. "
                  "Use --reader-property instead.\n")
        args.reader_property = args.property
    if args.max_partition_memory_bytes is not None:
        out.write("Warning: --max-partition-memory-bytes is deprecated and will be removed in "
                  "Apache Kafka 5.0. Use --batch-size instead.\n")


def compression_codec(args: argparse.Namespace) -> str:
    """``compressionCodec()``: none without the option, gzip for the bare option."""
    if args.compression_codec is None:
        return "none"
    return args.compression_codec or "gzip"


def reader_properties(args: argparse.Namespace) -> dict[str, str]:
    """``readerProps()``: ``--reader-config``, then ``topic``, then ``--reader-property``."""
    props = load_props(args.reader_config) if args.reader_config is not None else {}
    props["topic"] = args.topic
    props.update(parse_key_value_args(args.reader_property))
    return props


def producer_properties(args: argparse.Namespace) -> dict[str, str]:
    """``producerProps()``: ``--command-config``, then ``--command-property``, then the
    options merged as ``CommandLineUtils.maybeMergeOptions`` does (an option given, or a
    property not set, takes the option's value or default). ``compression.type`` is always
    ``--compression-codec``'s, as in Kafka.

    >>> args = build_parser().parse_args(["d", "--topic", "t", "--batch-size", "123",
    ...                                   "--max-partition-memory-bytes", "456"])
    >>> producer_properties(args)["batch.size"]
    '456'
    """
    props = load_props(args.command_config) if args.command_config is not None else {}
    props.update(parse_key_value_args(args.command_property))
    if args.bootstrap_server is not None:
        props["bootstrap.servers"] = args.bootstrap_server
    props["compression.type"] = compression_codec(args)
    props.setdefault("client.id", "console-producer")
    props["key.serializer"] = "org.apache.kafka.common.serialization.ByteArraySerializer"
    props["value.serializer"] = "org.apache.kafka.common.serialization.ByteArraySerializer"
    for key, dest in (("linger.ms", "timeout"), ("acks", "request_required_acks"),
                      ("request.timeout.ms", "request_timeout_ms"),
                      ("retries", "message_send_max_retries"),
                      ("retry.backoff.ms", "retry_backoff_ms"),
                      ("send.buffer.bytes", "socket_buffer_size"),
                      ("buffer.memory", "max_memory_bytes"),
                      ("batch.size", "batch_size"),
                      ("batch.size", "max_partition_memory_bytes"),
                      ("metadata.max.age.ms", "metadata_expiry_ms"),
                      ("max.block.ms", "max_block_ms")):
        given = getattr(args, dest)
        if given is not None or key not in props:
            props[key] = str(given if given is not None else _DEFAULTS[dest])
    return props


def message_reader(args: argparse.Namespace) -> LineMessageReader:
    """``messageReader()``: the ``--line-reader`` configured with :func:`reader_properties`.

    Raises
    ------
    LineReaderError
        Not Kafka's LineMessageReader, or a configuration it refuses.
    OSError
        ``--reader-config`` cannot be read.
    """
    cls = args.line_reader if args.line_reader is not None else LINE_MESSAGE_READER_CLASS
    if cls != LINE_MESSAGE_READER_CLASS:
        raise LineReaderError(f"{cls} (only {LINE_MESSAGE_READER_CLASS} is available offline: "
                              "no Java class can be loaded)", "java.lang.ClassNotFoundException")
    reader = LineMessageReader()
    reader.configure(reader_properties(args))
    return reader


# -- main ------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None, *, stdin: IO[bytes] | None = None,
         stdout: IO[str] | None = None, stderr: IO[str] | None = None,
         clock: Clock | None = None, rng: random.Random | None = None) -> int:
    """Run ``kafkalog console-producer``; returns the exit status (0, 1 error, 2 usage, 130
    interrupted). ``clock`` (record timestamps, ``linger.ms``) and ``rng`` (the sticky
    partition) are for tests.

    Examples
    --------
    >>> import io, tempfile
    >>> from kafkalog.log_dir import LogDir
    >>> d = tempfile.mkdtemp()
    >>> with LogDir.open(d) as logs:  # or: kafkalog topics DIR --create --topic t
    ...     _ = logs.create_topic("t", 1)
    >>> main([d, "--topic", "t"], stdin=io.BytesIO(b"hello\\nworld\\n"))
    0
    >>> with LogDir.open(d) as logs:
    ...     [r.value for r in logs.log("t", 0).records()]
    [b'hello', b'world']
    """
    out = stdout if stdout is not None else sys.stdout
    err = stderr if stderr is not None else sys.stderr
    args, status = parse_args(build_parser(), argv, err)
    if args is None:
        return status
    if args.version:
        from .. import __version__

        out.write(f"kafkalog {__version__} (kafka-console-producer.sh of Kafka 4.2)\n")
        return EXIT_OK
    try:
        check_args(args, out)
    except UsageError as e:
        err.write(f"{e}\n")
        return EXIT_USAGE
    if args.bootstrap_server is not None:
        err.write(f"Note: --bootstrap-server {args.bootstrap_server} is ignored: records are "
                  f"appended to {args.log_dir} directly.\n")

    def fail(text: str) -> int:
        err.write(f"{PROG}: error: {text}\n")
        return EXIT_ERROR

    try:
        reader = message_reader(args)
        config = ProducerConfig.from_properties(producer_properties(args))
    except LineReaderError as e:
        return fail(f"{e.java_class}: {e}")
    except ProducerConfigError as e:
        return fail(f"{e.java_class}: {e}")
    except OSError as e:  # a --reader-config / --command-config file
        return fail(str(e))
    try:
        logs = open_log_dir(args.log_dir, writable=True)
    except (KafkaLogError, OSError) as e:
        return fail(open_error_text(e))
    src = stdin if stdin is not None else sys.stdin.buffer
    # LineMessageReader prompts with ">" when System.console() exists: stdin and stdout on a
    # terminal
    prompt = out if _isatty(src) and _isatty(out) else None
    try:
        with logs:
            try:
                producer = LogDirProducer(logs, args.topic, config, clock=clock, rng=rng,
                                          on_error=lambda line: err.write(line + "\n"))
            except InvalidTopicError as e:
                return fail(f"org.apache.kafka.common.errors.InvalidTopicException: "
                            f"{e.message}")
            except KafkaLogError as e:
                return fail(str(e))
            return _loop(producer, reader, src, prompt, args.sync, fail, err)
    except (KafkaLogError, OSError) as e:  # closing: writing the checkpoints
        return fail(f"closing {args.log_dir}: {e}")


def _isatty(stream: object) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if isatty is not None else False
    except ValueError:  # a closed stream
        return False


def _loop(producer: LogDirProducer, reader: LineMessageReader, src: IO[bytes],
          prompt: IO[str] | None, sync: bool, fail: Callable[[str], int], err: IO[str]) -> int:
    """``loopReader`` then the shutdown hook's ``producer.close()``: what was read is written
    whatever stops the loop."""
    status, problem = EXIT_OK, None
    try:
        if prompt is None and not sync:
            # not typed at a prompt: lines read a block at a time, keys hashed a block at once
            for block in reader.read_record_blocks(src):
                producer.send_many(block)
        else:
            for record in reader.read_records(src, prompt):
                producer.send(record, sync=sync)
    except LineReaderError as e:
        status, problem = EXIT_ERROR, f"{e.java_class}: {e}"
    except SendFailed as e:
        status, problem = EXIT_ERROR, e.java_text
    except KeyboardInterrupt:
        status = EXIT_INTERRUPTED
    except (KafkaLogError, OSError) as e:
        return fail(f"writing to topic {producer.topic} failed: {e} (records read but not yet "
                    "written are lost; what was written before stays)")
    try:
        producer.close()
    except (KafkaLogError, OSError) as e:
        return fail(f"writing to topic {producer.topic} failed: {e}")
    if problem is not None:
        written = sum(producer.stats.records.values())
        fail(problem)
        err.write(f"{PROG}: {written} record(s) read before it were written to topic "
                  f"{producer.topic} (kept)\n")
    return status
