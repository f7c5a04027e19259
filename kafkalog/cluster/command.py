"""``kafkalog cluster-state``: a cluster's metadata as znodes, and what-if elections.

::

    kafkalog cluster-state LOGDIR                     KRaft: replay __cluster_metadata-0
    kafkalog cluster-state --zookeeper HOST:PORT[/chroot]   ZooKeeper mode: read the znodes
        [--kafka-version V | --zk-version N|topic=N,broker=M,controller=K]   znode shapes
        [--at-offset N]                               KRaft: the state before offset N
        [--what-if "broker 2 down"] [--json]          elections over the last state
        [--min-insync-replicas N] [--unclean-leader-election]   static broker defaults
        [--compact]

Without ``--what-if`` it prints ``{znode path: value}`` as JSON (``--json`` is accepted and
changes nothing). With ``--what-if`` it prints which partitions change leader, go offline or
fall under ``min.insync.replicas`` (text, or the report as JSON with ``--json``).

Exit status: 0 when everything was read, 1 when some records, files or znodes could not be
read (listed on stderr) or there was nothing to read, 2 for usage errors (a scenario that does
not parse or names an unknown broker, topic or partition included).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable
from typing import Any

from ..errors import KafkaLogError
from .model import ClusterModel
from .znodes import ZnodeFormat, render

__all__ = ["build_parser", "main", "load_model"]

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


def build_parser() -> argparse.ArgumentParser:
    """The ``cluster-state`` argument parser."""
    p = argparse.ArgumentParser(
        prog="kafkalog cluster-state",
        description="Print a Kafka cluster's metadata (a KRaft log directory, or a "
        "ZooKeeper-mode cluster's ZooKeeper) in ZooKeeper's znode layout, as JSON; "
        "or what the controller would do if brokers went down or elections ran.")
    p.add_argument("logdir", nargs="?",
                   help="a KRaft broker or controller log directory (log.dirs entry)")
    p.add_argument("--zookeeper", metavar="HOST:PORT[/chroot]",
                   help="read a ZooKeeper-mode cluster from this ZooKeeper instead")
    shapes = p.add_mutually_exclusive_group()
    shapes.add_argument("--kafka-version", metavar="V",
                        help="write the znodes as Kafka V did (0.8 .. 3.9; default 3.9)")
    shapes.add_argument("--zk-version", metavar="N",
                        help="TopicZNode version 1, 2 or 3 (with the shapes of the last Kafka "
                        "that wrote it), or topic=N,broker=M,controller=K[,feature=F]")
    p.add_argument("--at-offset", type=int, metavar="N",
                   help="KRaft: replay the metadata log only below offset N")
    p.add_argument("--what-if", metavar="SCENARIO",
                   help="e.g. 'broker 2 down', 'controlled shutdown of broker 2', "
                   "'broker 2 up', 'preferred leader election', 'unclean leader election "
                   "for orders-0'; steps separated by ';'")
    p.add_argument("--json", action="store_true", help="print the what-if report as JSON")
    p.add_argument("--min-insync-replicas", type=int, default=1, metavar="N",
                   help="the brokers' static min.insync.replicas (default 1)")
    p.add_argument("--unclean-leader-election", action="store_true",
                   help="the brokers' static unclean.leader.election.enable is true")
    p.add_argument("--timeout", type=float, default=10.0, metavar="S",
                   help="ZooKeeper connection timeout in seconds (default 10)")
    p.add_argument("--compact", action="store_true", help="one-line JSON")
    return p


def load_model(logdir: str | None, zookeeper: str | None, *, at_offset: int | None = None,
               timeout_s: float = 10.0) -> ClusterModel:
    """The model from a KRaft log directory or a ZooKeeper connect string (exactly one)."""
    if zookeeper is not None and logdir is None:
        from .zookeeper import read_cluster

        return read_cluster(zookeeper, timeout_s=timeout_s)
    if logdir is None or zookeeper is not None:
        raise ValueError("give a log directory or --zookeeper, not both or neither")
    from .kraft import read_log_dir

    return read_log_dir(logdir, at_offset=at_offset)


def _dump(obj: Any, compact: bool) -> str:
    if compact:
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    return json.dumps(obj, indent=2, ensure_ascii=False)


def main(argv: Iterable[str] | None = None) -> int:
    """Run ``kafkalog cluster-state``; returns the exit status (see the module docstring)."""
    parser = build_parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else None)
    except SystemExit as e:
        return int(e.code or 0) if isinstance(e.code, int) else EXIT_USAGE
    err = sys.stderr
    if (args.logdir is None) == (args.zookeeper is None):
        parser.print_usage(err)
        print("kafkalog cluster-state: error: give a log directory or --zookeeper "
              "HOST:PORT[/chroot] (one of them)", file=err)
        return EXIT_USAGE
    if args.at_offset is not None and args.zookeeper is not None:
        print("kafkalog cluster-state: error: --at-offset applies to a KRaft log directory",
              file=err)
        return EXIT_USAGE
    try:
        if args.zk_version is not None:
            fmt = ZnodeFormat.for_zk_version(args.zk_version)
        else:
            fmt = ZnodeFormat.for_kafka_version(args.kafka_version or "3.9")
    except ValueError as e:
        print(f"kafkalog cluster-state: error: {e}", file=err)
        return EXIT_USAGE
    try:
        model = load_model(args.logdir, args.zookeeper, at_offset=args.at_offset,
                           timeout_s=args.timeout)
    except (FileNotFoundError, NotADirectoryError, PermissionError, KafkaLogError) as e:
        print(f"kafkalog cluster-state: {e}", file=err)
        return EXIT_FINDINGS

    if args.what_if is not None:
        from .what_if import what_if

        try:
            report = what_if(model, args.what_if,
                             min_insync_default=args.min_insync_replicas,
                             unclean_default=args.unclean_leader_election,
                             leader_recovery_supported=fmt.leader_recovery_state)
        except ValueError as e:
            print(f"kafkalog cluster-state: error: {e}", file=err)
            return EXIT_USAGE
        out = _dump(report.to_dict(), args.compact) if args.json else report.format_text()
    else:
        out = _dump(render(model, fmt), args.compact)
    try:
        print(out)
        sys.stdout.flush()
    except BrokenPipeError:                     # `kafkalog cluster-state ... | head`
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the interpreter's flush
        except OSError:
            pass
    for n in model.notes:
        print(f"note: {n}", file=err)
    for w in model.warnings:
        print(f"warning: {w}", file=err)
    return EXIT_FINDINGS if model.warnings else EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
