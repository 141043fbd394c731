#!/usr/bin/env python3
"""Authoring script for the conformance vectors.

Re-running it rewrites vectors/jsonrpc/, vectors/acp/ and vectors/requirements.json
byte for byte (no random data). The committed artefacts are the JSON files; this
script only exists to keep them consistent.

    python3 vectors/tools/author.py          # write the files
    python3 vectors/tools/author.py --check  # exit 1 if the files on disk differ
"""
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


def build_jsonrpc():
    R = "jsonrpc.id.type"

    def ok_id(name, idv, desc, text=None, req_id=R):
        kw = {"input_text": text} if text is not None else {"input": req(ECHO, {"x": 1}, id=idv)}
        case(f"jsonrpc/id/{name}", req_id, desc, x_request(ECHO, idv, None, {"x": 1}), **kw)

    def bad_id(name, text, desc, echo=None):
        case(f"jsonrpc/id/{name}", R, desc, x_reply_error(-32600, echo), input_text=text)

    ok_id("int", 1, "A request with the integer id 1 is dispatched with id 1.")
    ok_id("int-negative", -7, "A request with a negative integer id is dispatched with that id.")
    ok_id("int-zero", 0, "A request with id 0 is dispatched with id 0 (zero is not treated as absent).")
    big = 9223372036854775807
    ok_id("int-i64-max", big, "A request whose id is the largest int64 is dispatched with that exact id.",
          text='{"jsonrpc":"2.0","id":9223372036854775807,"method":"_test/echo","params":{"x":1}}\n')
    ok_id("int-i64-min", -big - 1, "A request whose id is the smallest int64 is dispatched with that exact id.",
          text='{"jsonrpc":"2.0","id":-9223372036854775808,"method":"_test/echo","params":{"x":1}}\n')
    ok_id("string", "req-1", "A request with a string id is dispatched with that string id.")
    ok_id("string-empty", "", "A request with the empty string as id is dispatched with id \"\" (not treated as absent).")
    ok_id("string-numeric", "1", "A request with the string id \"1\" is dispatched with the string, not the number 1.",
          req_id="jsonrpc.id.echo")
    ok_id("string-escapes", "a\"b\\c\n\t\u00e9/", "A request whose string id contains escaped quote, backslash, newline, tab, a \\u escape and an escaped slash is dispatched with the decoded string.",
          text='{"jsonrpc":"2.0","id":"a\\"b\\\\c\\n\\t\\u00e9\\/","method":"_test/echo","params":{"x":1}}\n',
          req_id="jsonrpc.id.echo")
    ok_id("string-emoji", "\U0001F980", "A request whose string id is an emoji written as a surrogate-pair escape is dispatched with the decoded character.",
          text='{"jsonrpc":"2.0","id":"\\ud83e\\udd80","method":"_test/echo","params":{"x":1}}\n',
          req_id="jsonrpc.strings.unicode")
    case("jsonrpc/id/null", "jsonrpc.id.null",
         "A request with \"id\": null is dispatched as a request (ACP v1 allows a null id), not as a notification.",
         x_request(ECHO, None, None, {"x": 1}), input=req(ECHO, {"x": 1}, id=None))
    bad_id("int-above-i64", '{"jsonrpc":"2.0","id":9223372036854775808,"method":"_test/echo","params":{"x":1}}\n',
           "A request whose id is one above the largest int64 is rejected with -32600 and id null.")
    bad_id("int-below-i64", '{"jsonrpc":"2.0","id":-9223372036854775809,"method":"_test/echo","params":{"x":1}}\n',
           "A request whose id is one below the smallest int64 is rejected with -32600 and id null.")
    bad_id("int-huge", '{"jsonrpc":"2.0","id":100000000000000000000000000000,"method":"_test/echo"}\n',
           "A request whose id is a 30-digit integer is rejected with -32600 and id null.")
    bad_id("fraction", '{"jsonrpc":"2.0","id":1.5,"method":"_test/echo","params":{"x":1}}\n',
           "A request with a fractional id is rejected with -32600 and id null.")
    bad_id("exponent", '{"jsonrpc":"2.0","id":1e3,"method":"_test/echo","params":{"x":1}}\n',
           "A request whose id is written in exponent form (1e3) is rejected with -32600 and id null.")
    bad_id("exponent-negative", '{"jsonrpc":"2.0","id":-2E2,"method":"_test/echo"}\n',
           "A request whose id is written as -2E2 is rejected with -32600 and id null.")
    bad_id("bool", '{"jsonrpc":"2.0","id":true,"method":"_test/echo","params":{"x":1}}\n',
           "A request with a boolean id is rejected with -32600 and id null.")
    bad_id("object", '{"jsonrpc":"2.0","id":{"n":1},"method":"_test/echo","params":{"x":1}}\n',
           "A request with an object id is rejected with -32600 and id null.")
    bad_id("array", '{"jsonrpc":"2.0","id":[1],"method":"_test/echo","params":{"x":1}}\n',
           "A request with an array id is rejected with -32600 and id null.")

    # version ---------------------------------------------------------------
    V = "jsonrpc.version"
    case("jsonrpc/version/one-point-zero", V, "A request with \"jsonrpc\": \"1.0\" and id 5 is rejected with -32600 echoing id 5.",
         x_reply_error(-32600, 5), input={"jsonrpc": "1.0", "id": 5, "method": ECHO, "params": {}})
    case("jsonrpc/version/number", V, "A request with \"jsonrpc\": 2.0 as a number and id 5 is rejected with -32600 echoing id 5.",
         x_reply_error(-32600, 5), input_text='{"jsonrpc":2.0,"id":5,"method":"_test/echo","params":{}}\n')
    case("jsonrpc/version/missing", V, "A request without a `jsonrpc` member and with id \"abc\" is rejected with -32600 echoing id \"abc\".",
         x_reply_error(-32600, "abc"), input={"id": "abc", "method": ECHO, "params": {}})
    case("jsonrpc/version/null", V, "A request with \"jsonrpc\": null and id 6 is rejected with -32600 echoing id 6.",
         x_reply_error(-32600, 6), input={"jsonrpc": None, "id": 6, "method": ECHO})
    case("jsonrpc/version/padded", V, "A request with \"jsonrpc\": \"2.0 \" (trailing space) and id 8 is rejected with -32600 echoing id 8.",
         x_reply_error(-32600, 8), input={"jsonrpc": "2.0 ", "id": 8, "method": ECHO})
    case("jsonrpc/version/missing-notification", V, "A notification without a `jsonrpc` member is rejected with -32600 and id null (there is no id to echo).",
         x_reply_error(-32600, None), input={"method": NOTE, "params": {}})

    # method ----------------------------------------------------------------
    M = "jsonrpc.method.required"
    case("jsonrpc/method/missing-with-id", M, "An object with an id and params but no method and no result or error is rejected with -32600 echoing its id.",
         x_reply_error(-32600, 3), input={"jsonrpc": "2.0", "id": 3, "params": {}})
    case("jsonrpc/method/missing-without-id", M, "An object with only `jsonrpc` and `params` is rejected with -32600 and id null.",
         x_reply_error(-32600, None), input={"jsonrpc": "2.0", "params": {}})
    case("jsonrpc/method/number", M, "A request whose method is the number 42 is rejected with -32600 echoing its id.",
         x_reply_error(-32600, 4), input={"jsonrpc": "2.0", "id": 4, "method": 42})
    case("jsonrpc/method/null", M, "A request whose method is null is rejected with -32600 echoing its id.",
         x_reply_error(-32600, 4), input={"jsonrpc": "2.0", "id": 4, "method": None})
    case("jsonrpc/method/array", M, "A request whose method is an array of strings is rejected with -32600 echoing its id.",
         x_reply_error(-32600, "m"), input={"jsonrpc": "2.0", "id": "m", "method": ["_test/echo"]})
    case("jsonrpc/method/empty-object", M, "The empty object is rejected with -32600 and id null.",
         x_reply_error(-32600, None), input={})
    case("jsonrpc/method/only-version", M, "An object holding only \"jsonrpc\": \"2.0\" is rejected with -32600 and id null.",
         x_reply_error(-32600, None), input={"jsonrpc": "2.0"})
    case("jsonrpc/method/result-without-id", "jsonrpc.response.shape", "An object with `result` but no `id` is a malformed response; responses are never answered (answering could start a loop between two peers), so it is ignored.",
         x_ignored("invalid-response"), input={"jsonrpc": "2.0", "result": {}})
    U = "jsonrpc.method.unknown"
    case("jsonrpc/method/unknown-request", U, "A request for the unknown non-extension method `foo/bar` is answered with -32601 echoing its id.",
         x_reply_error(-32601, 9), input=req("foo/bar", {}, id=9))
    case("jsonrpc/method/unknown-notification", U, "A notification for the unknown non-extension method `foo/bar` is dropped without a reply.",
         x_ignored("unknown-notification"), input=notif("foo/bar", {}))
    case("jsonrpc/method/empty-string", U, "A request whose method is the empty string is answered with -32601 echoing its id.",
         x_reply_error(-32601, 10), input=req("", {}, id=10))
    case("jsonrpc/method/dollar-request", U, "A request for the undefined protocol method `$/ping` is answered with -32601.",
         x_reply_error(-32601, 11), input=req("$/ping", {}, id=11))
    case("jsonrpc/method/dollar-notification", U, "A notification for the undefined protocol method `$/progress` is dropped without a reply.",
         x_ignored("unknown-notification"), input=notif("$/progress", {"token": 1}))
    case("jsonrpc/method/case-sensitive", U, "Method names are case-sensitive: a request for `Session/Prompt` is answered with -32601.",
         x_reply_error(-32601, 12), input=req("Session/Prompt", {"sessionId": "s", "prompt": []}, id=12))
    E = "jsonrpc.extension.dispatch"
    case("jsonrpc/method/extension-request", E, "A request for the extension method `_test/echo` is dispatched under its raw name with type null and its params unchanged.",
         x_request(ECHO, 1, None, {"a": [1, 2, {"b": None}], "c": "d"}), input=req(ECHO, {"a": [1, 2, {"b": None}], "c": "d"}))
    case("jsonrpc/method/extension-notification", E, "A notification for the extension method `_test/notify` is dispatched under its raw name with type null.",
         x_notification(NOTE, None, {"n": 1}), input=notif(NOTE, {"n": 1}))
    case("jsonrpc/method/extension-vendor-name", E, "An extension request named like `_zed.dev/workspace/buffers` keeps its leading underscore and dots when dispatched.",
         x_request("_zed.dev/workspace/buffers", 2, None, {}), input=req("_zed.dev/workspace/buffers", {}, id=2))
    case("jsonrpc/method/long-name", "jsonrpc.method.long", "An extension request whose method name is 4096 characters long is dispatched with the full name.",
         x_request("_" + "x" * 4095, 1, None, {}), input=req("_" + "x" * 4095, {}))
    case("jsonrpc/method/unicode-name", "jsonrpc.strings.unicode", "An extension request whose method name contains non-ASCII characters sent as raw UTF-8 is dispatched with the same name.",
         x_request("_tëst/ünïcode", 1, None, {}), input=req("_tëst/ünïcode", {}))
    case("jsonrpc/method/escaped-slash", "jsonrpc.strings.unicode", "A method name written with an escaped slash (`_test\\/echo`) is dispatched as `_test/echo`.",
         x_request(ECHO, 1, None, {}), input_text='{"jsonrpc":"2.0","id":1,"method":"_test\\/echo","params":{}}\n')

    # responses ---------------------------------------------------------------
    P = pend(7, ECHO)
    case("jsonrpc/response/result", "jsonrpc.response.result", "A result response for the pending request 7 resolves it with the result.",
         x_response(7, ECHO, None, {"ok": True}), input=resp(7, {"ok": True}), pending=P)
    case("jsonrpc/response/result-null", "jsonrpc.response.result", "A result response whose result is null resolves the pending extension request with null.",
         x_response(7, ECHO, None, None), input=resp(7, None), pending=P)
    case("jsonrpc/response/result-string-id", "jsonrpc.response.result", "A result response with the string id \"a\" resolves the request pending under the string id \"a\".",
         x_response("a", ECHO, None, [1, 2]), input=resp("a", [1, 2]), pending={'"a"': ECHO, "1": ECHO})
    case("jsonrpc/response/result-null-id", "jsonrpc.id.null", "A result response with id null resolves a request that was sent with id null and is pending.",
         x_response(None, ECHO, None, {}), input=resp(None, {}), pending={"null": ECHO})
    case("jsonrpc/response/unknown-id", "jsonrpc.response.unmatched", "A result response whose id 99 is not pending is dropped without a reply.",
         x_ignored("unmatched-response"), input=resp(99, {}), pending=P)
    case("jsonrpc/response/unknown-id-error", "jsonrpc.response.unmatched", "An error response whose id 99 is not pending is dropped without a reply.",
         x_ignored("unmatched-response"), input=err(99, {"code": -32603, "message": "boom"}), pending=P)
    case("jsonrpc/response/id-type-mismatch", "jsonrpc.response.unmatched", "A result response with the string id \"7\" does not match the request pending under the number 7 and is dropped.",
         x_ignored("unmatched-response"), input=resp("7", {}), pending=P)
    case("jsonrpc/response/null-id-error-unmatched", "jsonrpc.response.unmatched", "An error response with id null (the peer could not read our id) matches nothing pending and is dropped without a reply.",
         x_ignored("unmatched-response"), input=err(None, {"code": -32700, "message": "Parse error"}), pending=P)
    RS = "jsonrpc.response.shape"
    case("jsonrpc/response/result-and-error-pending", RS, "A response carrying both `result` and `error` for the pending id 7 fails that call locally at path `$` and nothing is sent back.",
         x_call_failed(7, "$"), input={"jsonrpc": "2.0", "id": 7, "result": {}, "error": {"code": -32603, "message": "x"}}, pending=P)
    case("jsonrpc/response/result-and-error-unmatched", RS, "A response carrying both `result` and `error` whose id is not pending is dropped as an invalid response.",
         x_ignored("invalid-response"), input={"jsonrpc": "2.0", "id": 8, "result": {}, "error": {"code": -32603, "message": "x"}}, pending=P)
    ER = "jsonrpc.response.error"
    case("jsonrpc/response/error", ER, "An error response for the pending id 7 resolves the call with the peer's code and message.",
         x_error_reply(7, -32603, "Internal error"), input=err(7, {"code": -32603, "message": "Internal error"}), pending=P)
    case("jsonrpc/response/error-unknown-code", ER, "An error response with the non-standard code 12345 resolves the call with that code (the code set is open).",
         x_error_reply(7, 12345, "custom failure"), input=err(7, {"code": 12345, "message": "custom failure"}), pending=P)
    case("jsonrpc/response/error-with-data", ER, "An error response with structured `data` resolves the call with the error.",
         x_error_reply(7, -32002, "Resource not found"), input=err(7, {"code": -32002, "message": "Resource not found", "data": {"sessionId": "sess_1", "extra": [1, None]}}), pending=P)
    case("jsonrpc/response/error-data-string", ER, "An error response whose `data` is a plain string resolves the call with the error.",
         x_error_reply(7, -32000, "Authentication required"), input=err(7, {"code": -32000, "message": "Authentication required", "data": "login first"}), pending=P)
    case("jsonrpc/response/error-cancelled", ER, "An error response with -32800 (request cancelled) resolves the call with that code.",
         x_error_reply(7, -32800, "Request cancelled"), input=err(7, {"code": -32800, "message": "Request cancelled"}), pending=P)
    case("jsonrpc/response/error-int32-min", ER, "An error response with code -2147483648 (the smallest int32) resolves the call with that code.",
         x_error_reply(7, -2147483648, "edge"), input=err(7, {"code": -2147483648, "message": "edge"}), pending=P)
    ES = "jsonrpc.response.error-shape"
    case("jsonrpc/response/error-code-string", ES, "An error response whose code is a string fails the pending call at `$.error.code`.",
         x_call_failed(7, "$.error.code"), input=err(7, {"code": "-32603", "message": "x"}), pending=P)
    case("jsonrpc/response/error-code-fraction", ES, "An error response whose code is 1.5 fails the pending call at `$.error.code`.",
         x_call_failed(7, "$.error.code"), input=err(7, {"code": 1.5, "message": "x"}), pending=P)
    case("jsonrpc/response/error-code-above-int32", ES, "An error response whose code 2147483648 is outside int32 fails the pending call at `$.error.code`.",
         x_call_failed(7, "$.error.code"), input=err(7, {"code": 2147483648, "message": "x"}), pending=P)
    case("jsonrpc/response/error-message-missing", ES, "An error object without `message` fails the pending call at `$.error`, the object that lacks it.",
         x_call_failed(7, "$.error"), input=err(7, {"code": -32603}), pending=P)
    case("jsonrpc/response/error-not-object", ES, "An `error` member that is a string fails the pending call at `$.error`.",
         x_call_failed(7, "$.error"), input=err(7, "boom"), pending=P)

    # batches and scalars -------------------------------------------------------
    B = "jsonrpc.batch.rejected"
    case("jsonrpc/batch/empty", B, "The empty array is answered with one -32600 error with id null.",
         x_reply_error(-32600, None), input=[])
    case("jsonrpc/batch/one-request", B, "An array holding one valid request is answered with one -32600 error with id null and the request is not dispatched.",
         x_reply_error(-32600, None), input=[req(ECHO, {}, id=1)])
    case("jsonrpc/batch/two-messages", B, "An array holding a request and a notification is answered with one -32600 error with id null and neither is dispatched.",
         x_reply_error(-32600, None), input=[req(ECHO, {}, id=1), notif(NOTE, {})])
    case("jsonrpc/batch/scalars", B, "An array of numbers is answered with one -32600 error with id null.",
         x_reply_error(-32600, None), input=[1, 2, 3])
    O = "jsonrpc.message.object"
    case("jsonrpc/scalar/number", O, "A line holding the bare number 1 is answered with -32600 and id null.",
         x_reply_error(-32600, None), input=1)
    case("jsonrpc/scalar/string", O, "A line holding a bare JSON string is answered with -32600 and id null.",
         x_reply_error(-32600, None), input="hello")
    case("jsonrpc/scalar/true", O, "A line holding the bare value true is answered with -32600 and id null.",
         x_reply_error(-32600, None), input=True)
    case("jsonrpc/scalar/null", O, "A line holding the bare value null is answered with -32600 and id null.",
         x_reply_error(-32600, None), input=None)

    # framing ----------------------------------------------------------------
    good = '{"jsonrpc":"2.0","id":1,"method":"_test/echo","params":{"x":1}}'
    G = x_request(ECHO, 1, None, {"x": 1})
    F = "jsonrpc.framing.parse-error"
    case("jsonrpc/framing/invalid-utf8-in-string", "jsonrpc.framing.utf8", "A line whose string value contains the byte 0xFF (not UTF-8) is a parse error with id null.",
         x_reply_error(-32700, None), input_base64=b64(b'{"jsonrpc":"2.0","id":1,"method":"_test/echo","params":{"s":"a\xffb"}}\n'))
    case("jsonrpc/framing/invalid-utf8-truncated-sequence", "jsonrpc.framing.utf8", "A line containing a truncated two-byte UTF-8 sequence (0xC3 followed by a quote) is a parse error with id null.",
         x_reply_error(-32700, None), input_base64=b64(b'{"jsonrpc":"2.0","id":1,"method":"_test/echo","params":{"s":"\xc3"}}\n'))
    case("jsonrpc/framing/invalid-utf8-overlong", "jsonrpc.framing.utf8", "A line containing the overlong encoding 0xC0 0xAF is a parse error with id null.",
         x_reply_error(-32700, None), input_base64=b64(b'{"jsonrpc":"2.0","id":1,"method":"_test/echo","params":{"s":"\xc0\xaf"}}\n'))
    case("jsonrpc/framing/valid-utf8-raw", "jsonrpc.strings.unicode", "A line with raw multi-byte UTF-8 (two-, three- and four-byte sequences) inside params is accepted and decoded.",
         x_request(ECHO, 1, None, {"s": "é€🦀"}), input_base64=b64('{"jsonrpc":"2.0","id":1,"method":"_test/echo","params":{"s":"é€🦀"}}\n'.encode()))
    case("jsonrpc/framing/not-json", F, "A line of plain text is a parse error with id null.",
         x_reply_error(-32700, None), input_text="hello world\n")
    case("jsonrpc/framing/truncated-object", F, "A line holding a JSON object cut off in the middle is a parse error with id null.",
         x_reply_error(-32700, None), input_text='{"jsonrpc":"2.0","id":1,"method":"_test/ec\n')
    case("jsonrpc/framing/unclosed-brace", F, "A line whose object is missing its closing brace is a parse error with id null, even though the id was visible.",
         x_reply_error(-32700, None), input_text='{"jsonrpc":"2.0","id":1,"method":"_test/echo","params":{}\n')
    case("jsonrpc/framing/single-quotes", F, "A line using single-quoted strings is a parse error with id null.",
         x_reply_error(-32700, None), input_text="{'jsonrpc':'2.0','id':1,'method':'_test/echo'}\n")
    case("jsonrpc/framing/trailing-comma", F, "A line whose object has a trailing comma is a parse error with id null.",
         x_reply_error(-32700, None), input_text='{"jsonrpc":"2.0","id":1,"method":"_test/echo",}\n')
    case("jsonrpc/framing/unescaped-control", F, "A line whose string contains a raw tab character (unescaped control character) is a parse error with id null.",
         x_reply_error(-32700, None), input_text='{"jsonrpc":"2.0","id":1,"method":"_test/echo","params":{"s":"a\tb"}}\n')
    case("jsonrpc/framing/nan", F, "A line using the non-JSON literal NaN is a parse error with id null.",
         x_reply_error(-32700, None), input_text='{"jsonrpc":"2.0","id":1,"method":"_test/echo","params":{"n":NaN}}\n')
    T = "jsonrpc.framing.trailing-data"
    case("jsonrpc/framing/trailing-garbage", T, "A valid request followed on the same line by ` x` is a parse error with id null and is not dispatched.",
         x_reply_error(-32700, None), input_text=good + " x\n")
    case("jsonrpc/framing/two-objects", T, "Two valid requests on one line without a newline between them are a parse error with id null.",
         x_reply_error(-32700, None), input_text=good + good + "\n")
    case("jsonrpc/framing/trailing-whitespace", T, "A valid request followed by spaces and a tab before the newline is dispatched normally.",
         G, input_text=good + "  \t\n")
    case("jsonrpc/framing/leading-whitespace", T, "A valid request preceded by spaces is dispatched normally.",
         G, input_text="   " + good + "\n")
    L = "jsonrpc.framing.line-end"
    case("jsonrpc/framing/crlf", L, "A valid request terminated by CRLF is dispatched normally.",
         G, input_text=good + "\r\n")
    case("jsonrpc/framing/no-newline-at-eof", L, "A valid request at end of input without a terminating newline is dispatched normally.",
         G, input_text=good)
    case("jsonrpc/framing/pretty-whitespace-inside", L, "Insignificant whitespace between tokens (spaces and tabs) inside the object is accepted.",
         G, input_text='{ "jsonrpc" : "2.0" ,\t"id" : 1 , "method" : "_test/echo" , "params" : { "x" : 1 } }\n')
    N = "jsonrpc.framing.nesting"

    def nested(depth):
        v = {}
        for _ in range(depth - 1):
            v = {"a": v}
        return v

    case("jsonrpc/framing/nesting-200", N, "An extension request whose params are objects nested 200 levels deep exceeds the nesting limit and is a parse error with id null.",
         x_reply_error(-32700, None), input_text='{"jsonrpc":"2.0","id":1,"method":"_test/echo","params":' + compact(nested(200)) + "}\n")
    case("jsonrpc/framing/nesting-100", N, "An extension request whose params are objects nested 100 levels deep is within the limit and is dispatched with the params unchanged.",
         x_request(ECHO, 1, None, nested(100)), input=req(ECHO, nested(100)))
    case("jsonrpc/framing/nesting-arrays-200", N, "An extension request whose params hold arrays nested 200 levels deep is a parse error with id null.",
         x_reply_error(-32700, None), input_text='{"jsonrpc":"2.0","id":1,"method":"_test/echo","params":{"a":' + "[" * 200 + "]" * 200 + "}}\n")

    # envelope keys ------------------------------------------------------------
    D = "jsonrpc.envelope.duplicate-keys"
    case("jsonrpc/envelope/duplicate-id", D, "A request with two `id` members is rejected with -32600 and id null (no single id can be read).",
         x_reply_error(-32600, None), input_text='{"jsonrpc":"2.0","id":1,"id":2,"method":"_test/echo","params":{}}\n')
    case("jsonrpc/envelope/duplicate-method", D, "A request with two `method` members and id 1 is rejected with -32600 echoing id 1.",
         x_reply_error(-32600, 1), input_text='{"jsonrpc":"2.0","id":1,"method":"_test/echo","method":"_test/other","params":{}}\n')
    case("jsonrpc/envelope/duplicate-jsonrpc", D, "A request with `jsonrpc` given twice (both \"2.0\") and id 1 is rejected with -32600 echoing id 1.",
         x_reply_error(-32600, 1), input_text='{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"method":"_test/echo"}\n')
    case("jsonrpc/envelope/duplicate-params", D, "A request with two `params` members and id 1 is rejected with -32600 echoing id 1.",
         x_reply_error(-32600, 1), input_text='{"jsonrpc":"2.0","id":1,"method":"_test/echo","params":{},"params":{"x":1}}\n')
    case("jsonrpc/envelope/duplicate-unknown-key", D, "A request in which an unknown top-level key appears twice is dispatched normally (repeated unknown keys are not checked).",
         G, input_text='{"jsonrpc":"2.0","id":1,"method":"_test/echo","params":{"x":1},"extra":1,"extra":2}\n')
    case("jsonrpc/envelope/duplicate-key-in-extension-params", D, "Repeated keys inside the free-form params of an extension request are not checked and the request is dispatched.",
         x_request(ECHO, 1, None), input_text='{"jsonrpc":"2.0","id":1,"method":"_test/echo","params":{"x":1,"x":2}}\n')
    K = "jsonrpc.envelope.unknown-keys"
    case("jsonrpc/envelope/unknown-top-level-keys", K, "A request with extra top-level members (`extra`, `trace`) is dispatched and the extra members are ignored.",
         G, input={"jsonrpc": "2.0", "id": 1, "method": ECHO, "params": {"x": 1}, "extra": True, "trace": {"t": 1}})
    case("jsonrpc/envelope/key-order", K, "A request whose members come in an unusual order (params first, jsonrpc last) is dispatched normally.",
         G, input_text='{"params":{"x":1},"method":"_test/echo","id":1,"jsonrpc":"2.0"}\n')

    # params --------------------------------------------------------------------
    PN = "jsonrpc.params.null-is-absent"
    case("jsonrpc/params/absent-extension", PN, "An extension request without params is dispatched with type null.",
         x_request(ECHO, 1, None), input=req(ECHO))
    case("jsonrpc/params/null-extension", PN, "An extension request with \"params\": null is dispatched just like one without params.",
         x_request(ECHO, 1, None), input=req(ECHO, None))
    case("jsonrpc/params/absent-notification", PN, "An extension notification without params is dispatched with type null.",
         x_notification(NOTE, None), input=notif(NOTE))
    PS = "jsonrpc.params.structured"
    case("jsonrpc/params/scalar-number", PS, "An extension request whose params is the number 5 is answered with -32602 at `$.params`.",
         x_reply_error(-32602, 1, "$.params"), input=req(ECHO, 5))
    case("jsonrpc/params/scalar-string", PS, "An extension request whose params is a string is answered with -32602 at `$.params`.",
         x_reply_error(-32602, 1, "$.params"), input=req(ECHO, "x"))
    case("jsonrpc/params/scalar-bool", PS, "An extension request whose params is false is answered with -32602 at `$.params`.",
         x_reply_error(-32602, 1, "$.params"), input=req(ECHO, False))
    case("jsonrpc/params/unicode-values", "jsonrpc.strings.unicode", "Extension params holding escaped non-ASCII text, a surrogate pair and an escaped NUL are dispatched with the decoded strings.",
         x_request(ECHO, 1, None, {"s": "héllo 😀", "nul": "a\u0000b", "k\u00e9y": "v"}),
         input_text='{"jsonrpc":"2.0","id":1,"method":"_test/echo","params":{"s":"h\\u00e9llo \\ud83d\\ude00","nul":"a\\u0000b","k\\u00e9y":"v"}}\n')
    case("jsonrpc/params/big-free-form-numbers", "jsonrpc.extension.dispatch", "Free-form extension params holding a negative number, a fraction and an exponent number are dispatched unchanged in value.",
         x_request(ECHO, 1, None, {"a": -3, "b": 0.25, "c": 1000.0}),
         input_text='{"jsonrpc":"2.0","id":1,"method":"_test/echo","params":{"a":-3,"b":0.25,"c":1e3}}\n')


# shared ACP values -------------------------------------------------------------

SID = "sess_1"
CWD = "/home/user/project"


def mt(tag):
    """A small, distinct `_meta` object."""
    return {"example.com/at": tag}


def ann(tag):
    return {"audience": ["user", "assistant"], "lastModified": "2026-01-02T03:04:05Z",
            "priority": 0.5, "_meta": mt(tag + ".annotations")}


TEXT_MIN = {"type": "text", "text": "Hello"}
TEXT_MAX = {"type": "text", "text": "Hello", "annotations": ann("text"), "_meta": mt("text")}
IMAGE_MIN = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
IMAGE_MAX = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png", "uri": "file:///tmp/shot.png",
             "annotations": ann("image"), "_meta": mt("image")}
AUDIO_MIN = {"type": "audio", "data": "UklGRiQAAABXQVZF", "mimeType": "audio/wav"}
AUDIO_MAX = {"type": "audio", "data": "UklGRiQAAABXQVZF", "mimeType": "audio/wav",
             "annotations": ann("audio"), "_meta": mt("audio")}
LINK_MIN = {"type": "resource_link", "uri": "file:///repo/README.md", "name": "README.md"}
LINK_MAX = {"type": "resource_link", "uri": "file:///repo/README.md", "name": "README.md",
            "mimeType": "text/markdown", "title": "Readme", "description": "The project readme", "size": 1024,
            "annotations": ann("resource_link"), "_meta": mt("resource_link")}
RES_TEXT_MIN = {"type": "resource", "resource": {"uri": "file:///repo/src/main.rs", "text": "fn main() {}"}}
RES_TEXT_MAX = {"type": "resource", "resource": {"uri": "file:///repo/src/main.rs", "text": "fn main() {}",
                                                  "mimeType": "text/x-rust", "_meta": mt("resource.text")},
                "annotations": ann("resource"), "_meta": mt("resource")}
RES_BLOB_MIN = {"type": "resource", "resource": {"uri": "file:///repo/logo.bin", "blob": "AAECAw=="}}
RES_BLOB_MAX = {"type": "resource", "resource": {"uri": "file:///repo/logo.bin", "blob": "AAECAw==",
                                                  "mimeType": "application/octet-stream", "_meta": mt("resource.blob")},
                "annotations": ann("resource"), "_meta": mt("resource")}

TCC_CONTENT = {"type": "content", "content": TEXT_MAX, "_meta": mt("tool.content")}
TCC_DIFF = {"type": "diff", "path": "/repo/src/main.rs", "oldText": "fn main() {}",
            "newText": "fn main() { println!(\"hi\"); }", "_meta": mt("tool.diff")}
TCC_TERMINAL = {"type": "terminal", "terminalId": "term_1", "_meta": mt("tool.terminal")}
LOCATION_MAX = {"path": "/repo/src/main.rs", "line": 3, "_meta": mt("location")}

TOOL_CALL_MIN = {"sessionUpdate": "tool_call", "toolCallId": "call_1", "title": "Read main.rs"}
TOOL_CALL_MAX = {"sessionUpdate": "tool_call", "toolCallId": "call_1", "title": "Edit main.rs", "name": "edit_file",
                 "kind": "edit", "status": "in_progress", "content": [TCC_CONTENT, TCC_DIFF, TCC_TERMINAL],
                 "locations": [LOCATION_MAX], "rawInput": {"path": "/repo/src/main.rs", "lines": [1, 2]},
                 "rawOutput": {"ok": True}, "_meta": mt("tool_call")}
TOOL_UPDATE_FIELDS = {"toolCallId": "call_1", "kind": "execute", "status": "completed", "title": "Run tests",
                      "name": "bash", "content": [TCC_CONTENT, TCC_DIFF, TCC_TERMINAL], "locations": [LOCATION_MAX],
                      "rawInput": {"command": "cargo test"}, "rawOutput": {"exitCode": 0},
                      "_meta": mt("tool_call_update")}

ENV_MAX = {"name": "RUST_LOG", "value": "debug", "_meta": mt("env")}
HEADER_MAX = {"name": "Authorization", "value": "Bearer token", "_meta": mt("header")}
STDIO_MIN = {"name": "files", "command": "/usr/local/bin/mcp-files", "args": [], "env": []}
STDIO_MAX = {"name": "files", "command": "/usr/local/bin/mcp-files", "args": ["--root", "/repo"], "env": [ENV_MAX],
             "_meta": mt("mcp.stdio")}
HTTP_MIN = {"type": "http", "name": "web", "url": "https://mcp.example.com/mcp", "headers": []}
HTTP_MAX = {"type": "http", "name": "web", "url": "https://mcp.example.com/mcp", "headers": [HEADER_MAX],
            "_meta": mt("mcp.http")}
SSE_MIN = {"type": "sse", "name": "events", "url": "https://mcp.example.com/sse", "headers": []}
SSE_MAX = {"type": "sse", "name": "events", "url": "https://mcp.example.com/sse", "headers": [HEADER_MAX],
           "_meta": mt("mcp.sse")}

MODES_MAX = {"currentModeId": "ask",
             "availableModes": [{"id": "ask", "name": "Ask", "description": "Asks before acting", "_meta": mt("mode.ask")},
                                {"id": "code", "name": "Code", "description": "Edits freely", "_meta": mt("mode.code")}],
             "_meta": mt("modes")}
OPT_FAST = {"value": "fast", "name": "Fast", "description": "Quick answers", "_meta": mt("option.fast")}
OPT_SMART = {"value": "smart", "name": "Smart", "description": "Careful answers", "_meta": mt("option.smart")}
CFG_SELECT_FLAT = {"id": "model", "name": "Model", "description": "Which model answers", "category": "model",
                   "type": "select", "currentValue": "fast", "options": [OPT_FAST, OPT_SMART], "_meta": mt("config.model")}
CFG_SELECT_GROUPED = {"id": "effort", "name": "Effort", "description": "How hard to think", "category": "thought_level",
                      "type": "select", "currentValue": "fast",
                      "options": [{"group": "quick", "name": "Quick", "options": [OPT_FAST], "_meta": mt("group.quick")},
                                  {"group": "deep", "name": "Deep", "options": [OPT_SMART], "_meta": mt("group.deep")}],
                      "_meta": mt("config.effort")}
CFG_BOOLEAN = {"id": "web", "name": "Web search", "description": "Allow web search", "category": "model_config",
               "type": "boolean", "currentValue": True, "_meta": mt("config.web")}
CFG_SELECT_MIN = {"id": "model", "name": "Model", "type": "select", "currentValue": "fast",
                  "options": [{"value": "fast", "name": "Fast"}]}
CFG_BOOLEAN_MIN = {"id": "web", "name": "Web search", "type": "boolean", "currentValue": False}

STRING_PROP_MAX = {"type": "string", "title": "Email", "description": "Where to reach you", "minLength": 3,
                   "maxLength": 320, "pattern": "^.+@.+$", "format": "email", "default": "me@example.com",
                   "enum": ["me@example.com", "you@example.com"],
                   "oneOf": [{"const": "me@example.com", "title": "Me", "description": "My address", "_meta": mt("enum.me")}],
                   "_meta": mt("prop.email")}
NUMBER_PROP_MAX = {"type": "number", "title": "Budget", "description": "In euros", "minimum": 0.5, "maximum": 99.5,
                   "default": 10.25, "_meta": mt("prop.budget")}
INTEGER_PROP_MAX = {"type": "integer", "title": "Age", "description": "In years", "minimum": 0, "maximum": 150,
                    "default": 30, "_meta": mt("prop.age")}
BOOLEAN_PROP_MAX = {"type": "boolean", "title": "Subscribe", "description": "Send news", "default": False,
                    "_meta": mt("prop.subscribe")}
ARRAY_PROP_MAX = {"type": "array", "title": "Tags", "description": "Pick some", "minItems": 1, "maxItems": 3,
                  "items": {"type": "string", "enum": ["a", "b", "c"], "_meta": mt("items")}, "default": ["a"],
                  "_meta": mt("prop.tags")}
ARRAY_TITLED_PROP_MAX = {"type": "array", "title": "Colours", "description": "Pick colours", "minItems": 0, "maxItems": 2,
                         "items": {"anyOf": [{"const": "r", "title": "Red", "description": "Warm", "_meta": mt("enum.r")},
                                             {"const": "b", "title": "Blue", "description": "Cold", "_meta": mt("enum.b")}],
                                   "_meta": mt("items.titled")},
                         "default": ["r"], "_meta": mt("prop.colours")}
SCHEMA_MAX = {"type": "object", "title": "Contact details", "description": "We need a few things",
              "properties": {"email": STRING_PROP_MAX, "budget": NUMBER_PROP_MAX, "age": INTEGER_PROP_MAX,
                             "subscribe": BOOLEAN_PROP_MAX, "tags": ARRAY_PROP_MAX, "colours": ARRAY_TITLED_PROP_MAX},
              "required": ["email"], "_meta": mt("schema")}



# per-method specs ----------------------------------------------------------------

CLIENT_CAPS_DEFAULT = {"fs": {"readTextFile": False, "writeTextFile": False}, "terminal": False,
                       "auth": {"terminal": False}}
AGENT_CAPS_DEFAULT = {"loadSession": False, "promptCapabilities": {"image": False, "audio": False, "embeddedContext": False},
                      "mcpCapabilities": {"http": False, "sse": False}, "sessionCapabilities": {}, "auth": {}}

INIT_PARAMS_MAX = {
    "protocolVersion": 1,
    "clientCapabilities": {
        "fs": {"readTextFile": True, "writeTextFile": True, "_meta": mt("fs")},
        "terminal": True,
        "session": {"compaction": {}, "configOptions": {"boolean": {"_meta": mt("boolean")}, "_meta": mt("configOptions")},
                    "notices": {}, "_meta": mt("session")},
        "auth": {"terminal": True, "_meta": mt("auth")},
        "elicitation": {"form": {"_meta": mt("form")}, "url": {"_meta": mt("url")}, "_meta": mt("elicitation")},
        "_meta": {"zed.dev": {"workspace": True}},
    },
    "clientInfo": {"name": "my-editor", "title": "My Editor", "version": "1.0.0", "_meta": mt("clientInfo")},
    "_meta": mt("initialize"),
}
AUTH_AGENT_MAX = {"id": "agent-login", "name": "Log in", "description": "Opens a browser", "_meta": mt("auth.agent")}
AUTH_TERMINAL_MAX = {"type": "terminal", "id": "tty-login", "name": "Terminal login", "description": "Log in interactively",
                     "args": ["--login"], "env": {"LOGIN_MODE": "tty"}, "_meta": mt("auth.terminal")}
INIT_RESULT_MAX = {
    "protocolVersion": 1,
    "agentCapabilities": {
        "loadSession": True,
        "promptCapabilities": {"image": True, "audio": True, "embeddedContext": True, "_meta": mt("prompt")},
        "mcpCapabilities": {"http": True, "sse": True, "_meta": mt("mcp")},
        "sessionCapabilities": {"list": {"_meta": mt("list")}, "delete": {"_meta": mt("delete")},
                                "additionalDirectories": {"_meta": mt("dirs")}, "resume": {"_meta": mt("resume")},
                                "close": {"_meta": mt("close")}, "_meta": mt("sessionCapabilities")},
        "auth": {"logout": {"_meta": mt("logout")}, "_meta": mt("auth")},
        "_meta": mt("agentCapabilities"),
    },
    "authMethods": [AUTH_AGENT_MAX, AUTH_TERMINAL_MAX],
    "agentInfo": {"name": "my-agent", "title": "My Agent", "version": "0.1.0", "_meta": mt("agentInfo")},
    "_meta": mt("initialize.result"),
}
SESSION_SETUP_RESULT_MAX = {"modes": MODES_MAX, "configOptions": [CFG_SELECT_FLAT, CFG_SELECT_GROUPED, CFG_BOOLEAN]}
PERMISSION_OPTIONS_MAX = [
    {"optionId": "allow", "name": "Allow once", "kind": "allow_once", "_meta": mt("opt.allow")},
    {"optionId": "always", "name": "Always allow", "kind": "allow_always", "_meta": mt("opt.always")},
    {"optionId": "deny", "name": "Reject", "kind": "reject_once", "_meta": mt("opt.deny")},
    {"optionId": "never", "name": "Never", "kind": "reject_always", "_meta": mt("opt.never")},
]


def without(d, *keys):
    return {k: v for k, v in d.items() if k not in keys}


def with_(d, **kw):
    return {**d, **kw}


# Each spec: method, params (min, max), invalid params, results (min, max), invalid result.
# `missing`: (field, params) -> -32602 at $.params; `wrong`: (path, params, what);
# `result_bad`: (path, result, what).
METHOD_SPECS = [
    dict(method="initialize",
         params_min={"protocolVersion": 1},
         params_min_x={"protocolVersion": 1, "clientCapabilities": CLIENT_CAPS_DEFAULT},
         params_max=INIT_PARAMS_MAX,
         missing=("protocolVersion", {"clientCapabilities": {}}),
         wrong=("$.params.protocolVersion", {"protocolVersion": "1"}, "the string \"1\" as protocolVersion"),
         result_min={"protocolVersion": 1},
         result_min_x={"protocolVersion": 1, "agentCapabilities": AGENT_CAPS_DEFAULT, "authMethods": []},
         result_max=INIT_RESULT_MAX,
         result_bad=("$.result.protocolVersion", {"protocolVersion": -1}, "protocolVersion -1 (below uint16)")),
    dict(method="authenticate",
         params_min={"methodId": "agent-login"},
         params_max={"methodId": "agent-login", "_meta": mt("authenticate")},
         missing=("methodId", {}),
         wrong=("$.params.methodId", {"methodId": 7}, "a number as methodId"),
         result_min={}, result_max={"_meta": mt("authenticate.result")},
         result_bad=("$.result", "ok", "the string \"ok\" as the result"),
         result_bad_name="result-string"),
    dict(method="logout",
         params_min={}, params_max={"_meta": mt("logout")},
         wrong=("$.params", ["x"], "an array as params"),
         result_min={}, result_max={"_meta": mt("logout.result")},
         result_bad=("$.result", [], "an array as the result"),
         result_bad_name="result-array"),
    dict(method="session/new",
         params_min={"cwd": CWD, "mcpServers": []},
         params_max={"cwd": CWD, "additionalDirectories": ["/home/user/shared", "/opt/data"],
                     "mcpServers": [STDIO_MAX, HTTP_MAX, SSE_MAX], "_meta": mt("session/new")},
         missing=("mcpServers", {"cwd": CWD}),
         wrong=("$.params.cwd", {"cwd": 42, "mcpServers": []}, "a number as cwd"),
         result_min={"sessionId": SID},
         result_max={"sessionId": SID, **SESSION_SETUP_RESULT_MAX, "_meta": mt("session/new.result")},
         result_bad=("$.result", {"modes": None}, "a result without sessionId"),
         result_bad_name="result-missing-session-id"),
    dict(method="session/load",
         params_min={"sessionId": SID, "cwd": CWD, "mcpServers": []},
         params_max={"sessionId": SID, "cwd": CWD, "additionalDirectories": ["/home/user/shared"],
                     "mcpServers": [STDIO_MAX, HTTP_MAX], "_meta": mt("session/load")},
         missing=("sessionId", {"cwd": CWD, "mcpServers": []}),
         wrong=("$.params.mcpServers", {"sessionId": SID, "cwd": CWD, "mcpServers": {}}, "an object as mcpServers"),
         result_min={},
         result_max={**SESSION_SETUP_RESULT_MAX, "_meta": mt("session/load.result")},
         result_bad=("$.result", 5, "the number 5 as the result"),
         result_bad_name="result-number"),
    dict(method="session/list",
         params_min={}, params_max={"cwd": CWD, "cursor": "opaque-cursor-2", "_meta": mt("session/list")},
         wrong=("$.params.cursor", {"cursor": 2}, "a number as cursor"),
         result_min={"sessions": []},
         result_max={"sessions": [{"sessionId": SID, "cwd": CWD, "additionalDirectories": ["/opt/data"],
                                   "title": "Fix the build", "updatedAt": "2026-03-04T05:06:07Z", "_meta": mt("info")}],
                     "nextCursor": "opaque-cursor-3", "_meta": mt("session/list.result")},
         result_bad=("$.result", {"nextCursor": "c"}, "a result without sessions"),
         result_bad_name="result-missing-sessions"),
    dict(method="session/delete",
         params_min={"sessionId": SID}, params_max={"sessionId": SID, "_meta": mt("session/delete")},
         missing=("sessionId", {}),
         wrong=("$.params.sessionId", {"sessionId": None}, "null as sessionId"),
         result_min={}, result_max={"_meta": mt("session/delete.result")},
         result_bad=("$.result", True, "true as the result"),
         result_bad_name="result-bool"),
    dict(method="session/resume",
         params_min={"sessionId": SID, "cwd": CWD},
         params_max={"sessionId": SID, "cwd": CWD, "additionalDirectories": ["/opt/data"],
                     "mcpServers": [SSE_MAX], "_meta": mt("session/resume")},
         missing=("cwd", {"sessionId": SID}),
         wrong=("$.params.additionalDirectories[1]", {"sessionId": SID, "cwd": CWD, "additionalDirectories": ["/a", 3]},
                "a number inside additionalDirectories"),
         result_min={}, result_max={**SESSION_SETUP_RESULT_MAX, "_meta": mt("session/resume.result")},
         result_bad=("$.result", "resumed", "a string as the result"),
         result_bad_name="result-string"),
    dict(method="session/close",
         params_min={"sessionId": SID}, params_max={"sessionId": SID, "_meta": mt("session/close")},
         missing=("sessionId", {"_meta": {}}),
         wrong=("$.params.sessionId", {"sessionId": ["sess_1"]}, "an array as sessionId"),
         result_min={}, result_max={"_meta": mt("session/close.result")},
         result_bad=("$.result", [{}], "an array as the result"),
         result_bad_name="result-array"),
    dict(method="session/set_mode",
         params_min={"sessionId": SID, "modeId": "code"},
         params_max={"sessionId": SID, "modeId": "code", "_meta": mt("session/set_mode")},
         missing=("modeId", {"sessionId": SID}),
         wrong=("$.params.modeId", {"sessionId": SID, "modeId": {"id": "code"}}, "an object as modeId"),
         result_min={}, result_max={"_meta": mt("session/set_mode.result")},
         result_bad=("$.result", 0, "the number 0 as the result"),
         result_bad_name="result-number"),
    dict(method="session/set_config_option",
         params_min={"sessionId": SID, "configId": "model", "value": "smart"},
         params_max={"sessionId": SID, "configId": "web", "type": "boolean", "value": True,
                     "_meta": mt("session/set_config_option")},
         missing=("configId", {"sessionId": SID, "value": "smart"}),
         wrong=("$.params.value", {"sessionId": SID, "configId": "model", "value": 3}, "a number as value"),
         result_min={"configOptions": []},
         result_max={"configOptions": [CFG_SELECT_FLAT, CFG_SELECT_GROUPED, CFG_BOOLEAN],
                     "_meta": mt("session/set_config_option.result")},
         result_bad=("$.result", {}, "a result without configOptions"),
         result_bad_name="result-missing-config-options"),
    dict(method="session/prompt",
         params_min={"sessionId": SID, "prompt": [TEXT_MIN]},
         params_max={"sessionId": SID, "prompt": [TEXT_MAX, IMAGE_MAX, AUDIO_MAX, LINK_MAX, RES_TEXT_MAX, RES_BLOB_MAX],
                     "_meta": mt("session/prompt")},
         missing=("prompt", {"sessionId": SID}),
         wrong=("$.params.prompt", {"sessionId": SID, "prompt": "Hello"}, "a string as prompt"),
         result_min={"stopReason": "end_turn"},
         result_max={"stopReason": "max_turn_requests", "_meta": mt("session/prompt.result")},
         result_bad=("$.result.stopReason", {"stopReason": "finished"}, "the unknown stop reason \"finished\"")),
    dict(method="session/cancel",
         params_min={"sessionId": SID}, params_max={"sessionId": SID, "_meta": mt("session/cancel")},
         missing=("sessionId", {}),
         wrong=("$.params.sessionId", {"sessionId": 1}, "a number as sessionId")),
    dict(method="session/request_permission",
         params_min={"sessionId": SID, "toolCall": {"toolCallId": "call_1"}, "options": []},
         params_max={"sessionId": SID, "toolCall": TOOL_UPDATE_FIELDS, "options": PERMISSION_OPTIONS_MAX,
                     "_meta": mt("session/request_permission")},
         missing=("options", {"sessionId": SID, "toolCall": {"toolCallId": "call_1"}}),
         wrong=("$.params.options[0].kind", {"sessionId": SID, "toolCall": {"toolCallId": "call_1"},
                                             "options": [{"optionId": "a", "name": "A", "kind": "allow_sometimes"}]},
                "the unknown permission kind \"allow_sometimes\""),
         result_min={"outcome": {"outcome": "cancelled"}},
         result_max={"outcome": {"outcome": "selected", "optionId": "allow", "_meta": mt("outcome")},
                     "_meta": mt("session/request_permission.result")},
         result_bad=("$.result.outcome", {"outcome": {"outcome": "selected"}}, "a selected outcome without optionId")),
    dict(method="fs/read_text_file",
         params_min={"sessionId": SID, "path": "/repo/src/main.rs"},
         params_max={"sessionId": SID, "path": "/repo/src/main.rs", "line": 10, "limit": 50,
                     "_meta": mt("fs/read_text_file")},
         missing=("path", {"sessionId": SID}),
         wrong=("$.params.line", {"sessionId": SID, "path": "/repo/a", "line": "10"}, "a string as line"),
         result_min={"content": ""},
         result_max={"content": "fn main() {}\n", "_meta": mt("fs/read_text_file.result")},
         result_bad=("$.result.content", {"content": None}, "null as content")),
    dict(method="fs/write_text_file",
         params_min={"sessionId": SID, "path": "/repo/notes.txt", "content": ""},
         params_max={"sessionId": SID, "path": "/repo/notes.txt", "content": "line 1\nline 2\n",
                     "_meta": mt("fs/write_text_file")},
         missing=("content", {"sessionId": SID, "path": "/repo/notes.txt"}),
         wrong=("$.params.content", {"sessionId": SID, "path": "/repo/notes.txt", "content": ["a"]}, "an array as content"),
         result_min={}, result_max={"_meta": mt("fs/write_text_file.result")},
         result_bad=("$.result", "written", "a string as the result"),
         result_bad_name="result-string"),
    dict(method="terminal/create",
         params_min={"sessionId": SID, "command": "cargo"},
         params_max={"sessionId": SID, "command": "cargo", "args": ["test", "--all"], "env": [ENV_MAX],
                     "cwd": "/repo", "outputByteLimit": 1048576, "_meta": mt("terminal/create")},
         missing=("command", {"sessionId": SID, "args": ["test"]}),
         wrong=("$.params.env[0]", {"sessionId": SID, "command": "cargo", "env": [{"name": "A"}]},
                "an env entry without value"),
         result_min={"terminalId": "term_1"},
         result_max={"terminalId": "term_1", "_meta": mt("terminal/create.result")},
         result_bad=("$.result", {}, "a result without terminalId"),
         result_bad_name="result-missing-terminal-id"),
    dict(method="terminal/output",
         params_min={"sessionId": SID, "terminalId": "term_1"},
         params_max={"sessionId": SID, "terminalId": "term_1", "_meta": mt("terminal/output")},
         missing=("terminalId", {"sessionId": SID}),
         wrong=("$.params.terminalId", {"sessionId": SID, "terminalId": 1}, "a number as terminalId"),
         result_min={"output": "", "truncated": False},
         result_max={"output": "running 3 tests\n", "truncated": True,
                     "exitStatus": {"exitCode": 101, "signal": "SIGTERM", "_meta": mt("exitStatus")},
                     "_meta": mt("terminal/output.result")},
         result_bad=("$.result.truncated", {"output": "x", "truncated": "no"}, "a string as truncated")),
    dict(method="terminal/wait_for_exit",
         params_min={"sessionId": SID, "terminalId": "term_1"},
         params_max={"sessionId": SID, "terminalId": "term_1", "_meta": mt("terminal/wait_for_exit")},
         missing=("sessionId", {"terminalId": "term_1"}),
         wrong=("$.params.sessionId", {"sessionId": {}, "terminalId": "term_1"}, "an object as sessionId"),
         result_min={},
         result_max={"exitCode": 0, "signal": "SIGKILL", "_meta": mt("terminal/wait_for_exit.result")},
         result_bad=("$.result", "exited", "a string as the result"),
         result_bad_name="result-string"),
    dict(method="terminal/kill",
         params_min={"sessionId": SID, "terminalId": "term_1"},
         params_max={"sessionId": SID, "terminalId": "term_1", "_meta": mt("terminal/kill")},
         missing=("terminalId", {"sessionId": SID}),
         wrong=("$.params.terminalId", {"sessionId": SID, "terminalId": None}, "null as terminalId"),
         result_min={}, result_max={"_meta": mt("terminal/kill.result")},
         result_bad=("$.result", 1, "the number 1 as the result"),
         result_bad_name="result-number"),
    dict(method="terminal/release",
         params_min={"sessionId": SID, "terminalId": "term_1"},
         params_max={"sessionId": SID, "terminalId": "term_1", "_meta": mt("terminal/release")},
         missing=("terminalId", {"sessionId": SID}),
         wrong=("$.params.sessionId", {"sessionId": True, "terminalId": "term_1"}, "true as sessionId"),
         result_min={}, result_max={"_meta": mt("terminal/release.result")},
         result_bad=("$.result", ["released"], "an array as the result"),
         result_bad_name="result-array"),
    dict(method="elicitation/create",
         params_min={"message": "Need details", "mode": "form", "sessionId": SID, "requestedSchema": {}},
         params_min_x={"message": "Need details", "mode": "form", "sessionId": SID,
                       "requestedSchema": {"type": "object", "properties": {}}},
         params_max={"message": "Please fill in your details", "mode": "form", "sessionId": SID, "toolCallId": "call_1",
                     "requestedSchema": SCHEMA_MAX, "_meta": mt("elicitation/create")},
         missing=("message", {"mode": "form", "sessionId": SID, "requestedSchema": {}}),
         wrong=("$.params.message", {"message": 5, "mode": "form", "sessionId": SID, "requestedSchema": {}},
                "a number as message"),
         result_min={"action": "cancel"},
         result_max={"action": "accept",
                     "content": {"email": "me@example.com", "budget": 12.5, "age": 41, "subscribe": True, "tags": ["a", "b"]},
                     "_meta": mt("elicitation/create.result")},
         result_bad=("$.result.content.age", {"action": "accept", "content": {"age": {"years": 41}}},
                     "an object as a content value")),
    dict(method="session/update",
         params_min={"sessionId": SID, "update": {"sessionUpdate": "agent_message_chunk", "content": TEXT_MIN}},
         params_max={"sessionId": SID, "update": TOOL_CALL_MAX, "_meta": mt("session/update")},
         missing=("update", {"sessionId": SID}),
         wrong=("$.params.update", {"sessionId": SID, "update": "hello"}, "a string as update")),
    dict(method="elicitation/complete",
         params_min={"elicitationId": "elic_1"},
         params_max={"elicitationId": "elic_1", "_meta": mt("elicitation/complete")},
         missing=("elicitationId", {}),
         wrong=("$.params.elicitationId", {"elicitationId": 1}, "a number as elicitationId")),
    dict(method="$/cancel_request",
         params_min={"requestId": 7},
         params_max={"requestId": "req-7", "_meta": mt("$/cancel_request")},
         missing=("requestId", {"_meta": {}}),
         wrong=("$.params.requestId", {"requestId": 1.5}, "the fraction 1.5 as requestId")),
]



# acp/v1/<method>/ --------------------------------------------------------------

def method_info(m):
    params_t = result_t = side = None
    for name, d in DEFS.items():
        if d.get("x-method") != m:
            continue
        side = d["x-side"]
        if name.endswith("Response"):
            result_t = name
        else:
            params_t = name
    kind = "request" if result_t else "notification"
    return kind, side, params_t, result_t


def folder(m):
    return "acp/v1/" + m.replace("/", ".")


def sender(side):
    return {"agent": C2A, "client": A2C, "protocol": C2A}[side]


def other(direction):
    return A2C if direction == C2A else C2A


def has_required(type_name):
    d = DEFS[type_name]
    return bool(d.get("required"))


def kebab(name):
    out = ""
    for ch in name:
        out += ("-" + ch.lower()) if ch.isupper() else ch
    return out


def last_segment(path):
    seg = path.replace("]", "").replace("[", ".").split(".")[-1]
    return kebab(seg.strip('"'))


def a_(m):
    return "An" if m[0] in "aeiou" else "A"


def build_methods():
    for spec in METHOD_SPECS:
        m = spec["method"]
        kind, side, pt, rt = method_info(m)
        assert pt, m
        f = folder(m)
        d = sender(side)
        RP = f"acp.v1.params.{m}"
        REQUIREMENTS[RP] = {"source": S + f"$defs/{pt}",
                            "text": f"The params of `{m}` decode as `{pt}`: required members present and well-typed, optional ones lenient only where the schema says so."}
        noun = "request" if kind == "request" else "notification"

        def send(params=ABSENT, id=1):
            return req(m, params, id=id) if kind == "request" else notif(m, params)

        def ok(params=ABSENT, warnings=None):
            if kind == "request":
                return x_request(m, 1, pt, params, warnings)
            return x_notification(m, pt, params, warnings)

        def bad(path):
            if kind == "request":
                return x_reply_error(-32602, 1, path)
            return x_ignored("invalid-notification")

        def bad_desc(what, path):
            if kind == "request":
                return f"answered with -32602 at `{path}`"
            return f"dropped without a reply (validation fails at `{path}`)"

        dirs = [d] if side != "protocol" else [C2A, A2C]
        for dd in dirs:
            suffix = "" if side != "protocol" else ("-from-client" if dd == C2A else "-from-agent")
            sender_name = "client" if dd == C2A else "agent"
            mx = spec.get("params_min_x", ABSENT)
            extra = " and re-encodes with the schema defaults filled in" if mx is not ABSENT else ""
            case(f"{f}/params-min{suffix}", RP,
                 f"{a_(m)} `{m}` {noun} sent by the {sender_name} with only the required params is dispatched as `{pt}`{extra}.",
                 ok(mx), input=send(spec["params_min"]), direction=dd)
        case(f"{f}/params-max", RP,
             f"{a_(m)} `{m}` {noun} carrying every optional field, with `_meta` on every object that allows it, is dispatched as `{pt}` and re-encodes unchanged.",
             ok(spec["params_max"]), input=send(spec["params_max"]), direction=d)
        max_check(f"{f}/params-max", pt, spec["params_max"], "$.params")
        if "missing" in spec:
            field, params = spec["missing"]
            case(f"{f}/params-missing-{kebab(field)}", RP,
                 f"{a_(m)} `{m}` {noun} whose params lack the required `{field}` is {bad_desc(field, '$.params')}, the path of the object that lacks it.",
                 bad("$.params"), input=send(params), direction=d)
        path, params, what = spec["wrong"]
        case(f"{f}/params-wrong-type-{last_segment(path)}", RP,
             f"{a_(m)} `{m}` {noun} with {what} is {bad_desc(what, path)}.",
             bad(path), input=send(params), direction=d)
        if has_required(pt):
            case(f"{f}/params-absent", RP,
                 f"{a_(m)} `{m}` {noun} without params, although `{pt}` has required members, is {bad_desc('', '$.params')}.",
                 bad("$.params"), input=send(), direction=d)
        else:
            case(f"{f}/params-absent", "jsonrpc.params.null-is-absent",
                 f"{a_(m)} `{m}` {noun} without params decodes as an empty `{pt}` because none of its members is required.",
                 ok({}), input=send(), direction=d)
            case(f"{f}/params-null", "jsonrpc.params.null-is-absent",
                 f"{a_(m)} `{m}` {noun} with \"params\": null decodes as an empty `{pt}`, exactly like absent params.",
                 ok({}), input=send(None), direction=d)
        if side != "protocol":
            if kind == "request":
                case(f"{f}/wrong-direction", "acp.v1.direction",
                     f"{a_(m)} `{m}` request sent by the {'agent' if d == C2A else 'client'} reaches the side that does not handle it and is answered with -32601.",
                     x_reply_error(-32601, 1), input=send(spec["params_min"]), direction=other(d))
            else:
                case(f"{f}/wrong-direction", "acp.v1.direction",
                     f"{a_(m)} `{m}` notification sent by the {'agent' if d == C2A else 'client'} reaches the side that does not handle it and is dropped as unknown.",
                     x_ignored("unknown-notification"), input=send(spec["params_min"]), direction=other(d))
        if kind != "request":
            continue
        RR = f"acp.v1.result.{m}"
        REQUIREMENTS[RR] = {"source": S + f"$defs/{rt}",
                            "text": f"The result of `{m}` decodes as `{rt}` when the response matches a pending `{m}` call."}
        rd = other(d)
        P = pend(3, m)
        rmx = spec.get("result_min_x", ABSENT)
        extra = " and re-encodes with the schema defaults filled in" if rmx is not ABSENT else ""
        case(f"{f}/result-min", RR,
             f"A response to a pending `{m}` call whose result holds only the required members is decoded as `{rt}`{extra}.",
             x_response(3, m, rt, rmx), input=resp(3, spec["result_min"]), direction=rd, pending=P)
        case(f"{f}/result-max", RR,
             f"A response to a pending `{m}` call whose result carries every optional field, with `_meta` on every object that allows it, is decoded as `{rt}` and re-encodes unchanged.",
             x_response(3, m, rt, spec["result_max"]), input=resp(3, spec["result_max"]), direction=rd, pending=P)
        max_check(f"{f}/result-max", rt, spec["result_max"], "$.result")
        path, result, what = spec["result_bad"]
        slug = spec.get("result_bad_name") or f"result-invalid-{last_segment(path)}"
        case(f"{f}/{slug}", RR,
             f"A response to a pending `{m}` call with {what} fails the call locally at `{path}` and nothing is sent back.",
             x_call_failed(3, path), input=resp(3, result), direction=rd, pending=P)

    build_method_extras()



# method extras ------------------------------------------------------------------

def build_method_extras():
    case("acp/v1/session.load/result-null", "acp.v1.result.empty-null",
         "A `session/load` response whose result is null (as the prose docs show) is accepted as an empty `LoadSessionResponse` and re-encodes as {}.",
         x_response(3, "session/load", "LoadSessionResponse", {}), input=resp(3, None), direction=A2C,
         pending=pend(3, "session/load"))
    case("acp/v1/session.load/result-with-session-id", "acp.v1.fields.unknown-dropped",
         "A `session/load` result that carries a `sessionId` (not part of `LoadSessionResponse`) is accepted and the extra member is dropped on re-encoding.",
         x_response(3, "session/load", "LoadSessionResponse", {"modes": MODES_MAX}),
         input=resp(3, {"sessionId": SID, "modes": MODES_MAX}), direction=A2C, pending=pend(3, "session/load"))
    case("acp/v1/fs.write_text_file/result-null", "acp.v1.result.empty-null",
         "A `fs/write_text_file` response whose result is null is accepted as an empty `WriteTextFileResponse` and re-encodes as {}.",
         x_response(3, "fs/write_text_file", "WriteTextFileResponse", {}), input=resp(3, None), direction=C2A,
         pending=pend(3, "fs/write_text_file"))
    case("acp/v1/authenticate/result-null", "acp.v1.result.empty-null",
         "An `authenticate` response whose result is null is accepted as an empty `AuthenticateResponse` and re-encodes as {}.",
         x_response(3, "authenticate", "AuthenticateResponse", {}), input=resp(3, None), direction=A2C,
         pending=pend(3, "authenticate"))
    case("acp/v1/session.prompt/result-null", "acp.v1.result.session/prompt",
         "A `session/prompt` response whose result is null fails the call at `$.result`, because `PromptResponse` requires `stopReason`.",
         x_call_failed(3, "$.result"), input=resp(3, None), direction=A2C, pending=pend(3, "session/prompt"))
    for stop in ("end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"):
        case(f"acp/v1/session.prompt/result-stop-{stop.replace('_', '-')}", "acp.v1.result.session/prompt",
             f"A `session/prompt` response with stopReason \"{stop}\" is decoded as `PromptResponse`.",
             x_response(3, "session/prompt", "PromptResponse", {"stopReason": stop}),
             input=resp(3, {"stopReason": stop}), direction=A2C, pending=pend(3, "session/prompt"))
    case("acp/v1/session.prompt/error-reply-auth-required", "acp.v1.error-reply",
         "An error response -32000 (authentication required) to a pending `session/prompt` call resolves it with that error.",
         x_error_reply(3, -32000, "Authentication required"),
         input=err(3, {"code": -32000, "message": "Authentication required"}), direction=A2C, pending=pend(3, "session/prompt"))
    case("acp/v1/session.prompt/error-reply-resource-not-found", "acp.v1.error-reply",
         "An error response -32002 with `data.sessionId` to a pending `session/prompt` call resolves it with that error.",
         x_error_reply(3, -32002, "Resource not found"),
         input=err(3, {"code": -32002, "message": "Resource not found", "data": {"sessionId": SID}}), direction=A2C,
         pending=pend(3, "session/prompt"))
    case("acp/v1/session.request_permission/error-reply-cancelled", "acp.v1.error-reply",
         "An error response -32800 (request cancelled) to a pending `session/request_permission` call resolves it with that error.",
         x_error_reply(3, -32800, "Request cancelled"),
         input=err(3, {"code": -32800, "message": "Request cancelled"}), direction=C2A,
         pending=pend(3, "session/request_permission"))
    case("acp/v1/session.prompt/params-array", "jsonrpc.params.structured",
         "A `session/prompt` request whose params is an array (by-position params) is answered with -32602 at `$.params`.",
         x_reply_error(-32602, 1, "$.params"), input=req("session/prompt", [SID, [TEXT_MIN]]))
    case("acp/v1/session.prompt/params-scalar", "jsonrpc.params.structured",
         "A `session/prompt` request whose params is a string is answered with -32602 at `$.params`.",
         x_reply_error(-32602, 1, "$.params"), input=req("session/prompt", "hello"))
    case("acp/v1/session.prompt/prompt-empty", "acp.v1.params.session/prompt",
         "A `session/prompt` request with an empty prompt array is valid and is dispatched as `PromptRequest`.",
         x_request("session/prompt", 1, "PromptRequest", {"sessionId": SID, "prompt": []}),
         input=req("session/prompt", {"sessionId": SID, "prompt": []}))
    case("acp/v1/session.prompt/id-string", "jsonrpc.id.echo",
         "A `session/prompt` request with a string id is dispatched with that id.",
         x_request("session/prompt", "p-1", "PromptRequest"), input=req("session/prompt", {"sessionId": SID, "prompt": [TEXT_MIN]}, id="p-1"))
    case("acp/v1/session.prompt/id-null", "jsonrpc.id.null",
         "A `session/prompt` request with id null is dispatched as a request with id null.",
         x_request("session/prompt", None, "PromptRequest"), input=req("session/prompt", {"sessionId": SID, "prompt": [TEXT_MIN]}, id=None))
    K = "acp.v1.dispatch.kind"
    case("acp/v1/session.prompt/sent-as-notification", K,
         "A `session/prompt` message without an id is a notification the agent does not know (the method is a request) and is dropped.",
         x_ignored("unknown-notification"), input=notif("session/prompt", {"sessionId": SID, "prompt": [TEXT_MIN]}))
    case("acp/v1/session.cancel/sent-as-request", K,
         "A `session/cancel` message with an id is a request the agent does not know (the method is a notification) and is answered with -32601.",
         x_reply_error(-32601, 4), input=req("session/cancel", {"sessionId": SID}, id=4))
    case("acp/v1/session.update/sent-as-request", K,
         "A `session/update` message with an id is a request the client does not know (the method is a notification) and is answered with -32601.",
         x_reply_error(-32601, 4), input=req("session/update", {"sessionId": SID, "update": {"sessionUpdate": "agent_message_chunk", "content": TEXT_MIN}}, id=4),
         direction=A2C)
    case("acp/v1/$.cancel_request/sent-as-request", K,
         "A `$/cancel_request` message with an id is not a known request and is answered with -32601.",
         x_reply_error(-32601, 4), input=req("$/cancel_request", {"requestId": 7}, id=4))
    case("acp/v1/$.cancel_request/request-id-null", "acp.v1.params.$/cancel_request",
         "A `$/cancel_request` notification whose requestId is null (a valid v1 request id) is dispatched with requestId null.",
         x_notification("$/cancel_request", "CancelRequestNotification", {"requestId": None}),
         input=notif("$/cancel_request", {"requestId": None}))
    case("acp/v1/$.cancel_request/request-id-string-from-agent", "acp.v1.params.$/cancel_request",
         "A `$/cancel_request` notification from the agent whose requestId is a string is dispatched to the client unchanged.",
         x_notification("$/cancel_request", "CancelRequestNotification", {"requestId": "req-9"}),
         input=notif("$/cancel_request", {"requestId": "req-9"}), direction=A2C)
    case("acp/v1/$.cancel_request/request-id-bool", "acp.v1.params.$/cancel_request",
         "A `$/cancel_request` notification whose requestId is true is dropped without a reply (validation fails at `$.params.requestId`).",
         x_ignored("invalid-notification"), input=notif("$/cancel_request", {"requestId": True}))
    case("acp/v1/initialize/protocol-version-2", "acp.v1.params.initialize",
         "An `initialize` request asking for protocolVersion 2 still decodes (negotiation happens in the handler, not the decoder).",
         x_request("initialize", 1, "InitializeRequest", {"protocolVersion": 2, "clientCapabilities": CLIENT_CAPS_DEFAULT}),
         input=req("initialize", {"protocolVersion": 2}))
    case("acp/v1/initialize/wire-example", "acp.v1.params.initialize",
         "The `initialize` request from the notes' wire example is dispatched and re-encodes with the missing `auth` capability defaulted.",
         x_request("initialize", 0, "InitializeRequest",
                   {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True,
                                                                  "auth": {"terminal": False}},
                    "clientInfo": {"name": "my-editor", "version": "1.0.0"}}),
         input_text='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":true},"clientInfo":{"name":"my-editor","version":"1.0.0"}}}\n')
    case("acp/v1/initialize/result-wire-example", "acp.v1.result.initialize",
         "The `initialize` result from the notes' wire example is decoded and re-encodes with the missing capability defaults filled in.",
         x_response(0, "initialize", "InitializeResponse",
                    {"protocolVersion": 1,
                     "agentCapabilities": {"loadSession": True,
                                           "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
                                           "mcpCapabilities": {"http": False, "sse": False}, "sessionCapabilities": {}, "auth": {}},
                     "authMethods": [], "agentInfo": {"name": "my-agent", "version": "0.1.0"}}),
         input_text='{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"promptCapabilities":{"image":true,"embeddedContext":true}},"authMethods":[],"agentInfo":{"name":"my-agent","version":"0.1.0"}}}\n',
         direction=A2C, pending=pend(0, "initialize"))
    case("acp/v1/session.new/mcp-servers-all-kinds-min", "acp.v1.params.session/new",
         "A `session/new` request listing a minimal stdio, http and sse MCP server is dispatched and re-encodes unchanged.",
         x_request("session/new", 1, "NewSessionRequest", {"cwd": CWD, "mcpServers": [STDIO_MIN, HTTP_MIN, SSE_MIN]}),
         input=req("session/new", {"cwd": CWD, "mcpServers": [STDIO_MIN, HTTP_MIN, SSE_MIN]}))
    case("acp/v1/session.set_config_option/params-max-value-id", "acp.v1.params.session/set_config_option",
         "A `session/set_config_option` request with a value id and `_meta` is dispatched and re-encodes unchanged.",
         x_request("session/set_config_option", 1, "SetSessionConfigOptionRequest",
                   {"sessionId": SID, "configId": "model", "value": "smart", "_meta": mt("set")}),
         input=req("session/set_config_option", {"sessionId": SID, "configId": "model", "value": "smart", "_meta": mt("set")}))
    case("acp/v1/session.request_permission/result-selected-min", "acp.v1.result.session/request_permission",
         "A `session/request_permission` result selecting an option is decoded with the chosen optionId.",
         x_response(3, "session/request_permission", "RequestPermissionResponse", {"outcome": {"outcome": "selected", "optionId": "allow"}}),
         input=resp(3, {"outcome": {"outcome": "selected", "optionId": "allow"}}), direction=C2A,
         pending=pend(3, "session/request_permission"))
    case("acp/v1/terminal.output/result-exit-status-empty", "acp.v1.result.terminal/output",
         "A `terminal/output` result with an empty exitStatus object is decoded and keeps the empty object.",
         x_response(3, "terminal/output", "TerminalOutputResponse", {"output": "done", "truncated": False, "exitStatus": {}}),
         input=resp(3, {"output": "done", "truncated": False, "exitStatus": {}}), direction=C2A, pending=pend(3, "terminal/output"))
    case("acp/v1/elicitation.create/result-decline", "acp.v1.result.elicitation/create",
         "An `elicitation/create` result with action \"decline\" is decoded as `CreateElicitationResponse`.",
         x_response(3, "elicitation/create", "CreateElicitationResponse", {"action": "decline"}),
         input=resp(3, {"action": "decline"}), direction=C2A, pending=pend(3, "elicitation/create"))
    case("acp/v1/elicitation.create/result-accept-without-content", "acp.v1.result.elicitation/create",
         "An `elicitation/create` result with action \"accept\" and no content (a URL elicitation) is decoded unchanged.",
         x_response(3, "elicitation/create", "CreateElicitationResponse", {"action": "accept"}),
         input=resp(3, {"action": "accept"}), direction=C2A, pending=pend(3, "elicitation/create"))
    case("acp/v1/elicitation.create/result-missing-action", "acp.v1.result.elicitation/create",
         "An `elicitation/create` result without `action` fails the call at `$.result`.",
         x_call_failed(3, "$.result"), input=resp(3, {"content": {"a": "b"}}), direction=C2A,
         pending=pend(3, "elicitation/create"))



# acp/v1/types/ --------------------------------------------------------------------

T = "acp/v1/types"
SU = "session/update"
SN = "SessionNotification"
PR = "session/prompt"


def upd(update, **extra):
    return {"sessionId": SID, "update": update, **extra}


def prompt(*blocks, **extra):
    return {"sessionId": SID, "prompt": list(blocks), **extra}


def build_types():
    build_session_updates()
    build_content_blocks()
    build_tool_call_content()
    build_mcp_servers()
    build_auth_methods()
    build_config_options()
    build_elicitation()
    build_lenient()
    build_defaults()
    build_three_state()
    build_numbers()
    build_meta_and_unknown_fields()
    build_duplicate_keys()
    build_unions_misc()
    build_default_on_null()


def update_case(cid, requirement, desc, update, expect_update=ABSENT, warnings=None, **kw):
    params = upd(update)
    exp = ABSENT if expect_update is ABSENT else upd(expect_update)
    case(cid, requirement, desc, x_notification(SU, SN, exp, warnings), input=notif(SU, params), direction=A2C, **kw)


def update_bad(cid, requirement, desc, update):
    case(cid, requirement, desc, x_ignored("invalid-notification"), input=notif(SU, upd(update)), direction=A2C)


def prompt_case(cid, requirement, desc, params, expect_params=ABSENT, warnings=None):
    case(cid, requirement, desc, x_request(PR, 1, "PromptRequest", expect_params, warnings), input=req(PR, params))


def prompt_bad(cid, requirement, desc, params, path):
    case(cid, requirement, desc, x_reply_error(-32602, 1, path), input=req(PR, params))


def build_session_updates():
    F = f"{T}/session-update"
    R = "acp.v1.type.session-update"
    chunk_min = lambda k: {"sessionUpdate": k, "content": TEXT_MIN}
    chunk_max = lambda k: {"sessionUpdate": k, "content": TEXT_MAX, "messageId": "msg_1", "_meta": mt(k)}
    variants = {
        "user_message_chunk": (chunk_min("user_message_chunk"), chunk_max("user_message_chunk")),
        "agent_message_chunk": (chunk_min("agent_message_chunk"), chunk_max("agent_message_chunk")),
        "agent_thought_chunk": (chunk_min("agent_thought_chunk"), chunk_max("agent_thought_chunk")),
        "tool_call": (TOOL_CALL_MIN, TOOL_CALL_MAX),
        "tool_call_update": ({"sessionUpdate": "tool_call_update", "toolCallId": "call_1"},
                             {"sessionUpdate": "tool_call_update", **TOOL_UPDATE_FIELDS}),
        "plan": ({"sessionUpdate": "plan", "entries": []},
                 {"sessionUpdate": "plan", "entries": [
                     {"content": "Read the code", "priority": "high", "status": "completed", "_meta": mt("entry.1")},
                     {"content": "Write the fix", "priority": "medium", "status": "in_progress", "_meta": mt("entry.2")},
                     {"content": "Run the tests", "priority": "low", "status": "pending", "_meta": mt("entry.3")}],
                  "_meta": mt("plan")}),
        "available_commands_update": ({"sessionUpdate": "available_commands_update", "availableCommands": []},
                                      {"sessionUpdate": "available_commands_update", "availableCommands": [
                                          {"name": "review", "description": "Review the diff",
                                           "input": {"hint": "what to focus on", "_meta": mt("input")}, "_meta": mt("command")}],
                                       "_meta": mt("available_commands_update")}),
        "current_mode_update": ({"sessionUpdate": "current_mode_update", "currentModeId": "code"},
                                {"sessionUpdate": "current_mode_update", "currentModeId": "code", "_meta": mt("current_mode_update")}),
        "config_option_update": ({"sessionUpdate": "config_option_update", "configOptions": []},
                                 {"sessionUpdate": "config_option_update",
                                  "configOptions": [CFG_SELECT_FLAT, CFG_SELECT_GROUPED, CFG_BOOLEAN],
                                  "_meta": mt("config_option_update")}),
        "session_info_update": ({"sessionUpdate": "session_info_update"},
                                {"sessionUpdate": "session_info_update", "title": "Fix the build",
                                 "updatedAt": "2026-03-04T05:06:07Z", "_meta": mt("session_info_update")}),
        "usage_update": ({"sessionUpdate": "usage_update", "used": 1200, "size": 200000},
                         {"sessionUpdate": "usage_update", "used": 1200, "size": 200000,
                          "cost": {"amount": 0.42, "currency": "USD", "_meta": mt("cost")}, "_meta": mt("usage_update")}),
        "notice": ({"sessionUpdate": "notice", "severity": "info", "title": "Heads up"},
                   {"sessionUpdate": "notice", "severity": "warning", "title": "Rate limited",
                    "description": "Retrying in 10 seconds", "_meta": mt("notice")}),
        "compaction_update": ({"sessionUpdate": "compaction_update", "compactionId": "cmp_1", "status": "in_progress"},
                              {"sessionUpdate": "compaction_update", "compactionId": "cmp_1", "status": "failed",
                               "summary": [TEXT_MAX], "error": "context too large", "_meta": mt("compaction_update")}),
        "compaction_summary_chunk": ({"sessionUpdate": "compaction_summary_chunk", "compactionId": "cmp_1", "content": TEXT_MIN},
                                     {"sessionUpdate": "compaction_summary_chunk", "compactionId": "cmp_1", "content": TEXT_MAX,
                                      "_meta": mt("compaction_summary_chunk")}),
    }
    assert len(variants) == 14
    for kind, (mn, mx) in variants.items():
        update_case(f"{F}/{kind}-min", R,
                    f"A `{kind}` session update with only its required members is dispatched and re-encodes unchanged.", mn, mn)
        update_case(f"{F}/{kind}-max", R,
                    f"A `{kind}` session update with every optional member and `_meta` everywhere is dispatched and re-encodes unchanged.",
                    mx, mx)
        max_check(f"{F}/{kind}-max", "SessionUpdate", mx, "$.params.update")
    for st in ("pending", "in_progress", "completed", "failed"):
        u = {"sessionUpdate": "tool_call_update", "toolCallId": "call_1", "status": st}
        update_case(f"{F}/tool_call_update-status-{st.replace('_', '-')}", R,
                    f"A `tool_call_update` with status \"{st}\" is dispatched with that status.", u, u)
    for k in ("read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"):
        u = {"sessionUpdate": "tool_call", "toolCallId": "call_1", "title": "t", "kind": k}
        update_case(f"{F}/tool_call-kind-{k.replace('_', '-')}", R,
                    f"A `tool_call` with kind \"{k}\" is dispatched with that kind.", u, u)
    raw = {"sessionUpdate": "future_kind", "widgetId": "w1", "payload": {"a": [1, 2]}}
    update_case(f"{F}/unknown-kind", "acp.v1.union.closed-unknown-kept",
                "A session update with the unknown tag \"future_kind\" is dispatched as an unknown variant that keeps the raw JSON, with a warning at `$.params.update`.",
                raw, raw, ["$.params.update"])
    update_bad(f"{F}/known-kind-malformed", "acp.v1.union.known-tag-strict",
               "A `tool_call` update without the required `title` fails validation (it does not fall back to the unknown variant) and the notification is dropped.",
               {"sessionUpdate": "tool_call", "toolCallId": "call_1"})
    update_bad(f"{F}/missing-tag", "acp.v1.union.known-tag-strict",
               "A session update object without `sessionUpdate` matches no variant and the notification is dropped.",
               {"content": TEXT_MIN})
    update_bad(f"{F}/tag-not-string", "acp.v1.union.known-tag-strict",
               "A session update whose `sessionUpdate` is the number 3 is malformed and the notification is dropped.",
               {"sessionUpdate": 3, "content": TEXT_MIN})
    update_bad(f"{F}/current_mode_update-mode-id", "acp.v1.current-mode-update.field",
               "A `current_mode_update` carrying `modeId` (as the prose docs show) instead of the required `currentModeId` is dropped as invalid.",
               {"sessionUpdate": "current_mode_update", "modeId": "code"})
    update_bad(f"{F}/usage_update-missing-size", R,
               "A `usage_update` without the required `size` is dropped as invalid.",
               {"sessionUpdate": "usage_update", "used": 10})
    update_bad(f"{F}/notice-empty-title", R,
               "A `notice` whose title is the empty string violates `minLength: 1` and the notification is dropped.",
               {"sessionUpdate": "notice", "severity": "info", "title": ""})
    update_bad(f"{F}/plan-missing-entries", R,
               "A `plan` update without the required `entries` array is dropped as invalid.",
               {"sessionUpdate": "plan"})
    update_bad(f"{F}/agent_message_chunk-missing-content", R,
               "An `agent_message_chunk` without `content` is dropped as invalid.",
               {"sessionUpdate": "agent_message_chunk", "messageId": "m1"})
    update_bad(f"{F}/tool_call_update-missing-id", R,
               "A `tool_call_update` without `toolCallId` is dropped as invalid.",
               {"sessionUpdate": "tool_call_update", "status": "completed"})
    case(f"{F}/missing-session-id", R,
         "A `session/update` notification without `sessionId` is dropped as invalid.",
         x_ignored("invalid-notification"), input=notif(SU, {"update": {"sessionUpdate": "agent_message_chunk", "content": TEXT_MIN}}),
         direction=A2C)



def build_content_blocks():
    F = f"{T}/content-block"
    R = "acp.v1.type.content-block"
    blocks = {"text": (TEXT_MIN, TEXT_MAX), "image": (IMAGE_MIN, IMAGE_MAX), "audio": (AUDIO_MIN, AUDIO_MAX),
              "resource_link": (LINK_MIN, LINK_MAX), "resource-text": (RES_TEXT_MIN, RES_TEXT_MAX),
              "resource-blob": (RES_BLOB_MIN, RES_BLOB_MAX)}
    for kind, (mn, mx) in blocks.items():
        prompt_case(f"{F}/{kind}-min", R if not kind.startswith("resource-") else "acp.v1.union.untagged-structural",
                    f"A prompt holding one minimal `{kind}` content block is dispatched and re-encodes unchanged.",
                    prompt(mn), prompt(mn))
        prompt_case(f"{F}/{kind}-max", R if not kind.startswith("resource-") else "acp.v1.union.untagged-structural",
                    f"A prompt holding one `{kind}` content block with every optional member (annotations, `_meta`) is dispatched and re-encodes unchanged.",
                    prompt(mx), prompt(mx))
        max_check(f"{F}/{kind}-max", "ContentBlock", mx, "$.params.prompt[0]")
    raw = {"type": "video", "data": "AAAA", "mimeType": "video/mp4", "durationMs": 1200}
    prompt_case(f"{F}/unknown-type-video", "acp.v1.union.closed-unknown-kept",
                "A prompt block with the unknown type \"video\" is kept as an unknown variant holding the raw JSON, with a warning at `$.params.prompt[1]`.",
                prompt(TEXT_MIN, raw), prompt(TEXT_MIN, raw), ["$.params.prompt[1]"])
    update_case(f"{F}/unknown-type-in-chunk", "acp.v1.union.closed-unknown-kept",
                "An `agent_message_chunk` whose content block has the unknown type \"video\" is dispatched with the raw block kept and a warning at `$.params.update.content`.",
                {"sessionUpdate": "agent_message_chunk", "content": raw},
                {"sessionUpdate": "agent_message_chunk", "content": raw}, ["$.params.update.content"])
    prompt_bad(f"{F}/missing-type", "acp.v1.union.known-tag-strict",
               "A prompt block without `type` matches no variant and the request is answered with -32602 at `$.params.prompt[0]`.",
               prompt({"text": "Hello"}), "$.params.prompt[0]")
    prompt_bad(f"{F}/type-not-string", "acp.v1.union.known-tag-strict",
               "A prompt block whose `type` is the number 1 is answered with -32602 at `$.params.prompt[0].type`.",
               prompt({"type": 1, "text": "Hello"}), "$.params.prompt[0].type")
    prompt_bad(f"{F}/text-missing-text", "acp.v1.union.known-tag-strict",
               "A `text` block without `text` is an error at `$.params.prompt[0]` (a known tag never falls back to the unknown variant).",
               prompt({"type": "text"}), "$.params.prompt[0]")
    prompt_bad(f"{F}/text-text-number", "acp.v1.union.known-tag-strict",
               "A `text` block whose `text` is a number is an error at `$.params.prompt[0].text`.",
               prompt({"type": "text", "text": 5}), "$.params.prompt[0].text")
    prompt_bad(f"{F}/image-missing-mime-type", "acp.v1.union.known-tag-strict",
               "An `image` block without `mimeType` is an error at `$.params.prompt[0]`.",
               prompt({"type": "image", "data": "iVBORw0KGgo="}), "$.params.prompt[0]")
    prompt_bad(f"{F}/resource_link-missing-uri", "acp.v1.union.known-tag-strict",
               "A `resource_link` block without `uri` is an error at `$.params.prompt[0]`.",
               prompt({"type": "resource_link", "name": "a"}), "$.params.prompt[0]")
    prompt_bad(f"{F}/resource-neither-text-nor-blob", "acp.v1.union.untagged-structural",
               "An embedded resource with neither `text` nor `blob` matches no variant and is an error at `$.params.prompt[0].resource`.",
               prompt({"type": "resource", "resource": {"uri": "file:///a", "mimeType": "text/plain"}}), "$.params.prompt[0].resource")
    prompt_bad(f"{F}/resource-missing-uri", "acp.v1.union.untagged-structural",
               "An embedded text resource without `uri` is an error at `$.params.prompt[0].resource`.",
               prompt({"type": "resource", "resource": {"text": "x"}}), "$.params.prompt[0].resource")
    prompt_bad(f"{F}/prompt-item-not-object", R,
               "A prompt array holding a bare string instead of a block is an error at `$.params.prompt[0]`.",
               prompt("Hello"), "$.params.prompt[0]")


def build_tool_call_content():
    F = f"{T}/tool-call-content"
    R = "acp.v1.type.tool-call-content"
    for name, item in (("content", TCC_CONTENT), ("diff", TCC_DIFF), ("terminal", TCC_TERMINAL)):
        u = {"sessionUpdate": "tool_call_update", "toolCallId": "call_1", "content": [item]}
        update_case(f"{F}/{name}", R,
                    f"A tool call update whose content is one `{name}` item is dispatched and re-encodes unchanged.", u, u)
    u = {"sessionUpdate": "tool_call_update", "toolCallId": "call_1",
         "content": [{"type": "diff", "path": "/repo/new.txt", "newText": "hello"}]}
    update_case(f"{F}/diff-new-file", R,
                "A `diff` item without `oldText` (a new file) is dispatched and re-encodes without `oldText`.", u, u)
    u = {"sessionUpdate": "tool_call_update", "toolCallId": "call_1",
         "content": [{"type": "diff", "path": "/repo/gone.txt", "oldText": None, "newText": ""}]}
    update_case(f"{F}/diff-old-text-null", "acp.v1.optional.three-state",
                "A `diff` item with \"oldText\": null keeps the explicit null on re-encoding.", u, u)
    raw = {"type": "widget", "widgetId": "w-9", "props": {"x": 1}}
    u = {"sessionUpdate": "tool_call", "toolCallId": "call_1", "title": "Render", "content": [TCC_CONTENT, raw]}
    update_case(f"{F}/unknown-type-widget", "acp.v1.union.closed-unknown-kept",
                "A tool call content item with the unknown type \"widget\" is kept as an unknown variant with its raw JSON and a warning at its path.",
                u, u, ["$.params.update.content[1]"])
    u = {"sessionUpdate": "tool_call", "toolCallId": "call_1", "title": "Edit",
         "content": [{"type": "diff", "path": "/repo/a.txt"}, TCC_TERMINAL]}
    update_case(f"{F}/diff-missing-new-text-skipped", "acp.v1.lenient.skip-invalid-items",
                "A `diff` item without `newText` is malformed; because tool call content skips invalid items it is dropped with a warning and the rest is kept.",
                u, {**u, "content": [TCC_TERMINAL]}, ["$.params.update.content[0]"])
    u = {"sessionUpdate": "tool_call", "toolCallId": "call_1", "title": "Edit",
         "content": [{"type": "text", "text": "not wrapped"}]}
    update_case(f"{F}/bare-content-block-kept-unknown", "acp.v1.union.closed-unknown-kept",
                "A bare `{type: \"text\"}` block placed directly in tool call content (as a docs page shows) has an unknown tool-call-content tag and is kept raw with a warning.",
                u, u, ["$.params.update.content[0]"])
    req_params = {"sessionId": SID, "toolCall": {"toolCallId": "call_1", "content": [TCC_DIFF]}, "options": []}
    case(f"{F}/in-permission-request", R,
         "A `session/request_permission` whose tool call carries a `diff` item is dispatched and re-encodes unchanged.",
         x_request("session/request_permission", 1, "RequestPermissionRequest", req_params),
         input=req("session/request_permission", req_params), direction=A2C)


def new_session(servers):
    return {"cwd": CWD, "mcpServers": servers}


def build_mcp_servers():
    F = f"{T}/mcp-server"
    R = "acp.v1.union.untagged-default"
    NS = "session/new"

    def ok(cid, requirement, desc, servers, expect, warnings=None):
        case(f"{F}/{cid}", requirement, desc,
             x_request(NS, 1, "NewSessionRequest", new_session(expect), warnings), input=req(NS, new_session(servers)))

    def bad(cid, requirement, desc, servers, path):
        case(f"{F}/{cid}", requirement, desc, x_reply_error(-32602, 1, path), input=req(NS, new_session(servers)))

    ok("stdio-min", R, "An MCP server object without `type` decodes as the stdio variant and re-encodes without `type`.",
       [STDIO_MIN], [STDIO_MIN])
    ok("stdio-max", R, "A stdio MCP server with args, env and `_meta` decodes as stdio and re-encodes unchanged.",
       [STDIO_MAX], [STDIO_MAX])
    ok("http-min", "acp.v1.type.mcp-server", "An MCP server with type \"http\" and empty headers decodes as the http variant.",
       [HTTP_MIN], [HTTP_MIN])
    ok("http-max", "acp.v1.type.mcp-server", "An http MCP server with headers and `_meta` re-encodes unchanged.",
       [HTTP_MAX], [HTTP_MAX])
    ok("sse-min", "acp.v1.type.mcp-server", "An MCP server with type \"sse\" decodes as the (deprecated) sse variant.",
       [SSE_MIN], [SSE_MIN])
    ok("sse-max", "acp.v1.type.mcp-server", "An sse MCP server with headers and `_meta` re-encodes unchanged.",
       [SSE_MAX], [SSE_MAX])
    raw = {"type": "websocket", "name": "ws", "url": "wss://mcp.example.com/ws", "headers": []}
    ok("unknown-type", "acp.v1.union.closed-unknown-kept",
       "An MCP server with the unknown type \"websocket\" is kept raw as an unknown variant with a warning at `$.params.mcpServers[1]`.",
       [STDIO_MIN, raw], [STDIO_MIN, raw], ["$.params.mcpServers[1]"])
    bad("stdio-missing-args", R, "A stdio MCP server (no `type`) without the required `args` is an error at `$.params.mcpServers[0]`.",
        [{"name": "files", "command": "/bin/mcp", "env": []}], "$.params.mcpServers[0]")
    bad("stdio-missing-command", R, "An MCP server without `type` and without `command` cannot be stdio and is an error at `$.params.mcpServers[0]`.",
        [{"name": "files", "args": [], "env": []}], "$.params.mcpServers[0]")
    bad("http-missing-headers", "acp.v1.union.known-tag-strict",
        "An http MCP server without the required `headers` is an error at `$.params.mcpServers[0]` (it does not fall back to stdio or unknown).",
        [{"type": "http", "name": "web", "url": "https://mcp.example.com/mcp"}], "$.params.mcpServers[0]")
    bad("http-header-missing-value", "acp.v1.type.mcp-server",
        "An http MCP server whose header lacks `value` is an error at `$.params.mcpServers[0].headers[0]`.",
        [{"type": "http", "name": "web", "url": "https://x", "headers": [{"name": "A"}]}], "$.params.mcpServers[0].headers[0]")
    bad("stdio-env-not-array", "acp.v1.type.mcp-server",
        "A stdio MCP server whose env is an object instead of an array of name/value pairs is an error at `$.params.mcpServers[0].env`.",
        [{"name": "files", "command": "/bin/mcp", "args": [], "env": {"A": "1"}}], "$.params.mcpServers[0].env")


def init_result(methods):
    return {"protocolVersion": 1, "agentCapabilities": AGENT_CAPS_DEFAULT, "authMethods": methods}


def build_auth_methods():
    F = f"{T}/auth-method"
    P = pend(0, "initialize")

    def ok(cid, requirement, desc, methods, expect, warnings=None):
        case(f"{F}/{cid}", requirement, desc,
             x_response(0, "initialize", "InitializeResponse", init_result(expect), warnings),
             input=resp(0, init_result(methods)), direction=A2C, pending=P)

    ok("agent-min", "acp.v1.union.untagged-default",
       "An auth method without `type` decodes as the agent variant and re-encodes without `type`.",
       [{"id": "login", "name": "Log in"}], [{"id": "login", "name": "Log in"}])
    ok("agent-max", "acp.v1.union.untagged-default",
       "An agent auth method with description and `_meta` re-encodes unchanged.", [AUTH_AGENT_MAX], [AUTH_AGENT_MAX])
    ok("terminal-min", "acp.v1.type.auth-method",
       "An auth method with type \"terminal\" and only id and name decodes as the terminal variant.",
       [{"type": "terminal", "id": "tty", "name": "TTY"}], [{"type": "terminal", "id": "tty", "name": "TTY"}])
    ok("terminal-max", "acp.v1.type.auth-method",
       "A terminal auth method with args, env and `_meta` re-encodes unchanged.", [AUTH_TERMINAL_MAX], [AUTH_TERMINAL_MAX])
    raw = {"type": "oauth", "id": "o", "label": "OAuth", "authorizeUrl": "https://auth.example.com"}
    ok("unknown-type", "acp.v1.union.closed-unknown-kept",
       "An auth method with the unknown type \"oauth\" (and no `name`) is kept raw as an unknown variant with a warning at its path, not decoded or dropped as an agent method.",
       [AUTH_AGENT_MAX, raw], [AUTH_AGENT_MAX, raw], ["$.result.authMethods[1]"])
    ok("missing-name-skipped", "acp.v1.lenient.skip-invalid-items",
       "An agent auth method without `name` is malformed; `authMethods` skips invalid items, so it is dropped with a warning and the others are kept.",
       [{"id": "broken"}, {"id": "login", "name": "Log in"}], [{"id": "login", "name": "Log in"}], ["$.result.authMethods[0]"])



def build_config_options():
    F = f"{T}/config-option"
    P = pend(3, "session/new")

    def new_result(cid, requirement, desc, options, expect, warnings=None):
        case(f"{F}/{cid}", requirement, desc,
             x_response(3, "session/new", "NewSessionResponse", {"sessionId": SID, "configOptions": expect}, warnings),
             input=resp(3, {"sessionId": SID, "configOptions": options}), direction=A2C, pending=P)

    new_result("select-flat", "acp.v1.union.untagged-structural",
               "A select config option whose options are a flat list of values decodes as the ungrouped form and re-encodes unchanged.",
               [CFG_SELECT_FLAT], [CFG_SELECT_FLAT])
    new_result("select-grouped", "acp.v1.union.untagged-structural",
               "A select config option whose options are a list of groups decodes as the grouped form and re-encodes unchanged.",
               [CFG_SELECT_GROUPED], [CFG_SELECT_GROUPED])
    new_result("select-min", "acp.v1.type.config-option",
               "A select config option with only id, name, type, currentValue and one option re-encodes unchanged.",
               [CFG_SELECT_MIN], [CFG_SELECT_MIN])
    new_result("boolean-min", "acp.v1.type.config-option",
               "A boolean config option with currentValue false re-encodes unchanged.",
               [CFG_BOOLEAN_MIN], [CFG_BOOLEAN_MIN])
    for cat in ("mode", "model", "model_config", "thought_level"):
        o = with_(CFG_SELECT_MIN, category=cat)
        new_result(f"category-{cat.replace('_', '-')}", "acp.v1.type.config-option",
                   f"A config option with the category \"{cat}\" keeps it.", [o], [o])
    o = with_(CFG_SELECT_MIN, category="_mine")
    new_result("category-custom", "acp.v1.union.open-unknown-kept",
               "A config option with the custom category \"_mine\" keeps it as a string without a warning (the category enum is open).",
               [o], [o])
    o = with_(CFG_SELECT_MIN, category="future_category")
    new_result("category-future", "acp.v1.union.open-unknown-kept",
               "A config option with the unknown, non-underscore category \"future_category\" keeps it without a warning (the enum is open).",
               [o], [o])
    o = with_(CFG_SELECT_MIN, category=7)
    new_result("category-number-dropped", "acp.v1.lenient.default-on-error",
               "A config option whose category is a number loses the category with a warning (the field defaults on error).",
               [o], [CFG_SELECT_MIN], ["$.result.configOptions[0].category"])
    raw = {"id": "temp", "name": "Temperature", "type": "slider", "min": 0, "max": 1, "currentValue": 0.3}
    new_result("unknown-type", "acp.v1.union.closed-unknown-kept",
               "A config option with the unknown type \"slider\" is kept raw as an unknown variant with a warning at its path.",
               [CFG_SELECT_MIN, raw], [CFG_SELECT_MIN, raw], ["$.result.configOptions[1]"])
    new_result("select-missing-current-value-skipped", "acp.v1.lenient.skip-invalid-items",
               "A select option without `currentValue` is malformed; `configOptions` skips invalid items, so it is dropped with a warning.",
               [without(CFG_SELECT_MIN, "currentValue"), CFG_BOOLEAN_MIN], [CFG_BOOLEAN_MIN], ["$.result.configOptions[0]"])
    g = {"group": "g", "name": "G", "options": [{"value": "a", "name": "A"}, {"value": "b"}]}
    o = with_(CFG_SELECT_MIN, options=[g])
    new_result("group-option-skipped", "acp.v1.lenient.skip-invalid-items",
               "A grouped select whose group holds an option without `name` drops that option with a warning and keeps the rest.",
               [o], [with_(CFG_SELECT_MIN, options=[{"group": "g", "name": "G", "options": [{"value": "a", "name": "A"}]}])],
               ["$.result.configOptions[0].options[0].options[1]"])

    SC = "session/set_config_option"
    ST = "SetSessionConfigOptionRequest"

    def set_ok(cid, requirement, desc, params, expect):
        case(f"{F}/{cid}", requirement, desc, x_request(SC, 1, ST, expect), input=req(SC, params))

    base = {"sessionId": SID, "configId": "web"}
    set_ok("set-boolean", "acp.v1.union.untagged-structural",
           "A set_config_option request with type \"boolean\" and value false decodes as the boolean form.",
           {**base, "type": "boolean", "value": False}, {**base, "type": "boolean", "value": False})
    set_ok("set-value-id", "acp.v1.union.untagged-structural",
           "A set_config_option request without `type` and with a string value decodes as the value-id form.",
           {**base, "value": "on"}, {**base, "value": "on"})
    set_ok("set-unknown-type-string-value", "acp.v1.union.untagged-structural",
           "A set_config_option request with an unknown `type` and a string value decodes as the value-id form (per the schema) and re-encodes without `type`.",
           {**base, "type": "_slider", "value": "0.3"}, {**base, "value": "0.3"})
    for cid, params, desc in (
            ("set-boolean-missing-value", {**base, "type": "boolean"},
             "A set_config_option request with type \"boolean\" but no value matches neither form and is answered with -32602 at `$.params`."),
            ("set-missing-value", base,
             "A set_config_option request without `value` matches neither form and is answered with -32602 at `$.params`."),
            ("set-boolean-value-number", {**base, "type": "boolean", "value": 1},
             "A set_config_option request with type \"boolean\" and the number 1 as value is answered with -32602 at `$.params.value`: the known tag selects the boolean form, whose value is wrong.")):
        path = "$.params.value" if cid == "set-boolean-value-number" else "$.params"
        case(f"{F}/{cid}", "acp.v1.union.known-tag-strict", desc, x_reply_error(-32602, 1, path), input=req(SC, params))


EL = "elicitation/create"
ET = "CreateElicitationRequest"


def form(props, required=None, **extra):
    schema = {"properties": props}
    if required is not None:
        schema["required"] = required
    return {"message": "Fill this in", "mode": "form", "sessionId": SID, "requestedSchema": schema, **extra}


def form_x(props, required=None, **extra):
    p = form(props, required, **extra)
    p["requestedSchema"] = {"type": "object", **p["requestedSchema"]}
    return p


def build_elicitation():
    F = f"{T}/elicitation"
    R = "acp.v1.type.elicitation"

    def ok(cid, requirement, desc, params, expect, warnings=None):
        case(f"{F}/{cid}", requirement, desc, x_request(EL, 1, ET, expect, warnings), input=req(EL, params), direction=A2C)

    def bad(cid, requirement, desc, params, path):
        case(f"{F}/{cid}", requirement, desc, x_reply_error(-32602, 1, path), input=req(EL, params), direction=A2C)

    props = {
        "string-min": {"type": "string"},
        "string-max": STRING_PROP_MAX,
        "number-min": {"type": "number"},
        "number-max": NUMBER_PROP_MAX,
        "integer-min": {"type": "integer"},
        "integer-max": INTEGER_PROP_MAX,
        "boolean-min": {"type": "boolean"},
        "boolean-max": BOOLEAN_PROP_MAX,
        "array-enum-min": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
        "array-enum-max": ARRAY_PROP_MAX,
        "array-titled-min": {"type": "array", "items": {"anyOf": [{"const": "r", "title": "Red"}]}},
        "array-titled-max": ARRAY_TITLED_PROP_MAX,
    }
    for name, prop in props.items():
        ok(f"form-{name}", R,
           f"A form elicitation whose schema has one `{name.rsplit('-', 1)[0]}` property ({name.rsplit('-', 1)[1]}imal) is dispatched and re-encodes with the schema `type` default filled in.",
           form({"field": prop}), form_x({"field": prop}))
        if name.endswith("-max"):
            max_check(f"{F}/form-{name}", "ElicitationPropertySchema", prop, "$.params.requestedSchema.properties.field")
    for fmt in ("email", "uri", "date", "date-time"):
        prop = {"type": "string", "format": fmt}
        ok(f"form-string-format-{fmt}", R, f"A string property with format \"{fmt}\" is accepted and kept.",
           form({"f": prop}), form_x({"f": prop}))
    bad("form-string-format-unknown", "acp.v1.enum.closed-rejected",
        "A string property with the unknown format \"phone\" is rejected: the format enum is closed and the field is not lenient.",
        form({"f": {"type": "string", "format": "phone"}}), "$.params.requestedSchema.properties.f.format")
    url_min = {"message": "Sign in", "mode": "url", "sessionId": SID, "elicitationId": "elic_1",
               "url": "https://auth.example.com/start"}
    url_max = {**url_min, "toolCallId": "call_1", "_meta": mt("url")}
    ok("url-min", R, "A url-mode elicitation with only the required members is dispatched and re-encodes unchanged.",
       url_min, url_min)
    ok("url-max", R, "A url-mode elicitation tied to a tool call, with `_meta`, is dispatched and re-encodes unchanged.",
       url_max, url_max)
    max_check(f"{F}/url-max", ET, url_max, "$.params")
    rs = {"message": "Sign in", "mode": "url", "requestId": 5, "elicitationId": "elic_2", "url": "https://auth.example.com/x"}
    ok("url-request-scope", R, "A url-mode elicitation scoped to a request id instead of a session is dispatched unchanged.",
       rs, rs)
    rs = {"message": "Token?", "mode": "form", "requestId": "init-1", "requestedSchema": {"type": "object", "properties": {}}}
    ok("form-request-scope", R, "A form elicitation scoped to a string request id is dispatched unchanged.", rs, rs)
    raw = {"message": "Pick a file", "mode": "_file_picker", "sessionId": SID, "filters": ["*.rs"]}
    ok("mode-custom", "acp.v1.union.open-unknown-kept",
       "An elicitation with the custom mode \"_file_picker\" is kept as an unknown variant with its raw JSON and no warning (the mode union is open).",
       raw, raw)
    raw = {"message": "Scan this", "mode": "qr_code", "requestId": 9, "code": "XYZ"}
    ok("mode-future", "acp.v1.union.open-unknown-kept",
       "An elicitation with the future mode \"qr_code\" is kept raw without a warning (the mode union is open).", raw, raw)
    bad("form-missing-requested-schema", "acp.v1.union.known-tag-strict",
        "A form elicitation without `requestedSchema` is answered with -32602 at `$.params` (a known mode never falls back to the open variant).",
        {"message": "m", "mode": "form", "sessionId": SID}, "$.params")
    bad("url-missing-url", "acp.v1.union.known-tag-strict",
        "A url elicitation without `url` is answered with -32602 at `$.params`.",
        {"message": "m", "mode": "url", "sessionId": SID, "elicitationId": "e"}, "$.params")
    bad("missing-scope", R,
        "A form elicitation with neither `sessionId` nor `requestId` is answered with -32602 at `$.params`.",
        {"message": "m", "mode": "form", "requestedSchema": {}}, "$.params")
    bad("missing-mode", R,
        "An elicitation without `mode` matches no variant and is answered with -32602 at `$.params`.",
        {"message": "m", "sessionId": SID, "requestedSchema": {}}, "$.params")
    raw_prop = {"type": "_color", "palette": ["red", "blue"]}
    ok("property-type-custom", "acp.v1.union.open-unknown-kept",
       "A form property with the custom type \"_color\" is kept raw without a warning (the property schema union is open).",
       form({"c": raw_prop}), form_x({"c": raw_prop}))
    raw_items = {"type": "_icon", "set": "material"}
    prop = {"type": "array", "items": raw_items}
    ok("multi-select-items-custom", "acp.v1.union.open-unknown-kept",
       "A multi-select property whose items have the custom type \"_icon\" keeps the items raw without a warning.",
       form({"icons": prop}), form_x({"icons": prop}))
    bad("property-known-type-malformed", "acp.v1.union.known-tag-strict",
        "A number property whose `minimum` is a string is an error at that value (the known tag does not fall back to the open variant).",
        form({"n": {"type": "number", "minimum": "0"}}), "$.params.requestedSchema.properties.n.minimum")
    bad("property-array-missing-items", "acp.v1.union.known-tag-strict",
        "An array property without `items` is an error at `$.params.requestedSchema.properties.a`.",
        form({"a": {"type": "array"}}), "$.params.requestedSchema.properties.a")
    ok("schema-type-wrong-defaulted", "acp.v1.lenient.default-on-error",
       "A requested schema whose `type` is \"array\" (only \"object\" is allowed) gets the default \"object\" back with a warning.",
       {**form({}), "requestedSchema": {"type": "array", "properties": {}}}, form_x({}),
       ["$.params.requestedSchema.type"])
    ok("schema-required-list", R, "A requested schema with a `required` list keeps it.",
       form({"a": {"type": "string"}}, ["a"]), form_x({"a": {"type": "string"}}, ["a"]))
    ok("tool-call-id-number-dropped", "acp.v1.lenient.default-on-error",
       "A session-scoped elicitation whose toolCallId is a number drops it with a warning (the field defaults on error).",
       form({}, toolCallId=5), form_x({}), ["$.params.toolCallId"])

    P = pend(3, EL)

    def res(cid, requirement, desc, result, expect, warnings=None):
        case(f"{F}/{cid}", requirement, desc, x_response(3, EL, "CreateElicitationResponse", expect, warnings),
             input=resp(3, result), direction=C2A, pending=P)

    r = {"action": "_later", "remindAt": "2026-05-01"}
    res("action-custom", "acp.v1.union.open-unknown-kept",
        "An elicitation result with the custom action \"_later\" is kept raw without a warning (the action union is open).", r, r)
    r = {"action": "accept", "content": {"s": "x", "i": -3, "n": 2.5, "b": False, "arr": ["a"]}}
    res("accept-each-value-type", R,
        "An accepted elicitation whose content holds a string, an integer, a number, a boolean and a string array re-encodes unchanged.", r, r)
    r = {"action": "accept", "content": None}
    res("accept-content-null", "acp.v1.optional.three-state",
        "An accepted elicitation with \"content\": null keeps the explicit null.", r, r)
    case(f"{F}/accept-content-array-of-numbers", R,
         "An accepted elicitation whose content value is an array of numbers fails the call at that value.",
         x_call_failed(3, "$.result.content.a"), input=resp(3, {"action": "accept", "content": {"a": [1, 2]}}),
         direction=C2A, pending=P)



def build_lenient():
    F = f"{T}/lenient"
    D = "acp.v1.lenient.default-on-error"
    K = "acp.v1.lenient.skip-invalid-items"
    u = with_(TOOL_CALL_MIN, kind="bogus_kind")
    update_case(f"{F}/tool-call-kind-bogus", D,
                "A `tool_call` with kind \"bogus_kind\" is accepted; the kind is dropped (no schema default) with a warning.",
                u, TOOL_CALL_MIN, ["$.params.update.kind"])
    u = with_(TOOL_CALL_MIN, status="done")
    update_case(f"{F}/tool-call-status-bogus", D,
                "A `tool_call` with status \"done\" is accepted; the status is dropped with a warning.",
                u, TOOL_CALL_MIN, ["$.params.update.status"])
    u = {"sessionUpdate": "tool_call_update", "toolCallId": "call_1", "kind": 3, "title": ["x"]}
    update_case(f"{F}/tool-call-update-two-bad-fields", D,
                "A `tool_call_update` whose kind is a number and whose title is an array drops both with one warning each.",
                u, {"sessionUpdate": "tool_call_update", "toolCallId": "call_1"},
                ["$.params.update.kind", "$.params.update.title"])
    u = {"sessionUpdate": "tool_call_update", "toolCallId": "call_1", "content": "done", "locations": {"path": "/a"}}
    update_case(f"{F}/tool-call-update-arrays-wrong-shape", D,
                "A `tool_call_update` whose content is a string and whose locations is an object drops both with warnings.",
                u, {"sessionUpdate": "tool_call_update", "toolCallId": "call_1"},
                ["$.params.update.content", "$.params.update.locations"])
    u = with_(TOOL_CALL_MIN, locations=[{"path": "/a", "line": -1}, {"path": "/b", "line": 2}])
    update_case(f"{F}/location-line-negative", D,
                "A tool call location with line -1 (outside uint32) loses the line with a warning; the location itself is kept.",
                u, with_(TOOL_CALL_MIN, locations=[{"path": "/a"}, {"path": "/b", "line": 2}]),
                ["$.params.update.locations[0].line"])
    u = with_(TOOL_CALL_MIN, locations=[{"line": 3}, {"path": "/b"}])
    update_case(f"{F}/location-missing-path-skipped", K,
                "A tool call location without `path` is dropped with a warning and the other locations are kept.",
                u, with_(TOOL_CALL_MIN, locations=[{"path": "/b"}]), ["$.params.update.locations[0]"])
    u = {"sessionUpdate": "agent_message_chunk", "content": TEXT_MIN, "messageId": 12}
    update_case(f"{F}/message-id-number", D,
                "A message chunk whose messageId is a number drops the id with a warning.",
                u, {"sessionUpdate": "agent_message_chunk", "content": TEXT_MIN}, ["$.params.update.messageId"])
    prompt_case(f"{F}/meta-number", D,
                "Request params whose `_meta` is the number 5 are accepted; `_meta` is dropped with a warning.",
                prompt(TEXT_MIN, _meta=5), prompt(TEXT_MIN), ["$.params._meta"])
    prompt_case(f"{F}/meta-array", D,
                "Request params whose `_meta` is an array are accepted; `_meta` is dropped with a warning.",
                prompt(TEXT_MIN, _meta=["a"]), prompt(TEXT_MIN), ["$.params._meta"])
    prompt_case(f"{F}/meta-string-in-block", D,
                "A content block whose `_meta` is a string keeps the block and drops `_meta` with a warning at its path.",
                prompt(with_(TEXT_MIN, _meta="x")), prompt(TEXT_MIN), ["$.params.prompt[0]._meta"])
    b = with_(LINK_MIN, size="big", mimeType=5, title=False)
    prompt_case(f"{F}/resource-link-optional-fields-wrong", D,
                "A resource link whose size, mimeType and title have the wrong types keeps the link and drops the three fields with warnings.",
                prompt(b), prompt(LINK_MIN),
                ["$.params.prompt[0].size", "$.params.prompt[0].mimeType", "$.params.prompt[0].title"])
    b = with_(TEXT_MIN, annotations={"audience": ["user", "robot", "assistant"], "priority": "high"})
    prompt_case(f"{F}/annotations-bad-parts", D,
                "Annotations with an unknown audience role and a string priority drop the bad role (skip-invalid-items) and the priority (default-on-error), with warnings.",
                prompt(b), prompt(with_(TEXT_MIN, annotations={"audience": ["user", "assistant"]})),
                ["$.params.prompt[0].annotations.audience[1]", "$.params.prompt[0].annotations.priority"])
    b = with_(TEXT_MIN, annotations="important")
    prompt_case(f"{F}/annotations-not-object", D,
                "A text block whose annotations is a string keeps the block and drops the annotations with a warning.",
                prompt(b), prompt(TEXT_MIN), ["$.params.prompt[0].annotations"])
    P0 = pend(0, "initialize")

    def init_res(cid, requirement, desc, result, expect, warnings):
        case(f"{F}/{cid}", requirement, desc, x_response(0, "initialize", "InitializeResponse", expect, warnings),
             input=resp(0, result), direction=A2C, pending=P0)

    init_res("load-session-string", D,
             "An initialize result with \"loadSession\": \"yes\" is accepted with loadSession false (its default) and a warning.",
             {"protocolVersion": 1, "agentCapabilities": {"loadSession": "yes"}},
             {"protocolVersion": 1, "agentCapabilities": AGENT_CAPS_DEFAULT, "authMethods": []},
             ["$.result.agentCapabilities.loadSession"])
    init_res("agent-capabilities-string", D,
             "An initialize result whose agentCapabilities is a string gets the full default capabilities with a warning.",
             {"protocolVersion": 1, "agentCapabilities": "all"},
             {"protocolVersion": 1, "agentCapabilities": AGENT_CAPS_DEFAULT, "authMethods": []},
             ["$.result.agentCapabilities"])
    init_res("prompt-capabilities-image-string", D,
             "An initialize result with promptCapabilities.image \"true\" (a string) keeps the other flags and defaults image to false with a warning.",
             {"protocolVersion": 1, "agentCapabilities": {"promptCapabilities": {"image": "true", "audio": True}}},
             {"protocolVersion": 1,
              "agentCapabilities": with_(AGENT_CAPS_DEFAULT, promptCapabilities={"image": False, "audio": True, "embeddedContext": False}),
              "authMethods": []},
             ["$.result.agentCapabilities.promptCapabilities.image"])
    init_res("session-capability-list-true", D,
             "An initialize result with sessionCapabilities.list true (a boolean where an object marker is expected) drops the marker with a warning.",
             {"protocolVersion": 1, "agentCapabilities": {"sessionCapabilities": {"list": True, "close": {}}}},
             {"protocolVersion": 1, "agentCapabilities": with_(AGENT_CAPS_DEFAULT, sessionCapabilities={"close": {}}),
              "authMethods": []},
             ["$.result.agentCapabilities.sessionCapabilities.list"])
    init_res("auth-methods-not-array", D,
             "An initialize result whose authMethods is an object gets the default empty list with a warning.",
             {"protocolVersion": 1, "authMethods": {"id": "x"}},
             {"protocolVersion": 1, "agentCapabilities": AGENT_CAPS_DEFAULT, "authMethods": []},
             ["$.result.authMethods"])
    init_res("agent-info-string", D,
             "An initialize result whose agentInfo is a string drops agentInfo with a warning.",
             {"protocolVersion": 1, "agentInfo": "my-agent 1.0"},
             {"protocolVersion": 1, "agentCapabilities": AGENT_CAPS_DEFAULT, "authMethods": []},
             ["$.result.agentInfo"])
    init_res("agent-info-missing-version", D,
             "An initialize result whose agentInfo lacks the required `version` drops agentInfo with a warning (the field defaults on error).",
             {"protocolVersion": 1, "agentInfo": {"name": "my-agent"}},
             {"protocolVersion": 1, "agentCapabilities": AGENT_CAPS_DEFAULT, "authMethods": []},
             ["$.result.agentInfo"])
    case(f"{F}/client-capabilities-fs-bool", D,
         "An initialize request whose clientCapabilities.fs is true (not an object) gets the default fs capabilities with a warning.",
         x_request("initialize", 1, "InitializeRequest",
                   {"protocolVersion": 1, "clientCapabilities": with_(CLIENT_CAPS_DEFAULT, terminal=True)},
                   ["$.params.clientCapabilities.fs"]),
         input=req("initialize", {"protocolVersion": 1, "clientCapabilities": {"fs": True, "terminal": True}}))
    case(f"{F}/client-capabilities-elicitation-bool", D,
         "An initialize request whose clientCapabilities.elicitation is true drops it with a warning (it is an optional object).",
         x_request("initialize", 1, "InitializeRequest", {"protocolVersion": 1, "clientCapabilities": CLIENT_CAPS_DEFAULT},
                   ["$.params.clientCapabilities.elicitation"]),
         input=req("initialize", {"protocolVersion": 1, "clientCapabilities": {"elicitation": True}}))
    case(f"{F}/client-info-number", D,
         "An initialize request whose clientInfo is a number drops clientInfo with a warning.",
         x_request("initialize", 1, "InitializeRequest", {"protocolVersion": 1, "clientCapabilities": CLIENT_CAPS_DEFAULT},
                   ["$.params.clientInfo"]),
         input=req("initialize", {"protocolVersion": 1, "clientInfo": 1}))
    cmds = [{"name": "review", "description": "Review"}, {"name": "broken"}, {"name": "test", "description": "Run tests"}]
    update_case(f"{F}/available-commands-bad-item", K,
                "An `available_commands_update` whose second command lacks `description` drops that command with a warning at `$.params.update.availableCommands[1]`.",
                {"sessionUpdate": "available_commands_update", "availableCommands": cmds},
                {"sessionUpdate": "available_commands_update", "availableCommands": [cmds[0], cmds[2]]},
                ["$.params.update.availableCommands[1]"])
    cmds = [{"name": "review", "description": "Review", "input": {"hint": 3}}]
    update_case(f"{F}/available-command-input-bad", D,
                "A command whose input hint is a number keeps the command and drops `input` with a warning.",
                {"sessionUpdate": "available_commands_update", "availableCommands": cmds},
                {"sessionUpdate": "available_commands_update", "availableCommands": [{"name": "review", "description": "Review"}]},
                ["$.params.update.availableCommands[0].input"])
    entries = [{"content": "a", "priority": "urgent", "status": "pending"}, {"content": "b", "priority": "low", "status": "pending"}]
    update_case(f"{F}/plan-entry-bad-priority", K,
                "A plan entry with the unknown priority \"urgent\" (a closed enum) is dropped with a warning and the other entries are kept.",
                {"sessionUpdate": "plan", "entries": entries},
                {"sessionUpdate": "plan", "entries": [entries[1]]}, ["$.params.update.entries[0]"])
    entries = ["just text", {"content": "b", "priority": "high", "status": "completed"}, 5]
    update_case(f"{F}/plan-entries-not-objects", K,
                "Plan entries that are not objects are dropped one by one with a warning each.",
                {"sessionUpdate": "plan", "entries": entries},
                {"sessionUpdate": "plan", "entries": [entries[1]]},
                ["$.params.update.entries[0]", "$.params.update.entries[2]"])
    opts = [CFG_SELECT_MIN, {"id": "x", "type": "select"}]
    update_case(f"{F}/config-option-update-bad-item", K,
                "A `config_option_update` whose second option lacks name, currentValue and options drops that option with a warning.",
                {"sessionUpdate": "config_option_update", "configOptions": opts},
                {"sessionUpdate": "config_option_update", "configOptions": [CFG_SELECT_MIN]},
                ["$.params.update.configOptions[1]"])
    cs = {"sessionUpdate": "compaction_update", "compactionId": "c", "status": "completed",
          "summary": [TEXT_MIN, {"type": "text"}], "error": 5}
    update_case(f"{F}/compaction-summary-bad-block", K,
                "A compaction update with a malformed summary block and a numeric error drops both with warnings and keeps the rest.",
                cs, {"sessionUpdate": "compaction_update", "compactionId": "c", "status": "completed", "summary": [TEXT_MIN]},
                ["$.params.update.summary[1]", "$.params.update.error"])
    u = {"sessionUpdate": "usage_update", "used": 1, "size": 2, "cost": {"amount": "0.1", "currency": "USD"}}
    update_case(f"{F}/usage-cost-malformed", D,
                "A usage update whose cost amount is a string drops the whole cost object with a warning (cost defaults on error).",
                u, {"sessionUpdate": "usage_update", "used": 1, "size": 2}, ["$.params.update.cost"])
    P = pend(3, "session/list")
    sessions = [{"sessionId": "s1", "cwd": "/a"}, {"sessionId": "s2"}, {"sessionId": "s3", "cwd": "/c", "title": 9,
                                                                        "additionalDirectories": ["/d", 1]}]
    case(f"{F}/sessions-bad-item", K,
         "A session list whose second entry lacks `cwd` drops it with a warning; the third keeps its entry but drops a bad title and a bad directory with warnings.",
         x_response(3, "session/list", "ListSessionsResponse",
                    {"sessions": [sessions[0], {"sessionId": "s3", "cwd": "/c", "additionalDirectories": ["/d"]}], "nextCursor": None},
                    ["$.result.sessions[1]", "$.result.sessions[2].title", "$.result.sessions[2].additionalDirectories[1]"]),
         input=resp(3, {"sessions": sessions, "nextCursor": None}), direction=A2C, pending=P)
    case(f"{F}/next-cursor-number", D,
         "A session list whose nextCursor is a number drops it with a warning.",
         x_response(3, "session/list", "ListSessionsResponse", {"sessions": []}, ["$.result.nextCursor"]),
         input=resp(3, {"sessions": [], "nextCursor": 2}), direction=A2C, pending=P)
    P = pend(3, "session/new")
    modes = {"currentModeId": "ask", "availableModes": [{"id": "ask", "name": "Ask"}, {"id": "code"}]}
    case(f"{F}/available-modes-bad-item", K,
         "A session mode without `name` is dropped from availableModes with a warning and the rest of the result is kept.",
         x_response(3, "session/new", "NewSessionResponse",
                    {"sessionId": SID, "modes": {"currentModeId": "ask", "availableModes": [{"id": "ask", "name": "Ask"}]}},
                    ["$.result.modes.availableModes[1]"]),
         input=resp(3, {"sessionId": SID, "modes": modes}), direction=A2C, pending=P)
    case(f"{F}/modes-missing-current-mode", D,
         "A new-session result whose modes object lacks `currentModeId` drops `modes` with a warning (the field defaults on error).",
         x_response(3, "session/new", "NewSessionResponse", {"sessionId": SID}, ["$.result.modes"]),
         input=resp(3, {"sessionId": SID, "modes": {"availableModes": []}}), direction=A2C, pending=P)
    case(f"{F}/config-options-not-array", D,
         "A new-session result whose configOptions is an object drops configOptions with a warning.",
         x_response(3, "session/new", "NewSessionResponse", {"sessionId": SID}, ["$.result.configOptions"]),
         input=resp(3, {"sessionId": SID, "configOptions": {"model": "fast"}}), direction=A2C, pending=P)
    P = pend(3, "terminal/wait_for_exit")
    case(f"{F}/exit-code-negative", D,
         "A wait_for_exit result with exitCode -1 (outside uint32) drops the exit code with a warning and keeps the signal.",
         x_response(3, "terminal/wait_for_exit", "WaitForTerminalExitResponse", {"signal": "SIGSEGV"}, ["$.result.exitCode"]),
         input=resp(3, {"exitCode": -1, "signal": "SIGSEGV"}), direction=C2A, pending=P)
    P = pend(3, "session/prompt")
    case(f"{F}/result-meta-number", D,
         "A prompt result whose `_meta` is a number keeps the stop reason and drops `_meta` with a warning.",
         x_response(3, "session/prompt", "PromptResponse", {"stopReason": "end_turn"}, ["$.result._meta"]),
         input=resp(3, {"stopReason": "end_turn", "_meta": 1}), direction=A2C, pending=P)
    case(f"{F}/required-field-not-lenient", "acp.v1.enum.closed-rejected",
         "A prompt result with stopReason \"error\" (not in the closed enum, and stopReason is required, not lenient) fails the call at `$.result.stopReason`.",
         x_call_failed(3, "$.result.stopReason"), input=resp(3, {"stopReason": "error"}), direction=A2C, pending=P)
    P = pend(3, "session/request_permission")
    case(f"{F}/permission-tool-call-kind-bogus", D,
         "A permission request whose tool call has an unknown kind is dispatched with the kind dropped and a warning.",
         x_request("session/request_permission", 1, "RequestPermissionRequest",
                   {"sessionId": SID, "toolCall": {"toolCallId": "call_1"}, "options": []}, ["$.params.toolCall.kind"]),
         input=req("session/request_permission", {"sessionId": SID, "toolCall": {"toolCallId": "call_1", "kind": "browse"}, "options": []}),
         direction=A2C)


def build_defaults():
    F = f"{T}/defaults"
    R = "acp.v1.defaults.filled"
    P0 = pend(0, "initialize")

    def init_res(cid, desc, result, expect):
        case(f"{F}/{cid}", R, desc, x_response(0, "initialize", "InitializeResponse", expect),
             input=resp(0, result), direction=A2C, pending=P0)

    init_res("agent-capabilities-empty",
             "An initialize result with \"agentCapabilities\": {} re-encodes with every capability default filled in.",
             {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []},
             {"protocolVersion": 1, "agentCapabilities": AGENT_CAPS_DEFAULT, "authMethods": []})
    init_res("agent-capabilities-partial",
             "An initialize result that sets only promptCapabilities.image and mcpCapabilities.http re-encodes with the sibling defaults filled in.",
             {"protocolVersion": 1, "agentCapabilities": {"promptCapabilities": {"image": True}, "mcpCapabilities": {"http": True}}},
             {"protocolVersion": 1,
              "agentCapabilities": with_(AGENT_CAPS_DEFAULT,
                                         promptCapabilities={"image": True, "audio": False, "embeddedContext": False},
                                         mcpCapabilities={"http": True, "sse": False}),
              "authMethods": []})
    init_res("session-capability-markers",
             "Empty object markers in sessionCapabilities and auth are kept as {} and no other marker is invented.",
             {"protocolVersion": 1, "agentCapabilities": {"sessionCapabilities": {"list": {}, "resume": {}}, "auth": {"logout": {}}}},
             {"protocolVersion": 1,
              "agentCapabilities": with_(AGENT_CAPS_DEFAULT, sessionCapabilities={"list": {}, "resume": {}}, auth={"logout": {}}),
              "authMethods": []})
    init_res("session-capability-null-marker",
             "A null session capability marker (meaning unsupported) is kept as null.",
             {"protocolVersion": 1, "agentCapabilities": {"sessionCapabilities": {"list": None}}},
             {"protocolVersion": 1, "agentCapabilities": with_(AGENT_CAPS_DEFAULT, sessionCapabilities={"list": None}),
              "authMethods": []})

    def init_req(cid, desc, params, expect):
        case(f"{F}/{cid}", R, desc, x_request("initialize", 1, "InitializeRequest", expect), input=req("initialize", params))

    init_req("client-capabilities-empty",
             "An initialize request with \"clientCapabilities\": {} re-encodes with fs, terminal and auth defaults filled in.",
             {"protocolVersion": 1, "clientCapabilities": {}},
             {"protocolVersion": 1, "clientCapabilities": CLIENT_CAPS_DEFAULT})
    init_req("client-capabilities-fs-empty",
             "An initialize request with \"fs\": {} re-encodes both fs flags as false.",
             {"protocolVersion": 1, "clientCapabilities": {"fs": {}, "auth": {}}},
             {"protocolVersion": 1, "clientCapabilities": CLIENT_CAPS_DEFAULT})
    init_req("client-capabilities-partial",
             "An initialize request that sets only fs.readTextFile keeps it and fills in the remaining defaults, leaving absent optional objects absent.",
             {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": True}, "session": {}}},
             {"protocolVersion": 1, "clientCapabilities": with_(CLIENT_CAPS_DEFAULT, fs={"readTextFile": True, "writeTextFile": False},
                                                                session={})})
    case(f"{F}/elicitation-schema-empty", R,
         "A form elicitation with an empty requestedSchema re-encodes with `type: \"object\"` and `properties: {}` filled in.",
         x_request(EL, 1, ET, form_x({})), input=req(EL, {"message": "Fill this in", "mode": "form", "sessionId": SID, "requestedSchema": {}}),
         direction=A2C)


def build_three_state():
    F = f"{T}/three-state"
    R = "acp.v1.optional.three-state"
    base = {"sessionUpdate": "session_info_update"}
    update_case(f"{F}/session-info-title-absent", R,
                "A session_info_update without `title` re-encodes without `title` (unchanged).", base, base)
    u = with_(base, title=None)
    update_case(f"{F}/session-info-title-null", R,
                "A session_info_update with \"title\": null re-encodes with an explicit null (clear), distinct from absent.", u, u)
    u = with_(base, title="New title")
    update_case(f"{F}/session-info-title-value", R,
                "A session_info_update with a title string re-encodes with that string (replace).", u, u)
    u = with_(base, title=None, updatedAt="2026-03-04T05:06:07Z")
    update_case(f"{F}/session-info-mixed", R,
                "A session_info_update that clears the title and sets updatedAt keeps both states.", u, u)
    u = with_(base, updatedAt=None, _meta=None)
    update_case(f"{F}/session-info-updated-at-and-meta-null", R,
                "A session_info_update with updatedAt and `_meta` both null keeps both explicit nulls.", u, u)
    c = {"sessionUpdate": "compaction_update", "compactionId": "c1", "status": "completed"}
    update_case(f"{F}/compaction-fields-absent", R,
                "A compaction_update without summary and error re-encodes without them (leave unchanged).", c, c)
    u = with_(c, summary=None, error=None)
    update_case(f"{F}/compaction-fields-null", R,
                "A compaction_update with summary and error null keeps the explicit nulls (clear).", u, u)
    u = with_(c, summary=[])
    update_case(f"{F}/compaction-summary-empty", R,
                "A compaction_update with an empty summary array keeps the empty array (distinct from null and absent).", u, u)
    u = {"sessionUpdate": "tool_call_update", "toolCallId": "call_1", "title": None, "content": None, "locations": None}
    update_case(f"{F}/tool-call-update-nulls", R,
                "A tool_call_update with title, content and locations null keeps the explicit nulls.", u, u)
    u = {"sessionUpdate": "agent_message_chunk", "content": TEXT_MIN, "messageId": None}
    update_case(f"{F}/message-id-null", R,
                "A message chunk with \"messageId\": null keeps the explicit null.", u, u)
    P = pend(3, "session/new")
    r = {"sessionId": SID, "modes": None, "configOptions": None}
    case(f"{F}/new-session-result-nulls", R,
         "A new-session result with modes and configOptions null keeps both explicit nulls.",
         x_response(3, "session/new", "NewSessionResponse", r), input=resp(3, r), direction=A2C, pending=P)



def build_numbers():
    F = f"{T}/numbers"
    R = "acp.v1.numbers.bounds"
    RD = "fs/read_text_file"

    def read(cid, desc, text, expect):
        case(f"{F}/{cid}", R, desc, expect, input_text=text, direction=A2C)

    base = '{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"sessionId":"sess_1","path":"/a",'
    ok = lambda extra: x_request(RD, 1, "ReadTextFileRequest", {"sessionId": SID, "path": "/a", **extra})
    read("uint32-line-negative", "A read_text_file request with line -1 (outside uint32, not lenient) is answered with -32602 at `$.params.line`.",
         base + '"line":-1}}\n', x_reply_error(-32602, 1, "$.params.line"))
    read("uint32-line-zero", "A read_text_file request with line 0 is inside uint32 and is dispatched (the 1-based convention is not a decoding rule).",
         base + '"line":0}}\n', ok({"line": 0}))
    read("uint32-limit-max", "A read_text_file request with limit 4294967295 (the largest uint32) is dispatched with that limit.",
         base + '"limit":4294967295}}\n', ok({"limit": 4294967295}))
    read("uint32-limit-overflow", "A read_text_file request with limit 4294967296 (one above uint32) is answered with -32602 at `$.params.limit`.",
         base + '"limit":4294967296}}\n', x_reply_error(-32602, 1, "$.params.limit"))
    read("uint32-line-fraction", "A read_text_file request with line 1.5 is answered with -32602 at `$.params.line`.",
         base + '"line":1.5}}\n', x_reply_error(-32602, 1, "$.params.line"))
    read("uint32-line-exponent-fraction", "A read_text_file request with line 2.5e0 (a fraction in exponent form) is answered with -32602 at `$.params.line`.",
         base + '"line":2.5e0}}\n', x_reply_error(-32602, 1, "$.params.line"))
    read("uint32-line-null", "A read_text_file request with \"line\": null is dispatched and keeps the explicit null.",
         base + '"line":null}}\n', ok({"line": None}))
    ib = '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":'
    iok = lambda v: x_request("initialize", 1, "InitializeRequest", {"protocolVersion": v, "clientCapabilities": CLIENT_CAPS_DEFAULT})
    case(f"{F}/uint16-protocol-version-max", R, "An initialize request with protocolVersion 65535 (the largest uint16) is dispatched.",
         iok(65535), input_text=ib + "65535}}\n")
    case(f"{F}/uint16-protocol-version-overflow", R, "An initialize request with protocolVersion 65536 (one above uint16) is answered with -32602 at `$.params.protocolVersion`.",
         x_reply_error(-32602, 1, "$.params.protocolVersion"), input_text=ib + "65536}}\n")
    case(f"{F}/uint16-protocol-version-negative", R, "An initialize request with protocolVersion -1 is answered with -32602 at `$.params.protocolVersion`.",
         x_reply_error(-32602, 1, "$.params.protocolVersion"), input_text=ib + "-1}}\n")
    case(f"{F}/uint16-protocol-version-zero", R, "An initialize request with protocolVersion 0 is inside uint16 and is dispatched.",
         iok(0), input_text=ib + "0}}\n")
    case(f"{F}/uint16-protocol-version-fraction", R, "An initialize request with protocolVersion 1.5 is answered with -32602 at `$.params.protocolVersion`.",
         x_reply_error(-32602, 1, "$.params.protocolVersion"), input_text=ib + "1.5}}\n")
    tb = '{"jsonrpc":"2.0","id":1,"method":"terminal/create","params":{"sessionId":"sess_1","command":"ls","outputByteLimit":'
    case(f"{F}/uint64-output-limit-max", R, "A terminal/create request with outputByteLimit 18446744073709551615 (the largest uint64) is dispatched with that exact value.",
         x_request("terminal/create", 1, "CreateTerminalRequest", {"sessionId": SID, "command": "ls", "outputByteLimit": 18446744073709551615}),
         input_text=tb + "18446744073709551615}}\n", direction=A2C)
    case(f"{F}/uint64-output-limit-overflow", R, "A terminal/create request with outputByteLimit 18446744073709551616 (one above uint64) is answered with -32602 at `$.params.outputByteLimit`.",
         x_reply_error(-32602, 1, "$.params.outputByteLimit"), input_text=tb + "18446744073709551616}}\n", direction=A2C)
    case(f"{F}/uint64-output-limit-negative", R, "A terminal/create request with outputByteLimit -1 is answered with -32602 at `$.params.outputByteLimit`.",
         x_reply_error(-32602, 1, "$.params.outputByteLimit"), input_text=tb + "-1}}\n", direction=A2C)
    ub = '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_1","update":{"sessionUpdate":"usage_update",'
    case(f"{F}/uint64-usage-max", R, "A usage update with used and size at the largest uint64 is dispatched with the exact values.",
         x_notification(SU, SN, upd({"sessionUpdate": "usage_update", "used": 18446744073709551615, "size": 18446744073709551615})),
         input_text=ub + '"used":18446744073709551615,"size":18446744073709551615}}}\n', direction=A2C)
    case(f"{F}/uint64-usage-negative", R, "A usage update with used -5 is dropped as an invalid notification.",
         x_ignored("invalid-notification"), input_text=ub + '"used":-5,"size":10}}}\n', direction=A2C)
    case(f"{F}/uint64-usage-fraction", R, "A usage update with size 10.5 is dropped as an invalid notification.",
         x_ignored("invalid-notification"), input_text=ub + '"used":5,"size":10.5}}}\n', direction=A2C)
    case(f"{F}/double-cost-amount", R, "A usage cost with a fractional amount, written in exponent form, is dispatched with the same value.",
         x_notification(SU, SN, upd({"sessionUpdate": "usage_update", "used": 1, "size": 2, "cost": {"amount": 0.0125, "currency": "EUR"}})),
         input_text=ub + '"used":1,"size":2,"cost":{"amount":1.25e-2,"currency":"EUR"}}}}\n', direction=A2C)
    case(f"{F}/double-cost-amount-integer", R, "A usage cost whose amount is the integer 3 is a valid double and is dispatched with the value 3.",
         x_notification(SU, SN, upd({"sessionUpdate": "usage_update", "used": 1, "size": 2, "cost": {"amount": 3, "currency": "USD"}})),
         input_text=ub + '"used":1,"size":2,"cost":{"amount":3,"currency":"USD"}}}}\n', direction=A2C)
    eb = '{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"message":"m","mode":"form","sessionId":"sess_1","requestedSchema":{"properties":{"n":{"type":"integer","minimum":'
    case(f"{F}/int64-integer-property-min", R, "An integer property whose minimum is the smallest int64 is accepted with the exact value.",
         x_request(EL, 1, ET, {"message": "m", "mode": "form", "sessionId": SID,
                               "requestedSchema": {"type": "object", "properties": {"n": {"type": "integer", "minimum": -9223372036854775808}}}}),
         input_text=eb + "-9223372036854775808}}}}}\n", direction=A2C)
    case(f"{F}/int64-integer-property-overflow", R, "An integer property whose minimum is 9223372036854775808 (one above int64) is answered with -32602 at that value.",
         x_reply_error(-32602, 1, "$.params.requestedSchema.properties.n.minimum"),
         input_text=eb + "9223372036854775808}}}}}\n", direction=A2C)
    pb = '{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"sess_1","prompt":[{"type":"resource_link","uri":"file:///a","name":"a","size":'
    case(f"{F}/int64-size-overflow-lenient", "acp.v1.lenient.default-on-error",
         "A resource link whose size is one above int64 keeps the link and drops the size with a warning (size defaults on error).",
         x_request(PR, 1, "PromptRequest", prompt({"type": "resource_link", "uri": "file:///a", "name": "a"}), ["$.params.prompt[0].size"]),
         input_text=pb + "9223372036854775808}]}}\n")
    case(f"{F}/int64-size-negative", R, "A resource link with size -1 is inside int64 and is kept (the field is signed).",
         x_request(PR, 1, "PromptRequest", prompt({"type": "resource_link", "uri": "file:///a", "name": "a", "size": -1})),
         input_text=pb + "-1}]}}\n")


def build_meta_and_unknown_fields():
    F = f"{T}/meta"
    R = "acp.v1.meta.verbatim"
    meta = {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "tracestate": "vendor=abc",
            "baggage": "user=alice", "zed.dev": {"nested": {"deep": [1, {"x": None}, "s"]}, "flag": True}, "n": 1.5}
    prompt_case(f"{F}/reserved-and-nested-keys", R,
                "`_meta` holding the reserved trace keys and nested vendor objects is kept verbatim.",
                prompt(TEXT_MIN, _meta=meta), prompt(TEXT_MIN, _meta=meta))
    prompt_case(f"{F}/empty", R, "An empty `_meta` object is kept as {}.", prompt(TEXT_MIN, _meta={}), prompt(TEXT_MIN, _meta={}))
    prompt_case(f"{F}/null", "acp.v1.optional.three-state", "\"_meta\": null is kept as an explicit null.",
                prompt(TEXT_MIN, _meta=None), prompt(TEXT_MIN, _meta=None))
    inner = with_(TEXT_MIN, _meta={"a": {"b": "c"}}, annotations={"_meta": {"d": []}})
    prompt_case(f"{F}/on-nested-objects", R,
                "`_meta` on a content block and on its annotations is kept verbatim at each level.",
                prompt(inner), prompt(inner))
    p = prompt(TEXT_MIN)
    case(f"{F}/duplicate-key-inside", R,
         "Repeated keys inside `_meta` are not checked (it is free-form JSON) and the request is dispatched.",
         x_request(PR, 1, "PromptRequest"),
         input_text='{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"sess_1","prompt":[{"type":"text","text":"Hello"}],"_meta":{"k":1,"k":2}}}\n')
    r = {"stopReason": "end_turn", "_meta": {"usage": {"inputTokens": 10, "outputTokens": 20}}}
    case(f"{F}/in-result", R, "`_meta` on a prompt result is kept verbatim.",
         x_response(3, PR, "PromptResponse", r), input=resp(3, r), direction=A2C, pending=pend(3, PR))
    raw_in = {"cmd": ["ls", "-la"], "env": None, "n": 0, "deep": {"x": {"y": {"z": []}}}}
    u = with_(TOOL_CALL_MIN, rawInput=raw_in, rawOutput="plain string")
    update_case(f"{F}/raw-input-output-free-form", R,
                "A tool call's rawInput (nested object) and rawOutput (a plain string) are free-form and kept verbatim.", u, u)

    F = f"{T}/unknown-fields"
    R = "acp.v1.fields.unknown-dropped"
    prompt_case(f"{F}/params-top-level", R, "Unknown members at the top of request params are accepted and dropped on re-encoding.",
                prompt(TEXT_MIN, priority="high", extra={"a": 1}), prompt(TEXT_MIN))
    prompt_case(f"{F}/in-content-block", R, "An unknown member inside a known content block is accepted and dropped on re-encoding.",
                prompt(with_(TEXT_MIN, format="markdown")), prompt(TEXT_MIN))
    u = with_(TOOL_CALL_MIN, progress=0.5)
    update_case(f"{F}/in-session-update", R, "An unknown member inside a known session update is accepted and dropped on re-encoding.",
                u, TOOL_CALL_MIN)
    case(f"{F}/in-result", R, "An unknown member in a prompt result is accepted and dropped on re-encoding.",
         x_response(3, PR, "PromptResponse", {"stopReason": "refusal"}),
         input=resp(3, {"stopReason": "refusal", "reason": "policy"}), direction=A2C, pending=pend(3, PR))
    case(f"{F}/in-capabilities", R, "Unknown capability flags in clientCapabilities are accepted and dropped on re-encoding (custom ones belong in `_meta`).",
         x_request("initialize", 1, "InitializeRequest", {"protocolVersion": 1, "clientCapabilities": with_(CLIENT_CAPS_DEFAULT, terminal=True)}),
         input=req("initialize", {"protocolVersion": 1, "clientCapabilities": {"terminal": True, "nes": True, "subagents": {}}}))
    case(f"{F}/in-notification", R, "An unknown member in `session/cancel` params is accepted and dropped on re-encoding.",
         x_notification("session/cancel", "CancelNotification", {"sessionId": SID}),
         input=notif("session/cancel", {"sessionId": SID, "reason": "user"}))


def build_duplicate_keys():
    F = f"{T}/duplicate-keys"
    R = "acp.v1.params.duplicate-keys"
    case(f"{F}/params-session-id", R,
         "Request params in which the known key `sessionId` appears twice are answered with -32602.",
         x_reply_error(-32602, 1),
         input_text='{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"a","sessionId":"b","prompt":[]}}\n')
    case(f"{F}/nested-known-key", R,
         "A content block in which the known key `text` appears twice makes the request fail with -32602.",
         x_reply_error(-32602, 1),
         input_text='{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"a","prompt":[{"type":"text","text":"x","text":"y"}]}}\n')
    case(f"{F}/params-unknown-key", R,
         "Request params in which an unknown key appears twice are dispatched normally.",
         x_request(PR, 1, "PromptRequest", {"sessionId": "a", "prompt": []}),
         input_text='{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"a","prompt":[],"x":1,"x":2}}\n')
    case(f"{F}/raw-input-key", R,
         "Repeated keys inside a tool call's free-form rawInput are not checked and the notification is dispatched.",
         x_notification(SU, SN),
         input_text='{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"a","update":{"sessionUpdate":"tool_call","toolCallId":"c","title":"t","rawInput":{"a":1,"a":2}}}}\n',
         direction=A2C)
    case(f"{F}/result-known-key", R,
         "A prompt result in which `stopReason` appears twice fails the pending call at the repeated key.",
         x_call_failed(3, "$.result.stopReason"),
         input_text='{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn","stopReason":"cancelled"}}\n',
         direction=A2C, pending=pend(3, PR))


def build_default_on_null():
    """`x-deserialize-default-on-null`: `null` reads as the field's empty value, with a warning."""
    F = f"{T}/default-on-null"
    R = "acp.v1.lenient.default-on-null"
    stdio = {"name": "fs", "command": "/bin/mcp", "args": [], "env": []}
    case(f"{F}/session-new-mcp-servers-null", R,
         "session/new with `mcpServers: null` (required, annotated default-on-null) decodes with an empty list and a warning.",
         x_request("session/new", 1, "NewSessionRequest", {"cwd": "/repo", "mcpServers": []}, ["$.params.mcpServers"]),
         input=req("session/new", {"cwd": "/repo", "mcpServers": None}))
    case(f"{F}/mcp-stdio-env-null", R,
         "A stdio MCP server with `env: null` decodes with an empty env and a warning at that member.",
         x_request("session/new", 1, "NewSessionRequest", {"cwd": "/repo", "mcpServers": [stdio]},
                   ["$.params.mcpServers[0].env"]),
         input=req("session/new", {"cwd": "/repo", "mcpServers": [{**stdio, "env": None}]}))
    case(f"{F}/mcp-http-headers-null", R,
         "An HTTP MCP server with `headers: null` decodes with no headers and a warning.",
         x_request("session/new", 1, "NewSessionRequest",
                   {"cwd": "/repo", "mcpServers": [{"type": "http", "name": "h", "url": "https://mcp.example.com", "headers": []}]},
                   ["$.params.mcpServers[0].headers"]),
         input=req("session/new", {"cwd": "/repo", "mcpServers": [{"type": "http", "name": "h", "url": "https://mcp.example.com", "headers": None}]}))
    case(f"{F}/terminal-create-args-null", R,
         "terminal/create with `args: null` (optional, default-on-null) decodes as if `args` were absent, with a warning.",
         x_request("terminal/create", 1, "CreateTerminalRequest", {"sessionId": "sess_1", "command": "ls"}, ["$.params.args"]),
         input=req("terminal/create", {"sessionId": "sess_1", "command": "ls", "args": None}), direction=A2C)


def build_unions_misc():
    F = f"{T}/unions"
    P = pend(3, "session/request_permission")
    r = {"outcome": {"outcome": "deferred", "until": "later"}}
    case(f"{F}/permission-outcome-unknown", "acp.v1.union.closed-unknown-kept",
         "A permission result with the unknown outcome \"deferred\" is kept raw as an unknown variant with a warning at `$.result.outcome`.",
         x_response(3, "session/request_permission", "RequestPermissionResponse", r, ["$.result.outcome"]),
         input=resp(3, r), direction=C2A, pending=P)
    case(f"{F}/permission-outcome-missing-tag", "acp.v1.union.known-tag-strict",
         "A permission result whose outcome object has no `outcome` tag fails the call at `$.result.outcome`.",
         x_call_failed(3, "$.result.outcome"), input=resp(3, {"outcome": {"optionId": "allow"}}), direction=C2A, pending=P)
    r = {"outcome": {"outcome": "cancelled"}}
    case(f"{F}/permission-outcome-cancelled", "acp.v1.type.permission-outcome",
         "A permission result with the cancelled outcome is decoded as that variant.",
         x_response(3, "session/request_permission", "RequestPermissionResponse", r), input=resp(3, r), direction=C2A, pending=P)
    P = pend(3, "session/new")
    for sev in ("info", "warning", "error"):
        u = {"sessionUpdate": "notice", "severity": sev, "title": "t"}
        update_case(f"{F}/notice-severity-{sev}", "acp.v1.type.session-update",
                    f"A notice with severity \"{sev}\" is dispatched with that severity.", u, u)
    u = {"sessionUpdate": "notice", "severity": "critical", "title": "Disk full"}
    update_case(f"{F}/notice-severity-unknown", "acp.v1.union.open-unknown-kept",
                "A notice with the unknown severity \"critical\" keeps it as a string without a warning (the severity enum is open).", u, u)
    u = {"sessionUpdate": "notice", "severity": "_debug", "title": "Trace"}
    update_case(f"{F}/notice-severity-custom", "acp.v1.union.open-unknown-kept",
                "A notice with the custom severity \"_debug\" keeps it without a warning.", u, u)
    for st in ("in_progress", "completed", "failed", "cancelled"):
        u = {"sessionUpdate": "compaction_update", "compactionId": "c1", "status": st}
        update_case(f"{F}/compaction-status-{st.replace('_', '-')}", "acp.v1.type.session-update",
                    f"A compaction update with status \"{st}\" is dispatched with that status.", u, u)
    u = {"sessionUpdate": "compaction_update", "compactionId": "c1", "status": "paused"}
    update_case(f"{F}/compaction-status-unknown", "acp.v1.union.open-unknown-kept",
                "A compaction update with the unknown status \"paused\" keeps it without a warning (the status enum is open).", u, u)
    update_bad(f"{F}/notice-severity-not-string", "acp.v1.type.session-update",
               "A notice whose severity is the number 2 (not a string) is dropped as an invalid notification.",
               {"sessionUpdate": "notice", "severity": 2, "title": "t"})
    u = {"sessionUpdate": "tool_call", "toolCallId": "c", "title": "t", "status": "cancelled"}
    update_case(f"{F}/tool-status-v2-value", "acp.v1.lenient.default-on-error",
                "A tool call with the v2-only status \"cancelled\" (unknown to the closed v1 enum) drops the status with a warning.",
                u, {"sessionUpdate": "tool_call", "toolCallId": "c", "title": "t"}, ["$.params.update.status"])
    u = {"sessionUpdate": "tool_call", "toolCallId": "c", "title": "t", "kind": "unknown"}
    update_case(f"{F}/tool-kind-v2-value", "acp.v1.lenient.default-on-error",
                "A tool call with the v2-only kind \"unknown\" drops the kind with a warning.",
                u, {"sessionUpdate": "tool_call", "toolCallId": "c", "title": "t"}, ["$.params.update.kind"])



REQUIREMENTS.update({
    "acp.v1.lenient.default-on-null": {"source": S + "x-deserialize-default-on-null annotations",
        "text": "A member annotated default-on-null that holds null reads as its empty value (required) or as absent (optional), and a warning names it."},
    "acp.v1.direction": {"source": S + "x-side annotations; spec: notes/acp.md section 4.1",
        "text": "Each method is handled by one side only; a request reaching the other side is answered with -32601 and a notification reaching it is dropped as unknown."},
    "acp.v1.dispatch.kind": {"source": S + "x-method on *Request vs *Notification $defs",
        "text": "Dispatch keys on the message kind as well as the name: a request method sent as a notification, or a notification method sent with an id, is treated as unknown."},
    "acp.v1.error-reply": {"source": S + "$defs/Error, $defs/ErrorCode; spec: notes/acp.md section 3",
        "text": "An error response to a pending ACP call, including ACP-specific codes such as -32000, -32002 and -32800, resolves that call with the peer's error."},
    "acp.v1.result.empty-null": {"source": "spec: notes/acp.md section 10 trap 1 (docs show `session/load` result null); sdk: decoding rule 10",
        "text": "A null result for a method whose result type is an object without required members is accepted as that empty object and re-encodes as {}."},
    "acp.v1.fields.unknown-dropped": {"source": S + "(no additionalProperties: false anywhere); sdk: decoding rule 1",
        "text": "Unknown members of known objects are accepted and are not re-encoded."},
    "acp.v1.meta.verbatim": {"source": S + "`_meta` properties; spec: notes/acp.md section 8",
        "text": "`_meta` and other free-form values (rawInput, rawOutput) are kept exactly as received, including reserved trace keys, nested values and explicit nulls."},
    "acp.v1.union.closed-unknown-kept": {"source": "sdk: decoding rule 7; spec: notes/acp.md section 9 (closed unions)",
        "text": "An unknown tag on a closed tagged union is kept as an unknown variant holding the raw JSON, re-encoded identically, with a warning at the union's path."},
    "acp.v1.union.open-unknown-kept": {"source": S + "`\"title\": \"other\"` branches; sdk: decoding rules 7 and 8",
        "text": "An unknown value on an open union or enum (one with an `other` branch) is kept as received without a warning."},
    "acp.v1.union.known-tag-strict": {"source": S + "`not: {anyOf: [known tags]}` on `other` branches; sdk: decoding rule 7",
        "text": "A known tag with a malformed body, a missing tag, or a tag that is not a string is an error; it never falls back to the unknown variant."},
    "acp.v1.union.untagged-default": {"source": S + "$defs/McpServer (stdio), $defs/AuthMethod (agent)",
        "text": "An object without the tag field decodes as the union's untagged default variant (stdio MCP server, agent auth method) and re-encodes without a tag."},
    "acp.v1.union.untagged-structural": {"source": S + "$defs/EmbeddedResourceResource, $defs/SessionConfigSelectOptions, $defs/SetSessionConfigOptionRequest",
        "text": "Untagged unions are told apart by their shape: `text` vs `blob`, a list of options vs a list of groups, and `type: \"boolean\"` vs a string value id (which also absorbs unknown `type`s)."},
    "acp.v1.lenient.default-on-error": {"source": S + "x-deserialize-default-on-error; sdk: decoding rule 5",
        "text": "An optional field marked default-on-error that holds a value of the wrong shape is replaced by its default (or removed when it has none) with a warning at its path, and the message is accepted."},
    "acp.v1.lenient.skip-invalid-items": {"source": S + "x-deserialize-skip-invalid-items; sdk: decoding rule 6",
        "text": "In an array marked skip-invalid-items, each malformed item is dropped with a warning at its own path and the remaining items are kept in order."},
    "acp.v1.defaults.filled": {"source": S + "`default` keywords (capabilities, ElicitationSchema); sdk: decoding rule 2",
        "text": "A field with a schema default is filled in when absent, recursively inside defaulted objects, and is always encoded."},
    "acp.v1.optional.three-state": {"source": S + "nullable optional fields (SessionInfoUpdate, CompactionUpdate); sdk: decoding rule 3",
        "text": "A nullable optional field keeps the difference between absent, null and a value through a decode and re-encode."},
    "acp.v1.numbers.bounds": {"source": S + "`format` uint16/uint32/uint64/int64/double; sdk: decoding rule 9",
        "text": "Integer fields enforce their format's range and reject fractions, including values written in exponent form; in-range extremes are kept exactly."},
    "acp.v1.enum.closed-rejected": {"source": S + "oneOf-of-const enums without an `other` branch; sdk: decoding rule 8",
        "text": "An unknown value of a closed string enum is an error unless the field is lenient, where it becomes a warning."},
    "acp.v1.params.duplicate-keys": {"source": "sdk: decoding rule 11",
        "text": "A known key repeated within one params or result object is an error, while repeated unknown keys and keys inside free-form JSON are not checked."},
    "acp.v1.current-mode-update.field": {"source": S + "$defs/CurrentModeUpdate; issue: see notes/acp.md section 10 trap 2",
        "text": "`current_mode_update` requires `currentModeId`; the `modeId` spelling from the prose docs is not accepted by the strict decoder."},
    "acp.v1.type.session-update": {"source": S + "$defs/SessionUpdate",
        "text": "Each of the 14 stable session update kinds decodes with its own shape and re-encodes unchanged."},
    "acp.v1.type.content-block": {"source": S + "$defs/ContentBlock",
        "text": "Each content block kind (text, image, audio, resource_link, resource) decodes with its own required members and optional annotations."},
    "acp.v1.type.tool-call-content": {"source": S + "$defs/ToolCallContent",
        "text": "Tool call content items are `content`, `diff` or `terminal` objects told apart by `type`."},
    "acp.v1.type.mcp-server": {"source": S + "$defs/McpServer",
        "text": "MCP server configurations decode as stdio, http or sse with their required members."},
    "acp.v1.type.auth-method": {"source": S + "$defs/AuthMethod",
        "text": "Auth methods decode as agent (no type) or terminal, with terminal args and env kept."},
    "acp.v1.type.config-option": {"source": S + "$defs/SessionConfigOption",
        "text": "Session config options decode as select or boolean options with their category and current value."},
    "acp.v1.type.elicitation": {"source": S + "$defs/CreateElicitationRequest, $defs/ElicitationSchema",
        "text": "Elicitation requests decode in form or url mode, scoped to a session or a request, with each restricted property schema type."},
    "acp.v1.type.permission-outcome": {"source": S + "$defs/RequestPermissionOutcome",
        "text": "A permission outcome is `cancelled` or `selected` with an optionId, told apart by `outcome`."},
})




def main():
    build_jsonrpc()
    build_methods()
    build_types()

    # every `max` input must carry every declared property (and no unknown ones)
    problems = []
    for cid, type_name, value, base, allow in MAX_CHECKS:
        problems += [f"{cid}: {p}" for p in completeness(type_name, value, base, allow)]
    if problems:
        print("\n".join(problems))
        sys.exit(1)

    files = {}
    for cid, c in CASES.items():
        files[VECTORS / (cid + ".json")] = json.dumps(c, indent=2, ensure_ascii=False) + "\n"
    used = sorted({c["requirement"] for c in CASES.values()})
    unused = sorted(set(REQUIREMENTS) - set(used))
    if unused:
        print("unused requirements:", ", ".join(unused))
        sys.exit(1)
    files[VECTORS / "requirements.json"] = json.dumps(
        {k: REQUIREMENTS[k] for k in sorted(REQUIREMENTS)}, indent=2, ensure_ascii=False) + "\n"

    if "--check" in sys.argv:
        bad = [str(p) for p, t in files.items() if not p.exists() or p.read_text() != t]
        on_disk = {p for d in ("jsonrpc", "acp") for p in (VECTORS / d).rglob("*.json")}
        extra = sorted(str(p) for p in on_disk - set(files))
        if bad or extra:
            print("differs:", *bad, *extra, sep="\n  ")
            sys.exit(1)
        print(f"{len(CASES)} cases up to date")
        return

    for d in ("jsonrpc", "acp"):
        if (VECTORS / d).exists():
            shutil.rmtree(VECTORS / d)
    for p, t in files.items():
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(t)
    print(f"wrote {len(CASES)} cases")


if __name__ == "__main__":
    main()
