"""`v1.connect_pair`: an agent and a client in one process over in-memory pipes."""

from __future__ import annotations

import asyncio

import pytest

from agentproto.acp import v1
from agentproto.acp.errors import ConnectionFailed, PeerError
from agentproto.acp.options import AcpOptions
from agentproto.jsonrpc.options import ConnectionOptions

WAIT = 5.0  # seconds: every wait in these tests is bounded


class Echo(v1.Agent):
    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.stopped = asyncio.Event()
        self.hang = False

    async def initialize(self, cx: v1.AgentContext, params: v1.InitializeRequest) -> v1.InitializeResponse:
        return v1.InitializeResponse(protocol_version=v1.PROTOCOL_VERSION)

    async def new_session(self, cx: v1.AgentContext, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        return v1.NewSessionResponse(session_id="s-1")

    async def prompt(self, cx: v1.AgentContext, params: v1.PromptRequest) -> v1.PromptResponse:
        self.started.set()
        if self.hang:
            try:
                await asyncio.Event().wait()  # never set: only the shutdown ends this turn
            finally:
                self.stopped.set()
        for block in params.prompt:
            chunk = v1.SessionUpdateAgentMessageChunk(content=block)
            await cx.peer.session_update(v1.SessionNotification(session_id=params.session_id, update=chunk))
        return v1.PromptResponse(stop_reason="end_turn")


class Collect(v1.Client):
    def __init__(self) -> None:
        self.texts: list[str] = []
        self.got = asyncio.Event()

    async def request_permission(
        self, cx: v1.ClientContext, params: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse:
        raise AssertionError("nothing asks")

    async def session_update(self, cx: v1.ClientContext, params: v1.SessionNotification) -> None:
        update = params.update
        if isinstance(update, v1.SessionUpdateAgentMessageChunk) and isinstance(update.content, v1.TextContent):
            self.texts.append(update.content.text)
            self.got.set()


async def open_session(agent: v1.AgentConnection) -> str:
    await agent.initialize(v1.InitializeRequest(protocol_version=v1.PROTOCOL_VERSION))
    return (await agent.new_session(v1.NewSessionRequest(cwd="/", mcp_servers=[]))).session_id


def prompt_of(session_id: str, *texts: str) -> v1.PromptRequest:
    return v1.PromptRequest(session_id=session_id, prompt=[v1.TextContent(text=t) for t in texts])


async def test_a_prompt_turn_runs_between_the_two_sides() -> None:
    client = Collect()
    async with v1.connect_pair(Echo(), client) as pair:
        session_id = await open_session(pair.agent)
        answer = await pair.agent.prompt(prompt_of(session_id, "hello ", "world"))
        assert (answer.stop_reason, client.texts) == ("end_turn", ["hello ", "world"])


async def test_the_agent_side_handle_reaches_the_client_from_outside_a_handler() -> None:
    client = Collect()
    async with v1.connect_pair(Echo(), client) as pair:
        session_id = await open_session(pair.agent)
        chunk = v1.SessionUpdateAgentMessageChunk(content=v1.TextContent(text="unprompted"))
        await pair.client.session_update(v1.SessionNotification(session_id=session_id, update=chunk))
        await asyncio.wait_for(client.got.wait(), WAIT)
        assert client.texts == ["unprompted"]


async def test_leaving_the_block_ends_both_connections() -> None:
    async with v1.connect_pair(Echo(), Collect()) as pair:
        await open_session(pair.agent)
    with pytest.raises(ConnectionFailed):
        await pair.agent.new_session(v1.NewSessionRequest(cwd="/", mcp_servers=[]))
    with pytest.raises(ConnectionFailed):
        await pair.client.session_update(
            v1.SessionNotification(
                session_id="s-1", update=v1.SessionUpdateAgentMessageChunk(content=v1.TextContent(text="late"))
            )
        )


async def test_an_error_in_the_block_propagates_and_still_ends_the_connections() -> None:
    pair = v1.connect_pair(Echo(), Collect())
    with pytest.raises(LookupError, match="from the test"):
        async with pair:
            await open_session(pair.agent)
            raise LookupError("from the test")
    with pytest.raises(ConnectionFailed):
        await pair.agent.new_session(v1.NewSessionRequest(cwd="/", mcp_servers=[]))


async def test_a_turn_still_running_at_the_end_is_stopped_within_the_grace() -> None:
    agent = Echo()
    agent.hang = True
    quick = AcpOptions(connection=ConnectionOptions(allow_null_id=True, shutdown_grace=0.05))
    loop = asyncio.get_running_loop()
    async with v1.connect_pair(agent, Collect(), quick) as pair:
        session_id = await open_session(pair.agent)
        turn = asyncio.create_task(pair.agent.prompt(prompt_of(session_id, "never answered")))
        await asyncio.wait_for(agent.started.wait(), WAIT)
        started = loop.time()
    assert loop.time() - started < WAIT
    assert agent.stopped.is_set()  # the handler was stopped, not left behind
    with pytest.raises(PeerError) as failed:  # the agent side answered the running turn while it shut down
        await asyncio.wait_for(turn, WAIT)
    assert failed.value.error.code == -32800


async def test_entering_again_does_not_start_a_second_pair_of_connections() -> None:
    client = Collect()
    pair = v1.connect_pair(Echo(), client)
    async with pair:
        session_id = await open_session(pair.agent)
        await pair.__aenter__()
        answer = await pair.agent.prompt(prompt_of(session_id, "once"))
        assert (answer.stop_reason, client.texts) == ("end_turn", ["once"])
