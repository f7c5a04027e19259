"""The command line's usage errors: an ``argparse`` parser that raises instead of exiting, so
that each subcommand's ``main(argv) -> int`` returns its usage status (2, or Kafka's 1 for
``dump-segments``) instead of ending the process.

>>> p = ArgumentParser(prog="kafkalog x")
>>> _ = p.add_argument("--n", type=int)
>>> try:
...     p.parse_args(["--n", "one"])
... except UsageError as e:
...     print(e)
kafkalog x: error: argument --n: invalid int value: 'one'
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from typing import IO

__all__ = ["ArgumentParser", "UsageError", "parse_args", "key_value_pairs", "java_split",
           "java_trim", "replace_unencodable", "EXIT_USAGE"]

#: the exit status of bad arguments (kafkalog's subcommands; dump-segments uses Kafka's 1)
EXIT_USAGE = 2


def java_trim(s: str) -> str:
    """Java's ``String.trim()``: strips every char ``<= ' '`` (controls included) from both
    ends, not Python's Unicode whitespace.

    >>> java_trim("\\t ls \\x00"), java_trim("\\u00a0x")
    ('ls', '\\xa0x')
    """
    start, end = 0, len(s)
    while start < end and s[start] <= " ":
        start += 1
    while end > start and s[end - 1] <= " ":
        end -= 1
    return s[start:end]


def replace_unencodable(stream: IO[str]) -> None:
    """Java's PrintStream writes '?' for characters the console encoding cannot hold: never
    fail on them (a payload or a topic name decoded from bytes can hold anything)."""
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None:
        try:
            reconfigure(errors="replace")
        except (ValueError, OSError):
            pass


def java_split(text: str, sep: str = ",") -> list[str]:
    """Java's ``String.split`` of a plain separator, as Kafka's tools split their arguments:
    trailing empty strings are dropped (all of them for ``",,"``), and ``""`` stays ``[""]``.

    >>> java_split("a,,b,,"), java_split(",,"), java_split("")
    (['a', '', 'b'], [], [''])
    """
    parts = text.split(sep)
    while parts and parts[-1] == "" and (len(parts) > 1 or text != ""):
        parts.pop()
    return parts


_JAVA_INT = re.compile(r"[+-]?[0-9]+")


def java_int(text: str) -> int:
    """``Integer.parseInt``: an optional sign and decimal digits within 32 bits; ValueError
    with Java's NumberFormatException text otherwise.

    >>> java_int("+42"), java_int("-7")
    (42, -7)
    """
    if _JAVA_INT.fullmatch(text):
        value = int(text)
        if -(1 << 31) <= value < (1 << 31):
            return value
    raise ValueError(f'For input string: "{text}"')


def java_short(text: str) -> int:
    """``Short.parseShort``: :func:`java_int` within 16 bits (ValueError otherwise)."""
    value = java_int(text)
    if not -(1 << 15) <= value < (1 << 15):
        raise ValueError(f'Value out of range. Value:"{text}" Radix:10')
    return value


class UsageError(Exception):
    """Bad arguments; the message is what to print (``<prog>: error: ...``)."""


class ArgumentParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` whose errors raise :class:`UsageError`."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: error: {message}")


def key_value_pairs(items: Sequence[str], option: str) -> dict[str, str]:
    """``KEY=VALUE`` arguments of ``option`` (``--config``...) as a dict, the key stripped; a
    later key wins.

    >>> key_value_pairs(["segment.bytes=1024", " a = b"], "--config")
    {'segment.bytes': '1024', 'a': ' b'}

    Raises
    ------
    UsageError
        An item without ``=`` or with an empty key, naming ``option``.
    """
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"{option} expects KEY=VALUE, found {item!r}")
        out[key.strip()] = value
    return out


def parse_args(parser: argparse.ArgumentParser, argv: Sequence[str] | None, err: IO[str]
               ) -> tuple[argparse.Namespace | None, int]:
    """Parse a subcommand's ``argv`` (``sys.argv[2:]`` when None): ``(args, 0)``, or
    ``(None, status)`` after a usage error (its message written to ``err``, status 2) or
    ``--help`` (status 0)."""
    try:
        return parser.parse_args(list(sys.argv[2:] if argv is None else argv)), 0
    except UsageError as e:
        err.write(f"{e}\n")
        return None, EXIT_USAGE
    except SystemExit as e:  # --help
        return None, int(e.code or 0) if isinstance(e.code, int) else EXIT_USAGE
