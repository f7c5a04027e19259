"""``kafkalog metadata-quorum LOGDIR... describe --status|--replication``: Kafka 4.1's
``kafka-metadata-quorum.sh describe`` (``MetadataQuorumCommand``) over the metadata log dirs of
one or more KRaft nodes, offline, in place of ``--bootstrap-server``/``--bootstrap-controller``.

Each LOGDIR is a node's ``metadata.log.dir`` (the directory holding its ``meta.properties``
and ``__cluster_metadata-0``, or that partition directory), typically copied off the node.
Give every controller's to see the whole quorum; one node's files give that node's view.
What each value means offline is in :mod:`kafkalog.cluster.quorum` (timestamps are the
leader's memory and print -1; a follower whose log diverged is counted at the offset it would
truncate to, said on stderr).

``describe --status``::

    ClusterId:              q1w2e3r4t5y6u7i8o9p0
    LeaderId:               1
    LeaderEpoch:            1
    HighWatermark:          4929
    MaxFollowerLag:         0
    MaxFollowerLagTimeMs:   0
    CurrentVoters:          [{"id": 1}]
    CurrentObservers:       []

``describe --replication [--human-readable]``: ``NodeId DirectoryId LogEndOffset Lag
LastFetchTimestamp LastCaughtUpTimestamp Status``, the leader first, then the other voters,
then the observers (``ToolsUtils.prettyPrintTable``: cells padded and tab-terminated).

``--kafka-version`` prints what an older release's tool printed: before 3.9 (KIP-853) the
voters and observers are ids only (``CurrentVoters: [1,2,3]``) and the table has no
``DirectoryId`` column; before 3.6 there is no ``--human-readable``; the tool first shipped in
3.3 (KIP-836).

``--config`` names a controller's ``server.properties``: a static quorum's voters (no
``VotersRecord``) are then ``controller.quorum.voters`` with their endpoints, as Kafka prints
them; without it they come from a ``data_version`` 0 ``quorum-state`` (ids only).
``add-controller`` and ``remove-controller`` change the quorum through its leader and are
refused offline. ``--json`` prints the description as one JSON object instead.

Exit status: 0; 1 with the error on stderr (Kafka's texts for its own option errors); 2 for
usage errors.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from typing import IO, Any

from ..cluster.quorum import (
    QuorumDescription,
    Voter,
    describe_quorum,
    read_metadata_node,
    static_voters,
)
from ..errors import KafkaLogError
from ..usage import ArgumentParser, parse_args
from . import EXIT_ERROR, EXIT_OK, EXIT_USAGE, live_only_command
from .pretty_table import pretty_print_table

__all__ = ["main", "status_text", "replication_text", "parse_kafka_version",
           "REPLICATION_HEADERS"]

REPLICATION_HEADERS = ["NodeId", "DirectoryId", "LogEndOffset", "Lag", "LastFetchTimestamp",
                       "LastCaughtUpTimestamp", "Status"]
_WRITE_COMMANDS = ("add-controller", "remove-controller")
#: the release whose tool printed directory ids and endpoints (KIP-853), the first with
#: --human-readable, the first with the tool
DIRECTORY_IDS_SINCE, HUMAN_READABLE_SINCE, FIRST_RELEASE = (3, 9), (3, 6), (3, 3)
LATEST = (4, 1)


def parse_kafka_version(text: str) -> tuple[int, int]:
    """``X.Y`` or ``X.Y.Z`` as ``(X, Y)``; ValueError for anything else or a release before
    the tool.

    >>> parse_kafka_version("3.7.1"), parse_kafka_version("4.0")
    ((3, 7), (4, 0))
    """
    m = re.fullmatch(r"(\d+)\.(\d+)(?:\.\d+)?", text.strip())
    if m is None:
        raise ValueError(f"not a Kafka release: {text!r} (expected X.Y or X.Y.Z)")
    version = (int(m.group(1)), int(m.group(2)))
    if version < FIRST_RELEASE:
        raise ValueError(f"kafka-metadata-quorum.sh first shipped in Kafka 3.3 (KIP-836), not "
                         f"{text}")
    return version


def _replicas_text(replicas: Sequence[Voter], version: tuple[int, int]) -> str:
    if version < DIRECTORY_IDS_SINCE:   # Utils.mkString(ids, "[", "]", ",")
        return "[" + ",".join(str(v.id) for v in replicas) + "]"
    return "[" + ", ".join(v.kafka_string() for v in replicas) + "]"


def status_text(q: QuorumDescription, version: tuple[int, int] = LATEST) -> str:
    """``handleDescribeStatus``'s lines (in ``version``'s shape)."""
    return (f"ClusterId:              {q.cluster_id}\n"
            f"LeaderId:               {q.leader_id}\n"
            f"LeaderEpoch:            {q.leader_epoch}\n"
            f"HighWatermark:          {q.high_watermark}\n"
            f"MaxFollowerLag:         {q.max_follower_lag()}\n"
            f"MaxFollowerLagTimeMs:   {q.max_follower_lag_time_ms()}\n"
            f"CurrentVoters:          {_replicas_text(q.voters, version)}\n"
            f"CurrentObservers:       {_replicas_text(q.observers, version)}\n")


def replication_text(q: QuorumDescription, human_readable: bool = False,
                     version: tuple[int, int] = LATEST) -> str:
    """``handleDescribeReplication``'s table (in ``version``'s shape). Offline every timestamp
    is unknown, which Kafka prints as ``-1`` with or without ``--human-readable``."""
    del human_readable  # only known timestamps print as "N ms ago"; none is known offline
    rows = [[str(r.node_id), str(r.directory_id), str(r.log_end_offset), str(q.lag(r)),
             str(r.last_fetch_timestamp), str(r.last_caught_up_timestamp), r.status]
            for r in q.replicas]
    if version < DIRECTORY_IDS_SINCE:
        return pretty_print_table([h for h in REPLICATION_HEADERS if h != "DirectoryId"],
                                  [r[:1] + r[2:] for r in rows])
    return pretty_print_table(REPLICATION_HEADERS, rows)


def _json(q: QuorumDescription) -> dict[str, Any]:
    def voter(v: Voter) -> dict[str, Any]:
        return {"id": v.id, "directoryId": str(v.directory_id) if v.directory_id else None,
                "endpoints": v.endpoint_strings()}

    return {
        "clusterId": q.cluster_id, "leaderId": q.leader_id, "leaderEpoch": q.leader_epoch,
        "highWatermark": q.high_watermark, "maxFollowerLag": q.max_follower_lag(),
        "maxFollowerLagTimeMs": q.max_follower_lag_time_ms(),
        "voters": [voter(v) for v in q.voters], "votersSource": q.voters_source,
        "observers": [voter(v) for v in q.observers],
        "replicas": [{"nodeId": r.node_id, "directoryId": str(r.directory_id),
                      "logEndOffset": r.log_end_offset, "lag": q.lag(r), "status": r.status}
                     for r in q.replicas],
        "truncations": [{"node": n, "logEndOffset": frm, "truncatesTo": to}
                        for n, frm, to in q.truncations],
        "warnings": q.warnings,
    }


def build_parser() -> ArgumentParser:
    p = ArgumentParser(prog="kafkalog metadata-quorum",
                       description="This tool describes kraft metadata quorum status "
                       "(kafka-metadata-quorum.sh, offline over the nodes' metadata log dirs).")
    p.add_argument("log_dirs", nargs="+", metavar="LOGDIR",
                   help="a node's metadata log dir (holding meta.properties and "
                   "__cluster_metadata-0); one per node")
    p.add_argument("--config", metavar="PROPERTIES",
                   help="a controller's server.properties: the voters of a static quorum "
                   "(controller.quorum.voters) with their endpoints")
    p.add_argument("--kafka-version", metavar="X.Y[.Z]",
                   help="print what this release's kafka-metadata-quorum.sh printed "
                   "(default: 4.1; 3.3 to 3.8 print ids only)")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)
    d = sub.add_parser("describe", help="Describe the metadata quorum info")
    status = d.add_argument_group("Status")
    status.add_argument("--status", action="store_true",
                        help="A short summary of the quorum status and the other provides "
                        "detailed information about the status of replication.")
    repl = d.add_argument_group("Replication")
    repl.add_argument("--replication", action="store_true",
                      help="Detailed information about the status of replication")
    repl.add_argument("--human-readable", action="store_true", help="Human-readable output")
    d.add_argument("--json", action="store_true",
                   help="the description as one JSON object (kafkalog's addition)")
    for name in _WRITE_COMMANDS:
        s = sub.add_parser(name, help=f"{name} (through the quorum's leader: refused offline)")
        s.add_argument("rest", nargs=argparse.REMAINDER)
    return p


def _options_first(argv: list[str]) -> list[str]:
    """The options given among the LOGDIRs moved before them: argparse matches the LOGDIRs and
    the subcommand in one run of positionals, so ``d1 d2 --config f describe`` would otherwise
    take ``d2`` for the subcommand."""
    at = next((i for i, a in enumerate(argv) if a in ("describe", *_WRITE_COMMANDS)), len(argv))
    opts: list[str] = []
    dirs: list[str] = []
    i = 0
    while i < at:
        a = argv[i]
        if a.startswith("-") and a != "-":
            opts.append(a)
            if a in ("--config", "--kafka-version") and i + 1 < at:
                opts.append(argv[i + 1])
                i += 1
        else:
            dirs.append(a)
        i += 1
    return opts + dirs + argv[at:]


def main(argv: Sequence[str] | None = None, *, stdout: IO[str] | None = None,
         stderr: IO[str] | None = None) -> int:
    """Run ``kafkalog metadata-quorum``; returns the exit status.

    >>> import io
    >>> err = io.StringIO()
    >>> main(["/nonexistent", "describe"], stderr=err), err.getvalue().strip()
    (1, 'One of --status or --replication must be specified with describe sub-command')
    """
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    argv = list(sys.argv[2:] if argv is None else argv)
    write = live_only_command(argv, _WRITE_COMMANDS)
    if write is not None:
        err.write(f"{write} changes the voters through the quorum's leader "
                  "(kafka-metadata-quorum.sh against a running cluster); kafkalog reads the "
                  "metadata log dirs offline and never writes them\n")
        return EXIT_ERROR
    args, status = parse_args(build_parser(), _options_first(argv), err)
    if args is None:                     # a usage error, or --help
        return status
    try:
        version = LATEST if args.kafka_version is None else parse_kafka_version(
            args.kafka_version)
    except ValueError as e:
        err.write(f"kafkalog metadata-quorum: error: argument --kafka-version: {e}\n")
        return EXIT_USAGE
    if args.human_readable and version < HUMAN_READABLE_SINCE:
        # argparse4j's text for an argument the release does not know
        err.write("kafka-metadata-quorum: error: unrecognized arguments: '--human-readable'\n")
        return EXIT_ERROR
    # MetadataQuorumCommand's checks, in its order and with its texts
    if args.status and args.replication:
        err.write("Only one of --status or --replication should be specified with describe "
                  "sub-command\n")
        return EXIT_ERROR
    if not args.status and not args.replication and not args.json:
        err.write("One of --status or --replication must be specified with describe "
                  "sub-command\n")
        return EXIT_ERROR
    if args.status and args.human_readable:
        err.write("The option --human-readable is only supported along with --replication\n")
        return EXIT_ERROR
    try:
        configured = None
        if args.config is not None:
            from ..storage import storage_config

            cfg = storage_config.load(args.config)
            if cfg.static_voters:
                listener = cfg.controller_listener_names[0] \
                    if cfg.controller_listener_names else "CONTROLLER"
                configured = static_voters(cfg.static_voters, listener)
        nodes = [read_metadata_node(d) for d in args.log_dirs]
        q = describe_quorum(nodes, configured_voters=configured)
    except (KafkaLogError, OSError) as e:
        err.write(f"{e}\n")
        return EXIT_ERROR
    for w in q.warnings:
        err.write(f"WARNING: {w}\n")
    if args.json:
        out.write(json.dumps(_json(q), indent=2) + "\n")
    elif args.status:
        out.write(status_text(q, version))
    else:
        out.write(replication_text(q, args.human_readable, version))
    return EXIT_OK
