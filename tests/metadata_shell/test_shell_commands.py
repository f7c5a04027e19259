"""cat, cd, pwd, tree, find, help, man, history and exit over a hand-built tree: Kafka's texts."""

from __future__ import annotations

import io

import pytest

from kafkalog import __version__
from kafkalog.cluster.image import DISABLED, MetadataLeafNode, MetadataNode
from kafkalog.metadata_shell.commands import Commands
from kafkalog.metadata_shell.session_commands import ExitShell, HistoryCommandHandler
from kafkalog.metadata_shell.shell_node_printer import ShellNodePrinter
from kafkalog.metadata_shell.shell_state import (
    LocalShellNode,
    MetadataShellState,
    RootShellNode,
)

from .fake_tree import shell_state


def _run(state: MetadataShellState, *words: str, shell: object = None) -> str:
    out = io.StringIO()
    Commands(True).parse_command(list(words)).run(shell, out, state)  # type: ignore[arg-type]
    return out.getvalue()


@pytest.fixture
def state() -> MetadataShellState:
    return shell_state()


def test_root_and_local_nodes() -> None:
    image = MetadataNode()
    root = RootShellNode(image)
    assert list(root.child_names()) == ["local", "image"]
    assert root.child("image") is image
    assert root.child("nope") is None
    local = root.child("local")
    assert isinstance(local, LocalShellNode)
    assert list(local.child_names()) == ["version", "commitId"]
    assert local.child("version").text == __version__
    assert local.child("commitId").text == "unknown"
    assert local.child("other") is None
    # before a snapshot is loaded the image is an empty directory
    assert list(MetadataShellState().root().child("image").child_names()) == []


def test_shell_node_printer_redacts_nothing() -> None:
    out = io.StringIO()
    printer = ShellNodePrinter(out)
    assert printer.redaction_criteria() is DISABLED
    printer.enter_node("a")
    printer.output("x")
    printer.enter_node("b")
    printer.output("y")
    printer.leave_node()
    printer.leave_node()
    printer.leave_node()  # below zero: no indentation, not an error
    printer.output("z")
    assert out.getvalue() == "a:\n  x\n  b:\n    y\nz\n"


def test_cat(state: MetadataShellState) -> None:
    assert _run(state, "cat", "/image/provenance") == "offset 2, epoch 1\n"
    assert _run(state, "cat", "/local/version", "/local/commitId") == f"{__version__}\nunknown\n"
    # a glob prints every file it matches, in name order; the target is quoted as typed
    assert _run(state, "cat", "/image/topics/byName/*/name") == "Payments\norders\n"
    assert _run(state, "cat", "/image/t*") == "cat: /image/t*: Is a directory\n"
    assert _run(state, "cat", "nope", "/image/provenance") == (
        "cat: nope: No such file or directory.\noffset 2, epoch 1\n")


def test_cd_and_pwd(state: MetadataShellState) -> None:
    assert _run(state, "pwd") == "/\n"
    assert _run(state, "cd", "image/topics") == ""
    assert _run(state, "pwd") == "/image/topics\n"
    assert _run(state, "cd", "byName/../../features/.") == ""
    assert _run(state, "pwd") == "/image/features\n"
    assert _run(state, "cd", "metadataVersion") == "cd: metadataVersion: not a directory.\n"
    assert _run(state, "cd", "nope") == "cd: nope: no such directory.\n"
    assert _run(state, "pwd") == "/image/features\n"
    assert _run(state, "cd") == ""
    assert _run(state, "pwd") == "/\n"
    # a glob: every matching directory in turn, the last one wins
    assert _run(state, "cd", "/image/topics/byName/*") == ""
    assert _run(state, "pwd") == "/image/topics/byName/orders\n"
    assert _run(state, "cd", "/image/{provenance,features}") == (
        "cd: /image/{provenance,features}: not a directory.\n")
    assert _run(state, "pwd") == "/image/features\n"
    assert _run(state, "cd", "../../..") == ""
    assert _run(state, "pwd") == "/\n"


def test_tree(state: MetadataShellState) -> None:
    assert _run(state, "tree", "/image/topics") == (
        "byName:\n"
        "  Payments:\n"
        "    id:\n"
        "      AAAAAAAAAAAAAAAAAAAAAg\n"
        "    name:\n"
        "      Payments\n"
        "  _internal:\n"
        "  orders:\n"
        "    0:\n"
        "      PartitionRegistration(leader=1)\n"
        "    id:\n"
        "      AAAAAAAAAAAAAAAAAAAAAQ\n"
        "    name:\n"
        "      orders\n")
    # a file prints its text; no match names the target
    assert _run(state, "tree", "/local/commitId", "x*") == (
        "unknown\ntree: x*: No such file or directory.\n")
    assert _run(state, "tree", "/local") == f"commitId:\n  unknown\nversion:\n  {__version__}\n"


def test_find(state: MetadataShellState) -> None:
    assert _run(state, "find", "/image/topics") == (
        "/image/topics\n"
        "/image/topics/byName\n"
        "/image/topics/byName/Payments\n"
        "/image/topics/byName/Payments/id\n"
        "/image/topics/byName/Payments/name\n"
        "/image/topics/byName/_internal\n"
        "/image/topics/byName/orders\n"
        "/image/topics/byName/orders/0\n"
        "/image/topics/byName/orders/id\n"
        "/image/topics/byName/orders/name\n")
    assert _run(state, "find", "/local") == "/local\n/local/commitId\n/local/version\n"
    assert _run(state, "find", "/").splitlines()[:4] == ["/", "/image", "/image/features",
                                                         "/image/features/metadataVersion"]
    state.set_working_directory("/image/features")
    # relative paths and globs are printed as typed, as Kafka does
    assert _run(state, "find") == ".\n./metadataVersion\n"
    assert _run(state, "find", "../f*") == "../f*\n../f*/metadataVersion\n"
    assert _run(state, "find", "nope", "..//features") == (
        "find: nope: no such file or directory.\n..//features\n..//features/metadataVersion\n")


def test_find_missing_child_fails_in_order() -> None:
    class Broken(MetadataNode):
        def child_names(self):
            return ["a", "ghost"]

        def child(self, name):
            return MetadataLeafNode("x") if name == "a" else None

    state = MetadataShellState(RootShellNode(Broken()))
    out = io.StringIO()
    with pytest.raises(RuntimeError, match="Expected ghost to be a valid child of /image, "):
        Commands(True).parse_command(["find", "/image"]).run(None, out, state)
    assert out.getvalue() == "/image\n/image/a\n"


HELP_75 = """\
Welcome to the Apache Kafka metadata shell.

usage:  {cat,cd,exit,find,help,history,ls,man,pwd,tree} ...

positional arguments:
  {cat,cd,exit,find,help,history,ls,man,pwd,tree}
    cat                  Show the contents of metadata files.
    cd                   Set the current working directory.
    exit                 Exit the metadata shell.
    find                 Search for nodes in the directory hierarchy.
    help                 Display this help message.
    history              Print command history.
    ls                   List metadata nodes.
    man                  Show the help text for a specific command.
    pwd                  Print the current working directory.
    tree                 Show the contents  of  metadata  nodes  in  a tree
                         structure.
"""


def test_help(state: MetadataShellState, monkeypatch: pytest.MonkeyPatch) -> None:
    # argparse4j lays help out at $COLUMNS - 5 (75 without a terminal), justifying full lines
    monkeypatch.setenv("COLUMNS", "80")
    assert _run(state, "help") == HELP_75
    monkeypatch.setenv("COLUMNS", "120")
    wide = _run(state, "help")
    assert "    tree                 Show the contents of metadata nodes in a tree structure.\n" \
        in wide
    monkeypatch.setenv("COLUMNS", "not a number")
    assert _run(state, "help") == HELP_75


@pytest.mark.parametrize("command, text", [
    ("ls", "ls: List metadata nodes.\n\nusage: ls [targets [targets ...]]\n\n"
           "positional arguments:\n"
           "  targets                The metadata node paths to list.\n"),
    ("cat", "cat: Show the contents of metadata files.\n\nusage: cat targets [targets ...]\n\n"
            "positional arguments:\n"
            "  targets                The metadata files to display.\n"),
    ("history", "history: Print command history.\n\nusage: history [numEntriesToShow]\n\n"
                "positional arguments:\n"
                "  numEntriesToShow       The number of entries to show.\n"),
    ("man", "man: Show the help text for a specific command.\n\nusage: man cmd\n\n"
            "positional arguments:\n"
            "  cmd                    The command to get help text for.\n"),
    ("find", "find: Search for nodes in the directory hierarchy.\n\n"
             "usage: find [paths [paths ...]]\n\n"
             "positional arguments:\n"
             "  paths                  The paths to start at.\n"),
    ("pwd", "pwd: Print the current working directory.\n\nusage: pwd\n"),
    ("exit", "exit: Exit the metadata shell.\n\nusage: exit\n"),
    ("nope", "man: unknown command nope. Type help to get a list of commands.\n"),
])
def test_man(state: MetadataShellState, monkeypatch: pytest.MonkeyPatch, command: str,
             text: str) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    assert _run(state, "man", command) == text


class _HistoryShell:
    def __init__(self, entries: list[tuple[int, str]]) -> None:
        self.entries = entries
        self.asked: list[int] = []

    def history(self, n: int):
        self.asked.append(n)
        return iter(self.entries[-n:] if n > 0 else [])


def test_history_format(state: MetadataShellState) -> None:
    shell = _HistoryShell([(0, "ls"), (9, "cd /image"), (12345, "pwd")])
    assert _run(state, "history", shell=shell) == "    0  ls\n    9  cd /image\n 12345  pwd\n"
    assert _run(state, "history", "1", shell=shell) == " 12345  pwd\n"
    assert shell.asked == [2**31 - 1, 1]
    with pytest.raises(RuntimeError, match="The history command requires a shell."):
        HistoryCommandHandler(3).run(None, io.StringIO(), state)


def test_exit(state: MetadataShellState) -> None:
    with pytest.raises(ExitShell) as e:
        _run(state, "exit")
    assert e.value.status == 0

