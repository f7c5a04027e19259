"""``cat``: print files (Kafka's ``CatCommandHandler``).

Each target is a glob; every file it matches is printed, a directory gives
``cat: <target>: Is a directory`` and no match ``cat: <target>: No such file or directory.``
(the target as typed, not the matched path).

>>> CatCommandHandler.TYPE.description
'Show the contents of metadata files.'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

from .commands import Handler, PathsCommandType
from .glob_visitor import GlobVisitor, MetadataNodeInfo
from .shell_node_printer import ShellNodePrinter

if TYPE_CHECKING:
    from .interactive_shell import InteractiveShell
    from .shell_state import MetadataShellState

__all__ = ["CatCommandHandler"]


class _CatCommandType(PathsCommandType):
    name = "cat"
    description = "Show the contents of metadata files."
    shell_only = False
    argument, nargs, help = "targets", "+", "The metadata files to display."

    def create_handler(self, namespace: dict[str, Any]) -> Handler:
        return CatCommandHandler(list(namespace["targets"]))


@dataclass
class CatCommandHandler(Handler):
    """``cat TARGET...``."""

    targets: list[str] = field(default_factory=list)

    TYPE = _CatCommandType()

    def run(self, shell: InteractiveShell | None, writer: IO[str],
            state: MetadataShellState) -> None:
        for target in self.targets:
            def handle(info: MetadataNodeInfo | None, target: str = target) -> None:
                if info is None:
                    writer.write(f"cat: {target}: No such file or directory.\n")
                elif info.node.is_directory():
                    writer.write(f"cat: {target}: Is a directory\n")
                else:
                    info.node.print(ShellNodePrinter(writer))

            state.visit(GlobVisitor(target, handle))
