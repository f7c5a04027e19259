"""Dependencies point one way: native <- records <- index <- segment <- log <- log_dir <-
groups/cluster <- tools/server/spark <- cli.

Every module of the package is parsed (not imported) and each import of a kafkalog module must
name a module of the same or a lower layer. A new module must be given a layer here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# layer of each kafkalog module (a package entry covers its submodules)
LAYERS: dict[str, int] = {
    "kafkalog.errors": 0,
    "kafkalog.java_utf8": 0,  # bytes to text as Java decodes UTF-8 (ill-formed input)
    "kafkalog.generated_code": 0,  # generated functions: source lines, constants, compile
    "kafkalog.native": 0,
    "kafkalog.records": 1,
    "kafkalog.files": 1,
    "kafkalog.file_copy": 1,
    "kafkalog.page_pool": 1,  # (below file_copy, which uses it; imports nothing of ours)
    "kafkalog.clock": 1,
    "kafkalog.config": 1,
    "kafkalog.usage": 1,  # the command line's usage errors (argparse that raises)
    "kafkalog.decoders": 1,
    "kafkalog.index": 2,
    "kafkalog.checkpoint": 2,
    "kafkalog.producer_snapshot": 2,
    "kafkalog.lock": 2,
    "kafkalog.segment_append_state": 2,  # a segment's per-append state (and its C append)
    "kafkalog.segment": 3,
    "kafkalog.segments": 3,
    "kafkalog.leader_epoch": 3,
    "kafkalog.epoch_lineage": 3,  # remote segments vs a leader-epoch lineage (Kafka's RLM rule)
    "kafkalog.retention": 3,
    "kafkalog.producer_state": 3,
    "kafkalog.transactions": 3,
    "kafkalog.log_validator": 3,
    "kafkalog.loader": 4,
    "kafkalog.log_flusher": 4,  # the flush-log worker the log hands rolled segments to
    # log compaction: the config and the offset map sit low, the core (Cleaner, the manager's
    # rules) under the log (Log.clean calls it), the LogCleaner over a LogDir's logs
    "kafkalog.cleaner": 4,
    "kafkalog.cleaner.cleaner_config": 1,
    "kafkalog.cleaner.offset_map": 1,
    "kafkalog.cleaner.cleaner_stats": 1,
    "kafkalog.cleaner.cleaned_transaction_metadata": 2,
    "kafkalog.cleaner.log_cleaner": 6,
    "kafkalog.log": 5,
    "kafkalog.scheduler": 5,
    "kafkalog.log_dir": 6,
    "kafkalog.list_offsets": 6,  # ListOffsets answers over a Log (the server's and get-offsets)
    # operators' and services' packages over the engine
    "kafkalog.groups": 7,
    "kafkalog.cluster": 7,
    "kafkalog.tiered": 7,
    "kafkalog.replication": 7,  # the replica fetcher's truncation rules (sans-IO)
    "kafkalog.replication.compare": 8,  # replicas of log dirs side by side (as tools.verify)
    "kafkalog.replication.command": 8,
    "kafkalog.security": 7,  # SCRAM credentials and JAAS users of a tree (the server's wire
                             # side, kafkalog.server.sasl, is above)
    "kafkalog.quotas": 7,  # client quotas of a tree and Kafka's ClientQuotaManager (sans-IO)
    "kafkalog.storage": 7,  # kafka-storage.sh: meta.properties, bootstrap metadata, formatting
    "kafkalog.tools": 8,
    "kafkalog.admin": 8,  # the offline operator commands over a log dir
    "kafkalog.console": 8,  # kafka-console-consumer.sh / kafka-console-producer.sh over log dirs
    "kafkalog.metadata_shell": 8,  # kafka-metadata-shell.sh over a metadata log or snapshot
    "kafkalog.server": 8,
    # kafkalog mirror: a follower outside the cluster (the replication rules, the log dir, and
    # the server's kio bridge for its protocol client)
    "kafkalog.mirror": 8,
    "kafkalog.spark": 8,
    "kafkalog.tools.demo": 9,  # runs the engine, the tools and Spark end to end
    "kafkalog.cli": 9,
    "kafkalog.__main__": 10,
}


def _module_name(path: Path) -> str:
    if path.is_relative_to(ROOT / "native"):
        rel = ("kafkalog", "native", *path.relative_to(ROOT / "native").with_suffix("").parts)
    else:
        rel = path.relative_to(ROOT).with_suffix("").parts
    if rel[-1] == "__init__":
        rel = rel[:-1]
    return ".".join(rel)


def _layer(module: str) -> int | None:
    parts = module.split(".")
    for i in range(len(parts), 0, -1):
        key = ".".join(parts[:i])
        if key in LAYERS:
            return LAYERS[key]
    return None


def _imports(path: Path, module: str) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    is_pkg = path.name == "__init__.py"
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names if a.name.startswith("kafkalog")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                base = base[: len(base) - node.level + (1 if is_pkg else 0)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("kafkalog"):
                continue
            if node.module is None or target == "kafkalog":
                # `from . import x` / `from kafkalog import X`: the names are modules or
                # public re-exports; resolve the ones that are modules
                for a in node.names:
                    sub = f"{target}.{a.name}"
                    out.append(sub if _layer(sub) is not None and sub != "kafkalog" else target)
            else:
                out.append(target)
    return out


SOURCES = sorted(
    p for p in [*(ROOT / "kafkalog").rglob("*.py"), *(ROOT / "native").rglob("*.py")]
    if "__pycache__" not in p.parts
)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_point_down(path: Path) -> None:
    module = _module_name(path)
    if module == "kafkalog":
        return  # the package root re-exports lazily from every layer
    own = _layer(module)
    assert own is not None, f"{module} has no layer in tests/test_layering.py"
    upward = []
    for target in _imports(path, module):
        if target == "kafkalog":
            continue  # the lazy public surface (names resolved at call time)
        layer = _layer(target)
        if layer is not None and layer > own and not target.startswith(module):
            upward.append(f"{target} (layer {layer})")
    assert not upward, f"{module} (layer {own}) imports upward: {upward}"


def test_checker_sees_relative_and_absolute_upward_imports(tmp_path: Path) -> None:
    fake = ROOT / "kafkalog" / "records" / "batch.py"
    src = tmp_path / "batch.py"
    src.write_text("from ..log import Log\nimport kafkalog.segment\nfrom . import crc\n")
    found = _imports(src, _module_name(fake))
    assert found == ["kafkalog.log", "kafkalog.segment", "kafkalog.records.crc"]
    assert [_layer(t) for t in found] == [5, 3, 1]
