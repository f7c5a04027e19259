"""``kafkalog groups``: Kafka's ``kafka-consumer-groups.sh`` over a ``log.dirs`` tree, offline.

Read-only unless a write is asked (``reset-offsets --execute``, ``delete``). The tree's
``__consumer_offsets`` is replayed by :class:`~kafkalog.groups.GroupMetadataManager`; log end
offsets come from the partitions present in the tree. KIP-932 share groups come from
``__share_group_state`` and the ``ShareGroup*`` records of ``__consumer_offsets``
(:mod:`kafkalog.groups.share.offline`) and are listed and described as Kafka's
``kafka-share-groups.sh`` (``ShareGroupCommand``) does.

=========================================================  ======================================
``kafkalog groups list LOGDIR``                            every group, share groups too
``... list LOGDIR --state [S,...] --type [T,...]``         Kafka's GROUP TYPE STATE table, only
                                                           the groups in those states/of those
                                                           types (case-insensitive; no value:
                                                           all); either option alone gives its
                                                           column only; ``--type share``: the
                                                           share groups
``kafkalog groups describe LOGDIR --group G``              ``--offsets`` (the default): Kafka's
                                                           GROUP TOPIC PARTITION CURRENT-OFFSET
                                                           LOG-END-OFFSET LAG CONSUMER-ID HOST
                                                           CLIENT-ID
``... describe LOGDIR --group G --members [--verbose]``    GROUP CONSUMER-ID [GROUP-INSTANCE-ID]
                                                           HOST CLIENT-ID #PARTITIONS
                                                           [ASSIGNMENT]
``... describe LOGDIR --group G --state``                  GROUP COORDINATOR (ID)
                                                           ASSIGNMENT-STRATEGY STATE #MEMBERS
``... describe LOGDIR --group SHARE [--verbose]``          a share group, ShareGroupCommand's
                                                           GROUP TOPIC PARTITION
                                                           [LEADER-EPOCH] START-OFFSET LAG
``... describe LOGDIR --group SHARE --state [--verbose]``  GROUP COORDINATOR (ID) STATE
                                                           [GROUP-EPOCH ASSIGNMENT-EPOCH]
                                                           #MEMBERS
``... describe LOGDIR --group SHARE --members``            GROUP CONSUMER-ID HOST CLIENT-ID
``[--verbose]``                                            #PARTITIONS [MEMBER-EPOCH]
                                                           ASSIGNMENT; an Empty group: "Share
                                                           group 'G' has no active members."
                                                           (stderr; no table)
``kafkalog groups reset-offsets LOGDIR --group G``         ``--topic T[:P,P]`` or
                                                           ``--all-topics`` and one of
                                                           ``--to-earliest``, ``--to-latest``,
                                                           ``--to-offset N``, ``--to-datetime
                                                           ISO``, ``--shift-by N``,
                                                           ``--by-duration D``; a dry run unless
                                                           ``--execute``
``... reset-offsets LOGDIR --group SHARE``                 a share group's start offsets as
                                                           ShareGroupCommand resets them:
                                                           ``--to-earliest``, ``--to-latest`` or
                                                           ``--to-datetime`` only
``kafkalog groups delete LOGDIR --group G``                tombstones for the group and its
                                                           offsets (a share group: its state)
``kafkalog groups plan --strategy S --members ...``        what an assignor would do
``--json``                                                 JSON instead of Kafka's text,
                                                           everywhere
=========================================================  ======================================

Texts follow ``ConsumerGroupCommand`` (tools, Kafka 3.9): column widths, ``-`` for a missing
value, "Consumer group 'G' has no active members." / "Warning: Consumer group 'G' is
rebalancing." on stderr. Where a committed partition is not in the tree, LOG-END-OFFSET and LAG
are ``-`` and a note on stderr says so. Offline there is no live membership: a classic group
whose last metadata lists members is *Stable* as a restarted broker would load it (a KIP-848
consumer group is *Empty*, *Assigning*, *Reconciling* or *Stable* as its records left it), and
Kafka refuses to reset or delete it; ``--force`` does it anyway (for a tree whose consumers are
known to be gone).

``reset-offsets`` follows ``prepareOffsetsToReset``/``getPartitionsToReset``: ``--all-topics``
is the partitions the group has committed offsets for (not every partition of their topics);
``--shift-by`` of a partition without a committed offset is Kafka's usage error ("Cannot shift
offset for partition T-P since there is no current committed offset") and nothing is written;
with ``--to-datetime``/``--by-duration`` a partition with no record at or after the time gets
the log end offset after Kafka's "Warn: Partition P from topic T is empty. Falling back to
latest known offset." (stderr here, as this command's other notes; Kafka's stdout).

``describe`` takes at most one of ``--members``, ``--offsets``, ``--state`` (Kafka's option
check and text); ``--verbose`` goes with ``--members`` only (Kafka accepts it anywhere and ignores
it but there). With ``--members``, a classic group's members show their decoded assignment, a
consumer group's members their current assigned partitions (topic ids named through the group's
subscription metadata, then the tree's topics; an unknown id is shown as is). ASSIGNMENT is
Kafka 3.8/3.9's: per topic the partition numbers sorted as strings in parentheses, these groups
sorted and joined by ", " - without the topic names (Kafka's Java rewrite dropped them; the
JSON has them). Members come in the order of the group's records (Kafka: the coordinator's).

``--state``: offline there is no coordinator broker, so COORDINATOR (ID) holds the group's
``__consumer_offsets-N`` partition instead of Kafka's ``host:port  (id)``, in a column as wide
as Kafka makes it (at least 25; Kafka also pads GROUP to that width). ASSIGNMENT-STRATEGY is a
classic group's protocol (empty for an empty group, as Kafka prints it) or a consumer group's
server assignor.

``list --type``: ``Classic``, ``Consumer`` or ``Share`` (Kafka's ``GroupType``; JSON:
``classic``, ``consumer`` or ``share`` as ListGroups carries it); a group known from committed
offsets only is an empty classic group. All groups are listed, also those of other protocol
types and share groups (Kafka's tool lists only ``consumer`` and empty protocol types; share
groups with ``kafka-share-groups.sh --list``).

Share groups (KIP-932): a group id whose last ``ShareGroupMetadata`` record (``__consumer_offsets``
type 11) is live, or that has live ``__share_group_state`` records and no such record. A group
the ``__consumer_offsets`` replay knows as classic or consumer stays that (Kafka gives a group id
one type). Its members are those its records 10 and 14 still name (Kafka 4.x's coordinator and
kafkalog's server write them; a coordinator loading the tree has them until their sessions
expire), as a KIP-848 consumer group's are: with members it is *Stable*, else *Empty*
(``list``, ``--state``, #MEMBERS). ``--members`` is ``ShareGroupCommand.printMembers``: rows by
member id, #PARTITIONS its topic-partitions, ASSIGNMENT ``topic:p,p;topic:p`` (topic ids named
through the tree), ``--verbose`` adding MEMBER-EPOCH; an Empty group prints only Kafka's note.
``describe``'s offsets table is
``ShareGroupCommand.printOffsets`` of Kafka 4.2 (KIP-1226; 4.1 prints no LAG column): one row
per share partition with state, sorted by topic and partition, START-OFFSET the stored
share-partition start offset, LAG ``high watermark - start offset - delivery complete count``
(the ACKNOWLEDGED/ARCHIVED records of the state batches), ``-`` with a note on stderr when the
partition is not in the tree (a topic id no partition of the tree names is shown as the id);
with no share partition, "Share group 'G' has no offset information.". ``--verbose`` adds
LEADER-EPOCH (the state's leader epoch) to the offsets and GROUP-EPOCH/ASSIGNMENT-EPOCH (types
11 and 12; ``-`` without them) to ``--state``. COORDINATOR (ID) is the group's
``__consumer_offsets`` partition, as for other groups; GROUP is padded to 15 as Kafka's share
tool pads it.

Share groups' ``reset-offsets`` and ``delete`` are ``ShareGroupCommand``'s (Kafka 4.1), carried
out as Kafka's share coordinator stores them:

* ``reset-offsets``: the scope is ``--topic T`` (every partition of T in the tree), ``--topic
  T:P,P`` (those) or ``--all-topics`` (the partitions the group has state for, as Kafka's
  ``listShareGroupOffsets`` gives them); the new start offset is the log start offset
  (``--to-earliest``), the high watermark (``--to-latest``) or the first offset with a
  timestamp at or after the time (``--to-datetime``; none: the high watermark, after Kafka's
  "Warn: Partition P from topic T is empty. Falling back to latest known offset." on stderr),
  never clamped (Kafka 4.1 does not check these). Kafka 4.1's share tool has no
  ``--to-offset``, ``--to-current``, ``--shift-by`` or ``--by-duration``: for a share group
  they are refused (usage error) with joptsimple's "to-offset is not a recognized option" and
  the scenarios the share tool takes. The table is ``OffsetsUtils.printOffsetsToReset``'s
  (GROUP and TOPIC at least 15 wide, grown to the values; rows sorted by topic and partition).
  A dry run unless ``--execute`` (Kafka 4.1 wants one of ``--dry-run``/``--execute``; here, as
  for other groups, the dry run is the default). ``--execute`` writes, per partition, a
  ShareSnapshot record to ``__share_group_state``: snapshot epoch the stored one + 1 (0 for a
  partition without state), leader epoch the partition's latest (its leader-epoch cache, else
  0), the new start offset and no state batches (the records in flight are forgotten, as
  Kafka's reset forgets them), in the partition the key's state lives in, else Kafka's
  ``partitionFor`` (refused when the tree does not hold the whole topic). A partition not in
  the tree, or a topic with none, is Kafka's error: "Error: Executing share group command
  failed due to The partitions "T-P" do not exist" / "... This server does not host this
  topic-partition.".
* ``delete``: a tombstone for every state key of the group (``__share_group_state``) and for
  every live ``ShareGroup*`` key of it in ``__consumer_offsets`` (types 9-15, which Kafka's
  group coordinator and kafkalog's server write); "Deletion of requested share groups
  ('G') was successful.". The group is gone from ``list`` and ``describe`` after, and a server
  started on the tree has no state for it.

Kafka refuses both for a share group with members: ``reset-offsets`` with "Share group 'G' is
not empty.", ``delete`` with "Error: Deletion of some share groups failed:" and "* Group 'G' could
not be deleted due to: ...GroupNotEmptyException: Share group 'G' is not EMPTY."; ``--force``
does it anyway (for a tree whose consumers are known to be gone). The tree is opened for
writing only by ``--execute`` and ``delete``, and a tree locked by a running process (a kafkalog
server, a Kafka broker) is refused then, as for other groups.

Exit status: 0 success, 1 an error (no such group, refused operation, unreadable tree), 2 usage.

Example
-------
>>> main(["plan", "--strategy", "range", "--members", "c1,c2", "--topics", "t:3"])
c1 t-0,t-1
c2 t-2
0
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from ..errors import KafkaLogError
from ..usage import ArgumentParser, UsageError, java_split, parse_args
from .assignors import STRATEGIES, assign
from .error_codes import ErrorCode, error_name
from .errors import AssignmentError, GroupIdNotFoundError
from .reset_plan import export_csv, parse_reset_plan
from .topic_partition_spec import parse_topic_spec

logger = logging.getLogger(__name__)

__all__ = ["main", "build_parser", "parse_duration"]

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
MISSING = "-"




class _NoValueFormatter(argparse.HelpFormatter):
    """Help for an option whose optional value is only there to be refused (``metavar=""``):
    shown without one."""

    def _format_args(self, action: argparse.Action, default_metavar: str) -> str:
        if action.metavar == "" and action.nargs == "?":
            return ""
        return super()._format_args(action, default_metavar)


def build_parser() -> argparse.ArgumentParser:
    """The ``kafkalog groups`` argument parser."""
    p = ArgumentParser(prog="kafkalog groups",
                description="Consumer, share and streams groups of a log.dirs tree "
                            "(kafka-consumer-groups.sh, kafka-share-groups.sh, "
                            "kafka-streams-groups.sh; offline).")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=ArgumentParser)

    def with_tree(name: str, help_text: str, **kw: Any) -> argparse.ArgumentParser:
        s = sub.add_parser(name, help=help_text, **kw)
        s.add_argument("log_dir", help="a broker log directory (log.dirs entry)")
        s.add_argument("--json", action="store_true", help="print JSON")
        s.add_argument("--offsets-topic-partitions", type=int, default=None, metavar="N",
                       help="offsets.topic.num.partitions (default 50)")
        return s

    ls = with_tree("list", "List the groups.")
    ls.add_argument("--state", nargs="?", const="", default=None, metavar="S,...",
                    help="show the STATE column; with states (case-insensitive), only groups "
                         "in them")
    ls.add_argument("--type", nargs="?", const="", default=None, metavar="T,...",
                    help="show the TYPE column; with types (classic, consumer, share, "
                         "streams), only groups of them")
    d = with_tree("describe", "Describe a group's offsets, lag and members.",
                  formatter_class=_NoValueFormatter,
                  usage="kafkalog groups describe [-h] [--json] [--offsets-topic-partitions N]"
                        "\n" + " " * 32 + "(--group GROUP | --all-groups)\n" + " " * 32
                        + "[--offsets | --members [--verbose] | --state] log_dir")
    which = d.add_mutually_exclusive_group(required=True)
    which.add_argument("--group")
    which.add_argument("--all-groups", action="store_true",
                       help="every group of the tree, one after another (each in its type's "
                            "tool's shape; --json: one object per line)")
    d.add_argument("--offsets", action="store_true",
                   help="offsets and lag per partition (the default)")
    d.add_argument("--members", action="store_true", help="the group's members")
    d.add_argument("--verbose", action="store_true",
                   help="with --members: each member's assignment too (a share group: also "
                        "with --offsets, leader epochs, and --state, epochs)")
    # an optional value, refused with Kafka's text (its --state takes one for --list only)
    d.add_argument("--state", nargs="?", const=True, default=False, metavar="",
                   help="the group's state, assignment strategy and member count")
    r = with_tree("reset-offsets", "Reset a group's committed offsets (dry run by default).")
    r.add_argument("--group", required=True)
    scope = r.add_mutually_exclusive_group()     # (required unless --from-file)
    scope.add_argument("--topic", "--input-topic", action="append", dest="topic",
                       help="T or T:P,P (repeatable; --input-topic: kafka-streams-groups.sh's "
                            "name)")
    scope.add_argument("--all-topics", "--all-input-topics", action="store_true",
                       dest="all_topics",
                       help="every topic the group has offsets for (a streams group: of its "
                            "topology's source topics)")
    how = r.add_mutually_exclusive_group(required=True)
    how.add_argument("--to-earliest", action="store_true")
    how.add_argument("--to-latest", action="store_true")
    how.add_argument("--to-current", action="store_true")
    how.add_argument("--to-offset", type=int)
    how.add_argument("--to-datetime", help="YYYY-MM-DDTHH:mm:SS.sss (UTC unless an offset)")
    how.add_argument("--shift-by", type=int)
    how.add_argument("--by-duration", help="ISO-8601 duration, e.g. PT1H30M or P2DT3H")
    how.add_argument("--from-file", metavar="CSV",
                     help="the offsets of a reset plan (topic,partition,offset lines, as "
                          "--export writes them; or group,topic,partition,offset)")
    r.add_argument("--export", action="store_true",
                   help="print the plan as CSV (what --from-file reads)")
    mode = r.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", action="store_true", help="only show (the default)")
    mode.add_argument("--execute", action="store_true", help="write the new offsets")
    r.add_argument("--force", action="store_true",
                   help="also when the group's last metadata lists members")
    r.add_argument("--delete-all-internal-topics", action="store_true",
                   help="a streams group, with --execute: also delete its internal "
                        "(repartition and changelog) topics from the tree")
    r.add_argument("--delete-internal-topic", action="append", metavar="TOPIC",
                   help="a streams group, with --execute: also delete this internal topic of "
                        "it (repeatable)")
    x = with_tree("delete", "Delete a group and its offsets.")
    x.add_argument("--group", required=True)
    x.add_argument("--force", action="store_true",
                   help="also when the group's last metadata lists members")
    x.add_argument("--delete-all-internal-topics", action="store_true",
                   help="a streams group: also delete its internal (repartition and "
                        "changelog) topics from the tree")
    do = with_tree("delete-offsets", "Delete a group's committed offsets of some topics.")
    do.add_argument("--group", required=True)
    what = do.add_mutually_exclusive_group(required=True)
    what.add_argument("--topic", "--input-topic", action="append", dest="topic",
                      help="T or T:P,P (repeatable; --input-topic: kafka-streams-groups.sh's "
                           "name)")
    what.add_argument("--all-input-topics", action="store_true",
                      help="a streams group: every source topic it has offsets for")
    do.add_argument("--force", action="store_true",
                    help="a share group: also when its records still name members")
    pl = sub.add_parser("plan", help="Show what an assignor would assign.")
    pl.add_argument("--strategy", required=True, choices=sorted(STRATEGIES))
    pl.add_argument("--members", required=True,
                    help="m1,m2,... (every member subscribes to every topic) or "
                         "m1=t1+t2,m2=t1 (a member's own subscription)")
    pl.add_argument("--topics", help="t1:6,t2:3 (partition counts); default: the topics of "
                                     "--log-dir")
    pl.add_argument("--log-dir", help="take partition counts (and topic ids) from this tree")
    pl.add_argument("--owned", action="append", default=[],
                    help="member=t:p+t:p, the previous assignment (repeatable)")
    pl.add_argument("--json", action="store_true", help="print JSON")
    return p


def main(argv: Sequence[str] | None = None, *, stdout: IO[str] | None = None,
         stderr: IO[str] | None = None) -> int:
    """Run ``kafkalog groups``; returns the exit status."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    parser = build_parser()
    args, status = parse_args(parser, argv, err)
    if args is None:
        return status
    if args.command is None:
        parser.print_usage(err)
        err.write("kafkalog groups: error: a command is required (list, describe, "
                  "reset-offsets, delete, delete-offsets, plan)\n")
        return EXIT_USAGE
    try:
        if args.command == "plan":
            return _plan(args, out)
        _check_options(args)
        return _with_tree(args, out, err)
    except UsageError as e:
        err.write(f"kafkalog groups {args.command}: error: {e}\n")
        return EXIT_USAGE
    except (KafkaLogError, OSError) as e:
        err.write(f"kafkalog groups {args.command}: {e}\n")
        return EXIT_ERROR


# ---------------------------------------------------------------------------------------------

def _check_options(args: argparse.Namespace) -> None:
    """``ConsumerGroupCommandOptions.checkArgs`` for describe's sub-actions (``--verbose``
    without ``--members`` is refused once the group is known not to be a share group, with
    joptsimple's ``availableIf`` text)."""
    if args.command == "list":
        if args.state:
            _parse_states(args.state)
        if args.type:
            _parse_types(args.type)
    if args.command == "reset-offsets":
        if not args.from_file and not args.topic and not args.all_topics:
            raise UsageError("one of the arguments --topic --all-topics is required (or "
                             "--from-file)")
        if args.export and args.json:
            raise UsageError("--export and --json: choose one")
        # StreamsGroupCommandOptions.checkDeleteInternalTopicsArgs
        if args.delete_all_internal_topics and not args.execute:
            raise UsageError("Option [delete-all-internal-topics] takes [execute] when "
                             "[reset-offsets] is used.")
        if args.delete_internal_topic and not args.execute:
            raise UsageError("Option [delete-internal-topic] takes [reset-offsets] when "
                             "[execute] is used.")
    if args.command != "describe":
        return
    if args.members + args.offsets + (args.state is not False) > 1:
        raise UsageError("Option [describe] takes at most one of these options: [members], "
                         "[offsets], [state]")
    if isinstance(args.state, str):
        raise UsageError("Option [describe] does not take a value for [state]")
    # --verbose without --members is refused in _with_tree: a share group takes it


#: ``ConsumerGroupState`` names (without UNKNOWN), in the enum's order
GROUP_STATES = ("PreparingRebalance", "CompletingRebalance", "Stable", "Dead", "Empty",
                "Assigning", "Reconciling", "NotReady")
#: ``GroupType`` names (without UNKNOWN), in the enum's order
GROUP_TYPES = ("Consumer", "Classic", "Share", "Streams")


def _parse_states(text: str) -> set[str]:
    """``consumerGroupStatesFromString``: case-insensitive, Kafka's error text."""
    by_upper = {s.upper(): s for s in GROUP_STATES}
    parsed = {by_upper.get(s.strip().upper()) for s in java_split(text)}
    if None in parsed:
        raise UsageError(f"Invalid state list '{text}'. Valid states are: "
                         f"{', '.join(GROUP_STATES)}")
    return {s for s in parsed if s is not None}


def _parse_types(text: str) -> set[str]:
    """``consumerGroupTypesFromString``: lower-case type names; Kafka's error text."""
    valid = {t.lower() for t in GROUP_TYPES}
    parsed = {s.strip() for s in java_split(text.lower())}
    if not parsed <= valid:
        raise UsageError(f"Invalid types list '{text}'. Valid types are: "
                         f"{', '.join(GROUP_TYPES)}")
    return parsed


def _open(args: argparse.Namespace, writable: bool) -> tuple[Any, Any]:
    from ..log_dir import LogDir
    from .metadata_manager import GroupMetadataManager

    root = Path(args.log_dir)
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: no such log directory")
    config = {}
    if args.offsets_topic_partitions is not None:
        config["offsets.topic.num.partitions"] = str(args.offsets_topic_partitions)
    logs = LogDir.open(root, config or None, read_only=not writable)
    try:
        return logs, GroupMetadataManager(logs)
    except BaseException:
        logs.close()
        raise


def _with_tree(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    writable = args.command in ("delete", "delete-offsets") \
        or (args.command == "reset-offsets" and args.execute)
    logs, manager = _open(args, writable)
    try:
        if args.command == "list":
            shares = _share_groups(logs, manager)
            if args.state is not None or args.type is not None:
                return _list_with_info(args, manager, shares, out)
            groups = sorted(set(manager.list_groups()) | set(shares))
            if args.json:
                out.write(json.dumps({"groups": groups}) + "\n")
            else:
                out.writelines(g + "\n" for g in groups)
            return EXIT_OK
        if args.command == "delete-offsets":
            return _delete_offsets(args, logs, manager, out, err)
        shares = _share_groups(logs, manager)
        if getattr(args, "all_groups", False):
            groups = sorted(set(manager.list_groups()) | set(shares))
            if args.verbose and not args.members and any(
                    g not in shares and manager.group_type(g) != "streams" for g in groups):
                # (refused before any output: a classic or consumer group is among them)
                raise UsageError("Option(s) [verbose] are unavailable given other options on "
                                 "the command line")
            status = EXIT_OK
            for group in groups:
                args.group = group
                status = max(status, _one_group(args, logs, manager, shares, out, err))
            return status
        return _one_group(args, logs, manager, shares, out, err)
    finally:
        logs.close()


def _one_group(args: argparse.Namespace, logs: Any, manager: Any, shares: dict[str, Any],
               out: IO[str], err: IO[str]) -> int:
    """describe, reset-offsets or delete of ``args.group``, by the group's type (``shares``:
    the tree's share groups)."""
    streams = manager.streams_group(args.group) \
        if args.command in ("describe", "reset-offsets", "delete") else None
    if streams is not None:
        return _streams(args, logs, manager, streams, out, err)
    if getattr(args, "delete_all_internal_topics", False) \
            or getattr(args, "delete_internal_topic", None):
        raise UsageError(f"--delete-all-internal-topics/--delete-internal-topic: group "
                         f"'{args.group}' is not a streams group")
    if args.command == "describe":
        share = shares.get(args.group)
        if share is not None:
            return _describe_share(args, manager, share, out, err)
        if args.verbose and not args.members:
            # ConsumerGroupCommand's check, made once the group is known not to be a share
            # group (ShareGroupCommand takes --verbose with every sub-action)
            raise UsageError("Option(s) [verbose] are unavailable given other options on "
                             "the command line")
        if args.members:
            return _describe_members(args, logs, manager, out, err)
        if args.state:
            return _describe_state(args, manager, out, err)
        return _describe(args, logs, manager, out, err)
    share = shares.get(args.group)
    if args.command == "reset-offsets":
        if share is not None:
            return _reset_share(args, logs, manager, shares, share, out, err)
        return _reset(args, logs, manager, out, err)
    if share is not None:
        if share.members and not args.force:
            # ShareGroupService.deleteShareGroups' pre-check
            err.write(f"Error: Deletion of some share groups failed:\n* Group "
                      f"'{args.group}' could not be deleted due to: org.apache.kafka."
                      f"common.errors.GroupNotEmptyException: Share group "
                      f"'{args.group}' is not EMPTY.\n")
            return EXIT_ERROR
        return _delete_share(args, logs, manager, share, out)
    return _delete(args, manager, out, err)


def _end_offsets(logs: Any, tps: Sequence[tuple[str, int]]) -> dict[tuple[str, int], int]:
    present = set(logs.partitions())
    return {tp: logs.high_watermark(*tp) for tp in tps if tp in present}


def _describe(args: argparse.Namespace, logs: Any, manager: Any, out: IO[str],
              err: IO[str]) -> int:
    group = args.group
    try:
        desc = manager.describe_group(group)
    except GroupIdNotFoundError:
        err.write(f"Error: Consumer group '{group}' does not exist.\n")
        return EXIT_ERROR
    committed = manager.fetch_offsets(group)
    rows: list[dict[str, Any]] = []
    assigned: set[tuple[str, int]] = set()
    members = sorted((m for m in desc.members if m.assignment and m.assignment.partitions),
                     key=lambda m: -len(m.assignment.partitions))    # Kafka: most first
    for m in members:
        for tp in sorted(set(m.assignment.partitions)):
            assigned.add(tp)
            rows.append({"topic": tp[0], "partition": tp[1], "consumer_id": m.member_id,
                         "host": m.client_host, "client_id": m.client_id})
    for tp in sorted(set(committed) - assigned):
        rows.append({"topic": tp[0], "partition": tp[1], "consumer_id": None, "host": None,
                     "client_id": None})
    ends = _end_offsets(logs, [(r["topic"], r["partition"]) for r in rows])
    missing = []
    for r in rows:
        tp = (r["topic"], r["partition"])
        r["group"] = group
        r["current_offset"] = committed.get(tp)
        r["log_end_offset"] = ends.get(tp)
        r["lag"] = None if r["current_offset"] is None or r["log_end_offset"] is None \
            else r["log_end_offset"] - r["current_offset"]
        if tp not in ends:
            missing.append(f"{tp[0]}-{tp[1]}")
    if args.json:
        out.write(json.dumps({"group": group, "state": desc.state,
                              "protocol_type": desc.protocol_type, "protocol": desc.protocol,
                              "generation": desc.generation, "leader": desc.leader,
                              "partitions": rows,
                              "members": [_member_json(m) for m in desc.members],
                              "partitions_not_in_tree": missing}) + "\n")
    else:
        if desc.state == "Empty":
            err.write(f"\nConsumer group '{group}' has no active members.\n")
        _print_offsets(rows, out)
    if missing:
        err.write(f"note: {', '.join(missing)} not in {args.log_dir}: no log end offset or lag "
                  "for them\n")
    return EXIT_OK


def _member_json(m: Any) -> dict[str, Any]:
    return {"member_id": m.member_id, "group_instance_id": m.group_instance_id,
            "client_id": m.client_id, "host": m.client_host,
            "session_timeout_ms": m.session_timeout_ms,
            "rebalance_timeout_ms": m.rebalance_timeout_ms,
            "topics": m.subscription.topics if m.subscription else None,
            "assignment": [list(tp) for tp in m.assignment.partitions] if m.assignment else None}


def _cell(v: Any) -> str:
    return MISSING if v is None else str(v)


def _print_offsets(rows: list[dict[str, Any]], out: IO[str]) -> None:
    """``ConsumerGroupCommand.printOffsets``: widths at least 15, grown to the values."""
    g = max([15] + [len(r["group"]) for r in rows])
    t = max([15] + [len(r["topic"]) for r in rows])
    c = max([15] + [len(_cell(r["consumer_id"])) for r in rows])
    h = max([15] + [len(_cell(r["host"])) for r in rows])
    fmt = f"\n%-{g}s %-{t}s %-10s %-15s %-15s %-15s %-{c}s %-{h}s %s"
    text = fmt % ("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG",
                  "CONSUMER-ID", "HOST", "CLIENT-ID")
    for r in rows:
        text += fmt % (r["group"], r["topic"], r["partition"], _cell(r["current_offset"]),
                       _cell(r["log_end_offset"]), _cell(r["lag"]), _cell(r["consumer_id"]),
                       _cell(r["host"]), _cell(r["client_id"]))
    out.write(text + "\n")


def _group_type(manager: Any, group: str) -> str:
    return manager.group_type(group)


def _streams(args: argparse.Namespace, logs: Any, manager: Any, group: Any, out: IO[str],
             err: IO[str]) -> int:
    """A KIP-1071 streams group: ``kafka-streams-groups.sh``'s describe, reset-offsets and
    delete (:mod:`kafkalog.groups.streams.command`)."""
    from .streams import command as streams_command

    if args.command == "describe":
        return streams_command.describe(args, logs, manager, group, out, err)
    if args.command == "reset-offsets":
        return streams_command.reset_offsets(args, logs, manager, group, planned_offsets,
                                             show_plan, out, err)
    return streams_command.delete(args, logs, manager, group, out, err)


def _list_with_info(args: argparse.Namespace, manager: Any, shares: dict[str, Any],
                    out: IO[str]) -> int:
    """``listGroups`` with ``--state``/``--type``: ``printGroupInfo``'s table (share groups:
    type ``share``, state *Empty*)."""
    states = _parse_states(args.state) if args.state else set()
    types = _parse_types(args.type) if args.type else set()
    rows = []
    for group in sorted(set(manager.list_groups()) | set(shares)):
        if group in shares:
            gtype, state = "share", shares[group].state
        else:
            gtype = _group_type(manager, group)
            state = manager.describe_group(group).state
        if (not states or state in states) and (not types or gtype in types):
            rows.append({"group": group, "type": gtype, "state": state})
    include_type, include_state = args.type is not None, args.state is not None
    if args.json:
        keys = ["group"] + ["type"] * include_type + ["state"] * include_state
        out.write(json.dumps({"groups": [{k: r[k] for k in keys} for r in rows]}) + "\n")
        return EXIT_OK
    width = max([15] + [len(r["group"]) for r in rows]) + 10
    fmt = f"%-{width}s" + " %-20s" * include_type + " %-20s" * include_state
    header = ["GROUP"] + ["TYPE"] * include_type + ["STATE"] * include_state
    text = fmt % tuple(header) + "\n"
    for r in rows:
        cells = [r["group"]] + [r["type"].capitalize()] * include_type \
            + [r["state"]] * include_state
        text += fmt % tuple(cells) + "\n"
    out.write(text)
    return EXIT_OK


def _described(manager: Any, group: str, err: IO[str]) -> Any:
    """The group's description, or None after Kafka's error line when it does not exist
    (unknown, or Dead as ``shouldPrintMemberState`` treats it)."""
    try:
        desc = manager.describe_group(group)
    except GroupIdNotFoundError:
        desc = None
    if desc is None or desc.state == "Dead":
        err.write(f"Error: Consumer group '{group}' does not exist.\n")
        return None
    return desc


def _member_state_note(group: str, state: str, err: IO[str]) -> None:
    """``shouldPrintMemberState``'s stderr lines (a dead group never gets here)."""
    if state == "Empty":
        err.write(f"\nConsumer group '{group}' has no active members.\n")
    elif state in ("PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling"):
        err.write(f"\nWarning: Consumer group '{group}' is rebalancing.\n")


def _assignments(logs: Any, manager: Any, group: str, desc: Any
                 ) -> dict[str, list[tuple[str, int]]]:
    """Member id -> its partitions: a classic member's decoded assignment; a consumer group
    member's current assigned partitions, topic ids named by the group's subscription metadata
    (then the tree's topic ids; an unknown id stays as it is)."""
    modern = manager.consumer_group(group)
    if modern is None:
        return {m.member_id: sorted(m.assignment.partitions) if m.assignment else []
                for m in desc.members}
    names = {str(md.topic_id): name for name, md in modern.subscription_metadata.items()}
    for topic in logs.topics():
        tid = logs.topic_id(topic)
        if tid is not None:
            names.setdefault(str(tid), topic)
    return {mid: sorted((names.get(str(tid), str(tid)), p)
                        for tid, ps in m.assigned_partitions.items() for p in ps)
            for mid, m in modern.members.items()}


def _assignment_text(partitions: Sequence[tuple[str, int]]) -> str:
    """``printMembers``' ASSIGNMENT cell (Kafka 3.8/3.9): the partitions grouped by topic, each
    group's partition numbers sorted as strings in parentheses, the groups sorted and joined by
    ", "; the topic names are not printed (as Kafka's Java tool does).

    >>> _assignment_text([("b", 10), ("b", 2), ("a", 3)]), _assignment_text([])
    ('(10,2), (3)', '-')
    """
    if not partitions:
        return MISSING
    grouped: dict[str, list[str]] = {}
    for topic, p in partitions:
        grouped.setdefault(topic, []).append(str(p))
    return ", ".join(sorted("(" + ",".join(sorted(ps)) + ")" for ps in grouped.values()))


def _describe_members(args: argparse.Namespace, logs: Any, manager: Any, out: IO[str],
                      err: IO[str]) -> int:
    """``describe --members [--verbose]``: ``collectGroupsMembers`` + ``printMembers``."""
    group = args.group
    desc = _described(manager, group, err)
    if desc is None:
        return EXIT_ERROR
    parts = _assignments(logs, manager, group, desc)
    rows = [{"group": group, "consumer_id": m.member_id,
             "group_instance_id": m.group_instance_id or "", "host": m.client_host,
             "client_id": m.client_id, "assignment": parts.get(m.member_id, [])}
            for m in desc.members]
    if args.json:
        members = []
        for r in rows:
            member = {"consumer_id": r["consumer_id"],
                      "group_instance_id": r["group_instance_id"] or None, "host": r["host"],
                      "client_id": r["client_id"], "num_partitions": len(r["assignment"])}
            if args.verbose:
                member["assignment"] = [list(tp) for tp in r["assignment"]]
            members.append(member)
        out.write(json.dumps({"group": group, "state": desc.state, "members": members}) + "\n")
        return EXIT_OK
    _member_state_note(group, desc.state, err)
    g = max([15] + [len(r["group"]) for r in rows])
    c = max([15] + [len(r["consumer_id"]) for r in rows])
    i = max([17] + [len(r["group_instance_id"]) for r in rows])
    h = max([15] + [len(r["host"]) for r in rows])
    k = max([15] + [len(r["client_id"]) for r in rows])
    with_instance = any(r["group_instance_id"] for r in rows)
    if with_instance:
        fmt = f"%-{g}s %-{c}s %-{i}s %-{h}s %-{k}s %-15s "
        keys = ("group", "consumer_id", "group_instance_id", "host", "client_id")
        header = ("GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID",
                  "#PARTITIONS")
    else:
        fmt = f"%-{g}s %-{c}s %-{h}s %-{k}s %-15s "
        keys = ("group", "consumer_id", "host", "client_id")
        header = ("GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS")
    text = "\n" + fmt % header + ("ASSIGNMENT" if args.verbose else "") + "\n"
    for r in rows:
        text += fmt % (*(r[key] for key in keys), len(r["assignment"]))
        text += (_assignment_text(r["assignment"]) if args.verbose else "") + "\n"
    out.write(text)
    return EXIT_OK


def _describe_state(args: argparse.Namespace, manager: Any, out: IO[str], err: IO[str]) -> int:
    """``describe --state``: ``collectGroupsState`` + ``printStates``, the group's
    ``__consumer_offsets`` partition in the coordinator's place."""
    group = args.group
    desc = _described(manager, group, err)
    if desc is None:
        return EXIT_ERROR
    partition = manager.partition_for(group)
    coordinator = f"__consumer_offsets-{partition}"
    if args.json:
        out.write(json.dumps({"group": group, "coordinator": coordinator,
                              "offsets_partition": partition,
                              "assignment_strategy": desc.protocol, "state": desc.state,
                              "num_members": len(desc.members)}) + "\n")
        return EXIT_OK
    _member_state_note(group, desc.state, err)
    fmt = f"\n%-{max(25, len(coordinator))}s %-25s %-20s %-15s %s"
    out.write(fmt % ("GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS")
              + fmt % (group, coordinator, desc.protocol or "", desc.state, len(desc.members))
              + "\n")
    return EXIT_OK


# -- share groups (kafka-share-groups.sh) ----------------------------------------------------

def _share_groups(logs: Any, manager: Any) -> dict[str, Any]:
    """The tree's share groups (:func:`kafkalog.groups.share.offline.load`) that are not also
    classic or consumer groups: Kafka gives a group id one type, so a group the
    ``__consumer_offsets`` replay knows keeps being described as it was."""
    from .share import offline

    return {g: info for g, info in offline.load(logs).items() if not manager.has_group(g)}


def _share_no_members(group: str, err: IO[str]) -> None:
    """``ShareGroupService.maybePrintEmptyGroupState`` for an Empty group (every share group
    offline)."""
    err.write(f"\nShare group '{group}' has no active members.\n")


def _share_assignment(assignment: Any) -> str:
    """``ShareGroupService.getAssignmentString``: ``topic:p,p;topic:p``, topics sorted."""
    by_topic: dict[str, list[int]] = {}
    for t, p in assignment:
        by_topic.setdefault(t, []).append(p)
    return ";".join(sorted(f"{t}:" + ",".join(str(p) for p in sorted(ps))
                           for t, ps in by_topic.items()))


def _describe_share_members(args: argparse.Namespace, info: Any, out: IO[str],
                            err: IO[str]) -> int:
    """``ShareGroupService.printMembers``: the members the group's records name, by member
    id; ``#PARTITIONS`` counts the member's topic-partitions; ``--verbose`` adds
    MEMBER-EPOCH. An Empty group: Kafka's note and no table."""
    group = args.group
    members = info.members
    if args.json:
        out.write(json.dumps({"group": group, "type": "share", "state": info.state,
                              "members": [{
                                  "member_id": m.member_id, "client_id": m.client_id,
                                  "host": m.client_host, "rack_id": m.rack_id,
                                  "member_epoch": m.member_epoch,
                                  "subscribed_topics": list(m.subscribed_topics),
                                  "assignment": [{"topic": t, "partition": p}
                                                 for t, p in m.assignment]}
                                  for m in members]}) + "\n")
        return EXIT_OK
    if not members:
        _share_no_members(group, err)
        return EXIT_OK
    g = max(15, len(group))
    c = max([15] + [len(m.member_id) for m in members])
    h = max([15] + [len(m.client_host) for m in members])
    i = max([15] + [len(m.client_id) for m in members])
    if args.verbose:
        fmt = f"\n%-{g}s %-{c}s %-{h}s %-{i}s %-12s %-13s %s"
        text = fmt % ("GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS",
                      "MEMBER-EPOCH", "ASSIGNMENT") + "".join(
            fmt % (group, m.member_id, m.client_host, m.client_id, len(m.assignment),
                   m.member_epoch, _share_assignment(m.assignment)) for m in members)
    else:
        fmt = f"\n%-{g}s %-{c}s %-{h}s %-{i}s %-12s %s"
        text = fmt % ("GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS",
                      "ASSIGNMENT") + "".join(
            fmt % (group, m.member_id, m.client_host, m.client_id, len(m.assignment),
                   _share_assignment(m.assignment)) for m in members)
    out.write(text + "\n")
    return EXIT_OK


def _describe_share(args: argparse.Namespace, manager: Any, info: Any, out: IO[str],
                    err: IO[str]) -> int:
    """``describe`` of a share group: ``ShareGroupCommand``'s ``printOffsets`` (the default),
    ``printStates`` (``--state``) or ``printMembers`` (``--members``), ``--verbose`` taken
    with each as Kafka takes it."""
    group = args.group
    if args.members:
        return _describe_share_members(args, info, out, err)
    if args.state:
        partition = manager.partition_for(group)
        coordinator = f"__consumer_offsets-{partition}"
        if args.json:
            out.write(json.dumps({"group": group, "type": "share", "coordinator": coordinator,
                                  "offsets_partition": partition, "state": info.state,
                                  "group_epoch": info.group_epoch,
                                  "assignment_epoch": info.assignment_epoch,
                                  "num_members": len(info.members)}) + "\n")
            return EXIT_OK
        if not info.members:
            _share_no_members(group, err)
        g, c = max(15, len(group)), max(25, len(coordinator))
        if args.verbose:
            fmt = f"\n%-{g}s %-{c}s %-15s %-12s %-17s %s"
            text = fmt % ("GROUP", "COORDINATOR (ID)", "STATE", "GROUP-EPOCH",
                          "ASSIGNMENT-EPOCH", "#MEMBERS") + fmt % (
                group, coordinator, info.state, _cell(info.group_epoch),
                _cell(info.assignment_epoch), len(info.members))
        else:
            fmt = f"\n%-{g}s %-{c}s %-15s %s"
            text = fmt % ("GROUP", "COORDINATOR (ID)", "STATE", "#MEMBERS") + fmt % (
                group, coordinator, info.state, len(info.members))
        out.write(text + "\n")
        return EXIT_OK
    rows = info.partitions
    missing = [f"{r.topic}-{r.partition}" for r in rows if r.log_end_offset is None]
    if args.json:
        out.write(json.dumps({"group": group, "type": "share", "state": info.state,
                              "partitions": [{
                                  "topic": r.topic, "topic_id": r.topic_id,
                                  "partition": r.partition, "leader_epoch": r.leader_epoch,
                                  "start_offset": r.start_offset,
                                  "delivery_complete_count": r.delivery_complete_count,
                                  "log_end_offset": r.log_end_offset, "lag": r.lag}
                                  for r in rows],
                              "partitions_not_in_tree": missing}) + "\n")
    elif not rows:
        out.write(f"\nShare group '{group}' has no offset information.\n")
    else:
        g = max(15, len(group))
        t = max([15] + [len(r.topic) for r in rows])
        if args.verbose:
            fmt = f"\n%-{g}s %-{t}s %-10s %-13s %-13s %s"
            text = fmt % ("GROUP", "TOPIC", "PARTITION", "LEADER-EPOCH", "START-OFFSET", "LAG")
            for r in rows:
                text += fmt % (group, r.topic, r.partition, _cell(r.leader_epoch),
                               r.start_offset, _cell(r.lag))
        else:
            fmt = f"\n%-{g}s %-{t}s %-10s %-13s %s"
            text = fmt % ("GROUP", "TOPIC", "PARTITION", "START-OFFSET", "LAG")
            for r in rows:
                text += fmt % (group, r.topic, r.partition, r.start_offset, _cell(r.lag))
        out.write(text + "\n")
    if missing:
        err.write(f"note: {', '.join(missing)} not in {args.log_dir}: no log end offset or lag "
                  "for them\n")
    return EXIT_OK


# -- reset-offsets --------------------------------------------------------------------------

_DURATION = re.compile(
    r"(?P<sign>[-+]?)P(?:(?P<days>\d+)D)?(?:T(?:(?P<hours>\d+)H)?(?:(?P<minutes>\d+)M)?"
    r"(?:(?P<seconds>\d+(?:\.\d+)?)S)?)?", re.IGNORECASE)


def parse_duration(text: str) -> int:
    """An ISO-8601 duration (Java's ``Duration.parse``: days, hours, minutes, seconds) in ms.

    >>> parse_duration("PT1H30M"), parse_duration("P1DT0.5S")
    (5400000, 86400500)
    """
    m = _DURATION.fullmatch(text.strip())
    if m is None or not any(m.group(k) for k in ("days", "hours", "minutes", "seconds")):
        raise UsageError(f"--by-duration: {text!r} is not an ISO-8601 duration such as PT1H30M")
    ms = (int(m.group("days") or 0) * 86_400_000 + int(m.group("hours") or 0) * 3_600_000
          + int(m.group("minutes") or 0) * 60_000
          + round(float(m.group("seconds") or 0) * 1000))
    return -ms if m.group("sign") == "-" else ms


def _parse_datetime(text: str) -> int:
    """``--to-datetime``: ``YYYY-MM-DDTHH:mm:SS.sss``, UTC unless it carries an offset."""
    try:
        t = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"--to-datetime: {text!r} is not YYYY-MM-DDTHH:mm:SS.sss") from None
    if t.tzinfo is None:
        t = t.replace(tzinfo=dt.timezone.utc)
    return int(t.timestamp() * 1000)


def _scope(args: argparse.Namespace, logs: Any, committed: dict) -> list[tuple[str, int]]:
    if args.all_topics:
        # getPartitionsToReset: the partitions the group has committed offsets for
        return sorted(committed)
    tps: list[tuple[str, int]] = []
    for spec in args.topic:
        topic, parts = parse_topic_spec(spec)
        if parts is not None:
            tps.extend((topic, p) for p in parts)
        else:
            found = [(t, p) for t, p in logs.partitions() if t == topic]
            found += [tp for tp in committed if tp[0] == topic and tp not in found]
            if not found:
                raise UsageError(f"--topic {topic!r}: no partition of it in {args.log_dir}")
            tps.extend(found)
    return sorted(dict.fromkeys(tps))


def _new_offset(args: argparse.Namespace, logs: Any, tp: tuple[str, int],
                committed: Mapping[tuple[str, int], int], now: int,
                out: IO[str] | None = None) -> int:
    if args.shift_by is not None and tp not in committed:
        # prepareOffsetsToReset's IllegalArgumentException, a usage error (printUsageAndExit)
        raise UsageError(f"Cannot shift offset for partition {tp[0]}-{tp[1]} since there is "
                         "no current committed offset")
    present = tp in set(logs.partitions())
    if not present:
        if args.to_offset is not None:
            return args.to_offset
        if args.shift_by is not None and tp in committed:
            return max(0, committed[tp] + args.shift_by)
        raise KafkaLogError(f"{tp[0]}-{tp[1]} is not in {args.log_dir}: its offsets are unknown")
    log = logs.log(*tp)
    earliest, latest = log.log_start_offset, logs.high_watermark(*tp)
    if args.to_earliest:
        target = earliest
    elif args.to_latest:
        target = latest
    elif args.to_current:
        target = committed.get(tp, latest)
    elif args.to_offset is not None:
        target = args.to_offset
    elif args.shift_by is not None:
        target = committed[tp] + args.shift_by
    else:
        ts = _parse_datetime(args.to_datetime) if args.to_datetime is not None \
            else now - parse_duration(args.by_duration)
        found = log.offset_for_timestamp(ts)
        if found is None and out is not None:
            # getLogTimestampOffsets (System.out)
            out.write(f"\nWarn: Partition {tp[1]} from topic {tp[0]} is empty. Falling back "
                      "to latest known offset.\n")
        target = latest if found is None else found
    # ConsumerGroupCommand.checkOffsetsRange: out-of-range targets go to the nearest end
    return min(max(target, earliest), latest)


def _reset(args: argparse.Namespace, logs: Any, manager: Any, out: IO[str],
           err: IO[str]) -> int:
    group = args.group
    try:
        desc = manager.describe_group(group)
        state = desc.state
    except GroupIdNotFoundError:
        state = "Dead"
    if state not in ("Empty", "Dead") and not args.force:
        err.write(f"Error: Assignments can only be reset if the group '{group}' is inactive, "
                  f"but the current state is {state}.\n")
        return EXIT_ERROR
    committed = manager.fetch_offsets(group)
    scope = [] if args.from_file else _scope(args, logs, committed)
    # (Kafka's warnings go to stdout; here to stderr, as this command's other notes, so that
    # stdout is the plan alone, --json's or --export's too)
    plan = planned_offsets(args, logs, group, scope, committed, err, err)
    if args.execute:
        manager.commit_offsets(group, plan)
    show_plan(args, group, plan, out)
    return EXIT_OK


def planned_offsets(args: argparse.Namespace, logs: Any, group: str,
                    scope: Sequence[tuple[str, int]], committed: Mapping[tuple[str, int], int],
                    err: IO[str], out: IO[str] | None = None) -> dict[tuple[str, int], int]:
    """``prepareOffsetsToReset``: the new offset of each partition of ``scope`` by the
    scenario, or ``--from-file``'s plan for ``group`` (``resetFromFile``: Kafka's error and
    no offset when the file has none for it), clamped to each partition's offsets
    (``checkOffsetsRange``) where the tree holds the partition. ``out`` gets Kafka's warning
    for a partition with no record at the ``--to-datetime``/``--by-duration`` time.

    Raises
    ------
    UsageError
        ``--shift-by`` of a partition without a committed offset (Kafka's text).
    """
    now = logs._clock.milliseconds()
    if not args.from_file:
        return {tp: _new_offset(args, logs, tp, committed, now, out) for tp in scope}
    try:
        with open(args.from_file, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise KafkaLogError(f"--from-file: {e}") from None
    requested = parse_reset_plan(text, group, path=args.from_file)
    if requested is None:
        err.write(f"\nError: No reset plan for group {group} found\n")
        return {}
    present = set(logs.partitions())
    plan = {}
    for tp, offset in requested.items():
        if tp in present:
            offset = min(max(offset, logs.log(*tp).log_start_offset), logs.high_watermark(*tp))
        plan[tp] = offset
    return plan


def show_plan(args: argparse.Namespace, group: str, plan: Mapping[tuple[str, int], int],
              out: IO[str]) -> None:
    """The plan as ``--json``, ``--export`` (``exportOffsetsToCsv``, then ``println``) or
    ``printOffsetsToReset``'s table."""
    if args.json:
        out.write(json.dumps({"group": group, "executed": bool(args.execute),
                              "offsets": [{"topic": t, "partition": p, "new_offset": o}
                                          for (t, p), o in plan.items()]}) + "\n")
    elif args.export:
        out.write(export_csv(group, plan) + "\n")
    else:
        fmt = "\n%-30s %-30s %-10s %-15s"
        text = fmt % ("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET") if plan else ""
        for (t, p), o in plan.items():
            text += fmt % (group, t, p, o)
        out.write(text + "\n")


def _delete(args: argparse.Namespace, manager: Any, out: IO[str], err: IO[str]) -> int:
    from .errors import NonEmptyGroupError

    group = args.group
    try:
        manager.delete_group(group, force=args.force)
    except GroupIdNotFoundError:
        # (the failed future's exception, as Kafka prints it: its class and default message)
        err.write(f"Error: Deletion of some consumer groups failed:\n* Group '{group}' could "
                  "not be deleted due to: org.apache.kafka.common.errors."
                  "GroupIdNotFoundException: The group id does not exist.\n")
        return EXIT_ERROR
    except NonEmptyGroupError:
        err.write(f"Error: Deletion of some consumer groups failed:\n* Group '{group}' could "
                  "not be deleted due to: org.apache.kafka.common.errors."
                  "GroupNotEmptyException: The group is not empty.\n")
        return EXIT_ERROR
    if args.json:
        out.write(json.dumps({"deleted": [group]}) + "\n")
    else:
        out.write(f"Deletion of requested consumer groups ('{group}') was successful.\n")
    return EXIT_OK


#: ``Errors`` messages and exception classes of OffsetDelete's errors (Kafka 4.2)
_DELETE_OFFSETS_ERRORS = {
    ErrorCode.GROUP_ID_NOT_FOUND: ("GroupIdNotFoundException", "The group id does not exist."),
    ErrorCode.NON_EMPTY_GROUP: ("GroupNotEmptyException", "The group is not empty."),
    ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC: (
        "GroupSubscribedToTopicException", "Deleting offsets of a topic is forbidden while the "
        "consumer group is actively subscribed to it."),
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION: (
        "UnknownTopicOrPartitionException", "This server does not host this topic-partition."),
}


def _exception_text(code: int) -> str:
    name, message = _DELETE_OFFSETS_ERRORS.get(code, ("KafkaException", error_name(code)))
    return f"org.apache.kafka.common.errors.{name}: {message}"


def _delete_offsets(args: argparse.Namespace, logs: Any, manager: Any, out: IO[str],
                    err: IO[str]) -> int:
    """``--delete-offsets`` of ``kafka-consumer-groups.sh`` and ``kafka-streams-groups.sh``
    (their ``deleteOffsets``, the same text): OffsetDelete as the group coordinator answers it
    (:meth:`GroupCoordinator.offset_delete`: a topic the group subscribes to is refused, a
    classic group not Empty refused whole), then Kafka's summary line and per-partition
    table, sorted as it sorts them (by topic and partition as one string)."""
    from .coordinator import GroupCoordinator

    group = args.group
    share = _share_groups(logs, manager).get(group)
    if share is not None:
        return _delete_share_offsets(args, logs, manager, share, out, err)
    streams = manager.streams_group(group)
    rows: dict[tuple[str, int], int] = {}
    partitions: list[tuple[str, int]] = []
    if args.all_input_topics:
        if streams is None:
            raise UsageError(f"--all-input-topics: group '{group}' is not a streams group")
        sources = set(streams.source_topics())
        partitions = [tp for tp in manager.fetch_offsets(group) if tp[0] in sources]
    else:
        present = sorted(logs.partitions())
        for spec in args.topic:
            topic, parts = parse_topic_spec(spec)
            if parts is not None:
                partitions.extend((topic, p) for p in parts)
                continue
            found = [tp for tp in present if tp[0] == topic]
            if not found:       # describeTopics failed for it: a row without partition
                rows[(topic, -1)] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            partitions.extend(found)
    partitions = list(dict.fromkeys(partitions))
    top = ErrorCode.NONE
    if partitions:
        if not manager.has_group(group):
            top = ErrorCode.GROUP_ID_NOT_FOUND
            rows.update(dict.fromkeys(partitions, top))
        else:
            response = GroupCoordinator(manager, clock=logs._clock).offset_delete(group,
                                                                                 partitions)
            if response.error_code:
                top = response.error_code
                rows.update(dict.fromkeys(partitions, top))
            else:
                for t in response.topics:
                    for p in t.partitions:
                        rows[(t.name, p.partition_index)] = p.error_code
                        if p.error_code and not top:
                            top = p.error_code      # DeleteConsumerGroupOffsetsResult.all()
    if args.json:
        out.write(json.dumps({"group": group, "error": error_name(top) if top else None,
                              "partitions": [
                                  {"topic": t, "partition": None if p < 0 else p,
                                   "error": error_name(c) if c else None}
                                  for (t, p), c in sorted(rows.items())]}) + "\n")
        return EXIT_ERROR if top else EXIT_OK
    if not top:
        out.write(f"Request succeeded for deleting offsets from group {group}.\n")
    elif top in (ErrorCode.GROUP_ID_NOT_FOUND, ErrorCode.NON_EMPTY_GROUP,
                 ErrorCode.INVALID_GROUP_ID):
        err.write(f"\nError: {_DELETE_OFFSETS_ERRORS[top][1]}\n")
    elif top in (ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION):
        err.write("\nError: Encountered some partition-level error, see the follow-up "
                  "details.\n")
    else:
        err.write(f"\nError: Encountered some unknown error: {error_name(top)}\n")
    width = max([15] + [len(t) for t, _ in rows])
    fmt = f"\n%-{width}s %-10s %-15s"
    text = fmt % ("TOPIC", "PARTITION", "STATUS")
    for (t, p), code in sorted(rows.items(), key=lambda kv: kv[0][0] + str(kv[0][1])):
        text += fmt % (t, p if p >= 0 else MISSING,
                       f"Error: {_exception_text(code)}" if code else "Successful")
    out.write(text + "\n")
    return EXIT_ERROR if top else EXIT_OK


def _delete_share_offsets(args: argparse.Namespace, logs: Any, manager: Any, info: Any,
                          out: IO[str], err: IO[str]) -> int:
    """``kafka-share-groups.sh --delete-offsets`` (``ShareGroupService.deleteOffsets`` over
    DeleteShareGroupOffsets as Kafka 4.2's coordinators carry it out): refused while the group
    has members; per topic (partitions cannot be named) a ShareSnapshot tombstone for each of
    the group's state keys of it, and the topic leaves the group's record 15; a topic the tree
    does not hold fails alone. Kafka's per-topic table."""
    from ..records.record import Record
    from .share import offline
    from .share.state_topic import SHARE_STATE_TOPIC, tombstone_key

    group = args.group
    if args.all_input_topics:
        raise UsageError(f"--all-input-topics: group '{group}' is not a streams group")
    if any(":" in spec for spec in args.topic):
        raise UsageError("--delete-offsets of a share group takes topics, not partitions "
                         "(kafka-share-groups.sh)")
    if info.members and not args.force:
        err.write("\nError: The group has active members.\n")
        return EXIT_ERROR
    held = {t for t, _ in logs.partitions()}
    results: dict[str, int] = {}
    gone: set[str] = set()
    now = logs._clock.milliseconds()
    batches: dict[int, list[Any]] = {}
    for topic in dict.fromkeys(args.topic):
        if topic not in held:
            results[topic] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            continue
        results[topic] = ErrorCode.NONE
        tid = str(logs.topic_id(topic))
        gone.add(tid)
        for r in info.partitions:
            if r.topic_id == tid and r.state_partition is not None:
                batches.setdefault(r.state_partition, []).append(
                    Record(tombstone_key(group, tid, r.partition), None, now))
    for target, records in sorted(batches.items()):
        logs.log(SHARE_STATE_TOPIC, target).append(records)
    before = offline.coordinator_state(logs).get(group)
    if before is not None and gone & set(before[1]):
        initialized = {t: set(ps) for t, ps in before[1].items() if t not in gone}
        records = offline.coordinator_records(group, before, before[0] or 1, initialized,
                                              offline.topic_names(logs))
        if records:
            manager.write_records(group, records)
    if args.json:
        out.write(json.dumps({"group": group, "type": "share", "topics": [
            {"topic": t, "error": error_name(c) if c else None}
            for t, c in sorted(results.items())]}) + "\n")
        return EXIT_ERROR if any(results.values()) else EXIT_OK
    width = max([15] + [len(t) for t in results])
    fmt = f"\n%-{width}s %s"
    text = fmt % ("TOPIC", "STATUS")
    for t, code in sorted(results.items()):
        text += fmt % (t, f"Error: {_DELETE_OFFSETS_ERRORS[code][1]}" if code else "Successful")
    out.write(text + "\n")
    return EXIT_ERROR if any(results.values()) else EXIT_OK


# -- share groups: reset-offsets and delete (kafka-share-groups.sh) ----------------------------

#: the reset scenarios of ``kafka-share-groups.sh --reset-offsets`` (Kafka 4.1), as Kafka lists
#: them in its usage errors
_SHARE_SCENARIOS = "[to-datetime], [to-earliest], [to-latest]"
#: kafkalog's other scenarios: options Kafka 4.1's share tool does not have (args attribute,
#: option name)
_SHARE_REFUSED = (("to_current", "to-current"), ("to_offset", "to-offset"),
                  ("shift_by", "shift-by"), ("by_duration", "by-duration"),
                  ("from_file", "from-file"), ("export", "export"))


def _share_failed(message: str, err: IO[str]) -> int:
    """``ShareGroupCommand.run``'s catch-all: ``printError("Executing share group command
    failed due to " + message)`` (stderr here, as every error of this command)."""
    err.write(f"Error: Executing share group command failed due to {message}\n")
    return EXIT_ERROR


def _share_topic_partitions(args: argparse.Namespace, logs: Any, err: IO[str]
                            ) -> list[tuple[str, int]] | None:
    """``OffsetsUtils.parseTopicPartitionsToReset`` over the tree: ``T:P,P`` as given (Kafka's
    usage errors for a malformed one), ``T`` every partition of T in the tree; None after
    Kafka's error when a topic has no partition here (``describeTopics``' unknown topic)."""
    tps: list[tuple[str, int]] = []
    whole: list[str] = []
    for spec in args.topic:
        topic, parts = parse_topic_spec(spec)
        if parts is None:
            whole.append(topic)
        else:
            tps.extend((topic, p) for p in parts)
    held = logs.partitions()
    for topic in whole:
        found = sorted(tp for tp in held if tp[0] == topic)
        if not found:
            _share_failed("This server does not host this topic-partition.", err)
            return None
        tps.extend(found)
    return tps


def _reset_share(args: argparse.Namespace, logs: Any, manager: Any, shares: dict[str, Any],
                 info: Any, out: IO[str], err: IO[str]) -> int:
    """``ShareGroupService.resetOffsets`` (Kafka 4.1) of a share group: the share-partition
    start offsets of the scope set to the log start offset (``--to-earliest``), the high
    watermark (``--to-latest``) or the first offset at or after a time (``--to-datetime``;
    the high watermark, with Kafka's warning, when there is none); printed as
    ``OffsetsUtils.printOffsetsToReset``; with ``--execute``, written as ShareSnapshot records
    (see :func:`_write_share_offsets`). Refused for a group with members unless ``--force``
    (Kafka: "Share group 'G' is not empty.")."""
    group = args.group
    for attr, name in _SHARE_REFUSED:
        if getattr(args, attr) not in (None, False):
            # Kafka 4.1's tool has no such option (joptsimple's text), then its scenarios
            raise UsageError(f"{name} is not a recognized option (share group '{group}': "
                             f"Option [reset-offsets] takes one of these options: "
                             f"{_SHARE_SCENARIOS})")
    if info.members and not args.force:
        # ShareGroupService.resetOffsets: printErrorAndExit
        err.write(f"Share group '{group}' is not empty.\n")
        return EXIT_ERROR
    ts = _parse_datetime(args.to_datetime) if args.to_datetime is not None else None
    if args.all_topics:
        # listShareGroupOffsets: the partitions the group has state for (of topics that exist:
        # one whose id names no partition of the tree is left out, as Kafka leaves out a
        # deleted topic)
        scope = [(r.topic, r.partition) for r in info.partitions if r.topic != r.topic_id]
    else:
        found = _share_topic_partitions(args, logs, err)
        if found is None:
            return EXIT_ERROR
        scope = found
    scope = sorted(dict.fromkeys(scope))
    held = set(logs.partitions())
    missing = [f"{t}-{p}" for t, p in scope if (t, p) not in held]
    if missing:
        # OffsetsUtils.checkAllTopicPartitionsValid
        return _share_failed(f'The partitions "{",".join(missing)}" do not exist', err)
    plan: dict[tuple[str, int], int] = {}
    for t, p in scope:
        log = logs.log(t, p)
        if args.to_earliest:
            plan[(t, p)] = log.log_start_offset
        elif args.to_latest:
            plan[(t, p)] = logs.high_watermark(t, p)
        else:
            assert ts is not None
            offset = log.offset_for_timestamp(ts)
            if offset is None:
                err.write(f"\nWarn: Partition {p} from topic {t} is empty. Falling back to "
                          "latest known offset.\n")
                offset = logs.high_watermark(t, p)
            plan[(t, p)] = offset
    if args.execute:
        _write_share_offsets(args, logs, manager, shares, info, plan)
    if args.json:
        out.write(json.dumps({"group": group, "type": "share", "executed": bool(args.execute),
                              "offsets": [{"topic": t, "partition": p, "new_offset": o}
                                          for (t, p), o in plan.items()]}) + "\n")
        return EXIT_OK
    g = max(15, len(group))
    w = max([15] + [len(t) for t, _ in plan])
    fmt = f"\n%-{g}s %-{w}s %-10s %s"
    out.write(fmt % ("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET")
              + "".join(fmt % (group, t, p, o) for (t, p), o in plan.items()) + "\n")
    return EXIT_OK


def _new_state_partition(args: argparse.Namespace, logs: Any, shares: dict[str, Any],
                         key: tuple[str, str, int]) -> int:
    """The ``__share_group_state`` partition of a key with no state yet (Kafka's
    ``partitionFor`` over the topic's partition count: the count kafkalog created it with,
    else the partitions in the tree, checked against where the stored keys were found)."""
    from .share.state_topic import SHARE_STATE_TOPIC, partition_for

    held = sorted(p for t, p in logs.partitions() if t == SHARE_STATE_TOPIC)
    if not held:
        raise KafkaLogError(f"{SHARE_STATE_TOPIC} is not in {args.log_dir}: no partition to "
                            f"write the state of share group '{key[0]}' to")
    n = logs.declared_partitions(SHARE_STATE_TOPIC) or len(held)
    stored = [((g, r.topic_id, r.partition), r.state_partition)
              for g, i in shares.items() for r in i.partitions if r.state_partition is not None]
    if (logs.declared_partitions(SHARE_STATE_TOPIC) is None and held != list(range(n))) or any(
            partition_for(*k, n) != q for k, q in stored):
        raise KafkaLogError(f"{args.log_dir} holds {len(held)} {SHARE_STATE_TOPIC} partitions, "
                            "not all of the topic's (its stored keys do not hash over that "
                            f"many): the state of share group '{key[0]}' cannot be placed")
    target = partition_for(*key, n)
    if target not in held:
        raise KafkaLogError(f"{SHARE_STATE_TOPIC}-{target} is not in {args.log_dir}: the state "
                            f"of share group '{key[0]}' cannot be written")
    return target


def _write_share_offsets(args: argparse.Namespace, logs: Any, manager: Any,
                         shares: dict[str, Any], info: Any,
                         plan: dict[tuple[str, int], int]) -> None:
    """``alterShareGroupOffsets`` as Kafka's share coordinator stores it: per partition one
    ShareSnapshot record (snapshot epoch: the stored one + 1, or 0 for a new key; leader
    epoch: the partition's latest in its leader-epoch cache, else 0; the new start offset; no
    state batches: what was in flight is forgotten), in the ``__share_group_state`` partition
    the key's state was found in (else Kafka's ``partitionFor``); one batch per partition. Then
    the group's record 15 lists the partitions as initialized (and a group without record 11
    gets one, epoch 1), as Kafka's group coordinator leaves them."""
    from ..records.record import Record
    from .share.state_topic import SHARE_STATE_TOPIC, layout_for_new_keys, snapshot_record

    stored = {(r.topic_id, r.partition): r for r in info.partitions}
    # a Kafka 4.0 cluster's keys are written in 4.0's shape (4.1 changed it, same version)
    new_key_layout = layout_for_new_keys(r.layout for g in shares.values() for r in g.partitions)
    now = logs._clock.milliseconds()
    batches: dict[int, list[Any]] = {}
    for (t, p), offset in plan.items():
        tid = logs.topic_id(t)
        if tid is None:
            raise KafkaLogError(f"{t}-{p} has no topic id (partition.metadata) in "
                                f"{args.log_dir}: its share state cannot be keyed")
        r = stored.get((str(tid), p))
        if r is not None and r.state_partition is not None:
            target, epoch, layout = r.state_partition, r.snapshot_epoch + 1, r.layout
        else:
            target, epoch, layout = _new_state_partition(
                args, logs, shares, (args.group, str(tid), p)), 0, new_key_layout
        entries = logs.log(t, p).leader_epoch_entries
        k, v = snapshot_record(args.group, str(tid), p, epoch=epoch,
                               leader_epoch=entries[-1][0] if entries else 0,
                               start_offset=offset, batches=[], timestamp_ms=now, layout=layout)
        batches.setdefault(target, []).append(Record(k, v, now))
    for target, records in sorted(batches.items()):
        logs.log(SHARE_STATE_TOPIC, target).append(records)
    # Kafka's alterShareGroupOffsets makes the partitions initialized in the group's
    # ShareGroupStatePartitionMetadata (record 15; the group's record 11 too for a new group)
    from .share import offline

    before = offline.coordinator_state(logs).get(args.group)
    initialized = {tid: set(ps) for tid, ps in (before[1] if before else {}).items()}
    for t, p in plan:
        initialized.setdefault(str(logs.topic_id(t)), set()).add(p)
    epoch = before[0] if before is not None and before[0] else 1
    group_records = offline.coordinator_records(args.group, before, epoch, initialized,
                                                offline.topic_names(logs))
    if group_records and manager.owns(args.group):
        manager.write_records(args.group, group_records)
    elif group_records:
        logger.warning("__consumer_offsets-%d is not in %s: share group %s's records 11/15 not "
                       "updated", manager.partition_for(args.group), args.log_dir, args.group)


def _delete_share(args: argparse.Namespace, logs: Any, manager: Any, info: Any,
                  out: IO[str]) -> int:
    """``ShareGroupService.deleteShareGroups`` of one share group, as Kafka's coordinators
    carry it out: a ShareSnapshot tombstone for every state key of the group in
    ``__share_group_state`` (the persister's ``deleteState``; one batch per partition) and,
    when ``__consumer_offsets`` holds ``ShareGroup*`` records of the group (types 9-15, Kafka's
    group coordinator and kafkalog's server write them), a tombstone for each live key,
    in one batch. The caller refuses a group with members unless ``--force`` (Kafka: "Share
    group 'G' is not EMPTY.")."""
    from ..records.record import Record
    from .share import offline
    from .share.state_topic import SHARE_STATE_TOPIC, tombstone_key

    group = args.group
    now = logs._clock.milliseconds()
    batches: dict[int, list[Any]] = {}
    for r in info.partitions:
        if r.state_partition is not None:
            batches.setdefault(r.state_partition, []).append(
                Record(tombstone_key(group, r.topic_id, r.partition), None, now))
    meta = offline.share_record_keys(logs, group)
    if meta:
        # a group's records live in its __consumer_offsets partition: the tombstones go there
        where = {p for p, _t, _key in meta}
        if where != {manager.partition_for(group)}:
            raise KafkaLogError(
                f"share group '{group}': its records are in __consumer_offsets-"
                f"{min(where)}, not in __consumer_offsets-{manager.partition_for(group)} "
                "(--offsets-topic-partitions?)")
        manager.write_records(group, [(key, None) for _p, _t, key in meta])
    for target, records in sorted(batches.items()):
        logs.log(SHARE_STATE_TOPIC, target).append(records)
    if args.json:
        out.write(json.dumps({"deleted": [group], "type": "share",
                              "state_tombstones": sum(map(len, batches.values())),
                              "group_record_tombstones": len(meta)}) + "\n")
    else:
        out.write(f"Deletion of requested share groups ('{group}') was successful.\n")
    return EXIT_OK


# -- plan -------------------------------------------------------------------------------------

def _plan(args: argparse.Namespace, out: IO[str]) -> int:
    counts: dict[str, int] = {}
    topic_ids: dict[str, str] = {}
    if args.log_dir:
        from ..log_dir import LogDir

        with LogDir.open(args.log_dir, read_only=True) as logs:
            for t, _ in logs.partitions():
                counts[t] = counts.get(t, 0) + 1
            for t in counts:
                tid = logs.topic_id(t)
                if tid is not None:
                    topic_ids[t] = str(tid)
    if args.topics:
        for spec in args.topics.split(","):
            name, _, n = spec.partition(":")
            try:
                counts[name.strip()] = int(n)
            except ValueError:
                raise UsageError(f"--topics: expected topic:count, found {spec!r}") from None
    if not counts:
        raise UsageError("--topics (or --log-dir) is required")
    subs: dict[str, list[str]] = {}
    for spec in args.members.split(","):
        name, eq, topics = spec.partition("=")
        subs[name.strip()] = [t for t in topics.split("+") if t] if eq else list(counts)
    owned: dict[str, list[tuple[str, int]]] = {}
    for spec in args.owned:
        name, _, parts = spec.partition("=")
        try:
            owned[name] = [(tp.rsplit(":", 1)[0], int(tp.rsplit(":", 1)[1]))
                           for tp in parts.split("+") if tp]
        except (ValueError, IndexError):
            raise UsageError(f"--owned: expected member=topic:partition+..., found {spec!r}") \
                from None
    try:
        result = assign(args.strategy, subs, counts, owned=owned or None,
                        topic_ids=topic_ids or None)
    except AssignmentError as e:
        raise UsageError(str(e)) from None
    if args.json:
        out.write(json.dumps({"strategy": args.strategy, "assignment": {
            m: [list(tp) for tp in tps] for m, tps in result.items()}}) + "\n")
    else:
        for m, tps in result.items():
            out.write(f"{m} {','.join(f'{t}-{p}' for t, p in tps) or MISSING}\n")
    return EXIT_OK

