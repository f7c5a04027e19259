"""Offline admin commands over one log directory: Kafka's operator tools, without a broker.

Each command is shaped like the Kafka tool it is named after (same options, same texts where
the behaviour is the same) and works directly on a ``log.dirs`` entry through
:class:`~kafkalog.log_dir.LogDir`:

===============================================  ==============================================
``kafkalog topics LOGDIR ...``                   ``kafka-topics.sh``: ``--list``, ``--describe``,
                                                 ``--create``, ``--alter --partitions``,
                                                 ``--delete`` (:mod:`.topics_command`)
``kafkalog configs LOGDIR ...``                  ``kafka-configs.sh --entity-type topics``,
                                                 ``users`` (SCRAM credentials, quotas),
                                                 ``clients`` and ``ips`` (quotas):
                                                 ``--describe [--all]``, ``--alter
                                                 --add-config/--delete-config``
                                                 (:mod:`.configs_command`)
``kafkalog acls LOGDIR ...``                     ``kafka-acls.sh``: ``--add``, ``--remove``,
                                                 ``--list`` of the ACLs ``kafkalog serve``
                                                 enforces (:mod:`.acls_command`)
``kafkalog delete-records LOGDIR ...``           ``kafka-delete-records.sh
                                                 --offset-json-file``
                                                 (:mod:`.delete_records_command`)
``kafkalog transactions LOGDIR SUBCOMMAND``      ``kafka-transactions.sh``: ``list``,
                                                 ``describe``, ``describe-producers``,
                                                 ``find-hanging``, ``abort``
                                                 (:mod:`.transactions_command`)
``kafkalog get-offsets LOGDIR... ...``           ``kafka-get-offsets.sh`` (``GetOffsetShell``):
                                                 ``--topic-partitions``, ``--time`` with every
                                                 special value (:mod:`.get_offsets_command`)
``kafkalog log-dirs --describe LOGDIR...``       ``kafka-log-dirs.sh --describe``: sizes and
                                                 offset lags per log dir
                                                 (:mod:`.log_dirs_command`)
``kafkalog metadata-quorum LOGDIR... describe``  ``kafka-metadata-quorum.sh describe``:
                                                 ``--status``, ``--replication`` from KRaft
                                                 nodes' metadata log dirs
                                                 (:mod:`.metadata_quorum_command`)
===============================================  ==============================================

Shared rules (this module):

* Reading commands (``--list``, ``--describe``) open the dir read-only: they take no lock, so
  they also work on a directory a broker is using (as forensics; what they show may be stale).
* Writing commands open it for writing, which takes the dir's ``.lock`` as a broker does: a dir
  used by a running broker or another kafkalog process is refused with the holder named
  (:func:`open_error_text`), and nothing is changed.
* What a log dir cannot know is not invented: topic configs are the overrides kafkalog keeps in
  ``.kafkalog-topics.json`` on top of Kafka's defaults (a broker's ``server.properties`` and the
  cluster's dynamic configs are not in the dir); the single replica of every partition is the
  dir's ``node.id``.
* Exit status: 0 success, 1 an error (Kafka's text on stderr), 2 usage.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import LogLockedError

if TYPE_CHECKING:
    from ..log_dir import LogDir

__all__ = ["EXIT_OK", "EXIT_ERROR", "EXIT_USAGE", "INTERNAL_TOPICS", "CommandFailed",
           "open_log_dir", "open_error_text", "listed_topics", "hold_partitions", "node_id",
           "live_only_command"]

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2

#: Kafka's ``Topic.isInternal`` (clients ``org/apache/kafka/common/internals/Topic.java``, 3.9)
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})


class CommandFailed(Exception):
    """The operation failed the way Kafka's tool reports it: the message is Kafka's text."""


def open_log_dir(path: str | Path, *, writable: bool,
                 partitions: Callable[[str, int], bool] | None = None) -> LogDir:
    """Open the log dir at ``path``: read-only (no lock) or for writing (the ``.lock``);
    ``partitions`` (read-only): load only the partitions it accepts.

    Raises
    ------
    FileNotFoundError
        ``path`` is not a directory (never created: a typo must not become an empty log dir).
    LogLockedError
        A writer (a broker, another kafkalog process) holds the dir.
    """
    from ..cleaner.cleaner_config import CleanerConfig
    from ..log_dir import LogDir

    root = Path(path)
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: no such log directory")
    if not writable:
        return LogDir.open(root, read_only=True, partitions=partitions)
    # no log cleaner: a command holds the dir for a moment and must change only what it is
    # asked to change (a broker's cleaner would compact whatever is dirty meanwhile)
    return LogDir.open(root, cleaner_config=CleanerConfig(enable_cleaner=False))


def open_error_text(error: BaseException) -> str:
    """What to print when :func:`open_log_dir` fails; a locked dir says why nothing was done."""
    if isinstance(error, LogLockedError):
        return (f"{error}: the log directory is in use (a running broker or another kafkalog "
                "process); stop it first, this command changes the directory and needs it to "
                "itself")
    return str(error)


def listed_topics(logs: LogDir) -> list[str]:
    """The topics a broker would list (sorted): every topic held, without KRaft's
    ``__cluster_metadata`` (the raft layer's log, not a topic ``ListTopics`` returns)."""
    from ..log_dir import METADATA_TOPIC

    return [t for t in logs.topics() if t != METADATA_TOPIC]


def hold_partitions(held: dict[tuple[str, int], LogDir], logs: LogDir,
                    wanted: Callable[[str, int], bool]) -> None:
    """Add to ``held`` the partitions of ``logs`` (one of a broker's ``log.dirs``) that
    ``wanted`` accepts, among the topics a broker lists (:func:`listed_topics`).

    Raises
    ------
    CommandFailed
        A partition already held by another dir: LogManager refuses to start ("Duplicate log
        directories for t-p").
    """
    listed = set(listed_topics(logs))
    for t, p in logs.partitions():
        if t not in listed or not wanted(t, p):
            continue
        if (t, p) in held:
            raise CommandFailed(f"Duplicate log directories for {t}-{p} are found in both "
                                f"{held[(t, p)].root} and {logs.root}")
        held[(t, p)] = logs


def node_id(logs: LogDir) -> int:
    """The broker id of the dir's single replica: ``meta.properties``' node id, else 1."""
    meta = logs.meta
    return meta.node_id if meta is not None and meta.node_id is not None else 1


def live_only_command(argv: Sequence[str], commands: Sequence[str]) -> str | None:
    """The first of ``commands`` (subcommands that change a running cluster through its
    controllers, refused offline) in ``argv``, unless help is asked for; None otherwise.

    >>> live_only_command(["d", "upgrade", "--feature", "x"], ("upgrade",))
    'upgrade'
    >>> live_only_command(["upgrade", "--help"], ("upgrade",)) is None
    True
    """
    if "-h" in argv or "--help" in argv:
        return None
    return next((a for a in argv if a in commands), None)
