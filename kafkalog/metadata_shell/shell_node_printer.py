"""Prints nodes as ``cat`` and ``tree`` show them (Kafka's ``ShellNodePrinter``).

A directory prints as ``name:`` with its children two spaces further in; a file prints its
text. Nothing is redacted: the shell reads a local file its user already holds, so it shows
SCRAM credentials, delegation tokens and sensitive configs as they are (Kafka's shell uses the
``Disabled`` redaction criteria too).

>>> import io
>>> from kafkalog.cluster.image import MetadataLeafNode, MetadataNode
>>> class Dir(MetadataNode):
...     def child_names(self): return ["b", "a"]
...     def child(self, name): return MetadataLeafNode(name.upper())
>>> out = io.StringIO()
>>> Dir().print(ShellNodePrinter(out))
>>> print(out.getvalue(), end="")
a:
  A
b:
  B
"""

from __future__ import annotations

from typing import IO

from kafkalog.cluster.image import DISABLED, MetadataNodePrinter, MetadataNodeRedactionCriteria

__all__ = ["ShellNodePrinter"]


class ShellNodePrinter(MetadataNodePrinter):
    """Writes a node tree to ``writer``, indented by depth."""

    def __init__(self, writer: IO[str]) -> None:
        self._writer = writer
        self._indentation_level = 0

    def _indentation(self) -> str:
        return "  " * max(0, self._indentation_level)

    def redaction_criteria(self) -> MetadataNodeRedactionCriteria:
        return DISABLED

    def enter_node(self, name: str) -> None:
        self._writer.write(f"{self._indentation()}{name}:\n")
        self._indentation_level += 1

    def leave_node(self) -> None:
        self._indentation_level -= 1

    def output(self, text: str) -> None:
        self._writer.write(f"{self._indentation()}{text}\n")
