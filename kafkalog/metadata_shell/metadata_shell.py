"""``kafkalog metadata-shell``: Kafka's ``kafka-metadata-shell.sh`` (``MetadataShell``).

``--snapshot FILE`` (``-s``) names a KRaft metadata snapshot (a ``*.checkpoint`` file) or a
``__cluster_metadata-0`` log segment; the image read from it is browsed as a file tree
(``/image``, plus ``/local`` for the shell itself). Without command words the shell is
interactive (``Loading...``, ``Starting...``, then :class:`.InteractiveShell`); with words,
that one command runs and the tool exits (only ``cat``, ``find``, ``ls`` and ``tree`` exist
there).

Before reading, the log dir holding the metadata partition directory (the snapshot's
grandparent) is locked if it has a ``.lock`` file, so the shell never reads a directory a
broker or controller is writing: a held lock fails with Kafka's ``Unable to lock <dir>. Please
ensure that no broker or controller process is using this directory before proceeding.``.

Exit status: 0; 1 with ``Error: <message>`` on stderr when the snapshot cannot be read or the
directory is locked, with ``Unexpected error: <message>`` and a traceback for anything else,
and with argparse4j's usage and error for bad arguments (and, as argparse4j 0.7.0's
``parseArgsOrFail`` does, after printing ``--help``); 130 when Ctrl-C stops a running command.
A command's own complaint (``ls: x: no such file or directory.``) is output, status 0.

>>> main(["--snapshot", "/no/such/00000000000000000000-0000000000.checkpoint", "ls"])
... # doctest: +SKIP
Error: /no/such/00000000000000000000-0000000000.checkpoint: No such file or directory
1
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import IO

from kafkalog.cluster.image import MetadataNode
from kafkalog.errors import KafkaLogError, LogLockedError
from kafkalog.lock import KAFKA_LOCK_FILE_NAME, DirectoryLock
from kafkalog.usage import replace_unencodable

from .command_parser import ArgumentParser, ArgumentParserError, HelpScreenError, LongType
from .commands import Commands
from .interactive_shell import InteractiveShell
from .session_commands import ExitShell
from .shell_state import MetadataShellState, RootShellNode

__all__ = [
    "MetadataShell",
    "build_parser",
    "main",
    "parent",
    "parent_parent",
    "take_directory_lock_if_exists",
    "take_directory_lock",
]

#: reads the image at a snapshot path and returns its ``image`` directory node
ImageLoader = Callable[[str], MetadataNode]

METADATA_PARTITION = "__cluster_metadata-0"


def _normalize(path: str) -> str:
    # java.io.File's UnixFileSystem.normalize: no repeated and no trailing '/' (but "/")
    while "//" in path:
        path = path.replace("//", "/")
    if len(path) > 1 and path.endswith("/"):
        path = path[:-1]
    return path


def parent(path: str) -> str:
    """The parent directory of ``path`` as ``java.io.File.getParentFile`` sees it, or ``path``
    itself when it has none (the root, or a relative name without ``/``), as Kafka's
    ``MetadataShell.parent`` does.

    >>> parent("/a/b"), parent("/a"), parent("/"), parent("x.checkpoint"), parent("d/x")
    ('/a', '/', '/', 'x.checkpoint', 'd')
    """
    path = _normalize(path)
    prefix_length = 1 if path.startswith("/") else 0
    index = path.rfind("/")
    if index < prefix_length:
        if prefix_length > 0 and len(path) > prefix_length:
            return path[:prefix_length]
        return path
    return path[:index]


def parent_parent(path: str) -> str:
    """``parent(parent(path))``: the log dir of ``<logdir>/__cluster_metadata-0/<file>``."""
    return parent(parent(path))


def _absolute(path: str) -> str:
    # File.getAbsolutePath: resolved against the working directory, not normalized further
    return path if path.startswith("/") else os.path.join(os.getcwd(), path)


def take_directory_lock(directory: str) -> DirectoryLock:
    """Lock ``<directory>/.lock`` as Kafka's ``FileLock.tryLock`` (plus kafkalog's own
    ``flock``); :class:`~kafkalog.errors.LogLockedError` with Kafka's message (it names the
    directory) when another process holds it."""
    try:
        # record_holder=False: a reader leaves the broker's lock file as it is
        return DirectoryLock.acquire(directory, KAFKA_LOCK_FILE_NAME, record_holder=False)
    except LogLockedError:
        raise LogLockedError(
            f"Unable to lock {_absolute(directory)}. Please ensure that no broker or "
            "controller process is using this directory before proceeding.") from None


def take_directory_lock_if_exists(directory: str) -> DirectoryLock | None:
    """Lock ``directory`` if it has a ``.lock`` file (a log dir a broker or controller has
    used), else None. As in Kafka, a lock file created between the check and the use is a
    race accepted to keep a read-only directory usable."""
    if os.path.exists(os.path.join(directory, KAFKA_LOCK_FILE_NAME)):
        return take_directory_lock(directory)
    return None


def lock_directory_of(snapshot_path: str) -> str:
    """The log dir a broker locks for ``snapshot_path``: Kafka's ``parentParent`` of a file;
    for a directory (kafkalog reads a whole metadata partition), the directory itself when it
    holds ``__cluster_metadata-0``, else its parent (the partition dir's log dir)."""
    if os.path.isdir(snapshot_path):
        if os.path.isdir(os.path.join(snapshot_path, METADATA_PARTITION)):
            return _normalize(snapshot_path)
        return parent(os.path.abspath(snapshot_path))
    return parent_parent(snapshot_path)


def default_image_loader(end_offset: int | None = None,
                         faults: IO[str] | None = None) -> ImageLoader:
    """The default loader: kafkalog's metadata image of the file or directory (up to
    ``end_offset``), its faults written to ``faults`` as Kafka's fault handler logs them."""

    def load(snapshot_path: str) -> MetadataNode:
        # imported here: the image package is not needed to parse arguments or to lock
        from kafkalog.cluster.image import MetadataImageNode, load_metadata

        loaded = load_metadata(snapshot_path, end_offset=end_offset)
        if faults is not None:
            for fault in loaded.faults:
                faults.write(f"Encountered metadata loading fault: {fault}\n")
            faults.flush()
        return MetadataImageNode(loaded.image)

    return load


_load_image_node = default_image_loader()


class MetadataShell:
    """One run of the shell over a snapshot file.

    ``image_loader`` reads the file into the ``image`` node (default: kafkalog's metadata
    image of the file); ``stdin``/``stdout`` default to the process's.

    Example (``ls /image`` on a log dir's snapshot)::

        shell = MetadataShell("/data/kraft/__cluster_metadata-0/00000000000000000000.log")
        try:
            shell.run(["ls", "/image"])
        finally:
            shell.close()
    """

    def __init__(self, snapshot_path: str, *, image_loader: ImageLoader | None = None,
                 stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> None:
        self.state = MetadataShellState()
        self.snapshot_path = snapshot_path
        self._image_loader = image_loader or _load_image_node
        self._stdin = stdin
        self._stdout = stdout
        self._file_lock: DirectoryLock | None = None

    def _initialize(self) -> None:
        if self._file_lock is None:
            self._file_lock = take_directory_lock_if_exists(
                lock_directory_of(self.snapshot_path))
        # fail before any output, naming the file, when it cannot be opened (Kafka's reader
        # opens it first too: NoSuchFileException); the OSError carries the path
        if os.path.isdir(self.snapshot_path):
            from kafkalog.cluster.image.metadata_loader import metadata_partition_dir

            metadata_partition_dir(self.snapshot_path)
        else:
            with open(self.snapshot_path, "rb"):
                pass

    def _load(self) -> None:
        self.state.set_root(RootShellNode(self._image_loader(self.snapshot_path)))

    def run(self, args: Sequence[str] | None) -> int:
        """Interactive when ``args`` is empty, else run that one command. Returns 0 (or the
        status ``exit`` asked for)."""
        out = sys.stdout if self._stdout is None else self._stdout
        self._initialize()
        if not args:
            out.write("Loading...\n")
            out.flush()
            self._load()
            out.write("Starting...\n")
            out.flush()
            with InteractiveShell(self.state, stdin=self._stdin, stdout=self._stdout) as shell:
                return shell.run_main_loop()
        self._load()
        handler = Commands(False).parse_command(list(args), help_out=out)
        try:
            handler.run(None, out, self.state)
        except ExitShell as e:  # not reachable from the command line: exit is interactive
            return e.status
        finally:
            out.flush()
        return 0

    def close(self) -> None:
        """Release the log dir lock, if taken (idempotent)."""
        lock, self._file_lock = self._file_lock, None
        if lock is not None:
            lock.release()


def build_parser(prog: str = "kafkalog metadata-shell") -> ArgumentParser:
    """Kafka's arguments: ``--snapshot``/``-s`` (required) and the command words."""
    parser = ArgumentParser(prog, description="The Apache Kafka metadata shell",
                            default_help=True)
    parser.add_argument("--snapshot", "-s", required=True,
                        help="The metadata snapshot file to read. (kafkalog: also a "
                             "__cluster_metadata-0 directory, or a log dir holding one: its "
                             "latest snapshot, then its log.)")
    parser.add_argument("--end-offset", type=LongType(), metavar="OFFSET",
                        help="(kafkalog) Stop before this offset: the image a broker whose "
                             "metadata log ended there held.")
    parser.add_argument("command", nargs="*", help="The command to run.")
    return parser


def main(argv: Sequence[str] | None = None, *, image_loader: ImageLoader | None = None,
         stdin: IO[str] | None = None, stdout: IO[str] | None = None,
         stderr: IO[str] | None = None) -> int:
    """Run the tool on ``argv`` (without the program name); returns the exit status."""
    if stdout is None:
        # Kafka writes UTF-8 whatever the locale; never fail on a name the console cannot show
        replace_unencodable(sys.stdout)
    out = sys.stdout if stdout is None else stdout
    err = sys.stderr if stderr is None else stderr
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        namespace = parser.parse_args(argv, help_out=out)
    except HelpScreenError:
        out.flush()
        return 1  # argparse4j 0.7.0's parseArgsOrFail exits 1 after --help too
    except ArgumentParserError as e:
        parser.handle_error(e, err)
        return 1
    loader = image_loader or default_image_loader(namespace.get("end_offset"), err)
    shell = MetadataShell(namespace["snapshot"], image_loader=loader, stdin=stdin,
                          stdout=stdout)
    try:
        try:
            return shell.run(namespace["command"])
        finally:
            shell.close()
    except KeyboardInterrupt:  # Ctrl-C while a command runs ends the JVM too (SIGINT)
        return 130
    except BrokenPipeError:  # `... ls /image | head`
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the final flush
        except OSError:
            pass
        return 0
    except KafkaLogError as e:
        err.write(f"Error: {e}\n")
        return 1
    except OSError as e:
        where = f"{e.filename}: " if e.filename is not None else ""
        err.write(f"Error: {where}{e.strerror or e}\n")
        return 1
    except Exception as e:
        err.write(f"Unexpected error: {e}\n")
        traceback.print_exc(file=err)
        return 1

