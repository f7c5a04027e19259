"""Errors of the group package, in the :class:`~kafkalog.errors.KafkaLogError` tree::

    KafkaLogError
    +-- GroupError                    a group operation refused (carries Kafka's error code)
    |   +-- GroupIdNotFoundError      no such group (GROUP_ID_NOT_FOUND)
    |   +-- NonEmptyGroupError        the group has members (NON_EMPTY_GROUP)
    |   +-- NotCoordinatorError       the group's __consumer_offsets partition is not here
    +-- AssignmentError               bad assignor input (also a ValueError)

Protocol-level refusals of :class:`~kafkalog.groups.coordinator.GroupCoordinator` are not
raised: they come back as error codes in the responses, as on the wire.

>>> from kafkalog.groups.error_codes import ErrorCode
>>> GroupIdNotFoundError("group g not found").error_code == ErrorCode.GROUP_ID_NOT_FOUND
True
"""

from __future__ import annotations

from ..errors import KafkaLogError
from .error_codes import ErrorCode

__all__ = ["GroupError", "GroupIdNotFoundError", "NonEmptyGroupError", "NotCoordinatorError",
           "AssignmentError"]


class GroupError(KafkaLogError):
    """A group operation Kafka would refuse; ``error_code`` is the code Kafka answers with."""

    error_code: int = ErrorCode.UNKNOWN_SERVER_ERROR


class GroupIdNotFoundError(GroupError, LookupError):
    """The group has no metadata and no committed offsets here."""

    error_code = ErrorCode.GROUP_ID_NOT_FOUND


class NonEmptyGroupError(GroupError):
    """Deleting (or resetting the offsets of) a group that still has members."""

    error_code = ErrorCode.NON_EMPTY_GROUP


class NotCoordinatorError(GroupError):
    """The group's ``__consumer_offsets`` partition is not in this log dir."""

    error_code = ErrorCode.NOT_COORDINATOR


class AssignmentError(KafkaLogError, ValueError):
    """An assignor was given an unknown strategy, a missing topic or a bad count."""
