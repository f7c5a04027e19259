"""``kafkalog features LOGDIR describe|version-mapping|feature-dependencies``: Kafka 4.2's
``kafka-features.sh`` (``FeatureCommand``) over a KRaft node's files, offline.

``describe`` prints what ``DescribeFeatures`` answers for a node, one line per feature the node
supports, sorted by name::

    Feature: metadata.version\\tSupportedMinVersion: 3.3-IV3\\tSupportedMaxVersion: 4.2-IV1\\t
    FinalizedVersionLevel: 3.9-IV0\\tEpoch: 4928

- the node is ``--node-id`` (default: ``node.id`` in the log dir's ``meta.properties``), and
  its supported ranges are those it registered in the metadata (``RegisterBrokerRecord``, or
  ``RegisterControllerRecord`` for a controller): what its software advertises;
- the finalized levels are the metadata image's (:mod:`kafkalog.cluster.image`, from
  ``--metadata`` or the log dir's ``__cluster_metadata-0``), ``kraft.version`` from the KRaft
  version control record, 0 for a feature not finalized;
- the epoch is the offset the image ends at (``finalizedFeaturesEpoch``);
- ``metadata.version`` levels print as release names, ``UNKNOWN <level>`` below 3.3-IV3 (Kafka
  4.2's ``levelToString``).

``version-mapping`` and ``feature-dependencies`` are ``kafkalog storage``'s (the same texts as
Kafka's two tools). ``upgrade``, ``downgrade`` and ``disable`` change finalized levels through
the controller quorum; offline they are refused.

Exit status: 0; 1 with ``Error: <message>`` (no node registration, unreadable metadata); 2 for
usage errors.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from ..checkpoint import MetaProperties
from ..cluster.image import load_metadata
from ..cluster.image.metadata_loader import METADATA_PARTITION
from ..cluster.metadata_version import LEVELS, MINIMUM_LEVEL
from ..errors import KafkaLogError
from ..groups.java_order import java_sorted
from ..usage import ArgumentParser, parse_args
from . import live_only_command

__all__ = ["main", "describe_lines", "level_to_string"]

METADATA_VERSION = "metadata.version"
KRAFT_VERSION = "kraft.version"
_WRITE_COMMANDS = ("upgrade", "downgrade", "disable")


def level_to_string(feature: str, level: int) -> str:
    """``FeatureCommand.levelToString``: a ``metadata.version`` level as its release name
    (``UNKNOWN <level>`` for one Kafka 4.2 does not know), another feature's as the number.

    >>> level_to_string("metadata.version", 21), level_to_string("metadata.version", 1)
    ('3.9-IV0', 'UNKNOWN 1')
    """
    if feature == METADATA_VERSION:
        if MINIMUM_LEVEL <= level and level in LEVELS:
            return LEVELS[level]
        return f"UNKNOWN {level}"
    return str(level)


def describe_lines(metadata: str | Path, node_id: int) -> list[str]:
    """The lines ``kafka-features.sh describe --node-id node_id`` prints for the cluster whose
    metadata is at ``metadata``. Raises :class:`KafkaLogError` when the node is not
    registered."""
    loaded = load_metadata(metadata)
    image = loaded.image
    reg = image.brokers.get(node_id) or image.controllers.get(node_id)
    if reg is None:
        raise KafkaLogError(f"node {node_id} is not registered in the metadata (brokers "
                            f"{sorted(image.brokers)}, controllers {sorted(image.controllers)})",
                            path=str(metadata))
    finalized = dict(image.finalized_features)
    finalized[METADATA_VERSION] = image.metadata_version or 0
    finalized[KRAFT_VERSION] = loaded.kraft_version or 0
    epoch = image.provenance.last_contained_offset
    lines = []
    for name in java_sorted(reg.supported_features):
        r = reg.supported_features[name]
        lines.append(f"Feature: {name}\tSupportedMinVersion: {level_to_string(name, r.min)}\t"
                     f"SupportedMaxVersion: {level_to_string(name, r.max)}\t"
                     f"FinalizedVersionLevel: {level_to_string(name, finalized.get(name, 0))}\t"
                     f"Epoch: {epoch if epoch >= 0 else '-'}")
    return lines


def _parser() -> ArgumentParser:
    p = ArgumentParser(prog="kafkalog features", description="This tool manages feature flags "
                       "in Kafka (kafka-features.sh, offline over a KRaft node's log dir).")
    p.add_argument("log_dir", help="a KRaft node's log directory (the one holding "
                   f"{METADATA_PARTITION}, unless --metadata names it)")
    p.add_argument("--metadata", metavar="PATH",
                   help="the metadata: a __cluster_metadata-0 directory, a log dir holding one, "
                   "a segment or a snapshot (default: LOG_DIR)")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)
    d = sub.add_parser("describe", help="Describes the current active feature flags.")
    d.add_argument("--node-id", type=int, metavar="NODE_ID",
                   help="The node id to describe (default: node.id in LOG_DIR's "
                   "meta.properties).")
    vm = sub.add_parser("version-mapping", help="Look up the corresponding features for a given "
                        "metadata version. Using the command with no --release-version argument "
                        "will return the mapping for the latest stable metadata version")
    vm.add_argument("--release-version", metavar="RELEASE_VERSION")
    fd = sub.add_parser("feature-dependencies", help="Look up dependencies for a given feature "
                        "version.")
    fd.add_argument("--feature", action="append", required=True, metavar="FEATURE")
    for name in _WRITE_COMMANDS:
        s = sub.add_parser(name, help=f"{name.capitalize()} feature flags (needs the controller "
                           "quorum: refused offline).")
        s.add_argument("rest", nargs=argparse.REMAINDER)
    return p


def main(argv: Sequence[str] | None = None, *, stdout: IO[str] | None = None,
         stderr: IO[str] | None = None) -> int:
    """Run ``kafkalog features``; returns the exit status."""
    from ..storage.command import feature_dependencies, version_mapping

    out = stdout or sys.stdout
    err = stderr or sys.stderr
    argv = list(sys.argv[2:] if argv is None else argv)
    write = live_only_command(argv, _WRITE_COMMANDS)
    if write is not None:
        err.write(f"Error: {write} changes finalized feature levels through the controller "
                  "quorum (kafka-features.sh against a running cluster); kafkalog reads the "
                  "metadata log offline and never writes it\n")
        return 1
    args, status = parse_args(_parser(), argv, err)
    if args is None:                     # a usage error, or --help
        return status
    try:
        if args.command == "version-mapping":
            version_mapping(args.release_version, out)
            return 0
        if args.command == "feature-dependencies":
            feature_dependencies(args.feature, out)
            return 0
        log_dir = Path(args.log_dir)
        node_id = args.node_id
        if node_id is None:
            meta = log_dir / MetaProperties.FILE_NAME
            if not meta.is_file():
                err.write(f"Error: {meta}: no meta.properties: give --node-id\n")
                return 1
            node_id = MetaProperties.read(meta).node_id
        elif node_id < 0:
            err.write(f"Error: Invalid node id {node_id}: must be non-negative.\n")
            return 1
        for line in describe_lines(args.metadata or log_dir, node_id):
            out.write(line + "\n")
        return 0
    except (KafkaLogError, OSError) as e:
        err.write(f"Error: {e}\n")
        return 1
