"""The JVM reader: build its jar from the shipped Java sources, and switch a session to it.

The Java sources (``kafkalog/spark/jvm/src/main/java``, package data) are a Spark DataSource V2
reader for Kafka log directories with the Python source's schema, options, splits and errors,
at the speed of Spark's own file readers. They are compiled here, at first use, with the JDK's
``javac`` (``--release 17``) against the jars of the installed PySpark, and packed into a jar in
a cache directory (``$KAFKALOG_CACHE_DIR``, else ``$XDG_CACHE_HOME/kafkalog``, else
``~/.cache/kafkalog``), named by a hash of the sources and the Spark version. Nothing built is
ever committed or shipped.

Getting the JVM reader into a session:

* **At start (recommended, every thread):**
  ``SparkSession.builder.config("spark.jars", kafkalog.spark.jar_path())`` (or
  ``spark-submit --jars $(python -m kafkalog.spark.jvm)``; Scala/Java users add the same jar).
  ``spark.driver.extraClassPath`` with the same path works too (driver JVM classpath).
* **In a running session:** :func:`kafkalog.spark.register` runs ``ADD JAR``. Measured with
  PySpark 4.3.0: ``SparkContext.addJar`` alone is not enough (the driver's data source lookup
  does not see the jar), while ``ADD JAR`` puts the jar in the session's class loader and makes
  it the context class loader of the calling thread: queries started from that Python thread
  use the JVM reader, other threads keep the Python source. Executors get the jar either way.

How ``format("kafkalog")`` picks a reader: Spark's ``DataSource.lookupDataSource`` tries the
class ``kafkalog.DefaultSource`` before Python data sources, so with the jar loadable the
JVM reader answers; without it the Python source (registered by ``pip install`` or
:func:`kafkalog.spark.register`) does. Writes and streams reaching the JVM source are handed to
the Python source, so nothing else changes. Explicit names: ``format("kafkalog_jvm")`` (JVM)
and ``format("kafkalog_python")`` (Python, registered by :func:`kafkalog.spark.register`).

>>> import kafkalog.spark
>>> path = kafkalog.spark.jar_path()                          # doctest: +SKIP
>>> spark = SparkSession.builder.config("spark.jars", path).getOrCreate()   # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import warnings
import zipfile
from pathlib import Path
from typing import Any

from kafkalog.errors import KafkaLogError

__all__ = [
    "JvmReaderWarning",
    "JvmUnavailableError",
    "SOURCE_DIR",
    "activate",
    "cache_dir",
    "find_jdk_tool",
    "jar_path",
    "jvm_reader_active",
    "main",
]

#: The Java project shipped with the package: ``src/main/java`` and ``src/main/resources``.
SOURCE_DIR = Path(__file__).resolve().parent / "jvm" / "src" / "main"

#: The class Spark's lookup finds for ``format("kafkalog")``.
PROVIDER_CLASS = "kafkalog.DefaultSource"

#: Target of ``javac --release`` (Spark 4 runs on Java 17+).
JAVA_RELEASE = "17"


class JvmUnavailableError(KafkaLogError):
    """The JVM reader's jar cannot be had here (no JDK, no PySpark jars, compilation failed)."""


class JvmReaderWarning(UserWarning):
    """``register`` could not switch the session to the JVM reader; the message says why."""


def cache_dir() -> Path:
    """Where built jars live: ``$KAFKALOG_CACHE_DIR``, ``$XDG_CACHE_HOME/kafkalog`` or
    ``~/.cache/kafkalog``."""
    if os.environ.get("KAFKALOG_CACHE_DIR"):
        return Path(os.environ["KAFKALOG_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "kafkalog"


def find_jdk_tool(name: str) -> str:
    """Path of a JDK tool (``javac``): ``$JAVA_HOME/bin/<name>``, else the first on ``PATH``.

    Raises :class:`JvmUnavailableError` naming where it looked.
    """
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        candidate = Path(java_home) / "bin" / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which(name)
    if found:
        return found
    raise JvmUnavailableError(
        f"no JDK: {name} not found in JAVA_HOME ({java_home or 'unset'}) nor on PATH "
        "(install a JDK 17+, e.g. apt-get install openjdk-17-jdk-headless)"
    )


def _spark_jars() -> tuple[str, Path]:
    """(Spark version, directory of Spark's jars) of the installed PySpark."""
    try:
        import pyspark
    except ImportError as e:
        raise JvmUnavailableError("PySpark is not installed (pip install 'kafkalog[spark]')") from e
    version = pyspark.__version__
    jars = Path(pyspark.__file__).resolve().parent / "jars"
    if not jars.is_dir() and os.environ.get("SPARK_HOME"):
        jars = Path(os.environ["SPARK_HOME"]) / "jars"
    if not jars.is_dir() or not any(jars.glob("spark-sql_*.jar")):
        raise JvmUnavailableError(f"Spark's jars not found (looked in {jars})")
    return version, jars


def _sources() -> list[Path]:
    files = sorted(p for p in SOURCE_DIR.rglob("*") if p.is_file())
    if not any(p.suffix == ".java" for p in files):
        raise JvmUnavailableError(f"the Java sources are missing from the package ({SOURCE_DIR})")
    return files


def _digest(files: list[Path], spark_version: str) -> str:
    h = hashlib.sha256()
    h.update(f"spark={spark_version};release={JAVA_RELEASE}\n".encode())
    for p in files:
        h.update(str(p.relative_to(SOURCE_DIR)).encode() + b"\0")
        h.update(p.read_bytes())
        h.update(b"\0")
    return h.hexdigest()[:16]


@contextlib.contextmanager
def _build_lock(directory: Path):
    """An exclusive ``flock`` on ``<cache>/.build.lock`` (POSIX); a no-op where unavailable."""
    directory.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: the atomic rename alone still holds
        yield
        return
    with open(directory / ".build.lock", "a+b") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def _compile(files: list[Path], jars: Path, out: Path) -> None:
    javac = find_jdk_tool("javac")
    classes = out / "classes"
    classes.mkdir()
    java_files = [str(p) for p in files if p.suffix == ".java"]
    argfile = out / "sources.txt"
    argfile.write_text("\n".join(f'"{s}"' for s in java_files) + "\n")
    cmd = [javac, "--release", JAVA_RELEASE, "-encoding", "UTF-8", "-nowarn", "-g",
           "-cp", str(jars / "*"), "-d", str(classes), f"@{argfile}"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise JvmUnavailableError(f"javac failed to run ({javac}): {e}") from e
    if proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()[-20:]
        raise JvmUnavailableError(
            f"javac ({javac}) failed to compile the JVM reader:\n" + "\n".join(detail))


def _pack(out: Path, files: list[Path], jar: Path) -> None:
    """Zip classes and resources into a jar with fixed timestamps (reproducible bytes)."""
    classes = out / "classes"
    entries: list[tuple[str, Path | bytes]] = [
        ("META-INF/MANIFEST.MF", b"Manifest-Version: 1.0\r\nCreated-By: kafkalog\r\n\r\n")]
    for p in sorted(classes.rglob("*.class")):
        entries.append((p.relative_to(classes).as_posix(), p))
    resources = SOURCE_DIR / "resources"
    for p in files:
        if p.is_relative_to(resources):
            entries.append((p.relative_to(resources).as_posix(), p))
    with zipfile.ZipFile(jar, "w", zipfile.ZIP_DEFLATED) as z:
        for name, src in entries:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, src if isinstance(src, bytes) else src.read_bytes())


def jar_path(*, cache: str | os.PathLike[str] | None = None) -> str:
    """Path of the JVM reader's jar, built from the shipped sources at first use.

    The jar is compiled with ``javac --release 17`` against the installed PySpark's jars and
    cached under :func:`cache_dir` (or ``cache``) as ``kafkalog-spark-<spark>-<hash>.jar``, the
    hash covering the sources and the Spark version: an upgrade of either builds a new jar.
    Concurrent builders (processes, threads) serialize on a lock file and publish with an atomic
    rename, so a reader never sees a partial jar. Takes a few seconds the first time.

    Raises
    ------
    JvmUnavailableError
        No JDK (``javac`` neither in ``$JAVA_HOME/bin`` nor on ``PATH``), no PySpark jars, or a
        compilation failure (with javac's output).

    Example
    -------
    >>> from pyspark.sql import SparkSession                     # doctest: +SKIP
    >>> spark = (SparkSession.builder                             # doctest: +SKIP
    ...          .config("spark.jars", kafkalog.spark.jar_path()).getOrCreate())
    """
    spark_version, jars = _spark_jars()
    files = _sources()
    directory = Path(cache) if cache is not None else cache_dir()
    jar = directory / f"kafkalog-spark-{spark_version}-{_digest(files, spark_version)}.jar"
    if jar.is_file():
        return str(jar)
    with _build_lock(directory):
        if jar.is_file():  # built by whoever held the lock before us
            return str(jar)
        find_jdk_tool("javac")  # fail fast, before any temporary directory exists
        work = Path(tempfile.mkdtemp(prefix=".build-", dir=directory))
        try:
            _compile(files, jars, work)
            tmp_jar = work / jar.name
            _pack(work, files, tmp_jar)
            os.replace(tmp_jar, jar)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return str(jar)


def jvm_reader_active(spark: Any) -> bool:
    """Whether ``format("kafkalog")`` reaches the JVM reader for queries from this thread.

    True when the driver's lookup class loader (this thread's context class loader, which is
    what Spark's ``DataSource.lookupDataSource`` uses) can load ``kafkalog.DefaultSource``.
    """
    try:
        jvm = spark._jvm
        loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
        if loader is None:
            loader = jvm.java.lang.ClassLoader.getSystemClassLoader()
        loader.loadClass(PROVIDER_CLASS)
        return True
    except Exception:  # py4j errors for a missing class; AttributeError for Spark Connect
        return False


class _GroupOffsetsResolver:
    """``io.kafkalog.spark.GroupOffsets`` implemented here, called by the JVM planner through a
    py4j callback: ``startingOffsetsFromGroup`` resolved by
    :func:`kafkalog.spark.planning.resolve_group_start` (the package's one implementation of
    Kafka's group offset loading), answered as Kafka's offsets JSON."""

    def committedOffsets(self, options_json: str) -> str:  # noqa: N802 (the Java name)
        import json

        from .options import ReadOptions
        from .planning import resolve_group_start

        try:
            opts = resolve_group_start(ReadOptions.parse(json.loads(options_json)))
        except KafkaLogError as e:
            return json.dumps({"__error__": f"{type(e).__name__}: {e}"})
        return opts.starting.to_json()

    class Java:
        implements = ["io.kafkalog.spark.GroupOffsets"]


def _install_group_resolver(spark: Any) -> bool:
    """Give the JVM reader this process's group offsets resolver (py4j callback server).

    Without it, a ``startingOffsetsFromGroup`` read is handed to the Python source whole (same
    rows, Python speed).
    """
    try:
        from pyspark.java_gateway import ensure_callback_server_started

        gateway = spark.sparkContext._gateway
        ensure_callback_server_started(gateway)
        spark._jvm.io.kafkalog.spark.GroupStart.register(_GroupOffsetsResolver())
        return True
    except Exception as e:  # a session without a usable py4j callback server
        import logging

        logging.getLogger("kafkalog.spark").info(
            "kafkalog: startingOffsetsFromGroup reads will use the Python source (no py4j "
            "callback: %s)", e)
        return False


def activate(spark: Any) -> bool:
    """Make ``format("kafkalog")`` use the JVM reader in ``spark`` if it can be had.

    Returns True when the JVM reader is in use (already on the classpath via ``spark.jars``, or
    added now with ``ADD JAR``: see the module notes for the thread caveat). Otherwise warns
    (:class:`JvmReaderWarning`, saying why) and returns False: the Python source keeps serving
    ``format("kafkalog")``.
    """
    if jvm_reader_active(spark):
        _install_group_resolver(spark)
        return True
    try:
        path = jar_path()
    except JvmUnavailableError as e:
        warnings.warn(f"kafkalog: using the Python data source, the JVM reader is not "
                      f"available: {e.message}", JvmReaderWarning, stacklevel=3)
        return False
    if not hasattr(spark, "_jvm"):
        warnings.warn("kafkalog: using the Python data source: this session has no JVM "
                      "gateway (Spark Connect?); add the JVM reader with "
                      f"spark.jars={path} on the server", JvmReaderWarning, stacklevel=3)
        return False
    try:
        spark.sql("ADD JAR '" + path.replace("\\", "\\\\").replace("'", "\\'") + "'")
    except Exception as e:
        warnings.warn(f"kafkalog: using the Python data source: the running session could not "
                      f"add the JVM reader ({type(e).__name__}: {str(e).splitlines()[0]}); "
                      f"start the session with spark.jars={path}", JvmReaderWarning,
                      stacklevel=3)
        return False
    if jvm_reader_active(spark):
        _install_group_resolver(spark)
        return True
    warnings.warn("kafkalog: using the Python data source: ADD JAR did not make the JVM reader "
                  f"loadable in this session; start the session with spark.jars={path}",
                  JvmReaderWarning, stacklevel=3)
    return False


def main(argv: list[str] | None = None) -> int:
    """``python -m kafkalog.spark.jvm``: build if needed and print the jar's path."""
    try:
        print(jar_path())
    except JvmUnavailableError as e:
        print(f"kafkalog: {e.message}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
