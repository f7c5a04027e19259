"""KIP-848 consumer groups (ConsumerGroupHeartbeat) in the sans-IO coordinator.

Simulated members behave as a ``group.protocol=consumer`` client does: join with epoch 0 and
an empty owned list, then heartbeat with the epoch last received and the partitions they own
(after revoking what the last response no longer lists). The rules checked are Kafka 4.0's
``GroupMetadataManager.consumerGroupHeartbeat`` and ``ConsumerGroup`` (error codes and
messages included); every scenario also reopens the log dir and checks that the groups replayed
from ``__consumer_offsets`` equal the live ones.
"""

from __future__ import annotations

import contextlib
import io
import random
from pathlib import Path
from typing import Any

import pytest

from kafkalog import LogDir, ManualClock
from kafkalog.cli import main as cli_main
from kafkalog.groups import GroupMetadataManager
from kafkalog.groups.coordinator import GroupCoordinator
from kafkalog.groups.error_codes import ErrorCode
from kafkalog.groups.modern.coordinator import topic_id_for

T0 = 1_700_000_000_000
ORDERS = topic_id_for("orders")
PAYMENTS = topic_id_for("payments")


class Env:
    def __init__(self, root: Path, **config: str) -> None:
        self.root = root
        self.clock = ManualClock(T0)
        self.config = {"offsets.topic.num.partitions": "1", **config}
        self.topics = {"orders": 6, "payments": 2}
        self.open()

    def open(self) -> None:
        self.logs = LogDir.open(self.root, self.config, clock=self.clock)
        self.c = GroupCoordinator(GroupMetadataManager(self.logs), clock=self.clock)
        self.c.update_metadata(self.topics)

    def reopen(self) -> None:
        self.logs.close()
        self.open()

    def hb(self, member: str, epoch: int, owned=None, topics=None, **kw):
        if epoch == 0:
            kw.setdefault("rebalance_timeout_ms", 30_000)
            owned = [] if owned is None else owned
            topics = ["orders"] if topics is None else topics
        return self.c.consumer_group_heartbeat("app", member, epoch, topic_partitions=owned,
                                               subscribed_topic_names=topics, **kw)


class Member:
    """A consumer-protocol client: owns what the coordinator assigned, revokes at once."""

    def __init__(self, env: Env, member_id: str, topics=("orders",),
                 instance_id: str | None = None, regex: str | None = None) -> None:
        self.env, self.id, self.topics = env, member_id, list(topics)
        self.instance_id, self.regex = instance_id, regex
        self.epoch = 0
        self.owned: dict[str, set[int]] = {}
        #: an assignment received but not acted on yet (a slow client)
        self.stashed: dict[str, set[int]] | None = None
        self.step()

    def slow_step(self) -> int:
        """Heartbeat without acting on the response yet (still owning everything)."""
        owned = [(t, sorted(ps)) for t, ps in sorted(self.owned.items()) if ps]
        r = self.env.hb(self.id, self.epoch, owned, instance_id=self.instance_id)
        if r.error_code == 0:
            self.epoch = r.member_epoch
            if r.assignment is not None:
                self.stashed = {t: set(ps) for t, ps in r.assignment}
        return r.error_code

    def step(self) -> None:
        if self.stashed is not None:
            self.owned, self.stashed = self.stashed, None
        owned = [(t, sorted(ps)) for t, ps in sorted(self.owned.items()) if ps]
        extra = {"subscribed_topic_regex": self.regex} if self.epoch == 0 and self.regex \
            else {}
        r = self.env.hb(self.id, self.epoch, owned, self.topics if self.epoch == 0 else None,
                        instance_id=self.instance_id, **extra)
        assert r.error_code == 0, r
        self.epoch = r.member_epoch
        if r.assignment is not None:
            self.owned = {t: set(ps) for t, ps in r.assignment}

    def leave(self) -> None:
        r = self.env.c.consumer_group_heartbeat("app", self.id, -1, instance_id=self.instance_id)
        assert (r.error_code, r.member_epoch) == (0, -1)

    def bounce(self, new_id: str) -> None:
        """A static member restarting: leaves with -2, rejoins under a new member id."""
        r = self.env.c.consumer_group_heartbeat("app", self.id, -2, instance_id=self.instance_id)
        assert r.error_code == 0, r
        self.id, self.epoch, self.stashed = new_id, 0, None
        self.step()


def settle(members: list[Member], rounds: int = 6) -> None:
    for _ in range(rounds):
        for m in members:
            m.step()


def assert_no_partition_held_twice(env: Env, context: object) -> None:
    """No partition is held (assigned or being revoked) by two members of the group."""
    group = env.c.manager.consumer_group("app")
    if group is None:
        return
    seen: dict[tuple[str, int], str] = {}
    for mid, m in group.members.items():
        for a in (m.assigned_partitions, m.partitions_pending_revocation):
            for t, ps in a.items():
                for p in ps:
                    assert seen.setdefault((t, p), mid) == mid, context


def dump_offsets(env: Env) -> str:
    """``dump-segments --offsets-decoder`` of the group's partition (the log dir closed)."""
    env.logs.close()
    seg = env.root / "__consumer_offsets-0" / "00000000000000000000.log"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli_main(["dump-segments", "--offsets-decoder", "--files", str(seg)]) == 0
    return out.getvalue()


def snapshot(c: GroupCoordinator) -> dict:
    g = c.manager.consumer_group("app")
    if g is None:
        return {}
    return {"epoch": g.group_epoch, "assignment_epoch": g.assignment_epoch, "state": g.state,
            "members": dict(g.members), "target": dict(g.target_assignment),
            "metadata": dict(g.subscription_metadata)}


@pytest.fixture
def env(tmp_path: Path):
    e = Env(tmp_path / "logs")
    yield e
    e.logs.close()


def owned_union(members: list[Member], topic: str = ORDERS) -> list[int]:
    return sorted(p for m in members for p in m.owned.get(topic, ()))


def test_members_share_the_topic_revoking_before_receiving(env):
    a = Member(env, "a")
    assert (a.epoch, owned_union([a])) == (1, list(range(6)))
    assert env.c.group_state("app") == "Stable"
    b = Member(env, "b")
    # b joins at epoch 2 with nothing: a still owns everything until it revokes
    assert (b.epoch, b.owned) == (2, {})
    assert env.c.group_state("app") == "Reconciling"
    a.step()                       # told to keep 3 partitions, at its old epoch
    assert a.epoch == 1 and len(a.owned[ORDERS]) == 3
    a.step()                       # revoked: moves to epoch 2
    assert a.epoch == 2
    b.step()                       # the released partitions are now b's
    assert b.epoch == 2 and owned_union([a, b]) == list(range(6))
    assert not set(a.owned[ORDERS]) & set(b.owned[ORDERS])
    assert env.c.group_state("app") == "Stable"
    before = snapshot(env.c)
    env.reopen()
    assert snapshot(env.c) == before


def test_leave_and_session_timeout_hand_partitions_over(env):
    members = [Member(env, m) for m in "abc"]
    settle(members)
    assert [len(m.owned[ORDERS]) for m in members] == [2, 2, 2]
    members[0].leave()
    settle(members[1:])
    assert owned_union(members[1:]) == list(range(6))
    env.clock.advance(44_000)
    members[1].step()              # b heartbeats; c goes silent
    env.clock.advance(2_000)
    env.c.tick()                   # c's 45 s session expired
    assert list(env.c.manager.consumer_group("app").members) == ["b"]
    settle(members[1:2])
    assert owned_union(members[1:2]) == list(range(6))
    env.clock.advance(45_000)
    env.c.tick()
    assert env.c.group_state("app") == "Empty"


def test_a_member_that_does_not_revoke_is_fenced_after_its_rebalance_timeout(env):
    a = Member(env, "a")
    b = Member(env, "b")
    r = env.hb("a", a.epoch, [(ORDERS, list(range(6)))])   # told to revoke, keeps owning
    assert r.member_epoch == 1 and len(r.assignment[0][1]) == 3
    env.clock.advance(29_999)
    env.hb("a", 1, [(ORDERS, list(range(6)))])
    env.c.tick()
    assert "a" in env.c.manager.consumer_group("app").members
    env.clock.advance(1)
    env.c.tick()                   # 30 s rebalance timeout from the revocation request
    assert list(env.c.manager.consumer_group("app").members) == ["b"]
    r = env.hb("a", 1, [(ORDERS, list(range(6)))])
    assert r.error_code == ErrorCode.UNKNOWN_MEMBER_ID
    settle([b])
    assert owned_union([b]) == list(range(6))


@pytest.mark.parametrize("kw, code, message", [
    ({"member_epoch": 0, "rebalance_timeout_ms": -1}, ErrorCode.INVALID_REQUEST,
     "RebalanceTimeoutMs must be provided in first request."),
    ({"member_epoch": 0, "topic_partitions": [(ORDERS, [1])]}, ErrorCode.INVALID_REQUEST,
     "TopicPartitions must be empty when (re-)joining."),
    ({"member_epoch": 0, "subscribed_topic_names": None}, ErrorCode.INVALID_REQUEST,
     "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining."),
    ({"member_epoch": 0, "member_id": ""}, ErrorCode.INVALID_REQUEST,
     "MemberId can't be empty."),   # v1: the client generates its id (KIP-1082)
    ({"member_epoch": 0, "subscribed_topic_regex": "orders-(?=x)"},
     ErrorCode.INVALID_REGULAR_EXPRESSION, "SubscribedTopicRegex `orders-(?=x)` is not a valid "
     "regular expression: invalid or unsupported Perl syntax."),
    ({"member_epoch": 0, "server_assignor": "sticky"}, ErrorCode.UNSUPPORTED_ASSIGNOR,
     "ServerAssignor sticky is not supported. Supported assignors: uniform, range."),
    ({"member_epoch": 0, "rack_id": ""}, ErrorCode.INVALID_REQUEST, "RackId can't be empty."),
    ({"member_epoch": -3}, ErrorCode.INVALID_REQUEST, "MemberEpoch is invalid."),
    ({"member_epoch": -2}, ErrorCode.INVALID_REQUEST, "InstanceId can't be null."),
    ({"member_epoch": 5, "member_id": ""}, ErrorCode.INVALID_REQUEST,
     "MemberId can't be empty."),
    ({"member_epoch": 3, "member_id": "ghost"}, ErrorCode.GROUP_ID_NOT_FOUND,
     "Consumer group app not found."),
])
def test_invalid_heartbeats_answer_kafkas_errors(env, kw, code, message):
    args = {"member_id": "m", "rebalance_timeout_ms": 30_000, "topic_partitions": [],
            "subscribed_topic_names": ["orders"], **kw}
    r = env.c.consumer_group_heartbeat("app", args.pop("member_id"), args.pop("member_epoch"),
                                       **args)
    assert (r.error_code, r.error_message) == (code, message)
    assert env.c.manager.consumer_group("app") is None    # nothing written


def test_member_epoch_checks(env):
    a = Member(env, "a")
    r = env.hb("a", 7, [])
    assert r.error_code == ErrorCode.FENCED_MEMBER_EPOCH
    assert "greater member epoch (7)" in r.error_message
    b = Member(env, "b")
    settle([a, b])
    assert a.epoch == 2
    # the previous epoch with a subset of the assignment: the bumped response was lost
    assert env.hb("a", 1, [(ORDERS, sorted(a.owned[ORDERS]))]).error_code == 0
    r = env.hb("a", 1, [(ORDERS, list(range(6)))])
    assert r.error_code == ErrorCode.FENCED_MEMBER_EPOCH and "smaller member epoch" in \
        r.error_message
    assert env.hb("zz", 2, []).error_code == ErrorCode.UNKNOWN_MEMBER_ID


def test_response_carries_the_assignment_only_when_it_changed(env):
    a = Member(env, "a")
    owned = [(ORDERS, list(range(6)))]
    r = env.hb("a", a.epoch, owned)
    assert r.assignment is None and r.heartbeat_interval_ms == 5000
    # a full request (what a client sends after an error) always gets it
    r = env.hb("a", a.epoch, owned, ["orders"], rebalance_timeout_ms=30_000)
    assert r.assignment == [(ORDERS, list(range(6)))]


def test_subscription_and_partition_changes_bump_the_group_epoch(env):
    a = Member(env, "a", topics=["orders", "payments"])
    assert a.owned == {ORDERS: set(range(6)), PAYMENTS: {0, 1}}
    group = env.c.manager.consumer_group("app")
    assert (group.group_epoch, group.assignment_epoch) == (1, 1)
    env.c.update_metadata({"orders": 8, "payments": 2})
    a.step()
    assert (group.group_epoch, a.epoch, sorted(a.owned[ORDERS])) == (2, 2, list(range(8)))
    r = env.hb("a", a.epoch, [(ORDERS, list(range(8))), (PAYMENTS, [0, 1])], ["payments"])
    assert group.group_epoch == 3 and sorted(group.subscription_metadata) == ["payments"]
    assert r.member_epoch == 2 and r.assignment == [(PAYMENTS, [0, 1])]   # revoke orders
    a.owned = {t: set(ps) for t, ps in r.assignment}
    a.step()
    assert a.epoch == 3 and a.owned == {PAYMENTS: {0, 1}}


def test_server_assignors_range_and_uniform(env):
    a = Member(env, "a", topics=["orders", "payments"])
    # nobody asks for one: the first of group.consumer.assignors, uniform
    assert env.c.consumer_group_describe(["app"])[0].assignor_name == "uniform"
    r = env.hb("b", 0, topics=["orders", "payments"], server_assignor="range")
    assert r.error_code == 0
    group = env.c.manager.consumer_group("app")
    # the assignor most members ask for (b's is the only vote)
    assert group.preferred_server_assignor(None, None) == "range"
    assert env.c.consumer_group_describe(["app"])[0].assignor_name == "range"
    settle([a])
    # server-side range: per topic, each member a contiguous run (uniform would balance the
    # 8 partitions over the two topics together, sticky to a's: not per topic)
    targets = sorted((sorted(group.target_assignment[m][ORDERS]),
                      sorted(group.target_assignment[m][PAYMENTS])) for m in ("a", "b"))
    assert targets == [([0, 1, 2], [0]), ([3, 4, 5], [1])]


def test_offsets_are_checked_against_the_member_epoch(env):
    a = Member(env, "a")
    c = env.c
    ok = c.offset_commit("app", {("orders", 0): 5}, generation_id=a.epoch, member_id="a")
    assert ok.topics[0].partitions[0].error_code == 0
    stale = c.offset_commit("app", {("orders", 0): 6}, generation_id=a.epoch + 1, member_id="a")
    assert stale.topics[0].partitions[0].error_code == ErrorCode.STALE_MEMBER_EPOCH
    unknown = c.offset_commit("app", {("orders", 0): 6}, generation_id=1, member_id="x")
    assert unknown.topics[0].partitions[0].error_code == ErrorCode.UNKNOWN_MEMBER_ID
    old = c.offset_commit("app", {("orders", 0): 6}, generation_id=a.epoch, member_id="a",
                          api_version=8)
    assert old.topics[0].partitions[0].error_code == ErrorCode.UNSUPPORTED_VERSION
    admin = c.offset_commit("app", {("orders", 0): 6})          # non-empty group: refused
    assert admin.topics[0].partitions[0].error_code == ErrorCode.UNKNOWN_MEMBER_ID
    f = c.offset_fetch("app", member_id="a", member_epoch=a.epoch)
    assert (f.error_code, f.topics[0].partitions[0].committed_offset) == (0, 5)
    assert c.offset_fetch("app", member_id="a", member_epoch=9).error_code == \
        ErrorCode.STALE_MEMBER_EPOCH
    assert c.offset_fetch("app").topics[0].partitions[0].committed_offset == 5   # admin
    a.leave()
    admin = c.offset_commit("app", {("orders", 0): 7})          # empty group: accepted
    assert admin.topics[0].partitions[0].error_code == 0


def test_list_describe_delete(env):
    a = Member(env, "a")
    c = env.c
    listed = c.list_groups().groups
    assert [(g.group_id, g.group_type, g.group_state, g.protocol_type) for g in listed] == \
        [("app", "consumer", "Stable", "consumer")]
    assert c.list_groups(types_filter=["classic"]).groups == []
    assert c.list_groups(states_filter=["stable"], types_filter=["Consumer"]).groups
    d = c.consumer_group_describe(["app", "nope"])
    assert (d[0].group_state, d[0].group_epoch, d[0].assignor_name) == ("Stable", 1, "uniform")
    m = d[0].members[0]
    assert (m.member_id, m.member_epoch, m.subscribed_topic_names) == ("a", 1, ["orders"])
    assert [(t.topic_name, t.partitions) for t in m.assignment] == [("orders", list(range(6)))]
    assert d[1].error_code == ErrorCode.GROUP_ID_NOT_FOUND
    # the classic DescribeGroups looks for a classic group (GroupMetadataManager.describeGroups)
    assert c.describe_groups(["app"]).groups[0].group_state == "Dead"
    c.offset_commit("app", {("orders", 1): 3}, generation_id=1, member_id="a")
    assert c.delete_groups(["app"]).results[0].error_code == ErrorCode.NON_EMPTY_GROUP
    a.leave()
    assert c.delete_groups(["app"]).results[0].error_code == 0
    assert c.list_groups().groups == [] and c.offset_fetch("app").topics == []
    env.reopen()
    assert env.c.list_groups().groups == [] and env.c.manager.fetch_offsets("app") == {}


class ClassicMember:
    """A classic-protocol consumer (JoinGroup v3, the range assignor when it leads, eager:
    owns nothing while it rejoins). ``join`` sends the JoinGroup; ``finish`` collects its
    response (a classic group answers when every member rejoined) and syncs."""

    def __init__(self, env: Env, group: str = "app", topics=("orders",),
                 join: bool = True) -> None:
        from kafkalog.groups import consumer_protocol as cp

        self.env, self.group, self.cp = env, group, cp
        self.topics = list(topics)
        self.member_id, self.generation, self.owned = "", -1, []
        self.handle: int | None = None
        if join:
            self.join()
            rejoin_all([self])

    def join(self) -> None:
        cp = self.cp
        meta = cp.encode_subscription(cp.Subscription(self.topics))
        self.owned = []
        self.handle = self.env.c.join_group(
            self.group, self.member_id, "consumer", [("range", meta)],
            session_timeout_ms=30_000, rebalance_timeout_ms=60_000, api_version=3)

    def joined(self, r: Any) -> None:
        assert r.error_code == 0, r
        self.member_id, self.generation, self.handle = r.member_id, r.generation_id, None
        self.leader = r.leader == self.member_id
        self.members = r.members

    def sync(self) -> None:
        cp, c = self.cp, self.env.c
        plan = {}
        if self.leader:                  # classic group: the leader assigns
            from kafkalog.groups import assign

            subs = {m.member_id: cp.decode_subscription(m.metadata).topics
                    for m in self.members}
            plan = {mid: cp.encode_assignment(cp.Assignment(parts))
                    for mid, parts in assign("range", subs, self.env.topics).items()}
        h = c.sync_group(self.group, self.generation, self.member_id, plan,
                         protocol_type="consumer", protocol_name="range")
        self.sync_handle = h

    def synced(self, s: Any) -> None:
        assert s.error_code == 0, s
        self.owned = self.cp.decode_assignment(s.assignment).partitions if s.assignment else []

    def heartbeat(self) -> int:
        return self.env.c.heartbeat(self.group, self.generation, self.member_id).error_code


def rejoin_all(members: list[ClassicMember]) -> None:
    """Complete the pending JoinGroups of ``members`` (ticking the clock for a classic group's
    join phase), then their SyncGroups (leader first)."""
    c = members[0].env.c
    pending = {m.handle: m for m in members if m.handle is not None}
    for _ in range(5):
        for h, r in c.take_responses():
            if h in pending:
                pending.pop(h).joined(r)
        if not pending:
            break
        members[0].env.clock.advance(3_000)
        c.tick()
    assert not pending, "join did not complete"
    by_sync = {}
    for m in sorted(members, key=lambda m: not m.leader):
        m.sync()
        by_sync[m.sync_handle] = m
    for h, r in c.take_responses():
        if h in by_sync:
            by_sync.pop(h).synced(r)
    assert not by_sync, "sync did not complete"


def rejoin_if_asked(members: list[ClassicMember]) -> None:
    asked = [m for m in members if m.heartbeat() in (ErrorCode.REBALANCE_IN_PROGRESS,
                                                     ErrorCode.ILLEGAL_GENERATION,
                                                     ErrorCode.UNKNOWN_MEMBER_ID)]
    for m in asked:
        m.join()
    if asked:
        rejoin_all(asked)


def test_classic_members_join_a_consumer_group_and_are_reconciled(env):
    """Kafka 4.0's mixed mode: a classic member's JoinGroup is one reconciliation step, its
    SyncGroup returns its current assignment, its Heartbeat says when to rejoin."""
    a = Member(env, "a")
    m = ClassicMember(env)
    group = env.c.manager.consumer_group("app")
    assert group.members[m.member_id].uses_classic_protocol
    assert (m.generation, m.owned) == (2, [])          # a still holds everything
    assert m.heartbeat() == ErrorCode.NONE              # waiting on a's partitions
    settle([a])
    assert m.heartbeat() == ErrorCode.REBALANCE_IN_PROGRESS   # released: rejoin to collect
    m.join()
    rejoin_all([m])
    assert sorted(p for _, p in m.owned) == sorted(
        set(range(6)) - a.owned[ORDERS]) and len(m.owned) == 3
    assert m.heartbeat() == ErrorCode.NONE and group.state == "stable"
    commit = env.c.offset_commit("app", {("orders", m.owned[0][1]): 4},
                                 generation_id=m.generation, member_id=m.member_id, api_version=8)
    assert commit.topics[0].partitions[0].error_code == 0   # (classic members: any version)
    stale = env.c.offset_commit("app", {("orders", 0): 4}, generation_id=1,
                                member_id=m.member_id)
    assert stale.topics[0].partitions[0].error_code == ErrorCode.ILLEGAL_GENERATION
    left = env.c.leave_group("app", m.member_id)
    assert [x.error_code for x in left.members] == [0]
    assert list(group.members) == ["a"]
    before = snapshot(env.c)
    env.reopen()
    assert snapshot(env.c) == before


def test_online_upgrade_and_downgrade(env):
    """A consumer-protocol member joining a classic group converts it (its members keep their
    partitions at their generation); when it leaves, the group is classic again."""
    m1, m2 = ClassicMember(env, join=False), ClassicMember(env, join=False)
    m1.join()
    m2.join()
    rejoin_all([m1, m2])
    generation = m1.generation
    assert env.c.group_state("app") == "Stable"
    owned = {m.member_id: sorted(p for _, p in m.owned) for m in (m1, m2)}
    c = Member(env, "c")
    group = env.c.manager.consumer_group("app")
    assert group is not None and env.c.group("app") is None
    assert {mid: sorted(group.members[mid].assigned_partitions.get(ORDERS, ()))
            for mid in owned} == owned
    assert group.members[m1.member_id].member_epoch == generation
    assert group.group_epoch == generation + 1
    for _ in range(4):
        c.step()
        rejoin_if_asked([m1, m2])
    assert group.state == "stable"
    held = sorted(p for m in (m1, m2) for _, p in m.owned) + sorted(c.owned[ORDERS])
    assert sorted(held) == list(range(6)) and len(c.owned[ORDERS]) == 2
    before = snapshot(env.c)
    env.reopen()
    assert snapshot(env.c) == before
    # the consumer-protocol member leaves: back to a classic group, which rebalances
    c.leave()
    assert env.c.manager.consumer_group("app") is None
    assert env.c.group_state("app") == "PreparingRebalance"
    gm = env.c.manager.group_metadata("app")
    assert {x.member_id for x in gm.members} == {m1.member_id, m2.member_id}
    m1.join()
    m2.join()
    rejoin_all([m1, m2])
    assert env.c.group_state("app") == "Stable"
    assert sorted(p for m in (m1, m2) for _, p in m.owned) == list(range(6))


def _static_classic_join(env: Env, instance_id: str, member_id: str = "") -> Any:
    """A classic consumer with ``group.instance.id`` sends JoinGroup v5 (its answer comes at
    once from a consumer group, or from a Stable classic group it is known to)."""
    from kafkalog.groups import consumer_protocol as cp

    meta = cp.encode_subscription(cp.Subscription(["orders"]))
    h = env.c.join_group("app", member_id, "consumer", [("range", meta)],
                         session_timeout_ms=30_000, rebalance_timeout_ms=60_000,
                         group_instance_id=instance_id, api_version=5)
    return dict(env.c.take_responses())[h]


def test_last_consumer_member_replaced_by_a_static_classic_member_downgrades_at_once(env):
    """Kafka's ``validateOnlineDowngradeWithReplacedMemberId`` + ``convertToClassicGroup``
    with a joining member: the last consumer-protocol member is static and restarts as a
    classic consumer with the same ``group.instance.id``. The group becomes a classic group in
    that JoinGroup, Stable (no rebalance), the joining member holding the replaced member's
    target assignment; the tombstones name the joining member's records."""
    from kafkalog.decoders.offsets import CODEC
    from kafkalog.groups import consumer_protocol as cp

    m1 = ClassicMember(env)
    c = Member(env, "c", instance_id="i-c")
    for _ in range(4):
        c.step()
        rejoin_if_asked([m1])
    group = env.c.manager.consumer_group("app")
    assert group.state == "stable" and group.members["c"].instance_id == "i-c"
    target_c = sorted(group.target_assignment["c"][ORDERS])
    epoch = group.group_epoch
    # the static member restarts: it leaves with epoch -2 and comes back as a classic consumer
    r = env.c.consumer_group_heartbeat("app", "c", -2, instance_id="i-c")
    assert r.error_code == 0
    end = env.logs.log("__consumer_offsets", 0).log_end_offset
    j = _static_classic_join(env, "i-c")
    assert j.error_code == 0 and j.member_id != "c" and j.protocol_name == "range"
    assert env.c.manager.consumer_group("app") is None
    assert env.c.group_state("app") == "Stable"          # no rebalance: converted in place
    gm = env.c.manager.group_metadata("app")
    assert gm.generation == epoch and gm.protocol == "range"
    by_id = {m.member_id: m for m in gm.members}
    assert set(by_id) == {m1.member_id, j.member_id}
    assert by_id[j.member_id].group_instance_id == "i-c"
    assert sorted(p for _, p in cp.decode_assignment(by_id[j.member_id].assignment).partitions
                  ) == target_c
    # what was written: the replacement, then the tombstones of the joining member (not of the
    # replaced one, already removed), then the classic group's metadata
    written = [CODEC.decode(r.key, r.value)
               for r in env.logs.log("__consumer_offsets", 0).records(start_offset=end)]
    tombstoned = {(x["type"], x["key"].get("memberId")) for x in written if x["value"] is None}
    assert (8, j.member_id) in tombstoned and (5, j.member_id) in tombstoned
    assert written[-1]["type"] == 2 and written[-1]["value"] is not None
    # the joined member syncs at the generation it was given and gets its assignment
    h = env.c.sync_group("app", j.generation_id, j.member_id, {}, group_instance_id="i-c",
                         protocol_type="consumer", protocol_name="range")
    s = dict(env.c.take_responses())[h]
    assert s.error_code == 0 and sorted(
        p for _, p in cp.decode_assignment(s.assignment).partitions) == target_c
    assert m1.heartbeat() == ErrorCode.NONE
    env.reopen()
    assert env.c.group_state("app") == "Stable"


def test_no_downgrade_on_static_replacement_when_the_policy_forbids_it(tmp_path):
    env = Env(tmp_path / "logs", **{"group.consumer.migration.policy": "upgrade"})
    try:
        ClassicMember(env)
        c = Member(env, "c", instance_id="i-c")
        c.step()
        assert env.c.consumer_group_heartbeat("app", "c", -2, instance_id="i-c").error_code == 0
        j = _static_classic_join(env, "i-c")
        assert j.error_code == 0
        group = env.c.manager.consumer_group("app")
        assert group is not None and group.static_member("i-c").member_id == j.member_id
        assert group.static_member("i-c").uses_classic_protocol
    finally:
        env.logs.close()


def test_no_downgrade_when_the_classic_group_would_exceed_group_max_size(tmp_path):
    """``validateOnlineDowngradeWithFencedMember``: the classic group that would remain has
    more members than ``group.max.size``: the group stays a consumer group."""
    env = Env(tmp_path / "logs", **{"group.max.size": "1"})
    try:
        c = Member(env, "c")
        m1, m2 = ClassicMember(env), ClassicMember(env)
        c.step()
        c.leave()
        group = env.c.manager.consumer_group("app")
        assert group is not None and set(group.members) == {m1.member_id, m2.member_id}
    finally:
        env.logs.close()


def test_non_consumer_classic_group_is_not_upgraded(env):
    c = env.c
    c.join_group("connect", "", "connect", [("default", b"x")], session_timeout_ms=10_000,
                 api_version=3)
    env.clock.advance(3000)
    c.tick()
    c.take_responses()
    r = c.consumer_group_heartbeat("connect", "m", 0, rebalance_timeout_ms=1000,
                                   subscribed_topic_names=["orders"], topic_partitions=[])
    assert (r.error_code, r.error_message) == (ErrorCode.GROUP_ID_NOT_FOUND,
                                               "Group connect is not a consumer group")
    # offsets alone (a "simple" group, Empty) are taken over, and kept
    c.offset_commit("simple", {("orders", 2): 11})
    r = c.consumer_group_heartbeat("simple", "s", 0, rebalance_timeout_ms=1000,
                                   subscribed_topic_names=["orders"], topic_partitions=[])
    assert r.error_code == 0 and c.group_state("simple") == "Stable"
    assert c.offset_fetch("simple").topics[0].partitions[0].committed_offset == 11


def test_random_scenarios_reload_to_the_live_state(tmp_path):
    """Random joins, heartbeats (with and without revoking), leaves, timeouts, topic growth:
    after each scenario the groups replayed from the bytes equal the live groups."""
    for seed in range(6):
        rng = random.Random(seed)
        env = Env(tmp_path / f"logs-{seed}")
        members: dict[str, Member] = {}
        for step in range(60):
            action = rng.random()
            if action < 0.2 or not members:
                mid = f"m{step}"
                members[mid] = Member(env, mid, rng.choice([["orders"], ["orders", "payments"],
                                                            ["payments"], []]),
                                      instance_id=f"i{step}" if rng.random() < 0.4 else None,
                                      regex=rng.choice([None, None, "pay.*", "orders|pay.*"]))
            elif action < 0.3 and any(m.instance_id for m in members.values()):
                m = members.pop(rng.choice([k for k, v in members.items() if v.instance_id]))
                m.owned = {}                 # the restarted process owns nothing yet
                m.bounce(f"m{step}")
                members[m.id] = m
            elif action < 0.75:
                m = rng.choice(list(members.values()))
                if rng.random() < 0.2:
                    if m.slow_step():
                        members.pop(m.id)
                else:
                    m.step()
            elif action < 0.85:
                members.pop(rng.choice(list(members))).leave()
            elif action < 0.95:
                env.clock.advance(rng.choice([1_000, 20_000, 46_000]))
                env.c.tick()
                alive = env.c.manager.consumer_group("app")
                members = {k: v for k, v in members.items()
                           if alive is not None and k in alive.members}
            elif action < 0.975:
                env.topics["orders"] += 1
                env.c.update_metadata(env.topics)
            else:
                env.topics[f"payments-{step}"] = 1
                env.c.update_metadata(env.topics)
            assert_no_partition_held_twice(env, (seed, step))
        before = snapshot(env.c)
        env.reopen()
        assert snapshot(env.c) == before, seed
        env.logs.close()


def test_dump_shows_the_records_as_kafka_4_does(env):
    Member(env, "a")
    text = dump_offsets(env)
    assert 'key: {"type":"5","data":{"groupId":"app","memberId":"a"}}' in text
    assert ('payload: {"version":"0","data":{"topicPartitions":[{"topicId":"' + ORDERS
            + '","partitions":[0,1,2,3,4,5]}]}}') in text
    assert '"data":{"memberEpoch":1,"previousMemberEpoch":0,"state":0,' in text
    # the epoch with KIP-1101's hash of the subscribed topic (Kafka 4.1+; a tagged field)
    from kafkalog.groups.metadata_hash import metadata_hash

    h = metadata_hash(["orders"], {"orders": (ORDERS, [()] * env.topics["orders"])})
    assert h != 0
    assert ('key: {"type":"3","data":{"groupId":"app"}} payload: {"version":"0","data":'
            f'{{"epoch":1,"metadataHash":{h}}}}}') in text
    env.open()


def test_static_member_rejoins_under_a_new_id_and_keeps_its_partitions(env):
    a = env.hb("a", 0, instance_id="i1")
    b = Member(env, "b")
    a = env.hb("a", a.member_epoch, [(ORDERS, list(range(6)))])
    kept = sorted(a.assignment[0][1])
    a = env.hb("a", a.member_epoch, [(ORDERS, kept)])
    settle([b])
    group = env.c.manager.consumer_group("app")
    assert group.state == "stable" and group.static_members == {"i1": "a"}
    # a second instance with the same id while "a" is active is refused
    r = env.hb("a-clone", 0, instance_id="i1")
    assert (r.error_code, r.error_message) == (
        ErrorCode.UNRELEASED_INSTANCE_ID, "Static member a-clone with instance id i1 cannot "
        "join the group because the instance id is owned by a member.")
    # leaving temporarily (-2): the partitions stay with the instance
    r = env.c.consumer_group_heartbeat("app", "a", -2, instance_id="i1")
    assert (r.error_code, r.member_epoch) == (0, -2)
    assert group.members["a"].member_epoch == -2 and group.state == "reconciling"
    epoch = group.group_epoch
    r = env.hb("a2", 0, instance_id="i1")
    assert (r.error_code, r.member_epoch, r.assignment) == (0, epoch, [(ORDERS, kept)])
    assert list(group.members) == ["b", "a2"] and group.group_epoch == epoch   # no rebalance
    assert group.static_members == {"i1": "a2"} and group.state == "stable"
    r = env.hb("a", 2, [(ORDERS, kept)], instance_id="i1")   # the old incarnation is fenced
    assert (r.error_code, r.error_message) == (
        ErrorCode.FENCED_INSTANCE_ID, "Static member a with instance id i1 was fenced by "
        "member a2.")
    before = snapshot(env.c)
    env.reopen()
    assert snapshot(env.c) == before


def test_static_member_that_does_not_return_is_fenced_at_its_session_timeout(env):
    env.hb("a", 0, instance_id="i1")
    b = Member(env, "b")
    assert env.c.consumer_group_heartbeat("app", "a", -2, instance_id="i1").error_code == 0
    for _ in range(5):
        env.clock.advance(10_000)
        b.step()
        env.c.tick()
    group = env.c.manager.consumer_group("app")
    assert list(group.members) == ["b"] and group.static_members == {}
    settle([b])
    assert owned_union([b]) == list(range(6))
    r = env.c.consumer_group_heartbeat("app", "a", -2, instance_id="i1")
    assert (r.error_code, r.error_message) == (ErrorCode.UNKNOWN_MEMBER_ID,
                                               "Instance id i1 is unknown.")


def test_a_fenced_member_rejoins_with_epoch_0_and_its_id(env):
    """KAFKA-19233: a member answered FENCED_MEMBER_EPOCH drops its partitions and rejoins with
    epoch 0 under the same member id (KIP-1082); it gets its assignment back."""
    a = Member(env, "a")
    b = Member(env, "b")
    settle([a, b])
    mine = sorted(a.owned[ORDERS])
    assert env.hb("a", a.epoch + 5, [(ORDERS, mine)]).error_code == ErrorCode.FENCED_MEMBER_EPOCH
    r = env.hb("a", 0)
    assert (r.error_code, r.member_epoch, r.assignment) == (0, a.epoch, [(ORDERS, mine)])


def test_regex_subscription_is_resolved_by_the_coordinator(env):
    """KIP-848 broker-side patterns (Kafka 4.0): the first heartbeat with a new expression
    resolves it (a type-16 record, a group epoch bump), the next one gets the partitions;
    a topic created later joins the subscription at the first heartbeat 10 s after the last
    resolution."""
    env.topics = {"orders": 2, "orders-eu": 1, "payments": 2}
    env.c.update_metadata(env.topics)
    r = env.c.consumer_group_heartbeat("app", "a", 0, rebalance_timeout_ms=30_000,
                                       subscribed_topic_regex="orders.*", topic_partitions=[])
    assert (r.error_code, r.member_epoch, r.assignment) == (0, 1, [])
    group = env.c.manager.consumer_group("app")
    assert group.group_epoch == 2                        # the resolution bumped it
    assert group.resolved_regexes["orders.*"].topics == {"orders", "orders-eu"}
    assert sorted(group.subscription_metadata) == ["orders", "orders-eu"]
    r = env.hb("a", 1, [])
    assert r.member_epoch == 2
    assert sorted((t, ps) for t, ps in r.assignment) == sorted(
        [(ORDERS, [0, 1]), (topic_id_for("orders-eu"), [0])])
    # a second subscriber of the same (resolved) expression: an epoch bump, no new resolution
    b = env.c.consumer_group_heartbeat("app", "b", 0, rebalance_timeout_ms=30_000,
                                       subscribed_topic_regex="orders.*", topic_partitions=[])
    assert b.error_code == 0 and group.group_epoch == 3
    # a new matching topic: picked up once the 10 s batch interval has passed
    env.topics["orders-us"] = 3
    env.c.update_metadata(env.topics)
    env.hb("a", 2, [(ORDERS, [0, 1]), (topic_id_for("orders-eu"), [0])])
    assert "orders-us" not in group.resolved_regexes["orders.*"].topics
    env.clock.advance(10_001)
    env.hb("a", 2, [(ORDERS, [0, 1]), (topic_id_for("orders-eu"), [0])])
    assert "orders-us" in group.resolved_regexes["orders.*"].topics
    assert "orders-us" in group.subscription_metadata
    before = snapshot(env.c)
    env.reopen()
    assert snapshot(env.c) == before
    assert env.c.manager.consumer_group("app").resolved_regexes == group.resolved_regexes


def test_regex_dropped_by_its_last_subscriber_is_tombstoned(env):
    env.c.consumer_group_heartbeat("app", "a", 0, rebalance_timeout_ms=30_000,
                                   subscribed_topic_regex="pay.*", topic_partitions=[])
    group = env.c.manager.consumer_group("app")
    assert set(group.resolved_regexes) == {"pay.*"}
    env.clock.advance(10_001)
    r = env.c.consumer_group_heartbeat("app", "a", 1, subscribed_topic_regex="ord.*")
    assert r.error_code == 0
    assert set(group.resolved_regexes) == {"ord.*"}
    assert group.resolved_regexes["ord.*"].topics == {"orders"}
    text = dump_offsets(env)
    assert ('key: {"type":"16","data":{"groupId":"app","regularExpression":"pay.*"}} '
            'payload: <DELETE>') in text
    assert ('key: {"type":"16","data":{"groupId":"app","regularExpression":"ord.*"}} '
            'payload: {"version":"0","data":{"topics":["orders"],"version":') in text
    env.open()


@pytest.mark.parametrize("regex, description", [
    # RE2/J's descriptions (com.google.re2j.Parser ERR_*, Kafka puts getDescription() in)
    ("orders[", "missing closing ]"),
    ("orders-(eu", "missing closing )"),
    ("orders)", "unexpected )"),
    ("*orders", "missing argument to repetition operator"),
    ("orders**", "invalid nested repetition operator"),
    ("orders{2,1}", "invalid repeat count"),
    ("[z-a]", "invalid character class range"),
    ("orders\\", "trailing backslash at end of expression"),
    # what Python's re accepts and RE2 does not: lookaround, backreferences, possessives
    ("(?!payments).*", "invalid or unsupported Perl syntax"),
    ("(o)rders\\1", "invalid escape sequence"),
    ("orders++", "invalid nested repetition operator"),
])
def test_invalid_regex_is_refused_with_kafkas_error(env, regex, description):
    r = env.c.consumer_group_heartbeat("app", "a", 0, rebalance_timeout_ms=30_000,
                                       subscribed_topic_regex=regex, topic_partitions=[])
    assert (r.error_code, r.error_message) == (
        ErrorCode.INVALID_REGULAR_EXPRESSION,
        f"SubscribedTopicRegex `{regex}` is not a valid regular expression: {description}.")
    assert env.c.manager.consumer_group("app") is None


@pytest.mark.parametrize("regex, topics", [
    ("[[:lower:]]+", {"orders", "payments"}),   # POSIX classes: RE2 syntax, not Python's
    ("orders{,1}", set()),       # RE2 reads "{,1}" as literal text; Python's re as {0,1}
    ("\\Qorders\\E", {"orders"}),  # RE2's quoting
    ("pay.*|ord.*", {"orders", "payments"}),
    ("order", set()),            # matched in full, never as a prefix
])
def test_regex_subscriptions_match_as_re2_does(env, regex, topics):
    r = env.c.consumer_group_heartbeat("app", "a", 0, rebalance_timeout_ms=30_000,
                                       subscribed_topic_regex=regex, topic_partitions=[])
    assert r.error_code == 0, r.error_message
    assert env.c.manager.consumer_group("app").resolved_regexes[regex].topics == topics


def test_classic_member_timers_in_a_consumer_group(env):
    """A classic member has its own session timeout (30 s here, not the group's 45 s), and
    one asked to rejoin that keeps heartbeating without rejoining is fenced after its
    rebalance timeout (60 s)."""
    a = Member(env, "a")
    m = ClassicMember(env)
    group = env.c.manager.consumer_group("app")
    for _ in range(3):
        env.clock.advance(10_000)
        a.step()
        env.c.tick()
    assert m.member_id not in group.members             # silent for 30 s
    m2 = ClassicMember(env)            # takes the partitions m released: Stable at once
    assert m2.heartbeat() == ErrorCode.NONE and len(m2.owned) == 3
    b = Member(env, "b")               # the group epoch moves past m2's
    assert m2.heartbeat() == ErrorCode.REBALANCE_IN_PROGRESS
    for _ in range(7):
        env.clock.advance(9_000)
        a.step()
        b.step()
        assert m2.member_id not in group.members or m2.heartbeat() == \
            ErrorCode.REBALANCE_IN_PROGRESS
        env.c.tick()
    assert m2.member_id not in group.members            # never rejoined within 60 s
    assert sorted(group.members) == ["a", "b"]


def test_offset_delete_refuses_the_topics_a_consumer_group_subscribes_to(env):
    a = Member(env, "a")
    env.c.offset_commit("app", {("orders", 0): 3, ("payments", 0): 4},
                        generation_id=a.epoch, member_id="a")
    r = env.c.offset_delete("app", [("orders", 0), ("payments", 0)])
    assert r.error_code == 0
    assert {t.name: t.partitions[0].error_code for t in r.topics} == {
        "orders": ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC, "payments": 0}
    assert env.c.manager.fetch_offsets("app") == {("orders", 0): 3}


def test_random_mixed_groups_migrate_and_reload(tmp_path):
    """Random consumer-protocol and classic members joining, stepping, leaving and going
    silent: the group converts between classic and consumer as Kafka 4's bidirectional policy
    says, no partition is ever held by two members of a consumer group, and a reload rebuilds
    the same groups."""
    for seed in range(5):
        rng = random.Random(100 + seed)
        env = Env(tmp_path / f"mixed-{seed}", **{"group.initial.rebalance.delay.ms": "0"})
        modern: dict[str, Member] = {}
        classic: list[ClassicMember] = []
        for step in range(50):
            action = rng.random()
            try:
                if action < 0.15 or not (modern or classic):
                    modern[f"c{step}"] = Member(env, f"c{step}")
                elif action < 0.3:
                    classic.append(ClassicMember(env))
                elif action < 0.6 and modern:
                    rng.choice(list(modern.values())).step()
                elif action < 0.8 and classic:
                    rejoin_if_asked(classic)
                elif action < 0.88 and modern:
                    modern.pop(rng.choice(list(modern))).leave()
                elif action < 0.94 and classic:
                    m = classic.pop(rng.randrange(len(classic)))
                    env.c.leave_group("app", m.member_id)
                else:
                    env.clock.advance(rng.choice([5_000, 31_000]))
                    env.c.tick()
            except AssertionError as e:
                # a member answered an error a client handles by rejoining (fenced by a
                # timeout, the group epoch moved between its JoinGroup and SyncGroup): it is
                # gone from the simulation; any other failure is a failure
                expected = (ErrorCode.ILLEGAL_GENERATION, ErrorCode.UNKNOWN_MEMBER_ID,
                            ErrorCode.REBALANCE_IN_PROGRESS, ErrorCode.FENCED_MEMBER_EPOCH)
                if not any(f"error_code={code}," in str(e) for code in expected):
                    raise
                group = env.c.manager.consumer_group("app")
                alive = set(group.members) if group is not None else set(
                    m.member_id for m in (env.c.group("app").all_members()
                                          if env.c.group("app") else []))
                modern = {k: v for k, v in modern.items() if v.id in alive}
                classic = [m for m in classic if m.member_id in alive]
            assert_no_partition_held_twice(env, (seed, step))
        before = (snapshot(env.c), env.c.manager.group_metadata("app"))
        env.reopen()
        assert (snapshot(env.c), env.c.manager.group_metadata("app")) == before, seed
        env.logs.close()


def test_module_doctests() -> None:
    import doctest
    import importlib

    for name in ("consumer_group", "records", "current_assignment_builder", "coordinator",
                 "classic_members"):
        mod = importlib.import_module(f"kafkalog.groups.modern.{name}")
        assert doctest.testmod(mod).failed == 0, name


@pytest.mark.parametrize("policy", ["disabled", "upgrade", "Downgrade"])
def test_migration_policy(tmp_path, policy):
    """``group.consumer.migration.policy``: an upgrade needs upgrade/bidirectional (else the
    consumer-protocol member is refused), a downgrade needs downgrade/bidirectional (else the
    group stays a consumer group of classic members)."""
    env = Env(tmp_path / "logs", **{"group.consumer.migration.policy": policy})
    m1, m2 = ClassicMember(env, join=False), ClassicMember(env, join=False)
    m1.join()
    m2.join()
    rejoin_all([m1, m2])
    r = env.hb("c", 0)
    if policy.lower() in ("disabled", "downgrade"):
        assert (r.error_code, r.error_message) == (ErrorCode.GROUP_ID_NOT_FOUND,
                                                   "Group app is not a consumer group")
        assert env.c.group_state("app") == "Stable"
        return
    assert r.error_code == 0 and env.c.manager.consumer_group("app") is not None
    env.c.consumer_group_heartbeat("app", "c", -1)
    group = env.c.manager.consumer_group("app")
    assert group is not None and set(group.members) == {m1.member_id, m2.member_id}
    env.logs.close()


def test_migration_policy_is_validated():
    from kafkalog.errors import ConfigError
    from kafkalog.groups.config import GroupConfig

    with pytest.raises(ConfigError, match="group.consumer.migration.policy"):
        GroupConfig.from_properties({"group.consumer.migration.policy": "sideways"})


def test_the_metadata_hash_survives_a_restart_and_racks_change_it(env):
    """KIP-1101 (Kafka 4.1+): record 3 carries the hash of the subscribed topics; a restarted
    coordinator that hashes the same topics again keeps the epoch, a rack change (or a stored
    hash of 0, as Kafka 4.0 and older kafkalog wrote) bumps it once."""
    a = Member(env, "a")
    settle([a])
    group = env.c.manager.consumer_group("app")
    epoch, h = group.group_epoch, group.metadata_hash
    assert h != 0
    env.reopen()
    assert env.c.manager.consumer_group("app").metadata_hash == h
    a.step()
    assert env.c.manager.consumer_group("app").group_epoch == epoch == a.epoch
    # the broker gets a rack: every partition's replica racks change, so does the hash
    env.c.update_metadata(env.topics, None, {t: [("r1",)] * n for t, n in env.topics.items()})
    a.step()
    group = env.c.manager.consumer_group("app")
    assert group.group_epoch == epoch + 1 and group.metadata_hash not in (0, h)
    # a group stored without a hash (Kafka 4.0's record 3): one new epoch, then steady
    from kafkalog.groups.modern import records as cgr

    env.c.manager.write_records("app", [cgr.group_epoch_record("app", epoch + 1, 0)])
    env.reopen()
    env.c.update_metadata(env.topics, None, {t: [("r1",)] * n for t, n in env.topics.items()})
    settle([a])
    group = env.c.manager.consumer_group("app")
    assert group.group_epoch == epoch + 2 and group.metadata_hash not in (0, h)
