"""The users of SASL/PLAIN from a Kafka JAAS configuration.

Kafka's PLAIN server (``PlainServerCallbackHandler``) checks a password against the
``user_<name>="<password>"`` options of the ``PlainLoginModule`` entry of its JAAS
configuration: the ``KafkaServer`` section of the file named by
``-Djava.security.auth.login.config``, or a listener's ``sasl.jaas.config`` property, e.g.::

    KafkaServer {
        org.apache.kafka.common.security.plain.PlainLoginModule required
        username="admin"
        password="admin-secret"
        user_admin="admin-secret"
        user_alice="alice-secret";
    };

:func:`plain_users` reads either form (a whole file, or one entry as in ``sasl.jaas.config``):
the ``user_`` options of every ``PlainLoginModule`` entry; :func:`login_module_options` the
options of another module's entries (``OAuthBearerLoginModule``'s ``unsecuredValidator*``);
:func:`login_modules` every entry in order (a client's ``sasl.jaas.config``: one entry whose
``username``/``password`` options are its credentials).
JAAS syntax (``JaasConfig``'s parser): ``name { module flag option=value ...; };``, values
quoted with ``"`` (or bare tokens), ``//`` and ``/* */`` comments.

>>> plain_users('org.apache.kafka.common.security.plain.PlainLoginModule required '
...             'user_alice="alice-secret" user_bob="b";')
{'alice': 'alice-secret', 'bob': 'b'}
"""

from __future__ import annotations

import re

from ..errors import ConfigError

__all__ = ["plain_users", "login_module_options", "login_modules", "PLAIN_LOGIN_MODULE",
           "SCRAM_LOGIN_MODULE", "OAUTHBEARER_LOGIN_MODULE"]

PLAIN_LOGIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_LOGIN_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
OAUTHBEARER_LOGIN_MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
_FLAGS = ("required", "requisite", "sufficient", "optional")
_TOKEN = re.compile(r'\s*(?:(?P<q>"(?:[^"\\]|\\.)*")|(?P<p>[{};=])|(?P<w>[^\s{};="]+))')


def _tokens(text: str, where: str) -> list[str]:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    out, pos = [], 0
    while True:
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            if text[pos:].strip():
                raise ConfigError(f"{where}: cannot parse JAAS configuration near "
                                  f"{text[pos:pos + 30]!r}")
            return out
        pos = m.end()
        out.append(m.group("q") or m.group("p") or m.group("w"))


def login_module_options(text: str, module: str, *,
                         where: str = "JAAS configuration") -> dict[str, str] | None:
    """The options of the ``module`` entries of ``text`` (a JAAS file, or one
    ``sasl.jaas.config`` entry), later entries winning; None when no entry names ``module``.

    >>> login_module_options('x.Y required a="1" b=2;', "x.Y")
    {'a': '1', 'b': '2'}

    Raises
    ------
    ConfigError
        Text that is not JAAS syntax, naming ``where`` and the place.
    """
    found: dict[str, str] | None = None
    for name, options in _entries(text, where):
        if name == module:
            found = {**(found or {}), **options}
    return found


def login_modules(text: str, *,
                  where: str = "JAAS configuration") -> list[tuple[str, dict[str, str]]]:
    """Every login-module entry ``(module, options)`` of ``text`` (a JAAS file, or a
    ``sasl.jaas.config`` value), in order.

    >>> login_modules('a.B required username="alice" password="s";')
    [('a.B', {'username': 'alice', 'password': 's'})]

    Raises
    ------
    ConfigError
        Text that is not JAAS syntax, naming ``where`` and the place.
    """
    return _entries(text, where)


def plain_users(text: str, *, where: str = "JAAS configuration") -> dict[str, str]:
    """``user -> password`` from the ``user_*`` options of the ``PlainLoginModule`` entries of
    ``text`` (a JAAS file, or one ``sasl.jaas.config`` entry). Later entries win.

    Raises
    ------
    ConfigError
        Text that is not JAAS syntax, naming ``where`` and the place.
    """
    options = login_module_options(text, PLAIN_LOGIN_MODULE, where=where) or {}
    return {k[5:]: v for k, v in options.items() if k.startswith("user_") and len(k) > 5}


def _entries(text: str, where: str) -> list[tuple[str, dict[str, str]]]:
    """Every login-module entry ``(module, options)`` of the text, in order."""
    toks = _tokens(text, where)
    entries: list[tuple[str, dict[str, str]]] = []
    i = 0
    while i < len(toks):
        tok = toks[i]
        if tok in ("{", "}", ";"):
            i += 1
            continue
        if i + 1 < len(toks) and toks[i + 1] == "{":  # a section name
            i += 2
            continue
        # an entry: module flag (option = value)* ;
        module = tok
        if i + 1 >= len(toks) or toks[i + 1].lower() not in _FLAGS:
            raise ConfigError(f"{where}: expected a control flag ({', '.join(_FLAGS)}) after "
                              f"login module {module!r}")
        i += 2
        options: dict[str, str] = {}
        while i < len(toks) and toks[i] != ";":
            if i + 2 >= len(toks) or toks[i + 1] != "=":
                raise ConfigError(f"{where}: expected option=value in the entry of {module!r}, "
                                  f"found {toks[i]!r}")
            value = toks[i + 2]
            if value.startswith('"'):
                value = re.sub(r"\\(.)", r"\1", value[1:-1])
            options[toks[i]] = value
            i += 3
        if i >= len(toks):
            raise ConfigError(f"{where}: the entry of {module!r} does not end with ';'")
        i += 1
        entries.append((module, options))
    return entries
