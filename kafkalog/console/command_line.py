"""What Kafka's console tools share to read their property options and files:
``CommandLineUtils.parseKeyValueArgs`` (server-common ``util/CommandLineUtils.java``) and
``Utils.loadProps`` (clients ``common/utils/Utils.java``), Kafka 4.2.

>>> parse_key_value_args(["print.key=true", "key.separator==", "flag"])
{'print.key': 'true', 'key.separator': '=', 'flag': ''}
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..checkpoint import read_properties

__all__ = ["parse_key_value_args", "load_props"]


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
