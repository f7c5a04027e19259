"""Advisory directory locks: one writer (or modifier) per partition directory and per log dir.

Kafka locks each log dir with ``.lock`` (``LogManager.lockLogDirs``: ``FileLock.tryLock``, i.e.
``FileChannel.tryLock``, a POSIX ``fcntl`` record lock on Linux; server-common
``org/apache/kafka/server/util/FileLock.java``, 3.9). An embedded engine also opens single
partition directories, so ``Log`` locks the partition directory itself with ``.kafkalog.lock``
(a name Kafka's loader ignores: it only acts on segment, index, snapshot and checkpoint names).

Every process that changes a partition directory takes its lock first, or is refused with
:class:`~kafkalog.errors.LogLockedError`: ``Log.open`` (appends, rolls, retention, truncation,
recovery, compaction all run inside an open ``Log``), ``LogDir`` (its root ``.lock`` plus each
partition through ``Log``), ``kafkalog repair --in-place`` (every lock it needs, all or none,
held for the whole repair), and the Spark writer (publishing into an existing directory goes
through ``Log``; ``mode("overwrite")`` takes a directory's lock before moving it aside). Readers
take no lock (see :mod:`kafkalog.file_copy`).

``fcntl.flock`` locks belong to the open file description, so a second ``Log.open`` in the same
process is refused just like one in another process, and the lock dies with the process (no
stale lock after a crash). A log dir's ``.lock`` additionally takes the ``fcntl`` record lock
Kafka's ``FileLock`` takes, so a running broker and kafkalog exclude each other; record locks
belong to the process (a second one in the same process is not refused, which ``flock`` covers)
and any ``close`` of that file in the process drops them, so nothing else here opens ``.lock``.
The file is left in place on release: removing it would race with a process that has just
opened it.

>>> import tempfile
>>> d = tempfile.mkdtemp()
>>> lock = DirectoryLock.acquire(d)
>>> DirectoryLock.acquire(d)
Traceback (most recent call last):
...
kafkalog.errors.LogLockedError: ...kafkalog.lock: locked by another writer (pid ...)
>>> lock.release()
"""

from __future__ import annotations

import errno
import fcntl
import os
from collections.abc import Sequence
from pathlib import Path

from .errors import LogLockedError

__all__ = ["DirectoryLock", "LOCK_FILE_NAME", "KAFKA_LOCK_FILE_NAME", "acquire_all",
           "lock_holder"]

LOCK_FILE_NAME = ".kafkalog.lock"
#: LogManager.LockFileName: a log dir root's lock (also kafkalog.files.LOCK_FILE)
KAFKA_LOCK_FILE_NAME = ".lock"
_HELD = (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES)


class DirectoryLock:
    """An exclusive ``flock`` on ``<dir>/<name>`` held until :meth:`release` (plus Kafka's
    ``fcntl`` record lock for a log dir's ``.lock``)."""

    def __init__(self, path: Path, fd: int, record_lock: bool = False) -> None:
        self.path = path
        self._fd: int | None = fd
        self._record_lock = record_lock
        self._key: tuple[int, int] | None = None

    @classmethod
    def acquire(
        cls, directory: str | os.PathLike[str], name: str = LOCK_FILE_NAME, *,
        create: bool = True, record_holder: bool = True,
    ) -> DirectoryLock:
        """Take the lock without waiting; raise :class:`LogLockedError` when it is held.

        ``create=False`` only locks a lock file that exists (FileNotFoundError otherwise: a
        directory whose lock file is missing has no holder). ``record_holder=False`` leaves
        the file's content (the holder's pid) as it is.
        """
        path = Path(directory) / name
        record_lock = name == KAFKA_LOCK_FILE_NAME
        if record_lock:
            # this process's record lock would be dropped by the close() of a refused second
            # attempt (POSIX semantics): refuse it before opening the file
            key = _file_key(path)
            if key is not None and key in _RECORD_LOCKED:
                raise LogLockedError(f"locked by this process (pid {os.getpid()})", path=path)
        flags = os.O_RDWR | (os.O_CREAT if create else 0)
        fd = os.open(path, flags, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            holder = _read_holder(fd)
            os.close(fd)
            if e.errno in _HELD:
                raise LogLockedError(
                    f"locked by another writer (pid {holder or 'unknown'})", path=path
                ) from None
            raise
        if record_lock:
            try:
                fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as e:
                fcntl.flock(fd, fcntl.LOCK_UN)
                os.close(fd)
                if e.errno in _HELD:
                    raise LogLockedError(
                        "locked by a Kafka broker or another process (fcntl lock, Kafka's "
                        "FileLock)", path=path) from None
                raise
        lock = cls(path, fd, record_lock)
        if record_lock:
            st = os.fstat(fd)
            lock._key = (st.st_dev, st.st_ino)
            _RECORD_LOCKED.add(lock._key)
        if record_holder:
            lock.record_holder()
        return lock

    def record_holder(self) -> None:
        """Write this process's pid into the lock file (informative: the error message of a
        refused writer names it)."""
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            os.pwrite(self._fd, f"{os.getpid()}\n".encode(), 0)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Release the lock (idempotent)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                if self._record_lock:
                    fcntl.lockf(fd, fcntl.LOCK_UN)
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)
                _RECORD_LOCKED.discard(self._key)

    def __enter__(self) -> DirectoryLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"DirectoryLock({str(self.path)!r}, held={self.held})"


def acquire_all(targets: Sequence[tuple[str | os.PathLike[str], str]]) -> list[DirectoryLock]:
    """Take every ``(directory, lock file name)`` lock, or none: :class:`LogLockedError` names
    the first one held, and every lock taken so far is released. Returns the locks in the
    order of ``targets``.

    The existing lock files are tried first, without creating or writing anything, so that a
    refusal leaves the directories byte for byte as they were (a directory that has no lock
    file has no holder); the missing ones are created after that, then the holder's pid is
    written into all of them.
    """
    held: dict[int, DirectoryLock] = {}
    try:
        order = sorted(range(len(targets)),
                       key=lambda i: not (Path(targets[i][0]) / targets[i][1]).exists())
        for i in order:
            directory, name = targets[i]
            try:
                held[i] = DirectoryLock.acquire(directory, name, create=False,
                                                record_holder=False)
            except FileNotFoundError:
                held[i] = DirectoryLock.acquire(directory, name, record_holder=False)
        locks = [held[i] for i in range(len(targets))]  # in the order of ``targets``
        for lock in locks:
            lock.record_holder()
        return locks
    except BaseException:
        for lock in held.values():
            lock.release()
        raise


def lock_holder(directory: str | os.PathLike[str], name: str = LOCK_FILE_NAME) -> int | None:
    """The pid holding ``<directory>/<name>`` (our ``flock`` or Kafka's ``fcntl`` lock), or None
    when nobody does or it cannot be told (no ``/proc/locks``: not Linux).

    Looks the lock file's inode up in ``/proc/locks`` without touching the lock itself, so a
    reader asking never delays or refuses a writer (readers take no lock). Informative only:
    the answer may be stale by the time it is used.
    """
    try:
        st = os.stat(Path(directory) / name)
        with open("/proc/locks") as f:
            table = f.read()
    except OSError:
        return None
    key = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    for line in table.splitlines():
        parts = line.split()
        # "1: FLOCK  ADVISORY  WRITE 27162 fe:00:2176579 0 EOF" ("->" marks a waiter)
        if len(parts) >= 6 and parts[1] != "->" and parts[5] == key and parts[3] == "WRITE":
            try:
                return int(parts[4])
            except ValueError:
                return None
    return None


#: (device, inode) of the log dir ``.lock`` files whose record lock this process holds
_RECORD_LOCKED: set[tuple[int, int] | None] = set()


def _file_key(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _read_holder(fd: int) -> str:
    try:
        return os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return ""
