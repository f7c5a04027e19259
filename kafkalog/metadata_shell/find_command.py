"""``find``: list the paths under nodes (Kafka's ``FindCommandHandler``).

For each path (the working directory ``.`` when none is given) every node the glob matches is
printed, then its descendants depth first in name order. Like Kafka, the lines start with the
path as typed: ``find image`` prints ``image``, ``image/cluster``...; a glob is printed as
typed too (``find /image/*`` prints ``/image/*/...`` for each match).
No match: ``find: <path>: no such file or directory.``.

>>> FindCommandHandler.TYPE.description
'Search for nodes in the directory hierarchy.'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

from kafkalog.cluster.image import MetadataNode

from .command_utils import get_effective_paths
from .commands import Handler, PathsCommandType
from .glob_visitor import GlobVisitor, MetadataNodeInfo
from .java_compat import java_string_key

if TYPE_CHECKING:
    from .interactive_shell import InteractiveShell
    from .shell_state import MetadataShellState

__all__ = ["FindCommandHandler"]


class _FindCommandType(PathsCommandType):
    name = "find"
    description = "Search for nodes in the directory hierarchy."
    shell_only = False
    argument, nargs, help = "paths", "*", "The paths to start at."

    def create_handler(self, namespace: dict[str, Any]) -> Handler:
        return FindCommandHandler(list(namespace["paths"]))


@dataclass
class FindCommandHandler(Handler):
    """``find [PATH...]``."""

    paths: list[str] = field(default_factory=list)

    TYPE = _FindCommandType()

    def run(self, shell: InteractiveShell | None, writer: IO[str],
            state: MetadataShellState) -> None:
        for path in get_effective_paths(self.paths):
            def handle(info: MetadataNodeInfo | None, path: str = path) -> None:
                if info is None:
                    writer.write(f"find: {path}: no such file or directory.\n")
                else:
                    _find(writer, path, info.node)

            GlobVisitor(path, handle).accept(state)


def _find(writer: IO[str], path: str, node: MetadataNode) -> None:
    # Kafka recurses; this walks the same order with a stack (no recursion limit on deep
    # trees). A child is looked up when its turn comes, so a missing one fails where Kafka's
    # would, after the siblings before it are printed.
    stack: list[tuple[str, MetadataNode, str | None, str]] = [(path, node, None, "")]
    while stack:
        path, parent, name, parent_path = stack.pop()
        if name is None:
            current = parent
        else:
            child = parent.child(name)
            if child is None:
                raise RuntimeError(f"Expected {name} to be a valid child of {parent_path}, "
                                   "but it was not.")
            current = child
        writer.write(path + "\n")
        if current.is_directory():
            names = sorted(current.child_names(), key=java_string_key)
            for child_name in reversed(names):
                next_path = path + child_name if path == "/" else path + "/" + child_name
                stack.append((next_path, current, child_name, path))
