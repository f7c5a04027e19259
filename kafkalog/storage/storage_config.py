"""What ``kafka-storage.sh`` reads from a node's ``server.properties``, checked as Kafka's
``KafkaConfig`` checks it before the tool runs.

The storage tool needs the node's roles, id and directories (``process.roles``, ``node.id``,
``log.dirs``/``log.dir``, ``metadata.log.dir``), the controller listener
(``controller.listener.names``, ``listeners``, ``advertised.listeners``) and the quorum
(``controller.quorum.voters``, ``controller.quorum.bootstrap.servers``), plus
``unstable.feature.versions.enable``. Kafka 4.2 refuses a file that lacks a required one or
breaks a KRaft rule before formatting anything; so does :func:`load`, with Kafka's texts
(``KafkaConfig.validateValues``, ``QuorumConfig.parseVoterConnections``). Other properties
are not the storage tool's business and are ignored.

>>> import io
>>> c = parse(io.StringIO("process.roles=broker,controller\\nnode.id=1\\n"
...     "controller.quorum.voters=1@localhost:9093\\nlisteners=PLAINTEXT://:9092,"
...     "CONTROLLER://:9093\\ncontroller.listener.names=CONTROLLER\\nlog.dirs=/b,/a\\n"), "p")
>>> c.log_directories(), c.metadata_log_dir, c.static_voters
(['/a', '/b'], '/b', {1: ('localhost', 9093)})
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import IO

from ..errors import ConfigError
from ..usage import java_int, java_split

__all__ = ["StorageConfig", "load", "parse", "Endpoint"]

_DEFAULT_LOG_DIR = "/tmp/kafka-logs"
_LISTENER = re.compile(r"^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)$")


@dataclass(frozen=True)
class Endpoint:
    """A listener: name, host (None for an empty host) and port."""

    listener: str
    host: str | None
    port: int


@dataclass
class StorageConfig:
    """The storage tool's view of a ``server.properties``."""

    process_roles: list[str]
    node_id: int
    log_dirs: list[str]
    metadata_log_dir: str
    controller_listener_names: list[str]
    listeners: list[Endpoint] = field(default_factory=list)
    advertised_listeners: list[Endpoint] | None = None
    static_voters: dict[int, tuple[str, int]] = field(default_factory=dict)
    bootstrap_servers: list[str] = field(default_factory=list)
    unstable_feature_versions_enabled: bool = False

    def log_directories(self) -> list[str]:
        """``StorageTool.configToLogDirectories``: the log dirs and the metadata log dir,
        sorted, each once."""
        return sorted({*self.log_dirs, self.metadata_log_dir})

    @property
    def is_controller(self) -> bool:
        return "controller" in self.process_roles

    def advertised_controller_listeners(self) -> list[Endpoint]:
        """``effectiveAdvertisedControllerListeners``: per controller listener name, its
        ``advertised.listeners`` entry, else its ``listeners`` entry (host 0.0.0.0 as none)."""
        names = [n.upper() for n in self.controller_listener_names]
        advertised = [e for e in (self.advertised_listeners or []) if e.listener.upper() in names]
        out = []
        for name in names:
            hit = next((e for e in advertised if e.listener.upper() == name), None)
            if hit is None:
                e = next((e for e in self.listeners if e.listener.upper() == name), None)
                if e is not None:
                    hit = Endpoint(e.listener, None, e.port) if e.host == "0.0.0.0" else e
            if hit is not None:
                out.append(hit)
        return out


def _listeners(text: str, prop: str, where: str) -> list[Endpoint]:
    out = []
    for entry in (s.strip() for s in java_split(text)):
        if not entry:
            continue
        m = _LISTENER.match(entry)
        if m is None:
            raise ConfigError(f"Error creating broker listeners from '{text}': Unable to parse "
                              f"{entry} to a broker endpoint", path=where)
        out.append(Endpoint(m.group(1), m.group(2) or None, int(m.group(3))))
    return out


def _voters(text: str, where: str) -> dict[int, tuple[str, int]]:
    """``QuorumConfig.parseVoterConnections`` (``{id}@{host}:{port}`` entries)."""
    out: dict[int, tuple[str, int]] = {}
    form = "Each entry should be in the form `{id}@{host}:{port}`."
    for entry in (s.strip() for s in java_split(text)):
        if not entry:
            continue
        parts = java_split(entry, "@")
        if len(parts) != 2:
            raise ConfigError("Invalid configuration value for controller.quorum.voters. "
                              + form, path=where)
        try:
            voter = java_int(parts[0])
        except ValueError:
            raise ConfigError(f"Failed to parse voter ID as an integer from {parts[0]}",
                              path=where) from None
        host, colon, port = parts[1].rpartition(":")
        host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
        if not colon or not host:
            raise ConfigError(f"Failed to parse host name from entry {entry} for the "
                              f"configuration controller.quorum.voters. {form}", path=where)
        if not port.isdigit():
            raise ConfigError(f"Failed to parse host port from entry {entry} for the "
                              f"configuration controller.quorum.voters. {form}", path=where)
        out[voter] = (host, int(port))
    return out


def load(path: str | os.PathLike[str]) -> StorageConfig:
    """Read ``path`` (see the module docstring).

    Raises
    ------
    ConfigError
        The file cannot be read, lacks a required property or breaks a KRaft rule (Kafka's
        text, naming the property).
    """
    try:
        with open(path, encoding="latin-1") as f:  # Properties.load(InputStream): ISO-8859-1
            return parse(f, os.fspath(path))
    except OSError as e:
        raise ConfigError(f"cannot read the server properties: {e.strerror}", path=path) from None


def parse(f: IO[str], where: str) -> StorageConfig:
    """:func:`load` from an open text file; ``where`` names it in errors."""
    import javaproperties

    try:
        props: dict[str, str] = dict(javaproperties.load(f))
    except (ValueError, UnicodeError) as e:
        raise ConfigError(f"{where}: not a Java properties file ({e})") from None

    def required(key: str) -> str:
        if key not in props:
            raise ConfigError(f'Missing required configuration "{key}" which has no default '
                              "value.", path=where)
        return props[key].strip()

    def lst(text: str) -> list[str]:
        return [s.strip() for s in java_split(text) if s.strip()]

    roles = lst(required("process.roles"))
    for role in roles:
        if role not in ("broker", "controller"):
            raise ConfigError(f"Unknown process role '{role}' (only 'broker' and 'controller' "
                              "are allowed roles)", path=where)
    if not roles:
        raise ConfigError("Configuration 'process.roles' must not be empty", path=where)
    raw_id = required("node.id")
    try:
        node_id = java_int(raw_id)
    except ValueError:
        raise ConfigError(f"Invalid value {raw_id} for configuration node.id: Not a number of "
                          "type INT", path=where) from None
    if node_id < 0:
        raise ConfigError(f"Invalid value {node_id} for configuration node.id: Value must be at "
                          "least 0", path=where)
    controller_names = lst(required("controller.listener.names"))
    log_dirs = lst(props.get("log.dirs") or props.get("log.dir") or _DEFAULT_LOG_DIR)
    if not log_dirs:
        raise ConfigError("At least one log directory must be defined via log.dirs or log.dir.",
                          path=where)
    metadata_log_dir = (props.get("metadata.log.dir") or "").strip() or log_dirs[0]
    listeners = _listeners(props.get("listeners", "PLAINTEXT://:9092"), "listeners", where)
    advertised = (_listeners(props["advertised.listeners"], "advertised.listeners", where)
                  if "advertised.listeners" in props else None)
    voters = _voters(props.get("controller.quorum.voters", ""), where)
    bootstrap = lst(props.get("controller.quorum.bootstrap.servers", ""))
    unstable = props.get("unstable.feature.versions.enable", "false").strip().lower() == "true"
    cfg = StorageConfig(roles, node_id, log_dirs, metadata_log_dir, controller_names,
                        listeners, advertised, voters, bootstrap, unstable)
    _validate(cfg, where)
    return cfg


def _validate(c: StorageConfig, where: str) -> None:
    """The KRaft rules of ``KafkaConfig.validateValues`` that concern the storage tool."""

    def require(ok: bool, message: str) -> None:
        if not ok:
            raise ConfigError(f"requirement failed: {message}", path=where)

    voter_ids = set(c.static_voters)
    roles = set(c.process_roles)
    if not voter_ids and not c.bootstrap_servers:
        raise ConfigError(
            "If using process.roles, either controller.quorum.bootstrap.servers must contain "
            "the set of bootstrap controllers or controller.quorum.voters must contain a "
            "parseable set of controllers.", path=where)
    # Scala's Set.toString (small sets keep insertion order; sorted here)
    voters_text = "Set(" + ", ".join(str(v) for v in sorted(voter_ids)) + ")"
    names = {n.upper() for n in c.controller_listener_names}
    if roles == {"broker"}:
        require(c.node_id not in voter_ids,
                f"If process.roles contains just the 'broker' role, the node id {c.node_id} "
                f"must not be included in the set of voters controller.quorum.voters={voters_text}")
        require(bool(c.controller_listener_names),
                "controller.listener.names must contain at least one value when running KRaft "
                "with just the broker role")
        require(not any(e.listener.upper() in names for e in c.listeners),
                "controller.listener.names must not contain a value appearing in the "
                "'listeners' configuration when running KRaft with just the broker role")
    else:
        require(not voter_ids or c.node_id in voter_ids,
                f"If process.roles contains the 'controller' role, the node id {c.node_id} "
                f"must be included in the set of voters controller.quorum.voters={voters_text}")
        require(bool(c.advertised_controller_listeners()),
                "controller.listener.names must contain at least one value appearing in the "
                "'listeners' configuration when running the KRaft controller role")
        listener_names = {e.listener for e in c.listeners}
        require(all(n in listener_names for n in c.controller_listener_names),
                "controller.listener.names must only contain values appearing in the "
                "'listeners' configuration when running the KRaft controller role")
