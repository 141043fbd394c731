"""NDJSON framing: one message per line.

Reading (the same rules as the Rust SDK's `FrameReader`):

* a line ends with LF; one trailing CR is stripped (CRLF is accepted);
* blank and whitespace-only lines are skipped;
* end of input ends the last line even without a newline (`LineSplitter.finish`);
* a line longer than `max_message_size` (without its LF) is dropped as it streams by,
  never kept whole, and reported as an `Oversize` event; reading goes on.

`LineSplitter` is transport-agnostic: feed it the chunks you read (from a pipe, a
socket, an `asyncio.StreamReader.read`) and it yields frames. Do not use
`StreamReader.readline()`: its 64 KiB limit raises on longer lines.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["DEFAULT_MAX_MESSAGE_SIZE", "LineSplitter", "Oversize", "split_lines"]

DEFAULT_MAX_MESSAGE_SIZE = 64 * 1024 * 1024
"""The default maximum message size: 64 MiB."""

_BLANK = b" \t\r"


@dataclass(frozen=True, slots=True)
class Oversize:
    """A line over the maximum size, discarded; `length` counts its bytes without the LF."""

    length: int


class LineSplitter:
    """Splits a byte stream into lines (`bytes`) and `Oversize` events."""

    def __init__(self, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> None:
        self.max_message_size = max_message_size
        self._buffer = bytearray()
        self._discarding: int | None = None  # bytes of an oversize line seen so far

    def feed(self, chunk: bytes) -> Iterator[bytes | Oversize]:
        """The frames completed by `chunk`."""
        start = 0
        while True:
            newline = chunk.find(b"\n", start)
            if newline < 0:
                self._keep(chunk[start:])
                return
            piece = chunk[start:newline]
            start = newline + 1
            if self._discarding is not None:
                length = self._discarding + len(piece)
                self._discarding = None
                yield Oversize(length)
                continue
            if self._buffer:
                self._buffer += piece
                line = bytes(self._buffer)
                self._buffer.clear()
            else:
                line = piece
            frame = self._frame(line)
            if frame is not None:
                yield frame

    def finish(self) -> Iterator[bytes | Oversize]:
        """The last line, at end of input (it needs no newline)."""
        if self._discarding is not None:
            length = self._discarding
            self._discarding = None
            yield Oversize(length)
            return
        line = bytes(self._buffer)
        self._buffer.clear()
        frame = self._frame(line)
        if frame is not None:
            yield frame

    def _keep(self, rest: bytes) -> None:
        if self._discarding is not None:
            self._discarding += len(rest)
            return
        self._buffer += rest
        # A CR may still turn out to be the terminator's, so allow one byte more.
        if len(self._buffer) > self.max_message_size + 1:
            self._discarding = len(self._buffer)
            self._buffer.clear()

    def _frame(self, line: bytes) -> bytes | Oversize | None:
        if line.endswith(b"\r"):
            line = line[:-1]
        if len(line) > self.max_message_size:
            return Oversize(len(line))
        if not line.strip(_BLANK):
            return None
        return line


def split_lines(data: bytes, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> list[bytes | Oversize]:
    """Every frame of a complete input."""
    splitter = LineSplitter(max_message_size)
    return [*splitter.feed(data), *splitter.finish()]
