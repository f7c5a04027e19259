"""Kafka's tool tables: ``ToolsUtils.prettyPrintTable`` (``tools/.../ToolsUtils.java``), as
``kafka-transactions.sh`` and ``kafka-metadata-quorum.sh`` print them.

>>> print(pretty_print_table(["ProducerId", "LastSequence"], [["7", "-1"]]).replace("\\t", "|"))
ProducerId|LastSequence|
7         |-1          |
<BLANKLINE>
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["pretty_print_table"]


def pretty_print_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """``ToolsUtils.prettyPrintTable`` as text: the header then each row, every cell padded to
    its column's widest value and followed by a tab, one line each."""
    widths = [len(h) for h in headers]
    for row in rows:
        for i in range(len(headers)):
            widths[i] = max(widths[i], len(row[i]))
    return "".join("".join(cell.ljust(w) + "\t" for cell, w in zip(line, widths)) + "\n"
                   for line in [list(headers), *rows])
