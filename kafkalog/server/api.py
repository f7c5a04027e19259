"""The table of APIs the server answers, and what a handler receives.

Each handler module registers its API with :func:`register`: the API key, Kafka's name, and the
versions served (Kafka 3.9's ``validVersions`` of the request schema, within what ``kio`` has
schemas for; each module states where its range comes from). ``ApiVersions`` answers from this
table, and the connection refuses any other version.

A handler is ``async def handle(ctx, request) -> Mapping | None``: ``request`` is kio's request
dataclass of the negotiated version; the result is the response as plain values for
:func:`kafkalog.server.protocol.build` (None: no response, as for produce with ``acks=0``).

Threads: the table is filled at import and read-only afterwards.

Example
-------
>>> import kafkalog.server.handlers  # registers every API
>>> APIS[18].name, APIS[18].min_version
('ApiVersions', 0)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

__all__ = ["Api", "RequestContext", "APIS", "register", "Handler", "AUTHORIZATION_MESSAGES",
           "ERROR_MESSAGES"]

#: Kafka's ``Errors`` default messages of the authorization errors: what ``new ApiError(error)``,
#: ``getErrorResponse(error)`` and ``error.message`` put in a response (TOPIC_, GROUP_,
#: CLUSTER_AUTHORIZATION_FAILED)
AUTHORIZATION_MESSAGES = {29: "Topic authorization failed.", 30: "Group authorization failed.",
                          31: "Cluster authorization failed."}
#: those and the other default messages handlers send as they are (UNKNOWN_TOPIC_OR_PARTITION,
#: NOT_LEADER_OR_FOLLOWER)
ERROR_MESSAGES = {
    **AUTHORIZATION_MESSAGES,
    3: "This server does not host this topic-partition.",
    6: "For requests intended only for the leader, this error indicates that the broker is not "
       "the current leader. For requests intended for any replica, this error indicates that the "
       "broker is not a replica of the topic partition.",
}


@dataclasses.dataclass
class RequestContext:
    """What a handler knows about the request besides its body."""

    #: the broker (kafkalog.server.broker.Broker)
    broker: Any
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    #: "host:port" of the client, for log lines
    peer: str
    #: the advertised (host, port) of the listener the request came on (None: the broker's)
    endpoint: tuple[str, int] | None = None
    #: who sent it (Kafka's KafkaPrincipal as text: "User:alice", "User:ANONYMOUS")
    principal: str = "User:ANONYMOUS"
    #: the connection it came on (kafkalog.server.connection.Connection; None in unit tests)
    connection: Any = None
    #: the size of the request frame (without its size prefix)
    request_size: int = 0

    @property
    def client_host(self) -> str:
        """The client's address without its port (what ACL hosts match)."""
        return self.peer.rsplit(":", 1)[0].strip("[]")

    def authorize(self, operation: int, resource_type: int, name: str) -> bool:
        """Whether the broker's authorizer lets :attr:`principal` do ``operation`` on the
        resource (always, when no authorizer is configured: ``authorizer.class.name``)."""
        authorizer = self.broker.authorizer
        if authorizer is None:
            return True
        return authorizer.authorize(self.principal, self.client_host, operation,
                                    resource_type, name)

    def describe_request(self) -> str:
        """The request as Kafka's ``RequestChannel.Request.toString`` prints it (in the message
        of a refused cluster operation): processor, connection id
        (``local:port-peer:port-index``), session, listener, security protocol, the request
        buffer (parsed: position at its end) and no envelope. The session is printed as Kafka
        3.x's ``Session(principal,/address)`` (4.x's Java ``Session`` has no ``toString``, so
        Kafka prints an identity hash there)."""
        conn = self.connection
        listener = None if conn is None else conn.listener
        protocol = (self.broker.config if listener is None else listener.config
                    ).security_protocol
        name = protocol if listener is None else listener.name
        connection_id = self.peer if conn is None else conn.connection_id
        n = self.request_size
        return (f"Request(processor=0, connectionId={connection_id}, "
                f"session=Session({self.principal},/{self.client_host}), "
                f"listenerName=ListenerName({name}), securityProtocol={protocol}, "
                f"buffer=java.nio.HeapByteBuffer[pos={n} lim={n} cap={n}], envelope=None)")

    def cluster_refused(self, operation: int) -> str:
        """``AuthHelper.authorizeClusterOperation``'s message (Kafka 4.1+, KAFKA-18434):
        ``Request <request> needs <OPERATION> permission.``"""
        from ..security.acls import AclOperation

        return (f"Request {self.describe_request()} needs {AclOperation(operation).name} "
                f"permission.")

    def authorized_operations(self, resource_type: int, name: str, supported: int) -> int:
        """Kafka's ``AuthHelper.authorizedOperations``: the bit field (1 << operation code) of
        the ``supported`` operations the principal may do on the resource."""
        if self.broker.authorizer is None:
            return supported
        return sum(1 << op for op in range(32) if supported & (1 << op)
                   and self.authorize(op, resource_type, name))


Handler = Callable[[RequestContext, Any], Awaitable[Mapping[str, Any] | None]]


@dataclasses.dataclass(frozen=True)
class Api:
    """One API the server answers."""

    key: int
    name: str
    min_version: int
    max_version: int
    handle: Handler

    def supports(self, version: int) -> bool:
        return self.min_version <= version <= self.max_version


#: api key -> Api, filled by the handler modules (import kafkalog.server.handlers)
APIS: dict[int, Api] = {}


def register(key: int, name: str, min_version: int, max_version: int
             ) -> Callable[[Handler], Handler]:
    """Decorator: serve API ``key`` at ``min_version..max_version`` with the function."""

    def deco(fn: Handler) -> Handler:
        if key in APIS:
            raise ValueError(f"api key {key} registered twice")
        APIS[key] = Api(key, name, min_version, max_version, fn)
        return fn

    return deco
