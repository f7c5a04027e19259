"""ClientQuotaStore (kafkalog.quotas.client_quota_store) against Kafka 4.1.1's rules:
ClientQuotaControlManager (metadata/.../controller/ClientQuotaControlManager.java and its test,
cases named in the comments), ClientQuotasImage.describe's filters, and the file shared with
another process (`kafkalog configs` and `kafkalog serve`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kafkalog.quotas.client_quota_store import (
    CLIENT_QUOTAS_FILE,
    MATCH_DEFAULT,
    MATCH_EXACT,
    MATCH_SPECIFIED,
    ClientQuotaStore,
    QuotaRequestError,
    java_hash_map_order,
    java_string_hash,
)

INVALID_REQUEST = 42


def _error(store: ClientQuotaStore, entity: dict, ops: list) -> tuple[int, str | None]:
    [(_, code, message)] = store.alter([(entity, ops)])
    return code, message


# -- ClientQuotaControlManagerTest ---------------------------------------------------------------

@pytest.mark.parametrize("entity, message", [
    ({}, "Invalid empty client quota entity"),
    ({"user": ""}, "Empty user not supported"),
    ({"client-id": ""}, "Empty client-id not supported"),
    ({"foo": "bar"}, "Unhandled client quota entity type: foo"),
    ({"user": "user-1", "foo": "bar"}, "Unhandled client quota entity type: foo"),
    ({"user": "user-1", "ip": "1.2.3.4"}, "Invalid quota entity combination, IP entity should"
                                          "not be combined with User or ClientId"),
    ({"client-id": "c", "ip": "1.2.3.4"}, "Invalid quota entity combination, IP entity should"
                                          "not be combined with User or ClientId"),
    ({"ip": "example.invalid"}, "example.invalid is not a valid IP or resolvable host."),
])
def test_invalid_entities(tmp_path: Path, entity: dict, message: str) -> None:
    # testInvalidEntityTypes, testConfigKeysForEmptyEntity, ...WithIpAndUser,
    # testIsValidIpEntityWithUnresolvableHostname
    store = ClientQuotaStore(tmp_path)
    assert _error(store, entity, [("producer_byte_rate", 10000.0, False)]) == (
        INVALID_REQUEST, message)
    assert store.entities() == [] and not (tmp_path / CLIENT_QUOTAS_FILE).exists()


@pytest.mark.parametrize("entity, key, value, message", [
    ({"user": "u"}, "not.a.quota.key", 1.0, "Invalid configuration key not.a.quota.key"),
    ({"user": "u"}, "connection_creation_rate", 1.0,
     "Invalid configuration key connection_creation_rate"),
    ({"ip": "1.2.3.4"}, "producer_byte_rate", 1.0, "Invalid configuration key producer_byte_rate"),
    ({"user": "u"}, "request_percentage", 0.0, "Quota request_percentage must be greater than 0"),
    ({"user": "u"}, "producer_byte_rate", -0.0, "Quota producer_byte_rate must be greater than 0"),
    ({"user": "u"}, "producer_byte_rate", 1.5, "producer_byte_rate cannot be a fractional value."),
    ({"user": "u"}, "consumer_byte_rate", 1e19,
     "Proposed value for consumer_byte_rate is too large for a LONG."),
    ({"ip": None}, "connection_creation_rate", 2.0 ** 31,
     "Proposed value for connection_creation_rate is too large for an INT."),
])
def test_invalid_values(tmp_path: Path, entity: dict, key: str, value: float,
                        message: str) -> None:
    store = ClientQuotaStore(tmp_path)
    assert _error(store, entity, [(key, value, False)]) == (INVALID_REQUEST, message)


def test_valid_values(tmp_path: Path) -> None:
    store = ClientQuotaStore(tmp_path)
    ops = [("request_percentage", 0.5, False), ("controller_mutation_rate", 1e-9, False),
           ("producer_byte_rate", 2.0 ** 62, False), ("consumer_byte_rate", 1.0000000001, False)]
    assert _error(store, {"user": None, "client-id": "c"}, ops) == (0, None)
    assert _error(store, {"ip": "127.0.0.1"}, [("connection_creation_rate", 2.0 ** 31 - 1,
                                                 False)]) == (0, None)


def test_invalid_quota_keys_change_nothing(tmp_path: Path) -> None:
    # testInvalidQuotaKeys: invalid + valid keys, either order
    store = ClientQuotaStore(tmp_path)
    for ops in ([("not.a.quota.key", 0.0, False), ("request_percentage", 99.9, False)],
                [("request_percentage", 99.9, False), ("not.a.quota.key", 0.0, False)]):
        assert _error(store, {"user": "user-1"}, ops)[0] == INVALID_REQUEST
    assert store.entities() == []


def test_the_first_bad_value_in_the_controllers_hash_map_order(tmp_path: Path) -> None:
    # the controller checks a HashMap(2) of the ops: consumer_byte_rate's bin (0) comes before
    # producer_byte_rate's (3), whatever the request's order
    store = ClientQuotaStore(tmp_path)
    assert _error(store, {"user": "u"}, [("producer_byte_rate", -1.0, False),
                                         ("consumer_byte_rate", 1.5, False)]) == (
        INVALID_REQUEST, "consumer_byte_rate cannot be a fractional value.")
    # the same bin: the request's order
    assert _error(store, {"user": "u"}, [("request_percentage", -1.0, False),
                                         ("producer_byte_rate", 1.5, False)]) == (
        INVALID_REQUEST, "Quota request_percentage must be greater than 0")


def test_java_hash_map_order() -> None:
    # checked against java.util.HashMap (jshell)
    keys = ["request_percentage", "producer_byte_rate", "consumer_byte_rate"]
    assert java_hash_map_order(keys, java_string_hash, 3) == [
        "consumer_byte_rate", "request_percentage", "producer_byte_rate"]
    assert java_hash_map_order(keys[:2], java_string_hash, 2) == keys[:2]
    assert java_hash_map_order(list("abcdefghijklmn"), java_string_hash, 14) == list(
        "abcdefghijklmn")


def test_alter_and_remove(tmp_path: Path) -> None:
    # testAlterAndRemove
    store = ClientQuotaStore(tmp_path)
    user = {"user": "user-1"}

    def alter(*ops: tuple) -> dict:
        assert _error(store, user, list(ops)) == (0, None)
        return dict(store.describe([("user", MATCH_EXACT, "user-1")], strict=True)[0][1]) \
            if store.entities() else {}

    assert alter(("producer_byte_rate", 10000.0, False)) == {"producer_byte_rate": 10000.0}
    assert alter(("producer_byte_rate", 10001.0, False), ("consumer_byte_rate", 20000.0, False)) \
        == {"producer_byte_rate": 10001.0, "consumer_byte_rate": 20000.0}
    assert alter(("producer_byte_rate", 0.0, True)) == {"consumer_byte_rate": 20000.0}
    assert alter(("request_percentage", 0.0, True)) == {"consumer_byte_rate": 20000.0}
    assert alter(("consumer_byte_rate", 0.0, True)) == {}
    assert store.entities() == []
    assert alter(("consumer_byte_rate", 0.0, True)) == {}
    assert alter(("request_percentage", 99.0, False), ("controller_mutation_rate", 0.0, True),
                 ("producer_byte_rate", 10002.0, False), ("consumer_byte_rate", 20001.0, False)) \
        == {"request_percentage": 99.0, "producer_byte_rate": 10002.0,
            "consumer_byte_rate": 20001.0}
    assert ClientQuotaStore(tmp_path).entities() == store.entities()


def test_duplicates(tmp_path: Path) -> None:
    store = ClientQuotaStore(tmp_path)
    user = {"user": "alice"}
    # a key twice: Kafka's "Duplicate quota key" is overwritten by its duplicate-entity error
    assert _error(store, user, [("producer_byte_rate", 1.0, False),
                                ("producer_byte_rate", 0.0, True)]) == (
        INVALID_REQUEST, "Ignoring duplicate entity ClientQuotaEntity(entries={user=alice})")
    assert store.entities() == []
    # an entity twice: the first alteration applies, the second is refused
    both = {"user": "alice", "client-id": "app"}
    assert store.alter([(both, [("producer_byte_rate", 1.0, False)]),
                        ({"client-id": "app", "user": "alice"},
                         [("consumer_byte_rate", 2.0, False)])]) == [
        (both, INVALID_REQUEST, "Ignoring duplicate entity ClientQuotaEntity(entries="
                                "{client-id=app, user=alice})")]
    assert store.entities() == [(both, {"producer_byte_rate": 1.0})]


def test_validate_only_and_per_entity_results(tmp_path: Path) -> None:
    store = ClientQuotaStore(tmp_path)
    results = store.alter([({"user": "a"}, [("producer_byte_rate", 1.0, False)]),
                           ({"user": "b"}, [("producer_byte_rate", 1.5, False)])],
                          validate_only=True)
    assert [code for _, code, _ in results] == [0, INVALID_REQUEST]
    assert store.entities() == [] and not (tmp_path / CLIENT_QUOTAS_FILE).exists()
    results = store.alter([({"user": "a"}, [("producer_byte_rate", 1.0, False)]),
                           ({"user": "b"}, [("producer_byte_rate", 1.5, False)])])
    assert ClientQuotaStore(tmp_path).entities() == [({"user": "a"},
                                                      {"producer_byte_rate": 1.0})]


# -- ClientQuotasImage.describe --------------------------------------------------------------------

@pytest.fixture
def image(tmp_path: Path) -> ClientQuotaStore:
    store = ClientQuotaStore(tmp_path)
    entities = [{"user": "u1"}, {"user": None}, {"user": "u1", "client-id": "c1"},
                {"user": None, "client-id": "c1"}, {"user": "u1", "client-id": None},
                {"client-id": "c1"}, {"client-id": None}, {"ip": "1.2.3.4"}, {"ip": None}]
    store.alter([(e, [("connection_creation_rate" if "ip" in e else "request_percentage",
                       float(i + 1), False)]) for i, e in enumerate(entities)])
    return store


def _found(store: ClientQuotaStore, components: list, strict: bool = False) -> list[dict]:
    return [e for e, _ in store.describe(components, strict)]


def test_describe_filters(image: ClientQuotaStore) -> None:
    assert _found(image, [("user", MATCH_EXACT, "u1")], strict=True) == [{"user": "u1"}]
    assert len(_found(image, [("user", MATCH_EXACT, "u1")])) == 3
    assert _found(image, [("user", MATCH_DEFAULT, None)], strict=True) == [{"user": None}]
    # a type without a name matches the default too
    assert _found(image, [("user", MATCH_SPECIFIED, None)], strict=True) == [
        {"user": None}, {"user": "u1"}]
    assert _found(image, [("user", MATCH_EXACT, "u1"), ("client-id", MATCH_SPECIFIED, None)],
                  strict=True) == [{"user": "u1", "client-id": None},
                                   {"user": "u1", "client-id": "c1"}]
    assert _found(image, [("client-id", MATCH_DEFAULT, None)]) == [
        {"user": "u1", "client-id": None}, {"client-id": None}]
    assert _found(image, [("ip", MATCH_SPECIFIED, None)], strict=True) == [
        {"ip": None}, {"ip": "1.2.3.4"}]
    assert len(_found(image, [])) == 9 and _found(image, [], strict=True) == []


@pytest.mark.parametrize("components, code, message", [
    ([("", MATCH_EXACT, "x")], 42, "Invalid empty entity type."),
    ([("user", MATCH_EXACT, "a"), ("user", MATCH_DEFAULT, None)], 42,
     "Entity type user cannot appear more than once in the filter."),
    ([("group", MATCH_EXACT, "a")], 35, "Unsupported entity type group"),
    ([("user", MATCH_EXACT, None)], 42,
     "Request specified MATCH_TYPE_EXACT, but set match string to null."),
    ([("user", MATCH_DEFAULT, "a")], 42,
     "Request specified MATCH_TYPE_DEFAULT, but also specified a match string."),
    ([("user", MATCH_SPECIFIED, "a")], 42,
     "Request specified MATCH_TYPE_SPECIFIED, but also specified a match string."),
    ([("user", 7, None)], 42, "Unknown match type 7"),
    ([("ip", MATCH_SPECIFIED, None), ("client-id", MATCH_DEFAULT, None)], 42,
     "Invalid entity filter component combination. IP filter component should not be used "
     "with user or clientId filter component."),
])
def test_describe_refusals(image: ClientQuotaStore, components: list, code: int,
                           message: str) -> None:
    with pytest.raises(QuotaRequestError) as e:
        image.describe(components)
    assert (e.value.code, str(e.value)) == (code, message)


# -- the file shared with another process ----------------------------------------------------------

def test_alter_does_not_write_over_another_process_change(tmp_path: Path) -> None:
    server = ClientQuotaStore(tmp_path)            # a long-lived store (kafkalog serve's)
    ClientQuotaStore(tmp_path).alter([({"user": "a"}, [("producer_byte_rate", 1.0, False)])])
    server.alter([({"user": "b"}, [("producer_byte_rate", 2.0, False)])])
    assert [e for e, _ in ClientQuotaStore(tmp_path).entities()] == [{"user": "a"},
                                                                     {"user": "b"}]


def test_reload_sees_a_same_size_same_mtime_rewrite(tmp_path: Path) -> None:
    writer = ClientQuotaStore(tmp_path)
    writer.alter([({"user": "a"}, [("producer_byte_rate", 1000.0, False)])])
    reader = ClientQuotaStore(tmp_path)
    path = tmp_path / CLIENT_QUOTAS_FILE
    st = path.stat()
    writer.alter([({"user": "a"}, [("producer_byte_rate", 2000.0, False)])])
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size
    assert reader.reload_if_changed()
    assert reader.entities() == [({"user": "a"}, {"producer_byte_rate": 2000.0})]
    assert not reader.reload_if_changed()


def test_doctests() -> None:
    import doctest

    import kafkalog.quotas.client_quota_store as store_module

    assert doctest.testmod(store_module).failed == 0
