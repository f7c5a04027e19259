"""The ``kafkalog`` console script: ``main(argv) -> int``.

Subcommands
-----------
``dump-segments``
    Kafka's ``kafka-dump-log.sh`` (DumpLogSegments), same flags, same text on stdout and
    stderr (``--kafka-version`` picks the 2.x/3.x/4.x/trunk shape), plus ``--format json``.
``verify``
    Read-only checks of partition directories or a whole ``log.dirs`` tree.
``repair``
    Write a repaired copy of a partition directory (``--in-place`` to repair where it is).
``groups``
    Consumer groups of a ``log.dirs`` tree, offline (``kafkalog.groups.command``).
``topics``, ``configs``, ``acls``, ``delete-records``, ``transactions``, ``get-offsets``,
``log-dirs``
    Kafka's ``kafka-topics.sh``, ``kafka-configs.sh --entity-type topics|users|clients|ips``,
    ``kafka-acls.sh``, ``kafka-delete-records.sh``, ``kafka-transactions.sh``,
    ``kafka-get-offsets.sh`` and ``kafka-log-dirs.sh --describe`` on log directories, offline
    (``kafkalog.admin``).
``tiered``
    Remote (tiered storage) segments from a tree's ``__remote_log_metadata`` partitions,
    offline (``kafkalog.tiered.command``).
``tiered-restore``
    Remote segments as Aiven's tiered storage plugin stores them (``.rsm-manifest``, ``.log``,
    ``.indexes`` objects) written back as partition directories
    (``kafkalog.tiered.aiven_rsm.command``).
``serve``
    Serve a log directory to Kafka clients (``kafkalog.server.command``).
``storage``
    Kafka's ``kafka-storage.sh``: format a KRaft node's log directories or inspect them
    (``kafkalog.storage.command``).
``console-consumer``, ``console-producer``
    Kafka's ``kafka-console-consumer.sh`` and ``kafka-console-producer.sh`` over log
    directories, offline (``kafkalog.console``).
``metadata-shell``
    Kafka's ``kafka-metadata-shell.sh``: browse a KRaft metadata snapshot or log as a file
    tree, interactively or one command at a time (``kafkalog.metadata_shell``).
``compare-replicas``
    A partition's replicas copied off several brokers side by side: records compared, and
    Kafka's follower truncation replayed under each leader (``kafkalog.replication``).
``mirror``
    Topics of a live Kafka endpoint copied batch for batch into a log dir, as a follower
    replica copies its leader (``kafkalog.mirror``).
``demo``
    The project's demo (``kafkalog.tools.demo``).

Exit status: ``dump-segments`` exits as Kafka's tool does: 1 where Kafka's tool throws (bad
arguments, an unreadable or corrupt file: the run stops there, as Kafka's does), else 0, index
mismatches and invalid batches included (they are printed, as Kafka prints them). ``verify``: 0
without errors, 1 with errors, 2 for usage errors.

Example
-------
>>> main(["dump-segments"])  # doctest: +SKIP
1
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import IO, Any

from .tools import dump as d
from .tools.render import JsonRenderer, TextRenderer
from .usage import ArgumentParser, UsageError, java_split, replace_unencodable

__all__ = ["main", "main_entry", "build_parser", "run_dump"]

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2




def _int_arg(text: str) -> int:
    # joptsimple's Integer conversion: a Java int, decimal
    try:
        v = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"Cannot parse argument '{text}' of type java.lang.Integer"
        ) from None
    if not -(1 << 31) <= v < (1 << 31):
        raise argparse.ArgumentTypeError(
            f"Cannot parse argument '{text}' of type java.lang.Integer"
        )
    return v


def _add_dump_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--files",
        required=True,
        metavar="file1, file2, ...",
        help="REQUIRED: The comma separated list of data and index log files to be dumped.",
    )
    p.add_argument(
        "--print-data-log",
        action="store_true",
        help="If set, printing the messages content when dumping data logs. "
        "Automatically set if any decoder option is specified.",
    )
    p.add_argument(
        "--deep-iteration",
        action="store_true",
        help="If set, uses deep instead of shallow iteration. Automatically set if "
        "print-data-log is enabled.",
    )
    p.add_argument(
        "--verify-index-only",
        action="store_true",
        help="If set, just verify the index log without printing its content.",
    )
    p.add_argument(
        "--index-sanity-check",
        action="store_true",
        help="If set, just checks the index sanity without printing its content. This is "
        "the same check that is executed on broker startup to determine if an index "
        "needs rebuilding or not.",
    )
    p.add_argument(
        "--max-message-size",
        type=_int_arg,
        default=d.DEFAULT_MAX_MESSAGE_SIZE,
        metavar="size",
        help="Size of largest message. (default: 5242880)",
    )
    p.add_argument(
        "--max-bytes",
        type=_int_arg,
        default=None,  # None: not given (2147483647); a release before 3.3 rejects the flag
        metavar="size",
        help="Limit the amount of total batches read in bytes avoiding reading the whole "
        ".log file(s). (default: 2147483647)",
    )
    p.add_argument(
        "--skip-record-metadata",
        action="store_true",
        help="Whether to skip printing metadata for each record.",
    )
    for which in ("key", "value"):
        p.add_argument(
            f"--{which}-decoder",
            f"--{which}-decoder-class",
            dest=f"{which}_decoder",
            nargs="?",
            const="string",
            default=None,
            metavar="DECODER",
            help=f"Decoder for record {which}s: string (default), hex, base64, json, int, "
            "long, or a Kafka decoder class name (org.apache.kafka.tools.api."
            "StringDecoder, kafka.serializer.StringDecoder, ...). Implies "
            "--print-data-log.",
        )
    p.add_argument(
        "--offsets-decoder",
        action="store_true",
        help="If set, log data will be parsed as offset data from the __consumer_offsets topic.",
    )
    p.add_argument(
        "--transaction-log-decoder",
        action="store_true",
        help="If set, log data will be parsed as transaction metadata from the "
        "__transaction_state topic.",
    )
    p.add_argument(
        "--cluster-metadata-decoder",
        action="store_true",
        help="If set, log data will be parsed as cluster metadata records.",
    )
    p.add_argument(
        "--remote-log-metadata-decoder",
        action="store_true",
        help="If set, log data will be parsed as TopicBasedRemoteLogMetadataManager (RLMM) "
        "metadata records. Instead, the value-decoder-class option can be used if a custom RLMM "
        "implementation is configured.",
    )
    p.add_argument(
        "--share-group-state-decoder",
        action="store_true",
        help="If set, log data will be parsed as share group state data from the "
        "__share_group_state topic.",
    )
    p.add_argument(
        "--kafka-version",
        default=None,
        metavar="VERSION",
        help="Imitate this Kafka release's output: 0.11 ... 4.2, a patch release (2.0.1), or "
        "trunk (the Java rewrite). Default: the newest release line's output (4.1; 4.2 prints "
        "the same).",
    )
    p.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text: Kafka's output; json: one JSON object per line (beyond Kafka).",
    )
    p.add_argument(
        "--no-progress",
        action="store_true",
        help="Never show the progress bar (it is shown only when stderr is a terminal).",
    )
    from . import __version__

    p.add_argument("--version", action="version", version=f"kafkalog {__version__}")


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every subcommand."""
    parser = ArgumentParser(prog="kafkalog", description="Kafka on-disk log tools.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=ArgumentParser)
    dp = sub.add_parser(
        "dump-segments",
        help="Kafka's kafka-dump-log.sh: dump .log/.index/.timeindex/.snapshot/.txnindex files.",
        description="This tool helps to parse a log file and dump its contents to the console, "
        "useful for debugging a seemingly corrupt log segment.",
    )
    _add_dump_arguments(dp)
    from .tools import repair, verify

    vp = sub.add_parser("verify", help="Read-only consistency checks of partition directories.")
    verify.add_arguments(vp)
    rp = sub.add_parser("repair", help="Write a repaired copy of a partition directory.")
    repair.add_arguments(rp)
    demo = sub.add_parser("demo", help="Run the kafkalog demo.", add_help=False)
    demo.add_argument("demo_args", nargs=argparse.REMAINDER)
    cs = sub.add_parser(
        "cluster-state",
        help="A cluster's metadata (KRaft log dir or --zookeeper) as znodes; --what-if elections.",
        add_help=False,
    )
    cs.add_argument("cluster_state_args", nargs=argparse.REMAINDER)
    gp = sub.add_parser(
        "groups",
        help="Consumer, share and streams groups of a log.dirs tree "
             "(kafka-consumer-groups.sh, kafka-share-groups.sh, kafka-streams-groups.sh; "
             "offline).",
        add_help=False,
    )
    gp.add_argument("groups_args", nargs=argparse.REMAINDER)
    for name, help_text in _ADMIN_COMMANDS.items():
        ap = sub.add_parser(name, help=help_text, add_help=False)
        ap.add_argument(f"{name.replace('-', '_')}_args", nargs=argparse.REMAINDER)
    tp = sub.add_parser(
        "tiered",
        help="Remote (tiered) segments from the __remote_log_metadata partitions, offline.",
        add_help=False,
    )
    tp.add_argument("tiered_args", nargs=argparse.REMAINDER)
    tr = sub.add_parser(
        "tiered-restore",
        help="Remote segments of Aiven's tiered storage (bucket objects) back into partition "
             "directories.",
        add_help=False,
    )
    tr.add_argument("tiered_restore_args", nargs=argparse.REMAINDER)
    sv = sub.add_parser("serve", help="Serve a log directory over the Kafka protocol.",
                        add_help=False)
    sv.add_argument("serve_args", nargs=argparse.REMAINDER)
    st = sub.add_parser("storage", help="Format or inspect a KRaft node's log directories "
                                        "(kafka-storage.sh).", add_help=False)
    st.add_argument("storage_args", nargs=argparse.REMAINDER)
    cc = sub.add_parser("console-consumer", help="Print the records of topics of log dirs "
                        "(kafka-console-consumer.sh, offline).", add_help=False)
    cc.add_argument("console_consumer_args", nargs=argparse.REMAINDER)
    cp = sub.add_parser("console-producer", help="Append lines of stdin as records to a topic "
                        "of a log dir (kafka-console-producer.sh, offline).", add_help=False)
    cp.add_argument("console_producer_args", nargs=argparse.REMAINDER)
    ms = sub.add_parser("metadata-shell", help="Browse a KRaft metadata snapshot or log as a "
                        "file tree (kafka-metadata-shell.sh).", add_help=False)
    ms.add_argument("metadata_shell_args", nargs=argparse.REMAINDER)
    cr = sub.add_parser("compare-replicas", help="Compare a partition's replicas copied off "
                        "several brokers, and what Kafka's followers would truncate and lose "
                        "under each leader.", add_help=False)
    cr.add_argument("compare_replicas_args", nargs=argparse.REMAINDER)
    mi = sub.add_parser("mirror", help="Copy topics of a live Kafka endpoint into a log dir "
                        "batch for batch, as a follower replica does.", add_help=False)
    mi.add_argument("mirror_args", nargs=argparse.REMAINDER)
    return parser


#: the offline admin commands (kafkalog.admin): subcommand -> help
_ADMIN_COMMANDS = {
    "topics": "Create, delete, describe, or change topics of a log dir (kafka-topics.sh, "
              "offline).",
    "configs": "Describe or alter topic configs, SCRAM users and client quotas of a log dir "
               "(kafka-configs.sh, offline).",
    "acls": "Add, remove or list ACLs of a log dir (kafka-acls.sh, offline).",
    "delete-records": "Delete records below offsets (kafka-delete-records.sh, offline).",
    "transactions": "List, describe, find hanging and abort transactions of a log dir "
                    "(kafka-transactions.sh, offline).",
    "get-offsets": "Offsets of partitions by time, earliest, latest or tiered "
                   "(kafka-get-offsets.sh, offline).",
    "log-dirs": "Sizes and offset lags of the partitions of a broker's log dirs "
                "(kafka-log-dirs.sh --describe, offline).",
    "features": "Describe a KRaft node's features from its metadata log (kafka-features.sh, "
                "offline).",
    "metadata-quorum": "Describe a KRaft metadata quorum from its nodes' metadata log dirs "
                       "(kafka-metadata-quorum.sh describe, offline).",
}


class _KafkaAbort(Exception):
    """Kafka's tool would throw before reading any file (message: ``class: text``)."""


def _options_from_args(a: argparse.Namespace, out: IO[str]) -> d.DumpOptions:
    try:
        version = a.kafka_version
        shape = d.DEFAULT_SHAPE if version is None else d.parse_kafka_version(version)
    except ValueError as e:
        raise UsageError(f"kafkalog dump-segments: error: {e}") from None
    used = [
        flag
        for flag, given in (
            ("skip-record-metadata", a.skip_record_metadata),
            ("cluster-metadata-decoder", a.cluster_metadata_decoder),
            ("max-bytes", a.max_bytes is not None),
            ("remote-log-metadata-decoder", a.remote_log_metadata_decoder),
            ("share-group-state-decoder", a.share_group_state_decoder),
        )
        if given
    ]
    unknown = shape.unrecognized_option(used)
    if unknown:
        raise _KafkaAbort(unknown)
    structured = [
        k
        for k, flag in (
            ("offsets", a.offsets_decoder),
            ("transaction_log", a.transaction_log_decoder),
            ("cluster_metadata", a.cluster_metadata_decoder),
            ("remote_log_metadata", a.remote_log_metadata_decoder),
            ("share_group_state", a.share_group_state_decoder),
        )
        if flag
    ]
    notices: list[str] = []
    parser_error = None
    if structured:
        parser: d.MessageParser = d.StructuredParser(structured[0], shape=shape)
    else:
        names = []
        # Kafka builds the value decoder first, then the key decoder (notice order follows)
        for given in (a.value_decoder, a.key_decoder):
            try:
                name, deprecated_for = d.decoder_for_class(given or "string")
            except ValueError as e:
                raise UsageError(f"kafkalog dump-segments: error: {e}") from None
            if given and parser_error is None:
                parser_error = shape.missing_decoder_class(given)
            if deprecated_for and shape.deprecated_decoder_notice:
                notices.append(f"{given} is deprecated. Please use {deprecated_for} instead")
            names.append(name)
        if parser_error and shape.decoder_error_before_files:
            raise _KafkaAbort(parser_error)
        parser = d.DecoderParser(
            key_decoder=names[1],
            value_decoder=names[0],
            tombstone_hides_key=shape.tombstone_hides_key,
        )
    print_data = bool(
        a.print_data_log or structured or a.key_decoder is not None or a.value_decoder is not None
    )
    return d.DumpOptions(
        print_data_log=print_data,
        deep_iteration=bool(a.deep_iteration or (print_data and shape.print_implies_deep)),
        verify_index_only=a.verify_index_only,
        index_sanity_check=a.index_sanity_check,
        max_message_size=a.max_message_size,
        max_bytes=d.INT_MAX if a.max_bytes is None else a.max_bytes,
        skip_record_metadata=a.skip_record_metadata,
        parser=parser,
        shape=shape,
        decoder_notices=tuple(notices),
        keep_raw=a.format == "json",
        parser_error=parser_error,
    )


class _Progress:
    """A rich progress bar over the bytes of the current ``.log`` (stderr, TTY only)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._progress: Any = None
        self._task: Any = None

    def __enter__(self) -> _Progress:
        if self.enabled:
            from rich.console import Console
            from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn

            self._progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                DownloadColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self._progress.__enter__()
        return self

    def start(self, path: str) -> None:
        if self._progress is None:
            return
        if self._task is not None:
            self._progress.remove_task(self._task)
            self._task = None
        try:
            total = os.path.getsize(path)
        except OSError:
            return
        self._task = self._progress.add_task(os.path.basename(path), total=total)

    def advance_to(self, position: int) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, completed=position)

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.__exit__(*exc)


def run_dump(
    opts: d.DumpOptions,
    files: Sequence[str],
    *,
    fmt: str = "text",
    stdout: IO[str] | None = None,
    stderr: IO[str] | None = None,
    progress: bool = False,
) -> int:
    """Dump ``files`` in order, write Kafka's lines, then the summaries; return the exit status.

    Kafka's status: 1 where its tool throws (a :class:`~kafkalog.tools.dump.FileError` that
    aborts), else 0. In text mode the run stops there, as Kafka's does (no further files, no
    summaries); ``--format json`` (beyond Kafka) reads on and reports every file.
    """
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    renderer: TextRenderer | JsonRenderer = (
        TextRenderer(opts.shape, opts) if fmt == "text" else JsonRenderer()
    )
    findings: list = []
    status = EXIT_OK
    streams = {"out": stdout, "err": stderr}
    with _Progress(progress) as bar:
        for path in files:
            aborted = False
            for item in d.dump_file(path, opts, findings):
                if isinstance(item, d.FileStart):
                    if item.kind in ("log", "checkpoint"):
                        bar.start(path)
                elif isinstance(item, d.BatchItem):
                    bar.advance_to(item.position + item.size)
                elif isinstance(item, d.FileError) and item.aborts:
                    status = EXIT_FINDINGS
                    aborted = fmt == "text"
                for stream, text in renderer.render(item):
                    streams[stream].write(text + "\n")
            if aborted:
                stdout.flush()
                stderr.flush()
                return status
        stdout.flush()
        for stream, text in renderer.summary(findings):
            streams[stream].write(text + "\n")
    stdout.flush()
    stderr.flush()
    return status


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``kafkalog`` command line; returns the exit status (never calls ``sys.exit``)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["demo"]:
        # everything after "demo" belongs to the demo, flags included
        try:
            from .tools import demo
        except ImportError as e:
            sys.stderr.write(f"kafkalog demo: not available ({e})\n")
            return EXIT_FINDINGS
        try:
            return int(demo.main(argv[1:]) or 0)
        except SystemExit as e:  # the demo's own argparse (--help, usage errors)
            return e.code if isinstance(e.code, int) else EXIT_USAGE
    if argv[:1] == ["cluster-state"]:
        from .cluster import command

        return command.main(argv[1:])
    if argv[:1] == ["tiered"]:
        from .tiered import command as tiered_command

        return tiered_command.main(argv[1:])
    if argv[:1] == ["tiered-restore"]:
        from .tiered.aiven_rsm import command as restore_command

        return restore_command.main(argv[1:])
    if argv[:1] == ["groups"]:
        from .groups import command as groups_command

        return groups_command.main(argv[1:])
    if argv[:1] == ["topics"]:
        from .admin import topics_command

        return topics_command.main(argv[1:])
    if argv[:1] == ["configs"]:
        from .admin import configs_command

        return configs_command.main(argv[1:])
    if argv[:1] == ["acls"]:
        from .admin import acls_command

        return acls_command.main(argv[1:])
    if argv[:1] == ["delete-records"]:
        from .admin import delete_records_command

        return delete_records_command.main(argv[1:])
    if argv[:1] == ["features"]:
        from .admin import features_command

        return features_command.main(argv[1:])
    if argv[:1] == ["metadata-quorum"]:
        from .admin import metadata_quorum_command

        return metadata_quorum_command.main(argv[1:])
    if argv[:1] == ["transactions"]:
        from .admin import transactions_command

        return transactions_command.main(argv[1:])
    if argv[:1] == ["get-offsets"]:
        from .admin import get_offsets_command

        return get_offsets_command.main(argv[1:])
    if argv[:1] == ["log-dirs"]:
        from .admin import log_dirs_command

        return log_dirs_command.main(argv[1:])
    if argv[:1] == ["serve"]:
        from .server import command

        return command.main(argv[1:])
    if argv[:1] == ["storage"]:
        from .storage import command as storage_command

        return storage_command.main(argv[1:])
    if argv[:1] == ["console-consumer"]:
        from .console import console_consumer

        return console_consumer.main(argv[1:])
    if argv[:1] == ["console-producer"]:
        from .console import console_producer

        return console_producer.main(argv[1:])
    if argv[:1] == ["metadata-shell"]:
        from .metadata_shell import metadata_shell

        return metadata_shell.main(argv[1:])
    if argv[:1] == ["compare-replicas"]:
        from .replication import command as replication_command

        return replication_command.main(argv[1:])
    if argv[:1] == ["mirror"]:
        from .mirror import command as mirror_command

        return mirror_command.main(argv[1:])
    parser = build_parser()
    # Kafka's tools exit 1 on bad arguments (CommandLineUtils.printUsageAndExit)
    usage_status = EXIT_FINDINGS if argv[:1] == ["dump-segments"] else EXIT_USAGE
    try:
        args = parser.parse_args(argv)
    except UsageError as e:
        sys.stderr.write(str(e) + "\n")
        return usage_status
    except SystemExit as e:  # --help
        return int(e.code or 0) if isinstance(e.code, int) else EXIT_USAGE
    if args.command is None:
        parser.print_usage(sys.stderr)
        sys.stderr.write(
            "kafkalog: error: a command is required "
            "(dump-segments, verify, repair, cluster-state, groups, topics, configs, acls, "
            "delete-records, transactions, get-offsets, log-dirs, features, metadata-quorum, "
            "tiered, "
            "tiered-restore, serve, storage, console-consumer, console-producer, "
            "metadata-shell, compare-replicas, mirror, demo)\n"
        )
        return EXIT_USAGE
    try:
        if args.command == "dump-segments":
            replace_unencodable(sys.stdout)
            replace_unencodable(sys.stderr)
            try:
                opts = _options_from_args(args, sys.stdout)
            except _KafkaAbort as e:
                prefix = (d.DEFAULT_SHAPE if args.kafka_version is None
                          else d.parse_kafka_version(args.kafka_version)).exception_prefix
                sys.stderr.write(f"{prefix}{e}\n")
                return EXIT_FINDINGS
            files = java_split(args.files)
            show = (not args.no_progress) and _isatty(sys.stderr)
            return run_dump(opts, files, fmt=args.format, progress=show)
        if args.command == "verify":
            from .tools import verify

            return verify.run(args)
        if args.command == "repair":
            from .tools import repair

            return repair.run(args)
    except UsageError as e:
        sys.stderr.write(str(e) + "\n")
        return usage_status
    except BrokenPipeError:  # `kafkalog dump-segments ... | head`
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the interpreter's flush
        except OSError:
            pass
        return EXIT_OK
    return EXIT_USAGE



def _isatty(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def main_entry() -> None:
    """Console-script entry point (``kafkalog = "kafkalog.cli:main_entry"``)."""
    sys.exit(main())
