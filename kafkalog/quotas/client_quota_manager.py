"""Kafka's ``ClientQuotaManager``: which quota applies to a client and how long it is throttled.

Ported from ``core/src/main/scala/kafka/server/ClientQuotaManager.scala`` (Kafka 4.1.1, its
``DefaultQuotaCallback``). A quota is set on an entity: a user, a client id, or both, each
named or the default (``None`` here, ``<default>`` in Kafka's texts). For a request from
``(user, client_id)`` the most specific quota set applies, in this order:

1. ``/config/users/<user>/clients/<client-id>``
2. ``/config/users/<user>/clients/<default>``
3. ``/config/users/<user>``
4. ``/config/users/<default>/clients/<client-id>``
5. ``/config/users/<default>/clients/<default>``
6. ``/config/users/<default>``
7. ``/config/clients/<client-id>``
8. ``/config/clients/<default>``

Who shares a rate: the manager keeps one rate per *metric tags* ``(user, client-id)``, where
the tags keep only the parts of the matching level (a client-id quota: every connection with
that client id, whoever the user, shares one rate; a user quota: all the user's clients share
one). When only one kind of level is in use the tags are fixed by it, as in Kafka
(``quotaTypesEnabled``); which kinds were ever used is remembered until the manager is
discarded, as a broker remembers until restart.

Measurement and throttling are :mod:`kafkalog.quotas.sampled_rate`'s. A manager holds no clock
and no I/O: callers pass the time (sans-IO, like kafkalog's group coordinator).

>>> m = ClientQuotaManager("Produce")
>>> m.update_quota(None, "slow-app", 1024.0)      # /config/clients/slow-app
>>> m.record_and_get_throttle_time_ms("alice", "slow-app", 20_480, now_ms=0)
10000
>>> m.record_and_get_throttle_time_ms("alice", "other-app", 20_480, now_ms=0)
0
"""

from __future__ import annotations

from dataclasses import dataclass

from .sampled_rate import SampledRate, throttle_time_ms

__all__ = ["ClientQuotaManager", "QuotaBucket", "INACTIVE_SENSOR_EXPIRATION_MS", "ABSENT"]

#: ClientQuotaManager.InactiveSensorExpirationTimeSeconds: a client's rate idle this long is
#: dropped (a fresh one starts empty)
INACTIVE_SENSOR_EXPIRATION_MS = 3600 * 1000

# quotaTypesEnabled bits (ClientQuotaManager.QuotaTypes)
_NO_QUOTAS = 0
_CLIENT_ID = 1
_USER = 2
_USER_CLIENT_ID = 4

#: the marker for an entity part that is absent (a user-only quota has no client id); a
#: part is otherwise a name, or None for <default>
ABSENT = _ABSENT = object()


@dataclass(frozen=True)
class QuotaBucket:
    """The metric tags a request's rate is kept under (``""``: the part is not in the tags)."""

    user: str
    client_id: str


class ClientQuotaManager:
    """One quota type's manager (``Produce``, ``Fetch`` or ``Request``).

    Parameters
    ----------
    quota_type:
        The name in log lines (Kafka's ``QuotaType``).
    samples, window_ms:
        ``quota.window.num`` and ``quota.window.size.seconds`` (as ms).
    max_throttle_ms:
        The cap on a throttle time (the request quota's ``quota.window.size.seconds``; None: no
        cap, the bandwidth quotas).
    """

    def __init__(self, quota_type: str, samples: int = 11, window_ms: int = 1000,
                 max_throttle_ms: int | None = None) -> None:
        self.quota_type = quota_type
        self.samples = samples
        self.window_ms = window_ms
        self.max_throttle_ms = max_throttle_ms
        #: (user | None | _ABSENT, client id | None | _ABSENT) -> bound per second
        self._overrides: dict[tuple[object, object], float] = {}
        self._enabled = _NO_QUOTAS
        #: bucket -> (rate, last record time)
        self._rates: dict[QuotaBucket, list] = {}

    # -- configuration -------------------------------------------------------------------------

    @property
    def quotas_enabled(self) -> bool:
        """Whether a quota of this type was ever set (Kafka records nothing until one is)."""
        return self._enabled != _NO_QUOTAS

    def update_quota(self, user: object, client_id: object, bound: float | None) -> None:
        """Set (``bound``) or remove (None) the quota of an entity. ``user``/``client_id``: a
        name, ``None`` for ``<default>``, or :data:`ABSENT` (the entity has no such part).

        >>> m = ClientQuotaManager("Fetch")
        >>> m.update_quota("alice", ABSENT, 100.0)
        >>> m.quota_limit("alice", "any")
        100.0
        """
        if user is not _ABSENT:
            self._enabled |= _USER_CLIENT_ID if client_id is not _ABSENT else _USER
        elif client_id is not _ABSENT:
            self._enabled |= _CLIENT_ID
        else:
            raise ValueError("a quota entity needs a user or a client id")
        key = (user, client_id)
        if bound is None:
            self._overrides.pop(key, None)
        else:
            self._overrides[key] = float(bound)

    def clear(self) -> None:
        """Remove every quota (the kinds used stay remembered, as in Kafka)."""
        self._overrides.clear()

    def _get(self, user: object, client_id: object) -> float | None:
        return self._overrides.get((user, client_id))

    def bucket(self, user: str, client_id: str) -> QuotaBucket:
        """``DefaultQuotaCallback.quotaMetricTags``: the tags the request's rate is kept under."""
        enabled = self._enabled
        if enabled in (_NO_QUOTAS, _CLIENT_ID):
            return QuotaBucket("", client_id)
        if enabled == _USER:
            return QuotaBucket(user, "")
        if enabled == _USER_CLIENT_ID:
            return QuotaBucket(user, client_id)
        o = self._overrides
        if (user, client_id) in o or (user, None) in o:   # levels 1, 2
            return QuotaBucket(user, client_id)
        if (user, _ABSENT) in o:                           # 3
            return QuotaBucket(user, "")
        if (None, client_id) in o or (None, None) in o:    # 4, 5
            return QuotaBucket(user, client_id)
        if (None, _ABSENT) in o:                           # 6
            return QuotaBucket(user, "")
        return QuotaBucket("", client_id)                  # 7, 8

    def _limit_of(self, tags: QuotaBucket) -> float | None:
        """``DefaultQuotaCallback.quotaLimit`` for metric tags (None: no quota)."""
        user, client_id = tags.user, tags.client_id
        q = None
        if user and client_id:
            q = self._get(user, client_id)
            if q is None:
                q = self._get(user, None)
            if q is None:
                q = self._get(None, client_id)
            if q is None:
                q = self._get(None, None)
        elif user:
            q = self._get(user, _ABSENT)
            if q is None:
                q = self._get(None, _ABSENT)
        elif client_id:
            q = self._get(_ABSENT, client_id)
            if q is None:
                q = self._get(_ABSENT, None)
        return q

    def quota_limit(self, user: str, client_id: str) -> float | None:
        """The quota (per second) that applies to ``(user, client_id)``; None: unlimited."""
        return self._limit_of(self.bucket(user, client_id))

    # -- recording -----------------------------------------------------------------------------

    def _rate(self, tags: QuotaBucket, now_ms: int) -> SampledRate:
        entry = self._rates.get(tags)
        if entry is None or now_ms - entry[1] >= INACTIVE_SENSOR_EXPIRATION_MS:
            if len(self._rates) > 1024:  # drop the idle ones (Kafka's sensor expiry)
                for t in [t for t, e in self._rates.items()
                          if now_ms - e[1] >= INACTIVE_SENSOR_EXPIRATION_MS]:
                    del self._rates[t]
            entry = self._rates[tags] = [SampledRate(self.samples, self.window_ms), now_ms]
        entry[1] = now_ms
        return entry[0]

    def record_and_get_throttle_time_ms(self, user: str, client_id: str, value: float,
                                        now_ms: int) -> int:
        """``maybeRecordAndGetThrottleTimeMs``: record ``value`` for the client and return how
        long it is throttled (0: within its quota, or no quota of this type ever set)."""
        if not self.quotas_enabled:
            return 0
        tags = self.bucket(user, client_id)
        rate = self._rate(tags, now_ms)
        rate.record(value, now_ms)
        bound = self._limit_of(tags)
        if bound is None:
            return 0
        return throttle_time_ms(rate, bound, now_ms, self.max_throttle_ms)

    def unrecord(self, user: str, client_id: str, value: float, now_ms: int) -> None:
        """``unrecordQuotaSensor``: take back a value recorded for a response that was not
        sent (a throttled fetch answers empty)."""
        if self.quotas_enabled:
            self._rate(self.bucket(user, client_id), now_ms).record(-value, now_ms)

    def max_value_in_quota_window(self, user: str, client_id: str) -> float:
        """``getMaxValueInQuotaWindow``: the most that can be recorded at once without a
        certain throttle (a fetch's ``max_bytes`` is capped by it); ``inf`` without a quota."""
        if not self.quotas_enabled:
            return float("inf")
        bound = self.quota_limit(user, client_id)
        if bound is None:
            return float("inf")
        return bound * (self.samples - 1) * (self.window_ms / 1000.0)

