"""A minimal blocking Kafka client for tests that need raw requests: kio encodes the requests
and decodes the responses (nothing hand-written), frames go over a plain socket."""

from __future__ import annotations

import io
import socket
import struct
from typing import Any

from kio.index import load_request_schema, load_response_schema
from kio.serial import entity_reader, entity_writer

from kafkalog.server.protocol import build


class WireClient:
    """One connection; :meth:`request` sends a request and reads its response."""

    def __init__(self, address: str, timeout: float = 30.0) -> None:
        host, port = address.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        self.correlation_id = 0

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> WireClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def encode(self, api_key: int, version: int, body: dict[str, Any],
               correlation_id: int | None = None) -> bytes:
        """A size-prefixed request frame."""
        cls = load_request_schema(api_key, version)
        if correlation_id is None:
            self.correlation_id += 1
            correlation_id = self.correlation_id
        header = cls.__header_schema__(request_api_key=api_key, request_api_version=version,
                                       correlation_id=correlation_id, client_id="wire-test")
        out = io.BytesIO()
        entity_writer(cls.__header_schema__)(out, header)
        entity_writer(cls)(out, build(cls, body))
        data = out.getvalue()
        return struct.pack(">i", len(data)) + data

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def read_frame(self) -> bytes:
        """The next response frame (without its size); b"" when the server closed."""
        head = self._read(4)
        if len(head) < 4:
            return b""
        (n,) = struct.unpack(">i", head)
        return self._read(n)

    def _read(self, n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                return buf
            buf += chunk
        return buf

    def read_response(self, api_key: int, version: int) -> tuple[int, Any]:
        """``(correlation id, body)`` of the next response, decoded at ``version``."""
        frame = self.read_frame()
        cls = load_response_schema(api_key, version)
        header, n = entity_reader(cls.__header_schema__)(frame, 0)
        body, _ = entity_reader(cls)(frame, n)
        return header.correlation_id, body

    def request(self, api_key: int, version: int, body: dict[str, Any]) -> Any:
        self.send_raw(self.encode(api_key, version, body))
        cid, resp = self.read_response(api_key, version)
        assert cid == self.correlation_id
        return resp

    def oauthbearer_refused(self, token: str) -> tuple[Any, Any]:
        """An OAUTHBEARER login with ``token`` that the server refuses (RFC 7628): its JSON
        error challenge, then the failure after the client's ``%x01``; both responses."""
        assert self.request(17, 1, {"mechanism": "OAUTHBEARER"}).error_code == 0
        challenge = self.request(36, 2, {"auth_bytes":
                                         f"n,,\x01auth=Bearer {token}\x01\x01".encode()})
        return challenge, self.request(36, 2, {"auth_bytes": b"\x01"})
