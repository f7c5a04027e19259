"""Kafka's CommandTest, and the parser's answers to mistyped lines (argparse4j's texts)."""

from __future__ import annotations

import io

import pytest

from kafkalog.metadata_shell.cat_command import CatCommandHandler
from kafkalog.metadata_shell.commands import Commands, command_types
from kafkalog.metadata_shell.find_command import FindCommandHandler
from kafkalog.metadata_shell.java_compat import JAVA_INT_MAX
from kafkalog.metadata_shell.ls_command import LsCommandHandler
from kafkalog.metadata_shell.navigation_commands import CdCommandHandler, PwdCommandHandler
from kafkalog.metadata_shell.session_commands import (
    ErroneousCommandHandler,
    ExitCommandHandler,
    HelpCommandHandler,
    HistoryCommandHandler,
    ManCommandHandler,
    NoOpCommandHandler,
)
from kafkalog.metadata_shell.tree_command import TreeCommandHandler

ALL = "'cat', 'cd', 'exit', 'find', 'help', 'history', 'ls', 'man', 'pwd', 'tree'"


def _parse(*words: str) -> object:
    return Commands(True).parse_command(list(words))


def test_parse_commands() -> None:
    assert _parse("cat", "foo") == CatCommandHandler(["foo"])
    assert _parse("cd") == CdCommandHandler(None)
    assert _parse("cd", "foo") == CdCommandHandler("foo")
    assert _parse("exit") == ExitCommandHandler()
    assert _parse("help") == HelpCommandHandler()
    assert _parse("history", "3") == HistoryCommandHandler(3)
    assert _parse("history") == HistoryCommandHandler(JAVA_INT_MAX)
    assert _parse("ls") == LsCommandHandler([])
    assert _parse("ls", "abc", "123") == LsCommandHandler(["abc", "123"])
    assert _parse("pwd") == PwdCommandHandler()


def test_parse_invalid_command() -> None:
    assert _parse("blah") == ErroneousCommandHandler(
        f"invalid choice: 'blah' (choose from {ALL})")


def test_empty_command_line() -> None:
    assert _parse("") == NoOpCommandHandler()
    assert _parse() == NoOpCommandHandler()


def test_handlers_are_values() -> None:
    assert CatCommandHandler(["a"]) != CatCommandHandler(["b"])
    assert CatCommandHandler(["a"]) != TreeCommandHandler(["a"])
    assert HistoryCommandHandler(3) != HistoryCommandHandler(4)
    assert PwdCommandHandler() != HelpCommandHandler()


def test_registry_is_sorted_and_complete() -> None:
    types = command_types()
    assert list(types) == ["cat", "cd", "exit", "find", "help", "history", "ls", "man", "pwd",
                           "tree"]
    shell_only = {name for name, t in types.items() if t.shell_only}
    assert shell_only == {"cd", "exit", "help", "history", "man", "pwd"}


def test_more_commands_and_trailing_empty_words() -> None:
    assert _parse("find") == FindCommandHandler([])
    assert _parse("find", "/a", "b") == FindCommandHandler(["/a", "b"])
    assert _parse("tree", "x", "y") == TreeCommandHandler(["x", "y"])
    assert _parse("man", "ls") == ManCommandHandler("ls")
    # JLine adds an empty last word after a trailing space: dropped
    assert _parse("ls", "a", "", "") == LsCommandHandler(["a"])
    # an empty word inside the line is kept
    assert _parse("ls", "", "a") == LsCommandHandler(["", "a"])
    # a negative number is a value, not a flag
    assert _parse("history", "-5") == HistoryCommandHandler(-5)
    assert _parse("history", "+5") == HistoryCommandHandler(5)
    # "--" ends the flags
    assert _parse("cat", "--", "-x") == CatCommandHandler(["-x"])


@pytest.mark.parametrize("words, message", [
    (["cat"], "too few arguments"),
    (["tree"], "too few arguments"),
    (["man"], "too few arguments"),
    (["--"], "too few arguments"),
    (["man", "ls", "cd"], "unrecognized arguments: 'cd'"),
    (["cd", "a", "b"], "unrecognized arguments: 'b'"),
    (["pwd", "x", "-y"], "unrecognized arguments: 'x -y'"),
    (["ls", "-l"], "unrecognized arguments: '-l'"),
    (["ls", "--long"], "unrecognized arguments: '--long'"),
    (["--", "ls"], "unrecognized arguments: 'ls'"),
    (["-x"], "unrecognized arguments: '-x'"),
    (["history", "abc"],
     "argument numEntriesToShow: could not convert 'abc' to Integer "
     "(For input string: \"abc\")"),
    (["history", "2147483648"],
     "argument numEntriesToShow: could not convert '2147483648' to Integer "
     "(For input string: \"2147483648\")"),
    (["history", "3", "4"], "unrecognized arguments: '4'"),
    (["ls", "-h=3"], "argument -h/--help: ignore implicit argument '3'"),
    # argparse4j resolves a unique prefix; Kafka's shell refuses it
    (["ca", "x"], "invalid choice: 'ca': did you mean 'cat'?"),
    (["pw"], "invalid choice: 'pw': did you mean 'pwd'?"),
    (["hi"], "invalid choice: 'hi': did you mean 'history'?"),
    (["c"], "ambiguous command: c could match cat, cd"),
    (["h"], "ambiguous command: h could match help, history"),
    (["", "ls"], f"invalid choice: '' (choose from {ALL})"),
])
def test_parse_errors(words: list[str], message: str) -> None:
    handler = _parse(*words)
    assert handler == ErroneousCommandHandler(message)
    out = io.StringIO()
    handler.run(None, out, None)
    assert out.getvalue() == message + "\n"


def test_non_interactive_commands() -> None:
    commands = Commands(False)
    assert commands.parse_command(["ls", "/image"]) == LsCommandHandler(["/image"])
    for shell_only in ("cd", "pwd", "history", "help", "man", "exit"):
        assert commands.parse_command([shell_only]) == ErroneousCommandHandler(
            f"invalid choice: '{shell_only}' (choose from 'cat', 'find', 'ls', 'tree')")
    # with only cat/find/ls/tree, "c" is no longer ambiguous: cat, refused as a prefix
    assert commands.parse_command(["c", "x"]) == ErroneousCommandHandler(
        "invalid choice: 'c': did you mean 'cat'?")


def test_command_help_flag_prints_its_help() -> None:
    out = io.StringIO()
    handler = Commands(True).parse_command(["ls", "-h"], help_out=out)
    assert handler == NoOpCommandHandler()
    assert out.getvalue() == (
        "usage:  ls [-h] [targets [targets ...]]\n"
        "\n"
        "positional arguments:\n"
        "  targets                The metadata node paths to list.\n"
        "\n"
        "optional arguments:\n"
        "  -h, --help             show this help message and exit\n")
    # --he is a unique prefix of --help; -hx runs -h first
    for flags in (["--he"], ["-hx"], ["x", "--help"]):
        out = io.StringIO()
        assert Commands(True).parse_command(["cd", *flags], help_out=out) == NoOpCommandHandler()
        assert out.getvalue().startswith("usage:  cd [-h] [target]\n")

