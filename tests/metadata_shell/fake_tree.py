"""Hand-built node trees for the shell's tests (as Kafka's shell tests build theirs)."""

from __future__ import annotations

from collections.abc import Iterable

from kafkalog.cluster.image import MetadataLeafNode, MetadataNode
from kafkalog.metadata_shell.shell_state import MetadataShellState, RootShellNode


class TestNode(MetadataNode):
    """Kafka's GlobVisitorTest.TestNode: a directory of named children, or an empty file."""

    __test__ = False  # not a pytest class

    def __init__(self, name: str, *children: TestNode, is_directory: bool = True) -> None:
        self.name = name
        self.children = {c.name: c for c in children}
        self._is_directory = is_directory

    def is_directory(self) -> bool:
        return self._is_directory

    def child_names(self) -> Iterable[str]:
        # a set, as Kafka's HashMap keySet: the commands must sort themselves
        return set(self.children)

    def child(self, name: str) -> MetadataNode | None:
        return self.children.get(name)


class Dir(MetadataNode):
    """A directory of named nodes, listed in insertion order (the commands sort)."""

    def __init__(self, children: dict[str, MetadataNode]) -> None:
        self.children = children

    def child_names(self) -> Iterable[str]:
        return list(self.children)

    def child(self, name: str) -> MetadataNode | None:
        return self.children.get(name)


def leaf(text: str) -> MetadataLeafNode:
    return MetadataLeafNode(text)


def glob_test_state() -> MetadataShellState:
    """GlobVisitorTest's DATA: the tree below, working directory "foo" (relative, as there)."""
    state = MetadataShellState()
    state.set_root(TestNode(
        "",
        TestNode("alpha",
                 TestNode("beta", TestNode("gamma")),
                 TestNode("theta")),
        TestNode("foo", TestNode("a"), TestNode("beta")),
        TestNode("zeta", TestNode("c", is_directory=False)),
        TestNode("zzz"),
    ))
    state.set_working_directory("foo")
    return state


def image_tree() -> Dir:
    """A small stand-in for ``/image``: names chosen to exercise sorting and globs."""
    return Dir({
        "topics": Dir({
            "byName": Dir({
                "orders": Dir({"name": leaf("orders"), "id": leaf("AAAAAAAAAAAAAAAAAAAAAQ"),
                               "0": leaf("PartitionRegistration(leader=1)")}),
                "Payments": Dir({"name": leaf("Payments"), "id": leaf("AAAAAAAAAAAAAAAAAAAAAg")}),
                "_internal": Dir({}),
            }),
        }),
        "features": Dir({"metadataVersion": leaf("3.9-IV0")}),
        "provenance": leaf("offset 2, epoch 1"),
    })


def shell_state() -> MetadataShellState:
    """A state rooted at ``/local`` + :func:`image_tree` as ``/image``."""
    return MetadataShellState(RootShellNode(image_tree()))
