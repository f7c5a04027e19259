"""KRaft's PartitionChangeBuilder: Kafka's own test cases, ported.

Every test here is a case of Kafka 3.9 ``metadata/src/test/java/org/apache/kafka/controller/
PartitionChangeBuilderTest.java`` (same registrations, same targets, same expected record),
named after it. Kafka parametrizes most cases over PartitionChangeRecord versions 0..2, which
stand for metadata versions 3.7-IV0, 3.7-IV2 (log directories in records) and 4.0-IV0 (ELR on);
so do we. Kafka builds records with setters; ``PartitionChangeRecord(...)`` below lists the
same fields. Java ``HashSet`` iteration order (ascending for small ints) is what Kafka's
expected ELR lists show, and what our port produces.
"""

from __future__ import annotations

import pytest

from kafkalog.cluster.metadata_version import MetadataVersion
from kafkalog.cluster.model import (
    LOST_DIR,
    MIGRATING_DIR,
    NO_LEADER,
    NO_LEADER_CHANGE,
    RECOVERED,
    RECOVERING,
    UNASSIGNED_DIR,
    PartitionChangeRecord,
    PartitionRegistration,
)
from kafkalog.cluster.partition_change import (
    Election,
    PartitionChangeBuilder,
    PartitionReassignmentReplicas,
    PartitionReassignmentRevert,
)

VERSIONS = [0, 1, 2]
MV_FOR_RECORD_VERSION = {0: "3.7-IV0", 1: "3.7-IV2", 2: "4.0-IV0"}


def _mv(version_or_name: int | str) -> MetadataVersion:
    name = (MV_FOR_RECORD_VERSION[version_or_name] if isinstance(version_or_name, int)
            else version_or_name)
    return MetadataVersion.from_name(name)


def _elr_supported(mv: MetadataVersion) -> bool:
    return mv.is_at_least("4.0-IV0")          # MetadataVersion.isElrSupported in 3.9


FOO = PartitionRegistration(
    replicas=[2, 1, 3], isr=[2, 1, 3], leader=1, leader_recovery_state=RECOVERED,
    leader_epoch=100, partition_epoch=200,
    directories=["dpdvA5AZSWySmnPFTnu5Kw", "V60B3cglScq3Xk8BX1NxAQ", UNASSIGNED_DIR])
FOO_ID = "FbrrdcfiR-KC2CPSTHaJrg"

BAR = PartitionRegistration(
    replicas=[1, 2, 3, 4], isr=[1, 2, 3], removing_replicas=[1], adding_replicas=[4],
    leader=1, leader_recovery_state=RECOVERED, leader_epoch=100, partition_epoch=200,
    directories=[UNASSIGNED_DIR, "X5FnAcIgTheWgTMzeO5WHw", "GtrcdoSOTm2vFMGFeZq0eg",
                 "YcOqPw5ARmeKr1y9W3AkFw"])
BAR_ID = "LKfUsCBnQKekvL9O5dY9nw"

BAZ = PartitionRegistration(
    replicas=[2, 1, 3], isr=[1, 3], leader=3, leader_recovery_state=RECOVERED,
    leader_epoch=100, partition_epoch=200,
    directories=["ywnfFpTBTbOsFdZ6uAdOmw", "Th0x70ecRbWvZNNV33jyRA", "j216tuSoQsC9JFd1Z5ZP6w"])
BAZ_ID = "wQzt5gkSTwuQNXZF5gIw7A"

OFFLINE_WITHOUT_ELR = PartitionRegistration(
    replicas=[2, 1, 3], isr=[3], leader=-1, leader_recovery_state=RECOVERED,
    leader_epoch=100, partition_epoch=200,
    directories=["iYGgiDV5Sb2EtH6hbgYnCA", "XI2t4qAUSkGlLZSKeEVf8g", "eqRW24kIRlitzQFzmovE0Q"])
OFFLINE_WITH_ELR = PartitionRegistration(
    replicas=[2, 1, 3], isr=[], elr=[3], last_known_elr=[2], leader=-1,
    leader_recovery_state=RECOVERED, leader_epoch=100, partition_epoch=200,
    directories=["CQEqt7trRrmqyNxUT1CY0g", "59Mb9smoSsC0bGUP2FYV8A", "LBTmsCVJREqJuIEtwqxRDg"])
OFFLINE_ID = "LKfUsCBnQKekvL9O5dY9nw"


def foo_builder(v: int | str, **kw) -> PartitionChangeBuilder:
    mv = _mv(v)
    return PartitionChangeBuilder(FOO, FOO_ID, 0, lambda r: r != 3, mv, 2,
                                  eligible_leader_replicas_enabled=_elr_supported(mv), **kw)


def bar_builder(v: int, **kw) -> PartitionChangeBuilder:
    return PartitionChangeBuilder(BAR, BAR_ID, 0, lambda r: r != 3, _mv(v), 2,
                                  eligible_leader_replicas_enabled=v >= 2, **kw)


def baz_builder(v: int, **kw) -> PartitionChangeBuilder:
    return PartitionChangeBuilder(BAZ, BAZ_ID, 0, lambda r: True, _mv(v), 2,
                                  eligible_leader_replicas_enabled=v >= 2, **kw)


def offline_builder(v: int, **kw) -> PartitionChangeBuilder:
    mv = _mv(v)
    if _elr_supported(mv):
        return PartitionChangeBuilder(OFFLINE_WITH_ELR, OFFLINE_ID, 0, lambda r: r == 1, mv, 2,
                                      eligible_leader_replicas_enabled=True, **kw)
    return PartitionChangeBuilder(OFFLINE_WITHOUT_ELR, OFFLINE_ID, 0, lambda r: r == 1, mv, 2,
                                  eligible_leader_replicas_enabled=False, **kw)


def _dirs(part: PartitionRegistration, *replicas: int) -> list[str]:
    """``DirectoryId.createAssignmentMap(replicas, directories)`` looked up per replica."""
    m = dict(zip(part.replicas, part.directories))
    return [m.get(r, UNASSIGNED_DIR) for r in replicas]


def test_change_record_is_no_op() -> None:
    assert PartitionChangeRecord().is_no_op()
    assert not PartitionChangeRecord(leader=1).is_no_op()
    assert not PartitionChangeRecord(isr=[1, 2, 3]).is_no_op()
    assert not PartitionChangeRecord(removing_replicas=[1]).is_no_op()
    assert not PartitionChangeRecord(adding_replicas=[4]).is_no_op()
    assert not PartitionChangeRecord(eligible_leader_replicas=[5]).is_no_op()
    assert not PartitionChangeRecord(last_known_elr=[6]).is_no_op()
    assert not PartitionChangeRecord(leader_recovery_state=RECOVERED).is_no_op()
    assert not PartitionChangeRecord(directories=["5JwD0VNXRV2Wr9CCON38Tw",
                                                  "zpL1bRzTQXmmgdxlLHOWuw",
                                                  "6iGUpAkHQXC6bY0FTcPRDw"]).is_no_op()


@pytest.mark.parametrize("v", VERSIONS)
def test_elect_leader(v: int) -> None:
    def elect(b: PartitionChangeBuilder) -> tuple[int, bool]:
        r = b.elect_leader()
        return r.node, r.unclean

    assert elect(foo_builder(v, election=Election.PREFERRED)) == (2, False)
    assert elect(foo_builder(v)) == (1, False)
    assert elect(foo_builder(v, election=Election.UNCLEAN)) == (1, False)
    assert elect(foo_builder(v, target_isr=[1, 3])) == (1, False)
    assert elect(foo_builder(v, election=Election.UNCLEAN, target_isr=[1, 3])) == (1, False)
    assert elect(foo_builder(v, target_isr=[3])) == (NO_LEADER, False)
    assert elect(foo_builder(v, election=Election.UNCLEAN, target_isr=[3])) == (2, True)
    assert elect(foo_builder(v, election=Election.UNCLEAN, target_isr=[4],
                             target_replicas=[2, 1, 3, 4])) == (4, False)
    assert elect(baz_builder(v, election=Election.PREFERRED)) == (3, False)
    assert elect(baz_builder(v)) == (3, False)
    assert elect(baz_builder(v, election=Election.UNCLEAN)) == (3, False)


def _bump(builder: PartitionChangeBuilder, record: PartitionChangeRecord) -> int:
    """``testTriggerLeaderEpochBumpIfNeeded``: the leader the two bump checks leave set."""
    builder.trigger_leader_epoch_bump_for_replica_reassignment_if_needed(record)
    record.isr = list(builder.target_isr)
    builder.trigger_leader_epoch_bump_for_isr_shrink_if_needed(record)
    return record.leader


@pytest.mark.parametrize("v", VERSIONS)
def test_no_leader_epoch_bump_if_nothing_changed(v: int) -> None:
    assert _bump(foo_builder(v), PartitionChangeRecord()) == NO_LEADER_CHANGE


@pytest.mark.parametrize("mv", ["3.6-IV0", "3.7-IV2", "4.0-IV0"])
def test_no_leader_epoch_bump_on_isr_shrink(mv: str) -> None:
    assert _bump(foo_builder(mv, target_isr=[2, 1]), PartitionChangeRecord()) == NO_LEADER_CHANGE


@pytest.mark.parametrize("mv", ["3.4-IV0", "3.5-IV2"])
def test_leader_epoch_bump_on_isr_shrink(mv: str) -> None:
    """KAFKA-15021: before 3.6-IV0 an ISR shrink bumps the leader epoch."""
    assert _bump(foo_builder(mv, target_isr=[2, 1]), PartitionChangeRecord()) == 1


@pytest.mark.parametrize("mv", ["3.6-IV0", "3.7-IV2", "4.0-IV0"])
def test_leader_epoch_bump_on_isr_shrink_with_zk_migration(mv: str) -> None:
    b = foo_builder(mv, zk_migration_enabled=True, target_isr=[2, 1])
    assert _bump(b, PartitionChangeRecord()) == 1


@pytest.mark.parametrize("mv", ["3.4-IV0", "3.5-IV2", "3.6-IV0", "3.7-IV2", "4.0-IV0"])
def test_no_leader_epoch_bump_on_isr_expansion(mv: str) -> None:
    b = foo_builder(mv, target_isr=[2, 1, 3, 4])
    assert _bump(b, PartitionChangeRecord()) == NO_LEADER_CHANGE


@pytest.mark.parametrize("mv", ["3.4-IV0", "3.5-IV2", "3.6-IV0", "3.7-IV2", "4.0-IV0"])
def test_no_leader_epoch_bump_on_isr_expansion_during_migration(mv: str) -> None:
    b = foo_builder(mv, zk_migration_enabled=True, target_isr=[2, 1, 3, 4])
    assert _bump(b, PartitionChangeRecord()) == NO_LEADER_CHANGE


@pytest.mark.parametrize("mv", ["3.4-IV0", "3.5-IV2", "3.6-IV0", "3.7-IV2", "4.0-IV0"])
def test_leader_epoch_bump_on_new_replica_set_disjoint(mv: str) -> None:
    assert _bump(foo_builder(mv, target_replicas=[2, 1, 4]), PartitionChangeRecord()) == 1


@pytest.mark.parametrize("mv", ["3.4-IV0", "3.5-IV2", "3.6-IV0", "3.7-IV2"])
def test_no_leader_epoch_bump_on_empty_target_isr(mv: str) -> None:
    """KAFKA-16624: an empty target ISR that cannot be applied does not bump the epoch."""
    part = PartitionRegistration(replicas=[2], isr=[2], leader=2, leader_epoch=100,
                                 partition_epoch=200, directories=["dpdvA5AZSWySmnPFTnu5Kw"])
    m = _mv(mv)
    b = PartitionChangeBuilder(part, FOO_ID, 0, lambda r: True, m, 2,
                               eligible_leader_replicas_enabled=_elr_supported(m),
                               target_replicas=[])
    record = PartitionChangeRecord()
    b.trigger_leader_epoch_bump_for_isr_shrink_if_needed(record)
    assert record.leader == NO_LEADER_CHANGE


@pytest.mark.parametrize("v", VERSIONS)
def test_no_change(v: int) -> None:
    assert foo_builder(v).build() is None
    assert foo_builder(v, election=Election.UNCLEAN).build() is None
    assert bar_builder(v).build() is None
    assert bar_builder(v, election=Election.UNCLEAN).build() is None
    assert baz_builder(v, election=Election.PREFERRED).build() is None


@pytest.mark.parametrize("v", VERSIONS)
def test_isr_change_doesnt_bump_leader_epoch(v: int) -> None:
    assert foo_builder(v, target_isr=[2, 1]).build() == PartitionChangeRecord(
        topic_id=FOO_ID, partition_id=0, isr=[2, 1])


@pytest.mark.parametrize("v", VERSIONS)
def test_isr_change_and_leader_change(v: int) -> None:
    assert foo_builder(v, target_isr=[2, 3]).build() == PartitionChangeRecord(
        topic_id=FOO_ID, partition_id=0, isr=[2, 3], leader=2)


@pytest.mark.parametrize("v", VERSIONS)
def test_reassignment_rearranges_replicas(v: int) -> None:
    expected = PartitionChangeRecord(topic_id=FOO_ID, partition_id=0, replicas=[3, 2, 1])
    if v >= 1:
        expected.directories = _dirs(FOO, 3, 2, 1)
    assert foo_builder(v, target_replicas=[3, 2, 1]).build() == expected


@pytest.mark.parametrize("v", VERSIONS)
def test_isr_enlargement_completes_reassignment(v: int) -> None:
    expected = PartitionChangeRecord(topic_id=BAR_ID, partition_id=0, replicas=[2, 3, 4],
                                     isr=[2, 3, 4], leader=2, removing_replicas=[],
                                     adding_replicas=[])
    if v >= 1:
        expected.directories = _dirs(BAR, 2, 3, 4)
    assert bar_builder(v, target_isr=[1, 2, 3, 4]).build() == expected


@pytest.mark.parametrize("v", VERSIONS)
def test_revert_reassignment(v: int) -> None:
    revert = PartitionReassignmentRevert(BAR)
    assert revert.replicas == [1, 2, 3]
    assert revert.isr == [1, 2, 3]
    expected = PartitionChangeRecord(topic_id=BAR_ID, partition_id=0, replicas=[1, 2, 3],
                                     leader=1, removing_replicas=[], adding_replicas=[])
    if v >= 1:
        expected.directories = _dirs(BAR, 1, 2, 3)
    built = bar_builder(v, target_replicas=revert.replicas, target_isr=revert.isr,
                        target_removing=[], target_adding=[]).build()
    assert built == expected


@pytest.mark.parametrize("v", VERSIONS)
def test_removing_replica_reassignment(v: int) -> None:
    replicas = PartitionReassignmentReplicas.from_assignments(FOO.replicas, [1, 2])
    assert replicas.removing == [3]
    assert replicas.adding == []
    assert replicas.replicas == [1, 2, 3]
    expected = PartitionChangeRecord(topic_id=FOO_ID, partition_id=0, replicas=[1, 2],
                                     isr=[2, 1], leader=1)
    if v >= 1:
        expected.directories = _dirs(FOO, 1, 2)
    built = foo_builder(v, target_replicas=replicas.replicas,
                        target_removing=replicas.removing).build()
    assert built == expected


@pytest.mark.parametrize("v", VERSIONS)
def test_adding_replica_reassignment(v: int) -> None:
    replicas = PartitionReassignmentReplicas.from_assignments(FOO.replicas, [1, 2, 3, 4])
    assert replicas.removing == []
    assert replicas.adding == [4]
    assert replicas.replicas == [1, 2, 3, 4]
    expected = PartitionChangeRecord(topic_id=FOO_ID, partition_id=0, replicas=[1, 2, 3, 4],
                                     adding_replicas=[4])
    if v >= 1:
        expected.directories = _dirs(FOO, 1, 2, 3) + [UNASSIGNED_DIR]
    built = foo_builder(v, target_replicas=replicas.replicas,
                        target_adding=replicas.adding).build()
    assert built == expected


@pytest.mark.parametrize("v", VERSIONS)
def test_unclean_leader_election(v: int) -> None:
    assert foo_builder(v, election=Election.UNCLEAN, target_isr=[3]).build() == \
        PartitionChangeRecord(topic_id=FOO_ID, partition_id=0, isr=[2], leader=2,
                              leader_recovery_state=RECOVERING)
    expected = PartitionChangeRecord(topic_id=OFFLINE_ID, partition_id=0, isr=[1], leader=1,
                                     leader_recovery_state=RECOVERING)
    if v >= 2:
        # the partition has ELR: an unclean election clears those fields
        expected.eligible_leader_replicas = []
        expected.last_known_elr = []
    assert offline_builder(v, election=Election.UNCLEAN).build() == expected
    assert offline_builder(v, election=Election.UNCLEAN, target_isr=[2]).build() == expected


@pytest.mark.parametrize("leader_recovery_supported", [True, False])
@pytest.mark.parametrize("zk_migration", [True, False])
def test_change_in_leadership_does_not_change_recovery_state(leader_recovery_supported: bool,
                                                             zk_migration: bool) -> None:
    mv = _mv("3.2-IV0" if leader_recovery_supported else "3.1-IV0")
    reg = PartitionRegistration(replicas=[1, 2, 3], isr=[1], leader=1,
                                leader_recovery_state=RECOVERING, leader_epoch=100,
                                partition_epoch=200,
                                directories=["1sF6XXLkSN2LtDums7CJ8Q", "iaBBVsoHQR6NDKXwliKMqw",
                                             "sHaBwjdrR2S3bL4E1RKC8Q"])
    # the last leader goes offline: the target ISR is empty
    offline = PartitionChangeBuilder(reg, FOO_ID, 0, lambda b: False, mv, 2,
                                     zk_migration_enabled=zk_migration, target_isr=[])
    record = offline.build()
    assert record is not None
    assert record.leader_recovery_state == -1         # unchanged: stays RECOVERING
    assert record.leader == NO_LEADER
    reg = reg.merge(record)
    assert (reg.leader, reg.isr[0], reg.leader_recovery_state) == (NO_LEADER, 1, RECOVERING)
    # the leader comes back: the only ISR member is elected and stays RECOVERING
    online = PartitionChangeBuilder(reg, FOO_ID, 0, lambda b: True, mv, 2,
                                    zk_migration_enabled=zk_migration)
    record = online.build()
    assert record is not None
    assert record.leader_recovery_state == -1
    reg = reg.merge(record)
    assert (reg.leader, reg.isr[0], reg.leader_recovery_state) == (1, 1, RECOVERING)


@pytest.mark.parametrize("leader_recovery_supported", [True, False])
@pytest.mark.parametrize("zk_migration", [True, False])
def test_unclean_sets_leader_recovering_state(leader_recovery_supported: bool,
                                              zk_migration: bool) -> None:
    mv = _mv("3.2-IV0" if leader_recovery_supported else "3.1-IV0")
    reg = PartitionRegistration(replicas=[1, 2, 3], isr=[2, 3], leader=NO_LEADER,
                                leader_recovery_state=RECOVERED, leader_epoch=100,
                                partition_epoch=200,
                                directories=["uYpxts0pS4K4bk5XOoXB4g", "kS6fHEqwRYucduWkmvsevw",
                                             "De9RqRThQRGjKg3i3yzUxA"])
    b = PartitionChangeBuilder(reg, FOO_ID, 0, lambda b: b == 1, mv, 2,
                               election=Election.UNCLEAN, zk_migration_enabled=zk_migration)
    record = b.build()
    assert record is not None
    assert record.leader_recovery_state == (RECOVERING if leader_recovery_supported else -1)
    assert record.leader == 1 and record.isr == [1]
    reg = reg.merge(record)
    assert (reg.leader, reg.isr) == (1, [1])
    assert reg.leader_recovery_state == (RECOVERING if leader_recovery_supported else RECOVERED)


def test_stopped_leader_is_demoted_after_reassignment_completes_even_if_no_new_eligible_leaders(
) -> None:
    # reassignment from [0, 1] to [2, 3] in flight; leader 0 is being removed
    part = PartitionRegistration(
        replicas=[2, 3, 0, 1], isr=[0, 1], removing_replicas=[0, 1], adding_replicas=[2, 3],
        leader=0, leader_epoch=0, partition_epoch=0,
        directories=["XCBQClkBSZyphD87QUXzDA", "Or2Rp9tTQOSVuy12hsfmTA",
                     "pThsodMNSwGvljTfc1RNVQ", "d8CGoNJmS5mJdF20tc8P7g"])
    b = PartitionChangeBuilder(part, "T", 0, lambda r: False, _mv("3.1-IV0"), 2,
                               target_isr=[0, 1, 2, 3])
    assert b.build() == PartitionChangeRecord(
        topic_id="T", partition_id=0, replicas=[2, 3], isr=[2, 3], removing_replicas=[],
        adding_replicas=[], leader=NO_LEADER)


def _elr_part(isr: list[int], elr: list[int], lke: list[int], leader: int = 1,
              dirs: list[str] | None = None) -> PartitionRegistration:
    return PartitionRegistration(replicas=[1, 2, 3, 4], isr=isr, elr=elr, last_known_elr=lke,
                                 leader=leader, leader_epoch=100, partition_epoch=200,
                                 directories=dirs or [MIGRATING_DIR] * 4)


@pytest.mark.parametrize("v", VERSIONS)
def test_eligible_leader_replicas_isr_shrink_below_min_isr(v: int) -> None:
    part = _elr_part([1, 2, 3, 4], [], [])
    b = PartitionChangeBuilder(part, FOO_ID, 0, lambda r: r != 3, _mv(v), 3,
                               election=Election.PREFERRED,
                               eligible_leader_replicas_enabled=v >= 2,
                               use_last_known_leader_in_balanced_recovery=False,
                               target_isr=[1, 2])
    expected = PartitionChangeRecord(topic_id=FOO_ID, partition_id=0, isr=[1, 2])
    if v >= 2:
        expected.eligible_leader_replicas = [3, 4]
    record = b.build()
    assert record == expected
    part = part.merge(record)
    assert (part.elr, part.last_known_elr) == (([3, 4], []) if v >= 2 else ([], []))


@pytest.mark.parametrize("v", VERSIONS)
def test_eligible_leader_replicas_isr_expand_above_min_isr(v: int) -> None:
    part = _elr_part([1, 2], [3], [4])
    b = PartitionChangeBuilder(part, FOO_ID, 0, lambda r: r != 3, _mv(v), 3,
                               election=Election.PREFERRED,
                               eligible_leader_replicas_enabled=v >= 2,
                               use_last_known_leader_in_balanced_recovery=False,
                               target_isr=[1, 2, 3])
    # both versions clear the ELR and the last known ELR
    expected = PartitionChangeRecord(topic_id=FOO_ID, partition_id=0, isr=[1, 2, 3],
                                     eligible_leader_replicas=[], last_known_elr=[])
    record = b.build()
    assert record == expected
    part = part.merge(record)
    assert (part.elr, part.last_known_elr) == ([], [])


@pytest.mark.parametrize("v", VERSIONS)
def test_eligible_leader_replicas_isr_add_new_member_not_in_elr(v: int) -> None:
    part = _elr_part([1], [3], [2])
    b = PartitionChangeBuilder(part, FOO_ID, 0, lambda r: r != 3, _mv(v), 3,
                               election=Election.PREFERRED,
                               eligible_leader_replicas_enabled=v >= 2,
                               use_last_known_leader_in_balanced_recovery=False,
                               target_isr=[1, 4])
    expected = PartitionChangeRecord(topic_id=FOO_ID, partition_id=0, isr=[1, 4])
    if v < 2:
        expected.eligible_leader_replicas = []
        expected.last_known_elr = []
    record = b.build()
    assert record == expected
    part = part.merge(record)
    assert (part.elr, part.last_known_elr) == (([3], [2]) if v >= 2 else ([], []))


@pytest.mark.parametrize("v", VERSIONS)
def test_eligible_leader_replicas_remove_unclean_shutdown_replicas_from_elr(v: int) -> None:
    part = _elr_part([1], [2, 3], [])
    b = PartitionChangeBuilder(part, FOO_ID, 0, lambda r: r != 3, _mv(v), 3,
                               election=Election.PREFERRED,
                               eligible_leader_replicas_enabled=v >= 2,
                               use_last_known_leader_in_balanced_recovery=False,
                               unclean_shutdown_replicas=[3])
    expected = PartitionChangeRecord(topic_id=FOO_ID, partition_id=0)
    if v >= 2:
        expected.eligible_leader_replicas = [2]
        expected.last_known_elr = [3]
    else:
        expected.eligible_leader_replicas = []
    record = b.build()
    assert record == expected
    part = part.merge(record)
    assert (part.elr, part.last_known_elr) == (([2], [3]) if v >= 2 else ([], []))


def test_keeps_directories_after_reassignment() -> None:
    reg = PartitionRegistration(replicas=[2, 1, 3], isr=[2, 1, 3], leader=1, leader_epoch=100,
                                partition_epoch=200,
                                directories=["v1PVrX6uS5m8CByXlLfmWg", "iU2znv45Q9yQkOpkTSy3jA",
                                             "fM5NKyWTQHqEihjIkUl99Q"])
    built = PartitionChangeBuilder(reg, FOO_ID, 0, lambda r: True, _mv("3.7-IV2"), 2,
                                   target_replicas=[3, 1, 5, 4],
                                   target_directories={5: "RNJ5oFjjSSWMMFRwqdCfJg"}).build()
    assert built == PartitionChangeRecord(
        topic_id=FOO_ID, partition_id=0, leader=1, replicas=[3, 1, 5, 4],
        directories=["fM5NKyWTQHqEihjIkUl99Q", "iU2znv45Q9yQkOpkTSy3jA",
                     "RNJ5oFjjSSWMMFRwqdCfJg", UNASSIGNED_DIR])


def test_update_directories() -> None:
    reg = PartitionRegistration(replicas=[2, 1, 3], isr=[2, 1, 3], leader=2, leader_epoch=100,
                                partition_epoch=200,
                                directories=["S1zMYZczRjWmucidLqGA5g", "9eRNXTvFTsWUJObvW51V5A",
                                             "UpePYVBgRAi3c4ujQrf3Kg"])
    built = PartitionChangeBuilder(
        reg, FOO_ID, 0, lambda r: True, MetadataVersion.from_level(None), 2,
        target_directories={3: "pN1VKs9zRzK4APflpegAVg", 1: LOST_DIR}).build()
    assert built == PartitionChangeRecord(
        topic_id=FOO_ID, partition_id=0,
        directories=["S1zMYZczRjWmucidLqGA5g", LOST_DIR, "pN1VKs9zRzK4APflpegAVg"])


@pytest.mark.parametrize("last_known_leader", [True, False])
def test_eligible_leader_replicas_elr_can_be_elected(last_known_leader: bool) -> None:
    part = _elr_part([1], [3], [] if last_known_leader else [2])
    # replica 1 goes offline
    b = PartitionChangeBuilder(part, FOO_ID, 0, lambda r: r != 1, _mv(2), 3,
                               election=Election.PREFERRED,
                               eligible_leader_replicas_enabled=True,
                               use_last_known_leader_in_balanced_recovery=last_known_leader,
                               target_isr=[])
    record = b.build()
    assert record == PartitionChangeRecord(topic_id=FOO_ID, partition_id=0, isr=[3],
                                           eligible_leader_replicas=[1], leader=3)
    part = part.merge(record)
    assert part.elr == [1]
    assert part.last_known_elr == ([] if last_known_leader else [2])
    assert part.isr == [3]


@pytest.mark.parametrize("last_known_leader", [True, False])
def test_eligible_leader_replicas_isr_can_shrink_to_zero(last_known_leader: bool) -> None:
    part = _elr_part([1, 2, 3, 4], [], [], dirs=["MrTKKPEpRv66ZpWv4V7EBQ",
                                                  "CkvgdEcWTVmdhfNuJXL0xA",
                                                  "4a2coMsPRkSCsiTVWSksSw",
                                                  "tmPdVjzASZ2ZqiS0cVJvtQ"])
    # every replica goes offline
    b = PartitionChangeBuilder(part, FOO_ID, 0, lambda r: False, _mv(2), 3,
                               election=Election.PREFERRED,
                               eligible_leader_replicas_enabled=True,
                               use_last_known_leader_in_balanced_recovery=last_known_leader,
                               target_isr=[])
    expected = PartitionChangeRecord(topic_id=FOO_ID, partition_id=0, isr=[], leader=-1,
                                     eligible_leader_replicas=[1, 2, 3, 4])
    if last_known_leader:
        expected.last_known_elr = [1]
    record = b.build()
    assert record == expected
    part = part.merge(record)
    assert part.elr == [1, 2, 3, 4]
    if last_known_leader:
        assert part.last_known_elr == [1]
        again = PartitionChangeBuilder(part, FOO_ID, 0, lambda r: False, _mv(2), 3,
                                       election=Election.PREFERRED,
                                       eligible_leader_replicas_enabled=True,
                                       unclean_shutdown_replicas=[2],
                                       use_last_known_leader_in_balanced_recovery=True)
        change = again.build()
        assert change is not None and change.last_known_elr is None
    else:
        assert part.last_known_elr == []
    assert part.isr == []


def test_eligible_leader_replicas_elect_last_known_leader() -> None:
    part = _elr_part([], [], [1], leader=-1)
    b = PartitionChangeBuilder(part, FOO_ID, 0, lambda r: True, _mv(2), 3,
                               election=Election.PREFERRED,
                               use_last_known_leader_in_balanced_recovery=True,
                               eligible_leader_replicas_enabled=True, target_isr=[])
    record = b.build()
    assert record == PartitionChangeRecord(topic_id=FOO_ID, partition_id=0, isr=[1], leader=1,
                                           leader_recovery_state=RECOVERING, last_known_elr=[])
    part = part.merge(record)
    assert (part.elr, part.last_known_elr, part.isr) == ([], [], [1])


def test_eligible_leader_replicas_elect_last_known_leader_should_fail() -> None:
    part = _elr_part([], [3], [1], leader=-1, dirs=["zANDdMukTEqefOvHpmniMg",
                                                     "Ui2Eq8rbRiuW7m7uiPTRyg",
                                                     "MhgJOZrrTsKNcGM0XKK4aA",
                                                     "Y25PaCAmRfyGIKxAThhBAw"])
    b = PartitionChangeBuilder(part, FOO_ID, 0, lambda r: r != 3, _mv(2), 3,
                               election=Election.PREFERRED,
                               eligible_leader_replicas_enabled=True,
                               use_last_known_leader_in_balanced_recovery=True, target_isr=[])
    assert b.build() is None                 # no change to the partition


# --------------------------------------------------------------------------------------------
# PartitionRegistration.merge (the replay side of every record above)
# --------------------------------------------------------------------------------------------


def test_merge_bumps_epochs_like_partition_registration() -> None:
    p = PartitionRegistration([1, 2, 3], [1, 2, 3], leader=1, leader_epoch=4, partition_epoch=9)
    isr_only = p.merge(PartitionChangeRecord(isr=[1, 2]))
    assert (isr_only.leader, isr_only.leader_epoch, isr_only.partition_epoch) == (1, 4, 10)
    same_leader = p.merge(PartitionChangeRecord(leader=1))     # an explicit epoch bump
    assert (same_leader.leader, same_leader.leader_epoch) == (1, 5)
    offline = p.merge(PartitionChangeRecord(leader=-1))
    assert (offline.leader, offline.isr, offline.leader_epoch) == (-1, [1, 2, 3], 5)
    assert p.leader_epoch == 4                                  # merge never mutates


def test_reserved_directory_ids_are_kafkas():
    """DirectoryId since 3.7.0: MIGRATING = Uuid(0, 0), UNASSIGNED (0, 1), LOST (0, 2)."""
    import base64

    from kafkalog.cluster.model import LOST_DIR, MIGRATING_DIR, UNASSIGNED_DIR

    def uuid(lsb: int) -> str:
        return base64.urlsafe_b64encode(bytes(8) + lsb.to_bytes(8, "big")).decode().rstrip("=")

    assert (MIGRATING_DIR, UNASSIGNED_DIR, LOST_DIR) == (uuid(0), uuid(1), uuid(2))
