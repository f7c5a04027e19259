"""The one broker behind ``kafkalog serve``: a log dir, its topics, and what handlers share.

A :class:`Broker` is what Kafka's ``KafkaApis`` reaches through ``ReplicaManager``,
``MetadataCache`` and the coordinators, for a single node that leads every partition it holds:

* **Partitions.** Every partition of the :class:`~kafkalog.log_dir.LogDir` is led by this node
  with one replica (itself) in sync: the high watermark is the log end offset (a single-replica
  leader commits each append at once), so a ``replication-offset-checkpoint`` left by a broker is
  dropped at start. The leader epoch of a partition is the latest epoch of its
  ``leader-epoch-checkpoint`` (0 when it has none); it is stamped into every batch produced.
* **Topic ids.** Topics created here (and by a broker) have a Kafka ``Uuid`` in
  ``partition.metadata``; a topic without one (a directory written by the embedded engine) gets a
  stable id derived from its name (UUID v5), kept in memory only, so nothing is written into the
  directory just by serving it.
* **Internal topics** (``__consumer_offsets``, ``__transaction_state``) are created on first use
  with Kafka's defaults (50 partitions, ``cleanup.policy=compact``, 100 MiB segments).
* **Waiting fetches.** A long-polling fetch waits on :meth:`wait_for_change` until an append or
  a transaction marker touches one of its partitions (Kafka's ``DelayedFetch`` purgatory keyed by
  partition).

Threads: every method runs on the server's event loop thread; nothing here is thread-safe.

Example
-------
>>> import tempfile
>>> from kafkalog.log_dir import LogDir
>>> b = Broker(LogDir.open(tempfile.mkdtemp()), ServerConfig())
>>> b.create_topic("t", 2), b.leader_epoch("t", 0)
(None, 0)
>>> b.close()
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from ..checkpoint import Uuid
from ..clock import Clock, SystemClock
from ..groups.share.state_topic import SHARE_STATE_TOPIC
from ..log import Log
from ..log_dir import LogDir, validate_topic_name
from ..security.tls_stores import STORE_PROPERTIES, store_type
from .protocol import ErrorCode

__all__ = [
    "ServerConfig",
    "Broker",
    "OFFSETS_TOPIC",
    "TRANSACTION_STATE_TOPIC",
    "INTERNAL_TOPICS",
]

logger = logging.getLogger(__name__)

OFFSETS_TOPIC = "__consumer_offsets"
TRANSACTION_STATE_TOPIC = "__transaction_state"
#: Kafka's ``Topic.isInternal`` (4.x)
INTERNAL_TOPICS = frozenset({OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC, SHARE_STATE_TOPIC})


@dataclasses.dataclass(frozen=True)
class ServerConfig:
    """Broker settings, with Kafka's names and defaults (server.properties) unless noted.

    Attributes
    ----------
    node_id:
        ``node.id``: this broker's id in metadata responses.
    broker_rack:
        ``broker.rack``: the rack metadata responses give this broker (clients with
        ``client.rack`` use it for KIP-881 rack-aware assignment and KIP-392 fetching).
    advertised_host, advertised_port:
        What metadata tells clients to connect to (None: the bound address).
    num_partitions:
        ``num.partitions`` of auto-created topics (and CreateTopics with -1).
    auto_create_topics_enable:
        ``auto.create.topics.enable``: a Metadata request may create a topic.
    offsets_topic_num_partitions, transaction_state_num_partitions:
        ``offsets.topic.num.partitions``, ``transaction.state.log.num.partitions`` (50).
    internal_topic_segment_bytes:
        ``offsets.topic.segment.bytes`` / ``transaction.state.log.segment.bytes`` (100 MiB).
    transaction_max_timeout_ms:
        ``transaction.max.timeout.ms`` (15 minutes).
    transaction_abort_timed_out_interval_ms:
        ``transaction.abort.timed.out.transaction.cleanup.interval.ms`` (10 s).
    group_initial_rebalance_delay_ms:
        ``group.initial.rebalance.delay.ms`` (3 s).
    group_min_session_timeout_ms, group_max_session_timeout_ms:
        ``group.min.session.timeout.ms`` (6 s), ``group.max.session.timeout.ms`` (30 min).
    group_consumer_session_timeout_ms, group_consumer_heartbeat_interval_ms:
        ``group.consumer.session.timeout.ms`` (45 s) and ``group.consumer.heartbeat.interval.ms``
        (5 s): the KIP-848 consumer groups' member session and the heartbeat interval the
        coordinator asks its members for.
    group_consumer_migration_policy:
        ``group.consumer.migration.policy`` (bidirectional): the online conversions between
        classic and consumer groups (disabled, upgrade, downgrade, bidirectional).
    max_request_bytes:
        ``socket.request.max.bytes`` (100 MiB): a larger frame closes its connection.
    quota_window_num, quota_window_size_seconds:
        ``quota.window.num`` (11) and ``quota.window.size.seconds`` (1): the samples client
        quotas are measured over (kafkalog.server.client_quotas).
    group_share_session_timeout_ms, group_share_heartbeat_interval_ms, group_share_max_size:
        ``group.share.session.timeout.ms`` (45 s), ``group.share.heartbeat.interval.ms`` (5 s),
        ``group.share.max.size`` (200): KIP-932 share groups' members.
    group_share_record_lock_duration_ms, group_share_delivery_count_limit,
    group_share_partition_max_record_locks:
        ``group.share.record.lock.duration.ms`` (30 s), ``group.share.delivery.count.limit``
        (5), ``group.share.partition.max.record.locks`` (2000): how long a share consumer holds
        a record, how often a record is delivered before it is archived, how many records of a
        partition may be held at once.
    share_coordinator_state_topic_num_partitions:
        ``share.coordinator.state.topic.num.partitions`` (50): partitions of
        ``__share_group_state``, where share groups' record states are kept.
    share_auto_offset_reset:
        Where a share group starts on a partition it has not consumed: ``latest`` (Kafka's
        default of the group config ``share.auto.offset.reset``) or ``earliest``. Kafka sets it
        per group (IncrementalAlterConfigs on the group); here ``-c
        share.auto.offset.reset=earliest`` sets it for every group.
    security_protocol:
        The listener's protocol (the ``PROTOCOL://`` of Kafka's ``listeners``): ``PLAINTEXT``
        (default), ``SSL``, ``SASL_PLAINTEXT`` or ``SASL_SSL``.
    sasl_enabled_mechanisms:
        ``sasl.enabled.mechanisms`` of a SASL listener: ``PLAIN``, ``SCRAM-SHA-256``,
        ``SCRAM-SHA-512`` (Kafka's default is GSSAPI, which kafkalog does not serve; the
        default here is all three).
    sasl_plain_users:
        SASL/PLAIN ``user -> password``, as the ``user_<name>`` options of the JAAS
        ``PlainLoginModule`` entry (``kafkalog serve --jaas-config``).
    ssl_keystore_location, ssl_keystore_type, ssl_keystore_password, ssl_key_password:
        The TLS key and certificate chain of an SSL listener: ``ssl.keystore.location``, a
        ``PEM`` file (key and chain) or a ``PKCS12`` store (``ssl.keystore.type``; None: told
        apart by the content, Kafka's default type JKS is refused with how to convert it),
        ``ssl.keystore.password`` (PKCS12) and ``ssl.key.password`` (an encrypted key).
    ssl_keystore_key, ssl_keystore_certificate_chain:
        The same given inline as PEM text (KIP-651's ``ssl.keystore.key`` and
        ``ssl.keystore.certificate.chain``, ``ssl.keystore.type=PEM``).
    ssl_truststore_location, ssl_truststore_type, ssl_truststore_password,
    ssl_truststore_certificates, ssl_client_auth:
        The CA certificates clients are checked against (a PEM or PKCS12 file, or inline PEM
        text: ``ssl.truststore.certificates``) and ``ssl.client.auth`` (``none``,
        ``requested``, ``required``): whether clients present certificates signed by them.
    connections_failed_authentication_delay_ms:
        ``connections.failed.authentication.delay.ms`` (100): how long a connection whose
        authentication failed stays open after the failure response (Kafka's brake on
        password guessing).
    sasl_server_max_receive_size:
        ``sasl.server.max.receive.size`` (524288): the largest frame a connection may send
        before it has authenticated.
    authorizer_class_name:
        ``authorizer.class.name``: Kafka's ``StandardAuthorizer`` (or the ZooKeeper-era
        ``AclAuthorizer``/``SimpleAclAuthorizer``, which decide the same) turns ACLs on; None
        (default): no authorization, every request allowed and the ACL APIs answer
        SECURITY_DISABLED, as a broker without an authorizer.
    super_users:
        ``super.users`` (``User:a;User:b``): principals every ACL check allows.
    allow_everyone_if_no_acl_found:
        ``allow.everyone.if.no.acl.found`` (false): whether a resource without any ACL is open
        to all.
    connections_max_reauth_ms:
        ``connections.max.reauth.ms`` (0: sessions never expire): a SASL session's lifetime,
        after which the client must re-authenticate on the connection (KIP-368) or lose it.
    sasl_oauthbearer_options:
        The options of the JAAS ``OAuthBearerLoginModule`` entry (``unsecuredValidator*``:
        the principal and scope claim names, a required scope, the allowed clock skew) for the
        OAUTHBEARER mechanism, whose tokens are checked by Kafka's unsecured validator unless
        ``sasl_server_callback_handler_class`` names Kafka's secured one.
    sasl_server_callback_handler_class:
        ``listener.name.<l>.oauthbearer.sasl.server.callback.handler.class``:
        ``org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler``
        checks signed JWTs against a JWKS (KIP-768, :mod:`kafkalog.security.oauthbearer_jwt`),
        with the ``sasl.oauthbearer.*`` settings below (Kafka's names and defaults).
    sasl_oauthbearer_allowed_urls:
        ``org.apache.kafka.sasl.oauthbearer.allowed.urls`` (a JVM system property in Kafka):
        the JWKS URLs that may be used; None: those of ``-D...`` in ``KAFKA_OPTS``.
    """

    node_id: int = 1
    broker_rack: str | None = None
    advertised_host: str | None = None
    advertised_port: int | None = None
    num_partitions: int = 1
    auto_create_topics_enable: bool = True
    offsets_topic_num_partitions: int = 50
    transaction_state_num_partitions: int = 50
    internal_topic_segment_bytes: int = 104857600
    transaction_max_timeout_ms: int = 900000
    transaction_abort_timed_out_interval_ms: int = 10000
    group_initial_rebalance_delay_ms: int = 3000
    group_min_session_timeout_ms: int = 6000
    group_max_session_timeout_ms: int = 1800000
    group_consumer_session_timeout_ms: int = 45000
    group_consumer_heartbeat_interval_ms: int = 5000
    group_consumer_migration_policy: str = "bidirectional"
    max_request_bytes: int = 104857600
    quota_window_num: int = 11
    quota_window_size_seconds: int = 1
    group_share_session_timeout_ms: int = 45000
    group_share_heartbeat_interval_ms: int = 5000
    group_share_max_size: int = 200
    group_share_record_lock_duration_ms: int = 30000
    group_share_delivery_count_limit: int = 5
    group_share_partition_max_record_locks: int = 2000
    share_coordinator_state_topic_num_partitions: int = 50
    share_auto_offset_reset: str = "latest"
    security_protocol: str = "PLAINTEXT"
    sasl_enabled_mechanisms: tuple[str, ...] = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
    sasl_plain_users: Mapping[str, str] = dataclasses.field(default_factory=dict, repr=False)
    ssl_keystore_location: str | None = None
    ssl_keystore_type: str | None = None
    ssl_keystore_password: str | None = dataclasses.field(default=None, repr=False)
    ssl_keystore_key: str | None = dataclasses.field(default=None, repr=False)
    ssl_keystore_certificate_chain: str | None = None
    ssl_truststore_type: str | None = None
    ssl_truststore_password: str | None = dataclasses.field(default=None, repr=False)
    ssl_truststore_certificates: str | None = None
    ssl_key_password: str | None = dataclasses.field(default=None, repr=False)
    ssl_truststore_location: str | None = None
    ssl_client_auth: str = "none"
    connections_failed_authentication_delay_ms: int = 100
    connections_max_reauth_ms: int = 0
    sasl_server_max_receive_size: int = 524288
    authorizer_class_name: str | None = None
    super_users: tuple[str, ...] = ()
    allow_everyone_if_no_acl_found: bool = False
    sasl_oauthbearer_options: Mapping[str, str] = dataclasses.field(default_factory=dict)
    sasl_server_callback_handler_class: str | None = None
    sasl_oauthbearer_jwks_endpoint_url: str | None = None
    sasl_oauthbearer_expected_audience: tuple[str, ...] = ()
    sasl_oauthbearer_expected_issuer: str | None = None
    sasl_oauthbearer_sub_claim_name: str = "sub"
    sasl_oauthbearer_scope_claim_name: str = "scope"
    sasl_oauthbearer_clock_skew_seconds: int = 30
    sasl_oauthbearer_jwks_endpoint_refresh_ms: int = 3_600_000
    sasl_oauthbearer_jwks_endpoint_retry_backoff_ms: int = 100
    sasl_oauthbearer_allowed_urls: tuple[str, ...] | None = None

    @classmethod
    def from_properties(cls, props: Mapping[str, str], **fields: Any) -> ServerConfig:
        """A config from Kafka broker property names (``server.properties`` style), on top of
        ``fields``.

        >>> ServerConfig.from_properties({"num.partitions": "3",
        ...                               "auto.create.topics.enable": "false"}).num_partitions
        3

        Raises
        ------
        ConfigError
            An unknown property or a value that does not parse, naming the property.
        """
        from ..errors import ConfigError
        from ..groups.config import MIGRATION_POLICIES

        values = dict(fields)
        for key, raw in props.items():
            name = _PROPERTIES.get(key)
            if name is None:
                raise ConfigError(f"unknown property {key!r} (known: "
                                  f"{', '.join(sorted(_PROPERTIES))})")
            text = str(raw).strip()
            if name == "auto_create_topics_enable":
                if text.lower() not in ("true", "false"):
                    raise ConfigError(f"{key}: expected true or false, found {raw!r}")
                values[name] = text.lower() == "true"
            elif name == "share_auto_offset_reset":
                if text.lower() not in ("latest", "earliest"):
                    raise ConfigError(f"{key}: expected latest or earliest, found {raw!r}")
                values[name] = text.lower()
            elif name == "security_protocol":
                if text.upper() not in SECURITY_PROTOCOLS:
                    raise ConfigError(f"{key}: expected one of {', '.join(SECURITY_PROTOCOLS)}"
                                      f", found {raw!r}")
                values[name] = text.upper()
            elif name == "sasl_enabled_mechanisms":
                from .sasl import MECHANISMS

                mechs = tuple(m.strip() for m in text.split(",") if m.strip())
                bad = [m for m in mechs if m not in MECHANISMS]
                if bad or not mechs:
                    raise ConfigError(f"{key}: expected a list of {', '.join(MECHANISMS)}, "
                                      f"found {raw!r}")
                values[name] = mechs
            elif name == "ssl_client_auth":
                if text.lower() not in ("none", "requested", "required"):
                    raise ConfigError(f"{key}: expected none, requested or required, found "
                                      f"{raw!r}")
                values[name] = text.lower()
            elif name == "broker_rack":
                values[name] = text or None
            elif name in ("ssl_keystore_location", "ssl_truststore_location",
                          "ssl_key_password", "ssl_keystore_password",
                          "ssl_truststore_password", "ssl_keystore_key",
                          "ssl_keystore_certificate_chain", "ssl_truststore_certificates"):
                values[name] = text or None
            elif name == "authorizer_class_name":
                if text and text not in AUTHORIZER_CLASSES:
                    raise ConfigError(f"{key}: kafkalog serves Kafka's ACL authorizer "
                                      f"({AUTHORIZER_CLASSES[0]}), not {raw!r}")
                values[name] = text or None
            elif name == "super_users":
                values[name] = tuple(u.strip() for u in text.split(";") if u.strip())
            elif name == "allow_everyone_if_no_acl_found":
                if text.lower() not in ("true", "false"):
                    raise ConfigError(f"{key}: expected true or false, found {raw!r}")
                values[name] = text.lower() == "true"
            elif name in ("ssl_keystore_type", "ssl_truststore_type"):
                values[name] = store_type(key, text)
            elif name in _OAUTH_STRINGS:
                values[name] = text or None
            elif name in ("sasl_oauthbearer_sub_claim_name", "sasl_oauthbearer_scope_claim_name"):
                if not text:
                    raise ConfigError(f"{key}: the claim name must not be empty")
                values[name] = text
            elif name in ("sasl_oauthbearer_expected_audience", "sasl_oauthbearer_allowed_urls"):
                values[name] = tuple(u.strip() for u in text.split(",") if u.strip())
            elif name == "sasl_oauthbearer_clock_skew_seconds":
                try:
                    values[name] = int(text)
                except ValueError:
                    raise ConfigError(f"{key}: expected an integer, found {raw!r}") from None
                if values[name] < 0:
                    raise ConfigError(f"{key}: value {values[name]} out of range")
            elif name == "group_consumer_migration_policy":
                if text.lower() not in MIGRATION_POLICIES:
                    raise ConfigError(f"{key}: expected one of {', '.join(MIGRATION_POLICIES)}"
                                      f", found {raw!r}")
                values[name] = text.lower()
            else:
                try:
                    values[name] = int(text)
                except ValueError:
                    raise ConfigError(f"{key}: expected an integer, found {raw!r}") from None
                if values[name] < (0 if name == "group_initial_rebalance_delay_ms" else 1):
                    raise ConfigError(f"{key}: value {values[name]} out of range")
        return cls(**values)


#: Kafka broker property -> ServerConfig field (what ``kafkalog serve -c`` accepts)
_PROPERTIES = {
    "broker.rack": "broker_rack",
    "quota.window.num": "quota_window_num",
    "quota.window.size.seconds": "quota_window_size_seconds",
    "num.partitions": "num_partitions",
    "auto.create.topics.enable": "auto_create_topics_enable",
    "offsets.topic.num.partitions": "offsets_topic_num_partitions",
    "transaction.state.log.num.partitions": "transaction_state_num_partitions",
    "offsets.topic.segment.bytes": "internal_topic_segment_bytes",
    "transaction.state.log.segment.bytes": "internal_topic_segment_bytes",
    "transaction.max.timeout.ms": "transaction_max_timeout_ms",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms":
        "transaction_abort_timed_out_interval_ms",
    "group.initial.rebalance.delay.ms": "group_initial_rebalance_delay_ms",
    "group.min.session.timeout.ms": "group_min_session_timeout_ms",
    "group.max.session.timeout.ms": "group_max_session_timeout_ms",
    "group.consumer.session.timeout.ms": "group_consumer_session_timeout_ms",
    "group.consumer.heartbeat.interval.ms": "group_consumer_heartbeat_interval_ms",
    "group.consumer.migration.policy": "group_consumer_migration_policy",
    "socket.request.max.bytes": "max_request_bytes",
    "group.share.session.timeout.ms": "group_share_session_timeout_ms",
    "group.share.heartbeat.interval.ms": "group_share_heartbeat_interval_ms",
    "group.share.max.size": "group_share_max_size",
    "group.share.record.lock.duration.ms": "group_share_record_lock_duration_ms",
    "group.share.delivery.count.limit": "group_share_delivery_count_limit",
    "group.share.partition.max.record.locks": "group_share_partition_max_record_locks",
    "share.auto.offset.reset": "share_auto_offset_reset",
    "share.coordinator.state.topic.num.partitions": "share_coordinator_state_topic_num_partitions",
    "security.protocol": "security_protocol",
    "sasl.enabled.mechanisms": "sasl_enabled_mechanisms",
    **STORE_PROPERTIES,  # ssl.keystore.*, ssl.key.password, ssl.truststore.*
    "ssl.client.auth": "ssl_client_auth",
    "connections.failed.authentication.delay.ms": "connections_failed_authentication_delay_ms",
    "connections.max.reauth.ms": "connections_max_reauth_ms",
    "sasl.server.max.receive.size": "sasl_server_max_receive_size",
    "authorizer.class.name": "authorizer_class_name",
    "super.users": "super_users",
    "allow.everyone.if.no.acl.found": "allow_everyone_if_no_acl_found",
    "sasl.server.callback.handler.class": "sasl_server_callback_handler_class",
    "sasl.oauthbearer.jwks.endpoint.url": "sasl_oauthbearer_jwks_endpoint_url",
    "sasl.oauthbearer.expected.audience": "sasl_oauthbearer_expected_audience",
    "sasl.oauthbearer.expected.issuer": "sasl_oauthbearer_expected_issuer",
    "sasl.oauthbearer.sub.claim.name": "sasl_oauthbearer_sub_claim_name",
    "sasl.oauthbearer.scope.claim.name": "sasl_oauthbearer_scope_claim_name",
    "sasl.oauthbearer.clock.skew.seconds": "sasl_oauthbearer_clock_skew_seconds",
    "sasl.oauthbearer.jwks.endpoint.refresh.ms": "sasl_oauthbearer_jwks_endpoint_refresh_ms",
    "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms":
        "sasl_oauthbearer_jwks_endpoint_retry_backoff_ms",
    "org.apache.kafka.sasl.oauthbearer.allowed.urls": "sasl_oauthbearer_allowed_urls",
}
#: the OAUTHBEARER settings read as strings (empty: unset)
_OAUTH_STRINGS = frozenset({
    "sasl_server_callback_handler_class", "sasl_oauthbearer_jwks_endpoint_url",
    "sasl_oauthbearer_expected_issuer"})
#: authorizer.class.name values served: Kafka's ACL authorizers (KRaft's, then ZooKeeper's)
AUTHORIZER_CLASSES = ("org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                      "kafka.security.authorizer.AclAuthorizer",
                      "kafka.security.auth.SimpleAclAuthorizer")
#: the listener security protocols (Kafka's SecurityProtocol)
SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")


class Broker:
    """The state request handlers share (see the module docstring).

    Parameters
    ----------
    log_dir:
        The open log directory served (closed by :meth:`close`).
    config:
        Broker settings.
    clock:
        Time source (the engine's clock protocol).
    """

    def __init__(self, log_dir: LogDir, config: ServerConfig, *,
                 clock: Clock | None = None) -> None:
        self.log_dir = log_dir
        self.config = config
        self.clock = clock if clock is not None else SystemClock()
        self.host = config.advertised_host or "127.0.0.1"
        self.port = config.advertised_port or 9092
        meta = log_dir.meta
        self.cluster_id = meta.cluster_id if meta is not None else None
        self._topic_ids: dict[str, Uuid] = {}
        self._topics_by_id: dict[bytes, str] = {}
        self._epochs: dict[tuple[str, int], int] = {}
        self._waiters: dict[tuple[str, int], set[asyncio.Event]] = {}
        #: set by the server: the transaction and group coordinators
        self.transactions: Any = None
        self.groups: Any = None
        #: set by the server: the share groups (kafkalog.server.share_service.ShareService)
        self.shares: Any = None
        #: set by the server: the dynamic group configs (kafkalog.server.group_configs)
        self.group_configs: Any = None
        #: set by the server: the finalized features (kafkalog.server.feature_store)
        self.features: Any = None
        #: set by the server: id(listener config) -> its secured OAUTHBEARER validator
        self.oauthbearer_validators: dict[int, Any] = {}
        #: the tree's SCRAM credentials (kafkalog.security.ScramCredentialStore)
        self.scram_credentials: Any = None
        #: the tree's ACLs (kafkalog.security.acls.AclStore)
        self.acls: Any = None
        #: set by the server: the client quotas (kafkalog.server.client_quotas.ClientQuotas)
        self.client_quotas: Any = None
        #: the ACL authorizer (kafkalog.security.acls.Authorizer) when authorizer.class.name
        #: is set, rebuilt after each ACL change; None: every request is allowed
        self.authorizer: Any = None
        #: called after a topic is created or deleted (the group coordinator's metadata)
        self.topic_listeners: list[Any] = []
        #: api name -> [requests, wall-clock ns handling them, CPU ns of the loop thread in
        #: them] (Kafka's RequestsPerSec and LocalTimeMs request metrics, summed; read by
        #: operators and the benchmarks; a long-polling fetch's wait counts in the wall clock)
        self.request_metrics: dict[str, list[int]] = {}
        for topic, partition in log_dir.partitions():
            # a single-replica leader's high watermark is its log end offset
            log_dir.set_high_watermark(topic, partition, None)

    # -- topics --------------------------------------------------------------------------------

    def topics(self) -> list[str]:
        """Topics held, sorted."""
        return self.log_dir.topics()

    def partitions_of(self, topic: str) -> list[int]:
        """Partition numbers of ``topic`` (empty when unknown)."""
        return [p for t, p in self.log_dir.partitions() if t == topic]

    def partition_counts(self) -> dict[str, int]:
        """topic -> partitions held (what the group coordinators assign over)."""
        counts: dict[str, int] = {}
        for t, _ in self.log_dir.partitions():
            counts[t] = counts.get(t, 0) + 1
        return counts

    def log(self, topic: str, partition: int) -> Log:
        """The partition's log.

        Raises
        ------
        UnknownTopicOrPartitionError
            Not held here.
        """
        return self.log_dir.log(topic, partition)

    def topic_id(self, topic: str) -> Uuid:
        """The topic's Kafka id (derived from the name when the directory has none)."""
        tid = self._topic_ids.get(topic)
        if tid is None:
            tid = self.log_dir.topic_id(topic)
            if tid is None:
                tid = Uuid.derived(topic)
            self._topic_ids[topic] = tid
            self._topics_by_id[tid.to_bytes()] = topic
        return tid

    def topic_by_id(self, topic_id: Any) -> str | None:
        """The topic named by ``topic_id`` (a ``uuid.UUID``, ``Uuid`` or 16 bytes), or None."""
        raw = topic_id.bytes if isinstance(topic_id, uuid.UUID) else (
            topic_id.to_bytes() if hasattr(topic_id, "to_bytes") else bytes(topic_id))
        found = self._topics_by_id.get(raw)
        if found is None:
            for t in self.topics():
                if self.topic_id(t).to_bytes() == raw:
                    return t
        return found

    def create_topic(self, topic: str, partitions: int,
                     config: dict[str, str] | None = None) -> None:
        """Create ``topic`` (see :meth:`LogDir.create_topic`, which raises the errors)."""
        validate_topic_name(topic)
        self.log_dir.create_topic(topic, partitions, config or None)
        for p in range(partitions):
            self.log_dir.set_high_watermark(topic, p, None)
        for listener in self.topic_listeners:
            listener()

    def create_partitions(self, topic: str, count: int) -> list[int]:
        """Grow ``topic`` to ``count`` partitions (:meth:`LogDir.create_partitions` raises the
        errors); the group coordinator learns the new count (subscribed groups rebalance)."""
        added = self.log_dir.create_partitions(topic, count)
        for p in added:
            self.log_dir.set_high_watermark(topic, p, None)
        for listener in self.topic_listeners:
            listener()
        return added

    def update_topic_config(self, topic: str, overrides: dict[str, str]) -> None:
        """Replace the topic's overrides (:meth:`LogDir.update_topic_config`)."""
        self.log_dir.update_topic_config(topic, overrides)

    def delete_topic(self, topic: str) -> None:
        """Delete ``topic`` and wake the fetches waiting on it."""
        parts = self.log_dir.delete_topic(topic)
        tid = self._topic_ids.pop(topic, None)
        if tid is not None:
            self._topics_by_id.pop(tid.to_bytes(), None)
        for p in parts:
            self._epochs.pop((topic, p), None)
            self.notify((topic, p))
        for listener in self.topic_listeners:
            listener()

    def ensure_internal_topic(self, topic: str) -> None:
        """Create ``__consumer_offsets`` / ``__transaction_state`` if absent (Kafka creates them
        on the first FindCoordinator / InitProducerId that needs them)."""
        if self.partitions_of(topic):
            return
        if topic == OFFSETS_TOPIC and self.groups is not None:
            _ = self.groups.coordinator  # its GroupMetadataManager creates the topic
            return
        n = (self.config.offsets_topic_num_partitions if topic == OFFSETS_TOPIC
             else self.config.share_coordinator_state_topic_num_partitions
             if topic == SHARE_STATE_TOPIC else self.config.transaction_state_num_partitions)
        logger.info("creating internal topic %s with %d partitions", topic, n)
        self.create_topic(topic, n, {
            "cleanup.policy": "compact",
            "segment.bytes": str(self.config.internal_topic_segment_bytes)})

    # -- leadership ----------------------------------------------------------------------------

    def leader_epoch(self, topic: str, partition: int) -> int:
        """This leader's epoch for the partition: the latest in its leader-epoch cache, else 0."""
        tp = (topic, partition)
        epoch = self._epochs.get(tp)
        if epoch is None:
            entries = self.log(topic, partition).leader_epoch_entries
            epoch = entries[-1][0] if entries else 0
            self._epochs[tp] = epoch
        return epoch

    def check_leader_epoch(self, topic: str, partition: int, requested: int) -> int:
        """Kafka's ``Partition.checkCurrentLeaderEpoch``: the error code for a request that
        names the leader epoch it expects (-1: none named, no check)."""
        if requested < 0:
            return ErrorCode.none
        epoch = self.leader_epoch(topic, partition)
        if requested > epoch:
            return ErrorCode.unknown_leader_epoch
        if requested < epoch:
            return ErrorCode.fenced_leader_epoch
        return ErrorCode.none

    def high_watermark(self, topic: str, partition: int) -> int:
        """The partition's high watermark (its log end offset, see the module docstring)."""
        return self.log_dir.high_watermark(topic, partition)

    # -- waiting for data ------------------------------------------------------------------------

    def notify(self, tp: tuple[str, int]) -> None:
        """Wake the fetches waiting on ``tp`` (after an append, a marker or a deletion)."""
        waiters = self._waiters.get(tp)
        if waiters:
            for ev in waiters:
                ev.set()

    async def wait_for_change(self, tps: Iterable[tuple[str, int]], timeout_s: float) -> bool:
        """Wait until :meth:`notify` of one of ``tps`` or ``timeout_s``; True when notified."""
        ev = asyncio.Event()
        keys = list(tps)
        for tp in keys:
            self._waiters.setdefault(tp, set()).add(ev)
        try:
            async with asyncio.timeout(timeout_s):  # not wait_for: see GroupService.run_timers
                await ev.wait()
            return True
        except TimeoutError:
            return False
        finally:
            for tp in keys:
                s = self._waiters.get(tp)
                if s is not None:
                    s.discard(ev)
                    if not s:
                        del self._waiters[tp]

    # -- lifecycle -------------------------------------------------------------------------------

    def acls_changed(self) -> None:
        """Rebuild :attr:`authorizer` from the stored ACLs (after CreateAcls/DeleteAcls)."""
        if self.config.authorizer_class_name and self.acls is not None:
            self.authorizer = self.acls.authorizer(
                super_users=self.config.super_users,
                allow_everyone_if_no_acl_found=self.config.allow_everyone_if_no_acl_found)

    def close(self) -> None:
        """Close the log dir: every log flushed and closed, checkpoints and the clean-shutdown
        marker written."""
        self.log_dir.close()

