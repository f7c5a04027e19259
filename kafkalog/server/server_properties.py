"""A broker's ``server.properties``, read for ``kafkalog serve --server-properties``: what the file
says about the directory, the listener, its security and the topic defaults, applied as Kafka
would apply it, and the rest named (never silently dropped).

* **The directory**: ``log.dirs`` (else ``log.dir``, else Kafka's ``/tmp/kafka-logs``). kafkalog
  serves one log dir: a list of several is refused unless the command line names one.
* **The listeners**: ``listeners`` (``NAME://host:port``, Kafka's default
  ``PLAINTEXT://:9092``) without the ``controller.listener.names`` ones (a KRaft controller
  listener: kafkalog has no controller quorum). Every broker listener is served (or only the one
  ``--listener`` names), each with its protocol from ``listener.security.protocol.map`` (Kafka's
  default map: each protocol's own name); an empty host binds every interface, as Kafka does. A
  client is told, in metadata and FindCoordinator answers, the ``advertised.listeners`` entry of
  the listener it connected to (as Kafka does: an internal and an external name for one broker).
* **Security**: ``sasl.enabled.mechanisms``, ``ssl.*`` and ``connections.*``, each also under the
  listener's prefix ``listener.name.<listener>.`` (which wins, as in Kafka), and the JAAS entries
  of ``listener.name.<listener>.<mechanism>.sasl.jaas.config``: PLAIN's ``user_<name>`` options
  and OAUTHBEARER's ``unsecuredValidator*`` ones. Keystores and truststores are PEM or PKCS12
  (JKS is refused, naming the property and how to convert it).
* **Broker settings** :class:`~kafkalog.server.broker.ServerConfig` knows (``node.id``, else
  ``broker.id``; ``num.partitions``, ``offsets.topic.num.partitions``, ``group.*``...), and the
  **topic defaults** (``log.retention.hours``, ``log.segment.bytes``...: what
  :meth:`kafkalog.config.LogConfig.from_properties` reads).
* **Everything else** (``process.roles``, ``controller.quorum.voters``, ``zookeeper.connect``,
  thread counts, replication factors...) is listed in :attr:`ServerProperties.ignored`, which the
  command prints as one warning.

The file is parsed by ``javaproperties`` (Java's ``Properties.load``: ``=``/``:``/space
separators, escapes, continuation lines).

>>> import io
>>> p = parse(io.StringIO("listeners=SASL_PLAINTEXT://127.0.0.1:9095\\nnode.id=3\\n"
...                       "log.dirs=/data/k\\nlog.retention.hours=1\\nnum.io.threads=8\\n"), "p")
>>> (p.log_dir, p.host, p.port, p.config.security_protocol, p.config.node_id, p.ignored)
('/data/k', '127.0.0.1', 9095, 'SASL_PLAINTEXT', 3, ['num.io.threads'])
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import IO, Any

from ..config import LogConfig
from ..errors import ConfigError
from ..security.jaas import OAUTHBEARER_LOGIN_MODULE, login_module_options, plain_users
from .broker import _PROPERTIES, SECURITY_PROTOCOLS, ServerConfig
from .listener import Listener

__all__ = ["ServerProperties", "load", "parse"]

#: Kafka's default listener.security.protocol.map
_DEFAULT_PROTOCOL_MAP = {p: p for p in SECURITY_PROTOCOLS}
#: properties read here beyond ServerConfig's and LogConfig's
_READ_HERE = {"log.dirs", "log.dir", "listeners", "advertised.listeners",
              "listener.security.protocol.map", "controller.listener.names", "node.id",
              "broker.id"}
#: names a listener may set for its OAUTHBEARER mechanism (listener.name.<l>.oauthbearer.<name>)
_PER_MECHANISM = {"sasl.server.callback.handler.class", "sasl.oauthbearer.jwks.endpoint.url",
                  "sasl.oauthbearer.expected.audience", "sasl.oauthbearer.expected.issuer",
                  "sasl.oauthbearer.sub.claim.name", "sasl.oauthbearer.scope.claim.name",
                  "sasl.oauthbearer.clock.skew.seconds",
                  "sasl.oauthbearer.jwks.endpoint.refresh.ms",
                  "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms"}
#: names that may carry the listener prefix (listener.name.<l>.<name>)
_PER_LISTENER = {"sasl.enabled.mechanisms", "connections.max.reauth.ms",
                 "connections.failed.authentication.delay.ms"}


@dataclass
class ServerProperties:
    """What a ``server.properties`` asks of ``kafkalog serve``."""

    log_dir: str
    """The one log dir to serve (``log.dirs``)."""
    host: str
    port: int
    config: ServerConfig
    log_config: dict[str, str] = field(default_factory=dict)
    """The topic defaults (``log.*`` and other LogConfig names), as the file spells them."""
    listener: str = "PLAINTEXT"
    """The main listener's name (``host``, ``port`` and ``config`` are its)."""
    extra_listeners: list[Listener] = field(default_factory=list)
    """The other broker listeners, each with its own security settings and advertised
    address."""
    ignored: list[str] = field(default_factory=list)
    """Properties kafkalog does not apply, sorted."""


def load(path: str | os.PathLike[str], *, listener: str | None = None,
         log_dir: str | None = None, **fields: Any) -> ServerProperties:
    """Read ``path`` (see the module docstring); ``listener``/``log_dir`` choose among several,
    ``fields`` override ServerConfig fields.

    Raises
    ------
    ConfigError
        The file cannot be read, or says something kafkalog cannot serve, naming the property.
    """
    try:
        with open(path, encoding="latin-1") as f:  # (Properties.load(InputStream) is ISO-8859-1)
            return parse(f, os.fspath(path), listener=listener, log_dir=log_dir, **fields)
    except OSError as e:
        raise ConfigError(f"cannot read the server properties: {e.strerror}", path=path) from None


def parse(f: IO[str], where: str, *, listener: str | None = None, log_dir: str | None = None,
          **fields: Any) -> ServerProperties:
    """:func:`load` from an open text file; ``where`` names it in errors."""
    import javaproperties

    try:
        props: dict[str, str] = dict(javaproperties.load(f))
    except (ValueError, UnicodeError) as e:
        raise ConfigError(f"{where}: not a Java properties file ({e})") from None
    used: set[str] = set()

    def get(key: str, default: str | None = None) -> str | None:
        if key in props:
            used.add(key)
            return props[key].strip()
        return default

    # -- the directory
    dirs = [d.strip() for d in (get("log.dirs") or get("log.dir") or "/tmp/kafka-logs")
            .split(",") if d.strip()]
    get("log.dir")  # (consumed when log.dirs wins, as Kafka ignores it then)
    if log_dir is None:
        if len(dirs) != 1:
            raise ConfigError(f"{where}: log.dirs names {len(dirs)} directories "
                              f"({', '.join(dirs)}); kafkalog serves one: give it on the "
                              "command line")
        log_dir = dirs[0]

    # -- the listener
    proto_map = dict(_DEFAULT_PROTOCOL_MAP)
    raw_map = get("listener.security.protocol.map")
    if raw_map:
        proto_map = {}
        for item in raw_map.split(","):
            name, sep, proto = item.strip().partition(":")
            if not sep or proto.strip().upper() not in SECURITY_PROTOCOLS:
                raise ConfigError(f"{where}: listener.security.protocol.map: expected "
                                  f"NAME:PROTOCOL entries, found {item.strip()!r}")
            proto_map[name.strip().upper()] = proto.strip().upper()
    controllers = {n.strip().upper() for n in (get("controller.listener.names") or "").split(",")
                   if n.strip()}
    listeners = _listeners(get("listeners") or "PLAINTEXT://:9092", "listeners", where)
    brokers = {n: hp for n, hp in listeners.items() if n not in controllers}
    if not brokers:
        raise ConfigError(f"{where}: listeners has no broker listener (only the controller's: "
                          f"{', '.join(listeners)})")
    if listener is not None:
        if listener.upper() not in brokers:
            raise ConfigError(f"{where}: no broker listener named {listener!r} in listeners "
                              f"(broker listeners: {', '.join(brokers)})")
        served = [listener.upper()]
    else:
        served = list(brokers)  # every broker listener, the first one the main one
    for name in served:
        if name not in proto_map:
            raise ConfigError(f"{where}: listener {name} has no protocol in "
                              "listener.security.protocol.map")
    advertised = _listeners(get("advertised.listeners") or "", "advertised.listeners", where)
    node = get("node.id") or get("broker.id")
    if node is not None:
        try:
            fields.setdefault("node_id", int(node))
        except ValueError:
            raise ConfigError(f"{where}: node.id: expected an integer, found {node!r}") from None
    global_props: dict[str, str] = {}
    for key, value in props.items():
        if key in _PROPERTIES:
            global_props[key] = value
            used.add(key)

    def listener_config(name: str) -> ServerConfig:
        """The broker settings with the listener's protocol, advertised address and own
        ``listener.name.<l>.`` values (which win over the global ones, as in Kafka)."""
        prefix = f"listener.name.{name.lower()}."
        config_props = dict(global_props)
        for key, value in props.items():
            base = key[len(prefix):] if key.startswith(prefix) else None
            if base is not None and (base in _PER_LISTENER or base.startswith("ssl.")):
                config_props[base] = value
                used.add(key)
            elif base is not None and base.startswith("oauthbearer.") and \
                    base[len("oauthbearer."):] in _PER_MECHANISM:
                # listener.name.<l>.oauthbearer.<name>: the mechanism's own settings
                config_props[base[len("oauthbearer."):]] = value
                used.add(key)
        config_props["security.protocol"] = proto_map[name]
        for key in [k for k in config_props if k.startswith("ssl.") and k not in _PROPERTIES]:
            config_props.pop(key)  # other ssl.* (cipher suites, protocols...): listed as ignored
            used.discard(key)
            used.discard(prefix + key)
        own = dict(fields)
        adv_host, adv_port = advertised.get(name, (None, None))
        own.setdefault("advertised_host", adv_host)
        own.setdefault("advertised_port", adv_port)
        jaas = {k[len(prefix):-len(".sasl.jaas.config")]: v for k, v in props.items()
                if k.startswith(prefix) and k.endswith(".sasl.jaas.config")}
        for mech_key in jaas:
            used.add(f"{prefix}{mech_key}.sasl.jaas.config")
        if "plain" in jaas:
            own.setdefault("sasl_plain_users", plain_users(
                jaas["plain"], where=f"{where}: {prefix}plain.sasl.jaas.config"))
        if "oauthbearer" in jaas:
            options = login_module_options(
                jaas["oauthbearer"], OAUTHBEARER_LOGIN_MODULE,
                where=f"{where}: {prefix}oauthbearer.sasl.jaas.config")
            if options is not None:
                own.setdefault("sasl_oauthbearer_options", options)
        try:
            return ServerConfig.from_properties(config_props, **own)
        except ConfigError as e:
            raise ConfigError(f"{where}: listener {name}: {e}") from None

    name = served[0]
    host, port = brokers[name]
    config = listener_config(name)
    extra = [Listener(n, _bind_host(brokers[n][0]), brokers[n][1], listener_config(n))
             for n in served[1:]]

    # -- topic defaults
    log_props = {k: v for k, v in props.items() if k not in used}
    topic_keys: set[str] = set()
    try:
        LogConfig.from_properties(log_props, applied=topic_keys)  # (checked here: errors name
    except ConfigError as e:                                      # the file)
        raise ConfigError(f"{where}: {e}") from None
    used |= topic_keys
    return ServerProperties(
        log_dir=log_dir, host=_bind_host(host), port=port, config=config,
        log_config={k: props[k] for k in sorted(topic_keys)}, listener=name,
        extra_listeners=extra, ignored=sorted(k for k in props if k not in used))


def _bind_host(host: str) -> str:
    return host or "0.0.0.0"  # Kafka: an empty host binds every interface


def _listeners(text: str, what: str, where: str) -> dict[str, tuple[str, int]]:
    """``NAME://host:port,...`` -> {NAME: (host, port)} (Kafka's listener syntax; IPv6 hosts
    in brackets)."""
    out: dict[str, tuple[str, int]] = {}
    for item in (i.strip() for i in text.split(",") if i.strip()):
        name, sep, rest = item.partition("://")
        host, _, port = rest.rpartition(":")
        if not sep or not name or not port.isdigit():
            raise ConfigError(f"{where}: {what}: expected NAME://host:port entries, found "
                              f"{item!r}")
        if name.upper() in out:
            raise ConfigError(f"{where}: {what}: listener {name} appears twice")
        out[name.upper()] = (host.strip("[]"), int(port))
    return out
