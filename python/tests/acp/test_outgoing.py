"""Nothing invalid goes out by default, and handler failures reach the developer: a
handler result that is not its method's typed result is refused (-32603 to the peer, no
session registered, a clear local report), outgoing params are validated unless
`strict=False`, and a raising handler is logged on `agentproto.acp` with its method,
request id and traceback, or given to `on_error`."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from agentproto.acp import v1
from agentproto.acp.errors import InvalidParams, PeerError
from agentproto.acp.options import AcpOptions, HandlerFailure, InvalidHandlerResult
from agentproto.jsonrpc.memory import duplex

WAIT = 10.0
INIT = v1.InitializeRequest(protocol_version=v1.PROTOCOL_VERSION)
NEW = v1.NewSessionRequest(cwd="/", mcp_servers=[])


class Agent(v1.Agent):
    """Answers `session/new` with whatever `new_session_result` holds; `prompt` raises
    or streams an update whose params the test chose."""

    def __init__(self) -> None:
        self.new_session_result: Any = v1.NewSessionResponse(session_id="s-1")
        self.update: Any = None
        self.sent: list[BaseException] = []

    async def initialize(self, cx: v1.AgentContext, params: v1.InitializeRequest) -> v1.InitializeResponse:
        return v1.InitializeResponse(protocol_version=v1.PROTOCOL_VERSION)

    async def new_session(self, cx: v1.AgentContext, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        result: v1.NewSessionResponse = self.new_session_result
        return result

    async def prompt(self, cx: v1.AgentContext, params: v1.PromptRequest) -> v1.PromptResponse:
        if self.update is None:
            raise RuntimeError("the model is unreachable")
        try:
            await cx.peer.session_update(v1.SessionNotification(session_id=params.session_id, update=self.update))
        except InvalidParams as e:
            self.sent.append(e)
        return v1.PromptResponse(stop_reason="end_turn")


class Client(v1.Client):
    def __init__(self) -> None:
        self.updates: list[v1.SessionUpdate] = []

    async def request_permission(
        self, cx: v1.ClientContext, params: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse:
        return v1.RequestPermissionResponse(outcome=v1.RequestPermissionOutcomeCancelled())

    async def session_update(self, cx: v1.ClientContext, params: v1.SessionNotification) -> None:
        if isinstance(params.update, v1.SessionUpdateAgentThoughtChunk):
            raise TypeError("the UI could not show a thought")
        self.updates.append(params.update)


class Pair:
    def __init__(self, agent: Agent, client: Client, options: AcpOptions) -> None:
        (a_in, a_out), (c_in, c_out) = duplex()
        agent_side, _ = v1.connect_agent(agent, a_in, a_out, options)
        client_side, self.to_agent = v1.connect_client(client, c_in, c_out, AcpOptions())
        self._tasks = [asyncio.create_task(agent_side.run()), asyncio.create_task(client_side.run())]

    async def __aenter__(self) -> v1.AgentConnection:
        await asyncio.wait_for(self.to_agent.initialize(INIT), WAIT)
        return self.to_agent

    async def __aexit__(self, *exc: object) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.wait(self._tasks, timeout=WAIT)


def test_outgoing_validation_is_on_by_default() -> None:
    assert AcpOptions().strict is True


async def test_a_dict_result_is_refused_and_registers_no_session(caplog: pytest.LogCaptureFixture) -> None:
    agent = Agent()
    agent.new_session_result = {"sessionId": "s-1"}
    caplog.set_level(logging.ERROR, logger="agentproto.acp")
    async with Pair(agent, Client(), AcpOptions()) as to_agent:
        with pytest.raises(PeerError) as raised:
            await asyncio.wait_for(to_agent.new_session(NEW), WAIT)
        assert raised.value.error.code == -32603
        assert "expected a `NewSessionResponse`" in raised.value.error.message
        # No half-success: the session the dict named does not exist on the agent.
        prompt = v1.PromptRequest(session_id="s-1", prompt=[v1.TextContent(text="hi")])
        with pytest.raises(PeerError) as unknown:
            await asyncio.wait_for(to_agent.prompt(prompt), WAIT)
        assert unknown.value.error.code == -32002
    [record] = [r for r in caplog.records if r.name == "agentproto.acp"]
    assert "session/new" in record.getMessage() and "a `dict`" in record.getMessage()
    assert record.exc_info is not None and isinstance(record.exc_info[1], InvalidHandlerResult)


async def test_a_dict_result_is_refused_without_strict_too() -> None:
    agent = Agent()
    agent.new_session_result = {"sessionId": "s-1"}
    failures: list[HandlerFailure] = []
    async with Pair(agent, Client(), AcpOptions(strict=False, on_error=failures.append)) as to_agent:
        with pytest.raises(PeerError) as raised:
            await asyncio.wait_for(to_agent.new_session(NEW), WAIT)
    assert raised.value.error.code == -32603
    [failure] = failures
    assert (failure.method, failure.notification) == ("session/new", False)
    assert isinstance(failure.exception, InvalidHandlerResult)


async def test_an_invalid_typed_result_is_refused_by_default() -> None:
    agent = Agent()
    # The right class with a value of the wrong type in it.
    agent.new_session_result = v1.NewSessionResponse(session_id=42)  # type: ignore[arg-type]
    failures: list[HandlerFailure] = []
    async with Pair(agent, Client(), AcpOptions(on_error=failures.append)) as to_agent:
        with pytest.raises(PeerError) as raised:
            await asyncio.wait_for(to_agent.new_session(NEW), WAIT)
    assert raised.value.error.code == -32603
    assert "$.result.sessionId" in raised.value.error.message
    assert [f.method for f in failures] == ["session/new"]


async def test_invalid_params_are_refused_by_default_and_sent_with_strict_off() -> None:
    # A chunk whose text is a number: refused locally by default, nothing sent.
    bad = v1.SessionUpdateAgentMessageChunk(content=v1.TextContent(text=42))  # type: ignore[arg-type]
    for options, refused in ((AcpOptions(), True), (AcpOptions(strict=False), False)):
        agent, client = Agent(), Client()
        agent.update = bad
        async with Pair(agent, client, options) as to_agent:
            session = await asyncio.wait_for(to_agent.new_session(NEW), WAIT)
            prompt = v1.PromptRequest(session_id=session.session_id, prompt=[v1.TextContent(text="hi")])
            answer = await asyncio.wait_for(to_agent.prompt(prompt), WAIT)
        assert answer.stop_reason == "end_turn"
        assert bool(agent.sent) is refused
        if refused:
            assert "$.params.update.content.text" in str(agent.sent[0])
        # With the check off the receiver refuses the invalid notification itself.
        assert client.updates == []


async def test_a_raising_request_handler_is_logged_with_method_id_and_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.ERROR, logger="agentproto.acp")
    async with Pair(Agent(), Client(), AcpOptions()) as to_agent:
        session = await asyncio.wait_for(to_agent.new_session(NEW), WAIT)
        prompt = v1.PromptRequest(session_id=session.session_id, prompt=[v1.TextContent(text="hi")])
        with pytest.raises(PeerError) as raised:
            await asyncio.wait_for(to_agent.prompt(prompt), WAIT)
    assert raised.value.error.code == -32603
    [record] = [r for r in caplog.records if r.name == "agentproto.acp"]
    message = record.getMessage()
    # The prompt is the client's third request (initialize 0, session/new 1).
    assert "session/prompt" in message and "request 2" in message and "the model is unreachable" in message
    assert record.exc_info is not None and isinstance(record.exc_info[1], RuntimeError)
    assert "Traceback" in caplog.text and "in prompt" in caplog.text


async def test_a_raising_handler_goes_to_on_error_instead_of_the_log(caplog: pytest.LogCaptureFixture) -> None:
    failures: list[HandlerFailure] = []
    caplog.set_level(logging.ERROR, logger="agentproto.acp")
    async with Pair(Agent(), Client(), AcpOptions(on_error=failures.append)) as to_agent:
        session = await asyncio.wait_for(to_agent.new_session(NEW), WAIT)
        prompt = v1.PromptRequest(session_id=session.session_id, prompt=[v1.TextContent(text="hi")])
        with pytest.raises(PeerError):
            await asyncio.wait_for(to_agent.prompt(prompt), WAIT)
    [failure] = failures
    assert (failure.method, failure.request_id, failure.notification) == ("session/prompt", 2, False)
    assert isinstance(failure.exception, RuntimeError)
    assert not [r for r in caplog.records if r.name == "agentproto.acp"]


async def test_a_raising_notification_handler_is_reported() -> None:
    failures: list[HandlerFailure] = []
    agent, client = Agent(), Client()
    agent.update = v1.SessionUpdateAgentThoughtChunk(content=v1.TextContent(text="hmm"))
    (a_in, a_out), (c_in, c_out) = duplex()
    agent_side, _ = v1.connect_agent(agent, a_in, a_out)
    client_side, to_agent = v1.connect_client(client, c_in, c_out, AcpOptions(on_error=failures.append))
    tasks = [asyncio.create_task(agent_side.run()), asyncio.create_task(client_side.run())]
    try:
        await asyncio.wait_for(to_agent.initialize(INIT), WAIT)
        session = await asyncio.wait_for(to_agent.new_session(NEW), WAIT)
        prompt = v1.PromptRequest(session_id=session.session_id, prompt=[v1.TextContent(text="hi")])
        answer = await asyncio.wait_for(to_agent.prompt(prompt), WAIT)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.wait(tasks, timeout=WAIT)
    assert answer.stop_reason == "end_turn"
    [failure] = failures
    assert (failure.method, failure.request_id, failure.notification) == ("session/update", None, True)
    assert isinstance(failure.exception, TypeError)
