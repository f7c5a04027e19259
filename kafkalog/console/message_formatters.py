"""The console consumer's message formatters: how ``kafka-console-consumer.sh`` prints a
record (``--formatter CLASS``, configured by ``--formatter-property k=v``).

Source (Kafka 4.2): ``tools/src/main/java/org/apache/kafka/tools/consumer/``
``DefaultMessageFormatter.java``, ``LoggingMessageFormatter.java``,
``NoOpMessageFormatter.java``, ``CoordinatorRecordMessageFormatter.java`` and its subclasses
``OffsetsMessageFormatter``, ``GroupMetadataMessageFormatter``, ``TransactionLogMessageFormatter``,
``ShareGroupMessageFormatter`` and ``group/share/ShareGroupStateMessageFormatter``.

Each formatter writes bytes (``write_to(record, out)``), as Kafka's do to a ``PrintStream``.
Kafka facts kept on purpose:

* ``ConsoleConsumer.process`` hands the formatter a copy of the record made without its
  leader epoch and delivery count, so with the console consumer ``print.epoch`` and
  ``print.delivery`` print ``Epoch:NOT_PRESENT`` and ``Delivery:NOT_PRESENT``.
* Boolean properties are true only for ``true`` (any case, trimmed); anything else is false.
* The coordinator formatters write one JSON object per record with no line separator
  (``{"key":…,"value":…}{"key":…}``), and print nothing for a record without a key, of a
  type they do not show, or of a type they do not know.

Example
-------
>>> import io
>>> f = formatter("DefaultMessageFormatter", {"print.key": "true", "print.offset": "true"})
>>> out = io.BytesIO()
>>> f.write_to(ConsumerRecord("t", 0, 7, 5, "CreateTime", b"k", b"v"), out)
>>> out.getvalue()
b'Offset:7\\tk\\tv\\n'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import IO, Any

from ..decoders import message, offsets, share_group_state, transaction_log
from ..decoders._coordinator import CoordinatorCodec, UnknownRecordTypeError
from ..errors import CorruptRecordError, KafkaLogError
from ..java_utf8 import JAVA_REPLACE
from .deserializers import deserializer

__all__ = ["ConsumerRecord", "MessageFormatter", "DefaultMessageFormatter",
           "LoggingMessageFormatter", "NoOpMessageFormatter", "CoordinatorRecordMessageFormatter",
           "FORMATTERS", "formatter", "FormatterError"]

_TOOLS = "org.apache.kafka.tools.consumer."


@dataclass(frozen=True)
class ConsumerRecord:
    """What the console consumer hands its formatter (``ConsumerRecord<byte[], byte[]>``).

    ``timestamp_type``: ``"CreateTime"``, ``"LogAppendTime"`` or ``"NoTimestampType"``
    (v0 messages; timestamp -1). ``headers``: ``(key, value or None)`` pairs in order.
    The console consumer leaves ``leader_epoch`` and ``delivery_count`` out (None), as
    ``ConsoleConsumer.process`` does."""

    topic: str
    partition: int
    offset: int
    timestamp: int
    timestamp_type: str
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] = field(default=())
    #: the batch's partition leader epoch (None: not known)
    leader_epoch: int | None = None
    #: a share consumer's delivery count (None: not a share consumer's record)
    delivery_count: int | None = None


class FormatterError(KafkaLogError, RuntimeError):
    """A formatter failed on a record (Kafka: the exception ``writeTo`` throws); the message
    is Kafka's text."""


class MessageFormatter:
    """Kafka's ``MessageFormatter``: ``configure`` once, then ``write_to`` per record."""

    def configure(self, configs: Mapping[str, str]) -> None:
        """Take the formatter properties (``--formatter-property``, ``--formatter-config``)."""

    def write_to(self, record: ConsumerRecord, output: IO[bytes]) -> None:
        raise NotImplementedError

    def log_line(self, record: ConsumerRecord) -> str | None:
        """A line the formatter logs (on stderr) for ``record``, or None."""
        return None

    @property
    def formats_tables(self) -> bool:
        """Whether :meth:`format_table` gives the bytes of many records at once."""
        return False

    def format_table(self, table: Any, partition: int) -> Any:
        """The bytes of :meth:`write_to` for every row of ``table`` (``Log.read_table``'s
        columns), while :attr:`formats_tables`."""
        raise NotImplementedError


def _bool(configs: Mapping[str, str], key: str, default: bool) -> bool:
    if key not in configs:
        return default
    return configs[key].strip().lower() == "true"


class DefaultMessageFormatter(MessageFormatter):
    """``DefaultMessageFormatter``: the value and a line separator, with the timestamp,
    partition, offset, headers and key before it as the ``print.*`` properties ask, each
    followed by ``key.separator``."""

    def __init__(self) -> None:
        self.print_timestamp = False
        self.print_key = False
        self.print_value = True
        self.print_partition = False
        self.print_offset = False
        self.print_delivery = False
        self.print_epoch = False
        self.print_headers = False
        self.key_separator = b"\t"
        self.line_separator = b"\n"
        self.headers_separator = b","
        self.null_literal = b"null"
        self.key_deserializer: Callable[[bytes], str] | None = None
        self.value_deserializer: Callable[[bytes], str] | None = None
        self.headers_deserializer: Callable[[bytes], str] | None = None

    def configure(self, configs: Mapping[str, str]) -> None:
        for name in ("timestamp", "key", "offset", "delivery", "epoch", "partition",
                     "headers", "value"):
            attr = "print_" + name
            setattr(self, attr, _bool(configs, "print." + name, getattr(self, attr)))
        for prop, attr in (("key.separator", "key_separator"),
                           ("line.separator", "line_separator"),
                           ("headers.separator", "headers_separator"),
                           ("null.literal", "null_literal")):
            if prop in configs:
                setattr(self, attr, configs[prop].encode("utf-8"))
        # (Kafka logs a class it cannot load and goes on without it; a tool that does not
        # have the class says so instead of printing something else). Each configure sets
        # all three, as Kafka's does: one left out is none.
        for prop, attr in (("key.deserializer", "key_deserializer"),
                           ("value.deserializer", "value_deserializer"),
                           ("headers.deserializer", "headers_deserializer")):
            setattr(self, attr, deserializer(configs[prop]) if prop in configs else None)

    def _deserialize(self, fn: Callable[[bytes], str] | None, data: bytes | None) -> bytes:
        raw = data if data is not None else self.null_literal
        return raw if fn is None else fn(raw).encode("utf-8")

    def write_to(self, record: ConsumerRecord, output: IO[bytes]) -> None:
        # each field is followed by the key separator when another field follows, else by
        # the line separator (so a line may end without the value when print.value=false)
        parts: list[bytes] = []
        try:
            self._fields(record, parts)
        finally:
            # Kafka writes field by field: what came before a deserializer's error stays
            # printed (and the next record goes on from there with --skip-message-on-error)
            output.write(b"".join(parts))

    def _fields(self, record: ConsumerRecord, parts: list[bytes]) -> None:
        more = [self.print_partition, self.print_offset, self.print_delivery,
                self.print_epoch, self.print_headers, self.print_key, self.print_value]

        def sep(i: int) -> None:
            parts.append(self.key_separator if any(more[i:]) else self.line_separator)

        if self.print_timestamp:
            if record.timestamp_type != "NoTimestampType":
                parts.append(f"{record.timestamp_type}:{record.timestamp}".encode())
            else:
                parts.append(b"NO_TIMESTAMP")
            sep(0)
        if self.print_partition:
            parts.append(b"Partition:%d" % record.partition)
            sep(1)
        if self.print_offset:
            parts.append(b"Offset:%d" % record.offset)
            sep(2)
        if self.print_delivery:
            n = record.delivery_count
            parts.append(b"Delivery:NOT_PRESENT" if n is None else b"Delivery:%d" % n)
            sep(3)
        if self.print_epoch:
            n = record.leader_epoch
            parts.append(b"Epoch:NOT_PRESENT" if n is None else b"Epoch:%d" % n)
            sep(4)
        if self.print_headers:
            if not record.headers:
                parts.append(b"NO_HEADERS")
            else:
                for i, (hk, hv) in enumerate(record.headers):
                    parts.append(hk.encode("utf-8") + b":")
                    parts.append(self._deserialize(self.headers_deserializer, hv))
                    if i + 1 < len(record.headers):
                        parts.append(self.headers_separator)
            sep(5)
        if self.print_key:
            parts.append(self._deserialize(self.key_deserializer, record.key))
            sep(6)
        if self.print_value:
            parts.append(self._deserialize(self.value_deserializer, record.value))
            parts.append(self.line_separator)


    @property
    def formats_tables(self) -> bool:
        """Whether :meth:`format_table` applies: no deserializer (their output is Python's,
        record by record), and this class itself (a subclass may add per-record work)."""
        return type(self) is DefaultMessageFormatter and self.key_deserializer is None \
            and self.value_deserializer is None and self.headers_deserializer is None

    def format_table(self, table: Any, partition: int) -> Any:
        """The bytes :meth:`write_to` writes for each row of ``table`` (``Log.read_table``'s
        columns), all rows at once (one ``kafkalog.native.console_lines`` kernel call per
        record batch of the table, no Python per record): a ``numpy.uint8`` array.

        Same bytes as :meth:`write_to` row by row (a property test holds the two together);
        only while :attr:`formats_tables`. The array may be the formatter's buffer, valid
        until the next call (write it out first)."""
        import numpy as np

        from ..native import console_lines as kl
        from ..native._jit import kernel_input

        fields = 0
        for on, bit in ((self.print_timestamp, kl.FIELD_TIMESTAMP),
                        (self.print_partition, kl.FIELD_PARTITION),
                        (self.print_offset, kl.FIELD_OFFSET),
                        (self.print_delivery, kl.FIELD_DELIVERY),
                        (self.print_epoch, kl.FIELD_EPOCH),
                        (self.print_headers, kl.FIELD_HEADERS),
                        (self.print_key, kl.FIELD_KEY), (self.print_value, kl.FIELD_VALUE)):
            if on:
                fields |= bit
        key_sep = kernel_input(np.frombuffer(self.key_separator, np.uint8), np.uint8)
        line_sep = kernel_input(np.frombuffer(self.line_separator, np.uint8), np.uint8)
        null = kernel_input(np.frombuffer(self.null_literal, np.uint8), np.uint8)
        parts = []
        for batch in table.to_batches():
            n = batch.num_rows
            if n == 0 or not fields:
                continue
            kd, ko, kv = _binary_column(batch.column("key"))
            vd, vo, vv = _binary_column(batch.column("value"))
            if fields & kl.FIELD_HEADERS:
                hd, ho, _ = _binary_column(self._headers_column(batch.column("headers")))
            else:
                hd, ho = _EMPTY_DATA, kernel_input(np.zeros(n + 1, np.int64), np.int64)
            ts = kernel_input(batch.column("timestamp").to_numpy(), np.int64)
            tt = kernel_input(batch.column("timestamp_type").to_numpy(), np.int32)
            offs = kernel_input(batch.column("offset").to_numpy(), np.int64)
            sizes = np.empty(n, np.int64)
            total = kl.line_sizes(fields, n, ts, tt, offs, partition, ko, kv, vo, vv, ho,
                                  len(key_sep), len(line_sep), len(null), sizes)
            out = self._output(total, len(parts) + 1)
            written = kl.write_lines(fields, n, ts, tt, offs, partition, kd, ko, kv, vd, vo,
                                     vv, hd, ho, key_sep, line_sep, null, out)
            assert written == total
            parts.append(out)
        if not parts:
            return np.empty(0, np.uint8)
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def _output(self, size: int, nth: int) -> Any:
        """Room for ``size`` bytes of output: the first part of a call reuses the formatter's
        buffer (its pages already mapped: a fresh array of a chunk's lines costs a page fault
        per 4 KiB); later parts of the same call get their own."""
        import numpy as np

        if nth > 1:
            return np.empty(size, np.uint8)
        buf = getattr(self, "_scratch", None)
        if buf is None or len(buf) < size:
            buf = self._scratch = np.empty(max(size, 1 << 20), np.uint8)
        return buf[:size]

    def _headers_column(self, headers: Any) -> Any:
        import pyarrow as pa
        import pyarrow.compute as pc

        headers = headers.combine_chunks() if hasattr(headers, "combine_chunks") else headers
        flat = headers.flatten()
        keys = pc.cast(flat.field("key"), pa.binary())
        values = pc.fill_null(flat.field("value"), pa.scalar(self.null_literal, pa.binary()))
        pairs = pc.binary_join_element_wise(keys, values, b":")
        # (list offsets relative to the flattened values: the headers array may be a slice)
        offsets = pc.subtract(headers.offsets, headers.offsets[0])
        lists = pa.ListArray.from_arrays(offsets, pairs)
        joined = pc.binary_join(lists, pa.scalar(self.headers_separator, pa.binary()))
        return pc.if_else(pc.equal(pc.list_value_length(headers), 0),
                          pa.scalar(b"NO_HEADERS", pa.binary()), joined)


def _binary_column(arr: Any) -> tuple[Any, Any, Any]:
    """A binary Arrow array as the kernel reads it: ``(data, n + 1 int64 offsets into it,
    one validity byte per row)``, views of its buffers where the types allow."""
    import numpy as np
    import pyarrow as pa

    from ..native._jit import kernel_input

    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    n = len(arr)
    bufs = arr.buffers()
    offsets = np.frombuffer(bufs[1], np.int32, count=n + 1, offset=4 * arr.offset)
    data = _EMPTY_DATA if bufs[2] is None else kernel_input(np.frombuffer(bufs[2], np.uint8),
                                                           np.uint8)
    if arr.null_count == 0:
        valid = np.ones(n, np.uint8)
    else:
        valid = arr.is_valid().to_numpy(zero_copy_only=False).view(np.uint8)
    return data, kernel_input(offsets, np.int64), kernel_input(valid, np.uint8)


def _empty_data() -> Any:
    import numpy as np

    from ..native._jit import kernel_input

    return kernel_input(np.zeros(0, np.uint8), np.uint8)


_EMPTY_DATA = _empty_data()


class LoggingMessageFormatter(DefaultMessageFormatter):
    """``LoggingMessageFormatter``: the default formatter's output, and an INFO log line
    ``CreateTime:5, key:k, value:v`` per record (logged on stderr)."""

    def log_line(self, record: ConsumerRecord) -> str | None:
        ts = (f"{record.timestamp_type}:{record.timestamp}, "
              if record.timestamp_type != "NoTimestampType" else "")
        key = "key:" + ("null " if record.key is None
                        else record.key.decode("utf-8", errors=JAVA_REPLACE) + ", ")
        value = "value:" + ("null" if record.value is None
                            else record.value.decode("utf-8", errors=JAVA_REPLACE))
        return ts + key + value


class NoOpMessageFormatter(MessageFormatter):
    """``NoOpMessageFormatter``: prints nothing (counts records)."""

    def write_to(self, record: ConsumerRecord, output: IO[bytes]) -> None:
        return None


class CoordinatorRecordMessageFormatter(MessageFormatter):
    """``CoordinatorRecordMessageFormatter``: a coordinator topic's record as
    ``{"key":{"type":T,"data":{…}},"value":{"version":V,"data":{…}}}`` (``"value":null``
    for a tombstone), the data in the generated JSON converters' form (key at version 0)."""

    def __init__(self, codec: CoordinatorCodec, allowed: frozenset[int] | None) -> None:
        self.codec = codec
        #: record types printed (None: every type the codec knows)
        self.allowed = allowed

    def write_to(self, record: ConsumerRecord, output: IO[bytes]) -> None:
        if record.key is None:
            return
        try:
            rec = self.codec.decode(record.key, record.value)
        except UnknownRecordTypeError:
            return
        except CorruptRecordError as e:
            text = getattr(e, "kafka_message", None) or e.message
            raise FormatterError(f"Could not read record at offset {record.offset} due to: "
                                 f"{text}") from None
        if self.allowed is not None and rec["type"] not in self.allowed:
            return
        kschema = self.codec.keys[rec["type"]]
        lo, hi = kschema.versions  # type: ignore[misc]
        kversion = 0 if lo <= 0 <= hi else rec["key_version"]
        text = ('{"key":{"type":' + str(rec["type"]) + ',"data":'
                + message.json_text(kschema, rec["key"], kversion) + '},"value":')
        if rec["value"] is None:
            text += "null}"
        else:
            text += ('{"version":' + str(rec["version"]) + ',"data":'
                     + message.json_text(self.codec.value_schema(rec), rec["value"],
                                         rec["version"]) + "}}")
        output.write(text.encode("utf-8"))


def _coordinator(codec: CoordinatorCodec, allowed: frozenset[int] | None
                 ) -> Callable[[], MessageFormatter]:
    return lambda: CoordinatorRecordMessageFormatter(codec, allowed)


# CoordinatorRecordType ids (group-coordinator/src/main/resources/common/message/*.json)
_OFFSET_COMMITS = frozenset({0, 1})
_GROUP_METADATA = frozenset({2})
_SHARE_GROUP_RECORDS = frozenset({10, 11, 12, 13, 14, 15})

#: full class name -> formatter factory (Kafka 4.2's classes)
FORMATTERS: dict[str, Callable[[], MessageFormatter]] = {
    _TOOLS + "DefaultMessageFormatter": DefaultMessageFormatter,
    _TOOLS + "LoggingMessageFormatter": LoggingMessageFormatter,
    _TOOLS + "NoOpMessageFormatter": NoOpMessageFormatter,
    _TOOLS + "OffsetsMessageFormatter": _coordinator(offsets.CODEC, _OFFSET_COMMITS),
    _TOOLS + "GroupMetadataMessageFormatter": _coordinator(offsets.CODEC, _GROUP_METADATA),
    _TOOLS + "TransactionLogMessageFormatter": _coordinator(transaction_log.CODEC, None),
    _TOOLS + "ShareGroupMessageFormatter": _coordinator(offsets.CODEC, _SHARE_GROUP_RECORDS),
    _TOOLS + "group.share.ShareGroupStateMessageFormatter": _coordinator(
        share_group_state.CODEC, None),
}


def formatter(name: str, configs: Mapping[str, str] | None = None) -> MessageFormatter:
    """A configured formatter of class ``name``: Kafka's full class name, or its simple
    name (``DefaultMessageFormatter``).

    Raises
    ------
    ValueError
        An unknown class, or a property naming an unknown deserializer (Kafka:
        ``ClassNotFoundException``).
    """
    factory = FORMATTERS.get(name)
    if factory is None:
        simple = {k.rsplit(".", 1)[1]: v for k, v in FORMATTERS.items()}
        factory = simple.get(name)
    if factory is None:
        raise ValueError(name)  # Kafka's usage error is the ClassNotFoundException's message
    made = factory()
    made.configure(dict(configs or {}))
    return made
