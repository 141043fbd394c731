"""A follow-up message to a task whose turn is still running, taken as the Rust server takes
it: recorded in the history, it runs a turn of its own beside the running one; CancelTask
reaches both turns, and the task is unregistered once the last one ends."""

from __future__ import annotations

import asyncio

from agentproto.a2a.demo import card
from agentproto.a2a.executor import RequestContext, TaskUpdater
from agentproto.a2a.generated.v1 import (
    CancelTaskRequest,
    Message,
    Operation,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    Task,
    TaskState,
)
from agentproto.a2a.memory_store import MemoryStore
from agentproto.a2a.server import ServerOptions
from agentproto.a2a.server.core import CallContext
from agentproto.a2a.server.turns import Core
from agentproto.a2a.store import TaskKey

BOUND = 10.0


class Held:
    """The message "first" starts working and waits to be released (or cancelled); any
    other message asks for input at once."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.first_cancelled = False
        self.seen_before: Task | None = None

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        if context.message.message_id != "first":
            self.seen_before = context.task
            await updater.require_input("say more")
            return
        await updater.working()
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.first_cancelled = True
            raise


def send(message_id: str, task_id: str = "", *, at_once: bool = False) -> SendMessageRequest:
    message = Message(message_id=message_id, role=Role.USER, parts=[Part(text=message_id)], task_id=task_id)
    return SendMessageRequest(message=message, configuration=SendMessageConfiguration(return_immediately=at_once))


async def test_a_follow_up_while_a_turn_runs_gets_a_turn_of_its_own_and_cancel_reaches_both() -> None:
    agent = Held()
    core = Core(agent, card("http://127.0.0.1:1"), MemoryStore(), ServerOptions(push_delivery=None))
    try:
        first = await core.handle(CallContext(), Operation.SEND_MESSAGE, send("first", at_once=True))
        key = TaskKey("", first.task.id)
        first_turn = core.running[key].turn

        answer = await asyncio.wait_for(core.handle(CallContext(), Operation.SEND_MESSAGE, send("next", key.id)), BOUND)
        task = answer.task
        assert task.status.state is TaskState.INPUT_REQUIRED
        assert [m.message_id for m in task.history if m.role is Role.USER] == ["first", "next"]
        assert agent.seen_before is not None and agent.seen_before.status.state is TaskState.WORKING
        # The first turn still runs: the task stays registered (cancel and lease renewal find it).
        assert core.turns == {key: 1} and key in core.running and not first_turn.done()

        canceled = await asyncio.wait_for(
            core.handle(CallContext(), Operation.CANCEL_TASK, CancelTaskRequest(id=key.id)), BOUND
        )
        assert canceled.status.state is TaskState.CANCELED
        await asyncio.wait_for(asyncio.wait([first_turn]), BOUND)
        assert agent.first_cancelled
        assert key not in core.running and not core.turns
    finally:
        agent.release.set()
        await core.shutdown()
