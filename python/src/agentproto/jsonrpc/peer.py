"""`Peer`: the handle that sends calls and notifications, and the state it shares with
the connection's tasks: the pending calls, the bounded outgoing queue, and the count of
notifications the worker has handled (the ordering barrier).

**Ordering.** The reader stamps each response with the number of notifications read
before it; `call` returns only once the worker has handled that many, so the updates
an agent streams before answering `session/prompt` are all handled when the prompt
call returns. A call made from the notification worker itself (a notification handler
calling the peer) skips that wait: the worker is serial, so waiting for later
notifications would wait for itself. As in the Rust SDK this applies to the handler's
own task only, not to tasks it starts.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections import deque
from collections.abc import Callable
from typing import Final

import msgspec
from msgspec import UNSET, Raw, UnsetType

from agentproto.jsonrpc.cancellation import CancellationToken
from agentproto.jsonrpc.local_error import (
    CallAborted,
    CallError,
    CallTimeout,
    ConnectionClosed,
)
from agentproto.jsonrpc.message import RequestId, encode_notification, encode_request
from agentproto.jsonrpc.options import (
    CancelNotification,
    ConnectionEvent,
    ConnectionOptions,
    LateResponse,
    ResultHookFailed,
    UnmatchedResponse,
)

__all__ = ["Peer", "ResultHook"]

ResultHook = Callable[[Raw], None]
"""Runs on the reader the moment a successful answer is read, before the next line."""

Answer = Raw | CallError
"""What the reader hands a waiting caller: the raw result, or why there is none."""

# How many ids of abandoned calls are remembered to tell late responses from unknown ones.
_REMEMBERED = 1024
# What `resolve` found.
RESOLVED: Final = 0
LATE: Final = 1
UNKNOWN: Final = 2
_ALL_DONE: Final = 1 << 62  # the worker is gone: no barrier is left to wait for

_numbers = itertools.count(1)
_encode = msgspec.json.Encoder().encode


class _Waiter:
    __slots__ = ("future", "on_result")

    def __init__(self, future: asyncio.Future[tuple[Answer, int]], on_result: ResultHook | None) -> None:
        self.future = future
        self.on_result = on_result


def _set(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class Peer:
    """A handle to send calls and notifications to the other side.

    Handles stay usable after the connection ended: calls then fail with
    `ConnectionClosed` at once. Get it from `Connection.peer`.
    """

    def __init__(self, options: ConnectionOptions) -> None:
        self.number = next(_numbers)
        self._call_timeout = options.call_timeout
        self._cancel: CancelNotification | None = options.cancel_notification
        self._observer = options.observer
        self._pending: dict[RequestId, _Waiter] = {}
        self._abandoned: deque[RequestId] = deque(maxlen=_REMEMBERED)
        self._closed = False
        self._next_id = 0
        # Outgoing: encoded lines (and flush markers) for the writer task.
        self._out: deque[bytes | asyncio.Future[None]] = deque()
        self._overflow: deque[bytes] = deque()  # cancel notifications when `_out` is full
        self._out_capacity = max(1, options.outgoing_queue)
        self._room_waiters: deque[asyncio.Future[None]] = deque()
        self._writer_wake: asyncio.Future[None] | None = None
        self._stopping = False  # the writer writes what is queued, then ends
        self._output_closed = False  # the writer ended: nothing can be sent any more
        # The ordering barrier.
        self._done = 0
        self._done_waiters: list[tuple[int, int, asyncio.Future[None]]] = []
        self._done_seq = 0
        self._worker: asyncio.Task[None] | None = None
        # Set by the reader: a call was registered (a blocked reader may use its backlog).
        self._on_call_registered: Callable[[], None] = lambda: None

    def __repr__(self) -> str:
        return f"Peer(connection={self.number}, closed={self._closed})"

    # -- public -------------------------------------------------------------------

    @property
    def is_closed(self) -> bool:
        """Whether the connection ended (calls fail at once)."""
        return self._closed

    async def call(
        self,
        method: str,
        params: Raw | bytes | None = None,
        *,
        cancel: CancellationToken | None = None,
        abort: CancellationToken | None = None,
        on_result: ResultHook | None = None,
        timeout: float | None | UnsetType = UNSET,
    ) -> Raw:
        """Sends a request and returns its raw result.

        Args:
            method: the method name.
            params: the params, already encoded (`None`: no params member).
            cancel: when it fires, the cancel notification is sent and the call keeps
                waiting for the answer (a partial result or -32800).
            abort: when it fires, the call is abandoned at once (`CallAborted`) and the
                cancel notification is sent; a late answer is discarded.
            on_result: runs on the reader as a successful answer is read, before any
                later message is read: for state later messages depend on (a session
                that exists once `session/new` is answered). Must be quick.
            timeout: seconds; default the connection's `call_timeout`. On timeout the
                call is abandoned as for `abort` and `CallTimeout` is raised.

        Cancelling the task that awaits the call abandons it the same way.

        Raises:
            RpcError: the peer answered with an error object.
            ConnectionClosed, CallTimeout, CallAborted, InvalidResponse,
            ResponseTooLarge: no usable answer.
        """
        if self._closed:
            raise ConnectionClosed()
        limit = self._call_timeout if isinstance(timeout, UnsetType) else timeout
        id = self._next_id
        self._next_id += 1
        future: asyncio.Future[tuple[Answer, int]] = asyncio.get_running_loop().create_future()
        self._pending[id] = _Waiter(future, on_result)
        self._on_call_registered()
        sent = False
        unregister: list[Callable[[], None]] = []
        try:
            await self._send(encode_request(id, method, params))
            sent = True
            if cancel is not None:

                def cancelled() -> None:
                    if id in self._pending:
                        self._send_cancel(id)

                unregister.append(cancel.add_callback(cancelled))
            if abort is not None:

                def aborted() -> None:
                    if not future.done():
                        future.set_exception(CallAborted())

                unregister.append(abort.add_callback(aborted))
            if limit is None:
                answer, barrier = await future
            else:
                async with asyncio.timeout(limit):
                    answer, barrier = await future
        except BaseException as e:
            # Abandoned (aborted, timed out, or the caller's task was cancelled): the
            # peer is told, and an answer that still comes is discarded as late.
            if self._abandon(id) and sent:
                self._send_cancel(id)
            if future.done() and not future.cancelled():
                future.exception()  # retrieved: an abort that raced the caller's cancellation
            if isinstance(e, TimeoutError) and limit is not None:
                raise CallTimeout(limit) from None
            raise
        finally:
            for remove in unregister:
                remove()
        if barrier > self._done and asyncio.current_task() is not self._worker:
            await self.wait_handled(barrier)
        if isinstance(answer, CallError):
            raise answer
        return answer

    async def notify(self, method: str, params: Raw | bytes | None = None) -> None:
        """Sends a notification once there is room in the outgoing queue."""
        await self._send(encode_notification(method, params))

    async def send_line(self, line: bytes) -> None:
        """Sends one already-encoded message (without its newline)."""
        await self._send(line)

    async def flush(self) -> None:
        """Waits until everything queued before this call has been written out."""
        if self._output_closed:
            raise ConnectionClosed()
        marker: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        await self._send(marker)
        await marker

    async def wait_handled(self, count: int, token: CancellationToken | None = None) -> None:
        """Waits until the worker has handled `count` notifications (or `token` fires)."""
        if count <= self._done:
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._done_seq += 1
        heapq.heappush(self._done_waiters, (count, self._done_seq, future))
        remove = token.add_callback(lambda: _set(future)) if token is not None else None
        try:
            await future
        finally:
            if remove is not None:
                remove()

    # -- the connection's side ------------------------------------------------------

    def report(self, event: ConnectionEvent) -> None:
        if self._observer is not None:
            self._observer(event)

    @property
    def has_pending_calls(self) -> bool:
        return bool(self._pending)

    def close(self) -> None:
        """Marks the connection closed and fails every pending call with `ConnectionClosed`."""
        self._closed = True
        pending, self._pending = self._pending, {}
        for waiter in pending.values():
            if not waiter.future.done():
                waiter.future.set_result((ConnectionClosed(), 0))

    def resolve(self, id: RequestId, answer: Answer, barrier: int) -> int:
        """Hands an answer to the call `id`; `RESOLVED`, `LATE` (abandoned) or `UNKNOWN`."""
        waiter = self._pending.pop(id, None)
        if waiter is None:
            return LATE if id in self._abandoned else UNKNOWN
        if waiter.future.done():  # aborted just before the answer was read
            self._abandoned.append(id)
            return LATE
        if waiter.on_result is not None and not isinstance(answer, CallError):
            try:
                waiter.on_result(answer)
            except Exception as e:  # noqa: BLE001 - the caller's code on the reader must not end it
                self.report(ResultHookFailed(id, e))
        waiter.future.set_result((answer, barrier))
        return RESOLVED

    def report_unresolved(self, id: RequestId, outcome: int) -> None:
        if outcome == LATE:
            self.report(LateResponse(id))
        elif outcome == UNKNOWN:
            self.report(UnmatchedResponse(id))

    def set_handled(self, count: int) -> None:
        """The worker has handled `count` notifications."""
        self._done = count
        waiters = self._done_waiters
        while waiters and waiters[0][0] <= count:
            _set(heapq.heappop(waiters)[2])

    def worker_gone(self) -> None:
        self.set_handled(_ALL_DONE)

    def _abandon(self, id: RequestId) -> bool:
        """Forgets a pending call; whether it was still pending."""
        if self._pending.pop(id, None) is None:
            return False
        self._abandoned.append(id)
        return True

    def _send_cancel(self, id: RequestId) -> None:
        """Queues the cancel notification for `id` without waiting for room."""
        if self._cancel is None or self._output_closed:
            return
        params = b"{" + _encode(self._cancel.id_key) + b":" + _encode(id) + b"}"
        line = encode_notification(self._cancel.method, params)
        if len(self._out) < self._out_capacity:
            self._out.append(line)
        else:
            self._overflow.append(line)
        self._wake_writer()

    async def _send(self, item: bytes | asyncio.Future[None]) -> None:
        if self._output_closed:
            raise ConnectionClosed()
        while len(self._out) >= self._out_capacity:
            room: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._room_waiters.append(room)
            try:
                await room
            except asyncio.CancelledError:
                if room.done() and not room.cancelled():
                    self._wake_room(1)  # pass the wake-up on
                raise
            if self._output_closed:
                raise ConnectionClosed()
        self._out.append(item)
        self._wake_writer()

    def _wake_writer(self) -> None:
        wake = self._writer_wake
        if wake is not None and not wake.done():
            wake.set_result(None)

    def _wake_room(self, count: int) -> None:
        waiters = self._room_waiters
        while count > 0 and waiters:
            room = waiters.popleft()
            if not room.done():
                room.set_result(None)
                count -= 1

    def _writer_ended(self) -> None:
        """The writer is gone: senders and flushes fail from now on."""
        self._output_closed = True
        self._wake_room(len(self._room_waiters))
        for item in self._out:
            if isinstance(item, asyncio.Future) and not item.done():
                item.set_exception(ConnectionClosed())
        self._out.clear()
        self._overflow.clear()
