"""The application's `Handler`, the contexts it receives, and the code that runs it: one
task per request, one serial worker for every notification.

Requests run concurrently. Each starts once the notifications read before it have been
handled (a permission request never overtakes the tool call announced before it),
answers with what its handler returns, -32800 when the peer cancels it (unless the
handler took over cancellation with `RequestContext.handle_cancellation`), the error of
a `RequestError` it raises, and -32603 for any other exception (reported to the
observer). Notifications are handled one at a time in arrival order; an exception is
reported and the worker goes on.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Coroutine
from typing import Any

from msgspec import Raw

from agentproto.jsonrpc.cancellation import CancellationToken
from agentproto.jsonrpc.error import ErrorObject, RequestError
from agentproto.jsonrpc.local_error import ConnectionClosed
from agentproto.jsonrpc.message import Notification, Request, RequestId, encode_response
from agentproto.jsonrpc.options import NotificationHandlerFailed, RequestHandlerFailed
from agentproto.jsonrpc.peer import Peer

__all__ = ["Handler", "NotificationContext", "RequestContext"]


class RequestContext:
    """What a request handler gets besides the request."""

    __slots__ = ("_handles_cancellation", "id", "index", "notifications_before", "peer", "prepared", "token")

    def __init__(
        self, peer: Peer, id: RequestId, token: CancellationToken, notifications_before: int, index: int
    ) -> None:
        self.peer = peer
        """The handle to call the peer (a permission round trip, say)."""
        self.id = id
        """The id of the request being handled."""
        self.token = token
        """Fires when the peer cancels the request or the connection shuts down."""
        self.notifications_before = notifications_before
        """How many notifications were read before this request: a request with
        `notifications_before < n` was read before notification number `n`."""
        self.index = index
        """The request's number in read order, from 1 (every request line counts)."""
        self.prepared: Any = None
        """What the layer above made of the request as it was read (`Handler.request_read`),
        handed on to its `Handler.request` (the ACP agent: the request decoded once)."""
        self._handles_cancellation = False

    def handle_cancellation(self) -> None:
        """Keeps the handler running when `token` fires: its own return value (a partial
        result) is sent instead of -32800. Call it before the first `await`."""
        self._handles_cancellation = True

    @property
    def handles_cancellation(self) -> bool:
        return self._handles_cancellation


Spawn = Callable[[Coroutine[Any, Any, None]], None]
"""Starts work on a task the connection keeps track of (see `NotificationContext.spawn`)."""


class NotificationContext:
    """What a notification handler gets besides the notification."""

    __slots__ = ("_spawn", "index", "peer")

    def __init__(self, peer: Peer, index: int, spawn: Spawn) -> None:
        self.peer = peer
        """The handle to call or notify the peer; a call made from the handler itself
        returns without waiting for later notifications."""
        self.index = index
        """The notification's number in read order, from 1 (cancel notifications, which
        the connection consumes, are not counted)."""
        self._spawn = spawn

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Runs `work` on a task of its own, for what the handler must not wait for inline
        (notifications are handled one at a time, so waiting here holds up the ones read
        after). Unlike a bare `create_task`, the connection keeps track of it: `run()`
        returns only once it has ended, within `shutdown_grace` after end of input, when
        it is cancelled like an unfinished request handler. An exception it raises is
        reported as `NotificationHandlerFailed`."""
        self._spawn(work)


class Handler(ABC):
    """What the application does with incoming requests and notifications."""

    @abstractmethod
    async def request(self, request: Request, cx: RequestContext) -> Raw | bytes:
        """Handles one request; returns the encoded result, or raises `RequestError`."""

    @abstractmethod
    async def notification(self, notification: Notification, cx: NotificationContext) -> None:
        """Handles one notification (one at a time, in arrival order)."""

    def request_read(self, request: Request, cx: RequestContext) -> None:
        """Sees each request on the reader as it is read, in read order, before its task
        starts (tasks may start in any order): where a layer above records what later
        messages depend on, and may leave what it worked out for `request` in
        `cx.prepared`. Must be quick; an exception is reported and the request is still
        handled."""
        return


class NotificationQueue:
    """The bounded queue between the reader and the notification worker (`None` ends it)."""

    __slots__ = ("_getter", "capacity", "items")

    def __init__(self, capacity: int) -> None:
        self.items: deque[tuple[int, Notification] | None] = deque()
        self.capacity = max(1, capacity)
        self._getter: asyncio.Future[None] | None = None

    @property
    def full(self) -> bool:
        return len(self.items) >= self.capacity

    def put(self, item: tuple[int, Notification] | None) -> None:
        """Appends (the reader checks `full` first; the end marker ignores the bound)."""
        self.items.append(item)
        getter = self._getter
        if getter is not None and not getter.done():
            getter.set_result(None)

    async def get(self) -> tuple[int, Notification] | None:
        while not self.items:
            self._getter = asyncio.get_running_loop().create_future()
            try:
                await self._getter
            finally:
                self._getter = None
        return self.items.popleft()


class RequestJob:
    """A request read and not finished: what its task needs."""

    __slots__ = ("cancelled_by_token", "cx", "generation", "request", "running")

    def __init__(self, request: Request, cx: RequestContext, generation: int) -> None:
        self.request = request
        self.cx = cx
        self.generation = generation
        self.running = False  # the handler is being awaited (only then may it be dropped)
        self.cancelled_by_token = False


_CANCELLED = ErrorObject.request_cancelled()
_FAILED = ErrorObject.internal_error("internal error: request handler failed")


async def run_request(handler: Handler, peer: Peer, job: RequestJob, stopping: Callable[[], bool]) -> None:
    """Runs one request handler to its answer and sends the answer.

    `stopping()` says whether the connection is stopping hard (then a cancelled task
    just ends, unanswered)."""
    cx = job.cx
    token = cx.token
    task = asyncio.current_task()
    loop = asyncio.get_running_loop()

    def drop_handler() -> None:
        # Runs one loop step after the token fired (or right after the handler's first
        # step when it fired earlier), so a handler can still call
        # `handle_cancellation()` before its first await, as in the Rust SDK.
        if job.running and not cx._handles_cancellation and task is not None and not task.done():
            job.cancelled_by_token = True
            task.cancel()

    def cancelled() -> None:
        loop.call_soon(drop_handler)

    unregister = token.add_callback(cancelled)
    id = job.request.id
    try:
        if cx.notifications_before > peer._done:
            await peer.wait_handled(cx.notifications_before, token)
        job.running = True
        if token.is_cancelled:
            loop.call_soon(drop_handler)
        try:
            result = await handler.request(job.request, cx)
        finally:
            job.running = False
        line = encode_response(id, result)
    except asyncio.CancelledError:
        if not job.cancelled_by_token or stopping():
            raise
        if task is not None:
            task.uncancel()
        line = encode_response(id, error=_CANCELLED)
    except RequestError as e:
        line = encode_response(id, error=e.error)
    except Exception as e:  # noqa: BLE001 - any handler failure is answered -32603, never fatal
        peer.report(RequestHandlerFailed(id, job.request.method, e))
        line = encode_response(id, error=_FAILED)
    finally:
        unregister()
        token.detach()
    try:
        await peer.send_line(line)
    except ConnectionClosed:
        pass  # the connection is over: nobody can be answered


async def notification_worker(
    handler: Handler,
    peer: Peer,
    queue: NotificationQueue,
    room: Callable[[], None],
    background: set[asyncio.Task[None]],
) -> None:
    """Handles queued notifications one at a time, publishing how many are done.

    `room()` tells the reader a place in the queue freed up; work a handler hands off
    (`NotificationContext.spawn`) runs on tasks kept in `background` until they end."""

    def spawner(method: str) -> Spawn:
        def spawn(work: Coroutine[Any, Any, None]) -> None:
            task = asyncio.get_running_loop().create_task(_background(peer, method, work))
            background.add(task)
            task.add_done_callback(background.discard)

        return spawn

    try:
        while True:
            item = queue.items.popleft() if queue.items else await queue.get()
            if item is None:
                break
            room()
            index, notification = item
            try:
                await handler.notification(notification, NotificationContext(peer, index, spawner(notification.method)))
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if current is not None and current.cancelling():
                    raise  # the worker itself is being stopped
                peer.report(NotificationHandlerFailed(notification.method, asyncio.CancelledError()))
            except Exception as e:  # noqa: BLE001 - reported; the worker goes on with the next one
                peer.report(NotificationHandlerFailed(notification.method, e))
            peer.set_handled(index)
    finally:
        peer.worker_gone()


async def _background(peer: Peer, method: str, work: Coroutine[Any, Any, None]) -> None:
    """Work a notification handler handed off; what it raises is reported, as the handler's
    own failure would be."""
    try:
        await work
    except asyncio.CancelledError:
        raise  # the connection's hard stop
    except Exception as e:  # noqa: BLE001 - reported like a failing notification handler
        peer.report(NotificationHandlerFailed(method, e))
