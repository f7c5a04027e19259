"""``kafkalog.groups.java_order`` against the JDK itself (``java.util.HashMap``,
``String.hashCode``), compiled and run with the installed ``javac``/``java``.

The group coordinator's record member order, leader choice and protocol tie-break, and the
assignors' tie-breaks all depend on these orders, so they are checked against the real thing on
seeded random histories of puts, ``computeIfAbsent`` calls and removals (resizes included).
"""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest

from kafkalog.groups.java_order import JavaHashMap, java_sorted, string_hash

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def java_hash_order(tmp_path_factory: pytest.TempPathFactory):
    if shutil.which("javac") is None or shutil.which("java") is None:
        pytest.skip("javac/java not installed")
    out = tmp_path_factory.mktemp("hashorder")
    subprocess.run(["javac", "-d", str(out), str(HERE / "java" / "HashOrder.java")], check=True)

    def run(lines: list[str]) -> list[str]:
        proc = subprocess.run(["java", "-cp", str(out), "HashOrder"],
                              input="\n".join(lines) + "\n", capture_output=True, text=True,
                              check=True, encoding="utf-8")
        return proc.stdout.split("\n")[:-1]

    return run


def _key(rng: random.Random) -> str:
    kind = rng.randrange(5)
    if kind == 0:
        return f"consumer-{rng.randrange(200)}"
    if kind == 1:
        return f"t{rng.randrange(40)}"
    if kind == 2:
        return "".join(rng.choice("abcXYZ_-.0123") for _ in range(rng.randint(1, 12)))
    if kind == 3:
        return f"member-{rng.getrandbits(40):x}"
    return rng.choice(["组", "g😀", "é-ü", "ｆｕｌｌ", "polygenelubricants", "GydZG_"])


def test_hash_map_order_matches_jdk(java_hash_order) -> None:
    rng = random.Random(7)
    lines: list[str] = []
    expected: list[list[str]] = []
    for _ in range(300):
        cap = rng.choice([-1, -1, 0, 1, 5, 16, 33])
        lines.append(f"NEW {cap}")
        m: JavaHashMap[str, int] = JavaHashMap(string_hash, None if cap < 0 else cap)
        for _ in range(rng.randint(0, 60)):
            r = rng.random()
            k = _key(rng) if r < 0.8 or not len(m) else rng.choice(m.keys())
            if r < 0.5:
                lines.append(f"PUT {k}")
                m[k] = 1
            elif r < 0.8:
                lines.append(f"COMPUTE {k}")
                m.compute_if_absent(k, 1)
            else:
                lines.append(f"REMOVE {k}")
                m.pop(k, None)
        lines.append("PRINT")
        expected.append(list(m))
    got = java_hash_order(lines)
    assert [g.split(" ") if g else [] for g in got] == expected


def test_string_hash_matches_jdk(java_hash_order) -> None:
    rng = random.Random(11)
    keys = [_key(rng) for _ in range(500)] + ["", "polygenelubricants", "DEVSmileCDR"]
    got = java_hash_order([f"HASH {k}" for k in keys])
    assert [int(g) for g in got] == [string_hash(k) for k in keys]


def test_java_sorted_is_utf16_order() -> None:
    # U+10000 is a surrogate pair (0xD800 0xDC00): below U+E000 in Java, above it in Python
    assert java_sorted(["\ue000", "\U00010000", "a"]) == ["a", "\U00010000", "\ue000"]
    assert sorted(["\ue000", "\U00010000", "a"]) == ["a", "\ue000", "\U00010000"]
