"""ACP over Streamable HTTP and WebSocket, ours against ours, over real sockets on
127.0.0.1: the echo agent served by `agentproto.acp.remote` under uvicorn, our client."""

from __future__ import annotations

import asyncio

import msgspec
import pytest

from agentproto.acp.remote import ServerLimits, agent_app, connect
from agentproto.acp.remote.server import Message, Receive, Scope, Send
from agentproto.examples.echo_agent import EchoAgent
from tests.acp.remote_peers import Recorder, serving, two_turns

WORDS = ["one ", "two ", "three ", "four ", "five ", "six ", "seven ", "eight"]


@pytest.mark.parametrize("websocket", [False, True], ids=["http", "ws"])
async def test_two_prompt_turns_stream_their_updates_before_each_answer(websocket: bool) -> None:
    app = agent_app(lambda: EchoAgent(0.0))
    async with serving(app) as url:
        recorder = Recorder()
        async with await connect(url, recorder, websocket=websocket) as remote:
            turns = await two_turns(remote.agent, recorder)
            assert remote.connection_id is not None and remote.connection_id in app.connections
        assert turns == [
            ("end_turn", "".join(WORDS), len(WORDS)),
            ("end_turn", "now a tool please", 4),
        ]
        assert recorder.permissions == 1


@pytest.mark.parametrize("websocket", [False, True], ids=["http", "ws"])
async def test_one_agent_per_connection_and_closing_ends_the_server_side(websocket: bool) -> None:
    made: list[EchoAgent] = []

    def factory() -> EchoAgent:
        made.append(EchoAgent(0.0))
        return made[-1]

    app = agent_app(factory)
    async with serving(app) as url:
        first, second = Recorder(), Recorder()
        async with (
            await connect(url, first, websocket=websocket) as a,
            await connect(url, second, websocket=websocket) as b,
        ):
            await two_turns(a.agent, first)
            await two_turns(b.agent, second)
            assert len(app.connections) == 2
            ended = [app.connections[a.connection_id or ""].task, app.connections[b.connection_id or ""].task]
        # Each agent opened its own first session: the factory ran once per connection.
        assert len(made) == 2 and all(agent.sessions == 1 for agent in made)
        await asyncio.wait_for(asyncio.gather(*ended), 10)
        assert app.connections == {}


async def test_a_connection_nobody_uses_is_reaped_after_the_idle_timeout() -> None:
    app = agent_app(lambda: EchoAgent(0.0), limits=ServerLimits(idle_timeout=0.2))
    async with serving(app) as url:
        from tests.acp.remote_peers import INITIALIZE, JSON, exchange

        response, body = await exchange(url, "POST", [JSON], INITIALIZE)
        assert response.status == 200 and b'"result"' in body
        connection_id = response.header("acp-connection-id")
        assert connection_id in app.connections
        task = app.connections[connection_id or ""].task
        await asyncio.wait_for(task, 10)  # ended by the reaper, nothing else
        assert connection_id not in app.connections
        response, _ = await exchange(url, "DELETE", [("Acp-Connection-Id", connection_id or "")])
        assert response.status == 404


async def test_the_client_keeps_and_returns_the_cookies_the_server_sets() -> None:
    inner = agent_app(lambda: EchoAgent(0.0))
    seen: list[tuple[str, str | None]] = []

    async def with_cookie(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await inner(scope, receive, send)
            return
        headers = dict(scope["headers"])
        cookie = headers.get(b"cookie")
        seen.append((scope.get("method", "WS"), None if cookie is None else cookie.decode()))

        async def send_with_cookie(message: Message) -> None:
            if message["type"] in ("http.response.start", "websocket.accept"):
                message = {**message, "headers": [*message.get("headers", []), (b"set-cookie", b"route=b7; Path=/")]}
            await send(message)

        await inner(scope, receive, send_with_cookie)

    async with serving(with_cookie) as url:
        recorder = Recorder()
        async with await connect(url, recorder) as remote:
            await two_turns(remote.agent, recorder)
            assert remote.cookies == {"route": "b7"}
    # Every request after the first carried the cookie: POSTs, both streams, the DELETE.
    assert seen[0] == ("POST", None)
    assert len(seen) > 5 and all(cookie == "route=b7" for _, cookie in seen[1:])
    assert {method for method, _ in seen} == {"POST", "GET", "DELETE"}


async def test_a_refused_message_fails_its_call_and_keeps_the_connection() -> None:
    app = agent_app(lambda: EchoAgent(0.0), limits=ServerLimits(max_body_bytes=4096))
    async with serving(app) as url:
        recorder = Recorder()
        async with await connect(url, recorder) as remote:
            from agentproto.acp import v1
            from agentproto.acp.errors import PeerError

            await remote.agent.initialize(v1.InitializeRequest(protocol_version=1))
            session = (await remote.agent.new_session(v1.NewSessionRequest(cwd="/", mcp_servers=[]))).session_id
            big = v1.PromptRequest(session_id=session, prompt=[v1.TextContent(text="x" * 10_000)])
            with pytest.raises(PeerError) as refused:
                await remote.agent.prompt(big)
            assert refused.value.error.code == -32600 and "HTTP 413" in refused.value.error.message
            small = v1.PromptRequest(session_id=session, prompt=[v1.TextContent(text="still here")])
            assert (await remote.agent.prompt(small)).stop_reason == "end_turn"
            assert "".join(recorder.chunks) == "still here"


def test_outgoing_routing_reads_only_what_it_needs() -> None:
    from agentproto.acp.remote.routing import result_session, scan_outgoing

    update = b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{}}}'
    assert scan_outgoing(update).session == "s1"
    answer = b'{"jsonrpc":"2.0","id":7,"result":{"sessionId":"s2"}}'
    assert scan_outgoing(answer).response_id == 7 and result_session(answer) == "s2"
    assert scan_outgoing(b"not json").session is None
    assert msgspec.json.decode(answer)["id"] == 7
