"""KIP-1101's group metadata hash against vectors computed by hash4j, the Java library Kafka
uses (``tests/golden/kip1101_metadata_hash.json``: its provenance names the hash4j commit and
the Kafka 4.2 methods its harness reproduces)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkalog.checkpoint import Uuid
from kafkalog.groups.metadata_hash import group_hash, metadata_hash, topic_hash

GOLDEN = json.loads((Path(__file__).parent.parent / "golden" /
                     "kip1101_metadata_hash.json").read_text())


@pytest.mark.parametrize("case", GOLDEN["topics"], ids=lambda c: c["name"][:20])
def test_topic_hash_is_hash4js(case):
    tid = bytes.fromhex(case["topic_id"])
    assert topic_hash(tid, case["name"], case["partitions"]) == case["hash"]
    # the same id in every form the project passes around
    assert topic_hash(str(Uuid.from_bytes(tid)), case["name"], case["partitions"]) == case["hash"]


@pytest.mark.parametrize("case", GOLDEN["groups"], ids=str)
def test_group_hash_is_hash4js(case):
    assert group_hash(case["topic_hashes"]) == case["hash"]


def test_metadata_hash_leaves_out_topics_that_do_not_exist():
    foo = GOLDEN["topics"][0]
    topics = {"foo": (bytes.fromhex(foo["topic_id"]), foo["partitions"])}
    assert metadata_hash(["foo", "missing"], topics) == group_hash({"foo": foo["hash"]})
    assert metadata_hash(["missing"], topics) == 0 == metadata_hash([], topics)


@given(st.lists(st.lists(st.sampled_from(["a", "b", "rack-1", "räck"]), max_size=3),
                min_size=1, max_size=6), st.randoms())
def test_rack_order_does_not_matter_but_partitions_do(racks, rnd):
    tid = bytes(range(16))
    shuffled = [rnd.sample(r, len(r)) for r in racks]
    assert topic_hash(tid, "t", racks) == topic_hash(tid, "t", shuffled)
    assert topic_hash(tid, "t", racks) != topic_hash(tid, "t", racks + [[]])
