"""kafkalog's client assignors against Kafka's own Java classes (3.9), case by case, exactly.

Each case is run through ``kafkalog.groups.assign`` and through the real ``RangeAssignor`` /
``RoundRobinAssignor`` / ``StickyAssignor`` / ``CooperativeStickyAssignor`` compiled from the
apache/kafka mirror (``tests/groups/kafka_java.py``); the results must be equal member by member,
including the order of each member's partition list. Cases are seeded random groups: homogeneous
and heterogeneous subscriptions, members leaving and joining, previous assignments (owned
partitions, with generations, some claimed twice), static members.
"""

from __future__ import annotations

import random

import pytest

from kafkalog.groups import assign

from . import kafka_java


@pytest.fixture(scope="module")
def kafka_classes(tmp_path_factory: pytest.TempPathFactory):
    return kafka_java.build(tmp_path_factory.mktemp("kafka-assignors"))


def _member_name(rng: random.Random, i: int) -> str:
    style = rng.randrange(4)
    if style == 0:
        return f"consumer-{i}"
    if style == 1:
        return f"consumer-app-{i}-{rng.getrandbits(48):012x}"
    if style == 2:
        return f"m{rng.randrange(1000)}x{i}"
    return f"C{i}"


def _random_case(rng: random.Random, strategy: str) -> tuple:
    n_topics = rng.randint(1, 4)
    topics = [f"t{i}" if rng.random() < 0.7 else f"topic-{i}-{rng.randrange(99)}"
              for i in range(n_topics)]
    counts = {t: rng.randint(0, 9) for t in topics}
    n_members = rng.randint(1, 9)
    members = list(dict.fromkeys(_member_name(rng, i) for i in range(n_members)))
    homogeneous = rng.random() < 0.5
    subs = {}
    for m in members:
        if homogeneous:
            subs[m] = list(topics)
        else:
            k = rng.randint(1, len(topics))
            subs[m] = rng.sample(topics, k)
    owned: dict[str, list[tuple[str, int]]] = {}
    gens: dict[str, int | None] = {}
    instances: dict[str, str | None] = {}
    if strategy in ("sticky", "cooperative-sticky") and rng.random() < 0.8:
        # a previous generation: assign among a membership that differs a little
        prev_members = [m for m in members if rng.random() < 0.8] or members[:1]
        prev = assign("range" if rng.random() < 0.5 else "roundrobin",
                      {m: subs[m] for m in prev_members}, counts)
        base_gen = rng.randint(1, 5)
        for m, tps in prev.items():
            owned[m] = list(tps)
            gens[m] = base_gen if rng.random() < 0.8 else base_gen - rng.randint(1, 2)
        if rng.random() < 0.3 and len(prev_members) > 1:
            # a partition claimed by two members (stale generation or a same-generation bug)
            a, b = rng.sample(prev_members, 2)
            if owned[a]:
                owned[b].append(rng.choice(owned[a]))
        for m in members:
            gens.setdefault(m, None if strategy == "cooperative-sticky" and rng.random() < 0.5
                            else -1)
            if gens[m] == -1 and strategy == "sticky":
                gens[m] = None
    if strategy in ("range", "roundrobin"):
        for m in members:
            if rng.random() < 0.3:
                instances[m] = f"instance-{rng.randrange(100)}-{m}"
        named = [v for v in instances.values() if v]
        if len(set(named)) != len(named):
            instances = {}
    return strategy, counts, subs, owned, gens, instances


def _ours(case: tuple) -> dict:
    strategy, counts, subs, owned, gens, instances = case
    kwargs = {}
    if owned:
        kwargs["owned"] = owned
        kwargs["generations"] = gens
    if instances:
        kwargs["group_instance_ids"] = instances
    return assign(strategy, subs, counts, **kwargs)


@pytest.mark.parametrize("strategy", ["range", "roundrobin", "sticky", "cooperative-sticky"])
def test_equal_to_kafka_java(kafka_classes, strategy: str) -> None:
    rng = random.Random(f"java-{strategy}")
    cases = [_random_case(rng, strategy) for _ in range(400)]
    expected = kafka_java.run(kafka_classes, cases)
    mismatches = []
    for case, want in zip(cases, expected):
        got = _ours(case)
        if isinstance(want, str):
            mismatches.append((case, "java error", want))
        elif got != want:
            mismatches.append((case, got, want))
    assert not mismatches, f"{len(mismatches)} of {len(cases)} differ; first: {mismatches[0]}"


def test_worked_examples_in_kafka_java(kafka_classes) -> None:
    """The issue's worked examples, as Kafka's classes compute them."""
    three = {"c1": ["t"], "c2": ["t"], "c3": ["t"]}
    cases = [
        ("range", {"t": 6}, three, {}, {}, {}),
        ("range", {"t": 6}, {"c1": ["t"], "c2": ["t"]}, {}, {}, {}),
        ("sticky", {"t": 6}, {"c1": ["t"], "c2": ["t"]},
         {"c1": [("t", 0), ("t", 1)], "c2": [("t", 2), ("t", 3)]}, {"c1": 1, "c2": 1}, {}),
        ("roundrobin", {"t": 6}, three, {}, {}, {}),
        ("range", {"t0": 3, "t1": 3}, {"C0": ["t0", "t1"], "C1": ["t0", "t1"]}, {}, {}, {}),
        ("roundrobin", {"t0": 3, "t1": 3}, {"C0": ["t0", "t1"], "C1": ["t0", "t1"]}, {}, {}, {}),
        ("range", {"t": 7}, three, {}, {}, {}),
    ]
    for case, want in zip(cases, kafka_java.run(kafka_classes, cases)):
        assert _ours(case) == want, case


@pytest.fixture(scope="module")
def kafka_server_classes(tmp_path_factory: pytest.TempPathFactory):
    return kafka_java.build_server(tmp_path_factory.mktemp("kafka-server-assignors"))


def _random_server_case(rng: random.Random, strategy: str) -> tuple:
    from kafkalog.checkpoint import Uuid

    _, counts, subs, _, _, _ = _random_case(rng, "range")
    topic_ids = {t: str(Uuid(rng.getrandbits(64) - (1 << 63), rng.getrandbits(64) - (1 << 63)))
                 for t in counts}
    owned: dict[str, list[tuple[str, int]]] = {}
    if rng.random() < 0.7:
        # the current assignment: a previous target among a slightly different membership
        prev_members = [m for m in subs if rng.random() < 0.8] or list(subs)[:1]
        prev_subs = {m: (subs[m] if rng.random() < 0.8 else rng.sample(list(counts), 1))
                     for m in prev_members}
        owned = assign("uniform", prev_subs, counts, topic_ids=topic_ids)
    instances = {m: f"i-{m}" for m in subs if rng.random() < 0.3}
    return strategy, counts, subs, owned, instances, topic_ids


@pytest.mark.parametrize("strategy", ["uniform", "server-range"])
def test_server_assignors_equal_to_kafka_java(kafka_server_classes, strategy: str) -> None:
    rng = random.Random(f"java-server-{strategy}")
    cases = [_random_server_case(rng, strategy) for _ in range(400)]
    expected = kafka_java.run_server(kafka_server_classes, cases)
    mismatches = []
    for case, want in zip(cases, expected):
        s, counts, subs, owned, instances, topic_ids = case
        got = assign(s, subs, counts, owned=owned, group_instance_ids=instances,
                     topic_ids=topic_ids)
        if isinstance(want, str) or got != want:
            mismatches.append((case, got, want))
    assert not mismatches, f"{len(mismatches)} of {len(cases)} differ; first: {mismatches[0]}"
