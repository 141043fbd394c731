"""One ACP connection served remotely: its agent, its connection runtime, and the
streams its output is routed to.

Everything the agent writes goes through the connection's `LineSink` into one of the
`OutStream`s: over WebSocket there is one, the socket; over Streamable HTTP the
connection-scoped stream and one per session. A response goes where the request it
answers came from (the session named by the POST's `Acp-Session-Id`, else the
connection stream); a request or notification of the agent goes to the stream of the
session its `params.sessionId` names, else the connection stream. One stream carries
its messages in the order the connection wrote them, so a `session/update` never
overtakes the answer that follows it. Lines queued for a stream nobody has opened yet
wait there, within the connection's byte bound.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections import deque
from collections.abc import Callable
from typing import Any

from msgspec import UNSET

from agentproto.acp.remote.framing import LineSink, MessageFeed
from agentproto.acp.remote.limits import ServerLimits
from agentproto.acp.remote.routing import scan_outgoing
from agentproto.jsonrpc import Connection
from agentproto.jsonrpc.message import RequestId
from agentproto.jsonrpc.transport import ByteReader, ByteWriter

__all__ = ["ConnectFn", "OutStream", "ServedConnection"]

ConnectFn = Callable[[ByteReader, ByteWriter], tuple[Connection, Any]]
"""Connects a fresh agent to a pair of byte streams: the connection and the agent's
handle to the client (whose `knows_session` says which sessions it has)."""


class OutStream:
    """The lines waiting for one stream (an SSE response or the WebSocket)."""

    __slots__ = ("_owner", "_waiter", "attached", "lines")

    def __init__(self, owner: ServedConnection) -> None:
        self._owner = owner
        self.lines: deque[bytes] = deque()
        self.attached = False
        self._waiter: asyncio.Future[None] | None = None

    def push(self, line: bytes) -> None:
        self.lines.append(line)
        self.wake()

    def wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def take(self) -> list[bytes]:
        """Everything queued, in order (the connection's bound is released)."""
        lines = list(self.lines)
        self.lines.clear()
        self._owner.sent(sum(len(line) for line in lines))
        return lines

    async def wait(self, timeout: float | None) -> None:
        """Returns when lines are queued, the connection ended, or after `timeout`."""
        if self.lines or self._owner.ended:
            return
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            await asyncio.wait_for(asyncio.shield(self._waiter), timeout)
        except TimeoutError:
            pass
        finally:
            self._waiter = None


class ServedConnection:
    """One ACP connection on the server, from its `initialize` (or WebSocket upgrade) to
    its end."""

    def __init__(self, connect: ConnectFn, limits: ServerLimits, websocket: bool, on_end: Callable[[str], None]):
        self.id = uuid.uuid4().hex
        self.websocket = websocket
        self._limits = limits
        self._on_end = on_end
        self.feed = MessageFeed(limits.max_queued_bytes)
        self._queued = 0
        self.sink = LineSink(
            self._deliver, self._pending, limits.max_queued_bytes, self._output_closed, limits.stall_timeout
        )
        self.connection, self.handle = connect(self.feed, self.sink)
        self.main = OutStream(self)
        """The connection-scoped stream (the socket, over WebSocket)."""
        self.sessions: dict[str, OutStream] = {}
        self._routes: dict[RequestId, str] = {}
        self._initialize: tuple[RequestId, asyncio.Future[bytes]] | None = None
        self.ended = False
        self.last_activity = time.monotonic()
        self.task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        try:
            with contextlib.suppress(Exception):  # a failed transport ends this connection only
                await self.connection.run()
        finally:
            self._end()

    def _end(self) -> None:
        if self.ended:
            return
        self.ended = True
        self.feed.close()
        self.sink.close()
        if self._initialize is not None and not self._initialize[1].done():
            self._initialize[1].cancel()
        for stream in (self.main, *self.sessions.values()):
            stream.wake()
        self._on_end(self.id)

    def _output_closed(self) -> None:
        for stream in (self.main, *self.sessions.values()):
            stream.wake()

    def close(self) -> None:
        """Ends the connection: its input ends (handlers get the connection's grace), then
        its streams end once what was written is sent."""
        self.feed.close()

    # -- what the agent writes ----------------------------------------------------------

    def _pending(self) -> int:
        return self._queued

    def sent(self, size: int) -> None:
        self._queued -= size
        self.sink.room()

    def _deliver(self, line: bytes) -> None:
        if self.websocket and self._initialize is None:
            stream = self.main
        else:
            route = scan_outgoing(line)
            waiting = self._initialize
            if waiting is not None and route.response_id is not UNSET and route.response_id == waiting[0]:
                self._initialize = None
                if not waiting[1].done():
                    waiting[1].set_result(line)
                return
            if route.response_id is not UNSET:
                session = self._routes.pop(route.response_id, None) if route.response_id is not None else None
            else:
                session = route.session
            stream = self.main if session is None or self.websocket else self.session_stream(session)
        self._queued += len(line)
        stream.push(line)

    def session_stream(self, session: str) -> OutStream:
        stream = self.sessions.get(session)
        if stream is None:
            stream = self.sessions[session] = OutStream(self)
        return stream

    # -- what the client sends ----------------------------------------------------------

    def knows_session(self, session: str) -> bool:
        """Whether `session` is one of this connection's: its agent opened it, or sent
        something about it."""
        return session in self.sessions or bool(self.handle.knows_session(session))

    def route_answer(self, request_id: RequestId, session: str) -> None:
        """The answer to `request_id` goes to the stream of `session`."""
        self._routes[request_id] = session

    def expect_answer(self, request_id: RequestId) -> asyncio.Future[bytes]:
        """The answer to `request_id` is returned to the caller, not streamed."""
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self._initialize = (request_id, future)
        return future

    def touch(self) -> None:
        self.last_activity = time.monotonic()

    def idle_for(self, now: float) -> float:
        """Seconds without a request or an open stream (0 while a stream is open)."""
        if self.main.attached or any(stream.attached for stream in self.sessions.values()):
            return 0.0
        return now - self.last_activity
