"""The client-side session object and the in-process pair: `open_session`, a turn's
updates as they arrive and its text, `updates()` until `close()`, cancel, the
`session_update(session_id, update)` shortcut, `SessionClient`'s permission policy, and
the pair's bounded shutdown."""

from __future__ import annotations

import asyncio

import pytest

from agentproto.acp import v1
from agentproto.acp.builders import start_tool_call, update_agent_message_text, update_agent_thought_text
from agentproto.acp.options import AcpOptions
from agentproto.acp.session import SessionClient, open_session

WAIT = 10.0
INIT = v1.InitializeRequest(protocol_version=v1.PROTOCOL_VERSION)


class Echo(v1.Agent):
    """Streams the prompt back word by word (with the two-argument `session_update`),
    after a thought; "ask" asks permission first and says what it got; "wait" waits for
    `session/cancel`."""

    def __init__(self) -> None:
        self.count = 0
        self.waiting = asyncio.Event()

    async def initialize(self, cx: v1.AgentContext, params: v1.InitializeRequest) -> v1.InitializeResponse:
        return v1.InitializeResponse(protocol_version=v1.PROTOCOL_VERSION)

    async def new_session(self, cx: v1.AgentContext, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        self.count += 1
        return v1.NewSessionResponse(session_id=f"s-{self.count}")

    async def prompt(self, cx: v1.AgentContext, params: v1.PromptRequest) -> v1.PromptResponse:
        session = params.session_id
        text = "".join(b.text for b in params.prompt if isinstance(b, v1.TextContent))
        if text == "wait":
            self.waiting.set()
            await asyncio.get_running_loop().create_future()  # ended by session/cancel
        if text == "ask":
            await cx.peer.session_update(session, start_tool_call("t1", "Edit", kind="edit"))
            options = [
                v1.PermissionOption(option_id="yes", name="Allow", kind="allow_once"),
                v1.PermissionOption(option_id="no", name="Reject", kind="reject_once"),
            ]
            ask = v1.RequestPermissionRequest(
                session_id=session, tool_call=v1.ToolCallUpdate(tool_call_id="t1"), options=options
            )
            outcome = (await cx.peer.request_permission(ask)).outcome
            text = outcome.option_id if isinstance(outcome, v1.SelectedPermissionOutcome) else "cancelled"
        await cx.peer.session_update(session, update_agent_thought_text("thinking"))
        for word in text.split(" "):
            await cx.peer.session_update(session, update_agent_message_text(word + " "))
        # The typed form still works.
        notification = v1.SessionNotification(session_id=session, update=update_agent_message_text("."))
        await cx.peer.session_update(notification)
        return v1.PromptResponse(stop_reason="end_turn")


async def test_prompt_text_returns_the_agents_reply() -> None:
    async with v1.connect_pair(Echo(), SessionClient()) as pair:
        await asyncio.wait_for(pair.agent.initialize(INIT), WAIT)
        session = await asyncio.wait_for(open_session(pair.agent, cwd="/"), WAIT)
        assert session.session_id == "s-1" and session.response.session_id == "s-1"
        assert await asyncio.wait_for(session.prompt_text("hello there"), WAIT) == "hello there ."
        # Awaiting a turn gives the `PromptResponse`; the turn keeps its updates.
        turn = session.prompt("again")
        response = await asyncio.wait_for(turn, WAIT)
        assert response.stop_reason == "end_turn"
        assert isinstance(turn.updates[0], v1.SessionUpdateAgentThoughtChunk)
        assert turn.text == "again ." and turn.done


async def test_a_turn_iterates_its_updates_and_ends_with_the_answer() -> None:
    async with v1.connect_pair(Echo(), SessionClient()) as pair:
        await asyncio.wait_for(pair.agent.initialize(INIT), WAIT)
        session = await asyncio.wait_for(open_session(pair.agent, cwd="/"), WAIT)
        turn = session.prompt([v1.TextContent(text="a b c")])
        seen = [u async for u in turn]
        assert [type(u).__name__ for u in seen] == ["SessionUpdateAgentThoughtChunk"] + [
            "SessionUpdateAgentMessageChunk"
        ] * 4
        assert (await turn).stop_reason == "end_turn"
        # Two sessions on one connection see only their own updates.
        other = await asyncio.wait_for(open_session(pair.agent, cwd="/"), WAIT)
        first, second = session.prompt("one"), other.prompt("two")
        assert (
            await asyncio.wait_for(first.text_reply(), WAIT),
            await asyncio.wait_for(second.text_reply(), WAIT),
        ) == (
            "one .",
            "two .",
        )


async def test_updates_follows_the_session_until_close() -> None:
    async with v1.connect_pair(Echo(), SessionClient()) as pair:
        await asyncio.wait_for(pair.agent.initialize(INIT), WAIT)
        async with await asyncio.wait_for(open_session(pair.agent, cwd="/"), WAIT) as session:
            updates = session.updates()
            await asyncio.wait_for(session.prompt("x"), WAIT)
            await asyncio.wait_for(session.prompt("y"), WAIT)
            session.close()
            texts = [
                u.content.text
                async for u in updates
                if isinstance(u, v1.SessionUpdateAgentMessageChunk) and isinstance(u.content, v1.TextContent)
            ]
            assert texts == ["x ", ".", "y ", "."]
            with pytest.raises(RuntimeError, match="closed"):
                session.prompt("z")


async def test_cancel_ends_the_turn_with_cancelled() -> None:
    agent = Echo()
    async with v1.connect_pair(agent, SessionClient()) as pair:
        await asyncio.wait_for(pair.agent.initialize(INIT), WAIT)
        session = await asyncio.wait_for(open_session(pair.agent, cwd="/"), WAIT)
        turn = session.prompt("wait")
        await asyncio.wait_for(agent.waiting.wait(), WAIT)
        await session.cancel()
        assert (await asyncio.wait_for(turn, WAIT)).stop_reason == "cancelled"


@pytest.mark.parametrize(("policy", "answer"), [("allow", "yes"), ("reject", "no"), ("cancel", "cancelled")])
async def test_the_session_client_answers_permissions_from_its_policy(policy: str, answer: str) -> None:
    client = SessionClient(policy)  # type: ignore[arg-type]
    async with v1.connect_pair(Echo(), client, AcpOptions()) as pair:
        await asyncio.wait_for(pair.agent.initialize(INIT), WAIT)
        session = await asyncio.wait_for(open_session(pair.agent, cwd="/"), WAIT)
        turn = session.prompt("ask")
        assert await asyncio.wait_for(turn.text_reply(), WAIT) == f"{answer} ."
        assert isinstance(turn.updates[0], v1.ToolCall)


async def test_session_update_without_the_update_is_a_type_error() -> None:
    async with v1.connect_pair(Echo(), SessionClient()) as pair:
        await asyncio.wait_for(pair.agent.initialize(INIT), WAIT)
        with pytest.raises(TypeError, match="the update is missing"):
            await pair.client.session_update("s-1")  # type: ignore[call-overload]


async def test_the_pair_stops_a_side_that_does_not_end() -> None:
    agent = Echo()
    pair = v1.connect_pair(agent, SessionClient(), AcpOptions(), timeout=0.2)
    async with pair:
        await asyncio.wait_for(pair.agent.initialize(INIT), WAIT)
        session = await asyncio.wait_for(open_session(pair.agent, cwd="/"), WAIT)
        turn = session.prompt("wait")
        await asyncio.wait_for(agent.waiting.wait(), WAIT)
    # The turn's call failed when the connection closed; nothing is left running.
    assert turn.done
    assert all(t.done() for t in pair._tasks)
