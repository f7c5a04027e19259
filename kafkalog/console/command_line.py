"""What Kafka's console tools share to read their property options and files:
``CommandLineUtils.parseKeyValueArgs`` (server-common ``util/CommandLineUtils.java``) and
``Utils.loadProps`` (clients ``common/utils/Utils.java``), Kafka 4.2.

>>> parse_key_value_args(["print.key=true", "key.separator==", "flag"])
{'print.key': 'true', 'key.separator': '=', 'flag': ''}
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path

from ..checkpoint import read_properties
from ..usage import java_int

__all__ = ["parse_key_value_args", "load_props", "java_number_arg"]


def parse_key_value_args(args: Sequence[str] | None) -> dict[str, str]:
    """``k=v`` arguments as properties: split at the first ``=``; ``k`` or ``k=`` is ``k``
    with an empty value; a later argument overrides an earlier one."""
    props: dict[str, str] = {}
    for arg in args or ():
        key, _, value = arg.partition("=")
        props[key] = value
    return props


def load_props(path: str) -> dict[str, str]:
    """A properties file (``Properties.load``: ISO-8859-1, escapes, continuations).

    Raises
    ------
    OSError
        The file cannot be read.
    """
    return read_properties(Path(path).read_bytes())[0]


def java_number_arg(bits: int, option: str) -> Callable[[str], int]:
    """An argparse ``type`` for a jopt-simple ``Integer`` (``bits=32``) or ``Long`` (64)
    option: Java's parse, and jopt-simple's text for what does not parse."""
    def parse(text: str) -> int:
        try:
            value = java_int(text) if bits == 32 else int(text, 10)
        except ValueError:
            value = None
        if value is None or not -(1 << (bits - 1)) <= value < (1 << (bits - 1)):
            raise argparse.ArgumentTypeError(
                f"Cannot parse argument '{text}' of option {option}")
        return value
    return parse
