"""Shared helpers of the vector authoring script: case builders, outcome builders,
the requirement table and the completeness check of maximal cases."""

from __future__ import annotations

import base64
import json
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
VECTORS = HERE.parent
ROOT = VECTORS.parent
SCHEMA = json.loads((ROOT / "spec/acp/v1/schema.json").read_text())
DEFS = SCHEMA["$defs"]

CASES: dict[str, dict] = {}
MAX_CHECKS: list[tuple[str, str, object, str, set]] = []

ABSENT = object()

C2A = "client_to_agent"
A2C = "agent_to_client"


def compact(v) -> str:
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def case(cid, requirement, description, expect, *, input=ABSENT, input_text=None,
         input_base64=None, direction=C2A, pending=None):
    assert cid not in CASES, cid
    assert requirement in REQUIREMENTS, (cid, requirement)
    protocol = "jsonrpc" if cid.startswith("jsonrpc/") else "acp/v1"
    c = {
        "id": cid,
        "requirement": requirement,
        "description": description,
        "protocol": protocol,
        "direction": direction,
    }
    if pending is not None:
        c["pending"] = pending
    n = 0
    if input is not ABSENT:
        c["input"] = input
        n += 1
    if input_text is not None:
        c["input_text"] = input_text
        n += 1
    if input_base64 is not None:
        c["input_base64"] = input_base64
        n += 1
    assert n == 1, cid
    c["expect"] = expect
    CASES[cid] = c
    return c


def req(method, params=ABSENT, id=1):
    m = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not ABSENT:
        m["params"] = params
    return m


def notif(method, params=ABSENT):
    m = {"jsonrpc": "2.0", "method": method}
    if params is not ABSENT:
        m["params"] = params
    return m


def resp(id, result):
    return {"jsonrpc": "2.0", "id": id, "result": result}


def err(id, error):
    return {"jsonrpc": "2.0", "id": id, "error": error}


def pend(id, method):
    return {compact(id): method}


# expectations -----------------------------------------------------------------

def x_request(method, id, type_, params=ABSENT, warnings=None):
    e = {"outcome": "request", "method": method, "id": id, "type": type_}
    if params is not ABSENT:
        e["params"] = params
    if warnings is not None:
        e["warnings"] = warnings
    return e


def x_notification(method, type_, params=ABSENT, warnings=None):
    e = {"outcome": "notification", "method": method, "type": type_}
    if params is not ABSENT:
        e["params"] = params
    if warnings is not None:
        e["warnings"] = warnings
    return e


def x_response(id, method, type_, result=ABSENT, warnings=None):
    e = {"outcome": "response", "id": id, "method": method, "type": type_}
    if result is not ABSENT:
        e["result"] = result
    if warnings is not None:
        e["warnings"] = warnings
    return e


def x_reply_error(code, id, path=None):
    e = {"outcome": "reply_error", "error": {"code": code}, "id": id}
    if path is not None:
        e["error"]["path"] = path
    return e


def x_error_reply(id, code, message=None):
    e = {"outcome": "error_reply", "id": id, "error": {"code": code}}
    if message is not None:
        e["error"]["message"] = message
    return e


def x_call_failed(id, path):
    return {"outcome": "call_failed", "id": id, "path": path}


def x_ignored(finding):
    return {"outcome": "ignored", "finding": finding}



# shape walker: checks that `max` inputs carry every declared property ---------

from jsonschema import Draft202012Validator  # noqa: E402

_VCACHE: dict[int, Draft202012Validator] = {}


def _valid(node, value) -> bool:
    v = _VCACHE.get(id(node))
    if v is None:
        v = Draft202012Validator({**node, "$defs": DEFS})
        _VCACHE[id(node)] = v
    return v.is_valid(value)


def _applicable(node, value, out):
    """Collect the schema nodes that apply to `value` at this level."""
    while "$ref" in node and len(node) == 1:
        node = DEFS[node["$ref"].split("/")[-1]]
    if "$ref" in node:
        _applicable(DEFS[node["$ref"].split("/")[-1]], value, out)
    out.append(node)
    for s in node.get("allOf", []):
        _applicable(s, value, out)
    for key in ("anyOf", "oneOf"):
        if key in node:
            for b in node[key]:
                if _valid(b, value):
                    _applicable(b, value, out)
                    break


def _path(base, key):
    if isinstance(key, int):
        return f"{base}[{key}]"
    if key.replace("_", "a").isalnum() and not key[0].isdigit():
        return f"{base}.{key}"
    return f"{base}[{json.dumps(key)}]"


FREE_FORM = {"_meta", "rawInput", "rawOutput", "data"}


def completeness(type_name, value, base, allow):
    problems = []

    def walk(node, v, path):
        nodes = []
        _applicable(node, v, nodes)
        if isinstance(v, dict):
            props: dict[str, list] = {}
            amap = []
            for n in nodes:
                for k, s in n.get("properties", {}).items():
                    props.setdefault(k, []).append(s)
                ap = n.get("additionalProperties")
                if isinstance(ap, dict):
                    amap.append(ap)
            if props:
                for k in props:
                    if k not in v and _path(path, k) not in allow:
                        problems.append(f"missing {_path(path, k)}")
                for k in v:
                    if k not in props:
                        problems.append(f"undeclared {_path(path, k)}")
                    elif k not in FREE_FORM:
                        for s in props[k]:
                            walk(s, v[k], _path(path, k))
            elif amap:
                for k in v:
                    for s in amap:
                        walk(s, v[k], _path(path, k))
        elif isinstance(v, list):
            for n in nodes:
                if isinstance(n.get("items"), dict):
                    for i, item in enumerate(v):
                        walk(n["items"], item, _path(path, i))

    walk({"$ref": f"#/$defs/{type_name}"}, value, base)
    return sorted(set(problems))


def max_check(cid, type_name, value, base, allow=()):
    MAX_CHECKS.append((cid, type_name, value, base, set(allow)))



# requirements ------------------------------------------------------------------

S = "spec: spec/acp/v1/schema.json "
JR = "spec: JSON-RPC 2.0 specification, "

REQUIREMENTS: dict[str, dict] = {
    # envelope and framing
    "jsonrpc.id.type": {"source": S + "$defs/RequestId",
        "text": "A request id is an integer within int64, a string, or null; any other JSON value is an invalid request answered with id null."},
    "jsonrpc.id.null": {"source": S + "$defs/RequestId (Null branch)",
        "text": "ACP v1 admits a null request id, so a message with a method and \"id\": null is dispatched as a request whose id is null."},
    "jsonrpc.id.echo": {"source": JR + "section 5 (Response object)",
        "text": "An id is carried through unchanged: the receiver hands the handler, and echoes in replies, exactly the value it received, keeping strings and numbers distinct."},
    "jsonrpc.version": {"source": JR + "section 4 (Request object); " + S + "root `jsonrpc` enum",
        "text": "Every message carries \"jsonrpc\": \"2.0\" as a string; a missing or different value makes the message an invalid request, answered with the id when it can be read."},
    "jsonrpc.method.required": {"source": JR + "section 4 (Request object)",
        "text": "An object that is not a response must have a string `method`; otherwise it is an invalid request."},
    "jsonrpc.method.unknown": {"source": JR + "section 5.1 (error codes); spec: notes/acp.md section 8",
        "text": "A request for a method the receiver does not handle is answered with -32601, and a notification for such a method is dropped silently."},
    "jsonrpc.extension.dispatch": {"source": "spec: notes/acp.md section 8 (extension methods)",
        "text": "Methods whose name starts with `_` are extension methods: they are handed to the extension handler under their raw name with their params as free-form JSON."},
    "jsonrpc.message.object": {"source": JR + "section 4; sdk: only single objects are messages",
        "text": "A line whose JSON value is a scalar or null is not a message and is answered with -32600 and id null."},
    "jsonrpc.batch.rejected": {"source": "issue: agentclientprotocol/rust-sdk#454",
        "text": "Batches are not supported: any JSON array, empty or not, is answered with a single -32600 error with id null and none of its members is processed."},
    "jsonrpc.response.shape": {"source": JR + "section 5 (Response object)",
        "text": "A response carries exactly one of `result` and `error`; one with both is malformed, failing the pending call if its id is pending and ignored otherwise."},
    "jsonrpc.response.unmatched": {"source": JR + "section 5; sdk: responses are matched by id",
        "text": "A response whose id matches no pending request, including a same-looking id of another JSON type, is dropped without any reply."},
    "jsonrpc.response.result": {"source": JR + "section 5 (Response object)",
        "text": "A result response resolves the pending call with the same id, whatever JSON type that id has."},
    "jsonrpc.response.error": {"source": JR + "section 5.1 (Error object); " + S + "$defs/Error",
        "text": "An error response resolves the pending call with the peer's error object, whose code is any int32 (the code set is open) and whose data is free-form."},
    "jsonrpc.response.error-shape": {"source": S + "$defs/Error, $defs/ErrorCode",
        "text": "An error object needs an int32 `code` and a string `message`; a malformed one fails the pending call locally instead of being delivered."},
    "jsonrpc.framing.utf8": {"source": "spec: notes/acp.md section 2 (UTF-8 framing)",
        "text": "A line that is not valid UTF-8 is a parse error (-32700, id null)."},
    "jsonrpc.framing.parse-error": {"source": JR + "section 5.1 (-32700)",
        "text": "A line that is not one complete JSON value is a parse error (-32700, id null)."},
    "jsonrpc.framing.trailing-data": {"source": "sdk: one JSON value per line",
        "text": "Anything but whitespace after the JSON value on a line is a parse error (-32700, id null); whitespace before or after the value is allowed."},
    "jsonrpc.framing.line-end": {"source": "spec: notes/acp.md section 2 (accept CRLF)",
        "text": "A line may end in LF, in CRLF, or at end of input; the terminator is not part of the message."},
    "jsonrpc.framing.nesting": {"source": "sdk: nesting limit 128 (vectors/README.md)",
        "text": "JSON nested deeper than 128 levels is a parse error (-32700, id null); moderately deep free-form params are accepted unchanged."},
    "jsonrpc.envelope.duplicate-keys": {"source": "sdk: vectors/README.md decoding rule 11",
        "text": "A known envelope key (`jsonrpc`, `id`, `method`, `params`, `result`, `error`) that appears twice makes the message an invalid request; repeated unknown keys are not checked."},
    "jsonrpc.envelope.unknown-keys": {"source": JR + "section 4; sdk: decoding rule 1",
        "text": "Unknown top-level members of a message are ignored."},
    "jsonrpc.params.null-is-absent": {"source": S + "root (params may be null)",
        "text": "`\"params\": null` is treated exactly like absent params."},
    "jsonrpc.params.structured": {"source": JR + "section 4.2 (Parameter structures)",
        "text": "params, when present and not null, must be structured; a scalar params value is answered with -32602 at `$.params`."},
    "jsonrpc.strings.unicode": {"source": "spec: RFC 8259 section 7 (strings)",
        "text": "String escapes (including surrogate pairs and `\\/`) and raw non-ASCII UTF-8 decode to the same characters, in method names, ids and params alike."},
    "jsonrpc.method.long": {"source": "sdk: no limit on method name length",
        "text": "Method names are not length-limited by the decoder; a very long extension method name is dispatched unchanged."},
}



# jsonrpc/ ----------------------------------------------------------------------

ECHO = "_test/echo"
NOTE = "_test/notify"


def b64(b: bytes) -> str:
    return base64.b64encode(b).decode()
