"""A keyed timer without threads: Kafka's ``CoordinatorTimer`` for a sans-IO coordinator.

``schedule(key, delay_ms, fn)`` arms (or re-arms: one timer per key) a task due at
``now + delay_ms``; ``cancel(key)`` disarms it; :meth:`poll` runs, in deadline order (ties in
scheduling order), every task due at the given time, including tasks that running ones schedule
for that time or earlier. Nothing happens between calls: the caller asks :meth:`next_deadline`
when to call again.

>>> t = KeyedTimer()
>>> fired = []
>>> t.schedule("a", 100, lambda: fired.append("a"), now=0)
>>> t.schedule("b", 50, lambda: fired.append("b"), now=0)
>>> t.next_deadline(), t.poll(60), fired
(50, 1, ['b'])
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any

__all__ = ["KeyedTimer"]


class KeyedTimer:
    """Deadlines by key (``CoordinatorTimer``: scheduling a key again replaces its task)."""

    def __init__(self) -> None:
        self._tasks: dict[str, tuple[int, int, Callable[[], Any]]] = {}
        self._heap: list[tuple[int, int, str]] = []
        self._seq = 0

    def schedule(self, key: str, delay_ms: int, fn: Callable[[], Any], *, now: int) -> None:
        """Run ``fn`` at ``now + delay_ms`` (replacing the task of ``key``)."""
        deadline = now + max(0, int(delay_ms))
        self._seq += 1
        self._tasks[key] = (deadline, self._seq, fn)
        heapq.heappush(self._heap, (deadline, self._seq, key))

    def cancel(self, key: str) -> None:
        self._tasks.pop(key, None)

    def is_scheduled(self, key: str) -> bool:
        return key in self._tasks

    def deadline(self, key: str) -> int | None:
        task = self._tasks.get(key)
        return None if task is None else task[0]

    def next_deadline(self) -> int | None:
        """The earliest deadline (clock ms), or None when nothing is armed."""
        self._drop_stale()
        return self._heap[0][0] if self._heap else None

    def _drop_stale(self) -> None:
        heap, tasks = self._heap, self._tasks
        while heap:
            deadline, seq, key = heap[0]
            task = tasks.get(key)
            if task is not None and task[1] == seq:
                return
            heapq.heappop(heap)

    def poll(self, now: int) -> int:
        """Run every task due at ``now``; return how many ran."""
        ran = 0
        while True:
            self._drop_stale()
            if not self._heap or self._heap[0][0] > now:
                return ran
            _, _, key = heapq.heappop(self._heap)
            _, _, fn = self._tasks.pop(key)
            fn()
            ran += 1

    def __len__(self) -> int:
        return len(self._tasks)
