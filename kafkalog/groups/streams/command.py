"""``kafkalog groups`` for streams groups: Kafka 4.2's ``kafka-streams-groups.sh``
(``StreamsGroupCommand``) describe, reset-offsets and delete over a stopped broker's log dir.

The text is Kafka's: ``printOffsets`` (``GROUP TOPIC PARTITION OFFSET-LAG``; ``--verbose``
adds the current offset, leader epoch and log end offset), ``printMembers`` (tasks as
``ACTIVE: 0:[0,1]; ``, ``--verbose`` the target assignment, epochs and member protocol) and
``printStates`` (the group's ``__consumer_offsets`` partition in the coordinator's place, as
the consumer group commands here do). Two differences, both where Kafka prints nothing useful
offline:

- an *Empty* group (the application is stopped: the usual case on a stopped broker) gets its
  committed offsets of the topology's source topics and their lag; Kafka's tool lists only
  partitions of the members' active tasks, so it prints no row for a group without members;
- ``--json`` gives everything the tables give, and the members' standby and warmup tasks.

Offsets are the ones ``ListStreamsGroupOffsets`` returns (committed, pending transactional
ones excluded) restricted to the topology's source topics (``getCommittedOffsets``); the log
end offset is the partition's high watermark, a partition without a committed offset lags by
its whole length (log end minus log start), as Kafka computes it.
"""

from __future__ import annotations

import argparse
import json
from typing import IO, Any

from ...decoders.jvm_order import java_hash_map_order, topic_partition_hash
from ...errors import KafkaLogError
from ..topic_partition_spec import parse_topic_spec
from .streams_group import EMPTY_TASKS, StreamsGroup, StreamsGroupMember

__all__ = ["delete", "describe", "reset_offsets"]

EXIT_OK, EXIT_ERROR = 0, 1
MISSING = "-"


def _tp_hash(tp: tuple[str, int]) -> int:
    return topic_partition_hash(*tp)


def _hash_map_order(tps: set[tuple[str, int]]) -> list[tuple[str, int]]:
    """The order of ``getOffsets``' ``HashMap`` (filled from the admin client's result maps,
    themselves ``HashMap``\\ s of the same keys)."""
    return java_hash_map_order(java_hash_map_order(sorted(tps), _tp_hash), _tp_hash)


def committed_input_offsets(manager: Any, group: StreamsGroup) -> dict[tuple[str, int], Any]:
    """``getCommittedOffsets``: the group's committed offsets (with leader epochs) of its
    topology's source topics."""
    sources = set(group.source_topics())
    return {tp: om for tp, om in manager.fetch_offset_metadata(group.group_id).items()
            if tp[0] in sources}


def offset_rows(logs: Any, manager: Any, group: StreamsGroup) -> list[dict[str, Any]]:
    """``getOffsets``: one row per partition of the members' active tasks (an *Empty* group:
    per committed source-topic partition), in Kafka's order."""
    committed = committed_input_offsets(manager, group)
    tps = group.input_partitions() if group.members else set(committed)
    present = set(logs.partitions())
    rows = []
    for tp in _hash_map_order(tps):
        om = committed.get(tp)
        current = None if om is None else om.offset
        epoch = None if om is None or om.leader_epoch is None or om.leader_epoch < 0 \
            else om.leader_epoch
        if tp in present:
            end = logs.high_watermark(*tp)
            start = logs.log(*tp).log_start_offset
            lag = end - (start if current is None else current)
        else:
            end = lag = None
        rows.append({"group": group.group_id, "topic": tp[0], "partition": tp[1],
                     "current_offset": current, "leader_epoch": epoch,
                     "log_end_offset": end, "lag": lag})
    return rows


def _cell(v: Any) -> str:
    return MISSING if v is None else str(v)


def _empty_note(group: StreamsGroup, err: IO[str]) -> None:
    """``maybePrintEmptyGroupState`` (a group found here is never Dead)."""
    if group.state == "Empty":
        err.write(f"\nError: Streams group '{group.group_id}' has no active members.\n")


def _tasks_text(tasks: Any, kind: str) -> str:
    """``prepareTaskType``: ``KIND: sub:[p,p]; `` per subtopology (sorted, as the describe
    response lists them)."""
    parts = [f"{s}:[{','.join(map(str, sorted(ps)))}]; " for s, ps in sorted(tasks.items())]
    return f"{kind}: {''.join(parts)}" if parts else ""


def _assignment_text(m: StreamsGroupMember, target: Any | None) -> str:
    """``getTasksForPrinting``."""
    a = m.assigned_tasks
    text = (_tasks_text(a.active, "ACTIVE") + _tasks_text(a.standby, "STANDBY")
            + _tasks_text(a.warmup, "WARMUP"))
    if target is not None:
        text += (_tasks_text(target.active, "TARGET-ACTIVE")
                 + _tasks_text(target.standby, "TARGET-STANDBY")
                 + _tasks_text(target.warmup, "TARGET-WARMUP"))
    return text


def _tasks_json(tasks: Any) -> dict[str, list[int]]:
    return {s: sorted(ps) for s, ps in sorted(tasks.items())}


def _member_json(group: StreamsGroup, m: StreamsGroupMember) -> dict[str, Any]:
    target = group.target_assignment.get(m.member_id)
    return {
        "member_id": m.member_id, "member_epoch": m.member_epoch,
        "previous_member_epoch": m.previous_member_epoch, "state": m.state,
        "instance_id": m.instance_id, "rack_id": m.rack_id, "client_id": m.client_id,
        "host": m.client_host, "process_id": m.process_id,
        "user_endpoint": None if m.user_endpoint is None else
        f"{m.user_endpoint[0]}:{m.user_endpoint[1]}",
        "client_tags": dict(sorted(m.client_tags.items())),
        "topology_epoch": m.topology_epoch, "rebalance_timeout_ms": m.rebalance_timeout_ms,
        "assignment": {"active": _tasks_json(m.assigned_tasks.active),
                       "standby": _tasks_json(m.assigned_tasks.standby),
                       "warmup": _tasks_json(m.assigned_tasks.warmup)},
        "target_assignment": None if target is None else {
            "active": _tasks_json(target.active), "standby": _tasks_json(target.standby),
            "warmup": _tasks_json(target.warmup)},
    }


def _topic_infos_json(infos: Any) -> list[dict[str, Any]]:
    return [{"name": i.name, "partitions": i.partitions,
             "replication_factor": i.replication_factor,
             "topic_configs": dict(i.topic_configs)} for i in sorted(infos, key=lambda i: i.name)]


def topology_json(group: StreamsGroup) -> dict[str, Any] | None:
    """The topology as StreamsGroupDescribe lists it (``asStreamsGroupDescribeTopology``:
    subtopologies by id, topics sorted by name)."""
    topo = group.topology
    if topo is None:
        return None
    return {"epoch": topo.epoch, "subtopologies": [{
        "subtopology_id": sid, "source_topics": sorted(sub.source_topics),
        "source_topic_regex": list(sub.source_topic_regex),
        "repartition_sink_topics": sorted(sub.repartition_sink_topics),
        "repartition_source_topics": _topic_infos_json(sub.repartition_source_topics),
        "state_changelog_topics": _topic_infos_json(sub.state_changelog_topics),
    } for sid, sub in sorted(topo.subtopologies.items())]}


def _group_json(manager: Any, group: StreamsGroup) -> dict[str, Any]:
    topo = group.topology
    return {
        "group": group.group_id, "type": "streams", "state": group.state,
        "group_epoch": group.group_epoch,
        "target_assignment_epoch": group.target_assignment_epoch,
        "topology_epoch": None if topo is None else topo.epoch,
        "validated_topology_epoch": group.validated_topology_epoch,
        "coordinator": f"__consumer_offsets-{manager.partition_for(group.group_id)}",
        "source_topics": group.source_topics(),
        "internal_topics": group.internal_topics(),
        "num_members": len(group.members),
        "topology": topology_json(group),
    }


def describe(args: argparse.Namespace, logs: Any, manager: Any, group: StreamsGroup,
             out: IO[str], err: IO[str]) -> int:
    """``describeGroups`` for one streams group: ``--members``, ``--state`` or the offsets
    (the default), each with ``--verbose``."""
    if args.members:
        return _members(args, manager, group, out, err)
    if args.state:
        return _state(args, manager, group, out, err)
    rows = offset_rows(logs, manager, group)
    if args.json:
        doc = _group_json(manager, group)
        doc["partitions"] = rows
        out.write(json.dumps(doc) + "\n")
        return EXIT_OK
    _empty_note(group, err)
    if not rows:
        return EXIT_OK      # (Kafka prints no table for a group without rows)
    g = max(15, len(group.group_id))
    t = max([15] + [len(r["topic"]) for r in rows])
    text = ""
    if not args.verbose:
        fmt = f"%-{g}s %-{t}s %-10s %s\n"
        text += fmt % ("GROUP", "TOPIC", "PARTITION", "OFFSET-LAG")
        for r in rows:
            text += fmt % (r["group"], r["topic"], r["partition"], _cell(r["lag"]))
    else:
        fmt = f"%-{g}s %-{t}s %-10s %-15s %-15s %-15s %-15s\n"
        text += fmt % ("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LEADER-EPOCH",
                       "LOG-END-OFFSET", "OFFSET-LAG")
        for r in rows:
            text += fmt % (r["group"], r["topic"], r["partition"], _cell(r["current_offset"]),
                           _cell(r["leader_epoch"]), _cell(r["log_end_offset"]),
                           _cell(r["lag"]))
    out.write(text)
    missing = [f"{r['topic']}-{r['partition']}" for r in rows if r["log_end_offset"] is None]
    if missing:
        err.write(f"note: {', '.join(missing)} not in {args.log_dir}: no log end offset or lag "
                  "for them\n")
    return EXIT_OK


def _members(args: argparse.Namespace, manager: Any, group: StreamsGroup, out: IO[str],
             err: IO[str]) -> int:
    """``printMembers`` (nothing at all for a group without members, as Kafka)."""
    members = list(group.members.values())
    if args.json:
        doc = _group_json(manager, group)
        doc["members"] = [_member_json(group, m) for m in members]
        out.write(json.dumps(doc) + "\n")
        return EXIT_OK
    if not members:
        return EXIT_OK
    g = max(15, len(group.group_id))
    mw = max([15] + [len(m.member_id) for m in members])
    hw = max([15] + [len(m.process_id) for m in members])
    cw = max([15] + [len(m.client_id) for m in members])
    text = ""
    if not args.verbose:
        fmt = f"%-{g}s %-{mw}s %-{hw}s %-{cw}s %s\n"
        text += fmt % ("GROUP", "MEMBER", "PROCESS", "CLIENT-ID", "ASSIGNMENTS")
        for m in members:
            text += fmt % (group.group_id, m.member_id, m.process_id, m.client_id,
                           _assignment_text(m, None))
    else:
        # (Kafka's format has no space between TOPOLOGY-EPOCH and MEMBER)
        fmt = f"%-{g}s %-25s %-15s%-{mw}s %-15s %-15s %-{hw}s %-{cw}s %s\n"
        text += fmt % ("GROUP", "TARGET-ASSIGNMENT-EPOCH", "TOPOLOGY-EPOCH", "MEMBER",
                       "MEMBER-PROTOCOL", "MEMBER-EPOCH", "PROCESS", "CLIENT-ID", "ASSIGNMENTS")
        topology_epoch = -1 if group.topology is None else group.topology.epoch
        for m in members:
            target = group.target_assignment.get(m.member_id)
            text += fmt % (group.group_id, group.target_assignment_epoch, topology_epoch,
                           m.member_id, "streams", m.member_epoch, m.process_id, m.client_id,
                           _assignment_text(m, target if target is not None else
                                            EMPTY_TASKS))
    out.write(text)
    return EXIT_OK


def _state(args: argparse.Namespace, manager: Any, group: StreamsGroup, out: IO[str],
           err: IO[str]) -> int:
    """``printStates``."""
    doc = _group_json(manager, group)
    if args.json:
        out.write(json.dumps(doc) + "\n")
        return EXIT_OK
    _empty_note(group, err)
    g = max(15, len(group.group_id))
    coordinator = doc["coordinator"]
    c = max(25, len(coordinator))
    if not args.verbose:
        fmt = f"%-{g}s %-{c}s %-25s %s\n"
        out.write(fmt % ("GROUP", "COORDINATOR (ID)", "STATE", "#MEMBERS")
                  + fmt % (group.group_id, coordinator, group.state, len(group.members)))
    else:
        fmt = f"%-{g}s %-{c}s %-25s %-15s %-25s %s\n"
        out.write(fmt % ("GROUP", "COORDINATOR (ID)", "STATE", "GROUP-EPOCH",
                         "TARGET-ASSIGNMENT-EPOCH", "#MEMBERS")
                  + fmt % (group.group_id, coordinator, group.state, group.group_epoch,
                           group.target_assignment_epoch, len(group.members)))
    return EXIT_OK


def reset_scope(args: argparse.Namespace, manager: Any, group: StreamsGroup,
                err: IO[str]) -> list[tuple[str, int]] | None:
    """``getPartitionsToReset``: ``--all-topics`` (``--all-input-topics``) the committed
    source-topic partitions; ``--topic`` (``--input-topic``) the given partitions, all of which
    must have a committed offset of the group (``filterExistingGroupTopics``: else Kafka's
    error and nothing is reset, None)."""
    committed = manager.fetch_offsets(group.group_id)
    if args.all_topics:
        sources = set(group.source_topics())
        return sorted(tp for tp in committed if tp[0] in sources)
    tps: list[tuple[str, int]] = []
    for spec in args.topic:
        topic, parts = parse_topic_spec(spec)
        if parts is not None:
            tps.extend((topic, p) for p in parts)
        else:
            tps.extend(sorted(tp for tp in committed if tp[0] == topic) or [(topic, -1)])
    if not all(tp in committed for tp in tps):
        err.write(f"\nError: One or more topics are not part of the group "
                  f"'{group.group_id}'.\n")
        return None
    return sorted(dict.fromkeys(tps))


def reset_offsets(args: argparse.Namespace, logs: Any, manager: Any, group: StreamsGroup,
                  planned_offsets: Any, show_plan: Any, out: IO[str], err: IO[str]) -> int:
    """``resetOffsets`` for one streams group: only an inactive (*Empty*) group; the plan
    (``planned_offsets``: the scenario over :func:`reset_scope`, or ``--from-file``'s) is
    shown (``show_plan``), written with ``--execute``, and with
    ``--delete-all-internal-topics`` the group's internal topics are deleted from the tree."""
    if group.state != "Empty" and not args.force:
        err.write(f"\nError: Assignments can only be reset if the group '{group.group_id}' is "
                  f"inactive, but the current state is {group.state}.\n")
        return EXIT_ERROR
    scope = [] if args.from_file else reset_scope(args, manager, group, err)
    if scope is None:
        return EXIT_ERROR
    committed = {tp: om.offset for tp, om in committed_input_offsets(manager, group).items()}
    plan = planned_offsets(args, logs, group.group_id, scope, committed, err, err)
    deleted: list[str] = []
    if args.execute:
        doomed = _internal_topics_named(group, args.delete_internal_topic) \
            if args.delete_internal_topic else group.internal_topics() \
            if args.delete_all_internal_topics else []
        manager.commit_offsets(group.group_id, plan)
        deleted = _delete_internal_topics(logs, group, err, doomed)
    show_plan(args, group.group_id, plan, out)
    if deleted:
        err.write(f"note: deleted the internal topics {', '.join(deleted)}\n")
    return EXIT_OK


def _internal_topics_named(group: StreamsGroup, named: list[str]) -> list[str]:
    """``--delete-internal-topic``'s topics, each of which must be one of the group's internal
    topics (stricter than Kafka, which deletes any topic named)."""
    internal = group.internal_topics()
    foreign = [t for t in named if t not in internal]
    if foreign:
        raise KafkaLogError(
            f"--delete-internal-topic: {', '.join(foreign)} is not an internal topic of "
            f"streams group '{group.group_id}' (its internal topics: "
            f"{', '.join(internal) or 'none'}); nothing reset or deleted")
    return list(dict.fromkeys(named))


def _delete_internal_topics(logs: Any, group: StreamsGroup, err: IO[str],
                            topics: list[str]) -> list[str]:
    """``topics`` (internal topics of the group) that are in the tree, deleted
    (``kafka-topics.sh --delete`` offline); the others named on ``err``."""
    present = {t for t, _ in logs.partitions()}
    deleted = []
    for topic in topics:
        if topic in present:
            logs.delete_topic(topic)
            deleted.append(topic)
        else:
            err.write(f"note: internal topic {topic} of group '{group.group_id}' is not in "
                      "the tree\n")
    return deleted


def delete(args: argparse.Namespace, logs: Any, manager: Any, group: StreamsGroup,
           out: IO[str], err: IO[str]) -> int:
    """``deleteGroups`` for one streams group: refused unless *Empty*
    (``preAdminCallChecks``); its offsets and records tombstoned; with
    ``--delete-all-internal-topics`` its internal topics deleted from the tree."""
    gid = group.group_id
    if group.state != "Empty" and not args.force:
        err.write(f"\nError: Deletion of some streams groups failed:\n* Group '{gid}' could not "
                  f"be deleted due to: org.apache.kafka.common.errors.GroupNotEmptyException: "
                  f"Streams group '{gid}' is not EMPTY.\n")
        return EXIT_ERROR
    internal = group.internal_topics()
    manager.delete_group(gid, force=args.force)
    deleted = _delete_internal_topics(logs, group, err, internal) \
        if getattr(args, "delete_all_internal_topics", False) else []
    if args.json:
        out.write(json.dumps({"deleted": [gid], "deleted_internal_topics": deleted}) + "\n")
        return EXIT_OK
    out.write(f"Deletion of requested streams groups ('{gid}') was successful.\n")
    if getattr(args, "delete_all_internal_topics", False) and internal:
        out.write(f"Deletion of associated internal topics of the streams groups ('{gid}') was "
                  "successful.\n")
    return EXIT_OK
