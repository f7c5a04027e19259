"""The shell's state and its root directory (Kafka's ``MetadataShellState``, ``RootShellNode``
and ``LocalShellNode``).

The tree the shell browses is ``/local`` (the shell's own version and commit id) and
``/image`` (the metadata image read from the snapshot or log). The state holds that root and
the working directory that relative paths start from.

>>> from kafkalog.cluster.image import MetadataNode
>>> state = MetadataShellState(RootShellNode(MetadataNode()))
>>> list(state.root().child_names()), state.working_directory()
(['local', 'image'], '/')
>>> state.root().child("local").child("commitId").text
'unknown'
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from kafkalog.cluster.image import MetadataLeafNode, MetadataNode

__all__ = ["MetadataShellState", "RootShellNode", "LocalShellNode", "shell_version",
           "IMAGE_NODE_NAME"]

#: MetadataImageNode.NAME
IMAGE_NODE_NAME = "image"


def shell_version() -> str:
    """kafkalog's version (what ``/local/version`` shows)."""
    try:
        from kafkalog import __version__

        return str(__version__)
    except ImportError:  # pragma: no cover - the package always defines it
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("kafkalog")
        except PackageNotFoundError:
            return "unknown"


class LocalShellNode(MetadataNode):
    """``/local``: ``version`` and ``commitId`` of the shell.

    Kafka prints its ``AppInfoParser`` values here (the Kafka release and the git commit it
    was built from, ``unknown`` when the build did not record one). kafkalog records no commit
    id, so ``commitId`` is ``unknown`` too.
    """

    NAME = "local"
    VERSION = "version"
    COMMIT_ID = "commitId"

    def child_names(self) -> Iterable[str]:
        return [self.VERSION, self.COMMIT_ID]

    def child(self, name: str) -> MetadataNode | None:
        if name == self.VERSION:
            return MetadataLeafNode(shell_version())
        if name == self.COMMIT_ID:
            return MetadataLeafNode("unknown")
        return None


class RootShellNode(MetadataNode):
    """``/``: ``local`` and ``image`` (in that order; listings sort them)."""

    def __init__(self, image_node: MetadataNode) -> None:
        self._image_node = image_node

    def child_names(self) -> Iterable[str]:
        return [LocalShellNode.NAME, IMAGE_NODE_NAME]

    def child(self, name: str) -> MetadataNode | None:
        if name == LocalShellNode.NAME:
            return LocalShellNode()
        if name == IMAGE_NODE_NAME:
            return self._image_node
        return None


class MetadataShellState:
    """The root node and the working directory (``/`` at first).

    ``root`` defaults to a root whose ``image`` is empty (Kafka starts from
    ``MetadataImage.EMPTY`` until the snapshot is loaded).
    """

    def __init__(self, root: MetadataNode | None = None) -> None:
        self._root: MetadataNode = root if root is not None else RootShellNode(MetadataNode())
        self._working_directory = "/"

    def root(self) -> MetadataNode:
        return self._root

    def set_root(self, root: MetadataNode) -> None:
        self._root = root

    def working_directory(self) -> str:
        return self._working_directory

    def set_working_directory(self, working_directory: str) -> None:
        self._working_directory = working_directory

    def visit(self, consumer: Callable[[MetadataShellState], object]) -> None:
        """Call ``consumer`` with this state (Kafka's shell visits under no lock either)."""
        consumer(self)
