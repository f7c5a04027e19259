"""``kafkalog groups``: Kafka's ``kafka-consumer-groups.sh`` over a ``log.dirs`` tree, offline.

Read-only unless a write is asked (``reset-offsets --execute``, ``delete``). The tree's
``__consumer_offsets`` is replayed by :class:`~kafkalog.groups.GroupMetadataManager`; log end
offsets come from the partitions present in the tree.

=====================================================  ==========================================
``kafkalog groups list LOGDIR``                        every group
``kafkalog groups describe LOGDIR --group G``          Kafka's columns: GROUP TOPIC PARTITION
                                                       CURRENT-OFFSET LOG-END-OFFSET LAG
                                                       CONSUMER-ID HOST CLIENT-ID
``kafkalog groups reset-offsets LOGDIR --group G``     ``--topic T[:P,P]`` or ``--all-topics`` and
                                                       one of ``--to-earliest``, ``--to-latest``,
                                                       ``--to-offset N``, ``--to-datetime ISO``,
                                                       ``--shift-by N``, ``--by-duration D``;
                                                       a dry run unless ``--execute``
``kafkalog groups delete LOGDIR --group G``            tombstones for the group and its offsets
``kafkalog groups plan --strategy S --members ...``    what an assignor would do
``--json``                                             JSON instead of Kafka's text, everywhere
=====================================================  ==========================================

Texts follow ``ConsumerGroupCommand`` (tools, Kafka 3.9): column widths, ``-`` for a missing
value, "Consumer group 'G' has no active members." on stderr. Where a committed partition is not
in the tree, LOG-END-OFFSET and LAG are ``-`` and a note on stderr says so. Offline there is no
live membership: a group whose last metadata lists members is *Stable* as a restarted broker
would load it, and Kafka refuses to reset or delete it; ``--force`` does it anyway (for a tree
whose consumers are known to be gone).

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
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from ..errors import KafkaLogError
from ..usage import ArgumentParser, UsageError
from .assignors import STRATEGIES, assign
from .errors import AssignmentError, GroupIdNotFoundError

__all__ = ["main", "build_parser", "parse_duration"]

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
MISSING = "-"




def build_parser() -> argparse.ArgumentParser:
    """The ``kafkalog groups`` argument parser."""
    p = ArgumentParser(prog="kafkalog groups",
                description="Consumer groups of a log.dirs tree (kafka-consumer-groups.sh, "
                            "offline).")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=ArgumentParser)

    def with_tree(name: str, help_text: str) -> argparse.ArgumentParser:
        s = sub.add_parser(name, help=help_text)
        s.add_argument("log_dir", help="a broker log directory (log.dirs entry)")
        s.add_argument("--json", action="store_true", help="print JSON")
        s.add_argument("--offsets-topic-partitions", type=int, default=None, metavar="N",
                       help="offsets.topic.num.partitions (default 50)")
        return s

    with_tree("list", "List the groups.")
    d = with_tree("describe", "Describe a group's offsets, lag and members.")
    d.add_argument("--group", required=True)
    r = with_tree("reset-offsets", "Reset a group's committed offsets (dry run by default).")
    r.add_argument("--group", required=True)
    scope = r.add_mutually_exclusive_group(required=True)
    scope.add_argument("--topic", action="append", help="T or T:P,P (repeatable)")
    scope.add_argument("--all-topics", action="store_true",
                       help="every topic the group has offsets for")
    how = r.add_mutually_exclusive_group(required=True)
    how.add_argument("--to-earliest", action="store_true")
    how.add_argument("--to-latest", action="store_true")
    how.add_argument("--to-current", action="store_true")
    how.add_argument("--to-offset", type=int)
    how.add_argument("--to-datetime", help="YYYY-MM-DDTHH:mm:SS.sss (UTC unless an offset)")
    how.add_argument("--shift-by", type=int)
    how.add_argument("--by-duration", help="ISO-8601 duration, e.g. PT1H30M or P2DT3H")
    mode = r.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", action="store_true", help="only show (the default)")
    mode.add_argument("--execute", action="store_true", help="write the new offsets")
    r.add_argument("--force", action="store_true",
                   help="also when the group's last metadata lists members")
    x = with_tree("delete", "Delete a group and its offsets.")
    x.add_argument("--group", required=True)
    x.add_argument("--force", action="store_true",
                   help="also when the group's last metadata lists members")
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
    try:
        args = parser.parse_args(list(sys.argv[2:] if argv is None else argv))
    except UsageError as e:
        err.write(f"{e}\n")
        return EXIT_USAGE
    except SystemExit as e:         # --help
        return int(e.code or 0) if isinstance(e.code, int) else EXIT_USAGE
    if args.command is None:
        parser.print_usage(err)
        err.write("kafkalog groups: error: a command is required (list, describe, "
                  "reset-offsets, delete, plan)\n")
        return EXIT_USAGE
    try:
        if args.command == "plan":
            return _plan(args, out)
        return _with_tree(args, out, err)
    except UsageError as e:
        err.write(f"kafkalog groups {args.command}: error: {e}\n")
        return EXIT_USAGE
    except (KafkaLogError, OSError) as e:
        err.write(f"kafkalog groups {args.command}: {e}\n")
        return EXIT_ERROR


# ---------------------------------------------------------------------------------------------

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
    writable = args.command == "delete" or (args.command == "reset-offsets" and args.execute)
    logs, manager = _open(args, writable)
    try:
        if args.command == "list":
            groups = manager.list_groups()
            if args.json:
                out.write(json.dumps({"groups": groups}) + "\n")
            else:
                out.writelines(g + "\n" for g in groups)
            return EXIT_OK
        if args.command == "describe":
            return _describe(args, logs, manager, out, err)
        if args.command == "reset-offsets":
            return _reset(args, logs, manager, out, err)
        return _delete(args, manager, out, err)
    finally:
        logs.close()


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
        topics = sorted({t for t, _ in committed})
        return sorted(tp for tp in set(committed) | {
            (t, p) for t, p in logs.partitions() if t in topics})
    tps: list[tuple[str, int]] = []
    for spec in args.topic:
        topic, _, parts = spec.partition(":")
        if parts:
            try:
                tps.extend((topic, int(p)) for p in parts.split(","))
            except ValueError:
                raise UsageError(f"--topic {spec!r}: partitions must be integers") from None
        else:
            found = [(t, p) for t, p in logs.partitions() if t == topic]
            found += [tp for tp in committed if tp[0] == topic and tp not in found]
            if not found:
                raise UsageError(f"--topic {topic!r}: no partition of it in {args.log_dir}")
            tps.extend(found)
    return sorted(dict.fromkeys(tps))


def _new_offset(args: argparse.Namespace, logs: Any, tp: tuple[str, int],
                committed: dict, now: int) -> int:
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
        target = committed.get(tp, latest) + args.shift_by
    else:
        ts = _parse_datetime(args.to_datetime) if args.to_datetime is not None \
            else now - parse_duration(args.by_duration)
        found = log.offset_for_timestamp(ts)
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
    now = logs._clock.milliseconds()
    plan = {tp: _new_offset(args, logs, tp, committed, now) for tp in _scope(args, logs,
                                                                            committed)}
    if args.execute:
        manager.commit_offsets(group, plan)
    if args.json:
        out.write(json.dumps({"group": group, "executed": bool(args.execute),
                              "offsets": [{"topic": t, "partition": p, "new_offset": o}
                                          for (t, p), o in plan.items()]}) + "\n")
    elif plan:
        fmt = "%-30s %-30s %-10s %-15s"
        out.write("\n" + fmt % ("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET") + "\n")
        for (t, p), o in plan.items():
            out.write(fmt % (group, t, p, o) + "\n")
    return EXIT_OK


def _delete(args: argparse.Namespace, manager: Any, out: IO[str], err: IO[str]) -> int:
    from .errors import NonEmptyGroupError

    group = args.group
    try:
        manager.delete_group(group, force=args.force)
    except GroupIdNotFoundError:
        err.write(f"Error: Deletion of some consumer groups failed:\n* Group '{group}' could "
                  "not be deleted due to: GROUP_ID_NOT_FOUND\n")
        return EXIT_ERROR
    except NonEmptyGroupError:
        err.write(f"Error: Deletion of some consumer groups failed:\n* Group '{group}' could "
                  "not be deleted due to: NON_EMPTY_GROUP\n")
        return EXIT_ERROR
    if args.json:
        out.write(json.dumps({"deleted": [group]}) + "\n")
    else:
        out.write(f"Deletion of requested consumer groups ('{group}') was successful.\n")
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

