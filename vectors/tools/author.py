#!/usr/bin/env python3
"""Authoring script for the conformance vectors.

Re-running it rewrites vectors/jsonrpc/, vectors/acp/ (cases, their canonical-encoding
golden files and flows) and vectors/requirements.json byte for byte (no random data). The
committed artefacts are the files; this script only exists to keep them consistent. The
golden files (`<case>.canonical`) are computed by the reference encoder in canonical.py.

    python3 vectors/tools/author.py          # write the files
    python3 vectors/tools/author.py --check  # exit 1 if the files on disk differ
"""

from __future__ import annotations

import json
import shutil
import sys

import canonical

from vectorlib import *  # noqa: F403
from cases_jsonrpc import build_jsonrpc
from cases_methods import build_methods
from cases_types import *  # noqa: F403
from cases_shapes import *  # noqa: F403
from cases_flows import FLOWS, build_flows
from cases_canonical import build_canonical
from error_kinds import ERROR_KINDS
from error_texts import ERROR_TEXTS

sys.path.insert(0, str(VECTORS))  # noqa: F405
from layout import corpus  # noqa: E402


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
    build_strings()
    build_meta_and_unknown_fields()
    build_duplicate_keys()
    build_unions_misc()
    build_default_on_null()


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
    "acp.v1.strings.unicode": {"source": "spec: RFC 8259 section 8.2 (strings are Unicode text); sdk: vectors/README.md, Error texts",
        "text": "A string member whose escapes do not spell Unicode text (a lone surrogate) is refused with -32602 at its path."},
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




def add_error_texts():
    """Adds the stated error texts (error_texts.py) to their reply_error cases."""
    for cid, texts in ERROR_TEXTS.items():
        expect = CASES[cid]["expect"]
        assert expect["outcome"] == "reply_error", cid
        assert expect["error"].get("path", texts.get("path")) == texts.get("path"), cid
        expect["error"].update(texts)


def add_error_kinds():
    """Adds the kind of decode failure (error_kinds.py) to its reply_error and call_failed cases."""
    for cid, kind in ERROR_KINDS.items():
        expect = CASES[cid]["expect"]
        if expect["outcome"] == "reply_error":
            assert expect["error"]["code"] == -32602, cid
            expect["error"]["kind"] = kind
        else:
            assert expect["outcome"] == "call_failed", cid
            expect["kind"] = kind


def main():
    build_jsonrpc()
    build_methods()
    build_types()
    build_canonical()
    build_flows()
    add_error_texts()
    add_error_kinds()

    # every `max` input must carry every declared property (and no unknown ones)
    problems = []
    for cid, type_name, value, base, allow in MAX_CHECKS:
        problems += [f"{cid}: {p}" for p in completeness(type_name, value, base, allow)]
    if problems:
        print("\n".join(problems))
        sys.exit(1)

    files: dict = {}
    for cid, c in [*CASES.items(), *FLOWS.items()]:
        files[VECTORS / (cid + ".json")] = (json.dumps(c, indent=2, ensure_ascii=False) + "\n").encode()
    encoder = canonical.load_encoder()
    goldens = 0
    for cid, c in CASES.items():
        try:
            golden = canonical.payload_bytes(encoder, c)
        except canonical.CanonicalError as ex:
            print(f"canonical encoding: {ex}")
            sys.exit(1)
        if golden is not None:
            files[VECTORS / (cid + ".canonical")] = golden
            goldens += 1
    used = sorted({c["requirement"] for c in [*CASES.values(), *FLOWS.values()]})
    unused = sorted(set(REQUIREMENTS) - set(used))
    if unused:
        print("unused requirements:", ", ".join(unused))
        sys.exit(1)
    files[VECTORS / "requirements.json"] = (json.dumps(
        {k: REQUIREMENTS[k] for k in sorted(REQUIREMENTS)}, indent=2, ensure_ascii=False) + "\n").encode()

    if "--check" in sys.argv:
        bad = [str(p) for p, t in files.items() if not p.exists() or p.read_bytes() != t]
        on_disk = {p for d in corpus("acp")["cases"] for p in (VECTORS / d).rglob("*") if p.is_file()}
        extra = sorted(str(p) for p in on_disk - set(files))
        if bad or extra:
            print("differs:", *bad, *extra, sep="\n  ")
            sys.exit(1)
        print(f"{len(CASES)} cases ({goldens} with a canonical golden file) and {len(FLOWS)} flows up to date")
        return

    for d in ("jsonrpc", "acp"):
        if (VECTORS / d).exists():
            shutil.rmtree(VECTORS / d)
    for p, t in files.items():
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(t)
    print(f"wrote {len(CASES)} cases ({goldens} with a canonical golden file) and {len(FLOWS)} flows")


if __name__ == "__main__":
    main()
