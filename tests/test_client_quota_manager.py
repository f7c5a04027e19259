"""kafkalog.quotas.client_quota_manager and sampled_rate against Kafka's own tests.

Cases ported from Kafka 4.1.1's ``core/src/test/scala/unit/kafka/server/ClientQuotaManagerTest
.scala`` (testQuotaViolation's exact throttle time, testQuotaConfigPrecedence's eight levels and
shared rates, the set/remove tests, testGetMaxValueInQuotaWindowWithNonDefaultQuotaWindow) and
``clients/src/test/java/org/apache/kafka/common/metrics/stats/RateTest.java``-style window
arithmetic. Kafka's mock time does not move unless the test sleeps: ``now`` here is the same.
"""

from __future__ import annotations

import doctest

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kafkalog.quotas.client_quota_manager as cqm
import kafkalog.quotas.sampled_rate as sr
from kafkalog.quotas import ABSENT, ClientQuotaManager, SampledRate, throttle_time_ms

SAMPLES = 11  # ClientQuotaManagerConfig's default quota.window.num


def test_doctests() -> None:
    for m in (cqm, sr):
        assert doctest.testmod(m).failed == 0


def _check(m: ClientQuotaManager, user: str, client: str, bound: float | None, value: int,
           throttled: bool, now: int = 0) -> None:
    """ClientQuotaManagerTest.checkQuota: the bound, the window's max value, then a record of
    value * samples that is or is not throttled."""
    assert m.quota_limit(user, client) == bound
    want_max = float("inf") if bound is None else 1 * (SAMPLES - 1) * bound
    assert m.max_value_in_quota_window(user, client) == want_max
    ms = m.record_and_get_throttle_time_ms(user, client, value * SAMPLES, now)
    assert (ms > 0) == throttled, ms


def test_quota_violation_throttles_for_kafkas_exact_time() -> None:
    m = ClientQuotaManager("Produce")
    m.update_quota(ABSENT, None, 500.0)  # /config/clients/<default>
    now = 0
    for _ in range(10):  # under the quota: never throttled
        assert m.record_and_get_throttle_time_ms("ANONYMOUS", "unknown", 400, now) == 0
        now += 1000
    now += 500
    # 400*10 + 2000 + 300 = 6300 / 10.5 s = 600 B/s: (600 - 500) / 500 * 10.5 s = 2100 ms
    assert m.record_and_get_throttle_time_ms("ANONYMOUS", "unknown", 2300, now) == 2100
    now += 2100
    for _ in range(10):
        m.record_and_get_throttle_time_ms("ANONYMOUS", "unknown", 400, now)
        now += 1000
    # the bursty sample has rolled over
    assert m.record_and_get_throttle_time_ms("ANONYMOUS", "unknown", 0, now) == 0


def test_quota_config_precedence() -> None:
    m = ClientQuotaManager("Produce")
    m.update_quota(None, ABSENT, 1000)
    m.update_quota(ABSENT, None, 2000)
    m.update_quota(None, None, 3000)
    m.update_quota("userA", ABSENT, 4000)
    m.update_quota("userA", "client1", 5000)
    m.update_quota("userB", ABSENT, 6000)
    m.update_quota("userB", "client1", 7000)
    m.update_quota("userB", None, 8000)
    m.update_quota("userC", ABSENT, 10000)
    m.update_quota(ABSENT, "client1", 9000)

    _check(m, "userA", "client1", 5000, 4500, False)  # <user, client> over <user>
    _check(m, "userA", "client2", 4000, 4500, True)   # <user> over <client> and defaults
    _check(m, "userA", "client3", 4000, 0, True)      # <user> shared across the user's clients
    _check(m, "userA", "client1", 5000, 0, False)     # <user, client> is its own
    _check(m, "userB", "client1", 7000, 8000, True)
    _check(m, "userB", "client2", 8000, 7000, False)  # default per-client quota of the user
    _check(m, "userB", "client3", 8000, 7000, False)
    _check(m, "userD", "client1", 3000, 3500, True)   # default <user, client>
    _check(m, "userD", "client2", 3000, 2500, False)
    _check(m, "userE", "client1", 3000, 2500, False)

    m.update_quota(None, None, None)  # back to the <user> default
    _check(m, "userD", "client1", 1000, 0, False)     # other tags: a new rate
    _check(m, "userE", "client4", 1000, 1500, True)
    _check(m, "userF", "client4", 1000, 800, False)   # the default <user> quota is shared
    _check(m, "userF", "client5", 1000, 800, True)

    m.update_quota(None, ABSENT, None)  # back to the <client-id> default
    _check(m, "userF", "client4", 2000, 0, False)     # shared by the client id of all users
    _check(m, "userF", "client5", 2000, 0, False)
    _check(m, "userF", "client5", 2000, 2500, True)
    _check(m, "userG", "client5", 2000, 0, True)

    m.update_quota("userA", ABSENT, 8000)
    m.update_quota("userA", "client1", 10000)
    _check(m, "userA", "client2", 8000, 0, False)
    _check(m, "userA", "client2", 8000, 4500, True)   # the sum of new and earlier values
    _check(m, "userA", "client1", 10000, 0, False)
    _check(m, "userA", "client1", 10000, 6000, True)
    m.update_quota("userA", "client1", None)
    _check(m, "userA", "client6", 8000, 0, True)      # the shared user quota
    m.update_quota("userA", "client6", 11000)
    _check(m, "userA", "client6", 11000, 8500, False)
    m.update_quota("userA", None, 12000)
    m.update_quota("userA", "client6", None)
    _check(m, "userA", "client6", 12000, 4000, True)


@pytest.mark.parametrize("user, client", [(None, ABSENT), ("userA", ABSENT),
                                          ("userA", "client1")])
def test_set_and_remove_quota(user: object, client: object) -> None:
    """testSetAndRemoveDefaultUserQuota / UserQuota / UserClientQuota."""
    m = ClientQuotaManager("Produce")
    if user is None:
        _check(m, "userA", "client1", None, 1000, False)
    m.update_quota(user, client, 10)
    _check(m, "userA", "client1", 10, 1000, True)
    m.update_quota(user, client, None)
    _check(m, "userA", "client1", None, 1000, False, now=100_000)


def test_max_value_in_quota_window_with_other_windows() -> None:
    m = ClientQuotaManager("Fetch", samples=4)
    assert m.max_value_in_quota_window("userA", "client1") == float("inf")
    m.update_quota(None, ABSENT, 10)
    assert m.max_value_in_quota_window("userA", "client1") == 30


def test_unrecord_takes_a_value_back() -> None:
    m = ClientQuotaManager("Fetch")
    m.update_quota(ABSENT, "c", 100)
    assert m.record_and_get_throttle_time_ms("u", "c", 5000, 0) > 0
    m.unrecord("u", "c", 5000, 0)
    assert m.record_and_get_throttle_time_ms("u", "c", 0, 0) == 0


def test_an_entity_needs_a_part() -> None:
    with pytest.raises(ValueError, match="user or a client id"):
        ClientQuotaManager("Produce").update_quota(ABSENT, ABSENT, 1.0)


# -- SampledRate: the plain arithmetic of Rate.windowSize / measure --------------------------


def _reference_rate(events: list[tuple[int, float]], now: int, samples: int,
                    window: int) -> float:
    """Rate.measure for events that all fall in the kept samples: the sum over the elapsed
    time since the first event's sample, at least ``samples - 1`` windows."""
    total = sum(v for _, v in events)
    elapsed = now - events[0][0]
    full = elapsed // window
    if full < samples - 1:
        elapsed += (samples - 1 - full) * window
    return total / (max(elapsed, 1) / 1000)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 900), st.integers(0, 10_000)), min_size=1,
                max_size=30), st.integers(2, 11))
def test_rate_within_one_window_span_matches_the_formula(steps: list, samples: int) -> None:
    # events closer together than the window: one sample, nothing purged
    r = SampledRate(samples, 1000)
    t = 0
    events = []
    for dt, v in steps:
        t = min(t + dt, 999)
        r.record(v, t)
        events.append((t, float(v)))
    assert r.measure(t) == pytest.approx(_reference_rate(events, t, samples, 1000))


def test_samples_expire_after_the_whole_window() -> None:
    r = SampledRate(3, 1000)
    r.record(3000, 0)
    assert r.measure(0) == 1500.0        # 3000 over the 2-window minimum
    assert r.measure(3000) == 0.0        # last event 3 windows ago: purged
    assert throttle_time_ms(r, 1.0, 3000) == 0


def test_throttle_time_rounds_half_up_and_caps() -> None:
    r = SampledRate(2, 1000)
    r.record(1001, 0)                    # 1001 B/s over 1 s
    assert throttle_time_ms(r, 1000.0, 0) == 1  # (1001-1000)/1000*1000 = 1.0
    r.record(0.5, 0)                     # 1001.5: 1.5 ms -> 2 (Math.round)
    assert throttle_time_ms(r, 1000.0, 0) == 2
    r.record(10_000, 0)
    assert throttle_time_ms(r, 1000.0, 0, max_ms=1000) == 1000


def test_bad_windows_are_refused() -> None:
    with pytest.raises(ValueError):
        SampledRate(0, 1000)
