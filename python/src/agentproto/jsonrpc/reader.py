"""The reader: frames, decodes and routes every incoming line, with bounded queues and a
bounded backlog.

**Backpressure.** The notification queue and the request slots are bounded; when one is
full the reader stops reading, so the peer's writes block and memory stays bounded.
Nothing is dropped. One exception keeps answers flowing: while calls of this side are
pending, the reader may set up to `backlog` notifications and requests aside and keep
reading, because the answer those handlers wait for may be behind them.

The hot path (a notification or a response in a chunk already read) is synchronous:
decode the envelope once, queue or resolve, next line. The reader awaits only to read,
to wait for room, and to send an error answer.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import cast

import msgspec
from msgspec import UNSET

from agentproto.jsonrpc.cancellation import CancellationToken
from agentproto.jsonrpc.error import ErrorCode, ErrorObject
from agentproto.jsonrpc.frame import LineSplitter, Oversize
from agentproto.jsonrpc.handler import (
    Handler,
    NotificationQueue,
    RequestContext,
    RequestJob,
    notification_worker,
    run_request,
)
from agentproto.jsonrpc.local_error import InvalidResponse, ResponseTooLarge, RpcError
from agentproto.jsonrpc.message import (
    EnvelopeError,
    EnvelopeErrorKind,
    Notification,
    Request,
    RequestId,
    Response,
    _decode,
    encode,
    encode_response,
)
from agentproto.jsonrpc.options import (
    ConnectionOptions,
    ErrorWithoutId,
    InvalidCancel,
    InvalidMessage,
    NonJsonLineSkipped,
    OversizeMessage,
    RequestHandlerFailed,
    UnmatchedResponse,
)
from agentproto.jsonrpc.peer import Peer
from agentproto.jsonrpc.transport import ByteReader

__all__ = ["Reader"]


class InFlight:
    """The tokens of incoming requests not answered yet, for `$/cancel_request`."""

    __slots__ = ("_generation", "_tokens")

    def __init__(self) -> None:
        self._tokens: dict[RequestId, tuple[int, CancellationToken]] = {}
        self._generation = 0

    def register(self, id: RequestId, token: CancellationToken) -> int:
        self._generation += 1
        self._tokens[id] = (self._generation, token)
        return self._generation

    def cancel(self, id: RequestId) -> bool:
        entry = self._tokens.get(id)
        if entry is None:
            return False  # unknown or finished: ignored
        entry[1].cancel()
        return True

    def finish(self, id: RequestId, generation: int) -> None:
        entry = self._tokens.get(id)
        if entry is not None and entry[0] == generation:
            del self._tokens[id]


class Reader:
    """Reads one connection's input and dispatches it; owns the request tasks and the
    notification worker's queue."""

    def __init__(self, input: ByteReader, handler: Handler, peer: Peer, options: ConnectionOptions) -> None:
        self._input = input
        self._handler = handler
        self._peer = peer
        self._options = options
        self._allow_null_id = options.allow_null_id
        self._check_duplicate_keys = options.check_duplicate_keys
        self._cancel = options.cancel_notification
        self.queue = NotificationQueue(options.notification_queue)
        self._free_slots = max(1, options.max_concurrent_requests)
        self.tasks: set[asyncio.Task[None]] = set()
        # Work notification handlers handed off (`NotificationContext.spawn`).
        self.background: set[asyncio.Task[None]] = set()
        self._in_flight = InFlight()
        self.shutdown = CancellationToken()  # the parent of every request's token
        self.hard_stop = False
        self._deferred_notifications: deque[tuple[int, Notification]] = deque()
        self._deferred_requests: deque[RequestJob] = deque()
        self._backlog = options.backlog
        self._notifications_read = 0
        self._requests_read = 0
        self._room_waiter: asyncio.Future[None] | None = None
        peer._on_call_registered = self.room

    # -- tasks ----------------------------------------------------------------------

    def start_worker(self) -> asyncio.Task[None]:
        worker = notification_worker(self._handler, self._peer, self.queue, self.room, self.background)
        return asyncio.create_task(worker)

    def room(self) -> None:
        """Something the blocked reader may wait for happened (room, a call registered)."""
        waiter = self._room_waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _spawn(self, job: RequestJob) -> None:
        self._free_slots -= 1
        task = asyncio.create_task(run_request(self._handler, self._peer, job, self._stopping))
        self.tasks.add(task)

        def done(task: asyncio.Task[None]) -> None:
            self.tasks.discard(task)
            self._free_slots += 1
            self._in_flight.finish(job.request.id, job.generation)
            self.room()

        task.add_done_callback(done)

    def _stopping(self) -> bool:
        return self.hard_stop

    # -- reading --------------------------------------------------------------------

    async def read(self) -> None:
        """Reads until the end of the input (returns) or a read error (raises)."""
        splitter = LineSplitter(self._options.max_message_size)
        read = self._input.read
        size = max(1, self._options.read_chunk_size)
        while True:
            if self._deferred_notifications or self._deferred_requests:
                await self._unblock()
            chunk = await read(size)
            for frame in splitter.feed(chunk) if chunk else splitter.finish():
                if self._deferred_notifications or self._deferred_requests:
                    await self._unblock()
                if type(frame) is bytes:
                    reply = self._on_line(frame)
                elif isinstance(frame, Oversize):
                    reply = self._on_oversize(frame)
                else:  # pragma: no cover - the splitter yields nothing else
                    continue
                if reply is not None:
                    await self._peer.send_line(reply)
            if not chunk:
                return

    async def _unblock(self) -> None:
        """Returns once the reader may go on: nothing set aside, or room to set more aside."""
        while True:
            self._dispatch_deferred_now()
            deferred = len(self._deferred_notifications) + len(self._deferred_requests)
            if deferred == 0 or (deferred < self._backlog and self._peer.has_pending_calls):
                return
            waiter = asyncio.get_running_loop().create_future()
            self._room_waiter = waiter
            try:
                await waiter
            finally:
                self._room_waiter = None

    def _dispatch_deferred_now(self) -> None:
        notes = self._deferred_notifications
        queue = self.queue
        while notes and not queue.full:
            queue.put(notes.popleft())
        jobs = self._deferred_requests
        while jobs and self._free_slots > 0:
            self._spawn(jobs.popleft())

    async def dispatch_deferred(self) -> None:
        """Dispatches everything set aside (at shutdown: room or not for notifications,
        waiting for slots for requests)."""
        while self._deferred_notifications:
            self.queue.put(self._deferred_notifications.popleft())
        while self._deferred_requests:
            if self._free_slots > 0:
                self._spawn(self._deferred_requests.popleft())
                continue
            waiter = asyncio.get_running_loop().create_future()
            self._room_waiter = waiter
            try:
                await waiter
            finally:
                self._room_waiter = None

    # -- routing --------------------------------------------------------------------

    def _on_line(self, line: bytes) -> bytes | None:
        """Routes one line; returns an error answer to send, if any."""
        try:
            message = _decode(line, self._allow_null_id, self._check_duplicate_keys, True)
        except EnvelopeError as e:
            return self._on_invalid(e, len(line))
        if type(message) is Notification:
            self._on_notification(message)
        elif type(message) is Request:
            self._on_request(message)
        elif type(message) is Response:
            self._on_response(message)
        return None

    def _on_notification(self, notification: Notification) -> None:
        cancel = self._cancel
        if cancel is not None and notification.method == cancel.method:
            self._on_cancel(notification)
            return
        self._notifications_read += 1
        item = (self._notifications_read, notification)
        if not self._deferred_notifications and not self.queue.full:
            self.queue.put(item)
        else:
            self._deferred_notifications.append(item)

    def _on_request(self, request: Request) -> None:
        self._requests_read += 1
        token = self.shutdown.child()
        generation = self._in_flight.register(request.id, token)
        cx = RequestContext(self._peer, request.id, token, self._notifications_read, self._requests_read)
        try:
            self._handler.request_read(request, cx)
        except Exception as e:  # noqa: BLE001 - reported; the request is still handled
            self._peer.report(RequestHandlerFailed(request.id, request.method, e))
        job = RequestJob(request, cx, generation)
        if not self._deferred_requests and self._free_slots > 0:
            self._spawn(job)
        else:
            self._deferred_requests.append(job)

    def _on_response(self, response: Response) -> None:
        peer = self._peer
        if response.id is None:
            if response.error is not None:
                peer.report(ErrorWithoutId(response.error))
            else:
                peer.report(UnmatchedResponse(None))
            return
        answer = RpcError(response.error) if response.error is not None else response.result
        if answer is None:  # pragma: no cover - a response has one of the two
            answer = msgspec.Raw(b"null")
        outcome = peer.resolve(response.id, answer, self._notifications_read)
        if outcome:
            peer.report_unresolved(response.id, outcome)

    def _on_cancel(self, notification: Notification) -> None:
        cancel = self._cancel
        assert cancel is not None
        if cancel.read_id is not None:
            id: object = cancel.read_id(notification.params)
        else:
            id = _member_id(notification.params, cancel.id_key)
        if id is UNSET:
            self._peer.report(InvalidCancel())
        else:
            self._in_flight.cancel(cast(RequestId, id))

    def _on_invalid(self, error: EnvelopeError, length: int) -> bytes | None:
        peer = self._peer
        if error.kind is EnvelopeErrorKind.PARSE and self._options.skip_non_json_lines:
            peer.report(NonJsonLineSkipped(length))
            return None
        if error.kind is EnvelopeErrorKind.INVALID_RESPONSE:
            failed = False
            if error.id is not UNSET and error.id is not None:
                failed = peer.resolve(error.id, InvalidResponse(error), self._notifications_read) == 0
            peer.report(InvalidMessage(error, failed))
            return None
        reply = error.reply()
        peer.report(InvalidMessage(error, False))
        return None if reply is None else encode(reply)

    def _on_oversize(self, line: Oversize) -> bytes | None:
        self._peer.report(OversizeMessage(line))
        if line.id is UNSET:
            return None
        if line.shape == "call":
            maximum = self._options.max_message_size
            message = f"invalid request: message of {line.length} bytes exceeds the maximum of {maximum} bytes"
            return encode_response(line.id, error=ErrorObject(code=ErrorCode.INVALID_REQUEST, message=message))
        if line.shape == "response" and line.id is not None:
            self._peer.resolve(line.id, ResponseTooLarge(line.length), self._notifications_read)
        return None


def _member_id(params: msgspec.Raw | None, key: str) -> object:
    """The request id under `key` of a cancel notification's params (`UNSET`: none)."""
    if params is None:
        return UNSET
    try:
        value = msgspec.json.decode(params)
    except msgspec.DecodeError:
        return UNSET
    id = value.get(key, UNSET) if isinstance(value, dict) else UNSET
    if (isinstance(id, int) and not isinstance(id, bool)) or isinstance(id, str) or id is None:
        return id
    return UNSET
