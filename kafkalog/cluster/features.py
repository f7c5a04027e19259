"""Cluster features (KIP-584, KIP-1022): the versioned capabilities a KRaft cluster finalizes,
and the controller's rules for changing them (``kafka-features.sh``, ``Admin.updateFeatures``).

Ported from Kafka 4.2 (``server-common/.../Feature.java`` and the ``*Version`` enums,
``metadata/.../FeatureControlManager.java``, ``QuorumFeatures.java``, ``VersionRange.java``):

* a feature has levels; each level has the ``metadata.version`` a new cluster gets it from
  (its default, ``Feature.defaultLevel``) and may depend on other features' levels
  (``eligible.leader.replicas.version`` 1 needs ``metadata.version`` 4.0-IV1);
* a node supports a range of levels per feature; a range whose maximum is 0 is not advertised
  (``QuorumFeatures.defaultSupportedFeatureMap``), and a finalized level 0 is not listed
  (``FeatureControlManager`` removes it);
* an update is checked in Kafka's order (:meth:`FeatureControl.update`) and the first error
  fails the whole request: an unknown upgrade type, a negative level, a level the node does not
  support ("Local controller <id> only supports versions <range>" / "does not support this
  feature."), a downgrade asked for as an upgrade or an upgrade as a downgrade, then for
  ``metadata.version`` a downgrade across a level that changed the metadata
  (``checkIfMetadataChanged``), else the dependencies (``Feature.validateVersion``).

Example
-------
>>> fc = FeatureControl(node_id=1, supported={"metadata.version": (7, 29),
...                                           "group.version": (1, 1)})
>>> fc.finalized()
{'metadata.version': 29, 'group.version': 1}
>>> fc.update([("group.version", 0, SAFE_DOWNGRADE)])[1]
'Invalid update version 0 for feature group.version. Local controller 1 only supports versions 1'
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ..decoders.jvm_order import java_hash_map_order
from .metadata_version import (
    LATEST_PRODUCTION_LEVEL,
    LEVELS,
    MINIMUM_LEVEL,
    MetadataVersion,
    metadata_changed_between,
)

__all__ = ["METADATA_VERSION", "FEATURES", "FeatureLevel", "FeatureControl", "version_range",
           "UNKNOWN", "UPGRADE", "SAFE_DOWNGRADE", "UNSAFE_DOWNGRADE", "INVALID_UPDATE_VERSION"]

METADATA_VERSION = "metadata.version"
#: ``FeatureUpdate.UpgradeType`` codes (UpdateFeatures v1+ ``UpgradeType``)
UNKNOWN, UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 0, 1, 2, 3
#: the error of every refused update (``Errors.INVALID_UPDATE_VERSION``)
INVALID_UPDATE_VERSION = 95


def _mv(name: str) -> int:
    return MetadataVersion.from_name(name).level


@dataclass(frozen=True)
class FeatureLevel:
    """One level of a feature: its ``bootstrapMetadataVersion`` and ``dependencies``."""

    level: int
    bootstrap_metadata_version: int
    dependencies: Mapping[str, int] = field(default_factory=dict)


#: Kafka 4.2's production features (``Feature.PRODUCTION_FEATURES``), levels in order
FEATURES: dict[str, list[FeatureLevel]] = {
    "kraft.version": [FeatureLevel(0, MINIMUM_LEVEL), FeatureLevel(1, _mv("3.9-IV0"))],
    "transaction.version": [FeatureLevel(0, MINIMUM_LEVEL), FeatureLevel(1, _mv("4.0-IV2")),
                            FeatureLevel(2, _mv("4.0-IV2"))],
    "group.version": [FeatureLevel(0, MINIMUM_LEVEL), FeatureLevel(1, _mv("4.0-IV0"))],
    "eligible.leader.replicas.version": [
        FeatureLevel(0, MINIMUM_LEVEL),
        FeatureLevel(1, _mv("4.1-IV0"), {METADATA_VERSION: _mv("4.0-IV1")})],
    "share.version": [FeatureLevel(0, MINIMUM_LEVEL), FeatureLevel(1, _mv("4.2-IV0"))],
    "streams.version": [FeatureLevel(0, MINIMUM_LEVEL), FeatureLevel(1, _mv("4.2-IV1"))],
}


def version_range(lo: int, hi: int) -> str:
    """``VersionRange.toString``: ``"3"``, ``"1-3"`` or ``"1+"`` (open-ended).

    >>> version_range(1, 1), version_range(7, 29), version_range(0, 32767)
    ('1', '7-29', '0+')
    """
    if lo == hi:
        return str(lo)
    if hi == 32767:
        return f"{lo}+"
    return f"{lo}-{hi}"


def default_level(feature: str, metadata_version: int) -> int:
    """``Feature.defaultLevel``: the highest level whose bootstrap version is at most
    ``metadata_version`` (what a new cluster at that version finalizes)."""
    out = FEATURES[feature][0].level
    for fl in FEATURES[feature]:
        if fl.bootstrap_metadata_version <= metadata_version:
            out = fl.level
        else:
            break
    return out


class FeatureControl:
    """The finalized features of a one-node cluster and the controller's update rules.

    Parameters
    ----------
    node_id:
        The node (named in "Local controller <id> ..." refusals).
    supported:
        Feature name -> (min, max) levels this node can run; a feature not named is supported
        at level 0 only.
    finalized:
        Stored levels (feature name -> level); missing ones take
        :func:`default_level` at the finalized ``metadata.version`` (its default: the highest
        supported), capped at what the node supports.
    epoch:
        The finalized features' epoch (ApiVersions' ``FinalizedFeaturesEpoch``); each applied
        update adds one.
    """

    def __init__(self, node_id: int, supported: Mapping[str, tuple[int, int]],
                 finalized: Mapping[str, int] | None = None, epoch: int = 0) -> None:
        self.node_id = node_id
        self._supported = dict(supported)
        stored = dict(finalized or {})
        mv = stored.get(METADATA_VERSION, self.supported_range(METADATA_VERSION)[1])
        levels = {METADATA_VERSION: mv}
        for name in FEATURES:
            lo, hi = self.supported_range(name)
            level = stored.get(name, min(max(default_level(name, mv), lo), hi))
            levels[name] = level
        self._finalized = levels
        self.epoch = epoch

    def supported_range(self, feature: str) -> tuple[int, int]:
        """(min, max) levels this node supports (``QuorumFeatures.DISABLED`` is 0-0)."""
        return self._supported.get(feature, (0, 0))

    def supported(self) -> dict[str, tuple[int, int]]:
        """What ApiVersions advertises: every feature whose maximum is above 0."""
        return {name: r for name, r in self._supported.items() if r[1] > 0}

    def finalized(self) -> dict[str, int]:
        """The finalized levels above 0 (a level-0 feature is not listed)."""
        return {name: level for name, level in self._finalized.items() if level > 0}

    def levels(self) -> dict[str, int]:
        """Every feature's finalized level, 0 included (what must be stored: a missing one
        would take its default again)."""
        return dict(self._finalized)

    def level(self, feature: str) -> int:
        """A feature's finalized level (0 when not finalized)."""
        return self._finalized.get(feature, 0)

    def update(self, updates: Iterable[tuple[str, int, int]], validate_only: bool = False
               ) -> tuple[int, str | None]:
        """``FeatureControlManager.updateFeatures``: ``(error code, message)``, (0, None) when
        every update passes; applied (all of them, the epoch bumped) unless ``validate_only``.

        ``updates`` are ``(feature, level, upgrade type)``; a feature named twice keeps its
        last entry, and they are checked in ``java.util.HashMap`` order of their names, as
        Kafka's controller checks them (the first error is the request's).
        """
        levels: dict[str, int] = {}
        types: dict[str, int] = {}
        for name, level, upgrade_type in updates:
            levels[name] = level
            types[name] = upgrade_type
        proposed = {**self._finalized, **levels}
        for name in java_hash_map_order(levels):
            error = self._check(name, levels[name], types[name], proposed)
            if error is not None:
                return INVALID_UPDATE_VERSION, error
        if not validate_only and levels:
            self._finalized.update(levels)
            self.epoch += 1
        return 0, None

    def _check(self, name: str, level: int, upgrade_type: int,
               proposed: Mapping[str, int]) -> str | None:
        def invalid(message: str) -> str:
            return f"Invalid update version {level} for feature {name}. {message}"

        if upgrade_type not in (UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE):  # UNKNOWN, or not
            # a code at all (FeatureUpdate.UpgradeType.fromCode gives UNKNOWN for both)
            return invalid("The controller does not support the given upgrade type.")
        current = self._finalized.get(name, 0)
        if level < 0:
            return invalid("A feature version cannot be less than 0.")
        lo, hi = self.supported_range(name)
        if not lo <= level <= hi:          # QuorumFeatures.reasonNotSupported
            what = f"Local controller {self.node_id}"
            return invalid(f"{what} does not support this feature." if hi == 0
                           else f"{what} only supports versions {version_range(lo, hi)}")
        if level < current and upgrade_type == UPGRADE:
            return invalid("Can't downgrade the version of this feature without setting the "
                           "upgrade type to either safe or unsafe downgrade.")
        if level > current and upgrade_type != UPGRADE:
            return invalid("Can't downgrade to a newer version.")
        if name == METADATA_VERSION:
            return self._check_metadata_version(current, level, upgrade_type)
        if name == "kraft.version" and upgrade_type != UPGRADE and level != current:
            return invalid("Can't downgrade the version of this feature.")
        # Feature.validateVersion over the levels the request would leave
        if name not in FEATURES:      # (Feature.featureFromName; Kafka's test features aside)
            return invalid(f"Feature {name} not found.")
        mv = proposed.get(METADATA_VERSION)
        if level >= 1 and (mv is None or mv < MINIMUM_LEVEL):
            return invalid(f"{name} could not be set to {level} because it depends on "
                           f"metadata.version={MINIMUM_LEVEL} ({LEVELS[MINIMUM_LEVEL]})")
        spec = next((fl for fl in FEATURES[name] if fl.level == level), None)
        for dep, needed in (spec.dependencies if spec else {}).items():
            have = proposed.get(dep)
            if have is None or have < needed:
                return invalid(f"{name} could not be set to {level} because it depends on "
                               f"{dep} level {needed}")
        return None

    def _check_metadata_version(self, current: int, level: int, upgrade_type: int
                                ) -> str | None:
        # FeatureControlManager.updateMetadataVersion
        if level not in LEVELS or level < MINIMUM_LEVEL:
            return (f"Invalid metadata.version {level}. Valid versions are from "
                    f"{MINIMUM_LEVEL} to {max(LEVELS)}.")
        if level < current and metadata_changed_between(current, level):
            reason = ("Unsafe metadata downgrade is not supported in this version."
                      if upgrade_type == UNSAFE_DOWNGRADE else
                      "Refusing to perform the requested downgrade because it might delete "
                      "metadata information.")
            return f"Unsupported metadata.version downgrade from {current} to {level}. {reason}"
        return None


#: Kafka 4.2's production ``metadata.version`` range, what a broker advertises
METADATA_VERSION_RANGE = (MINIMUM_LEVEL, LATEST_PRODUCTION_LEVEL)
