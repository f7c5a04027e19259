"""``cd`` and ``pwd`` (Kafka's ``CdCommandHandler`` and ``PwdCommandHandler``); interactive only.

``cd`` without a target goes to ``/``. The target is a glob: each directory it matches becomes
the working directory in turn (the last match wins), a file gives
``cd: <target>: not a directory.`` and no match ``cd: <target>: no such directory.``.

>>> from kafkalog.cluster.image import MetadataNode
>>> import io
>>> from kafkalog.metadata_shell.shell_state import MetadataShellState, RootShellNode
>>> state, out = MetadataShellState(RootShellNode(MetadataNode())), io.StringIO()
>>> CdCommandHandler("local").run(None, out, state)
>>> PwdCommandHandler().run(None, out, state)
>>> CdCommandHandler("version").run(None, out, state)
>>> print(out.getvalue(), end="")
/local
cd: version: not a directory.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

from .command_utils import Candidate, complete_path
from .commands import CommandType, Handler
from .glob_visitor import GlobVisitor, MetadataNodeInfo

if TYPE_CHECKING:
    from .command_parser import ArgumentParser
    from .interactive_shell import InteractiveShell
    from .shell_state import MetadataShellState

__all__ = ["CdCommandHandler", "PwdCommandHandler"]


class _CdCommandType(CommandType):
    name = "cd"
    description = "Set the current working directory."
    shell_only = True

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("target", nargs="?", help="The directory to change to.")

    def create_handler(self, namespace: dict[str, Any]) -> Handler:
        return CdCommandHandler(namespace.get("target"))

    def complete_next(self, state: MetadataShellState, next_words: list[str],
                      candidates: list[Candidate]) -> None:
        if len(next_words) == 1:
            complete_path(state, next_words[0], candidates)


@dataclass
class CdCommandHandler(Handler):
    """``cd [TARGET]``; ``target`` None is ``/``."""

    target: str | None = None

    TYPE = _CdCommandType()

    def run(self, shell: InteractiveShell | None, writer: IO[str],
            state: MetadataShellState) -> None:
        effective_target = "/" if self.target is None else self.target

        def handle(info: MetadataNodeInfo | None) -> None:
            if info is None:
                writer.write(f"cd: {effective_target}: no such directory.\n")
            elif not info.node.is_directory():
                writer.write(f"cd: {effective_target}: not a directory.\n")
            else:
                state.set_working_directory(info.absolute_path())

        GlobVisitor(effective_target, handle).accept(state)


class _PwdCommandType(CommandType):
    name = "pwd"
    description = "Print the current working directory."
    shell_only = True

    def create_handler(self, namespace: dict[str, Any]) -> Handler:
        return PwdCommandHandler()


@dataclass
class PwdCommandHandler(Handler):
    """``pwd``."""

    TYPE = _PwdCommandType()

    def run(self, shell: InteractiveShell | None, writer: IO[str],
            state: MetadataShellState) -> None:
        writer.write(state.working_directory() + "\n")
