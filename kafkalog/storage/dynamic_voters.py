"""A KIP-853 dynamic quorum's initial controllers, as ``kafka-storage.sh format
--initial-controllers`` / ``--standalone`` name them: ``id@host:port:directoryId`` (an IPv6
host in brackets), comma separated.

Ported from Kafka 4.2 (``raft/.../DynamicVoter.java``, ``DynamicVoters.java``,
``VoterSet.toVotersRecord``): the parse errors are Kafka's texts; :meth:`DynamicVoters.
voters_record` is the ``VotersRecord`` the bootstrap snapshot carries (each voter with the
controller listener's endpoint and kraft.version support 0-1).

>>> v = DynamicVoters.parse("1@[::1]:9093:JEXY6aqzQY-32P5TStzaFg,0@ctl:9093:MvDxzVmcRsaTz33bUuRU6A")
>>> str(v), sorted(v.voters)
('0@ctl:9093:MvDxzVmcRsaTz33bUuRU6A,1@[::1]:9093:JEXY6aqzQY-32P5TStzaFg', [0, 1])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..checkpoint import Uuid
from ..decoders.jvm_order import java_hash_map_order
from ..usage import java_int

__all__ = ["DynamicVoter", "DynamicVoters", "VotersError"]


class VotersError(ValueError):
    """A malformed voter string (Kafka's ``IllegalArgumentException`` text)."""


@dataclass(frozen=True)
class DynamicVoter:
    """One initial controller: node id, host, port and its metadata directory's id."""

    directory_id: Uuid
    node_id: int
    host: str
    port: int

    @classmethod
    def parse(cls, text: str) -> DynamicVoter:
        """``DynamicVoter.parse``."""
        s = text.strip()
        at = s.find("@")
        if at < 0:
            raise VotersError("No @ found in dynamic voter string.")
        if at == 0:
            raise VotersError("Invalid @ at beginning of dynamic voter string.")
        try:
            node_id = java_int(s[:at])
        except ValueError:
            raise VotersError("Failed to parse node id in dynamic voter string.") from None
        if node_id < 0:
            raise VotersError(f"Invalid negative node id {node_id} in dynamic voter string.")
        s = s[at + 1:]
        if not s:
            raise VotersError("No hostname found after node id.")
        if s.startswith("["):
            end = s.find("]")
            if end < 0:
                raise VotersError("Hostname began with left bracket, but no right bracket was "
                                  "found.")
            host, s = s[1:end], s[end + 1:]
        else:
            colon = s.find(":")
            if colon < 0:
                raise VotersError("No colon following hostname could be found.")
            host, s = s[:colon], s[colon:]
        if not s.startswith(":"):
            raise VotersError("Port section must start with a colon.")
        s = s[1:]
        colon = s.find(":")
        if colon < 0:
            raise VotersError("No colon following port could be found.")
        try:
            port = java_int(s[:colon])
        except ValueError:
            raise VotersError("Failed to parse port in dynamic voter string.") from None
        if not 0 <= port <= 65535:
            raise VotersError(f"Invalid port {port} in dynamic voter string.")
        try:
            directory_id = Uuid.from_string(s[colon + 1:])
        except ValueError:
            raise VotersError("Failed to parse directory ID in dynamic voter string.") from None
        return cls(directory_id, node_id, host, port)

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.node_id}@{host}:{self.port}:{self.directory_id}"


class DynamicVoters:
    """The initial voters by node id (``DynamicVoters``: at least one, each id once)."""

    def __init__(self, voters: list[DynamicVoter]) -> None:
        if not voters:
            raise VotersError("No voters given.")
        by_id: dict[int, DynamicVoter] = {}
        for v in voters:
            if v.node_id in by_id:
                raise VotersError(f"Node id {v.node_id} was specified more than once.")
            by_id[v.node_id] = v
        self.voters: dict[int, DynamicVoter] = dict(sorted(by_id.items()))

    @classmethod
    def parse(cls, text: str) -> DynamicVoters:
        """``DynamicVoters.parse``: comma separated; empty entries are skipped (Java's
        ``String.split`` drops trailing empty strings, and empty ones are skipped anyway)."""
        return cls([DynamicVoter.parse(part) for part in text.strip().split(",") if part])

    def __str__(self) -> str:
        return ",".join(str(v) for v in self.voters.values())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DynamicVoters) and self.voters == other.voters

    def __hash__(self) -> int:
        return hash(tuple(self.voters.items()))

    def voters_record(self, controller_listener: str) -> dict[str, Any]:
        """``toVoterSet(listener).toVotersRecord(0)``: the voters in ``HashMap<Integer, ...>``
        order, each with ``controller_listener``'s endpoint and kraft.version support 0-1
        (``DynamicVoter.toVoterNode``)."""
        # ListenerName.normalised upper-cases the name (Locale.ROOT)
        name = controller_listener.upper()
        # toVoterSet fills a new HashMap<>() in node id order; VoterSet.fromMap copies it into
        # new HashMap<>(map), whose table is sized for the copy (tableSizeFor(n / 0.75 + 1))
        first = java_hash_map_order(self.voters, hash_of=lambda k: k)
        order = java_hash_map_order(first, hash_of=lambda k: k,
                                    initial_capacity=int(len(first) / 0.75 + 1.0))
        return {"version": 0, "voters": [
            {"voterId": v.node_id, "voterDirectoryId": str(v.directory_id),
             "endpoints": [{"name": name, "host": v.host, "port": v.port}],
             "kRaftVersionFeature": {"minSupportedVersion": 0, "maxSupportedVersion": 1}}
            for v in (self.voters[k] for k in order)]}
