"""Kafka error codes for the errors the engine raises (Kafka's ``Errors.forException``).

One table from kafkalog's error classes to the codes a partition leader answers with; the most
specific class listed wins (the table is walked along the exception's MRO).

Example
-------
>>> from kafkalog.errors import OffsetOutOfRangeError
>>> int(error_code_for(OffsetOutOfRangeError("fetch offset out of range")))
1
"""

from __future__ import annotations

from kio.schema.errors import ErrorCode

from ..errors import (
    ConfigError,
    CorruptRecordError,
    InvalidRecordError,
    InvalidTimestampError,
    InvalidTopicError,
    LogClosedError,
    OffsetOutOfRangeError,
    RecordBatchTooLargeError,
)
from ..log_dir import InvalidPartitionsError, TopicExistsError, UnknownTopicOrPartitionError
from ..producer_state import (
    InvalidProducerEpochError,
    InvalidTxnStateError,
    OutOfOrderSequenceError,
    TransactionCoordinatorFencedError,
)

__all__ = ["error_code_for", "ErrorCode"]

_CODES: dict[type[BaseException], ErrorCode] = {
    UnknownTopicOrPartitionError: ErrorCode.unknown_topic_or_partition,
    InvalidTopicError: ErrorCode.invalid_topic_exception,
    TopicExistsError: ErrorCode.topic_already_exists,
    InvalidPartitionsError: ErrorCode.invalid_partitions,
    OffsetOutOfRangeError: ErrorCode.offset_out_of_range,
    # Kafka: RecordTooLargeException (a batch above max.message.bytes) -> MESSAGE_TOO_LARGE
    RecordBatchTooLargeError: ErrorCode.message_too_large,
    CorruptRecordError: ErrorCode.corrupt_message,
    InvalidRecordError: ErrorCode.invalid_record,
    InvalidTimestampError: ErrorCode.invalid_timestamp,
    OutOfOrderSequenceError: ErrorCode.out_of_order_sequence_number,
    InvalidProducerEpochError: ErrorCode.invalid_producer_epoch,
    InvalidTxnStateError: ErrorCode.invalid_txn_state,
    TransactionCoordinatorFencedError: ErrorCode.transaction_coordinator_fenced,
    ConfigError: ErrorCode.invalid_config,
    # a log closed under a request (its topic was deleted): the client refreshes metadata
    LogClosedError: ErrorCode.not_leader_or_follower,
    # Kafka's LogDirFailureChannel: an I/O error on a log dir
    OSError: ErrorCode.kafka_storage_error,
}


def error_code_for(exc: BaseException) -> ErrorCode:
    """The Kafka error code for ``exc`` (``UNKNOWN_SERVER_ERROR`` for anything unlisted)."""
    for cls in type(exc).__mro__:
        code = _CODES.get(cls)
        if code is not None:
            return code
    return ErrorCode.unknown_server_error
