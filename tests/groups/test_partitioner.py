"""``offsets_partition``: Kafka's ``Utils.abs(groupId.hashCode()) % partitions``."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkalog import LogDir
from kafkalog.errors import ConfigError
from kafkalog.groups import offsets_partition
from kafkalog.groups.java_order import string_hash


@pytest.mark.parametrize("group, partition", [
    ("DEVSmileCDR", 6),           # the LDI-POC fixture's group, in __consumer_offsets-6
    ("console-consumer-1", 24),
    ("组", 2),                     # one BMP character: one UTF-16 unit
    ("g😀", 32),                   # outside the BMP: a surrogate pair, two units
    ("my-first-application", 18),  # VolodymyrZee fixture: __consumer_offsets-18
    ("console-consumer-23934", 2),  # KAIPASUBHASH fixture: __consumer_offsets-2
])
def test_known_partitions(group: str, partition: int) -> None:
    assert offsets_partition(group) == partition


@pytest.mark.parametrize("group", ["polygenelubricants", "GydZG_", "DESIGNING WORKHOUSES"])
def test_integer_min_value_hash_maps_to_zero(group: str) -> None:
    # String.hashCode == Integer.MIN_VALUE; Math.abs would keep it negative, Utils.abs gives 0
    assert string_hash(group) == -(1 << 31)
    assert offsets_partition(group) == 0
    assert offsets_partition(group, 7) == 0


def test_surrogate_pairs_hash_as_two_units() -> None:
    assert string_hash("g😀") == 31 * (31 * ord("g") + 0xD83D) + 0xDE00
    # a code-point hash (ord 0x1F600) would give another partition
    assert offsets_partition("g😀") != (31 * ord("g") + 0x1F600) % 50


@given(st.text(max_size=40), st.integers(1, 500))
def test_in_range(group: str, n: int) -> None:
    assert 0 <= offsets_partition(group, n) < n


@pytest.mark.parametrize("n", [0, -1, 1.5, True])
def test_bad_partition_count(n: object) -> None:
    with pytest.raises(ValueError, match="offsets.topic.num.partitions"):
        offsets_partition("g", n)  # type: ignore[arg-type]


def test_log_dir_setting(tmp_path) -> None:
    with LogDir.open(tmp_path / "a") as logs:
        assert logs.offsets_topic_num_partitions == 50
    with LogDir.open(tmp_path / "b", {"offsets.topic.num.partitions": "12"}) as logs:
        assert logs.offsets_topic_num_partitions == 12
        assert logs.group_properties == {"offsets.topic.num.partitions": "12"}
    for bad in ("0", "x", "-3"):
        with pytest.raises(ConfigError, match="offsets.topic.num.partitions"):
            LogDir.open(tmp_path / "c", {"offsets.topic.num.partitions": bad})
