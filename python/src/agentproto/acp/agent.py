"""The agent role: serve an `Agent` implementation to a client, and the connection
handle (`ClientConnectionBase`, typed per surface as `v1.ClientConnection`) its
handlers use to call the client back.

The runtime enforces the protocol around the application's handlers: `initialize`
first and once (anything else before it is answered -32600), the negotiated protocol
version (the answer always names the version this surface speaks), the agent's own
capability gates and value gates, known session ids (-32002 with `data.sessionId`), the
session gates (`session/set_mode` for a session answered without `modes`: -32602 at
`$.params.sessionId`), one prompt turn per session, and `session/cancel`, which ends the turn with
`stopReason: "cancelled"`, never an error. Requests written before the answer to an
earlier one are checked in read order (`endpoint` module docs, "Pipelined messages").
Notifications read after `initialize` wait for it on the serial worker, so an
`initialize` handler must not wait for anything that needs a later notification handled.
"""

from __future__ import annotations

import asyncio
from typing import Any, Generic, Self, TypeVar

import msgspec
from msgspec import Raw

from agentproto.acp.endpoint import Endpoint, Negotiated, Prepared, ReadPoint, before_ready
from agentproto.acp.errors import AcpError
from agentproto.acp.options import AcpOptions, UnknownSession
from agentproto.acp.peer_handle import PeerHandle
from agentproto.acp.rules import MethodInfo
from agentproto.acp.surface import Surface
from agentproto.codec.values import encode
from agentproto.jsonrpc.cancellation import CancellationToken, finished_before
from agentproto.jsonrpc.connection import Connection
from agentproto.jsonrpc.error import ErrorCode, ErrorObject, RequestError
from agentproto.jsonrpc.handler import Handler, NotificationContext, RequestContext
from agentproto.jsonrpc.message import Notification, Request
from agentproto.jsonrpc.stdio import stdio_streams
from agentproto.jsonrpc.transport import ByteReader, ByteWriter

__all__ = ["ClientConnectionBase", "connect", "serve_stdio"]

T = TypeVar("T")
A = TypeVar("A")
C = TypeVar("C", bound="ClientConnectionBase")

# The result of a v1 prompt turn that `session/cancel` ended.
_CANCELLED_PROMPT = b'{"stopReason":"cancelled"}'


class ClientConnectionBase(PeerHandle):
    """The agent's handle to its client. The typed calls (`request_permission`,
    `read_text_file`, ...) and notifications (`session_update`, ...) are generated per
    surface on its subclass (`v1.ClientConnection`).

    Every call checks the state first and sends nothing when that fails: before
    `initialize` has completed (`NotInitialized`, at once: an `initialize` handler must
    not wait for its own end), or for a method the client did not advertise
    (`CapabilityNotAdvertised`). Results are validated against the method's result type.
    Inside a prompt turn, calls end with `Cancelled` when the turn is cancelled.
    """

    __slots__ = ("_turn",)

    def __init__(self, endpoint: Endpoint, turn: CancellationToken | None = None) -> None:
        super().__init__(endpoint)
        self._turn = turn

    def __repr__(self) -> str:
        return f"{type(self).__name__}(peer={self._endpoint.peer!r}, in_turn={self._turn is not None})"

    def _in_turn(self, turn: CancellationToken | None) -> Self:
        return type(self)(self._endpoint, turn)

    async def _request(self, method: str, params: object, result_type: type[T]) -> T:
        value: T = await self._endpoint.request(method, params, result_type, turn=self._turn)
        return value

    async def _request_value(self, method: str, params: object) -> Any:
        """A call whose result type is a union (no class to check the value against)."""
        return await self._endpoint.request(method, params, None, turn=self._turn)


class AgentRuntime(Handler, Generic[A, C]):
    """The JSON-RPC handler of the agent side."""

    def __init__(self, agent: A, connection_type: type[C]) -> None:
        self._agent: Any = agent
        self._connection_type = connection_type
        self.endpoint: Endpoint

    def bind(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self._plain = self._connection_type(endpoint)
        # One context serves every notification: nothing in it is per message.
        self._note_context = endpoint.context(self._plain, None, CancellationToken())

    def request_read(self, request: Request, cx: RequestContext) -> None:
        # The request is decoded here, once: the read-order bookkeeping needs the session
        # it names, and the handler task takes the decoded value from `cx.prepared`.
        prepared = self.endpoint.prepare(request)
        cx.prepared = prepared
        self.endpoint.note_read(request.method, prepared, ReadPoint.of(cx))

    async def request(self, request: Request, cx: RequestContext) -> Raw | bytes:
        ep = self.endpoint
        index = cx.index
        try:
            # Read after an `initialize` that is still running: its outcome decides.
            await ep.read_order.settle_initialize(("request", index))
            method = request.method
            initialize = method == ep.rules.initialize
            if not initialize and not ep.ready_for(("request", index)):
                raise RequestError.from_object(before_ready(method))
            prepared = cx.prepared if isinstance(cx.prepared, Prepared) else None
            decoded = ep.decode_request(request, prepared)
            params, info, checks = decoded.params, decoded.info, decoded.checks
            if initialize and info is not None:
                return await self._initialize(cx, info, params)
            session = ep.session_of(checks, params)
            if session is not None:
                await ep.read_order.settle_session(("request", index), session, ep.sessions)
            ep.check_incoming(method, checks, params, session)
            if session is not None and info is not None and method == ep.rules.prompt_turn:
                return await self._prompt(cx, info, params, session)
            value = await self._call(info, method, ep.context(self._plain, cx, cx.token), params)
            raw = ep.encode_result(method, info, value, cx.id)
            ep.apply_session_effect(checks, params, value)
            return raw
        finally:
            # However the handler ended, messages waiting for this one re-check.
            ep.read_order.settle(index)

    async def notification(self, notification: Notification, cx: NotificationContext) -> None:
        ep = self.endpoint
        read = ("notification", cx.index)
        await ep.read_order.settle_initialize(read)
        decoded = ep.decode_notification(notification, ep.ready_for(read))
        if decoded is None:
            return
        params, info = decoded
        method = notification.method
        if method == ep.rules.session_cancel:
            session = ep.session_of(ep.checks.get(method), params)
            if session is not None and ep.read_order.session_unsettled(read, session, ep.sessions):
                # A `session/new`, load or resume read before it is still opening the
                # session, and its outcome decides. The wait runs on a task of its own:
                # the notification worker is serial, and the opening handler may be
                # waiting for an answer that waits for the worker. The connection waits for
                # that task at shutdown.
                cx.spawn(self._cancel_later(read, session, cx.index, info, params))
                return
            if session is not None:
                await self._cancel(session, cx.index, info, params)
                return
        await self._notify(info, params)

    async def _cancel_later(self, read: tuple[str, int], session: str, index: int, info: Any, params: Any) -> None:
        await self.endpoint.read_order.settle_session(read, session, self.endpoint.sessions)
        await self._cancel(session, index, info, params)

    async def _cancel(self, session: str, index: int, info: Any, params: Any) -> None:
        """`session/cancel` number `index` (in read order): ends the session's turn and
        hands the notification to the agent, or reports an unknown session."""
        ep = self.endpoint
        if not ep.cancel_turn(session, index):
            ep.report(UnknownSession(ep.rules.session_cancel, session))
            return
        await self._notify(info, params)

    async def _notify(self, info: Any, params: Any) -> None:
        # `$/cancel_request` reaches here only when the connection's cancel notification
        # is turned off; no handler exists for it then.
        handler = self._agent.ext_notification if info is None else getattr(self._agent, info.handler, None)
        if handler is not None:
            method = params.method if info is None else info.name
            await self.endpoint.run_handler(method, None, handler(self._note_context, params))

    async def _call(self, info: MethodInfo | None, method: str, cx: Any, params: Any) -> Any:
        handler = self._agent.ext_method if info is None else getattr(self._agent, info.handler)
        try:
            return await self.endpoint.run_handler(method, cx._rpc, handler(cx, params))
        except AcpError as e:  # a failed call to the client, let through by the handler
            raise RequestError.from_object(e.to_error_object()) from e

    async def _initialize(self, cx: RequestContext, info: MethodInfo, params: Any) -> bytes:
        ep = self.endpoint
        since = ReadPoint.of(cx)
        if not ep.begin_initialize():
            message = "invalid request: `initialize` was already received on this connection"
            raise RequestError(ErrorCode.INVALID_REQUEST, message)
        version = ep.surface.protocol_version
        try:
            value = await self._call(info, info.name, ep.context(self._plain, cx, cx.token), params)
            result = ep.encode_result(info.name, info, value, cx.id)
            if value.protocol_version != version:
                # The answer always names the version this connection speaks.
                value = msgspec.structs.replace(value, protocol_version=version)
                result = encode(value)
        except BaseException:
            # Failed, raised or cancelled: it does not count, `initialize` may come again.
            ep.finish_initialize(None, None)
            raise
        # Both typed `initialize` messages are kept: the capability rules read them.
        ep.finish_initialize(Negotiated(version, "agent", params, value), since)
        return result

    async def _prompt(self, cx: RequestContext, info: MethodInfo, params: Any, session: str) -> bytes:
        """A v1 prompt turn: one per session at a time (a prompt read while an earlier one
        on its session runs waits for it, whatever the timing: the same bytes get the same
        answers); `session/cancel` ends it with `stopReason: "cancelled"`, never with an
        error."""
        ep = self.endpoint
        request_token = cx.token
        await ep.read_order.settle_prompts(("request", cx.index), session)
        begun = ep.begin_turn(session, request_token, cx.notifications_before)
        if begun is None:
            message = f"invalid request: a prompt turn is already running in session `{session}`"
            raise RequestError(
                ErrorCode.INVALID_REQUEST, message, b'{"sessionId":' + msgspec.json.encode(session) + b"}"
            )
        number, turn = begun
        try:
            if turn.is_cancelled and not request_token.is_cancelled:
                # Cancelled by a `session/cancel` read right after the prompt, before the
                # turn started: the handler is not run.
                return _CANCELLED_PROMPT
            context = ep.context(self._plain._in_turn(turn), cx, turn)
            handler = asyncio.ensure_future(self._call(info, info.name, context, params))
            try:
                if not await finished_before(handler, turn) and not context.handles_cancellation:
                    handler.cancel()  # the handler is dropped; the turn is answered for it
                await asyncio.wait((handler,))
            except BaseException:
                handler.cancel()
                raise
            if not turn.is_cancelled or request_token.is_cancelled:
                # Not cancelled by `session/cancel`: `$/cancel_request` and shutdown are
                # answered by the JSON-RPC layer.
                if handler.cancelled():
                    raise RequestError.from_object(ErrorObject.request_cancelled())
                return ep.encode_result(info.name, info, handler.result(), cx.id)
            if not handler.cancelled() and handler.exception() is None:
                value = handler.result()
                if getattr(value, "stop_reason", None) == "cancelled":
                    return ep.encode_result(info.name, info, value, cx.id)
            return _CANCELLED_PROMPT
        finally:
            ep.end_turn(session, number)


def connect(
    surface: Surface,
    agent: A,
    input: ByteReader,
    output: ByteWriter,
    options: AcpOptions | None,
    connection_type: type[C],
) -> tuple[Connection, C]:
    """The agent side of a connection over any byte streams (use the per-surface
    `connect_agent`). Run the returned connection; the handle reaches the client from
    outside the handlers."""
    options = options if options is not None else AcpOptions()
    runtime = AgentRuntime(agent, connection_type)
    connection = Connection(input, output, runtime, options.connection_options(surface))
    endpoint = Endpoint(surface, "agent", connection.peer, options)
    runtime.bind(endpoint)
    return connection, connection_type(endpoint)


async def serve_stdio(surface: Surface, agent: A, options: AcpOptions | None, connection_type: type[C]) -> None:
    """Serves `agent` on this process's stdin and stdout until stdin closes."""
    stdin, stdout = await stdio_streams()
    connection, _ = connect(surface, agent, stdin, stdout, options, connection_type)
    await connection.run()
