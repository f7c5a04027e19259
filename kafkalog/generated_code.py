"""Python functions generated from schema tables: the source lines, the constants they name, and
the compile step.

kafkalog generates code where a generic walk over a schema would run per value on a hot path:
readers of coordinator messages (:mod:`kafkalog.decoders.message`), the server's response
writers (:mod:`kafkalog.server.response_writers`) and frame checks
(:mod:`kafkalog.server.bounds`). Each builds one function per schema class or version, once.
The source is always built from schema tables (ours, or kio's dataclass fields), never from
input bytes; every generator keeps its interpreting counterpart as the reference its tests
compare it with.

Example
-------
>>> src = GeneratedSource({"_k": 3})
>>> x = src.var()
>>> src.emit(1, f"{x} = a * {src.const(2)} + _k")
>>> src.emit(1, f"return {x}")
>>> src.function("def f(a):", "<example>")(5)
13
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["GeneratedSource"]


class GeneratedSource:
    """The lines of one generated function and the constants its code names (``consts``:
    names every function of the kind uses)."""

    def __init__(self, consts: Mapping[str, Any] | None = None) -> None:
        self.lines: list[str] = []
        self.consts: dict[str, Any] = dict(consts or {})
        self._n = 0

    def emit(self, indent: int, line: str) -> None:
        """Append ``line`` at ``indent`` levels (the function body is level 1)."""
        self.lines.append("    " * indent + line)

    def var(self) -> str:
        """A fresh local variable name."""
        self._n += 1
        return f"v{self._n}"

    def const(self, value: Any) -> str:
        """A fresh name the code can use for ``value``."""
        self._n += 1
        name = f"_c{self._n}"
        self.consts[name] = value
        return name

    def function(self, signature: str, filename: str) -> Any:
        """Compile the lines as the body of ``signature`` (``"def name(args):"``) and return the
        function; ``filename`` names it in tracebacks and profiles."""
        name = signature.split()[1].split("(")[0]
        code = signature + "\n" + "\n".join(self.lines) + "\n"
        scope = dict(self.consts)
        exec(compile(code, filename, "exec"), scope)  # noqa: S102 - built from schema tables
        return scope[name]
