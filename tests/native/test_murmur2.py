"""native.murmur2 against tests/reference/murmur2.py and kafka-python's murmur2."""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from kafkalog.native.murmur2 import murmur2

from tests.reference.murmur2 import murmur2 as reference

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka.partitioner.default import murmur2 as kafka_python_murmur2


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=64))
def test_kernel_matches_reference_and_kafka_python(data: bytes) -> None:
    got = murmur2(np.frombuffer(data, np.uint8))
    assert got == reference(data)
    # kafka-python returns the same 32 bits read unsigned
    assert got & 0xFFFFFFFF == kafka_python_murmur2(data)


def test_kafkas_own_vectors() -> None:
    # clients/src/test/java/org/apache/kafka/common/utils/UtilsTest.java testMurmur2
    cases = {b"21": -973932308, b"foobar": -790332482, b"a-little-bit-long-string": -985981536,
             b"a-little-bit-longer-string": -1486304829,
             b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
             bytes([ord("a"), ord("b"), ord("c")]): 479470107}
    for data, want in cases.items():
        assert murmur2(np.frombuffer(data, np.uint8)) == want == reference(data)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=40), max_size=30), st.integers(1, 1000))
def test_key_partitions_kernel_matches_reference(keys: list[bytes], partitions: int) -> None:
    from kafkalog.native.murmur2 import key_partitions

    offsets = np.zeros(len(keys) + 1, np.int64)
    np.cumsum([len(k) for k in keys], out=offsets[1:])
    got = key_partitions(np.frombuffer(b"".join(keys), np.uint8), offsets, partitions)
    assert got.dtype == np.int32
    # BuiltInPartitioner.partitionForKey: toPositive(murmur2(key)) % numPartitions
    assert got.tolist() == [(reference(k) & 0x7FFFFFFF) % partitions for k in keys]
