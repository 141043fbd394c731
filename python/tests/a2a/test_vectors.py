"""Every A2A vector under `vectors/` (the `a2a` corpus of `vectors/layout.json`) through
the Python SDK's real paths:

* request cases as raw HTTP/1.1 bytes on a TCP connection to the ASGI server (uvicorn on
  127.0.0.1), observed where the server would run the operation (an interceptor, the
  server's own hook, records the decoded request and refuses the call so nothing runs)
  and re-encoded with the SDK's encoder;
* answer cases through the real client (`A2aClient`, retries off) against a socket that
  answers the case's bytes (one SSE event for a `text/event-stream` answer);
* the flows (`vectors/a2a/v1/flows/`) against a fresh server running the scripted
  executor, on both bindings (`tests/a2a/flows.py`).

Each decoded value is re-encoded and compared byte for byte with the case's golden file.
Known failures are listed in `vectors/baselines/a2a-python.json` with a reason: an
unlisted failure fails, and so does a listed case that passes (a stale entry). The pure
binding layer alone (no HTTP) is also run on every case, on its exact decoding path.
`AGENTPROTO_VECTORS=a2a/v1/GetTask/,-a2a/v1/version` selects cases by id prefix.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentproto.a2a import jsonrpc, rest
from agentproto.a2a.answers import Answer, AnswerValue, CallFailed, ErrorReply
from agentproto.a2a.client import A2aClient, ClientError
from agentproto.a2a.codec import encode
from agentproto.a2a.demo import DemoAgent, card
from agentproto.a2a.errors import A2aError, ErrorKind, PeerError
from agentproto.a2a.generated.v1 import (
    OPERATIONS,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    Message,
    Operation,
    Part,
    Role,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
)
from agentproto.a2a.server import CallContext, ServerOptions, create_app
from agentproto.codec.reader import JObject, parse
from tests.a2a.flows import run_flow
from tests.a2a.servers import BOUND, ServerThread, exchange, request_bytes
from tests.test_vectors import minify, same
from tests.vector_files import VECTORS, case_files, corpus, flow_files, id_of, selected

BASELINE_FILE = VECTORS / "baselines" / "a2a-python.json"
REQUEST_ID = 7
"""The id of the request the client under test sent (an answer's `$request-id`)."""


class Case:
    def __init__(self, path: Path) -> None:
        text = path.read_text(encoding="utf-8")
        self.data: dict[str, Any] = json.loads(text)
        self.id: str = self.data["id"]
        self.expect: dict[str, Any] = self.data["expect"]
        golden = path.with_suffix(".canonical")
        self.canonical = golden.read_bytes() if golden.exists() else None
        self.body = self._body(text)

    def _body(self, text: str) -> bytes:
        kinds = [k for k in ("input", "input_text", "input_base64") if k in self.data]
        assert len(kinds) <= 1, f"{self.id}: at most one of input, input_text, input_base64"
        if not kinds:
            return b""
        if kinds[0] == "input_text":
            return str(self.data["input_text"]).encode()
        if kinds[0] == "input_base64":
            return base64.b64decode(self.data["input_base64"])
        node = parse(text)
        assert isinstance(node, JObject)
        start, end = next((s, e) for k, _, s, e in node.members if k == "input")
        return minify(text[start:end]).encode()


CASES = [Case(p) for p in case_files("a2a")]
BASELINE: dict[str, str] = json.loads(BASELINE_FILE.read_text()) if BASELINE_FILE.exists() else {}


def error_fields(wire: dict[str, Any], info: dict[str, Any] | None) -> dict[str, Any]:
    """What a case may state of an error, read from its wire form."""
    out: dict[str, Any] = {k: wire[k] for k in ("code", "status") if k in wire}
    if info is not None:
        out["reason"] = info.get("reason")
        out.update(info.get("metadata", {}))
    return out


def first_info(details: Any) -> dict[str, Any] | None:
    if isinstance(details, list):
        for d in details:
            if isinstance(d, dict) and d.get("@type") == "type.googleapis.com/google.rpc.ErrorInfo":
                return d
    return None


# --- the pure binding layer (no HTTP) ----------------------------------------------------


def dispatched(operation: Operation, request: Any) -> tuple[dict[str, Any], bytes]:
    encoded = encode(request)
    info = OPERATIONS[operation]
    observed = {"outcome": "dispatched", "operation": info.name, "type": info.request, "params": json.loads(encoded)}
    return observed, encoded


def pure_request(case: Case, *, check_duplicate_keys: bool, fast: bool) -> tuple[dict[str, Any], bytes | None]:
    http = case.data["http"]
    path, _, query = str(http["path"]).partition("?")
    headers: dict[str, str] = dict(http["headers"])
    if case.data["binding"] == "jsonrpc":
        assert path == "", f"{case.id}: a JSON-RPC case's path is a query string at most"
        call = jsonrpc.read_request(case.body, headers, query, check_duplicate_keys=check_duplicate_keys, fast=fast)
        if isinstance(call, jsonrpc.RpcCall):
            observed, encoded = dispatched(call.operation, call.request)
            observed["http_status"] = 204 if call.id is None else 200
            return observed, encoded
        body = json.loads(call.body())
        err = body["error"]
        return {
            "outcome": "refused",
            "id": body["id"],
            "http_status": call.http_status,
            "error": error_fields(err, first_info(err.get("data"))),
        }, None
    result = rest.read_request(
        http["method"], path, query, headers, case.body, check_duplicate_keys=check_duplicate_keys, fast=fast
    )
    if isinstance(result, rest.RestCall):
        observed, encoded = dispatched(result.operation, result.request)
        observed["http_status"] = 200
        return observed, encoded
    err = json.loads(result.body())["error"]
    fields = error_fields(err, first_info(err.get("details")))
    assert fields.get("code") == result.http_status, "the AIP-193 body's code is the HTTP status"
    return {"outcome": "refused", "http_status": result.http_status, "error": fields}, None


def pure_answer(case: Case, *, fast: bool) -> tuple[dict[str, Any], bytes | None]:
    operation = Operation(case.data["operation"])
    body = case.body.replace(b'"$request-id-as-string"', json.dumps(str(REQUEST_ID)).encode())
    body = body.replace(b'"$request-id"', json.dumps(REQUEST_ID).encode())
    status = int(case.data["http"].get("status", 200))
    answer: Answer
    if case.data["binding"] == "jsonrpc":
        answer = jsonrpc.read_answer(operation, body, REQUEST_ID, fast=fast)
    else:
        answer = rest.read_answer(operation, status, body, fast=fast)
    if isinstance(answer, AnswerValue):
        encoded = encode(answer.value)
        return {"outcome": "decoded", "type": answer.type_name, "result": json.loads(encoded)}, encoded
    if isinstance(answer, CallFailed):
        observed: dict[str, Any] = {"outcome": "call_failed"}
        if answer.error is not None:
            observed.update(path=answer.error.path, kind=answer.error.kind.value)
        return observed, None
    assert isinstance(answer, ErrorReply)
    e = answer.error
    error = {"code": e.code, "status": e.status, "reason": e.reason, **e.metadata}
    observed = {"outcome": "error_reply", "error": {k: v for k, v in error.items() if v is not None}}
    if e.http_status is not None:
        observed["http_status"] = e.http_status
    return observed, None


# --- through the real server and client ------------------------------------------------

RECORDED = "recorded by the vector runner"
REST_PREFIX = "/a2a/rest"


class RequestServer:
    """The demo agent's server on 127.0.0.1 with a recording interceptor."""

    def __init__(self) -> None:
        self.seen: list[tuple[Operation, Any]] = []

        def record(cx: CallContext, operation: Operation, request: Any) -> None:
            self.seen.append((operation, request))
            raise A2aError(ErrorKind.INTERNAL, RECORDED)

        def make(base: str) -> Any:
            options = ServerOptions(rest_prefix=REST_PREFIX, interceptors=[record])
            return create_app(DemoAgent(), card(base, REST_PREFIX), options=options)

        self.thread = ServerThread(make)


@pytest.fixture(scope="module")
def request_server() -> Iterator[RequestServer]:
    server = RequestServer()
    try:
        yield server
    finally:
        server.thread.stop()


def observe_request(case: Case, server: RequestServer) -> tuple[dict[str, Any], bytes | None]:
    http = case.data["http"]
    path = str(http.get("path", ""))
    target = "/" + path if case.data["binding"] == "jsonrpc" else REST_PREFIX + path
    server.seen.clear()
    body = case.body if any(k in case.data for k in ("input", "input_text", "input_base64")) else None
    raw = request_bytes(http.get("method", "POST"), target, dict(http["headers"]), body, server.thread.port)
    response = exchange(server.thread.port, raw)
    if server.seen:
        assert len(server.seen) == 1, f"{len(server.seen)} dispatches for one request"
        observed, encoded = dispatched(*server.seen[0])
        observed["http_status"] = response.status
        return observed, encoded
    media = response.headers.get("content-type", "")
    assert media.startswith("application/") and "json" in media, f"an error answer of media type {media!r}"
    answer = json.loads(response.body)
    err = answer["error"]
    if case.data["binding"] == "jsonrpc":
        assert answer.get("jsonrpc") == "2.0" and "result" not in answer, f"not a JSON-RPC error: {answer!r}"
        fields = error_fields(err, first_info(err.get("data")))
        return {"outcome": "refused", "id": answer["id"], "http_status": response.status, "error": fields}, None
    fields = error_fields(err, first_info(err.get("details")))
    assert fields.get("code") == response.status, "the AIP-193 body's code is the HTTP status"
    return {"outcome": "refused", "http_status": response.status, "error": fields}, None


def _fixed_request(operation: Operation) -> Any:
    """The request the client under test sends (the answer does not depend on it)."""
    message = Message(message_id="m-1", role=Role.USER, parts=[Part(text="hi")])
    requests: dict[Operation, Callable[[], Any]] = {
        Operation.SEND_MESSAGE: lambda: SendMessageRequest(message=message),
        Operation.SEND_STREAMING_MESSAGE: lambda: SendMessageRequest(message=message),
        Operation.GET_TASK: lambda: GetTaskRequest(id="t-1"),
        Operation.LIST_TASKS: lambda: ListTasksRequest(),
        Operation.CANCEL_TASK: lambda: CancelTaskRequest(id="t-1"),
        Operation.SUBSCRIBE_TO_TASK: lambda: SubscribeToTaskRequest(id="t-1"),
        Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG: lambda: TaskPushNotificationConfig(
            task_id="t-1", url="https://example.com/hook"
        ),
        Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG: lambda: GetTaskPushNotificationConfigRequest(
            task_id="t-1", id="c"
        ),
        Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS: lambda: ListTaskPushNotificationConfigsRequest(task_id="t-1"),
        Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG: lambda: DeleteTaskPushNotificationConfigRequest(
            task_id="t-1", id="c"
        ),
        Operation.GET_EXTENDED_AGENT_CARD: lambda: GetExtendedAgentCardRequest(),
    }
    return requests[operation]()


async def _answer_through_client(case: Case) -> Any:
    """The outcome of the client's call against a socket answering the case's bytes:
    the value, a `ClientError` or a `PeerError`."""
    http = case.data["http"]
    headers: dict[str, str] = dict(http.get("headers", {}))
    sse = any(k.lower() == "content-type" and v.startswith("text/event-stream") for k, v in headers.items())

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            (int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")), 0
        )
        sent = await reader.readexactly(length)
        request_id = json.loads(sent).get("id") if case.data["binding"] == "jsonrpc" else None
        body = case.body.replace(b'"$request-id-as-string"', json.dumps(str(request_id)).encode())
        body = body.replace(b'"$request-id"', json.dumps(request_id).encode())
        if sse:
            body = b"data: " + body + b"\n\n"
        lines = [f"HTTP/1.1 {int(http.get('status', 200))} X", "Connection: close", f"Content-Length: {len(body)}"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        await writer.drain()
        writer.close()

    listener = await asyncio.start_server(answer, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    url = f"http://127.0.0.1:{port}" + ("/" if case.data["binding"] == "jsonrpc" else "")
    client = A2aClient(url, "JSONRPC" if case.data["binding"] == "jsonrpc" else "HTTP+JSON", retries=0, timeout=BOUND)
    operation = Operation(case.data["operation"])
    try:
        async with listener:
            if OPERATIONS[operation].streaming:
                async for item in client.stream(operation, _fixed_request(operation)):
                    return item.event
                raise AssertionError("the stream ended without an item")
            return await client.call(operation, _fixed_request(operation))
    except (ClientError, PeerError) as e:
        return e
    finally:
        await client.close()


def observe_answer(case: Case) -> tuple[dict[str, Any], bytes | None]:
    outcome = asyncio.run(_answer_through_client(case))
    if isinstance(outcome, ClientError):
        observed: dict[str, Any] = {"outcome": "call_failed"}
        if outcome.error is not None:
            observed.update(path=outcome.error.path, kind=outcome.error.kind.value)
        return observed, None
    if isinstance(outcome, PeerError):
        e = outcome
        error = {"code": e.code, "status": e.status, "reason": e.reason, **e.metadata}
        observed = {"outcome": "error_reply", "error": {k: v for k, v in error.items() if v is not None}}
        if e.http_status is not None:
            observed["http_status"] = e.http_status
        return observed, None
    encoded = encode(outcome)
    type_name = OPERATIONS[Operation(case.data["operation"])].result
    return {"outcome": "decoded", "type": type_name, "result": json.loads(encoded)}, encoded


def compare(expect: dict[str, Any], observed: dict[str, Any]) -> None:
    def mismatch(what: str) -> AssertionError:
        return AssertionError(f"{what}: expected {json.dumps(expect)}, observed {json.dumps(observed, default=str)}")

    if expect["outcome"] != observed["outcome"]:
        raise mismatch("outcome")
    for key in ("operation", "type", "params", "result", "id", "http_status", "path", "kind"):
        if key in expect and not same(expect[key], observed.get(key)):
            raise mismatch(key)
    for key, value in expect.get("error", {}).items():
        if not same(value, observed.get("error", {}).get(key)):
            raise mismatch(f"error.{key}")


def compare_bytes(golden: bytes, actual: bytes) -> None:
    if golden != actual:
        at = next(
            (i for i, (g, a) in enumerate(zip(golden, actual, strict=False)) if g != a), min(len(golden), len(actual))
        )
        raise AssertionError(f"canonical encoding differs at byte {at}\n  golden:  {golden!r}\n  encoded: {actual!r}")


def judge(observed: dict[str, Any], encoded: bytes | None, case: Case) -> None:
    compare(case.expect, observed)
    if encoded is not None:
        assert case.canonical is not None, "the message decodes but the case has no golden file"
        compare_bytes(case.canonical, encoded)


def run_pure(case: Case, *, check_duplicate_keys: bool = False, fast: bool = True) -> None:
    """One case through the pure binding layer; raises AssertionError saying how it differed."""
    if case.data["direction"] == "client_to_server":
        observed, encoded = pure_request(case, check_duplicate_keys=check_duplicate_keys, fast=fast)
    else:
        observed, encoded = pure_answer(case, fast=fast)
    judge(observed, encoded, case)


def baselined(id: str, run: Callable[[], None]) -> None:
    reason = BASELINE.get(id)
    if reason is None:
        run()
        return
    try:
        run()
    except AssertionError:
        return  # a known failure, listed with its reason
    if not reason.startswith("race:"):
        pytest.fail(f"stale baseline entry: {id} passes now (listed as: {reason})")


SELECTED = [c for c in CASES if selected(c.id)]
REQUESTS = [c for c in SELECTED if c.data["direction"] == "client_to_server"]
ANSWERS = [c for c in SELECTED if c.data["direction"] != "client_to_server"]
FLOWS = [(p, b) for p in flow_files("a2a") for b in json.loads(p.read_text())["bindings"] if selected(id_of(p))]


@pytest.mark.parametrize("case", REQUESTS, ids=lambda c: c.id)
def test_request_through_the_server(case: Case, request_server: RequestServer) -> None:
    baselined(case.id, lambda: judge(*observe_request(case, request_server), case))


@pytest.mark.parametrize("case", ANSWERS, ids=lambda c: c.id)
def test_answer_through_the_client(case: Case) -> None:
    baselined(case.id, lambda: judge(*observe_answer(case), case))


@pytest.mark.parametrize(("path", "binding"), FLOWS, ids=lambda x: x if isinstance(x, str) else x.stem)
def test_flow(path: Path, binding: str) -> None:
    baselined(f"{id_of(path)}@{binding}", lambda: run_flow(path, binding))


@pytest.mark.parametrize("case", SELECTED, ids=lambda c: c.id)
def test_vector_through_the_binding_layer_on_the_exact_path(case: Case) -> None:
    """The pure binding layer alone, on the authoritative decoders, gives every outcome
    (the fast path's known gap, repeated keys, is closed by the exact path)."""
    run_pure(case, fast=False)


def test_duplicate_key_cases_pass_with_the_guard() -> None:
    """The fast path's one gap (repeated keys) closes with `check_duplicate_keys`."""
    for case in [c for c in CASES if "repeated key" in BASELINE.get(c.id, "")]:
        run_pure(case, check_duplicate_keys=True)


def test_baseline_lists_only_existing_cases() -> None:
    flows = {
        p.relative_to(VECTORS).with_suffix("").as_posix() for p in (VECTORS / corpus("a2a")["flows"]).glob("*.json")
    }
    ids = {c.id for c in CASES} | {f"{f}@{b}" for f in flows for b in ("jsonrpc", "rest")}
    assert sorted(set(BASELINE) - ids) == []


def test_cases_were_found() -> None:
    assert len(CASES) > 300
    assert len(flow_files("a2a")) >= 9
    assert all(c.data["protocol"] == "a2a/v1" for c in CASES)
