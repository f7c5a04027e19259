"""A real, standalone ZooKeeper server for tests, on 127.0.0.1 only.

Found in this order:

1. ``KAFKALOG_ZOOKEEPER_CLASSPATH``: a Java classpath holding ZooKeeper's server classes;
2. Debian/Ubuntu's ``zookeeper`` package: ``/usr/share/java/zookeeper.jar`` (its manifest's
   ``Class-Path`` names the dependency jars in ``/usr/share/java``);
3. an Apache ZooKeeper distribution under ``ZOOKEEPER_HOME`` (``lib/*.jar``).

Java is ``$JAVA_HOME/bin/java`` or ``java`` on ``PATH``. The server runs
``org.apache.zookeeper.server.ZooKeeperServerMain`` with a generated ``zoo.cfg`` in a temporary
directory: ``clientPortAddress=127.0.0.1`` on a free port, the admin (Jetty) server disabled, no
JMX remote port, a small heap. :func:`find_zookeeper` returns ``None`` with the reason when a
component is missing, so callers can skip saying why.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from .processes import stop_process

DEBIAN_JAR = Path("/usr/share/java/zookeeper.jar")
MAIN_CLASS = "org.apache.zookeeper.server.ZooKeeperServerMain"


@dataclass
class ZooKeeperInstall:
    java: str
    classpath: str


def find_zookeeper() -> tuple[ZooKeeperInstall | None, str]:
    """The Java binary and server classpath, or ``None`` and why not."""
    java_home = os.environ.get("JAVA_HOME")
    java = str(Path(java_home, "bin", "java")) if java_home else shutil.which("java")
    if not java or not Path(java).exists():
        return None, "no Java runtime (java on PATH or JAVA_HOME) to run ZooKeeper"
    cp = os.environ.get("KAFKALOG_ZOOKEEPER_CLASSPATH")
    if cp:
        return ZooKeeperInstall(java, cp), ""
    if DEBIAN_JAR.exists():
        return ZooKeeperInstall(java, str(DEBIAN_JAR)), ""
    home = os.environ.get("ZOOKEEPER_HOME")
    if home and list(Path(home, "lib").glob("*.jar")):
        return ZooKeeperInstall(java, str(Path(home, "lib")) + "/*"), ""
    return None, ("ZooKeeper server jars not found: apt-get install zookeeper (Debian), or set "
                  "KAFKALOG_ZOOKEEPER_CLASSPATH or ZOOKEEPER_HOME")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ruok(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall(b"ruok")
            return s.recv(4) == b"imok"
    except OSError:
        return False


class ZooKeeperServer:
    """A started server: ``connect`` is ``127.0.0.1:<port>``; call :meth:`stop` at the end."""

    def __init__(self, install: ZooKeeperInstall, workdir: Path) -> None:
        self.install = install
        self.workdir = workdir
        self.process: subprocess.Popen[bytes] | None = None
        self.port = 0

    @property
    def connect(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, attempts: int = 3, timeout_s: float = 30.0) -> None:
        last = ""
        for attempt in range(attempts):
            self.port = _free_port()
            data = self.workdir / f"data-{attempt}"
            data.mkdir(parents=True, exist_ok=True)
            cfg = self.workdir / "zoo.cfg"
            cfg.write_text("\n".join([
                "tickTime=2000", f"dataDir={data}", f"clientPort={self.port}",
                "clientPortAddress=127.0.0.1", "admin.enableServer=false",
                "4lw.commands.whitelist=ruok", "maxClientCnxns=100", ""]))
            log = open(self.workdir / "server.log", "ab")     # noqa: SIM115 - kept for the process
            self.process = subprocess.Popen(
                [self.install.java, "-Xmx256m", "-Dzookeeper.admin.enableServer=false",
                 "-Dzookeeper.jmx.log4j.disable=true", "-cp", self.install.classpath,
                 MAIN_CLASS, str(cfg)],
                stdout=log, stderr=subprocess.STDOUT, cwd=self.workdir)
            log.close()
            deadline = time.monotonic() + timeout_s
            while time.monotonic() < deadline and self.process.poll() is None:
                if _ruok(self.port):
                    return
                time.sleep(0.2)
            last = (self.workdir / "server.log").read_text(errors="replace")[-2000:]
            self.stop()
        raise RuntimeError(f"ZooKeeper did not start ({self.workdir}/server.log):\n{last}")

    def stop(self) -> None:
        if self.process is None:
            return
        stop_process(self.process)
        self.process = None
