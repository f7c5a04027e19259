"""The shell's commands: their registry and parser (Kafka's ``shell.command.Commands``).

A :class:`CommandType` describes a command (name, description, arguments, whether it exists
only in the interactive shell, how its arguments tab-complete) and makes a :class:`Handler`
from parsed arguments; a handler is a value (two ``ls a`` handlers are equal) whose ``run``
writes the command's output. :class:`Commands` parses a command line's words with argparse4j's
rules (:mod:`.command_parser`): unique prefixes of command names are accepted by the parser but
refused with ``did you mean``, a mistake becomes an :class:`ErroneousCommandHandler` that
prints the parser's message, and an empty line a no-op.

>>> commands = Commands(True)
>>> commands.parse_command(["ls", "/image"])
LsCommandHandler(targets=['/image'])
>>> commands.parse_command(["pw"])
ErroneousCommandHandler(message="invalid choice: 'pw': did you mean 'pwd'?")
>>> Commands(False).parse_command(["pwd"]).message
"invalid choice: 'pwd' (choose from 'cat', 'find', 'ls', 'tree')"
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import IO, TYPE_CHECKING, Any

from .command_parser import ArgumentParser, ArgumentParserError, HelpScreenError

if TYPE_CHECKING:
    from .command_utils import Candidate
    from .interactive_shell import InteractiveShell
    from .shell_state import MetadataShellState

__all__ = ["Handler", "CommandType", "Commands", "command_types"]


class Handler:
    """Runs one parsed command (Kafka's ``Commands.Handler``).

    ``shell`` is the interactive shell, or None when the command was given on the command
    line; ``writer`` receives the output.
    """

    def run(self, shell: InteractiveShell | None, writer: IO[str],
            state: MetadataShellState) -> None:
        raise NotImplementedError


class CommandType:
    """What a command is (Kafka's ``Commands.Type``); subclasses set the class attributes."""

    name: str = ""
    description: str = ""
    #: only in the interactive shell (cd, pwd, history, help, man, exit)
    shell_only: bool = False

    def add_arguments(self, parser: ArgumentParser) -> None:
        """Declare the command's arguments (none by default)."""

    def create_handler(self, namespace: dict[str, Any]) -> Handler:
        raise NotImplementedError

    def complete_next(self, state: MetadataShellState, next_words: list[str],
                      candidates: list[Candidate]) -> None:
        """Tab completion of the words after the command name (the last one is being typed)."""

    def __repr__(self) -> str:
        return f"CommandType({self.name!r})"


class PathsCommandType(CommandType):
    """A command over node paths (``ls``, ``cat``, ``tree``, ``find``): one positional
    argument of paths (``argument``, ``nargs``, ``help``), each completed as a path."""

    argument = "targets"
    nargs = "*"
    help = ""

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(self.argument, nargs=self.nargs, help=self.help)

    def complete_next(self, state: MetadataShellState, next_words: list[str],
                      candidates: list[Candidate]) -> None:
        from .command_utils import complete_path

        complete_path(state, next_words[-1], candidates)


_TYPES: dict[str, CommandType] | None = None


def command_types() -> dict[str, CommandType]:
    """Every command type by name, in name order (Kafka's ``Commands.TYPES``, a TreeMap)."""
    global _TYPES
    if _TYPES is None:
        # imported on first use: the handler modules subclass Handler and CommandType above
        from .cat_command import CatCommandHandler
        from .find_command import FindCommandHandler
        from .ls_command import LsCommandHandler
        from .navigation_commands import CdCommandHandler, PwdCommandHandler
        from .session_commands import (
            ExitCommandHandler,
            HelpCommandHandler,
            HistoryCommandHandler,
            ManCommandHandler,
        )
        from .tree_command import TreeCommandHandler

        types = [CatCommandHandler.TYPE, CdCommandHandler.TYPE, ExitCommandHandler.TYPE,
                 FindCommandHandler.TYPE, HelpCommandHandler.TYPE, HistoryCommandHandler.TYPE,
                 LsCommandHandler.TYPE, ManCommandHandler.TYPE, PwdCommandHandler.TYPE,
                 TreeCommandHandler.TYPE]
        _TYPES = {t.name: t for t in sorted(types, key=lambda t: t.name)}
    return _TYPES


class Commands:
    """The command parser; ``add_shell_commands=False`` (a command given on the command line)
    leaves out the interactive-only commands."""

    def __init__(self, add_shell_commands: bool) -> None:
        self._parser = ArgumentParser("", False)
        subparsers = self._parser.add_subparsers("command")
        for command_type in command_types().values():
            if add_shell_commands or not command_type.shell_only:
                sub = subparsers.add_parser(command_type.name, help=command_type.description)
                command_type.add_arguments(sub)

    def parser(self) -> ArgumentParser:
        return self._parser

    def parse_command(self, arguments: Sequence[str], *, help_out: IO[str] | None = None
                      ) -> Handler:
        """The handler for a command line's words; never raises for bad input.

        Trailing empty words (JLine adds one after a trailing space) are dropped. ``-h`` on a
        command prints its help to ``help_out`` (stdout by default) and gives a no-op.
        """
        from .session_commands import ErroneousCommandHandler, NoOpCommandHandler

        trimmed = list(arguments)
        while trimmed and not trimmed[-1]:
            trimmed.pop()
        if not trimmed:
            return NoOpCommandHandler()
        try:
            namespace = self._parser.parse_args(trimmed, help_out=help_out)
        except HelpScreenError:
            return NoOpCommandHandler()
        except ArgumentParserError as e:
            return ErroneousCommandHandler(e.message)
        command = namespace["command"]
        if command != trimmed[0]:
            return ErroneousCommandHandler(
                f"invalid choice: '{trimmed[0]}': did you mean '{command}'?")
        command_type = command_types().get(command)
        if command_type is None:
            return ErroneousCommandHandler(f"Unknown command specified: {command}")
        return command_type.create_handler(namespace)
