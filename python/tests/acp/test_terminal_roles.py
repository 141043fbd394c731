"""Terminals end to end: an agent drives `TerminalHandle`s on a client that answers with
`Terminals`, over an in-memory pair with strict validation on both sides. The handle
embeds itself in a tool call, reads the output and releases the terminal; `async with`
releases on an error and after `session/cancel` (release is not tied to the turn); a
client that did not advertise `terminal` is never asked. Every wait is bounded."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any, Self

import pytest
from msgspec import Raw

from agentproto.acp import TerminalHandle, Terminals, v1
from agentproto.acp.errors import PeerError
from agentproto.acp.options import AcpOptions
from agentproto.codec import encode
from agentproto.jsonrpc.memory import duplex

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="process groups are POSIX")

WAIT = 10.0
NEW = v1.NewSessionRequest(cwd="/tmp", mcp_servers=[])


class Agent(v1.Agent):
    """`run`: runs a greeting through a terminal shown in a tool call; `fail`: raises
    inside `async with`; `wait`: waits for a command that never ends until cancelled."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, v1.TerminalOutputResponse, v1.WaitForTerminalExitResponse]] = []
        self.waiting = asyncio.Event()

    async def initialize(self, cx: v1.AgentContext, params: v1.InitializeRequest) -> v1.InitializeResponse:
        return v1.InitializeResponse(protocol_version=1)

    async def new_session(self, cx: v1.AgentContext, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        return v1.NewSessionResponse(session_id="sess-1")

    async def prompt(self, cx: v1.AgentContext, params: v1.PromptRequest) -> v1.PromptResponse:
        block = params.prompt[0]
        assert isinstance(block, v1.TextContent)
        session = params.session_id
        if block.text == "run":
            request = v1.CreateTerminalRequest(
                session_id=session, command="sh", args=["-c", "printf 'hello from a terminal'"]
            )
            terminal = await TerminalHandle.create(cx.peer, request)
            assert terminal.session_id == session
            call = v1.ToolCall(
                tool_call_id="call-1", title="Greet", kind="execute", content=[terminal.as_tool_call_content()]
            )
            await cx.peer.session_update(v1.SessionNotification(session_id=session, update=call))
            exit = await terminal.wait_for_exit()
            output = await terminal.output()
            await terminal.release()
            await terminal.release()  # a second release sends nothing
            self.ran.append((terminal.id, output, exit))
        elif block.text == "fail":
            sleeper = v1.CreateTerminalRequest(session_id=session, command="sleep", args=["30"])
            async with await TerminalHandle.create(cx, sleeper):
                raise RuntimeError("the tool broke")
        elif block.text == "wait":
            sleeper = v1.CreateTerminalRequest(session_id=session, command="sleep", args=["30"])
            async with await TerminalHandle.create(cx, sleeper) as terminal:
                self.waiting.set()
                await terminal.wait_for_exit()
        return v1.PromptResponse(stop_reason="end_turn")


class Client(v1.Client):
    """Forwards the five `terminal/*` requests to `Terminals`, one line each."""

    def __init__(self, terminals: Terminals) -> None:
        self.terminals = terminals
        self.updates: list[v1.SessionUpdate] = []
        self.released: list[str] = []

    async def request_permission(
        self, cx: v1.ClientContext, params: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse:
        raise AssertionError("not used here")

    async def session_update(self, cx: v1.ClientContext, params: v1.SessionNotification) -> None:
        self.updates.append(params.update)

    async def create_terminal(
        self, cx: v1.ClientContext, params: v1.CreateTerminalRequest
    ) -> v1.CreateTerminalResponse:
        return await self.terminals.create(params)

    async def terminal_output(
        self, cx: v1.ClientContext, params: v1.TerminalOutputRequest
    ) -> v1.TerminalOutputResponse:
        return await self.terminals.output(params)

    async def wait_for_terminal_exit(
        self, cx: v1.ClientContext, params: v1.WaitForTerminalExitRequest
    ) -> v1.WaitForTerminalExitResponse:
        return await self.terminals.wait_for_exit(params)

    async def kill_terminal(self, cx: v1.ClientContext, params: v1.KillTerminalRequest) -> v1.KillTerminalResponse:
        return await self.terminals.kill(params)

    async def release_terminal(
        self, cx: v1.ClientContext, params: v1.ReleaseTerminalRequest
    ) -> v1.ReleaseTerminalResponse:
        self.released.append(params.terminal_id)
        return await self.terminals.release(params)


class Pair:
    """An agent and a client connected in memory, the client initialized (advertising
    `terminal` unless told not to) with one session."""

    def __init__(self, terminal: bool = True) -> None:
        self.agent = Agent()
        self.terminals = Terminals()
        self.client = Client(self.terminals)
        self.capabilities = v1.ClientCapabilities(terminal=terminal)
        (a_in, a_out), (c_in, c_out) = duplex()
        agent_side, _ = v1.connect_agent(self.agent, a_in, a_out, AcpOptions(strict=True))
        client_side, self.to_agent = v1.connect_client(self.client, c_in, c_out, AcpOptions(strict=True))
        self._tasks = [asyncio.create_task(agent_side.run()), asyncio.create_task(client_side.run())]
        self.session = ""

    async def __aenter__(self) -> Self:
        init = v1.InitializeRequest(protocol_version=1, client_capabilities=self.capabilities)
        await asyncio.wait_for(self.to_agent.initialize(init), WAIT)
        self.session = (await asyncio.wait_for(self.to_agent.new_session(NEW), WAIT)).session_id
        return self

    async def prompt(self, text: str) -> v1.PromptResponse:
        request = v1.PromptRequest(session_id=self.session, prompt=[v1.TextContent(text=text)])
        return await asyncio.wait_for(self.to_agent.prompt(request), WAIT)

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.wait_for(self.terminals.aclose(), WAIT)
        for task in self._tasks:
            task.cancel()
        await asyncio.wait(self._tasks, timeout=WAIT)


async def test_an_agent_runs_a_command_through_the_client() -> None:
    async with Pair() as pair:
        assert (await pair.prompt("run")).stop_reason == "end_turn"
        [(terminal_id, output, exit)] = pair.agent.ran
        assert (output.output, output.truncated) == ("hello from a terminal", False)
        assert output.exit_status == v1.TerminalExitStatus(exit_code=0, signal=None)
        assert (exit.exit_code, exit.signal) == (0, None)
        # The tool call embedded the terminal; it was released once, and is gone.
        [call] = pair.client.updates
        assert isinstance(call, v1.ToolCall) and isinstance(call.content, list)
        assert encode(call.content[0]) == b'{"type":"terminal","terminalId":"' + terminal_id.encode() + b'"}'
        assert pair.client.released == [terminal_id]
        assert len(pair.terminals) == 0


async def test_leaving_async_with_by_an_error_releases_the_terminal() -> None:
    async with Pair() as pair:
        with pytest.raises(PeerError) as raised:
            await pair.prompt("fail")
        assert raised.value.error.code == -32603
        assert len(pair.client.released) == 1 and len(pair.terminals) == 0


async def test_a_cancelled_turn_still_releases_its_terminal() -> None:
    async with Pair() as pair:
        turn = asyncio.create_task(pair.prompt("wait"))
        await asyncio.wait_for(pair.agent.waiting.wait(), WAIT)
        assert len(pair.terminals) == 1
        await pair.to_agent.cancel(v1.CancelNotification(session_id=pair.session))
        assert (await asyncio.wait_for(turn, WAIT)).stop_reason == "cancelled"
        # The release went out after the cancellation and was answered before the turn.
        assert len(pair.client.released) == 1 and len(pair.terminals) == 0


async def test_a_client_without_terminals_is_never_asked() -> None:
    async with Pair(terminal=False) as pair:
        with pytest.raises(PeerError) as raised:
            await pair.prompt("run")
        error = raised.value.error
        assert error.code == -32603 and isinstance(error.data, Raw)
        assert json.loads(bytes(error.data))["method"] == "terminal/create"
        assert len(pair.terminals) == 0


def test_the_handle_names_its_terminal() -> None:
    handle: Any = TerminalHandle(client=None, session_id="s", terminal_id="term-7")  # type: ignore[arg-type]
    assert (handle.id, handle.session_id, handle.released) == ("term-7", "s", False)
    assert encode(handle.as_tool_call_content()) == b'{"type":"terminal","terminalId":"term-7"}'
