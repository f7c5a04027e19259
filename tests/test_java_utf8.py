"""kafkalog.java_utf8 against Java itself: ``new String(bytes, UTF_8)`` run by the JDK on the
machine (Spark's Java 17) over 20,000 byte strings built from the bytes where UTF-8's rules
change (lead bytes of each length, continuation ranges, surrogates, the 0x10FFFF bound); and
the tools that show Kafka's text (dump-segments' StringDecoder, the console producer's lines)."""

from __future__ import annotations

import contextlib
import doctest
import io
import random
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import kafkalog.java_utf8 as java_utf8
from kafkalog import LogDir, Record
from kafkalog.java_utf8 import JAVA_REPLACE, decode_utf8

_JAVA_DECODER = """
import java.nio.file.*; import java.nio.charset.StandardCharsets; import java.util.*;
public class Dec { public static void main(String[] a) throws Exception {
  StringBuilder out = new StringBuilder();
  for (String line : Files.readAllLines(Paths.get(a[0]))) {
    String s = new String(HexFormat.of().parseHex(line.trim()), StandardCharsets.UTF_8);
    for (int i = 0; i < s.length(); i++) out.append(String.format("%04x", (int) s.charAt(i)));
    out.append('\\n');
  }
  System.out.print(out);
} }
"""

_EDGES = [0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0,
          0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xF7, 0xF8, 0xFE, 0xFF]


def _utf16_units(s: str) -> str:
    data = s.encode("utf-16-be", "surrogatepass")
    return "".join(f"{int.from_bytes(data[i:i + 2], 'big'):04x}"
                   for i in range(0, len(data), 2))


def test_doctests() -> None:
    assert doctest.testmod(java_utf8).failed == 0


@pytest.mark.skipif(shutil.which("java") is None, reason="no java on PATH (Spark's JDK)")
def test_ill_formed_bytes_are_replaced_as_java_replaces_them(tmp_path: Path) -> None:
    rng = random.Random(5)
    cases = [bytes(rng.choice(_EDGES) for _ in range(rng.randint(1, 8))) for _ in range(20_000)]
    cases += [b"a\xed\xa0\x80b", b"\xf0\x90\x80", b"\xe0\x80", b"\xf4\x90\x80\x80",
              b"\xed\xbf\xbf\xf0\x9f\x98\x80"]
    (tmp_path / "in.txt").write_text("\n".join(c.hex() for c in cases) + "\n")
    (tmp_path / "Dec.java").write_text(_JAVA_DECODER)
    java = subprocess.run(["java", str(tmp_path / "Dec.java"), str(tmp_path / "in.txt")],
                          capture_output=True, text=True, check=True, timeout=120)
    expected = java.stdout.split("\n")[:-1]
    assert len(expected) == len(cases)
    ours = [_utf16_units(decode_utf8(c)) for c in cases]
    assert ours == expected
    # (and Python's own "replace" is not Java's: the cases this module exists for)
    assert any(_utf16_units(c.decode("utf-8", "replace")) != j for c, j in zip(cases, expected))


@given(st.text())
def test_well_formed_text_decodes_as_python_does(text: str) -> None:
    data = text.encode("utf-8", "surrogatepass")
    assert data.decode("utf-8", JAVA_REPLACE) == data.decode("utf-8", "replace")


def test_the_tools_show_and_store_javas_text(tmp_path: Path) -> None:
    """dump-segments' StringDecoder (key, value) and kafka-console-producer.sh's
    lines (InputStreamReader then getBytes(UTF_8)): one U+FFFD for an encoded surrogate."""
    from kafkalog.cli import main
    from kafkalog.console import console_producer

    root = tmp_path / "logs"
    with LogDir.open(root) as d:
        d.create_topic("t", 1)
        d.log("t", 0).append([Record(b"k\xed\xa0\x80", b"a\xed\xa0\x80b", 1)])
    seg = root / "t-0" / "00000000000000000000.log"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["dump-segments", "--files", str(seg), "--print-data-log"]) == 0
    line = out.getvalue().splitlines()[-1]
    assert "key: k\ufffd payload: a\ufffdb" in line
    stdin = io.BytesIO(b"x\xed\xa0\x80y\n")
    assert console_producer.main([str(root), "--topic", "t"], stdin=stdin,
                                 stdout=io.StringIO(), stderr=io.StringIO()) == 0
    with LogDir.open(root, read_only=True) as d:
        last = list(d.log("t", 0).records())[-1]
    assert last.value == b"x\xef\xbf\xbdy"
