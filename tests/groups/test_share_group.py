"""KIP-932 share-group membership, sans I/O (:class:`kafkalog.groups.share.share_group.
ShareGroupCoordinator`): joins, heartbeats, leaves, fencing, session timeouts and the target
assignment, with the checks and texts of Kafka's ``GroupMetadataManager`` (4.1)."""

from __future__ import annotations

from kafkalog.groups.error_codes import ErrorCode as E
from kafkalog.groups.share.share_group import ShareGroupCoordinator


def _coordinator(**kw):
    removed = []
    c = ShareGroupCoordinator(on_member_removed=lambda g, m: removed.append((g, m)), **kw)
    c.update_metadata({"t": 4, "u": 1})
    return c, removed


def test_join_heartbeat_and_leave():
    c, removed = _coordinator()
    r = c.heartbeat("g", "m1", 0, ["t"], now=0, client_id="cli", client_host="/1.2.3.4")
    assert (r.error_code, r.member_id, r.member_epoch, r.heartbeat_interval_ms) == (
        E.NONE, "m1", 1, 5000)
    assert r.assignment == {"t": [0, 1, 2, 3]}
    # a steady heartbeat carries no assignment (unchanged)
    r = c.heartbeat("g", "m1", 1, None, now=100)
    assert (r.error_code, r.member_epoch, r.assignment) == (E.NONE, 1, None)
    r = c.heartbeat("g", "m2", 0, ["t"], now=200)
    assert r.member_epoch == 2
    both = r.assignment
    r1 = c.heartbeat("g", "m1", 1, None, now=300)
    assert r1.member_epoch == 2 and r1.assignment is not None
    # balanced: 2 partitions each, every partition assigned once
    assert sorted(both["t"] + r1.assignment["t"]) == [0, 1, 2, 3]
    assert len(both["t"]) == len(r1.assignment["t"]) == 2
    g = c.group("g")
    assert (g.state, g.group_epoch, g.assignment_epoch) == ("Stable", 2, 2)
    assert g.members["m1"].client_id == "cli"
    r = c.heartbeat("g", "m2", -1, None, now=400)
    assert (r.error_code, r.member_epoch) == (E.NONE, -1)
    assert removed == [("g", "m2")]
    r = c.heartbeat("g", "m1", 2, None, now=500)
    assert (r.member_epoch, r.assignment) == (3, {"t": [0, 1, 2, 3]})


def test_more_members_than_partitions_share_them():
    c, _ = _coordinator()
    got = {}
    for m in ("a", "b", "c"):
        got[m] = c.heartbeat("g", m, 0, ["u"], now=0).assignment
    for m in ("a", "b", "c"):
        r = c.heartbeat("g", m, c.group("g").members[m].member_epoch, None, now=1)
        if r.assignment is not None:
            got[m] = r.assignment
    assert got == {"a": {"u": [0]}, "b": {"u": [0]}, "c": {"u": [0]}}


def test_invalid_requests_fencing_and_unknown_members():
    c, _ = _coordinator()
    cases = {
        ("", "m", 0, ("t",)): (E.INVALID_REQUEST, "GroupId can't be empty."),
        ("g", "", 0, ("t",)): (E.INVALID_REQUEST, "MemberId can't be empty."),
        ("g", "m", -2, ("t",)): (E.INVALID_REQUEST,
                                "MemberEpoch is -2, but must be greater than or equal to -1."),
        ("g", "m", 0, None): (E.INVALID_REQUEST,
                              "SubscribedTopicNames must be set in first request."),
        ("nope", "m", 3, None): (E.GROUP_ID_NOT_FOUND, "Group nope not found."),
    }
    for (g, m, epoch, subs), expected in cases.items():
        r = c.heartbeat(g, m, epoch, subs, now=0)
        assert (r.error_code, r.error_message) == expected
    c.heartbeat("g", "m1", 0, ["t"], now=0)
    r = c.heartbeat("g", "m9", 5, None, now=1)
    assert (r.error_code, r.error_message) == (E.UNKNOWN_MEMBER_ID,
                                               "Member m9 is not a member of group g.")
    r = c.heartbeat("g", "m1", 7, None, now=2)
    assert r.error_code == E.FENCED_MEMBER_EPOCH
    assert r.error_message.startswith("The share group member has a greater member epoch (7)")
    assert c.heartbeat("g", "m9", -1, None, now=3).error_code == E.UNKNOWN_MEMBER_ID


def test_a_group_id_of_another_type_and_the_size_limit():
    c = ShareGroupCoordinator(max_size=2, other_group_type=lambda g: "consumer" if g == "cg"
                              else None)
    c.update_metadata({"t": 1})
    r = c.heartbeat("cg", "m", 0, ["t"], now=0)
    assert (r.error_code, r.error_message) == (E.GROUP_ID_NOT_FOUND,
                                               "Group cg is not a share group.")
    assert c.heartbeat("g", "a", 0, ["t"], now=0).error_code == E.NONE
    assert c.heartbeat("g", "b", 0, ["t"], now=0).error_code == E.NONE
    r = c.heartbeat("g", "c", 0, ["t"], now=0)
    assert r.error_code == E.GROUP_MAX_SIZE_REACHED


def test_session_timeout_and_metadata_changes():
    c, removed = _coordinator(session_timeout_ms=1000)
    c.heartbeat("g", "a", 0, ["t"], now=0)
    c.heartbeat("g", "b", 0, ["u"], now=0)
    assert c.next_deadline() == 1000
    r = c.heartbeat("g", "a", 1, None, now=900)  # its epoch: it takes the group's new one
    assert (r.error_code, r.member_epoch) == (E.NONE, 2)
    assert c.expire_sessions(1001) == [("g", "b")]
    assert removed == [("g", "b")] and list(c.group("g").members) == ["a"]
    epoch = c.group("g").group_epoch
    hash_before = c.group("g").metadata_hash
    c.update_metadata({"t": 6, "u": 1})  # t grew: a's group hashes its topics again...
    assert c.group("g").group_epoch == epoch and c.group("g").metadata_refresh_needed
    r = c.heartbeat("g", "a", c.group("g").members["a"].member_epoch, None, now=1100)
    # ... at its next heartbeat: a new hash, a new epoch, a new target
    assert c.group("g").group_epoch == epoch + 1 == r.member_epoch
    assert c.group("g").metadata_hash != hash_before
    assert r.assignment == {"t": [0, 1, 2, 3, 4, 5]}
    c.update_metadata({"t": 6, "u": 2})  # nobody subscribes to u any more: no new epoch
    r = c.heartbeat("g", "a", r.member_epoch, None, now=1150)
    assert c.group("g").group_epoch == epoch + 1 and r.assignment is None
    # a subscription to a topic that does not exist yet: nothing assigned, then it appears
    r = c.heartbeat("g", "a", r.member_epoch, ["t", "v"], now=1200)
    assert r.assignment is None or r.assignment == {"t": [0, 1, 2, 3, 4, 5]}
    c.update_metadata({"t": 6, "u": 2, "v": 1})
    r = c.heartbeat("g", "a", c.group("g").members["a"].member_epoch, None, now=1300)
    assert r.assignment == {"t": [0, 1, 2, 3, 4, 5], "v": [0]}
