"""Shared helpers of the A2A vector authoring script (a2a_author.py): the case table,
the request and answer builders for both bindings, and the requirement table."""

from __future__ import annotations

import json
import urllib.parse

from a2a_canonical import MODEL, NotValid, normalize

CASES: dict[str, dict] = {}
REQUIREMENTS: dict[str, dict] = {}
ABSENT = object()

METHODS = {m["wire"]: m for m in MODEL["methods"]}
OPS = list(METHODS)
C2S = "client_to_server"
S2C = "server_to_client"
V1 = {"A2A-Version": "1.0"}
JSON_CT = {"Content-Type": "application/json"}
PROTO = "spec: spec/a2a/v1.0/a2a.proto"
NOTES = "spec: A2A 1.0.1"


def req_type(op: str) -> str:
    return METHODS[op]["params"]


def res_type(op: str) -> str:
    return METHODS[op]["result"]


# The a2a-tck requirement ids (branch 1.0-dev, tck/requirements/*.py) a requirement checks
# too; they are named in its source.
TCK = {
    "a2a.v1.request.invalid-params": "CORE-ERR-002, JSONRPC-ERR-001, HTTP_JSON-ERR-001, HTTP_JSON-ERR-002",
    "a2a.v1.protojson.unknown-fields": "DM-SERIAL-005",
    "a2a.v1.request.params-object": "JSONRPC-FMT-001",
    "a2a.v1.type.message": "DM-MSG-001, DM-PART-001",
    "a2a.v1.protojson.enum": "DM-SERIAL-002, DM-MSG-002, DM-TASK-002",
    "a2a.v1.protojson.proto-names": "DM-SERIAL-001",
    "a2a.v1.protojson.timestamp": "DM-SERIAL-003",
    "a2a.v1.rest.query": "HTTP_JSON-QP-001",
    "a2a.v1.jsonrpc.envelope": "JSONRPC-FMT-001, JSONRPC-SVC-001, JSONRPC-ERR-001",
    "a2a.v1.rest.routes": "HTTP_JSON-URL-001, HTTP_JSON-URL-002",
    "a2a.v1.rest.subscribe-verbs": "HTTP_JSON-URL-002",
    "a2a.v1.rest.media-type": "HTTP_JSON-SVC-001",
    "a2a.v1.version.header": (
        "VER-SERVER-001, VER-SERVER-002, VER-SERVER-003, VER-CLIENT-002, JSONRPC-SVC-002, HTTP_JSON-SVC-002"
    ),
    "a2a.v1.answer.error": "JSONRPC-ERR-003, HTTP_JSON-ERR-001, HTTP_JSON-ERR-002",
    "a2a.v1.answer.envelope": "JSONRPC-FMT-001",
    "a2a.v1.flow.lifecycle": (
        "CORE-SEND-001, CORE-SEND-002, CORE-GET-001, CORE-GET-002, CORE-STREAM-001, CORE-STREAM-003, "
        "CORE-CANCEL-001, CORE-CANCEL-002, CORE-CANCEL-003, CORE-HIST-001, CORE-MULTI-004, CORE-CAP-003, "
        "STREAM-ORDER-001"
    ),
    "a2a.v1.flow.stream-states": (
        "CORE-STREAM-001, CORE-STREAM-003, STREAM-ORDER-001, JSONRPC-SSE-001, HTTP_JSON-SSE-001"
    ),
    "a2a.v1.flow.subscribe": (
        "STREAM-SUB-001, STREAM-SUB-002, STREAM-SUB-003, STREAM-SUB-004, STREAM-ORDER-002, STREAM-ORDER-003, "
        "STREAM-ORDER-004"
    ),
    "a2a.v1.flow.return-immediately": (
        "CORE-EXECUTION-MODE-001, CORE-EXECUTION-MODE-002, CORE-MULTI-005, CORE-MULTI-006, CORE-HIST-002, "
        "CORE-HIST-003, CORE-HIST-005"
    ),
    "a2a.v1.flow.list-tasks": "CORE-LIST-002, CORE-LIST-004, CORE-LIST-005",
    "a2a.v1.flow.direct-message": "CORE-SEND-001, CORE-STREAM-002",
    "a2a.v1.flow.push-configs": (
        "PUSH-CREATE-001, PUSH-GET-001, PUSH-GET-002, PUSH-LIST-001, PUSH-DEL-001, PUSH-DEL-002"
    ),
}


def requirement(rid: str, source: str, text: str) -> str:
    if rid not in REQUIREMENTS:
        if rid in TCK:
            source += f"; a2a-tck 1.0-dev: {TCK[rid]}"
        REQUIREMENTS[rid] = {"source": source, "text": text}
    return rid


def compact(v) -> str:
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def add(cid: str, req: str, description: str, *, direction: str, binding: str, operation, http: dict,
        expect: dict, input=ABSENT, input_text=None, input_base64=None) -> dict:
    cid = "a2a/v1/" + cid
    assert cid not in CASES, cid
    assert req in REQUIREMENTS, (cid, req)
    c = {"id": cid, "requirement": req, "description": description, "protocol": "a2a/v1",
         "direction": direction, "binding": binding, "operation": operation, "http": http}
    n = 0
    for k, v in (("input", input), ("input_text", input_text), ("input_base64", input_base64)):
        if v is not ABSENT and v is not None:
            c[k] = v
            n += 1
    assert n <= 1, cid
    c["expect"] = expect
    CASES[cid] = c
    return c


# ---------------------------------------------------------------------------
# Requests

def rpc_body(op: str, params=ABSENT, id=1) -> dict:
    body = {"jsonrpc": "2.0", "id": id, "method": op}
    if params is not ABSENT:
        body["params"] = params
    return body


def rpc_http(headers=None) -> dict:
    return {"method": "POST", "path": "", "headers": {**V1, **JSON_CT} if headers is None else headers}


def path_fields(rule: dict) -> list[str]:
    out = []
    for seg in rule["path"].split("/"):
        if seg.startswith("{"):
            name = seg[1:seg.index("}")]
            out.append(name)
    return out


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def query_text(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def rest_request(op: str, params: dict, *, query_extra: str = "", verb: str | None = None):
    """The HTTP request of `op` on the HTTP+JSON binding: (http, body or ABSENT).
    Path variables come out of `params` (the `/{tenant}/…` rule when it has a tenant);
    the other fields are the body (POST rules) or the query string (GET, DELETE)."""
    rules = METHODS[op]["http"]
    params = dict(params)
    rule = rules[1] if params.get("tenant") else rules[0]
    path = rule["path"]
    for name in path_fields(rule):
        key = camel(name)
        value = params.pop(key, None)
        assert value is not None, (op, key)
        path = path.replace("{" + name + "}", urllib.parse.quote(str(value), safe=""))
    headers = dict(V1)
    body = ABSENT
    if rule["body"]:
        headers.update(JSON_CT)
        body = params
    else:
        pairs = [f"{k}={urllib.parse.quote(query_text(v), safe='')}" for k, v in params.items()]
        if query_extra:
            pairs.append(query_extra)
        if pairs:
            path += "?" + "&".join(pairs)
    return {"method": verb or rule["method"].upper(), "path": path, "headers": headers}, body


def dispatched(op: str, params) -> dict:
    return {"outcome": "dispatched", "operation": op, "type": req_type(op),
            "params": normalize(req_type(op), params)}


def rpc_refused(code: int, reason: str, path: str | None = None, kind: str | None = None, id=1) -> dict:
    error = {"code": code, "reason": reason}
    if path is not None:
        error["path"] = path
    if kind is not None:
        error["kind"] = kind
    return {"outcome": "refused", "id": id, "error": error}


STATUS = {400: "INVALID_ARGUMENT", 404: "NOT_FOUND", 405: "UNIMPLEMENTED"}


def rest_refused(http_status: int, reason: str, path: str | None = None, kind: str | None = None,
                 status: str | None = None) -> dict:
    error = {"status": status or STATUS[http_status], "reason": reason}
    if path is not None:
        error["path"] = path
    if kind is not None:
        error["kind"] = kind
    return {"outcome": "refused", "http_status": http_status, "error": error}


def invalid(binding: str, path: str, kind: str | None) -> dict:
    """Invalid params at `path` (written from the request object, `$.x`) on `binding`."""
    if binding == "jsonrpc":
        return rpc_refused(-32602, "INVALID_PARAMS", "$.params" + path[1:], kind)
    return rest_refused(400, "INVALID_PARAMS", path, kind)


def request_case(cid: str, req: str, description: str, binding: str, op: str, params, expect: dict,
                 *, rpc_text: str | None = None, rest_text: str | None = None, headers=None,
                 query_extra: str = ""):
    """A request of `op` with `params` on `binding`; `rpc_text`/`rest_text` replace the
    body by exact text when the case needs what a JSON value cannot hold."""
    if binding == "jsonrpc":
        http = rpc_http(headers)
        if query_extra:
            http["path"] = "?" + query_extra
        if rpc_text is not None:
            return add(cid, req, description, direction=C2S, binding=binding, operation=op, http=http,
                       expect=expect, input_text=rpc_text)
        return add(cid, req, description, direction=C2S, binding=binding, operation=op, http=http,
                   expect=expect, input=rpc_body(op, params))
    http, body = rest_request(op, params, query_extra=query_extra)
    if headers is not None:
        http["headers"] = headers
    if rest_text is not None:
        return add(cid, req, description, direction=C2S, binding=binding, operation=op, http=http,
                   expect=expect, input_text=rest_text)
    return add(cid, req, description, direction=C2S, binding=binding, operation=op, http=http,
               expect=expect, input=body)


# ---------------------------------------------------------------------------
# Answers

SSE_CT = {"Content-Type": "text/event-stream"}


def answer_case(cid: str, req: str, description: str, binding: str, op: str, result, expect: dict,
                *, status: int = 200, text: str | None = None, envelope=None):
    """An answer to `op` carrying `result` on `binding`. JSON-RPC wraps it in a response
    envelope whose id is the placeholder `"$request-id"`; `envelope` replaces the whole
    body. A streaming operation's answer is one SSE event holding the body."""
    streaming = METHODS[op]["streaming"]
    if binding == "jsonrpc":
        body = envelope if envelope is not None else {"jsonrpc": "2.0", "id": "$request-id", "result": result}
        ct = SSE_CT if streaming and status == 200 else JSON_CT
    else:
        body = envelope if envelope is not None else result
        ct = SSE_CT if streaming and status == 200 else {"Content-Type": "application/a2a+json"}
    http = {"status": status, "headers": dict(ct)}
    if text is not None:
        return add(cid, req, description, direction=S2C, binding=binding, operation=op, http=http,
                   expect=expect, input_text=text)
    return add(cid, req, description, direction=S2C, binding=binding, operation=op, http=http,
               expect=expect, input=body)


def decoded(op: str, result) -> dict:
    return {"outcome": "decoded", "type": res_type(op), "result": normalize(res_type(op), result)}


def call_failed(binding: str, path: str, kind: str | None, streaming: bool = False) -> dict:
    """A local decode error at `path`, written from the result (`$.x`)."""
    if binding == "jsonrpc":
        path = "$.result" + path[1:]
    out = {"outcome": "call_failed", "path": path}
    if kind is not None:
        out["kind"] = kind
    return out


def check_expectations():
    """Every decoded outcome's value is valid for its type (normalize raises otherwise)."""
    for cid, c in CASES.items():
        e = c["expect"]
        try:
            if e["outcome"] == "dispatched":
                assert normalize(e["type"], e["params"]) == e["params"], cid
            elif e["outcome"] == "decoded":
                assert normalize(e["type"], e["result"]) == e["result"], cid
        except NotValid as ex:
            raise SystemExit(f"{cid}: {ex}")
