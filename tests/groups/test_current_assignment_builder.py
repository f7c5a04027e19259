"""Tests for :mod:`kafkalog.groups.modern.current_assignment_builder`.

Ported from Apache Kafka's
``group-coordinator/src/test/java/org/apache/kafka/coordinator/group/modern/consumer/
CurrentAssignmentBuilderTest.java``, read from the apache/kafka mirror at commit
``1eb7644349cb07139d6a3c1ad1986979647cac99``: one function per Java ``@Test`` (same names in
snake_case), with Kafka's expectations kept as they are. Topic ids are plain strings where Java
uses ``Uuid.randomUuid()``; ``mkAssignment(mkTopicAssignment(t, 1, 2))`` is
``{t: frozenset({1, 2})}``; ``withOwnedTopicPartitions`` not called (or ``null``) is
``owned=None``, ``Collections.emptyList()`` is ``[]``.

A hypothesis property at the end checks the STABLE -> next-epoch step against the rules of
``computeNextAssignment`` when every partition is free.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkalog.groups.modern.consumer_group import ConsumerGroupMember, MemberState
from kafkalog.groups.modern.current_assignment_builder import FencedMemberEpoch, build

T1 = "topic1-id"
T2 = "topic2-id"


def mk_assignment(*topic_assignments):
    """``mkAssignment``: topic id -> frozenset of partitions."""
    return {t: frozenset(ps) for t, ps in topic_assignments}


def tp(topic_id, *partitions):
    """``mkTopicAssignment`` / ``new TopicPartitions().setTopicId(..).setPartitions(..)``."""
    return (topic_id, list(partitions))


def epoch_of(value):
    """``withCurrentPartitionEpoch((topicId, partitionId) -> value)``."""
    return lambda topic_id, partition: value


def test_stable_to_stable():
    member = ConsumerGroupMember(
        "member", state=MemberState.STABLE, member_epoch=10, previous_member_epoch=10,
        assigned_partitions=mk_assignment(tp(T1, 1, 2, 3), tp(T2, 4, 5, 6)))

    updated = build(member, 11, mk_assignment(tp(T1, 1, 2, 3), tp(T2, 4, 5, 6)),
                    epoch_of(10), None)

    assert updated == ConsumerGroupMember(
        "member", state=MemberState.STABLE, member_epoch=11, previous_member_epoch=10,
        assigned_partitions=mk_assignment(tp(T1, 1, 2, 3), tp(T2, 4, 5, 6)))


def test_stable_to_stable_with_new_partitions():
    member = ConsumerGroupMember(
        "member", state=MemberState.STABLE, member_epoch=10, previous_member_epoch=10,
        assigned_partitions=mk_assignment(tp(T1, 1, 2, 3), tp(T2, 4, 5, 6)))

    updated = build(member, 11, mk_assignment(tp(T1, 1, 2, 3, 4), tp(T2, 4, 5, 6, 7)),
                    epoch_of(-1), None)

    assert updated == ConsumerGroupMember(
        "member", state=MemberState.STABLE, member_epoch=11, previous_member_epoch=10,
        assigned_partitions=mk_assignment(tp(T1, 1, 2, 3, 4), tp(T2, 4, 5, 6, 7)))


def test_stable_to_unrevoked_partitions():
    member = ConsumerGroupMember(
        "member", state=MemberState.STABLE, member_epoch=10, previous_member_epoch=10,
        assigned_partitions=mk_assignment(tp(T1, 1, 2, 3), tp(T2, 4, 5, 6)))

    updated = build(member, 11, mk_assignment(tp(T1, 2, 3, 4), tp(T2, 5, 6, 7)),
                    epoch_of(-1), None)

    assert updated == ConsumerGroupMember(
        "member", state=MemberState.UNREVOKED_PARTITIONS, member_epoch=10,
        previous_member_epoch=10,
        assigned_partitions=mk_assignment(tp(T1, 2, 3), tp(T2, 5, 6)),
        partitions_pending_revocation=mk_assignment(tp(T1, 1), tp(T2, 4)))


def test_stable_to_unreleased_partitions():
    member = ConsumerGroupMember(
        "member", state=MemberState.STABLE, member_epoch=10, previous_member_epoch=10,
        assigned_partitions=mk_assignment(tp(T1, 1, 2, 3), tp(T2, 4, 5, 6)))

    updated = build(member, 11, mk_assignment(tp(T1, 1, 2, 3, 4), tp(T2, 4, 5, 6, 7)),
                    epoch_of(10), None)

    assert updated == ConsumerGroupMember(
        "member", state=MemberState.UNRELEASED_PARTITIONS, member_epoch=11,
        previous_member_epoch=10,
        assigned_partitions=mk_assignment(tp(T1, 1, 2, 3), tp(T2, 4, 5, 6)))


def test_stable_to_unreleased_partitions_with_owned_partitions_not_having_revoked_partitions():
    member = ConsumerGroupMember(
        "member", state=MemberState.STABLE, member_epoch=10, previous_member_epoch=10,
        assigned_partitions=mk_assignment(tp(T1, 1, 2, 3), tp(T2, 4, 5, 6)))

    updated = build(member, 11, mk_assignment(tp(T1, 1, 2, 3), tp(T2, 4, 5, 7)),
                    lambda topic_id, _: 10 if topic_id == T2 else -1, [])

    assert updated == ConsumerGroupMember(
        "member", state=MemberState.UNRELEASED_PARTITIONS, member_epoch=11,
        previous_member_epoch=10,
        assigned_partitions=mk_assignment(tp(T1, 1, 2, 3), tp(T2, 4, 5)))


def test_unrevoked_partitions_to_stable():
    member = ConsumerGroupMember(
        "member", state=MemberState.UNREVOKED_PARTITIONS, member_epoch=10,
        previous_member_epoch=10,
        assigned_partitions=mk_assignment(tp(T1, 2, 3), tp(T2, 5, 6)),
        partitions_pending_revocation=mk_assignment(tp(T1, 1), tp(T2, 4)))

    updated = build(member, 11, mk_assignment(tp(T1, 2, 3), tp(T2, 5, 6)), epoch_of(-1),
                    [tp(T1, 2, 3), tp(T2, 5, 6)])

    assert updated == ConsumerGroupMember(
        "member", state=MemberState.STABLE, member_epoch=11, previous_member_epoch=10,
        assigned_partitions=mk_assignment(tp(T1, 2, 3), tp(T2, 5, 6)))


def test_remains_in_unrevoked_partitions():
    member = ConsumerGroupMember(
        "member", state=MemberState.UNREVOKED_PARTITIONS, member_epoch=10,
        previous_member_epoch=10,
        assigned_partitions=mk_assignment(tp(T1, 2, 3), tp(T2, 5, 6)),
        partitions_pending_revocation=mk_assignment(tp(T1, 1), tp(T2, 4)))
    target = mk_assignment(tp(T1, 3), tp(T2, 6))

    assert build(member, 12, target, epoch_of(-1), None) == member
    assert build(member, 12, target, epoch_of(-1),
                 [tp(T1, 1, 2, 3), tp(T2, 5, 6)]) == member
    assert build(member, 12, target, epoch_of(-1),
                 [tp(T1, 2, 3), tp(T2, 4, 5, 6)]) == member


def test_unrevoked_partitions_to_unrevoked_partitions():
    member = ConsumerGroupMember(
        "member", state=MemberState.UNREVOKED_PARTITIONS, member_epoch=10,
        previous_member_epoch=10,
        assigned_partitions=mk_assignment(tp(T1, 2, 3), tp(T2, 5, 6)),
        partitions_pending_revocation=mk_assignment(tp(T1, 1), tp(T2, 4)))

    updated = build(member, 12, mk_assignment(tp(T1, 3), tp(T2, 6)), epoch_of(-1),
                    [tp(T1, 2, 3), tp(T2, 5, 6)])

    assert updated == ConsumerGroupMember(
        "member", state=MemberState.UNREVOKED_PARTITIONS, member_epoch=11,
        previous_member_epoch=10,
        assigned_partitions=mk_assignment(tp(T1, 3), tp(T2, 6)),
        partitions_pending_revocation=mk_assignment(tp(T1, 2), tp(T2, 5)))


def test_unrevoked_partitions_to_unreleased_partitions():
    member = ConsumerGroupMember(
        "member", state=MemberState.UNREVOKED_PARTITIONS, member_epoch=11,
        previous_member_epoch=10,
        assigned_partitions=mk_assignment(tp(T1, 2, 3), tp(T2, 5, 6)))

    updated = build(member, 11, mk_assignment(tp(T1, 2, 3, 4), tp(T2, 5, 6, 7)),
                    epoch_of(10), [tp(T1, 2, 3), tp(T2, 5, 6)])

    assert updated == ConsumerGroupMember(
        "member", state=MemberState.UNRELEASED_PARTITIONS, member_epoch=11,
        previous_member_epoch=11,
        assigned_partitions=mk_assignment(tp(T1, 2, 3), tp(T2, 5, 6)))


def test_unreleased_partitions_to_stable():
    member = ConsumerGroupMember(
        "member", state=MemberState.UNRELEASED_PARTITIONS, member_epoch=11,
        previous_member_epoch=11,
        assigned_partitions=mk_assignment(tp(T1, 2, 3), tp(T2, 5, 6)))

    updated = build(member, 12, mk_assignment(tp(T1, 2, 3), tp(T2, 5, 6)), epoch_of(10),
                    None)

    assert updated == ConsumerGroupMember(
        "member", state=MemberState.STABLE, member_epoch=12, previous_member_epoch=11,
        assigned_partitions=mk_assignment(tp(T1, 2, 3), tp(T2, 5, 6)))


def test_unreleased_partitions_to_stable_with_new_partitions():
    member = ConsumerGroupMember(
        "member", state=MemberState.UNRELEASED_PARTITIONS, member_epoch=11,
        previous_member_epoch=11,
        assigned_partitions=mk_assignment(tp(T1, 2, 3), tp(T2, 5, 6)))

    updated = build(member, 11, mk_assignment(tp(T1, 2, 3, 4), tp(T2, 5, 6, 7)),
                    epoch_of(-1), None)

    assert updated == ConsumerGroupMember(
        "member", state=MemberState.STABLE, member_epoch=11, previous_member_epoch=11,
        assigned_partitions=mk_assignment(tp(T1, 2, 3, 4), tp(T2, 5, 6, 7)))


def test_unreleased_partitions_to_unreleased_partitions():
    member = ConsumerGroupMember(
        "member", state=MemberState.UNRELEASED_PARTITIONS, member_epoch=11,
        previous_member_epoch=11,
        assigned_partitions=mk_assignment(tp(T1, 2, 3), tp(T2, 5, 6)))

    updated = build(member, 11, mk_assignment(tp(T1, 2, 3, 4), tp(T2, 5, 6, 7)),
                    epoch_of(10), None)

    assert updated == member


def test_unreleased_partitions_to_unrevoked_partitions():
    member = ConsumerGroupMember(
        "member", state=MemberState.UNRELEASED_PARTITIONS, member_epoch=11,
        previous_member_epoch=11,
        assigned_partitions=mk_assignment(tp(T1, 2, 3), tp(T2, 5, 6)))

    updated = build(member, 12, mk_assignment(tp(T1, 3), tp(T2, 6)), epoch_of(10), None)

    assert updated == ConsumerGroupMember(
        "member", state=MemberState.UNREVOKED_PARTITIONS, member_epoch=11,
        previous_member_epoch=11,
        assigned_partitions=mk_assignment(tp(T1, 3), tp(T2, 6)),
        partitions_pending_revocation=mk_assignment(tp(T1, 2), tp(T2, 5)))


def test_unknown_state():
    member = ConsumerGroupMember(
        "member", state=MemberState.UNKNOWN, member_epoch=11, previous_member_epoch=11,
        assigned_partitions=mk_assignment(tp(T1, 3), tp(T2, 6)),
        partitions_pending_revocation=mk_assignment(tp(T1, 2), tp(T2, 5)))
    target = mk_assignment(tp(T1, 3), tp(T2, 6))

    # When the member is in an unknown state, the member is first to force
    # a reset of the client side member state.
    with pytest.raises(FencedMemberEpoch):
        build(member, 12, target, epoch_of(10), None)

    # Then the member rejoins with no owned partitions.
    updated = build(member, 12, target, epoch_of(11), [])

    assert updated == ConsumerGroupMember(
        "member", state=MemberState.STABLE, member_epoch=12, previous_member_epoch=11,
        assigned_partitions=mk_assignment(tp(T1, 3), tp(T2, 6)))


# -- property ---------------------------------------------------------------------------------

_TOPICS = ("t-a", "t-b", "t-c")
_PARTITIONS = st.frozensets(st.integers(0, 3), max_size=4)
_ASSIGNMENTS = st.dictionaries(st.sampled_from(_TOPICS), _PARTITIONS, max_size=3).map(
    lambda d: {t: ps for t, ps in d.items() if ps})
_OWNED = st.one_of(
    st.none(),
    st.lists(st.tuples(st.sampled_from(_TOPICS),
                       st.lists(st.integers(0, 3), max_size=4)), max_size=4))


def _per_topic(op, a, b):
    out = {t: op(a.get(t, frozenset()), b.get(t, frozenset())) for t in set(a) | set(b)}
    return {t: ps for t, ps in out.items() if ps}


@given(held=_ASSIGNMENTS, target=_ASSIGNMENTS, owned=_OWNED,
       member_epoch=st.integers(0, 20), epoch_delta=st.integers(1, 5),
       previous_member_epoch=st.integers(-1, 20))
def test_stable_member_property(held, target, owned, member_epoch, epoch_delta,
                                previous_member_epoch):
    target_epoch = member_epoch + epoch_delta
    member = ConsumerGroupMember(
        "member", state=MemberState.STABLE, member_epoch=member_epoch,
        previous_member_epoch=previous_member_epoch, client_id="c", rack_id="r",
        assigned_partitions=held)

    updated = build(member, target_epoch, target, epoch_of(-1), owned)

    to_revoke = _per_topic(lambda h, g: h - g, held, target)
    owns_revoked = bool(to_revoke) and (
        owned is None or any(p in to_revoke.get(t, ()) for t, ps in owned for p in ps))
    if not owns_revoked:
        # (a) STABLE at the target epoch, holding exactly the target
        assert updated == replace(
            member, state=MemberState.STABLE, member_epoch=target_epoch,
            previous_member_epoch=member_epoch, assigned_partitions=target,
            partitions_pending_revocation={})
    else:
        # (b) UNREVOKED_PARTITIONS at its own epoch, holding held ∩ target
        assert updated == replace(
            member, state=MemberState.UNREVOKED_PARTITIONS, member_epoch=member_epoch,
            previous_member_epoch=member_epoch,
            assigned_partitions=_per_topic(lambda h, g: h & g, held, target),
            partitions_pending_revocation=to_revoke)
