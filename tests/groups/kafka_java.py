"""Kafka's own consumer assignors, compiled from the local apache/kafka mirror, as a test peer.

The Java sources (``RangeAssignor``, ``RoundRobinAssignor``, ``StickyAssignor``,
``CooperativeStickyAssignor``, ``AbstractStickyAssignor`` and the few kafka-clients classes they
need, release branch 3.9) are read from the mirror with ``git show`` into a temporary directory
and compiled with ``javac`` next to the small stand-ins of ``tests/groups/java/stubs`` (slf4j
and three kafka-clients classes whose real versions pull in the whole client) and the harness
``tests/groups/java/AssignHarness.java``. Nothing from Kafka is copied into this repository.

Skips when ``javac`` or the mirror is missing (``KAFKA_MIRROR`` overrides the mirror path).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
MIRROR = Path(os.environ.get("KAFKA_MIRROR", "/work/.mirror/apache+kafka/repo"))
BRANCH = "3.9"
_BASE = "clients/src/main/java/org/apache/kafka/"
_CLASSES = [
    "clients/consumer/RangeAssignor", "clients/consumer/RoundRobinAssignor",
    "clients/consumer/StickyAssignor", "clients/consumer/CooperativeStickyAssignor",
    "clients/consumer/ConsumerPartitionAssignor", "clients/consumer/ConsumerGroupMetadata",
    "clients/consumer/internals/AbstractStickyAssignor",
    "clients/consumer/internals/AbstractPartitionAssignor", "clients/consumer/internals/Utils",
    "common/Cluster", "common/Node", "common/PartitionInfo", "common/TopicPartition",
    "common/Configurable", "common/KafkaException", "common/Uuid", "common/TopicIdPartition",
    "common/ClusterResource", "common/utils/CircularIterator", "common/utils/CollectionUtils",
    "common/utils/ByteUtils",
]

#: the KIP-848 server assignors: the mirror's trunk (October 2024, the 4.0 code line)
SERVER_BRANCH = "refs/heads/trunk"
_SERVER_FILES = [
    "group-coordinator/group-coordinator-api/src/main/java/org/apache/kafka/coordinator/group/api/"
    "assignor/",
    "group-coordinator/src/main/java/org/apache/kafka/coordinator/group/assignor/UniformAssignor",
    "group-coordinator/src/main/java/org/apache/kafka/coordinator/group/assignor/"
    "UniformHomogeneousAssignmentBuilder",
    "group-coordinator/src/main/java/org/apache/kafka/coordinator/group/assignor/"
    "UniformHeterogeneousAssignmentBuilder",
    "group-coordinator/src/main/java/org/apache/kafka/coordinator/group/assignor/RangeAssignor",
    "group-coordinator/src/main/java/org/apache/kafka/coordinator/group/assignor/RangeSet",
    "group-coordinator/src/main/java/org/apache/kafka/coordinator/group/assignor/AssignorHelpers",
    "group-coordinator/src/main/java/org/apache/kafka/coordinator/group/modern/"
    "MemberAssignmentImpl",
    "server-common/src/main/java/org/apache/kafka/server/common/TopicIdPartition",
    "clients/src/main/java/org/apache/kafka/common/Uuid",
    "clients/src/main/java/org/apache/kafka/common/KafkaException",
    "clients/src/main/java/org/apache/kafka/common/errors/ApiException",
    "clients/src/main/java/org/apache/kafka/common/annotation/InterfaceStability",
]

#: (strategy, partition counts, subscriptions, owned, generations, instance ids), optionally
#: followed by consumer racks (member -> client.rack), partition racks (topic -> replica racks of
#: each partition) and the test-only ``preferRackAwareLogic`` flag
Case = tuple[Any, ...]


def _require_tools() -> None:
    if shutil.which("javac") is None or shutil.which("java") is None:
        pytest.skip("javac/java not installed: Kafka's Java assignors cannot be run")
    if not (MIRROR / "HEAD").exists() and not (MIRROR / ".git").exists():
        pytest.skip(f"apache/kafka mirror not found at {MIRROR}")


def _javac(out: Path, sourcepath: list[Path], sources: list[Path]) -> None:
    proc = subprocess.run(
        ["javac", "-nowarn", "-encoding", "UTF-8", "-d", str(out), "-sourcepath",
         os.pathsep.join(str(p) for p in sourcepath), *map(str, sources)],
        capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"javac failed:\n{proc.stderr[-4000:]}")


def _git(*args: str) -> bytes:
    return subprocess.run(["git", "-C", str(MIRROR), *args], check=True,
                          capture_output=True).stdout


def build(workdir: Path) -> Path:
    """Compile the client assignors and the harness into ``workdir/out``; return that dir."""
    _require_tools()
    src = workdir / "src"
    files = list(_CLASSES)
    listing = _git("ls-tree", "--name-only", BRANCH, _BASE + "common/protocol/types/")
    files += [p[len(_BASE):-len(".java")] for p in listing.decode().split()]
    for f in files:
        dest = src / "org/apache/kafka" / (f + ".java")
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(_git("show", f"{BRANCH}:{_BASE}{f}.java"))
    out = workdir / "out"
    _javac(out, [src, HERE / "java" / "stubs"],
           [HERE / "java" / "AssignHarness.java",
            *(src / "org/apache/kafka/clients/consumer").glob("*.java")])
    return out


def build_server(workdir: Path) -> Path:
    """Compile the KIP-848 server assignors and their harness into ``workdir/out``."""
    _require_tools()
    src = workdir / "src"
    for entry in _SERVER_FILES:
        if entry.endswith("/"):
            names = [p for p in _git("ls-tree", "--name-only", SERVER_BRANCH, entry)
                     .decode().split() if p.endswith(".java")]
        else:
            names = [entry + ".java"]
        for name in names:
            rel = name.split("/src/main/java/", 1)[1]
            dest = src / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(_git("show", f"{SERVER_BRANCH}:{name}"))
    out = workdir / "out"
    _javac(out, [src, HERE / "java" / "stubs"], [HERE / "java" / "ServerAssignHarness.java"])
    return out


def run_server(classes: Path, cases: Sequence[tuple]) -> list[dict[str, list[tuple[str, int]]]
                                                             | str]:
    """Run ``(strategy, counts, subscriptions, owned, instance ids, topic ids)`` cases through
    the KIP-848 assignors (results sorted by topic and partition)."""
    lines = []
    for strategy, counts, subs, owned, instances, topic_ids in cases:
        lines.append(f"CASE {strategy}")
        for t, n in counts.items():
            lines.append(f"TOPIC {t} {topic_ids[t]} {n}")
        for m, topics in subs.items():
            tps = ",".join(f"{t}:{p}" for t, p in owned.get(m, ())) or "-"
            lines.append(f"MEMBER {m} {instances.get(m) or '-'} {','.join(topics) or '-'} {tps}")
        lines.append("END")
    return _parse(_java(classes, "org.apache.kafka.coordinator.group.assignor.ServerAssignHarness",
                        lines))


def _java(classes: Path, main: str, lines: list[str]) -> str:
    return subprocess.run(["java", "-cp", str(classes), main], input="\n".join(lines) + "\n",
                          capture_output=True, text=True, check=True).stdout


def run(classes: Path, cases: Sequence[Case]) -> list[dict[str, list[tuple[str, int]]] | str]:
    """Run ``cases`` (strategy, partition counts, subscriptions, owned, generations, instance
    ids[, consumer racks, partition racks, prefer rack-aware logic]) through Kafka's assignors;
    each result is member -> partitions in Kafka's list order, or the Java exception text."""
    lines = []
    for case in cases:
        strategy, counts, subs, owned, gens, instances = case[:6]
        racks = case[6] if len(case) > 6 and case[6] else {}
        replica_racks = case[7] if len(case) > 7 and case[7] else {}
        prefer = len(case) > 8 and case[8]
        lines.append(f"CASE {strategy}" + (" prefer" if prefer else ""))
        for t, n in counts.items():
            if t in replica_racks:
                per = "/".join(",".join(sorted(r)) or "~" for r in replica_racks[t])
                lines.append(f"PART {t} {n} {per}" if n else f"PART {t} {n}")
            else:
                lines.append(f"PART {t} {n}")
        for m, topics in subs.items():
            g = gens.get(m)
            inst = instances.get(m)
            tps = ",".join(f"{t}:{p}" for t, p in owned.get(m, ())) or "-"
            lines.append(f"MEMBER {m} {'-' if g is None else g} {inst or '-'} "
                         f"{','.join(topics) or '-'} {tps} {racks.get(m) or '-'}")
        lines.append("END")
    return _parse(_java(classes, "org.apache.kafka.clients.consumer.AssignHarness", lines))


def _parse(stdout: str) -> list[dict[str, list[tuple[str, int]]] | str]:
    results: list[dict[str, list[tuple[str, int]]] | str] = []
    current: dict[str, list[tuple[str, int]]] | None = None
    for line in stdout.splitlines():
        if line.startswith("ERROR"):
            results.append(line)
        elif line == "RESULT":
            current = {}
        elif line == "END":
            assert current is not None
            results.append(current)
            current = None
        else:
            member, parts = line.split(" ")
            assert current is not None
            current[member] = [] if parts == "-" else [
                (tp.rsplit(":", 1)[0], int(tp.rsplit(":", 1)[1])) for tp in parts.split(",")]
    return results
