"""The SASL state machine (:class:`kafkalog.server.sasl.SaslAuthenticator`) under arbitrary frame
sequences: whatever a client sends before it authenticates, the authenticator never completes
without a valid credential, answers only the frames Kafka answers at that point, and closes the
connection on anything else (hypothesis drives the sequences; no sockets).
"""

from __future__ import annotations

import asyncio
import io
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("scramp")

from kio.index import load_request_schema  # noqa: E402
from kio.serial import entity_writer  # noqa: E402

from kafkalog.security import ScramCredentialStore  # noqa: E402
from kafkalog.server.protocol import build  # noqa: E402
from kafkalog.server.sasl import SaslAuthenticator  # noqa: E402


def _frame(api_key: int, version: int, body: dict, correlation_id: int = 7) -> bytes:
    cls = load_request_schema(api_key, version)
    header = cls.__header_schema__(request_api_key=api_key, request_api_version=version,
                                   correlation_id=correlation_id, client_id="fuzz")
    out = io.BytesIO()
    entity_writer(cls.__header_schema__)(out, header)
    entity_writer(cls)(out, build(cls, body))
    return out.getvalue()


API_VERSIONS = _frame(18, 3, {"client_software_name": "f", "client_software_version": "1"})
HANDSHAKE = {m: _frame(17, 1, {"mechanism": m}) for m in ("PLAIN", "SCRAM-SHA-256", "GSSAPI")}
GOOD_PLAIN = _frame(36, 2, {"auth_bytes": b"\x00bob\x00bob-secret"})
BAD_PLAIN = _frame(36, 2, {"auth_bytes": b"\x00bob\x00guess"})
METADATA = _frame(3, 12, {"topics": None, "allow_auto_topic_creation": False,
                          "include_topic_authorized_operations": False})
SCRAM_FIRST = _frame(36, 2, {"auth_bytes": b"n,,n=alice,r=abcdef"})

FRAMES = st.one_of(
    st.sampled_from([API_VERSIONS, *HANDSHAKE.values(), BAD_PLAIN, METADATA, SCRAM_FIRST]),
    st.binary(max_size=40),
    st.binary(max_size=40).map(lambda b: struct.pack(">hhi", 36, 2, 1) + b),
    st.binary(max_size=40).map(lambda b: struct.pack(">hhi", 17, 1, 1) + b),
)


def _authenticator(tmp_path) -> SaslAuthenticator:
    store = ScramCredentialStore(tmp_path)
    if store.get("alice", "SCRAM-SHA-256") is None:
        store.set_password("alice", "SCRAM-SHA-256", "alice-secret")

    async def api_versions(frame: bytes) -> bytes:
        return b"api-versions-response"

    return SaslAuthenticator(peer="fuzz", mechanisms=["PLAIN", "SCRAM-SHA-256"],
                             plain_users={"bob": "bob-secret"}, scram_store=store,
                             api_versions=api_versions)


@settings(max_examples=300, deadline=None)
@given(frames=st.lists(FRAMES, max_size=8))
def test_no_frame_sequence_authenticates_without_credentials(tmp_path_factory, frames):
    auth = _authenticator(tmp_path_factory.mktemp("fuzz"))

    async def run() -> None:
        for frame in frames:
            if auth.state == "failed":
                return
            before = auth.state
            key = struct.unpack_from(">h", frame)[0] if len(frame) >= 2 else None
            try:
                out, close = await auth.handle(frame)
            except Exception as e:  # pragma: no cover - the property's failure
                raise AssertionError(f"raised on {frame!r} in state {before}: {e!r}") from e
            assert not auth.complete, f"authenticated by {frame!r}"
            if close:
                assert auth.state == "failed" or out is not None
                return
            # a frame answered in the handshake states is ApiVersions (once) or SaslHandshake
            if before in ("handshake_or_versions", "handshake"):
                assert key in (17, 18), (frame, before)

    asyncio.run(run())


@settings(max_examples=100, deadline=None)
@given(prefix=st.lists(st.sampled_from([API_VERSIONS]), max_size=1))
def test_the_valid_exchange_still_completes(tmp_path_factory, prefix):
    auth = _authenticator(tmp_path_factory.mktemp("ok"))

    async def run() -> None:
        for frame in [*prefix, HANDSHAKE["PLAIN"], GOOD_PLAIN]:
            out, close = await auth.handle(frame)
            assert out is not None and not close

    asyncio.run(run())
    assert auth.complete and auth.principal == "bob"
