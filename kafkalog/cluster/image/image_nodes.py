"""The metadata image as Kafka's node tree (``org.apache.kafka.image.node``, Kafka 4.2).

``MetadataImageNode(image)`` is the ``/image`` directory of ``kafka-metadata-shell``::

    /image/provenance                       offset O, epoch E, time <ISO zoned UTC>
    /image/features/metadataVersion         Optional[3.7-IV4]   (Kafka 4.2 prints the Optional)
    /image/features/finalized_<feature>     level
    /image/cluster/brokers/<id>             BrokerRegistration(...)
    /image/cluster/controllers/<id>         ControllerRegistration(...)
    /image/topics/byName/<name>/{name,id,<partition>}
    /image/topics/byId/<uuid>/...           the same topic nodes
    /image/configs/<TYPE>[:<name>]/<key>    value (TYPE alone is the default resource)
    /image/clientQuotas/<entity>/<key>      Java double, e.g. 1024.0
    /image/producerIds/nextProducerId
    /image/acls/byId/<uuid>                 StandardAcl[...]
    /image/scram/<mechanism>/<user>         ScramCredentialData(...)
    /image/delegationToken/<token id>       DelegationTokenData...

Each node is built when visited, from the image it wraps. Names, texts and redaction are
Kafka's; see :mod:`kafkalog.cluster.image.registrations` for the value strings.

Example
-------
>>> from kafkalog.cluster.image.metadata_image import MetadataImage
>>> node = MetadataImageNode(MetadataImage())
>>> sorted(node.child_names())[:3]
['acls', 'clientQuotas', 'cluster']
>>> node.child("producerIds").stringify()
'nextProducerId(-1)'
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ...checkpoint import Uuid
from ...decoders.message import java_double  # client quota values: Java's Double + ""
from ..metadata_version import LEVELS  # MetadataVersion.toString: the release name
from .metadata_image import CONFIG_RESOURCE_TYPES, ClientQuotaEntity, MetadataImage, TopicImage
from .node import (
    MetadataLeafNode,
    MetadataNode,
    MetadataNodePrinter,
    MetadataNodeRedactionCriteria,
)
from .registrations import (
    SCRAM_MECHANISMS,
    DelegationTokenData,
    ScramCredentialData,
    iso_zoned_utc,
    java_optional,
    partition_registration_string,
)

__all__ = ["MetadataImageNode", "client_quota_entity_name", "decode_client_quota_entity",
           "config_resource_from_name"]

REDACTED = "[redacted]"
CLIENT_ID, IP, USER = "client-id", "ip", "user"


def _java_int(name: str) -> int | None:
    """``Integer.parseInt``: optional sign and ASCII digits, 32-bit; else ``None``."""
    body = name[1:] if name[:1] in "+-" else name
    if not body or not body.isascii() or not body.isdigit():
        return None
    n = int(name)
    return n if -2**31 <= n < 2**31 else None


def _valid_uuid(name: str) -> bool:
    try:
        Uuid.from_string(name)
    except ValueError:
        return False
    return True


class _MapNode(MetadataNode):
    """A directory whose children come from ``names()`` and a ``make(name)`` factory."""

    def __init__(self, names: Callable[[], Iterable[str]],
                 make: Callable[[str], MetadataNode | None]) -> None:
        self._names = names
        self._make = make

    def child_names(self) -> Iterable[str]:
        return list(self._names())

    def child(self, name: str) -> MetadataNode | None:
        return self._make(name)


class MetadataImageNode(MetadataNode):
    """``/image`` (``MetadataImageNode``)."""

    NAME = "image"

    def __init__(self, image: MetadataImage) -> None:
        self.image = image
        self._children: dict[str, Callable[[], MetadataNode]] = {
            "provenance": lambda: _ProvenanceNode(image),
            "features": lambda: _features_node(image),
            "cluster": lambda: _cluster_node(image),
            "topics": lambda: _topics_node(image),
            "configs": lambda: _configs_node(image),
            "clientQuotas": lambda: _client_quotas_node(image),
            "producerIds": lambda: _MapNode(
                lambda: ["nextProducerId"],
                lambda n: MetadataLeafNode(str(image.next_producer_id))
                if n == "nextProducerId" else None),
            "acls": lambda: _acls_node(image),
            "scram": lambda: _scram_node(image),
            "delegationToken": lambda: _MapNode(
                lambda: image.delegation_tokens.keys(),
                lambda n: _delegation_token(image.delegation_tokens[n])
                if n in image.delegation_tokens else None),
        }

    def child_names(self) -> Iterable[str]:
        return list(self._children)

    def child(self, name: str) -> MetadataNode | None:
        make = self._children.get(name)
        return make() if make is not None else None


class _ProvenanceNode(MetadataNode):
    def __init__(self, image: MetadataImage) -> None:
        self.p = image.provenance

    def is_directory(self) -> bool:
        return False

    def print(self, printer: MetadataNodePrinter) -> None:
        printer.output(f"offset {self.p.last_contained_offset}, "
                       f"epoch {self.p.last_contained_epoch}, "
                       f"time {iso_zoned_utc(self.p.last_contained_log_time_ms)}")


def _features_node(image: MetadataImage) -> MetadataNode:
    prefix = "finalized_"

    def make(name: str) -> MetadataNode | None:
        if name == "metadataVersion":
            mv = image.metadata_version
            # Kafka 4.2 prints FeaturesImage.metadataVersion(), an Optional<MetadataVersion>
            return MetadataLeafNode(java_optional(
                None if mv is None else LEVELS[mv]))
        if name.startswith(prefix):
            return MetadataLeafNode(str(image.finalized_features.get(name[len(prefix):], 0)))
        return None

    return _MapNode(lambda: ["metadataVersion",
                             *(prefix + f for f in image.finalized_features)], make)


def _cluster_node(image: MetadataImage) -> MetadataNode:
    def by_id(registrations: dict) -> MetadataNode:
        def make(name: str) -> MetadataNode | None:
            i = _java_int(name)
            reg = registrations.get(i) if i is not None else None
            return MetadataLeafNode(str(reg)) if reg is not None else None
        return _MapNode(lambda: [str(i) for i in registrations], make)

    return _MapNode(lambda: ["brokers", "controllers"],
                    lambda n: by_id(image.brokers) if n == "brokers"
                    else by_id(image.controllers) if n == "controllers" else None)


class _TopicImageNode(MetadataNode):
    def __init__(self, topic: TopicImage) -> None:
        self.topic = topic

    def child_names(self) -> Iterable[str]:
        return ["name", "id", *(str(p) for p in self.topic.partitions)]

    def child(self, name: str) -> MetadataNode | None:
        if name == "name":
            return MetadataLeafNode(self.topic.name)
        if name == "id":
            return MetadataLeafNode(self.topic.id)
        pid = _java_int(name)
        part = self.topic.partitions.get(pid) if pid is not None else None
        return MetadataLeafNode(partition_registration_string(part)) if part else None


def _topics_node(image: MetadataImage) -> MetadataNode:
    by_name = _MapNode(lambda: image.topics_by_name.keys(),
                       lambda n: _TopicImageNode(image.topics_by_name[n])
                       if n in image.topics_by_name else None)
    by_id = _MapNode(lambda: image.topics_by_id.keys(),
                     lambda n: _TopicImageNode(image.topics_by_id[n])
                     if _valid_uuid(n) and n in image.topics_by_id else None)
    return _MapNode(lambda: ["byName", "byId"],
                    lambda n: by_name if n == "byName" else by_id if n == "byId" else None)


# -- configs ----------------------------------------------------------------------------------

def config_resource_from_name(name: str) -> tuple[int, str] | None:
    """``ConfigurationsImageNode.resourceFromName``: ``TOPIC:foo`` -> (2, "foo"); a bare type
    name is its default resource (name ""); the types are tried in the enum's order."""
    for type_id, type_name in CONFIG_RESOURCE_TYPES.items():
        if name.startswith(type_name):
            key = name[len(type_name):]
            if not key:
                return type_id, ""
            if key.startswith(":"):
                return type_id, key[1:]
            return None
    return None


def _config_resource_name(type_id: int, name: str) -> str:
    type_name = CONFIG_RESOURCE_TYPES.get(type_id, "UNKNOWN")
    return type_name if name == "" else f"{type_name}:{name}"


def _config_value(type_id: int, key: str, value: str) -> MetadataNode:
    """``ConfigurationImageNode``'s child: the value, or ``[redacted]`` when the printer's
    criteria say the config is sensitive."""
    return _RedactableLeaf(
        lambda c: REDACTED if c.should_redact_config(type_id, key) else value)


def _configs_node(image: MetadataImage) -> MetadataNode:
    def resource(name: str) -> MetadataNode | None:
        res = config_resource_from_name(name)
        data = image.configs.get(res) if res is not None else None
        if data is None:
            return None
        type_id = res[0]
        return _MapNode(lambda: data.keys(),
                        lambda k: _config_value(type_id, k, data[k]) if k in data else None)

    return _MapNode(lambda: [_config_resource_name(t, n) for t, n in image.configs], resource)


# -- client quotas ----------------------------------------------------------------------------

def _escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def client_quota_entity_name(entity: ClientQuotaEntity) -> str:
    """``ClientQuotasImageNode.clientQuotaEntityToString``: ``clientId(a)_ip(b)_user(c)``.

    As in Kafka, an entity part with a null (default) name is left out, so the default user
    entity is named ``""`` and cannot be looked up by name.
    """
    if not entity:
        raise ValueError("Invalid empty entity")
    d = dict(entity)
    for key in d:
        if key not in (CLIENT_ID, IP, USER):
            raise ValueError(f"Invalid entity type {key}")
    parts = []
    for key, label in ((CLIENT_ID, "clientId"), (IP, "ip"), (USER, "user")):
        if d.get(key) is not None:
            parts.append(f"{label}({_escape(d[key])})")
    return "_".join(parts)


def decode_client_quota_entity(text: str) -> ClientQuotaEntity | None:
    """``ClientQuotasImageNode.decodeEntity``: the inverse of :func:`client_quota_entity_name`
    (``None`` when ``text`` is not an entity name)."""
    entries: dict[str, str | None] = {}
    kind: str | None = None
    value: list[str] = []
    escaping = False
    i = 0
    while True:
        if i >= len(text):
            return None
        if kind is None:
            for label, k in (("clientId(", CLIENT_ID), ("ip(", IP), ("user(", USER)):
                if text.startswith(label, i):
                    kind = k
                    i += len(label)
                    break
            else:
                return None
        else:
            c = text[i]
            i += 1
            if escaping:
                value.append(c)
                escaping = False
            elif c == ")":
                entries[kind] = "".join(value)
                kind, value = None, []
            elif c == "\\":
                escaping = True
            else:
                value.append(c)
            if kind is None:
                if i >= len(text):
                    return tuple(sorted(entries.items()))
                if text[i] != "_":
                    return None
                i += 1


def _client_quotas_node(image: MetadataImage) -> MetadataNode:
    def entity(name: str) -> MetadataNode | None:
        key = decode_client_quota_entity(name)
        quotas = image.client_quotas.get(key) if key is not None else None
        if quotas is None:
            return None
        return _MapNode(lambda: quotas.keys(),
                        lambda k: MetadataLeafNode(java_double(quotas[k]))
                        if k in quotas else None)

    return _MapNode(lambda: [client_quota_entity_name(e) for e in image.client_quotas], entity)


# -- security ---------------------------------------------------------------------------------

def _acls_node(image: MetadataImage) -> MetadataNode:
    by_id = _MapNode(lambda: image.acls.keys(),
                     lambda n: MetadataLeafNode(str(image.acls[n]))
                     if _valid_uuid(n) and n in image.acls else None)
    return _MapNode(lambda: ["byId"], lambda n: by_id if n == "byId" else None)


def _scram_credential(d: ScramCredentialData) -> MetadataNode:
    """``ScramCredentialDataNode``: the salt and keys in hex and the iterations, each
    ``[redacted]`` under the criteria's SCRAM redaction."""

    def render(c: MetadataNodeRedactionCriteria) -> str:
        r = c.should_redact_scram()
        return (f"ScramCredentialData(salt={REDACTED if r else d.salt.hex()}, "
                f"storedKey={REDACTED if r else d.stored_key.hex()}, "
                f"serverKey={REDACTED if r else d.server_key.hex()}, "
                f"iterations={REDACTED if r else d.iterations})")

    return _RedactableLeaf(render)


def _scram_node(image: MetadataImage) -> MetadataNode:
    by_name = {name: t for t, name in SCRAM_MECHANISMS.items()}

    def mechanism(name: str) -> MetadataNode | None:
        t = by_name.get(name)
        if t is None:
            return None
        users = image.scram.get(t, {})
        return _MapNode(lambda: users.keys(),
                        lambda u: _scram_credential(users[u]) if u in users else None)

    return _MapNode(lambda: list(SCRAM_MECHANISMS.values()), mechanism)


def _delegation_token(d: DelegationTokenData) -> MetadataNode:
    """``DelegationTokenDataNode``: Kafka's text, parentheses and all, every field
    ``[redacted]`` under the criteria's delegation-token redaction."""

    def render(c: MetadataNodeRedactionCriteria) -> str:
        r = c.should_redact_delegation_token()

        def v(x: object) -> str:
            return REDACTED if r else str(x)

        return (f"DelegationTokenDatatokenId={v(d.token_id)}(owner={v(d.owner)}"
                f"(tokenRequester={v(d.requester)}(renewers={v(' '.join(d.renewers))}"
                f", issueTimestamp={v(d.issue_timestamp)}, maxTimestamp={v(d.max_timestamp)})"
                f", expiryTimestamp={v(d.expiry_timestamp)}")

    return _RedactableLeaf(render)


class _RedactableLeaf(MetadataNode):
    """A file whose text depends on what the printer redacts (configs, SCRAM credentials,
    delegation tokens)."""

    def __init__(self, render: Callable[[MetadataNodeRedactionCriteria], str]) -> None:
        self._render = render

    def is_directory(self) -> bool:
        return False

    def print(self, printer: MetadataNodePrinter) -> None:
        printer.output(self._render(printer.redaction_criteria()))
