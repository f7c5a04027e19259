"""Splitting a typed line into words as JLine 3's ``DefaultParser`` does (the shell's parser).

Words are separated by whitespace (``Character.isWhitespace``); ``'...'`` and ``"..."`` quote
(the quotes are removed from a word that starts with one, kept inside a word); a backslash
escapes the next character (and is removed, in quotes too). An unclosed quote runs to the end
of the line. When the line is empty or ends with whitespace, the last word is ``""`` (the word
at the cursor, which completion uses; the command parser drops it).

>>> parse_words('cat "/image/a b" x\\\\ y ')
['cat', '/image/a b', 'x y', '']
>>> parse_words("")
['']
"""

from __future__ import annotations

from .java_compat import java_is_whitespace

__all__ = ["parse_words"]

_QUOTES = "'\""
_ESCAPE = "\\"


def _is_escaped(line: str, pos: int) -> bool:
    # JLine: escaped iff the char before is an unescaped escape char, i.e. an odd number of
    # backslashes precede ``pos``
    n = 0
    while pos - n - 1 >= 0 and line[pos - n - 1] == _ESCAPE:
        n += 1
    return n % 2 == 1


def _is_escape_char(line: str, pos: int) -> bool:
    return line[pos] == _ESCAPE and not _is_escaped(line, pos)


def parse_words(line: str) -> list[str]:
    """The words of ``line`` with the cursor at its end (``ParsedLine.words()``)."""
    words: list[str] = []
    current: list[str] = []
    quote_start = -1
    quoted_word = False
    for i, c in enumerate(line):
        if quote_start < 0 and c in _QUOTES and not _is_escaped(line, i):
            # start of a quoted block
            quote_start = i
            if not current:
                quoted_word = True
            else:
                current.append(c)
        elif quote_start >= 0 and line[quote_start] == c and not _is_escaped(line, i):
            # end of the quoted block
            if not quoted_word:
                current.append(c)
            quote_start = -1
            quoted_word = False
        elif quote_start < 0 and not _is_escaped(line, i) and java_is_whitespace(c):
            if current:
                words.append("".join(current))
                current = []
        elif not _is_escape_char(line, i):
            current.append(c)
    # the cursor is at the end of the line: the word there is added even when empty
    words.append("".join(current))
    return words
