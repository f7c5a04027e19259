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

__all__ = ["ArgumentParser", "UsageError"]


class UsageError(Exception):
    """Bad arguments; the message is what to print (``<prog>: error: ...``)."""


class ArgumentParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` whose errors raise :class:`UsageError`."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: error: {message}")
