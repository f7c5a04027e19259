"""The regular expressions of KIP-848 subscriptions (``SubscribedTopicRegex``), compiled as Kafka
compiles them.

Kafka's group coordinator compiles a member's expression with RE2/J (``com.google.re2j``, the
Java port of Go's ``regexp/syntax``) and subscribes the member to every topic the expression
matches in full. Python's ``re`` accepts a different language (lookaround, backreferences,
``{,n}``, possessive quantifiers...), so the expressions are compiled here with RE2 itself
(``google-re2``, the C++ library RE2/J was ported from): the same syntax is accepted and a topic
matches exactly when it matches on a broker.

An invalid expression is refused with RE2/J's description of the error
(``PatternSyntaxException.getDescription()``, which Kafka puts in its
INVALID_REGULAR_EXPRESSION message): RE2 reports the same errors under C++ names, translated by
:data:`RE2J_DESCRIPTIONS`.

>>> compile_subscription_regex("orders-.*").fullmatch("orders-eu") is not None
True
>>> try:
...     compile_subscription_regex("a(?=b)")
... except InvalidSubscriptionRegex as e:
...     print(e.description)
invalid or unsupported Perl syntax
"""

from __future__ import annotations

import functools
from typing import Any

import re2

__all__ = ["compile_subscription_regex", "InvalidSubscriptionRegex", "RE2J_DESCRIPTIONS"]

#: RE2's error texts (``RE2::ErrorCode``) -> RE2/J's (``Parser.ERR_*``, Go's ``ErrorCode``)
RE2J_DESCRIPTIONS = {
    "unexpected error": "regexp/syntax: internal error",
    "invalid escape sequence": "invalid escape sequence",
    "invalid character class": "invalid character class",
    "invalid character class range": "invalid character class range",
    "missing ]": "missing closing ]",
    "missing )": "missing closing )",
    "unexpected )": "unexpected )",
    "trailing \\": "trailing backslash at end of expression",
    "no argument for repetition operator": "missing argument to repetition operator",
    "invalid repetition size": "invalid repeat count",
    "bad repetition operator": "invalid nested repetition operator",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "invalid UTF-8": "invalid UTF-8",
    "invalid named capture group": "invalid named capture",
}


class InvalidSubscriptionRegex(ValueError):
    """The expression does not compile; ``description`` is RE2/J's text for the error."""

    def __init__(self, description: str) -> None:
        super().__init__(description)
        self.description = description


_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # the error is raised, not also logged to stderr by RE2


@functools.lru_cache(maxsize=1024)
def compile_subscription_regex(regex: str) -> Any:
    """The compiled expression (its ``fullmatch(topic)`` decides a subscription).

    Raises
    ------
    InvalidSubscriptionRegex
        With RE2/J's description of what is wrong.
    """
    try:
        return re2.compile(regex, _OPTIONS)
    except re2.error as e:
        raise InvalidSubscriptionRegex(_description(e)) from None


def _description(error: Exception) -> str:
    text = error.args[0] if error.args else ""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    # RE2's message is "<error code text>" or "<error code text>: <the offending part>"
    for code in sorted(RE2J_DESCRIPTIONS, key=len, reverse=True):
        if text == code or text.startswith(code + ": "):
            return RE2J_DESCRIPTIONS[code]
    return text
