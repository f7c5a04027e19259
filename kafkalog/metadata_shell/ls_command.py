"""``ls``: list nodes (Kafka's ``LsCommandHandler``).

Each target (the working directory when none is given) is a glob. Matched files are listed
first, by name; then each matched directory's children, sorted, under a ``name:`` line (its
last path component, ``/`` for the root) when there are files or more than one directory, with
a blank line between groups. No match prints ``ls: <target>: no such file or directory.``
(lower case, as in Kafka) at once.

In the interactive shell entries are laid out in columns to fit the terminal width, filled
column by column like ``ls`` does (each column as wide as its longest entry plus 2, the most
columns that fit, a column at most per 4 characters of width; an entry is padded to its
column's width unless it is in the last column, trailing spaces included); given on the command
line, one entry per line.

>>> import io
>>> out = io.StringIO()
>>> print_entries(out, "", 18, ["alphabet", "beta", "gamma", "theta", "zeta"])
>>> out.getvalue().splitlines()
['alphabet  theta', 'beta      zeta', 'gamma     ']
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

from .command_utils import get_effective_paths
from .commands import Handler, PathsCommandType
from .glob_visitor import GlobVisitor, MetadataNodeInfo
from .java_compat import java_len, java_string_key

if TYPE_CHECKING:
    from .interactive_shell import InteractiveShell
    from .shell_state import MetadataShellState

__all__ = [
    "LsCommandHandler",
    "TargetDirectory",
    "ColumnSchema",
    "calculate_column_schema",
    "print_entries",
    "print_targets",
]


class _LsCommandType(PathsCommandType):
    name = "ls"
    description = "List metadata nodes."
    shell_only = False
    argument, nargs, help = "targets", "*", "The metadata node paths to list."

    def create_handler(self, namespace: dict[str, Any]) -> Handler:
        return LsCommandHandler(list(namespace["targets"]))


@dataclass
class TargetDirectory:
    """A directory to list: its name and its sorted children."""

    name: str
    children: list[str]


@dataclass
class LsCommandHandler(Handler):
    """``ls [TARGET...]``."""

    targets: list[str] = field(default_factory=list)

    TYPE = _LsCommandType()

    def run(self, shell: InteractiveShell | None, writer: IO[str],
            state: MetadataShellState) -> None:
        target_files: list[str] = []
        target_directories: list[TargetDirectory] = []
        for target in get_effective_paths(self.targets):
            def handle(info: MetadataNodeInfo | None, target: str = target) -> None:
                if info is None:
                    writer.write(f"ls: {target}: no such file or directory.\n")
                elif info.node.is_directory():
                    children = sorted(info.node.child_names(), key=java_string_key)
                    target_directories.append(
                        TargetDirectory(info.last_path_component(), children))
                else:
                    target_files.append(info.last_path_component())

            state.visit(GlobVisitor(target, handle))
        screen_width = None if shell is None else shell.screen_width()
        print_targets(writer, screen_width, target_files, target_directories)


def print_targets(writer: IO[str], screen_width: int | None, target_files: list[str],
                  target_directories: list[TargetDirectory]) -> None:
    """The files, then each directory's children (with a ``name:`` intro when needed)."""
    print_entries(writer, "", screen_width, target_files)
    need_intro = bool(target_files) or len(target_directories) > 1
    first_intro = not target_files
    for directory in target_directories:
        intro = ""
        if need_intro:
            if not first_intro:
                intro += "\n"
            intro += directory.name + ":"
            first_intro = False
        print_entries(writer, intro, screen_width, directory.children)


def print_entries(writer: IO[str], intro: str, screen_width: int | None,
                  entries: list[str]) -> None:
    """``entries`` in columns for ``screen_width`` (None: one per line); nothing when empty."""
    if not entries:
        return
    if intro:
        writer.write(intro + "\n")
    schema = calculate_column_schema(screen_width, entries)
    num_columns = schema.num_columns()
    num_lines = (len(entries) + num_columns - 1) // num_columns
    for line in range(num_lines):
        out = []
        for column in range(num_columns):
            index = line + column * schema.entries_per_column
            if index < len(entries):
                entry = entries[index]
                out.append(entry)
                if column < num_columns - 1:
                    out.append(" " * (schema.column_width(column) - java_len(entry)))
        writer.write("".join(out) + "\n")


@dataclass
class ColumnSchema:
    """A layout: the width of each column and how many entries go down each one."""

    column_widths: list[int]
    entries_per_column: int

    @classmethod
    def of(cls, num_columns: int, entries_per_column: int, *widths: int) -> ColumnSchema:
        """``new ColumnSchema(n, perColumn).setColumnWidths(widths...)``."""
        column_widths = [0] * num_columns
        column_widths[:len(widths)] = widths
        return cls(column_widths, entries_per_column)

    def process(self, entry_index: int, output: str) -> None:
        column = entry_index // self.entries_per_column
        self.column_widths[column] = max(self.column_widths[column], java_len(output) + 2)

    def total_width(self) -> int:
        return sum(self.column_widths)

    def num_columns(self) -> int:
        return len(self.column_widths)

    def column_width(self, column_index: int) -> int:
        return self.column_widths[column_index]

    def __str__(self) -> str:
        widths = ", ".join(str(w) for w in self.column_widths)
        return f"ColumnSchema(columnWidths=[{widths}], entriesPerColumn={self.entries_per_column})"


def calculate_column_schema(screen_width: int | None, entries: list[str]) -> ColumnSchema:
    """The layout with the most columns (at most ``screen_width // 4``) whose last column is
    used and whose total width fits; one column when none does or the width is unknown.

    >>> str(calculate_column_schema(80, ["a", "abcdef", "beta"]))
    'ColumnSchema(columnWidths=[3, 8, 6], entriesPerColumn=1)'
    """
    if screen_width is None:
        return ColumnSchema.of(1, len(entries))
    max_columns = int(screen_width / 4)  # Java's int division (a negative width gives 0)
    if max_columns <= 1:
        return ColumnSchema.of(1, len(entries))
    schemas = [ColumnSchema.of(n, (len(entries) + n - 1) // n)
               for n in range(1, max_columns + 1)]
    for i, entry in enumerate(entries):
        for schema in schemas:
            schema.process(i, entry)
    for schema in reversed(schemas[1:]):
        if schema.column_widths[-1] != 0 and schema.total_width() <= screen_width:
            return schema
    return schemas[0]
