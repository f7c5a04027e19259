"""The subset of argparse4j 0.7.0 (the version Kafka 4.2 ships) the metadata shell relies on.

The shell's command words and ``kafka-metadata-shell``'s own options are parsed by argparse4j,
and what it prints is part of the shell's behaviour: error messages (``too few arguments``,
``unrecognized arguments: 'x'``, ``invalid choice: 'x' (choose from ...)``, ``argument
numEntriesToShow: could not convert ...``), unique-prefix abbreviations of commands and flags,
and the help and usage screens of ``help``, ``man`` and ``-h`` (laid out at the terminal width
minus 5, 75 by default, with argparse4j's justified wrapping). This module ports those parts of
``ArgumentParserImpl``, ``SubparsersImpl``, ``ArgumentImpl`` and ``TextHelper``: positional
and optional arguments (``store`` and ``help`` actions, ``nargs`` of ``N``, ``?``, ``*``, ``+``,
an ``Integer`` type), sub-commands, ``--``, concatenated short flags and ``--flag=value``.
Left out: argument groups, mutually exclusive groups, choices, ``fromFilePrefix`` and the CJK
width hack (none of them is used by the shell).

>>> p = ArgumentParser("man", add_help=False)
>>> _ = p.add_argument("cmd", nargs=1, help="The command to get help text for.")
>>> print(p.format_help(75), end="")
usage: man cmd
<BLANKLINE>
positional arguments:
  cmd                    The command to get help text for.
>>> p.parse_args(["ls"])
{'cmd': ['ls']}
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Sequence
from typing import IO, Any

from .java_compat import (
    JAVA_DOT,
    JAVA_INT_MAX,
    java_int_value_of,
    java_len,
    java_long_value_of,
    java_string_key,
)

__all__ = [
    "ArgumentParser",
    "Argument",
    "Subparsers",
    "ArgumentParserError",
    "HelpScreenError",
    "UnrecognizedArgumentError",
    "UnrecognizedCommandError",
    "IntegerType",
    "format_width",
    "wrap",
    "DEFAULT_FORMAT_WIDTH",
]

#: ArgumentParsers.DEFAULT_FORMAT_WIDTH
DEFAULT_FORMAT_WIDTH = 75
_INDENT_WIDTH = 25  # TextHelper.printHelp's help column
_NEG_NUM = re.compile(r"-[0-9]+")  # Java's \d is ASCII-only without UNICODE_CHARACTER_CLASS
_SHORT_OPTS = re.compile(f"-[^-]{JAVA_DOT}*")
_PREFIX = re.compile(r"-+")  # PrefixPattern("-"): ^[-]+
_SEGMENT = re.compile(r"[^ \n]*[ ]*\n?")


class ArgumentParserError(Exception):
    """``ArgumentParserException``: ``str(e)`` is the message Kafka's shell prints.

    With ``arg``, the message reads ``argument <name>: <message>`` as argparse4j formats it.
    """

    def __init__(self, message: str, parser: ArgumentParser, arg: Argument | None = None
                 ) -> None:
        if arg is not None:
            message = f"argument {arg.textual_name()}: {message}"
        super().__init__(message)
        self.message = message
        self.parser = parser


class HelpScreenError(ArgumentParserError):
    """``-h``/``--help`` was given: the help screen has been printed."""

    def __init__(self, parser: ArgumentParser) -> None:
        super().__init__("", parser)


class UnrecognizedArgumentError(ArgumentParserError):
    """An unknown flag (``argument`` is the flag as typed)."""

    def __init__(self, message: str, parser: ArgumentParser, argument: str) -> None:
        super().__init__(message, parser)
        self.argument = argument


class UnrecognizedCommandError(ArgumentParserError):
    """An unknown sub-command (``command`` as typed)."""

    def __init__(self, message: str, parser: ArgumentParser, command: str) -> None:
        super().__init__(message, parser)
        self.command = command


class IntegerType:
    """``type(Integer.class)``: ``Integer.valueOf``; a bad value reads ``could not convert 'x'
    to Integer (For input string: "x")``."""

    simple_name = "Integer"

    def __call__(self, value: str) -> int:
        return java_int_value_of(value)


class LongType:
    """``type(Long.class)``: ``Long.valueOf``."""

    simple_name = "Long"

    def __call__(self, value: str) -> int:
        return java_long_value_of(value)


def format_width() -> int:
    """``ArgumentParsers.getFormatWidth()``: the terminal's width minus 5, else 75.

    argparse4j reads ``$COLUMNS`` (an unparsable value counts as unknown), else the controlling
    terminal's size (``stty -a < /dev/tty``), so a piped run still gets the terminal's width.
    """
    columns = os.environ.get("COLUMNS")
    width = -1
    if columns is not None:
        try:
            width = java_int_value_of(columns)
        except ValueError:
            width = -1
    else:
        try:
            fd = os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY)
        except OSError:
            fd = -1
        if fd >= 0:
            try:
                width = os.get_terminal_size(fd).columns
            except OSError:
                width = -1
            finally:
                os.close(fd)
    w = width - 5
    return DEFAULT_FORMAT_WIDTH if w <= 0 else w


def _segments(s: str) -> list[str]:
    # Java's line BreakIterator, for the texts the shell wraps: a break after each run of
    # spaces and after a newline (hyphen and punctuation breaks are not modelled)
    return [m.group(0) for m in _SEGMENT.finditer(s) if m.group(0)]


def _adjust_space(sb: str, width: int, curwidth: int) -> str:
    """TextHelper.adjustSpace: strip the line, then spread the missing width over its blocks of
    spaces (one extra space to the middle blocks when it does not divide)."""
    orig_len = len(sb)
    s = sb.lstrip(" ").rstrip(" ")
    curwidth -= orig_len - len(s)
    blocks = len(re.findall(r" +", s))
    if blocks == 0:
        return s
    need = width - curwidth
    each = int(need / blocks)  # Java's int division truncates toward zero
    rem = need - each * blocks
    rem_start = int((blocks - rem + 1) / 2)
    rem_end = rem_start + rem
    out: list[str] = []
    b = 0
    in_block = False
    for c in s:
        if c == " ":
            if not in_block:
                in_block = True
                out.append(" " * (each + (1 if rem_start <= b < rem_end else 0)))
                b += 1
        else:
            in_block = False
        out.append(c)
    return "".join(out)


def wrap(s: str, width: int, initial_offset: int = 0, initial_indent: str = "",
         subsequent_indent: str = "") -> str:
    """``TextHelper.wrap``: fill ``s`` to ``width`` columns, justifying every full line.

    >>> wrap("Show the contents of metadata nodes in a tree structure.", 75, 25, "", " " * 25)
    'Show the contents  of  metadata  nodes  in  a tree\\n                         structure.'
    """
    res = [initial_indent]
    sb = ""
    current = initial_offset + len(initial_indent)
    for sub in _segments(s):
        w = java_len(sub)
        current += w
        if current > width:
            res.append(_adjust_space(sb, width, current - w))
            res.append("\n" + subsequent_indent)
            sb = ""
            current = len(subsequent_indent) + w
        sb += sub
        if sub.endswith("\n"):
            res.append(sb + subsequent_indent)
            sb = ""
            current = len(subsequent_indent)
    res.append(sb)
    return "".join(res)


def _print_help_line(out: list[str], title: str, help_text: str, width: int) -> None:
    """TextHelper.printHelp: ``  title``, the help text from column 25 (title on its own line
    when it is wider than 21)."""
    out.append("  " + title)
    if help_text:
        indent = _INDENT_WIDTH
        title_width = java_len(title)
        if title_width <= 21:
            indent -= title_width + 2
        else:
            out.append("\n")
        out.append(" " * indent)
        out.append(wrap(help_text, width, _INDENT_WIDTH, "", " " * _INDENT_WIDTH) + "\n")
    else:
        out.append("\n")


def _prefix_match(term: str) -> bool:
    m = _PREFIX.match(term)
    return m is not None and m.group(0) != term


def _match_long_flag(term: str) -> bool:
    m = _PREFIX.match(term)
    return m is not None and m.group(0) != term and len(m.group(0)) >= 2


def _match_short_flag(term: str) -> bool:
    m = _PREFIX.match(term)
    return m is not None and m.group(0) != term and len(m.group(0)) == 1


def _remove_prefix(term: str) -> str:
    m = _PREFIX.match(term)
    return term[m.end():] if m is not None and m.group(0) != term else term


class Argument:
    """One argument (``ArgumentImpl``): a positional ``name`` or optional ``flags``."""

    def __init__(self, name_or_flags: Sequence[str], *, nargs: int | str | None = None,
                 type: Callable[[str], Any] | None = None, help: str = "",
                 required: bool = False, action: str = "store", default: Any = None,
                 metavar: str | None = None) -> None:
        if not name_or_flags:
            raise ValueError("no nameOrFlags was specified")
        self.name: str | None = None
        self.flags: list[str] = []
        if len(name_or_flags) == 1 and not _prefix_match(name_or_flags[0]):
            self.name = name_or_flags[0]
            self.dest = self.name.replace("-", "_")
        else:
            self.flags = list(name_or_flags)
            dest: str | None = None
            for flag in self.flags:
                if dest is None:
                    dest = flag
                    if _match_long_flag(flag):
                        break
                elif _match_long_flag(flag):
                    dest = flag
                    break
            self.dest = _remove_prefix(dest or "").replace("-", "_")
        self.type = type
        self.help = help
        self.required = required
        self.action = action
        self.default = default
        self.metavar = metavar
        self.min_num_arg, self.max_num_arg = -1, -1
        if isinstance(nargs, int):
            if nargs <= 0:
                raise ValueError("nargs must be positive integer")
            self.min_num_arg = self.max_num_arg = nargs
        elif nargs == "*":
            self.min_num_arg, self.max_num_arg = 0, JAVA_INT_MAX
        elif nargs == "+":
            self.min_num_arg, self.max_num_arg = 1, JAVA_INT_MAX
        elif nargs == "?":
            self.min_num_arg, self.max_num_arg = 0, 1
        elif nargs is not None:
            raise ValueError("narg expects positive integer or one of '*', '+' or '?'")

    def is_optional_argument(self) -> bool:
        return self.name is None

    def consume_argument(self) -> bool:
        return self.action != "help"

    def textual_name(self) -> str:
        return "/".join(self.flags) if self.name is None else self.name

    def _resolve_metavar(self) -> str:
        if self.metavar is not None:
            return self.metavar
        return self.dest.upper() if self.is_optional_argument() else self.dest

    def format_metavar(self) -> str:
        if not self.consume_argument():
            return ""
        mv = self._resolve_metavar()
        lo, hi = self.min_num_arg, self.max_num_arg
        if lo == 0 and hi == 1:
            return f"[{mv}]"
        if lo == 0 and hi == JAVA_INT_MAX:
            return f"[{mv} [{mv} ...]]"
        if lo == 1 and hi == JAVA_INT_MAX:
            return f"{mv} [{mv} ...]"
        if lo == -1:
            return mv
        if lo > 0 and lo == hi:
            return " ".join([mv] * lo)
        return ""

    def format_short_syntax(self) -> str:
        """As in a usage line: ``[--foo FOO]``, ``--bar BAR`` (required), ``[x [x ...]]``."""
        if self.name is not None:
            return self.format_metavar()
        mv = self.format_metavar()
        text = self.flags[0] + (" " + mv if mv else "")
        return text if self.required else f"[{text}]"

    def _help_title(self) -> str:
        if self.is_optional_argument():
            mv = self.format_metavar()
            # ArgumentParsers.singleMetavar is false: every flag shows the metavar
            return ", ".join(f + (" " + mv if mv else "") for f in self.flags)
        return self._resolve_metavar()

    def print_help(self, out: list[str], default_help: bool, width: int) -> None:
        help_text = self.help
        if default_help and self.default is not None:
            help_text += (" " if help_text else "") + f"(default: {self.default})"
        _print_help_line(out, self._help_title(), help_text, width)

    def convert(self, parser: ArgumentParser, value: str) -> Any:
        if self.type is None:
            return value
        try:
            return self.type(value)
        except ValueError as e:
            name = getattr(self.type, "simple_name", getattr(self.type, "__name__", "?"))
            raise ArgumentParserError(
                f"could not convert '{value}' to {name} ({e})", parser, self) from None

    def get_default(self) -> Any:
        # a positional taking many values defaults to an empty list
        if self.name is not None and self.default is None and self.max_num_arg > 1:
            return []
        return self.default

    def run(self, parser: ArgumentParser, attrs: dict[str, Any], value: Any,
            state: _ParseState) -> None:
        if self.action == "help":
            parser.print_help(state.help_out if state.help_out is not None else sys.stdout)
            raise HelpScreenError(parser)
        attrs[self.dest] = value


class _ParseState:
    def __init__(self, args: Sequence[str], neg_num_flag: bool, help_out: IO[str] | None
                 ) -> None:
        self.args = list(args)
        self.index = 0
        self.consumed_separator = False
        self.neg_num_flag = neg_num_flag
        self.deferred: ArgumentParserError | None = None
        self.posarg_index = 0
        self.posarg_consumed = 0
        self.posarg_args: list[str] = []
        self.help_out = help_out

    @property
    def arg(self) -> str:
        return self.args[self.index]

    def is_arg_avail(self) -> bool:
        return self.index < len(self.args)

    def reset_posargs(self) -> None:
        self.posarg_index = 0
        self.posarg_consumed = 0
        self.posarg_args.clear()


class Subparsers:
    """``SubparsersImpl``: the sub-commands of a parser, in the order they were added."""

    def __init__(self, main_parser: ArgumentParser) -> None:
        self._main = main_parser
        self.parsers: dict[str, ArgumentParser] = {}
        self.dest = ""
        self.help = ""

    def add_parser(self, command: str, *, help: str = "", add_help: bool = True
                   ) -> ArgumentParser:
        if not command:
            raise ValueError("command cannot be null or empty")
        if command in self.parsers:
            raise ValueError(f"command '{command}' has been already used")
        parser = ArgumentParser(self._main.prog, add_help, command=command,
                                main_parser=self._main)
        parser.subparser_help = help
        self.parsers[command] = parser
        return parser

    def has_sub_command(self) -> bool:
        return bool(self.parsers)

    def _resolve(self, command: str) -> ArgumentParser | None:
        if not command:
            return None
        parser = self.parsers.get(command)
        if parser is None:
            cand = [c for c in self.parsers if c.startswith(command)]
            if len(cand) == 1:
                parser = self.parsers[cand[0]]
            elif len(cand) > 1:
                cand.sort(key=java_string_key)
                raise ArgumentParserError(
                    f"ambiguous command: {command} could match {', '.join(cand)}", self._main)
        return parser

    def _parse_arg(self, state: _ParseState, attrs: dict[str, Any]) -> None:
        parser = self._resolve(state.arg)
        if parser is None:
            choices = ", ".join(f"'{c}'" for c in self.parsers)
            raise UnrecognizedCommandError(
                f"invalid choice: '{state.arg}' (choose from {choices})", self._main, state.arg)
        state.index += 1
        parser._parse_state(state, attrs)
        if self.dest:
            attrs[self.dest] = parser.command

    def format_short_syntax(self) -> str:
        return "{" + ",".join(self.parsers) + "}"

    def print_subparser_help(self, out: list[str], width: int) -> None:
        _print_help_line(out, self.format_short_syntax(), self.help, width)
        for command, parser in self.parsers.items():
            if parser.subparser_help:
                _print_help_line(out, "  " + command, parser.subparser_help, width)


class ArgumentParser:
    """``ArgumentParsers.newArgumentParser(prog, addHelp)`` (and a sub-command's parser).

    ``parse_args`` returns the namespace as a dict; errors raise :class:`ArgumentParserError`
    (``-h`` prints the help screen to ``help_out``, stdout by default, then raises
    :class:`HelpScreenError`, as argparse4j's help action does).
    """

    def __init__(self, prog: str = "", add_help: bool = True, *, description: str = "",
                 default_help: bool = False, command: str | None = None,
                 main_parser: ArgumentParser | None = None) -> None:
        self.prog = prog
        self.description = description
        self.default_help = default_help
        self.command = command
        self.main_parser = main_parser
        self.subparser_help = ""
        self._optargs: list[Argument] = []
        self._optarg_index: dict[str, Argument] = {}
        self._posargs: list[Argument] = []
        self._subparsers = Subparsers(self)
        self._neg_num_flag = False
        if add_help:
            self.add_argument("-h", "--help", action="help",
                              help="show this help message and exit")

    def add_argument(self, *name_or_flags: str, **kwargs: Any) -> Argument:
        """``addArgument(...)``: keyword arguments are :class:`Argument`'s."""
        arg = Argument(name_or_flags, **kwargs)
        if arg.is_optional_argument():
            for flag in arg.flags:
                other = self._optarg_index.get(flag)
                if other is not None:
                    raise ValueError(f"argument {flag}: conflicting option string(s): "
                                     f"{other.textual_name()}")
            for flag in arg.flags:
                if _NEG_NUM.fullmatch(flag):
                    self._neg_num_flag = True
                self._optarg_index[flag] = arg
            self._optargs.append(arg)
        else:
            for other in self._posargs:
                if other.name == arg.name:
                    raise ValueError(f"argument {arg.name}: conflicting option string(s): "
                                     f"{other.textual_name()}")
            self._posargs.append(arg)
        return arg

    def add_subparsers(self, dest: str = "") -> Subparsers:
        self._subparsers.dest = dest
        return self._subparsers

    # ----------------------------------------------------------------------------- help

    def format_usage(self, width: int | None = None) -> str:
        """``printUsage``: ``usage: prog [opts] ...`` wrapped at ``width``."""
        width = format_width() if width is None else width
        out: list[str] = []
        usageprog = "usage: " + self.prog
        out.append(usageprog)
        indent = " " * 30
        if java_len(usageprog) > len(indent):
            out.append("\n")
            offset = 6
            first_indent = subsequent_indent = indent[:offset]
        else:
            offset = java_len(usageprog)
            first_indent, subsequent_indent = "", indent[:offset]
        opts: list[str] = []
        self._add_upper_parser_usage(opts, self.main_parser)
        if self.command is not None:
            opts.append(self.command)
        opts += [a.format_short_syntax() for a in self._optargs]
        opts += [a.format_short_syntax() for a in self._posargs]
        if self._subparsers.has_sub_command():
            opts += [self._subparsers.format_short_syntax(), "..."]
        current = offset + len(first_indent)
        out.append(first_indent)
        first = True
        for syntax in opts:
            if not first and current + len(syntax) + 1 > width:
                out.append("\n" + subsequent_indent + " " + syntax)
                current = len(subsequent_indent) + 1 + len(syntax)
            else:
                out.append(" " + syntax)
                current += 1 + len(syntax)
                first = False
        out.append("\n")
        return "".join(out)

    @staticmethod
    def _add_upper_parser_usage(opts: list[str], parser: ArgumentParser | None) -> None:
        # the parent parsers' command, required flags and positionals, outermost first
        if parser is None:
            return
        ArgumentParser._add_upper_parser_usage(opts, parser.main_parser)
        if parser.command is not None:
            opts.append(parser.command)
        opts += [a.format_short_syntax() for a in parser._optargs if a.required]
        opts += [a.format_short_syntax() for a in parser._posargs]

    def format_help(self, width: int | None = None) -> str:
        """``printHelp``: usage, description, positional and optional arguments."""
        width = format_width() if width is None else width
        out = [self.format_usage(width)]
        if self.description:
            out.append("\n" + wrap(self.description, width) + "\n")
        has_sub = self._subparsers.has_sub_command()
        if self._posargs or has_sub:
            out.append("\npositional arguments:\n")
            for arg in self._posargs:
                arg.print_help(out, self.default_help, width)
            if has_sub:
                self._subparsers.print_subparser_help(out, width)
        if self._optargs:
            out.append("\noptional arguments:\n")
            for arg in self._optargs:
                arg.print_help(out, self.default_help, width)
        return "".join(out)

    def print_help(self, out: IO[str], width: int | None = None) -> None:
        out.write(self.format_help(width))

    def handle_error(self, e: ArgumentParserError, err: IO[str], width: int | None = None
                     ) -> None:
        """``handleError``: usage and ``prog: error: message`` (plus ``Did you mean:``
        candidates for an unknown flag or command); nothing for a help screen."""
        if e.parser is not self:
            e.parser.handle_error(e, err, width)
            return
        if isinstance(e, HelpScreenError):
            return
        width = format_width() if width is None else width
        out = [self.format_usage(width),
               wrap(f"{self.prog}: error: {e.message}\n", width)]
        if isinstance(e, UnrecognizedArgumentError):
            if _prefix_match(e.argument):
                body = _remove_prefix(e.argument)
                if len(body) >= 2:
                    subjects = [(f, _remove_prefix(f)) for a in self._optargs for f in a.flags
                                if len(_remove_prefix(f)) > 1]
                    out.append(_candidates(body, subjects))
        elif isinstance(e, UnrecognizedCommandError):
            out.append(_candidates(e.command, [(c, c) for c in self._subparsers.parsers]))
        err.write("".join(out))
        err.flush()

    # ----------------------------------------------------------------------------- parsing

    def parse_args(self, args: Sequence[str], *, help_out: IO[str] | None = None
                   ) -> dict[str, Any]:
        """Parse ``args``; the namespace as a dict (``{"targets": [...], "command": "ls"}``)."""
        attrs: dict[str, Any] = {}
        state = _ParseState(args, self._neg_num_flag, help_out)
        self._parse_state(state, attrs)
        if state.deferred is not None:
            raise state.deferred
        return attrs

    def _flag_found(self, state: _ParseState) -> bool:
        term = state.arg
        if state.consumed_separator:
            return False
        if term == "--":
            return True
        return _prefix_match(term) and (state.neg_num_flag or not _NEG_NUM.fullmatch(term))

    def _check_concatenated_short_opts(self, term: str) -> bool:
        if not _SHORT_OPTS.fullmatch(term):
            return False
        for c in term[1:]:
            arg = self._optarg_index.get("-" + c)
            if arg is None:
                return False
            if arg.consume_argument():
                return True
        return True

    def _resolve_next_flag(self, flag: str) -> Argument | None:
        arg = self._optarg_index.get(flag)
        if arg is not None:
            return arg
        cand = [f for f in self._optarg_index if f.startswith(flag)]
        if not cand:
            return None
        if self._check_concatenated_short_opts(flag):
            cand.append(flag[:2])
        elif len(cand) == 1:
            return self._optarg_index[cand[0]]
        cand.sort(key=java_string_key)
        raise ArgumentParserError(f"ambiguous option: {flag} could match {', '.join(cand)}",
                                  self)

    def _populate_defaults(self, attrs: dict[str, Any]) -> None:
        for arg in (*self._posargs, *self._optargs):
            if arg.action != "help":  # the help flag's default is SUPPRESS
                attrs[arg.dest] = arg.get_default()

    def _parse_state(self, state: _ParseState, attrs: dict[str, Any]) -> None:
        self._populate_defaults(attrs)
        used: set[int] = set()
        while state.is_arg_avail():
            if self._flag_found(state) and state.arg != "--":
                term = state.arg
                p = term.find("=")
                flag, embedded = (term, None) if p == -1 else (term[:p], term[p + 1:])
                arg = self._resolve_next_flag(flag)
                if arg is None:
                    embedded = None
                    short_found = False
                    if _match_short_flag(term):
                        # possibly concatenated short flags: -abc, -sVALUE
                        short_found = True
                        for i in range(1, len(term)):
                            short_flag = term[0] + term[i]
                            arg = self._optarg_index.get(short_flag)
                            if arg is None:
                                short_found = False
                                break
                            if arg.consume_argument():
                                flag = short_flag
                                if len(term) > i + 1:
                                    embedded = term[i + 1:]
                                break
                            arg.run(self, attrs, None, state)
                            used.add(id(arg))
                            arg = None
                    if not short_found:
                        raise UnrecognizedArgumentError(
                            f"unrecognized arguments: '{term}'", self, term)
                state.index += 1
                if arg is not None:
                    self._process_arg(attrs, state, arg, embedded)
                    used.add(id(arg))
            elif state.arg == "--" and not state.consumed_separator:
                state.consumed_separator = True
                state.neg_num_flag = False
                state.index += 1
            elif state.posarg_index < len(self._posargs):
                self._accumulate_positional_arg(state, self._posargs[state.posarg_index])
            elif not state.consumed_separator and self._subparsers.has_sub_command():
                self._process_positional_args(attrs, state)
                self._check_required_arguments(state, used)
                state.reset_posargs()
                self._subparsers._parse_arg(state, attrs)
                return
            else:
                rest = " ".join(state.args[state.index:])
                raise ArgumentParserError(f"unrecognized arguments: '{rest}'", self)
        if self._subparsers.has_sub_command():
            raise ArgumentParserError("too few arguments", self)
        self._process_positional_args(attrs, state)
        self._check_required_arguments(state, used)

    def _process_arg(self, attrs: dict[str, Any], state: _ParseState, arg: Argument,
                     embedded: str | None) -> None:
        if not arg.consume_argument():
            if embedded is None:
                arg.run(self, attrs, None, state)
                return
            raise ArgumentParserError(f"ignore implicit argument '{embedded}'", self, arg)
        if arg.min_num_arg == -1 or (arg.min_num_arg == 0 and arg.max_num_arg == 1):
            value: str | None = embedded
            if embedded is None and state.is_arg_avail() and not self._flag_found(state):
                value = state.arg
                state.index += 1
            if value is None:
                if arg.min_num_arg == -1:
                    raise ArgumentParserError("expected one argument", self, arg)
                arg.run(self, attrs, None, state)  # nargs("?") without a value: the const
            else:
                arg.run(self, attrs, arg.convert(self, value), state)
            return
        values: list[Any] = []
        if embedded is None:
            while len(values) < arg.max_num_arg and state.is_arg_avail():
                if self._flag_found(state):
                    break
                values.append(arg.convert(self, state.arg))
                state.index += 1
        else:
            values.append(arg.convert(self, embedded))
        if len(values) < arg.min_num_arg:
            raise ArgumentParserError(f"expected {arg.min_num_arg} argument(s)", self, arg)
        arg.run(self, attrs, values, state)

    def _accumulate_positional_arg(self, state: _ParseState, arg: Argument) -> None:
        if not arg.consume_argument():
            state.posarg_index += 1
            return
        if arg.min_num_arg == -1 or (arg.min_num_arg == 0 and arg.max_num_arg == 1):
            state.posarg_args.append(state.arg)
            state.index += 1
            state.posarg_index += 1
            return
        while state.posarg_consumed < arg.max_num_arg and state.is_arg_avail():
            if self._flag_found(state):
                break
            state.posarg_args.append(state.arg)
            state.posarg_consumed += 1
            state.index += 1
        if state.posarg_consumed == arg.max_num_arg:
            state.posarg_index += 1
            state.posarg_consumed = 0

    def _process_positional_args(self, attrs: dict[str, Any], state: _ParseState) -> None:
        # how many values must be left for the positionals after each one
        must_left = [0] * (len(self._posargs) + 1)
        for i, arg in enumerate(self._posargs):
            if not arg.consume_argument():
                must_left[i] = 0
            elif arg.min_num_arg == -1:
                must_left[i] = 1
            else:
                must_left[i] = arg.min_num_arg
        for i in range(len(self._posargs) - 1, -1, -1):
            must_left[i] += must_left[i + 1]
        values = state.posarg_args
        if must_left[0] > len(values):
            raise ArgumentParserError("too few arguments", self)
        k = 0
        for i, arg in enumerate(self._posargs):
            if not arg.consume_argument():
                arg.run(self, attrs, None, state)
            elif arg.min_num_arg == -1:
                arg.run(self, attrs, arg.convert(self, values[k]), state)
                k += 1
            elif arg.min_num_arg == 0 and arg.max_num_arg == 1:
                if must_left[i + 1] == len(values) - k:
                    continue  # its value is needed by the positionals after it
                arg.run(self, attrs, arg.convert(self, values[k]), state)
                k += 1
            else:
                n = min(arg.max_num_arg, len(values) - k - must_left[i + 1])
                if n == 0:
                    continue  # nothing given: keep the default
                arg.run(self, attrs, [arg.convert(self, v) for v in values[k:k + n]], state)
                k += n

    def _check_required_arguments(self, state: _ParseState, used: set[int]) -> None:
        if state.deferred is not None:
            return
        for arg in self._optargs:
            if arg.required and id(arg) not in used:
                # deferred: reported only when nothing else failed
                state.deferred = ArgumentParserError(
                    f"argument {arg.textual_name()} is required", self)


def _levenshtein(a: str, b: str, swap: int, sub: int, add: int, delete: int) -> int:
    """argparse4j's Damerau-Levenshtein distance (git's costs)."""
    prev2 = [0] * (len(b) + 1)
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cur[j] = prev[j - 1] + (0 if a[i - 1] == b[j - 1] else sub)
            if (i >= 2 and j >= 2 and a[i - 1] != b[j - 1] and a[i - 2] == b[j - 1]
                    and a[i - 1] == b[j - 2]):
                cur[j] = min(cur[j], prev2[j - 2] + swap)
            cur[j] = min(cur[j], prev[j] + delete, cur[j - 1] + add)
        prev2, prev = prev, cur
    return prev[len(b)]


def _candidates(body: str, subjects: list[tuple[str, str]]) -> str:
    """``printCandidates``: the closest subjects (a prefix match is distance 0), if any is
    closer than 7."""
    cands = sorted(
        ((0 if s_body.startswith(body) else _levenshtein(body, s_body, 0, 2, 1, 4), subject)
         for subject, s_body in subjects),
        key=lambda c: (c[0], java_string_key(c[1])))
    if not cands or cands[0][0] >= 7:
        return ""
    threshold = cands[0][0]
    return "\nDid you mean:\n" + "".join(f"\t{s}\n" for d, s in cands if d <= threshold)
