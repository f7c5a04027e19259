"""Kafka's LsCommandHandlerTest, and ``ls`` over a tree."""

from __future__ import annotations

import io

from kafkalog.metadata_shell.ls_command import (
    ColumnSchema,
    LsCommandHandler,
    TargetDirectory,
    calculate_column_schema,
    print_entries,
    print_targets,
)

from .fake_tree import Dir, leaf, shell_state


def test_calculate_column_schema() -> None:
    assert calculate_column_schema(None, ["abc", "def", "ghi"]) == ColumnSchema.of(1, 3)
    assert calculate_column_schema(0, ["abc", "def"]) == ColumnSchema.of(1, 2)
    assert calculate_column_schema(80, ["a", "abcdef", "beta"]) == ColumnSchema.of(3, 1, 3, 8, 6)
    assert calculate_column_schema(18, ["alphabet", "beta", "gamma", "theta", "zeta"]) == \
        ColumnSchema.of(2, 3, 10, 7)


def test_print_entries() -> None:
    out = io.StringIO()
    print_entries(out, "", 18, ["alphabet", "beta", "gamma", "theta", "zeta"])
    assert out.getvalue().strip() == "\n".join(["alphabet  theta", "beta      zeta", "gamma"])
    # an entry is padded unless it is in the last column, also on the last line
    assert out.getvalue() == "alphabet  theta\nbeta      zeta\ngamma     \n"


def test_print_targets() -> None:
    out = io.StringIO()
    print_targets(out, 18, ["foo", "foobarbaz", "quux"], [
        TargetDirectory("/some/dir", ["supercalifragalistic"]),
        TargetDirectory("/some/other/dir",
                        ["capability", "delegation", "elephant", "fungible", "green"])])
    expected = [
        "foo        quux",
        "foobarbaz  ",
        "",
        "/some/dir:",
        "supercalifragalistic",
        "",
        "/some/other/dir:",
        "capability",
        "delegation",
        "elephant",
        "fungible",
        "green"]
    assert out.getvalue().strip() == "\n".join(expected)
    assert out.getvalue() == "\n".join(expected) + "\n"


def test_column_schema_text_and_edges() -> None:
    assert str(ColumnSchema.of(3, 1, 3, 8, 6)) == \
        "ColumnSchema(columnWidths=[3, 8, 6], entriesPerColumn=1)"
    # at most one column per 4 characters of width: 7 // 4 == 1, the unmeasured single column
    assert calculate_column_schema(7, ["a", "b"]) == ColumnSchema.of(1, 2)
    assert calculate_column_schema(8, ["a", "b"]) == ColumnSchema.of(2, 1, 3, 3)
    # a schema whose last column would be empty is never chosen
    assert calculate_column_schema(80, ["a", "b", "c", "d", "e"]).num_columns() == 5
    assert calculate_column_schema(80, ["a"] * 7).num_columns() == 7
    # widths count UTF-16 units, as Java's String.length()
    assert calculate_column_schema(80, ["\U0001f600", "b"]) == ColumnSchema.of(2, 1, 4, 3)


def test_print_entries_intro_and_empty() -> None:
    out = io.StringIO()
    print_entries(out, "x:", None, [])
    assert out.getvalue() == ""
    print_entries(out, "x:", None, ["b", "a"])
    assert out.getvalue() == "x:\nb\na\n"


class _Shell:
    def __init__(self, width: int) -> None:
        self.width = width

    def screen_width(self) -> int:
        return self.width


def _ls(*targets: str, shell: _Shell | None = None, cwd: str = "/") -> str:
    state = shell_state()
    state.set_working_directory(cwd)
    out = io.StringIO()
    LsCommandHandler(list(targets)).run(shell, out, state)  # type: ignore[arg-type]
    return out.getvalue()


def test_ls_over_a_tree() -> None:
    assert _ls() == "image\nlocal\n"
    assert _ls("/image") == "features\nprovenance\ntopics\n"
    assert _ls("image/topics/byName") == "Payments\n_internal\norders\n"
    # a file lists its name; files come first, then directories under their last component
    assert _ls("/image/topics/byName/orders", "/image/provenance") == (
        "provenance\n\norders:\n0\nid\nname\n")
    assert _ls("/image/topics/byName/*") == (
        "Payments:\nid\nname\n\norders:\n0\nid\nname\n")  # _internal is empty: no lines
    assert _ls("/image/features", "/") == "features:\nmetadataVersion\n\n/:\nimage\nlocal\n"
    assert _ls("..", cwd="/image/topics/byName") == "byName\n"
    assert _ls("nope", "/image/features") == (
        "ls: nope: no such file or directory.\nmetadataVersion\n")


def test_ls_columns_follow_the_shell_width() -> None:
    assert _ls("/image", shell=_Shell(80)) == "features  provenance  topics\n"
    assert _ls("/image", shell=_Shell(24)) == "features    topics\nprovenance  \n"
    assert _ls("/image", shell=_Shell(0)) == "features\nprovenance\ntopics\n"


def test_ls_names_with_wide_characters() -> None:
    from kafkalog.metadata_shell.shell_state import MetadataShellState

    wide = "a\U0001f600\U0001f600"  # 5 UTF-16 units, 3 code points
    state = MetadataShellState(Dir({n: leaf(n) for n in ("y", wide, "x", "abcd")}))
    out = io.StringIO()
    LsCommandHandler(["/"]).run(_Shell(16), out, state)  # type: ignore[arg-type]
    # "abcd" sorts before it ('b' 0x62 < 0xD83D); the first column is 5 + 2 wide
    assert out.getvalue() == f"abcd   x\n{wide}  y\n"
