"""Kafka's numeric error codes used by the group coordinator (``org.apache.kafka.common.protocol.
Errors``, clients/src/main/java/.../common/protocol/Errors.java, 3.9).

Responses of :class:`~kafkalog.groups.coordinator.GroupCoordinator` carry these codes as plain
``int`` values, ready to be put on the wire; :func:`error_name` gives Kafka's name back.

>>> ErrorCode.REBALANCE_IN_PROGRESS, error_name(79)
(27, 'MEMBER_ID_REQUIRED')
"""

from __future__ import annotations

__all__ = ["ErrorCode", "error_name"]


class ErrorCode:
    """The subset of Kafka's ``Errors`` the group APIs answer with (same names, same numbers)."""

    UNKNOWN_SERVER_ERROR = -1
    NONE = 0
    UNKNOWN_TOPIC_OR_PARTITION = 3
    OFFSET_METADATA_TOO_LARGE = 12
    COORDINATOR_LOAD_IN_PROGRESS = 14
    COORDINATOR_NOT_AVAILABLE = 15
    NOT_COORDINATOR = 16
    ILLEGAL_GENERATION = 22
    INCONSISTENT_GROUP_PROTOCOL = 23
    INVALID_GROUP_ID = 24
    UNKNOWN_MEMBER_ID = 25
    INVALID_SESSION_TIMEOUT = 26
    REBALANCE_IN_PROGRESS = 27
    INVALID_COMMIT_OFFSET_SIZE = 28
    UNSUPPORTED_VERSION = 35
    INVALID_REQUEST = 42
    INVALID_PRODUCER_EPOCH = 47
    INVALID_TXN_STATE = 48
    KAFKA_STORAGE_ERROR = 56
    NON_EMPTY_GROUP = 68
    GROUP_ID_NOT_FOUND = 69
    MEMBER_ID_REQUIRED = 79
    GROUP_MAX_SIZE_REACHED = 81
    FENCED_INSTANCE_ID = 82
    GROUP_SUBSCRIBED_TO_TOPIC = 86
    UNSTABLE_OFFSET_COMMIT = 88
    FENCED_MEMBER_EPOCH = 110
    UNRELEASED_INSTANCE_ID = 111
    UNSUPPORTED_ASSIGNOR = 112
    STALE_MEMBER_EPOCH = 113
    INVALID_RECORD_STATE = 121
    SHARE_SESSION_NOT_FOUND = 122
    INVALID_SHARE_SESSION_EPOCH = 123
    INVALID_REGULAR_EXPRESSION = 128


_NAMES = {v: k for k, v in vars(ErrorCode).items() if k.isupper()}


def error_name(code: int) -> str:
    """Kafka's name of ``code`` (``UNKNOWN_<n>`` for a code not listed here)."""
    return _NAMES.get(code, f"UNKNOWN_{code}")
