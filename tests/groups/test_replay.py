"""The column-wise replay of plain batches equals applying the records one by one.

``GroupMetadataManager._replay_log`` folds runs of plain batches per key with Arrow; the
reference below applies every record in offset order (``_replay_batch``, the path transactional
and control batches take). Hypothesis writes random histories: commits and tombstones of a few
keys, group metadata records and group tombstones, transactional commits ended by COMMIT or ABORT
markers, KIP-848 consumer group records (member subscriptions, current and target
assignments, epochs, and their tombstones), in batches of random sizes; both managers must end
in the same state. The fold's size thresholds are lowered to 0 so that every plain stretch is
folded.
"""

from __future__ import annotations

from pathlib import Path
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalog import LogDir, ManualClock, Record
from kafkalog.groups import GroupMetadataManager
from kafkalog.groups import metadata_manager as mm
from kafkalog.groups.modern import records as cgr
from kafkalog.groups.modern.consumer_group import ConsumerGroupMember, MemberState, ResolvedRegex
from kafkalog.groups.records import (
    GroupMetadata,
    OffsetAndMetadata,
    group_metadata_record,
    group_metadata_tombstone,
    offset_commit_record,
    offset_commit_tombstone,
)
from kafkalog.records.builder import encode_batch

T0 = 1_700_000_000_000
GROUPS = ["g1", "g2", "g3"]


class OneByOne(GroupMetadataManager):
    """Every batch record by record (the reference)."""

    def _replay_plain(self, data, p0, p1, start, log):  # type: ignore[no-untyped-def]
        from kafkalog import iter_batches

        for batch in iter_batches(data[p0:p1]):
            if batch.last_offset >= start:
                self._replay_batch(batch, log, start)


def _consumer_group_record(draw: st.DrawFn, group: str) -> tuple[bytes, bytes | None]:
    member = draw(st.sampled_from(["m1", "m2"]))
    parts = {"AAAAAAAAAAAAAAAAAAAAAQ": frozenset(draw(st.sets(st.integers(0, 3), max_size=3)))}
    kind = draw(st.sampled_from(["sub", "current", "target", "epoch", "aepoch", "msub",
                                 "mcurrent", "mtarget", "gepoch", "regex", "mregex"]))
    if kind == "regex":
        return cgr.regex_record(group, draw(st.sampled_from(["a.*", "b"])), ResolvedRegex(
            frozenset(draw(st.sets(st.sampled_from("ab"), max_size=2))),
            draw(st.integers(0, 3)), T0))
    if kind == "mregex":
        return cgr.regex_tombstone(group, draw(st.sampled_from(["a.*", "b"])))
    if kind == "sub":
        return cgr.member_subscription_record(group, ConsumerGroupMember(
            member, subscribed_topic_names=tuple(draw(st.sets(st.sampled_from("ab"),
                                                             min_size=1))),
            subscribed_topic_regex=draw(st.sampled_from([None, "", "a.*"])),
            client_id=draw(st.sampled_from(["c1", "c2"]))))
    if kind == "current":
        return cgr.current_assignment_record(group, ConsumerGroupMember(
            member, draw(st.integers(0, 5)), draw(st.integers(-1, 4)),
            draw(st.sampled_from(list(MemberState))), assigned_partitions=parts))
    if kind == "target":
        return cgr.target_assignment_record(group, member, parts)
    if kind == "epoch":
        return cgr.group_epoch_record(group, draw(st.integers(0, 9)))
    if kind == "aepoch":
        return cgr.target_assignment_epoch_record(group, draw(st.integers(0, 9)))
    if kind == "msub":
        return cgr.member_subscription_tombstone(group, member)
    if kind == "mcurrent":
        return cgr.current_assignment_tombstone(group, member)
    if kind == "mtarget":
        return cgr.target_assignment_tombstone(group, member)
    return cgr.group_epoch_tombstone(group)


def _record(draw: st.DrawFn) -> tuple[bytes, bytes | None]:
    group = draw(st.sampled_from(GROUPS))
    kind = draw(st.sampled_from(["commit", "commit", "commit", "tomb", "meta", "gtomb",
                                 "modern", "modern"]))
    if kind == "modern":
        return _consumer_group_record(draw, group)
    tp = (draw(st.sampled_from(["a", "b"])), draw(st.integers(0, 1)))
    if kind == "commit":
        return offset_commit_record(group, *tp, OffsetAndMetadata(draw(st.integers(0, 99)),
                                                                  commit_timestamp=T0))
    if kind == "tomb":
        return offset_commit_tombstone(group, *tp)
    if kind == "meta":
        return group_metadata_record(GroupMetadata(group, "consumer", draw(st.integers(0, 9)),
                                                   None, None, T0, ()))
    return group_metadata_tombstone(group)


@st.composite
def histories(draw: st.DrawFn) -> list[tuple]:
    steps = []
    for _ in range(draw(st.integers(1, 25))):
        kind = draw(st.sampled_from(["plain", "plain", "plain", "txn", "marker"]))
        if kind == "marker":
            steps.append(("marker", draw(st.sampled_from([1, 2])), draw(st.booleans())))
        else:
            recs = [_record(draw) for _ in range(draw(st.integers(1, 6)))]
            if kind == "txn":
                recs = [r for r in recs if r[0][:2] == b"\x00\x01" and r[1] is not None] or \
                    [offset_commit_record("g1", "a", 0, OffsetAndMetadata(5, commit_timestamp=T0))]
                steps.append(("txn", draw(st.sampled_from([1, 2])), recs))
            else:
                steps.append(("plain", recs))
    return steps


def _state(m: GroupMetadataManager) -> tuple:
    groups = {g: m.group_metadata(g) for g in m.list_groups()}
    offsets = {g: m.fetch_offset_metadata(g) for g in m.list_groups()}
    pending = {g: sorted(m.open_transactions(g)) for g in m.list_groups()}
    modern = {}
    for g in m.list_groups():
        cg = m.consumer_group(g)
        if cg is not None:
            modern[g] = (cg.group_epoch, cg.assignment_epoch, dict(cg.members),
                         dict(cg.target_assignment), dict(cg.subscription_metadata),
                         dict(cg.static_members), dict(cg._partition_epochs),
                         dict(cg.subscribed_regexes), dict(cg.resolved_regexes))
    return groups, offsets, pending, modern


@settings(max_examples=150, deadline=None)
@given(histories())
def test_columnar_replay_equals_record_by_record(tmp_path_factory, steps: list[tuple]) -> None:
    root: Path = tmp_path_factory.mktemp("replay")
    clock = ManualClock(T0)
    with LogDir.open(root, {"offsets.topic.num.partitions": "1"}, clock=clock) as logs:
        GroupMetadataManager(logs)
        log = logs.log("__consumer_offsets", 0)
        open_txn: set[int] = set()
        for step in steps:
            if step[0] == "plain":
                log.append_batches(encode_batch(
                    [Record(k, v, T0) for k, v in step[1]], base_offset=log.log_end_offset,
                    base_sequence=0, partition_leader_epoch=0))
            elif step[0] == "txn":
                pid = step[1]
                log.append_batches(encode_batch(
                    [Record(k, v, T0) for k, v in step[2]], base_offset=log.log_end_offset,
                    producer_id=pid, producer_epoch=0, base_sequence=0, transactional=True,
                    partition_leader_epoch=0))
                open_txn.add(pid)
            elif step[1] in open_txn:
                (log.commit_transaction if step[2] else log.abort_transaction)(step[1], 0)
                open_txn.discard(step[1])
        with mock.patch.object(mm, "_FOLD_MIN_BYTES", 0), \
                mock.patch.object(mm, "_FOLD_MIN_ROWS", 0):
            fast = GroupMetadataManager(logs)
        slow = OneByOne(logs)
        assert _state(fast) == _state(slow)
