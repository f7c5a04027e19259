"""The few ``java.lang.String`` and ``Character`` rules the shell's output depends on.

Kafka's shell runs on Java strings: lengths (``ls`` column widths, argparse4j's help layout) are
counted in UTF-16 code units, ``trim`` strips every char up to ``' '``, ``Character.isWhitespace``
is not ``str.isspace`` (no-break spaces are not whitespace), and sorting is
``String.compareTo`` (:func:`~kafkalog.cluster.image.node.java_string_key`).

>>> java_len("abc"), java_len("\\U0001F600")
(3, 2)
>>> java_trim("\\t ls \\x00"), java_is_whitespace("\\u00a0")
('ls', False)
"""

from __future__ import annotations

import re
import unicodedata

from kafkalog.cluster.image.node import java_string_key
from kafkalog.usage import java_trim

__all__ = [
    "JAVA_INT_MAX",
    "java_len",
    "java_trim",
    "java_is_whitespace",
    "java_string_key",
    "java_int_value_of",
    "JAVA_DOT",
]

#: Integer.MAX_VALUE
JAVA_INT_MAX = (1 << 31) - 1

#: what ``.`` matches in a java.util.regex pattern without DOTALL (every line terminator is out)
JAVA_DOT = "[^\\n\\r\\u0085\\u2028\\u2029]"

# Character.isWhitespace: the ASCII controls below, and space/line/paragraph separators other
# than the three no-break spaces
_JAVA_WS_CONTROLS = frozenset("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f")
_NO_BREAK_SPACES = frozenset("\u00a0\u2007\u202f")
# Integer.parseInt takes an optional sign and Character.digit(c, 10) digits, i.e. any Unicode
# decimal digit of the BMP (it reads UTF-16 units: an astral digit is two non-digits)
_JAVA_INT = re.compile(r"[+-]?\d+")


def java_len(s: str) -> int:
    """``String.length()``: UTF-16 code units (an astral character counts 2)."""
    n = len(s)
    if s.isascii():
        return n
    return n + sum(1 for c in s if ord(c) > 0xFFFF)


def java_is_whitespace(c: str) -> bool:
    """``Character.isWhitespace`` of one character."""
    if c in _JAVA_WS_CONTROLS:
        return True
    if c in _NO_BREAK_SPACES:
        return False
    return unicodedata.category(c) in ("Zs", "Zl", "Zp")


def java_int_value_of(text: str) -> int:
    """``Integer.valueOf(String)``; ValueError with NumberFormatException's message otherwise.

    >>> java_int_value_of("+7"), java_int_value_of("-12")
    (7, -12)
    """
    if _JAVA_INT.fullmatch(text) and all(ord(c) < 0x10000 for c in text):
        value = int(text)
        if -(1 << 31) <= value <= JAVA_INT_MAX:
            return value
    raise ValueError(f'For input string: "{text}"')


def java_long_value_of(text: str) -> int:
    """``Long.valueOf(String)``; ValueError with NumberFormatException's message otherwise.

    >>> java_long_value_of("9223372036854775807")
    9223372036854775807
    """
    if _JAVA_INT.fullmatch(text) and all(ord(c) < 0x10000 for c in text):
        value = int(text)
        if -(1 << 63) <= value < (1 << 63):
            return value
    raise ValueError(f'For input string: "{text}"')
