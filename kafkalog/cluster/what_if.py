"""What-if: run the controller's algorithms over a cluster's last known state.

``what_if(model, "broker 2 down")`` copies the model, applies the scenario the way the cluster's
own controller would (KRaft: :mod:`kafkalog.cluster.replication_control`; ZooKeeper:
:mod:`kafkalog.cluster.zk_controller`) and compares every partition before and after: which
change leader, which go offline (no leader left), which come back, which are left under
``min.insync.replicas`` (producers with ``acks=all`` are refused), which got an unclean leader.

Scenarios (case-insensitive; several steps separated by ``;`` or ``then``):

=============================================  ===============================================
``broker N down`` (``fails``, ``kill broker    the broker stops without warning: KRaft fences
N``, ``fence broker N``; ``brokers 1,2 down``) it; ZooKeeper loses its session
``controlled shutdown of broker N``            the broker shuts down cleanly: leaders move
(``broker N controlled shutdown``,             first, then it stops (KRaft fences it at the
``shutdown broker N``)                         end, ZooKeeper loses its session)
``broker N up`` (``back``, ``start``,          the broker restarts and registers again: after
``unfence``)                                   ``down`` (or when it was fenced before the
                                               scenario) an unclean shutdown, which with ELR
                                               takes it out of every ELR (KRaft's
                                               handleBrokerShutdown), then leaderless
                                               partitions may elect it
``preferred leader election [for T|T-P, ..]``  ``kafka-leader-election --election-type
                                               preferred``
``unclean leader election [for T|T-P, ..]``    ``kafka-leader-election --election-type
                                               unclean``
=============================================  ===============================================

Static broker configs are not in the metadata; ``min_insync_default`` and
``unclean_default`` stand for them (Kafka's defaults: 1 and false).

Example
-------
>>> from kafkalog.cluster.model import Broker, ClusterModel, PartitionRegistration, Topic
>>> m = ClusterModel(brokers={i: Broker(i) for i in (1, 2, 3)})
>>> m.topics["t"] = Topic("t", "T", {0: PartitionRegistration([1, 2, 3], [1, 2], 1)})
>>> r = what_if(m, "broker 1 down")
>>> [(o.topic, o.before.leader, o.after.leader) for o in r.leader_changes]
[('t', 1, 2)]
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from . import replication_control, zk_controller
from .metadata_version import MetadataVersion
from .model import ClusterModel, PartitionChange, PartitionRegistration
from .replication_control import ElectionError

__all__ = ["Step", "StepResult", "Outcome", "WhatIfReport", "parse_scenario", "apply_scenario",
           "what_if"]


@dataclass(frozen=True)
class Step:
    """One parsed scenario step: ``action`` is ``down``, ``controlled_shutdown``, ``up``,
    ``preferred`` or ``unclean``; ``brokers`` for broker events, ``partitions`` (``None``: all)
    for elections; ``text`` is what the user wrote."""

    action: str
    text: str
    brokers: tuple[int, ...] = ()
    partitions: tuple[tuple[str, int | None], ...] | None = None


_BROKERS = r"(\d+(?:\s*(?:,|and|\s)\s*\d+)*)"
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("controlled_shutdown", re.compile(
        rf"^(?:controlled[ -]shutdown(?: of)?|shut ?down|stop) brokers? {_BROKERS}$")),
    ("controlled_shutdown", re.compile(
        rf"^brokers? {_BROKERS} (?:controlled[ -]shutdown|shuts? ?down|is shut ?down)$")),
    ("down", re.compile(rf"^brokers? {_BROKERS} (?:down|fails|failed|dies|died|crash(?:es|ed)?"
                        r"|is down|are down|lost)$")),
    ("down", re.compile(rf"^(?:kill|fence|crash|lose) brokers? {_BROKERS}$")),
    ("up", re.compile(rf"^brokers? {_BROKERS} (?:up|back|returns|is back|comes back)$")),
    ("up", re.compile(rf"^(?:start|unfence|restart) brokers? {_BROKERS}$")),
    ("preferred", re.compile(r"^(?:run )?preferred(?: replica| leader)?(?: leader)? election"
                             r"(?: for (?P<parts>.+))?$")),
    ("unclean", re.compile(r"^(?:run )?unclean(?: leader)? election(?: for (?P<parts>.+))?$")),
]


def parse_scenario(text: str) -> list[Step]:
    """Parse a scenario into steps.

    Raises ``ValueError`` naming the part that is not understood.

    >>> [s.action for s in parse_scenario("broker 2 down; preferred leader election")]
    ['down', 'preferred']
    >>> parse_scenario("brokers 1, 2 down")[0].brokers
    (1, 2)
    """
    steps = []
    for raw in re.split(r";|\bthen\b", text, flags=re.IGNORECASE):
        part = " ".join(raw.strip().lower().split())
        if not part:
            continue
        for action, pattern in _PATTERNS:
            m = pattern.match(part)
            if m is None:
                continue
            if action in ("preferred", "unclean"):
                steps.append(Step(action, raw.strip(),
                                  partitions=_parse_partitions(m.group("parts"), raw)))
            else:
                ids = tuple(int(x) for x in re.findall(r"\d+", m.group(1)))
                steps.append(Step(action, raw.strip(), brokers=ids))
            break
        else:
            raise ValueError(
                f"what-if step not understood: {raw.strip()!r} (expected e.g. 'broker 2 down', "
                "'controlled shutdown of broker 2', 'broker 2 up', 'preferred leader election', "
                "'unclean leader election for orders-0')")
    if not steps:
        raise ValueError("empty what-if scenario")
    return steps


def _parse_partitions(spec: str | None, raw: str) -> tuple[tuple[str, int | None], ...] | None:
    """``T`` (every partition of T) or ``T-P``, comma separated; ``None`` means all."""
    if spec is None:
        return None
    # re-read from the raw text: topic names are case-sensitive
    m = re.search(r"\bfor\s+(.+)$", raw.strip(), flags=re.IGNORECASE)
    items = []
    for item in (m.group(1) if m else spec).split(","):
        item = item.strip()
        if not item:
            continue
        tp = re.fullmatch(r"(.+)-(\d+)", item)
        items.append((tp.group(1), int(tp.group(2))) if tp else (item, None))
    return tuple(items)


@dataclass
class Outcome:
    """One partition that the scenario changed, with what the change means."""

    topic: str
    partition: int
    before: PartitionRegistration
    after: PartitionRegistration
    min_insync_replicas: int
    unclean: bool = False

    @property
    def leader_changed(self) -> bool:
        """A new leader was elected (not: the partition lost its leader)."""
        return self.after.has_leader and self.after.leader != self.before.leader

    @property
    def went_offline(self) -> bool:
        """It had a leader and has none now."""
        return self.before.has_leader and not self.after.has_leader

    @property
    def came_online(self) -> bool:
        """It had no leader and has one now."""
        return not self.before.has_leader and self.after.has_leader

    @property
    def under_min_isr(self) -> bool:
        """It has a leader whose ISR is smaller than ``min.insync.replicas`` now, and did not
        before (Kafka's ``UnderMinIsr``: ``acks=all`` produce requests fail)."""
        def under(p: PartitionRegistration) -> bool:
            return p.has_leader and len(p.isr) < self.min_insync_replicas
        return under(self.after) and not under(self.before)

    def to_dict(self) -> dict[str, Any]:
        """JSON form: before/after state and the derived flags."""
        def state(p: PartitionRegistration) -> dict[str, Any]:
            out: dict[str, Any] = {"leader": p.leader, "isr": p.isr, "replicas": p.replicas,
                                   "leader_epoch": p.leader_epoch,
                                   "partition_epoch": p.partition_epoch,
                                   "leader_recovery_state": p.leader_recovery_state}
            if p.elr or p.last_known_elr:
                out["elr"] = p.elr
                out["last_known_elr"] = p.last_known_elr
            return out
        return {"topic": self.topic, "partition": self.partition,
                "before": state(self.before), "after": state(self.after),
                "leader_changed": self.leader_changed, "went_offline": self.went_offline,
                "came_online": self.came_online, "under_min_isr": self.under_min_isr,
                "unclean": self.unclean, "min_insync_replicas": self.min_insync_replicas}


@dataclass
class StepResult:
    """What one step wrote: the changes (with KRaft records) and election errors."""

    step: Step
    description: str
    changes: list[PartitionChange] = field(default_factory=list)
    errors: list[ElectionError] = field(default_factory=list)


@dataclass
class WhatIfReport:
    """The scenario's effect: per-step writes and the net per-partition outcome."""

    scenario: str
    controller: str
    steps: list[StepResult]
    outcomes: list[Outcome]
    offline_before: list[tuple[str, int]]
    live_brokers_before: list[int]
    live_brokers_after: list[int]
    partitions_total: int

    @property
    def leader_changes(self) -> list[Outcome]:
        """Partitions with a newly elected leader."""
        return [o for o in self.outcomes if o.leader_changed]

    @property
    def offline(self) -> list[Outcome]:
        """Partitions left without a leader by the scenario."""
        return [o for o in self.outcomes if o.went_offline]

    @property
    def back_online(self) -> list[Outcome]:
        """Partitions that had no leader and have one now."""
        return [o for o in self.outcomes if o.came_online]

    @property
    def under_min_isr(self) -> list[Outcome]:
        """Partitions newly under ``min.insync.replicas``."""
        return [o for o in self.outcomes if o.under_min_isr]

    @property
    def unclean(self) -> list[Outcome]:
        """Partitions whose new leader was not in the ISR (possible data loss)."""
        return [o for o in self.outcomes if o.unclean]

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data."""
        def tp(o: Outcome) -> dict[str, Any]:
            return {"topic": o.topic, "partition": o.partition}
        return {
            "scenario": self.scenario,
            "controller": self.controller,
            "live_brokers_before": self.live_brokers_before,
            "live_brokers_after": self.live_brokers_after,
            "partitions": self.partitions_total,
            "offline_before": [{"topic": t, "partition": p} for t, p in self.offline_before],
            "leader_changes": [dict(tp(o), old_leader=o.before.leader,
                                    new_leader=o.after.leader, unclean=o.unclean)
                               for o in self.leader_changes],
            "offline": [dict(tp(o), old_leader=o.before.leader, isr=o.after.isr)
                        for o in self.offline],
            "back_online": [dict(tp(o), new_leader=o.after.leader) for o in self.back_online],
            "under_min_isr": [dict(tp(o), isr=o.after.isr,
                                   min_insync_replicas=o.min_insync_replicas)
                              for o in self.under_min_isr],
            "unclean": [tp(o) for o in self.unclean],
            "changed": [o.to_dict() for o in self.outcomes],
            "steps": [{"step": s.step.text, "action": s.step.action,
                       "description": s.description,
                       "records": [c.record.to_dict() for c in s.changes
                                   if c.record is not None],
                       "writes": [{"topic": c.topic, "partition": c.partition,
                                   "leader": c.after.leader, "isr": c.after.isr,
                                   "leader_epoch": c.after.leader_epoch}
                                  for c in s.changes],
                       "errors": [{"topic": e.topic, "partition": e.partition,
                                   "error": e.error} for e in s.errors]}
                      for s in self.steps],
        }

    def format_text(self) -> str:
        """A human summary (one line per affected partition)."""
        out = [f"what-if: {self.scenario}  ({self.controller})",
               f"live brokers: {self.live_brokers_before} -> {self.live_brokers_after}; "
               f"{self.partitions_total} partitions, {len(self.offline_before)} offline before"]
        for s in self.steps:
            out.append(f"step {s.step.text!r}: {s.description}: {len(s.changes)} partition "
                       f"write(s)" + (f", {len(s.errors)} not elected" if s.errors else ""))
            for e in s.errors:
                if e.error != "ELECTION_NOT_NEEDED":
                    out.append(f"  {e.topic}-{e.partition}: {e.error}")

        def section(title: str, items: list[Outcome], line: Any) -> None:
            out.append(f"{title} ({len(items)}):")
            out.extend("  " + line(o) for o in items)

        section("leader changes", self.leader_changes,
                lambda o: f"{o.topic}-{o.partition}: leader {_leader(o.before.leader)} -> "
                          f"{o.after.leader}, isr {o.before.isr} -> {o.after.isr}, leader epoch "
                          f"{o.before.leader_epoch} -> {o.after.leader_epoch}"
                          + (" (UNCLEAN: data not replicated to it may be lost)"
                             if o.unclean else ""))
        section("offline (no leader)", self.offline,
                lambda o: f"{o.topic}-{o.partition}: leader {o.before.leader} -> none, "
                          f"isr {o.before.isr} -> {o.after.isr}, leader epoch "
                          f"{o.before.leader_epoch} -> {o.after.leader_epoch}")
        section("under min.insync.replicas", self.under_min_isr,
                lambda o: f"{o.topic}-{o.partition}: isr {o.after.isr} < "
                          f"min.insync.replicas {o.min_insync_replicas}")
        others = [o for o in self.outcomes if not (o.leader_changed or o.went_offline)]
        section("other changes (ISR, epochs)", others,
                lambda o: f"{o.topic}-{o.partition}: leader {_leader(o.after.leader)}, isr "
                          f"{o.before.isr} -> {o.after.isr}, leader epoch "
                          f"{o.before.leader_epoch} -> {o.after.leader_epoch}")
        return "\n".join(out)


def _leader(leader: int) -> str:
    return "none" if leader < 0 else str(leader)


def _targets(model: ClusterModel,
             spec: tuple[tuple[str, int | None], ...] | None) -> list[tuple[str, int]] | None:
    if spec is None:
        return None
    out = []
    for topic, pid in spec:
        t = model.topics.get(topic)
        if t is None:
            raise ValueError(f"unknown topic {topic!r}")
        if pid is None:
            out += [(topic, p) for p in sorted(t.partitions)]
        elif pid not in t.partitions:
            raise ValueError(f"unknown partition {topic}-{pid}")
        else:
            out.append((topic, pid))
    return out


def _run_step(model: ClusterModel, step: Step, *, unclean_default: bool,
              min_insync_default: int, leader_recovery_supported: bool,
              clean_stops: dict[int, bool] | None = None) -> StepResult:
    """One step. ``clean_stops``: broker -> whether its last stop in the scenario was clean
    (a controlled shutdown) or not (down); a broker coming up that the scenario did not stop
    counts as stopped uncleanly (it was fenced: a crash, as far as the files tell)."""
    clean_stops = {} if clean_stops is None else clean_stops
    for b in step.brokers:
        if b not in model.brokers and step.action != "up":
            raise ValueError(f"broker {b} is not registered in this cluster "
                             f"(registered: {sorted(model.brokers)})")
    kraft = model.source == "kraft"
    result = StepResult(step, "")
    if step.action == "down":
        result.description = ("broker(s) fenced" if kraft else "broker session(s) expired")
        for b in step.brokers:
            clean_stops[b] = False
            if kraft:
                result.changes += replication_control.handle_broker_fenced(
                    model, b, unclean_default=unclean_default,
                    min_insync_default=min_insync_default)
        if not kraft:
            result.changes += zk_controller.on_broker_failure(
                model, step.brokers, unclean_default=unclean_default,
                leader_recovery_supported=leader_recovery_supported)
    elif step.action == "controlled_shutdown":
        result.description = "controlled shutdown, then the broker(s) stop"
        for b in step.brokers:
            clean_stops[b] = True
            if kraft:
                result.changes += replication_control.handle_broker_in_controlled_shutdown(
                    model, b, unclean_default=unclean_default,
                    min_insync_default=min_insync_default)
            else:
                result.changes += zk_controller.controlled_shutdown(model, b, step.brokers)
        for b in step.brokers:
            if kraft:
                result.changes += replication_control.handle_broker_fenced(
                    model, b, unclean_default=unclean_default,
                    min_insync_default=min_insync_default)
        if not kraft:
            result.changes += zk_controller.on_broker_failure(
                model, step.brokers, unclean_default=unclean_default,
                leader_recovery_supported=leader_recovery_supported)
    elif step.action == "up":
        result.description = "broker(s) back"
        for b in step.brokers:
            if b not in model.brokers:
                raise ValueError(f"broker {b} has no registration to bring back "
                                 f"(registered: {sorted(model.brokers)})")
            if kraft:
                # a restarted broker registers again: ClusterControlManager.registerBroker
                # hands its previous incarnation to handleBrokerShutdown (clean when it names
                # its previous epoch: after a controlled shutdown), then heartbeats unfence it
                result.changes += replication_control.handle_broker_shutdown(
                    model, b, clean=clean_stops.pop(b, False), unclean_default=unclean_default,
                    min_insync_default=min_insync_default)
                result.changes += replication_control.handle_broker_unfenced(
                    model, b, unclean_default=unclean_default,
                    min_insync_default=min_insync_default)
            else:
                result.changes += zk_controller.on_broker_startup(
                    model, b, unclean_default=unclean_default,
                    leader_recovery_supported=leader_recovery_supported)
    else:
        result.description = f"{step.action} leader election"
        targets = _targets(model, step.partitions)
        if kraft:
            result.changes, result.errors = replication_control.elect_leaders(
                model, step.action, targets, min_insync_default=min_insync_default)
        else:
            result.changes, result.errors = zk_controller.elect_leaders(
                model, step.action, targets, leader_recovery_supported=leader_recovery_supported)
    return result


def apply_scenario(model: ClusterModel, scenario: str, *, min_insync_default: int = 1,
                   unclean_default: bool = False,
                   leader_recovery_supported: bool = True) -> list[StepResult]:
    """Apply ``scenario`` to ``model`` itself (it is modified) and return each step's writes.

    :func:`what_if` runs this on a copy and compares; use this to keep the resulting state.
    """
    clean_stops: dict[int, bool] = {}
    return [_run_step(model, s, unclean_default=unclean_default,
                      min_insync_default=min_insync_default,
                      leader_recovery_supported=leader_recovery_supported,
                      clean_stops=clean_stops)
            for s in parse_scenario(scenario)]


def what_if(model: ClusterModel, scenario: str, *, min_insync_default: int = 1,
            unclean_default: bool = False,
            leader_recovery_supported: bool = True) -> WhatIfReport:
    """Apply ``scenario`` to a copy of ``model`` and report the effect per partition.

    ``min_insync_default``/``unclean_default`` stand for the brokers' static configs;
    ``leader_recovery_supported`` is for ZooKeeper clusters (inter-broker protocol 3.2+; KRaft
    derives it from ``metadata.version``). Raises ``ValueError`` for a scenario that does not
    parse or names an unknown broker, topic or partition.
    """
    before = model
    after = model.copy()
    results = apply_scenario(after, scenario, min_insync_default=min_insync_default,
                             unclean_default=unclean_default,
                             leader_recovery_supported=leader_recovery_supported)
    unclean = {(c.topic, c.partition) for r in results for c in r.changes if c.unclean}
    outcomes = []
    for topic, pid, old in before.partitions():
        new = after.topics[topic].partitions[pid]
        if new == old:
            continue
        outcomes.append(Outcome(topic, pid, old, new,
                                before.min_insync_replicas(topic, min_insync_default),
                                (topic, pid) in unclean))
    if model.source == "kraft":
        controller = (f"KRaft controller, metadata.version "
                      f"{MetadataVersion.from_level(model.metadata_version).name}"
                      + (", ELR on" if model.elr_enabled else ""))
    else:
        controller = "ZooKeeper-mode controller"
    return WhatIfReport(
        scenario=scenario, controller=controller, steps=results, outcomes=outcomes,
        offline_before=[(t, p) for t, p, part in before.partitions() if not part.has_leader],
        live_brokers_before=sorted(before.live_brokers()),
        live_brokers_after=sorted(after.live_brokers()),
        partitions_total=sum(1 for _ in before.partitions()))
