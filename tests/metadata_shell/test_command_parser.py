"""The argparse4j 0.7.0 subset: layout of usage and help screens, wrapping, parse rules."""

from __future__ import annotations

import doctest
import importlib
import io
import pkgutil

import pytest

import kafkalog.metadata_shell as package
from kafkalog.metadata_shell.command_parser import (
    ArgumentParser,
    ArgumentParserError,
    HelpScreenError,
    IntegerType,
    UnrecognizedCommandError,
    format_width,
    wrap,
)


def test_module_doctests() -> None:
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        assert doctest.testmod(module).failed == 0, info.name
    assert doctest.testmod(package).failed == 0


def test_wrap_justifies_full_lines() -> None:
    text = "Show the contents of metadata nodes in a tree structure."
    # the first line is filled to the width by widening the middle blocks of spaces
    assert wrap(text, 75, 25, "", " " * 25) == (
        "Show the contents  of  metadata  nodes  in  a tree\n" + " " * 25 + "structure.")
    assert wrap(text, 200, 25) == text
    # a newline in the text starts a new (indented) line
    assert wrap("ab\ncd", 75, 0, "", "  ") == "ab\n  cd"
    # one space to spread over 2 blocks goes to the second (middle) one
    assert wrap("aaa bbb ccc dddd", 12) == "aaa bbb  ccc\ndddd"


def test_format_width(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    assert format_width() == 95
    monkeypatch.setenv("COLUMNS", "5")
    assert format_width() == 75
    monkeypatch.setenv("COLUMNS", "wide")
    assert format_width() == 75


def test_usage_wraps_and_long_prog_gets_its_own_line() -> None:
    p = ArgumentParser("some-really-long-program-name-here", False)
    p.add_argument("--alpha", required=True)
    p.add_argument("items", nargs="+")
    assert p.format_usage(40) == ("usage: some-really-long-program-name-here\n"
                                  "       --alpha ALPHA\n"
                                  "       items [items ...]\n")
    q = ArgumentParser("prog", True)
    q.add_argument("--beta", "-b", nargs="?")
    q.add_argument("x", nargs=2)
    assert q.format_usage(75) == "usage: prog [-h] [--beta [BETA]] x x\n"
    assert q.format_usage(20) == ("usage: prog [-h]\n"
                                  "            [--beta [BETA]]\n"
                                  "            x x\n")


def test_parse_rules() -> None:
    p = ArgumentParser("prog", True)
    p.add_argument("--beta", "-b")
    p.add_argument("--count", type=IntegerType())
    p.add_argument("first")
    p.add_argument("rest", nargs="*")
    assert p.parse_args(["a"]) == {"first": "a", "rest": [], "beta": None, "count": None}
    assert p.parse_args(["-bX", "a", "b", "--count=-3", "c"]) == {
        "first": "a", "rest": ["b", "c"], "beta": "X", "count": -3}
    assert p.parse_args(["--be", "Y", "--", "-a", "--count"])["rest"] == ["--count"]
    with pytest.raises(ArgumentParserError, match="^too few arguments$"):
        p.parse_args([])
    with pytest.raises(ArgumentParserError, match="^argument --beta/-b: expected one argument$"):
        p.parse_args(["a", "--beta"])
    with pytest.raises(ArgumentParserError, match="^ambiguous option: -- could match --beta, "):
        p.parse_args(["a", "--=1"])
    with pytest.raises(ArgumentParserError, match="^argument --count: could not convert '1.5' "
                                                  "to Integer"):
        p.parse_args(["a", "--count", "1.5"])
    out = io.StringIO()
    with pytest.raises(HelpScreenError):
        p.parse_args(["-h"], help_out=out)
    assert out.getvalue() == (
        "usage: prog [-h] [--beta BETA] [--count COUNT] first [rest [rest ...]]\n"
        "\n"
        "positional arguments:\n"
        "  first\n"
        "  rest\n"
        "\n"
        "optional arguments:\n"
        "  -h, --help             show this help message and exit\n"
        "  --beta BETA, -b BETA\n"
        "  --count COUNT\n")


def test_unknown_command_candidates() -> None:
    p = ArgumentParser("tool", False)
    sub = p.add_subparsers("command")
    for name in ("list", "lost", "delete"):
        sub.add_parser(name, help=f"{name} things")
    with pytest.raises(UnrecognizedCommandError) as e:
        p.parse_args(["lust"])
    err = io.StringIO()
    p.handle_error(e.value, err, 75)
    assert err.getvalue() == (
        "usage: tool {list,lost,delete} ...\n"
        "tool: error: invalid choice: 'lust' (choose from 'list', 'lost', 'delete')\n"
        "\nDid you mean:\n\tlist\n\tlost\n")
    assert p.format_help(75) == (
        "usage: tool {list,lost,delete} ...\n"
        "\n"
        "positional arguments:\n"
        "  {list,lost,delete}\n"
        "    list                 list things\n"
        "    lost                 lost things\n"
        "    delete               delete things\n")


def test_integer_type() -> None:
    to_int = IntegerType()
    assert to_int("42") == 42 and to_int("-0") == 0 and to_int("\u0663") == 3
    for bad in ("", "+", "1_000", " 1", "0x10", "2147483648", "\U0001d7ce"):
        with pytest.raises(ValueError) as e:
            to_int(bad)
        assert str(e.value) == f'For input string: "{bad}"'
