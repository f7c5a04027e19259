"""``tree``: print nodes and everything under them (Kafka's ``TreeCommandHandler``).

Each target is a glob; every node it matches is printed with :class:`ShellNodePrinter`
(a directory shows its children, not its own name), no match gives
``tree: <target>: No such file or directory.``.

>>> TreeCommandHandler.TYPE.description
'Show the contents of metadata nodes in a tree structure.'
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

__all__ = ["TreeCommandHandler"]


class _TreeCommandType(PathsCommandType):
    name = "tree"
    description = "Show the contents of metadata nodes in a tree structure."
    shell_only = False
    argument, nargs, help = "targets", "+", "The metadata nodes to display."

    def create_handler(self, namespace: dict[str, Any]) -> Handler:
        return TreeCommandHandler(list(namespace["targets"]))


@dataclass
class TreeCommandHandler(Handler):
    """``tree TARGET...``."""

    targets: list[str] = field(default_factory=list)

    TYPE = _TreeCommandType()

    def run(self, shell: InteractiveShell | None, writer: IO[str],
            state: MetadataShellState) -> None:
        for target in self.targets:
            def handle(info: MetadataNodeInfo | None, target: str = target) -> None:
                if info is None:
                    writer.write(f"tree: {target}: No such file or directory.\n")
                else:
                    info.node.print(ShellNodePrinter(writer))

            state.visit(GlobVisitor(target, handle))
