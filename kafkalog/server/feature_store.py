"""The cluster features ``kafkalog serve`` runs at (``kafka-features.sh``; KIP-584/1022), what it
can run at, and where the finalized levels are kept.

A Kafka cluster finalizes its features in the metadata log (``FeatureLevelRecord``); a log
directory served here keeps them in ``.kafkalog-features.json`` at its root, with their epoch.
Absent, a directory with a ``bootstrap.checkpoint`` (``kafka-storage.sh format``) starts at the
levels it names that kafkalog serves (a new Kafka cluster finalizes its bootstrap levels), else
at the defaults. The rules are :class:`kafkalog.cluster.features.FeatureControl`.

What kafkalog supports (:data:`SUPPORTED`), as a Kafka 4.2 node would advertise it, narrowed to
what it really does:

* ``metadata.version`` 3.3-IV3 .. 4.2-IV1 (7-29), finalized by default at 4.2-IV1: nothing
  here reads it, so any level is served alike;
* ``group.version`` 1 and ``share.version`` 1 only: KIP-848 consumer groups and KIP-932 share
  groups are always served (Kafka's level 0 turns them off: kafkalog cannot);
* ``eligible.leader.replicas.version`` 0-1 (on one node there is no other replica to be
  eligible: either level behaves alike);
* ``transaction.version``, ``kraft.version``, ``streams.version``: level 0 only, not advertised
  (kafkalog writes version-0 transaction records and serves neither KIP-890's second phase,
  a KRaft quorum nor KIP-1071 streams groups).

Example
-------
>>> import tempfile
>>> store = FeatureStore(tempfile.mkdtemp(), node_id=1)
>>> store.control.finalized()["share.version"], store.control.epoch
(1, 0)
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..checkpoint import JsonStateFile
from ..cluster.features import METADATA_VERSION, METADATA_VERSION_RANGE, FeatureControl

__all__ = ["FEATURES_FILE", "SUPPORTED", "FeatureStore"]

FEATURES_FILE = ".kafkalog-features.json"
#: feature -> (min, max) levels kafkalog serves (see the module docstring)
SUPPORTED: dict[str, tuple[int, int]] = {
    METADATA_VERSION: METADATA_VERSION_RANGE,
    "group.version": (1, 1),
    "share.version": (1, 1),
    "eligible.leader.replicas.version": (0, 1),
}


class FeatureStore:
    """The finalized features of a served log directory, persisted after each change."""

    def __init__(self, root: str | Path, node_id: int,
                 bootstrap: dict[str, int] | None = None) -> None:
        self._file = JsonStateFile(Path(root) / FEATURES_FILE, "finalized features",
                                   "features", sort_keys=True)
        self.path = self._file.path
        stored = self._file.load(self._parse)
        #: bootstrap levels this node cannot run at (feature -> level), left at its own
        self.unserved: dict[str, int] = {}
        if stored is None and bootstrap:
            stored = {"finalized": self._from_bootstrap(bootstrap), "epoch": 0}
        stored = stored or {}
        self.control = FeatureControl(node_id, SUPPORTED, stored.get("finalized"),
                                      stored.get("epoch", 0))

    def _from_bootstrap(self, levels: dict[str, int]) -> dict[str, int]:
        """A new cluster finalizes its ``bootstrap.checkpoint`` levels (the controller replays
        them on an empty metadata log): the ones this node serves are taken, the others kept
        in :attr:`unserved`. A feature the bootstrap does not name is at level 0 there."""
        out: dict[str, int] = {}
        for name in sorted({*SUPPORTED, *levels} - {"kraft.version"}):
            level = levels.get(name, 0)
            lo, hi = SUPPORTED.get(name, (0, 0))
            if lo <= level <= hi:
                out[name] = level
            else:
                self.unserved[name] = level
        return out

    def _parse(self, body: dict) -> dict:
        finalized = body.get("finalized", {})
        epoch = body.get("epoch", 0)
        if not isinstance(finalized, dict) or not isinstance(epoch, int) or any(
                not isinstance(v, int) or isinstance(v, bool) for v in finalized.values()):
            raise ValueError("expected {'finalized': {feature: level}, 'epoch': int}")
        for name, level in finalized.items():
            lo, hi = SUPPORTED.get(name, (0, 0))
            if not lo <= level <= hi:
                raise ValueError(f"{name} finalized at {level}, outside the levels kafkalog "
                                 f"serves ({lo}-{hi})")
        return {"finalized": finalized, "epoch": epoch}

    def update(self, updates: Iterable[tuple[str, int, int]], validate_only: bool = False
               ) -> tuple[int, str | None]:
        """:meth:`FeatureControl.update`, the result saved when applied."""
        before = self.control.epoch
        code, message = self.control.update(updates, validate_only)
        if self.control.epoch != before:
            self._file.save({"finalized": self.control.levels(),
                             "epoch": self.control.epoch})
        return code, message
