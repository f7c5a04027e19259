"""Kafka's metadata shell (``kafka-metadata-shell.sh``, Kafka 4.2's ``shell`` module): browse a
KRaft metadata snapshot or log as a file tree with ``ls``, ``cd``, ``cat``, ``tree``, ``find``.

``kafkalog metadata-shell --snapshot FILE [COMMAND...]`` (:func:`.metadata_shell.main`).

Modules
-------
:mod:`.metadata_shell`
    The tool: arguments, the log dir lock, loading, interactive or one-command runs
    (``MetadataShell``, ``main``).
:mod:`.interactive_shell`
    The read-run loop, readline completion and JLine's history rules (``InteractiveShell``).
:mod:`.line_parser`
    Splitting a typed line into words as JLine's ``DefaultParser``.
:mod:`.commands`
    The command registry and parser, the ``Handler`` and ``CommandType`` bases.
:mod:`.command_parser`
    The argparse4j 0.7.0 subset behind the commands' parsing, errors and help screens.
:mod:`.command_utils`
    Path splitting, ``.``/``..`` resolution, command and path completion (``Candidate``).
:mod:`.glob_visitor`
    ``GlobComponent`` and ``GlobVisitor``: globs over the node tree.
:mod:`.ls_command`
    ``ls`` and its column layout.
:mod:`.cat_command`, :mod:`.tree_command`, :mod:`.find_command`
    ``cat``, ``tree``, ``find``.
:mod:`.navigation_commands`
    ``cd`` and ``pwd``.
:mod:`.session_commands`
    ``help``, ``man``, ``history``, ``exit``, and the no-op and erroneous-line handlers.
:mod:`.shell_node_printer`
    ``ShellNodePrinter``: how ``cat`` and ``tree`` print nodes (nothing redacted).
:mod:`.shell_state`
    ``MetadataShellState`` (root and working directory), ``RootShellNode``,
    ``LocalShellNode``.
:mod:`.java_compat`
    The Java string rules the output depends on (UTF-16 lengths, ``trim``, whitespace).

Example
-------
>>> import io
>>> from kafkalog.cluster.image import MetadataLeafNode, MetadataNode
>>> class Image(MetadataNode):
...     def child_names(self): return ["features"]
...     def child(self, name): return MetadataLeafNode("x") if name == "features" else None
>>> state = MetadataShellState(RootShellNode(Image()))
>>> out = io.StringIO()
>>> Commands(False).parse_command(["find", "/image"]).run(None, out, state)
>>> print(out.getvalue(), end="")
/image
/image/features
"""

from __future__ import annotations

from .commands import Commands, CommandType, Handler, command_types
from .glob_visitor import GlobComponent, GlobVisitor, MetadataNodeInfo
from .interactive_shell import InteractiveShell, MetadataShellCompleter
from .metadata_shell import MetadataShell, main
from .shell_node_printer import ShellNodePrinter
from .shell_state import LocalShellNode, MetadataShellState, RootShellNode

__all__ = [
    "Commands",
    "CommandType",
    "Handler",
    "command_types",
    "GlobComponent",
    "GlobVisitor",
    "MetadataNodeInfo",
    "InteractiveShell",
    "MetadataShellCompleter",
    "MetadataShell",
    "main",
    "ShellNodePrinter",
    "LocalShellNode",
    "MetadataShellState",
    "RootShellNode",
]
