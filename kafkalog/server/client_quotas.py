"""Client quotas in ``kafkalog serve``: the tree's quotas applied to produce and fetch.

Kafka's ``KafkaApis`` with ``ClientQuotaManager``s for produce and fetch (Kafka 4.1.1,
``handleProduceRequest`` and ``handleFetchRequest``):

* **Produce**: the request's size (``request.sizeInBytes``: the frame without its size prefix)
  is recorded against the client's ``producer_byte_rate`` after the append; when the rate is
  over the quota the response carries the throttle time and the connection is muted for it
  (KIP-219: the response goes out at once, then nothing more is read from that connection
  until the time has passed; clients of Produce v6+ also hold back on their side). An
  ``acks=0`` request gets no response but is muted all the same.
* **Fetch**: ``max_bytes`` is first capped to what one quota window allows
  (``getMaxValueInQuotaWindow``: quota x (``quota.window.num`` - 1) x window), so that a fetch
  is never certain to be throttled; the response's size is recorded against
  ``consumer_byte_rate``; when over, the value is taken back (``unrecordQuotaSensor``), the
  client gets an empty response with the throttle time (``getThrottledResponse``) and its
  connection is muted.
* The quotas are the tree's :class:`~kafkalog.quotas.ClientQuotaStore`, changed by
  AlterClientQuotas while the server runs (``kafkalog configs`` changes them while it does
  not: it needs the dir's lock); a change made to the file by hand is picked up too (the file
  is looked at again at most once a second). The user of a request is its principal's name
  (``User:alice`` -> ``alice``; ``ANONYMOUS`` without authentication), its client id the
  header's (``""`` when null), as in Kafka.

* **Request time** (``request_percentage``, ``ClientRequestQuotaManager``): every request's
  handler time is recorded as a percentage of one second (the time its coroutine ran on the
  loop thread, step by step: the waits of a long poll or of a join are not counted, as a
  broker counts only its request-handler thread's time); over the quota, the response (any
  API's, as ``sendResponseMaybeThrottle``) carries the throttle time, at most one window, and
  the connection is muted. Produce with ``acks=0`` is exempt, as in Kafka. For produce and
  fetch the larger of the two throttle times is the one applied.

Not enforced (stored and described only): ``controller_mutation_rate`` and
``connection_creation_rate``; nor the byte rate of ShareFetch (its records are acquired
before a size is known: emptying the response would leave them locked).

Threads: the event loop's.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ..quotas import ABSENT, CLIENT_ID, IP, USER, ClientQuotaManager, ClientQuotaStore

__all__ = ["ClientQuotas", "PRODUCE_KEY", "FETCH_KEY"]

PRODUCE_KEY = "producer_byte_rate"
FETCH_KEY = "consumer_byte_rate"
REQUEST_KEY = "request_percentage"
#: ClientRequestQuotaManager.NANOS_TO_PERCENTAGE_PER_SECOND
_NANOS_TO_PERCENTAGE = 100.0 / 1e9
#: how often the store's file is looked at again for changes made by another process
_RELOAD_INTERVAL_S = 1.0


class ClientQuotas:
    """The broker's produce and fetch quota managers over the tree's store.

    Parameters
    ----------
    root:
        The log-dir root (where the store's file is).
    samples, window_ms:
        ``quota.window.num`` and ``quota.window.size.seconds`` (as ms).
    now_ms:
        The clock (milliseconds); the broker's.
    """

    def __init__(self, root: Any, samples: int = 11, window_ms: int = 1000,
                 now_ms: Callable[[], int] | None = None) -> None:
        self.store = ClientQuotaStore(root)
        self.samples = samples
        self.window_ms = window_ms
        self._now_ms = now_ms or (lambda: int(time.time() * 1000))
        self.produce = ClientQuotaManager("Produce", samples, window_ms)
        self.fetch = ClientQuotaManager("Fetch", samples, window_ms)
        # ClientRequestQuotaManager: a throttle is at most one window (boundedThrottleTime)
        self.request = ClientQuotaManager("Request", samples, window_ms,
                                          max_throttle_ms=window_ms)
        self._checked = time.monotonic()
        self._apply()

    def _apply(self) -> None:
        """Push the store's quotas into the managers (ClientQuotaMetadataManager's job)."""
        for m in (self.produce, self.fetch, self.request):
            m.clear()
        for entity, quotas in self.store.entities():
            if IP in entity:
                continue
            user = entity.get(USER, ABSENT)
            client = entity.get(CLIENT_ID, ABSENT)
            for key, manager in ((PRODUCE_KEY, self.produce), (FETCH_KEY, self.fetch),
                                 (REQUEST_KEY, self.request)):
                if key in quotas:
                    manager.update_quota(user, client, quotas[key])

    def refresh(self) -> None:
        """Pick up changes to the store's file (at most once per second)."""
        now = time.monotonic()
        if now - self._checked < _RELOAD_INTERVAL_S:
            return
        self._checked = now
        if self.store.reload_if_changed():
            self._apply()

    def altered(self) -> None:
        """The store was changed in this process (AlterClientQuotas): apply it now."""
        self._apply()

    @property
    def enabled(self) -> bool:
        """Whether any quota this server enforces was ever set (nothing is recorded until
        one is)."""
        return (self.produce.quotas_enabled or self.fetch.quotas_enabled
                or self.request.quotas_enabled)

    @staticmethod
    def who(ctx: Any) -> tuple[str, str]:
        """``(user, client id)`` of a request context."""
        principal = ctx.principal or "User:ANONYMOUS"
        user = principal.split(":", 1)[1] if ":" in principal else principal
        return user, ctx.client_id or ""

    # -- produce ---------------------------------------------------------------------------------

    def produce_throttle_ms(self, ctx: Any) -> int:
        """Record a produce request's size; the throttle time (0: none)."""
        if not self.produce.quotas_enabled:
            return 0
        user, client = self.who(ctx)
        return self.produce.record_and_get_throttle_time_ms(user, client, ctx.request_size,
                                                            self._now_ms())

    # -- fetch ---------------------------------------------------------------------------------

    def fetch_max_bytes(self, ctx: Any, max_bytes: int) -> int:
        """A consumer fetch's ``max_bytes`` capped to one quota window's worth (the
        connection refreshed the quotas for this request already)."""
        if not self.fetch.quotas_enabled:
            return max_bytes
        user, client = self.who(ctx)
        cap = self.fetch.max_value_in_quota_window(user, client)
        return max_bytes if cap >= max_bytes else int(cap)

    def fetch_throttle_ms(self, ctx: Any, response_size: int) -> int:
        """Record a fetch response's size; the throttle time (0: none)."""
        if not self.fetch.quotas_enabled:
            return 0
        user, client = self.who(ctx)
        return self.fetch.record_and_get_throttle_time_ms(user, client, response_size,
                                                          self._now_ms())

    def unrecord_fetch(self, ctx: Any, response_size: int) -> None:
        """Take back a recorded fetch size: the response sent is the empty throttled one."""
        if self.fetch.quotas_enabled:
            user, client = self.who(ctx)
            self.fetch.unrecord(user, client, response_size, self._now_ms())

    # -- request time --------------------------------------------------------------------------

    def request_throttle_ms(self, ctx: Any, handler_nanos: int) -> int:
        """``ClientRequestQuotaManager.maybeRecordAndGetThrottleTimeMs``: record the time the
        request's handler ran on the loop thread, as a percentage of a second, against the
        client's ``request_percentage``; the throttle time, at most one window."""
        if not self.request.quotas_enabled:
            return 0
        user, client = self.who(ctx)
        return self.request.record_and_get_throttle_time_ms(
            user, client, handler_nanos * _NANOS_TO_PERCENTAGE, self._now_ms())
