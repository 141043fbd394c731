"""Test helpers: a connection under test on one end of an in-memory pipe, and the raw
NDJSON other end (`Wire`), with every wait bounded."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any, Self

from msgspec import Raw

from agentproto.jsonrpc import (
    Connection,
    ConnectionEvent,
    ConnectionOptions,
    Handler,
    LineSplitter,
    Notification,
    NotificationContext,
    Request,
    RequestContext,
    RequestError,
)
from agentproto.jsonrpc.memory import PipeReader, PipeWriter, duplex

WAIT = 5.0
"""The bound of every single wait."""


class Wire:
    """The far end of a connection under test: raw lines in, raw lines out."""

    def __init__(self, reader: PipeReader, writer: PipeWriter) -> None:
        self.reader = reader
        self.writer = writer
        self._splitter = LineSplitter()
        self._lines: list[bytes] = []

    async def send(self, message: Any) -> None:
        await self.send_raw(json.dumps(message, separators=(",", ":")).encode() + b"\n")

    async def send_raw(self, data: bytes) -> None:
        self.writer.write(data)
        await asyncio.wait_for(self.writer.drain(), WAIT)

    async def line(self) -> bytes:
        """The next line the connection writes (fails after `WAIT`, or at its end)."""
        async with asyncio.timeout(WAIT):
            while not self._lines:
                chunk = await self.reader.read(65536)
                self._lines += [
                    f
                    for f in (self._splitter.feed(chunk) if chunk else self._splitter.finish())
                    if isinstance(f, bytes)
                ]
                if not chunk and not self._lines:
                    raise EOFError("the connection closed its output")
        return self._lines.pop(0)

    async def message(self) -> Any:
        return json.loads(await self.line())

    async def closed(self) -> bool:
        """Whether the connection's output ended (everything before it is skipped)."""
        try:
            while True:
                await self.line()
        except EOFError:
            return True


class Recorder(Handler):
    """A handler that answers requests with a coroutine per method and records
    notifications in order."""

    def __init__(self) -> None:
        self.notes: list[tuple[int, str, Any]] = []
        self.methods: dict[str, Callable[[Request, RequestContext], Awaitable[Raw | bytes]]] = {}
        self.on_note: Callable[[Notification, NotificationContext], Awaitable[None]] | None = None
        self.read: list[tuple[int, str]] = []

    async def request(self, request: Request, cx: RequestContext) -> Raw | bytes:
        method = self.methods.get(request.method)
        if method is None:
            raise RequestError.method_not_found(request.method)
        return await method(request, cx)

    async def notification(self, notification: Notification, cx: NotificationContext) -> None:
        params = None if notification.params is None else json.loads(bytes(notification.params))
        self.notes.append((cx.index, notification.method, params))
        if self.on_note is not None:
            await self.on_note(notification, cx)

    def request_read(self, request: Request, cx: RequestContext) -> None:
        self.read.append((cx.index, request.method))


class Setup:
    """A connection under test (`connection`, `handler`, `events`) and its far end (`wire`)."""

    def __init__(self, options: ConnectionOptions | None = None, handler: Recorder | None = None) -> None:
        self.events: list[ConnectionEvent] = []
        options = options if options is not None else ConnectionOptions()
        options.observer = self.events.append
        (ours_in, ours_out), (theirs_in, theirs_out) = duplex(1 << 20)
        self.handler = handler if handler is not None else Recorder()
        self.connection = Connection(ours_in, ours_out, self.handler, options)
        self.peer = self.connection.peer
        self.wire = Wire(theirs_in, theirs_out)
        self.running: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Self:
        self.running = asyncio.create_task(self.connection.run())
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.wire.writer.close()
        assert self.running is not None
        await asyncio.wait_for(self.running, WAIT)


def pair(
    a: Handler, b: Handler, options: ConnectionOptions | None = None, capacity: int = 1 << 16
) -> tuple[Connection, Connection]:
    """Two connections talking to each other in memory."""
    (a_in, a_out), (b_in, b_out) = duplex(capacity)
    return Connection(a_in, a_out, a, options), Connection(b_in, b_out, b, options)
