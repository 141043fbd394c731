"""The A2A client against scripted sockets: retries of idempotent calls only, a broken
stream resumed with `SubscribeToTask` and `Last-Event-ID`, requests checked before they
are sent, card resolution picking the binding."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from agentproto.a2a.client import A2aClient, ClientError, PeerError, fetch_card
from agentproto.a2a.codec import encode
from agentproto.a2a.demo import card
from agentproto.a2a.generated.v1 import (
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskState,
)

BOUND = 10.0
TASK = b'{"id":"t-1","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}'
Handler = Callable[[int, bytes, bytes], Awaitable[bytes]]
"""Given the connection's number (from 0), the request's head and body: what to write
back (the connection is closed after it)."""


async def scripted(handler: Handler) -> tuple[asyncio.Server, str]:
    count = 0

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal count
        number, count = count, count + 1
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            (int(h.split(b":")[1]) for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")), 0
        )
        body = await reader.readexactly(length)
        writer.write(await handler(number, head, body))
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    return server, f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"


def answer(status: int, body: bytes, content_type: str = "application/json") -> bytes:
    head = f"HTTP/1.1 {status} X\r\nConnection: close\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n\r\n"
    return head.encode() + body


def run(main: Callable[[], Awaitable[None]]) -> None:
    async def bounded() -> None:
        async with asyncio.timeout(BOUND):
            await main()

    asyncio.run(bounded())


def test_idempotent_calls_are_retried_and_sends_are_not() -> None:
    async def main() -> None:
        async def handler(number: int, head: bytes, body: bytes) -> bytes:
            return answer(503, b"{}") if number == 0 else answer(200, TASK)

        server, base = await scripted(handler)
        async with server, A2aClient(base + "/a2a/rest", "HTTP+JSON", backoff=0.01) as client:
            task = await client.get_task(GetTaskRequest(id="t-1"))
            assert task.id == "t-1"

        async def refuse(number: int, head: bytes, body: bytes) -> bytes:
            return answer(503, b"{}") if number == 0 else answer(200, b'{"task":' + TASK + b"}")

        server, base = await scripted(refuse)
        async with server, A2aClient(base + "/a2a/rest", "HTTP+JSON", backoff=0.01) as client:
            message = Message(message_id="m", role=Role.USER, parts=[Part(text="hi")])
            with pytest.raises(PeerError) as refused:
                await client.send_message(SendMessageRequest(message=message))
            assert refused.value.http_status == 503

    run(main)


def test_a_broken_stream_is_resumed_with_last_event_id() -> None:
    seen: list[tuple[bytes, bytes]] = []

    async def main() -> None:
        async def handler(number: int, head: bytes, body: bytes) -> bytes:
            seen.append((head, body))
            event = b'{"statusUpdate":{"taskId":"t-1","contextId":"c","status":{"state":"%s"}}}'
            if number == 0:
                # Two events, then the connection drops inside a chunked body.
                frames = (
                    b'id: 1\ndata: {"task":' + TASK + b"}\n\nid: 2\ndata: " + event % b"TASK_STATE_WORKING" + b"\n\n"
                )
                head_out = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                return head_out + b"%x\r\n%s\r\n" % (len(frames), frames)
            frames = b'data: {"task":' + TASK + b"}\n\nid: 3\ndata: " + event % b"TASK_STATE_COMPLETED" + b"\n\n"
            return answer(200, frames, "text/event-stream")

        server, base = await scripted(handler)
        async with server, A2aClient(base + "/a2a/rest", "HTTP+JSON", backoff=0.01) as client:
            message = Message(message_id="m", role=Role.USER, parts=[Part(text="hi")])
            items = [item async for item in client.send_streaming_message(SendMessageRequest(message=message))]
        assert [i.id for i in items] == ["1", "2", None, "3"]
        last = items[-1].event.status_update
        assert not (last is None) and last.status.state is TaskState.COMPLETED  # type: ignore[union-attr]

    run(main)
    resumed_head, resumed_body = seen[1]
    assert seen[0][0].startswith(b"POST /a2a/rest/message:stream ")
    assert resumed_head.startswith(b"GET /a2a/rest/tasks/t-1:subscribe ") and resumed_body == b""
    assert b"\r\nLast-Event-ID: 2\r\n" in resumed_head


def test_an_invalid_request_is_refused_before_it_is_sent() -> None:
    async def main() -> None:
        async def handler(number: int, head: bytes, body: bytes) -> bytes:
            raise AssertionError("nothing may be sent")

        server, base = await scripted(handler)
        async with server, A2aClient(base + "/") as client:
            empty = Message(message_id="m", role=Role.USER, parts=[])
            with pytest.raises(ClientError) as refused:
                await client.send_message(SendMessageRequest(message=empty))
            assert refused.value.error is not None and refused.value.error.path == "$.message.parts"

    run(main)


def test_the_card_is_resolved_and_the_binding_picked() -> None:
    async def main() -> None:
        async def handler(number: int, head: bytes, body: bytes) -> bytes:
            assert head.startswith(b"GET /.well-known/agent-card.json ")
            return answer(200, encode(card("http://127.0.0.1:1")))

        server, base = await scripted(handler)
        async with server:
            found = await fetch_card(base)
            assert found.name == "agentproto demo agent"
            rest = await A2aClient.connect(base, binding="HTTP+JSON")
            assert rest.url == "http://127.0.0.1:1/a2a/rest" and rest.binding == "HTTP+JSON"
            await rest.close()
            with pytest.raises(ClientError):
                await A2aClient.connect(base, binding="GRPC")

    run(main)


def test_subscribe_goes_by_its_first_rule_on_rest() -> None:
    async def main() -> None:
        async def handler(number: int, head: bytes, body: bytes) -> bytes:
            assert head.startswith(b"GET /a2a/rest/tasks/t%201:subscribe ") and body == b""
            return answer(200, b'data: {"task":' + TASK + b"}\n\n", "text/event-stream")

        server, base = await scripted(handler)
        async with server, A2aClient(base + "/a2a/rest", "HTTP+JSON") as client:
            items = [i async for i in client.subscribe_to_task(SubscribeToTaskRequest(id="t 1"))]
            assert len(items) == 1

    run(main)
