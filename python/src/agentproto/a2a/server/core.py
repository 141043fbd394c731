"""The binding-neutral A2A server: one decoded request in, one answer out (a typed value,
or an async iterator of stream events). The JSON-RPC and HTTP+JSON bindings
(`agentproto.a2a.server.app`) only translate to and from it. Sending and canceling,
which run the executor, are in `turns.py`."""

from __future__ import annotations

import base64
import binascii
import inspect
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

from agentproto.a2a.errors import A2aError, ErrorKind
from agentproto.a2a.executor import AgentExecutor, Principal, checked
from agentproto.a2a.generated.v1 import (
    AgentCard,
    GetTaskRequest,
    ListTasksRequest,
    ListTasksResponse,
    Operation,
    StreamResponse,
    SubscribeToTaskRequest,
)
from agentproto.a2a.push_delivery import PushOptions
from agentproto.a2a.push_guard import PushGuard, Refused
from agentproto.a2a.server.deadlines import Deadlines
from agentproto.a2a.server.stream_budget import StreamBudget
from agentproto.a2a.store import ListQuery, Store, StoreError, TaskKey, timestamp_ms
from agentproto.a2a.tasks import EventHub, Gap, Tasks, follow, is_terminal, store_error, viewed

__all__ = ["CallContext", "Interceptor", "ServerOptions", "StreamEvent"]


@dataclass(frozen=True, slots=True)
class CallContext:
    """Who is calling, for which tenant, as the binding and the auth hook found it."""

    tenant: str = ""
    principal: Principal | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    last_event_id: int | None = None
    """`Last-Event-ID` of a subscription: the sequence number of the last event seen."""


Interceptor = Callable[[CallContext, Operation, Any], Awaitable[None] | None]
"""A check run before every operation, once its caller and decoded request are known;
raising `A2aError` refuses the call with that error."""


@dataclass(frozen=True, slots=True)
class StreamEvent:
    """One event of a streamed answer; `seq` is its place in the task's log (the SSE
    `id:`), `None` for what is no place in it (a direct message, a resumed Task)."""

    seq: int | None
    event: StreamResponse


EventStream = AsyncIterator[StreamEvent | Gap]
"""A streamed answer: events, and a `Gap` where the log dropped some (SSE `event: gap`)."""


@dataclass(slots=True)
class ServerOptions:
    """Options of the A2A server (protocol core and HTTP bindings)."""

    jsonrpc_path: str = "/"
    """Where the JSON-RPC binding is served."""
    rest_prefix: str = "/a2a/rest"
    """The prefix of the HTTP+JSON routes (`""`: the root)."""
    card_path: str = "/.well-known/agent-card.json"
    card_max_age: int = 300
    """`Cache-Control: max-age` of the agent card, in seconds."""
    extended_card: AgentCard | None = None
    """Served to authenticated callers by `GetExtendedAgentCard` when the card declares one."""
    max_body_bytes: int = 4 << 20
    """Larger bodies are refused with 413 (from `Content-Length` before reading)."""
    body_timeout: float = 60.0
    """The whole body must arrive within this many seconds (else 408; both limits are
    checked every 50 ms, `agentproto.a2a.server.deadlines`)."""
    request_timeout: float = 300.0
    """A unary operation must answer within this many seconds (else 408)."""
    keep_alive: float = 15.0
    """How often an idle SSE stream gets a `: keep-alive` comment."""
    stream_budget: int = 64 << 20
    """Bytes of stream frames held for subscribers, all streams together: a frame counts
    from its encoding until the connection has written it out, and a stream whose next
    frame does not fit is cut off as lagged (`agentproto.a2a.server.stream_budget`)."""
    max_metadata_bytes: int = 64 << 10
    authenticate: Callable[[Mapping[str, str]], Principal | None | Awaitable[Principal | None]] | None = None
    """The auth hook: given the request headers, the caller (`None`: anonymous), or
    raise `A2aError` (`UNAUTHENTICATED`, `PERMISSION_DENIED`) to refuse the request."""
    interceptors: list[Interceptor] = field(default_factory=list)
    lenient_version: bool = False
    """Take a request without `A2A-Version` as 1.0 (the specification says 0.3)."""
    check_duplicate_keys: bool = False
    """Refuse repeated JSON keys the fast decoding path would not see."""
    push_guard: PushGuard = field(default_factory=PushGuard)
    """Which push URLs a config may name (the SSRF guard: public addresses only by
    default; `PushGuard(allow_loopback=True)` or `PushGuard.permissive()` for tests and
    local receivers). Delivery checks again with the same guard."""
    turn_lease: float = 30.0
    """Seconds a running turn's lease lasts without renewal (renewed every third of it,
    swept every half; see `agentproto.a2a.server.replicas`): a server that dies has its
    turns failed by another (or its next run) once this has passed."""
    retain_terminal: float | None = None
    """Seconds a task in a terminal state is kept after its last status, with its log and
    push configs, on a store that can purge (SQLite, PostgreSQL); `None` keeps every task
    (`agentproto serve` keeps them 24 hours)."""
    cancel_wait: float = 5.0
    """How long a cancel waits for the replica running the turn (PostgreSQL store)."""
    push_delivery: PushOptions | None = field(default_factory=PushOptions)
    """How this server sends push notifications, when the card offers them (its `guard`
    is replaced by `push_guard`); `None`: this process sends none (another one drains
    the store's outbox)."""


async def authenticate(options: ServerOptions, headers: dict[str, str]) -> Principal | None:
    """The principal `options.authenticate` finds in a call's headers (`None` without a
    hook), whichever binding the call came on; the hook may be sync or async."""
    hook = options.authenticate
    if hook is None:
        return None
    found = hook(headers)
    if inspect.isawaitable(found):
        found = await found
    return found


def call_context(request: Any, principal: Principal | None, headers: Mapping[str, str]) -> CallContext:
    """The context of a call: the tenant from the request (the caller's own when the auth
    hook gave it one; another one named is refused), the caller, and `Last-Event-ID`."""
    tenant: str = getattr(request, "tenant", "")
    if principal is not None and principal.tenant is not None:
        if tenant and tenant != principal.tenant:
            raise A2aError(ErrorKind.PERMISSION_DENIED, f"this caller may not act for tenant {tenant!r}")
        tenant = principal.tenant
    last: int | None = None
    given = headers.get("last-event-id")
    if given is not None and given.strip():
        if not given.strip().isdigit():
            raise A2aError(ErrorKind.INVALID_REQUEST, "Last-Event-ID must be an event id this server sent")
        last = int(given.strip())
    return CallContext(tenant=tenant, principal=principal, headers=headers, last_event_id=last)


def invalid(path: str, expected: str) -> A2aError:
    error = A2aError(ErrorKind.INVALID_PARAMS, f"Invalid parameters at {path}: expected {expected}")
    return error.with_metadata("path", path).with_metadata("expected", expected)


def page_token(cursor: tuple[int, str]) -> str:
    """An opaque page token for a `(status ms, id)` cursor."""
    return base64.urlsafe_b64encode(f"{cursor[0]}:{cursor[1]}".encode()).rstrip(b"=").decode()


def parse_page_token(token: str) -> tuple[int, str] | None:
    try:
        text = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
        ms, _, task_id = text.partition(":")
        return int(ms), task_id
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None


_V4_CLEAR = ~((0xC000 << 48) | (0xF000 << 64))
_V4_SET = (0x8000 << 48) | (4 << 76)


def new_id() -> str:
    """A random UUID (version 4) as text: what `str(uuid.uuid4())` gives, without the
    `UUID` object between."""
    h = "%032x" % (int.from_bytes(os.urandom(16), "big") & _V4_CLEAR | _V4_SET)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


class CoreBase:
    """The operations that run no executor: reading tasks, subscribing, push configs and
    the extended card."""

    def __init__(self, executor: AgentExecutor, card: AgentCard, store: Store, options: ServerOptions) -> None:
        self.executor = executor
        self.card = checked("AgentCard", card)
        self.store = store
        self.options = options
        self.hub = EventHub()
        self.stream_budget = StreamBudget(options.stream_budget)
        self.deadlines = Deadlines()
        """The body and request time limits of the calls running (both bindings)."""
        self.tasks = Tasks(store, self.hub, owner=new_id(), lease_ms=int(options.turn_lease * 1000))

    @property
    def streaming(self) -> bool:
        return self.card.capabilities.streaming is True

    @property
    def push(self) -> bool:
        return self.card.capabilities.push_notifications is True

    def require_streaming(self) -> None:
        if not self.streaming:
            raise A2aError(
                ErrorKind.UNSUPPORTED_OPERATION, "this agent does not stream (capabilities.streaming is not true)"
            )

    def require_push(self) -> None:
        if not self.push:
            raise A2aError(ErrorKind.PUSH_NOTIFICATION_NOT_SUPPORTED)

    async def check_push_url(self, url: str, path: str) -> None:
        """Refuses (`INVALID_PARAMS`) a push URL the SSRF guard refuses."""
        try:
            await self.options.push_guard.check_target(url)
        except Refused as e:
            error = A2aError(ErrorKind.INVALID_PARAMS, f"Invalid parameters at {path}: the push URL is refused: {e}")
            raise error.with_metadata("path", path).with_metadata("rule", "ssrf-guard") from None

    async def get_task(self, cx: CallContext, r: GetTaskRequest) -> Any:
        history = None if r.history_length is msgspec.UNSET else r.history_length
        if history is not None and history < 0:
            raise invalid("$.params.historyLength", "a non-negative integer")
        record = await self._record(TaskKey(cx.tenant, r.id))
        return viewed(record.task, history)

    async def _record(self, key: TaskKey) -> Any:
        try:
            record = await self.store.get_task(key)
        except StoreError as e:
            raise store_error(e, key.id) from None
        if record is None:
            raise A2aError(ErrorKind.TASK_NOT_FOUND, f"task {key.id} not found").with_metadata("taskId", key.id)
        return record

    async def list_tasks(self, cx: CallContext, r: ListTasksRequest) -> ListTasksResponse:
        page_size = 50 if r.page_size is msgspec.UNSET else r.page_size
        if not 1 <= page_size <= 100:
            raise invalid("$.params.pageSize", "an integer from 1 to 100")
        history = None if r.history_length is msgspec.UNSET else r.history_length
        if history is not None and history < 0:
            raise invalid("$.params.historyLength", "a non-negative integer")
        after = None
        if r.page_token:
            after = parse_page_token(r.page_token)
            if after is None:
                raise invalid("$.params.pageToken", "a token from a previous ListTasks answer")
        after_ms = None
        if r.status_timestamp_after is not msgspec.UNSET:
            after_ms = timestamp_ms(r.status_timestamp_after)
        query = ListQuery(
            context_id=r.context_id or None,
            state=None if r.status is msgspec.UNSET else r.status,
            status_after_ms=after_ms,
            page_size=page_size,
            after=after,
        )
        try:
            page = await self.store.list_tasks(cx.tenant, query)
        except StoreError as e:
            raise store_error(e, "") from None
        include = r.include_artifacts is True
        return ListTasksResponse(
            tasks=[viewed(rec.task, history, include) for rec in page.tasks],
            next_page_token="" if page.next is None else page_token(page.next),
            page_size=page_size,
            total_size=min(page.total_size, 2**31 - 1),
        )

    async def subscribe(self, cx: CallContext, r: SubscribeToTaskRequest) -> EventStream:
        key = TaskKey(cx.tenant, r.id)
        record = await self._record(key)
        if cx.last_event_id is not None:
            # A resume continues the log after the last event the client saw, even when
            # the task has ended since; the Task it starts with carries no id, so that it
            # does not move the client's Last-Event-ID past what it missed.
            return self._stream(key, StreamEvent(None, StreamResponse(task=record.task)), cx.last_event_id)
        if is_terminal(record.task.status.state):
            error = A2aError(
                ErrorKind.UNSUPPORTED_OPERATION,
                f"task {r.id} is in a terminal state ({record.task.status.state.value}); "
                "there is nothing to subscribe to",
            )
            raise error.with_metadata("taskId", r.id)
        return self._stream(key, StreamEvent(record.last_seq, StreamResponse(task=record.task)), record.last_seq)

    async def _stream(self, key: TaskKey, first: StreamEvent, after: int) -> EventStream:
        yield first
        try:
            async for record in follow(self.store, self.hub, key, after):
                yield record if isinstance(record, Gap) else StreamEvent(record.seq, record.event)
        except StoreError as e:
            raise store_error(e, key.id) from None

    async def extended_card(self, cx: CallContext) -> AgentCard:
        if self.card.capabilities.extended_agent_card is not True:
            raise A2aError(ErrorKind.UNSUPPORTED_OPERATION, "this agent declares no extended agent card")
        if cx.principal is None:
            raise A2aError(ErrorKind.UNAUTHENTICATED, "the extended agent card requires authentication")
        if self.options.extended_card is None:
            raise A2aError(ErrorKind.EXTENDED_AGENT_CARD_NOT_CONFIGURED)
        card: AgentCard = self.options.extended_card
        return card
