#!/usr/bin/env python3
"""Checks the A2A vector files (vectors/a2a/, vectors/baselines/a2a-*.json) against the
format of vectors/README.md, "A2A": the fields of every case and flow, id = path, known
requirements, operations and decode kinds, a golden file exactly where a message decodes
and holding the reference encoder's bytes, flow steps and variables, no stray files.

    python3 vectors/lint_a2a.py      # exit 1 on any problem
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import sys
import tomllib
from pathlib import Path

VECTORS = Path(__file__).resolve().parent
sys.path.insert(0, str(VECTORS / "tools"))

from a2a_canonical import MODEL, NotValid, canonical_bytes, normalize
from layout import corpus

A2A = corpus("a2a")
REQUIREMENTS = A2A["requirements"]
FLOWS = A2A["flows"] + "/"

OPERATIONS = {m["wire"]: m for m in MODEL["methods"]}
KINDS = {k["name"] for k in tomllib.loads((VECTORS.parent / "rules/decode.toml").read_text())["kinds"]}
BINDINGS = ("jsonrpc", "rest")
CASE_FIELDS = {"id", "requirement", "description", "protocol", "direction", "binding", "operation", "http", "expect"}
INPUTS = ("input", "input_text", "input_base64")
OUTCOMES = {
    "client_to_server": {
        "dispatched": ({"outcome", "operation", "type", "params"}, {"http_status"}),
        "refused": ({"outcome", "error"}, {"id", "http_status"}),
    },
    "server_to_client": {
        "decoded": ({"outcome", "type", "result"}, set()),
        "call_failed": ({"outcome"}, {"path", "kind"}),
        "error_reply": ({"outcome"}, {"error", "http_status"}),
    },
}
ERROR_MEMBERS = {"code", "status", "reason", "path", "kind", "expected", "found"}
STEP_MEMBERS = {
    "call": ({"operation", "params", "expect"}, set()),
    "open": ({"stream", "operation", "params"}, {"last_event_id"}),
    "open_refused": ({"operation", "params", "expect"}, set()),
    "events": ({"stream", "expect"}, set()),
    "ended": ({"stream"}, set()),
    "close": ({"stream"}, set()),
}
VAR = re.compile(r"^\$\{([A-Za-z0-9_]+)\}$")

problems: list[str] = []


def bad(where: str, why: str) -> None:
    problems.append(f"{where}: {why}")


def check_requirements() -> dict:
    try:
        reqs = json.loads((VECTORS / REQUIREMENTS).read_text())
    except (OSError, ValueError) as ex:
        bad(REQUIREMENTS, str(ex))
        return {}
    for k, v in reqs.items():
        if not re.fullmatch(r"a2a\.v1\.[a-z0-9.\-A-Z]+", k):
            bad(REQUIREMENTS, f"{k}: ids start with a2a.v1.")
        if not isinstance(v, dict) or set(v) != {"source", "text"}:
            bad(REQUIREMENTS, f"{k}: needs exactly `source` and `text`")
            continue
        if not re.match(r"^(spec|sdk|issue): \S", v["source"]):
            bad(REQUIREMENTS, f"{k}: source must start with 'spec: ', 'sdk: ' or 'issue: '")
        if not str(v["text"]).strip():
            bad(REQUIREMENTS, f"{k}: empty text")
    return reqs


def check_error(cid: str, e: dict, binding: str, direction: str) -> None:
    err = e.get("error")
    if not isinstance(err, dict) or not err or set(err) - ERROR_MEMBERS:
        bad(cid, f"expect.error holds some of {sorted(ERROR_MEMBERS)}")
        return
    if ("expected" in err) != ("found" in err) or ("expected" in err and "kind" not in err):
        bad(cid, "`expected` and `found` come together, with the `kind` of the decode failure")
    if "kind" in err and err["kind"] not in KINDS:
        bad(cid, f"unknown decode kind {err['kind']!r}")
    if "path" in err and not str(err["path"]).startswith("$"):
        bad(cid, "a path starts with $")
    if binding == "jsonrpc" and ("status" in err or "http_status" in e):
        bad(cid, "a JSON-RPC error states `code`, not an HTTP status")
    if binding == "rest" and "code" in err:
        bad(cid, "an HTTP+JSON error states `status` and `http_status`, not a JSON-RPC code")
    if binding == "rest" and direction == "client_to_server" and "http_status" not in e:
        bad(cid, "an HTTP+JSON refusal states `http_status`")
    if binding == "jsonrpc" and direction == "client_to_server" and "code" not in err:
        bad(cid, "a JSON-RPC refusal states `code`")


def check_case(cid: str, c: dict, reqs: dict, golden: bytes | None) -> None:
    missing = CASE_FIELDS - set(c)
    extra = set(c) - CASE_FIELDS - set(INPUTS)
    if missing or extra:
        bad(cid, f"fields: missing {sorted(missing)}, unknown {sorted(extra)}")
        return
    if c["requirement"] not in reqs:
        bad(cid, f"requirement {c['requirement']!r} is not in a2a/requirements.json")
    if c["protocol"] != "a2a/v1" or c["binding"] not in BINDINGS or c["direction"] not in OUTCOMES:
        bad(cid, "protocol a2a/v1, binding jsonrpc|rest, direction client_to_server|server_to_client")
        return
    if not isinstance(c["description"], str) or not c["description"].strip().endswith("."):
        bad(cid, "description: one sentence ending with a period")
    op = c["operation"]
    if op is not None and op not in OPERATIONS:
        bad(cid, f"unknown operation {op!r}")
    parts = cid.split("/")
    if parts[2] in OPERATIONS:
        want_dir = {"request": "client_to_server", "answer": "server_to_client"}.get(parts[3])
        if len(parts) != 6 or op != parts[2] or c["binding"] != parts[4] or c["direction"] != want_dir:
            bad(cid, "the folder names operation/request|answer/binding, which the case must repeat")
    elif parts[2] in ("envelope", "version"):
        if len(parts) != 5 or parts[3] != c["binding"] or c["direction"] != "client_to_server":
            bad(cid, f"{parts[2]}/<binding>/<name> holds requests of that binding")
    else:
        bad(cid, "a case lives under <Operation>/, envelope/ or version/")
    given = [k for k in INPUTS if k in c]
    if len(given) > 1:
        bad(cid, "at most one of input, input_text, input_base64")
    if "input_base64" in c:
        try:
            base64.b64decode(c["input_base64"], validate=True)
        except binascii.Error:
            bad(cid, "input_base64 is not base64")
    http = c["http"]
    if c["direction"] == "client_to_server":
        if set(http) != {"method", "path", "headers"}:
            bad(cid, "a request's http holds method, path, headers")
        elif c["binding"] == "jsonrpc" and (http["method"] != "POST" or not re.fullmatch(r"(\?.*)?", http["path"])):
            bad(cid, "a JSON-RPC request is a POST whose path is empty or a query string")
        elif c["binding"] == "rest" and not http["path"].startswith("/"):
            bad(cid, "an HTTP+JSON path starts with /")
    else:
        if set(http) != {"status", "headers"} or not given:
            bad(cid, "an answer's http holds status and headers, and it has a body")
        if op is None:
            bad(cid, "an answer names its operation")
    if not isinstance(http.get("headers"), dict) or not all(isinstance(v, str) for v in http["headers"].values()):
        bad(cid, "headers are an object of strings")
    e = c["expect"]
    spec = OUTCOMES[c["direction"]].get(e.get("outcome"))
    if spec is None:
        bad(cid, f"outcome {e.get('outcome')!r} does not exist for {c['direction']}")
        return
    need, may = spec
    if need - set(e) or set(e) - need - may:
        bad(cid, f"expect for {e['outcome']}: needs {sorted(need)}, may hold {sorted(may)}")
        return
    if e["outcome"] == "error_reply" and not ({"error", "http_status"} & set(e)):
        bad(cid, "an error reply states its error or its HTTP status")
    decodes = e["outcome"] in ("dispatched", "decoded")
    if decodes:
        value = e["params"] if e["outcome"] == "dispatched" else e["result"]
        if e["outcome"] == "dispatched" and (e["operation"] != op or e["type"] != OPERATIONS[op]["params"]):
            bad(cid, "a dispatch names the case's operation and its request message")
        if e["outcome"] == "decoded" and e["type"] != OPERATIONS[op]["result"]:
            bad(cid, f"the answer to {op} is {OPERATIONS[op]['result']}")
        try:
            if normalize(e["type"], value) != value:
                bad(cid, "the decoded value is not in canonical form (a2a_canonical.normalize changes it)")
            elif golden is None:
                bad(cid, "a case whose message decodes needs its .canonical golden file")
            elif golden != canonical_bytes(e["type"], value):
                bad(cid, "the golden file differs from the reference encoder's bytes")
        except NotValid as ex:
            bad(cid, f"the decoded value is not valid: {ex}")
        # what the reference reader makes of a JSON-RPC request's params must be the expectation
        if e["outcome"] == "dispatched" and c["binding"] == "jsonrpc" and isinstance(c.get("input"), dict):
            params = c["input"].get("params")
            try:
                if normalize(e["type"], {} if params is None else params) != value:
                    bad(cid, "the reference reader decodes the input's params to another value than `params`")
            except NotValid as ex:
                bad(cid, f"the reference reader refuses the input's params: {ex}")
    elif golden is not None:
        bad(cid, "a golden file belongs only beside a case whose message decodes")
    if "error" in e:
        check_error(cid, e, c["binding"], c["direction"])
    if e["outcome"] == "call_failed" and "kind" in e and e["kind"] not in KINDS:
        bad(cid, f"unknown decode kind {e['kind']!r}")


def variables(v, out: set) -> None:
    if isinstance(v, str):
        m = VAR.match(v)
        if m:
            out.add(m.group(1))
    elif isinstance(v, list):
        for x in v:
            variables(x, out)
    elif isinstance(v, dict):
        for x in v.values():
            variables(x, out)


def check_flow(fid: str, f: dict, reqs: dict) -> None:
    fields = {"id", "requirement", "description", "protocol", "executor", "bindings", "steps"}
    if set(f) != fields:
        bad(fid, f"a flow has exactly {sorted(fields)}")
        return
    if f["requirement"] not in reqs:
        bad(fid, f"requirement {f['requirement']!r} is not in a2a/requirements.json")
    if f["executor"] != "scripted" or f["protocol"] != "a2a/v1":
        bad(fid, "executor `scripted`, protocol a2a/v1")
    if not f["bindings"] or set(f["bindings"]) - set(BINDINGS):
        bad(fid, "bindings: some of jsonrpc, rest")
    bound: set[str] = set()
    open_streams: set[str] = set()
    for i, step in enumerate(f["steps"]):
        at = f"{fid} step {i}"
        if not isinstance(step, dict) or len(step) != 1 or next(iter(step)) not in STEP_MEMBERS:
            bad(at, f"a step is one of {sorted(STEP_MEMBERS)}")
            continue
        kind, body = next(iter(step.items()))
        need, may = STEP_MEMBERS[kind]
        if not isinstance(body, dict) or need - set(body) or set(body) - need - may:
            bad(at, f"{kind}: needs {sorted(need)}, may hold {sorted(may)}")
            continue
        if "operation" in body:
            op = OPERATIONS.get(body["operation"])
            if op is None:
                bad(at, f"unknown operation {body['operation']!r}")
            elif op["streaming"] != (kind in ("open", "open_refused")):
                bad(at, f"{kind} is for {'streaming' if kind != 'call' else 'unary'} operations")
        used: set[str] = set()
        variables(body.get("params"), used)
        variables(body.get("last_event_id"), used)
        if used - bound:
            bad(at, f"variables used before they are bound: {sorted(used - bound)}")
        stream = body.get("stream")
        if kind == "open":
            if stream in open_streams:
                bad(at, f"stream {stream} is already open")
            open_streams.add(stream)
        elif stream is not None:
            if stream not in open_streams:
                bad(at, f"stream {stream} is not open")
            if kind in ("ended", "close"):
                open_streams.discard(stream)
        variables(body.get("expect"), bound)
    if open_streams:
        bad(fid, f"streams left open: {sorted(open_streams)} (end them with `ended` or `close`)")


def main() -> int:
    reqs = check_requirements()
    cases: dict[str, dict] = {}
    flows: dict[str, dict] = {}
    files = sorted({p for root in A2A["cases"] for p in (VECTORS / root).rglob("*") if p.is_file()})
    for path in files:
        rel = path.relative_to(VECTORS).as_posix()
        if path.suffix == ".canonical":
            if not path.with_suffix(".json").exists():
                bad(rel, "a golden file without its case")
            continue
        if path.suffix != ".json":
            bad(rel, "only .json cases and flows and .canonical golden files belong here")
            continue
        cid = rel[:-5]
        try:
            c = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError) as ex:
            bad(cid, f"not valid JSON: {ex}")
            continue
        if not isinstance(c, dict) or c.get("id") != cid:
            bad(cid, "a file holds one object whose id is its path without .json")
            continue
        if cid.startswith(FLOWS):
            flows[cid] = c
            check_flow(cid, c, reqs)
        else:
            cases[cid] = c
            g = path.with_suffix(".canonical")
            check_case(cid, c, reqs, g.read_bytes() if g.exists() else None)
    used = {c.get("requirement") for c in [*cases.values(), *flows.values()]}
    for k in sorted(set(reqs) - used):
        bad(REQUIREMENTS, f"{k} is used by no case or flow")
    for bpath in sorted((VECTORS / "baselines").glob("a2a-*.json")):
        try:
            b = json.loads(bpath.read_text())
        except ValueError as ex:
            bad(bpath.name, f"not valid JSON: {ex}")
            continue
        for k, v in b.items():
            fid, _, binding = k.partition("@")
            known = k in cases or (fid in flows and binding in flows[fid]["bindings"])
            if not known:
                bad(bpath.name, f"{k}: no such case, or flow@binding")
            if not isinstance(v, str) or not v.strip():
                bad(bpath.name, f"{k}: the reason must be a non-empty string")
    ops = {c["operation"] for c in cases.values() if c.get("operation")}
    for op in OPERATIONS:
        for b in BINDINGS:
            for d in ("client_to_server", "server_to_client"):
                if not any(c.get("operation") == op and c.get("binding") == b and c.get("direction") == d
                           for c in cases.values()):
                    bad("a2a/v1", f"no {d} case of {op} on {b}")
    for p in problems:
        print(f"FAIL {p}")
    print(f"a2a: {len(cases)} cases over {len(ops)} operations, {len(flows)} flows")
    if problems:
        print(f"{len(problems)} problem(s)")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
