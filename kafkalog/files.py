"""Every file-name rule of a Kafka log directory (Kafka's ``LogFileUtils`` and ``LocalLog``).

A partition directory ``<topic>-<partition>`` holds, per segment, files named by the segment's
**base offset** zero-padded to 20 digits so that ``ls`` sorts them numerically::

    00000000000000368769.log         records
    00000000000000368769.index       offset index
    00000000000000368769.timeindex   time index
    00000000000000368769.txnindex    aborted transactions (created on first entry)
    00000000000000368769.snapshot    producer state snapshot (offset = exclusive end covered)

State suffixes are appended *after* the type suffix: ``.deleted`` (scheduled for asynchronous
deletion), ``.cleaned`` (log-cleaner output being written), ``.swap`` (cleaned/split output being
swapped in). Checkpoints are written through ``<name>.tmp`` then renamed. The offset of any of
these files is the text before the first ``.`` (Kafka's ``offsetFromFileName``).

KRaft snapshots in ``__cluster_metadata-0`` are named
``<20-digit offset>-<10-digit epoch>.checkpoint`` (raft ``Snapshots``).

Example
-------
>>> log_file_name(368769)
'00000000000000368769.log'
>>> offset_from_filename("00000000000000368769.index.deleted")
368769
>>> parse_topic_partition_name("my-topic-3")
('my-topic', 3)
"""

from __future__ import annotations

import os
import re
import uuid
from pathlib import Path

from .errors import InvalidTopicError

__all__ = [
    "LOG_FILE_SUFFIX",
    "INDEX_FILE_SUFFIX",
    "TIME_INDEX_FILE_SUFFIX",
    "TXN_INDEX_FILE_SUFFIX",
    "PRODUCER_SNAPSHOT_FILE_SUFFIX",
    "DELETED_FILE_SUFFIX",
    "CLEANED_FILE_SUFFIX",
    "SWAP_FILE_SUFFIX",
    "TMP_FILE_SUFFIX",
    "CHECKPOINT_FILE_SUFFIX",
    "PARTIAL_CHECKPOINT_FILE_SUFFIX",
    "DELETE_DIR_SUFFIX",
    "FUTURE_DIR_SUFFIX",
    "STRAY_DIR_SUFFIX",
    "RECOVERY_POINT_CHECKPOINT_FILE",
    "REPLICATION_OFFSET_CHECKPOINT_FILE",
    "LOG_START_OFFSET_CHECKPOINT_FILE",
    "CLEANER_OFFSET_CHECKPOINT_FILE",
    "LEADER_EPOCH_CHECKPOINT_FILE",
    "PARTITION_METADATA_FILE",
    "META_PROPERTIES_FILE",
    "CLEAN_SHUTDOWN_FILE",
    "LOCK_FILE",
    "filename_prefix_from_offset",
    "offset_from_filename",
    "offset_from_file",
    "log_file_name",
    "index_file_name",
    "time_index_file_name",
    "txn_index_file_name",
    "producer_snapshot_file_name",
    "log_file",
    "offset_index_file",
    "time_index_file",
    "transaction_index_file",
    "producer_snapshot_file",
    "is_log_file",
    "is_index_file",
    "is_time_index_file",
    "is_txn_index_file",
    "is_producer_snapshot_file",
    "is_deleted_file",
    "is_cleaned_file",
    "is_swap_file",
    "is_tmp_file",
    "is_partition_dir",
    "strip_state_suffix",
    "log_dir_name",
    "partition_dir",
    "validate_topic_name",
    "MAX_TOPIC_NAME_LENGTH",
    "log_delete_dir_name",
    "log_future_dir_name",
    "log_stray_dir_name",
    "parse_topic_partition_name",
    "is_delete_dir",
    "is_future_dir",
    "is_stray_dir",
    "kraft_snapshot_file_name",
    "parse_kraft_snapshot_file_name",
]

# -- suffixes (LogFileUtils / LocalLog / raft Snapshots) -------------------------------------------

LOG_FILE_SUFFIX = ".log"
INDEX_FILE_SUFFIX = ".index"
TIME_INDEX_FILE_SUFFIX = ".timeindex"
TXN_INDEX_FILE_SUFFIX = ".txnindex"
PRODUCER_SNAPSHOT_FILE_SUFFIX = ".snapshot"
#: scheduled for asynchronous deletion (appended after the type suffix)
DELETED_FILE_SUFFIX = ".deleted"
#: log-cleaner output in progress
CLEANED_FILE_SUFFIX = ".cleaned"
#: cleaned/split output being swapped in
SWAP_FILE_SUFFIX = ".swap"
#: checkpoint written here first, then atomically renamed (CheckpointFile)
TMP_FILE_SUFFIX = ".tmp"
#: KRaft metadata snapshot
CHECKPOINT_FILE_SUFFIX = ".checkpoint"
PARTIAL_CHECKPOINT_FILE_SUFFIX = ".checkpoint.part"

DELETE_DIR_SUFFIX = "-delete"
FUTURE_DIR_SUFFIX = "-future"
STRAY_DIR_SUFFIX = "-stray"

# -- fixed file names ------------------------------------------------------------------------------

RECOVERY_POINT_CHECKPOINT_FILE = "recovery-point-offset-checkpoint"
REPLICATION_OFFSET_CHECKPOINT_FILE = "replication-offset-checkpoint"
LOG_START_OFFSET_CHECKPOINT_FILE = "log-start-offset-checkpoint"
CLEANER_OFFSET_CHECKPOINT_FILE = "cleaner-offset-checkpoint"
LEADER_EPOCH_CHECKPOINT_FILE = "leader-epoch-checkpoint"
PARTITION_METADATA_FILE = "partition.metadata"
META_PROPERTIES_FILE = "meta.properties"
CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"
LOCK_FILE = ".lock"

_STATE_SUFFIXES = (DELETED_FILE_SUFFIX, CLEANED_FILE_SUFFIX, SWAP_FILE_SUFFIX)

# Kafka's LocalLog patterns: ^(\S+)-(\S+)\.(\S+)-delete  (Java `matches` anchors both ends)
_DELETE_DIR_RE = re.compile(r"(\S+)-(\S+)\.(\S+)" + re.escape(DELETE_DIR_SUFFIX))
_FUTURE_DIR_RE = re.compile(r"(\S+)-(\S+)\.(\S+)" + re.escape(FUTURE_DIR_SUFFIX))
_STRAY_DIR_RE = re.compile(r"(\S+)-(\S+)\.(\S+)" + re.escape(STRAY_DIR_SUFFIX))

# Kafka caps directory names at 255 characters (LocalLog.logDirNameWithSuffixCappedLength)
_MAX_DIR_NAME_LENGTH = 255

PathLike = str | os.PathLike[str]


# -- segment file names ----------------------------------------------------------------------------


def filename_prefix_from_offset(offset: int) -> str:
    """The base offset zero-padded to 20 digits (``LogFileUtils.filenamePrefixFromOffset``).

    >>> filename_prefix_from_offset(42)
    '00000000000000000042'
    """
    offset = int(offset)
    # Java's NumberFormat with minimum 20 integer digits: a negative number keeps its sign
    # before the padded digits; Kafka never names a file with a negative offset, neither do we.
    if offset < 0:
        raise ValueError(f"file names need a non-negative offset (found {offset})")
    return f"{offset:020d}"


def offset_from_filename(name: str) -> int:
    """The offset encoded in a segment/snapshot file name: the text before the first ``.``.

    Raises ``ValueError`` when that text is not a decimal integer (Kafka's
    ``Long.parseLong`` throws ``NumberFormatException``).

    >>> offset_from_filename("00000000000000000100.snapshot")
    100
    """
    base = name if type(name) is str and os.sep not in name else os.path.basename(os.fspath(name))
    dot = base.find(".")
    if dot < 0:
        raise ValueError(f"file name {base!r} has no '.' (expected <offset>.<suffix>)")
    digits = base[:dot]
    # Long.parseLong accepts an optional sign then ASCII digits only (the first test is the
    # common case, Kafka's 20 digits, without the regular expression: listings parse every name)
    if not (digits.isascii() and digits.isdigit()) and not re.fullmatch(r"[+-]?[0-9]+", digits):
        raise ValueError(f"file name {base!r} does not start with an offset (found {digits!r})")
    value = int(digits)
    if not -(2**63) <= value < 2**63:
        raise ValueError(f"file name {base!r}: offset {value} does not fit in 64 bits")
    return value


def segment_base_offsets(directory: PathLike) -> list[int]:
    """Base offsets of the segments (``<offset>.log`` files) of a partition directory, ascending.

    Files whose name does not start with an offset are not segments and are passed over (Kafka's
    loader deletes or ignores them); ``.log.deleted``/``.log.swap``/``.log.cleaned`` are states of
    a segment, not segments.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> for n in ("00000000000000000010.log", "00000000000000000000.log", "x.log", "5.log.deleted"):
    ...     _ = (d / n).write_bytes(b"")
    >>> segment_base_offsets(d)
    [0, 10]
    """
    bases = []
    with os.scandir(directory) as entries:
        for entry in entries:
            if entry.name.endswith(LOG_FILE_SUFFIX) and entry.is_file():
                try:
                    bases.append(offset_from_filename(entry.name))
                except ValueError:
                    continue
    return sorted(bases)


def offset_from_file(path: PathLike) -> int:
    """:func:`offset_from_filename` of a path's last component."""
    return offset_from_filename(Path(path).name)


def log_file_name(offset: int, suffix: str = "") -> str:
    """``<20 digits>.log<suffix>``; suffix ``""``, ``.deleted``, ``.cleaned`` or ``.swap``."""
    return filename_prefix_from_offset(offset) + LOG_FILE_SUFFIX + suffix


def index_file_name(offset: int, suffix: str = "") -> str:
    """``<20 digits>.index<suffix>``."""
    return filename_prefix_from_offset(offset) + INDEX_FILE_SUFFIX + suffix


def time_index_file_name(offset: int, suffix: str = "") -> str:
    """``<20 digits>.timeindex<suffix>``."""
    return filename_prefix_from_offset(offset) + TIME_INDEX_FILE_SUFFIX + suffix


def txn_index_file_name(offset: int, suffix: str = "") -> str:
    """``<20 digits>.txnindex<suffix>``."""
    return filename_prefix_from_offset(offset) + TXN_INDEX_FILE_SUFFIX + suffix


def producer_snapshot_file_name(offset: int) -> str:
    """``<20 digits>.snapshot``; ``offset`` is the exclusive end offset the snapshot covers."""
    return filename_prefix_from_offset(offset) + PRODUCER_SNAPSHOT_FILE_SUFFIX


def log_file(directory: PathLike, offset: int, suffix: str = "") -> Path:
    """Path of the ``.log`` of the segment with base offset ``offset`` in ``directory``."""
    return Path(directory) / log_file_name(offset, suffix)


def offset_index_file(directory: PathLike, offset: int, suffix: str = "") -> Path:
    """Path of the ``.index`` of the segment with base offset ``offset``."""
    return Path(directory) / index_file_name(offset, suffix)


def time_index_file(directory: PathLike, offset: int, suffix: str = "") -> Path:
    """Path of the ``.timeindex`` of the segment with base offset ``offset``."""
    return Path(directory) / time_index_file_name(offset, suffix)


def transaction_index_file(directory: PathLike, offset: int, suffix: str = "") -> Path:
    """Path of the ``.txnindex`` of the segment with base offset ``offset``."""
    return Path(directory) / txn_index_file_name(offset, suffix)


def producer_snapshot_file(directory: PathLike, offset: int) -> Path:
    """Path of the producer snapshot covering offsets below ``offset``."""
    return Path(directory) / producer_snapshot_file_name(offset)


def _name(path: PathLike) -> str:
    return os.path.basename(os.fspath(path))


def is_log_file(path: PathLike) -> bool:
    """True for ``*.log`` (no state suffix), like ``LogFileUtils.isLogFile``."""
    return _name(path).endswith(LOG_FILE_SUFFIX)


def is_index_file(path: PathLike) -> bool:
    """True for ``*.index``, ``*.timeindex`` and ``*.txnindex`` (``LogFileUtils.isIndexFile``)."""
    n = _name(path)
    return n.endswith((INDEX_FILE_SUFFIX, TIME_INDEX_FILE_SUFFIX, TXN_INDEX_FILE_SUFFIX))


def is_time_index_file(path: PathLike) -> bool:
    """True for ``*.timeindex``."""
    return _name(path).endswith(TIME_INDEX_FILE_SUFFIX)


def is_txn_index_file(path: PathLike) -> bool:
    """True for ``*.txnindex``."""
    return _name(path).endswith(TXN_INDEX_FILE_SUFFIX)


def is_producer_snapshot_file(path: PathLike) -> bool:
    """True for ``*.snapshot``."""
    return _name(path).endswith(PRODUCER_SNAPSHOT_FILE_SUFFIX)


def is_deleted_file(path: PathLike) -> bool:
    """True for ``*.deleted`` (scheduled for deletion)."""
    return _name(path).endswith(DELETED_FILE_SUFFIX)


def is_cleaned_file(path: PathLike) -> bool:
    """True for ``*.cleaned`` (log-cleaner output in progress)."""
    return _name(path).endswith(CLEANED_FILE_SUFFIX)


def is_swap_file(path: PathLike) -> bool:
    """True for ``*.swap`` (output being swapped in)."""
    return _name(path).endswith(SWAP_FILE_SUFFIX)


def is_partition_dir(path: PathLike) -> bool:
    """True for a directory that holds a partition's files: a ``*.log`` segment, or, under a
    topic-partition name (:func:`parse_topic_partition_name`), any other file Kafka keeps for a
    partition (a ``.swap`` segment waiting to replace others, an index, a producer snapshot, the
    leader-epoch checkpoint, ``partition.metadata``): a partition that lost its segments is
    still a partition, and the tools must report it, not pass it by.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp()) / "orders-3"
    >>> d.mkdir()
    >>> _ = (d / "leader-epoch-checkpoint").write_text("0")
    >>> is_partition_dir(d), is_partition_dir(d.parent)
    (True, False)
    >>> root = d.parent / "kafka-logs-1"; root.mkdir()        # a log dir named like a partition
    >>> _ = (root / "meta.properties").write_text("version=1")
    >>> _ = (root / "leader-epoch-checkpoint").write_text("0")
    >>> is_partition_dir(root)
    False
    """
    p = Path(path)
    try:
        if not p.is_dir() or (p / META_PROPERTIES_FILE).exists():
            return False    # (a log dir: a root named like a partition, kafka-logs-1)
        names = [c for c in p.iterdir() if c.is_file()]
    except OSError:
        return False
    if any(is_log_file(c) for c in names):
        return True
    try:
        parse_topic_partition_name(p)
    except ValueError:
        return False
    return any(is_swap_file(c) or is_index_file(c) or is_time_index_file(c)
               or is_txn_index_file(c) or is_producer_snapshot_file(c)
               or c.name in (LEADER_EPOCH_CHECKPOINT_FILE, PARTITION_METADATA_FILE)
               for c in names)


def is_tmp_file(path: PathLike) -> bool:
    """True for ``*.tmp`` (a checkpoint being written)."""
    return _name(path).endswith(TMP_FILE_SUFFIX)


def strip_state_suffix(name: str) -> str:
    """Drop one trailing ``.deleted``/``.cleaned``/``.swap`` (the inverse of adding one).

    >>> strip_state_suffix("00000000000000000000.log.swap")
    '00000000000000000000.log'
    """
    for s in _STATE_SUFFIXES:
        if name.endswith(s):
            return name[: -len(s)]
    return name


# -- partition directories -------------------------------------------------------------------------

#: Kafka's ``Topic.MAX_NAME_LENGTH``
MAX_TOPIC_NAME_LENGTH = 249
_LEGAL_TOPIC = re.compile(r"[a-zA-Z0-9._-]+")  # Topic.LEGAL_CHARS, ASCII only
_MAX_PARTITION = 2**31 - 1


def validate_topic_name(topic: str) -> None:
    """Kafka's ``Topic.validate`` (clients ``org/apache/kafka/common/internals/Topic.java``, 3.9):
    1 to 249 characters of ``[a-zA-Z0-9._-]``, and not ``.`` or ``..``. Raises
    :class:`~kafkalog.errors.InvalidTopicError` (also a ``ValueError``) with Kafka's reason.

    >>> validate_topic_name("orders.v1")
    >>> validate_topic_name("../escaped")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    kafkalog.errors.InvalidTopicError: Topic name is invalid: '../escaped' contains one or more ...
    """
    if not isinstance(topic, str):
        raise TypeError(f"topic must be a str, got {type(topic).__name__}")
    if not topic:
        reason = "the empty string is not allowed"
    elif topic in (".", ".."):
        reason = f"'{topic}' is not allowed"
    elif len(topic) > MAX_TOPIC_NAME_LENGTH:
        reason = (f"the length of '{topic}' is longer than the max allowed length "
                  f"{MAX_TOPIC_NAME_LENGTH}")
    elif not _LEGAL_TOPIC.fullmatch(topic):
        reason = (f"'{topic}' contains one or more characters other than ASCII alphanumerics, "
                  "'.', '_' and '-'")
    else:
        return
    raise InvalidTopicError(f"Topic name is invalid: {reason}")


def partition_dir(root: PathLike, topic: str, partition: int) -> Path:
    """``<root>/<topic>-<partition>``: the one place a topic name becomes a path.

    The topic must pass :func:`validate_topic_name` and the partition be an int in
    ``0 .. 2**31 - 1``; the result is under the root with symlinks resolved (the root's own and,
    when the partition directory exists as a symlink, its target's), and must stay inside it:
    otherwise :class:`~kafkalog.errors.InvalidTopicError` names the path and nothing is
    created. Kafka's rule makes ``..``, ``/`` and absolute names impossible; the resolution
    also refuses a ``<topic>-<n>`` symlink pointing out of the root.

    >>> import tempfile
    >>> root = tempfile.mkdtemp()
    >>> partition_dir(root, "orders", 3).name
    'orders-3'
    >>> partition_dir(root, "/etc", 0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    kafkalog.errors.InvalidTopicError: Topic name is invalid: '/etc' contains one or more ...
    """
    validate_topic_name(topic)
    if isinstance(partition, bool) or not isinstance(partition, int):
        raise TypeError(f"partition must be an int, got {type(partition).__name__}")
    if not 0 <= partition <= _MAX_PARTITION:
        raise InvalidTopicError(
            f"partition of {topic!r} out of range (expected 0..{_MAX_PARTITION}, found "
            f"{partition})")
    base = Path(root).resolve()
    path = base / log_dir_name(topic, partition)
    target = path.resolve()
    if target == base or not target.is_relative_to(base):
        raise InvalidTopicError(
            f"partition directory {log_dir_name(topic, partition)} resolves to {target}, "
            f"outside the root {base} (a symlink?)", path=path)
    return path


def log_dir_name(topic: str, partition: int) -> str:
    """``<topic>-<partition>`` (``LocalLog.logDirName``); callers that make a path of it use
    :func:`partition_dir`, which validates."""
    return f"{topic}-{int(partition)}"


def _unique_id() -> str:
    return uuid.uuid4().hex  # Kafka: UUID.randomUUID().toString().replaceAll("-", "")


def _capped_dir_name(topic: str, partition: int, suffix: str, unique_id: str | None) -> str:
    # LocalLog.logDirNameWithSuffixCappedLength: the topic is truncated so the whole name
    # fits in 255 characters (file systems' limit) once the suffix is added.
    full_suffix = f"-{int(partition)}.{unique_id or _unique_id()}{suffix}"
    prefix_length = min(len(topic), _MAX_DIR_NAME_LENGTH - len(full_suffix))
    return topic[:prefix_length] + full_suffix


def log_delete_dir_name(topic: str, partition: int, unique_id: str | None = None) -> str:
    """``<topic>-<p>.<32 hex>-delete``, topic truncated to fit 255 characters."""
    return _capped_dir_name(topic, partition, DELETE_DIR_SUFFIX, unique_id)


def log_stray_dir_name(topic: str, partition: int, unique_id: str | None = None) -> str:
    """``<topic>-<p>.<32 hex>-stray``, topic truncated to fit 255 characters."""
    return _capped_dir_name(topic, partition, STRAY_DIR_SUFFIX, unique_id)


def log_future_dir_name(topic: str, partition: int, unique_id: str | None = None) -> str:
    """``<topic>-<p>.<32 hex>-future`` (not truncated, as in Kafka)."""
    return f"{log_dir_name(topic, partition)}.{unique_id or _unique_id()}{FUTURE_DIR_SUFFIX}"


def is_delete_dir(path: PathLike) -> bool:
    """True for a partition directory renamed for deletion."""
    return _DELETE_DIR_RE.fullmatch(_name(path)) is not None


def is_future_dir(path: PathLike) -> bool:
    """True for an alter-log-dirs target directory."""
    return _FUTURE_DIR_RE.fullmatch(_name(path)) is not None


def is_stray_dir(path: PathLike) -> bool:
    """True for a KRaft stray partition directory."""
    return _STRAY_DIR_RE.fullmatch(_name(path)) is not None


def parse_topic_partition_name(path: PathLike) -> tuple[str, int]:
    """(topic, partition) of a partition directory, like ``LocalLog.parseTopicPartitionName``.

    Accepts ``<topic>-<p>`` and the renamed forms ``<topic>-<p>.<id>-delete|-future|-stray``.
    The topic is everything before the *last* ``-`` (topics may contain ``-``).

    Raises
    ------
    ValueError
        When the name is not in one of those forms (Kafka throws ``KafkaException``).

    >>> parse_topic_partition_name("__consumer_offsets-6")
    ('__consumer_offsets', 6)
    >>> parse_topic_partition_name("t-0.6f1b2c3d4e5f60718293a4b5c6d7e8f9-delete")
    ('t', 0)
    """
    dir_name = _name(path)

    def bad() -> ValueError:
        return ValueError(
            f"{os.fspath(path)}: {dir_name!r} is not in the form of topic-partition or "
            "topic-partition.uniqueId-delete|-future|-stray"
        )

    if not dir_name or "-" not in dir_name:
        raise bad()
    renamed = False
    for suffix, pattern in (
        (DELETE_DIR_SUFFIX, _DELETE_DIR_RE),
        (FUTURE_DIR_SUFFIX, _FUTURE_DIR_RE),
        (STRAY_DIR_SUFFIX, _STRAY_DIR_RE),
    ):
        if dir_name.endswith(suffix):
            if pattern.fullmatch(dir_name) is None:
                raise bad()
            renamed = True
    name = dir_name[: dir_name.rfind(".")] if renamed else dir_name
    topic, _, partition_text = name.rpartition("-")
    if not topic or not partition_text:
        raise bad()
    # Integer.parseInt: optional sign, ASCII digits, 32-bit range
    if not re.fullmatch(r"[+-]?[0-9]+", partition_text):
        raise bad()
    partition = int(partition_text)
    if not -(2**31) <= partition < 2**31:
        raise bad()
    return topic, partition


# -- KRaft snapshots -------------------------------------------------------------------------------


def kraft_snapshot_file_name(offset: int, epoch: int) -> str:
    """``<20-digit offset>-<10-digit epoch>.checkpoint`` (``Snapshots.filenameFromSnapshotId``).

    >>> kraft_snapshot_file_name(1234, 5)
    '00000000000000001234-0000000005.checkpoint'
    """
    if offset < 0 or epoch < 0:
        raise ValueError(
            f"snapshot id needs non-negative offset and epoch (found {offset}, {epoch})"
        )
    return f"{int(offset):020d}-{int(epoch):010d}{CHECKPOINT_FILE_SUFFIX}"


_KRAFT_SNAPSHOT_RE = re.compile(r"([0-9]{20})-([0-9]{10})\.checkpoint")


def parse_kraft_snapshot_file_name(path: PathLike) -> tuple[int, int] | None:
    """(end offset, epoch) of a KRaft snapshot file name, or None for any other name."""
    m = _KRAFT_SNAPSHOT_RE.fullmatch(_name(path))
    if m is None:
        return None
    return int(m.group(1)), int(m.group(2))
