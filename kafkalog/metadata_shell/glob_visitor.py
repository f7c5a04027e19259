"""Globs over the shell's node tree (Kafka's ``shell.glob.GlobComponent`` and ``GlobVisitor``).

A glob is split on ``/`` into components; ``.`` and ``..`` are resolved first (``..`` above the
root stays at the root). A component with ``?``, ``*`` or a ``{a,b}`` group matches children by
a regular expression; any other component (``\\`` escapes, a malformed group) names one child
literally. Matches are visited in ``String.compareTo`` order of the names at each level.

>>> from kafkalog.cluster.image import MetadataLeafNode, MetadataNode
>>> class Dir(MetadataNode):
...     def __init__(self, **children): self.children = children
...     def child_names(self): return list(self.children)
...     def child(self, name): return self.children.get(name)
>>> from kafkalog.metadata_shell.shell_state import MetadataShellState
>>> state = MetadataShellState(Dir(zeta=Dir(), alpha=Dir(beta=MetadataLeafNode("x"))))
>>> found = []
>>> GlobVisitor("/*", found.append).accept(state)
>>> [info.absolute_path() for info in found]
['/alpha', '/zeta']
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kafkalog.cluster.image import MetadataNode

from .command_utils import split_path, strip_dot_path_components
from .java_compat import JAVA_DOT, java_string_key

if TYPE_CHECKING:
    from .shell_state import MetadataShellState

__all__ = ["GlobComponent", "GlobVisitor", "MetadataNodeInfo"]

_REGEX_SPECIAL = frozenset("$()+.[]^{|")
_GLOB_SPECIAL = frozenset("*?\\{}")


class GlobComponent:
    """One path component of a glob.

    >>> GlobComponent("foo{bar,baz}").matches("foobaz"), GlobComponent("b?b").matches("bib")
    (True, True)
    >>> GlobComponent("$blah+").literal()
    True
    """

    def __init__(self, component: str) -> None:
        self._component = component
        pattern = None
        try:
            regex = self.to_regular_expression(component)
            if regex is not None:
                pattern = re.compile(_to_python_regex(regex))
        except (ValueError, re.error):
            # Kafka logs "Invalid glob pattern" at debug level and treats it as a literal
            pattern = None
        self._pattern = pattern

    @staticmethod
    def to_regular_expression(glob: str) -> str | None:
        """The Java regular expression for ``glob``, or None when it can only match itself.

        Raises ValueError for a malformed group (nested, unterminated).

        >>> GlobComponent.to_regular_expression("$blah*")
        '^\\\\$blah.*$'
        """
        out = ["^"]
        literal = True
        processing_group = False
        i = 0
        n = len(glob)
        while i < n:
            c = glob[i]
            i += 1
            if c == "?":
                literal = False
                out.append(".")
            elif c == "*":
                literal = False
                out.append(".*")
            elif c == "\\":
                if i == n:
                    out.append(c)
                else:
                    nxt = glob[i]
                    i += 1
                    if nxt in _GLOB_SPECIAL or nxt in _REGEX_SPECIAL:
                        out.append("\\")
                    out.append(nxt)
            elif c == "{":
                if processing_group:
                    raise ValueError("Can't nest glob groups.")
                literal = False
                out.append("(?:(?:")
                processing_group = True
            elif c == ",":
                if processing_group:
                    literal = False
                    out.append(")|(?:")
                else:
                    out.append(c)
            elif c == "}":
                if processing_group:
                    literal = False
                    out.append("))")
                    processing_group = False
                else:
                    out.append(c)
            else:
                # (Kafka has a TODO for character ranges: '[' is matched literally)
                if c in _REGEX_SPECIAL:
                    out.append("\\")
                out.append(c)
        if processing_group:
            raise ValueError("Unterminated glob group.")
        if literal:
            return None
        out.append("$")
        return "".join(out)

    def component(self) -> str:
        return self._component

    def literal(self) -> bool:
        return self._pattern is None

    def matches(self, node_name: str) -> bool:
        if self._pattern is None:
            return self._component == node_name
        return self._pattern.fullmatch(node_name) is not None


def _to_python_regex(java_regex: str) -> str:
    # The expressions above mean the same in Python except '.', which in Java matches no line
    # terminator at all (\r, \u0085, \u2028, \u2029 too)
    out = []
    i = 0
    while i < len(java_regex):
        c = java_regex[i]
        if c == "\\" and i + 1 < len(java_regex):
            out.append(java_regex[i:i + 2])
            i += 2
            continue
        out.append(JAVA_DOT if c == "." else c)
        i += 1
    return "".join(out)


@dataclass(frozen=True, init=False, repr=False)
class MetadataNodeInfo:
    """A node a glob reached, and the path that reached it (names from the root)."""

    path: tuple[str, ...]
    node: MetadataNode

    def __init__(self, path: Sequence[str], node: MetadataNode) -> None:
        object.__setattr__(self, "path", tuple(path))
        object.__setattr__(self, "node", node)

    def last_path_component(self) -> str:
        """The node's name, ``/`` for the root."""
        return self.path[-1] if self.path else "/"

    def absolute_path(self) -> str:
        return "/" + "/".join(self.path)

    def __repr__(self) -> str:
        return f"MetadataNodeInfo(path={''.join('/' + s for s in self.path)}, node={self.node!r})"


class GlobVisitor:
    """Calls ``handler`` with each node ``glob`` matches, or once with None when none does.

    ``glob`` is relative to the state's working directory unless it starts with ``/``.
    """

    def __init__(self, glob: str, handler: Callable[[MetadataNodeInfo | None], object]) -> None:
        self._glob = glob
        self._handler = handler

    def accept(self, state: MetadataShellState) -> None:
        full_glob = (self._glob if self._glob.startswith("/")
                     else state.working_directory() + "/" + self._glob)
        components = strip_dot_path_components(split_path(full_glob))
        root = state.root()
        if root is None:
            raise RuntimeError("Invalid null root")
        if not self._accept(components, 0, root, ()):
            self._handler(None)

    __call__ = accept

    def _accept(self, components: list[str], index: int, node: MetadataNode,
                path: tuple[str, ...]) -> bool:
        if index >= len(components):
            self._handler(MetadataNodeInfo(path, node))
            return True
        glob_component = GlobComponent(components[index])
        if glob_component.literal():
            if not node.is_directory():
                return False
            child = node.child(glob_component.component())
            if child is None:
                return False
            return self._accept(components, index + 1, child,
                                (*path, glob_component.component()))
        if not node.is_directory():
            return False
        matched_any = False
        for name in sorted(node.child_names(), key=java_string_key):
            if glob_component.matches(name):
                child = node.child(name)
                if child is None:
                    cls = type(node)
                    raise RuntimeError(f"Expected {name} to be a valid child of class "
                                       f"{cls.__module__}.{cls.__qualname__}, but it was not.")
                if self._accept(components, index + 1, child, (*path, name)):
                    matched_any = True
        return matched_any
