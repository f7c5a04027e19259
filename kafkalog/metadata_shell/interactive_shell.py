"""The interactive loop (Kafka's ``InteractiveShell``, built on JLine 3; here on ``readline``).

Prints ``[ Kafka Metadata Shell ]``, then reads lines at the ``>> `` prompt, splits each as
JLine does (:mod:`.line_parser`), runs it and prints its output, until end of input or
``exit``. Ctrl-C drops the line being typed.

On a terminal, lines are read with GNU readline: line editing, history recall, and tab
completion of command names and of paths (:class:`MetadataShellCompleter`, Kafka's JLine
completer). Otherwise (stdin is a pipe or a file) lines are read as they come, as JLine's
"dumb" terminal does: the prompt is printed before each line, the line is not echoed, ``ls``
sees a width of 0 (one entry per line), and a last line without its newline is not run (JLine
drops a partial line at end of input).

History follows JLine's ``DefaultHistory``: every non-empty line is numbered from 0, except a
line starting with a space or repeating the previous one; lines are stored trimmed and the last
500 are kept (numbers keep counting).

>>> import io
>>> from kafkalog.metadata_shell.shell_state import MetadataShellState
>>> out = io.StringIO()
>>> shell = InteractiveShell(MetadataShellState(), stdin=io.StringIO("pwd\\nhistory\\n"),
...                          stdout=out)
>>> shell.run_main_loop()
0
>>> out.getvalue().splitlines()
['[ Kafka Metadata Shell ]', '>> /', '>>     0  pwd', '    1  history', '>> ']
"""

from __future__ import annotations

import os
import sys
from collections import deque
from collections.abc import Iterator
from typing import IO, Any

from .command_utils import Candidate, complete_command
from .commands import Commands, command_types
from .java_compat import java_trim
from .line_parser import parse_words
from .session_commands import ExitShell
from .shell_state import MetadataShellState

__all__ = ["InteractiveShell", "MetadataShellCompleter", "ShellHistory", "PROMPT"]

PROMPT = ">> "
#: JLine's DefaultHistory.DEFAULT_HISTORY_SIZE
HISTORY_SIZE = 500


class ShellHistory:
    """JLine's ``DefaultHistory`` with its default options (ignore a line starting with a
    space, trim, ignore a repeat of the previous line, keep the last 500)."""

    def __init__(self, max_size: int = HISTORY_SIZE) -> None:
        self._items: deque[str] = deque()
        self._offset = 0
        self._max_size = max_size

    def add(self, line: str) -> bool:
        """Record a line read; False when JLine's rules leave it out."""
        if not line:  # LineReaderImpl only adds a non-empty buffer
            return False
        if line.startswith(" "):
            return False
        line = java_trim(line)
        if self._items and self._items[-1] == line:
            return False
        self._items.append(line)
        while len(self._items) > self._max_size:
            self._items.popleft()
            self._offset += 1
        return True

    def first(self) -> int:
        return self._offset

    def last(self) -> int:
        return self._offset + len(self._items) - 1

    def get(self, index: int) -> str:
        i = index - self._offset
        if not 0 <= i < len(self._items):
            raise IndexError(f"IndexOutOfBounds: Index:{i}, Size:{len(self._items)}")
        return self._items[i]

    def __len__(self) -> int:
        return len(self._items)


class MetadataShellCompleter:
    """Tab completion over a command line's words (Kafka's ``MetadataShellCompleter``): the
    first word completes to command names, the next ones as the command says (paths for
    ``cat``, ``cd``, ``find``, ``ls``, ``tree``; command names for ``man``).

    >>> from kafkalog.metadata_shell.shell_state import MetadataShellState
    >>> [c.value for c in MetadataShellCompleter(MetadataShellState()).complete(["h"])]
    ['help', 'history']
    """

    def __init__(self, state: MetadataShellState) -> None:
        self._state = state

    def complete(self, words: list[str]) -> list[Candidate]:
        candidates: list[Candidate] = []
        if not words:
            complete_command("", candidates)
        elif len(words) == 1:
            complete_command(words[0], candidates)
        else:
            command_type = command_types().get(words[0])
            if command_type is not None:
                command_type.complete_next(self._state, list(words[1:]), candidates)
        return candidates

    def complete_line(self, line: str) -> list[Candidate]:
        """Candidates for the last word of ``line`` (the text up to the cursor)."""
        return self.complete(parse_words(line))


class InteractiveShell:
    """The read-run loop over ``state``.

    ``stdin``/``stdout`` default to the process's; readline (editing, completion) is used
    when both are the process's own and are terminals, unless ``use_readline`` says otherwise.
    """

    def __init__(self, state: MetadataShellState, *, stdin: IO[str] | None = None,
                 stdout: IO[str] | None = None, use_readline: bool | None = None) -> None:
        self._state = state
        self._stdin = sys.stdin if stdin is None else stdin
        self._stdout = sys.stdout if stdout is None else stdout
        if use_readline is None:
            use_readline = (self._stdin is sys.stdin and self._stdout is sys.stdout
                            and _isatty(self._stdin) and _isatty(self._stdout))
        self._use_readline = use_readline
        self._history = ShellHistory()
        self._completer = MetadataShellCompleter(state)
        self._matches: list[str] = []
        self._readline: Any = None
        self._saved: tuple[Any, ...] | None = None
        if use_readline:
            self._setup_readline()

    # ------------------------------------------------------------------------ readline

    def _setup_readline(self) -> None:
        try:
            import readline
        except ImportError:  # no readline on this platform: plain input() still works
            return
        self._readline = readline
        self._saved = (readline.get_completer(), readline.get_completer_delims())
        # words are whitespace separated: '/' belongs to the path being completed
        readline.set_completer_delims(" \t\n")
        readline.set_completer(self._readline_complete)
        if "libedit" in (readline.__doc__ or ""):
            readline.parse_and_bind("bind ^I rl_complete")
        else:
            readline.parse_and_bind("tab: complete")
        # the history follows JLine's rules (ShellHistory), not readline's
        readline.set_auto_history(False)

    def _readline_complete(self, text: str, index: int) -> str | None:
        if index == 0:
            rl = self._readline
            line = rl.get_line_buffer()[:rl.get_endidx()]
            # Python's readline appends nothing after a match: add JLine's space after a
            # complete candidate (a file, a command name), none after a directory's "/"
            self._matches = [c.value + (" " if c.complete else "")
                             for c in self._completer.complete_line(line)]
        return self._matches[index] if index < len(self._matches) else None

    def close(self) -> None:
        """Restore readline's completer (Kafka closes its terminal)."""
        if self._readline is not None and self._saved is not None:
            completer, delims = self._saved
            self._readline.set_completer(completer)
            self._readline.set_completer_delims(delims)
            self._readline.set_auto_history(True)
            self._saved = None

    def __enter__(self) -> InteractiveShell:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------------ the loop

    def _read_line(self) -> str:
        """The next line (EOFError at end of input, KeyboardInterrupt on Ctrl-C)."""
        if self._use_readline:
            line = input(PROMPT)
        else:
            self._stdout.write(PROMPT)
            self._stdout.flush()
            line = self._stdin.readline()
            if not line.endswith("\n"):
                raise EOFError  # end of input; JLine drops a partial last line
            line = line[:-1]
        if self._history.add(line) and self._readline is not None:
            self._readline.add_history(java_trim(line))
        return line

    def run_main_loop(self) -> int:
        """Read and run lines until end of input (0) or ``exit`` (its status)."""
        out = self._stdout
        out.write("[ Kafka Metadata Shell ]\n")
        out.flush()
        commands = Commands(True)
        while True:
            try:
                line = self._read_line()
            except KeyboardInterrupt:
                # Kafka prints "^C" on a line of its own (on a terminal JLine ends the line
                # being typed first; Python's readline echoes nothing itself)
                out.write("\n^C\n" if self._use_readline else "^C\n")
                out.flush()
                continue
            except EOFError:
                return 0
            handler = commands.parse_command(parse_words(line), help_out=out)
            try:
                handler.run(self, out, self._state)
            except ExitShell as e:
                out.flush()
                return e.status
            out.flush()

    def screen_width(self) -> int:
        """The terminal's width; 0 when not on a terminal (JLine's dumb terminal)."""
        if not self._use_readline:
            return 0
        for stream in (self._stdout, self._stdin):
            try:
                return os.get_terminal_size(stream.fileno()).columns
            except (OSError, ValueError, AttributeError):
                continue
        return 0

    def history(self, num_entries_to_show: int) -> Iterator[tuple[int, str]]:
        """The last ``num_entries_to_show`` history lines as ``(number, line)``."""
        h = self._history
        n = max(num_entries_to_show, 0)
        last = h.last()
        n = min(n, last + 1)
        first = max(last - n + 1, h.first())
        return ((i, h.get(i)) for i in range(first, last + 1))


def _isatty(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
