"""When and how ``kafkalog mirror`` retries a partition: the errors Kafka's fetchers retry after
a metadata refresh, and Kafka's exponential backoff between attempts.

A source cluster moves partition leaders (a rolling restart, a failed broker, a reassignment)
and drops connections; a backup that gave up on the first ``NOT_LEADER_OR_FOLLOWER`` would be
no backup. Kafka's consumer (``FetchCollector.handleInitializeErrors``, Kafka 4.2) answers
these partition errors by asking for new metadata and fetching again from whichever broker
leads then; its replica fetcher (``AbstractFetcherThread.processFetchRequest``) retries the same
ones and a failed request (``partitionsWithError``, after ``replica.fetch.backoff.ms``):

=============================  ====  ===========================================================
``UNKNOWN_TOPIC_OR_PARTITION``    3  transient while a partition is created, deleted or moved
``LEADER_NOT_AVAILABLE``          5  an election in progress
``NOT_LEADER_OR_FOLLOWER``        6  the leader moved
``REQUEST_TIMED_OUT``             7
``REPLICA_NOT_AVAILABLE``         9
``NETWORK_EXCEPTION``            13
``KAFKA_STORAGE_ERROR``          56  the leader's log dir failed; another replica takes over
``FENCED_LEADER_EPOCH``          74  our metadata is older than the leader's epoch (KIP-320)
``UNKNOWN_LEADER_EPOCH``         75  the broker has not caught up with our metadata yet
``OFFSET_NOT_AVAILABLE``         78  a new leader whose high watermark is not known yet
``UNKNOWN_TOPIC_ID``            100  (a recreated topic is caught by the metadata refresh)
``INCONSISTENT_TOPIC_ID``       103
=============================  ====  ===========================================================

Anything else (``TOPIC_AUTHORIZATION_FAILED``, ``CORRUPT_MESSAGE``...) fails the partition at
once, as Kafka's consumer raises it.

Between attempts a partition waits :class:`ExponentialBackoff` with Kafka's client defaults
(``retry.backoff.ms`` 100, doubling up to ``retry.backoff.max.ms`` 1000, jitter 0.2).

>>> b = ExponentialBackoff(100, 2, 1000, 0.0)
>>> [b.backoff(n) for n in range(6)]
[100, 200, 400, 800, 1000, 1000]
>>> error_is_retriable(6), error_is_retriable(29)
(True, False)
"""

from __future__ import annotations

import math
import random
import sys

from kio.schema.errors import ErrorCode

__all__ = ["RETRIABLE_ERRORS", "error_is_retriable", "ExponentialBackoff",
           "DEFAULT_RETRY_BACKOFF_MS", "DEFAULT_RETRY_BACKOFF_MAX_MS"]

#: the partition error codes retried after a metadata refresh (module docstring)
RETRIABLE_ERRORS: frozenset[int] = frozenset(int(e) for e in (
    ErrorCode.unknown_topic_or_partition, ErrorCode.leader_not_available,
    ErrorCode.not_leader_or_follower, ErrorCode.request_timed_out,
    ErrorCode.replica_not_available, ErrorCode.network_exception,
    ErrorCode.kafka_storage_error, ErrorCode.fenced_leader_epoch,
    ErrorCode.unknown_leader_epoch, ErrorCode.offset_not_available,
    ErrorCode.unknown_topic_id, ErrorCode.inconsistent_topic_id))

#: Kafka's ``CommonClientConfigs.DEFAULT_RETRY_BACKOFF_MS`` / ``DEFAULT_RETRY_BACKOFF_MAX_MS``
DEFAULT_RETRY_BACKOFF_MS = 100
DEFAULT_RETRY_BACKOFF_MAX_MS = 1000
#: ``CommonClientConfigs.RETRY_BACKOFF_EXP_BASE`` / ``RETRY_BACKOFF_JITTER``
RETRY_BACKOFF_EXP_BASE = 2
RETRY_BACKOFF_JITTER = 0.2


def error_is_retriable(code: int) -> bool:
    """Whether a partition error code is retried after a metadata refresh."""
    return int(code) in RETRIABLE_ERRORS


class ExponentialBackoff:
    """Kafka's ``org.apache.kafka.common.utils.ExponentialBackoff``:
    ``random(1 - jitter, 1 + jitter) * initial * multiplier ** attempts`` milliseconds, never
    above ``max_ms`` (a ``max_ms`` below ``initial_ms`` is a constant backoff of ``max_ms``).

    >>> ExponentialBackoff(50, 2, 10, 0.2).backoff(7)
    10
    """

    def __init__(self, initial_ms: int, multiplier: int, max_ms: int, jitter: float) -> None:
        if not 0 <= jitter <= 1:
            raise ValueError(f"jitter must be between 0 and 1, but got {jitter}")
        self.initial_ms = min(max_ms, initial_ms)
        self.multiplier = multiplier
        self.max_ms = max_ms
        self.jitter = jitter
        self._exp_max = (math.log(max_ms / max(self.initial_ms, 1)) / math.log(multiplier)
                         if max_ms > self.initial_ms else 0.0)

    def backoff(self, attempts: int) -> int:
        """The wait in milliseconds before attempt ``attempts + 1`` (0: after the first
        failure)."""
        if self._exp_max == 0:
            return self.initial_ms
        term = self.initial_ms * self.multiplier ** min(attempts, self._exp_max)
        factor = (random.uniform(1 - self.jitter, 1 + self.jitter)
                  if self.jitter >= sys.float_info.min else 1.0)  # (Double.MIN_NORMAL)
        return min(int(factor * term), self.max_ms)
