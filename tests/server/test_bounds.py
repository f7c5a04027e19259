"""The generated frame checks against the interpreting walker (kafkalog.server.bounds).

For every request class kio has: frames kio encodes from random values, then cut short or
overwritten with lengths that lie. The generated check must accept exactly the frames the
walker accepts (it guards kio's reader against an allocation that aborts the process), and
``check_frame`` must raise the walker's own error.
"""

from __future__ import annotations

import io
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkalog.server import bounds
from kafkalog.server.bounds import check_frame, walk_frame
from kafkalog.server.errors import ProtocolError
from kafkalog.server.protocol import build, request_schema

from .kio_values import kio_values

kio_index = pytest.importorskip("kio.index")
from kio.serial import entity_writer  # noqa: E402


def _classes() -> list[tuple[int, int]]:
    return [(k, v) for k in sorted(kio_index.api_key_map) for v in range(40)
            if request_schema(k, v) is not None]


CLASSES = _classes()
KEYS = sorted({k for k, _ in CLASSES})


def _frame(cls: type, values: object, client_id: str | None) -> bytes:
    out = io.BytesIO()
    header = cls.__header_schema__
    entity_writer(header)(out, build(header, {
        "request_api_key": cls.__api_key__, "request_api_version": cls.__version__,
        "correlation_id": 7, "client_id": client_id}))
    entity_writer(cls)(out, build(cls, values))
    return out.getvalue()


def _generated_accepts(cls: type, frame: bytes) -> bool:
    end = len(frame)
    try:
        pos = bounds._checker(cls.__header_schema__, True)(frame, 0, end)
        bounds._checker(cls)(frame, pos, end)
    except (bounds._Refused, IndexError, struct.error):
        return False
    return True


def _walker_accepts(cls: type, frame: bytes) -> bool:
    try:
        walk_frame(cls, frame)
    except ProtocolError:
        return False
    return True


_LIES = [0x00, 0x01, 0x02, 0x7F, 0x80, 0xFE, 0xFF]


@pytest.mark.parametrize("key", KEYS)
@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_generated_check_agrees_with_the_walker(key: int, data: st.DataObject) -> None:
    version = data.draw(st.sampled_from([v for k, v in CLASSES if k == key]), "version")
    cls = request_schema(key, version)
    try:
        frame = _frame(cls, data.draw(kio_values(cls), "values"),
                       data.draw(st.one_of(st.none(), st.text(max_size=5)), "client_id"))
    except Exception:  # noqa: BLE001 - values kio cannot encode: not a frame to check
        return
    assert _generated_accepts(cls, frame) and _walker_accepts(cls, frame)  # kio's own bytes
    frames = [frame]
    buf = bytearray(frame)
    for _ in range(data.draw(st.integers(1, 4), "edits")):
        if not buf:
            break
        at = data.draw(st.integers(0, len(buf) - 1), "at")
        edit = data.draw(st.sampled_from(["lie", "lie4", "cut", "insert"]), "edit")
        if edit == "lie":
            buf[at] = data.draw(st.sampled_from(_LIES) | st.integers(0, 255), "byte")
        elif edit == "lie4":
            buf[at:at + 4] = data.draw(st.sampled_from(
                [b"\x7f\xff\xff\xff", b"\xff\xff\xff\xfe", b"\x00\x00\x10\x00",
                 b"\x80\x80\x80\x80"]), "int32")
        elif edit == "cut":
            del buf[at:]
        else:
            buf[at:at] = data.draw(st.binary(min_size=1, max_size=3), "inserted")
        frames.append(bytes(buf))
    for f in frames:
        assert _generated_accepts(cls, f) == _walker_accepts(cls, f), f.hex()


def test_check_frame_raises_the_walkers_error() -> None:
    cls = request_schema(3, 12)  # Metadata v12: a compact topics array of 2**32 - 2 elements
    frame = bytes.fromhex("0003000c00000001ffff00") + b"\xff\xff\xff\xff\x0f"
    with pytest.raises(ProtocolError) as generated:
        check_frame(cls, frame)
    with pytest.raises(ProtocolError) as walked:
        walk_frame(cls, frame)
    assert str(generated.value) == str(walked.value)
    assert "array of 4294967294 elements in 0 bytes" in str(generated.value)
    assert not _generated_accepts(cls, frame)


def test_every_request_class_is_covered() -> None:
    assert len(KEYS) >= 80 and len(CLASSES) >= 250


def test_module_doctests() -> None:
    import doctest

    assert doctest.testmod(bounds, optionflags=doctest.ELLIPSIS).failed == 0
