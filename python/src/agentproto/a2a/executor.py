"""The agent's side of the A2A server: an executor turns one incoming message into task
updates through a `TaskUpdater`.

```python
class Echo:
    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        await updater.working()
        await updater.add_artifact([Part(text=context.text())])
        await updater.complete()
```

The executor's first update decides the answer: `reply` answers with a direct message
and no task is stored; any other update creates the task (SUBMITTED, the caller's message
in its history) and then applies itself. Every update after that is one commit, a durable
event subscribers see in order. `execute` raising fails the task (or, before any update,
answers the error); returning with the task still active leaves it for later messages.

Cancellation: `CancelTask` sets `context.cancelled`, then calls the executor's optional
`async def cancel(context, updater)`; without one, the server moves the task to CANCELED
and cancels the `execute` coroutine (it sees `asyncio.CancelledError` at its next await).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import msgspec

from agentproto.a2a import codec
from agentproto.a2a.errors import A2aError, ErrorKind
from agentproto.a2a.generated.v1 import Artifact, Message, Part, Role, Task, TaskState, TaskStatus
from agentproto.a2a.store import PushConfigRecord, StoreError, TaskKey, TaskRecord
from agentproto.a2a.tasks import ArtifactChange, Change, StatusChange, Tasks, change_error, state_ends_turn
from agentproto.codec.errors import DecodeError

__all__ = ["AgentExecutor", "Principal", "RequestContext", "TaskUpdater"]


@dataclass(frozen=True, slots=True)
class Principal:
    """An authenticated caller, as the server's auth hook names it."""

    subject: str
    tenant: str | None = None
    """The tenant the caller is bound to: its calls are scoped to it, whatever they name."""


@dataclass(slots=True)
class RequestContext:
    """What the executor is asked to do. Built by the server."""

    message: Message
    """The caller's message (its `taskId` and `contextId` filled in)."""
    task_id: str
    context_id: str
    task: Task | None
    """The task this message continues, as it was before the message; `None` for a new one."""
    tenant: str = ""
    principal: Principal | None = None
    metadata: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    """`SendMessageRequest.metadata`."""
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when the task is canceled (or the server shuts down)."""

    def text(self) -> str:
        """The text of the caller's message: its text parts, joined."""
        return "".join(p.text for p in self.message.parts if isinstance(p.text, str))


class AgentExecutor(Protocol):
    """Agent logic: `execute` runs once per incoming message. An executor may also define
    `async def cancel(self, context, updater) -> None` (see the module documentation)."""

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None: ...


def checked(type_name: str, value: Any) -> Any:
    """`value` as the schema allows it, or `INVALID_AGENT_RESPONSE`: what an executor hands
    over is checked like what arrives, so nothing invalid goes out."""
    try:
        return codec.decode(type_name, codec.encode(value))
    except DecodeError as e:
        raise A2aError(ErrorKind.INVALID_AGENT_RESPONSE, f"the agent's {type_name} is not valid: {e}") from None


class TaskUpdater:
    """Updates one task (see the module documentation). Updates are applied one at a
    time, in the order they are made."""

    def __init__(
        self,
        tasks: Tasks,
        key: TaskKey,
        context_id: str,
        *,
        create: Task | None,
        known: TaskRecord | None,
        push: PushConfigRecord | None = None,
    ) -> None:
        self._tasks = tasks
        self.key = key
        self.context_id = context_id
        self._create = create
        self._known = known
        self._push = push
        self._lock = asyncio.Lock()
        self._replied = False
        loop = asyncio.get_running_loop()
        self.first: asyncio.Future[Message | int] = loop.create_future()
        """Resolved by the first update: the direct reply, or the sequence number of the
        task's first event of this turn. Fails with the error when that update failed."""
        self.turn_end: asyncio.Future[Task | None] = loop.create_future()
        """Resolved by the update that ends the turn (the task as it left it), or with
        `None` when the executor returns without ending it."""

    @property
    def task_id(self) -> str:
        return self.key.id

    @property
    def started(self) -> bool:
        return self.first.done()

    def message(self, parts: Sequence[Part] | str) -> Message:
        """A message from the agent in this task's context (text or parts)."""
        if isinstance(parts, str):
            parts = [Part(text=parts)]
        return Message(
            message_id=str(uuid.uuid4()),
            context_id=self.context_id,
            task_id=self.key.id,
            role=Role.AGENT,
            parts=list(parts),
        )

    async def reply(self, message: Message | str) -> None:
        """Answers with a direct message and no task. Only valid as the first update."""
        if isinstance(message, str):
            message = self.message(message)
        async with self._lock:
            if self._create is None or self.first.done():
                raise A2aError(
                    ErrorKind.INVALID_AGENT_RESPONSE, "a direct reply must be the first thing an executor sends"
                )
            replied: Message = checked(
                "Message", msgspec.structs.replace(message, task_id="", context_id=self.context_id)
            )
            self._create = None
            self._replied = True
            self.first.set_result(replied)

    async def status(self, state: TaskState, message: Message | str | None = None) -> None:
        """Moves the task to `state`, with an optional status message (which joins the history)."""
        status = TaskStatus(state=state)
        if message is not None:
            status.message = checked("Message", self.message(message) if isinstance(message, str) else message)
        await self._change(StatusChange(status))

    async def working(self, message: Message | str | None = None) -> None:
        await self.status(TaskState.WORKING, message)

    async def complete(self, message: Message | str | None = None) -> None:
        """COMPLETED (terminal)."""
        await self.status(TaskState.COMPLETED, message)

    async def fail(self, message: Message | str | None = None) -> None:
        """FAILED (terminal)."""
        await self.status(TaskState.FAILED, message)

    async def reject(self, message: Message | str | None = None) -> None:
        """REJECTED (terminal): the agent will not do it."""
        await self.status(TaskState.REJECTED, message)

    async def require_input(self, message: Message | str | None = None) -> None:
        """INPUT_REQUIRED: the turn ends; the next message on the task starts another."""
        await self.status(TaskState.INPUT_REQUIRED, message)

    async def require_auth(self, message: Message | str | None = None) -> None:
        """AUTH_REQUIRED: the turn ends until the caller has authenticated."""
        await self.status(TaskState.AUTH_REQUIRED, message)

    async def cancel(self) -> None:
        """CANCELED (terminal)."""
        await self.status(TaskState.CANCELED)

    async def add_artifact(
        self,
        artifact: Artifact | Sequence[Part] | str,
        *,
        artifact_id: str | None = None,
        name: str = "",
        append: bool = False,
        last_chunk: bool = True,
    ) -> None:
        """Adds an artifact (an `Artifact`, or its parts or text). With `append`, the parts
        extend the artifact with the same id (a streamed artifact; `last_chunk` marks its
        last piece); otherwise an artifact with the same id is replaced."""
        if not isinstance(artifact, Artifact):
            parts = [Part(text=artifact)] if isinstance(artifact, str) else list(artifact)
            artifact = Artifact(artifact_id=artifact_id or str(uuid.uuid4()), name=name, parts=parts)
        await self._change(ArtifactChange(checked("Artifact", artifact), append, last_chunk))

    async def _change(self, change: Change) -> None:
        lock = self._lock
        await lock.acquire()
        try:
            try:
                if self._create is not None:
                    record, events = await self._tasks.create(self.key, self._create, [change])
                    self._create = None
                    if self._push is not None:
                        await self._tasks.store.put_push_config(self._push)
                else:
                    if self._replied:
                        raise A2aError(ErrorKind.INVALID_AGENT_RESPONSE, "no update may follow a direct reply")
                    record, events = await self._tasks.apply(self.key, [change], self._known, turn=True)
            except StoreError as e:
                error = change_error(e, self.key.id)
                if not self.first.done():
                    self.first.set_exception(error)
                raise error from None
            self._known = record
            if not self.first.done():
                self.first.set_result(events[0].seq if events else record.last_seq)
            if state_ends_turn(record.task.status.state) and not self.turn_end.done():
                self.turn_end.set_result(record.task)
        finally:
            lock.release()

    def end(self, error: A2aError | None = None) -> None:
        """Called by the server when the executor returned: settles what waits on it."""
        if not self.first.done():
            self.first.set_exception(
                error or A2aError(ErrorKind.INVALID_AGENT_RESPONSE, "the agent finished without answering")
            )
        if not self.turn_end.done():
            self.turn_end.set_result(None)
        # Nobody may be left waiting on an exception that is never read.
        if self.first.done() and not self.first.cancelled():
            self.first.exception()
