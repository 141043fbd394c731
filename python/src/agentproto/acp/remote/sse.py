"""Server-Sent Events, as this transport uses them: one JSON-RPC message per event, in
`data:` lines, and comment lines to keep an idle stream open. Event ids and `retry`
are not used (the RFD defers resumption to v2)."""

from __future__ import annotations

from collections.abc import Iterator

__all__ = ["KEEPALIVE", "SseParser", "event"]

KEEPALIVE = b": keepalive\n\n"
"""A comment: ignored by readers, it keeps proxies from closing an idle stream."""


def event(message: bytes) -> bytes:
    """One message (a line without line breaks) as one event."""
    return b"data: " + message + b"\n\n"


class SseParser:
    """Splits an event stream, fed in chunks, into the `data` of its events (lines of
    one event joined with LF, as the SSE rules say); other fields and comments are
    skipped. Lines end with LF, CRLF or CR. `max_event_size` bounds what one event may
    buffer: a longer one is dropped, and reported by `oversize`."""

    def __init__(self, max_event_size: int) -> None:
        self._max = max_event_size
        self._buffer = bytearray()
        self._data: list[bytes] = []
        self._size = 0
        self._skipping = False
        self._after_cr = False
        self.oversize = 0
        """How many events were dropped for their size."""

    def feed(self, chunk: bytes) -> Iterator[bytes]:
        buffer = self._buffer
        if self._after_cr and chunk[:1] == b"\n":
            chunk = chunk[1:]  # the LF of a CRLF split between two chunks
        self._after_cr = chunk[-1:] == b"\r"
        buffer += chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n") if b"\r" in chunk else chunk
        start = 0
        while True:
            end = buffer.find(b"\n", start)
            if end < 0:
                break
            line = bytes(buffer[start:end])
            start = end + 1
            if not line:
                if self._data and not self._skipping:
                    yield b"\n".join(self._data)
                self._data.clear()
                self._size = 0
                self._skipping = False
            elif self._skipping or line[0] == 0x3A:  # ':' starts a comment
                continue
            else:
                name, _, value = line.partition(b":")
                if name != b"data":
                    continue
                value = value[1:] if value[:1] == b" " else value
                self._size += len(value) + 1
                if self._size > self._max:
                    self._skipping = True
                    self.oversize += 1
                    self._data.clear()
                    continue
                self._data.append(value)
        del buffer[:start]
        if len(buffer) > self._max + 16:
            # A line longer than any event may be: drop it as it streams by.
            if not self._skipping:
                self.oversize += 1
            self._skipping = True
            self._data.clear()
            buffer.clear()
