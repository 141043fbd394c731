"""The client role: connect a `Client` implementation to an agent, and the connection
handle (`AgentConnectionBase`, typed per surface as `v1.AgentConnection`) that calls the
agent (`initialize`, `new_session`, `prompt`, `cancel`, ...). `agentproto.acp.process`
spawns the agent as a child process.

The runtime enforces on the client side: calls before `initialize` has completed and
calls the agent did not advertise fail locally and send nothing; the agent's answered
protocol version must be the one this side speaks; requests from the agent must be for
capabilities this side advertised and for known sessions (updates for unknown sessions
are still delivered: agents send them before the `session/new` answer); and sending
`session/cancel` answers every pending permission request of that session with the
`cancelled` outcome.
"""

from __future__ import annotations

import asyncio
from typing import Any, Generic, Self, TypeVar

from msgspec import Raw

from agentproto.acp.endpoint import Endpoint, before_ready
from agentproto.acp.errors import AcpError
from agentproto.acp.options import AcpOptions, UnknownSession
from agentproto.acp.peer_handle import PeerHandle
from agentproto.acp.rules import MethodInfo
from agentproto.acp.surface import Surface
from agentproto.jsonrpc.cancellation import CancellationToken, finished_before
from agentproto.jsonrpc.connection import Connection
from agentproto.jsonrpc.error import ErrorObject, RequestError
from agentproto.jsonrpc.handler import Handler, NotificationContext, RequestContext
from agentproto.jsonrpc.message import Notification, Request
from agentproto.jsonrpc.transport import ByteReader, ByteWriter

__all__ = ["AgentConnectionBase", "connect"]

T = TypeVar("T")
K = TypeVar("K")
C = TypeVar("C", bound="AgentConnectionBase")

# The request whose pending instances `session/cancel` answers, and that answer. The
# rules table has no row for this (it is the client's duty, not a message's property).
_PERMISSION = "session/request_permission"
_CANCELLED_OUTCOME = b'{"outcome":{"outcome":"cancelled"}}'


class AgentConnectionBase(PeerHandle):
    """The client's handle to its agent. The typed calls (`initialize`, `new_session`,
    `prompt`, ...) and notifications (`cancel`, ...) are generated per surface on its
    subclass (`v1.AgentConnection`).

    Calls check the state first and send nothing when that fails (`NotInitialized`,
    `CapabilityNotAdvertised`, `NotAnnounced` for a session whose opening answer lacked
    what the call needs; a call made while `initialize` is in flight waits for its
    answer). Cancelling the task awaiting a call cancels the request with
    `$/cancel_request` and abandons the answer; `with_cancellation` gives calls that
    send `$/cancel_request` when a token fires and still wait for the answer.
    """

    __slots__ = ("_cancel",)

    def __init__(self, endpoint: Endpoint, cancel: CancellationToken | None = None) -> None:
        super().__init__(endpoint)
        self._cancel = cancel

    def __repr__(self) -> str:
        return f"{type(self).__name__}(peer={self._endpoint.peer!r})"

    def with_cancellation(self, token: CancellationToken) -> Self:
        """A handle whose calls are cancelled with `$/cancel_request` when `token` fires
        and then still wait for the agent's answer (a partial result, or -32800 as a
        `PeerError`)."""
        return type(self)(self._endpoint, token)

    async def _request(self, method: str, params: object, result_type: type[T]) -> T:
        value: T = await self._endpoint.request(method, params, result_type, cancel=self._cancel)
        return value

    async def _request_value(self, method: str, params: object) -> Any:
        """A call whose result type is a union (no class to check the value against)."""
        return await self._endpoint.request(method, params, None, cancel=self._cancel)

    def _ext_cancel(self) -> CancellationToken | None:
        return self._cancel


class ClientRuntime(Handler, Generic[K, C]):
    """The JSON-RPC handler of the client side."""

    def __init__(self, client: K, connection_type: type[C]) -> None:
        self._client: Any = client
        self._connection_type = connection_type
        self.endpoint: Endpoint

    def bind(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self._plain = self._connection_type(endpoint)
        # One context serves every notification: nothing in it is per message.
        self._note_context = endpoint.context(self._plain, None, CancellationToken())

    async def request(self, request: Request, cx: RequestContext) -> Raw | bytes:
        ep = self.endpoint
        method = request.method
        if not ep.is_ready:
            raise RequestError.from_object(before_ready(method))
        decoded = ep.decode_request(request)
        params, info, checks = decoded.params, decoded.info, decoded.checks
        session = ep.session_of(checks, params)
        ep.check_incoming(method, checks, params, session)
        if method == _PERMISSION and session is not None and info is not None:
            return await self._permission(cx, info, params, session)
        value = await self._call(info, ep.context(self._plain, cx, cx.token), params)
        raw = ep.encode_result(method, info, value, cx.id)
        ep.apply_session_effect(checks, params, value)
        return raw

    async def _permission(self, cx: RequestContext, info: MethodInfo, params: Any, session: str) -> bytes:
        """A permission request: answered `cancelled` for the application when this side
        cancels the session, -32800 when the agent cancels the request."""
        ep = self.endpoint
        cancel = ep.session_cancel_token(session)
        token = CancellationToken()
        handler = asyncio.ensure_future(self._call(info, ep.context(self._plain, cx, token), params))
        try:
            finished = await finished_before(handler, cancel, cx.token)
        except BaseException:
            token.cancel()
            handler.cancel()
            raise
        if not finished:
            token.cancel()
            handler.cancel()
            if cx.token.is_cancelled and not cancel.is_cancelled:
                raise RequestError.from_object(ErrorObject.request_cancelled())
            return _CANCELLED_OUTCOME
        return ep.encode_result(info.name, info, handler.result(), cx.id)

    async def notification(self, notification: Notification, cx: NotificationContext) -> None:
        ep = self.endpoint
        decoded = ep.decode_notification(notification, ep.is_ready)
        if decoded is None:
            return
        params, info = decoded
        if info is None:
            await ep.run_handler(params.method, None, self._client.ext_notification(self._note_context, params))
            return
        session = ep.session_of(ep.checks.get(info.name), params)
        if session is not None and session not in ep.sessions:
            # Still delivered: agents send updates before the `session/new` answer.
            ep.report(UnknownSession(notification.method, session))
        if session is not None and ep.session_watcher is not None:
            ep.session_watcher(info.name, session, params)
        # `$/cancel_request` reaches here only when the connection's cancel notification
        # is turned off; no handler exists for it then.
        handler = getattr(self._client, info.handler, None)
        if handler is not None:
            await ep.run_handler(info.name, None, handler(self._note_context, params))

    async def _call(self, info: MethodInfo | None, cx: Any, params: Any) -> Any:
        handler = self._client.ext_method if info is None else getattr(self._client, info.handler)
        method = params.method if info is None else info.name
        try:
            return await self.endpoint.run_handler(method, cx._rpc, handler(cx, params))
        except AcpError as e:  # a failed call to the agent, let through by the handler
            raise RequestError.from_object(e.to_error_object()) from e


def connect(
    surface: Surface,
    client: K,
    input: ByteReader,
    output: ByteWriter,
    options: AcpOptions | None,
    connection_type: type[C],
) -> tuple[Connection, C]:
    """The client side of a connection over any byte streams (use the per-surface
    `connect_client`). Run the returned connection; call the agent through the handle."""
    options = options if options is not None else AcpOptions()
    runtime = ClientRuntime(client, connection_type)
    connection = Connection(input, output, runtime, options.connection_options(surface))
    endpoint = Endpoint(surface, "client", connection.peer, options)
    runtime.bind(endpoint)
    return connection, connection_type(endpoint)
