"""The interactive loop driven through pipes: JLine's line splitting and history rules."""

from __future__ import annotations

import io

import pytest

from kafkalog.metadata_shell.interactive_shell import InteractiveShell, ShellHistory
from kafkalog.metadata_shell.line_parser import parse_words

from .fake_tree import shell_state


def _session(text: str, stdin: io.TextIOBase | None = None) -> tuple[int, str]:
    out = io.StringIO()
    shell = InteractiveShell(shell_state(), stdin=stdin or io.StringIO(text), stdout=out)
    assert shell.screen_width() == 0  # not a terminal: JLine's dumb terminal
    status = shell.run_main_loop()
    shell.close()
    return status, out.getvalue()


def test_session_transcript() -> None:
    status, out = _session("ls\ncd image/topics\npwd\nls byName\n\ncat ../provenance\n"
                           "bogus\nhistory\n")
    assert status == 0
    assert out == (
        "[ Kafka Metadata Shell ]\n"
        ">> image\nlocal\n"
        ">> "
        ">> /image/topics\n"
        ">> Payments\n_internal\norders\n"
        ">> "
        ">> offset 2, epoch 1\n"
        ">> invalid choice: 'bogus' (choose from 'cat', 'cd', 'exit', 'find', 'help', "
        "'history', 'ls', 'man', 'pwd', 'tree')\n"
        ">>     0  ls\n    1  cd image/topics\n    2  pwd\n    3  ls byName\n"
        "    4  cat ../provenance\n    5  bogus\n    6  history\n"
        ">> ")


def test_exit_ends_the_loop_and_the_rest_is_not_read() -> None:
    stdin = io.StringIO("pwd\nexit\nls\n")
    status, out = _session("", stdin)
    assert status == 0
    assert out == "[ Kafka Metadata Shell ]\n>> /\n>> "
    assert stdin.read() == "ls\n"


def test_partial_last_line_is_dropped() -> None:
    # JLine throws EndOfFileException with the partial line, which the shell ignores
    assert _session("pwd\nls")[1] == "[ Kafka Metadata Shell ]\n>> /\n>> "
    assert _session("")[1] == "[ Kafka Metadata Shell ]\n>> "


def test_quotes_and_escapes_reach_the_commands() -> None:
    out = _session("cd 'image'\ncd \"top\"ics\npwd\ncat by\\Name/orders/name ''\n")[1]
    # cd prints nothing: the prompts follow one another
    assert out.splitlines()[1:] == [">> >> >> /image/topics", ">> orders", ">> "]


def test_command_help_goes_to_the_shell_output() -> None:
    out = _session("pwd -h\n")[1]
    assert out == ("[ Kafka Metadata Shell ]\n>> usage:  pwd [-h]\n\noptional arguments:\n"
                   "  -h, --help             show this help message and exit\n>> ")


def test_history_rules() -> None:
    # a line starting with a space and a repeat of the last line are not recorded (but run);
    # lines are stored trimmed, so a tab alone is recorded as an empty line
    out = _session("ls\nls\n pwd\npwd  \n\t\nls\nhistory 3\nhistory -1\nhistory 0\n")[1]
    assert out == (
        "[ Kafka Metadata Shell ]\n"
        ">> image\nlocal\n"
        ">> image\nlocal\n"
        ">> /\n"
        ">> /\n"
        ">> "
        ">> image\nlocal\n"
        ">>     2  \n    3  ls\n    4  history 3\n"
        ">> "
        ">> "
        ">> ")


def test_history_numbering() -> None:
    history = ShellHistory(max_size=3)
    assert history.last() == -1 and history.first() == 0
    for line in ["a", "b", "b", " c", "d  ", "\te", ""]:
        history.add(line)
    # "b" repeated, " c" starts with a space, "" is empty: 4 lines kept, the oldest dropped
    assert (history.first(), history.last()) == (1, 3)
    assert [history.get(i) for i in range(1, 4)] == ["b", "d", "e"]
    with pytest.raises(IndexError):
        history.get(0)


def test_history_window() -> None:
    shell = InteractiveShell(shell_state(), stdin=io.StringIO(), stdout=io.StringIO())
    for line in ["a", "b", "c"]:
        shell._history.add(line)
    assert list(shell.history(2)) == [(1, "b"), (2, "c")]
    assert list(shell.history(99)) == [(0, "a"), (1, "b"), (2, "c")]
    assert list(shell.history(0)) == []
    assert list(shell.history(-4)) == []


def test_interrupt_while_reading() -> None:
    class Interrupting(io.StringIO):
        calls = 0

        def readline(self, *args: object) -> str:  # type: ignore[override]
            Interrupting.calls += 1
            if Interrupting.calls == 1:
                raise KeyboardInterrupt
            return super().readline(*args)  # type: ignore[arg-type]

    out = _session("", Interrupting("pwd\n"))[1]
    assert out == "[ Kafka Metadata Shell ]\n>> ^C\n>> /\n>> "


@pytest.mark.parametrize("line, words", [
    ("", [""]),
    ("ls", ["ls"]),
    ("ls ", ["ls", ""]),
    ("  ls   /a  ", ["ls", "/a", ""]),
    ("cat 'a b' \"c d\"", ["cat", "a b", "c d"]),
    ("cat x'a b'y", ["cat", "x'a b'y"]),       # quotes inside a word are kept
    ("cat 'a\\'b'", ["cat", "a'b"]),
    ("cat a\\ b", ["cat", "a b"]),
    ("cat a\\\\b", ["cat", "a\\b"]),
    ("cat 'unclosed x", ["cat", "unclosed x"]),
    ("cat '' x", ["cat", "x"]),                # an empty quoted word is no word
    ("ls\ta\u00a0b", ["ls", "a\u00a0b"]),      # no-break space is not Java whitespace
    ("ls\u2003a", ["ls", "a"]),                # an em space is
])
def test_parse_words(line: str, words: list[str]) -> None:
    assert parse_words(line) == words


class _FakeReadline:
    def __init__(self, buffer: str) -> None:
        self.buffer = buffer

    def get_line_buffer(self) -> str:
        return self.buffer

    def get_endidx(self) -> int:
        return len(self.buffer)


def test_readline_completion_adapter() -> None:
    shell = InteractiveShell(shell_state(), stdin=io.StringIO(), stdout=io.StringIO())
    matches = []
    shell._readline = _FakeReadline("cat /image/")
    for i in range(10):
        m = shell._readline_complete("/image/", i)
        if m is None:
            break
        matches.append(m)
    # a file is followed by a space (JLine's complete candidate), a directory is not
    assert matches == ["/image/features/", "/image/provenance ", "/image/topics/"]
    shell._readline = _FakeReadline("hi")
    assert shell._readline_complete("hi", 0) == "history "
    assert shell._readline_complete("hi", 1) is None


def test_terminal_session_with_readline(tmp_path) -> None:
    """A real terminal (a pty): readline mode, tab completion, the terminal's width."""
    pty = pytest.importorskip("pty")
    import fcntl
    import os
    import select
    import struct
    import sys
    import termios
    import time
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    script = (
        "import sys\n"
        "from kafkalog.metadata_shell.interactive_shell import InteractiveShell\n"
        "from tests.metadata_shell.fake_tree import shell_state\n"
        "sys.exit(InteractiveShell(shell_state()).run_main_loop())\n")
    pid, fd = pty.fork()
    if pid == 0:  # the child: the shell on the pty
        os.chdir(root)
        os.environ["TERM"] = "dumb"
        os.execv(sys.executable, [sys.executable, "-c", script])
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    seen = b""

    def read_until(marker: bytes, timeout: float = 20.0) -> bytes:
        nonlocal seen
        end = time.monotonic() + timeout
        while marker not in seen and time.monotonic() < end:
            if select.select([fd], [], [], 0.1)[0]:
                try:
                    seen += os.read(fd, 65536)
                except OSError:
                    break
        assert marker in seen, seen
        out, seen = seen[:seen.index(marker) + len(marker)], seen[seen.index(marker) + len(marker):]
        return out

    try:
        read_until(b">> ")
        os.write(fd, b"ls /image/to\t")
        read_until(b"ls /image/topics/")          # completed, no space after a directory
        os.write(fd, b"byName/o\t")
        read_until(b"orders/")
        os.write(fd, b"\x15ls /image\n")            # ^U: drop the line, then run ls
        # columns for the terminal's width (through a pipe: one name per line)
        assert b"features  provenance  topics" in read_until(b"topics\r\n")
        read_until(b">> ")
        os.write(fd, b"history\n")
        assert read_until(b">> ").replace(b"\r", b"").endswith(
            b"    0  ls /image\n    1  history\n>> ")
        os.write(fd, b"exit\n")
        _, status = os.waitpid(pid, 0)
        assert os.WEXITSTATUS(status) == 0
    finally:
        os.close(fd)
