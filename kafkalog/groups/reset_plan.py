"""Reset plans as CSV, the files ``kafka-consumer-groups.sh --reset-offsets --export`` writes
and ``--from-file`` reads (``CsvUtils``, ``OffsetsUtils.parseResetPlan``): one line per
partition, ``topic,partition,offset`` for a single group or ``group,topic,partition,offset``,
no header.

>>> export_csv("g", {("orders", 0): 5})
'orders,0,5\\n'
>>> parse_reset_plan("orders,0,5\\norders,1,7\\n", "g")
{('orders', 0): 5, ('orders', 1): 7}
"""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import KafkaLogError
from ..usage import java_split

__all__ = ["export_csv", "parse_reset_plan"]


def export_csv(group: str, plan: Mapping[tuple[str, int], int], *,
               with_group: bool = False) -> str:
    """``exportOffsetsToCsv``: a line per partition (``with_group``: the several-groups
    format)."""
    prefix = f"{group}," if with_group else ""
    return "".join(f"{prefix}{t},{p},{o}\n" for (t, p), o in plan.items())


def _fields(line: str, n: int) -> list[str] | None:
    parts = [f.strip() for f in line.split(",")]
    return parts if len(parts) == n else None


def parse_reset_plan(text: str, group: str, *, path: str = "<plan>"
                     ) -> dict[tuple[str, int], int] | None:
    """The plan of ``group`` in a CSV reset plan, or None when the file holds none for it.

    The first line decides the format as Kafka's ``parseResetPlan`` does: three fields, the
    single-group format (every line for ``group``); else ``group,topic,partition,offset``.

    Raises
    ------
    KafkaLogError
        A line that does not parse (the file and line number named).
    """
    lines = java_split(text, "\n")
    single = bool(lines) and _fields(lines[0], 3) is not None
    plan: dict[str, dict[tuple[str, int], int]] = {}
    for n, line in enumerate(lines, 1):
        f = _fields(line, 3 if single else 4)
        try:
            if f is None:
                raise ValueError
            g, topic, partition, offset = ([group] + f) if single else f
            plan.setdefault(g, {})[(topic, int(partition))] = int(offset)
        except ValueError:
            shape = "topic,partition,offset" if single else "group,topic,partition,offset"
            raise KafkaLogError(f"{path}:{n}: not a reset plan line ({shape} expected): "
                                f"{line!r}") from None
    return plan.get(group)
