"""GroupCoordinator scenarios driven by a manual clock and simulated consumers.

The consumers here behave as Kafka's Java consumer does (``AbstractCoordinator`` /
``ConsumerCoordinator``): rejoin on MEMBER_ID_REQUIRED, the leader runs the assignor on the
members' subscriptions and sends the plan in SyncGroup, heartbeats answer REBALANCE_IN_PROGRESS
with a rejoin, a pattern subscriber rejoins when the topics matching its pattern change.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kafkalog import LogDir, ManualClock
from kafkalog.groups import GroupMetadataManager, assign
from kafkalog.groups import consumer_protocol as cp
from kafkalog.groups.coordinator import GroupCoordinator, OffsetCommitPartition
from kafkalog.groups.error_codes import ErrorCode
from kafkalog.groups.java_order import JavaHashMap, string_hash
from kafkalog.groups.responses import JoinGroupResponse, MemberIdentity, SyncGroupResponse

T0 = 1_700_000_000_000
SESSION = 10_000
REBALANCE = 30_000
DELAY = 3_000          # group.initial.rebalance.delay.ms default


class Env:
    def __init__(self, root: Path, **config: str) -> None:
        self.root = root
        self.clock = ManualClock(T0)
        self.config = {"offsets.topic.num.partitions": "3", **config}
        self.counter = 0
        self.open()

    def open(self) -> None:
        self.logs = LogDir.open(self.root, self.config, clock=self.clock)
        self.manager = GroupMetadataManager(self.logs)
        self.coord = GroupCoordinator(self.manager, clock=self.clock,
                                      member_id_factory=self._member_id)

    def restart(self) -> None:
        self.logs.close()
        self.open()

    def _member_id(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}-{self.counter:04d}"

    def advance(self, ms: int) -> None:
        """Move time in steps, running the timers that come due (as a server loop would)."""
        end = self.clock.milliseconds() + ms
        while True:
            d = self.coord.next_deadline()
            if d is None or d > end:
                break
            self.clock.set(max(d, self.clock.milliseconds()))
            self.coord.tick()
        self.clock.set(end)
        self.coord.tick()


class Consumer:
    """A consumer in a classic group (the Java consumer's protocol behaviour)."""

    def __init__(self, env: Env, client_id: str, topics: list[str] | None = None, *,
                 pattern: str | None = None, group: str = "app", strategy: str = "range",
                 instance: str | None = None) -> None:
        self.env = env
        self.client_id = client_id
        self.group = group
        self.strategy = strategy
        self.topics = topics or []
        self.pattern = pattern
        self.instance = instance
        self.member_id = ""
        self.generation = -1
        self.assignment: list[tuple[str, int]] | None = None
        self.leader = False
        self.pending: int | None = None
        self.metadata: dict[str, int] = {}

    # subscription ---------------------------------------------------------------------------

    def subscription(self) -> bytes:
        topics = self.topics
        if self.pattern is not None:
            topics = sorted(t for t in self.metadata if re.fullmatch(self.pattern, t))
        return cp.encode_subscription(cp.Subscription(
            topics, owned_partitions=[], generation_id=self.generation))

    def see_metadata(self, partitions: dict[str, int]) -> bool:
        """Metadata refresh; True when the pattern now matches other topics (must rejoin)."""
        before = self.subscription()
        self.metadata = dict(partitions)
        return self.pattern is not None and cp.decode_subscription(before).topics != \
            cp.decode_subscription(self.subscription()).topics

    # protocol -------------------------------------------------------------------------------

    def join(self) -> None:
        self.pending = self.env.coord.join_group(
            self.group, self.member_id, "consumer", [(self.strategy, self.subscription())],
            session_timeout_ms=SESSION, rebalance_timeout_ms=REBALANCE,
            group_instance_id=self.instance, client_id=self.client_id)

    def on_join(self, r: JoinGroupResponse) -> None:
        if r.error_code == ErrorCode.MEMBER_ID_REQUIRED:
            self.member_id = r.member_id
            self.join()
            return
        assert r.error_code == ErrorCode.NONE, r
        self.member_id = r.member_id
        self.generation = r.generation_id
        self.leader = r.leader == r.member_id
        plan: dict[str, bytes] = {}
        if self.leader and not r.skip_assignment:
            subs = {m.member_id: cp.decode_subscription(m.metadata).topics for m in r.members}
            counts = {t: self.metadata.get(t, 0) for ts in subs.values() for t in ts}
            plan = {m: cp.encode_assignment(cp.Assignment(a))
                    for m, a in assign(r.protocol_name, subs, counts).items()}
        self.pending = self.env.coord.sync_group(self.group, self.generation, self.member_id,
                                                 plan, group_instance_id=self.instance)

    def on_sync(self, r: SyncGroupResponse) -> None:
        if r.error_code == ErrorCode.REBALANCE_IN_PROGRESS:
            self.join()
            return
        assert r.error_code == ErrorCode.NONE, r
        self.assignment = cp.decode_assignment(r.assignment).partitions if r.assignment else []

    def heartbeat(self) -> int:
        code = self.env.coord.heartbeat(self.group, self.generation, self.member_id,
                                        group_instance_id=self.instance).error_code
        if code == ErrorCode.REBALANCE_IN_PROGRESS:
            self.join()
        return code

    def leave(self) -> None:
        r = self.env.coord.leave_group(self.group, [MemberIdentity(self.member_id,
                                                                   self.instance)])
        assert r.error_code == ErrorCode.NONE and r.members[0].error_code == ErrorCode.NONE


def pump(env: Env, consumers: list[Consumer]) -> None:
    """Deliver completed responses until none is left."""
    while True:
        done = env.coord.take_responses()
        if not done:
            return
        for handle, response in done:
            owner = next(c for c in consumers if c.pending == handle)
            owner.pending = None
            if isinstance(response, JoinGroupResponse):
                owner.on_join(response)
            else:
                owner.on_sync(response)


def stabilize(env: Env, consumers: list[Consumer], live: list[Consumer] | None = None,
              max_ms: int = 60_000) -> None:
    """Run time forward with the live consumers heartbeating every second."""
    live = consumers if live is None else live
    for _ in range(max_ms // 1000):
        pump(env, consumers)
        if all(c.pending is None and c.assignment is not None for c in live) and \
                env.coord.group_state(live[0].group) == "Stable":
            return
        env.advance(1000)
        pump(env, consumers)
        for c in live:
            if c.pending is None and c.generation >= 0:
                c.heartbeat()
    raise AssertionError(f"group did not stabilize: {env.coord.group_state(live[0].group)}")


@pytest.fixture
def env(tmp_path: Path):
    e = Env(tmp_path)
    yield e
    e.logs.close()


def start(env: Env, consumers: list[Consumer], metadata: dict[str, int]) -> None:
    env.coord.update_metadata(metadata)
    for c in consumers:
        c.see_metadata(metadata)
        c.join()
    pump(env, consumers)
    stabilize(env, consumers)


def owned(consumers: list[Consumer]) -> dict[str, list[tuple[str, int]]]:
    return {c.client_id: sorted(c.assignment or []) for c in consumers}


# ---------------------------------------------------------------------------------------------
# scenarios
# ---------------------------------------------------------------------------------------------

def test_join_of_three_members(env: Env) -> None:
    c = [Consumer(env, f"c{i}", ["orders"]) for i in (1, 2, 3)]
    env.coord.update_metadata({"orders": 6})
    for x in c:
        x.see_metadata({"orders": 6})
        x.join()
    pump(env, c)
    # v4+ join: every member first gets its id with MEMBER_ID_REQUIRED, then waits for the
    # initial rebalance delay (group.initial.rebalance.delay.ms); members joined during the
    # delay, so it is extended once by another delay (tryCompleteInitialRebalanceElseSchedule)
    assert [x.member_id for x in c] == ["c1-0001", "c2-0002", "c3-0003"]
    assert all(x.pending is not None for x in c)
    assert env.coord.group_state("app") == "PreparingRebalance"
    env.advance(2 * DELAY - 1)
    assert env.coord.take_responses() == []
    env.advance(1)
    pump(env, c)
    assert [x.generation for x in c] == [1, 1, 1]
    assert [x.leader for x in c] == [True, False, False]       # the first member to join
    assert owned(c) == {"c1": [("orders", 0), ("orders", 1)], "c2": [("orders", 2), ("orders", 3)],
                        "c3": [("orders", 4), ("orders", 5)]}
    assert env.coord.group_state("app") == "Stable"
    d = env.manager.describe_group("app")
    assert (d.state, d.generation, d.protocol, d.leader) == ("Stable", 1, "range", "c1-0001")
    assert {m.member_id: sorted(m.assignment.partitions) for m in d.members} == {
        x.member_id: sorted(x.assignment) for x in c}
    # members are persisted in the member map's (java.util.HashMap) order
    assert [m.member_id for m in d.members] == JavaHashMap.ordered(
        [x.member_id for x in c], string_hash)


def test_leader_leaves(env: Env) -> None:
    c = [Consumer(env, f"c{i}", ["orders"]) for i in (1, 2, 3)]
    start(env, c, {"orders": 6})
    leader = next(x for x in c if x.leader)
    rest = [x for x in c if x is not leader]
    leader.leave()
    assert env.coord.group_state("app") == "PreparingRebalance"
    # Kafka picks the next leader as the first member left in its member HashMap
    expected = JavaHashMap.ordered([x.member_id for x in c], string_hash)
    expected.remove(leader.member_id)
    for x in rest:
        x.assignment = None
        assert x.heartbeat() == ErrorCode.REBALANCE_IN_PROGRESS
    pump(env, c)
    stabilize(env, c, rest)
    assert [x.generation for x in rest] == [2, 2]
    assert next(x for x in rest if x.leader).member_id == expected[0]
    assert sorted(tp for x in rest for tp in x.assignment) == [("orders", p) for p in range(6)]


def test_member_times_out(env: Env) -> None:
    c = [Consumer(env, f"c{i}", ["orders"]) for i in (1, 2, 3)]
    start(env, c, {"orders": 6})
    silent = c[2]
    live = c[:2]
    for x in live:
        x.assignment = None
    stabilize(env, c, live)            # c3 stops heartbeating: removed after its session timeout
    assert env.coord.group(  # type: ignore[union-attr]
        "app").has_member(silent.member_id) is False
    assert [x.generation for x in live] == [2, 2]
    assert sorted(tp for x in live for tp in x.assignment) == [("orders", p) for p in range(6)]
    # the expired member is refused
    assert silent.heartbeat() == ErrorCode.UNKNOWN_MEMBER_ID


def test_partitions_added(env: Env) -> None:
    c = [Consumer(env, f"c{i}", ["orders"]) for i in (1, 2)]
    start(env, c, {"orders": 2, "other": 1})
    assert env.coord.update_metadata({"orders": 4, "other": 5}) == ["app"]
    for x in c:
        x.see_metadata({"orders": 4, "other": 5})
        x.assignment = None
    stabilize(env, c)
    assert [x.generation for x in c] == [2, 2]
    assert owned(c) == {"c1": [("orders", 0), ("orders", 1)], "c2": [("orders", 2), ("orders", 3)]}
    # a change to a topic nobody subscribes to starts nothing
    assert env.coord.update_metadata({"orders": 4, "other": 6}) == []


def test_pattern_matches_a_new_topic(env: Env) -> None:
    c = [Consumer(env, f"c{i}", pattern=r"orders\..*") for i in (1, 2)]
    start(env, c, {"orders.eu": 2, "payments": 2})
    assert owned(c) == {"c1": [("orders.eu", 0)], "c2": [("orders.eu", 1)]}
    meta = {"orders.eu": 2, "orders.us": 2, "payments": 2}
    env.coord.update_metadata(meta)
    for x in c:
        if x.see_metadata(meta):         # the pattern matches more: rejoin with new metadata
            x.assignment = None
            x.join()
    pump(env, c)
    stabilize(env, c)
    assert [x.generation for x in c] == [2, 2]
    assert owned(c) == {"c1": [("orders.eu", 0), ("orders.us", 0)],
                        "c2": [("orders.eu", 1), ("orders.us", 1)]}


def test_static_member_restarts_without_a_rebalance(env: Env) -> None:
    c = [Consumer(env, f"c{i}", ["orders"], instance=f"host-{i}") for i in (1, 2)]
    start(env, c, {"orders": 4})
    restarted = c[1]
    old_id = restarted.member_id
    before = owned(c)
    # the process restarts: no member id, same group.instance.id
    fresh = Consumer(env, "c2", ["orders"], instance="host-2")
    fresh.see_metadata({"orders": 4})
    fresh.join()
    done = env.coord.take_responses()
    assert len(done) == 1
    r = done[0][1]
    assert (r.error_code, r.generation_id, r.skip_assignment) == (ErrorCode.NONE, 1, False)
    assert r.member_id != old_id and r.member_id.startswith("host-2-")
    assert env.coord.group_state("app") == "Stable"          # no rebalance
    fresh.member_id, fresh.generation = r.member_id, r.generation_id
    s = env.coord.sync_group("app", 1, fresh.member_id, group_instance_id="host-2")
    (_, sync), = env.coord.take_responses()
    assert cp.decode_assignment(sync.assignment).partitions == before["c2"]
    assert env.coord.heartbeat("app", 1, c[0].member_id).error_code == ErrorCode.NONE
    # the old member id is fenced
    assert env.coord.heartbeat("app", 1, old_id, group_instance_id="host-2").error_code == \
        ErrorCode.FENCED_INSTANCE_ID
    # the new id is persisted: a restarted coordinator knows it
    assert [m.member_id for m in env.manager.describe_group("app").members
            if m.group_instance_id == "host-2"] == [fresh.member_id]
    del s


def test_restart_recovers_groups_and_offsets(env: Env) -> None:
    c = [Consumer(env, f"c{i}", ["orders"]) for i in (1, 2)]
    start(env, c, {"orders": 4})
    r = env.coord.offset_commit("app", {("orders", 0): 17}, generation_id=1,
                                member_id=c[0].member_id)
    assert r.errors() == {("orders", 0): 0}
    env.restart()
    assert env.coord.group_state("app") == "Stable"
    assert env.coord.offset_fetch("app").offsets() == {("orders", 0): 17}
    for x in c:                       # the members keep heartbeating the recovered group
        assert x.heartbeat() == ErrorCode.NONE
    env.advance(SESSION - 1)
    assert c[0].heartbeat() == ErrorCode.NONE
    env.advance(1)                    # c2 stopped: its session (rescheduled at load) ran out
    assert env.coord.group_state("app") == "PreparingRebalance"


def test_initial_rebalance_delay_extends_while_members_join(env: Env) -> None:
    c = [Consumer(env, f"c{i}", ["orders"]) for i in (1, 2, 3)]
    for x in c:
        x.see_metadata({"orders": 3})
    c[0].join()
    pump(env, c)
    env.advance(2000)
    c[1].join()                      # joins during the delay: the delay is extended
    pump(env, c)
    env.advance(1000)
    assert env.coord.group_state("app") == "PreparingRebalance"
    env.advance(2999)                # t = 5999
    c[2].join()
    pump(env, c)
    env.advance(1)                   # t = 6000: a member joined since 3000: extend again
    env.advance(2999)
    assert env.coord.group_state("app") == "PreparingRebalance"
    env.advance(1)                   # t = 9000: nobody new: the join phase completes
    pump(env, c)
    assert [x.generation for x in c] == [1, 1, 1]


def test_initial_rebalance_delay_is_bounded_by_the_rebalance_timeout(env: Env) -> None:
    c = [Consumer(env, f"c{i}", ["orders"]) for i in range(20)]
    for x in c:
        x.see_metadata({"orders": 3})
    c[0].join()
    pump(env, c)
    done_at = None
    for x in c[1:]:                  # a new member every 2 s for 38 s
        env.advance(2000)
        pump(env, c)
        if done_at is None and c[0].generation == 1:
            done_at = env.clock.milliseconds() - T0
        x.join()
        pump(env, c)
    # the 3 s delay is extended while members keep coming, up to the rebalance timeout (30 s)
    assert done_at == 30_000
    assert [x.generation for x in c[:15]] == [1] * 15


def test_member_missing_sync_is_removed(env: Env) -> None:
    c = [Consumer(env, f"c{i}", ["orders"]) for i in (1, 2)]
    for x in c:
        x.see_metadata({"orders": 2})
        x.join()
    pump(env, c)
    env.advance(2 * DELAY)
    done = env.coord.take_responses()
    by_handle = {x.pending: x for x in c}
    for h, r in done:
        x = by_handle[h]
        x.pending = None
        x.member_id, x.generation, x.leader = r.member_id, r.generation_id, r.leader == r.member_id
    leader = next(x for x in c if x.leader)
    follower = next(x for x in c if not x.leader)
    leader.pending = env.coord.sync_group("app", 1, leader.member_id, {})
    env.coord.take_responses()
    assert env.coord.group_state("app") == "Stable"
    for _ in range(REBALANCE // 1000 - 1):
        env.advance(1000)            # both heartbeat (the session stays alive), but the
        assert leader.heartbeat() == ErrorCode.NONE      # follower never sends SyncGroup
        assert follower.heartbeat() == ErrorCode.NONE
    assert env.coord.group(  # type: ignore[union-attr]
        "app").has_member(follower.member_id)
    env.advance(1000)          # the follower never synced within the rebalance timeout
    assert not env.coord.group(  # type: ignore[union-attr]
        "app").has_member(follower.member_id)
    assert env.coord.group_state("app") == "PreparingRebalance"
    assert leader.heartbeat() == ErrorCode.REBALANCE_IN_PROGRESS


def test_protocol_vote() -> None:
    # each member votes for its first protocol every member supports; ties: HashMap order
    from kafkalog.groups.classic_group import ClassicGroup, ClassicGroupMember

    g = ClassicGroup("g", ManualClock(T0), lambda h, r: None)
    for mid, protos in [("a", ["sticky", "range"]), ("b", ["range", "sticky", "roundrobin"])]:
        g.add(ClassicGroupMember(mid, None, "c", "h", 1, 1, "consumer",
                                 [(p, b"") for p in protos]))
    # one vote each: the tie goes to the first protocol of the vote HashMap
    assert g.select_protocol() == JavaHashMap.ordered(["sticky", "range"], string_hash)[0]
    g.add(ClassicGroupMember("c", None, "c", "h", 1, 1, "consumer",
                             [("roundrobin", b""), ("range", b""), ("sticky", b"")]))
    assert g.select_protocol() == "range"        # c votes range: 2 to 1


# ---------------------------------------------------------------------------------------------
# error codes and admin APIs
# ---------------------------------------------------------------------------------------------

def test_join_errors(env: Env) -> None:
    co = env.coord
    meta = [("range", cp.encode_subscription(cp.Subscription(["t"])))]
    co.join_group("", "", "consumer", meta, session_timeout_ms=SESSION)
    co.join_group("g", "", "consumer", meta, session_timeout_ms=10)
    co.join_group("g", "nobody", "consumer", meta, session_timeout_ms=SESSION)
    codes = [r.error_code for _, r in co.take_responses()]
    assert codes == [ErrorCode.INVALID_GROUP_ID, ErrorCode.INVALID_SESSION_TIMEOUT,
                     ErrorCode.UNKNOWN_MEMBER_ID]
    c = [Consumer(env, "c1", ["t"], group="g")]
    start(env, c, {"t": 1})
    co.join_group("g", "", "other", meta, session_timeout_ms=SESSION)
    co.join_group("g", "", "consumer", [("roundrobin", b"")], session_timeout_ms=SESSION)
    assert [r.error_code for _, r in co.take_responses()] == [
        ErrorCode.INCONSISTENT_GROUP_PROTOCOL, ErrorCode.INCONSISTENT_GROUP_PROTOCOL]
    assert co.heartbeat("g", 7, c[0].member_id).error_code == ErrorCode.ILLEGAL_GENERATION
    assert co.heartbeat("g", 1, "ghost").error_code == ErrorCode.UNKNOWN_MEMBER_ID
    co.sync_group("g", 7, c[0].member_id)
    assert co.take_responses()[0][1].error_code == ErrorCode.ILLEGAL_GENERATION


def test_offset_commit_rules(env: Env) -> None:
    co = env.coord
    # a group without membership (generation -1) is created by its first commit
    r = co.offset_commit("simple", {("t", 0): 5, ("t", 1): OffsetCommitPartition(6, 3, "meta")})
    assert r.errors() == {("t", 0): 0, ("t", 1): 0}
    f = co.offset_fetch("simple", [("t", 1), ("t", 2)])
    assert [(p.partition_index, p.committed_offset, p.committed_leader_epoch, p.metadata)
            for p in f.topics[0].partitions] == [(1, 6, 3, "meta"), (2, -1, -1, "")]
    assert co.offset_commit("nogroup", {("t", 0): 1}, generation_id=3).errors() == {
        ("t", 0): ErrorCode.GROUP_ID_NOT_FOUND}
    assert co.offset_commit("nogroup", {("t", 0): 1}, generation_id=3, api_version=8
                            ).errors() == {("t", 0): ErrorCode.ILLEGAL_GENERATION}
    c = [Consumer(env, "c1", ["t"], group="g")]
    start(env, c, {"t": 2})
    m = c[0].member_id
    assert co.offset_commit("g", {("t", 0): 1}, generation_id=9, member_id=m).errors() == {
        ("t", 0): ErrorCode.ILLEGAL_GENERATION}
    assert co.offset_commit("g", {("t", 0): 1}).errors() == {("t", 0): ErrorCode.UNKNOWN_MEMBER_ID}
    assert co.offset_commit("g", {("t", 0): 1, ("t", 1): OffsetCommitPartition(2, -1, "x" * 5000)},
                            generation_id=1, member_id=m).errors() == {
        ("t", 0): 0, ("t", 1): ErrorCode.OFFSET_METADATA_TOO_LARGE}
    assert co.offset_fetch("g").offsets() == {("t", 0): 1}


def test_txn_offset_commit_and_require_stable(env: Env) -> None:
    co = env.coord
    r = co.txn_offset_commit("tx", "g", 42, 0, {("t", 0): 9})
    assert r.errors() == {("t", 0): 0}
    f = co.offset_fetch("g", [("t", 0)], require_stable=True)
    assert f.topics[0].partitions[0].error_code == ErrorCode.UNSTABLE_OFFSET_COMMIT
    assert co.offset_fetch("g", [("t", 0)]).offsets() == {("t", 0): -1}
    co.end_transaction(42, 0, commit=True)
    assert co.offset_fetch("g", [("t", 0)], require_stable=True).offsets() == {("t", 0): 9}


def test_list_describe_delete(env: Env) -> None:
    co = env.coord
    c = [Consumer(env, f"c{i}", ["t"], group="busy") for i in (1, 2)]
    start(env, c, {"t": 2})
    co.offset_commit("idle", {("t", 0): 1})
    listed = {g.group_id: (g.group_state, g.protocol_type) for g in co.list_groups().groups}
    assert listed == {"busy": ("Stable", "consumer"), "idle": ("Empty", "")}
    assert [g.group_id for g in co.list_groups(["STABLE"]).groups] == ["busy"]
    d = co.describe_groups(["busy", "nope"]).groups
    assert (d[0].group_state, d[0].protocol_data, len(d[0].members)) == ("Stable", "range", 2)
    assert cp.decode_subscription(d[0].members[0].member_metadata).topics == ["t"]
    assert (d[1].group_state, d[1].error_code) == ("Dead", 0)
    res = {r.group_id: r.error_code for r in co.delete_groups(["busy", "idle", "nope"]).results}
    assert res == {"busy": ErrorCode.NON_EMPTY_GROUP, "idle": 0,
                   "nope": ErrorCode.GROUP_ID_NOT_FOUND}
    assert co.offset_fetch("idle").offsets() == {}
    r = co.offset_delete("busy", [("t", 0), ("x", 0)])
    assert {(t.name, p.partition_index): p.error_code for t in r.topics for p in t.partitions} \
        == {("t", 0): ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC, ("x", 0): 0}


def test_not_coordinator_for_a_partition_elsewhere(tmp_path: Path) -> None:
    clock = ManualClock(T0)
    with LogDir.open(tmp_path, {"offsets.topic.num.partitions": "2"}, clock=clock) as logs:
        GroupMetadataManager(logs)
    # keep only partition 0 (another broker leads partition 1)
    import shutil
    shutil.rmtree(tmp_path / "__consumer_offsets-1")
    with LogDir.open(tmp_path, {"offsets.topic.num.partitions": "2"}, clock=clock) as logs:
        co = GroupCoordinator(GroupMetadataManager(logs), clock=clock)
        other = next(g for g in (f"g{i}" for i in range(50)) if co.manager.partition_for(g) == 1)
        co.join_group(other, "", "consumer", [("range", b"")], session_timeout_ms=SESSION)
        assert co.take_responses()[0][1].error_code == ErrorCode.NOT_COORDINATOR
        assert co.heartbeat(other, 1, "m").error_code == ErrorCode.NOT_COORDINATOR
        assert co.offset_fetch(other).error_code == ErrorCode.NOT_COORDINATOR


def test_empty_group_offsets_expire_after_retention(tmp_path: Path) -> None:
    env = Env(tmp_path, **{"offsets.retention.minutes": "10",
                           "offsets.retention.check.interval.ms": "60000"})
    try:
        c = [Consumer(env, "c1", ["t"])]
        start(env, c, {"t": 1})
        env.coord.offset_commit("app", {("t", 0): 3}, generation_id=1, member_id=c[0].member_id)
        c[0].leave()
        assert env.coord.group_state("app") == "Empty"
        env.advance(9 * 60_000)
        assert env.coord.offset_fetch("app").offsets() == {("t", 0): 3}
        env.advance(2 * 60_000)          # 10 minutes after the group became Empty
        assert env.coord.offset_fetch("app").offsets() == {}
        assert env.coord.group_state("app") is None      # and the empty group was deleted
    finally:
        env.logs.close()
