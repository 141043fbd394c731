"""NDJSON framing: one message per line.

Reading (the same rules as the Rust SDK's `FrameReader`):

* a line ends with LF; one trailing CR is stripped (CRLF is accepted);
* blank and whitespace-only lines are skipped;
* end of input ends the last line even without a newline (`LineSplitter.finish`);
* a line longer than `max_message_size` (without its LF) is dropped as it streams by,
  never kept whole, and reported as an `Oversize` event; reading goes on. Its first
  `OVERSIZE_PREFIX` bytes are kept and scanned for the top-level `id` and for whether
  it looks like a call or a response, so that a connection can still answer it (an
  oversize request gets -32600) or fail the call it answers.

`LineSplitter` is transport-agnostic: feed it the chunks you read (from a pipe, a
socket, an `asyncio.StreamReader.read`) and it yields frames. Do not use
`StreamReader.readline()`: its 64 KiB limit raises on longer lines.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

import msgspec
from msgspec import UNSET, UnsetType

__all__ = ["DEFAULT_MAX_MESSAGE_SIZE", "OVERSIZE_PREFIX", "LineSplitter", "Oversize", "split_lines"]

DEFAULT_MAX_MESSAGE_SIZE = 64 * 1024 * 1024
"""The default maximum message size: 64 MiB."""

OVERSIZE_PREFIX = 4096
"""How many bytes of an oversize line are kept to recover its id (as the Rust SDK does)."""

_BLANK = b" \t\r"

Shape = Literal["call", "response", "unknown"]


@dataclass(frozen=True, slots=True)
class Oversize:
    """A line over the maximum size, discarded; `length` counts its bytes without the LF.

    `id` is the top-level id when it was found in the line's first `OVERSIZE_PREFIX`
    bytes (`UNSET` otherwise); `shape` says whether those bytes held a `method` key
    (`call`), a `result` or `error` key (`response`), or neither or both (`unknown`).
    """

    length: int
    id: int | str | None | UnsetType = UNSET
    shape: Shape = "unknown"


class LineSplitter:
    """Splits a byte stream into lines (`bytes`) and `Oversize` events."""

    def __init__(self, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> None:
        self.max_message_size = max_message_size
        self._buffer = bytearray()
        self._discarding: int | None = None  # bytes of an oversize line seen so far
        self._prefix = b""  # the first bytes of the oversize line being discarded

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
                yield _oversize(length, self._prefix)
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
            yield _oversize(length, self._prefix)
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
            self._prefix = bytes(self._buffer[:OVERSIZE_PREFIX])
            self._buffer.clear()

    def _frame(self, line: bytes) -> bytes | Oversize | None:
        if line.endswith(b"\r"):
            line = line[:-1]
        if len(line) > self.max_message_size:
            return _oversize(len(line), line[:OVERSIZE_PREFIX])
        if not line.strip(_BLANK):
            return None
        return line


def _oversize(length: int, prefix: bytes) -> Oversize:
    id, shape = scan_prefix(prefix)
    return Oversize(length, id, shape)


_id_decoder = msgspec.json.Decoder(int | str | None)


def scan_prefix(prefix: bytes) -> tuple[int | str | None | UnsetType, Shape]:
    """Best-effort scan of the top-level keys of a truncated JSON object: the `id`
    value and whether `method` or `result`/`error` keys appear (`frame.rs`'s
    `scan_prefix`)."""
    scanner = _Scanner(prefix)
    id: int | str | None | UnsetType = UNSET
    method = response = False
    if scanner.punct() != b"{"[0]:
        return UNSET, "unknown"
    while True:
        key = scanner.string()
        if key is None or scanner.punct() != b":"[0]:
            break
        if key == b"method":
            method = True
        elif key in (b"result", b"error"):
            response = True
        scanner.skip_whitespace()
        start = scanner.at
        if not scanner.skip_value():
            break
        if key == b"id":
            try:
                id = _id_decoder.decode(prefix[start : scanner.at])
            except msgspec.DecodeError:
                id = UNSET
        if scanner.punct() != b","[0]:
            break
    shape: Shape = "call" if method and not response else "response" if response and not method else "unknown"
    return id, shape


class _Scanner:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def skip_whitespace(self) -> None:
        data = self.data
        while self.at < len(data) and data[self.at] in b" \t\r\n":
            self.at += 1

    def punct(self) -> int | None:
        self.skip_whitespace()
        if self.at >= len(self.data):
            return None
        self.at += 1
        return self.data[self.at - 1]

    def string(self) -> bytes | None:
        """A string's raw contents (escapes left as they are)."""
        if self.punct() != b'"'[0]:
            return None
        start = self.at
        return self.data[start : self.at - 1] if self._skip_string_rest() else None

    def _skip_string_rest(self) -> bool:
        data = self.data
        while self.at < len(data):
            byte = data[self.at]
            self.at += 1
            if byte == 0x5C:  # backslash: skip the escaped byte
                self.at += 1
            elif byte == 0x22:
                return True
        return False

    def skip_value(self) -> bool:
        """Skips one complete value; `False` when the prefix ends inside it."""
        data = self.data
        depth = 0
        while self.at < len(data):
            byte = data[self.at]
            self.at += 1
            if byte == 0x22 and not self._skip_string_rest():
                return False
            if byte in b"[{":
                depth += 1
            elif byte in b"]}":
                if depth == 0:
                    self.at -= 1  # the end of the enclosing object
                    return True
                depth -= 1
            elif byte == 0x2C and depth == 0:
                self.at -= 1
                return True
            if depth == 0 and byte in b'"]}':
                return True
        return False


def split_lines(data: bytes, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> list[bytes | Oversize]:
    """Every frame of a complete input."""
    splitter = LineSplitter(max_message_size)
    return [*splitter.feed(data), *splitter.finish()]
