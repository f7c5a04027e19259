"""The shell's own commands and the non-commands: ``help``, ``man``, ``history``, ``exit``
(interactive only), the no-op of an empty line and the handler of a mistyped one (Kafka's
``HelpCommandHandler``, ``ManCommandHandler``, ``HistoryCommandHandler``,
``ExitCommandHandler``, ``NoOpCommandHandler`` and ``ErroneousCommandHandler``).

``help`` prints a welcome line and argparse4j's help screen of every command; ``man CMD``
the command's description and its own help screen (``man: unknown command X. Type help to get
a list of commands.`` otherwise). ``history [N]`` prints the last N lines read (all by
default) numbered from 0 as JLine counts them, ``% 5d  line``.

>>> import io
>>> out = io.StringIO()
>>> ManCommandHandler("cd").run(None, out, None)
>>> print(out.getvalue(), end="")
cd: Set the current working directory.
<BLANKLINE>
usage: cd [target]
<BLANKLINE>
positional arguments:
  target                 The directory to change to.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

from .command_parser import ArgumentParser, IntegerType
from .command_utils import Candidate, complete_command
from .commands import Commands, CommandType, Handler, command_types
from .java_compat import JAVA_INT_MAX

if TYPE_CHECKING:
    from .interactive_shell import InteractiveShell
    from .shell_state import MetadataShellState

__all__ = [
    "HelpCommandHandler",
    "ManCommandHandler",
    "HistoryCommandHandler",
    "ExitCommandHandler",
    "ExitShell",
    "NoOpCommandHandler",
    "ErroneousCommandHandler",
]


class ExitShell(Exception):
    """Raised by ``exit`` to end the shell with ``status``.

    Kafka calls ``Exit.exit(0)`` there; the loop catches this instead, so that the caller
    releases the log dir lock and returns the status.
    """

    def __init__(self, status: int = 0) -> None:
        super().__init__(f"exit {status}")
        self.status = status


class _HelpCommandType(CommandType):
    name = "help"
    description = "Display this help message."
    shell_only = True

    def create_handler(self, namespace: dict[str, Any]) -> Handler:
        return HelpCommandHandler()


@dataclass
class HelpCommandHandler(Handler):
    """``help``."""

    TYPE = _HelpCommandType()

    def run(self, shell: InteractiveShell | None, writer: IO[str],
            state: MetadataShellState | None) -> None:
        writer.write("Welcome to the Apache Kafka metadata shell.\n\n")
        Commands(True).parser().print_help(writer)


class _ManCommandType(CommandType):
    name = "man"
    description = "Show the help text for a specific command."
    shell_only = True

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("cmd", nargs=1, help="The command to get help text for.")

    def create_handler(self, namespace: dict[str, Any]) -> Handler:
        return ManCommandHandler(namespace["cmd"][0])

    def complete_next(self, state: MetadataShellState, next_words: list[str],
                      candidates: list[Candidate]) -> None:
        if len(next_words) == 1:
            complete_command(next_words[0], candidates)


@dataclass
class ManCommandHandler(Handler):
    """``man CMD``."""

    cmd: str

    TYPE = _ManCommandType()

    def run(self, shell: InteractiveShell | None, writer: IO[str],
            state: MetadataShellState | None) -> None:
        command_type = command_types().get(self.cmd)
        if command_type is None:
            writer.write(f"man: unknown command {self.cmd}. Type help to get a list of "
                         "commands.\n")
            return
        parser = ArgumentParser(command_type.name, False)
        command_type.add_arguments(parser)
        writer.write(f"{self.cmd}: {command_type.description}\n\n")
        parser.print_help(writer)


class _HistoryCommandType(CommandType):
    name = "history"
    description = "Print command history."
    shell_only = True

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("numEntriesToShow", nargs="?", type=IntegerType(),
                            help="The number of entries to show.")

    def create_handler(self, namespace: dict[str, Any]) -> Handler:
        n = namespace.get("numEntriesToShow")
        return HistoryCommandHandler(JAVA_INT_MAX if n is None else n)


@dataclass
class HistoryCommandHandler(Handler):
    """``history [N]``; needs the interactive shell."""

    num_entries_to_show: int = JAVA_INT_MAX

    TYPE = _HistoryCommandType()

    def run(self, shell: InteractiveShell | None, writer: IO[str],
            state: MetadataShellState | None) -> None:
        if shell is None:
            raise RuntimeError("The history command requires a shell.")
        for index, line in shell.history(self.num_entries_to_show):
            # Java's "% 5d": a space for the sign, the whole padded to 5
            writer.write(f"{index: 5d}  {line}\n")


class _ExitCommandType(CommandType):
    name = "exit"
    description = "Exit the metadata shell."
    shell_only = True

    def create_handler(self, namespace: dict[str, Any]) -> Handler:
        return ExitCommandHandler()


@dataclass
class ExitCommandHandler(Handler):
    """``exit``: raises :class:`ExitShell` (status 0)."""

    TYPE = _ExitCommandType()

    def run(self, shell: InteractiveShell | None, writer: IO[str],
            state: MetadataShellState | None) -> None:
        raise ExitShell(0)


@dataclass
class NoOpCommandHandler(Handler):
    """An empty line (or a help screen already printed by the parser)."""

    def run(self, shell: InteractiveShell | None, writer: IO[str],
            state: MetadataShellState | None) -> None:
        pass


@dataclass
class ErroneousCommandHandler(Handler):
    """A line the parser refused: prints the parser's message."""

    message: str

    def run(self, shell: InteractiveShell | None, writer: IO[str],
            state: MetadataShellState | None) -> None:
        writer.write(self.message + "\n")
