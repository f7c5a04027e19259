"""The generated response writers against the reference path (``build`` + kio's writers).

For every response class kio has (every API key, every version), random handler values: both
paths give the same bytes, or both raise. kio is the implementation we did not write; the
generated writers must never disagree with it.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkalog.server.protocol import build, encode_response, response_class
from kafkalog.server.response_writers import encode_response_values, response_writer

from .kio_values import kio_values

kio_index = pytest.importorskip("kio.index")


def _classes() -> list[tuple[int, int]]:
    out = []
    for key in sorted(kio_index.api_key_map):
        for version in range(40):
            try:
                response_class(key, version)
            except kio_index.KioIndexError:
                continue
            out.append((key, version))
    return out


CLASSES = _classes()
KEYS = sorted({k for k, _ in CLASSES})

def _both(key: int, version: int, values: object) -> None:
    cls = response_class(key, version)
    try:
        expected = encode_response(key, version, 7, build(cls, values))
    except Exception:  # noqa: BLE001 - both paths must refuse the same values
        try:
            encode_response_values(key, version, 7, values)
        except Exception:  # noqa: BLE001
            return
        raise AssertionError("build + kio refused these values, the generated writer did "
                             "not") from None
    assert encode_response_values(key, version, 7, values) == expected


@pytest.mark.parametrize("key", KEYS)
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_generated_writer_bytes_equal_kio(key: int, data: st.DataObject) -> None:
    version = data.draw(st.sampled_from([v for k, v in CLASSES if k == key]), "version")
    values = data.draw(kio_values(response_class(key, version)), "values")
    _both(key, version, values)


def test_every_response_class_is_covered() -> None:
    # (a guard on the test above: kio's classes were found, old and flexible versions alike)
    assert len(KEYS) >= 80 and len(CLASSES) >= 250
    assert any(response_class(k, v).__flexible__ for k, v in CLASSES)
    assert any(not response_class(k, v).__flexible__ for k, v in CLASSES)


def test_a_missing_required_field_raises_as_build_does() -> None:
    cls = response_class(0, 9)  # Produce v9
    with pytest.raises(TypeError, match="field 'responses' missing"):
        build(cls, {"throttle_time": 0})
    with pytest.raises(TypeError, match="field 'responses' missing"):
        encode_response_values(0, 9, 1, {"throttle_time": 0})


def test_tagged_fields_are_written_only_when_not_default() -> None:
    # Fetch v12 partitions: diverging_epoch, current_leader, snapshot_id are tagged
    part = {"partition_index": 3, "error_code": 0, "high_watermark": 10,
            "last_stable_offset": 10, "log_start_offset": 0, "aborted_transactions": None,
            "records": b"r"}
    body = {"throttle_time": 0, "error_code": 0, "session_id": 0,
            "responses": [{"topic": "t", "partitions": [part]}]}
    plain = encode_response_values(1, 12, 1, body)
    same = encode_response_values(1, 12, 1, {**body, "responses": [
        {"topic": "t", "partitions": [{**part, "diverging_epoch": {"epoch": -1,
                                                                     "end_offset": -1}}]}]})
    assert same == plain  # the default struct is not written
    tagged = {**body, "responses": [{"topic": "t", "partitions": [
        {**part, "diverging_epoch": {"epoch": 4, "end_offset": 9}}]}]}
    out = encode_response_values(1, 12, 1, tagged)
    # tag, size, then the struct: int32 + int64 + its own (empty) tagged fields
    assert out != plain and len(out) == len(plain) + 2 + 13
    assert out == encode_response(1, 12, 1, build(response_class(1, 12), tagged))


def test_the_writer_is_generated_once_per_class() -> None:
    cls = response_class(3, 12)
    assert response_writer(cls) is response_writer(cls)


def test_lengths_of_128_and_more_use_two_byte_varints() -> None:
    body = {"throttle_time": 0, "error_code": 0, "session_id": 0,
            "responses": [{"topic": "x" * 200, "partitions": []}]}
    out = encode_response_values(1, 12, 1, body)
    assert out == encode_response(1, 12, 1, build(response_class(1, 12), body))
    assert bytes([(201 & 0x7F) | 0x80, 201 >> 7]) + b"x" * 200 in out


def test_module_doctests() -> None:
    import doctest

    from kafkalog.server import protocol, response_writers

    assert doctest.testmod(response_writers).failed == 0
    assert doctest.testmod(protocol).failed == 0
