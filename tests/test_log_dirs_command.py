"""``kafkalog log-dirs --describe`` (Kafka's ``LogDirsCommand``, offline).

The JSON's key and partition order is that of the ``HashMap``\\ s Kafka's tool and admin client
build: checked against the JVM itself (a Java program building the same maps, in the same
order, with a ``TopicPartition`` of Kafka's ``hashCode``). Sizes are the segments' bytes on disk,
lags Kafka's ``getLogEndOffsetLag`` rules, including a ``-future`` replica of a JBOD move.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from kafkalog import Log, LogDir, Record
from kafkalog.admin.log_dirs_command import ReplicaInfo, format_as_json, hash_map_order
from kafkalog.cli import main
from kafkalog.files import log_future_dir_name

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "kafka-real"
TS = 1_700_000_000_000


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    c = capsys.readouterr()
    return rc, c.out, c.err


def _doc(out: str) -> dict:
    lines = out.splitlines()
    assert lines[0] == "Querying brokers for log directories information"
    assert lines[1].startswith("Received log directory information from brokers ")
    assert len(lines) == 3
    return json.loads(lines[2])


@pytest.fixture
def jbod(tmp_path: Path) -> tuple[Path, Path]:
    """Node 4 with two log dirs: d1 holds orders-0 (12 records, high watermark 10) and
    orders-1 (3); d2 holds audit-0 (5) and a -future replica of orders-0 being moved there
    (7 records copied so far)."""
    d1, d2 = tmp_path / "d1", tmp_path / "d2"
    with LogDir.open(d1, node_id=4) as logs:
        logs.create_topic("orders", 2)
        logs.log("orders", 0).append([Record(None, b"x" * 50, TS + i) for i in range(12)])
        logs.log("orders", 1).append([Record(None, b"y", TS + i) for i in range(3)])
        logs.set_high_watermark("orders", 0, 10)
        logs.checkpoint()
    with LogDir.open(d2, node_id=4) as logs:
        logs.create_topic("audit", 1)
        logs.log("audit", 0).append([Record(None, b"z", TS + i) for i in range(5)])
    with Log.open(d2 / log_future_dir_name("orders", 0, "0" * 32), standalone=False) as fut:
        fut.append([Record(None, b"x" * 50, TS + i) for i in range(7)])
    return d1, d2


def _segment_bytes(part: Path) -> int:
    return sum(p.stat().st_size for p in part.glob("*.log"))


def test_describe_two_dirs_with_a_future_replica(jbod, capsys) -> None:
    d1, d2 = jbod
    rc, out, err = _run(capsys, "log-dirs", "--describe", str(d1), str(d2))
    assert (rc, err) == (0, "")
    assert out.splitlines()[1] == "Received log directory information from brokers 4"
    doc = _doc(out)
    assert doc["version"] == 1
    (broker,) = doc["brokers"]
    assert broker["broker"] == 4
    dirs = {d["logDir"]: d for d in broker["logDirs"]}
    assert set(dirs) == {str(d1), str(d2)}
    assert all(d["error"] is None for d in dirs.values())
    p1 = {p["partition"]: p for p in dirs[str(d1)]["partitions"]}
    assert p1["orders-0"] == {"partition": "orders-0", "size": _segment_bytes(d1 / "orders-0"),
                              "offsetLag": 0, "isFuture": False}  # max(10 - 12, 0)
    assert p1["orders-1"]["size"] == _segment_bytes(d1 / "orders-1") > 0
    p2 = {(p["partition"], p["isFuture"]): p for p in dirs[str(d2)]["partitions"]}
    future = next(d2.glob("orders-0.*-future"))
    assert p2[("orders-0", True)] == {"partition": "orders-0", "size": _segment_bytes(future),
                                      "offsetLag": 12 - 7, "isFuture": True}
    assert p2[("audit-0", False)]["offsetLag"] == 0
    # alone, the future replica's current one is not known: -1 (INVALID_OFFSET_LAG)
    rc, out, _ = _run(capsys, "log-dirs", "--describe", str(d2))
    parts = _doc(out)["brokers"][0]["logDirs"][0]["partitions"]
    assert {p["partition"]: p["offsetLag"] for p in parts if p["isFuture"]} == {"orders-0": -1}


def test_topic_list_and_broker_list(jbod, capsys) -> None:
    d1, d2 = jbod
    rc, out, _ = _run(capsys, "log-dirs", "--describe", str(d1), str(d2), "--topic-list",
                      "audit,,missing")
    dirs = {d["logDir"]: d["partitions"] for d in _doc(out)["brokers"][0]["logDirs"]}
    assert dirs[str(d1)] == [] and [p["partition"] for p in dirs[str(d2)]] == ["audit-0"]
    assert _run(capsys, "log-dirs", "--describe", str(d1), "--broker-list", "4")[0] == 0
    assert _run(capsys, "log-dirs", "--describe", str(d1), "--broker-list", "4,7,5") == (
        1, "", "ERROR: The given brokers do not exist from --broker-list: 5,7. Current "
               "existent brokers: 4\n")


def test_refusals(jbod, tmp_path: Path, capsys) -> None:
    d1, _ = jbod
    assert _run(capsys, "log-dirs", str(d1)) == (2, "", 'Missing required argument '
                                                         '"[describe]"\n')
    other = tmp_path / "other"
    with LogDir.open(other, node_id=9):
        pass
    rc, _, err = _run(capsys, "log-dirs", "--describe", str(d1), str(other))
    assert rc == 1 and "different brokers (node ids 4, 9" in err
    rc, _, err = _run(capsys, "log-dirs", "--describe", str(tmp_path / "nope"))
    assert rc == 1 and "nope: no such log directory" in err


def test_real_broker_dir(tmp_path: Path, capsys) -> None:
    src = FIXTURES / "VolodymyrZee-kafka"
    if not src.is_dir():
        pytest.skip(f"{src} absent (the shared fixtures are not on this machine)")
    root = tmp_path / "kafka"
    shutil.copytree(src, root)
    rc, out, _ = _run(capsys, "log-dirs", "--describe", str(root))
    assert out.splitlines()[1] == "Received log directory information from brokers 0"
    (d,) = _doc(out)["brokers"][0]["logDirs"]
    assert {p["partition"]: p["size"] for p in d["partitions"]} == {
        p.name: _segment_bytes(p) for p in root.iterdir()
        if p.is_dir() and not p.name.startswith("__cluster_metadata")}


_JAVA = r"""
import java.util.*;
import java.util.stream.*;

public class Order {
    static final class TP {  // org.apache.kafka.common.TopicPartition's equals/hashCode
        final String topic; final int partition;
        TP(String t, int p) { topic = t; partition = p; }
        @Override public int hashCode() { return 31 * (31 + partition) + Objects.hashCode(topic); }
        @Override public boolean equals(Object o) {
            return o instanceof TP && ((TP) o).partition == partition
                && ((TP) o).topic.equals(topic);
        }
        @Override public String toString() { return topic + "-" + partition; }
    }
    static String json(Object v) {
        if (v == null) return "null";
        if (v instanceof String) return "\"" + v + "\"";
        if (v instanceof Map) {
            return ((Map<?, ?>) v).entrySet().stream()
                .map(e -> json(e.getKey()) + ":" + json(e.getValue()))
                .collect(Collectors.joining(",", "{", "}"));
        }
        if (v instanceof List) {
            return ((List<?>) v).stream().map(Order::json)
                .collect(Collectors.joining(",", "[", "]"));
        }
        return v.toString();
    }
    public static void main(String[] args) {
        // args: logDir count, then per dir: name, partition count, then topic, partition, size
        int i = 0;
        int dirs = Integer.parseInt(args[i++]);
        Map<String, Map<TP, long[]>> byDir = new HashMap<>(dirs);  // logDirDescriptions
        for (int d = 0; d < dirs; d++) {
            String name = args[i++];
            int n = Integer.parseInt(args[i++]);
            Map<TP, long[]> infos = new HashMap<>();
            for (int k = 0; k < n; k++) {
                TP tp = new TP(args[i++], Integer.parseInt(args[i++]));
                infos.put(tp, new long[] {Long.parseLong(args[i++])});
            }
            byDir.put(name, infos);
        }
        List<Object> logDirs = byDir.entrySet().stream().map(e -> {
            Map<String, Object> m = new HashMap<>();
            m.put("logDir", e.getKey());
            m.put("error", null);
            Map<TP, long[]> filtered = e.getValue().entrySet().stream()
                .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
            m.put("partitions", filtered.entrySet().stream().map(p -> {
                Map<String, Object> r = new HashMap<>();
                r.put("partition", p.getKey().toString());
                r.put("size", p.getValue()[0]);
                r.put("offsetLag", 0L);
                r.put("isFuture", false);
                return r;
            }).collect(Collectors.toList()));
            return m;
        }).collect(Collectors.toList());
        Map<String, Object> broker = new HashMap<>();
        broker.put("broker", 1);
        broker.put("logDirs", logDirs);
        Map<String, Object> top = new HashMap<>();
        top.put("version", 1);
        top.put("brokers", List.of(broker));
        System.out.println(json(top));
    }
}
"""


@pytest.mark.skipif(shutil.which("javac") is None, reason="needs a JDK (javac) for HashMap order")
def test_json_order_is_the_jvms(tmp_path: Path) -> None:
    import random

    rng = random.Random(11)
    topics = ["orders", "__consumer_offsets", "a", "payments-eu", "t", "Z_9", "über"]
    dirs: dict[str, list[ReplicaInfo]] = {}
    for d in range(3):
        held = rng.sample([(t, p) for t in topics for p in range(40)], rng.randrange(1, 120))
        # the partitions in the order the broker's response lists them
        dirs[f"/data/kafka-{d}"] = [ReplicaInfo(partition=f"{t}-{p}", size=rng.randrange(10**9),
                                                offsetLag=0, isFuture=False) for t, p in held]
    src = tmp_path / "Order.java"
    src.write_text(_JAVA, encoding="utf-8")
    subprocess.run(["javac", "-encoding", "UTF-8", "-d", str(tmp_path), str(src)], check=True)
    args = [str(len(dirs))]
    for name, infos in dirs.items():
        args += [name, str(len(infos))]
        for info in infos:
            t, _, p = info["partition"].rpartition("-")
            args += [t, p, str(info["size"])]
    java = subprocess.run(["java", "-Dfile.encoding=UTF-8", "-Dstdout.encoding=UTF-8", "-cp",
                           str(tmp_path), "Order", *args],
                          check=True, capture_output=True, text=True, encoding="utf-8")
    # ours: the partitions of each dir go through the same two HashMaps in response order
    ordered = {name: hash_map_order(infos) for name, infos in dirs.items()}
    assert format_as_json({1: ordered}) == java.stdout.strip()
