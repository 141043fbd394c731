"""Every single-message vector case through a live ACP connection.

`test_vectors.py` holds `classify` to each case's `expect`. Here the same bytes go to a
real role instead: `v1.connect_agent` for `client_to_agent` cases, `v1.connect_client`
for `agent_to_client` ones, each serving a recording application (`Recording`) on one
end of an in-memory pipe, while the test writes raw lines on the other end. What the
connection does is put in the shape `test_vectors.observe` gives and compared with
`expect` by the same `compare`, and a decoded payload with the case's golden file:

* `request`, `notification`: the one handler call (method, params re-encoded with the
  SDK's encoder) and the warnings the connection reported (`Salvaged` events); a request
  must also be answered;
* `reply_error`: the one line the connection writes, which must also equal, byte for
  byte, the reply `classify` builds;
* `ignored`: no handler call, nothing written, and the finding seen as an observer event
  (`UnknownNotification`, `InvalidNotification`, `InvalidCancel` or an `InvalidMessage`
  of the notification kind; `UnmatchedResponse` or `ErrorWithoutId`; an `InvalidMessage`
  of the response kind);
* `response`, `error_reply`, `call_failed`: the case's `pending` calls are made for real,
  through the role's typed handle (`ext_method` for extension methods), so that they
  are outstanding under the case's ids; what the call returns or raises (`PeerError`,
  `InvalidResult`, a `ConnectionFailed` caused by `InvalidResponse`) is the outcome. The
  Python peer numbers its calls 0, 1, 2, ...: lower ids are taken by filler calls that
  the test answers. A string or `null` id cannot be made outstanding; such cases are
  skipped, with the reason, and counted.

`$/cancel_request` never reaches a handler: the connection consumes it and cancels the
request it names. A case that names an id is observed by first sending a request under
that id which waits to be cancelled; only the `requestId` can be compared.

The cases assume a stateless receiver (`vectors/README.md`, "Runner rules"); a role is
not one, so each case first gets the state a real peer would have set up: `initialize`
with every capability advertised by both sides (unless the case is the `initialize`
request itself), then the session the case's params name (unless the case opens it). A
request whose kind no capability can advertise (an unknown content block or MCP server
type, an unknown elicitation mode) is still refused by the capability rules, which the
stateless cases do not apply: such a case is skipped, after checking that the refusal is
exactly the rule's.

No wait is unbounded (`WAIT`) and nothing sleeps: "nothing else happened" is established
with a barrier request sent after the case's line, which the connection answers once the
reader has dealt with every line before it and the notification worker has handled every
notification read before it.

Baselines and selection are those of `test_vectors.py` (`vectors/baselines/python.json`,
`AGENTPROTO_VECTORS`). The counts are printed at the end of the run.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import replace
from functools import partial
from typing import Any, cast

import pytest
from msgspec import UNSET, Raw

from agentproto.acp import v1
from agentproto.acp.errors import ConnectionFailed, InvalidResult, PeerError
from agentproto.acp.options import AcpEvent, AcpOptions, InvalidNotification, Salvaged, UnknownNotification
from agentproto.acp.receive import ExtMessage, IncomingRequest, Reply, classify
from agentproto.acp.refusal import refusal_error
from agentproto.acp.rules import MethodInfo
from agentproto.codec import encode
from agentproto.jsonrpc import ConnectionOptions, ErrorObject
from agentproto.jsonrpc.frame import split_lines
from agentproto.jsonrpc.local_error import InvalidResponse
from agentproto.jsonrpc.memory import duplex
from agentproto.jsonrpc.message import EnvelopeErrorKind, RequestId, encode_response
from agentproto.jsonrpc.message import encode as encode_message
from agentproto.jsonrpc.options import (
    ConnectionEvent,
    ErrorWithoutId,
    InvalidCancel,
    InvalidMessage,
    UnmatchedResponse,
)
from tests import report
from tests.jsonrpc.wire import WAIT, Wire
from tests.test_vectors import BASELINE, CASES, ERROR_TEXTS, Case, compare, compare_bytes, observe
from tests.vector_files import selected

Event = ConnectionEvent | AcpEvent

AGENT_CAPABILITIES: dict[str, Any] = {
    "loadSession": True,
    "promptCapabilities": {"image": True, "audio": True, "embeddedContext": True},
    "mcpCapabilities": {"http": True, "sse": True},
    "sessionCapabilities": {"list": {}, "delete": {}, "resume": {}, "close": {}, "additionalDirectories": {}},
    "auth": {"logout": {}},
}
CLIENT_CAPABILITIES: dict[str, Any] = {
    "fs": {"readTextFile": True, "writeTextFile": True},
    "terminal": True,
    "elicitation": {"form": {}, "url": {}},
}
AGENT_INIT: dict[str, Any] = {"protocolVersion": 1, "agentCapabilities": AGENT_CAPABILITIES}
"""The agent's `initialize` result: what the agent side answers, and the client side is told."""
CLIENT_INIT: dict[str, Any] = {"protocolVersion": 1, "clientCapabilities": CLIENT_CAPABILITIES}
"""The client's `initialize` params: what the agent side is sent, and the client side sends."""
DEFAULT_SESSION = "vectors-session"

# Extension methods the test itself uses; the recording application does not record them.
BARRIER = "_vectors/barrier"  # answered at once
HOLD = "_vectors/hold"  # waits until cancelled: the target of a `$/cancel_request` case
FILLER = "_vectors/filler"  # a raw call that takes up an id below a pending one
BARRIER_ID = "vectors-barrier"

CANCEL_REQUEST = "$/cancel_request"
OPENS = frozenset({"session/new", "session/load", "session/resume"})
"""Session methods whose case opens the session itself."""
I64 = range(-(2**63), 2**63)

SKIP_ID = "the Python peer numbers its calls 0, 1, 2, ...: a string or null pending id cannot be made outstanding"
SKIP_RULE = (
    "refused by a capability rule (a kind no capability can advertise), which stateless cases do not apply;"
    " the refusal was checked"
)


def rows(side: str) -> dict[str, MethodInfo]:
    """The methods `side` handles (its own and the protocol ones), by handler name."""
    return {m.handler: m for m in v1.METHODS if m.side in (side, "protocol")}


def decoded(type_name: str, value: Any) -> Any:
    return v1.SURFACE.decode(type_name, json.dumps(value).encode(), "$").value


def result_json(method: str, session: str) -> Any:
    """A minimal valid result of `method`, as JSON."""
    results: dict[str, Any] = {
        "initialize": AGENT_INIT,
        # With `modes`: the session-gated requests (`session/set_mode`) apply to the session.
        "session/new": {"sessionId": session, "modes": {"currentModeId": "live", "availableModes": []}},
        "session/prompt": {"stopReason": "end_turn"},
        "session/list": {"sessions": []},
        "session/set_config_option": {"configOptions": []},
        "session/request_permission": {"outcome": {"outcome": "cancelled"}},
        "fs/read_text_file": {"content": ""},
        "terminal/create": {"terminalId": "vectors-terminal"},
        "terminal/output": {"output": "", "truncated": False},
        "elicitation/create": {"action": "cancel"},
    }
    return results.get(method, {})


def sample_params(row: MethodInfo) -> Any:
    """Valid params for a call of `row`: those of the method's `params-min` case, or of
    its shortest request case without warnings."""
    if row.name == "initialize":
        return decoded(row.params, CLIENT_INIT)
    requests = [
        c
        for c in CASES
        if c.expect.get("outcome") == "request" and c.expect.get("method") == row.name and not c.expect.get("warnings")
    ]
    chosen = next((c for c in requests if c.id.endswith("/params-min")), None)
    if chosen is None:
        chosen = min(requests, key=lambda c: len(json.dumps(c.expect["params"])))
    return decoded(row.params, chosen.expect["params"])


# ---------------------------------------------------------------------------
# The application under test


class Handled:
    """One call of a request or notification handler."""

    def __init__(self, method: str, row: MethodInfo | None, params: Any, request: bool, id: RequestId) -> None:
        self.method = method
        self.row = row
        self.params = params
        self.request = request
        self.id = id


class Recording:
    """The application of either side: every handler records its call and answers with a
    minimal valid result (`session/new` with the case's session)."""

    def __init__(self, side: str, session: str) -> None:
        self._rows = rows(side)
        self.session = session
        self.calls: list[Handled] = []
        self.holds: list[Any] = []
        """The contexts of the `HOLD` requests."""

    def _record(self, method: str, row: MethodInfo | None, params: Any, cx: Any, request: bool) -> None:
        self.calls.append(Handled(method, row, params, request, cx.request_id if request else None))

    def __getattr__(self, name: str) -> Callable[[Any, Any], Awaitable[Any]]:
        row = self._rows.get(name)
        if row is None:
            raise AttributeError(name)

        async def handle(cx: Any, params: Any) -> Any:
            self._record(row.name, row, params, cx, row.kind == "request")
            return None if row.result is None else decoded(row.result, result_json(row.name, self.session))

        return handle

    async def ext_method(self, cx: Any, request: ExtMessage) -> Raw:
        if request.method == HOLD:
            self.holds.append(cx)
            await asyncio.get_running_loop().create_future()
        if request.method != BARRIER:
            self._record(request.method, None, request, cx, True)
        return Raw(b"null")

    async def ext_notification(self, cx: Any, notification: ExtMessage) -> None:
        self._record(notification.method, None, notification, cx, False)


# ---------------------------------------------------------------------------
# One case


class Skip(Exception):
    """The case's outcome cannot be seen on a live connection (the reason says why)."""


class Seen:
    """What the connection did with the case's line."""

    def __init__(self) -> None:
        self.calls: list[Handled] = []
        self.written: list[bytes] = []
        self.events: list[Event] = []
        self.hold: Any = UNSET
        """The answer to the held request, when the cancel fired."""
        self.pending: list[tuple[int, str, asyncio.Task[Any]]] = []


def payload_json(value: Any) -> tuple[Any, bytes]:
    """A decoded payload as JSON, and its bytes from the SDK's encoder."""
    if isinstance(value, ExtMessage):
        data = b"null" if value.payload is None else bytes(value.payload)
    else:
        data = encode(value)
    return json.loads(data), data


def line_id(line: bytes) -> Any:
    message = json.loads(line)
    return message.get("id", UNSET) if isinstance(message, dict) else UNSET


def named_session(message: Any) -> str | None:
    params = message.get("params") if isinstance(message, dict) else None
    session = params.get("sessionId") if isinstance(params, dict) else None
    return session if isinstance(session, str) else None


def cancel_target(message: Any) -> tuple[bool, RequestId]:
    """Whether the line is a `$/cancel_request` naming an id a request can carry, and the id."""
    if not isinstance(message, dict) or message.get("method") != CANCEL_REQUEST or "id" in message:
        return False, None
    params = message.get("params")
    id = params.get("requestId", UNSET) if isinstance(params, dict) else UNSET
    if id is None or isinstance(id, str) or (isinstance(id, int) and not isinstance(id, bool) and id in I64):
        return True, id
    return False, None


def finding_of(event: Event) -> str | None:
    """The vectors' finding for an observer event that reports an ignored line."""
    if isinstance(event, UnknownNotification):
        return "unknown-notification"
    if isinstance(event, InvalidNotification | InvalidCancel):
        return "invalid-notification"
    if isinstance(event, UnmatchedResponse | ErrorWithoutId):
        # `ErrorWithoutId`: an error response with `"id": null`, which no call can match.
        return "unmatched-response"
    if isinstance(event, InvalidMessage):
        if event.error.kind is EnvelopeErrorKind.INVALID_NOTIFICATION:
            return "invalid-notification"
        if event.error.kind is EnvelopeErrorKind.INVALID_RESPONSE and not event.failed_call:
            return "invalid-response"
    return None


def capability_refusal(side: str, request: IncomingRequest) -> ErrorObject | None:
    """The error the role's capability rules (the generated checks, on the typed params
    `classify` decoded) answer a request with, given the capabilities advertised here
    (`None` when they let it through)."""
    checks = v1.SURFACE.checks.get(request.method)
    if checks is None or checks.refusal is None:
        return None
    own = decoded("InitializeResponse", AGENT_INIT) if side == "agent" else decoded("InitializeRequest", CLIENT_INIT)
    refused = checks.refusal(request.params, own)
    return None if refused is None else refusal_error(request.method, refused)


async def drive(case: Case, check_duplicate_keys: bool) -> tuple[dict[str, Any], bytes | None]:
    """Runs the case through a live connection; returns the observed outcome and the
    encoded payload of a decoded one."""
    lines = split_lines(case.input)
    assert len(lines) == 1 and isinstance(lines[0], bytes), f"expected one framed line, got {lines}"
    line = lines[0]
    # More lines follow: a last line the input leaves open (end of input ends it) is closed.
    data = case.input if case.input.endswith(b"\n") else case.input + b"\n"
    try:
        message: Any = json.loads(line)
    except ValueError:
        message = None
    method = message.get("method") if isinstance(message, dict) else None
    method = method if isinstance(method, str) else None
    session = named_session(message)
    side = "agent" if case.data["direction"] == "client_to_agent" else "client"
    pending: dict[Any, str] = {json.loads(key): m for key, m in case.data.get("pending", {}).items()}
    if any(not isinstance(id, int) or isinstance(id, bool) for id in pending):
        raise Skip(SKIP_ID)

    events: list[Event] = []
    options = AcpOptions(observer=events.append, check_duplicate_keys=check_duplicate_keys)
    options.connection = ConnectionOptions(allow_null_id=True, shutdown_grace=0.5)
    app = Recording(side, session if session is not None else DEFAULT_SESSION)
    (ours_in, ours_out), (theirs_in, theirs_out) = duplex(1 << 20)
    handle: Any
    if side == "agent":
        connection, handle = v1.connect_agent(cast(v1.Agent, app), ours_in, ours_out, options)
    else:
        connection, handle = v1.connect_client(cast(v1.Client, app), ours_in, ours_out, options)
    running = asyncio.create_task(connection.run())
    wire = Wire(theirs_in, theirs_out)
    tasks: list[asyncio.Task[Any]] = []
    next_id = 0

    async def call(start: Callable[[], Awaitable[Any]], method: str) -> tuple[int, asyncio.Task[Any]]:
        """Starts a call of the side under test; returns the id it went out with."""
        nonlocal next_id
        task = asyncio.ensure_future(start())
        tasks.append(task)
        request = json.loads(await wire.line())
        assert request.get("method") == method, f"expected the `{method}` call, got {request}"
        id = request.get("id")
        assert isinstance(id, int), f"a call without an integer id: {request}"
        next_id = id + 1
        return id, task

    async def answer(id: int, result: Any, task: asyncio.Task[Any]) -> None:
        await wire.send({"jsonrpc": "2.0", "id": id, "result": result})
        await asyncio.wait_for(asyncio.shield(task), WAIT)

    async def request(id: str, method: str, params: Any) -> Any:
        await wire.send({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        answer = json.loads(await wire.line())
        assert answer.get("id") == id and "result" in answer, f"`{method}` failed: {answer}"
        return answer["result"]

    try:
        # The state the case presupposes, set up as a real peer would.
        if side == "agent":
            if method != "initialize":
                await request("vectors-init", "initialize", CLIENT_INIT)
                if session is not None and method not in OPENS:
                    opened = await request("vectors-new", "session/new", {"cwd": "/", "mcpServers": []})
                    assert opened == result_json("session/new", session), f"`session/new` answered {opened}"
        else:
            if "initialize" not in pending.values():
                init = decoded("InitializeRequest", CLIENT_INIT)
                id, task = await call(lambda: handle.initialize(init), "initialize")
                await answer(id, AGENT_INIT, task)
            if session is not None:
                new = decoded("NewSessionRequest", {"cwd": "/", "mcpServers": []})
                id, task = await call(lambda: handle.new_session(new), "session/new")
                await answer(id, result_json("session/new", session), task)
        # The case's pending calls, under the case's ids.
        seen = Seen()
        callee = "client" if side == "agent" else "agent"
        for id, pending_method in sorted(pending.items()):
            if id < next_id:
                raise Skip(f"pending id {id} is taken by the calls that set up the state")
            while next_id < id:
                filler, task = await call(lambda: connection.peer.call(FILLER), FILLER)
                await answer(filler, None, task)
            if pending_method.startswith("_"):
                start = partial(handle.ext_method, pending_method, Raw(b"{}"))
            else:
                row = v1.SURFACE.requests(callee)[pending_method]
                start = partial(getattr(handle, row.handler), sample_params(row))
            got, task = await call(start, pending_method)
            assert got == id, f"the `{pending_method}` call went out as id {got}, the case needs {id}"
            seen.pending.append((id, pending_method, task))
        app.calls.clear()
        before = len(events)

        # A `$/cancel_request` naming an id: a request under that id waits to be cancelled.
        hold, hold_id = cancel_target(message)
        if hold:
            await wire.send({"jsonrpc": "2.0", "id": hold_id, "method": HOLD})

        # The case's line, then the barrier.
        await wire.send_raw(data)
        await wire.send({"jsonrpc": "2.0", "id": BARRIER_ID, "method": BARRIER})
        written: list[bytes] = []
        while (out := await wire.line()) and line_id(out) != BARRIER_ID:
            written.append(out)
        # What may still be on its way: request handlers run concurrently, and a call
        # returns once its caller's task runs again.
        expect = case.expect["outcome"]
        if expect in ("request", "reply_error") and not written:
            written.append(await wire.line())
        if expect in ("response", "error_reply", "call_failed") and seen.pending:
            await asyncio.wait([task for _, _, task in seen.pending], timeout=WAIT, return_when=asyncio.FIRST_COMPLETED)
        if hold:
            # The reader fires the held request's token as it reads the cancel, so by
            # the barrier's answer it has fired or never will; once fired, the request
            # is answered -32800.
            assert len(app.holds) == 1, "the held request did not reach its handler"
            if app.holds[0].is_cancelled:
                while not any(line_id(w) == hold_id for w in written):
                    written.append(await wire.line())
                seen.hold = next(json.loads(w) for w in written if line_id(w) == hold_id)
                written = [w for w in written if line_id(w) != hold_id]
        seen.calls = list(app.calls)
        seen.events = events[before:]
        seen.written = written

        observed, payload = outcome(seen, hold_id)
        receiver = replace(v1.AGENT if side == "agent" else v1.CLIENT, check_duplicate_keys=check_duplicate_keys)
        expected = classify(line, receiver, pending)
        if isinstance(expected, Reply) and observed["outcome"] == "reply_error":
            reply = encode_message(expected.reply)
            assert written == [reply], f"the reply is not classify's: wrote {written}, classify {reply!r}"
        if isinstance(expected, IncomingRequest) and observed["outcome"] == "reply_error" and not seen.calls:
            refusal = capability_refusal(side, expected)
            if refusal is not None and written == [encode_response(expected.id, error=refusal)]:
                raise Skip(SKIP_RULE)
        return observed, payload
    finally:
        for task in tasks:
            task.cancel()
        theirs_out.close()
        done, _ = await asyncio.wait((running, *tasks), timeout=WAIT)
        if running not in done:
            running.cancel()
            await asyncio.wait((running,))
        for task in (running, *tasks):
            if task.done() and not task.cancelled():
                task.exception()


def outcome(seen: Seen, hold_id: Any) -> tuple[dict[str, Any], bytes | None]:
    """What the connection did, in the shape `test_vectors.observe` gives."""
    written = [w.decode(errors="replace") for w in seen.written]
    warnings = [w.path for e in seen.events if isinstance(e, Salvaged) for w in e.warnings]
    assert len(seen.calls) <= 1, f"{len(seen.calls)} handler calls: {[c.method for c in seen.calls]}"
    if seen.calls:
        call = seen.calls[0]
        params, payload = payload_json(call.params)
        observed: dict[str, Any] = {
            "outcome": "request" if call.request else "notification",
            "method": call.method,
            "type": call.row.params if call.row is not None else None,
            "params": params,
            "warnings": warnings,
        }
        if call.request:
            observed["id"] = call.id
            answers = [json.loads(w) for w in seen.written]
            assert len(answers) == 1 and answers[0].get("id", UNSET) == call.id and "result" in answers[0], (
                f"the request was handled, but the lines written are {written}"
            )
        else:
            assert not written, f"a notification was handled, but lines were written: {written}"
        return observed, payload
    ended = [(id, method, task) for id, method, task in seen.pending if task.done()]
    if ended:
        assert not written, f"a call ended, but lines were written: {written}"
        id, method, task = ended[0]
        error = task.exception()
        if error is None:
            value = task.result()
            result, payload = payload_json(ExtMessage(method, value) if isinstance(value, Raw) else value)
            row = v1.SURFACE.requests("agent").get(method) or v1.SURFACE.requests("client").get(method)
            return {
                "outcome": "response",
                "id": id,
                "method": method,
                "type": None if row is None else row.result,
                "result": result,
                "warnings": warnings,
            }, payload
        if isinstance(error, PeerError):
            error_object = {"code": error.error.code, "message": error.error.message}
            return {"outcome": "error_reply", "id": id, "error": error_object}, None
        if isinstance(error, InvalidResult):
            failed = {"outcome": "call_failed", "id": id, "path": error.error.path, "detail": str(error)}
            return {**failed, "kind": error.error.kind.value}, None
        if isinstance(error, ConnectionFailed) and isinstance(error.cause, InvalidResponse):
            return {"outcome": "call_failed", "id": id, "path": error.cause.error.path, "detail": str(error)}, None
        return {"outcome": f"the call raised {type(error).__name__}", "detail": str(error)}, None
    if seen.written:
        replies = [json.loads(w) for w in seen.written]
        assert len(replies) == 1 and isinstance(replies[0].get("error"), dict), (
            f"nothing was dispatched, and the lines written are {written}"
        )
        error_member = replies[0]["error"]
        data = error_member.get("data")
        reply_error = {
            "code": error_member.get("code"),
            "message": error_member.get("message"),
            "path": data.get("path") if isinstance(data, dict) else None,
        }
        if isinstance(data, dict):
            reply_error.update({key: data[key] for key in ERROR_TEXTS if key in data})
        return {"outcome": "reply_error", "id": replies[0].get("id"), "error": reply_error}, None
    if isinstance(seen.hold, dict) and (seen.hold.get("error") or {}).get("code") == -32800:
        # Consumed by the connection: what can be seen is the request it cancelled.
        return {"outcome": "notification", "method": CANCEL_REQUEST, "params": {"requestId": hold_id}}, None
    findings = [f for f in map(finding_of, seen.events) if f is not None]
    return {
        "outcome": "ignored",
        "finding": findings[0] if len(findings) == 1 else findings,
        "events": [repr(e) for e in seen.events],
    }, None


def run(case: Case, *, check_duplicate_keys: bool = False, expect: dict[str, Any] | None = None) -> None:
    """Drives one case and compares with `expect` (the case's by default); raises `Skip`,
    or AssertionError saying how the outcome differed."""
    observed, payload = asyncio.run(asyncio.wait_for(drive(case, check_duplicate_keys), 4 * WAIT))
    expect = dict(case.expect if expect is None else expect)
    if expect["outcome"] == "notification" and expect.get("method") == CANCEL_REQUEST:
        # Only the id of the cancelled request can be seen (see the module docs).
        cancelled = {"requestId": expect["params"]["requestId"]}
        expect = {"outcome": "notification", "method": CANCEL_REQUEST, "params": cancelled}
    compare(expect, observed)
    if payload is not None and case.canonical is not None:
        compare_bytes(case.canonical, payload)
    elif payload is not None:
        raise AssertionError("the message decodes but the case has no golden file (<case>.canonical)")


# ---------------------------------------------------------------------------
# Tests

COUNTS: Counter[str] = Counter()
SKIPPED: Counter[str] = Counter()


@pytest.mark.parametrize("case", [c for c in CASES if selected(c.id)], ids=lambda c: c.id)
def test_vector_through_a_live_connection(case: Case) -> None:
    reason = BASELINE.get(case.id)
    try:
        try:
            run(case)
        except AssertionError:
            if reason is None:
                COUNTS["failed"] += 1
                raise
            COUNTS["baseline"] += 1
            return  # a known failure, listed with its reason
    except Skip as e:
        SKIPPED[str(e)] += 1
        pytest.skip(str(e))
    if reason is not None:
        COUNTS["failed"] += 1
        pytest.fail(f"stale baseline entry: {case.id} passes now (listed as: {reason})")
    COUNTS["passed"] += 1


def test_duplicate_key_cases_pass_with_the_guard() -> None:
    """The repeated-key cases of the baseline pass on a live connection too once
    `AcpOptions.check_duplicate_keys` is on."""
    listed = [c for c in CASES if c.id in BASELINE and "repeated key" in BASELINE[c.id]]
    assert listed
    for case in listed:
        run(case, check_duplicate_keys=True)


def synthetic(id: str, direction: str, line: bytes) -> Case:
    """A case that is not in the corpus: its expectation is what `classify` says."""
    case = Case.__new__(Case)
    case.id = id
    case.input = line + b"\n"
    case.canonical = None
    case.data = {"id": id, "direction": direction}
    receiver = v1.AGENT if direction == "client_to_agent" else v1.CLIENT
    case.expect = observe(classify(line, receiver, {}))[0]
    return case


@pytest.mark.parametrize(
    "params",
    [
        b'{"requestId":-0}',  # the decoding model reads -0 as a double: not an id
        b'{"requestId":9223372036854775808}',  # beyond int64
        b'{"requestId":7,"_meta":5}',  # salvaged: still a cancel
        b'{"requestId":"a","requestId":7}',  # the last one counts
        b'{"requestId":7.5}',
    ],
)
def test_cancel_request_is_read_as_classify_reads_it(params: bytes) -> None:
    """The connection consumes `$/cancel_request` itself; it reads the params with the
    same decoder as `classify`, so it cancels exactly when `classify` dispatches."""
    line = b'{"jsonrpc":"2.0","method":"$/cancel_request","params":' + params + b"}"
    for direction in ("client_to_agent", "agent_to_client"):
        case = synthetic(f"cancel {params!r}", direction, line)
        run(case)


def summary() -> str | None:
    """The counts, printed at the end of the run."""
    if not COUNTS and not SKIPPED:
        return None
    skipped = sum(SKIPPED.values())
    driven = sum(COUNTS.values()) + skipped - SKIPPED[SKIP_ID]
    reasons = "; ".join(f"{n} x {r}" for r, n in sorted(SKIPPED.items()))
    return (
        f"vector cases through a live connection: {driven} driven, {COUNTS['passed']} passed, "
        f"{COUNTS['baseline']} known failures (baseline), {COUNTS['failed']} failed, {skipped} skipped"
        + (f" ({reasons})" if reasons else "")
    )


report.register(summary)
