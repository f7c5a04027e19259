"""Share-group membership records (``__consumer_offsets`` types 10-14): what the server writes
after each change replays back to the group it came from, in Kafka's order and shapes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalog.decoders.offsets import CODEC
from kafkalog.groups.share.records import (
    StoredShareGroup,
    delta,
    fence_records,
    replay,
)
from kafkalog.groups.share.share_group import ShareGroupCoordinator

TOPICS = {"a": 3, "b": 2, "c": 1}
IDS = {"a": "AAAAAAAAAAAAAAAAAAAAAQ", "b": "AAAAAAAAAAAAAAAAAAAAAg",
       "c": "AAAAAAAAAAAAAAAAAAAAAw"}
NAMES = {v: k for k, v in IDS.items()}


def _apply(stored: dict, live, now: int) -> list:
    recs = delta(stored.setdefault(live.group_id, StoredShareGroup(live.group_id)), live, IDS)
    decoded = [CODEC.decode(k, v) for k, v in recs]
    for rec in decoded:
        replay(stored, rec)
    return decoded


def _view(group):
    return (group.assignment_epoch,
            {m.member_id: (m.member_epoch, m.previous_member_epoch, tuple(sorted(
                m.subscribed_topics)), m.rack_id, m.client_id,
                {t: sorted(ps) for t, ps in m.assignment.items() if ps})
             for m in group.members.values()},
            {mid: {t: sorted(ps) for t, ps in a.items() if ps}
             for mid, a in group.target.items()})


ops = st.lists(st.tuples(
    st.sampled_from(["join", "beat", "leave", "resubscribe", "expire", "grow"]),
    st.sampled_from(["m1", "m2", "m3"]),
    st.lists(st.sampled_from(sorted(TOPICS)), min_size=1, max_size=3, unique=True)),
    max_size=25)


@settings(max_examples=150, deadline=None)
@given(ops)
def test_records_replay_to_the_group_they_were_written_from(steps):
    c = ShareGroupCoordinator(session_timeout_ms=1000)
    counts = dict(TOPICS)
    c.update_metadata(counts, IDS)
    stored: dict = {}
    now = 0
    for op, mid, topics in steps:
        now += 300
        g = c.group("g")
        m = g.members.get(mid) if g is not None else None
        if op == "join" and m is None:
            c.heartbeat("g", mid, 0, topics, now, client_id=f"client-{mid}")
        elif op == "beat" and m is not None:
            c.heartbeat("g", mid, m.member_epoch, None, now)
        elif op == "resubscribe" and m is not None:
            c.heartbeat("g", mid, m.member_epoch, topics, now, rack_id="r1")
        elif op == "leave" and m is not None:
            c.heartbeat("g", mid, -1, None, now)
        elif op == "expire":
            c.expire_sessions(now)
        elif op == "grow":
            counts[topics[0]] += 1
            c.update_metadata(counts, IDS)
        g = c.group("g")
        if g is None:
            continue
        written = _apply(stored, g, now)
        # Kafka's order within one change: fences, then 10s, then 13s + 12, then 14s
        order = [r["type"] for r in written if r["value"] is not None]
        assert order == sorted(order, key=lambda t: {10: 0, 13: 1, 12: 2, 14: 3}[t])
        assert _apply(stored, g, now) == []            # nothing changed since: nothing written
        back = stored["g"].to_live(g.group_epoch, NAMES, now)
        assert _view(back) == _view(g)


def test_a_fenced_member_leaves_its_three_tombstones_in_kafkas_order():
    c = ShareGroupCoordinator()
    c.update_metadata({"a": 2}, IDS)
    c.heartbeat("g", "m1", 0, ["a"], 0, client_id="x")
    c.heartbeat("g", "m2", 0, ["a"], 0)
    stored: dict = {}
    first = _apply(stored, c.group("g"), 0)
    assert [r["type"] for r in first] == [10, 10, 13, 13, 12, 14, 14]
    assert first[0]["value"] == {"rackId": None, "clientId": "x", "clientHost": "",
                                 "subscribedTopicNames": ["a"]}
    c.heartbeat("g", "m1", -1, None, 10)
    out = _apply(stored, c.group("g"), 10)
    assert [(r["type"], r["value"]) for r in out] == [(14, None), (13, None), (10, None)]
    assert [CODEC.decode(k, v)["type"] for k, v in fence_records("g", "m1")] == [14, 13, 10]
    assert list(stored["g"].members) == ["m2"] and list(stored["g"].targets) == ["m2"]
