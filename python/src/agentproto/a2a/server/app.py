"""The A2A server as an ASGI application: the JSON-RPC binding at `jsonrpc_path`, the
HTTP+JSON binding under `rest_prefix` (with its `/{tenant}/…` routes), SSE for the
streaming operations (`Last-Event-ID` resumes a subscription), the agent card with
caching headers, the auth hook, and the request limits.

Requests decode through the pure binding layer (`agentproto.a2a.jsonrpc`,
`agentproto.a2a.rest`); operations run on `Core`. ASGI is a calling convention: this
module imports nothing beyond msgspec, and runs under any ASGI server (uvicorn,
hypercorn, granian).
"""

from __future__ import annotations

import asyncio
import contextvars
import email.utils
import hashlib
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from agentproto.a2a import jsonrpc, rest
from agentproto.a2a.codec import encode
from agentproto.a2a.errors import A2aError, ErrorKind
from agentproto.a2a.executor import AgentExecutor, Principal
from agentproto.a2a.generated.v1 import OPERATIONS, AgentCard, Operation
from agentproto.a2a.memory_store import MemoryStore
from agentproto.a2a.server import codings
from agentproto.a2a.server.core import CallContext, ServerOptions, StreamEvent, authenticate, call_context
from agentproto.a2a.server.stream_budget import DRAIN_ABOVE, Holder, StreamBudget
from agentproto.a2a.server.turns import Core
from agentproto.a2a.server.v03_binding import answer_v03
from agentproto.a2a.store import Store
from agentproto.a2a.tasks import Gap
from agentproto.a2a.version import MissingVersion, is_v03

__all__ = ["A2aApp", "create_app"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

_JSON = (b"content-type", b"application/json")
_A2A_JSON = (b"content-type", b"application/a2a+json")
"""HTTP+JSON success answers (A2A 1.0.1 says SHOULD, as the Rust server does)."""
_END = object()
_NONE: dict[str, Any] = {}
"""An empty mapping to look up in (never changed)."""
_LAGGED = b"event: lagged\ndata: {}\n\n"
_CLOSE: contextvars.ContextVar[Callable[[], None] | None] = contextvars.ContextVar("_CLOSE", default=None)
"""How to close the current request's connection, when the ASGI server offers it (the scope
extension `agentproto.close`; see `agentproto.a2a.server.stream_budget`)."""


class _Disconnected(Exception):
    """The client went away while its request was read."""


def create_app(
    executor: AgentExecutor, card: AgentCard, *, store: Store | None = None, options: ServerOptions | None = None
) -> A2aApp:
    """An ASGI application serving `executor` as the agent `card` describes.

    Args:
        executor: the agent logic (`agentproto.a2a.executor`).
        card: the public agent card (served at `options.card_path`; its capabilities
            say whether streaming and push configs are offered).
        store: where tasks live; a bounded `MemoryStore` when not given.
        options: paths, limits, the auth hook and interceptors (`ServerOptions`).
    """
    return A2aApp(Core(executor, card, MemoryStore() if store is None else store, options or ServerOptions()))


class A2aApp:
    """The ASGI application (see the module documentation). `core` runs the operations."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self.options = core.options
        self._card = encode(core.card)
        self._etag = '"' + hashlib.sha256(self._card).hexdigest()[:32] + '"'
        self._modified = int(time.time())
        self._last_modified = email.utils.formatdate(self._modified, usegmt=True)
        self._missing = MissingVersion.V1_0 if self.options.lenient_version else MissingVersion.V0_3
        self._rest_prefix = self.options.rest_prefix.rstrip("/")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        _CLOSE.set(scope.get("extensions", _NONE).get("agentproto.close", _NONE).get("close"))
        try:
            await self._http(scope, receive, send)
        except _Disconnected:
            return

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                self.core.start()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.core.shutdown()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        method: str = scope["method"]
        raw_path: bytes = scope.get("raw_path") or scope["path"].encode()
        path = raw_path.decode("latin-1").partition("?")[0]
        query = bytes(scope.get("query_string", b"")).decode("latin-1")
        fields = scope["headers"]
        if not isinstance(fields, list | tuple):
            fields = list(fields)
        headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in fields}
        if len(headers) != len(fields):  # a field given more than once: its values joined
            headers = {}
            for name, value in fields:
                key = name.decode("latin-1").lower()
                text = value.decode("latin-1")
                headers[key] = f"{headers[key]}, {text}" if key in headers else text
        refused = codings.refusal(headers)
        if refused is not None:
            await _answer(send, *refused)
            return
        if path == self.options.card_path and method in ("GET", "HEAD"):
            await self._card_answer(headers, send, method == "HEAD")
            return
        if path == self.options.jsonrpc_path and method == "POST":
            binding = "jsonrpc"
        elif self._rest_prefix == "" or path == self._rest_prefix or path.startswith(self._rest_prefix + "/"):
            binding = "rest"
            path = path[len(self._rest_prefix) :] or "/"
        else:
            await _answer(send, 404, b'{"error":{"code":404,"status":"NOT_FOUND","message":"not found"}}', [_JSON])
            return
        try:
            principal = None if self.options.authenticate is None else await authenticate(self.options, headers)
            body = await self._read_body(headers, receive)
        except A2aError as e:
            await self._refuse(send, binding, e)
            return
        if binding == "jsonrpc":
            await self._jsonrpc(body, headers, query, principal, receive, send)
        else:
            await self._rest(method, path, query, headers, body, principal, receive, send)

    async def _card_answer(self, headers: dict[str, str], send: Send, head: bool) -> None:
        cache = [
            (b"etag", self._etag.encode()),
            (b"last-modified", self._last_modified.encode()),
            (b"cache-control", f"public, max-age={self.options.card_max_age}".encode()),
        ]
        if self._card_fresh(headers):
            await _answer(send, 304, b"", cache)
            return
        if head:
            length = (b"content-length", str(len(self._card)).encode())
            await send({"type": "http.response.start", "status": 200, "headers": [_JSON, *cache, length]})
            await send({"type": "http.response.body", "body": b""})
            return
        await _answer(send, 200, self._card, [_JSON, *cache])

    def _card_fresh(self, headers: dict[str, str]) -> bool:
        """Whether the caller's copy of the card is current (RFC 9110 §13.2.2: `If-None-Match`
        decides when present, `If-Modified-Since` otherwise; the card changes only at start)."""
        wanted = headers.get("if-none-match")
        if wanted is not None:
            return wanted.strip() == "*" or self._etag in [w.strip() for w in wanted.split(",")]
        since = headers.get("if-modified-since")
        if since is None:
            return False
        try:
            return email.utils.parsedate_to_datetime(since).timestamp() >= self._modified
        except (TypeError, ValueError):
            return False

    async def _read_body(self, headers: dict[str, str], receive: Receive) -> bytes:
        limit = self.options.max_body_bytes
        length = headers.get("content-length")
        if length is not None and length.strip().isdigit() and int(length) > limit:
            raise _too_large(limit)
        chunks: list[bytes] = []
        size = 0
        try:
            async with self.core.deadlines.limit(self.options.body_timeout):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        raise _Disconnected
                    chunk = message.get("body", b"")
                    size += len(chunk)
                    if size > limit:
                        raise _too_large(limit)
                    chunks.append(chunk)
                    if not message.get("more_body", False):
                        break
        except TimeoutError:
            raise A2aError(ErrorKind.REQUEST_TIMEOUT, "the request body did not arrive in time") from None
        return b"".join(chunks)

    async def _refuse(self, send: Send, binding: str, error: A2aError, rpc_id: jsonrpc.RpcId | None = None) -> None:
        if binding == "jsonrpc":
            refusal = jsonrpc.RpcRefusal(rpc_id, error)
            await _answer(send, refusal.http_status, refusal.body(), [_JSON])
        else:
            aip = rest.RestRefusal(error)
            await _answer(send, aip.http_status, aip.body(), [_JSON])

    def _context(self, request: Any, principal: Principal | None, headers: dict[str, str]) -> CallContext:
        return call_context(request, principal, headers)

    async def _run(self, cx: CallContext, operation: Operation, request: Any) -> Any:
        if OPERATIONS[operation].streaming:
            return await self.core.handle(cx, operation, request)
        try:
            async with self.core.deadlines.limit(self.options.request_timeout):
                return await self.core.handle(cx, operation, request)
        except TimeoutError:
            raise A2aError(ErrorKind.REQUEST_TIMEOUT, "the operation did not finish in time") from None

    async def _jsonrpc(
        self,
        body: bytes,
        headers: dict[str, str],
        query: str,
        principal: Principal | None,
        receive: Receive,
        send: Send,
    ) -> None:
        if is_v03(headers, query, self._missing):
            await answer_v03(self, body, headers, principal, receive, send)
            return
        call = jsonrpc.read_request(
            body,
            headers,
            query,
            missing_version=self._missing,
            check_duplicate_keys=self.options.check_duplicate_keys,
        )
        if isinstance(call, jsonrpc.RpcRefusal):
            await _answer(send, call.http_status, b"" if call.notification else call.body(), [_JSON])
            return
        try:
            cx = self._context(call.request, principal, headers)
            answer = await self._run(cx, call.operation, call.request)
        except A2aError as e:
            if call.id is None:
                await _answer(send, 204, b"", [])
            else:
                await self._refuse(send, "jsonrpc", e, call.id)
            return
        if call.id is None:
            if hasattr(answer, "aclose"):
                await answer.aclose()
            await _answer(send, 204, b"", [])
            return
        head = b'{"jsonrpc":"2.0","id":' + call.id.json
        if not OPERATIONS[call.operation].streaming:
            await _answer(send, 200, head + b',"result":' + encode(answer) + b"}", [_JSON])
            return

        def frame(item: StreamEvent | Gap | A2aError) -> bytes:
            if isinstance(item, A2aError):
                return _frame(None, None, jsonrpc.RpcRefusal(call.id, item).body())
            if isinstance(item, Gap):
                return _gap(item)
            return _frame(item.seq, None, head + b',"result":' + encode(item.event) + b"}")

        await self._sse(answer, frame, receive, send, "jsonrpc", call.id)

    async def _rest(
        self,
        method: str,
        path: str,
        query: str,
        headers: dict[str, str],
        body: bytes,
        principal: Principal | None,
        receive: Receive,
        send: Send,
    ) -> None:
        call = rest.read_request(
            method,
            path,
            query,
            headers,
            body,
            missing_version=self._missing,
            check_duplicate_keys=self.options.check_duplicate_keys,
        )
        if isinstance(call, rest.RestRefusal):
            extra = [] if call.allow is None else [(b"allow", call.allow.encode())]
            await _answer(send, call.http_status, call.body(), [_JSON, *extra])
            return
        try:
            cx = self._context(call.request, principal, headers)
            answer = await self._run(cx, call.operation, call.request)
        except A2aError as e:
            await self._refuse(send, "rest", e)
            return
        if not OPERATIONS[call.operation].streaming:
            await _answer(send, 200, encode(answer), [_A2A_JSON])
            return

        def frame(item: StreamEvent | Gap | A2aError) -> bytes:
            if isinstance(item, A2aError):
                return _frame(None, "error", rest.RestRefusal(item).body())
            if isinstance(item, Gap):
                return _gap(item)
            return _frame(item.seq, None, encode(item.event))

        await self._sse(answer, frame, receive, send, "rest", None)

    async def _sse(
        self,
        events: Any,
        frame: Callable[[StreamEvent | Gap | A2aError], bytes],
        receive: Receive,
        send: Send,
        binding: str,
        rpc_id: jsonrpc.RpcId | None,
    ) -> None:
        """Answers with the events as SSE. The first is awaited before the headers, so a
        failure at once is an ordinary error answer; keep-alive comments while idle; the
        stream stops when the client goes away, and is cut off when its next frame does not
        fit in the stream budget (`agentproto.a2a.server.stream_budget`)."""
        try:
            first = await anext(events)
        except StopAsyncIteration:
            first = _END
        except A2aError as e:
            await self._refuse(send, binding, e, rpc_id)
            return
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", b"text/event-stream"),
                    (b"cache-control", b"no-cache"),
                    (b"x-accel-buffering", b"no"),
                ],
            }
        )
        queue: asyncio.Queue[Any] = asyncio.Queue(maxsize=16)

        async def pump() -> None:
            try:
                async for item in events:
                    await queue.put(item)
            except A2aError as e:
                await queue.put(e)
            await queue.put(_END)

        async def disconnected() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass

        holder = Holder(_CLOSE.get())
        item = first
        pumping = asyncio.create_task(pump()) if first is not _END else None
        gone = asyncio.create_task(disconnected())
        try:
            while item is not _END:
                if item is not None:
                    if not await _write_charged(self.core.stream_budget, holder, send, frame(item)):
                        await send({"type": "http.response.body", "body": _LAGGED, "more_body": True})
                        break
                    if holder.cut:  # its connection was closed for another stream's frame
                        return
                    if isinstance(item, A2aError):
                        break
                if gone.done():
                    return
                if not queue.empty():  # the next event is in: no task and no wait for it
                    item = queue.get_nowait()
                    continue
                getting = asyncio.create_task(queue.get())
                done, _ = await asyncio.wait(
                    {getting, gone}, timeout=self.options.keep_alive, return_when="FIRST_COMPLETED"
                )
                if gone in done:
                    getting.cancel()
                    return
                if getting not in done:
                    getting.cancel()
                    await send({"type": "http.response.body", "body": b": keep-alive\n\n", "more_body": True})
                    item = None
                    continue
                item = getting.result()
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            gone.cancel()
            if pumping is not None:
                pumping.cancel()
                await asyncio.wait({pumping})
            await events.aclose()


async def _write_charged(budget: StreamBudget, holder: Holder, send: Send, data: bytes) -> bool:
    """Sends `data` charged to `budget` until the connection has written it out (an empty
    `send` after a large frame returns once the transport's buffer has drained); false,
    and nothing sent, when it does not fit."""
    size = len(data)
    if not budget.charge(holder, size):
        return False
    try:
        await send({"type": "http.response.body", "body": data, "more_body": True})
        del data
        if size > DRAIN_ABOVE:
            await send({"type": "http.response.body", "body": b"", "more_body": True})
    finally:
        budget.release(holder, size)
    return True


def _too_large(limit: int) -> A2aError:
    return A2aError(ErrorKind.PAYLOAD_TOO_LARGE, f"the request body is larger than {limit} bytes")


def _gap(gap: Gap) -> bytes:
    return _frame(None, "gap", b'{"after":%d,"resumedAt":%d}' % (gap.after, gap.resumed_at))


def _frame(seq: int | None, event: str | None, data: bytes) -> bytes:
    out = b"" if seq is None else b"id: %d\n" % seq
    if event is not None:
        out += b"event: " + event.encode() + b"\n"
    return out + b"data: " + data + b"\n\n"


async def _answer(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    head = [*headers, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": body})
