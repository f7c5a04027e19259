"""Dynamic group configs (Kafka's ``GroupConfig``, resource type GROUP = 32): per-group
overrides of the consumer- and share-group settings, set with IncrementalAlterConfigs/AlterConfigs
(``kafka-configs.sh --entity-type groups``) and read with DescribeConfigs.

Served names (``GroupConfig``, Kafka 4.1, with the bounds of ``GroupConfig.validateValues``:
each value also lies within the broker's ``group.*.min/max.*`` bounds, Kafka's defaults here,
e.g. a record lock of 15-60 s, a session of 45-60 s, a heartbeat of 5-15 s):

====================================  ========================================================
``consumer.session.timeout.ms``,      a KIP-848 consumer group's member session and the
``consumer.heartbeat.interval.ms``    heartbeat interval it is asked for (session > heartbeat)
``share.auto.offset.reset``           ``latest`` (default), ``earliest``, or
                                      ``by_duration:<ISO-8601 duration>`` (PnDTnHnMn.nS, not
                                      negative): where the group starts on a partition new to it
``share.record.lock.duration.ms``     >= 1000: how long a member holds a record
``share.delivery.count.limit``        >= 2: deliveries before a record is archived
``share.partition.max.record.locks``  >= 100: records of a partition held at once
``share.session.timeout.ms``,         >= 1, session > heartbeat (Kafka's rule)
``share.heartbeat.interval.ms``
``share.isolation.level``             ``read_uncommitted`` (default) or ``read_committed``
====================================  ========================================================

Other ``GroupConfig`` names (``streams.*``, ``share.renew.acknowledge.enable``)
answer ``INVALID_CONFIG`` naming what is served, the deliberate deviation topic configs make:
an accepted setting would otherwise be silently ignored. A config may be set for a group that
does not exist yet (as in Kafka).

Kafka keeps group configs in its cluster metadata; here they are kept, per group, in
``.kafkalog-group-configs.json`` at the log-dir root (written atomically; a broker ignores it).

>>> parse_reset("by_duration:PT1H30M")
('by_duration', 5400000)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..checkpoint import JsonStateFile
from ..errors import ConfigError

__all__ = ["GroupConfigStore", "GROUP_CONFIGS_FILE", "SERVED", "parse_reset"]

GROUP_CONFIGS_FILE = ".kafkalog-group-configs.json"
#: GroupConfig names of GroupConfig (4.1) that kafkalog does not serve
UNSERVED = ("share.renew.acknowledge.enable", "streams.session.timeout.ms",
            "streams.heartbeat.interval.ms", "streams.num.standby.replicas",
            "streams.initial.rebalance.delay.ms")
#: served name -> ServerConfig field holding its broker default
SERVED = {
    "consumer.session.timeout.ms": "group_consumer_session_timeout_ms",
    "consumer.heartbeat.interval.ms": "group_consumer_heartbeat_interval_ms",
    "share.auto.offset.reset": "share_auto_offset_reset",
    "share.record.lock.duration.ms": "group_share_record_lock_duration_ms",
    "share.delivery.count.limit": "group_share_delivery_count_limit",
    "share.partition.max.record.locks": "group_share_partition_max_record_locks",
    "share.session.timeout.ms": "group_share_session_timeout_ms",
    "share.heartbeat.interval.ms": "group_share_heartbeat_interval_ms",
    "share.isolation.level": None,
}
_MINIMA = {"share.record.lock.duration.ms": 1000, "share.delivery.count.limit": 2,
           "share.partition.max.record.locks": 100, "share.session.timeout.ms": 1,
           "share.heartbeat.interval.ms": 1, "consumer.session.timeout.ms": 1,
           "consumer.heartbeat.interval.ms": 1}
#: the broker's bounds of a group's value (GroupConfig.validateValues): name -> (min config,
#: its default, max config, its default); kafkalog has no such broker settings and applies
#: Kafka's defaults
_BOUNDS = {
    "consumer.session.timeout.ms": ("group.consumer.min.session.timeout.ms", 45000,
                                    "group.consumer.max.session.timeout.ms", 60000),
    "consumer.heartbeat.interval.ms": ("group.consumer.min.heartbeat.interval.ms", 5000,
                                       "group.consumer.max.heartbeat.interval.ms", 15000),
    "share.session.timeout.ms": ("group.share.min.session.timeout.ms", 45000,
                                 "group.share.max.session.timeout.ms", 60000),
    "share.heartbeat.interval.ms": ("group.share.min.heartbeat.interval.ms", 5000,
                                    "group.share.max.heartbeat.interval.ms", 15000),
    "share.record.lock.duration.ms": ("group.share.min.record.lock.duration.ms", 15000,
                                      "group.share.max.record.lock.duration.ms", 60000),
    "share.delivery.count.limit": ("group.share.min.delivery.count.limit", 2,
                                   "group.share.max.delivery.count.limit", 10),
    "share.partition.max.record.locks": ("group.share.min.partition.max.record.locks", 100,
                                         "group.share.max.partition.max.record.locks", 10000),
}
_DURATION = re.compile(r"^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$")


def parse_reset(value: str) -> tuple[str, int]:
    """``share.auto.offset.reset`` as ``(strategy, duration ms)`` (Kafka's
    ``ShareGroupAutoOffsetResetStrategy``: ``latest``, ``earliest``, ``by_duration:<ISO-8601>``;
    case-insensitive).

    Raises
    ------
    ConfigError
        Anything else (Kafka's validator message).
    """
    text = str(value).strip()
    low = text.lower()
    if low in ("latest", "earliest"):
        return low, 0
    if low.startswith("by_duration:"):
        m = _DURATION.match(text.split(":", 1)[1].upper())
        if m and any(m.groups()):
            d, h, mi, sec = m.groups()
            ms = ((int(d or 0) * 24 + int(h or 0)) * 60 + int(mi or 0)) * 60_000 \
                + round(float(sec or 0) * 1000)
            return "by_duration", ms
        raise ConfigError(f"share.auto.offset.reset: {text} is not a valid duration "
                          f"(expected ISO-8601 PnDTnHnMn.nS, not negative)")
    raise ConfigError(f"Invalid value {text} for configuration share.auto.offset.reset: "
                      f"the value must be either 'earliest', 'latest' or "
                      f"'by_duration:<PnDTnHnMn.nS.>'")


class GroupConfigStore:
    """Per-group config overrides, persisted at the log-dir root (see the module docstring).

    Parameters
    ----------
    root:
        The log directory.
    defaults:
        The broker's :class:`~kafkalog.server.broker.ServerConfig` (the defaults and bounds).
    """

    def __init__(self, root: str | Path, defaults: Any) -> None:
        self._file = JsonStateFile(Path(root) / GROUP_CONFIGS_FILE, "group configs", "groups",
                                   sort_keys=True)
        self.path = self._file.path
        self.defaults = defaults
        self._groups: dict[str, dict[str, str]] = self._file.load(
            self._parse, errors=(ConfigError,)) or {}

    def _parse(self, groups: dict) -> dict[str, dict[str, str]]:
        out = {}
        for gid, props in groups.items():
            self.validate(props)  # a value a broker would refuse is not a stored config
            out[str(gid)] = {str(k): str(v) for k, v in props.items()}
        return out

    def overrides(self, group_id: str) -> dict[str, str]:
        """The group's overrides (names as Kafka's)."""
        return dict(self._groups.get(group_id, {}))

    def effective(self, group_id: str) -> dict[str, str]:
        """Every served config of the group: its override, else the broker's default."""
        own = self._groups.get(group_id, {})
        out = {}
        for name, field in SERVED.items():
            default = "read_uncommitted" if field is None else str(getattr(self.defaults, field))
            out[name] = own.get(name, default)
        return out

    def value(self, group_id: str, name: str) -> Any:
        """A served config's effective value, parsed (ints as int)."""
        raw = self.effective(group_id)[name]
        return int(raw) if name in _MINIMA else raw

    def validate(self, overrides: Mapping[str, Any]) -> None:
        """Check names and values, the combination included (``GroupConfig.validate``).

        Raises
        ------
        ConfigError
            Naming the config and the rule.
        """
        for name, raw in overrides.items():
            if name not in SERVED:
                what = ("is a Kafka group config kafkalog does not serve" if name in UNSERVED
                        else "is not a group config")
                raise ConfigError(f"{name} {what} (served: {', '.join(sorted(SERVED))})")
            text = "" if raw is None else str(raw).strip()
            if name == "share.auto.offset.reset":
                parse_reset(text)
            elif name == "share.isolation.level":
                if text not in ("read_uncommitted", "read_committed"):
                    raise ConfigError(f"Invalid value {text} for configuration "
                                      f"share.isolation.level: String must be one of: "
                                      f"read_committed, read_uncommitted")
            else:
                try:
                    n = int(text)
                except ValueError:
                    raise ConfigError(f"{name}: expected an integer, found {text!r}") from None
                if n < _MINIMA[name]:
                    raise ConfigError(f"Invalid value {n} for configuration {name}: Value "
                                      f"must be at least {_MINIMA[name]}")
                lo_name, lo, hi_name, hi = _BOUNDS[name]
                if n < lo:
                    raise ConfigError(f"{name} must be greater than or equal to {lo_name}")
                if n > hi:
                    raise ConfigError(f"{name} must be less than or equal to {hi_name}")
        merged = {**{k: v for k, v in self._as_defaults().items()},
                  **{k: str(v) for k, v in overrides.items()}}
        for kind in ("consumer", "share"):
            if int(merged[f"{kind}.session.timeout.ms"]) \
                    <= int(merged[f"{kind}.heartbeat.interval.ms"]):
                raise ConfigError(f"{kind}.session.timeout.ms must be greater than "
                                  f"{kind}.heartbeat.interval.ms")

    def _as_defaults(self) -> dict[str, str]:
        return {name: ("read_uncommitted" if f is None else str(getattr(self.defaults, f)))
                for name, f in SERVED.items()}

    def set(self, group_id: str, overrides: Mapping[str, str]) -> None:
        """Replace the group's overrides (validated, then written)."""
        self.validate(overrides)
        if overrides:
            self._groups[group_id] = {k: str(v) for k, v in overrides.items()}
        else:
            self._groups.pop(group_id, None)
        self._file.save(self._groups)
