"""Kafka's small metadata files: text checkpoints, ``partition.metadata``, ``meta.properties``.

Text checkpoint format (spec §4.3, Kafka's ``CheckpointFile``), UTF-8, ``\\n`` line ends::

    <version>          0 for every checkpoint Kafka writes
    <entry count>
    <entry>            one per line, fields separated by one space (any whitespace on read)

Files in this format: the log-dir root's ``recovery-point-offset-checkpoint``,
``replication-offset-checkpoint``, ``log-start-offset-checkpoint`` and
``cleaner-offset-checkpoint`` (entries ``<topic> <partition> <offset>``:
:class:`OffsetCheckpointFile`) and each partition's ``leader-epoch-checkpoint`` (entries
``<epoch> <start offset>``: :class:`LeaderEpochCheckpointFile`).

Reading is as strict as Kafka's ``CheckpointReadBuffer``: an empty file, or a file with only a
version line, holds no entries; a version other than expected, a line that does not parse, or
a count different from the number of entry lines raises :class:`CorruptCheckpointError` naming
the file, the line number and its byte position. Writing is atomic: ``<file>.tmp`` is written
and fsynced, renamed over the file, and the directory is fsynced
(:func:`atomic_write`).

``partition.metadata`` is ``version: 0\\ntopic_id: <id>`` with no trailing newline, where the id
is Kafka's :class:`Uuid` string (22 characters of URL-safe base64, no padding).
``meta.properties`` is a Java properties file (``#`` comment lines, a date line, ``key=value``);
:class:`MetaProperties` reads and writes it, in the key order Java's ``Properties.store`` uses.

Example
-------
>>> import tempfile, os
>>> p = os.path.join(tempfile.mkdtemp(), "recovery-point-offset-checkpoint")
>>> OffsetCheckpointFile(p).write({("orders", 0): 42, ("orders", 1): 7})
>>> open(p).read()
'0\\n2\\norders 0 42\\norders 1 7\\n'
>>> OffsetCheckpointFile(p).read()
{('orders', 0): 42, ('orders', 1): 7}
"""

from __future__ import annotations

import base64
import json
import os
import re
import secrets
import struct
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from kafkalog.errors import CorruptCheckpointError
from kafkalog.files import (
    LEADER_EPOCH_CHECKPOINT_FILE,
    META_PROPERTIES_FILE,
    PARTITION_METADATA_FILE,
    TMP_FILE_SUFFIX,
)

__all__ = [
    "CheckpointFile",
    "EntryFormatter",
    "OffsetCheckpointFile",
    "LeaderEpochCheckpointFile",
    "EpochEntry",
    "PartitionMetadata",
    "PartitionMetadataFile",
    "MetaProperties",
    "Uuid",
    "atomic_write",
    "JsonStateFile",
    "read_properties",
    "format_properties",
    "java_properties_key_order",
    "java_date_string",
]

T = TypeVar("T")
PathLike = str | os.PathLike[str]

_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)
# java.util.regex \s (no Unicode spaces)
_JAVA_WS = re.compile(r"[ \t\n\x0b\f\r]+")
# Integer.parseInt / Long.parseLong accept an optional sign then digits, nothing else
_JAVA_INT = re.compile(r"[+-]?[0-9]+")
# BufferedReader.readLine line terminators
_LINE_END = re.compile(r"\r\n|\r|\n")


# -- atomic write ----------------------------------------------------------------------------------


def atomic_write(path: PathLike, data: bytes, *, sync: bool = True) -> None:
    """Replace ``path`` with ``data`` atomically (Kafka's write-tmp-then-rename).

    ``<path>.tmp`` is written, fsynced (when ``sync``), renamed over ``path`` with
    ``os.replace`` (atomic on POSIX), then the parent directory is fsynced so the rename itself
    survives a crash (Kafka's ``Utils.atomicMoveWithFallback(..., needFlushParentDir)``).
    """
    path = Path(path)
    tmp = path.with_name(path.name + TMP_FILE_SUFFIX)
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            if sync:
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    if sync:
        _fsync_dir(path.parent)


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # platforms where directories cannot be opened: nothing to flush
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# -- kafkalog's own JSON state files ---------------------------------------------------------------


_JSON_KINDS = {dict: "a JSON object", list: "a JSON array", int: "an integer", str: "a string"}


class JsonStateFile:
    """One of kafkalog's state files at a log-dir root: a JSON object ``{"version": N, "<body>":
    ...}`` that Kafka keeps elsewhere (its metadata log or ZooKeeper) and a log dir must keep
    itself: SCRAM credentials, ACLs, group configs, producer-id blocks, topic overrides.

    Invariant: the file is absent (nothing stored) or holds exactly one complete document, as
    :func:`atomic_write` replaces it whole. Reading is strict: a document of another version, a
    body of the wrong JSON type, or a body the store's own parser rejects raises
    :class:`CorruptCheckpointError` naming the file and what was wrong; nothing is guessed.

    >>> import tempfile, os
    >>> f = JsonStateFile(os.path.join(tempfile.mkdtemp(), "s.json"), "example state", "items")
    >>> f.load(dict) is None
    True
    >>> f.save({"a": 1})
    >>> f.load(dict)
    {'a': 1}
    """

    def __init__(self, path: PathLike, what: str, body: str, *, version: int = 1,
                 kind: type = dict, indent: int | None = 2, sort_keys: bool = False,
                 mode: int | None = None) -> None:
        self.path = Path(path)
        #: what the file holds, in error messages ("unreadable <what> (...)")
        self.what = what
        self.body = body
        self.version = version
        self.kind = kind
        self._indent = indent
        self._sort_keys = sort_keys
        self._mode = mode

    def load(self, parse: Callable[[object], T],
             errors: tuple[type[BaseException], ...] = ()) -> T | None:
        """``parse(body)``, or None when the file does not exist.

        ``parse`` validates the body: ValueError, KeyError, TypeError, AttributeError and the
        ``errors`` given become :class:`CorruptCheckpointError`.
        """
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return None
        try:
            doc = json.loads(raw)
            if not isinstance(doc, dict):
                raise ValueError("expected a JSON object")
            if doc.get("version") != self.version:
                raise ValueError(f"expected version {self.version}, found "
                                 f"{doc.get('version')!r}")
            if self.body not in doc:
                raise ValueError(f"no {self.body!r} entry")
            body = doc[self.body]
            if not isinstance(body, self.kind):
                raise ValueError(f"{self.body!r} is not "
                                 f"{_JSON_KINDS.get(self.kind, self.kind.__name__)}")
            return parse(body)
        except (ValueError, KeyError, TypeError, AttributeError, *errors) as e:
            # UnicodeDecodeError and json's JSONDecodeError are ValueErrors
            text = str(e) or type(e).__name__
            if isinstance(e, KeyError):
                text = f"missing {text}"
            raise CorruptCheckpointError(f"unreadable {self.what} ({text})",
                                         path=self.path) from None

    def save(self, body: object) -> None:
        """Replace the file with ``{"version": ..., "<body>": body}`` (atomically, fsynced)."""
        doc = {"version": self.version, self.body: body}
        atomic_write(self.path, (json.dumps(doc, indent=self._indent,
                                            sort_keys=self._sort_keys) + "\n").encode("utf-8"))
        if self._mode is not None:
            try:
                os.chmod(self.path, self._mode)
            except OSError:  # pragma: no cover - e.g. a filesystem without modes
                pass


# -- helpers ---------------------------------------------------------------------------------------


def _java_split_ws(line: str) -> list[str]:
    """``Pattern.compile("\\\\s+").split(line)``: leading empty kept, trailing empties dropped."""
    parts = _JAVA_WS.split(line)
    while parts and parts[-1] == "":
        parts.pop()
    return parts if parts else [line]


def _parse_java_int(text: str, bounds: tuple[int, int]) -> int:
    if not _JAVA_INT.fullmatch(text):
        raise ValueError(text)
    v = int(text)
    if not bounds[0] <= v <= bounds[1]:
        raise ValueError(text)
    return v


def _split_lines(text: str) -> list[tuple[int, str]]:
    """``(char position, line)`` per line, like repeated ``BufferedReader.readLine``."""
    out: list[tuple[int, str]] = []
    pos = 0
    for m in _LINE_END.finditer(text):
        out.append((pos, text[pos : m.start()]))
        pos = m.end()
    if pos < len(text):
        out.append((pos, text[pos:]))
    return out


# -- generic text checkpoint -----------------------------------------------------------------------


@dataclass(frozen=True)
class EntryFormatter(Generic[T]):
    """How one entry becomes a line and back (Kafka's ``CheckpointFile.EntryFormatter``).

    ``from_string`` returns None (or raises ValueError) for a line it cannot parse.
    """

    to_string: Callable[[T], str]
    from_string: Callable[[str], T | None]


class CheckpointFile(Generic[T]):
    """A text checkpoint: version line, count line, one entry per line.

    Parameters
    ----------
    path:
        The checkpoint file. Unlike Kafka, it is not created by the constructor; reading a
        missing file returns no entries (what Kafka reads from the empty file it creates).
    version:
        The only version accepted on read and written on write.
    formatter:
        Entry <-> line conversion.
    """

    def __init__(self, path: PathLike, version: int, formatter: EntryFormatter[T]) -> None:
        self.path = Path(path)
        self.version = int(version)
        self.formatter = formatter

    def _error(self, message: str, line_no: int | None, pos: int | None) -> CorruptCheckpointError:
        where = f"line {line_no}: " if line_no is not None else ""
        return CorruptCheckpointError(f"{where}{message}", path=self.path, position=pos)

    def read(self) -> list[T]:
        """Every entry, in file order.

        Raises
        ------
        CorruptCheckpointError
            Bad version, malformed line, count mismatch, or bytes that are not UTF-8.
        """
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return []
        return self.parse(data)

    def parse(self, data: bytes) -> list[T]:
        """Parse the bytes of a checkpoint file (see :meth:`read`)."""
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise self._error(f"not UTF-8 ({e.reason})", None, e.start) from None
        lines = _split_lines(text)
        if not lines:
            return []

        def byte_pos(char_pos: int) -> int:
            return len(text[:char_pos].encode("utf-8"))

        def to_int(i: int) -> int:
            pos, line = lines[i]
            try:
                return _parse_java_int(line, _INT32)
            except ValueError:
                raise self._error(
                    f"malformed line (expected an integer, found {line!r})", i + 1, byte_pos(pos)
                ) from None

        version = to_int(0)
        if version != self.version:
            raise self._error(
                f"unrecognised version (expected {self.version}, found {version})", 1, 0
            )
        if len(lines) < 2:
            return []
        expected = to_int(1)
        entries: list[T] = []
        for i in range(2, len(lines)):
            pos, line = lines[i]
            try:
                entry = self.formatter.from_string(line)
            except ValueError:
                entry = None
            if entry is None:
                raise self._error(f"malformed line {line!r}", i + 1, byte_pos(pos))
            entries.append(entry)
        if len(entries) != expected:
            raise self._error(
                f"entry count mismatch (expected {expected} entries, found {len(entries)})",
                2,
                byte_pos(lines[1][0]),
            )
        return entries

    def format(self, entries: Iterable[T]) -> bytes:
        """The exact bytes :meth:`write` puts in the file."""
        items = list(entries)
        out = [str(self.version), str(len(items))]
        out.extend(self.formatter.to_string(e) for e in items)
        return ("\n".join(out) + "\n").encode("utf-8")

    def write(self, entries: Iterable[T], *, sync: bool = True) -> None:
        """Atomically replace the file with ``entries`` (tmp file, fsync, rename, fsync dir)."""
        atomic_write(self.path, self.format(entries), sync=sync)


# -- offset checkpoints ----------------------------------------------------------------------------


def _offset_from_string(line: str) -> tuple[str, int, int] | None:
    parts = _java_split_ws(line)
    if len(parts) != 3:
        return None
    return parts[0], _parse_java_int(parts[1], _INT32), _parse_java_int(parts[2], _INT64)


def _offset_to_string(entry: tuple[str, int, int]) -> str:
    topic, partition, offset = entry
    return f"{topic} {int(partition)} {int(offset)}"


class OffsetCheckpointFile:
    """``<topic> <partition> <offset>`` checkpoints of a log dir (Kafka's ``OffsetCheckpointFile``).

    Used for ``recovery-point-offset-checkpoint``, ``replication-offset-checkpoint``,
    ``log-start-offset-checkpoint`` and ``cleaner-offset-checkpoint`` (all version 0).

    >>> # OffsetCheckpointFile(dir / "replication-offset-checkpoint").read()
    >>> # -> {("__consumer_offsets", 6): 13, ...}
    """

    CURRENT_VERSION = 0

    def __init__(self, path: PathLike) -> None:
        self._file: CheckpointFile[tuple[str, int, int]] = CheckpointFile(
            path, self.CURRENT_VERSION, EntryFormatter(_offset_to_string, _offset_from_string)
        )

    @property
    def path(self) -> Path:
        """The checkpoint file."""
        return self._file.path

    def read_entries(self) -> list[tuple[str, int, int]]:
        """``(topic, partition, offset)`` per line, in file order (duplicates kept)."""
        return self._file.read()

    def read(self) -> dict[tuple[str, int], int]:
        """``{(topic, partition): offset}`` in file order (a repeated partition: last wins)."""
        return {(t, p): o for t, p, o in self._file.read()}

    def format(self, offsets: Mapping[tuple[str, int], int]) -> bytes:
        """The bytes :meth:`write` would write."""
        return self._file.format(
            (t, p, o) for (t, p), o in offsets.items()
        )

    def write(self, offsets: Mapping[tuple[str, int], int], *, sync: bool = True) -> None:
        """Atomically write ``offsets`` in mapping order."""
        for (topic, _p), _o in offsets.items():
            if not topic or _JAVA_WS.search(topic):
                raise ValueError(f"{self.path}: topic {topic!r} cannot be written to a checkpoint")
        atomic_write(self.path, self.format(offsets), sync=sync)


# -- leader epochs ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class EpochEntry:
    """A leader epoch and the first offset written in it (Kafka's ``EpochEntry``)."""

    epoch: int
    start_offset: int


def _epoch_from_string(line: str) -> EpochEntry | None:
    parts = _java_split_ws(line)
    if len(parts) != 2:
        return None
    return EpochEntry(_parse_java_int(parts[0], _INT32), _parse_java_int(parts[1], _INT64))


class LeaderEpochCheckpointFile:
    """A partition's ``leader-epoch-checkpoint``: ``<epoch> <start offset>`` lines, version 0.

    >>> # LeaderEpochCheckpointFile(partition_dir / "leader-epoch-checkpoint").read()
    >>> # -> [EpochEntry(epoch=0, start_offset=0)]
    """

    CURRENT_VERSION = 0
    FILE_NAME = LEADER_EPOCH_CHECKPOINT_FILE

    def __init__(self, path: PathLike) -> None:
        self._file: CheckpointFile[EpochEntry] = CheckpointFile(
            path,
            self.CURRENT_VERSION,
            EntryFormatter(lambda e: f"{int(e.epoch)} {int(e.start_offset)}", _epoch_from_string),
        )

    @classmethod
    def new_file(cls, partition_dir: PathLike) -> Path:
        """``<partition dir>/leader-epoch-checkpoint``."""
        return Path(partition_dir) / cls.FILE_NAME

    @property
    def path(self) -> Path:
        """The checkpoint file."""
        return self._file.path

    def read(self) -> list[EpochEntry]:
        """Entries in file order."""
        return self._file.read()

    @classmethod
    def parse_bytes(cls, data: bytes, *, path: PathLike = "leader-epoch-checkpoint"
                    ) -> list[EpochEntry]:
        """The entries of a checkpoint's bytes held elsewhere (a remote segment's uploaded
        leader-epoch index); ``path`` names them in errors.

        >>> LeaderEpochCheckpointFile.parse_bytes(b"0\\n2\\n0 0\\n3 120\\n")
        [EpochEntry(epoch=0, start_offset=0), EpochEntry(epoch=3, start_offset=120)]

        Raises
        ------
        CorruptCheckpointError
            Not a version-0 leader-epoch checkpoint.
        """
        return cls(path)._file.parse(data)

    def format(self, entries: Iterable[EpochEntry]) -> bytes:
        """The bytes :meth:`write` would write."""
        return self._file.format(entries)

    def write(self, entries: Iterable[EpochEntry], *, sync: bool = True) -> None:
        """Atomically write ``entries`` (expected in increasing epoch and offset order)."""
        self._file.write(entries, sync=sync)


# -- Kafka Uuid ------------------------------------------------------------------------------------

_UUID_CHARS = re.compile(r"[A-Za-z0-9_-]*={0,2}")


#: namespace of :meth:`Uuid.derived` ("kafkalog-topic-i" in hex)
_DERIVED_TOPIC_ID_NAMESPACE = uuid.UUID("6b61666b-616c-6f67-2d74-6f7069632d69")


@dataclass(frozen=True, order=True)
class Uuid:
    """Kafka's 128-bit ``Uuid``, printed as 22 characters of URL-safe base64 without padding.

    >>> Uuid.from_string("XHhkr4tkSsD900pOQ8pPfg")
    Uuid('XHhkr4tkSsD900pOQ8pPfg')
    >>> str(Uuid(0, 1))
    'AAAAAAAAAAAAAAAAAAAAAQ'
    """

    most_significant_bits: int
    least_significant_bits: int

    def to_bytes(self) -> bytes:
        """The 16 big-endian bytes."""
        return struct.pack(">qq", self.most_significant_bits, self.least_significant_bits)

    def __str__(self) -> str:
        return base64.urlsafe_b64encode(self.to_bytes()).rstrip(b"=").decode("ascii")

    def __repr__(self) -> str:
        return f"Uuid({str(self)!r})"

    @classmethod
    def derived(cls, name: str) -> Uuid:
        """A stable id for a topic that has none (a log dir written without
        ``partition.metadata``): the same name always gives the same id, across restarts and
        between the server and the group coordinator.

        >>> Uuid.derived("orders") == Uuid.derived("orders") != Uuid.derived("payments")
        True
        """
        return cls.from_bytes(uuid.uuid5(_DERIVED_TOPIC_ID_NAMESPACE, name).bytes)

    @classmethod
    def from_bytes(cls, data: bytes) -> Uuid:
        """From 16 big-endian bytes."""
        if len(data) != 16:
            raise ValueError(f"a Uuid is 16 bytes (found {len(data)})")
        hi, lo = struct.unpack(">qq", data)
        return cls(hi, lo)

    @classmethod
    def from_string(cls, text: str) -> Uuid:
        """Parse Kafka's string form (``Uuid.fromString``); raises ValueError when invalid."""
        if len(text) > 24:
            raise ValueError(f"input string with prefix {text[:24]!r} is too long for a Uuid")
        if not _UUID_CHARS.fullmatch(text) or len(text.rstrip("=")) % 4 == 1:
            raise ValueError(f"input string {text!r} is not URL-safe base64")
        stripped = text.rstrip("=")
        try:
            raw = base64.b64decode(
                stripped + "=" * (-len(stripped) % 4), altchars=b"-_", validate=True
            )
        except ValueError as e:
            raise ValueError(f"input string {text!r} is not URL-safe base64 ({e})") from None
        if len(raw) != 16:
            raise ValueError(
                f"input string {text!r} decoded as {len(raw)} bytes, which is not equal to "
                "the expected 16 bytes of a base64-encoded UUID"
            )
        return cls.from_bytes(raw)

    @classmethod
    def random(cls) -> Uuid:
        """A random version-4 Uuid that is not reserved and does not print with a leading '-'."""
        while True:
            b = bytearray(secrets.token_bytes(16))
            b[6] = (b[6] & 0x0F) | 0x40  # version 4
            b[8] = (b[8] & 0x3F) | 0x80  # IETF variant
            u = cls.from_bytes(bytes(b))
            if u not in (ZERO_UUID, ONE_UUID) and not str(u).startswith("-"):
                return u


ZERO_UUID = Uuid(0, 0)
ONE_UUID = Uuid(0, 1)
#: the topic id of ``__cluster_metadata`` (KRaft)
METADATA_TOPIC_ID = ONE_UUID


# -- partition.metadata ----------------------------------------------------------------------------


@dataclass(frozen=True)
class PartitionMetadata:
    """Content of ``partition.metadata`` (Kafka's ``PartitionMetadata``)."""

    version: int
    topic_id: Uuid

    def encode(self) -> str:
        """``version: <v>\\ntopic_id: <id>`` (no trailing newline, as Kafka writes it)."""
        return f"version: {self.version}\ntopic_id: {self.topic_id}"


class PartitionMetadataFile:
    """A partition's ``partition.metadata`` (KIP-516 topic id), Kafka's ``PartitionMetadataFile``.

    >>> # PartitionMetadataFile(partition_dir / "partition.metadata").read().topic_id
    """

    CURRENT_VERSION = 0
    FILE_NAME = PARTITION_METADATA_FILE
    _SEP = re.compile(r":[ \t\n\x0b\f\r]+")

    def __init__(self, path: PathLike) -> None:
        self.path = Path(path)

    def exists(self) -> bool:
        """True when the file exists."""
        return self.path.exists()

    def write(self, topic_id: Uuid, *, sync: bool = True) -> None:
        """Atomically write ``topic_id`` (the zero Uuid is refused)."""
        if topic_id == ZERO_UUID:
            raise ValueError(f"{self.path}: the zero Uuid is not a topic id")
        data = PartitionMetadata(self.CURRENT_VERSION, topic_id).encode().encode("utf-8")
        atomic_write(self.path, data, sync=sync)

    def read(self) -> PartitionMetadata:
        """Parse the file like Kafka's ``PartitionMetadataReadBuffer``.

        Raises
        ------
        CorruptCheckpointError
            Missing/malformed lines, a negative version, an invalid or zero topic id.
        FileNotFoundError
            The file does not exist.
        """
        return self.parse(self.path.read_bytes())

    def parse(self, data: bytes) -> PartitionMetadata:
        """Parse the file's bytes (see :meth:`read`)."""
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise CorruptCheckpointError(
                f"not UTF-8 ({e.reason})", path=self.path, position=e.start
            ) from None
        lines = _split_lines(text)

        def field(i: int, key: str) -> str:
            if i >= len(lines):
                raise CorruptCheckpointError(
                    f"line {i + 1}: malformed line (expected '{key}: <value>', found end of file)",
                    path=self.path,
                    position=len(data),
                )
            pos, line = lines[i]
            parts = self._SEP.split(line, maxsplit=1)
            if len(parts) != 2 or parts[0] != key:
                raise CorruptCheckpointError(
                    f"line {i + 1}: malformed line (expected '{key}: <value>', found {line!r})",
                    path=self.path,
                    position=len(text[:pos].encode("utf-8")),
                )
            return parts[1]

        raw_version = field(0, "version")
        try:
            version = _parse_java_int(raw_version, _INT32)
        except ValueError:
            raise CorruptCheckpointError(
                f"line 1: malformed version (expected an integer, found {raw_version!r})",
                path=self.path,
                position=0,
            ) from None
        # versions above ours are accepted (downgrade compatibility), below are not
        if version < self.CURRENT_VERSION:
            raise CorruptCheckpointError(
                f"unrecognized version of partition metadata file (expected >= "
                f"{self.CURRENT_VERSION}, found {version})",
                path=self.path,
                position=0,
            )
        raw_id = field(1, "topic_id")
        line2_pos = len(text[: lines[1][0]].encode("utf-8"))
        try:
            topic_id = Uuid.from_string(raw_id)
        except ValueError as e:
            raise CorruptCheckpointError(
                f"line 2: malformed topic id ({e})", path=self.path, position=line2_pos
            ) from None
        if topic_id == ZERO_UUID:
            raise CorruptCheckpointError(
                f"line 2: invalid topic id (expected a non-zero Uuid, found {raw_id!r})",
                path=self.path,
                position=line2_pos,
            )
        return PartitionMetadata(version, topic_id)


# -- Java properties / meta.properties -------------------------------------------------------------


def _java_string_hash(s: str) -> int:
    """``String.hashCode`` (over UTF-16 code units, 32-bit wrap-around), as unsigned."""
    data = s.encode("utf-16-be")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h


def java_properties_key_order(keys: Iterable[str], jdk: str = "jdk9") -> list[str]:
    """The order ``java.util.Properties.store`` writes ``keys`` inserted in the given order.

    ``store`` iterates the properties' hash table, so the file order depends on the JDK:

    * ``"jdk9"`` (Java 9+; every current Kafka): a ``ConcurrentHashMap`` of 16 bins, iterated
      from bin 0 up; bin = spread(String.hashCode) & 15, colliding keys in insertion order.
    * ``"jdk8"``: a ``Hashtable`` of 11 buckets iterated from the last bucket down; bucket =
      (hashCode & 0x7fffffff) % 11, colliding keys newest first.

    Exact while no table resize happens (up to 11 keys for jdk9, 8 for jdk8: meta.properties
    has at most 4); beyond that the order is only approximately Java's.
    """
    ordered = list(dict.fromkeys(keys))
    if jdk == "jdk9":

        def bin_of(k: str) -> int:
            h = _java_string_hash(k)
            return ((h ^ (h >> 16)) & 0x7FFFFFFF) & 15

        return sorted(ordered, key=lambda k: (bin_of(k), ordered.index(k)))
    if jdk == "jdk8":

        def bucket_of(k: str) -> int:
            return (_java_string_hash(k) & 0x7FFFFFFF) % 11

        return sorted(ordered, key=lambda k: (-bucket_of(k), -ordered.index(k)))
    raise ValueError(f"unknown JDK key order {jdk!r} (expected 'jdk9' or 'jdk8')")


def java_date_string(epoch_seconds: float | None = None) -> str:
    """``java.util.Date.toString()`` of a time (local zone): ``Fri Jan 30 16:43:51 UTC 2026``."""
    t = time.localtime(epoch_seconds)
    days = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
    months = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
    zone = t.tm_zone or "GMT"
    return (
        f"{days[t.tm_wday]} {months[t.tm_mon - 1]} {t.tm_mday:02d} "
        f"{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d} {zone} {t.tm_year}"
    )


def _escape(s: str, is_key: bool) -> str:
    """``Properties.saveConvert`` with ``escUnicode=false`` (Kafka stores through a Writer)."""
    out = []
    for i, c in enumerate(s):
        if c == " ":
            out.append("\\ " if (i == 0 or is_key) else " ")
        elif c == "\t":
            out.append("\\t")
        elif c == "\n":
            out.append("\\n")
        elif c == "\r":
            out.append("\\r")
        elif c == "\f":
            out.append("\\f")
        elif c in "=:#!\\":
            out.append("\\" + c)
        else:
            out.append(c)
    return "".join(out)


def format_properties(
    props: Mapping[str, str], *, comments: str | None = "", date: str | None = None
) -> str:
    """Text of ``Properties.store(writer, comments)`` with keys in ``props`` order.

    ``comments=""`` (Kafka's choice) gives a lone ``#`` line; ``date`` defaults to now.
    """
    lines = []
    if comments is not None:
        lines.extend("#" + c for c in comments.split("\n"))
    lines.append("#" + (date if date is not None else java_date_string()))
    lines.extend(f"{_escape(k, True)}={_escape(v, False)}" for k, v in props.items())
    return "\n".join(lines) + "\n"


_PROP_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _unescape(s: str) -> str:
    out = []
    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            n = s[i + 1]
            if n == "u":
                hexpart = s[i + 2 : i + 6]
                if len(hexpart) != 4 or not re.fullmatch(r"[0-9a-fA-F]{4}", hexpart):
                    raise ValueError(f"malformed \\uxxxx encoding in {s!r}")
                out.append(chr(int(hexpart, 16)))
                i += 6
                continue
            out.append(_PROP_ESCAPES.get(n, n))
            i += 2
            continue
        if c == "\\":  # trailing lone backslash is dropped by Java
            i += 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


def read_properties(data: bytes) -> tuple[dict[str, str], list[str]]:
    """Parse Java properties bytes (``Properties.load(InputStream)``: ISO-8859-1 + escapes).

    Returns ``(properties in file order, comment lines without their '#'/'!')``.
    Supports comments, ``=``/``:``/whitespace separators, escapes and line continuations.
    Raises ValueError on a malformed ``\\uxxxx`` escape.
    """
    text = data.decode("latin-1")
    props: dict[str, str] = {}
    comments: list[str] = []
    logical: list[str] = []
    buf = ""
    for _, raw in _split_lines(text):
        line = raw.lstrip(" \t\f")  # leading whitespace goes, on continuation lines too
        if not buf and (not line or line[0] in "#!"):
            if line:
                comments.append(line[1:])
            continue
        # an odd number of trailing backslashes continues the line
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:
            buf += line[:-1]
            continue
        logical.append(buf + line)
        buf = ""
    if buf:
        logical.append(buf)
    for line in logical:
        # Properties.load0: the key ends at the first unescaped '=', ':' or whitespace; then
        # whitespace and at most one '=' or ':' separate it from the value
        limit = len(line)
        key_len, value_start, has_sep, backslash = 0, limit, False, False
        while key_len < limit:
            c = line[key_len]
            if c in "=:" and not backslash:
                value_start, has_sep = key_len + 1, True
                break
            if c in " \t\f" and not backslash:
                value_start = key_len + 1
                break
            backslash = (not backslash) if c == "\\" else False
            key_len += 1
        while value_start < limit:
            c = line[value_start]
            if c not in " \t\f":
                if not has_sep and c in "=:":
                    has_sep = True
                else:
                    break
            value_start += 1
        props[_unescape(line[:key_len])] = _unescape(line[value_start:])
    return props, comments


@dataclass(frozen=True)
class MetaProperties:
    """A log dir's ``meta.properties`` (Kafka's ``MetaProperties``).

    Version 0 (ZooKeeper era) carries ``broker.id``; version 1 (KRaft) carries ``node.id`` and
    requires ``cluster.id``. ``directory.id`` (KIP-858) is a Kafka Uuid.

    >>> m = MetaProperties(version=1, cluster_id="q1w2e3r4t5y6u7i8o9p0", node_id=1)
    >>> list(m.to_properties())
    ['version', 'cluster.id', 'node.id']
    """

    version: int
    cluster_id: str | None = None
    node_id: int | None = None
    directory_id: Uuid | None = None

    FILE_NAME = META_PROPERTIES_FILE

    def to_properties(self) -> dict[str, str]:
        """Keys in Kafka's insertion order (``MetaProperties.toProperties``)."""
        props = {"version": str(self.version)}
        if self.cluster_id is not None:
            props["cluster.id"] = self.cluster_id
        if self.node_id is not None:
            props["broker.id" if self.version == 0 else "node.id"] = str(self.node_id)
        if self.directory_id is not None:
            props["directory.id"] = str(self.directory_id)
        return props

    @classmethod
    def from_properties(
        cls, props: Mapping[str, str], path: PathLike | None = None
    ) -> MetaProperties:
        """Validate like Kafka's ``MetaProperties.Builder(Properties)`` + ``build()``, with
        its texts (``kafka-storage.sh info`` prints them): a version that is not a number or
        not 0/1, a missing or non-numeric ``node.id`` (``broker.id`` for version 0, where it
        is optional), a ``directory.id`` that is not a Uuid, no ``cluster.id`` in version 1.

        Raises CorruptCheckpointError naming the file.
        """

        def bad(msg: str) -> CorruptCheckpointError:
            return CorruptCheckpointError(msg, path=path)

        raw_version = props.get("version", "0")
        try:
            version = _parse_java_int(raw_version.strip(), _INT32)
        except ValueError:
            raise bad(f"Invalid meta.properties version string '{raw_version}'") from None
        if version not in (0, 1):
            raise bad(f"Unknown meta.properties version number {version}")
        id_key = "broker.id" if version == 0 else "node.id"
        node_id: int | None = None
        if id_key in props or version == 1:
            if id_key not in props:
                raise bad(f"Failed to find {id_key}")
            try:
                node_id = _parse_java_int(props[id_key], _INT32)
            except ValueError:
                raise bad(f"Unable to read {id_key} as a base-10 number.") from None
        directory_id = None
        if "directory.id" in props:
            try:
                directory_id = Uuid.from_string(props["directory.id"])
            except ValueError as e:
                raise bad(f"Unable to read directory.id as a Uuid: {e}") from None
        cluster_id = props.get("cluster.id")
        if version == 1 and cluster_id is None:
            raise bad("cluster.id was not found.")
        return cls(version, cluster_id, node_id, directory_id)

    @classmethod
    def read(cls, path: PathLike) -> MetaProperties:
        """Read and validate a ``meta.properties`` file."""
        props, _ = cls.read_raw(path)
        return cls.from_properties(props, path)

    @staticmethod
    def read_raw(path: PathLike) -> tuple[dict[str, str], list[str]]:
        """``(properties in file order, comment lines)``; the last comment is the date."""
        try:
            return read_properties(Path(path).read_bytes())
        except ValueError as e:
            raise CorruptCheckpointError(str(e), path=path) from None

    def format(self, *, date: str | None = None, jdk: str = "jdk9") -> bytes:
        """The bytes Kafka writes: ``#``, ``#<date>``, then keys in the JDK's hash order."""
        props = self.to_properties()
        order = java_properties_key_order(props, jdk)
        text = format_properties({k: props[k] for k in order}, comments="", date=date)
        return text.encode("utf-8")

    def write(
        self, path: PathLike, *, date: str | None = None, jdk: str = "jdk9", sync: bool = True
    ) -> None:
        """Atomically write the file (Kafka's ``PropertiesUtils.writePropertiesFile``)."""
        atomic_write(path, self.format(date=date, jdk=jdk), sync=sync)
