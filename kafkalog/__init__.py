"""kafkalog: Apache Kafka's on-disk log format, read and written byte for byte, in Python.

The public surface is re-exported here; the modules behind it are imported lazily so that
``import kafkalog`` stays cheap (numba kernels compile or load from cache on first use).

>>> import kafkalog
>>> data = kafkalog.encode_batch([kafkalog.Record(b"k", b"v", timestamp=1700000000000)])
>>> [r.value for b in kafkalog.iter_batches(data) for r in b]
[b'v']
"""

from __future__ import annotations

import importlib
from typing import Any

from .errors import (
    ConfigError,
    CorruptCheckpointError,
    CorruptIndexError,
    CorruptRecordError,
    IndexFullError,
    InvalidOffsetError,
    InvalidRecordError,
    InvalidRequestError,
    InvalidTopicError,
    KafkaLogError,
    LogCleaningAbortedError,
    LogClosedError,
    LogLockedError,
    OffsetOutOfRangeError,
    OffsetOverflowError,
    RecordBatchTooLargeError,
    RecordTooLargeError,
    UnsupportedCodecError,
)

__version__ = "0.1.0"

# public name -> module that defines it (imported on first attribute access)
_LAZY = {
    "Record": "kafkalog.records.record",
    "Header": "kafkalog.records.record",
    "encode_batch": "kafkalog.records.builder",
    "encode_end_txn_marker": "kafkalog.records.builder",
    "LegacyEntry": "kafkalog.records.legacy",
    "iter_batches": "kafkalog.records.batch",
    "RecordBatch": "kafkalog.records.batch",
    "RecordColumns": "kafkalog.records.columnar",
    "decode_columns": "kafkalog.records.columnar",
    "decode_table": "kafkalog.records.columnar",
    "encode_columns": "kafkalog.records.columnar",
    "LogConfig": "kafkalog.config",
    "Log": "kafkalog.log",
    "LogAppendInfo": "kafkalog.log",
    "LogSegment": "kafkalog.segment",
    "ManualClock": "kafkalog.clock",
    "SystemClock": "kafkalog.clock",
    "OffsetIndex": "kafkalog.index.offset_index",
    "TimeIndex": "kafkalog.index.time_index",
    "TransactionIndex": "kafkalog.index.txn_index",
    "OffsetPosition": "kafkalog.index.offset_index",
    "TimestampOffset": "kafkalog.index.time_index",
    "AbortedTxn": "kafkalog.index.txn_index",
    "OffsetCheckpointFile": "kafkalog.checkpoint",
    "LeaderEpochCheckpointFile": "kafkalog.checkpoint",
    "PartitionMetadataFile": "kafkalog.checkpoint",
    "MetaProperties": "kafkalog.checkpoint",
    "Uuid": "kafkalog.checkpoint",
    "ProducerSnapshotEntry": "kafkalog.producer_snapshot",
    "read_snapshot": "kafkalog.producer_snapshot",
    "write_snapshot": "kafkalog.producer_snapshot",
    "LogDir": "kafkalog.log_dir",
    "KafkaLogDataSource": "kafkalog.spark",
    "TopicExistsError": "kafkalog.log_dir",
    "UnknownTopicOrPartitionError": "kafkalog.log_dir",
    "ProducerStateManager": "kafkalog.producer_state",
    "ProducerStateError": "kafkalog.producer_state",
    "OutOfOrderSequenceError": "kafkalog.producer_state",
    "InvalidProducerEpochError": "kafkalog.producer_state",
    "InvalidTxnStateError": "kafkalog.producer_state",
    "TransactionCoordinatorFencedError": "kafkalog.producer_state",
    "Scheduler": "kafkalog.scheduler",
    "LogDirScheduler": "kafkalog.scheduler",
    "LogCleaner": "kafkalog.cleaner.log_cleaner",
    "CleanerConfig": "kafkalog.cleaner.cleaner_config",
    "Cleaner": "kafkalog.cleaner.cleaner",
    "SkimpyOffsetMap": "kafkalog.cleaner.offset_map",
}

__all__ = [
    "__version__",
    "KafkaLogError",
    "CorruptRecordError",
    "RecordTooLargeError",
    "CorruptIndexError",
    "CorruptCheckpointError",
    "UnsupportedCodecError",
    "InvalidOffsetError",
    "InvalidRecordError",
    "InvalidRequestError",
    "OffsetOverflowError",
    "IndexFullError",
    "OffsetOutOfRangeError",
    "RecordBatchTooLargeError",
    "ConfigError",
    "InvalidTopicError",
    "LogLockedError",
    "LogClosedError",
    "LogCleaningAbortedError",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'kafkalog' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
