"""`RemoteAgentApp`: an ASGI application serving an ACP agent at one endpoint, over
Streamable HTTP and WebSocket, as the ACP transports RFD describes them.

    POST   /acp  one client→agent message (`application/json`). `initialize` without an
                 `Acp-Connection-Id` creates a connection and is answered 200 with the
                 agent's answer and the header; anything else 202, its answer coming on a
                 stream. A batch (a JSON array) 501; a body over the limit 413.
    GET    /acp  `Accept: text/event-stream`: the connection-scoped stream
                 (`Acp-Connection-Id`), or a session's (also `Acp-Session-Id`).
    GET    /acp  `Upgrade: websocket` (ASGI `websocket` scope): a new connection, one
                 message per text frame both ways; binary frames are ignored.
    DELETE /acp  ends the connection (202).

A missing `Acp-Connection-Id` is 400, one this server does not hold 404, and so is an
`Acp-Session-Id` the connection does not have (another connection's included). A second
reader of a stream already open is 409. Every ACP connection gets a fresh agent from
the factory, and its own connection runtime (`agentproto.jsonrpc.Connection`) over the
framing of `agentproto.acp.remote.framing`: the same validation, ordering, backpressure
and cancellation as on stdio; a bad message is answered on the connection stream and
the connection goes on. The limits are `ServerLimits`.

It needs no web framework: run it under any ASGI server (`agentproto.acp.remote.listen`
runs it under uvicorn, the `agentproto[http]` extra).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from msgspec import UNSET

from agentproto.acp.remote.limits import ServerLimits
from agentproto.acp.remote.routing import CONNECTION_ID_HEADER, SESSION_ID_HEADER, is_batch, scan_incoming
from agentproto.acp.remote.served import ConnectFn, OutStream, ServedConnection
from agentproto.acp.remote.sse import KEEPALIVE, event

__all__ = ["RemoteAgentApp"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class _BodyTooLarge(Exception):
    pass


class RemoteAgentApp:
    """The ASGI application. `connect` attaches a fresh agent to a pair of byte streams,
    e.g. `lambda i, o: v1.connect_agent(MyAgent(), i, o, options)`; `path` is the
    endpoint (`None`: any path)."""

    def __init__(self, connect: ConnectFn, limits: ServerLimits | None = None, path: str | None = "/acp") -> None:
        self._connect = connect
        self.limits = limits if limits is not None else ServerLimits()
        self._path = path
        self.connections: dict[str, ServedConnection] = {}
        self._reaper: asyncio.Task[None] | None = None

    # -- ASGI -------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await self._lifespan(receive, send)
            return
        if self._path is not None and scope.get("path") != self._path:
            if kind == "http":
                await _reply(send, 404, b"not found")
            elif kind == "websocket":
                await send({"type": "websocket.close", "code": 1008})
            return
        if kind == "websocket":
            await self._websocket(scope, receive, send)
        elif kind == "http":
            method = scope["method"]
            if method == "POST":
                await self._post(scope, receive, send)
            elif method == "GET":
                await self._get(scope, receive, send)
            elif method == "DELETE":
                await self._delete(scope, send)
            else:
                await _reply(send, 405, b"method not allowed", [(b"allow", b"GET, POST, DELETE")])

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def aclose(self) -> None:
        """Ends every connection and waits (each for its connection's grace) until they ended."""
        if self._reaper is not None:
            self._reaper.cancel()
            self._reaper = None
        served = list(self.connections.values())
        for connection in served:
            connection.close()
        if served:
            await asyncio.wait([c.task for c in served])

    # -- connections ------------------------------------------------------------------

    def _open(self, websocket: bool) -> ServedConnection | None:
        if len(self.connections) >= self.limits.max_connections:
            return None
        connection = ServedConnection(self._connect, self.limits, websocket, self._ended)
        self.connections[connection.id] = connection
        if self._reaper is None and not websocket:
            self._reaper = asyncio.get_running_loop().create_task(self._reap())
        return connection

    def _ended(self, connection_id: str) -> None:
        self.connections.pop(connection_id, None)

    async def _reap(self) -> None:
        """Ends Streamable HTTP connections idle for longer than `idle_timeout`."""
        timeout = self.limits.idle_timeout
        period = min(max(timeout / 4, 0.01), 5.0)
        while True:
            await asyncio.sleep(period)
            now = time.monotonic()
            for connection in list(self.connections.values()):
                if not connection.websocket and connection.idle_for(now) > timeout:
                    connection.close()

    def _lookup(self, scope: Scope) -> tuple[int, bytes, ServedConnection | None, str | None]:
        """The connection and session a request names, or the status refusing it."""
        connection_id = _header(scope, CONNECTION_ID_HEADER)
        if connection_id is None:
            return 400, b"missing Acp-Connection-Id", None, None
        connection = self.connections.get(connection_id)
        if connection is None or connection.ended:
            return 404, b"unknown Acp-Connection-Id", None, None
        session = _header(scope, SESSION_ID_HEADER)
        if session is not None and not connection.knows_session(session):
            return 404, b"unknown Acp-Session-Id for this connection", None, None
        return 200, b"", connection, session

    # -- POST -------------------------------------------------------------------------

    async def _post(self, scope: Scope, receive: Receive, send: Send) -> None:
        content_type = (_header(scope, "content-type") or "").split(";")[0].strip().lower()
        if content_type != "application/json":
            await _reply(send, 415, b"Content-Type must be application/json")
            return
        try:
            body = await self._body(scope, receive)
        except _BodyTooLarge:
            await _reply(send, 413, b"body too large", [(b"connection", b"close")])
            return
        if body is None:
            return  # the client went away
        if is_batch(body):
            await _reply(send, 501, b"batch requests are not supported")
            return
        if _header(scope, CONNECTION_ID_HEADER) is None:
            await self._initialize(body, send)
            return
        status, reason, connection, session = self._lookup(scope)
        if connection is None:
            await _reply(send, status, reason)
            return
        connection.touch()
        if session is not None:
            head = scan_incoming(body)
            if head is not None and head.is_request and head.id is not UNSET:
                connection.route_answer(head.id, session)
        if not await connection.feed.put(body):
            await _reply(send, 404, b"the connection ended")
            return
        connection.touch()
        await _reply(send, 202, b"")

    async def _body(self, scope: Scope, receive: Receive) -> bytes | None:
        limit = self.limits.max_body_bytes
        declared = _header(scope, "content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise _BodyTooLarge
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise _BodyTooLarge
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    async def _initialize(self, body: bytes, send: Send) -> None:
        head = scan_incoming(body)
        if head is None or not head.is_request or head.method != "initialize" or head.id is UNSET:
            await _reply(send, 400, b"missing Acp-Connection-Id (only an initialize request may omit it)")
            return
        connection = self._open(websocket=False)
        if connection is None:
            await _reply(send, 503, b"too many connections", [(b"retry-after", b"1")])
            return
        answer = connection.expect_answer(head.id)
        await connection.feed.put(body)
        try:
            line = await asyncio.wait_for(answer, self.limits.initialize_timeout)
        except TimeoutError:
            connection.close()
            await _reply(send, 504, b"the agent did not answer initialize in time")
            return
        except asyncio.CancelledError:
            if not answer.cancelled():
                raise
            await _reply(send, 500, b"the connection ended before initialize was answered")
            return
        connection.touch()
        headers = [(b"content-type", b"application/json"), (CONNECTION_ID_HEADER.encode(), connection.id.encode())]
        await _reply(send, 200, line, headers)

    # -- GET: SSE ---------------------------------------------------------------------

    async def _get(self, scope: Scope, receive: Receive, send: Send) -> None:
        accept = (_header(scope, "accept") or "").lower()
        if "text/event-stream" not in accept and "*/*" not in accept:
            await _reply(send, 406, b"Accept must include text/event-stream")
            return
        status, reason, connection, session = self._lookup(scope)
        if connection is None:
            await _reply(send, status, reason)
            return
        if connection.websocket:
            await _reply(send, 409, b"this connection is a WebSocket")
            return
        stream = connection.main if session is None else connection.session_stream(session)
        if stream.attached:
            await _reply(send, 409, b"this stream is already open")
            return
        stream.attached = True
        try:
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-store")],
                }
            )
            await _race(self._stream(connection, stream, send), _disconnected(receive))
        finally:
            stream.attached = False
            connection.touch()

    async def _stream(self, connection: ServedConnection, stream: OutStream, send: Send) -> None:
        interval = self.limits.keepalive_interval
        while True:
            await stream.wait(interval)
            lines = stream.take()
            if lines:
                body = b"".join(event(line) for line in lines)
            elif connection.ended:
                break
            else:
                body = KEEPALIVE
            await send({"type": "http.response.body", "body": body, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    # -- DELETE -----------------------------------------------------------------------

    async def _delete(self, scope: Scope, send: Send) -> None:
        status, reason, connection, _ = self._lookup(scope)
        if connection is None:
            await _reply(send, status, reason)
            return
        self.connections.pop(connection.id, None)
        connection.close()
        await _reply(send, 202, b"")

    # -- WebSocket --------------------------------------------------------------------

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        first = await receive()
        if first["type"] != "websocket.connect":
            return
        connection = self._open(websocket=True)
        if connection is None:
            await send({"type": "websocket.close", "code": 1013})
            return
        try:
            headers = [(CONNECTION_ID_HEADER.encode(), connection.id.encode())]
            await send({"type": "websocket.accept", "headers": headers})
            reading = asyncio.create_task(_ws_read(connection, receive))
            writing = asyncio.create_task(_ws_write(connection, send))
            await asyncio.wait((reading, writing), return_when=asyncio.FIRST_COMPLETED)
            connection.close()
            if reading.done():
                # The peer is gone: what is left to write has nowhere to go.
                writing.cancel()
            else:
                # The connection ended by itself: its last lines are written, then the close.
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(asyncio.shield(writing), self.limits.keepalive_interval)
                reading.cancel()
            await asyncio.wait((reading, writing))
        finally:
            connection.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(connection.task), self.limits.initialize_timeout)


async def _ws_read(connection: ServedConnection, receive: Receive) -> None:
    while True:
        message = await receive()
        kind = message["type"]
        if kind == "websocket.disconnect":
            return
        if kind != "websocket.receive":
            continue
        text = message.get("text")
        if text is None:
            continue  # a binary frame: ignored
        connection.touch()
        if not await connection.feed.put(text.encode()):
            return


async def _ws_write(connection: ServedConnection, send: Send) -> None:
    stream = connection.main
    stream.attached = True
    while True:
        await stream.wait(None)
        lines = stream.take()
        if not lines and connection.ended:
            break
        for line in lines:
            await send({"type": "websocket.send", "text": line.decode()})
    await send({"type": "websocket.close", "code": 1000})


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def _race(*work: Awaitable[None]) -> None:
    """Runs `work` until the first one ends; the others are cancelled."""
    tasks = [asyncio.ensure_future(w) for w in work]
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.wait(tasks)
    for task in done:
        if not task.cancelled():
            with contextlib.suppress(OSError):
                task.result()


def _header(scope: Scope, name: str) -> str | None:
    key = name.encode()
    for header, value in scope["headers"]:
        if header.lower() == key:
            return bytes(value).decode("latin-1")
    return None


async def _reply(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    if headers is None:
        headers = [(b"content-type", b"text/plain; charset=utf-8")] if body else []
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
