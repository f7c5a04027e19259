"""Cluster features (:mod:`kafkalog.cluster.features`): Kafka 4.2's FeatureControlManagerTest
cases on the same inputs (managers built the way its ``createTestManager`` and
``features(...)`` build them), then the defaults, dependencies and persistence of
:mod:`kafkalog.server.feature_store`."""

from __future__ import annotations

import json

import pytest

from kafkalog.checkpoint import CorruptCheckpointError
from kafkalog.cluster.features import (
    FEATURES,
    INVALID_UPDATE_VERSION,
    METADATA_VERSION,
    SAFE_DOWNGRADE,
    UNKNOWN,
    UNSAFE_DOWNGRADE,
    UPGRADE,
    FeatureControl,
    default_level,
)
from kafkalog.cluster.metadata_version import LEVELS, metadata_changed_between
from kafkalog.server.feature_store import FEATURES_FILE, FeatureStore

MV = {name: level for level, name in LEVELS.items()}


def _manager(mv: int = MV["3.4-IV0"], mv_max: int = MV["3.6-IV0"], **supported) -> FeatureControl:
    """``createTestManager``: node 0 supports metadata.version 3.3-IV3..``mv_max`` (and the
    features given), finalized at ``mv``."""
    ranges = {METADATA_VERSION: (MV["3.3-IV3"], mv_max)}
    ranges.update({k.replace("_", "."): v for k, v in supported.items()})
    return FeatureControl(0, ranges, {METADATA_VERSION: mv})


def _invalid(level: int, feature: str, why: str) -> tuple[int, str]:
    return INVALID_UPDATE_VERSION, f"Invalid update version {level} for feature {feature}. {why}"


def test_cannot_downgrade_to_higher_version() -> None:
    for kind in (SAFE_DOWNGRADE, UNSAFE_DOWNGRADE):
        assert _manager().update([(METADATA_VERSION, MV["3.5-IV0"], kind)], True) == _invalid(
            9, METADATA_VERSION, "Can't downgrade to a newer version.")


def test_cannot_upgrade_to_lower_version() -> None:
    m = _manager(mv=MV["3.5-IV1"])
    assert m.update([(METADATA_VERSION, MV["3.5-IV0"], UPGRADE)], True) == _invalid(
        9, METADATA_VERSION, "Can't downgrade the version of this feature without setting the "
        "upgrade type to either safe or unsafe downgrade.")


def test_can_upgrade_to_higher_version() -> None:
    m = _manager()
    assert m.update([(METADATA_VERSION, MV["3.5-IV0"], UPGRADE)], True) == (0, None)
    assert m.level(METADATA_VERSION) == MV["3.4-IV0"] and m.epoch == 0     # validate only
    assert m.update([(METADATA_VERSION, MV["3.5-IV0"], UPGRADE)]) == (0, None)
    assert m.level(METADATA_VERSION) == MV["3.5-IV0"] and m.epoch == 1


def test_downgrades_across_a_metadata_change() -> None:
    m = _manager()
    assert m.update([(METADATA_VERSION, 7, SAFE_DOWNGRADE)], True) == (
        INVALID_UPDATE_VERSION, "Unsupported metadata.version downgrade from 8 to 7. Refusing "
        "to perform the requested downgrade because it might delete metadata information.")
    assert m.update([(METADATA_VERSION, 7, UNSAFE_DOWNGRADE)], True) == (
        INVALID_UPDATE_VERSION, "Unsupported metadata.version downgrade from 8 to 7. Unsafe "
        "metadata downgrade is not supported in this version.")
    # 3.5-IV0 (9) did not change the metadata: back to 3.4-IV0 is safe
    assert _manager(mv=MV["3.5-IV0"]).update([(METADATA_VERSION, 8, SAFE_DOWNGRADE)],
                                             True) == (0, None)


def test_cannot_downgrade_before_the_minimum_kraft_version() -> None:
    m = _manager(mv=MV["3.3-IV3"], mv_max=30)
    assert m.update([(METADATA_VERSION, 6, UNSAFE_DOWNGRADE)], True) == _invalid(
        6, METADATA_VERSION, "Local controller 0 only supports versions 7-30")


def test_update_features_unsupported_and_transaction_version() -> None:
    """testUpdateFeatures with transaction.version in place of the test feature."""
    m = _manager(mv=MV["3.3-IV3"], transaction_version=(0, 2))
    assert m.finalized() == {METADATA_VERSION: 7}
    assert m.update([("transaction.version", 3, SAFE_DOWNGRADE)]) == _invalid(
        3, "transaction.version", "Local controller 0 only supports versions 0-2")
    assert m.update([("transaction.version", 1, UPGRADE), ("bar", 1, UPGRADE)]) == _invalid(
        1, "bar", "Local controller 0 does not support this feature.")
    assert m.finalized() == {METADATA_VERSION: 7}             # all or nothing
    assert m.update([("transaction.version", 2, UPGRADE)]) == (0, None)
    assert m.update([("transaction.version", 1, UPGRADE)]) == _invalid(
        1, "transaction.version", "Can't downgrade the version of this feature without "
        "setting the upgrade type to either safe or unsafe downgrade.")
    assert m.update([("transaction.version", 1, SAFE_DOWNGRADE)]) == (0, None)
    assert m.finalized() == {METADATA_VERSION: 7, "transaction.version": 1}
    assert m.update([("transaction.version", 0, SAFE_DOWNGRADE)]) == (0, None)
    assert m.finalized() == {METADATA_VERSION: 7}             # level 0: no longer listed


def test_other_refusals() -> None:
    m = _manager(eligible_leader_replicas_version=(0, 1))
    assert m.update([(METADATA_VERSION, 9, UNKNOWN)]) == _invalid(
        9, METADATA_VERSION, "The controller does not support the given upgrade type.")
    assert m.update([("group.version", -1, SAFE_DOWNGRADE)]) == _invalid(
        -1, "group.version", "A feature version cannot be less than 0.")
    # ELR 1 depends on metadata.version 4.0-IV1 (23): refused at 3.4-IV0, and allowed when
    # the same request raises metadata.version (the proposed levels count)
    assert m.update([("eligible.leader.replicas.version", 1, UPGRADE)]) == _invalid(
        1, "eligible.leader.replicas.version", "eligible.leader.replicas.version could not be "
        "set to 1 because it depends on metadata.version level 23")
    m = _manager(mv_max=29, eligible_leader_replicas_version=(0, 1))
    assert m.update([("eligible.leader.replicas.version", 1, UPGRADE),
                     (METADATA_VERSION, 23, UPGRADE)]) == (0, None)
    # an unknown feature at level 0 passes the range check, then is not found
    assert m.update([("foo.version", 0, UPGRADE)]) == _invalid(
        0, "foo.version", "Feature foo.version not found.")


def test_defaults_and_metadata_changes() -> None:
    # Feature.defaultLevel: what a new 4.2-IV1 cluster finalizes
    assert {f: default_level(f, 29) for f in FEATURES} == {
        "kraft.version": 1, "transaction.version": 2, "group.version": 1,
        "eligible.leader.replicas.version": 1, "share.version": 1, "streams.version": 1}
    assert {f: default_level(f, MV["4.0-IV0"]) for f in FEATURES}["group.version"] == 1
    assert default_level("share.version", MV["4.1-IV1"]) == 0
    assert [metadata_changed_between(a, b) for a, b in ((29, 24), (29, 23), (23, 22),
                                                        (22, 23), (8, 8))] == [
        False, False, True, True, False]


def test_feature_store_defaults_updates_and_restart(tmp_path) -> None:
    store = FeatureStore(tmp_path, node_id=1)
    c = store.control
    # kafkalog's own ranges: KIP-848 and share groups cannot be turned off
    assert c.supported() == {METADATA_VERSION: (7, 29), "group.version": (1, 1),
                             "share.version": (1, 1),
                             "eligible.leader.replicas.version": (0, 1)}
    assert c.finalized() == {METADATA_VERSION: 29, "group.version": 1, "share.version": 1,
                             "eligible.leader.replicas.version": 1}
    assert not (tmp_path / FEATURES_FILE).exists()
    assert store.update([("share.version", 0, SAFE_DOWNGRADE)]) == _invalid(
        0, "share.version", "Local controller 1 only supports versions 1")
    assert store.update([("eligible.leader.replicas.version", 0, SAFE_DOWNGRADE),
                         (METADATA_VERSION, 28, SAFE_DOWNGRADE)]) == (0, None)
    again = FeatureStore(tmp_path, node_id=1).control
    # level 0 is kept: ELR does not come back at its default
    assert again.finalized() == {METADATA_VERSION: 28, "group.version": 1, "share.version": 1}
    assert again.epoch == 1
    doc = json.loads((tmp_path / FEATURES_FILE).read_text())
    doc["features"]["finalized"]["share.version"] = 0
    (tmp_path / FEATURES_FILE).write_text(json.dumps(doc))
    with pytest.raises(CorruptCheckpointError, match="share.version finalized at 0"):
        FeatureStore(tmp_path, node_id=1)
