"""``kafkalog mirror``: topics of a live Kafka endpoint copied batch for batch into a log dir.

::

    kafkalog mirror --bootstrap-server broker:9092 /backup/kafka-logs --topic 'orders.*'

fetches every partition of the topics named (names or regular expressions; default: every topic
but internal ones) as a follower replica does (:mod:`kafkalog.mirror.mirror`) and prints a
summary per partition::

    orders-0  fetched 120 batches, 12000 records, 1.2 MB; log 0..12000, high watermark 12000
      truncated 130 -> 100: diverging epoch 1 ending at offset 100 (...)
      GAP: offsets 0..99 deleted on the source before they were mirrored

``--follow`` keeps fetching until Ctrl-C (the log dir is closed cleanly, checkpoints written)
and takes in the topics and partitions the source gains (every ``-X metadata.max.age.ms``,
5 minutes by default).
A partition whose leader moves or becomes unreachable (a broker restarting, an election) is
looked up again and fetched from its new leader after Kafka's backoff, for up to
``--retry-timeout`` seconds (default 60; no limit with ``--follow``);
``--start-offset latest`` starts new partitions at the source's high watermark; ``--config
segment.bytes=N`` (repeatable) sets the local log dir's defaults; ``--json`` prints the reports
as one JSON document.

Security, as Kafka's tools take it: ``--command-config FILE`` is a Java properties file of Kafka
client settings and ``-X KEY=VALUE`` (``--command-property``, repeatable) overrides them::

    security.protocol=SASL_SSL
    sasl.mechanism=SCRAM-SHA-512
    sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\
        username="alice" password="alice-secret";
    ssl.truststore.location=/etc/kafka/ca.pem
    ssl.truststore.type=PEM

(TLS with a truststore and a keystore for mutual TLS, SASL PLAIN and SCRAM-SHA-256/512:
:mod:`kafkalog.mirror.security`). Every connection, the bootstrap broker's and the leaders', uses
them. A failed login is an error naming the broker and giving its message (exit 1).

Exit status: 0 when every partition was mirrored (gaps are warnings: printed, exit 0); 1 on
errors (the source unreachable or refusing the login, an unknown topic, a partition that
failed); 2 for usage errors (a bad option, a client property not valid or not supported, a
``--command-config`` or store that cannot be read).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import threading
import time
from collections.abc import Sequence
from typing import IO, Any

from ..console.command_line import load_props, parse_key_value_args
from ..errors import ConfigError, KafkaLogError
from ..usage import ArgumentParser, UsageError, key_value_pairs, parse_args
from .mirror import Mirror, MirrorProgress, MirrorResult, PartitionReport

__all__ = ["main", "build_parser", "format_result", "client_config"]

EXIT_OK = 0
EXIT_ERRORS = 1


def build_parser() -> argparse.ArgumentParser:
    """The ``kafkalog mirror`` argument parser."""
    p = ArgumentParser(
        prog="kafkalog mirror",
        description="Copy topics of a live Kafka endpoint into a Kafka-format log dir batch for "
                    "batch, as a follower replica does: same offsets, same bytes.")
    p.add_argument("directory", metavar="DIR", help="the local log dir (created if needed; an "
                                                     "earlier run's resumes)")
    p.add_argument("--bootstrap-server", required=True, metavar="HOST:PORT[,HOST:PORT...]",
                   help="brokers of the source, tried in order (the partitions are fetched "
                        "from their leaders, looked up again when a leader moves)")
    p.add_argument("--topic", action="append", metavar="NAME_OR_REGEX",
                   help="a topic name or a regular expression matching whole names "
                        "(repeatable; default: every topic but internal ones)")
    p.add_argument("--partition", action="append", type=int, metavar="N",
                   help="only this partition number (repeatable)")
    p.add_argument("--follow", action="store_true",
                   help="keep fetching new records until interrupted (Ctrl-C), and take in "
                        "new topics and partitions of the source (every metadata.max.age.ms)")
    p.add_argument("--start-offset", choices=("earliest", "latest"), default="earliest",
                   help="where a partition new to DIR starts: the source's log start offset "
                        "(default) or its high watermark")
    p.add_argument("--config", action="append", default=[], metavar="NAME=VALUE",
                   help="a default of the local log dir, e.g. segment.bytes=1073741824 "
                        "(repeatable)")
    p.add_argument("--progress-interval", type=float, default=10.0, metavar="SECONDS",
                   help="print a progress line to stderr every SECONDS while mirroring "
                        "(records copied, MB/s, records behind the source); 0: none "
                        "(default 10)")
    p.add_argument("--retry-timeout", type=float, default=None, metavar="SECONDS",
                   help="give a partition up after it failed for SECONDS with retriable errors "
                        "(its leader moved or unreachable); default 60, none with --follow "
                        "(retried as long as it runs)")
    p.add_argument("--no-topic-configs", action="store_true",
                   help="do not give the copy's topics the source topics' own configs "
                        "(their overrides, read with DescribeConfigs)")
    p.add_argument("--command-config", default=None, metavar="FILE",
                   help="a properties file of Kafka client settings for every connection: "
                        "security.protocol, ssl.truststore.location, ssl.keystore.location, "
                        "ssl.endpoint.identification.algorithm, sasl.mechanism (PLAIN, "
                        "SCRAM-SHA-256, SCRAM-SHA-512), sasl.jaas.config, client.id, "
                        "retry.backoff.ms, retry.backoff.max.ms, metadata.max.age.ms (how "
                        "often --follow looks for new topics and partitions)")
    p.add_argument("-X", "--command-property", action="append", default=[],
                   metavar="KEY=VALUE",
                   help="a Kafka client setting, over --command-config's (repeatable)")
    p.add_argument("--json", action="store_true", help="print the reports as one JSON document")
    return p


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def _format_partition(r: PartitionReport) -> list[str]:
    head = f"{r.topic}-{r.partition}"
    if r.log_end_offset < 0:
        return [f"{head}  not mirrored: {r.error}"]
    lines = [f"{head}  fetched {r.batches} batches, {r.records} records, {_mb(r.bytes)}; log "
             f"{r.log_start_offset}..{r.log_end_offset}, high watermark {r.high_watermark} "
             f"(source: {r.source_log_start_offset}..{r.source_high_watermark})"]
    lines += [f"  truncated {t.from_offset} -> {t.to_offset}: {t.reason}" for t in r.truncations]
    lines += [f"  GAP: offsets {g.from_offset}..{g.to_offset - 1} deleted on the source before "
              f"they were mirrored (warning)" for g in r.gaps]
    if r.source_deleted:
        lines.append("  the topic was deleted on the source during the run: the copy keeps its "
                     "records (warning)")
    if r.retries:
        lines.append(f"  retried {r.retries} time(s) (leader moved or unreachable); last "
                     f"leader node {r.leader}")
    if r.error:
        lines.append(f"  ERROR: {r.error}")
    return lines


def format_progress(p: MirrorProgress, mb_per_s: float) -> str:
    """One progress line."""
    return (f"kafkalog mirror: progress: {p.partitions} partitions, {p.records:,} records "
            f"({_mb(p.bytes)}) copied, {mb_per_s:.1f} MB/s; {p.lag:,} records behind the "
            f"source's high watermarks"
            + (f"; {p.retrying} partitions retrying" if p.retrying else ""))


def _report_progress(m: Mirror, interval: float, done: threading.Event, err: IO[str]) -> None:
    """Every ``interval`` seconds until ``done``: the run's progress on ``err``."""
    last_bytes, last_t = 0, time.monotonic()
    while not done.wait(interval):
        p = m.progress()
        now = time.monotonic()
        rate = (p.bytes - last_bytes) / 1e6 / max(now - last_t, 1e-9)
        last_bytes, last_t = p.bytes, now
        err.write(format_progress(p, rate) + "\n")
        err.flush()


def format_result(result: MirrorResult) -> list[str]:
    """The text summary: one paragraph per partition, then a total line."""
    lines = []
    for topic, c in sorted(result.topic_configs.items()):
        if c.error:
            lines.append(f"{topic}  topic configs not copied: {c.error}")
        elif c.copied or c.skipped:
            lines.append(f"{topic}  topic configs copied: "
                         + (", ".join(f"{k}={v}" for k, v in sorted(c.copied.items()))
                            or "none")
                         + (f"; not implemented here, skipped: {', '.join(c.skipped)}"
                            if c.skipped else ""))
    for r in result.partitions:
        lines += _format_partition(r)
    n = len(result.partitions)
    failed = len(result.errors)
    gaps = len(result.gaps)
    lines.append(
        f"Mirrored {n - failed} of {n} partitions from {result.bootstrap_server} into "
        f"{result.directory}: {sum(r.records for r in result.partitions)} records, "
        f"{_mb(sum(r.bytes for r in result.partitions))}; {gaps} gap(s) (warnings), "
        f"{failed} error(s)" + ("; interrupted" if result.interrupted else ""))
    return lines


def client_config(command_config: str | None, overrides: Sequence[str]) -> dict[str, str]:
    """The client properties: the ``--command-config`` file's, then the ``-X`` overrides.

    Raises
    ------
    ValueError
        An override without ``=``; OSError: the file cannot be read.
    """
    props = load_props(command_config) if command_config is not None else {}
    bad = [o for o in overrides if "=" not in o or not o.partition("=")[0].strip()]
    if bad:
        raise ValueError(f"-X takes KEY=VALUE (found {bad[0]!r})")
    props.update({k.strip(): v for k, v in parse_key_value_args(overrides).items()})
    return props


def main(argv: Sequence[str] | None = None, *, stdout: IO[str] | None = None,
         stderr: IO[str] | None = None) -> int:
    """Run ``kafkalog mirror``; returns the exit status."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    args, status = parse_args(build_parser(), argv, err)
    if args is None:
        return status
    try:
        config = {k: v.strip() for k, v in key_value_pairs(args.config, "--config").items()}
        client = client_config(args.command_config, args.command_property)
    except (UsageError, ValueError) as e:
        err.write(f"kafkalog mirror: error: {e}\n")
        return 2
    except OSError as e:
        err.write(f"kafkalog mirror: error: cannot read --command-config "
                  f"{args.command_config}: {e.strerror or e}\n")
        return 2

    def warn(msg: str) -> None:
        err.write(f"kafkalog mirror: WARNING: {msg}\n")
        err.flush()

    try:
        m = Mirror(args.bootstrap_server, args.directory, topics=args.topic,
                   partitions=args.partition, follow=args.follow,
                   start_offset=args.start_offset, config=config, client_config=client,
                   copy_topic_configs=not args.no_topic_configs,
                   retry_timeout=args.retry_timeout, warn=warn)
    except (ConfigError, ValueError) as e:
        err.write(f"kafkalog mirror: error: {e}\n")
        return 2
    # Ctrl-C (and SIGTERM) end the run after the fetch in flight: nothing is interrupted
    # mid-append, the log dir is closed cleanly (checkpoints written); a second Ctrl-C stops
    # at once
    def stop(signum: int, frame: Any) -> None:
        m.stop()
        with contextlib.suppress(ValueError):
            signal.signal(signal.SIGINT, signal.default_int_handler)

    previous: dict[int, Any] = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            previous[sig] = signal.signal(sig, stop)
        except ValueError:  # not the main thread: Ctrl-C raises KeyboardInterrupt as usual
            pass
    done = threading.Event()
    reporter = None
    if args.progress_interval > 0:
        reporter = threading.Thread(target=_report_progress, daemon=True,
                                    args=(m, args.progress_interval, done, err))
        reporter.start()
    try:
        result = m.run()
    except (KafkaLogError, OSError, ValueError) as e:
        err.write(f"kafkalog mirror: error: {e}\n")
        return EXIT_ERRORS
    except KeyboardInterrupt:
        err.write("kafkalog mirror: interrupted\n")
        return EXIT_ERRORS
    finally:
        done.set()
        if reporter is not None:
            reporter.join(5)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if args.json:
        out.write(json.dumps(result.to_json()) + "\n")
    else:
        out.write("\n".join(format_result(result)) + "\n")
    for e in result.errors:
        err.write(f"kafkalog mirror: error: {e}\n")
    if result.interrupted and not args.follow:
        err.write("kafkalog mirror: error: interrupted before every partition reached the "
                  "high watermark it had when the run started\n")
        return EXIT_ERRORS
    return EXIT_OK if result.ok else EXIT_ERRORS
