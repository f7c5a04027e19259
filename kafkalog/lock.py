"""An advisory directory lock: one writer per partition directory.

Kafka locks each log dir with ``.lock`` (``FileLock``: ``FileChannel.tryLock``); an embedded
engine opens single partition directories, so ``Log`` locks the partition directory itself with
``.kafkalog.lock`` (a name Kafka's loader ignores: it only acts on segment, index, snapshot and
checkpoint names). ``fcntl.flock`` locks belong to the open file description, so a second
``Log.open`` in the same process is refused just like one in another process, and the lock dies
with the process (no stale lock after a crash). The file is left in place on release: removing
it would race with a process that has just opened it.

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
from pathlib import Path

from .errors import LogLockedError

__all__ = ["DirectoryLock", "LOCK_FILE_NAME"]

LOCK_FILE_NAME = ".kafkalog.lock"


class DirectoryLock:
    """An exclusive ``flock`` on ``<dir>/.kafkalog.lock`` held until :meth:`release`."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    @classmethod
    def acquire(
        cls, directory: str | os.PathLike[str], name: str = LOCK_FILE_NAME
    ) -> DirectoryLock:
        """Take the lock without waiting; raise :class:`LogLockedError` when it is held."""
        path = Path(directory) / name
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            holder = _read_holder(fd)
            os.close(fd)
            if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise LogLockedError(
                    f"locked by another writer (pid {holder or 'unknown'})", path=path
                ) from None
            raise
        # Record the holder for the error message above (informative only).
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        return cls(path, fd)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Release the lock (idempotent)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)

    def __repr__(self) -> str:
        return f"DirectoryLock({str(self.path)!r}, held={self.held})"


def _read_holder(fd: int) -> str:
    try:
        return os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return ""
