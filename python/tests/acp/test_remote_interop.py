"""ACP over the network against the official Python SDK (agent-client-protocol 0.12.1,
its `http` extra), over real sockets on 127.0.0.1: its Streamable HTTP and WebSocket
clients against our agent, and our client against its `AcpServer` (ASGI app under
uvicorn). Two prompt turns each, with streamed updates."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentproto.acp.remote import agent_app, connect
from agentproto.examples.echo_agent import EchoAgent
from tests.acp.remote_peers import Recorder, serving, two_turns

acp = pytest.importorskip("acp")
pytest.importorskip("acp.http.client")
pytest.importorskip("acp.ws.client")

PROMPTS = ["alpha beta gamma delta", "epsilon zeta"]


class OfficialClient:
    """An application for the official SDK's client side: records message chunks."""

    def __init__(self) -> None:
        self.chunks: list[str] = []

    def on_connect(self, conn: Any) -> None:
        pass

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if getattr(update, "session_update", None) == "agent_message_chunk":
            self.chunks.append(update.content.text)

    async def request_permission(self, options: Any, session_id: str, tool_call: Any, **kwargs: Any) -> Any:
        from acp.schema import AllowedOutcome

        return acp.RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id="yes"))


class OfficialAgent:
    """An echo agent on the official SDK: streams each word of the prompt as a chunk."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn
        self._sessions = 0

    async def initialize(self, protocol_version: int, **kwargs: Any) -> Any:
        return acp.InitializeResponse(protocol_version=1)

    async def new_session(self, cwd: str, **kwargs: Any) -> Any:
        self._sessions += 1
        return acp.NewSessionResponse(session_id=f"official-{self._sessions}")

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> Any:
        text = "".join(getattr(block, "text", "") for block in prompt)
        for word in text.split(" "):
            await self._conn.session_update(session_id=session_id, update=acp.update_agent_message_text(word + " "))
        return acp.PromptResponse(stop_reason="end_turn")


async def official_turns(transport: Any) -> list[tuple[str, list[str]]]:
    app = OfficialClient()
    conn = acp.connect_to_agent(app, transport)
    try:
        await conn.initialize(protocol_version=1)
        session = await conn.new_session(cwd="/", mcp_servers=[])
        turns = []
        for text in PROMPTS:
            app.chunks.clear()
            answer = await conn.prompt(session_id=session.session_id, prompt=[acp.text_block(text)])
            turns.append((answer.stop_reason, list(app.chunks)))
        return turns
    finally:
        await conn.close()


@pytest.mark.parametrize("websocket", [False, True], ids=["http", "ws"])
async def test_the_official_clients_against_our_agent(websocket: bool) -> None:
    app = agent_app(lambda: EchoAgent(0.0))
    async with serving(app) as url:
        if websocket:
            from acp.ws.client import create_websocket_stream

            transport = await create_websocket_stream(url.replace("http://", "ws://"))
        else:
            from acp.http.client import create_http_stream

            transport = create_http_stream(url)
        turns = await asyncio.wait_for(official_turns(transport), 20)
    # Our agent streams each word with the space after it; the official client must have
    # handled every update of a turn before its prompt call returned.
    assert turns == [
        ("end_turn", ["alpha ", "beta ", "gamma ", "delta"]),
        ("end_turn", ["epsilon ", "zeta"]),
    ]


@pytest.mark.parametrize("websocket", [False, True], ids=["http", "ws"])
async def test_our_client_against_the_official_server(websocket: bool) -> None:
    from acp.http.asgi import create_asgi_app

    async with serving(create_asgi_app(OfficialAgent)) as url:  # type: ignore[arg-type]
        recorder = Recorder()
        async with await connect(url, recorder, websocket=websocket) as remote:
            turns = await asyncio.wait_for(two_turns(remote.agent, recorder), 20)
            assert remote.connection_id
    assert turns == [
        ("end_turn", "one two three four five six seven eight ", 8),
        ("end_turn", "now a tool please ", 4),
    ]
