"""Topic names that must never become paths outside a root (issue 16).

Shared by ``tests/reliability/test_paths.py`` and ``tools/reliability.py paths``.

Every place that turns a topic name into a directory goes through
:func:`kafkalog.files.partition_dir` (Kafka's ``Topic.validate``, then the path resolved inside
the root). Each path maker gets each hostile name; it must refuse with
:class:`~kafkalog.errors.InvalidTopicError` (a ``ValueError``) whose message says why, and nothing
may appear outside the root (the whole work directory is listed before and after). The path
makers: ``files.partition_dir`` itself, ``LogDir.create_topic`` (what the server's CreateTopics
calls), the Spark writer's task side (rows' ``topic`` column), its ``topic`` option, and its
commit (the driver publishing staged directories), all without a Spark session; the test module
also runs one real ``df.write.format("kafkalog")`` in local Spark (tests/spark).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

#: (label, topic) pairs; "symlink" is a legal name whose ``<topic>-0`` is a symlink out of the root
HOSTILE = (
    ("parent", "../escaped"),
    ("deep parent", "../../tmp/escaped"),
    ("absolute", "/tmp/kafkalog-escaped"),
    ("slash", "a/b"),
    ("dot", "."),
    ("dotdot", ".."),
    ("empty", ""),
    ("250 characters", "x" * 250),
    ("NUL", "t\x00x"),
    ("non-ASCII", "tópico"),
    ("newline", "t\n"),
    ("symlink out of the root", "linked"),
)


def _tree(base: Path) -> set[str]:
    out = set()
    for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
        for n in dirnames + filenames:
            out.add(os.path.relpath(os.path.join(dirpath, n), base))
    return out


def _arrow_rows(topic: str) -> Any:
    import pyarrow as pa

    return pa.record_batch([pa.array([topic]), pa.array([0], pa.int32()),
                            pa.array([b"v"], pa.binary())], names=["topic", "partition", "value"])


def _spark_writer(root: Path, topic_option: str | None = None) -> Any:
    import pyarrow as pa

    from kafkalog.spark.writer import KafkaLogWriter

    opts = {"path": str(root)}
    if topic_option is not None:
        opts["topic"] = topic_option
    schema = pa.schema([("topic", pa.string()), ("partition", pa.int32()),
                        ("value", pa.binary())])
    return KafkaLogWriter(opts, schema, overwrite=False)


def _makers(root: Path) -> dict[str, Any]:
    from kafkalog import files
    from kafkalog.log_dir import LogDir
    from kafkalog.spark.writer import KafkaLogCommitMessage

    def partition_dir(topic: str) -> None:
        files.partition_dir(root, topic, 0).mkdir(parents=True)

    def create_topic(topic: str) -> None:
        with LogDir.open(root) as d:
            d.create_topic(topic, 1)

    def spark_task(topic: str) -> None:
        # what a Spark job does: the task writes its rows into staging, the driver commits
        w = _spark_writer(root)
        try:
            w.commit([w.write(iter([_arrow_rows(topic)]))])
        except BaseException:
            w.abort([None])
            raise

    def spark_option(topic: str) -> None:
        w = _spark_writer(root, topic_option=topic)
        w.commit([w.write(iter([_arrow_rows("ignored")]))])

    def spark_commit(topic: str) -> None:
        # a staged directory named after the topic (as a task of another build might send),
        # published by the driver
        w = _spark_writer(root)
        task_dir = w.staging_root / "task-00000-0"
        staged = task_dir / "placeholder-0"
        staged.mkdir(parents=True)
        msg = KafkaLogCommitMessage(task_dir=str(task_dir), task=0, written=[(topic, 0, 1)])
        w.commit([msg])

    return {"files.partition_dir": partition_dir, "LogDir.create_topic": create_topic,
            "Spark writer task + commit (topic column)": spark_task,
            "Spark writer topic option": spark_option, "Spark writer commit": spark_commit}


def run_paths(workdir: Path) -> dict:
    """Every hostile name through every path maker; the outcome of each."""
    from kafkalog.errors import InvalidTopicError

    outside = workdir / "outside"
    outside.mkdir()
    cases = []
    n = 0
    for maker in _makers(workdir / "probe"):
        for label, topic in HOSTILE:
            n += 1
            root = workdir / f"root{n}"
            root.mkdir()
            if label.startswith("symlink"):
                (root / f"{topic}-0").symlink_to(outside, target_is_directory=True)
            before = _tree(workdir)
            outcome, message = "accepted", ""
            try:
                _makers(root)[maker](topic)
            except InvalidTopicError as e:
                outcome, message = "refused", str(e)
            except Exception as e:  # noqa: BLE001 - any other outcome is reported as is
                outcome, message = f"{type(e).__name__}", str(e)
            created = sorted(p for p in _tree(workdir) - before
                             if not p.startswith(f"root{n}{os.sep}"))
            cases.append({"maker": maker, "name": label, "outcome": outcome,
                          "message": message[:600], "created_outside_root": created,
                          "outside_dir": sorted(os.listdir(outside))})
    bad = [c for c in cases if c["outcome"] != "refused" or c["created_outside_root"]
           or c["outside_dir"]]
    return {"cases": len(cases), "refused": sum(c["outcome"] == "refused" for c in cases),
            "created_outside_root": sum(bool(c["created_outside_root"]) for c in cases),
            "failures": bad, "all": cases}
