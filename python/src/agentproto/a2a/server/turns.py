"""The server operations that run the executor (SendMessage, SendStreamingMessage,
CancelTask), push config storage, and the dispatch of every operation.

A send, step by step: the task the message goes to (an existing live one in the same
context, or new ids); the follow-up message recorded on an existing task; the executor's
turn started as an asyncio task; then the answer from its first update: a direct
message, the task (at once with `returnImmediately`, else when the turn ends), or the
stream of the task's events until the turn ends. A message to a task whose turn is still
running (here or in another replica) is taken as the Rust server takes it: recorded in the
history, it starts a turn of its own beside the running one (their commits are ordered by
the task's version); CancelTask and shutdown reach every turn running here on the task.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import logging
from dataclasses import dataclass
from typing import Any

import msgspec

from agentproto.a2a.errors import A2aError, ErrorKind
from agentproto.a2a.executor import AgentExecutor, RequestContext, TaskUpdater
from agentproto.a2a.generated.v1 import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    Empty,
    GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    Message,
    Operation,
    SendMessageRequest,
    SendMessageResponse,
    StreamResponse,
    Task,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
)
from agentproto.a2a.push_delivery import PushWorker
from agentproto.a2a.server.core import CallContext, CoreBase, EventStream, ServerOptions, StreamEvent, invalid, new_id
from agentproto.a2a.server.replicas import Replicas
from agentproto.a2a.store import PushConfigRecord, Store, StoreError, TaskKey, TaskRecord
from agentproto.a2a.tasks import (
    Gap,
    HistoryChange,
    StatusChange,
    change_error,
    follow,
    is_terminal,
    now_timestamp,
    store_error,
    viewed,
)

__all__ = ["Core"]

LOGGER = logging.getLogger("agentproto.a2a")
"""Where an executor's unexpected exception is logged (with its traceback)."""


@dataclass(slots=True)
class _Running:
    context: RequestContext
    updater: TaskUpdater
    turn: asyncio.Task[None]
    beside: _Running | None = None
    """The turn that was running on the task when this one started, if any."""

    def chain(self) -> list[_Running]:
        """This turn and the ones it started beside, newest first."""
        turns: list[_Running] = []
        running: _Running | None = self
        while running is not None:
            turns.append(running)
            running = running.beside
        return turns


class Core(CoreBase):
    """The whole binding-neutral server (see the module documentation)."""

    def __init__(self, executor: AgentExecutor, card: AgentCard, store: Store, options: ServerOptions) -> None:
        super().__init__(executor, card, store, options)
        self.running: dict[TaskKey, _Running] = {}
        """The newest turn running in this process on each task, while any of its turns runs."""
        self.turns: dict[TaskKey, int] = {}
        """How many turns run in this process on each task."""
        self.pusher: PushWorker | None = None
        self._pushing: asyncio.Task[None] | None = None
        self.replicas = Replicas(self)
        """Turn leases and their sweep; events and cancels across replicas (PostgreSQL)."""

    def start(self) -> None:
        """Starts the push worker when the card offers push notifications and the options
        deliver them (at startup, and again when a config is set: a server run without
        an ASGI lifespan still delivers); lease renewal and sweep, and the replica
        listener (PostgreSQL), at startup."""
        self.replicas.start()
        delivery = self.options.push_delivery
        if not self.push or delivery is None or self._pushing is not None:
            return
        options = dataclasses.replace(delivery, guard=self.options.push_guard)
        pusher = PushWorker(self.store, options)
        self.pusher = pusher
        self.hub.listeners.append(lambda _key: pusher.wake())
        self._pushing = asyncio.create_task(pusher.run(), name="agentproto-a2a-push")

    async def handle(self, cx: CallContext, operation: Operation, request: Any) -> Any:
        """Runs one operation: its typed result, or an `EventStream` for a stream.

        Raises:
            A2aError: the call's error answer.
        """
        for interceptor in self.options.interceptors:
            verdict = interceptor(cx, operation, request)
            if inspect.isawaitable(verdict):
                await verdict
        if operation is Operation.SEND_MESSAGE:
            return await self.send(cx, request, streaming=False)
        if operation is Operation.SEND_STREAMING_MESSAGE:
            self.require_streaming()
            return await self.send(cx, request, streaming=True)
        if operation is Operation.GET_TASK:
            return await self.get_task(cx, request)
        if operation is Operation.LIST_TASKS:
            return await self.list_tasks(cx, request)
        if operation is Operation.CANCEL_TASK:
            return await self.cancel_task(cx, request)
        if operation is Operation.SUBSCRIBE_TO_TASK:
            self.require_streaming()
            return await self.subscribe(cx, request)
        if operation is Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG:
            return await self.create_push(cx, request)
        if operation is Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG:
            return await self.get_push(cx, request)
        if operation is Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS:
            return await self.list_push(cx, request)
        if operation is Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG:
            return await self.delete_push(cx, request)
        return await self.extended_card(cx)

    # --- sending -------------------------------------------------------------------

    def _check_message(self, r: SendMessageRequest) -> None:
        limit = self.options.max_metadata_bytes
        for raw in (r.metadata, r.message.metadata):
            if raw is not msgspec.UNSET and len(raw) > limit:
                error = A2aError(ErrorKind.INVALID_PARAMS, f"metadata is larger than the limit of {limit} bytes")
                raise error.with_metadata("path", "$.params.metadata")

    async def _target(self, cx: CallContext, message: Message) -> tuple[TaskKey, str, TaskRecord | None]:
        if not message.task_id:
            task_id = new_id()
            return TaskKey(cx.tenant, task_id), message.context_id or new_id(), None
        key = TaskKey(cx.tenant, message.task_id)
        record: TaskRecord = await self._record(key)
        task = record.task
        if is_terminal(task.status.state):
            error = A2aError(
                ErrorKind.UNSUPPORTED_OPERATION, f"task {task.id} is in a terminal state ({task.status.state.value})"
            )
            raise error.with_metadata("taskId", task.id)
        if message.context_id and message.context_id != task.context_id:
            error = A2aError(
                ErrorKind.INVALID_PARAMS,
                f"contextId {message.context_id!r} does not match task {task.id}'s context {task.context_id!r}",
            )
            raise error.with_metadata("path", "$.params.message.contextId")
        return key, task.context_id, record

    async def send(self, cx: CallContext, r: SendMessageRequest, *, streaming: bool) -> Any:
        self._check_message(r)
        key, context_id, existing = await self._target(cx, r.message)
        message = msgspec.structs.replace(r.message, task_id=key.id, context_id=context_id)
        config = r.configuration
        history = None
        return_immediately = False
        push = None
        if config is not msgspec.UNSET:
            history = None if config.history_length is msgspec.UNSET else config.history_length
            if history is not None and history < 0:
                raise invalid("$.params.configuration.historyLength", "a non-negative integer")
            return_immediately = config.return_immediately
            if config.task_push_notification_config is not msgspec.UNSET:
                self.require_push()
                push = _push_record(key, config.task_push_notification_config)
                await self.check_push_url(push.config.url, "$.params.configuration.taskPushNotificationConfig.url")
                self.start()
        before: Task | None = None
        if existing is None:
            status = TaskStatus(state=TaskState.SUBMITTED, timestamp=now_timestamp())
            create = Task(id=key.id, context_id=context_id, status=status, history=[message])
            updater = TaskUpdater(self.tasks, key, context_id, create=create, known=None, push=push)
        else:
            try:
                if push is not None:
                    await self.store.put_push_config(push)
                existing, _ = await self.tasks.apply(key, [HistoryChange(message)], existing)
            except StoreError as e:
                raise change_error(e, key.id) from None
            before = existing.task
            updater = TaskUpdater(self.tasks, key, context_id, create=None, known=existing)
        context = RequestContext(
            message=message,
            task_id=key.id,
            context_id=context_id,
            task=None if existing is None else existing.task,
            tenant=cx.tenant,
            principal=cx.principal,
            metadata=r.metadata,
        )
        turn = asyncio.get_running_loop().create_task(self._run_turn(context, updater))
        self.running[key] = _Running(context, updater, turn, self.running.get(key))
        self.turns[key] = self.turns.get(key, 0) + 1
        # Shielded: a caller that goes away must not cancel what the turn resolves.
        first = await asyncio.shield(updater.first)  # the error of a turn that failed before it began
        if isinstance(first, Message):
            if streaming:
                return _one(StreamEvent(None, StreamResponse(message=first)))
            return SendMessageResponse(message=first)
        if streaming:
            return self._turn_stream(key, first, before, history)
        if not return_immediately:
            ended = await asyncio.shield(updater.turn_end)
            if ended is not None:
                return SendMessageResponse(task=viewed(ended, history))
        record = await self._record(key)
        return SendMessageResponse(task=viewed(record.task, history))

    async def _turn_stream(self, key: TaskKey, first_seq: int, before: Task | None, history: int | None) -> EventStream:
        if before is not None:
            # A follow-up starts with the task as the message left it, ahead of the turn's events.
            yield StreamEvent(None, StreamResponse(task=viewed(before, history)))
        try:
            async for record in follow(self.store, self.hub, key, first_seq - 1, until_turn_ends=True):
                if isinstance(record, Gap):
                    yield record
                    continue
                event = record.event
                if history is not None and event.task is not msgspec.UNSET:
                    event = StreamResponse(task=viewed(event.task, history))
                yield StreamEvent(record.seq, event)
        except StoreError as e:
            raise store_error(e, key.id) from None

    async def _run_turn(self, context: RequestContext, updater: TaskUpdater) -> None:
        error: A2aError | None = None
        try:
            try:
                await self.executor.execute(context, updater)
            except asyncio.CancelledError:
                if not context.cancelled.is_set():
                    raise
            except A2aError as e:
                error = e
            except Exception as e:
                error = A2aError(ErrorKind.INTERNAL, f"agent failed: {type(e).__name__}: {e}")
                LOGGER.error("the executor failed on task %s", context.task_id, exc_info=e)
            if error is not None and updater.started:
                try:
                    await updater.fail(updater.message(f"agent failed: {error.message}"))
                except A2aError:
                    pass  # the task ended meanwhile (canceled)
        finally:
            # While another turn on the task runs, the task stays registered (its lease
            # renewed, CancelTask reaching it).
            left = self.turns.get(updater.key, 1) - 1
            if left > 0:
                self.turns[updater.key] = left
            else:
                self.turns.pop(updater.key, None)
                self.running.pop(updater.key, None)
            updater.end(error)  # nobody waits on this turn for ever, however it ended

    # --- canceling -----------------------------------------------------------------

    async def cancel_task(self, cx: CallContext, r: CancelTaskRequest) -> Task:
        key = TaskKey(cx.tenant, r.id)
        record = await self._record(key)
        if is_terminal(record.task.status.state):
            raise _not_cancelable(r.id, f"task {r.id} is already {record.task.status.state.value}")
        running = self.running.get(key)
        try:
            if running is not None:
                await self.cancel_running(running)
            elif not await self.replicas.cancel_elsewhere(record):
                await self.tasks.apply(key, [StatusChange(TaskStatus(state=TaskState.CANCELED))])
        except A2aError as e:
            if e.kind is ErrorKind.UNSUPPORTED_OPERATION:
                raise _not_cancelable(r.id, f"task {r.id} finished before it could be canceled") from None
            raise
        except StoreError as e:
            error = change_error(e, r.id)
            if error.kind is ErrorKind.UNSUPPORTED_OPERATION:
                raise _not_cancelable(r.id, f"task {r.id} finished before it could be canceled") from None
            raise error from None
        task: Task = (await self._record(key)).task
        return task

    async def cancel_running(self, running: _Running) -> None:
        """Cancels the turns running here on a task (`running`, the newest, and those it
        started beside): the executor's `cancel` with the newest, else the task moves to
        CANCELED and the turns are cancelled."""
        turns = running.chain()
        for each in turns:
            each.context.cancelled.set()
        cancel = getattr(self.executor, "cancel", None)
        if cancel is not None:
            await cancel(running.context, running.updater)
        else:
            await running.updater.cancel()
            for each in turns:
                each.turn.cancel()

    async def shutdown(self) -> None:
        """Cancels the running turns and ends every stream."""
        await self.replicas.stop()
        turns = []
        for newest in list(self.running.values()):
            for running in newest.chain():
                running.context.cancelled.set()
                running.turn.cancel()
                turns.append(running.turn)
        self.hub.close()
        if turns:
            await asyncio.wait(turns, timeout=5)
        if self._pushing is not None and self.pusher is not None:
            self._pushing.cancel()
            await asyncio.wait([self._pushing], timeout=5)
            await self.pusher.close()
            self._pushing = self.pusher = None

    # --- push configs -----------------------------------------------------------------

    async def create_push(self, cx: CallContext, r: TaskPushNotificationConfig) -> TaskPushNotificationConfig:
        self.require_push()
        key = TaskKey(cx.tenant, r.task_id)
        await self._record(key)
        record = _push_record(key, r)
        await self.check_push_url(record.config.url, "$.params.url")
        self.start()
        try:
            await self.store.put_push_config(record)
        except StoreError as e:
            raise store_error(e, key.id) from None
        return record.config

    async def get_push(self, cx: CallContext, r: GetTaskPushNotificationConfigRequest) -> TaskPushNotificationConfig:
        self.require_push()
        key = TaskKey(cx.tenant, r.task_id)
        await self._record(key)
        found = await self.store.get_push_config(key, r.id)
        if found is None:
            error = A2aError(ErrorKind.TASK_NOT_FOUND, f"task {r.task_id} has no push config {r.id!r}")
            raise error.with_metadata("taskId", r.task_id)
        return found.config

    async def list_push(
        self, cx: CallContext, r: ListTaskPushNotificationConfigsRequest
    ) -> ListTaskPushNotificationConfigsResponse:
        self.require_push()
        if not 0 <= r.page_size <= 100:
            raise invalid("$.params.pageSize", "an integer from 0 to 100")
        key = TaskKey(cx.tenant, r.task_id)
        await self._record(key)
        limit = r.page_size or 100
        found = await self.store.list_push_configs(key, r.page_token or None, limit + 1)
        more = len(found) > limit
        found = found[:limit]
        return ListTaskPushNotificationConfigsResponse(
            configs=[f.config for f in found], next_page_token=found[-1].id if more else ""
        )

    async def delete_push(self, cx: CallContext, r: DeleteTaskPushNotificationConfigRequest) -> Any:
        self.require_push()
        key = TaskKey(cx.tenant, r.task_id)
        await self._record(key)
        await self.store.delete_push_config(key, r.id)
        return Empty()


def _push_record(key: TaskKey, config: TaskPushNotificationConfig) -> PushConfigRecord:
    url = config.url
    if not url.startswith(("https://", "http://")):
        raise invalid("$.params.url", "an http or https URL")
    stored = msgspec.structs.replace(config, id=config.id or new_id(), task_id=key.id, tenant=key.tenant)
    return PushConfigRecord(key, stored)


def _not_cancelable(task_id: str, message: str) -> A2aError:
    return A2aError(ErrorKind.TASK_NOT_CANCELABLE, message).with_metadata("taskId", task_id)


async def _one(event: StreamEvent) -> EventStream:
    yield event
