"""KIP-932 share partitions, sans I/O (:class:`kafkalog.groups.share.SharePartition`): the
record states, delivery counts and locks of Kafka's ``SharePartition`` (core, 4.1), and random
operation sequences checked against the rules."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalog.groups.share import (
    AcknowledgeType,
    InvalidRecordStateError,
    RecordState,
    SharePartition,
)

ACCEPT, RELEASE, REJECT, GAP, RENEW = (AcknowledgeType.ACCEPT, AcknowledgeType.RELEASE,
                                       AcknowledgeType.REJECT, AcknowledgeType.GAP,
                                       AcknowledgeType.RENEW)
BATCHES = [(0, 4), (5, 9), (10, 14)]


def test_acquire_takes_whole_batches_and_redeliveries_first():
    sp = SharePartition(0)
    assert sp.acquire("a", BATCHES, now=0, max_records=6) == [(0, 9, 1)]  # two whole batches
    assert sp.end_offset == 10
    assert sp.acquire("b", BATCHES, now=1, max_records=100) == [(10, 14, 1)]
    sp.acknowledge("a", [(0, 9, (RELEASE,))], now=2)
    # released offsets come back first, with their delivery count
    assert sp.next_fetch_offset(3) == 0
    assert sp.acquire("b", BATCHES, now=3, max_records=4) == [(0, 4, 2)]  # the whole batch
    assert sp.state_of(5) == (RecordState.AVAILABLE, 1)


def test_accept_reject_gap_move_the_start_offset_and_release_redelivers():
    sp = SharePartition(0)
    sp.acquire("a", BATCHES, now=0, max_records=100)
    sp.acknowledge("a", [(0, 2, (ACCEPT,)), (3, 4, (REJECT, GAP)), (6, 6, (RELEASE,))], now=1)
    assert sp.start_offset == 5
    assert sp.state_of(6) == (RecordState.AVAILABLE, 1)
    assert sp.state_of(5) == (RecordState.ACQUIRED, 1)
    sp.acknowledge("a", [(5, 5, (ACCEPT,)), (7, 14, (ACCEPT,))], now=2)
    assert sp.start_offset == 6  # offset 6 is still to deliver
    assert sp.acquire("b", BATCHES, now=3, max_records=100) == [(6, 6, 2)]
    sp.acknowledge("b", [(6, 6, (ACCEPT,))], now=4)
    assert (sp.start_offset, sp.end_offset) == (15, 15)
    assert sp.state_batches() == []


def test_acknowledgements_are_checked_before_any_applies():
    sp = SharePartition(0)
    sp.acquire("a", BATCHES[:1], now=0, max_records=100)
    sp.acquire("b", BATCHES[1:2], now=0, max_records=100)
    bad = [
        [(0, 1, (ACCEPT,)), (5, 5, (ACCEPT,))],   # 5 is b's
        [(0, 1, (ACCEPT, ACCEPT, ACCEPT))],       # three types for two offsets
        [(0, 0, (9,))],                           # no such type
        [(3, 1, (ACCEPT,))],                      # last below first
        [(14, 14, (ACCEPT,))],                    # never acquired
    ]
    for batches in bad:
        with pytest.raises(InvalidRecordStateError):
            sp.acknowledge("a", batches, now=1)
    assert sp.state_of(0) == (RecordState.ACQUIRED, 1) and sp.start_offset == 0


def test_expired_locks_return_records_and_late_acknowledgements_fail():
    sp = SharePartition(0, lock_duration_ms=1000)
    sp.acquire("a", BATCHES[:1], now=0, max_records=100)
    sp.acknowledge("a", [(0, 0, (RENEW,))], now=900)  # offset 0 locked until 1900
    assert sp.next_fetch_offset(1000) == 1              # offsets 1-4 expired at 1000
    with pytest.raises(InvalidRecordStateError, match="offset 1 is not acquired"):
        sp.acknowledge("a", [(1, 1, (ACCEPT,))], now=1001)
    assert sp.acquire("b", BATCHES[:1], now=1001, max_records=100) == [(1, 4, 2)]
    sp.acknowledge("a", [(0, 0, (ACCEPT,))], now=1899)
    assert sp.start_offset == 1


def test_the_delivery_limit_archives_a_record():
    sp = SharePartition(0, max_delivery_count=3, lock_duration_ms=10)
    now = 0
    for attempt in (1, 2, 3):
        assert sp.acquire("a", [(0, 0)], now=now, max_records=1) == [(0, 0, attempt)]
        now += 20  # the lock expires
    assert sp.next_fetch_offset(now) == 1  # archived after its third delivery
    assert sp.start_offset == 1
    assert sp.acquire("a", [(0, 0)], now=now, max_records=1) == []


def test_release_member_and_the_lock_limit():
    sp = SharePartition(0, max_in_flight=7)
    assert sp.acquire("a", BATCHES, now=0, max_records=100) == [(0, 9, 1)]  # 5 + 5 > 7: stop
    assert sp.acquire("b", BATCHES, now=0, max_records=100) == []            # at the limit
    assert sp.release_member("a") == 10
    assert sp.acquire("b", BATCHES, now=1, max_records=100) == [(0, 9, 2)]


def test_archive_acquired_takes_only_what_the_member_holds():
    sp = SharePartition(0)
    sp.acquire("a", BATCHES[:2], now=0, max_records=100)        # 0-9 held by a
    sp.acknowledge("a", [(0, 0, (ACCEPT,))], now=1)
    sp.acquire("b", BATCHES[2:], now=1, max_records=100)        # 10-14 held by b
    assert sp.archive_acquired("a", [(0, 2), (12, 13)]) == 2     # 1 and 2 (0 is done; 12-13 b's)
    assert sp.start_offset == 3
    assert sp.state_of(12) == (RecordState.ACQUIRED, 1)
    assert sp.archive_acquired("nobody", [(0, 20)]) == 0


def test_log_start_offset_archives_what_retention_removed():
    sp = SharePartition(0)
    sp.acquire("a", BATCHES, now=0, max_records=100)
    sp.update_log_start_offset(7)
    assert (sp.start_offset, sp.end_offset) == (7, 15)
    with pytest.raises(InvalidRecordStateError):
        sp.acknowledge("a", [(5, 5, (ACCEPT,))], now=1)
    sp.update_log_start_offset(20)
    assert (sp.start_offset, sp.end_offset) == (20, 20)
    assert sp.acquire("a", [(20, 24)], now=2, max_records=100) == [(20, 24, 1)]


def test_state_batches_round_trip_through_restore():
    sp = SharePartition(0)
    sp.acquire("a", BATCHES, now=0, max_records=100)
    sp.acknowledge("a", [(2, 3, (ACCEPT,)), (5, 6, (REJECT,)), (9, 9, (RELEASE,))], now=1)
    saved = sp.state_batches()
    # acquired offsets are stored as AVAILABLE (a restart frees them), Kafka's persisted form
    assert saved[:3] == [(0, 1, 0, 1), (2, 3, 2, 1), (4, 4, 0, 1)]
    again = SharePartition(sp.start_offset)
    again.restore(saved)
    assert again.state_batches() == saved
    assert again.acquire("b", BATCHES, now=2, max_records=100)[0] == (0, 1, 2)


# -- random sequences --------------------------------------------------------------------------

OPS = st.lists(st.tuples(st.sampled_from(["acquire", "ack", "release", "tick", "lso"]),
                         st.sampled_from(["a", "b", "c"]), st.integers(0, 30),
                         st.integers(1, 12), st.sampled_from([1, 2, 3, 0, 4])),
               max_size=60)


@settings(max_examples=200, deadline=None)
@given(OPS)
def test_random_operations_keep_kafkas_invariants(ops):
    batches = [(i, min(i + 2, 39)) for i in range(0, 40, 3)]
    sp = SharePartition(0, lock_duration_ms=50, max_delivery_count=3, max_in_flight=15)
    now = 0
    held: dict[int, str] = {}      # offset -> member, by the model
    done: set[int] = set()         # accepted offsets never come back
    last_start = 0
    for op, member, n, count, kind in ops:
        now += 7
        if op == "acquire":
            sp.expire_locks(now)  # (acquire does it first too): what is locked now stays so
            locked = {o for o in range(sp.start_offset, sp.end_offset)
                      if sp.state_of(o)[0] == RecordState.ACQUIRED}
            got = sp.acquire(member, batches, now=now, max_records=count)
            for first, last, dc in got:
                assert 1 <= dc <= 3
                for off in range(first, last + 1):
                    assert off not in done
                    held[off] = member
            taken = [o for f, last, _ in got for o in range(f, last + 1)]
            assert len(set(taken)) == len(taken)
            assert not locked & set(taken)  # nobody's live lock was taken over
        elif op == "ack":
            mine = sorted(o for o, m in held.items() if m == member
                          and sp.state_of(o)[0] == RecordState.ACQUIRED)
            if mine:
                off = mine[n % len(mine)]
                try:
                    sp.acknowledge(member, [(off, off, (kind,))], now=now)
                except InvalidRecordStateError:
                    pass  # its lock expired in the meantime
                else:
                    if kind == ACCEPT:
                        done.add(off)
                    if kind != RENEW:
                        held.pop(off, None)
        elif op == "release":
            sp.release_member(member)
            for off in [o for o, m in held.items() if m == member]:
                held.pop(off)
        elif op == "tick":
            now += 60
        else:
            sp.update_log_start_offset(min(sp.start_offset + n % 3, sp.end_offset))
        assert sp.start_offset >= last_start  # the start offset never goes back
        last_start = sp.start_offset
        assert sp.start_offset <= sp.end_offset
        assert sp.acquired_count() < 15 + 3  # the last batch started may overshoot the limit
        for off in range(sp.start_offset, sp.end_offset):
            state, dc = sp.state_of(off)
            assert state in RecordState and dc <= 3
            if off in done:
                assert state == RecordState.ACKNOWLEDGED
        if sp.start_offset < sp.end_offset:  # the start offset sits on an unfinished offset
            assert sp.state_of(sp.start_offset)[0] in (RecordState.AVAILABLE,
                                                        RecordState.ACQUIRED)


# -- the array version against the plain reference ------------------------------------------------

@settings(max_examples=300, deadline=None)
@given(OPS, st.integers(0, 5), st.booleans())
def test_arrays_agree_with_the_per_offset_reference(ops, start, multi_types):
    from tests.groups.share_partition_reference import ReferenceSharePartition

    batches = [(i, min(i + 3, 60)) for i in range(start, 61, 4)]
    kw = {"lock_duration_ms": 50, "max_delivery_count": 3, "max_in_flight": 12}
    fast, ref = SharePartition(start, **kw), ReferenceSharePartition(start, **kw)
    now = 0
    for op, member, n, count, kind in ops:
        now += 9
        if op == "acquire":
            assert fast.acquire(member, batches, now=now, max_records=count) \
                == ref.acquire(member, batches, now=now, max_records=count)
        elif op == "ack":
            lo = fast.start_offset + n % 7
            hi = lo + count % 5
            types = tuple((kind + i) % 5 for i in range(hi - lo + 1)) if multi_types else (kind,)
            outcomes = []
            for sp in (fast, ref):
                try:
                    sp.acknowledge(member, [(lo, hi, types)], now=now)
                    outcomes.append(None)
                except InvalidRecordStateError:
                    outcomes.append("refused")
            assert outcomes[0] == outcomes[1]
        elif op == "release":
            assert fast.release_member(member) == ref.release_member(member)
        elif op == "tick":
            now += 40
            assert fast.expire_locks(now) == ref.expire_locks(now)
        else:
            target = fast.start_offset + n % 4
            fast.update_log_start_offset(target)
            ref.update_log_start_offset(target)
        assert (fast.start_offset, fast.end_offset) == (ref.start_offset, ref.end_offset)
        assert fast.acquired_count() == ref.acquired_count()
        assert fast.state_batches() == ref.state_batches()
        for off in range(fast.start_offset - 1, fast.end_offset + 2):
            assert fast.state_of(off) == ref.state_of(off)
        assert fast.next_fetch_offset(now) == ref.next_fetch_offset(now)
    again = SharePartition(ref.start_offset, **kw)
    again.restore(ref.state_batches())
    assert again.state_batches() == ref.state_batches()
