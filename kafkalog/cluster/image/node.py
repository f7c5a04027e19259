"""The node tree a metadata image is browsed as (Kafka's ``org.apache.kafka.image.node``).

A :class:`MetadataNode` is a directory (it has named children) or a file (it prints text).
The tree is built lazily: ``child(name)`` makes the child when asked, so browsing a large image
costs only what is visited. Invariant: every name in ``child_names()`` gives a non-``None``
``child(name)``; a name not listed may still resolve (Kafka's topic-by-id lookup does not).

Printing goes through a :class:`MetadataNodePrinter`; a directory prints its children sorted by
name, each between ``enter_node(name)`` and ``leave_node()``. The printer also says what to
redact (:class:`MetadataNodeRedactionCriteria`): sensitive configs, SCRAM and delegation tokens.

Example
-------
>>> leaf = MetadataLeafNode("3.9-IV0")
>>> class Features(MetadataNode):
...     def child_names(self): return ["metadataVersion"]
...     def child(self, name): return leaf if name == "metadataVersion" else None
>>> Features().stringify()
'metadataVersion(3.9-IV0)'
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

# Java's String.compareTo order (UTF-16 code units): how Kafka sorts node names
from ...groups.java_order import java_string_key

__all__ = [
    "MetadataNode",
    "MetadataLeafNode",
    "MetadataNodePrinter",
    "MetadataNodeRedactionCriteria",
    "STRICT",
    "NORMAL_NO_SCHEMA",
    "DISABLED",
    "NodeStringifier",
    "java_string_key",
]


class MetadataNodeRedactionCriteria:
    """What a printer hides (``MetadataNodeRedactionCriteria``: Strict, Normal, Disabled).

    ``config_is_sensitive(resource_type, key)`` is Kafka's ``KafkaConfigSchema.isSensitive``
    for the Normal criteria; Strict redacts every config, Disabled none.
    """

    def __init__(self, *, scram: bool, delegation_token: bool,
                 config: Callable[[int, str], bool]) -> None:
        self._scram = scram
        self._token = delegation_token
        self._config = config

    def should_redact_scram(self) -> bool:
        return self._scram

    def should_redact_delegation_token(self) -> bool:
        return self._token

    def should_redact_config(self, resource_type: int, key: str) -> bool:
        """``resource_type`` is ``ConfigResource.Type``'s id (2 topic, 4 broker, ...)."""
        return self._config(resource_type, key)

    @classmethod
    def normal(cls, is_sensitive: Callable[[int, str], bool]) -> MetadataNodeRedactionCriteria:
        return cls(scram=True, delegation_token=True, config=is_sensitive)


STRICT = MetadataNodeRedactionCriteria(scram=True, delegation_token=True,
                                       config=lambda t, k: True)
DISABLED = MetadataNodeRedactionCriteria(scram=False, delegation_token=False,
                                         config=lambda t, k: False)
# Normal criteria with no schema at hand: nothing is known to be sensitive (callers pass one)
NORMAL_NO_SCHEMA = MetadataNodeRedactionCriteria.normal(lambda t, k: False)


class MetadataNodePrinter:
    """Receives a node tree's walk. Subclasses write it somewhere."""

    def redaction_criteria(self) -> MetadataNodeRedactionCriteria:
        return STRICT

    def enter_node(self, name: str) -> None:
        raise NotImplementedError

    def leave_node(self) -> None:
        raise NotImplementedError

    def output(self, text: str) -> None:
        raise NotImplementedError


class MetadataNode:
    """A node of the tree: a directory by default, with no children."""

    def is_directory(self) -> bool:
        return True

    def child_names(self) -> Iterable[str]:
        return ()

    def child(self, name: str) -> MetadataNode | None:
        return None

    def print(self, printer: MetadataNodePrinter) -> None:
        """Children in name order (Java's ``String.compareTo``: UTF-16 code units)."""
        for name in sorted(self.child_names(), key=java_string_key):
            printer.enter_node(name)
            child = self.child(name)
            if child is not None:
                child.print(printer)
            printer.leave_node()

    def stringify(self, criteria: MetadataNodeRedactionCriteria | None = None) -> str:
        """The node as ``NodeStringifier`` prints it (``name(child, ...)``)."""
        s = NodeStringifier(criteria or STRICT)
        self.print(s)
        return str(s)


class MetadataLeafNode(MetadataNode):
    """A file holding one string."""

    def __init__(self, text: str) -> None:
        self.text = text

    def is_directory(self) -> bool:
        return False

    def print(self, printer: MetadataNodePrinter) -> None:
        printer.output(self.text)

    def __repr__(self) -> str:
        return f"MetadataLeafNode({self.text!r})"


class NodeStringifier(MetadataNodePrinter):
    """Prints a tree on one line: ``a(x, y), b(z)`` (Kafka's ``NodeStringifier``)."""

    def __init__(self, criteria: MetadataNodeRedactionCriteria = STRICT) -> None:
        self._criteria = criteria
        self._out: list[str] = []
        self._prefixes: list[str] = [""]

    def redaction_criteria(self) -> MetadataNodeRedactionCriteria:
        return self._criteria

    def enter_node(self, name: str) -> None:
        self._out.append(self._prefixes.pop())
        self._prefixes.append(", ")
        self._out.append(name + "(")
        self._prefixes.append("")

    def leave_node(self) -> None:
        self._out.append(")")
        self._prefixes.pop()

    def output(self, text: str) -> None:
        self._out.append(self._prefixes.pop() + text)
        self._prefixes.append(", ")

    def __str__(self) -> str:
        return "".join(self._out)
