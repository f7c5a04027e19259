"""Kafka's GlobComponentTest and GlobVisitorTest, plus the Java regex details."""

from __future__ import annotations

import pytest

from kafkalog.metadata_shell.glob_visitor import GlobComponent, GlobVisitor, MetadataNodeInfo

from .fake_tree import glob_test_state

# --------------------------------------------------------------------------- GlobComponentTest


def _verify_is_literal(glob_component: GlobComponent, component: str) -> None:
    assert glob_component.literal()
    assert glob_component.component() == component
    assert glob_component.matches(component)
    assert not glob_component.matches(component + "foo")


def test_literal_component() -> None:
    _verify_is_literal(GlobComponent("abc"), "abc")
    _verify_is_literal(GlobComponent(""), "")
    _verify_is_literal(GlobComponent("foobar_123"), "foobar_123")
    _verify_is_literal(GlobComponent("$blah+"), "$blah+")


def test_to_regular_expression() -> None:
    assert GlobComponent.to_regular_expression("blah") is None
    assert GlobComponent.to_regular_expression("") is None
    assert GlobComponent.to_regular_expression("does not need a regex, actually") is None
    assert GlobComponent.to_regular_expression("$blah*") == "^\\$blah.*$"
    assert GlobComponent.to_regular_expression("*") == "^.*$"
    assert GlobComponent.to_regular_expression("foo{bar,baz}") == "^foo(?:(?:bar)|(?:baz))$"


def test_glob_match() -> None:
    star = GlobComponent("*")
    assert not star.literal()
    assert star.matches("")
    assert star.matches("anything")
    question = GlobComponent("b?b")
    assert not question.literal()
    assert not question.matches("")
    assert question.matches("bob")
    assert question.matches("bib")
    assert not question.matches("bic")
    foobar_or_foobaz = GlobComponent("foo{bar,baz}")
    assert not foobar_or_foobaz.literal()
    assert foobar_or_foobaz.matches("foobar")
    assert foobar_or_foobaz.matches("foobaz")
    assert not foobar_or_foobaz.matches("foobah")
    assert not foobar_or_foobaz.matches("foo")
    assert not foobar_or_foobaz.matches("baz")


def test_escapes_and_malformed_groups() -> None:
    # an escaped special char is matched literally, an escaped plain char is the char
    assert GlobComponent.to_regular_expression("a\\*b*") == "^a\\*b.*$"
    assert GlobComponent("a\\*b*").matches("a*bc")
    assert not GlobComponent("a\\*b*").matches("axbc")
    assert GlobComponent.to_regular_expression("\\q*") == "^q.*$"
    # regex specials of a name are quoted: '.' and '(' are not patterns
    assert GlobComponent("x.(*").matches("x.(yz")
    assert not GlobComponent("x.(*").matches("xy(yz")
    # malformed groups make the component a literal (Kafka logs them at debug level)
    for bad in ("{a,{b}}", "{a,b"):
        with pytest.raises(ValueError):
            GlobComponent.to_regular_expression(bad)
        _verify_is_literal(GlobComponent(bad), bad)
    # a ',' or '}' outside a group is an ordinary char
    assert GlobComponent("a,b}*").matches("a,b}c")


def test_java_dot_matches_no_line_terminator() -> None:
    # java.util.regex's '.' excludes \r, \u0085, \u2028, \u2029 as well as \n
    for sep in ("\n", "\r", "\u0085", "\u2028", "\u2029"):
        assert not GlobComponent("a?b").matches(f"a{sep}b")
        assert not GlobComponent("*").matches(sep)
    assert GlobComponent("a?b").matches("a\u00e9b")


# ----------------------------------------------------------------------------- GlobVisitorTest


class InfoConsumer:
    """Collects what a visitor reports; None after a match (or a match after None) is a bug."""

    def __init__(self) -> None:
        self.infos: list[MetadataNodeInfo] | None = None

    def __call__(self, info: MetadataNodeInfo | None) -> None:
        if self.infos is None:
            if info is not None:
                self.infos = [info]
        elif info is not None:
            self.infos.append(info)
        else:
            raise AssertionError("Saw non-empty info after seeing empty info")


DATA = glob_test_state()


def _visit(glob: str) -> list[MetadataNodeInfo] | None:
    consumer = InfoConsumer()
    GlobVisitor(glob, consumer).accept(DATA)
    return consumer.infos


def test_star_glob() -> None:
    root = DATA.root()
    assert _visit("*") == [
        MetadataNodeInfo(["foo", "a"], root.child("foo").child("a")),
        MetadataNodeInfo(["foo", "beta"], root.child("foo").child("beta")),
    ]


def test_dot_dot() -> None:
    assert _visit("..") == [MetadataNodeInfo([], DATA.root())]


def test_double_dot_dot() -> None:
    assert _visit("../..") == [MetadataNodeInfo([], DATA.root())]


def test_z_glob() -> None:
    root = DATA.root()
    assert _visit("../z*") == [
        MetadataNodeInfo(["zeta"], root.child("zeta")),
        MetadataNodeInfo(["zzz"], root.child("zzz")),
    ]


def test_beta_or_theta_glob() -> None:
    root = DATA.root()
    assert _visit("../*/{beta,theta}") == [
        MetadataNodeInfo(["alpha", "beta"], root.child("alpha").child("beta")),
        MetadataNodeInfo(["alpha", "theta"], root.child("alpha").child("theta")),
        MetadataNodeInfo(["foo", "beta"], root.child("foo").child("beta")),
    ]


def test_not_found_glob() -> None:
    assert _visit("epsilon") is None


def test_absolute_glob() -> None:
    assert _visit("/a?pha") == [MetadataNodeInfo(["alpha"], DATA.root().child("alpha"))]


def test_no_descent_into_files() -> None:
    # /zeta/c is a file: neither a literal nor a glob goes below it
    assert _visit("/zeta/c/x") is None
    assert _visit("/zeta/c/*") is None
    assert [i.absolute_path() for i in _visit("/zeta/*")] == ["/zeta/c"]


def test_node_info_paths() -> None:
    info = MetadataNodeInfo(["alpha", "beta"], DATA.root())
    assert (info.last_path_component(), info.absolute_path()) == ("beta", "/alpha/beta")
    root = MetadataNodeInfo([], DATA.root())
    assert (root.last_path_component(), root.absolute_path()) == ("/", "/")
    assert repr(info).startswith("MetadataNodeInfo(path=/alpha/beta, node=")


def test_glob_order_is_java_compare_to() -> None:
    from kafkalog.metadata_shell.shell_state import MetadataShellState

    from .fake_tree import Dir, leaf

    # UTF-16 order: 'Z' < '_' < 'a', and U+FF5E (BMP) after U+1F600 (a surrogate pair, 0xD83D)
    names = ["a", "_", "Z", "\uff5e", "\U0001f600"]
    state = MetadataShellState(Dir({n: leaf(n) for n in names}))
    found: list[str] = []
    GlobVisitor("/*", lambda i: found.append(i.last_path_component())).accept(state)
    assert found == ["Z", "_", "a", "\U0001f600", "\uff5e"]


def test_missing_child_is_an_error() -> None:
    from kafkalog.cluster.image import MetadataNode
    from kafkalog.metadata_shell.shell_state import MetadataShellState

    class Broken(MetadataNode):
        def child_names(self):
            return ["ghost"]

    with pytest.raises(RuntimeError, match="Expected ghost to be a valid child of class "):
        GlobVisitor("/*", lambda i: None).accept(MetadataShellState(Broken()))
