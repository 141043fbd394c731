"""The protocol state of one ACP connection, shared by both roles: the `initialize`
phase, both sides' typed `initialize` messages (what the capability rules read), the
known sessions with their prompt turns and what their opening answers announced (the
session gates' members, e.g. `modes`), and the generic typed call and notification every
generated method goes through. The Python twin of `crates/acp/src/endpoint.rs`;
its module docs explain the rules, in short:

**Rules as code, on typed values.** Every protocol rule is evaluated by the generated
`CHECKS` of the surface's roles module (`agentproto.acp.refusal`) on the values the
receive path decoded: a received request is decoded once (on the agent, as it is read:
`prepare`), the answer to a call once (as it is read, when it changes the sessions), and
nothing is parsed again to find a session, a capability or an announcement.

**Pipelined messages.** A peer may write a request before the answer to an earlier
one, and request handlers run concurrently, so the agent orders by what was *read*:
`initialize` and the requests that create, open or remove a session are recorded as
unsettled on the reader as they are read (`note_read`, from `Handler.request_read`;
`agentproto.acp.read_order`) and settle when their handler has finished. A request or notification read after an
unsettled `initialize` waits for it, then is served if an `initialize` read before it
succeeded (else refused -32600, or dropped); one read before any `initialize` is refused
at once. A request naming a session waits for the unsettled requests read before it
that could change whether that session exists. Notifications never wait for sessions
(the worker is serial: blocking it on a handler that calls the client could deadlock).
On the client side, a typed call made while this side's `initialize` call is in flight
waits for its answer instead of failing `NotInitialized`.

**Read-time effects.** What the answer to one of this side's calls changes (the client
becoming initialized, a session created or closed) is applied by a result hook on the
reader as the answer is read, so a request read right after it is checked against the
new state whenever the caller's continuation runs.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Literal, TypeVar

import msgspec
from msgspec import Raw

from agentproto.acp import refusal
from agentproto.acp.context import Context
from agentproto.acp.errors import (
    AcpError,
    Cancelled,
    ConnectionFailed,
    InvalidParams,
    InvalidResult,
    NotInitialized,
    PeerError,
    UnsupportedVersion,
)
from agentproto.acp.options import (
    AcpEvent,
    AcpOptions,
    HandlerFailure,
    InvalidHandlerResult,
    InvalidNotification,
    NotificationBeforeInitialize,
    Salvaged,
    UnknownNotification,
)
from agentproto.acp.read_order import ReadOrder, ReadPoint
from agentproto.acp.receive import ExtMessage, invalid_params
from agentproto.acp.rules import MethodInfo, reads_as_empty
from agentproto.acp.state import Answer, Checks, Negotiated, Prepared, Role, SessionState, before_ready, unknown_session
from agentproto.acp.surface import Surface
from agentproto.codec.errors import DecodeError, DecodeWarning
from agentproto.codec.kind import DecodeErrorKind
from agentproto.codec.runtime import describe, key_path, rust_debug_str
from agentproto.codec.values import encode
from agentproto.jsonrpc.cancellation import CancellationToken
from agentproto.jsonrpc.error import ErrorCode, ErrorObject, RequestError
from agentproto.jsonrpc.handler import RequestContext
from agentproto.jsonrpc.local_error import CallAborted, CallError, RpcError
from agentproto.jsonrpc.message import Notification, Request, RequestId
from agentproto.jsonrpc.peer import Peer

# `Negotiated`, `Prepared` and `before_ready` are defined in `state`, `ReadPoint` in `read_order`.
__all__ = ["Endpoint", "Negotiated", "Prepared", "ReadPoint", "before_ready"]

T = TypeVar("T")

_NULL = b"null"
_MAX_VERSION = 0xFFFF  # `ProtocolVersion` is a `uint16`
_EMPTY = b"{}"
_decode_json = msgspec.json.Decoder().decode
_encode_json = msgspec.json.Encoder().encode
_log = logging.getLogger("agentproto.acp")


class Endpoint:
    """Everything the handlers and connection handles of one side share."""

    def __init__(self, surface: Surface, role: Role, peer: Peer, options: AcpOptions) -> None:
        self.surface = surface
        self.rules = surface.rules
        self.role: Role = role
        self.peer = peer
        self.options = options
        self.strict = options.strict
        self._check_duplicate_keys = options.check_duplicate_keys
        peer_side = "client" if role == "agent" else "agent"
        self._incoming = surface.requests(role)
        self._incoming_notes = surface.notifications(role)
        self._outgoing = surface.requests(peer_side)
        self._outgoing_notes = surface.notifications(peer_side)
        self._observer = options.observer
        self._on_error = options.on_error
        self.session_watcher: Callable[[str, str, Any], None] | None = None
        """Client side: sees every session-scoped notification from the agent (method,
        session id, typed params) before the handler does (`agentproto.acp.session`)."""
        self._result_types: dict[str, type[Any]] = {}
        self.checks = surface.checks
        """The surface's rules as generated code, by wire name."""
        self.phase: Literal["uninitialized", "initializing", "ready"] = "uninitialized"
        self.negotiated: Negotiated | None = None
        self.sessions: dict[str, SessionState] = {}
        self._turns = 0
        self.read_order = ReadOrder()
        """Agent side: the requests read whose outcome later messages wait for; both sides:
        the waiters that re-check when something they wait for is done."""
        self._ready_since: ReadPoint | None = None
        self._initialize_calls = 0  # client side: this side's `initialize` calls not answered yet

    # -- events ---------------------------------------------------------------------

    def report(self, event: AcpEvent) -> None:
        if self._observer is not None:
            self._observer(event)

    def handler_failed(self, method: str, request_id: RequestId, error: BaseException, notification: bool) -> None:
        """Tells the developer that a handler failed: `on_error`, or else a log record
        with the traceback on the `agentproto.acp` logger."""
        if self._on_error is not None:
            self._on_error(HandlerFailure(method, request_id, error, notification))
            return
        kind = "notification" if notification else f"request {request_id!r}"
        answered = "dropped" if notification else "answered -32603"
        _log.error(
            "the %s handler of %s failed (%s): %s",
            method,
            kind,
            answered,
            error,
            exc_info=(type(error), error, error.__traceback__),
        )

    def report_warnings(self, method: str, warnings: list[DecodeWarning]) -> None:
        if warnings and self._observer is not None:
            self._observer(Salvaged(method, warnings))

    @property
    def is_ready(self) -> bool:
        return self.phase == "ready"

    def begin_initialize(self) -> bool:
        """Agent side: marks `initialize` as started; `False` if it already ran or runs."""
        if self.phase != "uninitialized":
            return False
        self.phase = "initializing"
        return True

    def finish_initialize(self, negotiated: Negotiated | None, since: ReadPoint | None) -> None:
        """Ends the `initialize` phase: ready with `negotiated`, or back to uninitialized."""
        if negotiated is None:
            self.phase = "uninitialized"
            return
        self.phase = "ready"
        self.negotiated = negotiated
        self._ready_since = since

    def note_read(self, method: str, prepared: Prepared, at: ReadPoint) -> None:
        """Agent side, on the reader as a request is read (and decoded, `prepare`): records
        it as unsettled when later messages are checked against its outcome."""
        if method == self.rules.initialize:
            self.read_order.add(at, True, None)
            return
        checks = prepared.checks
        if checks is None:
            return
        # Invalid params name no session: they are refused, and until then the request is
        # treated like one that may create any session.
        session = None
        if prepared.error is None and checks.session is not None:
            session = checks.session(prepared.params)
        if method == self.rules.prompt_turn:
            if session is not None:
                self.read_order.add(at, False, session, prompt=True)
        elif checks.effect is not None:
            self.read_order.add(at, False, None if checks.effect == "created" else session)

    def ready_for(self, later: tuple[str, int]) -> bool:
        """Agent side: whether an `initialize` read before `later` made the connection ready."""
        return self.phase == "ready" and self._ready_since is not None and self._ready_since.before(later)

    async def _await_initialize_answer(
        self, method: str, turn: CancellationToken | None, cancel: CancellationToken | None
    ) -> None:
        """Client side: while this side's `initialize` call is in flight and unanswered,
        waits until that changes; ends early (`Cancelled`) when `cancel` or `turn` fires."""
        if self.role != "client":
            return
        tokens = [t for t in (turn, cancel) if t is not None]
        while self._initialize_calls > 0 and self.phase != "ready":
            if any(t.is_cancelled for t in tokens):
                raise Cancelled(method)
            future = self.read_order.next_change()

            def wake(future: asyncio.Future[None] = future) -> None:
                if not future.done():
                    future.set_result(None)

            removers = [t.add_callback(wake) for t in tokens]
            try:
                await future
            finally:
                for remove in removers:
                    remove()

    # -- sessions ---------------------------------------------------------------------

    def open_session(self, session: str, announced: frozenset[str]) -> None:
        """A session created or opened by an answer that announced `announced`; a session
        opened again takes what the new answer announced."""
        self.sessions.setdefault(session, SessionState()).announced = announced

    def _announces(self, session: str, member: str) -> bool | None:
        """Whether the answer that opened `session` announced `member`; `None` when no
        such answer was seen (an unknown session, which other checks judge)."""
        state = self.sessions.get(session)
        if state is None or state.announced is None:
            return None
        return member in state.announced

    def remove_session(self, session: str) -> None:
        state = self.sessions.pop(session, None)
        if state is not None:
            if state.turn is not None:
                state.turn[1].cancel()
            state.cancel.cancel()

    def begin_turn(
        self, session: str, parent: CancellationToken, read_after: int
    ) -> tuple[int, CancellationToken] | None:
        """Agent side: starts a prompt turn whose token is a child of `parent`; `None` when
        one is already in flight. `read_after` is the number of notifications read before
        the prompt: a `session/cancel` read after it but handled before the turn started
        has already cancelled the returned token."""
        self._turns += 1
        number = self._turns
        state = self.sessions.setdefault(session, SessionState())
        if state.turn is not None:
            return None
        token = parent.child()
        if state.cancelled_at > read_after:
            token.cancel()
        state.turn = (number, token)
        return number, token

    def end_turn(self, session: str, number: int) -> None:
        state = self.sessions.get(session)
        if state is not None and state.turn is not None and state.turn[0] == number:
            state.turn[1].detach()
            state.turn = None

    def cancel_turn(self, session: str, index: int) -> bool:
        """Agent side: `session/cancel` number `index` (read order) arrived; `False` if
        the session is unknown."""
        state = self.sessions.get(session)
        if state is None:
            return False
        state.cancelled_at = max(state.cancelled_at, index)
        if state.turn is not None:
            state.turn[1].cancel()
        return True

    def session_cancel_token(self, session: str) -> CancellationToken:
        """Client side: the token that fires when this side cancels `session`."""
        return self.sessions.setdefault(session, SessionState()).cancel

    def fire_session_cancel(self, session: str) -> None:
        """Client side: fires and replaces the session's cancel token."""
        state = self.sessions.get(session)
        if state is not None:
            old, state.cancel = state.cancel, CancellationToken()
            old.cancel()

    def apply_session_effect(self, checks: Checks | None, params: Any, result: Any) -> None:
        """Applies the session effect of a successful request (either side's) from its
        typed params and its typed answer (`None` for a `null` one)."""
        effect = checks.effect if checks is not None else None
        if checks is None or effect is None:
            return
        if effect == "created":
            session = checks.created(result) if checks.created is not None and result is not None else None
        else:
            session = checks.session(params) if checks.session is not None else None
        if session is None:
            return
        if effect == "removed":
            self.remove_session(session)
            return
        announces = checks.announced
        self.open_session(session, announces(result) if announces is not None and result is not None else frozenset())

    # -- incoming ---------------------------------------------------------------------

    async def run_handler(self, method: str, rpc: RequestContext | None, work: Awaitable[T]) -> T:
        """Awaits a handler; an exception it raises is reported (`handler_failed`) and
        raised again. A failed call to the peer that the handler let through (`AcpError`)
        and a `RequestError` are answers the handler chose, not failures."""
        try:
            return await work
        except (AcpError, RequestError):
            raise
        except Exception as e:
            self.handler_failed(method, None if rpc is None else rpc.id, e, rpc is None)
            raise

    def context(self, peer: Any, rpc: RequestContext | None, token: CancellationToken) -> Context[Any]:
        return Context(peer, rpc, token, self.strict)

    def prepare(self, request: Request) -> Prepared:
        """An incoming request decoded by its method (the one decode it gets): its typed
        params, row and checks, or the -32601 / -32602 error it is to be answered with.
        Reports nothing (see `decode_request`)."""
        method = request.method
        info = self._incoming.get(method)
        if info is None:
            if method.startswith("_"):
                return Prepared(ExtMessage(method, request.params), None, None)
            not_found = ErrorObject(
                code=ErrorCode.METHOD_NOT_FOUND, message=f"method not found: {rust_debug_str(method)}"
            )
            return Prepared(None, None, None, error=RequestError.from_object(not_found))
        try:
            decoded = self.surface._decode(info.params, request.params, "$.params", self._check_duplicate_keys, True)
        except DecodeError as e:
            return Prepared(None, info, None, error=RequestError.from_object(invalid_params(e)))
        return Prepared(decoded.value, info, self.checks.get(method), decoded.warnings)

    def decode_request(self, request: Request, prepared: Prepared | None = None) -> Prepared:
        """The decoded request (`prepared` as it was read, else decoded now), its warnings
        reported.

        Raises:
            RequestError: -32601 for a method this side does not handle, -32602 for
                invalid params.
        """
        if prepared is None:
            prepared = self.prepare(request)
        if prepared.error is not None:
            raise prepared.error from None
        if prepared.warnings:
            self.report_warnings(request.method, prepared.warnings)
        return prepared

    def decode_notification(self, notification: Notification, ready: bool) -> tuple[Any, MethodInfo | None] | None:
        """The typed params of an incoming notification and its row, or `None` when it
        is dropped (unknown, invalid, or read before a successful `initialize`)."""
        method = notification.method
        info = self._incoming_notes.get(method)
        if info is None:
            if not method.startswith("_"):
                self.report(UnknownNotification(method))
                return None
            value: Any = ExtMessage(method, notification.params)
        else:
            try:
                decoded = self.surface._decode(
                    info.params, notification.params, "$.params", self._check_duplicate_keys, True
                )
            except DecodeError as e:
                self.report(InvalidNotification(method, e))
                return None
            value = decoded.value
            if decoded.warnings and ready:
                self.report_warnings(method, decoded.warnings)
        if not ready:
            self.report(NotificationBeforeInitialize(method))
            return None
        return value, info

    def session_of(self, checks: Checks | None, params: Any) -> str | None:
        """The session a message names, for the methods the session rules apply to."""
        if checks is None or checks.session is None:
            return None
        return checks.session(params)

    def check_incoming(self, method: str, checks: Checks | None, params: Any, session: str | None) -> None:
        """Checks an incoming request's typed params against the state and the generated rules.

        Raises:
            RequestError: -32600 before `initialize`, the gate's refusal, -32602 at a
                value the side did not advertise, -32002 for an unknown session, -32602 at
                the session of a request its opening answer did not announce.
        """
        negotiated = self.negotiated
        if self.phase != "ready" or negotiated is None:
            raise RequestError.from_object(before_ready(method))
        if checks is None:
            return
        if checks.refusal is not None:
            refused = checks.refusal(params, negotiated.own)
            if refused is not None:
                raise RequestError.from_object(refusal.refusal_error(method, refused))
        if session is not None and session not in self.sessions and not checks.unseen_ok:
            raise RequestError.from_object(unknown_session(session))
        # `session/set_mode` for a session whose opening answer had no `modes`.
        needs = checks.needs
        if needs is not None and session is not None and self._announces(session, needs) is False:
            raise RequestError.from_object(refusal.refusal_error(method, refusal.NotAnnounced(needs, session)))

    def encode_result(self, method: str, info: MethodInfo | None, value: Any, request_id: RequestId) -> bytes:
        """A handler's result as JSON. It must be the method's typed result (`None` too
        where the method's answer may be `null`); with `strict` (the default) it is also
        checked against the result type. A result that cannot be sent is reported
        (`handler_failed`) and answered -32603, and has no effect on the sessions."""
        if info is None:  # an extension handler returns raw JSON
            return _NULL if value is None else bytes(value)
        try:
            return self._result_bytes(method, info, value)
        except InvalidHandlerResult as e:
            self.handler_failed(method, request_id, e, False)
            raise RequestError.internal_error(f"internal error: {e}") from None

    def _result_bytes(self, method: str, info: MethodInfo, value: Any) -> bytes:
        expected = self._result_type(info)
        if expected is not None and not isinstance(value, expected) and not (value is None and info.null_result):
            found = "None" if value is None else f"a `{type(value).__name__}`"
            raise InvalidHandlerResult(
                method,
                f"the `{method}` handler returned {found}; expected a `{expected.__name__}`"
                " (the typed result: a dict is not decoded for you)",
            )
        try:
            raw = encode(value)
        except _ENCODE_ERRORS:
            failure = _not_encodable(value, "$.result")
            raise InvalidHandlerResult(method, f"cannot encode the `{method}` result: {failure}") from None
        if self.strict and info.result is not None:
            problem = self._problem(info.result, _EMPTY if reads_as_empty(info, raw) else raw, "$.result")
            if problem is not None:
                raise InvalidHandlerResult(method, f"the `{method}` handler returned an invalid result: {problem}")
        return raw

    def _result_type(self, info: MethodInfo) -> type[Any] | None:
        """The class of the method's result (`None` where the table names none)."""
        if info.result is None:
            return None
        cached = self._result_types.get(info.result)
        if cached is None:
            cached = self.surface.type(info.result)
            if not isinstance(cached, type):  # pragma: no cover - every result type is a class
                return None
            self._result_types[info.result] = cached
        return cached

    def _problem(self, type_name: str, raw: bytes, root: str) -> DecodeError | None:
        """What is wrong with outgoing bytes for `type_name` (strict mode): a decode
        error, or a value the receiver would have to salvage."""
        try:
            decoded = self.surface._decode(type_name, raw, root, False, True)
        except DecodeError as e:
            return e
        if decoded.warnings:
            # The failure the receiver would have salvaged (or, for a variant it does not
            # list, an `unknown-variant` failure naming the tag).
            return decoded.warnings[0].error
        return None

    # -- outgoing ---------------------------------------------------------------------

    async def request(
        self,
        method: str,
        params: Any,
        result_type: type[T] | None,
        *,
        turn: CancellationToken | None = None,
        cancel: CancellationToken | None = None,
    ) -> Any:
        """The typed call behind every generated request method: state and generated rule
        checks on the typed params before anything is sent, strict re-decode of the params,
        the result decoded once against the method's result type (`null` read as `{}`
        where the row says so), session bookkeeping at read time."""
        info = self._outgoing.get(method)
        if info is None or info.result is None:
            raise ValueError(f"{method!r} is not a request the peer handles")
        checks = self.checks.get(method)
        raw = self._encode_params(method, params)
        initializing = self.role == "client" and method == self.rules.initialize
        if checks is not None or initializing:
            params = self._typed(method, info.params, params, raw)
        if initializing:
            self._initialize_calls += 1
        # Where a hook that ran on the reader leaves the answer it decoded.
        read: list[Answer] = []
        try:
            if not initializing:
                await self._await_initialize_answer(method, turn, cancel)
                self._check_outgoing_state(method, checks, params)
            if self.strict:
                problem = self._problem(info.params, raw, "$.params")
                if problem is not None:
                    raise InvalidParams(method, problem)
            hook: Callable[[Raw], None] | None = None
            if initializing:
                hook = lambda result: self._apply_initialized(info, params, result, read)
            elif checks is not None and checks.effect is not None:
                hook = lambda result: self._apply_answer(info, checks, params, result, read)
            try:
                result = await self.peer.call(method, raw, cancel=cancel, abort=turn, on_result=hook)
            except RpcError as e:
                raise PeerError(method, e.error) from None
            except CallAborted:
                raise Cancelled(method) from None
            except CallError as e:
                raise ConnectionFailed(method, e) from None
        finally:
            if initializing:
                self._initialize_calls -= 1
                self.read_order.changed()
        answer = read[0] if read else self._read_answer(info, result, initializing)
        # Another version's answer need not match this version's result type: the version
        # is judged before the shape.
        if answer.version is not None and answer.version != self.surface.protocol_version:
            raise UnsupportedVersion(answer.version, self.surface.protocol_version)
        decoded = answer.decoded
        if isinstance(decoded, DecodeError):
            raise InvalidResult(method, decoded)
        self.report_warnings(method, decoded.warnings)
        value = decoded.value
        if result_type is None:
            return value  # a union result: the decoder's type is the alias's
        if not isinstance(value, result_type):  # pragma: no cover - the table names the type
            error = DecodeError(
                "$.result", DecodeErrorKind.WRONG_TYPE, f"an object ({result_type.__name__})", describe(value)
            )
            raise InvalidResult(method, error)
        return value

    def _read_answer(self, info: MethodInfo, result: Raw, initializing: bool) -> Answer:
        """The answer to a call of `info`, decoded; for `initialize`, with the version it names."""
        text = _EMPTY if reads_as_empty(info, result) else result
        try:
            decoded = self.surface._decode(given(info.result), text, "$.result", self._check_duplicate_keys, True)
        except DecodeError as e:
            # Only an answer that is not this version's result is read for its version.
            return Answer(e, _answered_version(text) if initializing else None)
        return Answer(decoded, decoded.value.protocol_version if initializing else None)

    def _apply_initialized(self, info: MethodInfo, params: Any, result: Raw, read: list[Answer]) -> None:
        """Client side, on the reader: the agent's `initialize` answer was read. `params`
        are the typed params this side sent."""
        answer = self._read_answer(info, result, True)
        read.append(answer)
        version = self.surface.protocol_version
        if answer.version is not None and answer.version != version:
            self.finish_initialize(None, None)
        elif not isinstance(answer.decoded, DecodeError):
            self.finish_initialize(Negotiated(version, self.role, params, answer.decoded.value), None)
        self.read_order.changed()

    def _apply_answer(self, info: MethodInfo, checks: Checks, params: Any, result: Raw, read: list[Answer]) -> None:
        """On the reader: a successful answer to a session call was read; an invalid one
        changes nothing (the caller gets the error)."""
        answer = self._read_answer(info, result, False)
        read.append(answer)
        if not isinstance(answer.decoded, DecodeError):
            self.apply_session_effect(checks, params, answer.decoded.value)

    async def notify(self, method: str, params: Any) -> None:
        """The notification behind every generated notification method."""
        raw = self._encode_params(method, params)
        if self._initialize_calls:
            await self._await_initialize_answer(method, None, None)
        if self.phase != "ready":
            raise NotInitialized(method)
        if self.strict:
            info = self._outgoing_notes.get(method)
            problem = None if info is None else self._problem(info.params, raw, "$.params")
            if problem is not None:
                raise InvalidParams(method, problem)
        try:
            await self.peer.notify(method, raw)
        except CallError as e:
            raise ConnectionFailed(method, e) from None
        if self.role == "client" and method == self.rules.session_cancel:
            # The protocol has the client answer its pending permission requests of the
            # session with `cancelled`; the connection does it for the application.
            info = self._outgoing_notes.get(method)
            try:
                typed = params if info is None else self._typed(method, info.params, params, raw)
            except InvalidParams:
                return  # sent without validation (`strict` off): it names no session
            session = self.session_of(self.checks.get(method), typed)
            if session is not None:
                self.fire_session_cancel(session)

    async def ext_request(self, method: str, params: Raw | bytes | None, cancel: CancellationToken | None) -> Raw:
        """Sends an extension request (a `_`-prefixed name) with raw params."""
        _check_ext_name(method)
        await self._await_initialize_answer(method, None, cancel)
        if self.phase != "ready":
            raise NotInitialized(method)
        try:
            return await self.peer.call(method, params, cancel=cancel)
        except RpcError as e:
            raise PeerError(method, e.error) from None
        except CallError as e:
            raise ConnectionFailed(method, e) from None

    async def ext_notify(self, method: str, params: Raw | bytes | None) -> None:
        """Sends an extension notification with raw params."""
        _check_ext_name(method)
        await self._await_initialize_answer(method, None, None)
        if self.phase != "ready":
            raise NotInitialized(method)
        try:
            await self.peer.notify(method, params)
        except CallError as e:
            raise ConnectionFailed(method, e) from None

    def _typed(self, method: str, type_name: str, params: Any, raw: bytes) -> Any:
        """Outgoing params as the generated class the rules read: `params` when they are
        one (what the typed calls take); else (a dict, say) the class decoded once from
        the bytes about to be sent.

        Raises:
            InvalidParams: those bytes are not params of the method, so no rule can judge them.
        """
        cls = self.surface.type(type_name)
        if not isinstance(cls, type) or isinstance(params, cls):
            return params
        try:
            return self.surface._decode(type_name, raw, "$.params", False, True).value
        except DecodeError as e:
            raise InvalidParams(method, e) from None

    def _encode_params(self, method: str, params: Any) -> bytes:
        try:
            return encode(params)
        except _ENCODE_ERRORS:
            raise InvalidParams(method, _not_encodable(params, "$.params")) from None

    def _check_outgoing_state(self, method: str, checks: Checks | None, params: Any) -> None:
        """The state and the generated checks for a call about to be sent, on its typed
        params against the peer's `initialize` message."""
        negotiated = self.negotiated
        if self.phase != "ready" or negotiated is None:
            raise NotInitialized(method)
        if checks is None:
            return
        # Content the peer did not advertise (an image to an agent without
        # `promptCapabilities.image`). A kind the schema does not list is left to
        # validation: strict mode refuses it, and the peer would answer -32602.
        refused = checks.refusal(params, negotiated.peer) if checks.refusal is not None else None
        failure = refusal.refusal_failure(method, refused) if refused is not None else None
        if failure is not None:
            raise failure
        # A session whose opening answer did not announce what the method needs
        # (`session/set_mode` without `modes`). A session this side saw no answer for is
        # left to the peer, which knows its sessions.
        needs = checks.needs
        session = self.session_of(checks, params) if needs is not None else None
        if needs is not None and session is not None and self._announces(session, needs) is False:
            raise given(refusal.refusal_failure(method, refusal.NotAnnounced(needs, session)))


def _answered_version(text: Raw | bytes) -> int | None:
    """The `protocolVersion` of an `initialize` answer that this version's result type
    does not decode, when it is a protocol version (a `uint16`): the answer of another
    version. Any other value is no version at all: the answer is then judged by the result
    type like any other, so that an out-of-range version fails the call as the invalid
    result `classify` says it is, not as another version."""
    try:
        members = _decode_json(text)
    except msgspec.DecodeError:
        return None
    version = members.get("protocolVersion") if isinstance(members, dict) else None
    if isinstance(version, int) and not isinstance(version, bool) and 0 <= version <= _MAX_VERSION:
        return version
    return None


def given(value: T | None) -> T:
    """`value`, which the caller knows is there."""
    if value is None:  # pragma: no cover - the rows and checks are generated together
        raise AssertionError("a generated row or check is missing")
    return value


def _check_ext_name(method: str) -> None:
    if not method.startswith("_"):
        error = DecodeError(
            "$.method", DecodeErrorKind.NOT_ENCODABLE, "a method name starting with `_`", rust_debug_str(method)
        )
        raise InvalidParams(method, error)


_ENCODE_ERRORS = (TypeError, ValueError, OverflowError, NotImplementedError)
"""What the encoder raises for a value it cannot write."""

_INT_RANGE = f"an integer from {-(2**63)} to {2**64 - 1}"


def _not_encodable(value: Any, path: str) -> DecodeError:
    """The failure of a value the encoder refused (kind `not-encodable`), at the
    innermost member or item that it refuses on its own, found by encoding the parts
    (the encoder's message is not read)."""
    for child, at in _parts(value, path):
        try:
            encode(child)
        except _ENCODE_ERRORS:
            return _not_encodable(child, at)
    if type(value) is int:
        return DecodeError(path, DecodeErrorKind.NOT_ENCODABLE, _INT_RANGE, describe(value))
    found = f"a value of the Python type {type(value).__name__}"
    return DecodeError(path, DecodeErrorKind.NOT_ENCODABLE, "a value JSON can hold", found)


def _parts(value: Any, path: str) -> list[tuple[Any, str]]:
    """The members or items of a container, with their paths (none for anything else)."""
    if isinstance(value, msgspec.Struct):
        return [
            (getattr(value, f.name), key_path(path, f.encode_name))
            for f in msgspec.structs.fields(value)
            if getattr(value, f.name) is not msgspec.UNSET
        ]
    if isinstance(value, dict):
        return [(v, key_path(path, k if isinstance(k, str) else str(k))) for k, v in value.items()]
    if isinstance(value, list | tuple):
        return [(v, f"{path}[{i}]") for i, v in enumerate(value)]
    return []
