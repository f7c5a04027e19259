"""Path helpers and tab completion shared by the commands (Kafka's ``shell.command.CommandUtils``).

Paths are ``/``-separated; repeated and trailing slashes are ignored, ``.`` is dropped and
``..`` removes the previous component (nothing above the root). Completion follows JLine: a
:class:`Candidate` is a whole word to put in place of the one typed, and a directory's
candidate ends with ``/`` and is not ``complete`` (no space is added after it, so the user can
go on typing the next component).

>>> split_path("//alpha/beta/")
['alpha', 'beta']
>>> strip_dot_path_components(["..", "a", ".", "b", "..", "c"])
['a', 'c']
>>> get_effective_paths(["", ""])
['.']
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .java_compat import java_string_key

if TYPE_CHECKING:
    from .shell_state import MetadataShellState

__all__ = [
    "Candidate",
    "get_effective_paths",
    "complete_command",
    "split_path",
    "strip_dot_path_components",
    "complete_path",
]


@dataclass(frozen=True)
class Candidate:
    """A JLine completion candidate: ``value`` replaces the word being completed; a
    ``complete`` candidate is followed by a space once inserted."""

    value: str
    complete: bool = True


def get_effective_paths(paths: Iterable[str]) -> list[str]:
    """The paths without the empty ones; ``["."]`` (the working directory) when none is left."""
    effective = [p for p in paths if p]
    return effective or ["."]


def complete_command(command_prefix: str, candidates: list[Candidate]) -> None:
    """Add every command name starting with ``command_prefix``, in name order.

    >>> out = []
    >>> complete_command("c", out)
    >>> [c.value for c in out]
    ['cat', 'cd']
    """
    # imported here: the command registry imports the handlers, which import this module
    from .commands import command_types

    for name in command_types():
        if name.startswith(command_prefix):
            candidates.append(Candidate(name))


def split_path(path: str) -> list[str]:
    """The non-empty components of ``path``."""
    return [c for c in path.split("/") if c]


def strip_dot_path_components(components: Iterable[str]) -> list[str]:
    """Resolve ``.`` and ``..`` components."""
    out: list[str] = []
    for c in components:
        if c == "..":
            if out:
                out.pop()
        elif c != ".":
            out.append(c)
    return out


def complete_path(state: MetadataShellState, path_prefix: str,
                  candidates: list[Candidate]) -> None:
    """Add the paths of the nodes whose name starts with the last component of
    ``path_prefix``, in the directory the components before it name (relative to the working
    directory unless it starts with ``/``). Each candidate keeps what was typed up to the last
    ``/`` and ends with ``/`` for a directory.
    """

    def visit(data: MetadataShellState) -> None:
        absolute = (path_prefix if path_prefix.startswith("/")
                    else data.working_directory() + "/" + path_prefix)
        components = strip_dot_path_components(split_path(absolute))
        directory = data.root()
        num_directories = (len(components) if path_prefix.endswith("/")
                           else len(components) - 1)
        for i in range(num_directories):
            node = directory.child(components[i])
            if node is None or not node.is_directory():
                return
            directory = node
        last_component = ""
        if 0 <= num_directories < len(components):
            last_component = components[num_directories]
        # a TreeSet of the names: its ceiling(last), then higher() while the prefix holds
        children = sorted(set(directory.child_names()), key=java_string_key)
        start = bisect.bisect_left([java_string_key(c) for c in children],
                                   java_string_key(last_component))
        last_slash = path_prefix.rfind("/")
        effective_prefix = "" if last_slash < 0 else path_prefix[:last_slash + 1]
        for name in children[start:]:
            if not name.startswith(last_component):
                break
            value = effective_prefix + name
            child = directory.child(name)
            if child is not None and child.is_directory():
                candidates.append(Candidate(value + "/", complete=False))
            else:
                candidates.append(Candidate(value))

    state.visit(visit)
