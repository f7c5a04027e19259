"""Kafka's ``LineMessageReader``: each line of the input is one record, with optional headers
and key in front of the value.

Source: ``tools/src/main/java/org/apache/kafka/tools/LineMessageReader.java`` (Kafka 4.2);
the cases of its ``LineMessageReaderTest.java`` are ported in ``tests/test_console_producer.py``.

Properties (:meth:`LineMessageReader.configure`; ``topic`` is set by the producer):

=========================  ======================================================  ==========
``parse.key``              a key is on the line, before ``key.separator``           ``false``
``key.separator``          between the key and the value                            tab
``parse.headers``          headers are on the line, before ``headers.delimiter``    ``false``
``headers.delimiter``      between the headers and the key (or value)               tab
``headers.separator``      between headers: a Java regular expression               ``,``
``headers.key.separator``  between a header's key and its value                     ``:``
``null.marker``            a key, value or header value equal to it is null         (none)
``ignore.error``           a line without a separator is read without that part     ``false``
=========================  ======================================================  ==========

A line is ``h1:v1,h2:v2<TAB>key<TAB>value`` with both enabled. The input is bytes; it is read
as Kafka reads it, as UTF-8 text (malformed bytes become U+FFFD, as Java's decoder replaces
them) split into lines by Java's ``BufferedReader.readLine`` (``\\n``, ``\\r\\n`` or a lone
``\\r``); the key, value and header values are the UTF-8 bytes of their text.

Errors have Kafka's texts: a bad configuration at :meth:`~LineMessageReader.configure`, a bad
line when its record is read (the iterator stays usable: the next line is read next, as Kafka's
does). With ``ignore.error=true`` a missing headers delimiter or key separator leaves that part
out, and a header without its key separator gets a null value; a header key equal to the null
marker is an error even then.

>>> import io
>>> reader = LineMessageReader()
>>> reader.configure({"topic": "t", "parse.key": "true", "parse.headers": "true"})
>>> [tuple(r) for r in reader.read_records(io.BytesIO(b"h:1\\tk\\tv\\n"))]
[('t', b'k', b'v', (Header(key='h', value=b'1'),))]
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import IO, NamedTuple

from ..java_utf8 import JAVA_REPLACE
from ..records.record import Header
from ..usage import java_trim

__all__ = ["LineMessageReader", "LineReaderError", "ProducerRecord", "read_lines"]

#: the class name Kafka's tool is given with ``--line-reader`` for this reader
LINE_MESSAGE_READER_CLASS = "org.apache.kafka.tools.LineMessageReader"


class LineReaderError(ValueError):
    """A bad reader configuration or input line; the message is Kafka's text, ``java_class``
    the exception Kafka throws (``KafkaException`` unless said otherwise)."""

    def __init__(self, message: str,
                 java_class: str = "org.apache.kafka.common.KafkaException") -> None:
        super().__init__(message)
        self.java_class = java_class


class ProducerRecord(NamedTuple):
    """One record read: Kafka's ``ProducerRecord<byte[], byte[]>`` without partition and
    timestamp (the console producer sets neither: the producer picks both)."""

    topic: str
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...] = ()


def _is_true(value: object) -> bool:
    return java_trim(str(value)).lower() == "true"


def _java_pattern_split(pattern: re.Pattern[str], text: str) -> list[str]:
    """``Pattern.split(text)`` (limit 0): no leading empty string for a zero-width match at the
    start, the input itself when nothing matched, trailing empty strings dropped."""
    index = 0
    parts: list[str] = []
    for m in pattern.finditer(text):
        if index == 0 and m.start() == 0 and m.end() == 0:
            continue
        parts.append(text[index:m.start()])
        index = m.end()
    if index == 0:
        return [text]
    parts.append(text[index:])
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def read_lines(stream: IO[bytes]) -> Iterator[bytes]:
    """The lines of ``stream`` as Java's ``BufferedReader.readLine`` splits them: ended by
    ``\\n``, ``\\r\\n`` or a lone ``\\r`` (terminator removed); a last line without a
    terminator is a line, an empty input has none. Read one line at a time (interactive use).

    >>> import io
    >>> list(read_lines(io.BytesIO(b"a\\r\\nb\\rc\\n\\nd")))
    [b'a', b'b', b'c', b'', b'd']
    """
    while True:
        chunk = stream.readline()
        if not chunk:
            return
        # readline() stops after "\n": a chunk holds one "\n"-ended line, in which any "\r"
        # ends a line as well ("\r\n" being one terminator)
        if chunk.endswith(b"\n"):
            body = chunk[:-1]
            if body.endswith(b"\r"):
                body = body[:-1]
            yield from body.split(b"\r")
        else:  # the end of the input: a trailing "\r" ends the last line, adding none
            pieces = chunk.split(b"\r")
            if chunk.endswith(b"\r"):
                pieces.pop()
            yield from pieces


class LineMessageReader:
    """Kafka's ``LineMessageReader`` (see the module docstring). Configure once, then read."""

    def __init__(self) -> None:
        self.topic = ""
        self.parse_key = False
        self.key_separator = "\t"
        self.parse_headers = False
        self.headers_delimiter = "\t"
        self.headers_separator = ","
        self.headers_key_separator = ":"
        self.ignore_error = False
        self.null_marker: str | None = None
        self.line_number = 0
        self._headers_separator_pattern = re.compile(",")

    def configure(self, props: Mapping[str, object]) -> None:
        """Read the properties (Kafka's ``configure``; ``topic`` must be present).

        Raises
        ------
        LineReaderError
            Two demarcations equal, or the null marker equal to one (Kafka's texts), or a
            ``headers.separator`` that is not a regular expression.
        """
        self.topic = str(props["topic"])
        if "parse.key" in props:
            self.parse_key = _is_true(props["parse.key"])
        if "key.separator" in props:
            self.key_separator = str(props["key.separator"])
        if "parse.headers" in props:
            self.parse_headers = _is_true(props["parse.headers"])
        if "headers.delimiter" in props:
            self.headers_delimiter = str(props["headers.delimiter"])
        if "headers.separator" in props:
            self.headers_separator = str(props["headers.separator"])
        try:
            self._headers_separator_pattern = re.compile(self.headers_separator)
        except re.error as e:
            raise LineReaderError(f"{e} near index {e.pos}: {self.headers_separator}",
                                  "java.util.regex.PatternSyntaxException") from e
        if "headers.key.separator" in props:
            self.headers_key_separator = str(props["headers.key.separator"])
        if "ignore.error" in props:
            self.ignore_error = _is_true(props["ignore.error"])
        if self.headers_delimiter == self.headers_separator:
            raise LineReaderError("headers.delimiter and headers.separator may not be equal")
        if self.headers_delimiter == self.headers_key_separator:
            raise LineReaderError("headers.delimiter and headers.key.separator may not be equal")
        if self.headers_separator == self.headers_key_separator:
            raise LineReaderError("headers.separator and headers.key.separator may not be equal")
        if "null.marker" in props:
            self.null_marker = str(props["null.marker"])
        for name, demarcation in (("key.separator", self.key_separator),
                                  ("headers.separator", self.headers_separator),
                                  ("headers.delimiter", self.headers_delimiter),
                                  ("headers.key.separator", self.headers_key_separator)):
            if demarcation == self.null_marker:
                raise LineReaderError(f"null.marker and {name} may not be equal")

    def read_records(self, stream: IO[bytes], prompt: IO[str] | None = None
                     ) -> Iterator[ProducerRecord]:
        """The records of ``stream``, one per line. ``prompt``: where to write Kafka's ``>``
        before each line is read (Kafka does when it runs on a terminal).

        The iterator raises :class:`LineReaderError` for a bad line and can then go on with
        the next line."""
        return _RecordIterator(self, read_lines(stream), prompt)

    def read_record_blocks(self, stream: IO[bytes], block_size: int = 1 << 20
                           ) -> Iterator[list[ProducerRecord]]:
        """The records of ``stream`` as :meth:`read_records` reads them, a list at a time: the
        lines of up to ``block_size`` bytes read at once (what is available of a pipe:
        ``read1``), for input that is not typed at a prompt. Lines, line numbers, texts and
        errors are :meth:`read_records`'; a bad line ends the iteration: the records before
        it are yielded first, then its :class:`LineReaderError` is raised.

        >>> import io
        >>> reader = LineMessageReader()
        >>> reader.configure({"topic": "t", "parse.key": "true"})
        >>> [[r.key for r in b] for b in reader.read_record_blocks(io.BytesIO(b"a\\tx\\nb\\ty"))]
        [[b'a'], [b'b']]
        """
        read = getattr(stream, "read1", None) or stream.read
        # the bytes after the last "\n" read so far, kept as read (a long line arriving in many
        # reads is joined once, not copied again at every read)
        pending: list[bytes] = []
        while True:
            chunk = read(block_size)
            if not chunk:
                break
            # whole lines only: up to the last "\n" (a "\r" at the end may be the first half
            # of a "\r\n" still to come)
            cut = chunk.rfind(b"\n") + 1
            if not cut:
                pending.append(chunk)
                continue
            head = chunk if cut == len(chunk) else chunk[:cut]
            data = b"".join([*pending, head]) if pending else head
            pending = [chunk[cut:]] if cut < len(chunk) else []
            yield from self._records_or_error(data, final=False)
        if pending:
            yield from self._records_or_error(b"".join(pending), final=True)
        self.line_number += 1  # (the read that found the end, as read_records counts it)

    def _records_or_error(self, data: bytes, final: bool) -> Iterator[list[ProducerRecord]]:
        try:
            yield self._parse_block(data, final)
        except _BlockError as e:
            if e.records:
                yield e.records
            raise e.error from None

    def _parse_block(self, data: bytes, final: bool) -> list[ProducerRecord]:
        """The records of whole lines: ``data`` ends with ``\\n`` unless ``final`` (the last
        line of the input, unterminated)."""
        lines = data.split(b"\n")
        if not final:
            lines.pop()  # (the empty piece after the last "\n")
        if b"\r" in data:
            # read_lines' rule: "\r\n" or a lone "\r" ends a line too
            split: list[bytes] = []
            last = len(lines) - 1
            for i, line in enumerate(lines):
                if final and i == last:
                    pieces = line.split(b"\r")
                    if line.endswith(b"\r"):
                        pieces.pop()
                    split += pieces
                else:
                    split += (line[:-1] if line.endswith(b"\r") else line).split(b"\r")
            lines = split
        try:
            data.decode("utf-8")
            valid = True
        except UnicodeDecodeError:
            valid = False
        out: list[ProducerRecord] = []
        sep = self.key_separator.encode("utf-8")
        if not valid or self.parse_headers or (self.parse_key and not sep):
            # decoded line by line (malformed bytes become U+FFFD, as Java's reader does)
            for line in lines:
                self.line_number += 1
                try:
                    out.append(self.parse_line(line.decode("utf-8", errors=JAVA_REPLACE)))
                except LineReaderError as e:
                    raise _BlockError(out, e) from None
            return out
        # valid UTF-8: its text's separators and markers are found in its bytes, and the
        # text's key and value encode back to the same bytes
        topic = self.topic
        marker = None if self.null_marker is None else self.null_marker.encode("utf-8")
        parse_key = self.parse_key
        for line in lines:
            self.line_number += 1
            key = None
            value: bytes | None = line
            if parse_key:
                k, found, v = line.partition(sep)
                if found:
                    key, value = k, v
                elif not self.ignore_error:
                    try:
                        self.parse_line(line.decode("utf-8"))  # (raises with Kafka's text)
                    except LineReaderError as e:
                        raise _BlockError(out, e) from None
            if marker is not None:
                if key == marker:
                    key = None
                if value == marker:
                    value = None
            out.append(ProducerRecord(topic, key, value, ()))
        return out

    def parse_line(self, line: str) -> ProducerRecord:
        """The record of one line of text (``line_number`` is the one errors name).

        Raises
        ------
        LineReaderError
            A separator missing (without ``ignore.error``), or a header key equal to the null
            marker.
        """
        headers = self._parse(self.parse_headers, line, 0, self.headers_delimiter,
                              "headers delimiter")
        header_offset = 0 if headers is None else len(headers) + len(self.headers_delimiter)
        key = self._parse(self.parse_key, line, header_offset, self.key_separator,
                          "key separator")
        key_offset = 0 if key is None else len(key) + len(self.key_separator)
        value = line[header_offset + key_offset:]
        marker = self.null_marker
        parsed_headers: tuple[Header, ...] = ()
        if headers is not None and headers != marker:
            parsed_headers = tuple(self._split_headers(headers))
        return ProducerRecord(
            self.topic,
            key.encode("utf-8") if key is not None and key != marker else None,
            value.encode("utf-8") if value != marker else None,
            parsed_headers)

    def _parse(self, enabled: bool, line: str, start: int, demarcation: str,
               name: str) -> str | None:
        if not enabled:
            return None
        index = line.find(demarcation, start)
        if index == -1:
            if self.ignore_error:
                return None
            raise LineReaderError(
                f"No {name} found on line number {self.line_number}: '{line}'")
        return line[start:index]

    def _split_headers(self, headers: str) -> Iterator[Header]:
        for pair in _java_pattern_split(self._headers_separator_pattern, headers):
            i = pair.find(self.headers_key_separator)
            if i == -1:
                if self.ignore_error:
                    yield Header(pair, None)
                    continue
                raise LineReaderError(f"No header key separator found in pair '{pair}' on "
                                      f"line number {self.line_number}")
            header_key = pair[:i]
            if header_key == self.null_marker:
                raise LineReaderError(f"Header keys should not be equal to the null marker "
                                      f"'{self.null_marker}' as they can't be null")
            value = pair[i + len(self.headers_key_separator):]
            yield Header(header_key, None if value == self.null_marker
                         else value.encode("utf-8"))


class _BlockError(Exception):
    """A bad line inside a block: the records read before it, and its error."""

    def __init__(self, records: list[ProducerRecord], error: LineReaderError) -> None:
        super().__init__(str(error))
        self.records = records
        self.error = error


class _RecordIterator:
    """Kafka's ``readRecords`` iterator: one line a record; the line number counts every read,
    the end of the input included."""

    def __init__(self, reader: LineMessageReader, lines: Iterator[bytes],
                 prompt: IO[str] | None) -> None:
        self._reader = reader
        self._lines = lines
        self._prompt = prompt

    def __iter__(self) -> _RecordIterator:
        return self

    def __next__(self) -> ProducerRecord:
        reader = self._reader
        reader.line_number += 1
        if self._prompt is not None:
            self._prompt.write(">")
            self._prompt.flush()
        raw = next(self._lines)  # StopIteration at the end of the input
        return reader.parse_line(raw.decode("utf-8", errors=JAVA_REPLACE))
