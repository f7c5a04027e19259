"""Producer id allocation that survives restarts (Kafka's ``ProducerIdManager``).

Kafka hands producer ids out in blocks of 1000 (``ProducerIdManager.PRODUCER_ID_BLOCK_SIZE``),
each block reserved durably before its first id is used (a ``ProducerIdsRecord`` in the KRaft
metadata log, ``/latest_producer_id_block`` in ZooKeeper), so that no id is ever given twice.
Here the end of the reserved block is kept in ``.kafkalog-producer-ids`` at the log dir root
(``{"version": 1, "block_end": N}``, written atomically; a broker ignores the file, as it
ignores ``.kafkalog-topics.json``). At open the first block starts above both that value and
every producer id found in the partitions' producer state (a directory written by a broker or by
the embedded engine has ids the file never saw), so a new producer never inherits another's
sequence numbers.

Threads: not thread-safe (the server's loop thread only).

Example
-------
>>> import tempfile
>>> ids = ProducerIdManager(tempfile.mkdtemp(), floor=41)
>>> ids.generate(), ids.generate()
(42, 43)
"""

from __future__ import annotations

import os
from pathlib import Path

from ..checkpoint import JsonStateFile

__all__ = ["ProducerIdManager", "PRODUCER_ID_BLOCK_SIZE", "PRODUCER_IDS_FILE"]

PRODUCER_ID_BLOCK_SIZE = 1000
PRODUCER_IDS_FILE = ".kafkalog-producer-ids"
_VERSION = 1


class ProducerIdManager:
    """Producer ids from durable blocks (see the module docstring).

    Parameters
    ----------
    root:
        The log dir root holding :data:`PRODUCER_IDS_FILE`.
    floor:
        The largest producer id already in use (-1: none); ids start above it.

    Raises
    ------
    CorruptCheckpointError
        The file exists and does not parse.
    """

    def __init__(self, root: str | os.PathLike[str], *, floor: int = -1) -> None:
        self._file = JsonStateFile(Path(root) / PRODUCER_IDS_FILE, "producer id block file",
                                   "block_end", version=_VERSION, kind=int, indent=None)
        self.path = self._file.path
        saved = self._file.load(_parse_block_end) or 0
        self._next = max(saved, floor + 1, 0)
        self._block_end = self._next  # nothing reserved yet in this run

    def generate(self) -> int:
        """The next unused producer id (a new block is reserved durably when needed)."""
        if self._next >= self._block_end:
            self._block_end = self._next + PRODUCER_ID_BLOCK_SIZE
            self._file.save(self._block_end)
        pid = self._next
        self._next += 1
        return pid


def _parse_block_end(end: int) -> int:
    """The ``block_end`` body: the first id of the next block (no id at or above it is used)."""
    if isinstance(end, bool) or end < 0:
        raise ValueError(f"block_end must be an int >= 0, found {end!r}")
    return end
