"""The server's own errors (in the ``KafkaLogError`` tree)::

    KafkaLogError
    +-- ProtocolError      a frame that is not a Kafka request: its connection is closed
"""

from __future__ import annotations

from ..errors import KafkaLogError

__all__ = ["ProtocolError"]


class ProtocolError(KafkaLogError):
    """A frame that is not a Kafka request (bad size, header or body): the connection that sent
    it is closed, as Kafka's ``SocketServer`` does (``InvalidRequestException``)."""
