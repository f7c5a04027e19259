"""KRaft ``metadata.version`` feature levels and the behaviour each one switches on.

The controller's algorithms depend on the cluster's finalized ``metadata.version``: whether an
ISR shrink bumps the leader epoch (before 3.6-IV0, KAFKA-15021), whether an unclean election
marks the partition RECOVERING (3.2-IV0, KIP-704), whether partition records carry log
directories (3.7-IV2, KIP-858). Levels and predicates are those of Kafka's ``MetadataVersion``
(``server-common/src/main/java/org/apache/kafka/server/common/MetadataVersion.java``: 3.9 for
levels 1..23, 4.x for 24..34).

Example
-------
>>> MetadataVersion.from_level(19).name
'3.7-IV4'
>>> MetadataVersion.from_level(11).is_leader_epoch_bump_required_on_isr_shrink
True
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MetadataVersion", "LEVELS", "LATEST_LEVEL", "MINIMUM_LEVEL", "LATEST_PRODUCTION_LEVEL",
           "DID_METADATA_CHANGE", "metadata_changed_between"]

# feature level -> release name (MetadataVersion enum; level 0 and below are pre-KRaft IBPs)
LEVELS: dict[int, str] = {
    1: "3.0-IV1", 2: "3.1-IV0", 3: "3.2-IV0", 4: "3.3-IV0", 5: "3.3-IV1", 6: "3.3-IV2",
    7: "3.3-IV3", 8: "3.4-IV0", 9: "3.5-IV0", 10: "3.5-IV1", 11: "3.5-IV2", 12: "3.6-IV0",
    13: "3.6-IV1", 14: "3.6-IV2", 15: "3.7-IV0", 16: "3.7-IV1", 17: "3.7-IV2", 18: "3.7-IV3",
    19: "3.7-IV4", 20: "3.8-IV0", 21: "3.9-IV0", 22: "4.0-IV0", 23: "4.0-IV1", 24: "4.0-IV2",
    25: "4.0-IV3", 26: "4.1-IV0", 27: "4.1-IV1", 28: "4.2-IV0", 29: "4.2-IV1", 30: "4.3-IV0",
    31: "4.4-IV0", 32: "4.4-IV1", 33: "4.4-IV2", 34: "4.5-IV0",
}
LATEST_LEVEL = max(LEVELS)
_BY_NAME = {v: k for k, v in LEVELS.items()}
#: the lowest level a KRaft cluster may run (``MetadataVersion.MINIMUM_VERSION``, 3.3-IV3)
MINIMUM_LEVEL = 7
#: Kafka 4.2's ``LATEST_PRODUCTION`` (4.2-IV1); levels above are unstable (testing) ones
LATEST_PRODUCTION_LEVEL = 29
#: levels whose ``didMetadataChange`` is true (4.2.0-rc1's enum, levels 7..30): a downgrade
#: across one of them could lose metadata and is refused (``checkIfMetadataChanged``)
DID_METADATA_CHANGE = frozenset({7, 8, 11, 13, 14, 15, 17, 23})


@dataclass(frozen=True, order=True)
class MetadataVersion:
    """A ``metadata.version`` feature level with Kafka's predicates."""

    level: int

    @classmethod
    def from_level(cls, level: int | None) -> MetadataVersion:
        """The version for a finalized level; ``None`` (unknown) means the latest."""
        if level is None:
            return cls(LATEST_LEVEL)
        if level < 1:
            raise ValueError(f"metadata.version level {level} is not a KRaft version (>= 1)")
        return cls(level)

    @classmethod
    def from_name(cls, name: str) -> MetadataVersion:
        """From a release name such as ``"3.6-IV0"``."""
        try:
            return cls(_BY_NAME[name])
        except KeyError:
            raise ValueError(f"unknown metadata.version {name!r} "
                             f"(expected one of {', '.join(_BY_NAME)})") from None

    @property
    def name(self) -> str:
        """The release name, or ``level-N`` for a level newer than this table."""
        return LEVELS.get(self.level, f"level-{self.level}")

    def is_at_least(self, name: str) -> bool:
        """``MetadataVersion.isAtLeast``."""
        return self.level >= _BY_NAME[name]

    @property
    def is_leader_recovery_supported(self) -> bool:
        """Unclean elections mark the partition RECOVERING (3.2-IV0)."""
        return self.is_at_least("3.2-IV0")

    @property
    def is_leader_epoch_bump_required_on_isr_shrink(self) -> bool:
        """Before 3.6-IV0 every ISR shrink bumped the leader epoch (KAFKA-15021)."""
        return not self.is_at_least("3.6-IV0")

    @property
    def is_directory_assignment_supported(self) -> bool:
        """Partition records carry replica log directories (3.7-IV2, KIP-858)."""
        return self.is_at_least("3.7-IV2")

    @property
    def is_in_controlled_shutdown_state_supported(self) -> bool:
        """Brokers carry an in-controlled-shutdown flag (3.3-IV3)."""
        return self.is_at_least("3.3-IV3")


def metadata_changed_between(source: int, target: int) -> bool:
    """``MetadataVersion.checkIfMetadataChanged``: whether a level from ``target`` (exclusive)
    up to ``source`` (inclusive) changed the metadata, walking down from the higher one.

    >>> metadata_changed_between(29, 24), metadata_changed_between(29, 22)
    (False, True)
    """
    if source == target:
        return False
    high, low = max(source, target), min(source, target)
    level = high
    while level not in DID_METADATA_CHANGE and level != low and level - 1 in LEVELS:
        level -= 1
    return level != low
