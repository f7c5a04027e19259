"""``kafkalog serve [DIR] [--server-properties FILE [--listener NAME]] [--host 127.0.0.1]
[--port 9092] [--node-id 1] [-c KEY=VALUE]... [--security-protocol P] [--jaas-config FILE]
[--add-scram SPEC]...``.

Serve a log directory to Kafka clients until SIGINT/SIGTERM, then close it cleanly (every log
flushed and closed, ``.kafka_cleanshutdown`` written). Binds to loopback unless ``--host`` names
another address. ``-c``/``--config`` sets a broker property by Kafka's name (``num.partitions``,
``group.initial.rebalance.delay.ms``, ``group.consumer.heartbeat.interval.ms``,
``group.consumer.migration.policy``...; :meth:`ServerConfig.from_properties` lists them). Exit
status 0 after a clean shutdown, 1 when the directory or the address
cannot be used (locked by another writer, port taken, ``kio`` missing), 2 for usage errors.

Security (Kafka's listener protocols): ``--security-protocol SSL`` or ``SASL_SSL`` with ``-c
ssl.keystore.location=server.pem`` (key and certificate chain, PEM) serves TLS;
``SASL_PLAINTEXT``/``SASL_SSL`` require SASL authentication: PLAIN against the ``user_<name>``
options of the ``PlainLoginModule`` in ``--jaas-config`` (Kafka's JAAS file), SCRAM-SHA-256/512
against the tree's SCRAM credentials, which ``--add-scram 'SCRAM-SHA-256=[name=alice,
password=alice-secret]'`` adds before serving (``kafka-storage.sh format --add-scram``'s syntax)
and AlterUserScramCredentials changes while serving; OAUTHBEARER (when ``-c
sasl.enabled.mechanisms`` names it) checks unsecured JWS tokens as Kafka's default validator does,
with the ``unsecuredValidator*`` options of the JAAS file's ``OAuthBearerLoginModule``. ``-c
connections.max.reauth.ms=N`` makes clients re-authenticate (KIP-368).

``--server-properties`` reads a broker's ``server.properties``
(:mod:`kafkalog.server.server_properties`): ``log.dirs``, every broker listener of ``listeners``
(or the one ``--listener`` names) with its protocol, advertised address and
``listener.name.<l>.*`` security settings (SSL files, JAAS users), the broker settings kafkalog
knows and the topic defaults (``log.retention.hours``...). The properties kafkalog does not
apply are listed in one warning line. Options given here override the file (``--host``,
``--port``, ``--security-protocol`` and ``-c`` apply to the first listener).

Example
-------
>>> main(["--help"])  # doctest: +SKIP
0
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from ..usage import UsageError, key_value_pairs

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="kafkalog serve",
        description="Serve a log directory over the Kafka protocol (one node leading every "
        "partition) until SIGINT/SIGTERM.")
    p.add_argument("dir", nargs="?", default=None,
                   help="the log directory (a log.dirs entry; created when absent; default: "
                        "the log.dirs of --server-properties)")
    p.add_argument("--server-properties", default=None, metavar="FILE",
                   help="a broker's server.properties: its log.dirs, listener, security "
                        "settings, broker settings and topic defaults (the options here win)")
    p.add_argument("--listener", default=None, metavar="NAME",
                   help="with --server-properties: serve only this listener (default: every "
                        "broker listener)")
    p.add_argument("--host", default=None,
                   help="address to bind (default 127.0.0.1: loopback only)")
    p.add_argument("--port", type=int, default=None, help="port to bind (default 9092)")
    p.add_argument("--node-id", type=int, default=None, help="node.id (default 1)")
    p.add_argument("--advertised-host", default=None,
                   help="host name clients are told to connect to (default: the bound one)")
    p.add_argument("-c", "--config", action="append", default=[], metavar="KEY=VALUE",
                   help="a broker property by Kafka's name, e.g. num.partitions=3 or "
                        "group.consumer.heartbeat.interval.ms=1000 (repeatable)")
    p.add_argument("--security-protocol", default=None,
                   choices=["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"],
                   help="the listener's protocol (default PLAINTEXT; same as -c "
                        "security.protocol=...)")
    p.add_argument("--jaas-config", default=None, metavar="FILE",
                   help="a Kafka JAAS file: the user_<name>=\"<password>\" options of its "
                        "PlainLoginModule entries are the SASL/PLAIN users")
    p.add_argument("--add-scram", action="append", default=[], metavar="SPEC",
                   help="store a SCRAM credential before serving: "
                        "'SCRAM-SHA-256=[name=alice,password=alice-secret]' (optional "
                        "iterations=N, 4096..16384; repeatable)")
    p.add_argument("--log-level", default="INFO",
                   choices=["DEBUG", "INFO", "WARNING", "ERROR"], help="server log level")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``kafkalog serve``; returns the exit status."""
    try:
        args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 2
    logging.basicConfig(level=getattr(logging, args.log_level), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        from ..errors import KafkaLogError
        from ..security import parse_add_scram
        from .broker import ServerConfig
        from .listener import check as check_listener
        from .server import KafkaServer
    except ImportError as e:
        sys.stderr.write(f"kafkalog serve: needs the server extra, pip install "
                         f"'kafkalog[server]' ({e})\n")
        return 1
    try:
        props = key_value_pairs(args.config, "--config")
    except UsageError as e:
        sys.stderr.write(f"kafkalog serve: {e}\n")
        return 2
    if args.security_protocol is not None:
        props["security.protocol"] = args.security_protocol
    if args.dir is None and args.server_properties is None:
        sys.stderr.write("kafkalog serve: give the log directory (or --server-properties "
                         "with log.dirs)\n")
        return 2
    fields: dict = {}
    if args.node_id is not None:
        fields["node_id"] = args.node_id
    if args.advertised_host is not None:
        fields["advertised_host"] = args.advertised_host
    log_dir, host, port, log_config, listeners = args.dir, args.host, args.port, None, []
    try:
        if args.jaas_config is not None:
            from ..security import plain_users
            from ..security.jaas import OAUTHBEARER_LOGIN_MODULE, login_module_options

            try:
                text = open(args.jaas_config, encoding="utf-8").read()
            except OSError as e:
                sys.stderr.write(f"kafkalog serve: cannot read --jaas-config: {e}\n")
                return 2
            fields["sasl_plain_users"] = plain_users(text, where=args.jaas_config)
            oauth = login_module_options(text, OAUTHBEARER_LOGIN_MODULE, where=args.jaas_config)
            if oauth is not None:
                fields["sasl_oauthbearer_options"] = oauth
        scram = [parse_add_scram(spec) for spec in args.add_scram]
        if args.server_properties is not None:
            import dataclasses

            from .server_properties import load

            sp = load(args.server_properties, listener=args.listener, log_dir=args.dir,
                      **fields)
            if sp.ignored:
                sys.stderr.write(f"kafkalog serve: {args.server_properties}: not applied by "
                                 f"kafkalog: {', '.join(sp.ignored)}\n")
            fields = {f.name: getattr(sp.config, f.name)
                      for f in dataclasses.fields(sp.config)}
            log_dir, log_config, listeners = sp.log_dir, sp.log_config, sp.extra_listeners
            host = sp.host if host is None else host
            port = sp.port if port is None else port
        elif args.listener is not None:
            sys.stderr.write("kafkalog serve: --listener needs --server-properties\n")
            return 2
        config = ServerConfig.from_properties(props, **fields)
        check_listener(config)
    except KafkaLogError as e:
        sys.stderr.write(f"kafkalog serve: {e}\n")
        return 2
    host = "127.0.0.1" if host is None else host
    port = 9092 if port is None else port
    try:
        KafkaServer(log_dir, host, port, config=config, log_config=log_config,
                    add_scram=scram, listeners=listeners).serve_forever()
    except KafkaLogError as e:
        sys.stderr.write(f"kafkalog serve: {e}\n")
        return 1
    except OSError as e:
        sys.stderr.write(f"kafkalog serve: cannot serve {log_dir} on {host}:{port}: {e}\n")
        return 1
    return 0
