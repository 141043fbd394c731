"""Every A2A single-message case under `vectors/` (the `a2a` corpus of `vectors/layout.json`,
flows excepted) through the Python A2A bindings' decoders: a request through
`agentproto.a2a.jsonrpc.read_request` or `agentproto.a2a.rest.read_request` (headers,
query, body), an answer through their `read_answer`; the outcome compared with `expect`
(vectors/README.md, "A2A"), a decoded value re-encoded by the SDK's encoder and compared
byte for byte with the case's golden file, an error compared as its wire form says it.

Until the ASGI server and the client exist, the runner goes through this pure binding
layer rather than a server on 127.0.0.1 and a client over HTTP, as the runner rules want:
HTTP framing (`Content-Length`, the SSE framing of a streamed answer, whose one event's
data this runner hands over directly) is not exercised yet.

Known failures are listed in `vectors/baselines/a2a-python.json` with a reason: an
unlisted failure fails, and so does a listed case that passes (a stale entry).
`AGENTPROTO_VECTORS=a2a/v1/GetTask/,-a2a/v1/version` selects cases by id prefix.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from agentproto.a2a import jsonrpc, rest
from agentproto.a2a.answers import Answer, AnswerValue, CallFailed, ErrorReply
from agentproto.a2a.codec import encode
from agentproto.a2a.generated.v1 import OPERATIONS, Operation
from agentproto.codec.reader import JObject, parse
from tests.test_vectors import minify, same
from tests.vector_files import VECTORS, case_files, corpus, selected

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


def dispatched(operation: Operation, request: Any) -> tuple[dict[str, Any], bytes]:
    encoded = encode(request)
    info = OPERATIONS[operation]
    observed = {"outcome": "dispatched", "operation": info.name, "type": info.request, "params": json.loads(encoded)}
    return observed, encoded


def observe_request(case: Case, *, check_duplicate_keys: bool, fast: bool) -> tuple[dict[str, Any], bytes | None]:
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


def observe_answer(case: Case, *, fast: bool) -> tuple[dict[str, Any], bytes | None]:
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


def run(case: Case, *, check_duplicate_keys: bool = False, fast: bool = True) -> None:
    """Runs one case; raises AssertionError saying how the outcome differed."""
    if case.data["direction"] == "client_to_server":
        observed, encoded = observe_request(case, check_duplicate_keys=check_duplicate_keys, fast=fast)
    else:
        observed, encoded = observe_answer(case, fast=fast)
    compare(case.expect, observed)
    if encoded is not None:
        assert case.canonical is not None, "the message decodes but the case has no golden file"
        compare_bytes(case.canonical, encoded)


SELECTED = [c for c in CASES if selected(c.id)]


@pytest.mark.parametrize("case", SELECTED, ids=lambda c: c.id)
def test_vector(case: Case) -> None:
    reason = BASELINE.get(case.id)
    if reason is None:
        run(case)
        return
    try:
        run(case)
    except AssertionError:
        return  # a known failure, listed with its reason
    pytest.fail(f"stale baseline entry: {case.id} passes now (listed as: {reason})")


@pytest.mark.parametrize("case", SELECTED, ids=lambda c: c.id)
def test_vector_on_the_exact_path_alone(case: Case) -> None:
    """The authoritative decoders alone give every outcome (only the fast path's known
    gap, repeated keys, is closed here by the exact path reading every key)."""
    run(case, fast=False)


def test_duplicate_key_cases_pass_with_the_guard() -> None:
    """The fast path's one gap (repeated keys) closes with `check_duplicate_keys`."""
    for case in [c for c in CASES if "repeated key" in BASELINE.get(c.id, "")]:
        run(case, check_duplicate_keys=True)


def test_baseline_lists_only_existing_cases() -> None:
    flows = {
        p.relative_to(VECTORS).with_suffix("").as_posix() for p in (VECTORS / corpus("a2a")["flows"]).glob("*.json")
    }
    ids = {c.id for c in CASES} | {f"{f}@{b}" for f in flows for b in ("jsonrpc", "rest")}
    assert sorted(set(BASELINE) - ids) == []


def test_cases_were_found() -> None:
    assert len(CASES) > 300
    assert all(c.data["protocol"] == "a2a/v1" for c in CASES)
