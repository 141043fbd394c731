"""Every conformance case under `vectors/` (flows excepted) through the real receive path:
framing (`jsonrpc.frame`), the envelope (`jsonrpc.decode`), dispatch by method and
direction and the typed decode (`acp.receive.classify`); the outcome compared with
`expect` as `crates/vector-runner/src/lib.rs` compares it, and the canonical encoding of
a decoded payload compared byte for byte with the case's golden file.

Known failures are listed in `vectors/baselines/python.json` with a reason: an unlisted
failure fails, and so does a listed case that passes (a stale entry).
`AGENTPROTO_VECTORS=jsonrpc/,-acp/v1/types` selects cases by id prefix.
"""

from __future__ import annotations

import base64
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from msgspec import Raw

from agentproto.acp import v1
from agentproto.acp.receive import (
    CallFailed,
    ExtMessage,
    Ignored,
    Incoming,
    IncomingError,
    IncomingNotification,
    IncomingRequest,
    IncomingResponse,
    Reply,
    classify,
)
from agentproto.codec import encode
from agentproto.codec.reader import JObject, parse
from agentproto.jsonrpc.frame import split_lines
from tests.vector_files import VECTORS, case_files, selected

BASELINE_FILE = VECTORS / "baselines" / "python.json"


class Case:
    def __init__(self, path: Path) -> None:
        self.path = path
        text = path.read_text(encoding="utf-8")
        self.data: dict[str, Any] = json.loads(text)
        self.id: str = self.data["id"]
        self.expect: dict[str, Any] = self.data["expect"]
        golden = path.with_suffix(".canonical")
        self.canonical = golden.read_bytes() if golden.exists() else None
        self.input = self._input(text)

    def _input(self, text: str) -> bytes:
        kinds = [k for k in ("input", "input_text", "input_base64") if k in self.data]
        assert len(kinds) == 1, f"{self.id}: exactly one of input, input_text, input_base64"
        if kinds[0] == "input_text":
            return str(self.data["input_text"]).encode()
        if kinds[0] == "input_base64":
            return base64.b64decode(self.data["input_base64"])
        # The message as written in the file, minified (key order and number text kept).
        node = parse(text)
        assert isinstance(node, JObject)
        start, end = next((s, e) for k, _, s, e in node.members if k == "input")
        return minify(text[start:end]).encode() + b"\n"


def minify(text: str) -> str:
    out = []
    in_string = escaped = False
    for c in text:
        if in_string:
            out.append(c)
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
            out.append(c)
        elif not c.isspace():
            out.append(c)
    return "".join(out)


def load_cases() -> list[Case]:
    return [Case(p) for p in case_files("acp")]


CASES = load_cases()
BASELINE: dict[str, str] = json.loads(BASELINE_FILE.read_text()) if BASELINE_FILE.exists() else {}


# ---------------------------------------------------------------------------
# Running a case


def payload_bytes(value: Any) -> bytes:
    """The SDK encoder's bytes for a decoded params or result."""
    if isinstance(value, ExtMessage):
        return b"null" if value.payload is None else bytes(value.payload)
    return encode(value)


def observe(incoming: Incoming) -> tuple[dict[str, Any], bytes | None]:
    if isinstance(incoming, IncomingRequest):
        data = payload_bytes(incoming.params)
        return {
            "outcome": "request",
            "method": incoming.method,
            "id": incoming.id,
            "type": incoming.type_name,
            "params": json.loads(data),
            "warnings": [w.path for w in incoming.warnings],
        }, data
    if isinstance(incoming, IncomingNotification):
        data = payload_bytes(incoming.params)
        return {
            "outcome": "notification",
            "method": incoming.method,
            "type": incoming.type_name,
            "params": json.loads(data),
            "warnings": [w.path for w in incoming.warnings],
        }, data
    if isinstance(incoming, IncomingResponse):
        data = payload_bytes(incoming.result)
        return {
            "outcome": "response",
            "id": incoming.id,
            "method": incoming.method,
            "type": incoming.type_name,
            "result": json.loads(data),
            "warnings": [w.path for w in incoming.warnings],
        }, data
    if isinstance(incoming, IncomingError):
        error = {"code": incoming.error.code, "message": incoming.error.message}
        return {"outcome": "error_reply", "id": incoming.id, "error": error}, None
    if isinstance(incoming, Reply):
        finding = incoming.finding
        path = None
        if finding.code == "invalid-params" and finding.error is not None:
            path = finding.error.path
        elif finding.code == "bad-envelope" and finding.path:
            path = finding.path
        reply = incoming.reply
        assert reply.error is not None, "a reply that is not an error response"
        error = {"code": reply.error.code, "message": reply.error.message, "path": path}
        error.update(error_texts(reply.error.data))
        return {"outcome": "reply_error", "id": reply.id, "error": error}, None
    if isinstance(incoming, CallFailed):
        observed = {"outcome": "call_failed", "id": incoming.id, "path": incoming.path, "detail": incoming.message}
        if incoming.error is not None:
            observed["kind"] = incoming.error.kind.value
        return observed, None
    assert isinstance(incoming, Ignored)
    return {"outcome": "ignored", "finding": incoming.finding.code, "detail": incoming.finding.message}, None


ERROR_TEXTS = ("kind", "expected", "found", "line", "column")
"""The members of `expect.error` a case may state besides `code` and `path` (taken from
the reply's error `data`; vectors/README.md, "Error texts"). `kind` is a decode
failure's (-32602)."""


def error_texts(data: object) -> dict[str, Any]:
    """The members of a reply's error `data` that `ERROR_TEXTS` names."""
    if not isinstance(data, Raw):
        return {}
    parsed = json.loads(bytes(data))
    if not isinstance(parsed, dict):
        return {}
    return {key: parsed[key] for key in ERROR_TEXTS if key in parsed}


def same(a: Any, b: Any) -> bool:
    """JSON equality with numbers compared by value (`3` equals `3.0`; `true` is not `1`)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(v, b[k]) for k, v in a.items())
    return type(a) is type(b) and a == b


def compare(expect: dict[str, Any], observed: dict[str, Any]) -> None:
    def mismatch(what: str) -> AssertionError:
        return AssertionError(f"{what}: expected {json.dumps(expect)}, observed {json.dumps(observed, default=str)}")

    if expect.get("outcome") != observed.get("outcome"):
        raise mismatch("outcome")
    # `kind`: a `call_failed` case may state the kind of the local decode error.
    for key in ("method", "id", "type", "params", "result", "finding", "path", "kind"):
        if key in expect and not same(expect[key], observed.get(key)):
            raise mismatch(key)
    if "error" in expect:
        got = observed.get("error") or {}
        for key in ("code", "message", "path", *ERROR_TEXTS):
            if key in expect["error"] and not same(expect["error"][key], got.get(key)):
                raise mismatch(f"error.{key}")
    decoded = expect["outcome"] in ("request", "notification", "response")
    if decoded and set(expect.get("warnings", [])) != set(observed.get("warnings", [])):
        raise mismatch("warnings")


def compare_bytes(golden: bytes, actual: bytes) -> None:
    if golden == actual:
        return
    at = next(
        (i for i, (g, a) in enumerate(zip(golden, actual, strict=False)) if g != a), min(len(golden), len(actual))
    )
    raise AssertionError(
        f"canonical encoding differs at byte {at} (golden {len(golden)} bytes, encoded {len(actual)} bytes)\n"
        f"  golden:  {golden!r}\n  encoded: {actual!r}"
    )


def run(case: Case, *, check_duplicate_keys: bool = False, fast_path: bool = True) -> None:
    """Runs one case; raises AssertionError saying how the outcome differed."""
    lines = split_lines(case.input)
    assert len(lines) == 1, f"expected one framed line, got {len(lines)}"
    line = lines[0]
    assert isinstance(line, bytes), f"unexpected oversize line: {line}"
    pending = {json.loads(key): method for key, method in case.data.get("pending", {}).items()}
    direction = case.data["direction"]
    receiver = {"client_to_agent": v1.AGENT, "agent_to_client": v1.CLIENT}[direction]
    receiver = replace(receiver, check_duplicate_keys=check_duplicate_keys, fast_path=fast_path)
    observed, encoded = observe(classify(line, receiver, pending))
    compare(case.expect, observed)
    if encoded is not None:
        assert case.canonical is not None, "the message decodes but the case has no golden file (<case>.canonical)"
        compare_bytes(case.canonical, encoded)


# ---------------------------------------------------------------------------
# Tests


@pytest.mark.parametrize("case", [c for c in CASES if selected(c.id)], ids=lambda c: c.id)
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


def test_baseline_lists_only_existing_cases() -> None:
    flows = {p.relative_to(VECTORS).with_suffix("").as_posix() for p in (VECTORS / "acp/v1/flows").glob("*.json")}
    ids = {c.id for c in CASES} | flows
    assert sorted(set(BASELINE) - ids) == []


def test_duplicate_key_cases_pass_with_the_guard() -> None:
    """The fast path's one gap (repeated keys) closes with `check_duplicate_keys`."""
    listed = [c for c in CASES if c.id in BASELINE and "repeated key" in BASELINE[c.id]]
    for case in listed:
        run(case, check_duplicate_keys=True)


@pytest.mark.parametrize("case", [c for c in CASES if selected(c.id)], ids=lambda c: c.id)
def test_vector_on_the_slow_path_alone(case: Case) -> None:
    """The authoritative path alone gives every outcome: the fast path only ever takes a
    shortcut to the same answer (this is what holds the two to one meaning)."""
    run(case, fast_path=False)


def test_cases_were_found() -> None:
    assert len(CASES) > 600
