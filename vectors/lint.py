#!/usr/bin/env python3
"""Checks the conformance vectors in this directory.

    python3 vectors/lint.py

1. Format: every case file follows vectors/README.md (fields, one input form, id equal to
   its path, known requirement, outcome fields, pending keys that parse as JSON ids, JSON
   paths that parse, file names).
2. Oracle: the pinned ACP v1 schema (spec/acp/v1/schema.json) is used independently of any
   SDK. For acp/v1 cases, params/results that a case says are accepted without warnings
   must validate against the method's `$defs` type; params/results a case rejects, and
   those it accepts only with warnings (lenient decoding), must not validate strictly.
   Framing is cross-checked too: a case expects -32700 exactly when its bytes are not one
   strict JSON value (or nest deeper than 128).
3. Golden files (lint_canonical.py): every case whose message decodes has its
   `<case>.canonical` beside it, none is orphaned, each is strict JSON without a line
   feed and equals as a value the case's `expect.params` / `expect.result`.
4. Counts per folder; fails when the corpus has fewer than 300 cases.
5. Flows (acp/v1/flows/, README "Flows"): structure (fields, role, setup, step kinds,
   variables bound before use, `call`/`expect_call` pairing) and, for what the flow
   itself writes, the schema: a `send` that is a complete ACP request or notification
   has its params validated against the method's type (params that fail are allowed
   only when the flow expects a -32602 answer to that request), a sent response has
   its result validated against the result type of the request it answers, a sent
   error its error object, and `call` params are validated too. `expect` steps are
   patterns (wildcards, variables, `$partial`) and are not schema-checked.

Needs Python 3.11 and `jsonschema` (pip install jsonschema==4.26.0). Exit status 1 on any
violation, each printed on its own line.
"""
from __future__ import annotations

import base64
import binascii
import collections
import json
import re
import sys
import tomllib
from pathlib import Path

import layout
import lint_canonical

try:
    from jsonschema import Draft202012Validator, FormatChecker
except ImportError:  # pragma: no cover
    print("lint.py needs the jsonschema package: pip install jsonschema==4.26.0", file=sys.stderr)
    sys.exit(2)

VECTORS = Path(__file__).resolve().parent
ROOT = VECTORS.parent
SCHEMA_PATH = ROOT / "spec/acp/v1/schema.json"
ACP = layout.corpus("acp")
CASE_DIRS = tuple(ACP["cases"])
FLOWS_DIR = ACP["flows"]
MIN_CASES = 300
NESTING_LIMIT = 128

TOP_KEYS = {"id", "requirement", "description", "protocol", "direction", "input", "input_text",
            "input_base64", "pending", "expect"}
INPUT_KEYS = ("input", "input_text", "input_base64")
OUTCOME_KEYS = {
    "request": ({"method", "id", "type"}, {"params", "warnings"}),
    "notification": ({"method", "type"}, {"params", "warnings"}),
    "response": ({"id", "method", "type"}, {"result", "warnings"}),
    "error_reply": ({"id", "error"}, set()),
    "reply_error": ({"error", "id"}, set()),
    "call_failed": ({"id", "path"}, {"kind"}),
    "ignored": ({"finding"}, set()),
}
FINDINGS = {"invalid-notification", "unknown-notification", "unmatched-response", "invalid-response"}
DIRECTIONS = {"client_to_agent", "agent_to_client"}
ERROR_CODES = {-32700, -32600, -32601, -32602}
SEGMENT = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
METHOD_FOLDER = re.compile(r"^[a-z0-9$][a-z0-9._$-]*$")
PATH_TOKEN = re.compile(r'\.([A-Za-z_$][A-Za-z0-9_$]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]')

problems: list[str] = []


def bad(cid: str, msg: str) -> None:
    problems.append(f"{cid}: {msg}")


# JSON helpers ------------------------------------------------------------------------

class Dup:
    """Marks that a parsed object had a repeated key somewhere."""
    found = False


def _pairs(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        Dup.found = True
    return dict(pairs)


def _no_constant(name):
    raise ValueError(f"non-JSON constant {name}")


def strict_parse(data: bytes):
    """Parse one line the way a strict JSON-RPC reader would.

    Returns (value, has_duplicate_keys) or raises ValueError."""
    text = data.decode("utf-8")  # raises UnicodeDecodeError (a ValueError)
    if text.endswith("\r\n"):
        text = text[:-2]
    elif text.endswith("\n"):
        text = text[:-1]
    Dup.found = False
    value = json.loads(text, object_pairs_hook=_pairs, parse_constant=_no_constant)
    return value, Dup.found


def depth(v) -> int:
    if isinstance(v, dict):
        return 1 + max((depth(x) for x in v.values()), default=0)
    if isinstance(v, list):
        return 1 + max((depth(x) for x in v), default=0)
    return 0


def is_id(v) -> bool:
    """A v1 request id: null, a string, or an integer within int64."""
    if isinstance(v, bool):
        return False
    return v is None or isinstance(v, str) or (isinstance(v, int) and -2**63 <= v < 2**63)


def parse_path(path):
    """Split a JSON path into keys / indexes, or return None when it does not parse."""
    if not isinstance(path, str) or not path.startswith("$"):
        return None
    out, pos = [], 1
    while pos < len(path):
        m = PATH_TOKEN.match(path, pos)
        if not m:
            return None
        if m.group(1) is not None:
            out.append(m.group(1))
        elif m.group(2) is not None:
            out.append(int(m.group(2)))
        else:
            key = json.loads(m.group(3))
            if re.fullmatch(r"[A-Za-z_$][A-Za-z0-9_$]*", key):
                return None  # identifiers must use the dot form
            out.append(key)
        pos = m.end()
    return out


_MISSING = object()


def resolve(value, segments):
    for s in segments:
        if isinstance(s, int) and isinstance(value, list) and s < len(value):
            value = value[s]
        elif isinstance(s, str) and isinstance(value, dict) and s in value:
            value = value[s]
        else:
            return _MISSING
    return value


# schema oracle --------------------------------------------------------------------------

def build_format_checker() -> FormatChecker:
    fc = FormatChecker()

    def int_range(lo, hi):
        def check(v):
            if isinstance(v, bool) or not isinstance(v, int):
                return True  # `type` decides; a float is rejected there for integer fields
            return lo <= v <= hi
        return check

    for name, lo, hi in (("uint16", 0, 2**16 - 1), ("uint32", 0, 2**32 - 1), ("uint64", 0, 2**64 - 1),
                         ("int32", -2**31, 2**31 - 1), ("int64", -2**63, 2**63 - 1)):
        fc.checks(name)(int_range(lo, hi))

    @fc.checks("double")
    def _double(v):
        if isinstance(v, float):
            return v == v and v not in (float("inf"), float("-inf"))
        return True

    return fc


class Oracle:
    def __init__(self):
        schema = json.loads(SCHEMA_PATH.read_text())
        self.defs = schema["$defs"]
        self.fc = build_format_checker()
        self.validators: dict[str, Draft202012Validator] = {}
        # method -> {"params": def, "result": def, "side": x-side, "kind": ...}
        self.methods: dict[str, dict] = {}
        for name, d in self.defs.items():
            m = d.get("x-method")
            if not m:
                continue
            info = self.methods.setdefault(m, {"side": d.get("x-side")})
            if name.endswith("Response"):
                info["result"] = name
            else:
                info["params"] = name
        for info in self.methods.values():
            info["kind"] = "request" if "result" in info else "notification"

    def validator(self, type_name: str) -> Draft202012Validator:
        v = self.validators.get(type_name)
        if v is None:
            v = Draft202012Validator({"$ref": f"#/$defs/{type_name}", "$defs": self.defs}, format_checker=self.fc)
            self.validators[type_name] = v
        return v

    def errors(self, type_name: str, value) -> list[str]:
        # JSON strings are Unicode text (RFC 8259 section 8.2): Python reads a lone
        # surrogate escape into a str the schema validator would accept.
        out = [f"{loc}: a string with a lone surrogate" for loc in _lone_surrogates(value, "")]
        for e in self.validator(type_name).iter_errors(value):
            loc = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in e.absolute_path)
            out.append(f"{loc or '(root)'}: {e.message[:160]}")
        return out

    def empty_ok(self, type_name: str) -> bool:
        return not self.defs[type_name].get("required")


_SURROGATE = re.compile("[\ud800-\udfff]")


def _lone_surrogates(value, loc: str):
    """The locations of strings (keys too) in `value` that hold a lone surrogate."""
    if isinstance(value, str):
        if _SURROGATE.search(value):
            yield loc or "(root)"
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _lone_surrogates(item, f"{loc}[{i}]")
    elif isinstance(value, dict):
        for k, item in value.items():
            yield from _lone_surrogates(k, loc)
            yield from _lone_surrogates(item, f"{loc}.{k}")


def as_params(msg):
    """`params` absent or null decodes like `{}` (README decoding model)."""
    p = msg.get("params", None) if isinstance(msg, dict) else None
    return {} if p is None else p


def handled_by(direction: str) -> str:
    return "agent" if direction == "client_to_agent" else "client"


# per-case checks ---------------------------------------------------------------------------

def check_format(cid: str, c: dict, requirements: dict) -> bool:
    ok = True
    for k in c:
        if k not in TOP_KEYS:
            bad(cid, f"unknown field `{k}`")
            ok = False
    for k in ("id", "requirement", "description", "protocol", "direction", "expect"):
        if k not in c:
            bad(cid, f"missing field `{k}`")
            ok = False
    if not ok:
        return False
    if c["id"] != cid:
        bad(cid, f"id {c['id']!r} does not equal the file path")
    if c["requirement"] not in requirements:
        bad(cid, f"requirement {c['requirement']!r} is not in requirements.json")
    if not isinstance(c["description"], str) or not c["description"].strip() or "\n" in c["description"]:
        bad(cid, "description must be a one-line, non-empty string")
    want_protocol = "jsonrpc" if cid.startswith("jsonrpc/") else "acp/v1" if cid.startswith("acp/v1/") else None
    if c["protocol"] != want_protocol:
        bad(cid, f"protocol {c['protocol']!r} does not fit the folder (expected {want_protocol!r})")
    if c["direction"] not in DIRECTIONS:
        bad(cid, f"direction {c['direction']!r} is not one of {sorted(DIRECTIONS)}")
    forms = [k for k in INPUT_KEYS if k in c]
    if len(forms) != 1:
        bad(cid, f"needs exactly one of {INPUT_KEYS}, has {forms}")
        ok = False
    elif forms[0] == "input_text" and not isinstance(c["input_text"], str):
        bad(cid, "input_text must be a string")
        ok = False
    elif forms[0] == "input_base64":
        try:
            base64.b64decode(c["input_base64"], validate=True)
        except (binascii.Error, TypeError):
            bad(cid, "input_base64 is not valid base64")
            ok = False
    if "pending" in c:
        p = c["pending"]
        if not isinstance(p, dict) or not p:
            bad(cid, "pending must be a non-empty object")
        else:
            for k, v in p.items():
                try:
                    kv = json.loads(k)
                except ValueError:
                    kv = float("nan")
                if not is_id(kv) or json.dumps(kv) != k:
                    bad(cid, f"pending key {k!r} is not a JSON id written compactly (null, integer or string)")
                if not isinstance(v, str) or not v:
                    bad(cid, f"pending method for {k} must be a non-empty string")
    e = c["expect"]
    if not isinstance(e, dict) or e.get("outcome") not in OUTCOME_KEYS:
        bad(cid, f"expect.outcome must be one of {sorted(OUTCOME_KEYS)}")
        return False
    need, opt = OUTCOME_KEYS[e["outcome"]]
    for k in need - set(e):
        bad(cid, f"expect.{k} is required for outcome {e['outcome']}")
        ok = False
    for k in set(e) - need - opt - {"outcome"}:
        bad(cid, f"expect.{k} is not allowed for outcome {e['outcome']}")
    if not ok:
        return False
    o = e["outcome"]
    if "id" in e and not is_id(e["id"]):
        bad(cid, "expect.id must be null, an integer or a string")
    if "method" in e and (not isinstance(e["method"], str)):
        bad(cid, "expect.method must be a string")
    if "type" in e and not (e["type"] is None or isinstance(e["type"], str)):
        bad(cid, "expect.type must be a string or null")
    if "warnings" in e:
        w = e["warnings"]
        if not isinstance(w, list) or not w or len(set(map(str, w))) != len(w):
            bad(cid, "expect.warnings must be a non-empty list of distinct paths")
        else:
            for p in w:
                if parse_path(p) is None:
                    bad(cid, f"warning path {p!r} does not parse")
    if o == "call_failed" and "kind" in e and e["kind"] not in DECODE_KINDS:
        bad(cid, f"expect.kind {e['kind']!r} is not a kind of rules/decode.toml")
    if o == "ignored" and e["finding"] not in FINDINGS:
        bad(cid, f"unknown finding {e['finding']!r}")
    if o in ("reply_error", "error_reply"):
        err = e["error"]
        if not isinstance(err, dict) or not isinstance(err.get("code"), int) or isinstance(err.get("code"), bool):
            bad(cid, "expect.error.code must be an integer")
        else:
            allowed = {"code", "path", *ERROR_TEXT_KEYS} if o == "reply_error" else {"code", "message"}
            for k in set(err) - allowed:
                bad(cid, f"expect.error.{k} is not allowed for outcome {o}")
            if o == "reply_error":
                check_error_texts(cid, err)
            if o == "reply_error" and err["code"] not in ERROR_CODES:
                bad(cid, f"reply_error code {err['code']} is not one the README defines")
            if "path" in err and parse_path(err["path"]) is None:
                bad(cid, f"error path {err['path']!r} does not parse")
            if o == "reply_error" and err["code"] == -32700 and e["id"] is not None:
                bad(cid, "-32700 always carries id null")
    if o == "call_failed" and parse_path(e["path"]) is None:
        bad(cid, f"path {e['path']!r} does not parse")
    if o in ("response", "error_reply", "call_failed"):
        pend = c.get("pending", {})
        key = json.dumps(e["id"])
        if key not in pend:
            bad(cid, f"outcome {o} needs id {key} in pending")
        elif o == "response" and pend[key] != e["method"]:
            bad(cid, f"expect.method {e['method']!r} differs from pending[{key}] {pend[key]!r}")
    return ok


ERROR_TEXT_KEYS = {"message", "kind", "expected", "found", "line", "column"}
DECODE_KINDS = {k["name"] for k in tomllib.loads((ROOT / "rules" / "decode.toml").read_text())["kinds"]}


def check_error_texts(cid: str, err: dict) -> None:
    """The error texts a reply_error case may state (README, "Error texts")."""
    code = err["code"]
    texts = {k: err[k] for k in ERROR_TEXT_KEYS if k in err}
    for k in ("message", "expected", "found"):
        if k in texts and (not isinstance(texts[k], str) or not texts[k] or "`" in texts[k]):
            bad(cid, f"expect.error.{k} must be a non-empty string without backticks")
            return
    for k in ("line", "column"):
        if k in texts and (type(texts[k]) is not int or texts[k] < 1):
            bad(cid, f"expect.error.{k} must be an integer from 1")
            return
    if "kind" in texts and (code != -32602 or texts["kind"] not in DECODE_KINDS):
        bad(cid, f"expect.error.kind must be a kind of rules/decode.toml, on a -32602 reply only")
    if ("expected" in texts) != ("found" in texts):
        bad(cid, "expect.error states `expected` and `found` together")
    if ("line" in texts) != ("column" in texts):
        bad(cid, "expect.error states `line` and `column` together")
    if "expected" in texts and code != -32602:
        bad(cid, "`expected`/`found` are stated for -32602 only")
    if "line" in texts and code != -32700:
        bad(cid, "`line`/`column` are stated for -32700 only")
    message = texts.get("message")
    if message is None:
        return
    if "expected" in texts:
        if "path" not in err:
            bad(cid, "a -32602 message is checked against the case's `path`")
        elif message != f"invalid params: expected {texts['expected']}, found {texts['found']} at {err['path']}":
            bad(cid, "expect.error.message is not rendered from `expected`, `found` and `path`")
    elif "line" in texts:
        at = f" at line {texts['line']}, column {texts['column']}"
        if message not in (f"parse error: {what}{at}" for what in ("invalid JSON", "unexpected end of input", "invalid utf-8")):
            bad(cid, "expect.error.message is not a parse error rendered from `line` and `column`")
    else:
        bad(cid, "expect.error.message is stated with the parts it is rendered from")


def input_bytes(c: dict) -> bytes:
    if "input" in c:
        return (json.dumps(c["input"], separators=(",", ":"), ensure_ascii=False) + "\n").encode()
    if "input_text" in c:
        return c["input_text"].encode()
    return base64.b64decode(c["input_base64"])


def check_semantics(cid: str, c: dict, oracle: Oracle) -> None:
    e = c["expect"]
    o = e["outcome"]
    raw = input_bytes(c)
    try:
        msg, dups = strict_parse(raw)
        parsed = depth(msg) <= NESTING_LIMIT
    except ValueError:
        msg, dups, parsed = None, False, False
    is_parse_error = o == "reply_error" and e["error"]["code"] == -32700
    if parsed == is_parse_error:
        if parsed:
            bad(cid, "expects -32700 but the input is one strict JSON value within the nesting limit")
        else:
            bad(cid, "the input is not one strict JSON value within the nesting limit, so only -32700 fits")
        return
    if not parsed:
        return
    if o == "reply_error" and e["error"]["code"] == -32600 and isinstance(msg, dict) and "method" in msg \
            and isinstance(msg.get("method"), str) and msg.get("jsonrpc") == "2.0" and is_id(msg.get("id")) and not dups:
        bad(cid, "expects -32600 but the envelope looks valid")
    if isinstance(msg, dict) and o in ("request", "notification"):
        if msg.get("method") != e["method"]:
            bad(cid, f"expect.method {e['method']!r} differs from the input's {msg.get('method')!r}")
        if o == "request" and ("id" not in msg or msg["id"] != e["id"] or type(msg["id"]) is not type(e["id"])):
            bad(cid, "expect.id differs from the input's id")
        if o == "notification" and "id" in msg:
            bad(cid, "a notification outcome for an input that has an id")
    if isinstance(msg, dict) and o in ("response", "error_reply", "call_failed") and "id" in msg:
        if msg["id"] != e["id"] or type(msg["id"]) is not type(e["id"]):
            bad(cid, "expect.id differs from the input's id")
    if o == "ignored" and e["finding"] in ("unmatched-response", "invalid-response") and isinstance(msg, dict):
        if json.dumps(msg.get("id")) in c.get("pending", {}):
            bad(cid, f"finding {e['finding']} but the response id is pending")
    # paths must point into the message (a missing member's parent must exist)
    paths = list(e.get("warnings", []))
    if o == "reply_error" and "path" in e["error"]:
        paths.append(e["error"]["path"])
    if o == "call_failed":
        paths.append(e["path"])
    for p in paths:
        segs = parse_path(p)
        if segs is None or dups:
            continue
        if resolve(msg, segs) is _MISSING and (not segs or resolve(msg, segs[:-1]) is _MISSING):
            bad(cid, f"path {p} points outside the input")
    for p in e.get("warnings", []):
        segs = parse_path(p)
        if segs is not None and not dups and resolve(msg, segs) is _MISSING:
            bad(cid, f"warning path {p} names no value in the input")

    if c["protocol"] != "acp/v1" or not isinstance(msg, dict):
        return
    oracle_checks(cid, c, msg, dups, oracle)


def oracle_checks(cid, c, msg, dups, oracle: Oracle) -> None:
    e = c["expect"]
    o = e["outcome"]
    direction = c["direction"]
    method = msg.get("method") if isinstance(msg.get("method"), str) else None
    info = oracle.methods.get(method) if method else None
    warned = "warnings" in e

    def must(valid_expected: bool, type_name: str, value, what: str):
        if dups:
            return  # repeated keys cannot be represented after parsing; rule 11 is not schema-checkable
        errs = oracle.errors(type_name, value)
        if valid_expected and errs:
            bad(cid, f"{what} should validate against {type_name} but does not: " + "; ".join(errs[:3]))
        if not valid_expected and not errs:
            bad(cid, f"{what} validates strictly against {type_name}, yet the case "
                     + ("expects warnings (lenient decoding)" if warned else "expects it to be rejected"))

    if o in ("request", "notification"):
        if method.startswith("_"):
            if e["type"] is not None:
                bad(cid, "extension methods are dispatched with type null")
            return
        if info is None:
            bad(cid, f"{method!r} is not a stable v1 method")
            return
        if info["kind"] != o:
            bad(cid, f"{method!r} is a {info['kind']}, not a {o}")
        if e["type"] != info["params"]:
            bad(cid, f"expect.type {e['type']!r} should be {info['params']!r}")
        if info["side"] != "protocol" and info["side"] != handled_by(direction):
            bad(cid, f"{method!r} is handled by the {info['side']}, but the case sends it {direction}")
        must(not warned, info["params"], as_params(msg), "params")
        if "params" in e and not warned:
            must(True, info["params"], e["params"], "expect.params (the re-encoded value)")
    elif o == "response" or (o == "call_failed" and "result" in msg and "error" not in msg):
        pm = c["pending"].get(json.dumps(e["id"]))
        pinfo = oracle.methods.get(pm)
        if pinfo is None or pinfo["kind"] != "request":
            if pm and not pm.startswith("_"):
                bad(cid, f"pending method {pm!r} is not a stable v1 request")
            return
        rt = pinfo["result"]
        if o == "response" and e["type"] != rt:
            bad(cid, f"expect.type {e['type']!r} should be {rt!r}")
        if pinfo["side"] != "protocol" and pinfo["side"] != ("agent" if direction == "agent_to_client" else "client"):
            bad(cid, f"a response to {pm!r} is sent by the {pinfo['side']}, not {direction}")
        result = msg.get("result")
        if result is None and oracle.empty_ok(rt):
            result = {}
        must(o == "response" and not warned, rt, result, "result")
        if o == "response" and "result" in e and not warned:
            must(True, rt, e["result"], "expect.result (the re-encoded value)")
    elif o == "error_reply":
        must(True, "Error", msg.get("error"), "error object")
    elif o == "reply_error" and e["error"]["code"] == -32602 and info is not None and "id" in msg:
        must(False, info["params"], as_params(msg), "params")
    elif o == "ignored" and e["finding"] == "invalid-notification":
        if info is None or info["kind"] != "notification":
            bad(cid, f"invalid-notification for {method!r}, which is not a v1 notification")
        else:
            must(False, info["params"], as_params(msg), "params")
    elif o == "reply_error" and e["error"]["code"] == -32601 and info is not None:
        if info["kind"] == "request" and info["side"] in (handled_by(direction), "protocol") and "id" in msg:
            bad(cid, f"-32601 for {method!r}, which the receiving side handles")
    elif o == "ignored" and e["finding"] == "unknown-notification" and info is not None:
        if info["kind"] == "notification" and info["side"] in (handled_by(direction), "protocol") and "id" not in msg:
            bad(cid, f"unknown-notification for {method!r}, which the receiving side handles")


def check_folder(cid: str, oracle: Oracle) -> None:
    parts = cid.split("/")
    if not SEGMENT.match(parts[-1]):
        bad(cid, f"file name {parts[-1]!r}.json should be lower-case letters, digits, '.', '_' or '-'")
    for seg in parts[:-1]:
        if not METHOD_FOLDER.match(seg):
            bad(cid, f"folder {seg!r} has unexpected characters")
    if parts[0] == "acp":
        if len(parts) < 4 or parts[1] != "v1":
            bad(cid, "acp cases live under acp/v1/<method>/ or acp/v1/types/")
        elif parts[2] != "types" and parts[2].replace(".", "/") not in oracle.methods:
            bad(cid, f"folder {parts[2]!r} names no stable v1 method")


# flows -------------------------------------------------------------------------------------

FLOW_KEYS = {"id", "requirement", "description", "role", "setup", "steps"}
STEP_KINDS = {"send", "expect", "expect_unordered", "expect_silence", "call", "expect_call"}
SETUP_KEYS = {"agent": {"agentCapabilities", "modes"}, "client": {"clientCapabilities", "permission"}}
# setup.modes: the opening requests whose answers the agent test application gives `modes`
MODE_OPENERS = {"session/new", "session/load", "session/resume"}
CALL_OUTCOMES = {"ok", "error", "local_error"}
LOCAL_ERRORS = {"Connection", "InvalidResult", "InvalidParams", "NotInitialized", "CapabilityNotAdvertised",
                "NotAnnounced", "UnsupportedVersion", "Cancelled"}
VAR = re.compile(r"^\$\{([A-Za-z0-9_-]+)\}$")
# what the runner's test applications handle (README, "The test applications")
FLOW_EXT = {"_test/echo", "_flow/barrier"}


def walk_strings(v):
    if isinstance(v, str):
        yield v
    elif isinstance(v, list):
        for x in v:
            yield from walk_strings(x)
    elif isinstance(v, dict):
        for k, x in v.items():
            yield k
            yield from walk_strings(x)


def flow_vars(v) -> set[str]:
    return {m.group(1) for s in walk_strings(v) if (m := VAR.match(s))}


def check_flow(fid: str, f: dict, oracle: Oracle, requirements: dict) -> None:
    for k in set(f) - FLOW_KEYS:
        bad(fid, f"unknown field `{k}`")
    for k in FLOW_KEYS - set(f):
        bad(fid, f"missing field `{k}`")
    if FLOW_KEYS - set(f):
        return
    if f["id"] != fid:
        bad(fid, f"id {f['id']!r} does not equal the file path")
    if f["requirement"] not in requirements:
        bad(fid, f"requirement {f['requirement']!r} is not in requirements.json")
    if not isinstance(f["description"], str) or not f["description"].strip() or "\n" in f["description"]:
        bad(fid, "description must be a one-line, non-empty string")
    role = f["role"]
    if role not in SETUP_KEYS:
        bad(fid, f"role {role!r} is not `agent` or `client`")
        return
    setup = f["setup"]
    if not isinstance(setup, dict):
        bad(fid, "setup must be an object")
        return
    for k in set(setup) - SETUP_KEYS[role]:
        bad(fid, f"setup.{k} is not known for role {role}")
    caps_type = "AgentCapabilities" if role == "agent" else "ClientCapabilities"
    caps = setup.get("agentCapabilities" if role == "agent" else "clientCapabilities", {})
    for e in oracle.errors(caps_type, caps):
        bad(fid, f"setup capabilities are not a valid {caps_type}: {e}")
    if "permission" in setup and not (setup["permission"] is None or isinstance(setup["permission"], str)):
        bad(fid, "setup.permission must be an option id or null")
    modes = setup.get("modes", {})
    if not isinstance(modes, dict):
        bad(fid, "setup.modes must map opening methods to a SessionModeState")
        modes = {}
    for m, state in modes.items():
        if m not in MODE_OPENERS:
            bad(fid, f"setup.modes names {m!r}, not one of {sorted(MODE_OPENERS)}")
        for e in oracle.errors("SessionModeState", state):
            bad(fid, f"setup.modes[{m!r}] is not a valid SessionModeState: {e}")
    steps = f["steps"]
    if not isinstance(steps, list) or not steps:
        bad(fid, "steps must be a non-empty list")
        return
    # the side the flow plays sends what the side under test handles
    handler = role
    bound: set[str] = set()
    var_method: dict[str, str] = {}   # variable bound at the id of an expected request -> its method
    sent_requests: dict[str, str] = {}  # id (JSON text) of a request the flow sent -> method
    open_calls: list[str] = []
    for i, step in enumerate(steps):
        where = f"step {i}"
        if not isinstance(step, dict) or len(step) != 1 or next(iter(step)) not in STEP_KINDS:
            bad(fid, f"{where}: a step is an object with exactly one of {sorted(STEP_KINDS)}")
            continue
        kind, body = next(iter(step.items()))
        if kind == "send":
            unbound = flow_vars(body) - bound
            if unbound:
                bad(fid, f"{where}: variables {sorted(unbound)} are used before an `expect` binds them")
            check_sent(fid, where, body, role, handler, oracle, var_method, sent_requests, steps[i + 1:])
        elif kind in ("expect", "expect_unordered"):
            msgs = body if kind == "expect_unordered" else [body]
            if kind == "expect_unordered" and (not isinstance(body, list) or len(body) < 2):
                bad(fid, f"{where}: expect_unordered takes a list of at least two messages")
                continue
            for m in msgs:
                if not isinstance(m, dict):
                    bad(fid, f"{where}: an expected message is a JSON object pattern")
                    continue
                new = flow_vars(m) - bound
                bound |= new
                idv = m.get("id")
                if isinstance(idv, str) and (mv := VAR.match(idv)) and isinstance(m.get("method"), str):
                    var_method[mv.group(1)] = m["method"]
        elif kind == "expect_silence":
            if body is not True:
                bad(fid, f"{where}: expect_silence must be true")
        elif kind == "call":
            if role != "client":
                bad(fid, f"{where}: `call` steps are for the client role only")
                continue
            if not isinstance(body, dict) or set(body) - {"method", "params"} or not isinstance(body.get("method"), str):
                bad(fid, f"{where}: a call is {{method, params?}}")
                continue
            m = body["method"]
            info = oracle.methods.get(m)
            if info is None or info["side"] != "agent":
                bad(fid, f"{where}: `{m}` is not a method the client sends to the agent")
                continue
            params = body.get("params", {})
            if flow_vars(params) - bound:
                bad(fid, f"{where}: call params use unbound variables")
            elif not flow_vars(params):
                if m == "initialize" and isinstance(params, dict) and "clientCapabilities" in setup:
                    params = {"clientCapabilities": setup["clientCapabilities"], **params}
                for e in oracle.errors(info["params"], params):
                    bad(fid, f"{where}: call params are not a valid {info['params']}: {e}")
            open_calls.append(m)
        elif kind == "expect_call":
            if not isinstance(body, dict) or not isinstance(body.get("method"), str):
                bad(fid, f"{where}: expect_call needs a `method`")
                continue
            outcomes = set(body) & CALL_OUTCOMES
            if len(outcomes) != 1 or set(body) - CALL_OUTCOMES - {"method"}:
                bad(fid, f"{where}: expect_call has `method` and exactly one of {sorted(CALL_OUTCOMES)}")
            if body["method"] not in open_calls:
                bad(fid, f"{where}: no earlier unchecked `{body['method']}` call")
            else:
                open_calls.remove(body["method"])
            if "local_error" in body and body["local_error"] not in LOCAL_ERRORS:
                bad(fid, f"{where}: local_error {body['local_error']!r} is not an AcpError variant the README lists")
            if "error" in body and not (isinstance(body["error"], dict) and isinstance(body["error"].get("code"), int)):
                bad(fid, f"{where}: expect_call.error needs an integer code")


def refused(later, request_id, codes):
    """Whether a later step expects the request `request_id` answered with an error of one of `codes`."""
    return any(
        isinstance(s, dict) and isinstance(s.get("expect"), dict) and s["expect"].get("id") == request_id
        and isinstance(s["expect"].get("error"), dict) and s["expect"]["error"].get("code") in codes
        for s in later)


def check_sent(fid, where, msg, role, handler, oracle: Oracle, var_method, sent_requests, later):
    if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
        bad(fid, f"{where}: a sent message is a JSON-RPC 2.0 object")
        return
    if flow_vars({k: v for k, v in msg.items() if k != "id"}):
        return  # params built from variables are checked by the runner only
    method = msg.get("method")
    if isinstance(method, str):
        if "id" in msg:
            sent_requests[json.dumps(msg["id"])] = method
        if method.startswith("_"):
            return
        info = oracle.methods.get(method)
        if info is None:
            # An unknown method is fine when the flow expects it refused: -32601,
            # or -32600 before `initialize`.
            if "id" not in msg or not refused(later, msg.get("id"), (-32601, -32600)):
                bad(fid, f"{where}: {method!r} is not a stable v1 method")
            return
        if info["side"] not in (handler, "protocol"):
            bad(fid, f"{where}: {method!r} is handled by the {info['side']}, but the {handler} is under test")
        kind = "request" if "id" in msg else "notification"
        if info["kind"] != kind:
            bad(fid, f"{where}: {method!r} is a {info['kind']}, sent as a {kind}")
        errs = oracle.errors(info["params"], as_params(msg))
        if errs:
            # Invalid params must be refused: -32602, or -32600 before `initialize`
            # (the state is checked before the params).
            if "id" not in msg or not refused(later, msg.get("id"), (-32602, -32600)):
                bad(fid, f"{where}: params are not a valid {info['params']} and no -32602 answer is expected: "
                    + "; ".join(errs[:3]))
        return
    # a response the flow sends: to a request our side made (bound variable) or a literal id
    idv = msg.get("id")
    m = VAR.match(idv) if isinstance(idv, str) else None
    answered = var_method.get(m.group(1)) if m else None
    if answered is None or answered.startswith("_"):
        return
    info = oracle.methods.get(answered)
    if info is None or info["kind"] != "request":
        bad(fid, f"{where}: answers {answered!r}, which is not a stable v1 request")
        return
    if "error" in msg:
        for e in oracle.errors("Error", msg["error"]):
            bad(fid, f"{where}: the error object is invalid: {e}")
        return
    result = msg.get("result")
    if result is None and oracle.empty_ok(info["result"]):
        result = {}
    for e in oracle.errors(info["result"], result):
        bad(fid, f"{where}: the result is not a valid {info['result']}: {e}")


def check_flows(oracle: Oracle, requirements: dict) -> dict[str, dict]:
    flows: dict[str, dict] = {}
    d = VECTORS / FLOWS_DIR
    if not d.exists():
        return flows
    for path in sorted(d.rglob("*")):
        if path.is_dir():
            continue
        rel = path.relative_to(VECTORS).as_posix()
        if path.suffix != ".json" or path.parent != d:
            bad(rel, "flows are .json files directly in " + FLOWS_DIR)
            continue
        fid = rel[:-5]
        if not SEGMENT.match(path.stem):
            bad(fid, f"file name {path.name!r} should be lower-case letters, digits, '.', '_' or '-'")
        try:
            f = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError) as ex:
            bad(fid, f"not valid JSON: {ex}")
            continue
        if not isinstance(f, dict):
            bad(fid, "a flow file holds one JSON object")
            continue
        flows[fid] = f
        check_flow(fid, f, oracle, requirements)
    return flows


def main() -> int:
    oracle = Oracle()
    for rel in layout.stray_files():
        bad(rel, "in no corpus of layout.json (and not one of the format's own files)")
    req_path = VECTORS / ACP["requirements"]
    try:
        requirements = json.loads(req_path.read_text())
    except (OSError, ValueError) as ex:
        print(f"requirements.json: {ex}")
        return 1
    for k, v in requirements.items():
        if not isinstance(v, dict) or set(v) != {"source", "text"}:
            bad("requirements.json", f"{k}: needs exactly `source` and `text`")
            continue
        if not re.match(r"^(spec|sdk|issue): \S", v["source"]):
            bad("requirements.json", f"{k}: source must start with 'spec: ', 'sdk: ' or 'issue: '")
        if not isinstance(v["text"], str) or not v["text"].strip():
            bad("requirements.json", f"{k}: empty text")

    cases: dict[str, dict] = {}
    goldens: set[str] = set()
    for d in CASE_DIRS:
        for path in sorted((VECTORS / d).rglob("*")):
            if path.is_dir():
                continue
            rel = path.relative_to(VECTORS).as_posix()
            if rel.startswith(FLOWS_DIR + "/"):
                continue
            if path.suffix == lint_canonical.SUFFIX:
                goldens.add(rel[: -len(lint_canonical.SUFFIX)])
                continue
            if path.suffix != ".json":
                bad(rel, "only .json case files and .canonical golden files belong here")
                continue
            cid = rel[:-5]
            try:
                c = json.loads(path.read_text(encoding="utf-8"))
            except (ValueError, UnicodeDecodeError) as ex:
                bad(cid, f"not valid JSON: {ex}")
                continue
            if not isinstance(c, dict):
                bad(cid, "a case file holds one JSON object")
                continue
            cases[cid] = c
            check_folder(cid, oracle)
            if check_format(cid, c, requirements):
                check_semantics(cid, c, oracle)

    lint_canonical.check(VECTORS, cases, goldens, bad)
    flows = check_flows(oracle, requirements)
    used = {c.get("requirement") for c in [*cases.values(), *flows.values()]}
    for k in sorted(set(requirements) - used):
        print(f"note: requirement {k} is used by no case")

    for bpath in sorted((VECTORS / "baselines").glob("*.json")):
        if bpath.name.startswith("a2a-"):
            continue  # the A2A baselines: lint_a2a.py checks them
        try:
            b = json.loads(bpath.read_text())
        except ValueError as ex:
            bad(bpath.name, f"not valid JSON: {ex}")
            continue
        if not isinstance(b, dict):
            bad(bpath.name, "a baseline is an object mapping case id -> reason")
            continue
        for k, v in b.items():
            if k not in cases and k not in flows:
                bad(bpath.name, f"{k}: no such case or flow")
            if not isinstance(v, str) or not v.strip():
                bad(bpath.name, f"{k}: the reason must be a non-empty string")

    counts = collections.Counter()
    for cid in cases:
        parts = cid.split("/")
        depth_ = 4 if parts[:3] == ["acp", "v1", "types"] else 3 if parts[0] == "acp" else 2
        counts["/".join(parts[:depth_])] += 1
    width = max((len(k) for k in counts), default=0)
    for k in sorted(counts):
        print(f"{k:<{width}}  {counts[k]:>4}")
    total = len(cases)
    print(f"{'total':<{width}}  {total:>4}")
    print(f"{FLOWS_DIR:<{width}}  {len(flows):>4}  (flows)")
    if total < MIN_CASES:
        problems.append(f"only {total} cases; at least {MIN_CASES} are required")

    for p in problems:
        print(f"FAIL {p}")
    if problems:
        print(f"{len(problems)} problem(s)")
        return 1
    print("ok")
    # The A2A vectors (vectors/a2a/) have their own format and checks.
    import lint_a2a
    return lint_a2a.main()


if __name__ == "__main__":
    sys.exit(main())
