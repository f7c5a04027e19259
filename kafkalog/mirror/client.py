"""A small blocking Kafka protocol client: what ``kafkalog mirror`` asks a broker.

One TCP connection per broker, one request in flight, secured as
:class:`~kafkalog.mirror.security.ClientSecurity` says (Kafka's client properties): TLS with
Python's ``ssl`` (``SSL``, ``SASL_SSL``), then SASL (``SASL_PLAINTEXT``, ``SASL_SSL``) as
Kafka's ``SaslClientAuthenticator`` does it: ApiVersions, SaslHandshake v1 naming the mechanism,
then the mechanism's tokens in SaslAuthenticate requests (v0-v2 as negotiated): PLAIN, or
SCRAM-SHA-256/512 by ``scramp``'s client (the server's signature checked). A session lifetime
the broker gives (KIP-368, ``connections.max.reauth.ms``) is renewed on the same connection
before it ends, as Kafka's clients do. A refused login raises :class:`MirrorError` with the
broker's address and its ``error_message``. Every request and response is
encoded and decoded by ``kio`` (the dataclasses generated from Kafka's message schemas) through
:func:`kafkalog.server.protocol.build`, never by hand. Versions are negotiated with ApiVersions:
each API uses the highest version both this client and the broker support.

APIs: ApiVersions, Metadata (topic ids, partitions, leaders, broker addresses), ListOffsets
(earliest / latest) and Fetch, which must be version 12 or later (KIP-595: the fetcher sends its
``last_fetched_epoch`` and the leader answers a ``diverging_epoch``; a follower without it could
not detect a divergent history, see :mod:`kafkalog.mirror.mirror`).

Example
-------
>>> with KafkaClient("127.0.0.1:9092") as c:              # doctest: +SKIP
...     meta = c.metadata(["orders"])
...     c.list_offsets({("orders", 0): EARLIEST})
{('orders', 0): (0, 0)}
"""

from __future__ import annotations

import io
import socket
import ssl
import struct
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kio.index import load_request_schema, load_response_schema
from kio.serial import entity_reader, entity_writer

from ..errors import KafkaLogError
from ..server.protocol import build
from .security import PLAINTEXT, ClientSecurity

__all__ = ["KafkaClient", "MirrorError", "BrokerUnavailableError", "BrokerNode", "PartitionInfo",
           "TopicInfo",
           "FetchPartition", "FetchedPartition", "EARLIEST", "LATEST", "error_name",
           "API_RANGES"]

#: ListOffsets' special timestamps (a consumer's LATEST is the high watermark)
EARLIEST = -2
LATEST = -1

API_VERSIONS, METADATA, LIST_OFFSETS, FETCH = 18, 3, 2, 1
DESCRIBE_CONFIGS = 32
SASL_HANDSHAKE, SASL_AUTHENTICATE = 17, 36
#: versions this client implements: api key -> (lowest, highest). Fetch 12 is KIP-595's
#: ``last_fetched_epoch``/``diverging_epoch``; Metadata 10 the first with topic ids.
API_RANGES: dict[int, tuple[int, int]] = {
    METADATA: (1, 12),
    LIST_OFFSETS: (1, 9),
    FETCH: (12, 16),
}
#: versions used when the broker has them, else the feature goes without (a topic's configs)
OPTIONAL_RANGES: dict[int, tuple[int, int]] = {
    DESCRIBE_CONFIGS: (1, 4),
}
#: DescribeConfigs' resource type of a topic, and the source of a topic's own override
#: (``DescribeConfigsResponse.ConfigSource.DYNAMIC_TOPIC_CONFIG``)
TOPIC_RESOURCE = 2
DYNAMIC_TOPIC_CONFIG = 1
#: ... and on a SASL connection: SaslHandshake v1 (tokens in SaslAuthenticate, KIP-152)
SASL_RANGES: dict[int, tuple[int, int]] = {
    SASL_HANDSHAKE: (1, 1),
    SASL_AUTHENTICATE: (0, 2),
}
_NAMES = {METADATA: "Metadata", LIST_OFFSETS: "ListOffsets", FETCH: "Fetch",
          DESCRIBE_CONFIGS: "DescribeConfigs",
          SASL_HANDSHAKE: "SaslHandshake", SASL_AUTHENTICATE: "SaslAuthenticate"}
#: Kafka's clients re-authenticate at 85-95% of the session lifetime (KIP-368)
_REAUTH_AT = 0.85
_SIZE = struct.Struct(">i")
#: a response larger than this is refused (a broker's fetch is bounded by max_bytes anyway)
_MAX_FRAME = 1 << 30


class MirrorError(KafkaLogError):
    """A ``kafkalog mirror`` failure: a broker unreachable or refusing, an unknown topic, data
    that cannot be appended. ``path`` is the local partition directory when there is one,
    ``offset`` the offset concerned."""


class BrokerUnavailableError(MirrorError):
    """The broker could not be reached, or its connection broke mid-request (a broker restart,
    a network fault): what Kafka's clients retry on another connection after a backoff, unlike
    a refused login or a response that does not parse."""


def error_name(code: Any) -> str:
    """Kafka's name of an error code (``OFFSET_OUT_OF_RANGE``)."""
    name = getattr(code, "name", None)
    return name.upper() if name else str(int(code))


@dataclass(frozen=True)
class BrokerNode:
    node_id: int
    host: str
    port: int

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


@dataclass(frozen=True)
class PartitionInfo:
    partition: int
    leader: int
    leader_epoch: int
    error: int


@dataclass(frozen=True)
class TopicInfo:
    name: str
    topic_id: uuid.UUID | None
    is_internal: bool
    partitions: tuple[PartitionInfo, ...]
    error: int


@dataclass(frozen=True)
class FetchPartition:
    """One partition of a fetch: Kafka's ``FetchRequest.PartitionData``."""

    topic: str
    topic_id: uuid.UUID | None
    partition: int
    fetch_offset: int
    last_fetched_epoch: int  # -1: none (an empty log)
    max_bytes: int
    #: the leader epoch Metadata gave (KIP-320): a leader with a newer one answers
    #: FENCED_LEADER_EPOCH, one that has not caught up UNKNOWN_LEADER_EPOCH; -1: no check
    current_leader_epoch: int = -1


@dataclass(frozen=True)
class FetchedPartition:
    """One partition of a fetch response."""

    topic: str
    partition: int
    error: int
    high_watermark: int
    log_start_offset: int
    diverging_epoch: tuple[int, int] | None  # (epoch, end offset)
    records: bytes


class KafkaClient:
    """A blocking connection to one broker; versions negotiated at connect.

    ``security``: TLS and SASL (default: PLAINTEXT); ``client_id`` None is the security's
    ``client.id``, else ``kafkalog-mirror``.

    Raises :class:`MirrorError` when the broker cannot be reached, fails the TLS handshake or
    the SASL login, closes the connection, or lacks a version this client needs.
    """

    def __init__(self, address: str, *, timeout: float = 30.0, client_id: str | None = None,
                 security: ClientSecurity | None = None) -> None:
        host, _, port = address.rpartition(":")
        if not host or not port.isdigit():
            raise MirrorError(f"bad broker address (expected HOST:PORT, found {address!r})")
        self.address = address
        self.security = security = security or PLAINTEXT
        self.client_id = client_id or security.client_id or "kafkalog-mirror"
        self._correlation_id = 0
        self._served = False  # a response to a request past the login was read
        # the receive buffer, reused by every response (kio copies out what it parses, so
        # nothing refers to it once a response is decoded): no zero-filled allocation and no
        # copy of an 8 MiB fetch response before it is parsed
        self._buf = bytearray(64 << 10)
        self._reauth_deadline: float | None = None
        try:
            self._sock = socket.create_connection((host.strip("[]"), int(port)),
                                                  timeout=timeout)
        except OSError as e:
            raise BrokerUnavailableError(f"cannot connect to {address}: {e}") from None
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            if security.ssl_context is not None:
                self._sock = self._tls(security.ssl_context, host.strip("[]"))
            self.versions = self._negotiate()
            if security.sasl:
                self._authenticate()
        except BaseException:
            self.close()
            raise

    # -- connection ------------------------------------------------------------------------------

    def _tls(self, ctx: ssl.SSLContext, host: str) -> ssl.SSLSocket:
        try:
            return ctx.wrap_socket(self._sock, server_hostname=host)
        except ssl.SSLCertVerificationError as e:
            raise MirrorError(f"{self.address}: TLS handshake failed: the broker's certificate "
                              f"is not trusted: {e.verify_message} (ssl.truststore.location, "
                              f"ssl.endpoint.identification.algorithm)") from None
        except (ssl.SSLError, OSError) as e:
            raise MirrorError(f"{self.address}: TLS handshake failed: {e} (is it a TLS "
                              f"listener? security.protocol={self.security.protocol})") from None

    def _hint(self) -> str:
        """Why a broker may close a connection before serving it: the wrong protocol."""
        if self._served:
            return ""
        if self.security.tls and not self.security.client_certificate:
            # (TLS 1.3: a listener requiring a client certificate checks it after the
            # handshake, then closes the connection)
            return (" (does the listener require a client certificate? ssl.keystore.location; "
                    f"or is security.protocol={self.security.protocol} not its protocol?)")
        return (f" (security.protocol={self.security.protocol}: is it the listener's "
                f"protocol?)")

    def close(self) -> None:
        self._sock.close()

    def __enter__(self) -> KafkaClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _send(self, api_key: int, version: int, body: Mapping[str, Any]) -> int:
        cls = load_request_schema(api_key, version)
        self._correlation_id += 1
        header = cls.__header_schema__(request_api_key=api_key, request_api_version=version,
                                       correlation_id=self._correlation_id,
                                       client_id=self.client_id)
        out = io.BytesIO()
        out.write(b"\0\0\0\0")
        entity_writer(cls.__header_schema__)(out, header)
        entity_writer(cls)(out, build(cls, body))
        frame = out.getbuffer()
        _SIZE.pack_into(frame, 0, len(frame) - 4)
        try:
            self._sock.sendall(frame)
        except OSError as e:
            raise BrokerUnavailableError(f"{self.address}: sending a request failed: {e}") \
                from None
        finally:
            del frame
        return self._correlation_id

    def _read_exactly(self, n: int) -> memoryview:
        """The next ``n`` bytes of the connection, read-only, in the receive buffer (valid
        until the next read)."""
        if len(self._buf) < n:
            self._buf = bytearray(max(n, 2 * len(self._buf)))
        view = memoryview(self._buf)[:n]
        got = 0
        try:
            while got < n:
                k = self._sock.recv_into(view[got:], n - got)
                if k == 0:
                    raise BrokerUnavailableError(f"{self.address}: the broker closed the "
                                                 f"connection{self._hint()}")
                got += k
        except OSError as e:
            raise BrokerUnavailableError(f"{self.address}: reading a response failed: {e}"
                                         f"{self._hint()}") from None
        return view.toreadonly()

    def request(self, api_key: int, version: int, body: Mapping[str, Any]) -> Any:
        """Send ``body`` (snake_case fields of kio's request class) and return the response."""
        if self._reauth_deadline is not None and api_key not in SASL_RANGES \
                and time.monotonic() >= self._reauth_deadline:
            self._authenticate()  # the session ends soon: log in again first (KIP-368)
        cid = self._send(api_key, version, body)
        (n,) = _SIZE.unpack(self._read_exactly(4))
        if not 0 < n <= _MAX_FRAME:
            raise MirrorError(f"{self.address}: bad response size {n}")
        frame = self._read_exactly(n)
        cls = load_response_schema(api_key, version)
        try:
            header, pos = entity_reader(cls.__header_schema__)(frame, 0)
            resp, _ = entity_reader(cls)(frame, pos)
        except Exception as e:  # kio raises assorted errors on bytes it cannot parse
            raise MirrorError(f"{self.address}: api key {api_key} v{version} response does "
                              f"not parse: {type(e).__name__}: {e}") from None
        if header.correlation_id != cid:
            raise MirrorError(f"{self.address}: response correlation id "
                              f"{header.correlation_id}, expected {cid}")
        if api_key not in SASL_RANGES and api_key != API_VERSIONS:
            self._served = True
        return resp

    def _authenticate(self) -> None:
        """Log in with the security's SASL mechanism (Kafka's ``SaslClientAuthenticator``)."""
        sec = self.security
        mechanism = sec.mechanism
        assert mechanism is not None
        self._reauth_deadline = None
        resp = self.request(SASL_HANDSHAKE, self.versions[SASL_HANDSHAKE],
                            {"mechanism": mechanism})
        if int(resp.error_code) != 0:
            code = error_name(resp.error_code)
            if code == "UNSUPPORTED_SASL_MECHANISM":
                raise MirrorError(f"{self.address}: the broker does not enable SASL mechanism "
                                  f"{mechanism} (sasl.mechanism; it enables "
                                  f"{', '.join(resp.mechanisms) or 'none'})")
            raise MirrorError(f"{self.address}: SaslHandshake failed: {code}"
                              + (" (is it a SASL listener? security.protocol="
                                 f"{sec.protocol})" if code == "ILLEGAL_SASL_STATE" else ""))
        user = sec.username
        if mechanism == "PLAIN":
            self._sasl_round(b"\0" + user.encode() + b"\0" + sec.password.encode())
            return
        try:
            from scramp import ScramClient, ScramException
        except ImportError:
            raise MirrorError(f"{mechanism} needs the scramp package (pip install "
                              f"'kafkalog[server]')") from None
        try:
            scram = ScramClient([mechanism], user, sec.password)
            first = self._sasl_round(scram.get_client_first().encode())
            scram.set_server_first(first.decode())
            final = self._sasl_round(scram.get_client_final().encode())
            scram.set_server_final(final.decode())  # (checks the server's signature)
        except ScramException as e:
            raise MirrorError(f"{self.address}: {mechanism} authentication as {user!r} "
                              f"failed: {e}") from None

    def _sasl_round(self, token: bytes) -> bytes:
        """One SaslAuthenticate exchange: the broker's token (its error raised)."""
        resp = self.request(SASL_AUTHENTICATE, self.versions[SASL_AUTHENTICATE],
                            {"auth_bytes": token})
        if int(resp.error_code) != 0:
            message = resp.error_message or error_name(resp.error_code)
            raise MirrorError(f"{self.address}: {self.security.mechanism} authentication as "
                              f"{self.security.username!r} failed: {message}")
        lifetime = getattr(resp, "session_lifetime", None)
        ms = 0 if lifetime is None else (
            lifetime.total_seconds() * 1000 if hasattr(lifetime, "total_seconds")
            else float(lifetime))
        self._reauth_deadline = (time.monotonic() + ms * _REAUTH_AT / 1000) if ms > 0 else None
        return bytes(resp.auth_bytes)

    def _negotiate(self) -> dict[int, int]:
        # ApiVersions v0 every broker answers (and its response header is always v0)
        resp = self.request(API_VERSIONS, 0, {})
        if int(resp.error_code) != 0:
            raise MirrorError(f"{self.address}: ApiVersions failed: "
                              f"{error_name(resp.error_code)}")
        theirs = {int(k.api_key): (int(k.min_version), int(k.max_version))
                  for k in resp.api_keys}
        chosen = {}
        ranges = {**API_RANGES, **(SASL_RANGES if self.security.sasl else {})}
        for key, (lo, hi) in ranges.items():
            if key not in theirs or theirs[key][1] < lo or theirs[key][0] > hi:
                have = "none" if key not in theirs else f"{theirs[key][0]}-{theirs[key][1]}"
                why = " (KIP-595's last_fetched_epoch and diverging_epoch, Kafka 2.7 and " \
                      "later)" if key == FETCH else ""
                raise MirrorError(f"{self.address}: the broker does not support "
                                  f"{_NAMES[key]} versions {lo}-{hi}{why} (it has {have})")
            chosen[key] = min(hi, theirs[key][1])
        for key, (lo, hi) in OPTIONAL_RANGES.items():
            if key in theirs and theirs[key][1] >= lo and theirs[key][0] <= hi:
                chosen[key] = min(hi, theirs[key][1])
        return chosen

    # -- APIs ------------------------------------------------------------------------------------

    def metadata(self, topics: Sequence[str] | None = None
                 ) -> tuple[dict[int, BrokerNode], dict[str, TopicInfo]]:
        """Brokers by node id and topics by name (``topics`` None: every topic)."""
        v = self.versions[METADATA]
        body: dict[str, Any] = {
            "topics": None if topics is None else [{"name": t, "topic_id": None}
                                                   for t in topics],
            "allow_auto_topic_creation": False,
            "include_cluster_authorized_operations": False,
            "include_topic_authorized_operations": False}
        resp = self.request(METADATA, v, body)
        brokers = {int(b.node_id): BrokerNode(int(b.node_id), b.host, int(b.port))
                   for b in resp.brokers}
        out = {}
        for t in resp.topics:
            tid = getattr(t, "topic_id", None)
            out[str(t.name)] = TopicInfo(
                str(t.name), None if tid is None or tid.int == 0 else tid,
                bool(getattr(t, "is_internal", False)),
                tuple(sorted((PartitionInfo(int(p.partition_index), int(p.leader_id),
                                            int(getattr(p, "leader_epoch", -1)),
                                            int(p.error_code)) for p in t.partitions),
                             key=lambda p: p.partition)),
                int(t.error_code))
        return brokers, out

    def topic_overrides(self, topics: Sequence[str]
                        ) -> dict[str, tuple[int, str | None, dict[str, str]]]:
        """Per topic, ``(error code, error message, overrides)``: the configs set on the topic
        itself (DescribeConfigs' ``DYNAMIC_TOPIC_CONFIG`` source; sensitive ones, whose value
        is not sent, left out). A broker without DescribeConfigs v1+ answers every topic with
        UNSUPPORTED_VERSION (35)."""
        v = self.versions.get(DESCRIBE_CONFIGS)
        if v is None:
            return {t: (35, "DescribeConfigs v1+ not served", {}) for t in topics}
        resp = self.request(DESCRIBE_CONFIGS, v, {
            "resources": [{"resource_type": TOPIC_RESOURCE, "resource_name": t,
                           "configuration_keys": None} for t in topics],
            "include_synonyms": False, "include_documentation": False})
        return {str(r.resource_name): (
            int(r.error_code), r.error_message,
            {str(c.name): str(c.value) for c in r.configs
             if int(c.config_source) == DYNAMIC_TOPIC_CONFIG and not c.is_sensitive
             and c.value is not None}) for r in resp.results}

    def list_offsets(self, wanted: Mapping[tuple[str, int], int]
                     ) -> dict[tuple[str, int], tuple[int, int]]:
        """``(error code, offset)`` per partition for each timestamp (:data:`EARLIEST`,
        :data:`LATEST`), read_uncommitted: LATEST is the high watermark."""
        by_topic: dict[str, list[dict[str, Any]]] = {}
        for (topic, p), ts in wanted.items():
            by_topic.setdefault(topic, []).append(
                {"partition_index": p, "current_leader_epoch": -1, "timestamp": ts,
                 "max_num_offsets": 1})
        resp = self.request(LIST_OFFSETS, self.versions[LIST_OFFSETS], {
            "replica_id": -1, "isolation_level": 0,
            "topics": [{"name": t, "partitions": ps} for t, ps in by_topic.items()]})
        return {(str(t.name), int(p.partition_index)): (int(p.error_code), int(p.offset))
                for t in resp.topics for p in t.partitions}

    def fetch(self, partitions: Iterable[FetchPartition], *, max_wait_ms: int = 500,
              min_bytes: int = 1, max_bytes: int = 64 << 20) -> list[FetchedPartition]:
        """One consumer fetch (replica id -1, read_uncommitted: aborted records and control
        batches come too), no fetch session. Partition errors are returned, not raised."""
        v = self.versions[FETCH]
        by_topic: dict[str, list[FetchPartition]] = {}
        for fp in partitions:
            by_topic.setdefault(fp.topic, []).append(fp)
        ids = {}
        topics = []
        for topic, fps in by_topic.items():
            tid = fps[0].topic_id
            if v >= 13:
                if tid is None:
                    raise MirrorError(f"{self.address}: Fetch v{v} needs topic {topic!r}'s id "
                                      f"and Metadata gave none")
                ids[tid] = topic
            topics.append({"topic": topic, "topic_id": tid, "partitions": [
                {"partition": fp.partition, "current_leader_epoch": fp.current_leader_epoch,
                 "fetch_offset": fp.fetch_offset, "last_fetched_epoch": fp.last_fetched_epoch,
                 "log_start_offset": -1, "partition_max_bytes": fp.max_bytes}
                for fp in fps]})
        resp = self.request(FETCH, v, {
            "replica_id": -1, "replica_state": {"replica_id": -1, "replica_epoch": -1},
            "max_wait": max_wait_ms, "min_bytes": min_bytes, "max_bytes": max_bytes,
            "isolation_level": 0, "session_id": 0, "session_epoch": -1, "topics": topics,
            "forgotten_topics_data": [], "rack_id": ""})
        if int(resp.error_code) != 0:
            raise MirrorError(f"{self.address}: Fetch failed: {error_name(resp.error_code)}")
        out = []
        for t in resp.responses:
            topic = ids.get(t.topic_id) if v >= 13 else str(t.topic)
            if topic is None:
                continue  # (a topic we did not ask for: ignored)
            for p in t.partitions:
                d = p.diverging_epoch
                # Kafka's FetchResponse.isDivergingEpoch: either field set
                div = None if d is None or (d.epoch < 0 and d.end_offset < 0) else (
                    int(d.epoch), int(d.end_offset))
                out.append(FetchedPartition(topic, int(p.partition_index), int(p.error_code),
                                            int(p.high_watermark), int(p.log_start_offset),
                                            div, b"" if p.records is None else p.records))
        return out
