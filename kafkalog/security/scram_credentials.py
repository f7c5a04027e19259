"""SCRAM credentials (RFC 5802/7677) as Kafka stores and checks them.

A credential is what Kafka's ``ScramFormatter.generateCredential`` derives from a password and
keeps instead of it: a random salt, the iteration count, ``StoredKey = H(HMAC(SaltedPassword,
"Client Key"))`` and ``ServerKey = HMAC(SaltedPassword, "Server Key")`` with ``SaltedPassword =
Hi(password, salt, iterations)`` (PBKDF2-HMAC). The password itself is never stored: a server
holding only these checks a client's proof and proves itself back.

Mechanisms are Kafka's (``ScramMechanism``): ``SCRAM-SHA-256`` (type 1) and ``SCRAM-SHA-512``
(type 2), each with 4096..16384 iterations (``minIterations``; the controller's
``MAX_ITERATIONS``).

:class:`ScramCredentialStore` keeps the credentials of one ``kafkalog serve`` tree in
``.kafkalog-scram-credentials.json`` at the log-dir root, one string per user and mechanism in
Kafka's own text form (``ScramCredentialUtils.credentialToString``, what ZooKeeper-mode Kafka
kept under ``/config/users/<user>``): ``salt=<b64>,stored_key=<b64>,server_key=<b64>,
iterations=<n>``. KRaft Kafka keeps the same four values in ``UserScramCredentialRecord``s of its
metadata log; kafkalog's server has no metadata log, hence the file (written atomically).
:meth:`ScramCredentialStore.alter` and :meth:`~ScramCredentialStore.describe` follow Kafka's
``ScramControlManager.alterCredentials`` and ``ScramImage.describe`` (the
AlterUserScramCredentials and DescribeUserScramCredentials APIs), errors and texts included.

>>> c = ScramCredential.from_password("SCRAM-SHA-256", "alice-secret", 4096, salt=b"0" * 16)
>>> ScramCredential.from_string(c.to_string()) == c
True
>>> c.to_string()[:30]
'salt=MDAwMDAwMDAwMDAwMDAwMA==,'
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..checkpoint import JsonStateFile
from ..errors import ConfigError

__all__ = ["ScramCredential", "ScramCredentialStore", "MECHANISMS", "MECHANISM_TYPES",
           "MIN_ITERATIONS", "MAX_ITERATIONS", "SCRAM_CREDENTIALS_FILE", "AlterResult",
           "DescribeResult", "parse_add_scram", "sasl_name", "username_from_sasl_name"]

SCRAM_CREDENTIALS_FILE = ".kafkalog-scram-credentials.json"
#: mechanism name -> hashlib name (Kafka's ScramMechanism)
MECHANISMS = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}
#: mechanism name -> the type byte of the admin APIs (clients.admin.ScramMechanism)
MECHANISM_TYPES = {"SCRAM-SHA-256": 1, "SCRAM-SHA-512": 2}
_TYPE_NAMES = {v: k for k, v in MECHANISM_TYPES.items()}
#: ScramMechanism.minIterations, ScramControlManager.MAX_ITERATIONS
MIN_ITERATIONS = 4096
MAX_ITERATIONS = 16384

# Kafka's error codes of the two APIs (Errors.java)
_NONE = 0
_UNSUPPORTED_SASL_MECHANISM = 33
_DUPLICATE_RESOURCE = 92
_RESOURCE_NOT_FOUND = 91
_UNACCEPTABLE_CREDENTIAL = 93


def sasl_name(username: str) -> str:
    """``ScramFormatter.saslName``: ``=`` and ``,`` escaped as ``=3D`` and ``=2C``."""
    return username.replace("=", "=3D").replace(",", "=2C")


def username_from_sasl_name(name: str) -> str:
    """``ScramFormatter.username``: the inverse of :func:`sasl_name`.

    Raises
    ------
    ValueError
        Any other ``=`` escape (Kafka: "Invalid username: ...").
    """
    u = name.replace("=2C", ",")
    if "=" in u.replace("=3D", ""):
        raise ValueError(f"Invalid username: {name}")
    return u.replace("=3D", "=")


@dataclass(frozen=True)
class ScramCredential:
    """One user's credential for one mechanism (Kafka's ``ScramCredential``)."""

    mechanism: str
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    @classmethod
    def from_salted_password(cls, mechanism: str, salt: bytes, salted_password: bytes,
                             iterations: int) -> ScramCredential:
        """What the controller derives from AlterUserScramCredentials' upsertion (the client
        sends the salted password, never the password: ``ScramControlManager.finishUpsertion``).
        """
        h = MECHANISMS[mechanism]
        client_key = hmac.new(salted_password, b"Client Key", h).digest()
        return cls(mechanism, bytes(salt), hashlib.new(h, client_key).digest(),
                   hmac.new(salted_password, b"Server Key", h).digest(), iterations)

    @classmethod
    def from_password(cls, mechanism: str, password: str, iterations: int = MIN_ITERATIONS,
                      salt: bytes | None = None) -> ScramCredential:
        """``ScramFormatter.generateCredential``: a random 32-byte salt unless given (Kafka's
        ``secureRandomBytes`` draws a random length; any length works)."""
        if mechanism not in MECHANISMS:
            raise ConfigError(f"unknown SCRAM mechanism {mechanism!r} (expected one of "
                              f"{', '.join(MECHANISMS)})")
        salt = os.urandom(32) if salt is None else salt
        return cls.from_salted_password(mechanism, salt, salted_password(
            mechanism, password, salt, iterations), iterations)

    def to_string(self) -> str:
        """``ScramCredentialUtils.credentialToString``."""
        b64 = base64.b64encode
        return (f"salt={b64(self.salt).decode()},stored_key={b64(self.stored_key).decode()},"
                f"server_key={b64(self.server_key).decode()},iterations={self.iterations}")

    @classmethod
    def from_string(cls, text: str, mechanism: str = "SCRAM-SHA-256") -> ScramCredential:
        """``ScramCredentialUtils.credentialFromString``.

        Raises
        ------
        ValueError
            Not the four ``name=value`` fields ("Credentials not valid: ...").
        """
        props: dict[str, str] = {}
        for token in text.split(","):
            name, sep, value = token.partition("=")
            if not sep or not name:
                raise ValueError(f"Credentials not valid: {text}")
            props[name] = value
        if sorted(props) != ["iterations", "salt", "server_key", "stored_key"]:
            raise ValueError(f"Credentials not valid: {text}")
        try:
            return cls(mechanism, base64.b64decode(props["salt"], validate=True),
                       base64.b64decode(props["stored_key"], validate=True),
                       base64.b64decode(props["server_key"], validate=True),
                       int(props["iterations"]))
        except ValueError as e:
            raise ValueError(f"Credentials not valid: {text} ({e})") from None


def salted_password(mechanism: str, password: str, salt: bytes, iterations: int) -> bytes:
    """``ScramFormatter.saltedPassword``: Hi(password as UTF-8, salt, i), i.e. PBKDF2-HMAC."""
    return hashlib.pbkdf2_hmac(MECHANISMS[mechanism], password.encode("utf-8"), salt,
                               iterations)


@dataclass(frozen=True)
class AlterResult:
    """One user's entry of the AlterUserScramCredentials response."""

    user: str
    error_code: int = _NONE
    error_message: str | None = None


@dataclass(frozen=True)
class DescribeResult:
    """One user's entry of the DescribeUserScramCredentials response."""

    user: str
    error_code: int = _NONE
    error_message: str | None = None
    #: (mechanism name, iterations), in mechanism-type order
    credentials: tuple[tuple[str, int], ...] = ()


class ScramCredentialStore:
    """The SCRAM credentials of a log-dir tree (see the module docstring). Thread safe.

    >>> import tempfile
    >>> s = ScramCredentialStore(tempfile.mkdtemp())
    >>> s.set_password("alice", "SCRAM-SHA-512", "alice-secret", 8192)
    >>> s.describe(["alice"])[0].credentials
    (('SCRAM-SHA-512', 8192),)
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        # salted keys: the file is readable by the broker's user only (mode 0600)
        self._file = JsonStateFile(Path(root) / SCRAM_CREDENTIALS_FILE, "SCRAM credentials",
                                   "users", mode=0o600)
        self.path = self._file.path
        self._lock = threading.Lock()
        #: user -> mechanism -> credential
        self._users: dict[str, dict[str, ScramCredential]] = self._file.load(_parse_users) or {}

    def _save(self) -> None:
        self._file.save({u: {m: c.to_string() for m, c in sorted(creds.items())}
                         for u, creds in sorted(self._users.items()) if creds})

    # -- reads ---------------------------------------------------------------------------------

    def get(self, user: str, mechanism: str) -> ScramCredential | None:
        """The user's credential for ``mechanism`` (None: no such user or mechanism)."""
        with self._lock:
            return self._users.get(user, {}).get(mechanism)

    def users(self) -> list[str]:
        """Users with at least one credential, sorted."""
        with self._lock:
            return sorted(u for u, c in self._users.items() if c)

    def describe(self, users: Iterable[str] | None = None) -> list[DescribeResult]:
        """``ScramImage.describe``: every user when ``users`` is None or empty; a user asked
        twice answers DUPLICATE_RESOURCE, one without credentials RESOURCE_NOT_FOUND."""
        with self._lock:
            asked: dict[str, bool] = {}
            if not users:
                for u, creds in self._users.items():
                    if creds:
                        asked[u] = False
            else:
                for u in users:
                    asked[u] = u in asked
            out = []
            for user, dup in asked.items():
                if dup:
                    out.append(DescribeResult(user, _DUPLICATE_RESOURCE, "Cannot describe SCRAM "
                                              "credentials for the same user twice in a single "
                                              f"request: {user}"))
                    continue
                creds = self._users.get(user, {})
                if not creds:
                    out.append(DescribeResult(user, _RESOURCE_NOT_FOUND, "Attempt to describe a "
                                              f"user credential that does not exist: {user}"))
                    continue
                out.append(DescribeResult(user, credentials=tuple(
                    (m, creds[m].iterations) for m in sorted(creds, key=MECHANISM_TYPES.get))))
            return out

    # -- writes --------------------------------------------------------------------------------

    def alter(self, deletions: Iterable[tuple[str, int]],
              upsertions: Iterable[tuple[str, int, int, bytes, bytes]]) -> list[AlterResult]:
        """``ScramControlManager.alterCredentials``: ``deletions`` are ``(user, mechanism
        type)``, ``upsertions`` ``(user, mechanism type, iterations, salt, salted password)``.
        A user named twice in one request fails with DUPLICATE_RESOURCE; the others are applied
        together and persisted once. Results: deletions, then upsertions, then errors (Kafka's
        order)."""
        with self._lock:
            errors: dict[str, tuple[int, str]] = {}
            dels: dict[str, tuple[str, int]] = {}
            ups: dict[str, tuple[str, int, int, bytes, bytes]] = {}
            twice = (_DUPLICATE_RESOURCE,
                     "A user credential cannot be altered twice in the same request")
            for user, mtype in deletions:
                if user in errors:
                    continue
                if dels.pop(user, None) is not None:
                    errors[user] = twice
                    continue
                err = _check_name(user, mtype)
                if err is None and _TYPE_NAMES[mtype] not in self._users.get(user, {}):
                    err = (_RESOURCE_NOT_FOUND,
                           "Attempt to delete a user credential that does not exist")
                if err is not None:
                    errors[user] = err
                else:
                    dels[user] = (user, mtype)
            for up in upsertions:
                user, mtype, iterations = up[0], up[1], up[2]
                if user in errors:
                    continue
                if dels.pop(user, None) is not None or ups.pop(user, None) is not None:
                    errors[user] = twice
                    continue
                err = _check_name(user, mtype)
                if err is None and iterations < MIN_ITERATIONS:
                    err = (_UNACCEPTABLE_CREDENTIAL, "Too few iterations")
                elif err is None and iterations > MAX_ITERATIONS:
                    err = (_UNACCEPTABLE_CREDENTIAL, "Too many iterations")
                if err is not None:
                    errors[user] = err
                else:
                    ups[user] = up
            results = []
            for user, mtype in dels.values():
                self._users[user].pop(_TYPE_NAMES[mtype], None)
                results.append(AlterResult(user))
            for user, mtype, iterations, salt, salted in ups.values():
                mech = _TYPE_NAMES[mtype]
                self._users.setdefault(user, {})[mech] = ScramCredential.from_salted_password(
                    mech, salt, salted, iterations)
                results.append(AlterResult(user))
            results.extend(AlterResult(u, code, msg) for u, (code, msg) in errors.items())
            if dels or ups:
                self._save()
            return results

    def replay(self, credentials: Iterable[tuple[str, ScramCredential]]) -> None:
        """Put ``(user, credential)`` pairs as they are (``ScramControlManager.replay`` of
        ``UserScramCredentialRecord``s: no checks, a later one for the same user and mechanism
        wins), persisted once."""
        with self._lock:
            for user, cred in credentials:
                self._users.setdefault(user, {})[cred.mechanism] = cred
            self._save()

    def set_password(self, user: str, mechanism: str, password: str,
                     iterations: int = MIN_ITERATIONS) -> None:
        """Create or replace a user's credential from a password (what ``kafka-configs.sh
        --alter --add-config 'SCRAM-SHA-256=[password=...]'`` and ``kafka-storage.sh format
        --add-scram`` do), persisted at once.

        Raises
        ------
        ConfigError
            An empty user name, an unknown mechanism, iterations out of 4096..16384.
        """
        if mechanism not in MECHANISMS:
            raise ConfigError(f"unknown SCRAM mechanism {mechanism!r} (expected one of "
                              f"{', '.join(MECHANISMS)})")
        salt = os.urandom(32)
        [result] = self.alter([], [(user, MECHANISM_TYPES[mechanism], iterations, salt,
                                    salted_password(mechanism, password, salt, iterations))])
        if result.error_code:
            raise ConfigError(f"SCRAM credential for user {user!r} ({mechanism}): "
                              f"{result.error_message}", path=self.path)

    def update_user(self, user: str, deletions: Iterable[str],
                    passwords: Iterable[tuple[str, str, int]]) -> None:
        """Delete the user's credentials for ``deletions`` and set ``(mechanism, password,
        iterations)`` ones, written together (one atomic file replace): ``kafka-configs.sh
        --alter --entity-type users`` with several mechanisms, as ZooKeeper-mode Kafka applied it.

        Raises
        ------
        ConfigError
            A mechanism named twice, one to delete that the user lacks, iterations out of range;
            nothing is changed then.
        """
        deletions = list(deletions)
        passwords = list(passwords)
        named = deletions + [m for m, _, _ in passwords]
        for m in named:
            if m not in MECHANISMS:
                raise ConfigError(f"unknown SCRAM mechanism {m!r}", path=self.path)
        if len(set(named)) != len(named):
            raise ConfigError("A user credential cannot be altered twice in the same request",
                              path=self.path)
        creds = []
        for m, password, iterations in passwords:
            err = _check_name(user, MECHANISM_TYPES[m])
            if err is None and not MIN_ITERATIONS <= iterations <= MAX_ITERATIONS:
                err = (_UNACCEPTABLE_CREDENTIAL, "Too few iterations"
                       if iterations < MIN_ITERATIONS else "Too many iterations")
            if err is not None:
                raise ConfigError(f"SCRAM credential for user {user!r} ({m}): {err[1]}",
                                  path=self.path)
            creds.append(ScramCredential.from_password(m, password, iterations))
        with self._lock:
            have = self._users.get(user, {})
            missing = [m for m in deletions if m not in have]
            if missing:
                raise ConfigError(f"SCRAM credential for user {user!r} ({missing[0]}): Attempt "
                                  "to delete a user credential that does not exist",
                                  path=self.path)
            mine = self._users.setdefault(user, {})
            for m in deletions:
                del mine[m]
            for c in creds:
                mine[c.mechanism] = c
            self._save()

    def delete(self, user: str, mechanism: str) -> None:
        """Remove a user's credential for ``mechanism``.

        Raises
        ------
        ConfigError
            No such credential.
        """
        if mechanism not in MECHANISMS:
            raise ConfigError(f"unknown SCRAM mechanism {mechanism!r}", path=self.path)
        [result] = self.alter([(user, MECHANISM_TYPES[mechanism])], [])
        if result.error_code:
            raise ConfigError(f"SCRAM credential for user {user!r} ({mechanism}): "
                              f"{result.error_message}", path=self.path)


def _parse_users(users: dict) -> dict[str, dict[str, ScramCredential]]:
    """The ``users`` body of the credentials file: user -> mechanism -> Kafka's credential text
    (mechanisms this build does not know are dropped, as a broker ignores them)."""
    return {user: {m: ScramCredential.from_string(text, m) for m, text in creds.items()
                   if _known(m)}
            for user, creds in users.items()}


def _known(mechanism: str) -> bool:
    return mechanism in MECHANISMS


def _check_name(user: str, mtype: int) -> tuple[int, str] | None:
    """``ScramControlManager.validateScramUsernameAndMechanism``."""
    if not user:
        return (_UNACCEPTABLE_CREDENTIAL, "Username must not be empty")
    if mtype not in _TYPE_NAMES:
        return (_UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism")
    return None


def parse_add_scram(spec: str) -> tuple[str, str, str, int]:
    """``kafka-storage.sh format --add-scram``'s argument: ``MECHANISM=[name=U,password=P]``
    with an optional ``iterations=N`` (default 4096); returns ``(mechanism, user, password,
    iterations)``. A value may be double-quoted (Kafka's ``ScramParser``).

    >>> parse_add_scram('SCRAM-SHA-256=[name=alice,password="alice-secret"]')
    ('SCRAM-SHA-256', 'alice', 'alice-secret', 4096)

    Raises
    ------
    ConfigError
        A malformed argument, an unknown mechanism, no name or password.
    """
    mech, sep, rest = spec.partition("=")
    mech = mech.strip()
    if not sep or not rest.startswith("[") or not rest.endswith("]"):
        raise ConfigError(f"--add-scram: expected MECHANISM=[name=USER,password=PASSWORD], "
                          f"found {spec!r}")
    if mech not in MECHANISMS:
        raise ConfigError(f"--add-scram: unknown SCRAM mechanism {mech!r} (expected one of "
                          f"{', '.join(MECHANISMS)})")
    fields: dict[str, str] = {}
    for part in _split_unquoted(rest[1:-1]):
        k, sep2, v = part.partition("=")
        if not sep2:
            raise ConfigError(f"--add-scram: expected key=value, found {part!r} in {spec!r}")
        v = v.strip()
        if len(v) >= 2 and v[0] == v[-1] == '"':
            v = v[1:-1]
        fields[k.strip()] = v
    unknown = set(fields) - {"name", "password", "iterations"}
    if unknown:
        raise ConfigError(f"--add-scram: unknown field(s) {', '.join(sorted(unknown))} in "
                          f"{spec!r} (expected name, password, iterations)")
    if not fields.get("name") or not fields.get("password"):
        raise ConfigError(f"--add-scram: name and password are required, found {spec!r}")
    try:
        iterations = int(fields.get("iterations", MIN_ITERATIONS))
    except ValueError:
        raise ConfigError(f"--add-scram: iterations must be an integer in {spec!r}") from None
    if not MIN_ITERATIONS <= iterations <= MAX_ITERATIONS:
        raise ConfigError(f"--add-scram: iterations must be within {MIN_ITERATIONS}.."
                          f"{MAX_ITERATIONS} (found {iterations})")
    return mech, fields["name"], fields["password"], iterations


def _split_unquoted(text: str) -> list[str]:
    """Split on commas outside double quotes."""
    out, cur, quoted = [], [], False
    for ch in text:
        if ch == '"':
            quoted = not quoted
        if ch == "," and not quoted:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if cur:
        out.append("".join(cur))
    return [p for p in (s.strip() for s in out) if p]

