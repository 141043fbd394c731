"""Messages in, lines out: how a message transport (an HTTP body, an SSE event, a
WebSocket text frame) feeds the one JSON-RPC connection runtime.

The connection (`agentproto.jsonrpc.Connection`) reads NDJSON from a `ByteReader` and
writes NDJSON to a `ByteWriter`. A remote transport is a framing of that same stream:
each message received becomes one line of a `MessageFeed`, and every line the
connection writes becomes one message sent (`LineSink`). Validation, ordering,
backpressure and `$/cancel_request` therefore behave exactly as on stdio.

Both ends are bounded in bytes: `MessageFeed.put` waits while the feed holds more than
its capacity (the transport stops reading its socket), and `LineSink.drain` waits while
the sink's destination holds more than its own (the connection's writer stops, its
outgoing queue fills, senders wait).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable

import msgspec

__all__ = ["LineSink", "MessageFeed", "one_line"]


def one_line(message: bytes) -> bytes:
    """`message` as one NDJSON line (without its LF).

    JSON allows raw line breaks only as whitespace between tokens, so a pretty-printed
    message becomes one line by turning them into spaces. A message that is not valid
    JSON must stay invalid: there its line breaks become NUL bytes, which no JSON text
    accepts, so the connection still answers -32700."""
    if b"\n" not in message:
        return message
    try:
        msgspec.json.decode(message)
    except msgspec.DecodeError:
        return message.replace(b"\n", b"\x00")
    return message.replace(b"\n", b" ")


class MessageFeed:
    """A `ByteReader` fed with whole messages, each read as one line.

    `put` waits while more than `capacity` bytes are unread (one message is always
    accepted into an empty feed, whatever its size); `close` ends the stream once what
    was put is read."""

    def __init__(self, capacity: int) -> None:
        self._capacity = max(1, capacity)
        self._chunks: deque[bytes] = deque()
        self._size = 0
        self._closed = False
        self._readable: asyncio.Future[None] | None = None
        self._writable: asyncio.Future[None] | None = None

    @property
    def closed(self) -> bool:
        return self._closed

    async def put(self, message: bytes) -> bool:
        """Queues `message` as a line; `False` when the feed was closed (it is dropped)."""
        while self._size > self._capacity and not self._closed:
            self._writable = asyncio.get_running_loop().create_future()
            await self._writable
        if self._closed:
            return False
        self._chunks.append(one_line(message) + b"\n")
        self._size += len(message) + 1
        _wake(self._readable)
        return True

    async def read(self, n: int = -1, /) -> bytes:
        while not self._chunks:
            if self._closed:
                return b""
            self._readable = asyncio.get_running_loop().create_future()
            await self._readable
        data = b"".join(self._chunks)
        self._chunks.clear()
        self._size = 0
        _wake(self._writable)
        return data

    def close(self) -> None:
        """Ends the stream: what is queued is still read, later puts are dropped."""
        self._closed = True
        _wake(self._readable)
        _wake(self._writable)


class LineSink:
    """A `ByteWriter` that hands every complete line to `deliver` (without its LF).

    `deliver` runs synchronously inside `write` and queues the line wherever it goes;
    `drain` waits until `pending()` (the bytes queued there) is at most `capacity`, or
    the sink is closed (woken by `room()`, or by awaiting `wait_for_room` where the
    destination has its own flow control); after `stall_timeout` seconds of waiting the sink closes (the
    connection then ends). `on_close` runs once, when the connection closes its output or
    the owner calls `close`."""

    def __init__(
        self,
        deliver: Callable[[bytes], None],
        pending: Callable[[], int],
        capacity: int,
        on_close: Callable[[], None] | None = None,
        stall_timeout: float | None = None,
        wait_for_room: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self._deliver = deliver
        self._pending = pending
        self._capacity = max(1, capacity)
        self._on_close = on_close
        self._stall_timeout = stall_timeout
        self._wait_for_room = wait_for_room
        self._partial = b""
        self._closed = False
        self._room: asyncio.Future[None] | None = None

    @property
    def closed(self) -> bool:
        return self._closed

    def write(self, data: bytes, /) -> None:
        if self._closed:
            raise BrokenPipeError("the remote transport is closed")
        if self._partial:
            data = self._partial + data
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                break
            if end > start:
                self._deliver(data[start:end])
            start = end + 1
        self._partial = data[start:]

    async def drain(self) -> None:
        if not self._closed and self._pending() > self._capacity:
            try:
                async with asyncio.timeout(self._stall_timeout):
                    while not self._closed and self._pending() > self._capacity:
                        if self._wait_for_room is not None:
                            await self._wait_for_room()
                            continue
                        self._room = asyncio.get_running_loop().create_future()
                        await self._room
            except TimeoutError:
                self.close()
                raise BrokenPipeError(f"nothing was sent for {self._stall_timeout} seconds") from None
        if self._closed:
            raise BrokenPipeError("the remote transport is closed")

    def room(self) -> None:
        """The destination sent some of what was queued: a waiting `drain` re-checks."""
        _wake(self._room)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        _wake(self._room)
        if self._on_close is not None:
            self._on_close()


def _wake(future: asyncio.Future[None] | None) -> None:
    if future is not None and not future.done():
        future.set_result(None)
