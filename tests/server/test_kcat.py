"""kcat (Debian's package, librdkafka from the system) lists metadata and consumes a topic."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from kafkalog import Record

KCAT = shutil.which("kcat") or shutil.which("kafkacat")
pytestmark = pytest.mark.skipif(KCAT is None, reason="kcat is not installed "
                                "(Debian package kcat; CI installs it)")


def kcat(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KCAT, *args], capture_output=True, text=True, timeout=60,
                          check=True)


def test_kcat_lists_metadata(server):
    server.broker.create_topic("orders", 3)
    out = kcat("-b", server.address, "-L").stdout
    assert f"broker 1 at {server.address} (controller)" in out
    assert 'topic "orders" with 3 partitions' in out
    for p in range(3):
        assert f"partition {p}, leader 1, replicas: 1, isrs: 1" in out


def test_kcat_consumes_and_produces(server):
    server.broker.create_topic("t", 2)
    log = server.broker.log("t", 0)
    log.append([Record(b"k%d" % i, b"v%d" % i, 1700000000000 + i, headers=[("h", b"x")])
                for i in range(5)], compression="snappy")
    out = kcat("-b", server.address, "-C", "-t", "t", "-e", "-f", "%p:%o %k=%s %h\n").stdout
    assert out.splitlines() == [f"0:{i} k{i}=v{i} h=x" for i in range(5)]
    subprocess.run([KCAT, "-b", server.address, "-P", "-t", "t", "-p", "1", "-K", ":"],
                   input="a:1\nb:2\n", text=True, check=True, timeout=60)
    out = kcat("-b", server.address, "-C", "-t", "t", "-p", "1", "-e", "-f", "%k=%s\n").stdout
    assert out.splitlines() == ["a=1", "b=2"]
