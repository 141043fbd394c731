"""The two roles talking to each other in memory: typed handlers and calls, the rules
enforced on both sides (gates, value gates, session gates, `NotInitialized`, strict mode), cancellation
of a turn from the client, errors crossing the wire, and pipelined requests answered by
read order, run many times. Every wait is bounded."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from msgspec import UNSET, Raw

from agentproto.acp import v1
from agentproto.acp.errors import (
    CapabilityNotAdvertised,
    InvalidParams,
    NotAnnounced,
    NotInitialized,
    PeerError,
)
from agentproto.acp.options import AcpEvent, AcpOptions, NotificationBeforeInitialize, UnknownSession
from agentproto.acp.receive import ExtMessage
from agentproto.codec import DecodeErrorKind, Unknown
from agentproto.jsonrpc import ConnectionEvent, RequestError
from agentproto.jsonrpc.memory import duplex
from tests.jsonrpc.wire import WAIT, Wire

INIT = v1.InitializeRequest(protocol_version=1)
NEW = v1.NewSessionRequest(cwd="/tmp", mcp_servers=[])
MODES = v1.SessionModeState(current_mode_id="m", available_modes=[v1.SessionMode(id="m", name="M")])


def text_prompt(session: str, text: str) -> v1.PromptRequest:
    return v1.PromptRequest(session_id=session, prompt=[v1.TextContent(text=text)])


class Agent(v1.Agent):
    """Streams `n` updates for a prompt `stream n`; asks permission for `ask`; reads a
    file for `read <path>`; waits for cancellation for `wait`."""

    def __init__(
        self, capabilities: v1.AgentCapabilities | None = None, modes: v1.SessionModeState | None = None
    ) -> None:
        self.capabilities = capabilities if capabilities is not None else v1.AgentCapabilities()
        self.modes = modes  # announced by `session/new` when given
        self.cancelled = asyncio.Event()
        self.waiting = asyncio.Event()

    async def initialize(self, cx: v1.AgentContext, params: v1.InitializeRequest) -> v1.InitializeResponse:
        return v1.InitializeResponse(protocol_version=1, agent_capabilities=self.capabilities)

    async def new_session(self, cx: v1.AgentContext, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        return v1.NewSessionResponse(session_id="s1", modes=self.modes if self.modes is not None else UNSET)

    async def prompt(self, cx: v1.AgentContext, params: v1.PromptRequest) -> v1.PromptResponse:
        block = params.prompt[0]
        assert isinstance(block, v1.TextContent)
        command, _, argument = block.text.partition(" ")
        if command == "stream":
            for i in range(int(argument)):
                chunk = v1.SessionUpdateAgentMessageChunk(content=v1.TextContent(text=str(i)))
                await cx.peer.session_update(v1.SessionNotification(session_id=params.session_id, update=chunk))
        elif command == "ask":
            options = [v1.PermissionOption(option_id="ok", name="OK", kind="allow_once")]
            ask = v1.RequestPermissionRequest(
                session_id=params.session_id, tool_call=v1.ToolCallUpdate(tool_call_id="t"), options=options
            )
            answer = await cx.peer.request_permission(ask)
            cancelled = isinstance(answer.outcome, v1.RequestPermissionOutcomeCancelled)
            return v1.PromptResponse(stop_reason="cancelled" if cancelled else "end_turn")
        elif command == "read":
            # A failed call let through becomes -32603 naming the call.
            await cx.peer.read_text_file(v1.ReadTextFileRequest(session_id=params.session_id, path=argument))
        elif command == "wait":
            try:
                self.waiting.set()
                await asyncio.get_running_loop().create_future()
            finally:
                self.cancelled.set()
        return v1.PromptResponse(stop_reason="end_turn")

    async def ext_method(self, cx: v1.AgentContext, request: ExtMessage) -> Raw:
        return Raw(b'{"echo":' + (bytes(request.payload) if request.payload is not None else b"null") + b"}")


class Client(v1.Client):
    def __init__(self) -> None:
        self.updates: list[str] = []
        self.asked = asyncio.Event()

    async def request_permission(
        self, cx: v1.ClientContext, params: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse:
        self.asked.set()
        await asyncio.get_running_loop().create_future()  # left to the user, who never answers
        raise AssertionError("unreachable")  # pragma: no cover

    async def session_update(self, cx: v1.ClientContext, params: v1.SessionNotification) -> None:
        update = params.update
        assert isinstance(update, v1.SessionUpdateAgentMessageChunk) and isinstance(update.content, v1.TextContent)
        self.updates.append(update.content.text)

    async def read_text_file(self, cx: v1.ClientContext, params: v1.ReadTextFileRequest) -> v1.ReadTextFileResponse:
        raise RequestError(-32002, "no such file", b'{"path":"x"}')


class Pair:
    """An agent and a client connected in memory."""

    def __init__(self, agent: Agent, client: Client, options: AcpOptions | None = None) -> None:
        self.events: list[ConnectionEvent | AcpEvent] = []
        options = options if options is not None else AcpOptions(strict=True)
        options.observer = self.events.append
        (a_in, a_out), (c_in, c_out) = duplex()
        agent_side, self.to_client = v1.connect_agent(agent, a_in, a_out, options)
        client_side, self.to_agent = v1.connect_client(client, c_in, c_out, options)
        self._tasks = [asyncio.create_task(agent_side.run()), asyncio.create_task(client_side.run())]

    async def __aenter__(self) -> v1.AgentConnection:
        return self.to_agent

    async def __aexit__(self, *exc: object) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.wait(self._tasks, timeout=WAIT)


async def test_updates_streamed_during_a_turn_are_all_handled_when_it_returns() -> None:
    client = Client()
    async with Pair(Agent(), client) as agent:
        answer = await asyncio.wait_for(agent.initialize(INIT), WAIT)
        assert answer.protocol_version == 1 and agent.protocol_version == 1
        session = (await agent.new_session(NEW)).session_id
        result = await asyncio.wait_for(agent.prompt(text_prompt(session, "stream 3000")), WAIT)
        assert result.stop_reason == "end_turn"
        assert client.updates == [str(i) for i in range(3000)]


async def test_calls_before_initialize_fail_locally_and_gates_are_checked_before_sending() -> None:
    async with Pair(Agent(), Client()) as agent:
        with pytest.raises(NotInitialized):
            await agent.new_session(NEW)
        await asyncio.wait_for(agent.initialize(INIT), WAIT)
        capabilities = agent.agent_capabilities  # typed, as the agent's answer was decoded
        assert isinstance(capabilities, v1.AgentCapabilities) and capabilities.load_session is False
        with pytest.raises(CapabilityNotAdvertised) as gate:
            await agent.load_session(v1.LoadSessionRequest(session_id="old", cwd="/", mcp_servers=[]))
        assert gate.value.capability == "agentCapabilities.loadSession"
        image = v1.ImageContent(data="aGk=", mime_type="image/png")
        with pytest.raises(CapabilityNotAdvertised) as value_gate:
            await agent.prompt(v1.PromptRequest(session_id="s1", prompt=[image]))
        assert value_gate.value.capability == "agentCapabilities.promptCapabilities.image"


async def test_an_unimplemented_handler_answers_method_not_found() -> None:
    # The session announces modes, so `session/set_mode` passes its session gate.
    async with Pair(Agent(modes=MODES), Client()) as agent:
        await asyncio.wait_for(agent.initialize(INIT), WAIT)
        with pytest.raises(PeerError) as raised:
            await asyncio.wait_for(agent.set_session_mode(v1.SetSessionModeRequest(session_id="s", mode_id="m")), WAIT)
        # The agent checks the session first (-32002); a known one reaches the -32601 default.
        assert raised.value.error.code == -32002
        session = (await agent.new_session(NEW)).session_id
        with pytest.raises(PeerError) as raised:
            await agent.set_session_mode(v1.SetSessionModeRequest(session_id=session, mode_id="m"))
        assert raised.value.error.code == -32601


async def test_set_mode_needs_modes_in_the_answer_that_opened_the_session() -> None:
    """The client refuses to send `session/set_mode` for a session answered without
    `modes`; the agent answers one that arrives anyway -32602 naming the session."""
    async with Pair(Agent(), Client()) as agent:
        await asyncio.wait_for(agent.initialize(INIT), WAIT)
        session = (await agent.new_session(NEW)).session_id
        with pytest.raises(NotAnnounced) as refused:
            await agent.set_session_mode(v1.SetSessionModeRequest(session_id=session, mode_id="m"))
        assert (refused.value.method, refused.value.session, refused.value.member) == (
            "session/set_mode",
            "s1",
            "modes",
        )
    (ours_in, ours_out), (theirs_in, theirs_out) = duplex()
    connection, _ = v1.connect_agent(Agent(), ours_in, ours_out, AcpOptions())
    running = asyncio.create_task(connection.run())
    wire = Wire(theirs_in, theirs_out)
    await wire.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}})
    await wire.send({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}})
    await wire.send(
        {"jsonrpc": "2.0", "id": 2, "method": "session/set_mode", "params": {"sessionId": "s1", "modeId": "m"}}
    )
    answers: dict[int, Any] = {}
    while len(answers) < 3:
        message = await wire.message()
        answers[message["id"]] = message
    assert answers[1]["result"] == {"sessionId": "s1"}
    error = answers[2]["error"]
    assert error["code"] == -32602
    assert (error["data"]["path"], error["data"]["found"]) == ("$.params.sessionId", "s1")
    theirs_out.close()
    await asyncio.wait_for(running, WAIT)


async def test_a_failed_call_let_through_by_a_handler_names_the_call_and_its_cause() -> None:
    caps = v1.ClientCapabilities(fs=v1.FileSystemCapabilities(read_text_file=True))
    async with Pair(Agent(), Client()) as agent:
        await asyncio.wait_for(
            agent.initialize(v1.InitializeRequest(protocol_version=1, client_capabilities=caps)), WAIT
        )
        session = (await agent.new_session(NEW)).session_id
        with pytest.raises(PeerError) as raised:
            await asyncio.wait_for(agent.prompt(text_prompt(session, "read /x")), WAIT)
        error = raised.value.error
        assert error.code == -32603
        assert isinstance(error.data, Raw)
        data = json.loads(bytes(error.data))
        assert data == {"method": "fs/read_text_file", "cause": {"code": -32002, "message": "no such file"}}


async def test_strict_mode_refuses_invalid_params_and_sends_nothing() -> None:
    async with Pair(Agent(), Client()) as agent:
        await asyncio.wait_for(agent.initialize(INIT), WAIT)
        broken = v1.NewSessionRequest(cwd=42, mcp_servers=[])  # type: ignore[arg-type]
        with pytest.raises(InvalidParams) as raised:
            await agent.new_session(broken)
        assert raised.value.error.path == "$.params.cwd"
        assert raised.value.error.kind is DecodeErrorKind.WRONG_TYPE


async def test_strict_mode_refuses_what_the_receiver_would_salvage_with_the_warnings_failure() -> None:
    async with Pair(Agent(), Client()) as agent:
        await asyncio.wait_for(agent.initialize(INIT), WAIT)
        session = (await agent.new_session(NEW)).session_id
        # A content block the schema does not list: the receiver would keep it raw.
        unknown = Unknown("hologram", Raw(b'{"type":"hologram"}'))
        prompt = v1.PromptRequest(session_id=session, prompt=[unknown])
        with pytest.raises(InvalidParams) as raised:
            await agent.prompt(prompt)
        error = raised.value.error
        assert (error.path, error.kind, error.expected, error.found) == (
            "$.params.prompt[0]",
            DecodeErrorKind.UNKNOWN_VARIANT,
            "a known variant of ContentBlock",
            'the string "hologram"',
        )


async def test_values_that_cannot_be_sent_are_not_encodable_at_their_path() -> None:
    async with Pair(Agent(), Client()) as agent:
        await asyncio.wait_for(agent.initialize(INIT), WAIT)
        broken = {"cwd": "/", "mcpServers": [], "_meta": {"a": [1, object()]}}
        with pytest.raises(InvalidParams) as raised:
            await agent.new_session(broken)  # type: ignore[arg-type]
        error = raised.value.error
        assert (error.path, error.kind, error.expected) == (
            "$.params._meta.a[1]",
            DecodeErrorKind.NOT_ENCODABLE,
            "a value JSON can hold",
        )
        assert error.found == "a value of the Python type object"
        with pytest.raises(InvalidParams) as named:
            await agent.ext_method("x/echo")
        assert (named.value.error.path, named.value.error.kind, named.value.error.found) == (
            "$.method",
            DecodeErrorKind.NOT_ENCODABLE,
            '"x/echo"',
        )
        assert named.value.error.message == 'expected a method name starting with `_`, found "x/echo"'


async def test_cancelling_a_session_answers_its_permission_request_and_ends_the_turn() -> None:
    client = Client()
    async with Pair(Agent(), client) as agent:
        await asyncio.wait_for(agent.initialize(INIT), WAIT)
        session = (await agent.new_session(NEW)).session_id
        turn = asyncio.create_task(agent.prompt(text_prompt(session, "ask")))
        await asyncio.wait_for(client.asked.wait(), WAIT)
        await agent.cancel(v1.CancelNotification(session_id=session))
        # The client answered `cancelled` for the application; the agent ends its turn.
        assert (await asyncio.wait_for(turn, WAIT)).stop_reason == "cancelled"


async def test_session_cancel_stops_a_handler_that_does_not_handle_it() -> None:
    agent_app = Agent()
    async with Pair(agent_app, Client()) as agent:
        await asyncio.wait_for(agent.initialize(INIT), WAIT)
        session = (await agent.new_session(NEW)).session_id
        turn = asyncio.create_task(agent.prompt(text_prompt(session, "wait")))
        await asyncio.wait_for(agent_app.waiting.wait(), WAIT)
        await agent.cancel(v1.CancelNotification(session_id=session))
        assert (await asyncio.wait_for(turn, WAIT)).stop_reason == "cancelled"
        assert agent_app.cancelled.is_set()


async def test_a_cancellable_call_sends_cancel_request_and_gets_minus_32800() -> None:
    from agentproto.jsonrpc import CancellationToken

    agent_app = Agent()
    async with Pair(agent_app, Client()) as agent:
        await asyncio.wait_for(agent.initialize(INIT), WAIT)
        session = (await agent.new_session(NEW)).session_id
        token = CancellationToken()
        turn = asyncio.create_task(agent.with_cancellation(token).prompt(text_prompt(session, "wait")))
        await asyncio.wait_for(agent_app.waiting.wait(), WAIT)
        token.cancel()
        with pytest.raises(PeerError) as raised:
            await asyncio.wait_for(turn, WAIT)
        assert raised.value.error.code == -32800
        # The turn is over: the session takes the next prompt.
        assert (await asyncio.wait_for(agent.prompt(text_prompt(session, "stream 1")), WAIT)).stop_reason == "end_turn"


async def test_extension_methods_pass_through_raw() -> None:
    async with Pair(Agent(), Client()) as agent:
        await asyncio.wait_for(agent.initialize(INIT), WAIT)
        result = await asyncio.wait_for(agent.ext_method("_x/echo", b'{"a":[1]}'), WAIT)
        assert bytes(result) == b'{"echo":{"a":[1]}}'
        with pytest.raises(InvalidParams):
            await agent.ext_method("x/echo")


async def test_notifications_before_initialize_are_dropped_and_reported() -> None:
    events: list[Any] = []
    (ours_in, ours_out), (theirs_in, theirs_out) = duplex()
    connection, _ = v1.connect_agent(Agent(), ours_in, ours_out, AcpOptions(observer=events.append))
    running = asyncio.create_task(connection.run())
    wire = Wire(theirs_in, theirs_out)
    await wire.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}})
    await wire.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}})
    assert (await wire.message())["result"]["protocolVersion"] == 1
    assert NotificationBeforeInitialize("session/cancel") in events
    theirs_out.close()
    await asyncio.wait_for(running, WAIT)


@pytest.mark.parametrize("round", range(3))
async def test_pipelined_requests_are_answered_by_read_order_every_time(round: int) -> None:
    """`initialize`, `session/new`, a prompt for the new session and a request naming it,
    written at once, get the same answers however the handlers are scheduled (100 runs)."""
    for _ in range(100):
        (ours_in, ours_out), (theirs_in, theirs_out) = duplex()
        connection, _ = v1.connect_agent(Agent(), ours_in, ours_out, AcpOptions(strict=True))
        running = asyncio.create_task(connection.run())
        wire = Wire(theirs_in, theirs_out)
        await wire.send_raw(
            b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}\n'
            b'{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}\n'
            b'{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":'
            b'[{"type":"text","text":"stream 2"}]}}\n'
            b'{"jsonrpc":"2.0","id":3,"method":"session/set_mode","params":{"sessionId":"s1","modeId":"m"}}\n'
            b'{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"nope","prompt":[]}}\n'
        )
        answers = {}
        for _ in range(7):
            message = await wire.message()
            if "id" in message:
                answers[message["id"]] = message.get("error", {}).get("code", "ok")
        # 3: the session `session/new` created (read before it) announced no modes.
        assert answers == {0: "ok", 1: "ok", 2: "ok", 3: -32602, 4: -32002}
        theirs_out.close()
        await asyncio.wait_for(running, WAIT)


class SlowToOpen(Agent):
    """Yields to the event loop a few times before creating its session; notes cancels."""

    def __init__(self) -> None:
        super().__init__()
        self.cancels: list[str] = []

    async def new_session(self, cx: v1.AgentContext, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        for _ in range(3):
            await asyncio.sleep(0)
        return await super().new_session(cx, params)

    async def cancel(self, cx: v1.AgentContext, params: v1.CancelNotification) -> None:
        self.cancels.append(params.session_id)


async def test_a_session_cancel_pipelined_while_its_session_opens_waits_for_it() -> None:
    """A `session/cancel` naming the session a pipelined `session/new` is still creating
    waits for that request (read order) and is never dropped as a cancel for an unknown
    session (200 runs). It reaches the agent from a task of its own, which the connection
    waits for: by the time `run()` returns, the agent has it."""
    for _ in range(200):
        events: list[Any] = []
        (ours_in, ours_out), (theirs_in, theirs_out) = duplex()
        agent = SlowToOpen()
        connection, _ = v1.connect_agent(agent, ours_in, ours_out, AcpOptions(observer=events.append))
        running = asyncio.create_task(connection.run())
        wire = Wire(theirs_in, theirs_out)
        await wire.send_raw(
            b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}\n'
            b'{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}\n'
            b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}\n'
        )
        answers: dict[int, Any] = {}
        while len(answers) < 2:
            message = await wire.message()
            answers[message["id"]] = message
        assert answers[1]["result"]["sessionId"] == "s1"
        theirs_out.close()
        await asyncio.wait_for(running, WAIT)
        assert [e for e in events if isinstance(e, UnknownSession)] == []
        assert agent.cancels == ["s1"]


class AsksWhileOpening(Agent):
    """Asks the client something from `session/new` and waits for the answer."""

    async def new_session(self, cx: v1.AgentContext, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        await cx.peer.ext_method("_ask")
        return await super().new_session(cx, params)


async def test_a_cancel_waiting_for_its_session_does_not_hold_up_the_answers_the_opener_waits_for() -> None:
    """`session/new` waits for the client's answer to `_ask`, read after a pipelined
    `session/cancel`; answers are delivered after the notifications read before them, so
    a cancel blocking the serial notification worker until `session/new` ends would
    stall the connection."""
    events: list[Any] = []
    agent_app = AsksWhileOpening()
    (ours_in, ours_out), (theirs_in, theirs_out) = duplex()
    connection, _ = v1.connect_agent(agent_app, ours_in, ours_out, AcpOptions(observer=events.append))
    running = asyncio.create_task(connection.run())
    wire = Wire(theirs_in, theirs_out)
    await wire.send_raw(
        b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}\n'
        b'{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}\n'
        b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}\n'
    )
    opened = None
    while opened is None:
        message = await wire.message()
        if message.get("method") == "_ask":
            await wire.send({"jsonrpc": "2.0", "id": message["id"], "result": {}})
        elif message.get("id") == 1:
            opened = message
    assert opened["result"]["sessionId"] == "s1"
    theirs_out.close()
    await asyncio.wait_for(running, WAIT)
    assert [e for e in events if isinstance(e, UnknownSession)] == []


async def test_prompts_pipelined_on_one_session_take_turns_in_read_order() -> None:
    """A client should wait for a turn to end before the next prompt; one that does not
    still gets the same answers every time: the second prompt waits for the first (200 runs)."""
    for _ in range(200):
        (ours_in, ours_out), (theirs_in, theirs_out) = duplex()
        connection, _ = v1.connect_agent(SlowToOpen(), ours_in, ours_out, AcpOptions())
        running = asyncio.create_task(connection.run())
        wire = Wire(theirs_in, theirs_out)
        prompt = b'"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"stream 1"}]}}'
        await wire.send_raw(
            b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}\n'
            b'{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}\n'
            b'{"jsonrpc":"2.0","id":2,' + prompt + b"\n"
            b'{"jsonrpc":"2.0","id":3,' + prompt + b"\n"
        )
        answers: dict[int, Any] = {}
        while len(answers) < 4:
            message = await wire.message()
            if "id" in message:
                answers[message["id"]] = message.get("result", {}).get("stopReason", message.get("error"))
        assert answers[2] == "end_turn" and answers[3] == "end_turn", answers
        theirs_out.close()
        await asyncio.wait_for(running, WAIT)
