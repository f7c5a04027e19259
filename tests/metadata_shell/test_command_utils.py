"""Kafka's CommandUtilsTest, and completion (Kafka's JLine completers) called directly."""

from __future__ import annotations

from kafkalog.metadata_shell.command_utils import (
    Candidate,
    complete_command,
    complete_path,
    get_effective_paths,
    split_path,
    strip_dot_path_components,
)
from kafkalog.metadata_shell.interactive_shell import MetadataShellCompleter

from .fake_tree import shell_state


def test_split_path() -> None:
    assert split_path("/alpha/beta") == ["alpha", "beta"]
    assert split_path("//alpha/beta/") == ["alpha", "beta"]


def test_strip_dot_path_components() -> None:
    # double dots
    assert strip_dot_path_components(["..", "keep", "keep2"]) == ["keep", "keep2"]
    # single dots
    assert strip_dot_path_components([".", "keep", "keep2"]) == ["keep", "keep2"]
    assert strip_dot_path_components([".", ".keep", "keep2"]) == [".keep", "keep2"]
    assert strip_dot_path_components(["..", ".keep", "keep2"]) == [".keep", "keep2"]


def test_get_effective_paths() -> None:
    assert get_effective_paths([]) == ["."]
    assert get_effective_paths(["", ""]) == ["."]
    assert get_effective_paths(["", "a", "", "b"]) == ["a", "b"]


def _values(candidates: list[Candidate]) -> list[tuple[str, bool]]:
    return [(c.value, c.complete) for c in candidates]


def test_complete_command() -> None:
    out: list[Candidate] = []
    complete_command("", out)
    assert [c.value for c in out] == ["cat", "cd", "exit", "find", "help", "history", "ls",
                                      "man", "pwd", "tree"]
    out = []
    complete_command("h", out)
    assert _values(out) == [("help", True), ("history", True)]
    out = []
    complete_command("x", out)
    assert out == []


def test_complete_path_absolute_and_relative() -> None:
    state = shell_state()
    out: list[Candidate] = []
    complete_path(state, "", out)
    assert _values(out) == [("image/", False), ("local/", False)]
    out = []
    complete_path(state, "/i", out)
    assert _values(out) == [("/image/", False)]
    out = []
    complete_path(state, "/image/", out)
    assert _values(out) == [("/image/features/", False), ("/image/provenance", True),
                            ("/image/topics/", False)]
    out = []
    # what was typed before the last '/' is kept as typed (here "..//image/./t")
    state.set_working_directory("/local")
    complete_path(state, "..//image/./t", out)
    assert _values(out) == [("..//image/./topics/", False)]
    out = []
    complete_path(state, "v", out)
    assert _values(out) == [("version", True)]


def test_complete_path_sorting_and_dead_ends() -> None:
    state = shell_state()
    out: list[Candidate] = []
    complete_path(state, "/image/topics/byName/", out)
    # String.compareTo order: 'P' < '_' < 'o'
    assert [c.value for c in out] == ["/image/topics/byName/Payments/",
                                      "/image/topics/byName/_internal/",
                                      "/image/topics/byName/orders/"]
    for dead_end in ("/nothing/", "/image/provenance/", "/image/provenance/x", "/zz"):
        out = []
        complete_path(state, dead_end, out)
        assert out == [], dead_end


def test_completer_words() -> None:
    completer = MetadataShellCompleter(shell_state())
    assert [c.value for c in completer.complete([])][:2] == ["cat", "cd"]
    assert _values(completer.complete(["m"])) == [("man", True)]
    # the next words: paths for ls/cat/tree/find (the last word), cd (only its first)
    assert _values(completer.complete(["ls", "/image/f"])) == [("/image/features/", False)]
    assert _values(completer.complete(["cat", "x", "/l"])) == [("/local/", False)]
    assert _values(completer.complete(["cd", "/l"])) == [("/local/", False)]
    assert completer.complete(["cd", "/l", "/l"]) == []
    # man completes command names, once
    assert _values(completer.complete(["man", "t"])) == [("tree", True)]
    assert completer.complete(["man", "ls", "t"]) == []
    # no completion for pwd, history, unknown commands
    assert completer.complete(["pwd", ""]) == []
    assert completer.complete(["nope", ""]) == []


def test_completer_on_typed_lines() -> None:
    completer = MetadataShellCompleter(shell_state())
    # a trailing space starts a new (empty) word
    assert [c.value for c in completer.complete_line("ls ")] == ["image/", "local/"]
    assert [c.value for c in completer.complete_line("ls /image/topics/byName/o")] == [
        "/image/topics/byName/orders/"]
    assert [c.value for c in completer.complete_line("his")] == ["history"]
    assert [c.value for c in completer.complete_line("")][-1] == "tree"
