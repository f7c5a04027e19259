"""One client connection: size-prefixed frames in, responses out in request order.

Kafka's ``SocketServer.Processor`` mutes a connection while one of its requests is in flight
(``selector.mute`` after a receive, unmute after the response is sent), so requests a client
pipelines are processed one at a time and answered in the order sent. :class:`Connection` does
the same with one asyncio task: read a frame, handle it (a long-polling fetch awaits here), write
the response, read the next frame. Produce with ``acks=0`` gets no response, as on a broker.

Bad input closes only the connection that sent it, with one warning line naming the peer and
what was wrong (Kafka's ``InvalidRequestException`` handling in ``processCompletedReceives``):
a size prefix below 0 or above ``socket.request.max.bytes``, a frame cut before its end, a header
or body that does not parse. A request for an API this server does not serve, or at a version
it does not serve, is answered instead (the issue's rule: never a dropped connection for a
well-formed frame): with the ApiVersions v0 response Kafka sends for an unsupported ApiVersions
request (RequestContext.isUnsupportedApiVersionsRequest): error ``UNSUPPORTED_VERSION`` (35) and
the versions served, under the request's correlation id. (Kafka itself closes the connection for
other APIs: SocketServer.parseRequestHeader throws InvalidRequestException.)

On a SASL listener the frames before authentication go to the connection's
:class:`~kafkalog.server.sasl.SaslAuthenticator` (ApiVersions, SaslHandshake, the mechanism's
tokens); a failed or out-of-order exchange is answered as Kafka answers it and the connection
closes after ``connections.failed.authentication.delay.ms``. With a session lifetime
(``connections.max.reauth.ms``, or an OAUTHBEARER token's expiry) a SaslHandshake on the
authenticated connection re-authenticates it (KIP-368); past the lifetime any other request
closes it, as Kafka's ``SocketServer`` does.

Threads: runs on the server's event loop.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import ssl
import time
from collections.abc import Mapping
from typing import Any

from . import handlers  # noqa: F401 - registers every API
from .api import APIS, RequestContext
from .handlers.api_versions import api_versions_body
from .listener import authenticator
from .protocol import (
    ErrorCode,
    ProtocolError,
    build,
    decode_request,
    encode_response,
    peek_header,
    response_class,
)
from .response_writers import encode_response_values

__all__ = ["Connection"]

logger = logging.getLogger("kafkalog.server")

_API_VERSIONS = 18
_PRODUCE = 0
_FETCH = 1
#: the APIs with byte-rate quotas: Produce (producer_byte_rate), Fetch (consumer_byte_rate)
_QUOTA_KEYS = (0, 1)
_SASL_HANDSHAKE_KEY = (17).to_bytes(2, "big")
#: the index that ends a connection id (Kafka's ``Processor.nextConnectionIndex``)
_CONNECTION_INDEX = itertools.count()


class Connection:
    """Serve one client connection until it closes (see the module docstring).

    Parameters
    ----------
    broker:
        The :class:`~kafkalog.server.broker.Broker`.
    reader, writer:
        The asyncio streams of the accepted socket.
    listener:
        The :class:`~kafkalog.server.listener.Listener` it was accepted on (None: the server's
        main listener).
    """

    def __init__(self, broker: Any, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter, listener: Any = None) -> None:
        self.broker = broker
        self.reader = reader
        self.writer = writer
        peer = writer.get_extra_info("peername")
        self.peer = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer)
        local = writer.get_extra_info("sockname")
        #: Kafka's connection id: ``localHost:localPort-remoteHost:remotePort-index``
        self.connection_id = (f"{local[0]}:{local[1]}" if isinstance(local, tuple)
                              else str(local)) + f"-{self.peer}-{next(_CONNECTION_INDEX)}"
        self.requests = 0
        #: the TLS client certificate's principal, known once the handshake is done (before
        #: any request is read), so computed once and not per request
        self._tls_principal = _tls_principal(writer)
        #: the listener accepted on (kafkalog.server.listener.Listener; None: the main one)
        self.listener = listener
        #: the SASL exchange still to complete on a SASL listener (None: nothing to do)
        self.auth = authenticator(broker, self.peer, self.handle_frame,
                                  None if listener is None else listener.config)
        #: the throttle time (ms) of the last request's quota violation: the connection reads
        #: nothing more until it has passed (kafkalog.server.client_quotas)
        self.mute_ms = 0

    @property
    def principal(self) -> str:
        """Kafka's ``DefaultKafkaPrincipalBuilder``: the SASL user once authenticated, else the
        TLS client certificate's subject (RFC 2253, e.g. ``User:CN=client``), else
        ``User:ANONYMOUS``."""
        if self.auth is not None and self.auth.principal is not None:
            return f"User:{self.auth.principal}"
        return self._tls_principal

    async def run(self) -> None:
        """Read, handle and answer requests until the client closes or sends a bad frame."""
        limit = self.broker.config.max_request_bytes
        try:
            while True:
                try:
                    head = await self.reader.readexactly(4)
                except asyncio.IncompleteReadError as e:
                    if e.partial:
                        logger.warning("%s: closing connection: frame cut in its size prefix "
                                       "(%d of 4 bytes)", self.peer, len(e.partial))
                    return
                size = int.from_bytes(head, "big", signed=True)
                if self.auth is not None and not self.auth.complete \
                        and not 0 <= size <= self.broker.config.sasl_server_max_receive_size:
                    # SaslServerAuthenticator reads at most sasl.server.max.receive.size before
                    # a connection authenticates: an unauthenticated peer gets no 100 MiB buffer
                    logger.warning("%s: closing connection: Failing SASL authentication due to "
                                   "invalid receive size (%d bytes; sasl.server.max.receive."
                                   "size is %d)", self.peer, size,
                                   self.broker.config.sasl_server_max_receive_size)
                    return
                if size < 0 or size > limit:
                    logger.warning("%s: closing connection: request size %d out of range "
                                   "(expected 0..%d, socket.request.max.bytes)", self.peer, size,
                                   limit)
                    return
                try:
                    frame = await self.reader.readexactly(size)
                except asyncio.IncompleteReadError as e:
                    logger.warning("%s: closing connection: frame cut mid-way (expected %d "
                                   "bytes, found %d)", self.peer, size, len(e.partial))
                    return
                if self.auth is not None and (not self.auth.complete or (
                        frame[:2] == _SASL_HANDSHAKE_KEY
                        and self.auth.begin_reauthentication())):
                    response, close = await self.auth.handle(frame)
                    if response is not None:
                        self.writer.write(response)
                        await self.writer.drain()
                    if close:
                        # connections.failed.authentication.delay.ms: the failure is answered,
                        # the close comes later (Kafka's brake on guessing passwords)
                        delay = self.broker.config.connections_failed_authentication_delay_ms
                        await asyncio.sleep(delay / 1000)
                        return
                    continue
                if self.auth is not None and self.auth.expired():
                    # KIP-368: a session past its lifetime serves nothing but a
                    # re-authentication (SocketServer closes the channel)
                    logger.info("%s: closing connection: SASL session expired without "
                                "re-authentication", self.peer)
                    return
                response = await self.handle_frame(frame)
                self.requests += 1
                if response is not None:
                    self.writer.write(response)
                    await self.writer.drain()
                if self.mute_ms > 0:
                    # a quota violation: the response (if any) is out; read nothing more from
                    # this client until its throttle time has passed (SocketServer's mute)
                    mute, self.mute_ms = self.mute_ms, 0
                    await asyncio.sleep(mute / 1000)
        except ProtocolError as e:
            logger.warning("%s: closing connection: %s", self.peer, e)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("%s: closing connection after an unexpected error", self.peer)
        finally:
            self.writer.close()
            shares = getattr(self.broker, "shares", None)
            if shares is not None:
                shares.connection_closed(self.peer)

    async def handle_frame(self, frame: bytes) -> bytes | None:
        """The response frame for one request frame (None: no response).

        Raises
        ------
        ProtocolError
            A header or body that does not parse.
        """
        key, version, correlation_id = peek_header(frame)
        api = APIS.get(key)
        if api is None or not api.supports(version):
            if key != _API_VERSIONS:
                logger.info("%s: unsupported api key %d version %d: answering "
                            "UNSUPPORTED_VERSION", self.peer, key, version)
            body = build(response_class(_API_VERSIONS, 0),
                         api_versions_body(ErrorCode.unsupported_version))
            return encode_response(_API_VERSIONS, 0, correlation_id, body)
        t0 = time.perf_counter_ns()
        c0 = time.thread_time_ns()
        header, request = decode_request(frame, key, version)
        ctx = RequestContext(self.broker, key, version, correlation_id,
                             getattr(header, "client_id", None), self.peer,
                             None if self.listener is None else self.listener.advertised,
                             self.principal, self, len(frame))
        quotas = self.broker.client_quotas
        timed = None
        if quotas is not None:
            quotas.refresh()
            if quotas.request.quotas_enabled:
                # the request quota counts the handler's own time on the loop thread
                timed = _TimedAwait(api.handle(ctx, request))
        result = await (api.handle(ctx, request) if timed is None else timed)
        handler_ns = -1 if timed is None else timed.ns
        # (the generated writer: the bytes of encode_response(build(...)), see response_writers)
        out = None if result is None else encode_response_values(
            key, version, correlation_id, result)
        if quotas is not None and (handler_ns >= 0 or key in _QUOTA_KEYS) and quotas.enabled:
            out = self._apply_quota(quotas, ctx, key, version, correlation_id, result, out,
                                    handler_ns)
        m = self.broker.request_metrics.get(api.name)
        if m is None:
            m = self.broker.request_metrics[api.name] = [0, 0, 0]
        m[0] += 1
        m[1] += time.perf_counter_ns() - t0
        m[2] += time.thread_time_ns() - c0
        return out

    def _apply_quota(self, quotas: Any, ctx: RequestContext, key: int, version: int,
                     correlation_id: int, result: Any, out: bytes | None,
                     handler_ns: int) -> bytes | None:
        """Record the request against the client's quotas (a produce's or fetch's bytes, any
        request's handler time when ``handler_ns >= 0``): a violation puts the larger throttle
        time in the response (a fetch's becomes empty) and mutes the connection for it
        (kafkalog.server.client_quotas)."""
        size = 0 if out is None else len(out) - 4
        bandwidth = (quotas.produce_throttle_ms(ctx) if key == _PRODUCE
                     else quotas.fetch_throttle_ms(ctx, size) if key == _FETCH else 0)
        # (Produce with acks=0, no response, is exempt from the request quota)
        request_ms = quotas.request_throttle_ms(ctx, handler_ns) \
            if handler_ns >= 0 and not (key == _PRODUCE and result is None) else 0
        ms = max(bandwidth, request_ms)
        if ms <= 0:
            return out
        self.mute_ms = ms
        if result is None:  # acks=0: no response, the mute only
            return None
        if key == _FETCH:
            # the value recorded is taken back: FullFetchContext.getThrottledResponse sends
            # NONE, no data, no session
            quotas.unrecord_fetch(ctx, size)
            result = {"throttle_time": ms, "error_code": ErrorCode.none, "session_id": 0,
                      "responses": []}
        elif isinstance(result, Mapping) and "throttle_time" in result:
            result = {**result, "throttle_time": ms}
        else:
            return out  # (a response without a throttle field: the mute only)
        return encode_response_values(key, version, correlation_id, result)


class _TimedAwait:
    """``await coro``, adding up the wall time of each step the coroutine runs (between its
    suspensions): the time a request's handler spends on the loop thread, without the waits
    of a long poll or a join (Kafka's ``requestThreadTimeNanos`` counts only its request
    handler thread's time). Cancellation and exceptions pass through as with ``await``."""

    __slots__ = ("coro", "ns")

    def __init__(self, coro: Any) -> None:
        self.coro = coro
        self.ns = 0

    def __await__(self) -> Any:
        coro = self.coro
        value: Any = None
        error: BaseException | None = None
        while True:
            t0 = time.perf_counter_ns()
            try:
                yielded = coro.send(value) if error is None else coro.throw(error)
            except StopIteration as stop:
                self.ns += time.perf_counter_ns() - t0
                return stop.value
            except BaseException:
                self.ns += time.perf_counter_ns() - t0
                raise
            self.ns += time.perf_counter_ns() - t0
            value, error = None, None
            try:
                value = yield yielded
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as e:  # noqa: BLE001 - thrown in (cancellation): passed on
                error = e


def _tls_principal(writer: Any) -> str:
    ssl_object = writer.get_extra_info("ssl_object")
    cert = ssl_object.getpeercert() if isinstance(ssl_object, ssl.SSLObject) else None
    return f"User:{_rfc2253(cert.get('subject', ()))}" if cert else "User:ANONYMOUS"


def _rfc2253(subject: tuple) -> str:
    """A certificate subject as ``getpeercert()`` gives it, in the RFC 2253 order and form
    Java's ``X500Principal.getName()`` prints (last RDN first)."""
    names = {"commonName": "CN", "organizationName": "O", "organizationalUnitName": "OU",
             "countryName": "C", "stateOrProvinceName": "ST", "localityName": "L",
             "domainComponent": "DC", "streetAddress": "STREET", "userId": "UID"}
    rdns = []
    for rdn in reversed(subject):
        rdns.append("+".join(f"{names.get(k, k)}={_escape_dn(v)}" for k, v in rdn))
    return ",".join(rdns)


def _escape_dn(value: str) -> str:
    out = "".join("\\" + c if c in ',+"\\<>;' else c for c in value)
    if out.startswith((" ", "#")):
        out = "\\" + out
    if out.endswith(" "):
        out = out[:-1] + "\\ "
    return out
