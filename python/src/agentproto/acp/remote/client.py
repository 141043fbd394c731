"""The client side of ACP over the network: `connect_remote` reaches an agent served at
`http://HOST:PORT/acp` over Streamable HTTP (POST + SSE) or WebSocket.

The connection runtime is the one stdio uses (`agentproto.jsonrpc.Connection`, through
the surface's `connect_client`); the transports here only frame its lines:

* WebSocket: one text message per line, both ways.
* Streamable HTTP: every line is POSTed, one after the other on one kept-alive TCP
  connection (so the agent receives them in the order they were written). The first
  must be `initialize`: its answer comes in the POST's response with the
  `Acp-Connection-Id`, after which the connection-scoped SSE stream is opened, and a
  session's stream as soon as a session id appears (an answer's `result.sessionId`, or
  a message sent for a session). Each stream keeps its own order; the RFD routes a
  session's updates and the answers to that session's requests on one stream, so an
  update never overtakes the answer it precedes. A message the server refuses (413,
  501, …) fails the call it carried with -32600, as an oversize line does on stdio; a
  lost connection (404, the connection stream ending) ends the client connection.

Cookies the server sets are kept and sent back on every request and stream of the
connection (the RFD asks it, for sticky routing). See `http1` for the HTTP client.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable
from types import TracebackType
from typing import Generic, Self, TypeVar

from msgspec import UNSET

from agentproto.acp.remote.framing import LineSink, MessageFeed
from agentproto.acp.remote.http1 import (
    CookieJar,
    Endpoint,
    HttpError,
    read_body,
    read_response,
    write_request,
)
from agentproto.acp.remote.http1 import open_stream as body_stream
from agentproto.acp.remote.routing import (
    CONNECTION_ID_HEADER,
    SESSION_ID_HEADER,
    result_session,
    scan_incoming,
    scan_outgoing,
    session_header,
)
from agentproto.acp.remote.sse import SseParser
from agentproto.acp.remote.websocket import WebSocket, handshake
from agentproto.acp.surface import Surface
from agentproto.jsonrpc import Connection
from agentproto.jsonrpc.error import ErrorCode, ErrorObject
from agentproto.jsonrpc.message import encode_response
from agentproto.jsonrpc.transport import ByteReader, ByteWriter

__all__ = ["RemoteAgent", "connect_remote"]

H = TypeVar("H")

_QUEUED_BYTES = 4 * 1024 * 1024
_CLOSE_TIMEOUT = 5.0


class RemoteAgent(Generic[H]):
    """A connection to a remote agent: its handle (`agent`), the task running the
    connection, and the transport under it. Close it (or use `async with`) to end the
    connection: the input ends, then the server is told (DELETE, or the WebSocket close)."""

    def __init__(self, agent: H, connection: Connection, transport: _Transport) -> None:
        self.agent = agent
        self._transport = transport
        self.connection = asyncio.get_running_loop().create_task(self._run(connection))

    async def _run(self, connection: Connection) -> None:
        try:
            await connection.run()
        finally:
            await self._transport.aclose()

    @property
    def connection_id(self) -> str | None:
        """The server's `Acp-Connection-Id` (known once `initialize` was answered)."""
        return self._transport.connection_id

    @property
    def cookies(self) -> dict[str, str]:
        return self._transport.cookies.cookies

    async def close(self) -> None:
        self._transport.feed.close()
        # The transport's failure, if any, ends it all the same.
        with contextlib.suppress(Exception):
            try:
                await asyncio.wait_for(asyncio.shield(self.connection), _CLOSE_TIMEOUT * 2)
            except TimeoutError:
                self.connection.cancel()
        await self._transport.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        await self.close()


async def connect_remote(
    url: str,
    connect: Callable[[ByteReader, ByteWriter], tuple[Connection, H]],
    surface: Surface,
    *,
    websocket: bool = False,
    headers: list[tuple[str, str]] | None = None,
    max_message_size: int = 64 * 1024 * 1024,
) -> RemoteAgent[H]:
    """Connects to the agent at `url` (the surface's `connect_remote_agent` is the usual
    way in). `connect` attaches the client to the transport's byte streams, e.g.
    `lambda i, o: v1.connect_client(client, i, o, options)`; `headers` go on every
    request (e.g. authorization). The WebSocket handshake happens here (a refusal raises
    `HttpError`); over Streamable HTTP nothing is sent before the first call."""
    endpoint = Endpoint.parse(url)
    extra = list(headers or [])
    transport: _Transport
    if websocket:
        ws_transport = _WebSocketTransport(endpoint, extra, max_message_size)
        await ws_transport.open()
        transport = ws_transport
    else:
        transport = _HttpTransport(endpoint, extra, surface, max_message_size)
    connection, agent = connect(transport.feed, transport.sink)
    return RemoteAgent(agent, connection, transport)


class _Transport:
    feed: MessageFeed
    sink: LineSink
    cookies: CookieJar
    connection_id: str | None = None

    async def aclose(self) -> None:
        raise NotImplementedError


class _WebSocketTransport(_Transport):
    def __init__(self, endpoint: Endpoint, headers: list[tuple[str, str]], max_message: int) -> None:
        self._endpoint = endpoint
        self._headers = headers
        self._max = max_message
        self.cookies = CookieJar()
        self.feed = MessageFeed(_QUEUED_BYTES)
        self._socket: WebSocket | None = None
        self._reading: asyncio.Task[None] | None = None

    async def open(self) -> None:
        socket, response = await handshake(self._endpoint, self._headers, self.cookies, self._max)
        self._socket = socket
        self.connection_id = response.header(CONNECTION_ID_HEADER)
        writer = socket._writer

        async def room() -> None:
            await writer.drain()

        self.sink = LineSink(socket.send_text, writer.transport.get_write_buffer_size, _QUEUED_BYTES, None, None, room)
        self._reading = asyncio.get_running_loop().create_task(self._read(socket))

    async def _read(self, socket: WebSocket) -> None:
        try:
            while (message := await socket.receive()) is not None:
                if not await self.feed.put(message):
                    break
        finally:
            self.feed.close()

    async def aclose(self) -> None:
        if self._socket is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._socket.close(1000), _CLOSE_TIMEOUT)
        if self._reading is not None:
            self._reading.cancel()
            await asyncio.wait((self._reading,))
        self.feed.close()


class _HttpTransport(_Transport):
    def __init__(self, endpoint: Endpoint, headers: list[tuple[str, str]], surface: Surface, max_message: int):
        self._endpoint = endpoint
        self._headers = headers
        self._surface = surface
        self._max = max_message
        self.cookies = CookieJar()
        self.feed = MessageFeed(_QUEUED_BYTES)
        self._lines: deque[bytes] = deque()
        self._queued = 0
        self._wake: asyncio.Future[None] | None = None
        self.sink = LineSink(self._queue, lambda: self._queued, _QUEUED_BYTES, self._wake_poster)
        self._post: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        self._streams: dict[str | None, asyncio.Task[None]] = {}
        # The agent's requests that came on a session's stream, by id: the reply goes back
        # with that session's `Acp-Session-Id` (a server may route, or refuse, it by that).
        self._asked_on: dict[tuple[str, int | str | None], str] = {}
        self._poster = asyncio.get_running_loop().create_task(self._post_all())
        self._closed = False

    # -- client → agent: POSTs --------------------------------------------------------

    def _queue(self, line: bytes) -> None:
        self._lines.append(line)
        self._queued += len(line)
        self._wake_poster()

    def _wake_poster(self) -> None:
        if self._wake is not None and not self._wake.done():
            self._wake.set_result(None)

    async def _post_all(self) -> None:
        try:
            while True:
                if not self._lines:
                    if self.sink.closed:
                        return
                    self._wake = asyncio.get_running_loop().create_future()
                    await self._wake
                    continue
                line = self._lines.popleft()
                try:
                    await self._send(line)
                finally:
                    self._queued -= len(line)
                    self.sink.room()
        except Exception:  # noqa: BLE001 - a transport failure ends the connection
            self.feed.close()

    def _request_headers(self) -> list[tuple[str, str]]:
        headers = [*self._headers]
        cookie = self.cookies.header()
        if cookie is not None:
            headers.append(("Cookie", cookie))
        if self.connection_id is not None:
            headers.append(("Acp-Connection-Id", self.connection_id))
        return headers

    async def _send(self, line: bytes) -> None:
        headers = [("Content-Type", "application/json"), *self._request_headers()]
        session = session_header(self._surface, line) if self.connection_id is not None else None
        if session is None:
            reply = scan_outgoing(line)
            if reply.response_id is not UNSET:
                session = self._asked_on.pop(_id_key(reply.response_id), None)
        if session is not None:
            headers.append(("Acp-Session-Id", session))
            self._open_stream(session)
        status, answer, connection_id = await self._exchange("POST", headers, line)
        if status == 200 and self.connection_id is None and connection_id is not None:
            self.connection_id = connection_id
            self._open_stream(None)
            await self.feed.put(answer)
            await self._opened_by(answer)
        elif status == 200 and answer:
            await self.feed.put(answer)
        elif status == 202:
            return
        elif status == 404 or self.connection_id is None:
            raise HttpError(f"the server refused the connection with {status}", status)
        else:
            head = scan_incoming(line)
            if head is not None and head.is_request and head.id is not UNSET:
                message = f"invalid request: the server refused the message with HTTP {status}"
                error = ErrorObject(code=ErrorCode.INVALID_REQUEST, message=message)
                await self.feed.put(encode_response(head.id, error=error))

    async def _exchange(
        self, method: str, headers: list[tuple[str, str]], body: bytes | None
    ) -> tuple[int, bytes, str | None]:
        for attempt in (1, 2):
            if self._post is None:
                self._post = await self._endpoint.open()
            reader, writer = self._post
            try:
                write_request(writer, method, self._endpoint, headers, body)
                await writer.drain()
                response = await read_response(reader)
                answer = await read_body(reader, response, self._max)
            except (HttpError, ConnectionError, asyncio.IncompleteReadError):
                # A kept-alive connection the server closed meanwhile: once more on a fresh one.
                writer.close()
                self._post = None
                if attempt == 2:
                    raise
                continue
            self.cookies.store(response.headers)
            if (response.header("connection") or "").lower() == "close":
                writer.close()
                self._post = None
            return response.status, answer, response.header(CONNECTION_ID_HEADER)
        raise AssertionError("unreachable")

    async def _opened_by(self, line: bytes) -> None:
        session = result_session(line)
        if session is not None:
            self._open_stream(session)

    # -- agent → client: SSE streams --------------------------------------------------

    def _open_stream(self, session: str | None) -> None:
        if session in self._streams or self._closed:
            return
        self._streams[session] = asyncio.get_running_loop().create_task(self._read_stream(session))

    async def _read_stream(self, session: str | None) -> None:
        writer: asyncio.StreamWriter | None = None
        try:
            reader, writer = await self._endpoint.open()
            headers = [("Accept", "text/event-stream"), *self._request_headers()]
            if session is not None:
                headers.append((SESSION_ID_HEADER, session))
            write_request(writer, "GET", self._endpoint, headers)
            await writer.drain()
            response = await read_response(reader)
            self.cookies.store(response.headers)
            if response.status != 200:
                return
            parser = SseParser(self._max)
            async for chunk in body_stream(reader, response, 64 * 1024):
                for data in parser.feed(chunk):
                    if session is None:
                        await self._opened_by(data)
                    else:
                        asked = scan_incoming(data)
                        if asked is not None and asked.method is not UNSET and asked.id is not UNSET:
                            self._asked_on[_id_key(asked.id)] = session
                    if not await self.feed.put(data):
                        return
        except (HttpError, OSError, asyncio.IncompleteReadError):
            pass
        finally:
            if writer is not None:
                writer.close()
            if session is None:
                self.feed.close()  # the connection stream is gone: so is the connection
            else:
                self._streams.pop(session, None)

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.sink.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.shield(self._poster), _CLOSE_TIMEOUT)
        self._poster.cancel()
        if self.connection_id is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._exchange("DELETE", self._request_headers(), None), _CLOSE_TIMEOUT)
        streams = list(self._streams.values())
        for task in streams:
            task.cancel()
        await asyncio.wait([self._poster, *streams])
        if self._post is not None:
            self._post[1].close()
            self._post = None
        self.feed.close()


def _id_key(request_id: int | str | None) -> tuple[str, int | str | None]:
    """A request id as a key that keeps `1` and `"1"` apart."""
    return (type(request_id).__name__, request_id)
