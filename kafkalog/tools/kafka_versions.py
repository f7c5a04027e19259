"""What ``kafka-dump-log.sh`` printed in each Kafka release, 0.11 to 4.2 and the Java rewrite.

:class:`KafkaShape` answers one behavioural question per property (which fields a batch line has,
how a record line is laid out, which decoder text an internal topic gets, ...); the dump
(:mod:`kafkalog.tools.dump`) and its renderer (:mod:`kafkalog.tools.render`) ask it instead of
comparing version numbers. Every property cites the release that changed it. The authority is
``core/src/main/scala/kafka/tools/DumpLogSegments.scala`` at each release tag (apache/kafka; the
4.x tags read from a fork that carries them, aiven/inkless), plus the classes whose ``toString``
or formatter the tool prints (``CompressionType``, ``ControlRecordType``, ``ProducerStateManager``,
``GroupMetadataManager.formatRecordKeyAndValue``, ``TransactionLog.formatRecordKeyAndValue``,
the coordinator record serdes). The Java rewrite (``tools/.../DumpLogSegments.java``, KAFKA-14579,
merged to trunk in 2026 after 4.2 branched: 4.0-4.2 still ship the Scala tool) is ``trunk``.

The tool's file changed *within* some release lines, so a patch can be given where it matters
(``0.11.0.1`` vs ``0.11.0.2``, ``1.0.1`` vs ``1.0.2``, ``2.0.0`` vs ``2.0.1``, ``2.4.0`` vs
``2.4.1``); ``X.Y`` means the last release of that line. :data:`SHAPES` groups the releases whose
output is identical (the table of the issue note).

Example
-------
>>> parse_kafka_version("1.1").batch_line_layout
'0.11'
>>> parse_kafka_version("2.8").record_line_style
'2.8'
>>> parse_kafka_version("2.0.0").has_is_control, parse_kafka_version("2.0").has_is_control
(False, True)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

__all__ = [
    "KafkaShape",
    "parse_kafka_version",
    "KAFKA_VERSIONS",
    "DEFAULT_SHAPE",
    "LATEST_PATCH",
    "SHAPES",
    "UNKNOWN_OPTION",
]

#: ``X.Y`` without a patch: the last release of the line.
LATEST_PATCH = 99
_TRUNK = (99, 0, 0)

#: joptsimple's message for an option a release does not know (``UnrecognizedOptionException``).
UNKNOWN_OPTION = "joptsimple.UnrecognizedOptionException: {} is not a recognized option"


@dataclass(frozen=True)
class KafkaShape:
    """Which Kafka release's DumpLogSegments to imitate.

    ``version`` is ``(major, minor, patch)`` (0.11.0.x is ``(0, 11, x)``; a line without a patch
    is :data:`LATEST_PATCH`); the Java rewrite is ``(99, 0, 0)`` with ``java_rewrite`` set.
    """

    name: str
    version: tuple[int, int, int]
    java_rewrite: bool = False

    def at_least(self, major: int, minor: int, patch: int = 0) -> bool:
        return self.version >= (major, minor, patch)

    # -- command line ----------------------------------------------------------------------

    @cached_property
    def known_flags(self) -> frozenset[str]:
        """The DumpLogSegments options this release parses (any other is joptsimple's
        ``UnrecognizedOptionException``). ``--help`` 1.0 (0.11 printed usage only for no
        arguments), ``--version`` 2.2 (``CommandDefaultOptions``), ``--skip-record-metadata``
        and ``--cluster-metadata-decoder`` 2.8, ``--max-bytes`` 3.3,
        ``--remote-log-metadata-decoder`` 3.9, ``--share-group-state-decoder`` 4.0."""
        flags = {
            "files", "print-data-log", "verify-index-only", "index-sanity-check",
            "max-message-size", "deep-iteration", "value-decoder-class", "key-decoder-class",
            "offsets-decoder", "transaction-log-decoder",
        }  # fmt: skip
        for since, names in (
            ((1, 0), ("help",)),
            ((2, 2), ("version",)),
            ((2, 8), ("skip-record-metadata", "cluster-metadata-decoder")),
            ((3, 3), ("max-bytes",)),
            ((3, 9), ("remote-log-metadata-decoder",)),
            ((4, 0), ("share-group-state-decoder",)),
        ):
            if self.at_least(*since):
                flags.update(names)
        return frozenset(flags)

    def unrecognized_option(self, used: list[str]) -> str | None:
        """joptsimple's error for the first of ``used`` (flag names without ``--``) that this
        release does not know, or None."""
        for flag in used:
            if flag not in self.known_flags:
                return UNKNOWN_OPTION.format(flag)
        return None

    def missing_decoder_class(self, class_name: str) -> str | None:
        """``java.lang.ClassNotFoundException: <name>`` when ``class_name`` is a Kafka decoder
        class this release does not ship, else None (short names are kafkalog's own)."""
        if "." in class_name and class_name not in self.decoder_classes:
            return f"java.lang.ClassNotFoundException: {class_name}"
        return None

    @cached_property
    def decoder_error_before_files(self) -> bool:
        """Until 2.1 ``main`` built the message parser (and its decoders) before the first
        file; from 2.2 ``opts.messageParser`` is evaluated for each ``.log`` file, after its
        ``Dumping`` line."""
        return not self.at_least(2, 2)

    @cached_property
    def print_implies_deep(self) -> bool:
        """``--print-data-log`` implies ``--deep-iteration`` from 1.1.0 (``isDeepIteration =
        options.has(deepIterationOpt) || printDataLog``); before, it only mattered with it."""
        return self.at_least(1, 1)

    @cached_property
    def decoder_classes(self) -> frozenset[str]:
        """Decoder class names ``Class.forName`` finds: ``kafka.serializer.*`` until 3.9
        (removed in 4.0), ``org.apache.kafka.tools.api.*`` from 3.8 (KIP-641)."""
        names: set[str] = set()
        if not self.at_least(4, 0):
            names.update(
                f"kafka.serializer.{n}Decoder" for n in ("String", "Integer", "Long", "Default")
            )
        if self.at_least(3, 8):
            names.update(
                f"org.apache.kafka.tools.api.{n}Decoder"
                for n in ("String", "Integer", "Long", "Default")
            )
        return frozenset(names)

    @cached_property
    def deprecated_decoder_notice(self) -> bool:
        """3.8-3.9 print ``kafka.serializer.X is deprecated. Please use ... instead`` on stdout
        (``convertDeprecatedDecoderClass``); 4.0 dropped the old classes altogether."""
        return self.at_least(3, 8) and not self.at_least(4, 0)

    # -- .log header and batch line ----------------------------------------------------------

    @cached_property
    def log_header_label(self) -> str:
        """``Starting offset: N`` until 3.2, ``Log starting offset: N`` from 3.3."""
        return "Log starting offset" if self.at_least(3, 3) else "Starting offset"

    @cached_property
    def reads_checkpoint_files(self) -> bool:
        """3.3 added KRaft snapshot ``.checkpoint`` files (``Snapshots.SUFFIX``)."""
        return self.at_least(3, 3)

    @cached_property
    def batch_and_records(self) -> bool:
        """2.2 (``printBatchLevel``) prints the batch line before its record lines; until 2.1
        deep iteration printed self-contained record lines and no batch line."""
        return self.at_least(2, 2)

    @cached_property
    def batch_line_layout(self) -> str:
        """``0.11``: ``... position: P <TS>: T isvalid: b size: S magic: M compresscodec: C
        crc: N`` (0.11-2.1); ``2.2``: ``... size ... crc: N isvalid: b`` (2.2 onwards)."""
        return "2.2" if self.at_least(2, 2) else "0.11"

    @cached_property
    def has_count(self) -> bool:
        """``count:`` (``batch.countOrNull``) after ``lastOffset:`` from 2.0.0."""
        return self.at_least(2, 0, 0)

    @cached_property
    def has_is_control(self) -> bool:
        """``isControl:`` after ``isTransactional:`` from 2.0.1."""
        return self.at_least(2, 0, 1)

    @cached_property
    def has_delete_horizon(self) -> bool:
        """``deleteHorizonMs:`` (an ``OptionalLong``) from 3.2 (KIP-534)."""
        return self.at_least(3, 2)

    @cached_property
    def upper_case_codec(self) -> bool:
        """``compresscodec: NONE`` (the enum's name) until 2.8; ``compressionType.name``
        (``none``) from 3.0."""
        return not self.at_least(3, 0)

    @cached_property
    def has_max_bytes(self) -> bool:
        """``--max-bytes`` from 3.3 (and the trailing-bytes line only without it)."""
        return self.at_least(3, 3)

    # -- record lines --------------------------------------------------------------------------

    @cached_property
    def record_line_style(self) -> str:
        """``record`` (0.11-2.1: ``offset: O position: P <TS>: T isvalid: b keysize: K ...``),
        ``2.2`` (2.2-2.7: ``| offset: O <TS>: T keysize: K valuesize: V``), ``2.8`` (2.8.x:
        the regression repeating batch fields, ``| offset: O isValid: b crc: C keySize: ...``),
        ``3.0`` (3.0 onwards: ``| offset: O <TS>: T keySize: K valueSize: V``), ``java``."""
        if self.java_rewrite:
            return "java"
        if self.at_least(3, 0):
            return "3.0"
        if self.at_least(2, 8):
            return "2.8"
        if self.at_least(2, 2):
            return "2.2"
        return "record"

    @cached_property
    def record_has_producer_epoch(self) -> bool:
        """0.11-2.1 record lines: ``producerEpoch:`` after ``producerId:`` from 0.11.0.2
        (KAFKA-6119)."""
        return self.at_least(0, 11, 2)

    @cached_property
    def lower_case_sizes(self) -> bool:
        """``keysize``/``valuesize`` until 2.7."""
        return not self.at_least(2, 8)

    @cached_property
    def legacy_record_tail(self) -> str:
        """The validity part of a legacy record: ``old`` (until 2.8: `` crc: N isvalid: b``),
        ``scala`` (3.0+: `` isValid: b crc: N}`` with a stray brace), ``java`` (no brace)."""
        if not self.at_least(3, 0):
            return "old"
        return "java" if self.java_rewrite else "scala"

    @cached_property
    def has_skip_record_metadata(self) -> bool:
        return self.at_least(2, 8)

    @cached_property
    def tombstone_hides_key(self) -> bool:
        """Until 2.3 ``DecoderMessageParser`` returned ``(None, None)`` for a null value, so a
        tombstone printed neither key nor payload; 2.4.0 prints the key."""
        return not self.at_least(2, 4, 0)

    @cached_property
    def pipe_prefix_when_metadata_skipped(self) -> bool:
        """Java rewrite: ``| payload:`` even when the key is null and metadata is skipped."""
        return self.java_rewrite

    # -- control records -------------------------------------------------------------------

    @cached_property
    def control_types(self) -> dict[int, str]:
        """``ControlRecordType.fromTypeId`` of the release (an unlisted id is ``UNKNOWN``):
        ABORT/COMMIT since 0.11; 2.7-2.8 QUORUM_REASSIGNMENT(2) and LEADER_CHANGE(3) (KIP-595);
        3.0 renumbered LEADER_CHANGE(2) and added SNAPSHOT_HEADER(3)/SNAPSHOT_FOOTER(4);
        3.8 KRAFT_VERSION(5)/KRAFT_VOTERS(6) (KIP-853)."""
        types = {0: "ABORT", 1: "COMMIT"}
        if self.at_least(3, 0):
            types.update({2: "LEADER_CHANGE", 3: "SNAPSHOT_HEADER", 4: "SNAPSHOT_FOOTER"})
        elif self.at_least(2, 7):
            types.update({2: "QUORUM_REASSIGNMENT", 3: "LEADER_CHANGE"})
        if self.at_least(3, 8):
            types.update({5: "KRAFT_VERSION", 6: "KRAFT_VOTERS"})
        return types

    @cached_property
    def control_json_types(self) -> frozenset[str]:
        """Control records printed as JSON instead of ``controlType: NAME(id)``: snapshot
        header/footer from 3.3, KRaftVersion/KRaftVoters from 3.8, LeaderChange from 4.1
        (KAFKA-19069)."""
        names: set[str] = set()
        if self.at_least(3, 3):
            names.update(("SNAPSHOT_HEADER", "SNAPSHOT_FOOTER"))
        if self.at_least(3, 8):
            names.update(("KRAFT_VERSION", "KRAFT_VOTERS"))
        if self.at_least(4, 1):
            names.add("LEADER_CHANGE")
        return frozenset(names)

    @cached_property
    def leader_change_json(self) -> bool:
        return "LEADER_CHANGE" in self.control_json_types

    # -- internal-topic decoders -----------------------------------------------------------

    @cached_property
    def offsets_decoder_style(self) -> str:
        """``--offsets-decoder`` text:

        * ``0.11``: the tool's own parser, ``offset::G:T:P`` / ``O[:M]`` and ``metadata::G`` /
          ``PT:PROTO:GEN:{m=[t-0]}`` (0.11.0.x);
        * ``1.0``: group metadata as JSON, ``{"metadata":"G"}`` / ``{"protocolType":...}``
          (1.0.x, whose ``Json.encode`` did not escape strings);
        * ``1.1``: the same through Jackson (``Json.encodeAsString``, 1.1.0-2.4.0);
        * ``2.4.1``: ``GroupMetadataManager.formatRecordKeyAndValue``,
          ``offset_commit::group=G,partition=T-P`` / ``offset=O[,metadata=M]``,
          ``group_metadata::group=G`` / JSON, ``<DELETE>`` (2.4.1-3.4; an unknown key throws);
        * ``3.5``: the same with ``unknown::version=V`` for an unknown key (3.5-3.7);
        * ``json``: the coordinator serde's records as JSON (3.8 onwards, KAFKA-16470).
        """
        if self.at_least(3, 8):
            return "json"
        if self.at_least(3, 5):
            return "3.5"
        if self.at_least(2, 4, 1):
            return "2.4.1"
        if self.at_least(1, 1):
            return "1.1"
        if self.at_least(1, 0):
            return "1.0"
        return "0.11"

    @cached_property
    def transaction_log_decoder_style(self) -> str:
        """``--transaction-log-decoder`` text:

        * ``tool``: the tool's own parser, ``transactionalId=X`` /
          ``producerId:P,...,partitions=Set(t-0, t-1),...`` (0.11-2.4.0);
        * ``2.4.1``: ``TransactionLog.formatRecordKeyAndValue``,
          ``transaction_metadata::transactionalId=X``, still ``partitions=Set(...)`` (2.4.1);
        * ``2.5``: ``partitions=[t-0,t-1]`` (2.5-3.4);
        * ``3.5``: ``unknown::version=V`` for an unknown key (3.5-4.0);
        * ``json``: ``TransactionCoordinatorRecordSerde`` + JSON converters, key
          ``{"type":"0","data":...}`` (4.1 onwards, KAFKA-18207).
        """
        if self.at_least(4, 1):
            return "json"
        if self.at_least(3, 5):
            return "3.5"
        if self.at_least(2, 5):
            return "2.5"
        if self.at_least(2, 4, 1):
            return "2.4.1"
        return "tool"

    @cached_property
    def share_group_state_decoder_style(self) -> str | None:
        """``--share-group-state-decoder`` (4.0+): ``4.0`` labels the value version ``"type"``
        (its ``jsonString`` helper served key and value alike), ``4.1`` ``"version"``."""
        if self.at_least(4, 1):
            return "4.1"
        if self.at_least(4, 0):
            return "4.0"
        return None

    @cached_property
    def remote_log_metadata_txn_idx_empty(self) -> bool:
        """``--remote-log-metadata-decoder`` (3.9+) prints segments' ``txnIdxEmpty`` from 4.0
        (KAFKA-16780 added the field to ``RemoteLogSegmentMetadata`` and its snapshot)."""
        return self.at_least(4, 0)

    @cached_property
    def has_cluster_metadata_decoder(self) -> bool:
        return self.at_least(2, 8)

    @cached_property
    def metadata_frame_version(self) -> int:
        """The KRaft record frame version the release reads: 0 in 2.8 (the preview,
        ``raft/.../MetadataRecordSerde.java`` @2.8.0), 1 from 3.0 (``AbstractApiMessageSerde``,
        which rejects frame 0 as the unsupported 2.8 preview)."""
        return 1 if self.at_least(3, 0) else 0

    @cached_property
    def metadata_record_ids(self) -> frozenset[int]:
        """``MetadataRecordType`` ids the release knows (the ``apiKey`` of
        ``metadata/src/main/resources/common/metadata/*Record.json`` at its tag); any other is
        ``Unknown metadata id N``."""
        ids = set(range(13)) | {14}  # 2.8.0
        for since, added, removed in (
            ((3, 0), {15, 16, 17}, set()),
            ((3, 2), {18, 19}, set()),
            ((3, 3), {20}, {16}),
            ((3, 4), {21}, set()),
            ((3, 5), {22}, {6}),
            ((3, 6), {23, 24, 25, 26}, set()),
            ((3, 7), {27}, set()),
            ((4, 0), {28}, set()),
        ):
            if self.at_least(*since):
                ids = (ids | added) - removed
        return frozenset(ids)

    @cached_property
    def json_coordinator_decoders(self) -> bool:
        """Whether ``--offsets-decoder`` prints the coordinator JSON (3.8+)."""
        return self.offsets_decoder_style == "json"

    @cached_property
    def missing_key_decoder_name(self) -> str:
        """The decoder named in the missing-key exception of the JSON coordinator parsers:
        ``offset topic decoder`` (3.8-4.0), ``the specified decoder`` (4.1+ and the rewrite)."""
        return "the specified decoder" if self.at_least(4, 1) else "offset topic decoder"

    # -- index checks ------------------------------------------------------------------------

    @cached_property
    def index_checks_first_record(self) -> bool:
        """Until 2.2 an index entry was compared with the first *record* offset at its position
        (KAFKA-7487 compares the first batch's last offset, from 2.3)."""
        return not self.at_least(2, 3)

    @cached_property
    def index_stop_before_check(self) -> bool:
        """2.3 stops at the zero-filled tail before checking the entry; until 2.2 the entry was
        checked (offset index) or only stopped on when its batch matched (time index)."""
        return self.at_least(2, 3)

    @cached_property
    def index_empty_line(self) -> bool:
        """``<file> is empty.`` for an offset index without entries, from 2.8."""
        return self.at_least(2, 8)

    # -- snapshot line -------------------------------------------------------------------------

    @cached_property
    def snapshot_style(self) -> str:
        """``0.11`` (``producerId: P producerEpoch: E lastSequence: S lastOffset: O offsetDelta:
        D lastTimestamp: T coordinatorEpoch: C currentTxnFirstOffset: X``), ``1.0``
        (``... currentTxnFirstOffset: X cachedMetadata: Queue(BatchMetadata(...))``, 1.0.0-1.0.1),
        ``1.0.2`` (the current layout, 1.0.2 onwards; ``lastTimestamp:`` from 3.1)."""
        if self.at_least(1, 0, 2):
            return "1.0.2"
        if self.at_least(1, 0):
            return "1.0"
        return "0.11"

    @cached_property
    def snapshot_trailing_space(self) -> bool:
        return not self.java_rewrite

    @cached_property
    def snapshot_optional_long(self) -> bool:
        """``OptionalLong[n]``/``OptionalLong.empty`` from 3.5 (the Java ProducerStateEntry);
        Scala's ``Some(n)``/``None`` before."""
        return self.at_least(3, 5)

    @cached_property
    def snapshot_last_timestamp(self) -> bool:
        return self.at_least(3, 1)

    # -- summaries and exceptions --------------------------------------------------------------

    @cached_property
    def scala_version(self) -> str | None:
        """The Scala version of the release's default build (``gradle.properties``): 2.11 for
        0.11-2.1, 2.12 for 2.2-2.5, 2.13 from 2.6; None for the Java rewrite. It decides the
        iteration order of the hash maps and sets whose contents the tool prints."""
        if self.java_rewrite:
            return None
        if self.at_least(2, 6):
            return "2.13"
        if self.at_least(2, 2):
            return "2.12"
        return "2.11"

    @cached_property
    def non_consecutive_from_minus_one(self) -> bool:
        return self.java_rewrite

    @cached_property
    def sorted_unique_summaries(self) -> bool:
        """Java rewrite keys index mismatches and non-consecutive pairs by offset (TreeMap)."""
        return self.java_rewrite

    @cached_property
    def non_consecutive_colon(self) -> bool:
        """``Non-consecutive offsets in :<path>`` until 2.2."""
        return not self.at_least(2, 3)

    @cached_property
    def exception_prefix(self) -> str:
        """How an aborting exception's first stderr line starts."""
        return "" if self.java_rewrite else 'Exception in thread "main" '

    @cached_property
    def missing_file_is_file_not_found(self) -> bool:
        """Until 2.0 ``FileRecords.open`` read through a ``FileInputStream``
        (``java.io.FileNotFoundException: <path> (No such file or directory)``); 2.1 switched to
        ``FileChannel.open`` (``java.nio.file.NoSuchFileException: <path>``)."""
        return not self.at_least(2, 1)


KAFKA_VERSIONS = (
    "0.11", "1.0", "1.1", "2.0", "2.1", "2.2", "2.3", "2.4", "2.5", "2.6", "2.7", "2.8",
    "3.0", "3.1", "3.2", "3.3", "3.4", "3.5", "3.6", "3.7", "3.8", "3.9", "4.0", "4.1", "4.2",
    "trunk",
)  # fmt: skip

_LINES = {tuple(int(p) for p in v.split(".")) for v in KAFKA_VERSIONS if v != "trunk"}


def parse_kafka_version(text: str) -> KafkaShape:
    """Parse ``--kafka-version``: ``0.11`` ... ``4.2``, a patch release (``2.0.1``,
    ``0.11.0.2``), ``3.3+`` (same as ``3.3``) or ``trunk`` (the Java rewrite).

    >>> parse_kafka_version("3.3+").log_header_label
    'Log starting offset'
    >>> parse_kafka_version("0.11.0.1").version
    (0, 11, 1)
    """
    t = text.strip().lower().rstrip("+")
    if t in ("trunk", "java"):
        return KafkaShape("trunk", _TRUNK, java_rewrite=True)
    m = re.fullmatch(r"(\d+)\.(\d+)(?:\.(\d+)(?:\.(\d+))?)?", t)
    if not m:
        raise ValueError(
            f"unknown Kafka version {text!r} (expected one of {', '.join(KAFKA_VERSIONS)}, "
            "or a patch release such as 2.0.1)"
        )
    major, minor = int(m.group(1)), int(m.group(2))
    if (major, minor) not in _LINES:
        raise ValueError(
            f"unsupported Kafka version {text!r} (0.11 to 4.2, or trunk: DumpLogSegments "
            "before 0.11 knew no record batches)"
        )
    if major == 0:  # 0.11.0.x: the fourth number is the patch
        if m.group(3) not in (None, "0"):
            raise ValueError(f"unknown Kafka version {text!r} (0.11 releases are 0.11.0.x)")
        patch = int(m.group(4)) if m.group(4) is not None else LATEST_PATCH
    else:
        if m.group(4) is not None:
            raise ValueError(f"unknown Kafka version {text!r}")
        patch = int(m.group(3)) if m.group(3) is not None else LATEST_PATCH
    return KafkaShape(t if m.group(3) is not None else f"{major}.{minor}", (major, minor, patch))


DEFAULT_SHAPE = parse_kafka_version("4.1")

#: Releases grouped by identical ``kafka-dump-log.sh`` output: ``(releases, what changed,
#: source)``. Each row's text differs from the row before only as described.
SHAPES: tuple[tuple[str, str, str], ...] = (
    ("0.11.0.0-0.11.0.1",
     "batch line baseOffset..isTransactional position <TS> isvalid size magic compresscodec "
     "(NONE) crc; deep iteration prints record lines only (offset position <TS> isvalid keysize "
     "valuesize magic compresscodec producerId sequence isTransactional headerKeys); "
     "--print-data-log alone stays shallow; Starting offset:; offsets decoder offset::G:T:P; "
     "transaction log decoder transactionalId=X / partitions=Set(...); snapshot line "
     "producerId producerEpoch lastSequence lastOffset offsetDelta lastTimestamp "
     "coordinatorEpoch currentTxnFirstOffset",
     "DumpLogSegments.scala @0.11.0.0"),
    ("0.11.0.2-0.11.0.3", "record lines gain producerEpoch (KAFKA-6119)",
     "DumpLogSegments.scala @0.11.0.2"),
    ("1.0.0-1.0.1",
     "--help; group metadata as JSON ({\"metadata\":\"G\"}); snapshot line producerId "
     "producerEpoch coordinatorEpoch currentTxnFirstOffset cachedMetadata: Queue(...)",
     "DumpLogSegments.scala @1.0.0"),
    ("1.0.2", "snapshot line ... currentTxnFirstOffset: X firstSequence lastSequence lastOffset "
     "offsetDelta timestamp", "DumpLogSegments.scala @1.0.2"),
    ("1.1.0-1.1.1", "--print-data-log implies --deep-iteration", "DumpLogSegments.scala @1.1.0"),
    ("2.0.0", "batch line count:", "DumpLogSegments.scala @2.0.0"),
    ("2.0.1", "batch line isControl:", "DumpLogSegments.scala @2.0.1"),
    ("2.1.0-2.1.1", "missing file: NoSuchFileException (FileChannel.open)",
     "FileRecords.java @2.1.0"),
    ("2.2.0-2.2.2",
     "batch line before its record lines, isvalid moves to the end; record lines "
     "| offset <TS> keysize valuesize sequence headerKeys (legacy: crc isvalid); Scala 2.12 "
     "build (hash-map order); snapshot firstSequence wraps (decrementSequence)",
     "DumpLogSegments.scala @2.2.0, gradle.properties, ProducerStateManager.scala @2.2.0"),
    ("2.3.0-2.3.1",
     "index entries checked against the first batch's last offset (KAFKA-7487), zero tail "
     "stops before the check; Non-consecutive offsets in <path> (no colon)",
     "DumpLogSegments.scala @2.3.0"),
    ("2.4.0", "a tombstone prints its key", "DumpLogSegments.scala @2.4.0"),
    ("2.4.1",
     "offsets/transaction log decoders move to formatRecordKeyAndValue "
     "(offset_commit::group=..., transaction_metadata::transactionalId=..., <DELETE>); snapshot "
     "batch metadata only for lastOffset >= 0",
     "DumpLogSegments.scala @2.4.1, GroupMetadataManager.scala, TransactionLog.scala, "
     "ProducerStateManager.scala @2.4.1"),
    ("2.5.0-2.5.1", "transaction partitions=[t-0,t-1]", "TransactionLog.scala @2.5.0"),
    ("2.6.0-2.6.3", "Scala 2.13 build (hash-map/set order)", "gradle.properties @2.6.0"),
    ("2.7.0-2.7.2", "control types QUORUM_REASSIGNMENT(2), LEADER_CHANGE(3) (KIP-595)",
     "ControlRecordType.java @2.7.0"),
    ("2.8.0-2.8.2",
     "record-line regression: | offset isValid crc keySize valueSize <TS> baseOffset lastOffset "
     "baseSequence lastSequence producerEpoch partitionLeaderEpoch batchSize magic compressType "
     "position; --skip-record-metadata; --cluster-metadata-decoder (KRaft preview: frame version "
     "0 records only); <file> is empty.",
     "DumpLogSegments.scala @2.8.0"),
    ("3.0.0-3.0.2",
     "record lines | offset <TS> keySize valueSize; legacy isValid crc N}; compresscodec none; "
     "ControlRecordType LEADER_CHANGE(2) SNAPSHOT_HEADER(3) SNAPSHOT_FOOTER(4); metadata frame "
     "version 1", "DumpLogSegments.scala @3.0.0, AbstractApiMessageSerde.java @3.0.0"),
    ("3.1.0-3.1.2", "snapshot line lastTimestamp:", "DumpLogSegments.scala @3.1.0"),
    ("3.2.0-3.2.3", "batch line deleteHorizonMs:", "DumpLogSegments.scala @3.2.0"),
    ("3.3.0-3.4.1",
     "Log starting offset:; .checkpoint files; --max-bytes; SnapshotHeader/SnapshotFooter JSON",
     "DumpLogSegments.scala @3.3.0"),
    ("3.5.0-3.7.x",
     "snapshot currentTxnFirstOffset OptionalLong; unknown::version=V for unknown offsets and "
     "transaction keys", "DumpLogSegments.scala @3.5.0, GroupMetadataManager.scala @3.5.0"),
    ("3.8.0-3.8.1",
     "offsets decoder prints coordinator JSON; KRaftVersion/KRaftVoters JSON; kafka.serializer "
     "deprecation notices", "DumpLogSegments.scala @3.8.0"),
    ("3.9.0-3.9.1",
     "--remote-log-metadata-decoder (RemoteLogMetadataSerde objects' toString)",
     "DumpLogSegments.scala @3.9.0 (KAFKA-16228)"),
    ("4.0.0-4.0.1",
     "--share-group-state-decoder (value labelled \"type\"); kafka.serializer classes gone; "
     "remote log segment metadata prints txnIdxEmpty; "
     "transaction log still TransactionLog.formatRecordKeyAndValue",
     "DumpLogSegments.scala @4.0.0, RemoteLogSegmentMetadata.java (KAFKA-16780)"),
    ("4.1.0-4.1.1, 4.2.0-rc1",
     "transaction log as coordinator JSON; LeaderChange JSON; share group state value "
     "\"version\"; missing key names the specified decoder",
     "DumpLogSegments.scala @4.1.0 (4.2.0: help text only)"),
    ("trunk (2026)", "Java rewrite", "tools/.../DumpLogSegments.java (KAFKA-14579)"),
)  # fmt: skip
