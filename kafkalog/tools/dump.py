"""DumpLogSegments logic: what Kafka's ``kafka-dump-log.sh`` reads from each file, as data.

Pure: this module opens files read-only and yields *items* (one per line Kafka would print) and
*findings* (what Kafka collects for its end-of-run stderr summaries); it never prints. The text
shapes live in :mod:`kafkalog.tools.render`, the process plumbing in :mod:`kafkalog.cli`. Splitting
them is the one thing we do differently from ``DumpLogSegments.scala``, which mixes printing and
checking (see shared/style.md).

Behaviour follows ``core/src/main/scala/kafka/tools/DumpLogSegments.scala`` of the release
``DumpOptions.shape`` names (0.11 ... 4.2, default ``DEFAULT_SHAPE``, 4.1; what changed when is
:mod:`kafkalog.tools.kafka_versions`) and, for ``--kafka-version trunk``, the Java rewrite
``tools/.../DumpLogSegments.java``:

* dispatch on the text after the **last** ``.`` of the file name (spec §7.2);
* a ``.log``/``.checkpoint`` is walked with Kafka's ``FileLogInputStream`` stop rule (the native
  entry scan in ``kafkalog.native.scan``): 17 or fewer bytes left, or an entry running past the
  end, stop quietly and the rest is reported as ``Found N invalid bytes``; a declared size below
  14 (a zero-filled tail) is a ``CorruptRecordException`` in Kafka, which aborts the whole tool:
  it is a :class:`FileError`, the last item of the file (the CLI stops there, as Kafka does);
* ``.index``/``.timeindex`` entries are checked against the ``.log`` of the same base offset and
  stop at the first entry ``i > 0`` whose offset equals the base offset (zero-filled tail).

Memory stays flat for any segment size: the ``.log`` is memory-mapped, entry headers are scanned
in bounded chunks and only one batch is decoded at a time.

Example
-------
>>> import os, tempfile
>>> from kafkalog.tools.dump import DumpOptions, dump_file
>>> d = tempfile.mkdtemp()
>>> p = os.path.join(d, "00000000000000000000.log")
>>> _ = open(p, "wb").write(bytes.fromhex(
...     "00000000000000000000003d0000000002e641a44b0000000000000000018bcfe568000000018bcfe568"
...     "00ffffffffffffffffffffffffffff0000000116000000010a68656c6c6f00"))
>>> [type(i).__name__ for i in dump_file(p, DumpOptions())]
['FileStart', 'LogHeader', 'BatchItem']
"""

from __future__ import annotations

import base64
import json
import os
import re
import struct
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from ..errors import KafkaLogError
from ..file_copy import BLOCK_SIZE, SCAN_WINDOW, FileCopy
from ..java_utf8 import JAVA_REPLACE
from .kafka_versions import (  # the release table; re-exported here for callers of dump
    DEFAULT_SHAPE,
    KAFKA_VERSIONS,
    KafkaShape,
    parse_kafka_version,
)

__all__ = [
    "INT_MAX",
    "DEFAULT_MAX_MESSAGE_SIZE",
    "KafkaShape",
    "parse_kafka_version",
    "KAFKA_VERSIONS",
    "DumpOptions",
    "MessageParser",
    "DecoderParser",
    "StructuredParser",
    "DECODERS",
    "decoder_for_class",
    "FileStart",
    "LogHeader",
    "BatchItem",
    "RecordItem",
    "RecordBlock",
    "TrailingBytes",
    "IndexEntryItem",
    "TimeIndexEntryItem",
    "SnapshotEntryItem",
    "TxnEntryItem",
    "Notice",
    "FileError",
    "IndexMismatch",
    "TimeIndexMismatch",
    "OutOfOrderTimestamp",
    "ShallowOffsetNotFound",
    "NonConsecutiveOffsets",
    "Finding",
    "dump_file",
    "file_kind",
]

INT_MAX = 2147483647
DEFAULT_MAX_MESSAGE_SIZE = 5 * 1024 * 1024  # Kafka's --max-message-size default
LOG_OVERHEAD = 12
HEADER_SIZE_UP_TO_MAGIC = 17
MIN_ENTRY_SIZE = 14  # LegacyRecord.RECORD_OVERHEAD_V0
RECORD_BATCH_OVERHEAD = 61
SCAN_CHUNK = 4096  # entries per native scan call: bounds memory whatever the segment size
# drop pages already dumped from the resident set this often: every half scan window, so each
# window's pages are parked and reused by the next (kafkalog.page_pool) while still in cache
RELEASE_EVERY = 2 * 1024 * 1024

_V2_HEADER = struct.Struct(">qiibIhiqqqhii")  # DefaultRecordBatch header, 61 bytes
_CODEC_NAMES = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}
_SNAPSHOT_NAME = re.compile(r"^(\d+)-(\d+)\.checkpoint$")
BOOTSTRAP_FILE_NAME = "bootstrap.checkpoint"


# --------------------------------------------------------------------------------------------
# Message parsers (Kafka's MessageParser: record -> (key text, payload text))
# --------------------------------------------------------------------------------------------


class MessageParser(Protocol):
    def parse(
        self, key: bytes | None, value: bytes | None, offset: int
    ) -> tuple[str | None, str | None]: ...


class DumpAbort(Exception):
    """Kafka would throw out of the tool here: stop this file, report ``message``."""

    def __init__(self, message: str, *, java_class: str = "java.lang.RuntimeException"):
        super().__init__(message)
        self.message = message
        self.java_class = java_class


def _decode_string(data: bytes, offset: int) -> str:
    # Java's new String(bytes, UTF_8) replaces malformed input with U+FFFD, never fails.
    return data.decode("utf-8", errors=JAVA_REPLACE)


def _decode_hex(data: bytes, offset: int) -> str:
    return data.hex()


def _decode_base64(data: bytes, offset: int) -> str:
    return base64.b64encode(data).decode("ascii")


def _decode_json(data: bytes, offset: int) -> str:
    try:
        obj = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        return f"Error at offset {offset}, skipping. not JSON: {e}"
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def _decode_int(data: bytes, offset: int) -> str:
    # org.apache.kafka.tools.api.IntegerDecoder: ByteBuffer.wrap(bytes).getInt()
    if len(data) < 4:
        raise DumpAbort("", java_class="java.nio.BufferUnderflowException")
    return str(struct.unpack_from(">i", data)[0])


def _decode_long(data: bytes, offset: int) -> str:
    if len(data) < 8:
        raise DumpAbort("", java_class="java.nio.BufferUnderflowException")
    return str(struct.unpack_from(">q", data)[0])


DECODERS: dict[str, Callable[[bytes, int], str]] = {
    "string": _decode_string,
    "hex": _decode_hex,
    "base64": _decode_base64,
    "json": _decode_json,
    "int": _decode_int,
    "long": _decode_long,
}

# Kafka decoder class names -> our decoder, and whether Kafka 3.8+ prints a deprecation notice.
_DECODER_CLASSES = {
    "org.apache.kafka.tools.api.StringDecoder": ("string", None),
    "org.apache.kafka.tools.api.IntegerDecoder": ("int", None),
    "org.apache.kafka.tools.api.LongDecoder": ("long", None),
    "kafka.serializer.StringDecoder": ("string", "org.apache.kafka.tools.api.StringDecoder"),
    "kafka.serializer.IntegerDecoder": ("int", "org.apache.kafka.tools.api.IntegerDecoder"),
    "kafka.serializer.LongDecoder": ("long", "org.apache.kafka.tools.api.LongDecoder"),
    "StringDecoder": ("string", None),
    "IntegerDecoder": ("int", None),
    "LongDecoder": ("long", None),
}


def decoder_for_class(name: str) -> tuple[str, str | None]:
    """Map a decoder name or Kafka decoder class to ``(decoder, deprecated_replacement)``.

    ``DefaultDecoder`` is refused: it returns ``byte[]``, which Kafka prints as ``[B@<hash>``
    (an identity hash no other process can reproduce); use ``hex`` or ``base64`` instead.

    >>> decoder_for_class("kafka.serializer.StringDecoder")
    ('string', 'org.apache.kafka.tools.api.StringDecoder')
    """
    if name in DECODERS:
        return name, None
    if name in _DECODER_CLASSES:
        return _DECODER_CLASSES[name]
    raise ValueError(
        f"unknown decoder {name!r}: use one of {', '.join(DECODERS)} or a Kafka class name "
        f"({', '.join(k for k in _DECODER_CLASSES if '.' in k)}); DefaultDecoder prints an "
        "identity hash in Kafka, use hex or base64"
    )


@dataclass
class DecoderParser:
    """Kafka's ``DecoderMessageParser``: key and value decoded independently."""

    key_decoder: str = "string"
    value_decoder: str = "string"
    tombstone_hides_key: bool = False

    def parse(
        self, key: bytes | None, value: bytes | None, offset: int
    ) -> tuple[str | None, str | None]:
        if value is None and self.tombstone_hides_key:
            return None, None
        k = None if key is None else DECODERS[self.key_decoder](key, offset)
        v = None if value is None else DECODERS[self.value_decoder](value, offset)
        return k, v


_KAFKA_EXCEPTION = "org.apache.kafka.common.KafkaException"


def _metadata_release_error(value: bytes | None, shape: KafkaShape) -> str | None:
    """What the release's metadata serde threw for a record it cannot read at all: a frame
    version it does not read (2.8 read only frame 0: ``Could not deserialize metadata record due
    to unknown frame version N(only frame version 0 is supported)``), or a record type it did
    not know (``Unknown metadata id N``; 3.0+ wraps it in a MetadataParseException, whose
    message is the cause's ``toString``). None when the record reaches the decoder."""
    if not value:
        return None
    from ..decoders.message import MessageDecodeError, _Reader

    r = _Reader(bytes(value))
    try:
        frame = r.uvarint("frame version")
        api_key = r.uvarint("type")
    except MessageDecodeError:
        return None  # the decoder reports it
    if shape.metadata_frame_version == 0:
        if frame != 0:
            return (
                f"Could not deserialize metadata record due to unknown frame version {frame}"
                "(only frame version 0 is supported)"
            )
        if api_key not in shape.metadata_record_ids:
            return f"Unknown metadata id {api_key}"
        return None
    if frame == 1 and api_key not in shape.metadata_record_ids:
        return (
            "org.apache.kafka.common.errors.UnsupportedVersionException: "
            f"Unknown metadata id {api_key}"
        )
    return None


def _unknown_key_abort(kind: str, record_type: int, shape: KafkaShape) -> DumpAbort:
    """What a pre-3.5 text formatter threw for a key version it did not know.

    ``__consumer_offsets``: ``GroupMetadataManager.schemaForKey`` (``Unknown offset schema
    version N`` until 2.3, ``Unknown message key schema version N`` 2.4-2.7), then from 2.8
    ``readMessageKey``'s ``IllegalStateException`` (``Unknown group metadata message version:
    N``). ``__transaction_state``: ``Unknown transaction log message key schema version N``
    until 2.7, ``Unknown version N from the transaction log message`` from 2.8.
    """
    if kind == "offsets":
        if shape.at_least(2, 8):
            return DumpAbort(
                f"Unknown group metadata message version: {record_type}",
                java_class="java.lang.IllegalStateException",
            )
        what = "message key" if shape.at_least(2, 4) else "offset"
        return DumpAbort(
            f"Unknown {what} schema version {record_type}", java_class=_KAFKA_EXCEPTION
        )
    if shape.at_least(2, 8):
        return DumpAbort(
            f"Unknown version {record_type} from the transaction log message",
            java_class="java.lang.IllegalStateException",
        )
    return DumpAbort(
        f"Unknown transaction log message key schema version {record_type}",
        java_class=_KAFKA_EXCEPTION,
    )


@dataclass
class StructuredParser:
    """``--offsets-decoder`` / ``--transaction-log-decoder`` / ``--cluster-metadata-decoder`` /
    ``--remote-log-metadata-decoder`` / ``--share-group-state-decoder``, in the text of
    ``shape``'s release.

    ``kind`` is ``offsets``, ``transaction_log``, ``cluster_metadata``, ``remote_log_metadata``
    or ``share_group_state``; the decoding and Kafka's texts are :mod:`kafkalog.decoders`
    (``format_for_dump`` for the JSON parsers, ``format_text`` for the pre-JSON ones; see
    ``KafkaShape.*_decoder_style``). The JSON coordinator parsers print ``Error at offset O,
    skipping. msg`` as the key (no payload); the cluster-metadata parser prints ``Error at O,
    skipping. msg`` (sic) as the payload, the remote-log-metadata one ``Error at offset O,
    skipping. msg``; the pre-JSON formatters threw out of the tool (a :class:`DumpAbort`).
    ``errors`` counts records that did not decode. ``shape`` defaults to the release implied by
    the older flags: ``java_rewrite`` (trunk), ``legacy_text`` (3.7), else ``DEFAULT_SHAPE``.
    """

    kind: str
    java_rewrite: bool = False
    legacy_text: bool = False
    errors: int = 0
    shape: KafkaShape | None = None

    def __post_init__(self) -> None:
        if self.shape is None:
            self.shape = (parse_kafka_version("trunk") if self.java_rewrite
                          else parse_kafka_version("3.7") if self.legacy_text else DEFAULT_SHAPE)
        self.java_rewrite = self.shape.java_rewrite
        import importlib

        #: the decoder module of ``kind`` (looked up once, not per record)
        self._module = importlib.import_module(f"kafkalog.decoders.{self.kind}")

    def parse(
        self, key: bytes | None, value: bytes | None, offset: int
    ) -> tuple[str | None, str | None]:
        shape = self.shape or DEFAULT_SHAPE  # always set by __post_init__
        mod = self._module
        if self.kind == "cluster_metadata":
            error = _metadata_release_error(value, shape)
            if error is not None:
                self.errors += 1
                return None, f"Error at {offset}, skipping. {error}"
            if value is not None and shape.metadata_frame_version == 0:
                value = b"\x01" + bytes(value)[1:]  # a 2.8 frame: its body reads as frame 1's
            k, v = mod.format_for_dump(key, value, offset)
            if v is not None and v.startswith(f"Error at {offset}, skipping."):
                self.errors += 1
            return k, v
        if self.kind == "remote_log_metadata":
            k, v = mod.format_for_dump(key, value, offset,
                                       txn_idx_empty=shape.remote_log_metadata_txn_idx_empty)
            if v.startswith(f"Error at offset {offset}, skipping."):
                self.errors += 1
            return k, v
        style = (
            shape.offsets_decoder_style
            if self.kind == "offsets"
            else shape.transaction_log_decoder_style
            if self.kind == "transaction_log"
            else "json"
        )
        if style != "json":
            return self._text(mod, style, key, value)
        kwargs: dict = {}
        if self.kind == "share_group_state" and shape.share_group_state_decoder_style == "4.0":
            kwargs["value_label"] = "type"
        if not (shape.java_rewrite or shape.at_least(4, 1)):
            # a 4.0 (or older) tool's files: KIP-932 values read in 4.0's shape first (4.1
            # changed them without a new version; either shape is still recognised)
            kwargs["prefer_older"] = True
        try:
            k, v = mod.format_for_dump(key, value, offset, **kwargs)
        except KafkaLogError:
            # MissingKeyError: Kafka throws a RuntimeException out of the tool here.
            if shape.java_rewrite or shape.at_least(4, 1):
                what = "the specified decoder"
            elif self.kind == "share_group_state":
                what = "share group state topic decoder"
            else:
                what = "offset topic decoder"
            raise DumpAbort(
                f"Failed to decode message at offset {offset} using {what} "
                "(message had a missing key)"
            ) from None
        if (
            v is None
            and k is not None
            and (k.startswith((f"Error at offset {offset}, skipping.", "Unknown record type ")))
        ):
            self.errors += 1
        return k, v

    def _text(
        self, mod: Any, style: str, key: bytes | None, value: bytes | None
    ) -> tuple[str | None, str | None]:
        """The pre-JSON formatters (GroupMetadataManager / TransactionLog
        ``formatRecordKeyAndValue`` and the tool's own parsers before 2.4.1): any failure threw
        out of the tool."""
        from ..decoders._coordinator import MissingKeyError, UnknownRecordTypeError

        shape = self.shape or DEFAULT_SHAPE
        scala = shape.scala_version or "2.13"
        try:
            return mod.format_text(key, value, style=style, scala=scala)
        except MissingKeyError:
            if self.kind == "offsets":
                raise DumpAbort(
                    "Failed to decode message using offset topic decoder (message had a "
                    "missing key)",
                    java_class=_KAFKA_EXCEPTION,
                ) from None
            # TransactionLog.readTxnRecordKey(record.key) on a null key
            raise DumpAbort("", java_class="java.lang.NullPointerException") from None
        except UnknownRecordTypeError as e:
            raise _unknown_key_abort(self.kind, e.record_type, shape) from None
        except KafkaLogError as e:
            if type(e).__name__ == "TombstoneNullPointer":
                raise DumpAbort("", java_class="java.lang.NullPointerException") from None
            raise DumpAbort(
                getattr(e, "kafka_message", None) or e.message, java_class=_KAFKA_EXCEPTION
            ) from e


# --------------------------------------------------------------------------------------------
# Options and items
# --------------------------------------------------------------------------------------------


@dataclass
class DumpOptions:
    """The DumpLogSegments flags after Kafka's implications were applied.

    ``print_data_log`` is implied by any decoder flag, ``deep_iteration`` by ``print_data_log``
    (the CLI applies both, as Kafka's ``DumpLogSegmentsOptions`` does).
    """

    print_data_log: bool = False
    deep_iteration: bool = False
    verify_index_only: bool = False
    index_sanity_check: bool = False
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    max_bytes: int = INT_MAX
    skip_record_metadata: bool = False
    parser: MessageParser = field(default_factory=DecoderParser)
    shape: KafkaShape = DEFAULT_SHAPE
    decoder_notices: tuple[str, ...] = ()  # deprecation lines Kafka prints per .log file
    keep_raw: bool = False  # carry key/value/header bytes on RecordItem (for --format json)
    # "java.lang.ClassNotFoundException: <class>": a decoder class the release did not ship;
    # from 2.2 Kafka builds the parser per .log file, so each .log aborts after its Dumping line
    parser_error: str | None = None


@dataclass(slots=True)
class FileStart:
    """``Dumping <path as given>``; ``kind`` is the dispatch result (log, index, ... unknown)."""

    path: str
    kind: str


@dataclass(slots=True)
class LogHeader:
    """The line after ``Dumping`` for a ``.log`` (base offset) or ``.checkpoint``."""

    path: str
    base_offset: int | None = None
    snapshot_end_offset: int | None = None
    snapshot_epoch: int | None = None
    bootstrap: bool = False


@dataclass(slots=True)
class BatchItem:
    """One entry of a ``.log``: a v2 batch or a legacy (v0/v1) message / compressed wrapper."""

    path: str
    position: int
    size: int
    magic: int
    base_offset: int  # legacy: the entry offset (a wrapper's *last* inner offset)
    last_offset: int
    count: int | None  # v2 recordsCount; None for legacy (Kafka's countOrNull)
    base_sequence: int
    last_sequence: int
    producer_id: int
    producer_epoch: int
    partition_leader_epoch: int
    is_transactional: bool
    is_control: bool
    delete_horizon_ms: int | None
    timestamp_type: str  # CreateTime | LogAppendTime | NoTimestampType
    max_timestamp: int
    base_timestamp: int | None
    attributes: int
    compression: str
    crc: int
    computed_crc: int
    is_valid: bool


@dataclass(slots=True)
class ControlInfo:
    """A control record's parsed key (and value where Kafka prints it)."""

    type_id: int
    type_name: str
    coordinator_epoch: int | None = None  # ABORT / COMMIT
    json: str | None = (
        None  # SnapshotHeader / SnapshotFooter / KRaftVersion / KRaftVoters / LeaderChange
    )


@dataclass(slots=True)
class RecordItem:
    """One record of a batch (deep iteration)."""

    path: str
    batch_position: int
    magic: int
    offset: int
    timestamp_type: str
    timestamp: int
    key_size: int
    value_size: int
    sequence: int | None  # v2 only
    header_keys: tuple[str, ...]
    legacy_valid: bool | None = None  # legacy only
    legacy_crc: int | None = None
    control: ControlInfo | None = None
    is_control_batch: bool = False
    print_contents: bool = False
    key_text: str | None = None
    payload_text: str | None = None
    key: bytes | None = None  # only with DumpOptions.keep_raw
    value: bytes | None = None
    headers: tuple[tuple[str, bytes | None], ...] = ()


@dataclass(slots=True)
class RecordBlock:
    """The records of one v2 data batch, column-wise (deep-iteration fast path).

    Stands for the :class:`RecordItem` s :func:`dump_file` would otherwise yield for ``batch``
    (same lines once rendered). Only produced for ordinary cases (see ``_fast_deep_ok``): CRC-
    valid, non-control v2 batches with the default record-line shape, no ``keep_raw``.
    ``header_keys`` is None when no record has headers, else each record's header keys;
    ``key_texts``/``payload_texts`` are set with ``--print-data-log``.
    """

    path: str
    batch: BatchItem
    offsets: np.ndarray  # int64 (n,)
    timestamps: np.ndarray
    key_sizes: np.ndarray  # -1 = null key
    value_sizes: np.ndarray
    sequences: np.ndarray
    header_keys: list[tuple[str, ...]] | None = None
    key_texts: list[str | None] | None = None
    payload_texts: list[str | None] | None = None

    def record_items(self, print_contents: bool) -> list[RecordItem]:
        """The equivalent :class:`RecordItem` s (for consumers without a block renderer)."""
        b = self.batch
        n = len(self.offsets)
        hk = self.header_keys
        out = []
        for i in range(n):
            keys = () if hk is None else hk[i]
            out.append(
                RecordItem(
                    path=self.path,
                    batch_position=b.position,
                    magic=b.magic,
                    offset=int(self.offsets[i]),
                    timestamp_type=b.timestamp_type,
                    timestamp=int(self.timestamps[i]),
                    key_size=int(self.key_sizes[i]),
                    value_size=int(self.value_sizes[i]),
                    sequence=int(self.sequences[i]),
                    header_keys=keys,
                    print_contents=print_contents,
                    key_text=None if self.key_texts is None else self.key_texts[i],
                    payload_text=None if self.payload_texts is None else self.payload_texts[i],
                )
            )
        return out


@dataclass(slots=True)
class TrailingBytes:
    path: str
    count: int
    file_name: str


@dataclass(slots=True)
class IndexEntryItem:
    path: str
    index: int
    offset: int
    position: int


@dataclass(slots=True)
class TimeIndexEntryItem:
    path: str
    index: int
    timestamp: int
    offset: int


@dataclass(slots=True)
class SnapshotEntryItem:
    path: str
    producer_id: int
    producer_epoch: int
    coordinator_epoch: int
    current_txn_first_offset: int | None
    last_timestamp: int
    first_sequence: int | None = None  # None: no batch metadata (lastOffset < 0)
    last_sequence: int | None = None
    last_offset: int | None = None
    offset_delta: int | None = None
    timestamp: int | None = None
    # the entry's fields as stored (Kafka <= 2.4.0 kept batch metadata even for lastOffset < 0)
    raw_last_sequence: int = -1
    raw_last_offset: int = -1
    raw_offset_delta: int = 0


@dataclass(slots=True)
class TxnEntryItem:
    path: str
    version: int
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


@dataclass(slots=True)
class Notice:
    """A fixed line Kafka prints (``is empty.``, ``passed sanity check.``, ``Ignoring ...``)."""

    path: str
    text: str
    stream: str = "out"  # "out" or "err"


@dataclass(slots=True)
class FileError:
    """Where Kafka would throw out of the tool (which then exits 1 without reading further files
    or printing the summaries), or, with ``aborts`` False, an exception Kafka catches.

    ``java_class`` is the exception Kafka would throw, ``message`` its message: the renderer
    prints them the way the chosen Kafka version does. ``position``/``offset`` locate it.
    """

    path: str
    java_class: str
    message: str
    position: int | None = None
    offset: int | None = None
    aborts: bool = True  # False: Kafka catches it and goes on (CorruptSnapshotException)


# Findings: what Kafka collects for the stderr summaries. ``abs_path`` is Kafka's key.


@dataclass(slots=True)
class IndexMismatch:
    abs_path: str
    index_offset: int
    log_offset: int
    position: int


@dataclass(slots=True)
class TimeIndexMismatch:
    abs_path: str
    index_timestamp: int
    log_timestamp: int
    offset: int


@dataclass(slots=True)
class OutOfOrderTimestamp:
    abs_path: str
    index_timestamp: int
    previous_timestamp: int
    offset: int


@dataclass(slots=True)
class ShallowOffsetNotFound:
    abs_path: str
    index_offset: int
    log_offset: int


@dataclass(slots=True)
class NonConsecutiveOffsets:
    abs_path: str
    previous_offset: int
    offset: int


Finding = (
    IndexMismatch
    | TimeIndexMismatch
    | OutOfOrderTimestamp
    | ShallowOffsetNotFound
    | NonConsecutiveOffsets
)
Item = Any


# --------------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------------


def file_kind(name: str, shape: KafkaShape = DEFAULT_SHAPE) -> str:
    """Dispatch a file name as Kafka does: by the text from its last ``.``.

    Returns ``log``, ``checkpoint``, ``index``, ``timeindex``, ``snapshot``, ``txnindex``,
    ``unknown``, or ``nodot`` (Kafka's ``substring(-1)`` throws on a name without a dot).

    >>> file_kind("00000000000000000000.log.deleted")
    'unknown'
    """
    i = name.rfind(".")
    if i < 0:
        return "nodot"
    suffix = name[i:]
    if suffix == ".log":
        return "log"
    if suffix == ".checkpoint":
        return "checkpoint" if shape.reads_checkpoint_files else "unknown"
    return {
        ".index": "index",
        ".timeindex": "timeindex",
        ".snapshot": "snapshot",
        ".txnindex": "txnindex",
    }.get(suffix, "unknown")


def _increment_sequence(sequence: int, increment: int) -> int:
    # DefaultRecordBatch.incrementSequence: wraps past Integer.MAX_VALUE back to 0
    if sequence > INT_MAX - increment:
        return increment - (INT_MAX - sequence) - 1
    return sequence + increment


def _timestamp_type(magic: int, attributes: int) -> str:
    if magic == 0:
        return "NoTimestampType"
    return "LogAppendTime" if attributes & 0x08 else "CreateTime"


def _stem_offset(name: str) -> int:
    """``name.split("\\.")(0).toLong`` with Java's NumberFormatException message on failure."""
    stem = name.split(".")[0]
    try:
        if not re.fullmatch(r"[+-]?\d+", stem):
            raise ValueError
        v = int(stem)
        if not -(1 << 63) <= v < (1 << 63):
            raise ValueError
        return v
    except ValueError:
        raise DumpAbort(
            f'For input string: "{stem}"', java_class="java.lang.NumberFormatException"
        ) from None


def _open_mapped(path: str) -> FileCopy:
    """The file as a :class:`~kafkalog.file_copy.FileCopy`: read with ``pread`` into private
    memory as the dump walks it, never mapped (a writer in another process may cut the file:
    a roll trims a preallocated ``.log``, ``truncate_to`` and recovery cut it in place; a
    mapping would then die of SIGBUS). Kafka's ``FileRecords`` reads with ``FileChannel.read``
    (a copy) too."""
    try:
        return FileCopy(path)
    except FileNotFoundError:
        raise DumpAbort(path, java_class="java.nio.file.NoSuchFileException") from None
    except IsADirectoryError:
        raise DumpAbort(
            f"{path} (Is a directory)", java_class="java.io.FileNotFoundException"
        ) from None
    except PermissionError:
        raise DumpAbort(
            f"{path} (Permission denied)", java_class="java.io.FileNotFoundException"
        ) from None


def _corrupt_size_error(path: str, size: int, position: int) -> DumpAbort:
    e = DumpAbort(
        f"Found record size {size} smaller than minimum record overhead ({MIN_ENTRY_SIZE}) "
        f"in file {path}.",
        java_class="org.apache.kafka.common.errors.CorruptRecordException",
    )
    e.position = position  # type: ignore[attr-defined]
    return e


# --------------------------------------------------------------------------------------------
# Batch walking
# --------------------------------------------------------------------------------------------


def _scan(
    copy: FileCopy, start: int, end: int, window: int = SCAN_WINDOW
) -> Iterator[tuple[dict, int, int]]:
    """Yield ``(scan, count, stop_reason)`` chunks from ``start`` to the FileLogInputStream stop
    (copying the file ahead of the scan, ``window`` bytes at a time)."""
    for out in copy.scan_chunks(start, end, max_entries=SCAN_CHUNK, window=window):
        yield out, out["count"], out["stop_reason"]


def _entry_stop_error(path: str, buf: np.ndarray, pos: int, reason: int) -> DumpAbort | None:
    """The exception Kafka's iterator throws at ``pos`` for a stop ``reason`` (None = quiet)."""
    from ..native.scan import STOP_BAD_MAGIC, STOP_CORRUPT_SIZE, STOP_SHORT_V2

    if reason == STOP_CORRUPT_SIZE:
        size = int(struct.unpack_from(">i", buf, pos + 8)[0])
        return _corrupt_size_error(path, size, pos)
    if reason == STOP_BAD_MAGIC:
        magic = int(np.int8(buf[pos + 16]))
        e = DumpAbort(
            f"Invalid magic found in record: {magic}",
            java_class="org.apache.kafka.common.errors.CorruptRecordException",
        )
        e.position = pos  # type: ignore[attr-defined]
        return e
    if reason == STOP_SHORT_V2:
        size = int(struct.unpack_from(">i", buf, pos + 8)[0]) + LOG_OVERHEAD
        e = DumpAbort(
            f"Record batch at position {pos} is {size} bytes, shorter than the "
            f"{RECORD_BATCH_OVERHEAD}-byte v2 batch header",
            java_class="org.apache.kafka.common.errors.CorruptRecordException",
        )
        e.position = pos  # type: ignore[attr-defined]
        return e
    return None


def _crc32c(data: Any) -> int:
    from ..records.crc import crc32c

    return int(crc32c(data))


def batch_item(path: str, buf: np.ndarray, pos: int, size: int, magic: int) -> BatchItem:
    """Read the header of the entry at ``pos`` (``size`` bytes incl. the 12-byte prefix)."""
    if magic >= 2:
        (
            base_offset,
            _len,
            ple,
            _magic,
            crc,
            attributes,
            last_delta,
            base_ts,
            max_ts,
            producer_id,
            producer_epoch,
            base_sequence,
            count,
        ) = _V2_HEADER.unpack_from(buf, pos)
        computed = _crc32c(buf[pos + 21 : pos + size])
        codec_id = attributes & 0x07
        if codec_id not in _CODEC_NAMES:
            e = DumpAbort(
                f"Unknown compression type id: {codec_id}",
                java_class="java.lang.IllegalArgumentException",
            )
            e.position = pos  # type: ignore[attr-defined]
            raise e
        last_sequence = (
            -1 if base_sequence == -1 else _increment_sequence(base_sequence, last_delta)
        )
        return BatchItem(
            path=path,
            position=pos,
            size=size,
            magic=magic,
            base_offset=base_offset,
            last_offset=base_offset + last_delta,
            count=count,
            base_sequence=base_sequence,
            last_sequence=last_sequence,
            producer_id=producer_id,
            producer_epoch=producer_epoch,
            partition_leader_epoch=ple,
            is_transactional=bool(attributes & 0x10),
            is_control=bool(attributes & 0x20),
            delete_horizon_ms=base_ts if attributes & 0x40 else None,
            timestamp_type=_timestamp_type(2, attributes),
            max_timestamp=max_ts,
            base_timestamp=base_ts,
            attributes=attributes & 0xFFFF,
            compression=_CODEC_NAMES[codec_id],
            crc=crc,
            computed_crc=computed,
            is_valid=size >= RECORD_BATCH_OVERHEAD and computed == crc,
        )
    offset, _size, crc = struct.unpack_from(">qiI", buf, pos)
    attributes = int(buf[pos + 17])
    ts = -1
    if magic == 1 and size >= LOG_OVERHEAD + 22:
        ts = struct.unpack_from(">q", buf, pos + 18)[0]
    computed = zlib.crc32(buf[pos + 16 : pos + size]) & 0xFFFFFFFF
    codec_id = attributes & 0x07
    if codec_id not in _CODEC_NAMES:
        e = DumpAbort(
            f"Unknown compression type id: {codec_id}",
            java_class="java.lang.IllegalArgumentException",
        )
        e.position = pos  # type: ignore[attr-defined]
        raise e
    return BatchItem(
        path=path,
        position=pos,
        size=size,
        magic=magic,
        base_offset=offset,
        last_offset=offset,
        count=None,
        base_sequence=-1,
        last_sequence=-1,
        producer_id=-1,
        producer_epoch=-1,
        partition_leader_epoch=-1,
        is_transactional=False,
        is_control=False,
        delete_horizon_ms=None,
        timestamp_type=_timestamp_type(magic, attributes),
        max_timestamp=ts,
        base_timestamp=None,
        attributes=attributes,
        compression=_CODEC_NAMES[codec_id],
        crc=crc,
        computed_crc=computed,
        is_valid=size - LOG_OVERHEAD >= MIN_ENTRY_SIZE and computed == crc,
    )


@dataclass(slots=True)
class _RawRecord:
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]
    legacy_valid: bool | None = None
    legacy_crc: int | None = None


def _records_of(buf: np.ndarray, b: BatchItem) -> Iterator[_RawRecord]:
    """Decode the records of one entry through :mod:`kafkalog.records` (Kafka's batch iterator).

    Raises :class:`DumpAbort` where Kafka's iterator would throw (corrupt records, bad
    compressed data): the batch line has been printed already, as in Kafka. CRCs are not
    checked here (Kafka iterates the records of an invalid batch too).
    """
    try:
        if b.magic >= 2:
            yield from _v2_records(buf, b)
        else:
            yield from _legacy_records(buf, b)
    except KafkaLogError as e:
        raise DumpAbort(
            e.message, java_class="org.apache.kafka.common.InvalidRecordException"
        ) from e


def _v2_records(buf: np.ndarray, b: BatchItem) -> Iterator[_RawRecord]:
    from ..records.batch import RecordBatch

    batch = RecordBatch(buf, b.position, b.size)
    log_append = b.timestamp_type == "LogAppendTime"
    for r in batch:
        # LogAppendTime: every record reads the batch maxTimestamp (spec 1.4)
        ts = b.max_timestamp if log_append else r.timestamp
        yield _RawRecord(
            offset=r.offset,
            timestamp=ts,
            key=_as_bytes(r.key),
            value=_as_bytes(r.value),
            headers=tuple((hk, _as_bytes(hv)) for hk, hv in r.headers),
        )


def _as_bytes(v: Any) -> bytes | None:
    if v is None or type(v) is bytes:
        return v
    return bytes(v)


def _legacy_records(buf: np.ndarray, b: BatchItem) -> Iterator[_RawRecord]:
    """Records of a legacy entry with each one's own stored CRC and validity.

    Kafka's deep iteration yields one ``AbstractLegacyRecordBatch`` per inner message, whose
    ``isValid``/``checksum`` are the *inner* message's; an uncompressed entry is its own record.
    """
    from ..records import compression
    from ..records.legacy import LegacyEntry

    entry = LegacyEntry(buf, b.position, b.size)
    records = list(entry)
    if b.compression == "none":
        crcs = [(b.crc, b.is_valid)]
    else:
        # Walk the decompressed inner entries for their CRCs (LegacyEntry already validated
        # the structure and stopped at the same partial trailing entry).
        data = compression.decompress(b.compression, entry.value, magic=b.magic)
        crcs = []
        p = 0
        while len(data) - p >= LOG_OVERHEAD and len(crcs) < len(records):
            _off, size = struct.unpack_from(">qi", data, p)
            stored = struct.unpack_from(">I", data, p + 12)[0]
            computed = zlib.crc32(memoryview(data)[p + 16 : p + LOG_OVERHEAD + size]) & 0xFFFFFFFF
            crcs.append((stored, size >= MIN_ENTRY_SIZE and stored == computed))
            p += LOG_OVERHEAD + size
    for r, (crc, valid) in zip(records, crcs):
        if b.magic == 0:
            ts = -1
        elif b.timestamp_type == "LogAppendTime":
            ts = b.max_timestamp  # the wrapper's timestamp for every inner message
        else:
            ts = -1 if r.timestamp is None else r.timestamp
        yield _RawRecord(
            offset=r.offset,
            timestamp=ts,
            key=_as_bytes(r.key),
            value=_as_bytes(r.value),
            headers=(),
            legacy_valid=bool(valid),
            legacy_crc=int(crc),
        )


# --------------------------------------------------------------------------------------------
# Control records (ControlRecordType, EndTransactionMarker, ControlRecordUtils)
# --------------------------------------------------------------------------------------------


def control_info(key: bytes | None, value: bytes | None, shape: KafkaShape) -> ControlInfo:
    """Parse a control record the way DumpLogSegments does; raises DumpAbort where Kafka throws."""
    if key is None or len(key) < 4:
        found = 0 if key is None else len(key)
        raise DumpAbort(
            "Invalid value size found for end control record key. Must have at least 4 bytes, "
            f"but found only {found}",
            java_class="org.apache.kafka.common.InvalidRecordException",
        )
    version, type_id = struct.unpack_from(">hh", key)
    if version < 0:
        raise DumpAbort(
            f"Invalid version found for control record: {version}. May indicate data corruption",
            java_class="org.apache.kafka.common.InvalidRecordException",
        )
    # the release's ControlRecordType.fromTypeId (ids were renumbered in 3.0)
    name = shape.control_types.get(type_id, "UNKNOWN")
    info = ControlInfo(type_id=type_id, type_name=name)
    if name in ("ABORT", "COMMIT"):
        v = value or b""
        if len(v) < 6:
            raise DumpAbort(
                "Invalid value size found for end transaction marker. Must have at least 6 bytes, "
                f"but found only {len(v)}",
                java_class="org.apache.kafka.common.InvalidRecordException",
            )
        mver, epoch = struct.unpack_from(">hi", v)
        if mver < 0:
            raise DumpAbort(
                f"Invalid version found for end transaction marker: {mver}. "
                "May indicate data corruption",
                java_class="org.apache.kafka.common.InvalidRecordException",
            )
        info.coordinator_epoch = epoch
    elif name in shape.control_json_types:
        info.json = _control_json(name, value or b"")
    return info


def _control_json(name: str, value: bytes) -> str:
    """The JSON Kafka prints for a KRaft control record value (Jackson's compact form)."""
    from ..decoders import _schemas, kraft_control, message

    schema = (
        message.compile_schema(_schemas.CLIENT["LeaderChangeMessage"])
        if name == "LEADER_CHANGE"
        else kraft_control.SCHEMAS[name]
    )
    try:
        obj = message.read(schema, value, 0)
        version = int(obj.get("version", 0))
        return str(message.json_text(schema, obj, version))
    except KafkaLogError as e:
        kafka_message = getattr(e, "kafka_message", e.message)
        raise DumpAbort(kafka_message, java_class="java.lang.RuntimeException") from e


# --------------------------------------------------------------------------------------------
# .log and .checkpoint
# --------------------------------------------------------------------------------------------


def _dump_log(path: str, kind: str, opts: DumpOptions, findings: list) -> Iterator[Item]:
    name = os.path.basename(path)
    if kind == "log":
        yield LogHeader(path=path, base_offset=_stem_offset(name))
    elif name == BOOTSTRAP_FILE_NAME:
        yield LogHeader(path=path, bootstrap=True)
    else:
        m = _SNAPSHOT_NAME.match(name)
        if not m:
            raise DumpAbort("No value present", java_class="java.util.NoSuchElementException")
        yield LogHeader(
            path=path, snapshot_end_offset=int(m.group(1)), snapshot_epoch=int(m.group(2))
        )

    abs_path = java_absolute_path(path)
    shape = opts.shape
    max_bytes = opts.max_bytes if shape.has_max_bytes else INT_MAX
    with _open_mapped(path) as mf:
        buf = mf.buf
        if mf.size > INT_MAX:
            # FileRecords' constructor: positions are Java ints, a larger file is refused
            # before anything of it is read
            raise DumpAbort(f"The size of segment {path} ({mf.size}) is larger than the "
                            f"maximum allowed segment size of {INT_MAX}",
                            java_class=_KAFKA_EXCEPTION)
        _slice_check(path, 0, mf.size, max_bytes)  # FileRecords.open(file).slice(0, maxBytes)
        end = min(mf.size, max_bytes)
        valid_bytes = 0
        last_offset = -1
        first = not shape.non_consecutive_from_minus_one
        stop_pos = 0
        stop_reason = 0
        released = 0
        fast = _fast_deep_ok(opts)
        # the fast path decodes runs of ordinary v2 batches together; `pending` holds a run's
        # batch items (not yet yielded) and `pending_bytes` its size
        pending: list[BatchItem] = []
        pending_bytes = 0

        def slow(b: BatchItem) -> Iterator[Item]:
            nonlocal first, last_offset
            yield b
            if opts.deep_iteration:
                for r in _records_of(buf, b):
                    if first:
                        first = False
                    elif r.offset != last_offset + 1:
                        findings.append(NonConsecutiveOffsets(abs_path, last_offset, r.offset))
                    last_offset = r.offset
                    yield _record_item(path, b, r, opts)

        def flush() -> Iterator[Item]:
            nonlocal first, last_offset, pending_bytes
            run = pending[:]
            pending.clear()
            pending_bytes = 0
            if not run:
                return
            blocks = _fast_blocks(path, buf, run, opts)
            if blocks is None:  # anything unusual: the record-object path, errors and all
                for b in run:
                    yield from slow(b)
                return
            for b, blk in zip(run, blocks):
                offs = blk.offsets
                if len(offs):
                    if first:
                        first = False
                    elif int(offs[0]) != last_offset + 1:
                        findings.append(NonConsecutiveOffsets(abs_path, last_offset, int(offs[0])))
                    prev = offs[:-1]
                    for j in np.flatnonzero((offs[1:] != prev + 1) | (prev == _I64_MAX)).tolist():
                        findings.append(
                            NonConsecutiveOffsets(abs_path, int(offs[j]), int(offs[j + 1]))
                        )
                    last_offset = int(offs[-1])
                yield b
                yield blk

        for out, count, reason in _scan(mf, valid_bytes, end):
            positions, sizes, magics = out["positions"], out["sizes"], out["magics"]
            for i in range(count):
                pos, size, magic = int(positions[i]), int(sizes[i]), int(magics[i])
                try:
                    b = batch_item(path, buf, pos, size, magic)
                except DumpAbort:
                    yield from flush()
                    raise
                if fast and magic >= 2 and b.is_valid and not b.is_control:
                    pending.append(b)
                    pending_bytes += size
                    if pending_bytes >= FAST_RUN_BYTES:
                        yield from flush()
                else:
                    yield from flush()
                    yield from slow(b)
                valid_bytes += size
                if valid_bytes - released > RELEASE_EVERY and not pending:
                    mf.release(valid_bytes)
                    released = valid_bytes
            stop_pos, stop_reason = out["stop_position"], reason
        yield from flush()
        err = _entry_stop_error(path, buf, stop_pos, stop_reason)
        if err is not None:
            raise err
        trailing = end - valid_bytes
        if trailing > 0 and max_bytes == INT_MAX:
            yield TrailingBytes(path=path, count=trailing, file_name=name)


_I64_MAX = (1 << 63) - 1
FAST_RUN_BYTES = 4 * 1024 * 1024  # bound on one columnar decode (its columns copy the records)
_FAST_DECODERS = ("string", "hex", "base64")  # total: never raise, never count errors


def _fast_deep_ok(opts: DumpOptions) -> bool:
    """Whether deep iteration may use the columnar fast path (:class:`RecordBlock`).

    Only the default record-line shape: 2.2+ (batch and record lines), record metadata
    printed, no raw bytes kept, and either no contents or a plain :class:`DecoderParser` whose
    decoders cannot fail. Everything else (structured decoders, int/long/json, 2.0-2.1 shapes,
    ``--skip-record-metadata``, ``--format json``) goes through :func:`_record_item`.
    """
    if not opts.deep_iteration or opts.keep_raw:
        return False
    if opts.shape.record_line_style not in ("2.2", "3.0", "java"):
        return False  # 0.11-2.1 record-only lines, 2.8's batch fields: the RecordItem path
    if opts.skip_record_metadata and opts.shape.has_skip_record_metadata:
        return False
    if opts.print_data_log:
        p = opts.parser
        return (
            type(p) is DecoderParser
            and p.key_decoder in _FAST_DECODERS
            and p.value_decoder in _FAST_DECODERS
            and not p.tombstone_hides_key
        )
    return True


def _fast_blocks(
    path: str, buf: np.ndarray, run: list[BatchItem], opts: DumpOptions
) -> list[RecordBlock] | None:
    """Decode consecutive CRC-valid, non-control v2 batches with the columnar decoder.

    Returns one :class:`RecordBlock` per batch, or None when the run does not decode cleanly
    (the caller then replays it through the record-object path, which reports the error at
    the exact record Kafka would).
    """
    from ..records.columnar import decode_columns

    start = run[0].position
    stop = run[-1].position + run[-1].size
    try:
        cols = decode_columns(buf, start=start, end=stop, skip_control=False, validate=False)
    except KafkaLogError:
        return None
    counts = np.array([b.count for b in run], np.int64)
    n = len(cols)
    if int(counts.sum()) != n:  # cannot happen for batches that decode; stay on the safe side
        return None
    offs = cols.offsets
    ko = cols.key_offsets.astype(np.int64)
    vo = cols.value_offsets.astype(np.int64)
    key_sizes = np.where(cols.key_valid, ko[1:] - ko[:-1], -1)
    value_sizes = np.where(cols.value_valid, vo[1:] - vo[:-1], -1)
    # DefaultRecordBatch.incrementSequence(baseSequence, offset - baseOffset), wrapping past
    # Integer.MAX_VALUE back to 0; -1 (no producer sequence) stays -1
    base_seq = np.repeat(np.array([b.base_sequence for b in run], np.int64), counts)
    base_off = np.repeat(np.array([b.base_offset for b in run], np.int64), counts)
    seq = base_seq + (offs - base_off)
    seq = np.where(seq > INT_MAX, seq - INT_MAX - 1, seq)
    seq = np.where(base_seq < 0, -1, seq)  # (DefaultRecord.readFrom: base >= 0 only)
    header_keys = None
    ho = cols.header_offsets.astype(np.int64)
    if ho[-1]:
        hko = cols.header_key_offsets.tolist()
        hkd = cols.header_key_data.tobytes()
        names = [hkd[hko[h] : hko[h + 1]].decode("utf-8", JAVA_REPLACE)
                 for h in range(len(hko) - 1)]
        hol = ho.tolist()
        header_keys = [tuple(names[hol[i] : hol[i + 1]]) for i in range(n)]
    key_texts = payload_texts = None
    if opts.print_data_log:
        p = opts.parser
        key_texts = _texts(DECODERS[p.key_decoder], cols.key_data, ko, cols.key_valid, offs)
        payload_texts = _texts(
            DECODERS[p.value_decoder], cols.value_data, vo, cols.value_valid, offs
        )
    blocks = []
    c0 = 0
    for b, c in zip(run, counts.tolist()):
        c1 = c0 + c
        blocks.append(
            RecordBlock(
                path=path,
                batch=b,
                offsets=offs[c0:c1],
                timestamps=cols.timestamps[c0:c1],
                key_sizes=key_sizes[c0:c1],
                value_sizes=value_sizes[c0:c1],
                sequences=seq[c0:c1],
                header_keys=None if header_keys is None else header_keys[c0:c1],
                key_texts=None if key_texts is None else key_texts[c0:c1],
                payload_texts=None if payload_texts is None else payload_texts[c0:c1],
            )
        )
        c0 = c1
    return blocks


def _texts(
    decode: Callable[[bytes, int], str],
    data: np.ndarray,
    bounds: np.ndarray,
    valid: np.ndarray,
    offsets: np.ndarray,
) -> list[str | None]:
    """Decoded text of each non-null key (or value); the bytes are materialised once."""
    raw = data.tobytes()
    b = bounds.tolist()
    if decode is _decode_string:  # the default: skip one Python call per record
        return [
            raw[b[i] : b[i + 1]].decode("utf-8", JAVA_REPLACE) if v else None
            for i, v in enumerate(valid.tolist())
        ]
    return [
        decode(raw[b[i] : b[i + 1]], o) if v else None
        for i, (v, o) in enumerate(zip(valid.tolist(), offsets.tolist()))
    ]


def _record_item(path: str, b: BatchItem, r: _RawRecord, opts: DumpOptions) -> RecordItem:
    seq = None
    if b.magic >= 2:
        # DefaultRecord.readFrom: a record's sequence only from a base sequence >= 0 (the
        # batch's lastSequence, though, only treats -1 as none)
        seq = (
            -1
            if b.base_sequence < 0
            else _increment_sequence(b.base_sequence, r.offset - b.base_offset)
        )
    item = RecordItem(
        path=path,
        batch_position=b.position,
        magic=b.magic,
        offset=r.offset,
        timestamp_type=b.timestamp_type,
        timestamp=r.timestamp,
        key_size=-1 if r.key is None else len(r.key),
        value_size=-1 if r.value is None else len(r.value),
        sequence=seq,
        header_keys=tuple(k for k, _ in r.headers),
        legacy_valid=r.legacy_valid,
        legacy_crc=r.legacy_crc,
        is_control_batch=b.is_control,
    )
    skip = opts.skip_record_metadata and opts.shape.has_skip_record_metadata
    if b.is_control and not skip:
        item.control = control_info(r.key, r.value, opts.shape)
    if opts.print_data_log and not b.is_control:
        item.print_contents = True
        item.key_text, item.payload_text = opts.parser.parse(r.key, r.value, r.offset)
    if opts.keep_raw:
        item.key, item.value, item.headers = r.key, r.value, r.headers
    return item


# --------------------------------------------------------------------------------------------
# .index and .timeindex
# --------------------------------------------------------------------------------------------


def java_file_path(path: str) -> str:
    """``new File(path).toString()``: repeated separators collapsed, no trailing separator.

    Java does not resolve ``.`` or ``..``, so neither do we: Kafka prints the path as given.
    """
    p = re.sub(r"/+", "/", path)
    if len(p) > 1 and p.endswith("/"):
        p = p[:-1]
    return p


def java_absolute_path(path: str) -> str:
    """``File.getAbsolutePath()``: the working directory prefixed, nothing normalized.

    >>> java_absolute_path("/a/./b.log")
    '/a/./b.log'
    """
    p = java_file_path(path)
    if p.startswith("/"):
        return p
    cwd = os.getcwd()
    return cwd if p == "" else f"{cwd.rstrip('/')}/{p}"


def _sibling(path: str, suffix: str) -> str:
    # new File(file.getAbsoluteFile.getParent, name.split("\\.")(0) + suffix)
    a = java_absolute_path(path)
    parent, _, name = a.rpartition("/")
    return f"{parent or '/'}/{name.split('.')[0]}{suffix}".replace("//", "/")


def _open_index(kind: str, path: str, base: int) -> Any:
    """Kafka's ``new OffsetIndex(file, base, -1, false)``: read-only, every whole slot an entry."""
    from ..index.offset_index import OffsetIndex
    from ..index.time_index import TimeIndex

    cls = OffsetIndex if kind == "offset" else TimeIndex
    try:
        return cls(path, base, writable=False)
    except FileNotFoundError:
        raise DumpAbort(
            f"{java_absolute_path(path)} (No such file or directory)",
            java_class="java.io.FileNotFoundException",
        ) from None
    except IsADirectoryError:
        raise DumpAbort(
            f"{java_absolute_path(path)} (Is a directory)",
            java_class="java.io.FileNotFoundException",
        ) from None


def _first_batch_at(path: str, copy: FileCopy, pos: int, end: int) -> tuple[int, int, int] | None:
    """``(last_offset, size, magic)`` of the entry at ``pos`` if whole before ``end``, else None
    (its bytes copied)."""
    out = copy.scan(pos, end, max_entries=1, window=BLOCK_SIZE)
    if out["count"] == 0:
        err = _entry_stop_error(path, copy.buf, pos, out["stop_reason"])
        if err is not None:
            raise err
        return None
    return int(out["last_offsets"][0]), int(out["sizes"][0]), int(out["magics"][0])


def _file_records_str(path: str, size: int) -> str:
    # FileRecords.toString of a whole file opened by FileRecords.open
    return f"FileRecords(size={size}, file={path}, start=0, end={size})"


def _slice_check(log_path: str, pos: int, log_size: int, size: int = 0) -> None:
    """``FileRecords.slice(pos, size)``'s argument checks, with Kafka's messages."""
    where = _file_records_str(log_path, log_size)
    if pos < 0:
        msg = f"Invalid position: {pos} in read from {where}"
    elif pos > log_size:
        msg = f"Slice from position {pos} exceeds end position of {where}"
    elif size < 0:
        msg = f"Invalid size: {size} in read from {where}"
    else:
        return
    raise DumpAbort(msg, java_class="java.lang.IllegalArgumentException")


def _dump_index(path: str, opts: DumpOptions, findings: list) -> Iterator[Item]:
    base = _stem_offset(os.path.basename(path))
    log_path = _sibling(path, ".log")
    with _open_mapped(log_path) as lf:
        index = _open_index("offset", path, base)
        try:
            n = index.entries
            if n == 0 and opts.shape.index_empty_line:
                yield Notice(path, f"{path} is empty.")
                return
            if opts.index_sanity_check:
                _sanity_check("offset", index, path)
                yield Notice(path, f"{path} passed sanity check.")
                return
            arr = index.entries_array()
            rel = arr["relative_offset"].astype(np.int64)
            positions = arr["position"].astype(np.int64)
            del arr
        finally:
            index.close()
        abs_path = java_absolute_path(path)
        released = 0
        stop_first = opts.shape.index_stop_before_check
        for i in range(n):
            offset = base + int(rel[i])
            position = int(positions[i])
            if stop_first and i > 0 and offset == base:
                return  # zero-filled preallocated tail: what a crash leaves behind
            if position - released > RELEASE_EVERY:
                lf.release(position)  # copied pages behind us (read again if ever needed)
                released = position
            _slice_check(log_path, position, lf.size, opts.max_message_size)
            end = min(lf.size, position + opts.max_message_size)
            first = _first_batch_at(log_path, lf, position, end)
            if first is None:
                # Kafka: slice.batches.iterator.next() on an empty slice
                raise DumpAbort("", java_class="java.util.NoSuchElementException")
            found = first[0]
            if opts.shape.index_checks_first_record:
                bi = batch_item(log_path, lf.buf, position, first[1], first[2])
                rec = next(iter(_records_of(lf.buf, bi)), None)
                if rec is None:
                    raise DumpAbort("", java_class="java.util.NoSuchElementException")
                found = rec.offset
            if found != offset:
                findings.append(IndexMismatch(abs_path, offset, found, position))
            if not stop_first and i > 0 and offset == base:
                return  # until 2.2 the zero entry was checked first, then stopped on
            if not opts.verify_index_only:
                yield IndexEntryItem(path, i, offset, position)


def kafka_sanity_message(kind: str, index: Any, path: str) -> str | None:
    """Kafka's ``CorruptIndexException`` message for a failed sanity check (None = passes).

    The conditions are those of ``OffsetIndex.sanityCheck``/``TimeIndex.sanityCheck``; the
    index class's own :meth:`sanity_check` is the authority on *whether* it fails.
    """
    apath = java_absolute_path(path)
    n = index.entries
    length = index.length
    base = index.base_offset
    if kind == "offset":
        last = index.last_entry.offset if n else base
        if n != 0 and last < base:
            return (
                f"Corrupt index found, index file ({apath}) has non-zero size but the last offset "
                f"is {last} which is less than the base offset {base}"
            )
        if length % 8 != 0:
            return (
                f"Index file {apath} is corrupt, found {length} bytes which is neither positive "
                "nor a multiple of 8"
            )
        return None
    if n != 0:
        last = index.last_entry
        first_ts = index.entry(0).timestamp
        if last.timestamp < first_ts:
            return (
                f"Corrupt time index found, time index file ({apath}) has non-zero size but the "
                f"last timestamp is {last.timestamp} which is less than the first timestamp "
                f"{first_ts}"
            )
        if last.offset < base:
            return (
                f"Corrupt time index found, time index file ({apath}) has non-zero size but the "
                f"last offset is {last.offset} which is less than the first offset {base}"
            )
    if length % 12 != 0:
        return (
            f"Time index file {apath} is corrupt, found {length} bytes which is neither positive "
            "nor a multiple of 12"
        )
    return None


def _sanity_check(kind: str, index: Any, path: str) -> None:
    """Run the broker's own startup check; raise DumpAbort with Kafka's message on failure."""
    try:
        index.sanity_check()
    except KafkaLogError as e:
        msg = kafka_sanity_message(kind, index, path) or e.message
        raise DumpAbort(
            msg, java_class="org.apache.kafka.common.errors.CorruptIndexException"
        ) from e


def _dump_time_index(path: str, opts: DumpOptions, findings: list) -> Iterator[Item]:
    base = _stem_offset(os.path.basename(path))
    log_path = _sibling(path, ".log")
    index_path = _sibling(path, ".index")
    with _open_mapped(log_path) as lf:
        # Kafka would create a missing .index here (createNewFile); we never write: a missing
        # offset index reads as empty, so every lookup starts at position 0.
        offset_index = (
            _open_index("offset", index_path, base) if os.path.exists(index_path) else None
        )
        time_index = _open_index("time", path, base)
        try:
            if opts.index_sanity_check:
                _sanity_check("time", time_index, path)
                yield Notice(path, f"{path} passed sanity check.")
                return
            arr = time_index.entries_array()
            timestamps = arr["timestamp"].astype(np.int64)
            rel = arr["relative_offset"].astype(np.int64)
            del arr
            n = len(timestamps)
            abs_path = java_absolute_path(path)
            prev_ts = -1
            released = 0
            stop_first = opts.shape.index_stop_before_check
            for i in range(n):
                ts = int(timestamps[i])
                offset = base + int(rel[i])
                if stop_first and i > 0 and offset == base:
                    return
                position = offset_index.lookup(offset).position if offset_index is not None else 0
                if position - released > RELEASE_EVERY:
                    lf.release(position)
                    released = position
                _slice_check(log_path, position, lf.size)
                batch = _find_batch(log_path, lf, position, lf.size, offset)
                if batch is None:
                    findings.append(ShallowOffsetNotFound(abs_path, offset, -1))
                elif batch.last_offset != offset:
                    findings.append(ShallowOffsetNotFound(abs_path, offset, batch.last_offset))
                else:
                    max_ts = -1
                    for r in _records_of(lf.buf, batch):
                        max_ts = max(max_ts, r.timestamp)
                    if max_ts != ts:
                        findings.append(TimeIndexMismatch(abs_path, ts, max_ts, offset))
                    if prev_ts >= ts:
                        findings.append(OutOfOrderTimestamp(abs_path, ts, prev_ts, offset))
                    if not stop_first and i > 0 and offset == base:
                        return  # until 2.2: stopped on only when the entry's batch matched
                if not opts.verify_index_only:
                    yield TimeIndexEntryItem(path, i, ts, offset)
                prev_ts = ts
        finally:
            time_index.close()
            if offset_index is not None:
                offset_index.close()


def _find_batch(
    log_path: str, copy: FileCopy, start: int, end: int, target: int
) -> BatchItem | None:
    """First entry from ``start`` whose last offset >= ``target`` (Kafka: batches.find)."""
    buf = copy.buf
    stop_pos, stop_reason = start, 0
    for out, count, reason in _scan(copy, start, end, BLOCK_SIZE):
        lasts = out["last_offsets"][:count]
        hit = np.flatnonzero(lasts >= target)
        if hit.size:
            i = int(hit[0])
            return batch_item(
                log_path, buf, int(out["positions"][i]), int(out["sizes"][i]), int(out["magics"][i])
            )
        stop_pos, stop_reason = out["stop_position"], reason
    err = _entry_stop_error(log_path, buf, stop_pos, stop_reason)
    if err is not None:
        raise err
    return None


# --------------------------------------------------------------------------------------------
# .snapshot and .txnindex
# --------------------------------------------------------------------------------------------


_SNAPSHOT_ENTRY_FIELDS = (
    ("producer_id", 8),
    ("epoch", 2),
    ("last_sequence", 4),
    ("last_offset", 8),
    ("offset_delta", 4),
    ("timestamp", 8),
    ("coordinator_epoch", 4),
    ("current_txn_first_offset", 8),
)
_SNAPSHOT_ENTRY = struct.Struct(">qhiqiqiq")  # 46 bytes, the fields above


def _decrement_sequence(sequence: int, decrement: int) -> int:
    # DefaultRecordBatch.decrementSequence
    if sequence < decrement:
        return INT_MAX - (decrement - sequence) + 1
    return sequence - decrement


class _SnapshotCorrupt(Exception):
    """A ``CorruptSnapshotException`` (1.0 onwards). ``kind`` (``schema``, ``version``, ``crc``)
    and ``detail`` let 0.11, which threw other exceptions, be imitated too."""

    def __init__(self, message: str, kind: str = "schema", detail: Any = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.detail = detail


def read_producer_snapshot(data: bytes) -> list[SnapshotEntryItem]:
    """Parse a ``.snapshot`` as Kafka's ``ProducerStateManager.readSnapshot`` does.

    Raises ``_SnapshotCorrupt`` with Kafka's ``CorruptSnapshotException`` message: a schema
    error (``Snapshot failed schema validation: Error reading field '<f>': ...``), an unknown
    version, or a CRC-32C mismatch over bytes [6, end). Trailing bytes after the entries are
    ignored, as Kafka's ``Schema.read`` does.
    """
    from ..records.crc import crc32c

    def underflow(name: str, inner: str = "java.nio.BufferUnderflowException") -> _SnapshotCorrupt:
        return _SnapshotCorrupt(
            f"Snapshot failed schema validation: Error reading field '{name}': {inner}",
            "schema",
            f"Error reading field '{name}': {inner}",
        )

    n = len(data)
    if n < 2:
        raise underflow("version")
    if n < 6:
        raise underflow("crc")
    if n < 10:
        raise underflow("producer_entries")
    version, crc, count = struct.unpack_from(">hIi", data, 0)
    if count < 0:
        raise underflow("producer_entries", f"Array size {count} cannot be negative")
    if count > n - 10:
        raise underflow(
            "producer_entries",
            f"Error reading array of size {count}, only {n - 10} bytes available",
        )
    entries = []
    for i in range(count):
        p = 10 + i * 46
        if p + 46 > n:
            used = 0
            for fname, size in _SNAPSHOT_ENTRY_FIELDS:
                if p + used + size > n:
                    raise underflow(
                        "producer_entries",
                        f"Error reading field '{fname}': java.nio.BufferUnderflowException",
                    )
                used += size
        entries.append(_SNAPSHOT_ENTRY.unpack_from(data, p))
    if version != 1:
        raise _SnapshotCorrupt(
            f"Snapshot contained an unknown file version {version}", "version", version
        )
    computed = crc32c(memoryview(data)[6:])
    if crc != computed:
        raise _SnapshotCorrupt(
            f"Snapshot is corrupt (CRC is no longer valid). Stored crc: {crc}. "
            f"Computed crc: {computed}",
            "crc",
            (crc, computed),
        )
    out = []
    for pid, epoch, last_seq, last_offset, delta, ts, coord, txn_first in entries:
        item = SnapshotEntryItem(
            path="",
            producer_id=pid,
            producer_epoch=epoch,
            coordinator_epoch=coord,
            current_txn_first_offset=None if txn_first < 0 else txn_first,
            last_timestamp=ts,
            raw_last_sequence=last_seq,
            raw_last_offset=last_offset,
            raw_offset_delta=delta,
        )
        if last_offset >= 0:
            item.first_sequence = _decrement_sequence(last_seq, delta)
            item.last_sequence = last_seq
            item.last_offset = last_offset
            item.offset_delta = delta
            item.timestamp = ts
        out.append(item)
    return out


def _dump_snapshot(path: str, opts: DumpOptions, findings: list) -> Iterator[Item]:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise DumpAbort(path, java_class="java.nio.file.NoSuchFileException") from None
    except IsADirectoryError:
        raise DumpAbort("Is a directory", java_class="java.io.IOException") from None
    try:
        entries = read_producer_snapshot(data)
    except _SnapshotCorrupt as e:
        if opts.shape.snapshot_style == "0.11":
            # 0.11 (ProducerStateManager.readSnapshot @0.11.0.0): the schema read and the version
            # check threw other exceptions, out of the tool; only the CRC was a
            # CorruptSnapshotException, with the file in its message
            if e.kind == "schema":
                raise DumpAbort(
                    str(e.detail),
                    java_class="org.apache.kafka.common.protocol.types.SchemaException",
                ) from None
            if e.kind == "version":
                raise DumpAbort(
                    f"Unhandled snapshot file version {e.detail}",
                    java_class="java.lang.IllegalArgumentException",
                ) from None
            stored, computed = e.detail
            message = (
                f"Snapshot file '{path}' is corrupted (CRC is no longer valid). "
                f"Stored crc: {stored}. Computed crc: {computed}"
            )
        else:
            message = str(e)
        # Kafka catches CorruptSnapshotException: message on stderr, then the next file.
        yield FileError(
            path,
            "org.apache.kafka.storage.internals.log.CorruptSnapshotException",
            message,
            aborts=False,
        )
        return
    for item in entries:
        item.path = path
        yield item


def _dump_txn_index(path: str, opts: DumpOptions, findings: list) -> Iterator[Item]:
    base = _stem_offset(os.path.basename(path))
    del base  # Kafka parses it (UnifiedLog.offsetFromFile) only to construct the index
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        # TransactionIndex opens its channel only `if (file.exists)`; without one its iterator
        # is empty (TransactionIndex.scala @0.11.0.0 ... TransactionIndex.java @3.9): nothing
        # is printed
        return
    # Parsed here rather than through kafkalog.index.txn_index.TransactionIndex because Kafka's
    # iterator is lazy: entries before a bad version are printed, then it throws (the index
    # class validates the whole file up front).
    # AbortedTxn: int16 version, int64 producerId, firstOffset, lastOffset, lastStableOffset.
    # Kafka reads the version back as the single byte at entry offset 0 (a quirk we keep) and
    # ignores a trailing partial entry.
    for i in range(len(data) // 34):
        p = i * 34
        version = struct.unpack_from(">b", data, p)[0]
        if version > 0:
            raise DumpAbort(
                f"Unexpected aborted transaction version {version} in transaction index "
                f"{java_absolute_path(path)}, current version is 0",
                java_class="org.apache.kafka.common.KafkaException",
            )
        pid, first, last, lso = struct.unpack_from(">qqqq", data, p + 2)
        yield TxnEntryItem(path, version, pid, first, last, lso)


# --------------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------------

_DUMPERS = {
    "log": _dump_log,
    "checkpoint": _dump_log,
}


def dump_file(path: str, opts: DumpOptions, findings: list | None = None) -> Iterator[Item]:
    """Yield the items for one file as Kafka's DumpLogSegments reads it.

    Parameters
    ----------
    path:
        The path as given on the command line (Kafka prints it unchanged).
    opts:
        Flags, decoders and Kafka version shape.
    findings:
        A list that receives the findings (index mismatches, non-consecutive offsets...) Kafka
        prints at the end of the run; pass one list for the whole run.

    Never raises for bad file contents: where Kafka would abort, a :class:`FileError` is the
    last item for that file.
    """
    if findings is None:
        findings = []
    path = java_file_path(path)
    kind = file_kind(os.path.basename(path), opts.shape)
    yield FileStart(path, kind)
    if kind == "nodot":
        n = len(os.path.basename(path))
        yield FileError(
            path, "java.lang.StringIndexOutOfBoundsException", f"begin -1, end {n}, length {n}"
        )
        return
    if kind == "unknown":
        yield Notice(path, f"Ignoring unknown file {path}", stream="err")
        return
    try:
        if kind in ("log", "checkpoint"):
            for n in opts.decoder_notices:
                yield Notice(path, n)
            if opts.parser_error:
                cls, _, msg = opts.parser_error.partition(": ")
                raise DumpAbort(msg, java_class=cls)
            yield from _dump_log(path, kind, opts, findings)
        elif kind == "index":
            yield from _dump_index(path, opts, findings)
        elif kind == "timeindex":
            yield from _dump_time_index(path, opts, findings)
        elif kind == "snapshot":
            yield from _dump_snapshot(path, opts, findings)
        elif kind == "txnindex":
            yield from _dump_txn_index(path, opts, findings)
    except DumpAbort as e:
        java_class, message = e.java_class, e.message
        if (
            java_class == "java.nio.file.NoSuchFileException"
            and kind != "snapshot"
            and opts.shape.missing_file_is_file_not_found
        ):
            # FileRecords.open read through a FileInputStream until 2.0
            java_class = "java.io.FileNotFoundException"
            message = f"{message} (No such file or directory)"
        yield FileError(path, java_class, message, position=getattr(e, "position", None))
    except KafkaLogError as e:
        yield FileError(
            path,
            "org.apache.kafka.common.KafkaException",
            str(e),
            position=e.position,
            offset=e.offset,
        )
    except OSError as e:
        yield FileError(path, "java.io.IOException", f"{e.strerror}: {e.filename}")
