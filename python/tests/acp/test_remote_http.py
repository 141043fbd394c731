"""The Streamable HTTP and WebSocket profiles on the wire: status codes, streams,
refusals and bad input, with raw requests against the echo agent served by
`agentproto.acp.remote` under uvicorn on 127.0.0.1."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import msgspec
import pytest

from agentproto.acp.remote import ServerLimits, agent_app
from agentproto.acp.remote.http1 import CookieJar, Endpoint, read_response, write_request
from agentproto.acp.remote.websocket import handshake
from agentproto.examples.echo_agent import EchoAgent
from tests.acp.remote_peers import INITIALIZE, JSON, exchange, open_raw_stream, serving

NEW_SESSION = b'{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}'


def prompt(id: int, session: str, text: str) -> bytes:
    params = {"sessionId": session, "prompt": [{"type": "text", "text": text}]}
    return msgspec.json.encode({"jsonrpc": "2.0", "id": id, "method": "session/prompt", "params": params})


async def initialize(url: str) -> str:
    response, body = await exchange(url, "POST", [JSON], INITIALIZE)
    assert response.status == 200, body
    assert msgspec.json.decode(body)["result"]["protocolVersion"] == 1
    connection_id = response.header("acp-connection-id")
    assert connection_id
    return connection_id


async def post(url: str, connection_id: str, body: bytes, session: str | None = None) -> int:
    headers = [JSON, ("Acp-Connection-Id", connection_id)]
    if session is not None:
        headers.append(("Acp-Session-Id", session))
    response, _ = await exchange(url, "POST", headers, body)
    return response.status


async def new_session(url: str, connection_id: str, stream: object) -> str:
    assert await post(url, connection_id, NEW_SESSION) == 202
    answer = msgspec.json.decode(await stream.next())  # type: ignore[attr-defined]
    assert answer["id"] == 1
    return str(answer["result"]["sessionId"])


def decode_frame(frame: bytes | None) -> Any:
    assert frame is not None
    return msgspec.json.decode(frame)


@pytest.fixture
def limits() -> ServerLimits:
    return ServerLimits(max_body_bytes=64 * 1024, keepalive_interval=0.2)


@contextlib.asynccontextmanager
async def served(limits: ServerLimits) -> AsyncIterator[str]:
    async with serving(agent_app(lambda: EchoAgent(0.0), limits=limits)) as url:
        yield url


async def test_updates_and_the_answer_come_in_order_on_the_session_stream(limits: ServerLimits) -> None:
    async with served(limits) as url:
        connection_id = await initialize(url)
        main = await open_raw_stream(url, [("Acp-Connection-Id", connection_id)])
        assert main.response.status == 200
        assert main.response.header("content-type") == "text/event-stream"
        session = await new_session(url, connection_id, main)
        stream = await open_raw_stream(url, [("Acp-Connection-Id", connection_id), ("Acp-Session-Id", session)])
        assert stream.response.status == 200
        for turn in range(2):
            words = [f"w{turn}x{i} " for i in range(50)]
            assert await post(url, connection_id, prompt(10 + turn, session, "".join(words)), session) == 202
            seen: list[str] = []
            while True:
                message = msgspec.json.decode(await stream.next())
                if "id" in message:
                    break
                seen.append(message["params"]["update"]["content"]["text"])
            assert message == {"jsonrpc": "2.0", "id": 10 + turn, "result": {"stopReason": "end_turn"}}
            assert seen == words
        main.close()
        stream.close()


async def test_an_idle_stream_gets_keepalive_comments(limits: ServerLimits) -> None:
    async with served(limits) as url:
        connection_id = await initialize(url)
        main = await open_raw_stream(url, [("Acp-Connection-Id", connection_id)])
        endpoint_reader = main._chunks
        chunk = await asyncio.wait_for(endpoint_reader.__anext__(), 5)
        assert chunk == b": keepalive\n\n"
        main.close()


async def test_bad_input_is_answered_on_the_connection_stream_and_the_connection_goes_on(
    limits: ServerLimits,
) -> None:
    async with served(limits) as url:
        connection_id = await initialize(url)
        main = await open_raw_stream(url, [("Acp-Connection-Id", connection_id)])
        assert await post(url, connection_id, b'{"jsonrpc":"2.0","id":') == 202
        parse_error = msgspec.json.decode(await main.next())
        assert parse_error["id"] is None and parse_error["error"]["code"] == -32700
        assert await post(url, connection_id, b'{"jsonrpc":"2.0","id":5,"method":"session/new","params":{}}') == 202
        invalid = msgspec.json.decode(await main.next())
        assert invalid["id"] == 5 and invalid["error"]["code"] == -32602
        # A pretty-printed message is one message.
        pretty = b'{\n  "jsonrpc": "2.0",\n  "id": 1,\n  "method": "session/new",\n  "params": {"cwd": "/", "mcpServers": []}\n}'
        assert await post(url, connection_id, pretty) == 202
        assert msgspec.json.decode(await main.next())["result"]["sessionId"]
        main.close()


async def test_unknown_forged_and_foreign_ids_are_refused(limits: ServerLimits) -> None:
    async with served(limits) as url:
        first = await initialize(url)
        second = await initialize(url)
        main = await open_raw_stream(url, [("Acp-Connection-Id", first)])
        session = await new_session(url, first, main)
        # No connection id on anything but initialize: 400.
        response, _ = await exchange(url, "POST", [JSON], NEW_SESSION)
        assert response.status == 400
        response, _ = await exchange(url, "GET", [("Accept", "text/event-stream")])
        assert response.status == 400
        response, _ = await exchange(url, "DELETE", [])
        assert response.status == 400
        # A connection id this server never issued: 404 everywhere.
        forged = "0" * 32
        assert await post(url, forged, NEW_SESSION) == 404
        response, _ = await exchange(url, "GET", [("Accept", "text/event-stream"), ("Acp-Connection-Id", forged)])
        assert response.status == 404
        response, _ = await exchange(url, "DELETE", [("Acp-Connection-Id", forged)])
        assert response.status == 404
        # The first connection's session, named on the second connection: 404.
        assert await post(url, second, prompt(3, session, "hi"), session) == 404
        headers = [("Accept", "text/event-stream"), ("Acp-Connection-Id", second), ("Acp-Session-Id", session)]
        response, _ = await exchange(url, "GET", headers)
        assert response.status == 404
        # A second reader of an open stream: 409.
        response, _ = await exchange(url, "GET", [("Accept", "text/event-stream"), ("Acp-Connection-Id", first)])
        assert response.status == 409
        # DELETE ends the connection; its id is unknown afterwards.
        response, _ = await exchange(url, "DELETE", [("Acp-Connection-Id", first)])
        assert response.status == 202
        assert await post(url, first, NEW_SESSION) == 404
        main.close()


async def test_batches_wrong_media_types_and_oversize_bodies_are_refused(limits: ServerLimits) -> None:
    async with served(limits) as url:
        connection_id = await initialize(url)
        assert await post(url, connection_id, b"[" + NEW_SESSION + b"]") == 501
        assert await post(url, connection_id, b" \n[]") == 501
        response, _ = await exchange(url, "POST", [("Content-Type", "text/plain")], INITIALIZE)
        assert response.status == 415
        response, _ = await exchange(url, "GET", [("Accept", "application/json"), ("Acp-Connection-Id", connection_id)])
        assert response.status == 406
        response, _ = await exchange(url, "PUT", [JSON], INITIALIZE)
        assert response.status == 405
        response, _ = await exchange(url.replace("/acp", "/other"), "POST", [JSON], INITIALIZE)
        assert response.status == 404
        assert await post(url, connection_id, b'{"x":"' + b"a" * 70_000 + b'"}') == 413
        # Refused by its Content-Length alone, before any of the body is sent.
        endpoint = Endpoint.parse(url)
        reader, writer = await endpoint.open()
        head = f"POST /acp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {10**9}\r\n\r\n"
        writer.write(head.encode())
        await writer.drain()
        response = await asyncio.wait_for(read_response(reader), 5)
        assert response.status == 413
        writer.close()
        # A chunked body is cut off as soon as it passes the limit.
        reader, writer = await endpoint.open()
        head = "POST /acp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        writer.write(head.encode())
        for _ in range(20):
            writer.write(b"%x\r\n%s\r\n" % (8192, b"a" * 8192))
        await writer.drain()
        response = await asyncio.wait_for(read_response(reader), 5)
        assert response.status == 413
        writer.close()


async def test_too_many_connections_are_refused(limits: ServerLimits) -> None:
    small = ServerLimits(max_connections=2)
    async with served(small) as url:
        await initialize(url)
        await initialize(url)
        response, _ = await exchange(url, "POST", [JSON], INITIALIZE)
        assert response.status == 503


async def test_websocket_text_frames_binary_ignored_bad_input_answered(limits: ServerLimits) -> None:
    async with served(limits) as url:
        socket, response = await handshake(Endpoint.parse(url), [], CookieJar(), 1 << 20)
        assert response.status == 101 and response.header("acp-connection-id")
        try:
            socket._writer.write(socket._frame(0x2, INITIALIZE))  # binary: ignored
            socket.send_text(b"{not json")
            error = decode_frame(await asyncio.wait_for(socket.receive(), 5))
            assert error["id"] is None and error["error"]["code"] == -32700
            socket.send_text(INITIALIZE)
            answer = decode_frame(await asyncio.wait_for(socket.receive(), 5))
            assert answer["id"] == 0 and answer["result"]["protocolVersion"] == 1
            socket.send_text(b"[" + NEW_SESSION + b"]")
            batch = decode_frame(await asyncio.wait_for(socket.receive(), 5))
            assert batch["id"] is None and batch["error"]["code"] == -32600
            socket.send_text(NEW_SESSION)
            created = decode_frame(await asyncio.wait_for(socket.receive(), 5))
            assert created["id"] == 1 and created["result"]["sessionId"]
        finally:
            await socket.close()


async def test_a_websocket_message_over_the_limit_closes_the_socket(limits: ServerLimits) -> None:
    async with served(limits) as url:
        socket, _ = await handshake(Endpoint.parse(url), [], CookieJar(), 1 << 20)
        try:
            socket.send_text(b'{"x":"' + b"a" * 100_000 + b'"}')
            assert await asyncio.wait_for(socket.receive(), 5) is None
        finally:
            await socket.close()


def test_write_request_frames_a_body() -> None:
    class Sink:
        data = b""

        def write(self, chunk: bytes) -> None:
            self.data += chunk

    sink = Sink()
    write_request(sink, "POST", Endpoint.parse("http://h:81/acp"), [("A", "b")], b"{}")  # type: ignore[arg-type]
    assert sink.data == b"POST /acp HTTP/1.1\r\nHost: h:81\r\nA: b\r\nContent-Length: 2\r\n\r\n{}"


async def test_a_websocket_peer_that_never_reads_is_ended_after_the_stall_timeout() -> None:
    stalling = ServerLimits(stall_timeout=0.5, max_queued_bytes=64 * 1024)
    app = agent_app(lambda: EchoAgent(0.0), limits=stalling)
    async with serving(app) as url:
        socket, _ = await handshake(Endpoint.parse(url), [], CookieJar(), 1 << 20)
        try:
            socket.send_text(INITIALIZE)
            socket.send_text(NEW_SESSION)
            assert decode_frame(await asyncio.wait_for(socket.receive(), 5))["id"] == 0
            session = decode_frame(await asyncio.wait_for(socket.receive(), 5))["result"]["sessionId"]
            # A turn of 20,000 updates of 200 bytes, and this side reads none of them.
            socket.send_text(prompt(2, session, " ".join(["word" * 50] * 20_000)))
            await socket.drain()
            (served_connection,) = app.connections.values()
            await asyncio.wait_for(served_connection.task, 10)  # ended by the stall, nothing else
            assert app.connections == {}
        finally:
            socket._writer.close()


async def test_connections_accepted_on_a_bound_socket_have_nodelay() -> None:
    """`bind` makes a socket asyncio knows is TCP, so the connections it accepts get
    TCP_NODELAY (without it an answer on a kept-alive connection can wait ~40 ms for the
    peer's delayed ACK)."""
    import socket

    from agentproto.acp.remote.serving import bind

    seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    async def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.set_result(writer.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
        writer.close()

    sock = bind("127.0.0.1", 0)
    server = await asyncio.start_server(accepted, sock=sock)
    async with server:
        _, writer = await asyncio.open_connection(*sock.getsockname()[:2])
        assert await asyncio.wait_for(seen, 10) != 0
        writer.close()


async def ended(reader: asyncio.StreamReader) -> bool:
    """Whether the server closed the socket (bounded): end of stream, or a reset when it
    closed with bytes of ours unread."""
    try:
        return await asyncio.wait_for(reader.read(), 5) == b""
    except ConnectionResetError:
        return True


async def test_a_client_that_sends_its_head_too_slowly_is_cut_off() -> None:
    """A partial head, then one more header byte at a time: the server closes the socket
    once `header_timeout` has passed since the accept (bytes received do not restart it),
    and 100 idle sockets that never sent anything are closed too; a WebSocket opened before
    is not (its head came in time). It still serves after."""
    async with served(ServerLimits(header_timeout=0.3)) as url:
        endpoint = Endpoint.parse(url)
        socket, _ = await handshake(endpoint, [], CookieJar(), 1 << 20)
        idle = [await endpoint.open() for _ in range(100)]
        reader, writer = await endpoint.open()
        writer.write(b"POST /acp HTTP/1.1\r\nHost: x\r\n")

        async def trickle() -> None:
            for byte in b"X-Slow: " + b"a" * 1000:
                if writer.is_closing():
                    return
                writer.write(bytes([byte]))
                await asyncio.sleep(0.02)

        dripping = asyncio.create_task(trickle())
        try:
            assert await ended(reader)
            for idle_reader, _ in idle:
                assert await ended(idle_reader)
            socket.send_text(INITIALIZE)
            assert decode_frame(await asyncio.wait_for(socket.receive(), 5))["id"] == 0
        finally:
            await socket.close()
            dripping.cancel()
            writer.close()
            for _, idle_writer in idle:
                idle_writer.close()
        await initialize(url)
