"""What the remote transport tests share: a uvicorn server in this event loop on a
socket bound before it starts (no waiting for it to come up), our echo agent and a
recording client, and raw HTTP exchanges for the status-code tests."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from agentproto.acp import v1
from agentproto.acp.remote import bind
from agentproto.acp.remote.http1 import Endpoint, Response, open_stream, read_body, read_response, write_request
from agentproto.acp.remote.serving import server
from agentproto.acp.remote.sse import SseParser

STOP_TIMEOUT = 10.0


@contextlib.asynccontextmanager
async def serving(app: Any) -> AsyncIterator[str]:
    """Serves the ASGI `app` on 127.0.0.1; yields its `/acp` URL; stops it on every way out."""
    sock = bind("127.0.0.1", 0)
    port = sock.getsockname()[1]
    uvicorn_server = server(app, sock, timeout_graceful_shutdown=1)
    task = asyncio.get_running_loop().create_task(uvicorn_server.serve(sockets=[sock]))
    try:
        yield f"http://127.0.0.1:{port}/acp"
    finally:
        uvicorn_server.should_exit = True
        try:
            await asyncio.wait_for(task, STOP_TIMEOUT)
        except TimeoutError:
            task.cancel()
            await asyncio.wait((task,))
        sock.close()


class Recorder(v1.Client):
    """Records the text of the message chunks; allows permission requests."""

    def __init__(self) -> None:
        self.chunks: list[str] = []
        self.permissions = 0

    async def request_permission(
        self, cx: v1.ClientContext, params: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse:
        self.permissions += 1
        return v1.RequestPermissionResponse(outcome=v1.SelectedPermissionOutcome(option_id="yes"))

    async def session_update(self, cx: v1.ClientContext, params: v1.SessionNotification) -> None:
        update = params.update
        if isinstance(update, v1.SessionUpdateAgentMessageChunk) and isinstance(update.content, v1.TextContent):
            self.chunks.append(update.content.text)


async def two_turns(agent: v1.AgentConnection, recorder: Recorder) -> list[tuple[str, str, int]]:
    """initialize, session/new, two prompts; per prompt: the stop reason, the text the
    client had received when the prompt's answer came back, and how many chunks."""
    await agent.initialize(v1.InitializeRequest(protocol_version=v1.PROTOCOL_VERSION))
    session = (await agent.new_session(v1.NewSessionRequest(cwd="/", mcp_servers=[]))).session_id
    turns: list[tuple[str, str, int]] = []
    for text in ("one two three four five six seven eight", "now a tool please"):
        recorder.chunks.clear()
        answer = await agent.prompt(v1.PromptRequest(session_id=session, prompt=[v1.TextContent(text=text)]))
        # Read at once: every update sent before the answer must have been handled by now.
        turns.append((answer.stop_reason, "".join(recorder.chunks), len(recorder.chunks)))
    return turns


async def exchange(
    url: str, method: str, headers: list[tuple[str, str]], body: bytes | None = None
) -> tuple[Response, bytes]:
    """One raw HTTP request on a fresh connection: the response and its whole body."""
    endpoint = Endpoint.parse(url)
    reader, writer = await endpoint.open()
    try:
        write_request(writer, method, endpoint, [("Connection", "close"), *headers], body)
        await writer.drain()
        response = await read_response(reader)
        return response, await read_body(reader, response, 1 << 20)
    finally:
        writer.close()


class RawStream:
    """An open SSE GET, read event by event."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, response: Response) -> None:
        self.response = response
        self._writer = writer
        self._chunks = open_stream(reader, response, 65536)
        self._parser = SseParser(1 << 20)
        self._events: list[bytes] = []
        self.raw = b""

    async def next(self) -> bytes:
        while not self._events:
            chunk = await self._chunks.__anext__()
            self.raw += chunk
            self._events.extend(self._parser.feed(chunk))
        return self._events.pop(0)

    def close(self) -> None:
        self._writer.close()


async def open_raw_stream(url: str, headers: list[tuple[str, str]]) -> RawStream:
    endpoint = Endpoint.parse(url)
    reader, writer = await endpoint.open()
    write_request(writer, "GET", endpoint, [("Accept", "text/event-stream"), *headers])
    await writer.drain()
    response = await read_response(reader)
    return RawStream(reader, writer, response)


INITIALIZE = b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}'
JSON = ("Content-Type", "application/json")
